// The reference evaluator's contractions on Programs built by hand (no
// parser or binder): every expected value is computed independently here,
// by plain loops or by hand.
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

// ---- contractions -------------------------------------------------------

// O[i : 3] = agg(I[i, j]) over I i32[3, 4], checked against loops here.
TEST(EvalContraction, AggregationsOverRows) {
  const Tensor in = Random(S(DataType::I32, {3, 4}), 1);
  struct Case {
    AggOp agg;
    std::function<int64_t(int64_t, int64_t)> f;
  };
  const Case cases[] = {
      {AggOp::Sum, [](int64_t a, int64_t b) { return a + b; }},
      {AggOp::Prod, [](int64_t a, int64_t b) { return a * b; }},
      {AggOp::Max, [](int64_t a, int64_t b) { return std::max(a, b); }},
      {AggOp::Min, [](int64_t a, int64_t b) { return std::min(a, b); }},
  };
  for (const Case& c : cases) {
    Builder b;
    b.In("I", S(DataType::I32, {3, 4})).Out("O", S(DataType::I32, {3}));
    b.Do(Contraction("O", {V("i")}, c.agg, CombOp::None, {{"I", {V("i"), V("j")}}},
                     {{"i", 0, 2}, {"j", 0, 3}}));
    const Tensor out = Eval1(b.program(), {{"I", in}}, "O");
    for (int64_t i = 0; i < 3; ++i) {
      int64_t want = in.GetInt(i * 4);
      for (int64_t j = 1; j < 4; ++j) want = c.f(want, in.GetInt(i * 4 + j));
      EXPECT_EQ(out.GetInt(i), want) << "agg " << static_cast<int>(c.agg) << " row " << i;
    }
  }
}

TEST(EvalContraction, AssignTransposes) {
  const Tensor in = Random(S(DataType::F32, {3, 4}), 2);
  Builder b;
  b.In("I", S(DataType::F32, {3, 4})).Out("O", S(DataType::F32, {4, 3}));
  b.Do(Contraction("O", {V("j"), V("i")}, AggOp::Assign, CombOp::None, {{"I", {V("i"), V("j")}}},
                   {{"i", 0, 2}, {"j", 0, 3}}));
  const Tensor out = Eval1(b.program(), {{"I", in}}, "O");
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(out.GetDouble(j * 3 + i), in.GetDouble(i * 4 + j));
}

// Row 3 of O has no row of I: it is 0 for every aggregation, not the
// aggregation's identity or a sentinel.
TEST(EvalContraction, UnreachedElementsAreZeroForEveryAggregation) {
  const Tensor neg = Make(S(DataType::F32, {3, 2}), {-5, -3, -2, -7, -1, -4});
  const Tensor pos = Make(S(DataType::F32, {3, 2}), {5, 3, 2, 7, 1, 4});
  struct Case {
    AggOp agg;
    const Tensor* in;
    std::vector<double> want;
  };
  const Case cases[] = {
      {AggOp::Sum, &neg, {-8, -9, -5, 0}},
      {AggOp::Prod, &neg, {15, 14, 4, 0}},
      {AggOp::Max, &neg, {-3, -2, -1, 0}},
      {AggOp::Min, &pos, {3, 2, 1, 0}},
      {AggOp::Assign, &neg, {-5, -2, -1, 0}},  // j < 1 below: one value per row
  };
  for (const Case& c : cases) {
    Builder b;
    b.In("I", S(DataType::F32, {3, 2})).Out("O", S(DataType::F32, {4}));
    std::vector<ContractionOp::Constraint> cons;
    if (c.agg == AggOp::Assign) cons.push_back({V("j"), 1});
    b.Do(Contraction("O", {V("i")}, c.agg, CombOp::None, {{"I", {V("i"), V("j")}}},
                     {{"i", 0, 3}, {"j", 0, 1}}, cons));
    EXPECT_EQ(Doubles(Eval1(b.program(), {{"I", *c.in}}, "O")), c.want)
        << "agg " << static_cast<int>(c.agg);
  }
}

// A constraint no point satisfies (j == 10, but j < 2) leaves all zeros.
TEST(EvalContraction, ConstraintExcludingEverythingGivesZeros) {
  const Tensor in = Make(S(DataType::F32, {2, 2}), {-5, -3, 2, 7});
  for (AggOp agg : {AggOp::Sum, AggOp::Prod, AggOp::Max, AggOp::Min, AggOp::Assign}) {
    Builder b;
    b.In("I", S(DataType::F32, {2, 2})).Out("O", S(DataType::F32, {2}));
    b.Do(Contraction("O", {V("i")}, agg, CombOp::None, {{"I", {V("i"), V("j")}}},
                     {{"i", 0, 1}, {"j", 0, 20}}, {{Poly({{"j", 1}}, -10), 1}}));
    EXPECT_EQ(Doubles(Eval1(b.program(), {{"I", in}}, "O")), (std::vector<double>{0, 0}));
  }
}

// Reached elements equal to the type's minimum are not mistaken for unreached.
TEST(EvalContraction, MaxOfTypeMinimumStays) {
  const Tensor in = MakeInt(S(DataType::I8, {3, 2}), {-128, -128, 5, -128, -128, -128});
  Builder b;
  b.In("I", S(DataType::I8, {3, 2})).Out("O", S(DataType::I8, {4}));
  b.Do(Contraction("O", {V("i")}, AggOp::Max, CombOp::None, {{"I", {V("i"), V("j")}}},
                   {{"i", 0, 3}, {"j", 0, 1}}));
  EXPECT_EQ(Ints(Eval1(b.program(), {{"I", in}}, "O")), (std::vector<int64_t>{-128, 5, -128, 0}));

  const Tensor f = Make(S(DataType::F32, {2}), {-kInf, -kInf});
  Builder c;
  c.In("I", S(DataType::F32, {2})).Out("O", S(DataType::F32, {}));
  c.Do(Contraction("O", {}, AggOp::Max, CombOp::None, {{"I", {V("i")}}}, {{"i", 0, 1}}));
  EXPECT_EQ(Eval1(c.program(), {{"I", f}}, "O").GetDouble(0), -kInf);
}

TEST(EvalContraction, DefaultTensorFillsUnreachedElements) {
  const Tensor in = Make(S(DataType::F32, {4}), {1, 2, 3, 4});
  const Tensor def = MakeInt(S(DataType::I32, {5}), {10, 20, 30, 40, 50});
  for (AggOp agg : {AggOp::Assign, AggOp::Sum}) {
    Builder b;
    b.In("I", S(DataType::F32, {4})).In("P", S(DataType::I32, {5})).Out("O", S(DataType::F32, {5}));
    ContractionOp op = Contraction("O", {Poly({{"i", 1}}, 1)}, agg, CombOp::None,
                                   {{"I", {V("i")}}}, {{"i", 0, 3}});
    op.default_tensor = "P";
    b.Do(op);
    // Reached elements hold the aggregate alone (the default is not added in).
    EXPECT_EQ(Doubles(Eval1(b.program(), {{"I", in}, {"P", def}}, "O")),
              (std::vector<double>{10, 1, 2, 3, 4}));
  }
}

constexpr char kConflictText[] =
    "function (I[A, B, C]) -> (O) {\n"
    "  O[i, j : 2, 3] = =(I[i, j, k]);\n"
    "}\n";

Builder ConflictProgram() {
  Builder b(kConflictText);
  b.In("I", S(DataType::I32, {2, 3, 2})).Out("O", S(DataType::I32, {2, 3}));
  ContractionOp op = Contraction("O", {V("i"), V("j")}, AggOp::Assign, CombOp::None,
                                 {{"I", {V("i"), V("j"), V("k")}}},
                                 {{"i", 0, 1}, {"j", 0, 2}, {"k", 0, 1}});
  op.span = SourceSpan{{2, 3}, {2, 33}};
  b.Do(op);
  return b;
}

Tensor ConflictInput(int64_t second) {
  Tensor t(S(DataType::I32, {2, 3, 2}));
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t k = 0; k < 2; ++k) t.SetInt((a * 3 + c) * 2 + k, 10 * a + c);
  t.SetInt((1 * 3 + 2) * 2 + 0, 3);
  t.SetInt((1 * 3 + 2) * 2 + 1, second);
  return t;
}

TEST(EvalContraction, AssignConflictIsUserErrorWithLocation) {
  const Builder b = ConflictProgram();
  try {
    Evaluate(b.program(), {{"I", ConflictInput(5)}});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.message(), "conflicting assignments to O[1, 2]: 3 and 5");
    EXPECT_EQ(e.Render(),
              "test.tile:2:3: error: conflicting assignments to O[1, 2]: 3 and 5\n"
              "  O[i, j : 2, 3] = =(I[i, j, k]);\n"
              "  ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~");
  }
}

TEST(EvalContraction, AssignOfEqualValuesIsFine) {
  const Builder b = ConflictProgram();
  const Tensor out = Eval1(b.program(), {{"I", ConflictInput(3)}}, "O");
  EXPECT_EQ(Ints(out), (std::vector<int64_t>{0, 1, 2, 10, 11, 3}));
}

// The seed's same-padded 3x3 convolution against a naive loop.
template <typename Elem>
void CheckSamePaddedConv(DataType dt) {
  const int64_t N = 2, X = 5, Y = 6, CI = 3, CO = 4;
  Builder b;
  b.In("D", S(dt, {N, X, Y, CI})).In("K", S(dt, {3, 3, CO, CI})).Out("O", S(dt, {N, X, Y, CO}));
  b.Do(Contraction("O", {V("n"), V("x"), V("y"), V("co")}, AggOp::Sum, CombOp::Mul,
                   {{"D", {V("n"), Poly({{"x", 1}, {"i", 1}}, -1), Poly({{"y", 1}, {"j", 1}}, -1),
                           V("ci")}},
                    {"K", {V("i"), V("j"), V("co"), V("ci")}}},
                   {{"n", 0, N - 1}, {"x", 0, X - 1}, {"y", 0, Y - 1}, {"co", 0, CO - 1},
                    {"i", 0, 2}, {"j", 0, 2}, {"ci", 0, CI - 1}}));
  const Tensor d = Random(S(dt, {N, X, Y, CI}), 3);
  const Tensor k = Random(S(dt, {3, 3, CO, CI}), 4);
  const Tensor out = Eval1(b.program(), {{"D", d}, {"K", k}}, "O");
  const Elem* dp = d.as<Elem>();
  const Elem* kp = k.as<Elem>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t x = 0; x < X; ++x)
      for (int64_t y = 0; y < Y; ++y)
        for (int64_t co = 0; co < CO; ++co) {
          double want = 0;
          for (int64_t i = 0; i < 3; ++i)
            for (int64_t j = 0; j < 3; ++j)
              for (int64_t ci = 0; ci < CI; ++ci) {
                const int64_t xx = x + i - 1, yy = y + j - 1;
                if (xx < 0 || xx >= X || yy < 0 || yy >= Y) continue;
                want += static_cast<double>(dp[((n * X + xx) * Y + yy) * CI + ci]) *
                        static_cast<double>(kp[((i * 3 + j) * CO + co) * CI + ci]);
              }
          const double got = out.GetDouble(((n * X + x) * Y + y) * CO + co);
          if (IsFloat(dt)) {
            EXPECT_NEAR(got, want, 1e-5);
          } else {
            EXPECT_EQ(got, want);
          }
        }
}

TEST(EvalContraction, SamePaddedConvMatchesNaiveLoop) {
  CheckSamePaddedConv<int32_t>(DataType::I32);
  CheckSamePaddedConv<float>(DataType::F32);
}

// O[x : 4] = +(I[2x + 3k] * W[k]): strided and dilated; the x = 3, k = 1 tap
// (I[9]) does not exist and is skipped.
TEST(EvalContraction, StridedDilatedAccess) {
  const Tensor in = Random(S(DataType::I32, {8}), 5);
  const Tensor w = MakeInt(S(DataType::I32, {2}), {3, -2});
  Builder b;
  b.In("I", S(DataType::I32, {8})).In("W", S(DataType::I32, {2})).Out("O", S(DataType::I32, {4}));
  b.Do(Contraction("O", {V("x")}, AggOp::Sum, CombOp::Mul,
                   {{"I", {Poly({{"x", 2}, {"k", 3}})}}, {"W", {V("k")}}},
                   {{"x", 0, 3}, {"k", 0, 1}}));
  const Tensor out = Eval1(b.program(), {{"I", in}, {"W", w}}, "O");
  for (int64_t x = 0; x < 4; ++x) {
    int64_t want = 0;
    for (int64_t k = 0; k < 2; ++k)
      if (2 * x + 3 * k < 8) want += in.GetInt(2 * x + 3 * k) * w.GetInt(k);
    EXPECT_EQ(out.GetInt(x), want) << x;
  }
}

// Max pool with a constraint, over a bounds box larger than the valid set.
TEST(EvalContraction, ConstraintLimitsIndex) {
  const Tensor in = Make(S(DataType::F32, {5}), {1, 4, -2, -3, 6});
  Builder b;
  b.In("I", S(DataType::F32, {5})).Out("O", S(DataType::F32, {3}));
  b.Do(Contraction("O", {V("i")}, AggOp::Max, CombOp::None, {{"I", {Poly({{"i", 2}, {"j", 1}})}}},
                   {{"i", 0, 2}, {"j", 0, 5}}, {{V("j"), 2}}));
  EXPECT_EQ(Doubles(Eval1(b.program(), {{"I", in}}, "O")), (std::vector<double>{4, -2, 6}));
}

// Cumulative sum via a two-index constraint 0 <= i - k < N.
TEST(EvalContraction, MultiIndexConstraint) {
  const Tensor in = Random(S(DataType::I64, {6}), 6);
  Builder b;
  b.In("I", S(DataType::I64, {6})).Out("O", S(DataType::I64, {6}));
  b.Do(Contraction("O", {V("i")}, AggOp::Sum, CombOp::None, {{"I", {V("k")}}},
                   {{"i", 0, 5}, {"k", 0, 5}}, {{Poly({{"i", 1}, {"k", -1}}), 6}}));
  const Tensor out = Eval1(b.program(), {{"I", in}}, "O");
  int64_t acc = 0;
  for (int64_t i = 0; i < 6; ++i) {
    acc += in.GetInt(i);
    EXPECT_EQ(out.GetInt(i), acc);
  }
}

TEST(EvalContraction, RationalIndexSkipsFractionalPoints) {
  const Tensor in = Make(S(DataType::F32, {3}), {7, 8, 9});
  Builder b;
  b.In("I", S(DataType::F32, {3})).Out("O", S(DataType::F32, {6}));
  // O[i : 2 * 3] = =(I[i / 2]): only even i index I.
  b.Do(Contraction("O", {V("i")}, AggOp::Assign, CombOp::None,
                   {{"I", {Poly({{"i", Rational(1, 2)}})}}}, {{"i", 0, 5}}));
  EXPECT_EQ(Doubles(Eval1(b.program(), {{"I", in}}, "O")), (std::vector<double>{7, 0, 8, 0, 9, 0}));

  // O[i] = =(I[(i - 1) / 2]): only odd i.
  Builder c;
  c.In("I", S(DataType::F32, {3})).Out("O", S(DataType::F32, {6}));
  c.Do(Contraction("O", {V("i")}, AggOp::Assign, CombOp::None,
                   {{"I", {Poly({{"i", Rational(1, 2)}}, Rational(-1, 2))}}}, {{"i", 0, 5}}));
  EXPECT_EQ(Doubles(Eval1(c.program(), {{"I", in}}, "O")), (std::vector<double>{0, 7, 0, 8, 0, 9}));
}

// O[i : 2N] = +(I[i/2 + k/2] * W[k]) against a loop that checks integrality.
TEST(EvalContraction, RationalSumOfTwoFractions) {
  const int64_t N = 4;
  const Tensor in = Random(S(DataType::I32, {N}), 7);
  const Tensor w = MakeInt(S(DataType::I32, {2}), {2, 5});
  Builder b;
  b.In("I", S(DataType::I32, {N})).In("W", S(DataType::I32, {2})).Out("O", S(DataType::I32, {2 * N}));
  b.Do(Contraction("O", {V("i")}, AggOp::Sum, CombOp::Mul,
                   {{"I", {Poly({{"i", Rational(1, 2)}, {"k", Rational(1, 2)}})}}, {"W", {V("k")}}},
                   {{"i", 0, 2 * N - 1}, {"k", 0, 1}}));
  const Tensor out = Eval1(b.program(), {{"I", in}, {"W", w}}, "O");
  for (int64_t i = 0; i < 2 * N; ++i) {
    int64_t want = 0;
    for (int64_t k = 0; k < 2; ++k)
      if ((i + k) % 2 == 0 && (i + k) / 2 < N) want += in.GetInt((i + k) / 2) * w.GetInt(k);
    EXPECT_EQ(out.GetInt(i), want) << i;
  }
}

// A constraint's polynomial is compared as a rational (program.h): i/2 < 2
// admits i = 0..3, odd ones included.
TEST(EvalContraction, RationalConstraintIsComparedExactly) {
  const Tensor in = Make(S(DataType::F32, {6}), {1, 2, 3, 4, 5, 6});
  Builder b;
  b.In("I", S(DataType::F32, {6})).Out("O", S(DataType::F32, {6}));
  b.Do(Contraction("O", {V("i")}, AggOp::Sum, CombOp::None, {{"I", {V("i")}}}, {{"i", 0, 5}},
                   {{Poly({{"i", Rational(1, 2)}}), 2}}));
  EXPECT_EQ(Doubles(Eval1(b.program(), {{"I", in}}, "O")), (std::vector<double>{1, 2, 3, 4, 0, 0}));
}

TEST(EvalContraction, EqCombinationOneHot) {
  const Tensor idx = MakeInt(S(DataType::I32, {5}), {2, 0, 3, 1, 7});
  const Tensor count = MakeInt(S(DataType::I32, {4}), {0, 1, 2, 3});
  Builder b;
  b.In("Idx", S(DataType::I32, {5})).In("Count", S(DataType::I32, {4}));
  b.Out("O", S(DataType::Bool, {5, 4}));
  b.Do(Contraction("O", {V("i"), V("c")}, AggOp::Assign, CombOp::Eq,
                   {{"Idx", {V("i")}}, {"Count", {V("c")}}}, {{"i", 0, 4}, {"c", 0, 3}}));
  const Tensor out = Eval1(b.program(), {{"Idx", idx}, {"Count", count}}, "O");
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t c = 0; c < 4; ++c)
      EXPECT_EQ(out.GetInt(i * 4 + c), idx.GetInt(i) == c ? 1 : 0) << i << "," << c;
}

// Eq compares in the promoted type: f32 2.5 is not i32 2.
TEST(EvalContraction, EqComparesInPromotedType) {
  const Tensor a = Make(S(DataType::F32, {2}), {2.5, 3.0});
  const Tensor b = MakeInt(S(DataType::I32, {2}), {3, 2});
  Builder p;
  p.In("A", S(DataType::F32, {2})).In("B", S(DataType::I32, {2})).Out("O", S(DataType::Bool, {2, 2}));
  p.Do(Contraction("O", {V("i"), V("j")}, AggOp::Assign, CombOp::Eq,
                   {{"A", {V("i")}}, {"B", {V("j")}}}, {{"i", 0, 1}, {"j", 0, 1}}));
  EXPECT_EQ(Ints(Eval1(p.program(), {{"A", a}, {"B", b}}, "O")), (std::vector<int64_t>{0, 0, 1, 0}));
}

// argmax as in PlaidML's op library: Max, index(), and a Cond contraction.
TEST(EvalContraction, CondArgmaxProgram) {
  const Tensor in = Make(S(DataType::F32, {3, 4}), {1, 5, 5, 2, 9, 1, 2, 3, -4, -1, -7, -2});
  Builder b;
  b.In("I", S(DataType::F32, {3, 4})).Tmp("Max", S(DataType::F32, {3}));
  b.Tmp("Idx", S(DataType::I32, {3, 4})).Out("AM", S(DataType::I32, {3}));
  b.Do(Contraction("Max", {V("x")}, AggOp::Max, CombOp::None, {{"I", {V("x"), V("y")}}},
                   {{"x", 0, 2}, {"y", 0, 3}}));
  ElementwiseOp index = Elem("Idx", ElemFn::Index, {T("I")}, DataType::I32);
  index.axis = 1;
  b.Do(index);
  b.Do(Contraction("AM", {V("x")}, AggOp::Max, CombOp::Cond,
                   {{"I", {V("x"), V("y")}}, {"Max", {V("x")}}, {"Idx", {V("x"), V("y")}}},
                   {{"x", 0, 2}, {"y", 0, 3}}));
  // Ties pick the largest index (max over the matching indices).
  EXPECT_EQ(Ints(Eval1(b.program(), {{"I", in}}, "AM")), (std::vector<int64_t>{2, 0, 1}));
}

// Cond converts its value to the output type before aggregating.
TEST(EvalContraction, CondValueConvertedToOutputType) {
  const Tensor a = Make(S(DataType::F32, {2}), {1, 2});
  const Tensor m = Make(S(DataType::F32, {2}), {1, 2});
  const Tensor c = Make(S(DataType::F32, {2}), {1.5, 2.5});
  Builder b;
  b.In("A", S(DataType::F32, {2})).In("M", S(DataType::F32, {2})).In("C", S(DataType::F32, {2}));
  b.Out("O", S(DataType::I32, {}));
  b.Do(Contraction("O", {}, AggOp::Sum, CombOp::Cond,
                   {{"A", {V("i")}}, {"M", {V("i")}}, {"C", {V("i")}}}, {{"i", 0, 1}}));
  EXPECT_EQ(Eval1(b.program(), {{"A", a}, {"M", m}, {"C", c}}, "O").GetInt(0), 3);  // 1 + 2, not 4
}

TEST(EvalContraction, AddCombinationAndInputConversion) {
  // i8 output: inputs are converted to i8 first (200 -> -56), then added with wrap.
  const Tensor a = MakeInt(S(DataType::I32, {2}), {200, 100});
  const Tensor b = MakeInt(S(DataType::I32, {1}), {100});
  Builder p;
  p.In("A", S(DataType::I32, {2})).In("B", S(DataType::I32, {1})).Out("O", S(DataType::I8, {2}));
  p.Do(Contraction("O", {V("i")}, AggOp::Sum, CombOp::Add, {{"A", {V("i")}}, {"B", {K(0)}}},
                   {{"i", 0, 1}}));
  EXPECT_EQ(Ints(Eval1(p.program(), {{"A", a}, {"B", b}}, "O")), (std::vector<int64_t>{44, -56}));
}

TEST(EvalContraction, SignedSumWrapsWithoutUB) {
  const Tensor in = MakeInt(S(DataType::I32, {2}), {kI32Max, 1});
  Builder b;
  b.In("I", S(DataType::I32, {2})).Out("O", S(DataType::I32, {}));
  b.Do(Contraction("O", {}, AggOp::Sum, CombOp::None, {{"I", {V("i")}}}, {{"i", 0, 1}}));
  EXPECT_EQ(Eval1(b.program(), {{"I", in}}, "O").GetInt(0), kI32Min);
}

TEST(EvalContraction, BoolSumIsOrAndProdIsAnd) {
  const Tensor in = MakeInt(S(DataType::Bool, {3, 2}), {0, 0, 1, 0, 1, 1});
  for (auto [agg, want] : {std::pair{AggOp::Sum, std::vector<int64_t>{0, 1, 1}},
                           std::pair{AggOp::Prod, std::vector<int64_t>{0, 0, 1}}}) {
    Builder b;
    b.In("I", S(DataType::Bool, {3, 2})).Out("O", S(DataType::Bool, {3}));
    b.Do(Contraction("O", {V("i")}, agg, CombOp::None, {{"I", {V("i"), V("j")}}},
                     {{"i", 0, 2}, {"j", 0, 1}}));
    const Tensor out = Eval1(b.program(), {{"I", in}}, "O");
    EXPECT_EQ(Ints(out), want);
    for (int64_t i = 0; i < 3; ++i) EXPECT_LE(out.as<uint8_t>()[i], 1);
  }
}

TEST(EvalContraction, HugeIndexCoefficientIsUserError) {
  Builder b;
  b.In("I", S(DataType::F32, {4})).Out("O", S(DataType::F32, {2}));
  b.Do(Contraction("O", {V("i")}, AggOp::Sum, CombOp::None,
                   {{"I", {Poly({{"i", int64_t{1} << 62}})}}}, {{"i", 0, 1}}));
  EXPECT_THROW(Evaluate(b.program(), {{"I", Tensor(S(DataType::F32, {4}))}}), UserError);
}

}  // namespace
}  // namespace tilec::lang
