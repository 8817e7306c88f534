// Whole traces built in memory, laid out as libgpuleak.so lays them out: per-thread blocks of
// records in time order with delta timestamps, stack tries whose nodes are defined before an event
// uses them, process-wide records in blocks of their own (thread index 0). For tests and
// benchmarks of everything that reads traces; never linked into the preload.
//
//   TraceBuilder b;                                   // file header written
//   b.process({.pid = 42, .exe = "/usr/bin/train"});
//   ThreadRef t = b.thread(1001, "main");             // thread index 1
//   uint64_t s = b.stack(t, {0x401234, 0x401100});    // innermost first, as a backtrace lists them
//   b.alloc(t, 1000, 0x7f0000000000, 4096, s);        // ts 1000 ns, 4 KiB from stack s
//   b.free(t, 2000, 0x7f0000000000);
//   b.end(3000);                                      // TraceEnd: the process exited cleanly
//   b.write("trace.bin");                             // or bytes(), for TraceFile::open_memory
//
// Times are ns since the trace started and must not go backwards within a thread (the format
// stores deltas); threads may interleave in any order. Misuse throws std::invalid_argument.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuleak/format/records.h"
#include "gpuleak/format/writer.h"

namespace gpuleak::format {

struct ProcessDesc {
    uint64_t pid = 4242;
    uint64_t ppid = 1;
    uint64_t start_unix_ns = 1700000000000000000ull;
    std::string exe = "/usr/bin/app";
    std::vector<std::string> argv = {"app"};
    std::vector<std::string> env{}; // "NAME=value" entries
    std::string tool_version = "test";
};

struct ModuleDesc {
    std::string path{};
    uint64_t base = 0;                                     // dlpi_addr
    std::string build_id{};                                // raw bytes
    std::vector<std::pair<uint64_t, uint64_t>> segments{}; // (p_vaddr, p_memsz) of PT_LOAD
};

// A recording thread: the index its blocks carry.
struct ThreadRef {
    uint32_t index;
};

struct AllocExtra {
    Api api = Api::cuMemAlloc_v2;
    MemKind kind = MemKind::Device;
    int64_t device = 0;
    uint64_t py_stack = 0; // from py_stack()
};

struct FreeExtra {
    Api api = Api::cuMemFree_v2;
    Space space = Space::Device;
    int64_t result = 0; // the driver's return code (non-zero: the free was rejected)
};

struct FailedExtra {
    Api api = Api::cuMemAlloc_v2;
    MemKind kind = MemKind::Device;
    int64_t device = 0;
    int64_t result = 2; // CUDA_ERROR_OUT_OF_MEMORY
    uint64_t py_stack = 0;
    std::optional<uint64_t> free_bytes{}, total_bytes{}; // the device's, when known
};

// One Python frame of a stack: a code object from py_code() and where in it execution stands.
struct PyFrameDesc {
    uint64_t code_id;
    int32_t byte_offset = 0;
    bool is_entry = false; // the frame was entered from C (the interpreter's entry frame)
};

struct BuilderOptions {
    bool compress = true;             // zstd blocks, as the preload writes by default
    uint32_t block_bytes = 64 * 1024; // a thread's block is sealed when it would grow past this
};

class TraceBuilder {
public:
    // In memory: bytes() and write() give the trace.
    explicit TraceBuilder(const BuilderOptions& options = {});
    // Into `sink` (a FileSink for a trace too large for memory); finish() before reading it.
    explicit TraceBuilder(Sink& sink, const BuilderOptions& options = {});
    ~TraceBuilder();
    TraceBuilder(const TraceBuilder&) = delete;
    TraceBuilder& operator=(const TraceBuilder&) = delete;

    // Process-wide records, each in a block of its own, written at once.
    void process(const ProcessDesc& p);
    void module(const ModuleDesc& m, uint64_t ts = 0);
    void py_info(uint32_t version_hex, bool debug_offsets = false);
    // The TraceEnd record of a clean exit: seals every thread's open block first, as the preload's
    // destructor does. Events may follow (frees from later destructors).
    void end(uint64_t ts);
    // A Capped record (GPULEAK_MAX_BYTES or the file size limit reached after `bytes_written`).
    void capped(uint64_t ts, uint64_t bytes_written);

    // A recording thread, announced with its Thread record. `index` 0: the next free index (from
    // 1); give one to build traces with gaps or extreme indexes.
    ThreadRef thread(uint64_t tid, std::string_view name = "", uint32_t index = 0);
    // A new thread in the slot of one that exited, announced in the slot's stream, as the recorder
    // hands out slots: the slot's stack ids and time go on.
    void reuse(ThreadRef slot, uint64_t tid, std::string_view name = "");

    // The id of a native stack, `ips` innermost first (return addresses, as unw_backtrace gives
    // them); its new trie nodes are written first. {} is 0, "no stack".
    uint64_t stack(ThreadRef t, const std::vector<uint64_t>& ips);
    // A Python code object: its process-wide id (1, 2, ...), described once in thread `t`'s stream.
    uint64_t py_code(ThreadRef t, std::string_view filename, std::string_view qualname,
                     int firstlineno, const std::vector<uint8_t>& line_table = {});
    // The id of a Python stack, innermost frame first.
    uint64_t py_stack(ThreadRef t, const std::vector<PyFrameDesc>& frames);

    // Events, at `ts` ns since the trace started.
    void alloc(ThreadRef t, uint64_t ts, uint64_t address, uint64_t size, uint64_t stack = 0,
               const AllocExtra& extra = {});
    void free(ThreadRef t, uint64_t ts, uint64_t address, const FreeExtra& extra = {});
    void alloc_failed(ThreadRef t, uint64_t ts, uint64_t size, uint64_t stack = 0,
                      const FailedExtra& extra = {});
    // VMM: a physical allocation (cuMemCreate; its address is the handle), then references to it
    // and mappings of it.
    void vmm_create(ThreadRef t, uint64_t ts, uint64_t handle, uint64_t size, uint64_t stack = 0,
                    int64_t device = 0);
    void vmm_retain(ThreadRef t, uint64_t ts, uint64_t handle, uint64_t address);
    void vmm_release(ThreadRef t, uint64_t ts, uint64_t handle);
    void vmm_map(ThreadRef t, uint64_t ts, uint64_t address, uint64_t size, uint64_t offset,
                 uint64_t handle);
    void vmm_unmap(ThreadRef t, uint64_t ts, uint64_t address, uint64_t size);
    void marker(ThreadRef t, uint64_t ts, std::string_view name = "gpuleak_mark_iteration");

    // Raw trie nodes with ids of your choosing (undefined parents, sparse ids, ...).
    void stack_node(ThreadRef t, uint64_t id, uint64_t parent, uint64_t ip);
    void py_stack_node(ThreadRef t, uint64_t id, uint64_t parent, uint64_t code_id,
                       int32_t byte_offset, bool is_entry);

    // Block boundaries: seal the thread's open block now; leave `n` sequence numbers unused (blocks
    // that were never written).
    void end_block(ThreadRef t);
    void skip_blocks(ThreadRef t, uint64_t n);

    // Seals every open block (thread index order). The builder stays usable.
    void finish();
    // The trace so far (finish() first); only for a builder that owns its sink.
    const std::vector<uint8_t>& bytes();
    void write(const std::string& path);                       // replaces a file there
    uint64_t bytes_written() const { return writer_.bytes(); } // sealed blocks and the header

private:
    struct Stream;
    Stream& stream(ThreadRef t);
    // Room for `need` bytes in the thread's open block (sealing a full one); an encoder there.
    Encoder open(Stream& s, size_t need);
    void close(Stream& s, const Encoder& e);
    uint64_t delta(Stream& s, uint64_t ts);
    void seal(Stream& s);
    void global_block(uint64_t ts, size_t need, const std::function<void(Encoder&)>& fill,
                      BlockRole role = BlockRole::Events,
                      std::optional<uint64_t> sequence = std::nullopt);
    void check(const WriteStatus& status);

    std::unique_ptr<MemorySink> own_sink_;
    Sink& sink_;
    BuilderOptions options_;
    TraceWriter writer_;
    std::map<uint32_t, std::unique_ptr<Stream>> streams_;
    uint32_t next_index_ = 1;
    uint64_t global_sequence_ = 0;
    uint64_t next_code_id_ = 1;
};

} // namespace gpuleak::format
