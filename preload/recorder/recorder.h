// The events the hooks report. Every function is a no-op while tracing is off or has failed, and
// none of them changes what the application's call returns.
#pragma once

#include <cstdint>

#include "gpuleak/format/records.h"

namespace gpuleak::recorder {

using format::Api;
using format::MemKind;
using format::Space;

uint64_t now(); // ns since this process's trace started
// Starts tracing if needed, then the time: for timestamps taken before the real call (frees), a
// read that may run ahead of earlier instructions (session/event_clock.h).
uint64_t event_time();

void alloc(Api api, MemKind kind, int device, uint64_t address, uint64_t size);
// free_bytes/total_bytes: 0 = not known.
void alloc_failed(Api api, MemKind kind, int device, uint64_t size, int result, uint64_t free_bytes,
                  uint64_t total_bytes);
// `ts` is taken before the real free so the address cannot be reused by another thread first.
void free(uint64_t ts, Api api, Space space, uint64_t address, int result);
void vmm_retain(uint64_t handle, uint64_t address);
void vmm_release(uint64_t ts, uint64_t handle);
void vmm_map(uint64_t address, uint64_t size, uint64_t offset, uint64_t handle);
void vmm_unmap(uint64_t ts, uint64_t address, uint64_t size);
void marker(const char* name);

// Write Module records for new mappings (at the session's start, then from the writer thread).
void scan_modules();

} // namespace gpuleak::recorder
