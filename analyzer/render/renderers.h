#pragma once

#include <nlohmann/json_fwd.hpp>
#include <ostream>

#include "analysis/report.h"

namespace gpuleak::analyzer {

struct RenderOptions {
    size_t top = 10;       // sites per section
    size_t max_frames = 8; // frames shown per site in text
};

// "the loop at train.py:30 (in train)" (its for/while line where the source shows it, else the
// line of its first allocation), "the iterations marked \"step\"".
std::string loop_place(const LoopSummary& loop);
// loop_place with its iterations (and its thread when several threads loop): "the loop at
// train.py:30 (in train), 30 iterations".
std::string loop_line(const Report& report, const LoopSummary& loop);

void render_text(const Report& report, const RenderOptions& options, std::ostream& out);
// Several processes of one job: each report, then what they hold together.
void render_text_merged(const std::vector<Report>& reports, std::ostream& out);

// The "gpuleak-report/1" object of one process (docs/report-json.md).
nlohmann::ordered_json report_json(const Report& report);
// One trace: report_json itself; several: {"schema", "processes": [...], "merged": {...}}.
void render_json(const std::vector<Report>& reports, std::ostream& out);

} // namespace gpuleak::analyzer
