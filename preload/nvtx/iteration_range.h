// Which NVTX ranges begin an iteration: those named GPULEAK_ITERATION_RANGE (default "iteration"),
// in any domain, whether the name comes as ASCII, wide or registered string. Read once, at
// injection; the matchers allocate nothing and take no lock, so they can run on every NVTX call.
#pragma once

#include "nvtx/nvtx_types.h"

namespace gpuleak::nvtx {

// Reads GPULEAK_ITERATION_RANGE (first call only). False when no range can be watched: set but
// empty (the user's way to turn the markers off) or longer than a Marker record keeps.
bool load_iteration_range();

// The name recorded with every Marker. Valid once load_iteration_range() returned true.
const char* iteration_range();

bool is_iteration_range(const char* name);
// Compares code point by code point, so only a name in ASCII can match a wide string.
bool is_iteration_range(const wchar_t* name);
bool is_iteration_range(const nvtxEventAttributes_t* attributes);

// The handle nvtxDomainRegisterString answers for the range's name: an address of ours, so a
// registered message can be recognized without a table. Other strings get NULL, as without a tool.
nvtxStringHandle_t iteration_range_handle();

} // namespace gpuleak::nvtx
