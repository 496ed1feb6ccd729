#include "runtime/handle_registry.h"

namespace tilec::runtime {

uintptr_t NextHandleValue() {
  // Far from small integers and aligned like a pointer, so a handle looks
  // like one in a debugger; 64 bits never wrap in practice.
  static std::atomic<uintptr_t> next{0x7100000};
  return next.fetch_add(16, std::memory_order_relaxed);
}

}  // namespace tilec::runtime
