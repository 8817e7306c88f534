// What CI systems read: JUnit XML (one test case per gate, the failing sites in the message),
// GitHub workflow commands (::error file=...,line=...:: at the leaking line of user code) and a
// Markdown summary for the job page ($GITHUB_STEP_SUMMARY).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "analysis/report.h"
#include "compare/baseline.h"
#include "gates/gates.h"

namespace gpuleak::analyzer {

void write_junit(const std::vector<GateResult>& results, std::ostream& out);

// ::error for each site of a failing gate, ::warning for other leaking or growing sites. File paths
// are made relative to `workspace` (GITHUB_WORKSPACE) when they lie under it.
void write_github_annotations(const std::vector<GateResult>& results,
                              const std::vector<Report>& reports, const std::string& workspace,
                              std::ostream& out);

void write_markdown_summary(const std::vector<Report>& reports,
                            const std::vector<GateResult>& results,
                            const std::vector<Comparison>& comparisons, std::ostream& out);

} // namespace gpuleak::analyzer
