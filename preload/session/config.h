// Settings read from the environment once, when tracing starts.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpuleak {

struct Config {
    char output_pattern[4096];  // GPULEAK_OUTPUT, default gpuleak.%p.bin (%p pid, %r rank)
    unsigned stack_depth = 256; // GPULEAK_STACK_DEPTH: native frames kept per allocation
    unsigned flush_ms = 50;     // GPULEAK_FLUSH_MS: a SIGKILL loses at most ~2 intervals of events
    bool python = true;         // GPULEAK_PYTHON=0 turns Python stacks off
    bool compress = true;       // GPULEAK_COMPRESS=0 writes raw blocks
    bool clear_deepbind =
        true; // GPULEAK_KEEP_DEEPBIND=1 leaves RTLD_DEEPBIND alone (and misses those calls)
    uint64_t max_bytes =
        0; // GPULEAK_MAX_BYTES: the trace never grows past this (0 = no limit, else >= 4 KiB)
    bool signals =
        true; // GPULEAK_SIGNALS=0: no handlers, a fatal signal loses up to one flush interval
    // GPULEAK_TEST_WRITE_DELAY_MS (tests only): the writer thread holds each block it takes from
    // the queue this long before writing it, as a thread descheduled on a loaded machine would.
    unsigned test_write_delay_ms = 0;
};

const Config& config();
void load_config();

// Expands %p (pid), %r (RANK, else LOCAL_RANK, else 0) and %% into `out`. A child of a fork whose
// pattern has no %p gets ".<pid>" appended so it never writes into its parent's file.
void expand_output_path(const char* pattern, int pid, bool forked_child, char* out, size_t size);

} // namespace gpuleak
