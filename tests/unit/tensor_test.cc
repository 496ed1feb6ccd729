// Host tensors: allocation, element access and conversions for every dtype,
// deterministic random fill, and IEEE half conversion (checked against an
// independent nearest-value search).
#include "tile_lang/tensor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <set>

#include "support/error.h"

namespace tilec::lang {
namespace {

constexpr DataType kAllTypes[] = {DataType::Bool, DataType::I8,  DataType::I16, DataType::I32,
                                  DataType::I64,  DataType::U8,  DataType::U16, DataType::U32,
                                  DataType::U64,  DataType::F16, DataType::F32, DataType::F64};

TEST(Tensor, ZeroFilledWithSizes) {
  Tensor t(Shape{DataType::F32, {2, 3, 4}});
  EXPECT_EQ(t.size(), 24);
  EXPECT_EQ(t.bytes(), 96u);
  for (int64_t i = 0; i < t.size(); ++i) EXPECT_EQ(t.GetDouble(i), 0.0);
  Tensor scalar(Shape{DataType::I64, {}});
  EXPECT_EQ(scalar.size(), 1);
  EXPECT_EQ(scalar.bytes(), 8u);
  Tensor empty(Shape{DataType::F64, {3, 0}});
  EXPECT_EQ(empty.size(), 0);
  EXPECT_EQ(empty.bytes(), 0u);
}

TEST(Tensor, SizeOverflowIsUserError) {
  // Element count overflows int64.
  EXPECT_THROW(Tensor(Shape{DataType::U8, {int64_t{1} << 40, int64_t{1} << 40}}), UserError);
  // Element count fits, byte count does not.
  EXPECT_THROW(Tensor(Shape{DataType::F64, {int64_t{1} << 62}}), UserError);
  EXPECT_THROW(Tensor(Shape{DataType::F32, {2, -1}}), UserError);
}

TEST(Tensor, IntRoundTripEveryIntegerType) {
  struct Case {
    DataType t;
    int64_t lo, hi;
  };
  const Case cases[] = {{DataType::I8, -128, 127},
                        {DataType::I16, -32768, 32767},
                        {DataType::I32, std::numeric_limits<int32_t>::min(),
                         std::numeric_limits<int32_t>::max()},
                        {DataType::I64, std::numeric_limits<int64_t>::min(),
                         std::numeric_limits<int64_t>::max()},
                        {DataType::U8, 0, 255},
                        {DataType::U16, 0, 65535},
                        {DataType::U32, 0, 4294967295}};
  for (const Case& c : cases) {
    Tensor t(Shape{c.t, {2}});
    t.SetInt(0, c.lo);
    t.SetInt(1, c.hi);
    EXPECT_EQ(t.GetInt(0), c.lo) << Name(c.t);
    EXPECT_EQ(t.GetInt(1), c.hi) << Name(c.t);
    EXPECT_EQ(t.GetDouble(1), static_cast<double>(c.hi)) << Name(c.t);
  }
  Tensor u64(Shape{DataType::U64, {1}});
  u64.SetInt(0, -1);  // wraps to 2^64 - 1
  EXPECT_EQ(u64.as<uint64_t>()[0], std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(u64.GetDouble(0), 18446744073709551616.0);
}

TEST(Tensor, IntegerSetWraps) {
  Tensor t(Shape{DataType::I8, {3}});
  t.SetInt(0, 200);
  t.SetInt(1, -129);
  t.SetInt(2, 256 + 7);
  EXPECT_EQ(t.GetInt(0), -56);
  EXPECT_EQ(t.GetInt(1), 127);
  EXPECT_EQ(t.GetInt(2), 7);
  Tensor u(Shape{DataType::U16, {1}});
  u.SetInt(0, -1);
  EXPECT_EQ(u.GetInt(0), 65535);
}

TEST(Tensor, DoubleToIntegerTruncatesSaturatesAndMapsNanToZero) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  Tensor i32(Shape{DataType::I32, {7}});
  const double in[] = {nan, 1e10, -1e10, 2.9, -2.9, inf, -inf};
  const int64_t want[] = {0, 2147483647, -2147483648LL, 2, -2, 2147483647, -2147483648LL};
  for (int i = 0; i < 7; ++i) i32.SetDouble(i, in[i]);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(i32.GetInt(i), want[i]) << in[i];

  Tensor u8(Shape{DataType::U8, {5}});
  const double uin[] = {-1.0, 300.0, 255.9, -0.5, nan};
  const int64_t uwant[] = {0, 255, 255, 0, 0};
  for (int i = 0; i < 5; ++i) u8.SetDouble(i, uin[i]);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(u8.GetInt(i), uwant[i]) << uin[i];

  Tensor i64(Shape{DataType::I64, {2}});
  i64.SetDouble(0, 9.3e18);  // beyond 2^63
  i64.SetDouble(1, -9.3e18);
  EXPECT_EQ(i64.GetInt(0), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(i64.GetInt(1), std::numeric_limits<int64_t>::min());

  Tensor u64(Shape{DataType::U64, {1}});
  u64.SetDouble(0, 1e30);
  EXPECT_EQ(u64.as<uint64_t>()[0], std::numeric_limits<uint64_t>::max());

  // GetInt on floats truncates (and saturates).
  Tensor f(Shape{DataType::F32, {3}});
  f.SetDouble(0, -2.7);
  f.SetDouble(1, 3.99);
  f.SetDouble(2, 1e30);
  EXPECT_EQ(f.GetInt(0), -2);
  EXPECT_EQ(f.GetInt(1), 3);
  EXPECT_EQ(f.GetInt(2), std::numeric_limits<int64_t>::max());
}

TEST(Tensor, BoolStoresZeroOrOne) {
  Tensor b(Shape{DataType::Bool, {5}});
  b.SetDouble(0, 0.5);
  b.SetDouble(1, 0.0);
  b.SetInt(2, -7);
  b.SetDouble(3, std::numeric_limits<double>::quiet_NaN());
  b.SetInt(4, 256);  // nonzero, even though its low byte is 0
  EXPECT_EQ(b.GetInt(0), 1);
  EXPECT_EQ(b.GetInt(1), 0);
  EXPECT_EQ(b.GetInt(2), 1);
  EXPECT_EQ(b.GetInt(3), 1);
  EXPECT_EQ(b.GetInt(4), 1);
  EXPECT_EQ(b.as<uint8_t>()[2], 1);
  // Any nonzero byte reads as true.
  b.as<uint8_t>()[1] = 0x80;
  EXPECT_EQ(b.GetInt(1), 1);
  EXPECT_EQ(b.GetDouble(1), 1.0);
}

TEST(Tensor, FloatStorageRounds) {
  Tensor f32(Shape{DataType::F32, {1}});
  f32.SetDouble(0, 0.1);
  EXPECT_EQ(f32.GetDouble(0), static_cast<double>(0.1f));
  Tensor f16(Shape{DataType::F16, {3}});
  f16.SetDouble(0, 0.1);
  f16.SetDouble(1, 70000.0);
  f16.SetInt(2, 2049);  // halfway between 2048 and 2050: to even
  EXPECT_EQ(f16.GetDouble(0), 0.0999755859375);
  EXPECT_EQ(f16.as<uint16_t>()[0], 0x2e66);
  EXPECT_TRUE(std::isinf(f16.GetDouble(1)));
  EXPECT_EQ(f16.GetDouble(2), 2048.0);
  Tensor f64(Shape{DataType::F64, {1}});
  f64.SetInt(0, (int64_t{1} << 53) + 1);
  EXPECT_EQ(f64.GetDouble(0), 9007199254740992.0);
}

TEST(Tensor, GetSetDoubleEveryType) {
  for (DataType t : kAllTypes) {
    Tensor x(Shape{t, {2}});
    x.SetDouble(1, 5.0);
    EXPECT_EQ(x.GetDouble(0), 0.0) << Name(t);
    EXPECT_EQ(x.GetDouble(1), t == DataType::Bool ? 1.0 : 5.0) << Name(t);
    EXPECT_EQ(x.GetInt(1), t == DataType::Bool ? 1 : 5) << Name(t);
  }
}

TEST(FillRandom, DeterministicAndInDocumentedRanges) {
  for (DataType t : kAllTypes) {
    Tensor a(Shape{t, {4000}}), b(Shape{t, {4000}}), c(Shape{t, {4000}});
    FillRandom(a, 7);
    FillRandom(b, 7);
    FillRandom(c, 8);
    ASSERT_EQ(a.bytes(), b.bytes());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.bytes()), 0) << Name(t);
    EXPECT_NE(std::memcmp(a.data(), c.data(), a.bytes()), 0) << Name(t);
    double lo = 1e9, hi = -1e9;
    std::set<double> distinct;
    for (int64_t i = 0; i < a.size(); ++i) {
      const double v = a.GetDouble(i);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      distinct.insert(v);
    }
    if (IsFloat(t)) {
      EXPECT_GE(lo, -1.0) << Name(t);
      EXPECT_LT(hi, 1.0) << Name(t);
      EXPECT_LT(lo, -0.9) << Name(t);
      EXPECT_GT(hi, 0.9) << Name(t);
      EXPECT_GT(distinct.size(), 1000u) << Name(t);
    } else if (t == DataType::Bool) {
      EXPECT_EQ(lo, 0.0);
      EXPECT_EQ(hi, 1.0);
    } else if (IsSigned(t)) {
      EXPECT_EQ(lo, -8.0) << Name(t);
      EXPECT_EQ(hi, 8.0) << Name(t);
      EXPECT_EQ(distinct.size(), 17u) << Name(t);
    } else {
      EXPECT_EQ(lo, 0.0) << Name(t);
      EXPECT_EQ(hi, 16.0) << Name(t);
      EXPECT_EQ(distinct.size(), 17u) << Name(t);
    }
  }
}

// The value of half bits h, straight from the IEEE 754 definition.
double HalfValue(uint16_t h) {
  const int sign = (h >> 15) ? -1 : 1;
  const int exp = (h >> 10) & 31;
  const int mant = h & 1023;
  if (exp == 0) return sign * std::ldexp(mant, -24);
  if (exp == 31) return mant ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
  return sign * std::ldexp(1024 + mant, exp - 25);
}

TEST(Half, HalfToFloatMatchesDefinitionForAllBits) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const double want = HalfValue(static_cast<uint16_t>(h));
    const float got = HalfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << h;
    } else {
      EXPECT_EQ(static_cast<double>(got), want) << h;
      EXPECT_EQ(std::signbit(got), (h >> 15) != 0) << h;
    }
  }
}

TEST(Half, RoundTripAllBits) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = HalfToFloat(static_cast<uint16_t>(h));
    const uint16_t back = FloatToHalf(f);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(HalfToFloat(back))) << h;
    } else {
      EXPECT_EQ(back, h) << h;
    }
  }
}

TEST(Half, KnownValues) {
  EXPECT_EQ(FloatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);  // tie with 65536: to even = inf
  EXPECT_EQ(FloatToHalf(1e6f), 0x7c00);
  EXPECT_EQ(FloatToHalf(-1e6f), 0xfc00);
  EXPECT_EQ(FloatToHalf(INFINITY), 0x7c00);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(FloatToHalf(std::ldexp(1023.0f, -24)), 0x03ff);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);   // tie: to even zero
  EXPECT_EQ(FloatToHalf(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(FloatToHalf(std::ldexp(3.0f, -25)), 0x0002);   // 1.5 ulp: tie to even 2
  EXPECT_EQ(FloatToHalf(std::ldexp(5.0f, -25)), 0x0002);   // 2.5 ulp: tie to even 2
  EXPECT_EQ(FloatToHalf(std::ldexp(-1.0f, -26)), 0x8000);
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie: to even
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(3.0f, -11)), 0x3c02);  // tie: to even
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);
  // Largest subnormal + half ulp rounds up into the smallest normal.
  EXPECT_EQ(FloatToHalf(std::ldexp(2047.0f, -25)), 0x0400);
  const uint16_t nan = FloatToHalf(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
}

// Nearest half by search over all finite halves (ties to the even one): an
// implementation independent of FloatToHalf's bit tricks.
uint16_t NearestHalf(float f) {
  static const std::vector<std::pair<double, uint16_t>> table = [] {
    std::vector<std::pair<double, uint16_t>> t;
    for (uint32_t h = 0; h < 0x7c00; ++h) t.emplace_back(HalfValue(static_cast<uint16_t>(h)), h);
    t.emplace_back(65536.0, 0x7c00);  // beyond 65520 everything is inf; 65536 acts as its neighbour
    return t;
  }();
  const double a = std::fabs(static_cast<double>(f));
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  if (a >= 65520.0) return sign | 0x7c00;
  auto it = std::lower_bound(table.begin(), table.end(), std::make_pair(a, uint16_t{0}));
  if (it->first == a) return sign | it->second;
  auto below = it - 1;
  const double dlo = a - below->first, dhi = it->first - a;
  if (dlo < dhi) return sign | below->second;
  if (dhi < dlo) return sign | it->second;
  return sign | ((below->second & 1) ? it->second : below->second);
}

TEST(Half, FloatToHalfMatchesNearestSearch) {
  uint64_t s = 12345;
  for (int i = 0; i < 300000; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    // Random float bits with exponents spanning the half range and beyond.
    const uint32_t exp = 100 + static_cast<uint32_t>((s >> 40) % 45);  // 2^-27 .. 2^17
    const uint32_t bits = ((s >> 63) << 31) | (exp << 23) | static_cast<uint32_t>(s & 0x7fffff);
    const float f = std::bit_cast<float>(bits);
    ASSERT_EQ(FloatToHalf(f), NearestHalf(f)) << f;
  }
  // Exact midpoints between neighbouring halves (subnormal and normal).
  for (uint32_t h = 0; h + 1 < 0x7c00; h += 7) {
    const double mid = (HalfValue(static_cast<uint16_t>(h)) + HalfValue(static_cast<uint16_t>(h + 1))) / 2;
    const auto f = static_cast<float>(mid);  // exact: halves have 11 significant bits
    ASSERT_EQ(static_cast<double>(f), mid);
    ASSERT_EQ(FloatToHalf(f), (h & 1) ? h + 1 : h) << h;
  }
}

}  // namespace
}  // namespace tilec::lang
