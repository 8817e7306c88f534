// A window into a trace (--from/--to, --device, --min-bytes), applied before any part of the report
// is built, so every renderer sees the same cut:
//   --from/--to  seconds since the trace started ("12.5", "12.5s", "300ms") or iterations of the
//                program's main loop (Loops::main_loop(); "10it": from the start of its iteration
//                10 / to the end of its iteration 10). The report covers what was allocated inside
//                the window: memory allocated before --from is left out (so are its frees), and
//                "at the end" means at --to (the teardown too). Each loop is judged on its
//                iterations that start inside the window, numbered from 1 there.
//   --device N   allocations on device N only.
//   --min-bytes  allocations of at least this size only.
// Frees of allocations left out are left out too (they are not frees of unknown memory).
//
// The window is an aggregator in front of the others: the replay hands it every event and it
// passes on what is inside. Loops are found on the whole trace and then narrowed (narrow()); which
// loop is the main one, and each loop's count of allocations, are the whole trace's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/loops.h"
#include "analysis/replay.h"

namespace gpuleak::analyzer {

struct WindowBound {
    bool iterations = false; // value is an iteration number, else nanoseconds
    uint64_t value = 0;
};

// "12.5", "12.5s", "300ms", "40us", "10it", "10iter". nullopt when malformed.
std::optional<WindowBound> parse_window_bound(const std::string& text);

struct WindowOptions {
    std::optional<WindowBound> from, to;
    std::optional<int> device;
    uint64_t min_bytes = 0;
    bool any() const { return from || to || device || min_bytes; }
};

class Window : public TimedAggregator {
public:
    explicit Window(WindowOptions options) : options_(options) {}
    // The aggregators it passes what is inside on to.
    void set_inner(std::vector<Aggregator*> inner) {
        inner_ = std::move(inner);
        inner_timed_ = timed(inner_);
    }

    // Turns iteration bounds into times with the main loop of `loops`. False, with `error`, when
    // an iteration bound is given and the trace has no loop.
    bool resolve(const Loops& loops, std::string& error);
    // The loops as the window sees them: each keeps the iterations that start inside the window
    // and ends at its end at the latest; the teardown is at --to at the latest.
    Loops narrow(const Loops& loops) const;
    // Inside the window's time span (after resolve()).
    bool in_time(uint64_t ts) const { return ts >= from_ts_ && ts <= to_ts_; }
    bool keeps(const Allocation& a) const {
        return in_time(a.ts) && a.size >= options_.min_bytes &&
               (!options_.device || a.device == *options_.device);
    }
    // One line for the report's notes ("window: from iteration 3 to iteration 6, device 0 only").
    std::string describe() const;

    void on_time(uint64_t ts) override;
    void on_alloc(Allocation& a) override;
    void on_free(const Allocation& a, uint64_t ts, bool freed) override;
    void on_failed(const FailedAllocation& f) override;
    void on_unpaired_free(const format::Record& r) override;
    // The aggregators behind it finish at the last event inside the window.
    void finish(uint64_t end_ts, Report& report) override;

private:
    WindowOptions options_;
    std::vector<Aggregator*> inner_;
    std::vector<TimedAggregator*> inner_timed_;
    uint64_t from_ts_ = 0, to_ts_ = ~0ull;
    uint64_t last_ts_ = 0; // of the last event inside
};

} // namespace gpuleak::analyzer
