// The Process record and the module map: what the analyzer needs to name the process and to
// symbolize its return addresses offline.
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <mutex>
#include <string>
#include <vector>

#include "recorder/global_stream.h"
#include "recorder/process_info.h"
#include "recorder/recorder.h"
#include "support/log.h"

extern char** environ;

namespace gpuleak::recorder {
namespace {

constexpr size_t kModuleBlockBudget = 32 * 1024;

// Environment variables worth keeping: they decide how frameworks allocate. Nothing else is
// recorded, since the environment may hold secrets.
bool allowed_env(const char* entry) {
    static constexpr const char* kPrefixes[] = {"GPULEAK_",
                                                "PYTORCH_CUDA_ALLOC_CONF=",
                                                "PYTORCH_NO_CUDA_MEMORY_CACHING=",
                                                "PYTORCH_ALLOC_CONF=",
                                                "CUDA_VISIBLE_DEVICES=",
                                                "CUDA_MODULE_LOADING=",
                                                "XLA_PYTHON_CLIENT_",
                                                "TF_GPU_ALLOCATOR=",
                                                "TF_FORCE_GPU_ALLOW_GROWTH=",
                                                "CUPY_GPU_MEMORY_LIMIT=",
                                                "RANK=",
                                                "LOCAL_RANK=",
                                                "WORLD_SIZE="};
    for (const char* p : kPrefixes)
        if (!std::strncmp(entry, p, std::strlen(p))) return true;
    return false;
}

std::string read_small_file(const char* path, size_t limit) {
    std::string out;
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return out;
    char buf[4096];
    ssize_t n;
    while (out.size() < limit && (n = ::read(fd, buf, sizeof buf)) > 0)
        out.append(buf, static_cast<size_t>(n));
    ::close(fd);
    if (out.size() > limit) out.resize(limit);
    return out;
}

std::string exe_path() {
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

struct Module {
    std::string path;
    uint64_t base;
    std::string build_id;
    std::vector<std::pair<uint64_t, uint64_t>> segments;
};

std::string build_id_of(const dl_phdr_info* info) {
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_NOTE) continue;
        auto p = reinterpret_cast<const uint8_t*>(info->dlpi_addr + ph.p_vaddr);
        auto end = p + ph.p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            auto note = reinterpret_cast<const ElfW(Nhdr)*>(p);
            const uint8_t* name = p + sizeof *note;
            const uint8_t* desc = name + ((note->n_namesz + 3) & ~3u);
            const uint8_t* next = desc + ((note->n_descsz + 3) & ~3u);
            if (next > end) break;
            if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
                !std::memcmp(name, "GNU", 4))
                return std::string(reinterpret_cast<const char*>(desc), note->n_descsz);
            p = next;
        }
    }
    return {};
}

std::mutex g_modules_mutex;
std::vector<std::pair<uint64_t, std::string>> g_known; // (base, path) already written
unsigned long long g_seen_adds = ~0ull, g_seen_subs = ~0ull;

} // namespace

void write_process_record() {
    std::string exe = exe_path();
    std::string cmdline = read_small_file("/proc/self/cmdline", 32 * 1024);
    std::vector<std::string> argv;
    for (size_t i = 0; i < cmdline.size();) {
        size_t end = cmdline.find('\0', i);
        if (end == std::string::npos) end = cmdline.size();
        argv.emplace_back(cmdline, i, end - i);
        i = end + 1;
    }
    std::vector<std::string> env;
    size_t env_bytes = 0;
    for (char** e = environ; e && *e; ++e) {
        if (!allowed_env(*e)) continue;
        size_t len = std::strlen(*e);
        if (len > 4096 || env_bytes + len > 16 * 1024) continue;
        env.emplace_back(*e, len);
        env_bytes += len;
    }
    timespec real;
    clock_gettime(CLOCK_REALTIME, &real);
    uint64_t unix_ns =
        static_cast<uint64_t>(real.tv_sec) * 1000000000ull + static_cast<uint64_t>(real.tv_nsec);
    size_t need = 64 + exe.size() + cmdline.size() + argv.size() * 10 + env_bytes + env.size() * 10;
    global_stream::write(need, [&](format::Encoder& e) {
        format::put::process(e, static_cast<uint64_t>(getpid()), static_cast<uint64_t>(getppid()),
                             unix_ns, exe, argv, env, GPULEAK_VERSION);
    });
}

bool modules_changed() {
    struct Counters {
        unsigned long long adds = 0, subs = 0;
    } c;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t size, void* data) {
            auto* c = static_cast<Counters*>(data);
            if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
                c->adds = info->dlpi_adds;
                c->subs = info->dlpi_subs;
            }
            return 1;
        },
        &c);
    std::lock_guard lock(g_modules_mutex);
    return c.adds != g_seen_adds || c.subs != g_seen_subs;
}

void scan_modules() {
    std::lock_guard lock(g_modules_mutex);
    struct Scan {
        std::vector<Module> found;
        std::string exe;
        unsigned long long adds = 0, subs = 0;
    } scan;
    scan.exe = exe_path();
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t size, void* data) {
            auto* s = static_cast<Scan*>(data);
            if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
                s->adds = info->dlpi_adds;
                s->subs = info->dlpi_subs;
            }
            Module m;
            m.path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "";
            if (m.path.empty() && s->found.empty())
                m.path = s->exe; // the first entry is the executable
            m.base = info->dlpi_addr;
            for (int i = 0; i < info->dlpi_phnum; ++i)
                if (info->dlpi_phdr[i].p_type == PT_LOAD)
                    m.segments.emplace_back(info->dlpi_phdr[i].p_vaddr, info->dlpi_phdr[i].p_memsz);
            if (!m.segments.empty()) {
                m.build_id = build_id_of(info);
                s->found.push_back(std::move(m));
            }
            return 0;
        },
        &scan);
    g_seen_adds = scan.adds;
    g_seen_subs = scan.subs;
    std::vector<const Module*> fresh;
    for (const Module& m : scan.found) {
        bool known = false;
        for (auto& [base, path] : g_known)
            if (base == m.base && path == m.path) known = true;
        if (known) continue;
        g_known.emplace_back(m.base, m.path);
        fresh.push_back(&m);
    }
    // Several blocks if the map is large; each Module record is small.
    size_t i = 0;
    while (i < fresh.size()) {
        size_t budget = 0, j = i;
        while (j < fresh.size() && budget < kModuleBlockBudget) {
            budget += 64 + fresh[j]->path.size() + fresh[j]->build_id.size() +
                      fresh[j]->segments.size() * 20;
            ++j;
        }
        global_stream::write(budget, [&](format::Encoder& e) {
            for (size_t k = i; k < j; ++k) {
                const Module& m = *fresh[k];
                format::put::module(e, 0, m.base, m.path, m.build_id, m.segments);
            }
        });
        i = j;
    }
}

void reset_modules_after_fork_child() {
    new (&g_modules_mutex) std::mutex();
    g_known.clear();
    g_seen_adds = g_seen_subs = ~0ull;
}

} // namespace gpuleak::recorder
