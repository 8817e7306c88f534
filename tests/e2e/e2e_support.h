// Running programs under libgpuleak.so and reading gpuleak-report's JSON, for end-to-end tests.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpuleak::e2e {

using Json = nlohmann::json;

struct Paths {
    static std::string build();                      // the CMake build directory
    static std::string preload();                    // build/lib/libgpuleak.so
    static std::string report();                     // build/bin/gpuleak-report
    static std::string front();                      // build/bin/gpuleak
    static std::string app(const std::string& name); // build/tests/apps/NAME
    static std::string fake_dir(); // where libcuda.so.1 / libcudart.so.13 fakes live
    static std::string source();   // the source tree
};

struct RunResult {
    int exit_code = -1; // exit status, or 128 + signal
    std::string output; // stdout and stderr together
    std::string dir;    // the run's private directory (trace files land here)
    std::vector<std::string> traces;
};

struct RunOptions {
    bool preload = true;
    std::map<std::string, std::string> env;      // added to the inherited environment
    std::string output_pattern = "trace.%p.bin"; // relative to the run directory
    int timeout_s = 60;
    // A program not built with this build's sanitizer (nvcc's): the sanitizer runtime named by
    // GPULEAK_TEST_PRELOAD_FIRST, if set, is preloaded ahead of libgpuleak.so (.ci/run).
    bool uninstrumented_program = false;
};

// Runs argv in a fresh temporary directory (its working directory).
RunResult run(const std::vector<std::string>& argv, const RunOptions& options = {});

// In a forked child whose working directory and output are set: the preload and trace path of
// `options` (traces go to `dir`), its extra environment, then exec of argv (exit 127 on failure).
[[noreturn]] void exec_child(const std::vector<std::string>& argv, const RunOptions& options,
                             const std::string& dir);

// gpuleak-report --format json on one trace (extra args appended). Fails the test on a non-zero
// exit.
Json report(const std::string& trace, const std::vector<std::string>& extra = {});

// Runs a command line; returns its exit status and combined output.
int shell(const std::string& command, std::string* output = nullptr);

// The site whose innermost named frame is `function`; nullptr when absent.
const Json* site_by_function(const Json& report, const std::string& function);
// All sites whose frames mention `function` anywhere.
std::vector<const Json*> sites_mentioning(const Json& report, const std::string& function);
// Whether one of `hints` (a site's, an OOM's or the report's) contains `text`.
bool has_hint(const Json& hints, const std::string& text);
const Json* site_by_id(const Json& report, uint64_t id);
// The innermost frame with a function name.
std::string headline_function(const Json& site);

} // namespace gpuleak::e2e
