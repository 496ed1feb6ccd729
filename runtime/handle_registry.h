// The live objects behind the C ABI's opaque handles.
//
// A handle is not a pointer to the object but a number the registry hands
// out once (never reused, distinct across all registries), so a handle that
// was released, never issued, or belongs to another kind of object is
// recognized and reported instead of dereferenced. Lookups return a
// shared_ptr: an object released by one thread while another still uses it
// lives until that use ends.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace tilec::runtime {

// The next handle value of the process (multiples of 16, never 0).
uintptr_t NextHandleValue();

template <typename T>
class HandleRegistry {
 public:
  uintptr_t Add(std::shared_ptr<T> object) {
    uintptr_t handle = NextHandleValue();
    std::unique_lock lock(mutex_);
    live_.emplace(handle, std::move(object));
    return handle;
  }
  // Null if `handle` is not live here.
  std::shared_ptr<T> Get(uintptr_t handle) const {
    std::shared_lock lock(mutex_);
    auto it = live_.find(handle);
    return it == live_.end() ? nullptr : it->second;
  }
  // The object, removed; null if `handle` was not live here.
  std::shared_ptr<T> Remove(uintptr_t handle) {
    std::unique_lock lock(mutex_);
    auto it = live_.find(handle);
    if (it == live_.end()) return nullptr;
    std::shared_ptr<T> object = std::move(it->second);
    live_.erase(it);
    return object;
  }

 private:
  mutable std::shared_mutex mutex_;
  std::unordered_map<uintptr_t, std::shared_ptr<T>> live_;
};

}  // namespace tilec::runtime
