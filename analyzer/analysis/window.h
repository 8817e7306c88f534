// A window into a trace (--from/--to, --device, --min-bytes), applied by the replay before any
// report is built, so every renderer sees the same cut:
//   --from/--to  seconds since the trace started ("12.5", "12.5s", "300ms") or iterations ("10it":
//                from the start of iteration 10 / to the end of iteration 10). The report covers
//                what was allocated inside the window: memory allocated before --from is left out
//                (so are its frees), and "at the end" means at --to. Verdicts judge the iterations
//                inside the window.
//   --device N   allocations on device N only.
//   --min-bytes  allocations of at least this size only.
// Frees of allocations left out are left out too (they are not frees of unknown memory).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>

#include "analysis/iterations.h"
#include "analysis/observer.h"
#include "analysis/report.h"

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

class Window : public EventFilter {
public:
    explicit Window(WindowOptions options) : options_(options) {}
    bool keep(const format::Record& record, uint32_t iteration) override;
    bool keep_iteration(uint64_t ts, uint32_t iteration) override { return in_time(ts, iteration); }

    // After the replay: verdicts and sparklines look at the iterations inside the window only.
    void narrow_iterations(Iterations& iterations, Report& report) const;
    // One line for the report's notes ("window: 1.5 s to 3 s, device 0").
    std::string describe() const;

private:
    bool in_time(uint64_t ts, uint32_t iteration) const;
    static uint64_t key(format::Space space, uint64_t address) {
        return address ^ (static_cast<uint64_t>(space) << 62);
    }

    WindowOptions options_;
    std::unordered_set<uint64_t> skipped_; // live allocations left out, by space and address
};

} // namespace gpuleak::analyzer
