#include "model/site_table.h"

#include <cctype>
#include <cstring>

#include "python/line_table.h"
#include "python/merge.h"

namespace gpuleak::analyzer {
namespace {

bool basename_starts_with(const std::string& path, const char* prefix) {
    size_t slash = path.rfind('/');
    return path.compare(slash == std::string::npos ? 0 : slash + 1, std::strlen(prefix), prefix) ==
           0;
}

bool starts_with(const std::string& s, const char* prefix) {
    return s.rfind(prefix, 0) == 0;
}

// Frames of a statically linked CUDA runtime live in the application's own binary.
bool is_runtime_function(const std::string& f) {
    if (starts_with(f, "cudart::") || starts_with(f, "__cudart") || starts_with(f, "fakecudart::"))
        return true;
    return f.size() > 4 && starts_with(f, "cuda") && std::isupper(static_cast<unsigned char>(f[4]));
}

} // namespace

// Library code (the standard library, anything installed into site-packages such as torch) is not
// where a user can fix a leak: the headline is the innermost Python frame of their own code.
bool is_library_file(const std::string& file) {
    return file.find("/site-packages/") != std::string::npos ||
           file.find("/dist-packages/") != std::string::npos ||
           (file.find("/lib/python3") != std::string::npos &&
            file.find("/site-packages/") == std::string::npos) ||
           (!file.empty() && file[0] == '<' && file != "<stdin>" && file != "<string>");
}

const Frame* Site::headline() const {
    for (const Frame& f : frames)
        if (f.python && !is_library_file(f.file)) return &f;
    for (const Frame& f : frames)
        if (f.python) return &f;
    for (const Frame& f : frames)
        if (!f.function.empty()) return &f;
    return frames.empty() ? nullptr : &frames.front();
}

SiteTable::SiteTable(const LoadedTrace& trace, Symbolizer& symbolizer, StackMode mode)
    : trace_(trace), symbolizer_(symbolizer), mode_(mode) {}

bool SiteTable::is_tracer_frame(uint64_t ip) {
    const std::string& module = symbolizer_.module_of(ip);
    if (basename_starts_with(module, "libgpuleak") || basename_starts_with(module, "libcuda.so") ||
        basename_starts_with(module, "libcudart") || basename_starts_with(module, "libunwind"))
        return true;
    const auto& frames = symbolizer_.resolve(ip);
    return is_runtime_function(frames.back().function);
}

uint32_t SiteTable::trimmed_native(uint32_t node) {
    auto it = trimmed_.find(node);
    if (it != trimmed_.end()) return it->second;
    uint32_t n = node;
    while (n && is_tracer_frame(trace_.native_nodes[n].ip))
        n = trace_.native_nodes[n].parent;
    trimmed_[node] = n;
    return n;
}

std::vector<Frame> SiteTable::native_frames(uint32_t node) {
    std::vector<Frame> out;
    for (uint32_t n = node; n; n = trace_.native_nodes[n].parent) {
        for (const SourceFrame& f : symbolizer_.resolve(trace_.native_nodes[n].ip))
            out.push_back({f.function, f.file, f.line, f.module, false, f.inlined});
    }
    return out;
}

std::vector<Frame> SiteTable::python_frames(uint32_t py_node, std::vector<bool>* entries) {
    std::vector<Frame> out;
    for (uint32_t n = py_node; n; n = trace_.py_nodes[n].parent) {
        const PyNode& p = trace_.py_nodes[n];
        Frame f;
        f.python = true;
        auto code = trace_.py_code.find(p.code_id);
        if (code != trace_.py_code.end()) {
            f.function = code->second.qualname;
            f.file = code->second.filename;
            f.line = pydecode::line_for_offset(trace_.py_version_hex, code->second.linetable,
                                               code->second.firstlineno, p.byte_offset);
        } else {
            f.function = "<unknown code object>";
        }
        out.push_back(std::move(f));
        if (entries) entries->push_back(p.is_entry);
    }
    return out;
}

uint32_t SiteTable::site_for(uint32_t native_node, uint32_t py_node) {
    uint32_t native = mode_ == StackMode::Python && py_node ? 0 : trimmed_native(native_node);
    uint32_t py = mode_ == StackMode::Native ? 0 : py_node;
    auto [it, fresh] = by_key_.try_emplace({native, py}, static_cast<uint32_t>(sites_.size()));
    if (!fresh) return it->second;
    Site site;
    site.id = it->second;
    std::vector<Frame> natives = native ? native_frames(native) : std::vector<Frame>{};
    if (!py) {
        site.frames = std::move(natives);
        site.no_python_state = trace_.py_version_hex != 0 && mode_ != StackMode::Native;
    } else {
        std::vector<bool> entries;
        std::vector<Frame> pys = python_frames(py, &entries);
        std::vector<pydecode::NativeFrameName> names;
        for (size_t i = 0; i < natives.size(); ++i)
            names.push_back({natives[i].function, i});
        std::vector<pydecode::PyFrameView> views;
        for (size_t i = 0; i < pys.size(); ++i)
            views.push_back({0, 0, entries[i]});
        for (const auto& m : pydecode::merge(names, views))
            site.frames.push_back(m.kind == pydecode::MergedFrame::Kind::Python
                                      ? pys[m.position]
                                      : natives[m.position]);
    }
    sites_.push_back(std::move(site));
    return it->second;
}

} // namespace gpuleak::analyzer
