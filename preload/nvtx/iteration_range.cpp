#include "nvtx/iteration_range.h"

#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "support/log.h"

namespace gpuleak::nvtx {
namespace {

// recorder::marker keeps at most 1024 bytes of a name; a longer one could never be told apart.
constexpr size_t kMaxName = 1024;

char g_name[kMaxName + 1] = "iteration";
char g_handle_target; // its address is the registered-string handle

bool load() {
    const char* env = std::getenv("GPULEAK_ITERATION_RANGE");
    if (!env) return true;
    size_t len = std::strlen(env);
    if (len == 0) return false;
    if (len > kMaxName) {
        log::warn("GPULEAK_ITERATION_RANGE is longer than {} bytes: NVTX ranges are not recorded",
                  kMaxName);
        return false;
    }
    std::memcpy(g_name, env, len + 1);
    return true;
}

} // namespace

bool load_iteration_range() {
    // Several NVTX instances (one per library using the NVTX3 headers) may inject concurrently.
    static const bool loaded = load();
    return loaded;
}

const char* iteration_range() {
    return g_name;
}

bool is_iteration_range(const char* name) {
    return name && std::strcmp(name, g_name) == 0;
}

bool is_iteration_range(const wchar_t* name) {
    if (!name) return false;
    size_t i = 0;
    for (; g_name[i]; ++i) {
        auto c = static_cast<unsigned char>(g_name[i]);
        if (c >= 0x80 || name[i] != static_cast<wchar_t>(c)) return false;
    }
    return name[i] == L'\0';
}

bool is_iteration_range(const nvtxEventAttributes_t* a) {
    // An older or smaller struct may end before the message: then it carries none.
    constexpr size_t kNeeded = offsetof(nvtxEventAttributes_t, message) + sizeof(a->message);
    if (!a || a->size < kNeeded) return false;
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
        return is_iteration_range(a->message.ascii);
    case NVTX_MESSAGE_TYPE_UNICODE:
        return is_iteration_range(a->message.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED:
        return a->message.registered == iteration_range_handle();
    default:
        return false;
    }
}

nvtxStringHandle_t iteration_range_handle() {
    return reinterpret_cast<nvtxStringHandle_t>(&g_handle_target);
}

} // namespace gpuleak::nvtx
