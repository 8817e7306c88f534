#include "python/merge.h"

#include <algorithm>

namespace gpuleak::pydecode {

bool is_eval_frame(std::string_view function) {
    return function.find("_PyEval_EvalFrameDefault") != std::string_view::npos ||
           function.starts_with("_TAIL_CALL_");
}

std::vector<MergedFrame> merge(const std::vector<NativeFrameName>& native,
                               const std::vector<PyFrameView>& py, bool* aligned) {
    auto evals = std::count_if(native.begin(), native.end(),
                               [](const NativeFrameName& f) { return is_eval_frame(f.function); });
    auto groups =
        std::count_if(py.begin(), py.end(), [](const PyFrameView& f) { return f.is_entry; });
    // The outermost Python frame must close a group, or some frames belong to no eval call.
    bool fits = evals == groups && (py.empty() || py.back().is_entry);
    if (aligned) *aligned = fits;

    std::vector<MergedFrame> out;
    out.reserve(native.size() + py.size());
    if (!fits) {
        for (size_t i = 0; i < py.size(); ++i)
            out.push_back({MergedFrame::Kind::Python, i});
        for (size_t i = 0; i < native.size(); ++i)
            out.push_back({MergedFrame::Kind::Native, i});
        return out;
    }
    size_t next_py = 0;
    for (size_t i = 0; i < native.size(); ++i) {
        if (!is_eval_frame(native[i].function)) {
            out.push_back({MergedFrame::Kind::Native, i});
            continue;
        }
        while (next_py < py.size()) {
            out.push_back({MergedFrame::Kind::Python, next_py});
            if (py[next_py++].is_entry) break;
        }
    }
    return out;
}

} // namespace gpuleak::pydecode
