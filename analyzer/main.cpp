// gpuleak-report: reads traces written by libgpuleak.so and reports where device memory is held.
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <fstream>
#include <iostream>

#include "analysis/replay.h"
#include "render/renderers.h"
#include "trace/loaded_trace.h"

using namespace gpuleak::analyzer;

namespace {

int report_one(const std::string& path, const std::string& format, StackMode mode, const RenderOptions& options,
               std::ostream& out) {
    LoadedTrace trace;
    std::string error;
    if (!load_trace(path, trace, error)) {
        std::cerr << "gpuleak-report: " << path << ": " << error << "\n";
        return 2;
    }
    Symbolizer symbolizer;
    for (const auto& m : trace.modules) symbolizer.add_module(m);
    SiteTable sites(trace, symbolizer, mode);
    Report report = replay(trace, sites);
    for (const auto& w : symbolizer.warnings()) report.warnings.push_back(w);
    if (format == "json") render_json(report, options, out);
    else render_text(report, options, out);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    // Offline and private: elfutils would otherwise ask debuginfod servers about every module.
    unsetenv("DEBUGINFOD_URLS");
    CLI::App app{"gpuleak-report: where a traced program holds GPU memory, by call site.\n"
                 "Exit status: 0 report written, 2 a trace could not be read (the error names the file)."};
    std::vector<std::string> traces;
    std::string format = "text", stacks = "merged", output;
    RenderOptions options;
    app.add_option("traces", traces, "trace files written by libgpuleak.so")->required()->check(CLI::ExistingFile);
    app.add_option("--format", format, "text or json")->check(CLI::IsMember({"text", "json"}));
    app.add_option("--stacks", stacks, "merged (Python and native), python or native")
        ->check(CLI::IsMember({"merged", "python", "native"}));
    app.add_option("--top", options.top, "sites shown per section (text)");
    app.add_option("--frames", options.max_frames, "frames shown per site (text)");
    app.add_option("-o,--output", output, "write the report to this file instead of stdout");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    }
    StackMode mode = stacks == "python" ? StackMode::Python : stacks == "native" ? StackMode::Native : StackMode::Merged;
    std::ofstream file;
    if (!output.empty()) {
        file.open(output);
        if (!file) {
            std::cerr << "gpuleak-report: cannot write " << output << "\n";
            return 2;
        }
    }
    std::ostream& out = output.empty() ? std::cout : file;
    int status = 0;
    for (const auto& path : traces) status = std::max(status, report_one(path, format, mode, options, out));
    return status;
}
