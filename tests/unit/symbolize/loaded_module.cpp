#include "loaded_module.h"

#include <cstring>
#include <elf.h>
#include <link.h>

namespace gpuleak::analyzer::test {

namespace {

using Phdr = ElfW(Phdr);
using Nhdr = ElfW(Nhdr);

std::vector<uint8_t> build_id_of(const dl_phdr_info& info, const Phdr& note) {
    // Notes are padded to the segment's alignment: 4 by default, 8 for e.g. .note.gnu.property.
    const size_t align = note.p_align >= 8 ? 8 : 4;
    auto pad = [align](size_t n) { return (n + align - 1) & ~(align - 1); };
    const auto* p = reinterpret_cast<const uint8_t*>(info.dlpi_addr + note.p_vaddr);
    const uint8_t* end = p + note.p_memsz;
    while (p + sizeof(Nhdr) <= end) {
        Nhdr header;
        std::memcpy(&header, p, sizeof header);
        const uint8_t* name = p + sizeof header;
        const uint8_t* desc = name + pad(header.n_namesz);
        if (desc + header.n_descsz > end) break;
        if (header.n_type == NT_GNU_BUILD_ID && header.n_namesz == 4 &&
            std::memcmp(name, "GNU", 4) == 0)
            return {desc, desc + header.n_descsz};
        p = desc + pad(header.n_descsz);
    }
    return {};
}

struct Search {
    const std::string* path;
    std::optional<ModuleInfo> found;
};

int visit(dl_phdr_info* info, size_t, void* data) {
    auto* search = static_cast<Search*>(data);
    if (info->dlpi_name == nullptr || *search->path != info->dlpi_name) return 0;
    ModuleInfo module;
    module.path = info->dlpi_name;
    module.base = info->dlpi_addr;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
        const Phdr& phdr = info->dlpi_phdr[i];
        if (phdr.p_type == PT_LOAD) module.segments.emplace_back(phdr.p_vaddr, phdr.p_memsz);
        if (phdr.p_type == PT_NOTE && module.build_id.empty())
            module.build_id = build_id_of(*info, phdr);
    }
    search->found = std::move(module);
    return 1;
}

} // namespace

std::optional<ModuleInfo> loaded_module(const std::string& path) {
    Search search{&path, std::nullopt};
    dl_iterate_phdr(visit, &search);
    return search.found;
}

} // namespace gpuleak::analyzer::test
