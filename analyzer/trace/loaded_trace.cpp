#include "trace/loaded_trace.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace gpuleak::analyzer {
namespace {

uint64_t local_key(uint32_t thread, uint64_t local) { return static_cast<uint64_t>(thread) << 40 | local; }

struct PairHash {
    size_t operator()(const std::pair<uint64_t, uint64_t>& p) const {
        return std::hash<uint64_t>()(p.first * 0x9E3779B97F4A7C15ull ^ p.second);
    }
};

} // namespace

std::string ProcessInfo::command() const {
    std::string out;
    for (const auto& a : argv) {
        if (!out.empty()) out += ' ';
        out += a;
    }
    return out.empty() ? exe : out;
}

std::string ProcessInfo::env_value(const std::string& name) const {
    for (const auto& e : env)
        if (e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=')
            return e.substr(name.size() + 1);
    return {};
}

uint32_t LoadedTrace::native_node(uint32_t thread, uint64_t local) const {
    if (!local) return 0;
    auto it = native_local.find(local_key(thread, local));
    return it == native_local.end() ? 0 : it->second;
}

uint32_t LoadedTrace::py_node(uint32_t thread, uint64_t local) const {
    if (!local) return 0;
    auto it = py_local.find(local_key(thread, local));
    return it == py_local.end() ? 0 : it->second;
}

bool load_trace(const std::string& path, LoadedTrace& t, std::string& error) {
    t.path = path;
    if (!t.file.open(path)) {
        error = t.file.error();
        return false;
    }
    t.file.index_blocks();
    if (!t.file.damage().empty())
        t.warnings.push_back("trace is damaged or was cut short (" + t.file.damage() +
                             "); reporting the readable part");
    // Per thread in sequence order: a node's parent is always defined before it in its own thread.
    std::vector<size_t> order(t.file.blocks().size());
    std::iota(order.begin(), order.end(), 0);
    const auto& blocks = t.file.blocks();
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return std::tie(blocks[a].thread_index, blocks[a].sequence) <
               std::tie(blocks[b].thread_index, blocks[b].sequence);
    });
    std::unordered_map<std::pair<uint64_t, uint64_t>, uint32_t, PairHash> native_edges, py_edges;
    std::vector<uint8_t> payload;
    format::Record r;
    for (size_t index : order) {
        const format::BlockRef& b = blocks[index];
        if (!t.file.load(b, payload)) {
            t.warnings.push_back(t.file.error());
            continue;
        }
        format::RecordCursor cursor(payload.data(), payload.data() + payload.size(), b.first_ts);
        while (cursor.next(r)) {
            switch (r.tag) {
            case format::Tag::Process:
                if (!t.have_process) {
                    t.process = {r.pid, r.ppid, r.start_unix_ns, r.text, r.strings, r.strings2};
                    t.have_process = true;
                }
                break;
            case format::Tag::Module:
                t.modules.push_back({r.text, r.address, r.blob, r.segments});
                break;
            case format::Tag::Thread:
                t.thread_names[b.thread_index] = std::to_string(r.pid) + (r.text.empty() ? "" : " " + r.text);
                break;
            case format::Tag::StackNode: {
                uint32_t parent = t.native_node(b.thread_index, r.parent);
                auto [it, fresh] = native_edges.try_emplace({parent, r.ip}, 0);
                if (fresh) {
                    it->second = static_cast<uint32_t>(t.native_nodes.size());
                    t.native_nodes.push_back({parent, r.ip});
                }
                t.native_local[local_key(b.thread_index, r.id)] = it->second;
                break;
            }
            case format::Tag::PyCode:
                t.py_code[r.ip] = {r.text, r.text2, static_cast<int>(r.line_or_offset), r.blob};
                break;
            case format::Tag::PyStackNode: {
                uint32_t parent = t.py_node(b.thread_index, r.parent);
                uint64_t key = r.ip << 33 | static_cast<uint64_t>(static_cast<uint32_t>(r.line_or_offset)) << 1 |
                               (r.is_entry ? 1 : 0);
                auto [it, fresh] = py_edges.try_emplace({parent, key}, 0);
                if (fresh) {
                    it->second = static_cast<uint32_t>(t.py_nodes.size());
                    t.py_nodes.push_back({parent, r.ip, static_cast<int32_t>(r.line_or_offset), r.is_entry});
                }
                t.py_local[local_key(b.thread_index, r.id)] = it->second;
                break;
            }
            case format::Tag::PyInfo:
                t.py_version_hex = static_cast<uint32_t>(r.count);
                break;
            case format::Tag::TraceEnd:
                t.clean_end = true;
                break;
            default:
                break;
            }
        }
        if (!cursor.error().empty())
            t.warnings.push_back("malformed record in block at offset " + std::to_string(b.offset) + ": " +
                                 cursor.error());
    }
    if (!t.have_process && blocks.empty()) {
        error = "trace holds no data (the process may have been killed before its first flush)";
        return false;
    }
    return true;
}

} // namespace gpuleak::analyzer
