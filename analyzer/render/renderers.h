#pragma once

#include <ostream>

#include "analysis/report.h"

namespace gpuleak::analyzer {

struct RenderOptions {
    size_t top = 10;       // sites per section
    size_t max_frames = 8; // frames shown per site in text
};

void render_text(const Report& report, const RenderOptions& options, std::ostream& out);
void render_json(const Report& report, const RenderOptions& options, std::ostream& out);

} // namespace gpuleak::analyzer
