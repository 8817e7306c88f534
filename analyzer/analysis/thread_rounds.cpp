#include "analysis/thread_rounds.h"

#include <algorithm>

#include "model/call_tree.h"

namespace gpuleak::analyzer {

void ThreadSpans::on_first_alloc(uint32_t slot, const CallTree& calls,
                                 const std::vector<uint32_t>& path) {
    Current& c = at(slot);
    c.routine_known = true;
    for (uint32_t node : path)
        if (calls[node].user) {
            c.span.routine = node;
            return;
        }
}

std::vector<ThreadSpan> ThreadSpans::spans() const {
    std::vector<ThreadSpan> out = retired_;
    for (const Current& c : by_slot_)
        if (c.used) out.push_back(c.span);
    for (const auto& [slot, c] : far_)
        out.push_back(c.span);
    if (widened_.empty()) return out;
    std::unordered_map<uint32_t, size_t> by_lane;
    for (size_t i = 0; i < out.size(); ++i)
        by_lane.emplace(out[i].lane, i);
    for (const ThreadSpan& w : widened_) {
        auto at = by_lane.find(w.lane);
        if (at == by_lane.end()) {
            by_lane.emplace(w.lane, out.size());
            out.push_back(w);
            continue;
        }
        ThreadSpan& s = out[at->second];
        s.first_ts = std::min(s.first_ts, w.first_ts);
        s.last_ts = std::max(s.last_ts, w.last_ts);
    }
    return out;
}

Rounds find_rounds(std::vector<ThreadSpan> threads) {
    std::sort(threads.begin(), threads.end(),
              [](const ThreadSpan& a, const ThreadSpan& b) { return a.first_ts < b.first_ts; });
    Rounds out;
    for (const ThreadSpan& t : threads) {
        if (out.starts.empty() || t.first_ts > out.last_ts) {
            out.starts.push_back(t.first_ts);
            out.threads.push_back(0);
        }
        out.threads.back() += 1;
        out.last_ts = std::max(out.last_ts, t.last_ts);
    }
    return out;
}

bool Rounds::repeat() const {
    if (starts.size() < 3 || threads.front() < 2) return false;
    for (size_t i = 1; i + 1 < threads.size(); ++i)
        if (threads[i] != threads.front()) return false;
    // The last round may be short of threads (fewer shards left), not of company.
    return threads.back() >= 2 && threads.back() <= threads.front();
}

} // namespace gpuleak::analyzer
