// Storage for an object that is constructed on demand and never destroyed: the preload still
// writes the trace after C++ static destructors have run (frees from destructors that run after
// libgpuleak's own), so nothing it writes with may be torn down at exit.
#pragma once

#include <new>
#include <utility>

namespace gpuleak {

// Declare instances constinit: a constructor that runs before main (a library's, calling CUDA)
// may use the object before dynamic initialization would have reset it.
template <typename T> class NoDestroy {
public:
    constexpr NoDestroy() = default;
    // Constructs the object (again: the old one is abandoned, not destroyed).
    template <typename... Args> T& emplace(Args&&... args) {
        object_ = new (storage_) T(std::forward<Args>(args)...);
        return *object_;
    }
    explicit operator bool() const { return object_ != nullptr; }
    T* operator->() const { return object_; }
    T& operator*() const { return *object_; }

private:
    alignas(T) unsigned char storage_[sizeof(T)] = {};
    T* object_ = nullptr;
};

} // namespace gpuleak
