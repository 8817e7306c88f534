#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace gpuleak::analyzer {

// One module mapping as the tracer saw it at run time. The file is opened only later, offline, so
// everything needed to place and validate it must be recorded here.
struct ModuleInfo {
    // As dl_iterate_phdr reported it. The tracer resolves the main executable's path itself, so an
    // empty path means "unknown" and the module is ignored.
    std::string path;
    uint64_t base = 0;             // load bias (dlpi_addr)
    std::vector<uint8_t> build_id; // GNU build-id at run time; empty when there was none
    // PT_LOAD (p_vaddr, p_memsz), relative to base. When empty they are read from the file.
    std::vector<std::pair<uint64_t, uint64_t>> segments;
};

struct SourceFrame {
    std::string function; // demangled; "" if unknown
    std::string file;     // "" if unknown
    int line = 0;         // 0 if unknown
    int column = 0;       // of the call on its line; 0 if unknown
    std::string module;   // "" if the address is in no known module
    bool inlined = false; // inlined into the next (outer) frame
    // Where a frame calling an inlined body (the frame before it) stands: the body's entry
    // address, the same for every address inside that body, so that its calls are one place;
    // 0 for the innermost frame, which stands at the address itself.
    uint64_t inlined_entry = 0;
};

// Turns recorded addresses into source frames with elfutils, reading the binaries from disk.
// Not thread-safe: libdwfl sessions and the caches are shared by every call.
class Symbolizer {
public:
    Symbolizer();
    ~Symbolizer();
    Symbolizer(const Symbolizer&) = delete;
    Symbolizer& operator=(const Symbolizer&) = delete;

    // Re-recording a module is cheap. Where ranges overlap the latest registration wins, because a
    // library loaded after a dlclose may reuse its predecessor's addresses.
    void add_module(const ModuleInfo& m);

    // Frames for one address, innermost first: inlined frames, then their containing function.
    // unw_backtrace yields return addresses, which point past the call, so ip-1 is looked up unless
    // `is_return_address` is false. Never empty. The reference stays valid for the Symbolizer's
    // lifetime; its contents change only if a later add_module moves the address to another module.
    const std::vector<SourceFrame>& resolve(uint64_t ip, bool is_return_address = true);

    // The functions that the function holding `ip` (a return address) ends in with a tail call,
    // and those these end in along a chain: its frame is gone from their stacks
    // (symbolize/call_sites.h). Named as frames are; empty
    // where DWARF does not say (no call sites before -O1, no debug info, no module).
    const std::vector<std::string>& tail_callees(uint64_t ip);
    // The function that the call returning to `return_address` calls, named as frames are, when
    // the call names it: "" for a call through a pointer, or where DWARF does not say.
    const std::string& direct_callee(uint64_t return_address);

    // The module path an address falls in, "" if none. Opens no file, so it is cheap enough for
    // trimming the tracer's own frames.
    const std::string& module_of(uint64_t ip);

    // Problems worth telling the user once each (missing files, build-id mismatches, no debug
    // info). Files are opened lazily, so a module's warnings appear once an address in it resolves.
    const std::vector<std::string>& warnings() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace gpuleak::analyzer
