#include "e2e_support.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace gpuleak::e2e {

namespace fs = std::filesystem;

std::string Paths::build() {
    return GPULEAK_TEST_BUILD_DIR;
}
std::string Paths::preload() {
    return build() + "/lib/libgpuleak.so";
}
std::string Paths::report() {
    return build() + "/bin/gpuleak-report";
}
std::string Paths::front() {
    return build() + "/bin/gpuleak";
}
std::string Paths::app(const std::string& name) {
    return build() + "/tests/apps/" + name;
}
std::string Paths::fake_dir() {
    return build() + "/tests/fake";
}
std::string Paths::source() {
    return GPULEAK_TEST_SOURCE_DIR;
}

void exec_child(const std::vector<std::string>& argv, const RunOptions& options,
                const std::string& dir) {
    if (options.preload) {
        // ASan arriving as the preload's dependency crashes at start in programs that list ld.so
        // as NEEDED (nvcc's static runtime); only for those, since ASan first in LD_PRELOAD also
        // puts its dlopen ahead of ours (which refuses RTLD_DEEPBIND where ours clears it).
        std::string preload = Paths::preload();
        const char* first = getenv("GPULEAK_TEST_PRELOAD_FIRST");
        if (options.uninstrumented_program && first && *first)
            preload = std::string(first) + ":" + preload;
        setenv("LD_PRELOAD", preload.c_str(), 1);
        setenv("GPULEAK_OUTPUT", (dir + "/" + options.output_pattern).c_str(), 1);
    }
    for (const auto& [k, v] : options.env)
        setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
}

namespace {

void remove_run_dirs();

// The runs' directories live until the test program exits: removed then if every test passed (a
// ctest run makes hundreds), kept and named if one failed, for a look at its traces and output.
std::vector<std::string>& run_dirs() {
    static std::vector<std::string> dirs;
    // Registered after `dirs` is made, so that it runs before `dirs` is destroyed.
    [[maybe_unused]] static bool cleanup_registered = std::atexit(remove_run_dirs) == 0;
    return dirs;
}

void remove_run_dirs() {
    if (!::testing::UnitTest::GetInstance()->Passed()) {
        for (const auto& d : run_dirs())
            std::fprintf(stderr, "e2e: kept %s\n", d.c_str());
        return;
    }
    for (const auto& d : run_dirs()) {
        std::error_code ignored;
        fs::remove_all(d, ignored);
    }
}

// Empty if it cannot be made (the test has failed then).
std::string new_run_dir() {
    std::string templ = (fs::temp_directory_path() / "gpuleak-e2e-XXXXXX").string();
    if (!mkdtemp(templ.data())) {
        ADD_FAILURE() << "cannot create a directory in " << fs::temp_directory_path();
        return {};
    }
    run_dirs().push_back(templ);
    return templ;
}

} // namespace

RunResult run(const std::vector<std::string>& argv, const RunOptions& options) {
    RunResult result;
    result.dir = new_run_dir();
    if (result.dir.empty()) return result;
    std::string log = result.dir + "/output.log";
    pid_t pid = fork();
    if (pid == 0) {
        if (chdir(result.dir.c_str()) != 0) _exit(126);
        int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
        exec_child(argv, options, result.dir);
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(options.timeout_s);
    int status = 0;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        if (std::chrono::steady_clock::now() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            ADD_FAILURE() << argv[0] << " timed out after " << options.timeout_s << " s";
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::ifstream in(log);
    std::stringstream ss;
    ss << in.rdbuf();
    result.output = ss.str();
    for (const auto& entry : fs::directory_iterator(result.dir))
        if (entry.path().extension() == ".bin") result.traces.push_back(entry.path().string());
    std::sort(result.traces.begin(), result.traces.end());
    return result;
}

int shell(const std::string& command, std::string* output) {
    // Grouped, so a redirection inside `command` still applies to it.
    std::string full = "{ " + command + " ; } 2>&1";
    FILE* p = popen(full.c_str(), "r");
    if (!p) return -1;
    std::string out;
    std::array<char, 4096> buf{};
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0)
        out.append(buf.data(), n);
    int status = pclose(p);
    if (output) *output = out;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

Json report(const std::string& trace, const std::vector<std::string>& extra) {
    // Appended piece by piece: GCC 12 at -O3 takes `"'" + std::string` for an overlapping
    // memcpy (a false -Wrestrict) once this file's inlining changes.
    std::string cmd = "'";
    cmd.append(Paths::report()).append("' --format json '").append(trace).append("'");
    for (const auto& e : extra)
        cmd += " " + e;
    std::string out;
    std::string err_file = trace + ".stderr";
    int rc = shell(cmd + " 2>'" + err_file + "'", &out);
    EXPECT_EQ(rc, 0) << cmd << "\n" << out;
    try {
        return Json::parse(out);
    } catch (const std::exception& e) {
        ADD_FAILURE() << "report is not JSON: " << e.what() << "\n" << out;
        return Json::object();
    }
}

std::string headline_function(const Json& site) {
    for (const auto& f : site["frames"])
        if (f["function"].is_string()) return f["function"];
    return "";
}

const Json* site_by_function(const Json& report, const std::string& function) {
    for (const auto& s : report["sites"])
        if (headline_function(s) == function) return &s;
    return nullptr;
}

bool has_hint(const Json& hints, const std::string& text) {
    for (const auto& h : hints)
        if (h.get<std::string>().find(text) != std::string::npos) return true;
    return false;
}

std::vector<const Json*> sites_mentioning(const Json& report, const std::string& function) {
    std::vector<const Json*> out;
    for (const auto& s : report["sites"])
        for (const auto& f : s["frames"])
            if (f["function"].is_string() && f["function"] == function) {
                out.push_back(&s);
                break;
            }
    return out;
}

const Json* site_by_id(const Json& report, uint64_t id) {
    for (const auto& s : report["sites"])
        if (s["id"] == id) return &s;
    return nullptr;
}

} // namespace gpuleak::e2e
