#include "robustness_support.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "gpuleak/format/reader.h"

namespace gpuleak::robustness {

namespace fs = std::filesystem;

std::string program(const std::string& name) {
    // Appended, not string + "/" + name: GCC 12, at -O1 and without -fPIC (as the test drivers are
    // built, to share their precompiled header), reports an out-of-bounds copy in the latter (a
    // false -Warray-bounds).
    std::string path = GPULEAK_ROBUSTNESS_BIN_DIR;
    path += '/';
    path += name;
    return path;
}

namespace {

int exit_code_of(int status) {
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string quote(const std::string& s) {
    std::string out(1, '\'');
    for (char c : s) {
        if (c == '\'')
            out.append("'\\''");
        else
            out.push_back(c);
    }
    out.push_back('\'');
    return out;
}

} // namespace

LiveProcess::LiveProcess(const std::vector<std::string>& argv, const e2e::RunOptions& options) {
    std::string templ = (fs::temp_directory_path() / "gpuleak-robust-XXXXXX").string();
    dir_ = mkdtemp(templ.data());
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        ADD_FAILURE() << "pipe failed";
        return;
    }
    std::string err = dir_ + "/stderr.log";
    pid_ = fork();
    if (pid_ == 0) {
        if (chdir(dir_.c_str()) != 0) _exit(126);
        dup2(pipefd[1], 1);
        int fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 2);
        e2e::exec_child(argv, options, dir_);
    }
    close(pipefd[1]);
    out_ = pipefd[0];
}

LiveProcess::~LiveProcess() {
    if (pid_ > 0) kill_and_wait(SIGKILL);
    if (out_ >= 0) close(out_);
}

bool LiveProcess::read_line(std::string& line, int timeout_ms) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
        if (auto nl = pending_.find('\n'); nl != std::string::npos) {
            line = pending_.substr(0, nl);
            pending_.erase(0, nl + 1);
            return true;
        }
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0 || out_ < 0) return false;
        pollfd p{out_, POLLIN, 0};
        if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
        char buf[4096];
        ssize_t n = ::read(out_, buf, sizeof buf);
        if (n <= 0) return false;
        pending_.append(buf, static_cast<size_t>(n));
    }
}

int LiveProcess::kill_and_wait(int sig) {
    if (pid_ <= 0) return -1;
    kill(pid_, sig);
    return wait();
}

int LiveProcess::wait(int timeout_s) {
    if (pid_ <= 0) return -1;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    int status = 0;
    for (;;) {
        pid_t r = waitpid(pid_, &status, WNOHANG);
        if (r == pid_) break;
        if (std::chrono::steady_clock::now() > deadline) {
            ADD_FAILURE() << "process did not exit within " << timeout_s << " s";
            kill(pid_, SIGKILL);
            waitpid(pid_, &status, 0);
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    pid_ = -1;
    return exit_code_of(status);
}

std::vector<std::string> LiveProcess::traces() const {
    std::vector<std::string> out;
    for (const auto& entry : fs::directory_iterator(dir_))
        if (entry.path().extension() == ".bin") out.push_back(entry.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

std::string LiveProcess::stderr_text() const {
    return read_file(dir_ + "/stderr.log");
}

ReportRun run_report(const std::vector<std::string>& args, int timeout_s) {
    ReportRun r;
    std::string templ = (fs::temp_directory_path() / "gpuleak-report-XXXXXX").string();
    std::string dir = mkdtemp(templ.data());
    std::string cmd = "timeout -s KILL ";
    cmd.append(std::to_string(timeout_s)).append(" ").append(quote(e2e::Paths::report()));
    for (const auto& a : args)
        cmd.append(" ").append(quote(a));
    cmd.append(" >").append(quote(dir + "/out")).append(" 2>").append(quote(dir + "/err"));
    r.exit_code = e2e::shell(cmd);
    r.out = read_file(dir + "/out");
    r.err = read_file(dir + "/err");
    fs::remove_all(dir);
    return r;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void write_file(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

size_t count(const std::string& text, const std::string& needle) {
    size_t n = 0;
    for (size_t pos = text.find(needle); pos != std::string::npos;
         pos = text.find(needle, pos + needle.size()))
        ++n;
    return n;
}

std::vector<std::string> preload_messages(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (line.rfind("gpuleak: ", 0) == 0) out.push_back(line);
    return out;
}

std::string trace_payloads(const std::string& path) {
    format::TraceFile file;
    if (!file.open(path)) {
        ADD_FAILURE() << path << ": " << file.error();
        return {};
    }
    file.index_blocks();
    std::string all;
    std::vector<uint8_t> payload;
    for (const auto& b : file.blocks())
        if (file.load(b, payload)) all.append(payload.begin(), payload.end());
    return all;
}

} // namespace gpuleak::robustness
