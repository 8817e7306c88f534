// The site of an event's recorded stack, memoized per (thread, stack id, Python stack id): a pass
// asks once per event, SiteTable answers once per stack. Asking SiteTable on a stack's first
// event keeps the order in which SiteTable creates sites, so site ids are those it would give.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "model/site_table.h"
#include "trace/loaded_trace.h"

namespace gpuleak::analyzer {

class SiteCache {
public:
    // `check_definitions`: on each stack's first event, note whether everything its site is made
    // of was defined yet (pass 1 makes sites while it reads the definitions).
    SiteCache(const LoadedTrace& trace, SiteTable& sites, bool check_definitions = false)
        : trace_(trace), sites_(sites), check_(check_definitions) {}
    bool missing_definitions() const { return missing_; }

    uint32_t site(uint32_t thread, uint64_t stack, uint64_t py_stack) {
        // Native-only stacks met before: an array read per event.
        if (!py_stack && thread < native_only_.size() && stack < native_only_[thread].size())
            if (uint32_t known = native_only_[thread][stack]) [[likely]]
                return known - 1;
        return first_site(thread, stack, py_stack);
    }

private:
    // Out of line, so that the call for a stack met before stays small enough to inline. A
    // thread's valid stack ids are dense and fewer than the trace's nodes, which bounds the array
    // whatever a damaged trace says.
    [[gnu::noinline]] uint32_t first_site(uint32_t thread, uint64_t stack, uint64_t py_stack) {
        if (!py_stack && thread < kMaxDenseThreads && stack < trace_.native_nodes.size()) {
            if (thread >= native_only_.size()) native_only_.resize(thread + 1);
            std::vector<uint32_t>& sites = native_only_[thread];
            if (stack >= sites.size()) sites.resize(stack + 1, 0);
            if (!sites[stack]) sites[stack] = lookup(thread, stack, 0) + 1;
            return sites[stack] - 1;
        }
        Key key{thread, stack, py_stack};
        auto [it, fresh] = other_.try_emplace(key, 0);
        if (fresh) it->second = lookup(thread, stack, py_stack);
        return it->second;
    }

    static constexpr uint32_t kMaxDenseThreads = 1 << 16;

    struct Key {
        uint32_t thread;
        uint64_t stack, py_stack;
        bool operator==(const Key&) const = default;
    };
    struct KeyHash {
        size_t operator()(const Key& k) const {
            uint64_t h =
                (k.stack * 0x9E3779B97F4A7C15ull) ^ (k.py_stack + 0x632BE59BD9B4E019ull) ^ k.thread;
            return static_cast<size_t>(h ^ (h >> 29));
        }
    };

    uint32_t lookup(uint32_t thread, uint64_t stack, uint64_t py_stack) {
        uint32_t native = trace_.native_node(thread, stack);
        uint32_t py = trace_.py_node(thread, py_stack);
        if (check_) {
            // A thread defines its own stacks before it uses them; a code object may have been
            // defined by another thread that pass 1 has not read so far.
            if ((stack && !native) || (py_stack && !py)) missing_ = true;
            for (uint32_t n = py; n && !missing_; n = trace_.py_nodes[n].parent)
                missing_ = !trace_.py_code.count(trace_.py_nodes[n].code_id);
        }
        return sites_.site_for(native, py);
    }

    const LoadedTrace& trace_;
    SiteTable& sites_;
    bool check_ = false, missing_ = false;
    std::vector<std::vector<uint32_t>>
        native_only_; // [thread][stack] -> site + 1, 0 = not asked yet
    std::unordered_map<Key, uint32_t, KeyHash> other_;
};

} // namespace gpuleak::analyzer
