// Rational and Polynomial arithmetic, names of ops, and the layout helpers the
// binder gives every tensor.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "support/error.h"
#include "tile_lang/layout.h"
#include "tile_lang/program.h"

namespace tilec::lang {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(Rational, NormalizesSignAndGcd) {
  Rational r(6, -4);
  EXPECT_EQ(r.num, -3);
  EXPECT_EQ(r.den, 2);
  EXPECT_EQ(Rational(0, -7), Rational(0));
  EXPECT_EQ(Rational(0, -7).den, 1);
  EXPECT_EQ(Rational(-10, -5), Rational(2));
  EXPECT_TRUE(Rational(8, 4).IsInteger());
  EXPECT_FALSE(Rational(1, 3).IsInteger());
}

TEST(Rational, Arithmetic) {
  EXPECT_EQ(Rational(1, 2) + Rational(1, 3), Rational(5, 6));
  EXPECT_EQ(Rational(1, 2) - Rational(1, 3), Rational(1, 6));
  EXPECT_EQ(Rational(2, 3) * Rational(3, 4), Rational(1, 2));
  EXPECT_EQ(Rational(2, 3) / Rational(-4, 3), Rational(-1, 2));
  EXPECT_EQ(-Rational(5, 7), Rational(-5, 7));
  EXPECT_EQ(Rational(1, 2) + Rational(1, 2), Rational(1));
}

TEST(Rational, FloorAndCeil) {
  EXPECT_EQ(Rational(7, 2).Floor(), 3);
  EXPECT_EQ(Rational(7, 2).Ceil(), 4);
  EXPECT_EQ(Rational(-7, 2).Floor(), -4);
  EXPECT_EQ(Rational(-7, 2).Ceil(), -3);
  EXPECT_EQ(Rational(-6, 2).Floor(), -3);
  EXPECT_EQ(Rational(-6, 2).Ceil(), -3);
  EXPECT_EQ(Rational(kMin).Floor(), kMin);
  EXPECT_EQ(Rational(kMax).Ceil(), kMax);
  EXPECT_EQ(Rational(kMin, 3).Floor(), kMin / 3 - 1);
}

TEST(Rational, Comparison) {
  EXPECT_TRUE(Rational(1, 3) < Rational(1, 2));
  EXPECT_FALSE(Rational(1, 2) < Rational(1, 3));
  EXPECT_TRUE(Rational(-1, 2) < Rational(0));
  // <=> is usable outside program.cc (its definition is in the header).
  EXPECT_TRUE(Rational(3, 2) > Rational(1));
  EXPECT_TRUE(Rational(3, 2) >= Rational(6, 4));
  EXPECT_TRUE(Rational(kMax, 2) <= Rational(kMax));
  // Cross products beyond 64 bits still compare correctly.
  EXPECT_TRUE(Rational(kMax - 1, kMax) < Rational(kMax, kMax - 1));
}

TEST(Rational, ToString) {
  EXPECT_EQ(ToString(Rational(3)), "3");
  EXPECT_EQ(ToString(Rational(-1, 2)), "-1/2");
  EXPECT_EQ(ToString(Rational(4, 6)), "2/3");
}

TEST(Rational, OverflowIsUserError) {
  EXPECT_THROW(Rational(kMax) + Rational(1), UserError);
  EXPECT_THROW(Rational(kMin) - Rational(1), UserError);
  EXPECT_THROW(Rational(kMax) * Rational(2), UserError);
  EXPECT_THROW(-Rational(kMin), UserError);
  EXPECT_THROW(Rational(kMin, -1), UserError);
  EXPECT_THROW(Rational(1, kMax) * Rational(1, kMax), UserError);
  EXPECT_THROW(Rational(1, kMax) + Rational(1, kMax - 1), UserError);
  // Large but representable intermediate values are fine.
  EXPECT_EQ(Rational(kMax) * Rational(1, kMax), Rational(1));
  EXPECT_EQ(Rational(kMax) - Rational(kMax), Rational(0));
}

TEST(Rational, DivisionByZeroIsUserError) {
  EXPECT_THROW(Rational(1, 0), UserError);
  EXPECT_THROW(Rational(1) / Rational(0), UserError);
}

Polynomial Var(const std::string& name, Rational c = 1) {
  Polynomial p;
  p.terms[name] = c;
  return p;
}
Polynomial Const(Rational c) {
  Polynomial p;
  p.constant = c;
  return p;
}

TEST(Polynomial, ArithmeticDropsZeroTerms) {
  Polynomial p = Var("x") + Var("i") - Const(1);
  EXPECT_EQ(p.Coeff("x"), Rational(1));
  EXPECT_EQ(p.Coeff("i"), Rational(1));
  EXPECT_EQ(p.Coeff("j"), Rational(0));
  EXPECT_EQ(p.constant, Rational(-1));
  Polynomial q = p - Var("x");
  EXPECT_EQ(q.terms.count("x"), 0u);
  EXPECT_EQ(q.terms.size(), 1u);
  EXPECT_TRUE((p * Rational(0)).IsConstant());
  EXPECT_EQ((p * Rational(0)).constant, Rational(0));
  EXPECT_TRUE(Const(5).IsConstant());
  EXPECT_FALSE(p.IsConstant());
}

TEST(Polynomial, Scale) {
  Polynomial p = (Var("i", 2) + Var("j") + Const(1)) * Rational(1, 2);
  EXPECT_EQ(p.Coeff("i"), Rational(1));
  EXPECT_EQ(p.Coeff("j"), Rational(1, 2));
  EXPECT_EQ(p.constant, Rational(1, 2));
}

TEST(Polynomial, ToStringIsNameOrderedConstantLast) {
  EXPECT_EQ(ToString(Var("x") + Var("i") - Const(1)), "i + x - 1");
  EXPECT_EQ(ToString(Var("i", 2) + Var("j", Rational(1, 2))), "2*i + j/2");
  EXPECT_EQ(ToString(Polynomial{}), "0");
  EXPECT_EQ(ToString(Const(Rational(-1, 2))), "-1/2");
  EXPECT_EQ(ToString(Var("a", -1) + Var("b", Rational(-3, 2)) + Const(Rational(1, 2))),
            "-a - 3*b/2 + 1/2");
  EXPECT_EQ(ToString(Var("k", -2)), "-2*k");
}

TEST(Polynomial, OverflowIsUserError) {
  EXPECT_THROW(Var("i", kMax) + Var("i", 1), UserError);
  EXPECT_THROW(Var("i", kMax) * Rational(2), UserError);
  EXPECT_THROW(Const(kMin) - Const(1), UserError);
}

TEST(Names, ElementwiseAndSpecial) {
  EXPECT_EQ(Name(ElemFn::CmpGt), "cmp_gt");
  EXPECT_EQ(Name(ElemFn::Shl), "bit_left");
  EXPECT_EQ(Name(ElemFn::Cond), "cond");
  EXPECT_EQ(Arity(ElemFn::Cond), 3);
  EXPECT_EQ(Arity(ElemFn::Pow), 2);
  EXPECT_EQ(Arity(ElemFn::Exp), 1);
  EXPECT_EQ(Name(SpecialFn::PrngStep), "prng_step");
  EXPECT_EQ(Name(SpecialFn::Gather), "gather");
}

TEST(Scalar, ToString) {
  EXPECT_EQ(ToString(Scalar{DataType::I32, false, 3, 0}), "3");
  EXPECT_EQ(ToString(Scalar{DataType::F32, true, 0, 1.0}), "1.0");
  EXPECT_EQ(ToString(Scalar{DataType::F32, true, 0, 0.25}), "0.25");
  EXPECT_EQ(ToString(Scalar{DataType::I64, false, -7, 0}), "-7");
}

TEST(ProgramTensor, MissingIsInternalError) {
  Program p;
  p.tensors["A"] = TensorDecl{"A", Shape{DataType::F32, {2}}, RowMajorLayout({2}),
                              TensorRole::Input, {}};
  EXPECT_EQ(p.Tensor("A").shape.dims, (std::vector<int64_t>{2}));
  EXPECT_THROW(p.Tensor("B"), InternalError);
}

TEST(Layout, RowMajor) {
  Layout l = RowMajorLayout({2, 3, 4});
  ASSERT_EQ(l.phys.size(), 3u);
  EXPECT_EQ(l.phys[0], (PhysicalDim{0, 1, 2, 12}));
  EXPECT_EQ(l.phys[1], (PhysicalDim{1, 1, 3, 4}));
  EXPECT_EQ(l.phys[2], (PhysicalDim{2, 1, 4, 1}));
  EXPECT_EQ(l.elements, 24);
  EXPECT_TRUE(l.IsRowMajor({2, 3, 4}));
  EXPECT_FALSE(l.IsRowMajor({2, 4, 3}));
  EXPECT_FALSE(l.IsRowMajor({2, 3}));
  EXPECT_EQ(ToString(l), "row-major(d0:2@12, d1:3@4, d2:4@1; 24 elements)");

  Layout scalar = RowMajorLayout({});
  EXPECT_EQ(scalar.elements, 1);
  EXPECT_TRUE(scalar.IsRowMajor({}));
}

TEST(Layout, PermutedIsNotRowMajor) {
  Layout l = RowMajorLayout({2, 3});
  std::swap(l.phys[0].stride, l.phys[1].stride);
  EXPECT_FALSE(l.IsRowMajor({2, 3}));
  // A unit dimension's stride is irrelevant.
  Layout u = RowMajorLayout({1, 3});
  u.phys[0].stride = 99;
  EXPECT_TRUE(u.IsRowMajor({1, 3}));
}

TEST(Layout, OverflowIsUserError) {
  EXPECT_THROW(RowMajorLayout({kMax, 2}), UserError);
  EXPECT_THROW(RowMajorLayout({-1}), UserError);
}

}  // namespace
}  // namespace tilec::lang
