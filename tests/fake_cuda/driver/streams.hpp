// Streams, events and graphs: handles with just enough state for stream capture. Work is complete
// as soon as it is issued (every stream is always idle).
#pragma once

#include "cuda_api.hpp"

#include <cstddef>

namespace fakecuda {

// Whether `stream` (as a _ptsz entry point sees it when per_thread) is capturing into a graph.
bool stream_capturing(CUstream stream, bool per_thread) noexcept;
// Graph memory: a mem-alloc node in the graph `stream` is capturing into, or in `graph`.
CUresult graph_alloc(CUstream stream, bool per_thread, CUdeviceptr* dptr, std::size_t bytes) noexcept;
CUresult graph_free(CUstream stream, bool per_thread, CUdeviceptr dptr) noexcept;

} // namespace fakecuda
