#include "symbolizer.h"

#include "binary_file.h"
#include "range_map.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace gpuleak::analyzer {

namespace {

// dl_iterate_phdr names real files by path; a bare name is a kernel-provided object such as
// linux-vdso.so.1, which has no file to read and nothing the user could fix.
bool names_a_file(const std::string& path) {
    return path.find('/') != std::string::npos;
}

} // namespace

struct Symbolizer::Impl {
    // One registration. The same file at another base, or recorded with another build-id, is
    // another Module; the BinaryFile behind them is shared.
    struct Module {
        std::string path;
        uint64_t base = 0;
        std::vector<uint8_t> build_id;
        BinaryFile* file = nullptr; // set on first use
    };
    using ModuleKey = std::tuple<std::string, uint64_t, std::vector<uint8_t>>;

    // A cached answer stays right as long as its address still maps to the same Module, which is
    // cheap to re-check when add_module has changed the map since.
    template <class Answer> struct Cached {
        const Module* module = nullptr;
        uint64_t map_version = 0;
        Answer answer;
    };

    // Modules are never destroyed before the Symbolizer: module_of hands out references to paths.
    std::map<ModuleKey, std::unique_ptr<Module>> modules;
    std::unordered_map<std::string, std::unique_ptr<BinaryFile>> files; // by path
    RangeMap<Module*> module_ranges;
    uint64_t map_version = 0;
    // By looked-up address.
    std::unordered_map<uint64_t, Cached<std::vector<SourceFrame>>> frames;
    std::unordered_map<uint64_t, Cached<std::vector<std::string>>> tail_callees;
    std::unordered_map<uint64_t, Cached<std::string>> direct_callees;
    std::vector<std::string> warnings;
    std::unordered_set<std::string> warned;

    // The answer cached for `addr`, made anew by `fill(answer, module)` (module null where the
    // address is in none) when it is not cached or the map has moved the address since.
    template <class Answer, class Fill>
    const Answer& cached(std::unordered_map<uint64_t, Cached<Answer>>& cache, uint64_t addr,
                         Fill fill) {
        auto [it, inserted] = cache.try_emplace(addr);
        Cached<Answer>& r = it->second;
        if (!inserted && r.map_version == map_version) return r.answer;
        Module* const* found = module_ranges.find(addr);
        Module* module = found != nullptr ? *found : nullptr;
        const bool still_valid = !inserted && r.module == module;
        r.map_version = map_version;
        if (still_valid) return r.answer;
        r.module = module;
        r.answer = Answer{};
        fill(r.answer, module);
        return r.answer;
    }

    void warn(std::string message) {
        if (warned.insert(message).second) warnings.push_back(std::move(message));
    }

    BinaryFile& binary(const std::string& path) {
        auto& slot = files[path];
        if (!slot) {
            slot = std::make_unique<BinaryFile>(path);
            if (!slot->readable() && names_a_file(path))
                warn("cannot read " + path + " (" + slot->error() +
                     "): its frames stay unresolved");
        }
        return *slot;
    }

    BinaryFile& use(Module& module) {
        if (module.file != nullptr) return *module.file;
        BinaryFile& file = binary(module.path);
        module.file = &file;
        if (!file.readable()) return file;
        if (!module.build_id.empty()) {
            const auto on_disk = file.build_id();
            if (!std::equal(on_disk.begin(), on_disk.end(), module.build_id.begin(),
                            module.build_id.end()))
                warn("build-id of " + module.path +
                     " differs from the traced one: function names and lines may be wrong");
        }
        if (!file.has_dwarf())
            warn("no debug info for " + module.path +
                 ": no file:line for it (build with -g or install its debug symbols)");
        return file;
    }

    void place(Module& module, const std::vector<std::pair<uint64_t, uint64_t>>& segments) {
        constexpr uint64_t kTop = std::numeric_limits<uint64_t>::max();
        for (const auto& [vaddr, memsz] : segments) {
            const uint64_t begin = module.base + vaddr;
            // Garbage sizes in a damaged trace must not wrap around and swallow low addresses.
            const uint64_t end = memsz > kTop - begin ? kTop : begin + memsz;
            module_ranges.assign(begin, end, &module);
        }
        ++map_version;
    }
};

Symbolizer::Symbolizer() : impl_(std::make_unique<Impl>()) {}
Symbolizer::~Symbolizer() = default;

void Symbolizer::add_module(const ModuleInfo& m) {
    if (m.path.empty()) {
        impl_->warn("a module was recorded without a path: addresses in it stay unresolved");
        return;
    }
    auto& slot = impl_->modules[Impl::ModuleKey{m.path, m.base, m.build_id}];
    if (!slot) slot = std::make_unique<Impl::Module>(Impl::Module{m.path, m.base, m.build_id});
    if (!m.segments.empty())
        impl_->place(*slot, m.segments);
    else
        impl_->place(*slot, impl_->binary(m.path).load_segments());
}

const std::vector<SourceFrame>& Symbolizer::resolve(uint64_t ip, bool is_return_address) {
    const uint64_t addr = is_return_address && ip != 0 ? ip - 1 : ip;
    return impl_->cached(impl_->frames, addr,
                         [&](std::vector<SourceFrame>& frames, Impl::Module* module) {
                             if (module == nullptr) {
                                 frames.emplace_back();
                                 return;
                             }
                             impl_->use(*module).symbolize(addr - module->base, frames);
                             for (SourceFrame& frame : frames) {
                                 frame.module = module->path;
                                 if (frame.inlined_entry) frame.inlined_entry += module->base;
                             }
                         });
}

const std::vector<std::string>& Symbolizer::tail_callees(uint64_t ip) {
    const uint64_t addr = ip != 0 ? ip - 1 : ip;
    return impl_->cached(impl_->tail_callees, addr,
                         [&](std::vector<std::string>& names, Impl::Module* module) {
                             if (module == nullptr) return;
                             BinaryFile& file = impl_->use(*module);
                             if (file.readable()) names = file.tail_callees(addr - module->base);
                         });
}

const std::string& Symbolizer::direct_callee(uint64_t return_address) {
    const uint64_t addr = return_address != 0 ? return_address - 1 : return_address;
    return impl_->cached(impl_->direct_callees, addr, [&](std::string& name, Impl::Module* module) {
        if (module == nullptr) return;
        BinaryFile& file = impl_->use(*module);
        if (file.readable()) name = file.direct_callee(addr - module->base);
    });
}

const std::string& Symbolizer::module_of(uint64_t ip) {
    static const std::string kNone;
    Impl::Module* const* found = impl_->module_ranges.find(ip);
    return found != nullptr ? (*found)->path : kNone;
}

const std::vector<std::string>& Symbolizer::warnings() const {
    return impl_->warnings;
}

} // namespace gpuleak::analyzer
