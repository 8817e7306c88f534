#include "config.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace fakecuda {
namespace {

unsigned long long parse_u64(const char* name, unsigned long long fallback) {
    const char* text = std::getenv(name);
    if (text == nullptr || *text == '\0') return fallback;
    char* end = nullptr;
    errno = 0;
    const unsigned long long value = std::strtoull(text, &end, 0);
    // A malformed value silently becoming 0 would make every allocation fail for the wrong reason.
    if (errno != 0 || *end != '\0') return fallback;
    return value;
}

bool flag(const char* name) {
    const char* text = std::getenv(name);
    return text != nullptr && std::strcmp(text, "1") == 0;
}

Config load() {
    Config c{};
    c.capacity = parse_u64("FAKECUDA_CAPACITY", 8ULL << 30);
    const unsigned long long devices = parse_u64("FAKECUDA_DEVICES", 1);
    c.devices =
        devices > static_cast<unsigned long long>(kMaxDevices) ? 1 : static_cast<int>(devices);
    c.capturing = flag("FAKECUDA_CAPTURING");
    c.log = flag("FAKECUDA_LOG");
    c.hidden_pointers = flag("FAKECUDA_HIDDEN_POINTERS");
    return c;
}

} // namespace

const Config& config() {
    static const Config c = load();
    return c;
}

} // namespace fakecuda
