#pragma once

#include "die_names.h"
#include "scope_chain.h"
#include "symbol_table.h"
#include "symbolizer.h"

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace gpuleak::analyzer {

// One ELF file on disk, opened with libdwfl. It is reported at load bias 0 so that addresses are
// the file's own p_vaddr numbers: every registration of the file, whatever its run-time base,
// then shares this one session and its caches.
class BinaryFile {
public:
    explicit BinaryFile(const std::string& path);
    ~BinaryFile();
    BinaryFile(const BinaryFile&) = delete;
    BinaryFile& operator=(const BinaryFile&) = delete;

    bool readable() const { return module_ != nullptr; }
    const std::string& error() const { return error_; } // why it is not readable

    std::span<const uint8_t> build_id() const;
    // Looks for separate debug info too (.gnu_debuglink, /usr/lib/debug/.build-id), so the first
    // call may read other files.
    bool has_dwarf();
    // PT_LOAD (p_vaddr, p_memsz), for registrations recorded without segments.
    std::vector<std::pair<uint64_t, uint64_t>> load_segments() const;

    // Appends frames for a p_vaddr-relative address, innermost first. Only function, file, line
    // and inlined are filled in; at least one frame is always appended.
    void symbolize(uint64_t vaddr, std::vector<SourceFrame>& out);
    // The names (as symbolize gives them) of the functions that the function holding `vaddr` ends
    // in with a tail call, and of those these end in, along a chain (symbolize/call_sites.h).
    std::vector<std::string> tail_callees(uint64_t vaddr);
    // The name of the function that the call returning to `vaddr` + 1 calls, if it calls it
    // directly (symbolize/call_sites.h); "" otherwise.
    std::string direct_callee(uint64_t vaddr);

private:
    // The function and the inlined bodies holding `vaddr`, outermost first (scope_chain.h);
    // `bias`: DWARF's addresses are the module's minus it.
    std::vector<Dwarf_Die> scopes_at(uint64_t vaddr, Dwarf_Addr& bias);
    // The symbol table, built on first use.
    SymbolTable& symbols();
    // A function's name as its frames have it: its symbol's where it has code of its own.
    std::string frame_name(Dwarf_Die function, Dwarf_Addr bias);

    Dwfl* dwfl_ = nullptr;
    Dwfl_Module* module_ = nullptr;
    std::string error_;
    int has_dwarf_ = -1;                   // unknown until asked
    std::unique_ptr<SymbolTable> symbols_; // built on first use
    ScopeChain scopes_;
    DieNames names_;
};

} // namespace gpuleak::analyzer
