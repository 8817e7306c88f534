// Memory pools for stream-ordered allocation. The fake's pools keep nothing cached: a free returns
// the bytes at once, as a pool with release threshold 0 does after synchronisation.
#pragma once

#include "cuda_api.hpp"

namespace fakecuda {

CUmemoryPool default_pool(int device) noexcept;
CUresult create_pool(CUmemoryPool* pool, const CUmemPoolProps* props) noexcept;
CUresult destroy_pool(CUmemoryPool pool) noexcept;
// -1 for a handle that is not a live pool.
int pool_device(CUmemoryPool pool) noexcept;

} // namespace fakecuda
