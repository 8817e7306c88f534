// NVTX3's types and callback ids for a tool: NVTX_NO_IMPL leaves out NVTX's own implementation,
// which would otherwise make libgpuleak.so an NVTX client with globals of its own.
#pragma once

#define NVTX_NO_IMPL
#define NVTX_AS_SYSTEM_HEADER
#include <nvtx3/nvToolsExt.h>
