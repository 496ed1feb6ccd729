#include "tile_lang/tensor.h"

#include <bit>
#include <new>

#include "support/error.h"
#include "tile_lang/eval_internal.h"

namespace tilec::lang {

using eval::Convert;
using eval::Data;
using eval::VisitStorage;

Tensor::Tensor(Shape shape) : Tensor(std::move(shape), nullptr) {}

Tensor::Tensor(Shape shape, const void* bytes) : shape_(std::move(shape)) {
  count_ = shape_.ElementCount();  // UserError on overflow or negative dims
  const auto elem = static_cast<uint64_t>(ByteSize(shape_.dtype));
  const auto count = static_cast<uint64_t>(count_);
  if (count > data_.max_size() / elem)
    TILEC_USER_ERROR("tensor {} is too large: {} elements of {} bytes", ToString(shape_), count_,
                     elem);
  try {
    if (bytes == nullptr) {
      data_.resize(count * elem);  // value-initialized: zero bytes
    } else {
      const auto* first = static_cast<const std::byte*>(bytes);
      data_.assign(first, first + count * elem);
    }
  } catch (const std::bad_alloc&) {
    TILEC_USER_ERROR("out of memory allocating tensor {} ({} bytes)", ToString(shape_),
                     count * elem);
  }
}

double Tensor::GetDouble(int64_t i) const {
  TILEC_CHECK(i >= 0 && i < count_, "element {} of {}", i, ToString(shape_));
  return VisitStorage(dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    return Convert<double>(Data<S>(*this)[i]);
  });
}

void Tensor::SetDouble(int64_t i, double v) {
  TILEC_CHECK(i >= 0 && i < count_, "element {} of {}", i, ToString(shape_));
  VisitStorage(dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    Data<S>(*this)[i] = Convert<S>(v);
  });
}

int64_t Tensor::GetInt(int64_t i) const {
  TILEC_CHECK(i >= 0 && i < count_, "element {} of {}", i, ToString(shape_));
  return VisitStorage(dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    return Convert<int64_t>(Data<S>(*this)[i]);
  });
}

void Tensor::SetInt(int64_t i, int64_t v) {
  TILEC_CHECK(i >= 0 && i < count_, "element {} of {}", i, ToString(shape_));
  VisitStorage(dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    Data<S>(*this)[i] = Convert<S>(v);
  });
}

namespace {

// splitmix64: tiny, fast, and its stream is fixed forever for a given seed,
// which is all test data needs.
uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A float in [-1, 1) on a grid of 2^(1-bits): exactly representable in a type
// with `bits` significand bits, so rounding to the type can never reach 1.
double UnitFloat(uint64_t x, int bits) {
  return std::ldexp(static_cast<double>(x >> (64 - bits)), 1 - bits) - 1.0;
}

}  // namespace

void FillRandom(Tensor& t, uint64_t seed) {
  uint64_t state = seed;
  const DataType dt = t.dtype();
  for (int64_t i = 0; i < t.size(); ++i) {
    const uint64_t x = SplitMix64(state);
    switch (dt) {
      case DataType::F16: t.SetDouble(i, UnitFloat(x, 11)); break;
      case DataType::F32: t.SetDouble(i, UnitFloat(x, 24)); break;
      case DataType::F64: t.SetDouble(i, UnitFloat(x, 53)); break;
      case DataType::Bool: t.SetInt(i, static_cast<int64_t>(x >> 63)); break;
      default:
        if (IsSigned(dt)) {
          t.SetInt(i, static_cast<int64_t>(x % 17) - 8);  // [-8, 8]
        } else {
          t.SetInt(i, static_cast<int64_t>(x % 17));  // [0, 16]
        }
    }
  }
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in float.
    const float mag = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -mag : mag;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));  // inf, nan
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t FloatToHalf(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {
    if (abs == 0x7f800000u) return sign | 0x7c00u;                          // inf
    return static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));  // quiet nan
  }
  // 65520 = 0x477ff000 is halfway between the largest half (65504) and 2^16;
  // it and everything above round to infinity.
  if (abs >= 0x477ff000u) return sign | 0x7c00u;
  const uint32_t exp = abs >> 23;
  const uint32_t mant = abs & 0x7fffffu;
  if (exp >= 113) {
    // Normal half (float exponent >= -14): drop 13 bits, round to nearest even.
    // A carry out of the mantissa correctly bumps the exponent.
    uint32_t h = ((exp - 112) << 10) | (mant >> 13);
    const uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  // Below 2^-25 (exp < 102) everything rounds to zero (2^-25 itself is a tie
  // that goes to the even zero).
  if (exp < 102) return sign;
  // Subnormal half: value / 2^-24 = (mant | implicit 1) * 2^(exp - 126).
  const uint32_t sig = mant | 0x800000u;
  const uint32_t shift = 126 - exp;  // 14..24
  uint32_t h = sig >> shift;
  const uint32_t rest = sig & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

}  // namespace tilec::lang
