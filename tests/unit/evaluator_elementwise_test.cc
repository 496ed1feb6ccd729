// The reference evaluator's elementwise and special operations, and whole
// programs (inputs, temporaries, empty tensors), on Programs built by hand:
// every expected value is computed independently here.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "support/error.h"
#include "tests/unit/evaluator_builders.h"
#include "tile_lang/evaluator.h"

namespace tilec::lang {
namespace {

using namespace eval_test;  // NOLINT

// ---- elementwise ------------------------------------------------------------

// Runs out = fn(a, b) with the given compute and output types.
Tensor Binary(ElemFn fn, const Tensor& a, const Tensor& b, DataType compute, DataType out) {
  Builder p;
  p.In("A", a.shape()).In("B", b.shape()).Out("O", S(out, a.shape().dims));
  p.Do(Elem("O", fn, {T("A"), T("B")}, compute));
  return Eval1(p.program(), {{"A", a}, {"B", b}}, "O");
}
Tensor Unary(ElemFn fn, const Tensor& a, DataType compute, DataType out) {
  Builder p;
  p.In("A", a.shape()).Out("O", S(out, a.shape().dims));
  p.Do(Elem("O", fn, {T("A")}, compute));
  return Eval1(p.program(), {{"A", a}}, "O");
}

TEST(EvalElementwise, IntegerDivisionAndModulo) {
  const auto i32 = DataType::I32;
  const Tensor a = MakeInt(S(i32, {7}), {7, -7, 7, -7, 5, kI32Min, 0});
  const Tensor b = MakeInt(S(i32, {7}), {2, 2, -2, -2, 0, -1, 0});
  EXPECT_EQ(Ints(Binary(ElemFn::Div, a, b, i32, i32)),
            (std::vector<int64_t>{3, -3, -3, 3, 0, kI32Min, 0}));
  EXPECT_EQ(Ints(Binary(ElemFn::Mod, a, b, i32, i32)),
            (std::vector<int64_t>{1, -1, 1, -1, 0, 0, 0}));
  const Tensor ua = MakeInt(S(DataType::U8, {2}), {250, 7});
  const Tensor ub = MakeInt(S(DataType::U8, {2}), {7, 0});
  EXPECT_EQ(Ints(Binary(ElemFn::Div, ua, ub, DataType::U8, DataType::U8)),
            (std::vector<int64_t>{35, 0}));
  EXPECT_EQ(Ints(Binary(ElemFn::Mod, ua, ub, DataType::U8, DataType::U8)),
            (std::vector<int64_t>{5, 0}));
}

TEST(EvalElementwise, SignedOverflowWraps) {
  const auto i32 = DataType::I32;
  EXPECT_EQ(Ints(Binary(ElemFn::Add, MakeInt(S(i32, {2}), {kI32Max, kI32Min}),
                        MakeInt(S(i32, {2}), {1, -1}), i32, i32)),
            (std::vector<int64_t>{kI32Min, kI32Max}));
  EXPECT_EQ(Ints(Binary(ElemFn::Mul, MakeInt(S(i32, {2}), {65536, 46341}),
                        MakeInt(S(i32, {2}), {65536, 46341}), i32, i32)),
            (std::vector<int64_t>{0, 2147488281LL - 4294967296LL}));
  EXPECT_EQ(Ints(Binary(ElemFn::Sub, MakeInt(S(i32, {1}), {kI32Min}), MakeInt(S(i32, {1}), {1}),
                        i32, i32)),
            (std::vector<int64_t>{kI32Max}));
  EXPECT_EQ(Ints(Binary(ElemFn::Mul, MakeInt(S(DataType::U16, {1}), {65535}),
                        MakeInt(S(DataType::U16, {1}), {65535}), DataType::U16, DataType::U16)),
            (std::vector<int64_t>{1}));
  const int64_t i64max = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(Ints(Binary(ElemFn::Add, MakeInt(S(DataType::I64, {1}), {i64max}),
                        MakeInt(S(DataType::I64, {1}), {1}), DataType::I64, DataType::I64)),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::min()}));
  EXPECT_EQ(Ints(Unary(ElemFn::Neg, MakeInt(S(i32, {2}), {kI32Min, 5}), i32, i32)),
            (std::vector<int64_t>{kI32Min, -5}));
  EXPECT_EQ(Ints(Unary(ElemFn::Abs, MakeInt(S(i32, {2}), {kI32Min, -5}), i32, i32)),
            (std::vector<int64_t>{kI32Min, 5}));
}

TEST(EvalElementwise, ShiftsTakeCountModuloWidth) {
  const auto i32 = DataType::I32;
  EXPECT_EQ(Ints(Binary(ElemFn::Shl, MakeInt(S(i32, {4}), {1, 1, 1, -1}),
                        MakeInt(S(i32, {4}), {33, 31, -1, 4}), i32, i32)),
            (std::vector<int64_t>{2, kI32Min, kI32Min, -16}));
  EXPECT_EQ(Ints(Binary(ElemFn::Shr, MakeInt(S(i32, {4}), {-8, -8, 256, kI32Min}),
                        MakeInt(S(i32, {4}), {1, 33, 4, 31}), i32, i32)),
            (std::vector<int64_t>{-4, -4, 16, -1}));
  const auto u8 = DataType::U8;
  EXPECT_EQ(Ints(Binary(ElemFn::Shl, MakeInt(S(u8, {3}), {1, 0x80, 200}),
                        MakeInt(S(u8, {3}), {9, 7, 1}), u8, u8)),
            (std::vector<int64_t>{2, 0, 144}));
  EXPECT_EQ(Ints(Binary(ElemFn::Shr, MakeInt(S(u8, {3}), {1, 0x80, 200}),
                        MakeInt(S(u8, {3}), {9, 7, 1}), u8, u8)),
            (std::vector<int64_t>{0, 1, 100}));
}

TEST(EvalElementwise, BitOps) {
  const auto i32 = DataType::I32;
  const Tensor a = MakeInt(S(i32, {2}), {-1, 12});
  const Tensor b = MakeInt(S(i32, {2}), {255, 10});
  EXPECT_EQ(Ints(Binary(ElemFn::BitAnd, a, b, i32, i32)), (std::vector<int64_t>{255, 8}));
  EXPECT_EQ(Ints(Binary(ElemFn::BitOr, a, b, i32, i32)), (std::vector<int64_t>{-1, 14}));
  EXPECT_EQ(Ints(Binary(ElemFn::BitXor, a, b, i32, i32)), (std::vector<int64_t>{-256, 6}));
  EXPECT_EQ(Ints(Unary(ElemFn::BitNot, a, i32, i32)), (std::vector<int64_t>{0, -13}));
}

TEST(EvalElementwise, BitOpOnFloatIsUserError) {
  const Tensor a = Make(S(DataType::F32, {1}), {1});
  EXPECT_THROW(Binary(ElemFn::Shl, a, a, DataType::F32, DataType::F32), UserError);
}

// Operands are converted to compute_type first: 300 as i8 is 44; 44 + 100
// wraps in i8 to -112.
TEST(EvalElementwise, OperandsConvertToComputeType) {
  const Tensor a = MakeInt(S(DataType::I32, {1}), {300});
  const Tensor b = MakeInt(S(DataType::I32, {1}), {100});
  EXPECT_EQ(Ints(Binary(ElemFn::Add, a, b, DataType::I8, DataType::I32)),
            (std::vector<int64_t>{-112}));
  // f32 0.1 rounded to f16 when the computation is in f16.
  const Tensor f = Make(S(DataType::F32, {1}), {0.1});
  EXPECT_EQ(Doubles(Unary(ElemFn::Ident, f, DataType::F16, DataType::F32)),
            (std::vector<double>{0.0999755859375}));
}

TEST(EvalElementwise, CastsFloatToIntSaturateAndNanIsZero) {
  const Tensor f = Make(S(DataType::F32, {7}), {kNan, 1e10, -1e10, 2.9, -2.9, kInf, -kInf});
  EXPECT_EQ(Ints(Unary(ElemFn::Cast, f, DataType::F32, DataType::I32)),
            (std::vector<int64_t>{0, kI32Max, kI32Min, 2, -2, kI32Max, kI32Min}));
  const Tensor d = Make(S(DataType::F64, {5}), {-3, 256, 255.5, 1e300, -0.9});
  EXPECT_EQ(Ints(Unary(ElemFn::Cast, d, DataType::F64, DataType::U8)),
            (std::vector<int64_t>{0, 255, 255, 255, 0}));
  const Tensor big = Make(S(DataType::F64, {2}), {1e19, -1e19});
  EXPECT_EQ(Ints(Unary(ElemFn::Cast, big, DataType::F64, DataType::I64)),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::max(),
                                  std::numeric_limits<int64_t>::min()}));
  // A computation whose float result is out of range saturates on store.
  const Tensor x = Make(S(DataType::F32, {2}), {1e20, -1e20});
  const Tensor ten = Make(S(DataType::F32, {2}), {10, 10});
  EXPECT_EQ(Ints(Binary(ElemFn::Mul, x, ten, DataType::F32, DataType::I16)),
            (std::vector<int64_t>{32767, -32768}));
}

TEST(EvalElementwise, CastsToBoolAndBetweenIntegers) {
  const Tensor i = MakeInt(S(DataType::I32, {4}), {0, 2, -1, 256});
  EXPECT_EQ(Ints(Unary(ElemFn::Cast, i, DataType::I32, DataType::Bool)),
            (std::vector<int64_t>{0, 1, 1, 1}));
  const Tensor f = Make(S(DataType::F32, {3}), {kNan, 0.0, -0.0});
  EXPECT_EQ(Ints(Unary(ElemFn::Cast, f, DataType::F32, DataType::Bool)),
            (std::vector<int64_t>{1, 0, 0}));
  const Tensor w = MakeInt(S(DataType::I32, {3}), {200, -129, 65535});
  EXPECT_EQ(Ints(Unary(ElemFn::Cast, w, DataType::I32, DataType::I8)),
            (std::vector<int64_t>{-56, 127, -1}));
  EXPECT_EQ(Ints(Unary(ElemFn::Cast, w, DataType::I32, DataType::U16)),
            (std::vector<int64_t>{200, 65407, 65535}));
  const Tensor h = MakeInt(S(DataType::I32, {2}), {2049, 70000});
  const Tensor hf = Unary(ElemFn::Cast, h, DataType::I32, DataType::F16);
  EXPECT_EQ(hf.GetDouble(0), 2048.0);
  EXPECT_TRUE(std::isinf(hf.GetDouble(1)));
}

TEST(EvalElementwise, HalfComputesInFloatAndRoundsOnStore) {
  const auto f16 = DataType::F16;
  const Tensor one = Make(S(f16, {3}), {1.0, 1.0, std::ldexp(1.0, -24)});
  const Tensor eps = Make(S(f16, {3}), {std::ldexp(1.0, -11), std::ldexp(3.0, -11), std::ldexp(1.0, -24)});
  const Tensor sum = Binary(ElemFn::Add, one, eps, f16, f16);
  EXPECT_EQ(sum.as<uint16_t>()[0], 0x3c00);  // 1 + 2^-11: tie, to even
  EXPECT_EQ(sum.as<uint16_t>()[1], 0x3c02);  // 1 + 3 * 2^-11: tie, to even
  EXPECT_EQ(sum.as<uint16_t>()[2], 0x0002);  // subnormal 2^-23
  // 65504 + 65504 does not fit f16 but is exact in f32.
  const Tensor mx = Make(S(f16, {1}), {65504});
  EXPECT_EQ(Binary(ElemFn::Add, mx, mx, DataType::F32, DataType::F32).GetDouble(0), 131008.0);
  EXPECT_TRUE(std::isinf(Binary(ElemFn::Add, mx, mx, f16, f16).GetDouble(0)));
}

TEST(EvalElementwise, ComparisonsAndLogicYieldZeroOrOne) {
  const Tensor a = Make(S(DataType::F32, {4}), {1, 2, kNan, -0.0});
  const Tensor b = Make(S(DataType::F32, {4}), {2, 2, kNan, 0.0});
  const auto f32 = DataType::F32, bl = DataType::Bool;
  EXPECT_EQ(Ints(Binary(ElemFn::CmpLt, a, b, f32, bl)), (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(Ints(Binary(ElemFn::CmpEq, a, b, f32, bl)), (std::vector<int64_t>{0, 1, 0, 1}));
  EXPECT_EQ(Ints(Binary(ElemFn::CmpNe, a, b, f32, bl)), (std::vector<int64_t>{1, 0, 1, 0}));
  EXPECT_EQ(Ints(Binary(ElemFn::CmpGe, a, b, f32, bl)), (std::vector<int64_t>{0, 1, 0, 1}));
  EXPECT_EQ(Ints(Binary(ElemFn::CmpEq, a, b, f32, DataType::I32)),
            (std::vector<int64_t>{0, 1, 0, 1}));
  const Tensor p = MakeInt(S(DataType::I32, {4}), {0, 3, 0, -2});
  const Tensor q = MakeInt(S(DataType::I32, {4}), {0, 0, 5, 7});
  EXPECT_EQ(Ints(Binary(ElemFn::LogicalAnd, p, q, DataType::I32, bl)),
            (std::vector<int64_t>{0, 0, 0, 1}));
  EXPECT_EQ(Ints(Binary(ElemFn::LogicalOr, p, q, DataType::I32, bl)),
            (std::vector<int64_t>{0, 1, 1, 1}));
  EXPECT_EQ(Ints(Unary(ElemFn::LogicalNot, p, DataType::I32, bl)),
            (std::vector<int64_t>{1, 0, 1, 0}));
}

// The condition is tested in its own type (0.5 is true), branches in compute_type.
TEST(EvalElementwise, CondTestsConditionInItsOwnType) {
  Builder p;
  p.In("C", S(DataType::F32, {4})).Out("O", S(DataType::I32, {4}));
  p.Do(Elem("O", ElemFn::Cond, {T("C"), SInt(1), SInt(2)}, DataType::I32));
  const Tensor c = Make(S(DataType::F32, {4}), {0.5, 0.0, kNan, -3});
  EXPECT_EQ(Ints(Eval1(p.program(), {{"C", c}}, "O")), (std::vector<int64_t>{1, 2, 1, 1}));
}

TEST(EvalElementwise, MathFunctions) {
  const auto f32 = DataType::F32, f64 = DataType::F64;
  EXPECT_EQ(Doubles(Unary(ElemFn::Round, Make(S(f32, {4}), {2.5, -2.5, 0.49999997, 1.5}), f32, f32)),
            (std::vector<double>{3, -3, 0, 2}));
  EXPECT_EQ(Doubles(Unary(ElemFn::Floor, Make(S(f32, {2}), {-1.5, 1.5}), f32, f32)),
            (std::vector<double>{-2, 1}));
  EXPECT_EQ(Doubles(Unary(ElemFn::Ceil, Make(S(f32, {2}), {-1.5, 1.5}), f32, f32)),
            (std::vector<double>{-1, 2}));
  EXPECT_EQ(Doubles(Unary(ElemFn::Sigmoid, Make(S(f32, {1}), {0}), f32, f32)),
            (std::vector<double>{0.5}));
  const Tensor x = Make(S(f64, {3}), {0.3, 1.7, 2.9});
  const auto e = Doubles(Unary(ElemFn::Exp, x, f64, f64));
  const auto l = Doubles(Unary(ElemFn::Log, x, f64, f64));
  const auto t = Doubles(Unary(ElemFn::Tanh, x, f64, f64));
  const auto s = Doubles(Unary(ElemFn::Sigmoid, x, f64, f64));
  for (int i = 0; i < 3; ++i) {
    const double v = x.GetDouble(i);
    EXPECT_EQ(e[i], std::exp(v));
    EXPECT_EQ(l[i], std::log(v));
    EXPECT_EQ(t[i], std::tanh(v));
    EXPECT_EQ(s[i], 1.0 / (1.0 + std::exp(-v)));
  }
  // f32 math runs in float, not double.
  const Tensor y = Make(S(f32, {1}), {0.7});
  EXPECT_EQ(Unary(ElemFn::Exp, y, f32, f32).GetDouble(0), static_cast<double>(std::exp(0.7f)));
  EXPECT_EQ(Doubles(Binary(ElemFn::Pow, Make(S(f32, {1}), {2}), Make(S(f32, {1}), {10}), f32, f32)),
            (std::vector<double>{1024}));
  // Integer compute: sqrt(10) = 3 (computed in double, converted back).
  EXPECT_EQ(Ints(Unary(ElemFn::Sqrt, MakeInt(S(DataType::I32, {1}), {10}), DataType::I32,
                       DataType::I32)),
            (std::vector<int64_t>{3}));
  // min/max: a NaN operand loses.
  EXPECT_EQ(Doubles(Binary(ElemFn::Max, Make(S(f32, {2}), {kNan, 1}), Make(S(f32, {2}), {3, kNan}),
                           f32, f32)),
            (std::vector<double>{3, 1}));
  EXPECT_EQ(Ints(Binary(ElemFn::Min, MakeInt(S(DataType::I32, {2}), {-4, 9}),
                        MakeInt(S(DataType::I32, {2}), {3, 2}), DataType::I32, DataType::I32)),
            (std::vector<int64_t>{-4, 2}));
}

TEST(EvalElementwise, NumpyBroadcasting) {
  const auto i32 = DataType::I32;
  const Tensor a = MakeInt(S(i32, {2, 3}), {1, 2, 3, 4, 5, 6});
  const Tensor row = MakeInt(S(i32, {3}), {10, 20, 30});
  const Tensor col = MakeInt(S(i32, {2, 1}), {100, 200});
  const Tensor scalar = MakeInt(S(i32, {}), {1000});
  Builder p;
  p.In("A", a.shape()).In("R", row.shape()).In("C", col.shape()).In("S", scalar.shape());
  p.Tmp("T1", S(i32, {2, 3})).Tmp("T2", S(i32, {2, 3})).Out("O", S(i32, {2, 3}));
  p.Out("Outer", S(i32, {2, 3})).Out("Up", S(i32, {2, 2, 3}));
  p.Do(Elem("T1", ElemFn::Add, {T("A"), T("R")}, i32));
  p.Do(Elem("T2", ElemFn::Add, {T("T1"), T("C")}, i32));
  p.Do(Elem("O", ElemFn::Add, {T("T2"), T("S")}, i32));
  p.Do(Elem("Outer", ElemFn::Mul, {T("C"), T("R")}, i32));
  p.Do(Elem("Up", ElemFn::Sub, {T("A"), SInt(1)}, i32));
  const auto out = Evaluate(p.program(), {{"A", a}, {"R", row}, {"C", col}, {"S", scalar}});
  std::vector<int64_t> want, outer, up;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      want.push_back(a.GetInt(i * 3 + j) + row.GetInt(j) + col.GetInt(i) + 1000);
      outer.push_back(col.GetInt(i) * row.GetInt(j));
    }
  for (int k = 0; k < 2; ++k)
    for (int i = 0; i < 6; ++i) up.push_back(a.GetInt(i) - 1);
  EXPECT_EQ(Ints(out.at("O")), want);
  EXPECT_EQ(Ints(out.at("Outer")), outer);
  EXPECT_EQ(Ints(out.at("Up")), up);
  EXPECT_EQ(out.size(), 3u);  // temporaries are not returned
}

TEST(EvalElementwise, FloatScalarOperand) {
  Builder p;
  p.In("A", S(DataType::F32, {2})).Out("O", S(DataType::F32, {2}));
  p.Do(Elem("O", ElemFn::Mul, {T("A"), SFloat(0.5)}, DataType::F32));
  EXPECT_EQ(Doubles(Eval1(p.program(), {{"A", Make(S(DataType::F32, {2}), {3, -5})}}, "O")),
            (std::vector<double>{1.5, -2.5}));
}

TEST(EvalElementwise, IndexGivesCoordinates) {
  for (int axis : {0, 1}) {
    Builder p;
    p.In("A", S(DataType::F32, {2, 3})).Out("O", S(DataType::I32, {2, 3}));
    ElementwiseOp op = Elem("O", ElemFn::Index, {T("A")}, DataType::I32);
    op.axis = axis;
    p.Do(op);
    const Tensor out = Eval1(p.program(), {{"A", Tensor(S(DataType::F32, {2, 3}))}}, "O");
    const std::vector<int64_t> want = axis == 0 ? std::vector<int64_t>{0, 0, 0, 1, 1, 1}
                                                : std::vector<int64_t>{0, 1, 2, 0, 1, 2};
    EXPECT_EQ(Ints(out), want);
  }
}

// ---- special ops ------------------------------------------------------------

TEST(EvalSpecial, GatherClampsIndices) {
  const Tensor d = Make(S(DataType::F32, {4, 2}), {0, 1, 2, 3, 4, 5, 6, 7});
  const Tensor idx = MakeInt(S(DataType::I32, {2, 2}), {2, -5, 9, 1});
  Builder p;
  p.In("D", d.shape()).In("I", idx.shape()).Out("O", S(DataType::F32, {2, 2, 2}));
  p.Do(Special(SpecialFn::Gather, {"O"}, {"D", "I"}));
  EXPECT_EQ(Doubles(Eval1(p.program(), {{"D", d}, {"I", idx}}, "O")),
            (std::vector<double>{4, 5, 0, 1, 6, 7, 2, 3}));
}

TEST(EvalSpecial, ScatterClampsAndAccumulates) {
  const Tensor e = Make(S(DataType::F32, {4, 2}), {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor idx = MakeInt(S(DataType::I32, {4}), {1, -1, 7, 1});
  Builder p;
  p.In("E", e.shape()).In("I", idx.shape()).In("V", S(DataType::F32, {4}));
  p.Out("O", S(DataType::F32, {4, 2}));
  p.Do(Special(SpecialFn::Scatter, {"O"}, {"E", "I", "V"}));
  // out[1] = E[0] + E[3]; out[0] = E[1]; out[3] = E[2]; out[2] untouched.
  EXPECT_EQ(Doubles(Eval1(p.program(), {{"E", e}, {"I", idx}, {"V", Tensor(S(DataType::F32, {4}))}},
                        "O")),
            (std::vector<double>{3, 4, 8, 10, 0, 0, 5, 6}));
}

TEST(EvalSpecial, ReshapeAndShape) {
  const Tensor t = MakeInt(S(DataType::I32, {2, 3}), {1, 2, 3, 4, 5, 6});
  Builder p;
  p.In("T", t.shape()).Out("R", S(DataType::I32, {3, 2})).Out("Sh", S(DataType::I32, {2}));
  p.Do(Special(SpecialFn::Reshape, {"R"}, {"T"}));
  p.Do(Special(SpecialFn::Shape, {"Sh"}, {"T"}));
  const auto out = Evaluate(p.program(), {{"T", t}});
  EXPECT_EQ(Ints(out.at("R")), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(out.at("R").shape().dims, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Ints(out.at("Sh")), (std::vector<int64_t>{2, 3}));
}

TEST(EvalSpecial, ReshapeWithWrongCountIsUserError) {
  Builder p;
  p.In("T", S(DataType::I32, {2, 3})).Out("R", S(DataType::I32, {4}));
  p.Do(Special(SpecialFn::Reshape, {"R"}, {"T"}));
  EXPECT_THROW(Evaluate(p.program(), {{"T", Tensor(S(DataType::I32, {2, 3}))}}), UserError);
}

// taus88 written out again, stepping one column's three streams.
struct Taus88 {
  uint32_t s1, s2, s3;
  uint32_t Next() {
    s1 = ((s1 & 0xFFFFFFFEu) << 12) ^ (((s1 << 13) ^ s1) >> 19);
    s2 = ((s2 & 0xFFFFFFF8u) << 4) ^ (((s2 << 2) ^ s2) >> 25);
    s3 = ((s3 & 0xFFFFFFF0u) << 17) ^ (((s3 << 3) ^ s3) >> 11);
    return s1 ^ s2 ^ s3;
  }
};

TEST(EvalSpecial, PrngStepIsTaus88PerColumn) {
  const int64_t kCols = 2048;
  Tensor state(S(DataType::U32, {3, kCols}));
  for (int64_t i = 0; i < state.size(); ++i)
    state.as<uint32_t>()[i] = static_cast<uint32_t>(i * 2654435761u + 987654321u);
  Builder p;
  p.In("S", state.shape()).Out("Val", S(DataType::F32, {2, 3000})).Out("NS", state.shape());
  p.Do(Special(SpecialFn::PrngStep, {"Val", "NS"}, {"S"}));
  const auto out = Evaluate(p.program(), {{"S", state}});
  const Tensor& val = out.at("Val");
  const Tensor& ns = out.at("NS");
  const uint32_t* s = state.as<uint32_t>();
  for (int64_t t = 0; t < kCols; ++t) {
    Taus88 g{s[t], s[kCols + t], s[2 * kCols + t]};
    for (int64_t i = t; i < 6000; i += kCols) {
      const float want = static_cast<float>(static_cast<double>(g.Next()) / 4294967296.0);
      ASSERT_EQ(val.as<float>()[i], want) << i;
    }
    EXPECT_EQ(ns.as<uint32_t>()[t], g.s1);
    EXPECT_EQ(ns.as<uint32_t>()[kCols + t], g.s2);
    EXPECT_EQ(ns.as<uint32_t>()[2 * kCols + t], g.s3);
  }
  for (int64_t i = 0; i < val.size(); ++i) {
    EXPECT_GE(val.as<float>()[i], 0.0f);
    EXPECT_LE(val.as<float>()[i], 1.0f);
  }
  // Deterministic: the same state gives the same numbers.
  const auto again = Evaluate(p.program(), {{"S", state}});
  EXPECT_EQ(std::memcmp(again.at("Val").data(), val.data(), val.bytes()), 0);
}

// ---- the program as a whole --------------------------------------------------

Builder ConvSignature() {
  Builder p;
  p.In("D", S(DataType::F32, {1, 56, 56, 64})).Out("O", S(DataType::F32, {1}));
  p.Do(Contraction("O", {K(0)}, AggOp::Sum, CombOp::None, {{"D", {K(0), K(0), K(0), K(0)}}}, {}));
  return p;
}

TEST(Evaluate, InputShapeMismatchIsUserError) {
  const Builder p = ConvSignature();
  try {
    Evaluate(p.program(), {{"D", Tensor(S(DataType::F32, {1, 56, 56}))}});
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.message(),
              "input 'D' has shape f32[1, 56, 56] but the program was bound to f32[1, 56, 56, 64]");
  }
  try {
    Evaluate(p.program(), {{"D", Tensor(S(DataType::F64, {1, 56, 56, 64}))}});
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.message(),
              "input 'D' has shape f64[1, 56, 56, 64] but the program was bound to f32[1, 56, 56, "
              "64]");
  }
}

TEST(Evaluate, MissingAndExtraInputsAreUserErrors) {
  const Builder p = ConvSignature();
  try {
    Evaluate(p.program(), {});
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.message(), "missing input 'D' (the program was bound to f32[1, 56, 56, 64])");
  }
  try {
    Evaluate(p.program(), {{"D", Tensor(S(DataType::F32, {1, 56, 56, 64}))},
                           {"E", Tensor(S(DataType::F32, {1}))}});
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.message(), "unexpected input 'E'; the program's inputs are: D");
  }
}

// Constant-index contraction: O[0] = +(D[0, 0, 0, 0]) reads exactly one element.
TEST(Evaluate, ConstantIndices) {
  const Builder p = ConvSignature();
  Tensor d(S(DataType::F32, {1, 56, 56, 64}));
  d.SetDouble(0, 4.5);
  d.SetDouble(1, 100);
  EXPECT_EQ(Eval1(p.program(), {{"D", d}}, "O").GetDouble(0), 4.5);
}

// A temporary read by two later ops, and an output also read by a later op.
TEST(Evaluate, TemporariesLiveUntilTheirLastUse) {
  const auto i32 = DataType::I32;
  Builder p;
  p.In("A", S(i32, {3})).Tmp("T", S(i32, {3})).Out("U", S(i32, {3})).Out("W", S(i32, {}));
  p.Tmp("Dead", S(i32, {3}));
  p.Do(Elem("T", ElemFn::Mul, {T("A"), SInt(2)}, i32));
  p.Do(Elem("Dead", ElemFn::Neg, {T("A")}, i32));
  p.Do(Elem("U", ElemFn::Add, {T("T"), SInt(1)}, i32));
  p.Do(Contraction("W", {}, AggOp::Sum, CombOp::Mul, {{"T", {V("i")}}, {"U", {V("i")}}},
                   {{"i", 0, 2}}));
  const Tensor a = MakeInt(S(i32, {3}), {1, 2, 3});
  const auto out = Evaluate(p.program(), {{"A", a}});
  EXPECT_EQ(out.size(), 2u);
  EXPECT_EQ(Ints(out.at("U")), (std::vector<int64_t>{3, 5, 7}));
  EXPECT_EQ(out.at("W").GetInt(0), 2 * 3 + 4 * 5 + 6 * 7);
}

TEST(Evaluate, OutputThatIsAnInput) {
  Builder p;
  p.In("A", S(DataType::F32, {2})).Out("A", S(DataType::F32, {2}));
  const Tensor a = Make(S(DataType::F32, {2}), {1, 2});
  EXPECT_EQ(Doubles(Eval1(p.program(), {{"A", a}}, "A")), (std::vector<double>{1, 2}));
}

TEST(Evaluate, EmptyTensors) {
  Builder p;
  p.In("A", S(DataType::F32, {0, 3})).Out("O", S(DataType::F32, {3})).Out("E", S(DataType::F32, {0, 3}));
  p.Do(Contraction("O", {V("j")}, AggOp::Max, CombOp::None, {{"A", {V("i"), V("j")}}},
                   {{"i", 0, -1}, {"j", 0, 2}}));
  p.Do(Elem("E", ElemFn::Exp, {T("A")}, DataType::F32));
  const auto out = Evaluate(p.program(), {{"A", Tensor(S(DataType::F32, {0, 3}))}});
  EXPECT_EQ(Doubles(out.at("O")), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(out.at("E").size(), 0);
}

}  // namespace
}  // namespace tilec::lang
