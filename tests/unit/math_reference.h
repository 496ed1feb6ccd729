// For tests of math functions: what libm computes for each sem builtin (as
// the reference evaluator does), and the distance between floats in ULPs.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>

#include "compiler/sem/ir.h"

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

// The C library's value of `fn` at (x, y, z) (arguments past its arity ignored).
template <typename T>
T CallReference(sem::CallFn fn, T x, T y, T z) {
  using sem::CallFn;
  switch (fn) {
    case CallFn::Exp: return std::exp(x);
    case CallFn::Log: return std::log(x);
    case CallFn::Sqrt: return std::sqrt(x);
    case CallFn::Pow: return std::pow(x, y);
    case CallFn::Tanh: return std::tanh(x);
    case CallFn::Sin: return std::sin(x);
    case CallFn::Cos: return std::cos(x);
    case CallFn::Tan: return std::tan(x);
    case CallFn::Sinh: return std::sinh(x);
    case CallFn::Cosh: return std::cosh(x);
    case CallFn::Asin: return std::asin(x);
    case CallFn::Acos: return std::acos(x);
    case CallFn::Atan: return std::atan(x);
    case CallFn::Erf: return std::erf(x);
    case CallFn::Fabs: return std::fabs(x);
    case CallFn::Floor: return std::floor(x);
    case CallFn::Ceil: return std::ceil(x);
    case CallFn::Round: return std::round(x);
    case CallFn::Fma: return std::fma(x, y, z);
    case CallFn::Mad: return x * y + z;
    case CallFn::Fmod: return std::fmod(x, y);
  }
  return 0;
}

}  // namespace tilec::testing
