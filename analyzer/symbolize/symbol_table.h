#pragma once

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gpuleak::analyzer {

// The function symbols of one module, sorted for binary search. libdwfl's own lookup
// (dwfl_module_addrinfo) scans the whole table for every address: about 1 ms per lookup with 60k
// symbols, and CUDA-era libraries such as libtorch_cuda.so carry hundreds of thousands.
class SymbolTable {
public:
    // Reads .symtab (from separate debug info when the file is stripped) or else .dynsym.
    explicit SymbolTable(Dwfl_Module* module);

    // Demangled name of the function holding a p_vaddr-relative address; "" if none does.
    const std::string& function_at(uint64_t addr);

private:
    struct Symbol {
        uint64_t begin;
        uint64_t end;         // == begin for symbols without a size (often hand-written assembly)
        uint64_t reach;       // highest `end` of this symbol and all sorted before it
        uint64_t section_end; // how far a sizeless symbol may be taken to extend
        const char* name;     // owned by the ELF data libdwfl keeps mapped
        int rank;             // which alias to show when several share an address
        std::string demangled;
    };
    std::vector<Symbol> symbols_;
};

} // namespace gpuleak::analyzer
