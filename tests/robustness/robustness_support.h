// Helpers for the robustness tests, beyond tests/e2e/e2e_support.h: programs watched while they run
// (to kill them at a chosen moment), the analyzer's exit status and stderr, raw trace bytes.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "e2e_support.h"

namespace gpuleak::robustness {

using e2e::Json;

// build/tests/robustness/NAME
std::string program(const std::string& name);

// A program started like e2e::run (fresh temporary directory, preload and GPULEAK_OUTPUT set) whose
// stdout is read line by line while it runs; stderr goes to DIR/stderr.log.
class LiveProcess {
public:
    LiveProcess(const std::vector<std::string>& argv, const e2e::RunOptions& options = {});
    ~LiveProcess();
    LiveProcess(const LiveProcess&) = delete;
    LiveProcess& operator=(const LiveProcess&) = delete;

    // The next stdout line, without its newline; false on end of output or after timeout_ms.
    bool read_line(std::string& line, int timeout_ms = 10000);
    // Sends `sig` and reaps the process; returns its status as e2e::RunResult::exit_code does.
    int kill_and_wait(int sig);
    int wait(int timeout_s = 60);
    const std::string& dir() const { return dir_; }
    std::vector<std::string> traces() const;
    std::string stderr_text() const;

private:
    pid_t pid_ = -1;
    int out_ = -1;
    std::string dir_;
    std::string pending_;
};

struct ReportRun {
    int exit_code = -1;
    std::string out, err;
};
// gpuleak-report with any arguments; never fails the test by itself.
ReportRun run_report(const std::vector<std::string>& args, int timeout_s = 60);

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& bytes);
size_t count(const std::string& text, const std::string& needle);
// Lines of `text` that start with "gpuleak: " (the preload's diagnostics).
std::vector<std::string> preload_messages(const std::string& text);

// The decompressed payloads of every readable block of a trace, concatenated.
std::string trace_payloads(const std::string& path);

} // namespace gpuleak::robustness
