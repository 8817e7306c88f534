#include "symbol_table.h"

#include "demangle.h"

#include <algorithm>
#include <gelf.h>

namespace gpuleak::analyzer {

namespace {

bool names_code(const char* name, const GElf_Sym& sym, GElf_Word shndx) {
    if (name == nullptr || name[0] == '\0') return false; // also: sym was not filled in
    const int type = GELF_ST_TYPE(sym.st_info);
    if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE) return false;
    if (shndx == SHN_UNDEF || shndx == SHN_ABS) return false;
    // ARM mapping symbols ($x, $d) and assembler-local labels mark places, not functions.
    return name[0] != '$' && !(name[0] == '.' && name[1] == 'L');
}

// For aliases of one address: a global name is the one callers wrote, a local one may be a
// compiler-internal alias (__GI_*), and a typed symbol beats an untyped label.
int rank_of(const GElf_Sym& sym) {
    int rank = 0;
    switch (GELF_ST_BIND(sym.st_info)) {
    case STB_GLOBAL:
        rank = 4;
        break;
    case STB_WEAK:
        rank = 2;
        break;
    default:
        break;
    }
    if (GELF_ST_TYPE(sym.st_info) != STT_NOTYPE) rank += 1;
    return rank;
}

// `adjust` maps the ELF's addresses to the module's, as libdwfl did for the symbol itself.
uint64_t section_end(Elf* elf, GElf_Word shndx, uint64_t adjust) {
    GElf_Shdr shdr;
    Elf_Scn* scn = elf != nullptr ? elf_getscn(elf, shndx) : nullptr;
    if (scn == nullptr || gelf_getshdr(scn, &shdr) == nullptr) return 0;
    return shdr.sh_addr + shdr.sh_size + adjust;
}

} // namespace

SymbolTable::SymbolTable(Dwfl_Module* module) {
    const int count = dwfl_module_getsymtab(module);
    for (int i = 1; i < count; ++i) { // entry 0 is the null symbol
        GElf_Sym sym;
        GElf_Addr addr = 0;
        GElf_Word shndx = 0;
        Elf* elf = nullptr;
        const char* name = dwfl_module_getsym_info(module, i, &sym, &addr, &shndx, &elf, nullptr);
        if (!names_code(name, sym, shndx)) continue;
        const uint64_t limit = section_end(elf, shndx, addr - sym.st_value);
        symbols_.push_back(Symbol{addr, addr + sym.st_size, 0, limit, name, rank_of(sym), {}});
    }
    // Within one address the best alias goes last, because lookups scan backwards.
    std::sort(symbols_.begin(), symbols_.end(), [](const Symbol& a, const Symbol& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.rank < b.rank;
    });
    uint64_t reach = 0;
    for (Symbol& s : symbols_)
        s.reach = reach = std::max(reach, s.end);
}

const std::string& SymbolTable::function_at(uint64_t addr) {
    static const std::string kNone;
    auto it = std::upper_bound(symbols_.begin(), symbols_.end(), addr,
                               [](uint64_t a, const Symbol& s) { return a < s.begin; });
    if (it == symbols_.begin()) return kNone;
    Symbol* nearest = &*std::prev(it);
    Symbol* found = nullptr;
    // Sized symbols rarely overlap, so this usually stops at the first step; `reach` bounds it.
    for (auto back = it; back != symbols_.begin();) {
        --back;
        if (back->reach <= addr) break;
        if (addr < back->end) {
            found = &*back;
            break;
        }
    }
    // Without a sized symbol around addr, an immediately preceding sizeless one in the same
    // section (assembly that never declared its size) is the best guess.
    if (found == nullptr && nearest->end == nearest->begin && addr < nearest->section_end)
        found = nearest;
    if (found == nullptr) return kNone;
    if (found->demangled.empty()) found->demangled = demangle(found->name);
    return found->demangled;
}

} // namespace gpuleak::analyzer
