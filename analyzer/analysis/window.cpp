#include "analysis/window.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace gpuleak::analyzer {

std::optional<WindowBound> parse_window_bound(const std::string& text) {
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || v < 0 || !std::isfinite(v)) return std::nullopt;
    std::string unit;
    for (; *end; ++end)
        if (!std::isspace(static_cast<unsigned char>(*end)))
            unit += static_cast<char>(std::tolower(static_cast<unsigned char>(*end)));
    WindowBound b;
    if (unit == "it" || unit == "iter" || unit == "iteration" || unit == "iterations") {
        if (v != std::floor(v)) return std::nullopt;
        b.iterations = true;
        b.value = static_cast<uint64_t>(v);
        return b;
    }
    double scale = unit.empty() || unit == "s" ? 1e9
                   : unit == "ms"              ? 1e6
                   : unit == "us"              ? 1e3
                   : unit == "ns"              ? 1
                                               : -1;
    if (scale < 0) return std::nullopt;
    b.value = static_cast<uint64_t>(std::llround(v * scale));
    return b;
}

bool Window::resolve(const Loops& loops, std::string& error) {
    bool by_iteration =
        (options_.from && options_.from->iterations) || (options_.to && options_.to->iterations);
    int64_t main = loops.main_loop();
    if (by_iteration && main < 0) {
        error = "--from/--to in iterations: no loop was found in this trace to count them in "
                "(give seconds, or mark iterations)";
        return false;
    }
    const std::vector<uint64_t>* starts = main >= 0 ? &loops.loops[main].starts : nullptr;
    if (options_.from) {
        uint64_t v = options_.from->value;
        if (!options_.from->iterations)
            from_ts_ = v;
        else if (v == 0)
            from_ts_ = 0;
        else
            from_ts_ = v <= starts->size() ? (*starts)[v - 1] : ~0ull; // iteration v starts
    }
    if (options_.to) {
        uint64_t v = options_.to->value;
        if (!options_.to->iterations)
            to_ts_ = v;
        else if (v == 0)
            to_ts_ = starts->front() > 0 ? starts->front() - 1 : 0; // before the first
        else
            to_ts_ = v < starts->size() ? (*starts)[v] - 1 : ~0ull; // iteration v + 1 starts
    }
    return true;
}

Loops Window::narrow(const Loops& loops) const {
    Loops out = loops;
    for (Loop& l : out.loops) {
        std::vector<uint64_t> starts;
        for (uint64_t s : l.starts)
            if (in_time(s)) starts.push_back(s);
        // A loop that goes on after the window ends there. Where the window ends between two of
        // its iterations (--to in iterations of the main loop), its last one is whole; else the
        // window cut it short, as the end of the program would.
        if (to_ts_ != ~0ull && l.end_ts > to_ts_ + 1) {
            bool between = std::binary_search(l.starts.begin(), l.starts.end(), to_ts_ + 1);
            l.end_ts = to_ts_ + 1;
            l.runs_to_end = !between;
        }
        l.starts = std::move(starts);
    }
    out.teardown_ts = std::min(out.teardown_ts, to_ts_);
    out.end_ts = std::min(out.end_ts, to_ts_);
    return out;
}

void Window::on_time(uint64_t ts) {
    if (!in_time(ts)) return;
    last_ts_ = ts;
    for (TimedAggregator* g : inner_timed_)
        g->show(ts);
}

void Window::on_alloc(Allocation& a) {
    if (!keeps(a)) {
        a.left_out = true;
        return;
    }
    for (Aggregator* g : inner_)
        g->on_alloc(a);
}

void Window::on_free(const Allocation& a, uint64_t ts, bool freed) {
    if (a.left_out || !in_time(ts)) return;
    for (Aggregator* g : inner_)
        g->on_free(a, ts, freed);
}

void Window::on_failed(const FailedAllocation& f) {
    const format::Record& r = *f.record;
    if (!in_time(f.ts) || r.size < options_.min_bytes ||
        (options_.device && static_cast<int>(r.device) != *options_.device))
        return;
    for (Aggregator* g : inner_)
        g->on_failed(f);
}

void Window::on_unpaired_free(const format::Record& r) {
    if (!in_time(r.ts)) return;
    for (Aggregator* g : inner_)
        g->on_unpaired_free(r);
}

void Window::finish(uint64_t end_ts, Report& report) {
    for (Aggregator* g : inner_)
        g->finish(std::min(end_ts, last_ts_), report);
}

std::string Window::describe() const {
    auto bound = [](const WindowBound& b) {
        if (b.iterations) return "iteration " + std::to_string(b.value);
        char buf[48];
        std::snprintf(buf, sizeof buf, "%.6g s", static_cast<double>(b.value) / 1e9);
        return std::string(buf);
    };
    std::string out;
    auto add = [&](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
    if (options_.from || options_.to)
        add("from " + (options_.from ? bound(*options_.from) : std::string("the start")) + " to " +
            (options_.to ? bound(*options_.to) : std::string("the end")));
    if (options_.device) add("device " + std::to_string(*options_.device) + " only");
    if (options_.min_bytes)
        add("allocations of at least " + std::to_string(options_.min_bytes) + " B");
    return "window: " + out + " (memory allocated outside it is left out)";
}

} // namespace gpuleak::analyzer
