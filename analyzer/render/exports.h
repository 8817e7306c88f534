// Formats for tools people already use, each written from the same analysis result
// (report_access.h): HTML, collapsed stacks (flamegraph.pl, speedscope), pprof (go tool pprof),
// Chrome/Perfetto trace JSON, the PyTorch memory snapshot pickle (memory_viz).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "render/report_access.h"

namespace gpuleak::analyzer {

// What a flame graph or a collapsed stack weighs.
enum class StackMetric {
    LiveEnd,     // device bytes still live at the end
    AtPeak,      // device bytes live at the process's device peak
    Allocated,   // bytes allocated over the whole run
    Allocations, // number of allocations
    LiveCount,   // allocations still live at the end
};
std::optional<StackMetric> parse_stack_metric(const std::string& name);
uint64_t stack_metric(const SiteStats& s, StackMetric m);

// One line per stack, outermost frame first: "main (app.c:10);leak (app.c:4) 1000001". With
// several processes the outermost frame is "pid N".
void render_collapsed(const std::vector<ExportInput>& in, StackMetric metric, std::ostream& out);

// A gzip'd perftools.profiles.Profile: sample types alloc_objects/count, alloc_space/bytes,
// inuse_objects/count, inuse_space/bytes (Go's heap profile names, so -sample_index and
// -inuse_space work), one sample per site, labels verdict and pid.
void render_pprof(const std::vector<ExportInput>& in, std::ostream& out);
// The uncompressed Profile message (render_pprof gzips it).
std::string pprof_message(const std::vector<ExportInput>& in);

// Chrome trace event JSON (Perfetto UI, chrome://tracing): a counter track of live bytes per
// device and per top site, instant events for failed allocations, markers and iterations.
void render_perfetto(const std::vector<ExportInput>& in, size_t top_sites, std::ostream& out);

// The pickle that pytorch.org/memory_viz and `python -m torch.cuda._memory_viz` read (protocol 2).
// Needs in.allocations.
void render_torch_snapshot(const ExportInput& in, std::ostream& out);

struct HtmlOptions {
    size_t top_sites = 12; // bands in the timeline
    size_t max_rows = 200; // rows in the site table
    size_t max_frames = 40;
};
void render_html(const std::vector<ExportInput>& in, const HtmlOptions& options, std::ostream& out);

// Escaping shared by the writers.
std::string json_escape(const std::string& s); // without quotes; invalid UTF-8 -> U+FFFD
std::string frame_text(const Frame& f);        // "function (file.py:12)"

} // namespace gpuleak::analyzer
