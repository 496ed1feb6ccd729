// The LLVM lowering of the sem expressions, run on the llvm:cpu device:
// small kernels built by hand (compiler/sem/builder.h, llvm_emit_fixture.h)
// whose results are checked exactly (integer wrap, division signs, NaN
// comparisons, masks, laziness, casts, libm, limits, f16 and f64). Memory and
// parallel constructs: llvm_emit_memory_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "compiler/pipeline.h"
#include "compiler/sem/builder.h"
#include "hal/llvm/cpu_info.h"
#include "hal/llvm/emit_llvm.h"
#include "hal/llvm/llvm_device.h"
#include "hal/llvm/vector_math.h"
#include "support/error.h"
#include "tile_lang/tensor.h"
#include "tests/unit/llvm_emit_fixture.h"
#include "tests/unit/math_reference.h"

namespace tilec::hal::cpu {
namespace {

using namespace emit_fixture;  // also sem::builder, DataType, Expr, Stmt, Type

TEST(LlvmEmit, UnsignedByteArithmeticWraps) {
  Expr a = P("a", DataType::U8), o = P("o", DataType::U8);
  Expr x = _Load(a, I(0)), y = _Load(a, I(1)), z = _Load(a, I(2)), w = _Load(a, I(3));
  Host ha = Host::Of<uint8_t>({200, 100, 3, 0}), ho = Host::Zeros<uint8_t>(15);
  Launch(Kernel({Buf("a", DataType::U8), Buf("o", DataType::U8)},
                StoreAll(o, {x + y, z - w, w - z, x * z, -z, ~z, x & y, x | y, x ^ y, _Min(x, y),
                             _Max(x, y), x / z, x % z, x >> C(2, DataType::U8),
                             x << C(1, DataType::U8)})),
         {&ha, &ho});
  std::vector<int> want = {44, 3, 253, 88, 253, 252, 64, 236, 172, 100, 200, 66, 2, 50, 144};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(ho.At<uint8_t>(i), want[i]) << "op " << i;
}

TEST(LlvmEmit, SignedIntegersDivisionRemainderShifts) {
  Expr a = P("a", DataType::I32), o = P("o", DataType::I32);
  Expr m7 = _Load(a, I(0)), p2 = _Load(a, I(1)), p7 = _Load(a, I(2)), m2 = _Load(a, I(3));
  Expr b = P("b", DataType::I8), ob = P("ob", DataType::I8);
  Expr m100 = _Load(b, I(0)), p3 = _Load(b, I(1));
  Host ha = Host::Of<int32_t>({-7, 2, 7, -2}), ho = Host::Zeros<int32_t>(11);
  Host hb = Host::Of<int8_t>({-100, 3}), hob = Host::Zeros<int8_t>(5);
  std::vector<Stmt> body = StoreAll(
      o, {m7 / p2, m7 % p2, p7 / m2, p7 % m2, m7 / m2, m7 % m2, m7 >> _Const(1, DataType::I32),
          m7 << _Const(2, DataType::I32), _Min(m7, p2), _Max(m7, p2), -m7});
  for (Stmt& s :
       StoreAll(ob, {m100 >> C(2, DataType::I8), m100 / p3, m100 % p3, _Min(m100, p3), m100 + p3}))
    body.push_back(s);
  Launch(Kernel({Buf("a", DataType::I32), Buf("o", DataType::I32), Buf("b", DataType::I8),
                 Buf("ob", DataType::I8)},
                body),
         {&ha, &ho, &hb, &hob});
  std::vector<int32_t> want = {-3, -1, -3, 1, 3, -1, -4, -28, -7, 2, 7};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(ho.At<int32_t>(i), want[i]) << "op " << i;
  std::vector<int8_t> want8 = {-25, -33, -1, -100, -97};
  for (size_t i = 0; i < want8.size(); ++i) EXPECT_EQ(hob.At<int8_t>(i), want8[i]) << "i8 op " << i;
}

TEST(LlvmEmit, WideAndUnsignedIntegers) {
  Expr u = P("u", DataType::U32), ou = P("ou", DataType::U32);
  Expr s = P("s", DataType::U16), os = P("os", DataType::U16);
  Expr l = P("l", DataType::I64), ol = P("ol", DataType::I64);
  Expr q = P("q", DataType::U64), oq = P("oq", DataType::U64);
  Expr big = _Load(u, I(0)), seven = _Load(u, I(1));
  Host hu = Host::Of<uint32_t>({4000000000u, 7u}), hou = Host::Zeros<uint32_t>(5);
  Host hs = Host::Of<uint16_t>({300}), hos = Host::Zeros<uint16_t>(1);
  Host hl = Host::Of<int64_t>({3000000000LL, -3}), hol = Host::Zeros<int64_t>(2);
  Host hq = Host::Of<uint64_t>({~uint64_t{0}}), hoq = Host::Zeros<uint64_t>(3);
  std::vector<Stmt> body =
      StoreAll(ou, {big / _Const(3, DataType::U32), big % seven, big >> _Const(4, DataType::U32),
                    _Max(big, seven), big + big});
  body.push_back(_Store(os, I(0), _Load(s, I(0)) * _Load(s, I(0))));
  for (Stmt& x : StoreAll(ol, {_Load(l, I(0)) * _Load(l, I(1)), _Load(l, I(0)) / _Load(l, I(1))}))
    body.push_back(x);
  Expr all = _Load(q, I(0));
  for (Stmt& x : StoreAll(oq, {all / _Const(2, DataType::U64), all >> _Const(63, DataType::U64),
                               _Min(all, _Const(5, DataType::U64))}))
    body.push_back(x);
  Launch(Kernel({Buf("u", DataType::U32), Buf("ou", DataType::U32), Buf("s", DataType::U16),
                 Buf("os", DataType::U16), Buf("l", DataType::I64), Buf("ol", DataType::I64),
                 Buf("q", DataType::U64), Buf("oq", DataType::U64)},
                body),
         {&hu, &hou, &hs, &hos, &hl, &hol, &hq, &hoq});
  EXPECT_EQ(hou.At<uint32_t>(0), 1333333333u);
  EXPECT_EQ(hou.At<uint32_t>(1), 3u);
  EXPECT_EQ(hou.At<uint32_t>(2), 250000000u);
  EXPECT_EQ(hou.At<uint32_t>(3), 4000000000u);
  EXPECT_EQ(hou.At<uint32_t>(4), static_cast<uint32_t>(8000000000ULL));
  EXPECT_EQ(hos.At<uint16_t>(0), 90000 % 65536);
  EXPECT_EQ(hol.At<int64_t>(0), -9000000000LL);
  EXPECT_EQ(hol.At<int64_t>(1), -1000000000LL);
  EXPECT_EQ(hoq.At<uint64_t>(0), ~uint64_t{0} / 2);
  EXPECT_EQ(hoq.At<uint64_t>(1), 1u);
  EXPECT_EQ(hoq.At<uint64_t>(2), 5u);
}

TEST(LlvmEmit, ComparisonsNaNAndSignedness) {
  Expr f = P("f", DataType::F32), i = P("i", DataType::I32), u = P("u", DataType::U32);
  Expr o = P("o", DataType::Bool);
  Expr one = _Load(f, I(0)), nan = _Load(f, I(1)), two = _Load(f, I(2));
  Expr m1 = _Load(i, I(0)), p1 = _Load(i, I(1)), umax = _Load(u, I(0)), u1 = _Load(u, I(1));
  Expr t = _Ne(m1, p1), fl = _Eq(m1, p1);
  Host hf = Host::Of<float>({1.0f, std::numeric_limits<float>::quiet_NaN(), 2.0f});
  Host hi = Host::Of<int32_t>({-1, 1}), hu = Host::Of<uint32_t>({0xFFFFFFFFu, 1u});
  Host ho = Host::Zeros<uint8_t>(16);
  Launch(Kernel({Buf("f", DataType::F32), Buf("i", DataType::I32), Buf("u", DataType::U32),
                 Buf("o", DataType::Bool)},
                StoreAll(o, {_Eq(one, one), _Eq(nan, nan), _Ne(nan, nan),
                             nan<one, nan >= one, one <= two, two> one, m1 < p1, umax<u1, umax> u1,
                             fl < t, _Eq(t, t), _LogicalAnd(t, fl), _LogicalOr(t, fl), _Not(t),
                             t ^ fl})),
         {&hf, &hi, &hu, &ho});
  std::vector<int> want = {1, 0, 1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 0, 1};
  for (size_t k = 0; k < want.size(); ++k)
    EXPECT_EQ(ho.At<uint8_t>(k), want[k]) << "comparison " << k;
}

TEST(LlvmEmit, VectorMasksSelectAndBoolVectors) {
  Expr a = P("a", DataType::F32), o = P("o", DataType::F32), m = P("m", DataType::Bool);
  Expr oi = P("oi", DataType::I32);
  Expr x = _Load(a, I(0), 4), y = _Broadcast(_Float(4), 4);
  Expr mask = x > y;
  Host ha = Host::Of<float>({1, 5, 3, 7}), ho = Host::Zeros<float>(8),
       hm = Host::Zeros<uint8_t>(12);
  Host hoi = Host::Zeros<int32_t>(4);
  Launch(Kernel({Buf("a", DataType::F32), Buf("o", DataType::F32), Buf("m", DataType::Bool),
                 Buf("oi", DataType::I32)},
                {_Store(o, I(0), _Select(mask, x, y)), _Store(o, I(4), _Select(_Bool(true), y, x)),
                 _Store(m, I(0), mask), _Store(m, I(4), _Not(mask)),
                 _Store(m, I(8), _LogicalAnd(mask, _Load(m, I(0), 4))),
                 _Store(oi, I(0), _Cast(Type::Scalar(DataType::I32, 4), mask))}),
         {&ha, &ho, &hm, &hoi});
  std::vector<float> want = {4, 5, 4, 7, 4, 4, 4, 4};
  for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(ho.At<float>(k), want[k]) << k;
  std::vector<int> masks = {0, 1, 0, 1, 1, 0, 1, 0, 0, 1, 0, 1};
  for (size_t k = 0; k < masks.size(); ++k) EXPECT_EQ(hm.At<uint8_t>(k), masks[k]) << "mask " << k;
  for (int k = 0; k < 4; ++k) EXPECT_EQ(hoi.At<int32_t>(k), k % 2) << "cast " << k;
}

TEST(LlvmEmit, CondAndLogicalOperatorsAreLazy) {
  // Indices far outside the buffer: evaluating the guarded loads would fault.
  Expr a = P("a", DataType::F32), idx = P("idx", DataType::I32), o = P("o", DataType::F32);
  Expr ob = P("ob", DataType::Bool);
  std::vector<Stmt> body;
  for (int j = 0; j < 3; ++j) {
    Expr i = _Cast(Type::Index(), _Load(idx, I(j)));
    Expr in = _LogicalAnd(i >= 0, i < 4);
    body.push_back(_Store(o, I(j), _Cond(in, _Load(a, i), _Float(-1))));
    body.push_back(_Store(ob, I(j), _LogicalAnd(in, _Load(a, i) > 0.0)));
    body.push_back(_Store(ob, I(3 + j), _LogicalOr(_Not(in), _Load(a, i) > 2.5)));
  }
  Host ha = Host::Of<float>({1, 2, 3, 4}), hi = Host::Of<int32_t>({2, 100000000, -100000000});
  Host ho = Host::Zeros<float>(3), hob = Host::Zeros<uint8_t>(6);
  Launch(Kernel({Buf("a", DataType::F32), Buf("idx", DataType::I32), Buf("o", DataType::F32),
                 Buf("ob", DataType::Bool)},
                body),
         {&ha, &hi, &ho, &hob});
  EXPECT_EQ(ho.At<float>(0), 3);
  EXPECT_EQ(ho.At<float>(1), -1);
  EXPECT_EQ(ho.At<float>(2), -1);
  std::vector<int> want = {1, 0, 0, 1, 1, 1};
  for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(hob.At<uint8_t>(k), want[k]) << k;
}

TEST(LlvmEmit, Clamp) {
  Expr a = P("a", DataType::I32), o = P("o", DataType::I32), f = P("f", DataType::F32);
  Expr of = P("of", DataType::F32), u = P("u", DataType::U32), ou = P("ou", DataType::U32);
  auto c = [](int64_t v) { return _Const(v, DataType::I32); };
  Expr x = _Load(a, I(0)), nx = _Load(a, I(1)), two = _Load(a, I(2));
  Expr nan = _Load(f, I(0));
  Host ha = Host::Of<int32_t>({5, -5, 2}), ho = Host::Zeros<int32_t>(4);
  Host hf = Host::Of<float>({std::numeric_limits<float>::quiet_NaN(), 7.5f}),
       hof = Host::Zeros<float>(2);
  Host hu = Host::Of<uint32_t>({0xFFFFFFFFu}), hou = Host::Zeros<uint32_t>(1);
  std::vector<Stmt> body = StoreAll(o, {_Clamp(x, c(0), c(3)), _Clamp(nx, c(0), c(3)),
                                        _Clamp(two, c(0), c(3)), _Clamp(x, c(10), c(3))});
  body.push_back(_Store(of, I(0), _Clamp(nan, _Float(-1), _Float(1))));
  body.push_back(_Store(of, I(1), _Clamp(_Load(f, I(1)), _Float(-1), _Float(1))));
  body.push_back(_Store(
      ou, I(0), _Clamp(_Load(u, I(0)), _Const(0, DataType::U32), _Const(10, DataType::U32))));
  Launch(Kernel({Buf("a", DataType::I32), Buf("o", DataType::I32), Buf("f", DataType::F32),
                 Buf("of", DataType::F32), Buf("u", DataType::U32), Buf("ou", DataType::U32)},
                body),
         {&ha, &ho, &hf, &hof, &hu, &hou});
  EXPECT_EQ(ho.At<int32_t>(0), 3);
  EXPECT_EQ(ho.At<int32_t>(1), 0);
  EXPECT_EQ(ho.At<int32_t>(2), 2);
  EXPECT_EQ(ho.At<int32_t>(3), 3);  // lo > hi: min(max(x, lo), hi) = hi
  EXPECT_EQ(hof.At<float>(0), -1);  // fmax(NaN, lo) = lo
  EXPECT_EQ(hof.At<float>(1), 1);
  EXPECT_EQ(hou.At<uint32_t>(0), 10u);
}

TEST(LlvmEmit, CastsFollowC) {
  Expr f = P("f", DataType::F32), i = P("i", DataType::I32), o = P("o", DataType::I32);
  Expr ob = P("ob", DataType::Bool), of = P("of", DataType::F32), od = P("od", DataType::F64);
  Expr ou = P("ou", DataType::U32), o8 = P("o8", DataType::U8), o16 = P("o16", DataType::I16);
  Expr oh = P("oh", DataType::F16), ol = P("ol", DataType::I64);
  Type i32 = Type::Scalar(DataType::I32), f32 = Type::Scalar(DataType::F32), b = Type::Bool();
  Type u32 = Type::Scalar(DataType::U32), u8 = Type::Scalar(DataType::U8);
  Expr neg = _Load(f, I(0)), pos = _Load(f, I(1)), zero = _Load(f, I(2)), nan = _Load(f, I(3)),
       nzero = _Load(f, I(4)), third = _Load(f, I(5)), u8v = _Load(f, I(6));
  Expr big = _Load(i, I(0)), m1 = _Load(i, I(1)), wide = _Load(i, I(2));
  Expr t = _Ne(m1, _Const(0, DataType::I32));
  Host hf = Host::Of<float>(
      {-2.7f, 2.7f, 0.0f, std::numeric_limits<float>::quiet_NaN(), -0.0f, 1.0f / 3, 200.5f});
  Host hi = Host::Of<int32_t>({16777217, -1, 0x12345});
  Host ho = Host::Zeros<int32_t>(5), hob = Host::Zeros<uint8_t>(7), hof = Host::Zeros<float>(5);
  Host hod = Host::Zeros<double>(2), hou = Host::Zeros<uint32_t>(2), ho8 = Host::Zeros<uint8_t>(3);
  Host ho16 = Host::Zeros<int16_t>(1), hoh = Host::Zeros<uint16_t>(1),
       hol = Host::Zeros<int64_t>(1);
  std::vector<Stmt> body =
      StoreAll(o, {_Cast(i32, neg), _Cast(i32, pos), _Cast(i32, t), _Cast(i32, _Cast(u8, m1)),
                   _Cast(i32, _Cast(Type::Index(), m1))});
  for (Stmt& s : StoreAll(ob, {_Cast(b, neg), _Cast(b, zero), _Cast(b, nan), _Cast(b, nzero),
                               _Cast(b, m1), _Cast(b, _Const(0, DataType::I32)), _Cast(b, t)}))
    body.push_back(s);
  for (Stmt& s : StoreAll(of, {_Cast(f32, big), _Cast(f32, _Cast(u32, m1)), _Cast(f32, t),
                               _Cast(f32, _Cast(Type::Scalar(DataType::F64), third)),
                               _Cast(f32, _Cast(Type::Scalar(DataType::F16), third))}))
    body.push_back(s);
  body.push_back(_Store(od, I(0), _Cast(Type::Scalar(DataType::F64), _Cast(u32, m1))));
  body.push_back(_Store(od, I(1), _Cast(Type::Scalar(DataType::F64), third)));
  body.push_back(_Store(ou, I(0), _Cast(u32, _Cast(Type::Scalar(DataType::I8), m1))));
  body.push_back(_Store(ou, I(1), _Cast(u32, t)));
  for (Stmt& s : StoreAll(o8, {_Cast(u8, u8v), _Cast(u8, m1), _Cast(u8, t)})) body.push_back(s);
  body.push_back(_Store(
      o16, I(0), _Cast(Type::Scalar(DataType::I16), _Cast(Type::Scalar(DataType::I64), wide))));
  body.push_back(_Store(oh, I(0), _Cast(Type::Scalar(DataType::F16), third)));
  body.push_back(_Store(ol, I(0), _Cast(Type::Scalar(DataType::I64), _Cast(Type::Index(), m1))));
  Launch(Kernel({Buf("f", DataType::F32), Buf("i", DataType::I32), Buf("o", DataType::I32),
                 Buf("ob", DataType::Bool), Buf("of", DataType::F32), Buf("od", DataType::F64),
                 Buf("ou", DataType::U32), Buf("o8", DataType::U8), Buf("o16", DataType::I16),
                 Buf("oh", DataType::F16), Buf("ol", DataType::I64)},
                body),
         {&hf, &hi, &ho, &hob, &hof, &hod, &hou, &ho8, &ho16, &hoh, &hol});
  std::vector<int32_t> want = {-2, 2, 1, 255, -1};
  for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(ho.At<int32_t>(k), want[k]) << "int " << k;
  std::vector<int> bools = {1, 0, 1, 0, 1, 0, 1};
  for (size_t k = 0; k < bools.size(); ++k) EXPECT_EQ(hob.At<uint8_t>(k), bools[k]) << "bool " << k;
  EXPECT_EQ(hof.At<float>(0), 16777216.0f);
  EXPECT_EQ(hof.At<float>(1), 4294967296.0f);
  EXPECT_EQ(hof.At<float>(2), 1.0f);
  EXPECT_EQ(hof.At<float>(3), 1.0f / 3);
  EXPECT_EQ(hof.At<float>(4), lang::HalfToFloat(lang::FloatToHalf(1.0f / 3)));
  EXPECT_EQ(hod.At<double>(0), 4294967295.0);
  EXPECT_EQ(hod.At<double>(1), static_cast<double>(1.0f / 3));
  EXPECT_EQ(hou.At<uint32_t>(0), 0xFFFFFFFFu);
  EXPECT_EQ(hou.At<uint32_t>(1), 1u);
  EXPECT_EQ(ho8.At<uint8_t>(0), 200);
  EXPECT_EQ(ho8.At<uint8_t>(1), 255);
  EXPECT_EQ(ho8.At<uint8_t>(2), 1);
  EXPECT_EQ(ho16.At<int16_t>(0), 0x2345);
  EXPECT_EQ(hoh.At<uint16_t>(0), lang::FloatToHalf(1.0f / 3));
  EXPECT_EQ(hol.At<int64_t>(0), -1);
}

// Every math function, scalar and as a 4-lane vector, against libm (the
// library ones within libmvec's bound, the others exactly).
template <typename T>
void CheckCalls(DataType dtype) {
  using sem::CallFn;
  const std::vector<CallFn> fns = {CallFn::Exp,   CallFn::Log,  CallFn::Sqrt,  CallFn::Pow,
                                   CallFn::Tanh,  CallFn::Sin,  CallFn::Cos,   CallFn::Tan,
                                   CallFn::Sinh,  CallFn::Cosh, CallFn::Asin,  CallFn::Acos,
                                   CallFn::Atan,  CallFn::Erf, CallFn::Fabs, CallFn::Floor, CallFn::Ceil,
                                   CallFn::Round, CallFn::Fma,  CallFn::Mad,  CallFn::Fmod};
  // x in (-1, 1) for asin/acos, y > 0 for pow; -2.5 and 0.5 test round().
  const std::vector<T> xs = {T(0.25), T(0.5), T(-0.5), T(0.75)},
                       ys = {T(1.5), T(2.5), T(0.5), T(3)}, zs = {T(-1), T(0.125), T(3), T(1e-3)};
  Expr x = P("x", dtype), y = P("y", dtype), z = P("z", dtype), o = P("o", dtype);
  std::vector<Stmt> body;
  int slot = 0;
  for (CallFn fn : fns) {
    for (int width : {1, 4}) {
      for (int j = 0; j < (width == 1 ? 4 : 1); ++j) {
        std::vector<Expr> args = {_Load(x, I(j), width), _Load(y, I(j), width),
                                  _Load(z, I(j), width)};
        args.resize(sem::Arity(fn));
        if (fn == CallFn::Log || fn == CallFn::Sqrt) args[0] = _Load(y, I(j), width);
        body.push_back(_Store(o, I(slot), _Call(fn, args)));
        slot += width;
      }
    }
  }
  Host hx = Host::Of<T>(xs), hy = Host::Of<T>(ys), hz = Host::Of<T>(zs), ho = Host::Zeros<T>(slot);
  Launch(Kernel({Buf("x", dtype), Buf("y", dtype), Buf("z", dtype), Buf("o", dtype)}, body),
         {&hx, &hy, &hz, &ho});
  slot = 0;
  for (CallFn fn : fns) {
    for (int k = 0; k < 8; ++k, ++slot) {
      int j = k % 4;
      T arg = fn == CallFn::Log || fn == CallFn::Sqrt ? ys[j] : xs[j];
      T want = testing::CallReference(fn, arg, ys[j], zs[j]);
      T got = ho.At<T>(slot);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << sem::Name(fn) << " lane " << j;
      } else if (fn == CallFn::Mad) {
        EXPECT_NEAR(got, want, std::fabs(want) * 1e-6) << sem::Name(fn) << " lane " << j;
      } else if (!LibmName(fn).empty()) {
        // Library functions may run in libmvec (vector_math.h): within its
        // bound (vector_math_test.cc measures it on many inputs).
        EXPECT_LE(testing::UlpDistance(got, want), 4) << sem::Name(fn) << " lane " << j << ": " << got
                                             << " vs " << want;
      } else {
        EXPECT_EQ(got, want) << sem::Name(fn) << (k < 4 ? " scalar " : " vector lane ") << j;
      }
    }
  }
}

TEST(LlvmEmit, MathCallsF32MatchLibm) { CheckCalls<float>(DataType::F32); }
TEST(LlvmEmit, MathCallsF64MatchLibm) { CheckCalls<double>(DataType::F64); }

TEST(LlvmEmit, HalfArithmeticAndCalls) {
  Expr h = P("h", DataType::F16), o = P("o", DataType::F16), ob = P("ob", DataType::Bool);
  Expr a = _Load(h, I(0)), b = _Load(h, I(1)), c = _Load(h, I(2));
  auto H = [](float f) { return lang::FloatToHalf(f); };
  auto F = [](uint16_t v) { return lang::HalfToFloat(v); };
  std::vector<uint16_t> in = {H(1.5f), H(2.25f), H(1e-3f), H(-0.75f)};
  Host hh = Host::Of<uint16_t>(in), ho = Host::Zeros<uint16_t>(12), hob = Host::Zeros<uint8_t>(2);
  std::vector<Stmt> body = StoreAll(o, {a + b, a * c, b / a, _Min(a, b), _Max(a, b), -a,
                                        _Call(sem::CallFn::Exp, {a}), _Call(sem::CallFn::Tanh, {c}),
                                        _Call(sem::CallFn::Sqrt, {b}), _Float(0.1, DataType::F16)});
  body.push_back(_Store(o, I(10), _Load(h, I(1), 2) + _Load(h, I(0), 2)));  // vector of half
  body.push_back(_Store(ob, I(0), a < b));
  body.push_back(_Store(ob, I(1), _Eq(a, b)));
  Launch(
      Kernel({Buf("h", DataType::F16), Buf("o", DataType::F16), Buf("ob", DataType::Bool)}, body),
      {&hh, &ho, &hob});
  float fa = F(in[0]), fb = F(in[1]), fc = F(in[2]), fd = F(in[3]);
  std::vector<uint16_t> want = {
      H(fa + fb),      H(fa * fc),       H(fb / fa),       H(fa),   H(fb),      H(-fa),
      H(std::exp(fa)), H(std::tanh(fc)), H(std::sqrt(fb)), H(0.1f), H(fb + fa), H(fc + fb)};
  for (size_t k = 0; k < want.size(); ++k)
    EXPECT_EQ(ho.At<uint16_t>(k), want[k])
        << "half op " << k << ": " << F(ho.At<uint16_t>(k)) << " vs " << F(want[k]);
  EXPECT_EQ(hob.At<uint8_t>(0), 1);
  EXPECT_EQ(hob.At<uint8_t>(1), 0);
  (void)fd;
}

TEST(LlvmEmit, DoubleArithmetic) {
  Expr d = P("d", DataType::F64), o = P("o", DataType::F64);
  Expr a = _Load(d, I(0)), b = _Load(d, I(1));
  Host hd = Host::Of<double>({0.1, 0.2}), ho = Host::Zeros<double>(4);
  Launch(Kernel({Buf("d", DataType::F64), Buf("o", DataType::F64)},
                StoreAll(o, {a + b, a / b, a - b, _Fma(a, b, a)})),
         {&hd, &ho});
  EXPECT_EQ(ho.At<double>(0), 0.1 + 0.2);
  EXPECT_EQ(ho.At<double>(1), 0.1 / 0.2);
  EXPECT_EQ(ho.At<double>(2), 0.1 - 0.2);
  EXPECT_EQ(ho.At<double>(3), std::fma(0.1, 0.2, 0.1));
}

TEST(LlvmEmit, LimitConstants) {
  using sem::LimitKind;
  struct Case {
    DataType dtype;
    std::vector<double> want;  // min, max, zero, one
  };
  const std::vector<Case> cases = {
      {DataType::I8, {-128, 127, 0, 1}},
      {DataType::U8, {0, 255, 0, 1}},
      {DataType::I16, {-32768, 32767, 0, 1}},
      {DataType::U16, {0, 65535, 0, 1}},
      {DataType::I32, {-2147483648.0, 2147483647.0, 0, 1}},
      {DataType::U32, {0, 4294967295.0, 0, 1}},
      {DataType::F16, {-65504, 65504, 0, 1}},
      {DataType::F32,
       {-std::numeric_limits<float>::max(), std::numeric_limits<float>::max(), 0, 1}},
      {DataType::F64,
       {-std::numeric_limits<double>::max(), std::numeric_limits<double>::max(), 0, 1}},
      {DataType::Bool, {0, 1, 0, 1}},
  };
  std::vector<sem::Param> params;
  std::vector<Stmt> body;
  std::vector<Host> hosts;
  for (const Case& c : cases) {
    std::string name = fmt::format("o_{}", lang::Name(c.dtype));
    params.push_back(Buf(name, c.dtype));
    for (LimitKind k : {LimitKind::Min, LimitKind::Max, LimitKind::Zero, LimitKind::One})
      body.push_back(
          _Store(P(name, c.dtype), I(static_cast<int>(k)), _LimitConst(k, Type::Scalar(c.dtype))));
    hosts.push_back(Host::Zeros<uint8_t>(4 * static_cast<size_t>(lang::ByteSize(c.dtype))));
  }
  // 64-bit and index limits, exactly.
  params.push_back(Buf("o_i64", DataType::I64));
  params.push_back(Buf("o_u64", DataType::U64));
  params.push_back({"o_index", Type::Pointer(Type::Index(), AddressSpace::Global), false});
  for (LimitKind k : {LimitKind::Min, LimitKind::Max}) {
    int at = static_cast<int>(k);
    body.push_back(
        _Store(P("o_i64", DataType::I64), I(at), _LimitConst(k, Type::Scalar(DataType::I64))));
    body.push_back(
        _Store(P("o_u64", DataType::U64), I(at), _LimitConst(k, Type::Scalar(DataType::U64))));
    body.push_back(_Store(_Var("o_index", Type::Pointer(Type::Index(), AddressSpace::Global)),
                          I(at), _LimitConst(k, Type::Index())));
  }
  hosts.push_back(Host::Zeros<int64_t>(2));
  hosts.push_back(Host::Zeros<uint64_t>(2));
  hosts.push_back(Host::Zeros<int32_t>(2));
  std::vector<Host*> ptrs;
  for (Host& h : hosts) ptrs.push_back(&h);
  Launch(Kernel(params, body), ptrs);
  for (size_t c = 0; c < cases.size(); ++c) {
    for (size_t k = 0; k < 4; ++k) {
      const Host& h = hosts[c];
      double got = 0;
      switch (cases[c].dtype) {
        case DataType::I8: got = h.At<int8_t>(k); break;
        case DataType::U8: got = h.At<uint8_t>(k); break;
        case DataType::I16: got = h.At<int16_t>(k); break;
        case DataType::U16: got = h.At<uint16_t>(k); break;
        case DataType::I32: got = h.At<int32_t>(k); break;
        case DataType::U32: got = h.At<uint32_t>(k); break;
        case DataType::F16: got = lang::HalfToFloat(h.At<uint16_t>(k)); break;
        case DataType::F32: got = h.At<float>(k); break;
        case DataType::F64: got = h.At<double>(k); break;
        case DataType::Bool: got = h.At<uint8_t>(k); break;
        default: break;
      }
      EXPECT_EQ(got, cases[c].want[k]) << lang::Name(cases[c].dtype) << " limit " << k;
    }
  }
  size_t n = cases.size();
  EXPECT_EQ(hosts[n].At<int64_t>(0), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(hosts[n].At<int64_t>(1), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(hosts[n + 1].At<uint64_t>(0), 0u);
  EXPECT_EQ(hosts[n + 1].At<uint64_t>(1), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(hosts[n + 2].At<int32_t>(0), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(hosts[n + 2].At<int32_t>(1), std::numeric_limits<int32_t>::max());
}

}  // namespace
}  // namespace tilec::hal::cpu
