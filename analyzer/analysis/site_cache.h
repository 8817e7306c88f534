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
    SiteCache(const LoadedTrace& trace, SiteTable& sites) : trace_(trace), sites_(sites) {}

    uint32_t site(uint32_t thread, uint64_t stack, uint64_t py_stack) {
        // Native-only stacks: an array read per event. A thread's valid stack ids are dense and
        // fewer than the trace's nodes, which bounds the array whatever a damaged trace says.
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

private:
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
        return sites_.site_for(trace_.native_node(thread, stack), trace_.py_node(thread, py_stack));
    }

    const LoadedTrace& trace_;
    SiteTable& sites_;
    std::vector<std::vector<uint32_t>>
        native_only_; // [thread][stack] -> site + 1, 0 = not asked yet
    std::unordered_map<Key, uint32_t, KeyHash> other_;
};

} // namespace gpuleak::analyzer
