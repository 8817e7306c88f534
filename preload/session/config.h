// Settings read from the environment once, when tracing starts.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpuleak {

// Booleans: 1/0, true/false, yes/no, on/off (any case); sizes: 4096, 64K, 512MiB, 1.5G, 1GB
// (common/parse.h). A value that does not parse is reported in one warning and the default is
// used; a number out of range is clamped, with a warning.
struct Config {
    char output_pattern[4096];  // GPULEAK_OUTPUT, default gpuleak.%p.bin (%p pid, %r rank)
    bool disable = false;       // GPULEAK_DISABLE=1: pass everything through, write nothing
    unsigned stack_depth = 256; // GPULEAK_STACK_DEPTH (1..4096): native frames kept per allocation
    unsigned flush_ms = 50;     // GPULEAK_FLUSH_MS (1..10000): a SIGKILL loses about 2 intervals
    bool python = true;         // GPULEAK_PYTHON=0 turns Python stacks off
    bool compress = true;       // GPULEAK_COMPRESS=0 writes raw blocks
    // GPULEAK_MAX_BYTES: the trace never grows past this (0 = no limit, else at least 4 KiB).
    uint64_t max_bytes = 0;
    bool signals = true; // GPULEAK_SIGNALS=0: no handlers, a fatal signal loses one interval
    // GPULEAK_UNWIND=libunwind: every native stack from libunwind; default (fast): from the unwind
    // tables' rules cached per thread, libunwind only where a frame needs more.
    bool fast_unwind = true;
    // GPULEAK_CLOCK=monotonic: every event's time from clock_gettime; default (auto): from the TSC
    // where the kernel's own clock runs on it (session/event_clock.h).
    bool tsc_clock = true;
    // GPULEAK_TEST_WRITE_DELAY_MS (tests only): the writer thread holds each block it takes from
    // the queue this long before writing it, as a thread descheduled on a loaded machine would.
    unsigned test_write_delay_ms = 0;
    // GPULEAK_TEST_THREAD_EXIT_DELAY_MS (tests only): an exiting thread holds its recorder state
    // this long before handing its last block over, as a thread descheduled there would.
    unsigned test_thread_exit_delay_ms = 0;
    // GPULEAK_TEST_UNWIND_VERIFY=1 (tests only): every native stack is walked by libunwind too; a
    // difference is a warning and abort().
    bool test_unwind_verify = false;
};

const Config& config();
// Reads the environment; when tracing starts (again in a forked child).
void load_config();
// GPULEAK_KEEP_DEEPBIND=1 leaves RTLD_DEEPBIND alone (and misses what those libraries allocate).
// Read on first use, independently of load_config: dlopen happens before tracing starts.
bool keep_deepbind();

// Expands %p (pid), %r (RANK, else LOCAL_RANK, else 0) and %% into `out`. A child of a fork whose
// pattern has no %p gets ".<pid>" appended so it never writes into its parent's file.
void expand_output_path(const char* pattern, int pid, bool forked_child, char* out, size_t size);

} // namespace gpuleak
