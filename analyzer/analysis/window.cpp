#include "analysis/window.h"

#include <cctype>
#include <cmath>
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

bool Window::in_time(uint64_t ts, uint32_t iteration) const {
    if (options_.from)
        if ((options_.from->iterations ? iteration : ts) < options_.from->value) return false;
    if (options_.to)
        if ((options_.to->iterations ? iteration : ts) > options_.to->value) return false;
    return true;
}

bool Window::keep(const format::Record& r, uint32_t iteration) {
    using format::Tag;
    switch (r.tag) {
    case Tag::Alloc: {
        format::Space space = r.api == format::Api::cuMemCreate       ? format::Space::VmmHandle
                              : r.kind == format::MemKind::PinnedHost ? format::Space::Host
                                                                      : format::Space::Device;
        bool kept = in_time(r.ts, iteration) && r.size >= options_.min_bytes &&
                    (!options_.device || r.device == *options_.device);
        if (kept)
            skipped_.erase(key(space, r.address));
        else
            skipped_.insert(key(space, r.address));
        return kept;
    }
    case Tag::AllocFailed:
        return in_time(r.ts, iteration) && r.size >= options_.min_bytes &&
               (!options_.device || r.device == *options_.device);
    case Tag::Free:
        if (skipped_.erase(key(r.space, r.address))) return false;
        return in_time(r.ts, iteration);
    default:
        // Records about VMM handles left out refer to a handle the replay does not know, and it
        // ignores them.
        return in_time(r.ts, iteration);
    }
}

void Window::narrow_iterations(Iterations& it, Report& report) const {
    uint32_t count = it.count();
    auto iteration_at = [&](uint64_t ts) { // the iteration an event at ts falls in
        uint32_t k = 0;
        while (k < count && it.boundaries[k] <= ts)
            ++k;
        return k;
    };
    uint32_t first = 0, last = count;
    if (options_.from)
        first = options_.from->iterations ? static_cast<uint32_t>(options_.from->value)
                                          : iteration_at(options_.from->value);
    if (options_.to)
        last = options_.to->iterations ? static_cast<uint32_t>(options_.to->value)
                                       : iteration_at(options_.to->value);
    // The verdicts judge iterations warmup + 1 .. count - 1 (the last is the program's teardown).
    if (last + 1 < count) it.boundaries.resize(last + 1);
    if (first > 0) it.warmup = std::max(it.warmup, first - 1);
    report.iterations.count = it.count();
    report.iterations.warmup = it.warmup;
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
