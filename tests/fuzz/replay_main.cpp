// Runs the fuzz entry point over files and directories without libFuzzer, so any compiler can
// replay the seed corpus and past findings as an ordinary test. Each input gets a time limit: a
// hang is a failure, like a crash.
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

constexpr unsigned kSecondsPerInput = 20;
const char* g_current = "";

void on_alarm(int) {
    // Only async-signal-safe calls here.
    const char msg[] = "trace_reader_replay: time limit exceeded on ";
    [[maybe_unused]] auto a = write(2, msg, sizeof msg - 1);
    [[maybe_unused]] auto b = write(2, g_current, __builtin_strlen(g_current));
    [[maybe_unused]] auto c = write(2, "\n", 1);
    _exit(3);
}

bool replay_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "trace_reader_replay: cannot read %s\n", path.c_str());
        return false;
    }
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    std::string name = path.string();
    g_current = name.c_str();
    alarm(kSecondsPerInput);
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    alarm(0);
    return true;
}

} // namespace

int main(int argc, char** argv) {
    signal(SIGALRM, on_alarm);
    size_t inputs = 0;
    bool ok = true;
    for (int i = 1; i < argc; ++i) {
        std::filesystem::path arg = argv[i];
        if (std::filesystem::is_directory(arg)) {
            for (const auto& entry : std::filesystem::recursive_directory_iterator(arg))
                if (entry.is_regular_file()) ok &= replay_file(entry.path()), ++inputs;
        } else {
            ok &= replay_file(arg), ++inputs;
        }
    }
    std::printf("trace_reader_replay: %zu inputs replayed\n", inputs);
    if (inputs == 0) {
        std::fprintf(stderr, "trace_reader_replay: no inputs\n");
        return 1;
    }
    return ok ? 0 : 1;
}
