// Distance in units in the last place, for tests of math functions.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>

namespace tilec::testing {

// How many representable values of T lie between a and b (0 when equal, or
// both NaN; the maximum int64 when exactly one is NaN).
template <typename T>
int64_t UlpDistance(T a, T b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b) ? 0 : std::numeric_limits<int64_t>::max();
  using Bits = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  auto ordered = [](T v) {  // monotonic in v; -0 and +0 both map to 0
    Bits i;
    std::memcpy(&i, &v, sizeof(i));
    return i < 0 ? static_cast<int64_t>(std::numeric_limits<Bits>::min()) - i
                 : static_cast<int64_t>(i);
  };
  int64_t x = ordered(a), y = ordered(b);
  return x > y ? x - y : y - x;
}

}  // namespace tilec::testing
