#include "binary_file.h"

#include "call_sites.h"

#include <algorithm>

#include <gelf.h>

namespace gpuleak::analyzer {

namespace {

// libdwfl keeps pointers to both, so they must outlive every session. A null search path selects
// elfutils' default, which includes /usr/lib/debug and its .build-id tree.
char* g_debuginfo_path = nullptr;
const Dwfl_Callbacks kOfflineCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &g_debuginfo_path,
};

} // namespace

BinaryFile::BinaryFile(const std::string& path) : dwfl_(dwfl_begin(&kOfflineCallbacks)) {
    if (dwfl_ == nullptr) {
        error_ = dwfl_errmsg(-1);
        return;
    }
    dwfl_report_begin(dwfl_);
    // With add_p_vaddr the base is a bias added to p_vaddr; 0 keeps addresses file-relative.
    // (ET_EXEC files ignore the base and are file-relative anyway.)
    module_ = dwfl_report_elf(dwfl_, path.c_str(), path.c_str(), -1, 0, true);
    if (module_ == nullptr) error_ = dwfl_errmsg(-1);
    dwfl_report_end(dwfl_, nullptr, nullptr);
    if (module_ != nullptr) {
        // The build-id is only known once the ELF has been looked at.
        GElf_Addr bias = 0;
        dwfl_module_getelf(module_, &bias);
    }
}

BinaryFile::~BinaryFile() {
    if (dwfl_ != nullptr) dwfl_end(dwfl_);
}

std::span<const uint8_t> BinaryFile::build_id() const {
    if (module_ == nullptr) return {};
    const unsigned char* bits = nullptr;
    GElf_Addr vaddr = 0;
    const int n = dwfl_module_build_id(module_, &bits, &vaddr);
    if (n <= 0) return {};
    return {bits, static_cast<size_t>(n)};
}

bool BinaryFile::has_dwarf() {
    if (has_dwarf_ < 0) {
        Dwarf_Addr bias = 0;
        has_dwarf_ = module_ != nullptr && dwfl_module_getdwarf(module_, &bias) != nullptr;
    }
    return has_dwarf_ != 0;
}

std::vector<std::pair<uint64_t, uint64_t>> BinaryFile::load_segments() const {
    std::vector<std::pair<uint64_t, uint64_t>> segments;
    if (module_ == nullptr) return segments;
    GElf_Addr bias = 0;
    Elf* elf = dwfl_module_getelf(module_, &bias);
    size_t count = 0;
    if (elf == nullptr || elf_getphdrnum(elf, &count) != 0) return segments;
    for (size_t i = 0; i < count; ++i) {
        GElf_Phdr phdr;
        if (gelf_getphdr(elf, static_cast<int>(i), &phdr) != nullptr && phdr.p_type == PT_LOAD)
            segments.emplace_back(phdr.p_vaddr, phdr.p_memsz);
    }
    return segments;
}

namespace {

// An inlined body's entry address in the module (DWARF's address plus `bias`): its entry_pc or
// low_pc, else the start of its first range (GCC gives split bodies ranges); 0 if none.
uint64_t inlined_entry(Dwarf_Die& inlined, Dwarf_Addr bias) {
    Dwarf_Addr at = 0;
    if (dwarf_entrypc(&inlined, &at) == 0) return at + bias;
    Dwarf_Addr base = 0, end = 0;
    if (dwarf_ranges(&inlined, 0, &base, &at, &end) > 0) return at + bias;
    return 0;
}

} // namespace

void BinaryFile::symbolize(uint64_t vaddr, std::vector<SourceFrame>& out) {
    SourceFrame outer;
    if (module_ == nullptr) {
        out.push_back(std::move(outer));
        return;
    }
    const Dwarf_Addr addr = vaddr;

    const std::string& symbol = symbols().function_at(addr);

    // The line table describes the innermost inlined body at addr; each inlined frame's call site
    // then gives the location one level further out.
    std::string file;
    int line = 0, column = 0;
    if (Dwfl_Line* row = dwfl_module_getsrc(module_, addr)) {
        if (const char* name = dwfl_lineinfo(row, nullptr, &line, &column, nullptr, nullptr))
            file = name;
    }

    Dwarf_Addr bias = 0;
    std::vector<Dwarf_Die> chain = scopes_at(addr, bias);
    uint64_t entry = 0;
    for (size_t i = chain.size(); i-- > 1;) {
        out.push_back(
            SourceFrame{names_.function_name(chain[i]), file, line, column, {}, true, entry});
        call_site(chain[i], file, line, column);
        entry = inlined_entry(chain[i], bias);
    }
    outer.inlined_entry = entry;

    // The symbol table names clones (".cold", ".constprop") precisely; DWARF is the fallback.
    if (!symbol.empty())
        outer.function = symbol;
    else if (!chain.empty())
        outer.function = names_.function_name(chain[0]);
    outer.file = std::move(file);
    outer.line = line;
    outer.column = column;
    out.push_back(std::move(outer));
}

SymbolTable& BinaryFile::symbols() {
    if (!symbols_) symbols_ = std::make_unique<SymbolTable>(module_);
    return *symbols_;
}

std::vector<Dwarf_Die> BinaryFile::scopes_at(uint64_t vaddr, Dwarf_Addr& bias) {
    bias = 0;
    Dwarf_Die* cu = dwfl_module_addrdie(module_, vaddr, &bias);
    return cu != nullptr ? scopes_.find(*cu, vaddr - bias) : std::vector<Dwarf_Die>{};
}

std::vector<std::string> BinaryFile::tail_callees(uint64_t vaddr) {
    std::vector<std::string> names;
    if (module_ == nullptr) return names;
    Dwarf_Addr bias = 0;
    std::vector<Dwarf_Die> chain = scopes_at(vaddr, bias);
    if (chain.empty()) return names;
    // And theirs: a chain of tail calls leaves none of its functions on the stack but the last,
    // even those that allocate nothing. A callee's call sites are read where its DIE is its
    // definition (its own code, in this file); the bound keeps a long or cyclic chain cheap.
    std::vector<Dwarf_Die> pending = tail_call_targets(chain[0]);
    std::vector<void*> seen;
    for (size_t i = 0; i < pending.size() && i < 64; ++i) {
        Dwarf_Die callee = pending[i];
        if (std::find(seen.begin(), seen.end(), callee.addr) != seen.end()) continue;
        seen.push_back(callee.addr);
        std::string name = frame_name(callee, bias);
        if (name.empty() || std::find(names.begin(), names.end(), name) != names.end()) continue;
        names.push_back(std::move(name));
        for (Dwarf_Die& next : tail_call_targets(callee))
            pending.push_back(next);
    }
    return names;
}

std::string BinaryFile::direct_callee(uint64_t vaddr) {
    if (module_ == nullptr) return {};
    Dwarf_Addr bias = 0;
    std::vector<Dwarf_Die> chain = scopes_at(vaddr, bias);
    Dwarf_Die callee;
    if (chain.empty() || !analyzer::direct_callee(chain[0], vaddr + 1 - bias, callee)) return {};
    return frame_name(callee, bias);
}

std::string BinaryFile::frame_name(Dwarf_Die function, Dwarf_Addr bias) {
    // DWARF names a function of internal linkage (static, or in an anonymous namespace) without
    // its parameters, where its symbol, and so its frames, have them.
    Dwarf_Addr entry = 0;
    if (dwarf_lowpc(&function, &entry) == 0) {
        const std::string& symbol = symbols().function_at(entry + bias);
        if (!symbol.empty()) return symbol;
    }
    return names_.function_name(function);
}

} // namespace gpuleak::analyzer
