// The trace vocabulary shared by the preload (writer) and the analyzer (reader).
// docs/trace-format.md describes the byte layout; this header is its single source of truth.
#pragma once

#include <cstdint>

namespace gpuleak::format {

inline constexpr char kFileMagic[8] = {'G', 'P', 'U', 'L', 'E', 'A', 'K', '\0'};
// 2: a block's time deltas are a column of their own after its records (1: inside the records).
inline constexpr uint32_t kFormatVersion = 2;
inline constexpr uint32_t kOldestReadableVersion = 1;
inline constexpr uint32_t kBlockMagic = 0x4b424c47;    // "GLBK" little-endian
inline constexpr uint32_t kMaxBlockPayload = 1u << 20; // a reader rejects anything larger
// Blocks of process-wide records (Process, Module, TraceEnd) use this thread index.
inline constexpr uint32_t kGlobalThreadIndex = 0;
// The sequence number of the block holding a Capped record (process-wide stream): it ends that
// stream whatever was written before it.
inline constexpr uint64_t kCappedSequence = ~0ull;

// File header: magic[8], u32 version, u32 header_size (bytes, including these fields).
struct FileHeader {
    char magic[8];
    uint32_t version;
    uint32_t header_size;
};
static_assert(sizeof(FileHeader) == 16);

enum BlockFlags : uint32_t {
    kBlockZstd = 1u << 0, // payload is one zstd frame of raw_size bytes
};

// Every block belongs to one recording thread. Blocks of a thread carry consecutive sequence
// numbers; records inside a block are in time order, so a reader merges threads by timestamp.
struct BlockHeader {
    uint32_t magic;
    uint32_t stored_size; // payload bytes that follow the header
    uint32_t raw_size;    // payload bytes after decompression
    uint32_t checksum; // crc32 of the 32 header bytes after this field, then of the stored payload
    uint32_t flags;
    uint32_t thread_index; // small dense id of the recording thread (not the tid: tids are reused)
    uint64_t sequence;     // per thread, starts at 0
    uint64_t first_ts; // ns since the process's trace start; base of the block's timestamp deltas
    uint64_t last_ts;
};
static_assert(sizeof(BlockHeader) == 48);

// A block's payload (version 2) is its records, then the time column, then the column's size in
// bytes as a little-endian u32. The column holds the "dt" of every timed record as a varint, the
// first record's last: it is written downward from the top of the block buffer while the records
// grow upward, so a loop's records repeat byte for byte and compress to almost nothing, and their
// times compress on their own. Version 1 had no column: each dt sat inside its record.
inline constexpr uint32_t kTimeTrailerBytes = 4;

// Record tags. Each record is: u8 tag, then fields as LEB128 varints (s = zigzag signed) or
// strings (varint length + bytes). "dt" is the varint delta from the previous timestamp in the
// block, stored in the block's time column (version 2).
enum class Tag : uint8_t {
    Process = 1,      // pid, ppid, start_unix_ns, exe, argc, argv..., envc, env..., tool_version
    Module = 2,       // dt, base, path, build_id(bytes), nseg, (vaddr, memsz)...  (global stream)
    Thread = 3,       // tid, name
    StackNode = 4,    // id, parent, ip        (ids are per recording thread; 0 = root)
    Alloc = 5,        // dt, api, kind, s:device, address, size, stack, py_stack
    Free = 6,         // dt, api, space, address, result
    AllocFailed = 7,  // dt, api, kind, s:device, size, result, stack, py_stack, free+1, total+1
    VmmRetain = 8,    // dt, handle, address
    VmmRelease = 9,   // dt, handle
    VmmMap = 10,      // dt, address, size, offset, handle
    VmmUnmap = 11,    // dt, address, size
    Marker = 12,      // dt, name
    TraceEnd = 13,    // dt, reserved (written as 0, ignored)
    PyCode = 14,      // code_id, filename, qualname, firstlineno, linetable(bytes)
    PyStackNode = 15, // id, parent, code_id, s:byte_offset, is_entry (ids per thread, own sequence)
    Capped = 16,      // dt, bytes_written
    PyInfo = 17,      // version_hex, layout_source
};

// Which address space an allocation's address lives in, so frees pair with the right map.
enum class Space : uint8_t { Device = 0, Host = 1, VmmHandle = 2 };

// Values are stored in the trace: append only.
// - Array: a CUDA array (device memory; size estimated from its descriptor).
// - Graph: device memory owned by a CUDA graph (a mem-alloc node, or a stream-ordered allocation
//   made while its stream was capturing).
// - Imported: another process's or API's memory mapped here (IPC, pool import, external memory):
//   counted apart, never as this process's allocation.
// - HostRegistered: the program's own host memory page-locked by cuMemHostRegister.
enum class MemKind : uint8_t {
    Device = 0,
    Managed = 1,
    PinnedHost = 2,
    Array = 3,
    Graph = 4,
    Imported = 5,
    HostRegistered = 6,
};
inline constexpr int kMemKindCount = 7;

// One entry per intercepted entry point. Values are stored in the trace: append only.
#define GPULEAK_API_LIST(X)                                                                        \
    X(Unknown, "unknown")                                                                          \
    X(cuMemAlloc_v2, "cuMemAlloc_v2")                                                              \
    X(cuMemAllocPitch_v2, "cuMemAllocPitch_v2")                                                    \
    X(cuMemAllocManaged, "cuMemAllocManaged")                                                      \
    X(cuMemFree_v2, "cuMemFree_v2")                                                                \
    X(cuMemAllocAsync, "cuMemAllocAsync")                                                          \
    X(cuMemAllocAsync_ptsz, "cuMemAllocAsync_ptsz")                                                \
    X(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync")                                          \
    X(cuMemAllocFromPoolAsync_ptsz, "cuMemAllocFromPoolAsync_ptsz")                                \
    X(cuMemFreeAsync, "cuMemFreeAsync")                                                            \
    X(cuMemFreeAsync_ptsz, "cuMemFreeAsync_ptsz")                                                  \
    X(cuMemCreate, "cuMemCreate")                                                                  \
    X(cuMemRelease, "cuMemRelease")                                                                \
    X(cuMemRetainAllocationHandle, "cuMemRetainAllocationHandle")                                  \
    X(cuMemMap, "cuMemMap")                                                                        \
    X(cuMemUnmap, "cuMemUnmap")                                                                    \
    X(cuMemHostAlloc, "cuMemHostAlloc")                                                            \
    X(cuMemAllocHost_v2, "cuMemAllocHost_v2")                                                      \
    X(cuMemFreeHost, "cuMemFreeHost")                                                              \
    X(cudaMalloc, "cudaMalloc")                                                                    \
    X(cudaMallocAsync, "cudaMallocAsync")                                                          \
    X(cudaMallocFromPoolAsync, "cudaMallocFromPoolAsync")                                          \
    X(cudaMallocHost, "cudaMallocHost")                                                            \
    X(cudaHostAlloc, "cudaHostAlloc")                                                              \
    X(cudaMallocManaged, "cudaMallocManaged")                                                      \
    X(cudaMallocPitch, "cudaMallocPitch")                                                          \
    X(cudaFree, "cudaFree")                                                                        \
    X(cudaFreeAsync, "cudaFreeAsync")                                                              \
    X(cudaFreeHost, "cudaFreeHost")                                                                \
    X(cuArrayCreate_v2, "cuArrayCreate_v2")                                                        \
    X(cuArray3DCreate_v2, "cuArray3DCreate_v2")                                                    \
    X(cuArrayDestroy, "cuArrayDestroy")                                                            \
    X(cuMipmappedArrayCreate, "cuMipmappedArrayCreate")                                            \
    X(cuMipmappedArrayDestroy, "cuMipmappedArrayDestroy")                                          \
    X(cuGraphAddMemAllocNode, "cuGraphAddMemAllocNode")                                            \
    X(cuGraphAddMemFreeNode, "cuGraphAddMemFreeNode")                                              \
    X(cuIpcOpenMemHandle_v2, "cuIpcOpenMemHandle_v2")                                              \
    X(cuIpcCloseMemHandle, "cuIpcCloseMemHandle")                                                  \
    X(cuMemPoolImportPointer, "cuMemPoolImportPointer")                                            \
    X(cuMemHostRegister_v2, "cuMemHostRegister_v2")                                                \
    X(cuMemHostUnregister, "cuMemHostUnregister")                                                  \
    X(cuExternalMemoryGetMappedBuffer, "cuExternalMemoryGetMappedBuffer")                          \
    X(cudaMalloc3D, "cudaMalloc3D")                                                                \
    X(cudaMallocArray, "cudaMallocArray")                                                          \
    X(cudaMalloc3DArray, "cudaMalloc3DArray")                                                      \
    X(cudaFreeArray, "cudaFreeArray")                                                              \
    X(cudaHostRegister, "cudaHostRegister")                                                        \
    X(cudaHostUnregister, "cudaHostUnregister")

enum class Api : uint8_t {
#define GPULEAK_API_ENUM(id, name) id,
    GPULEAK_API_LIST(GPULEAK_API_ENUM)
#undef GPULEAK_API_ENUM
        Count
};

const char* api_name(Api api);
const char* kind_name(MemKind kind);

} // namespace gpuleak::format
