// The calling thread's Python stack, read from inside an allocation hook without the GIL.
// src/layout.h lists what is read from where, per CPython version.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace gpuleak::python {

// Innermost first. byte_offset is the instruction offset in bytes (negative: not started yet);
// is_entry marks the outermost Python frame of one _PyEval_EvalFrameDefault call, so the analyzer
// can splice Python frames into the native stack.
struct PyFrame {
    uint64_t code_id;
    int32_t byte_offset;
    bool is_entry;
    uint8_t reserved[3]; // zero: two stacks compare equal byte for byte when their frames do
};

// What the trace stores once per code object. The views point into the live interpreter or into
// the caller's stack: copy them before the sink returns.
struct CodeInfo {
    uint64_t code_id;                    // never reused, starts at 1
    std::string_view filename, qualname; // UTF-8; "<?>" for strings this reader cannot decode
    int32_t firstlineno;
    std::span<const uint8_t> linetable; // raw co_lnotab (3.9) / co_linetable (3.10+) bytes
};

inline constexpr size_t kMaxFrames = 512;
inline constexpr size_t kMaxNameBytes = 1024;

// Called for each code object seen for the first time, or whose address now holds a different
// code object. Runs outside every lock of this library, on the capturing thread.
using CodeSink = void (*)(void* ctx, const CodeInfo&);

// One thread's memo of the code objects its stacks held and their ids: a frame found there (same
// fingerprint) needs neither the process-wide registry nor its lock. Zeroed memory is an empty
// cache; never share one between threads.
struct CodeCache {
    struct Slot {
        uint64_t key[6]; // the code object's fingerprint; key[0] (its address) 0: empty
        uint64_t id;
        // Up to 3.11 key[5] digests the qualname's hash and up to 128 bytes of the line table;
        // they are kept here as they are, so that a later capture compares them (a few
        // instructions) instead of digesting them again (about 200 per code object).
        uint64_t qualname_hash;
        int64_t table_size;
        uint8_t table[128];
    };
    static constexpr size_t kSlots = 64;
    uint64_t generation; // a fork empties every cache (the child's trace reports codes anew)
    Slot slots[kSlots];
};

// Fills `out` with the calling thread's Python frames and returns how many (at most kMaxFrames).
// 0: no Python on this thread, Python not initialized or finalizing, unsupported version, or a
// subinterpreter thread. Never takes the GIL and never calls into the interpreter beyond the
// lock-free PyGILState_GetThisThreadState / Py_IsInitialized / Py_IsFinalizing, so it is safe on
// any thread at any time; in a process without Python it is a cheap early-out. `cache` (the
// calling thread's, or nullptr) spares the registry lock for code objects seen before.
size_t capture(PyFrame* out, size_t max, CodeSink sink, void* ctx, CodeCache* cache = nullptr);

// Whether a supported interpreter was found: a caller's early-out before it sets up a capture.
// Where none was, it looks again after dlopen and every few thousand calls of a thread.
bool available();

struct Info {
    uint32_t version_hex;      // PY_VERSION_HEX of the running interpreter
    const char* layout_source; // "table", "debug_offsets", or "unsupported"
};
// nullptr until a Python interpreter was found in the process.
const Info* info();

// The preload interposes dlsym; detection must use the real one, which the preload passes here.
// Until it is set, capture() returns 0.
void set_real_dlsym(void* (*real_dlsym)(void*, const char*));
// Receives each distinct problem once (unsupported interpreter, subinterpreter, finalization...).
void set_warning_sink(void (*sink)(const char* message));
// Call after dlopen: a libpython loaded later is then found on the next capture.
void notify_modules_changed();
// Call in the child after fork: drops a lock another thread may have held and forgets which code
// objects were already reported, so a new trace gets its own CodeInfo records (ids stay unique).
void reset_after_fork();

} // namespace gpuleak::python
