#include "accounting.hpp"

#include "config.hpp"

#include <array>
#include <atomic>

namespace fakecuda {
namespace {

// Atomics rather than one lock: allocating threads must not serialize here (see linear_memory.cpp).
struct Ledger {
    std::array<std::atomic<unsigned long long>, kMaxDevices> device_used{};
    std::array<std::atomic<unsigned long long>, kMaxDevices> device_peak{};
    std::atomic<unsigned long long> host_pinned{0};
    std::atomic<unsigned long long> managed{0};
    std::atomic<unsigned long long> host_registered{0};
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
    auto& used = l.device_used[static_cast<std::size_t>(device)];
    unsigned long long before = used.load();
    do {
        if (bytes > config().capacity - before) return false;
    } while (!used.compare_exchange_weak(before, before + bytes));
    auto& peak = l.device_peak[static_cast<std::size_t>(device)];
    unsigned long long now = before + bytes, seen = peak.load();
    while (now > seen && !peak.compare_exchange_weak(seen, now)) {
    }
    return true;
}

void credit_device(int device, std::size_t bytes) noexcept {
    if (!in_range(device)) return;
    ledger().device_used[static_cast<std::size_t>(device)] -= bytes;
}

void charge_host_pinned(std::size_t bytes) noexcept {
    ledger().host_pinned += bytes;
}

void credit_host_pinned(std::size_t bytes) noexcept {
    ledger().host_pinned -= bytes;
}

void charge_managed(std::size_t bytes) noexcept {
    ledger().managed += bytes;
}

void credit_managed(std::size_t bytes) noexcept {
    ledger().managed -= bytes;
}

unsigned long long device_used(int device) noexcept {
    if (!in_range(device)) return 0;
    return ledger().device_used[static_cast<std::size_t>(device)].load();
}

unsigned long long device_peak(int device) noexcept {
    if (!in_range(device)) return 0;
    return ledger().device_peak[static_cast<std::size_t>(device)].load();
}

unsigned long long host_pinned_used() noexcept {
    return ledger().host_pinned.load();
}

unsigned long long managed_used() noexcept {
    return ledger().managed.load();
}

void charge_host_registered(std::size_t bytes) noexcept {
    ledger().host_registered.fetch_add(bytes, std::memory_order_relaxed);
}

void credit_host_registered(std::size_t bytes) noexcept {
    ledger().host_registered.fetch_sub(bytes, std::memory_order_relaxed);
}

unsigned long long host_registered_used() noexcept {
    return ledger().host_registered.load(std::memory_order_relaxed);
}

} // namespace fakecuda
