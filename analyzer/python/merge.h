// Splices recorded Python frames into a native stack, as memray's hybrid_stack_trace does: each
// native eval-loop frame is replaced by the Python frames that eval call ran.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace gpuleak::pydecode {

struct NativeFrameName {
    std::string_view function; // symbol name, "" if unknown
    uint64_t index;            // opaque to merge(); for the caller to find its frame again
};

struct PyFrameView {
    uint64_t code_id;
    int32_t byte_offset;
    bool is_entry; // outermost Python frame of one _PyEval_EvalFrameDefault call
};

struct MergedFrame {
    enum class Kind : uint8_t { Native, Python };
    Kind kind;
    size_t position; // into the `native` or `py` argument
};

// True for the frames that stand for one eval-loop call: _PyEval_EvalFrameDefault (also its
// .cold part) and the handlers of 3.14's tail-calling interpreter.
bool is_eval_frame(std::string_view function);

// Both inputs and the result are innermost first. Python frames form one group per eval call,
// each group ending (outwards) at an is_entry frame; group k replaces the k-th eval frame. When
// the number of groups and eval frames differ (stripped interpreter, truncated stack, PEP 523
// evaluators...), the result is all Python frames followed by all native frames, and `*aligned`
// (if given) is set to false.
std::vector<MergedFrame> merge(const std::vector<NativeFrameName>& native,
                               const std::vector<PyFrameView>& py, bool* aligned = nullptr);

} // namespace gpuleak::pydecode
