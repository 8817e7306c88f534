#include <cstddef>

#include "gpuleak/format/records.h"

namespace gpuleak::format {

const char* api_name(Api api) {
    static constexpr const char* kNames[] = {
#define GPULEAK_API_NAME(id, name) name,
        GPULEAK_API_LIST(GPULEAK_API_NAME)
#undef GPULEAK_API_NAME
    };
    auto i = static_cast<size_t>(api);
    return i < static_cast<size_t>(Api::Count) ? kNames[i] : "unknown";
}

const char* kind_name(MemKind kind) {
    switch (kind) {
    case MemKind::Device:
        return "device";
    case MemKind::Managed:
        return "managed";
    case MemKind::PinnedHost:
        return "pinned_host";
    case MemKind::Array:
        return "array";
    case MemKind::Graph:
        return "graph";
    case MemKind::Imported:
        return "imported";
    case MemKind::HostRegistered:
        return "host_registered";
    }
    return "unknown";
}

} // namespace gpuleak::format
