#include "model/site_table.h"

#include <algorithm>
#include <cstring>

#include "model/caching_allocator.h"
#include "model/source_files.h"
#include "python/line_table.h"
#include "python/merge.h"
#include "symbolize/demangle.h"

namespace gpuleak::analyzer {
namespace {

bool basename_starts_with(const std::string& path, const char* prefix) {
    size_t slash = path.rfind('/');
    return path.compare(slash == std::string::npos ? 0 : slash + 1, std::strlen(prefix), prefix) ==
           0;
}

// How far out from the innermost frame a statically linked runtime's API entry is looked for: its
// internal call chains are a few frames deep.
constexpr int kRuntimeDepth = 32;

} // namespace

SiteTable::SiteTable(const LoadedTrace& trace, Symbolizer& symbolizer, StackMode mode)
    : trace_(trace), symbolizer_(symbolizer), mode_(mode) {}

bool SiteTable::in_tracer_module(uint64_t ip) {
    const std::string& module = symbolizer_.module_of(ip);
    return basename_starts_with(module, "libgpuleak") ||
           basename_starts_with(module, "libcuda.so") ||
           basename_starts_with(module, "libcudart") || basename_starts_with(module, "libunwind");
}

const std::string& SiteTable::outer_function(uint64_t ip) {
    return symbolizer_.resolve(ip).back().function;
}

// The tracer, the driver and a shared runtime are recognised by their modules. A runtime linked
// statically lives in the program's binary: its internal functions are recognised by name where
// they have a known one (libcudart_static_<hash>), and in any case everything from the innermost
// frame out to the outermost runtime API entry (cudaMalloc, ...) of that binary is the runtime's.
uint32_t SiteTable::trimmed_native(uint32_t node) {
    auto it = trimmed_.find(node);
    if (it != trimmed_.end()) return it->second;
    uint32_t n = node;
    while (n && in_tracer_module(trace_.native_nodes[n].ip))
        n = trace_.native_nodes[n].parent;
    uint32_t after_api = 0;
    const std::string& module = n ? symbolizer_.module_of(trace_.native_nodes[n].ip) : "";
    uint32_t m = n;
    for (int depth = 0; m && depth < kRuntimeDepth; ++depth, m = trace_.native_nodes[m].parent) {
        uint64_t ip = trace_.native_nodes[m].ip;
        if (symbolizer_.module_of(ip) != module) break;
        if (is_cuda_runtime_api(outer_function(ip))) after_api = trace_.native_nodes[m].parent;
    }
    if (after_api) n = after_api;
    while (n && is_cuda_runtime_function(outer_function(trace_.native_nodes[n].ip)))
        n = trace_.native_nodes[n].parent;
    trimmed_[node] = n;
    return n;
}

std::vector<Frame> SiteTable::native_frames(uint32_t node) {
    std::vector<Frame> out;
    for (uint32_t n = node; n; n = trace_.native_nodes[n].parent) {
        uint64_t ip = trace_.native_nodes[n].ip;
        for (const SourceFrame& f : symbolizer_.resolve(ip))
            out.push_back({f.function, f.file, f.line, f.column, f.module, false, f.inlined, ip,
                           f.inlined_entry ? f.inlined_entry : ip});
    }
    return out;
}

std::vector<Frame> SiteTable::python_frames(uint32_t py_node, std::vector<bool>* entries) {
    std::vector<Frame> out;
    for (uint32_t n = py_node; n; n = trace_.py_nodes[n].parent) {
        const PyNode& p = trace_.py_nodes[n];
        Frame f;
        f.python = true;
        f.pc = static_cast<uint32_t>(p.byte_offset);
        auto code = trace_.py_code.find(p.code_id);
        if (code != trace_.py_code.end()) {
            f.function = code->second.qualname;
            f.file = code->second.filename;
            f.line = pydecode::line_for_offset(trace_.py_version_hex, code->second.linetable,
                                               code->second.firstlineno, p.byte_offset);
            // One call is one place, however far its instructions had run (line_table.h).
            const pydecode::Location at =
                pydecode::locate(trace_.py_version_hex, code->second.linetable,
                                 code->second.firstlineno, p.byte_offset);
            f.pc = static_cast<uint32_t>(at.start);
            if (at.has_position && at.position.line == f.line &&
                at.position.end_column < (1 << 30)) {
                f.column = static_cast<int>(at.position.column) + 1;
                f.end_line = static_cast<int>(at.position.end_line);
                f.end_column = static_cast<int>(at.position.end_column) + 1;
            }
        } else {
            f.function = "<unknown code object>";
        }
        f.position = f.pc;
        out.push_back(std::move(f));
        if (entries) entries->push_back(p.is_entry);
    }
    return out;
}

void SiteTable::finish_site(Site& site) {
    for (Frame& f : site.frames)
        f.origin = classify_frame(f);
    if (caching_ < 0) caching_ = pytorch_caches(trace_.process) ? 1 : 0;
    site.cached = cached_block(site.frames, caching_);
    auto first = [&](auto&& want) {
        for (size_t i = 0; i < site.frames.size(); ++i)
            if (want(site.frames[i])) return static_cast<int>(i);
        return -1;
    };
    struct Rule {
        int index;
        const char* reason;
    };
    for (Rule rule : {Rule{first([](const Frame& f) { return f.origin == FrameOrigin::User; }),
                           "first frame in the program's own code"},
                      Rule{first([](const Frame& f) { return f.python; }),
                           "no frame in the program's own code: innermost Python frame"},
                      Rule{first([](const Frame& f) {
                               return !f.function.empty() && f.origin != FrameOrigin::Runtime;
                           }),
                           "no frame in the program's own code: innermost named frame"},
                      Rule{site.frames.empty() ? -1 : 0, "no named frame: innermost frame"}}) {
        if (rule.index < 0) continue;
        site.headline_index = rule.index;
        site.headline_reason = rule.reason;
        break;
    }
    bool any_user = false, any_python = false;
    for (const Frame& f : site.frames) {
        any_user = any_user || f.origin == FrameOrigin::User;
        any_python = any_python || f.python;
    }
    site.library_thread = site.no_python_state && !any_user;
    // A library's Python frame inside a loop of its own source that calls the program's code,
    // where no frame of the program further out is in a loop: a framework's fit loop calling the
    // program's training_step. Its loop is the only one the program's code runs in, and counts as
    // the program's own.
    std::vector<bool> runs_the_program(site.frames.size(), false);
    if (any_user) {
        const size_t innermost_user = static_cast<size_t>(
            std::find_if(site.frames.begin(), site.frames.end(),
                         [](const Frame& f) { return f.origin == FrameOrigin::User; }) -
            site.frames.begin());
        bool loop_outside = false;
        for (size_t i = site.frames.size(); i-- > 0 && !loop_outside;) {
            const Frame& f = site.frames[i];
            if (!f.python || f.line <= 0) continue;
            const LoopContext context = source_files().enclosing_loop(f.file, f.line, true).context;
            if (f.origin == FrameOrigin::User) {
                loop_outside = context != LoopContext::NotInLoop;
            } else if (f.origin == FrameOrigin::Library && i > innermost_user &&
                       context == LoopContext::InLoop) {
                runs_the_program[i] = true;
            }
        }
    }
    // The frames that count as the program's own for loop detection (Site::path).
    auto own = [&](size_t i) {
        const Frame& f = site.frames[i];
        if (any_user) return f.origin == FrameOrigin::User || runs_the_program[i];
        if (any_python) return f.python;
        return !f.function.empty() && f.origin != FrameOrigin::Runtime;
    };
    uint32_t parent = 0;
    for (size_t i = site.frames.size(); i-- > 0;) {
        const Frame& f = site.frames[i];
        parent =
            calls_.node(parent, f.function, f.file, f.line, f.position, f.python, own(i), f.pc);
        site.path.push_back(parent);
    }
}

bool SiteTable::tail_calls(const CallNode& call, const CallNode& caller, const CallNode& callee) {
    if (call.python || caller.python || callee.python) return false;
    // The symbol table names a clone for itself ("f.constprop.0"): the stack may show a clone of
    // the function a call site names, or the other way round.
    const std::string_view caller_name = without_clone_suffix(caller.function_name);
    const std::string_view callee_name = without_clone_suffix(callee.function_name);
    for (const std::string& name : symbolizer_.tail_callees(caller.return_address))
        if (without_clone_suffix(name) == callee_name) return true;
    const std::string_view called = without_clone_suffix(symbolizer_.direct_callee(call.pc));
    return !called.empty() && called == caller_name && callee_name != caller_name;
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
    finish_site(site);
    std::string key;
    for (const Frame& f : site.frames) {
        if (f.origin == FrameOrigin::Interpreter) continue;
        key += f.function;
        key += '\0';
        key += f.file;
        key += '\0';
        // Where DWARF gives the call's column, copies of one call that the optimizer made (a
        // loop's peeled or unrolled iterations) are one site; else each address is its own. A
        // Python frame's offset is already its position's (one call, one place).
        key += std::to_string(f.line) + ':' +
               (!f.python && f.column > 0 ? 'c' + std::to_string(f.column) : std::to_string(f.pc)) +
               (f.python ? "p" : "n");
        key += '\0';
    }
    key += site.no_python_state ? '1' : '0';
    auto [same, fresh_frames] = by_frames_.try_emplace(std::move(key), it->second);
    if (!fresh_frames) return it->second = same->second;
    sites_.push_back(std::move(site));
    return it->second;
}

} // namespace gpuleak::analyzer
