#include "accounting.hpp"

#include "config.hpp"

#include <array>
#include <mutex>

namespace fakecuda {
namespace {

struct Ledger {
    std::mutex mutex;
    std::array<unsigned long long, kMaxDevices> device_used{};
    std::array<unsigned long long, kMaxDevices> device_peak{};
    unsigned long long host_pinned = 0;
    unsigned long long managed = 0;
};

Ledger& ledger() {
    static Ledger l;
    return l;
}

bool in_range(int device) {
    return device >= 0 && device < kMaxDevices;
}

} // namespace

bool charge_device(int device, std::size_t bytes) noexcept {
    if (!in_range(device)) return false;
    Ledger& l = ledger();
    const std::lock_guard lock(l.mutex);
    unsigned long long& used = l.device_used[static_cast<std::size_t>(device)];
    if (bytes > config().capacity - used) return false;
    used += bytes;
    unsigned long long& peak = l.device_peak[static_cast<std::size_t>(device)];
    if (used > peak) peak = used;
    return true;
}

void credit_device(int device, std::size_t bytes) noexcept {
    if (!in_range(device)) return;
    Ledger& l = ledger();
    const std::lock_guard lock(l.mutex);
    l.device_used[static_cast<std::size_t>(device)] -= bytes;
}

void charge_host_pinned(std::size_t bytes) noexcept {
    Ledger& l = ledger();
    const std::lock_guard lock(l.mutex);
    l.host_pinned += bytes;
}

void credit_host_pinned(std::size_t bytes) noexcept {
    Ledger& l = ledger();
    const std::lock_guard lock(l.mutex);
    l.host_pinned -= bytes;
}

void charge_managed(std::size_t bytes) noexcept {
    Ledger& l = ledger();
    const std::lock_guard lock(l.mutex);
    l.managed += bytes;
}

void credit_managed(std::size_t bytes) noexcept {
    Ledger& l = ledger();
    const std::lock_guard lock(l.mutex);
    l.managed -= bytes;
}

unsigned long long device_used(int device) noexcept {
    if (!in_range(device)) return 0;
    Ledger& l = ledger();
    const std::lock_guard lock(l.mutex);
    return l.device_used[static_cast<std::size_t>(device)];
}

unsigned long long device_peak(int device) noexcept {
    if (!in_range(device)) return 0;
    Ledger& l = ledger();
    const std::lock_guard lock(l.mutex);
    return l.device_peak[static_cast<std::size_t>(device)];
}

unsigned long long host_pinned_used() noexcept {
    Ledger& l = ledger();
    const std::lock_guard lock(l.mutex);
    return l.host_pinned;
}

unsigned long long managed_used() noexcept {
    Ledger& l = ledger();
    const std::lock_guard lock(l.mutex);
    return l.managed;
}

} // namespace fakecuda
