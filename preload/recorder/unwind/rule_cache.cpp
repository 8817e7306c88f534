#include "recorder/unwind/rule_cache.h"

#include <elf.h>
#include <link.h>

#include "recorder/unwind/eh_frame.h"

namespace gpuleak::unwind {

std::atomic<unsigned> RuleCache::g_generation{0};

namespace {

struct Lookup {
    uint64_t pc;
    FrameRule rule = FrameRule::of(FrameRule::Cfa::Unsupported);
};

// The PT_LOAD segment of `info` that holds `address`, if any.
bool segment_holding(const dl_phdr_info* info, uint64_t address, Span& out) {
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_LOAD) continue;
        uint64_t begin = info->dlpi_addr + ph.p_vaddr;
        if (address >= begin && address - begin < ph.p_memsz) {
            out = Span{begin, begin + ph.p_memsz};
            return true;
        }
    }
    return false;
}

int visit(dl_phdr_info* info, size_t, void* data) {
    auto* lookup = static_cast<Lookup*>(data);
    Span code;
    if (!segment_holding(info, lookup->pc, code)) return 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_GNU_EH_FRAME) continue;
        uint64_t hdr = info->dlpi_addr + ph.p_vaddr;
        Span tables;
        if (segment_holding(info, hdr, tables))
            lookup->rule = rule_from_eh_frame_hdr(hdr, tables, lookup->pc);
        break;
    }
    return 1;
}

} // namespace

FrameRule rule_for_return_address(uint64_t return_address) {
    Lookup lookup{return_address - 1};
    dl_iterate_phdr(visit, &lookup);
    return lookup.rule;
}

void invalidate_rule_caches() {
    RuleCache::g_generation.fetch_add(1, std::memory_order_relaxed);
}

FrameRule RuleCache::fill(Slot& s, uint64_t return_address) {
    s.rule = rule_for_return_address(return_address);
    s.return_address = return_address;
    return s.rule;
}

void RuleCache::clear(unsigned generation) {
    for (Slot& s : slots_)
        s = Slot{};
    generation_ = generation;
}

} // namespace gpuleak::unwind
