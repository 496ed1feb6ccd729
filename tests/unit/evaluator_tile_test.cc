// The reference evaluator on real Tile programs (Parse + Bind + Evaluate),
// each checked against values computed independently here with plain loops.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "support/error.h"
#include "tile_lang/binder.h"
#include "tile_lang/evaluator.h"
#include "tile_lang/parser.h"

namespace tilec::lang {
namespace {

Program Compile(const std::string& text, const std::map<std::string, Shape>& shapes) {
  return Bind(Parse(MakeSource("test.tile", text)), shapes);
}

Tensor Random(Shape s, uint64_t seed) {
  Tensor t(std::move(s));
  FillRandom(t, seed);
  return t;
}

Tensor MakeInt(Shape s, const std::vector<int64_t>& values) {
  Tensor t(std::move(s));
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.size());
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.size(); ++i)
    t.SetInt(static_cast<int64_t>(i), values[i]);
  return t;
}

std::vector<int64_t> Ints(const Tensor& t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.size(); ++i) v.push_back(t.GetInt(i));
  return v;
}
std::vector<double> Doubles(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.size(); ++i) v.push_back(t.GetDouble(i));
  return v;
}

Shape F32(std::vector<int64_t> dims) { return Shape{DataType::F32, std::move(dims)}; }
Shape I32(std::vector<int64_t> dims) { return Shape{DataType::I32, std::move(dims)}; }

constexpr char kSeedConvRelu[] = R"(function (D[N, X, Y, CI], K[KX, KY, CO, CI]) -> (R) {
  O[n, x, y, co : N, X, Y, CO] = +(D[n, x + i - 1, y + j - 1, ci] * K[i, j, co, ci]);
  R = relu(O);
}
)";

// The seed's kernel at its real size: 3x3 same conv fused with ReLU.
TEST(EvalTile, SeedConvReluMatchesNaiveLoop) {
  const int64_t X = 56, Y = 56, C = 64;
  const Program p = Compile(kSeedConvRelu, {{"D", F32({1, X, Y, C})}, {"K", F32({3, 3, C, C})}});
  const Tensor d = Random(F32({1, X, Y, C}), 11);
  const Tensor k = Random(F32({3, 3, C, C}), 12);
  const auto out = Evaluate(p, {{"D", d}, {"K", k}});
  const Tensor& r = out.at("R");
  ASSERT_EQ(r.shape(), F32({1, X, Y, C}));
  const float* dp = d.as<float>();
  const float* kp = k.as<float>();
  int64_t positive = 0;
  for (int64_t x = 0; x < X; ++x)
    for (int64_t y = 0; y < Y; ++y)
      for (int64_t co = 0; co < C; ++co) {
        double acc = 0;
        for (int64_t i = 0; i < 3; ++i)
          for (int64_t j = 0; j < 3; ++j) {
            const int64_t xx = x + i - 1, yy = y + j - 1;
            if (xx < 0 || xx >= X || yy < 0 || yy >= Y) continue;
            for (int64_t ci = 0; ci < C; ++ci)
              acc += double{dp[(xx * Y + yy) * C + ci]} * double{kp[((i * 3 + j) * C + co) * C + ci]};
          }
        const double want = acc < 0 ? 0 : acc;
        positive += want > 0;
        ASSERT_NEAR(r.GetDouble((x * Y + y) * C + co), want, 1e-4) << x << "," << y << "," << co;
      }
  // Both ReLU branches were exercised.
  EXPECT_GT(positive, X * Y * C / 4);
  EXPECT_LT(positive, X * Y * C * 3 / 4);
}

TEST(EvalTile, Matmul) {
  const Program p = Compile("function (A[M, L], B[L, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }",
                            {{"A", I32({3, 5})}, {"B", I32({5, 4})}});
  const Tensor a = Random(I32({3, 5}), 1), b = Random(I32({5, 4}), 2);
  const Tensor c = Evaluate(p, {{"A", a}, {"B", b}}).at("C");
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j) {
      int64_t want = 0;
      for (int64_t k = 0; k < 5; ++k) want += a.GetInt(i * 5 + k) * b.GetInt(k * 4 + j);
      EXPECT_EQ(c.GetInt(i * 4 + j), want);
    }
}

TEST(EvalTile, MaxPoolWithConstraintAndOddLength) {
  const Program p = Compile("function (I[L]) -> (O) { O[x : (L + 1) / 2] = >(I[2 * x + k]), k < 2; }",
                            {{"I", F32({7})}});
  const Tensor in = Random(F32({7}), 3);
  const Tensor o = Evaluate(p, {{"I", in}}).at("O");
  ASSERT_EQ(o.size(), 4);
  for (int64_t x = 0; x < 4; ++x) {
    double want = in.GetDouble(2 * x);
    if (2 * x + 1 < 7) want = std::max(want, in.GetDouble(2 * x + 1));
    EXPECT_EQ(o.GetDouble(x), want) << x;
  }
}

TEST(EvalTile, CumulativeSumViaConstraint) {
  const Program p = Compile("function (I[N]) -> (O) { O[i : N] = +(I[k]), i - k < N; }",
                            {{"I", I32({9})}});
  const Tensor in = Random(I32({9}), 4);
  const Tensor o = Evaluate(p, {{"I", in}}).at("O");
  int64_t acc = 0;
  for (int64_t i = 0; i < 9; ++i) {
    acc += in.GetInt(i);
    EXPECT_EQ(o.GetInt(i), acc) << i;
  }
}

TEST(EvalTile, DefaultTensor) {
  const Program p = Compile(
      "function (I[M, N], P[M2, N]) -> (O) { O[i + 1, j : M + 2, N] = =(I[i, j]) default P; }",
      {{"I", I32({2, 3})}, {"P", I32({4, 3})}});
  const Tensor in = MakeInt(I32({2, 3}), {1, 2, 3, 4, 5, 6});
  const Tensor def = MakeInt(I32({4, 3}), {-1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12});
  EXPECT_EQ(Ints(Evaluate(p, {{"I", in}, {"P", def}}).at("O")),
            (std::vector<int64_t>{-1, -2, -3, 1, 2, 3, 4, 5, 6, -10, -11, -12}));
}

TEST(EvalTile, RationalUpsampleFillsEvenPositions) {
  const Program p = Compile("function (I[N]) -> (O) { O[i : 2 * N] = =(I[i / 2]); }",
                            {{"I", F32({3})}});
  Tensor in(F32({3}));
  for (int i = 0; i < 3; ++i) in.SetDouble(i, 10 + i);
  EXPECT_EQ(Doubles(Evaluate(p, {{"I", in}}).at("O")),
            (std::vector<double>{10, 0, 11, 0, 12, 0}));
}

TEST(EvalTile, RationalConvolutionOfHalves) {
  const Program p = Compile(
      "function (I[N], K[KN]) -> (O) { O[i : 2 * N] = +(I[i / 2 + k / 2] * K[k]); }",
      {{"I", I32({5})}, {"K", I32({4})}});
  const Tensor in = Random(I32({5}), 5), k = Random(I32({4}), 6);
  const Tensor o = Evaluate(p, {{"I", in}, {"K", k}}).at("O");
  for (int64_t i = 0; i < 10; ++i) {
    int64_t want = 0;
    for (int64_t kk = 0; kk < 4; ++kk)
      if ((i + kk) % 2 == 0 && (i + kk) / 2 < 5) want += in.GetInt((i + kk) / 2) * k.GetInt(kk);
    EXPECT_EQ(o.GetInt(i), want) << i;
  }
}

TEST(EvalTile, ArgmaxWithIndexAndCond) {
  const Program p = Compile(R"(function (I[X, Y]) -> (AM) {
  Max[x : X] = >(I[x, y]);
  Idx = index(I, 1);
  AM[x : X] = >(I[x, y] == Max[x] ? Idx[x, y]);
}
)",
                            {{"I", F32({4, 5})}});
  const Tensor in = Random(F32({4, 5}), 7);
  const Tensor am = Evaluate(p, {{"I", in}}).at("AM");
  for (int64_t x = 0; x < 4; ++x) {
    int64_t best = 0;
    for (int64_t y = 1; y < 5; ++y)
      if (in.GetDouble(x * 5 + y) >= in.GetDouble(x * 5 + best)) best = y;
    EXPECT_EQ(am.GetInt(x), best) << x;
  }
}

TEST(EvalTile, OneHotWithEq) {
  const Program p = Compile(
      "function (Idx[I0], Count[C]) -> (O) { O[i, c : I0, C] = =(Idx[i] == Count[c]); }",
      {{"Idx", I32({4})}, {"Count", I32({3})}});
  const Tensor idx = MakeInt(I32({4}), {2, 0, 5, 1});
  const Tensor count = MakeInt(I32({3}), {0, 1, 2});
  EXPECT_EQ(Ints(Evaluate(p, {{"Idx", idx}, {"Count", count}}).at("O")),
            (std::vector<int64_t>{0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0}));
}

TEST(EvalTile, SoftmaxRowsSumToOne) {
  const Program p = Compile("function (I[X, Y]) -> (O) { O = builtin_softmax(I, X, Y); }",
                            {{"I", F32({3, 6})}});
  const Tensor in = Random(F32({3, 6}), 8);
  const Tensor o = Evaluate(p, {{"I", in}}).at("O");
  for (int64_t x = 0; x < 3; ++x) {
    double denom = 0;
    for (int64_t y = 0; y < 6; ++y) denom += std::exp(in.GetDouble(x * 6 + y));
    for (int64_t y = 0; y < 6; ++y)
      EXPECT_NEAR(o.GetDouble(x * 6 + y), std::exp(in.GetDouble(x * 6 + y)) / denom, 1e-6);
  }
}

TEST(EvalTile, IntegerElementwiseSemantics) {
  const Program p = Compile(R"(function (A[N], B[N]) -> (Q, S, T) {
  Q = A / B;
  S = A << 2;
  T = ~A & 255;
}
)",
                            {{"A", I32({4})}, {"B", I32({4})}});
  const Tensor a = MakeInt(I32({4}), {7, -7, 9, -2147483647 - 1});
  const Tensor b = MakeInt(I32({4}), {2, 2, 0, -1});
  const auto out = Evaluate(p, {{"A", a}, {"B", b}});
  EXPECT_EQ(Ints(out.at("Q")), (std::vector<int64_t>{3, -3, 0, -2147483647 - 1}));
  EXPECT_EQ(Ints(out.at("S")), (std::vector<int64_t>{28, -28, 36, 0}));
  EXPECT_EQ(Ints(out.at("T")), (std::vector<int64_t>{248, 6, 246, 255}));
}

TEST(EvalTile, CastsAndCond) {
  const Program p = Compile(R"(function (X[N]) -> (I, Y) {
  I = as_int(X, 32);
  Y = (X < -2.5 ? 0 : (X > 2.5 ? 1 : 0.2 * X + 0.5));
}
)",
                            {{"X", F32({5})}});
  Tensor x(F32({5}));
  const double xs[] = {-3.0, 1e12, 2.0, 3.5, std::numeric_limits<double>::quiet_NaN()};
  for (int i = 0; i < 5; ++i) x.SetDouble(i, xs[i]);
  const auto out = Evaluate(p, {{"X", x}});
  EXPECT_EQ(Ints(out.at("I")), (std::vector<int64_t>{-3, 2147483647, 2, 3, 0}));
  const Tensor& y = out.at("Y");
  EXPECT_EQ(y.GetDouble(0), 0.0);
  EXPECT_EQ(y.GetDouble(1), 1.0);
  EXPECT_FLOAT_EQ(static_cast<float>(y.GetDouble(2)), 0.2f * 2.0f + 0.5f);
  EXPECT_EQ(y.GetDouble(3), 1.0);
}

TEST(EvalTile, GatherScatterReshapeShape) {
  const Program p = Compile(R"(function (V[R, C], Ix[M]) -> (G, S, F, Sh) {
  G = gather(V, Ix);
  S = scatter(G, Ix, V);
  F = reshape(V, R * C);
  Sh = shape(V);
}
)",
                            {{"V", I32({3, 2})}, {"Ix", I32({4})}});
  const Tensor v = MakeInt(I32({3, 2}), {1, 2, 3, 4, 5, 6});
  const Tensor ix = MakeInt(I32({4}), {2, -1, 7, 2});
  const auto out = Evaluate(p, {{"V", v}, {"Ix", ix}});
  EXPECT_EQ(Ints(out.at("G")), (std::vector<int64_t>{5, 6, 1, 2, 5, 6, 5, 6}));
  // Rows 2, 0, 2, 2 of G scattered back: row 0 gets 1 2; row 2 gets 3 x (5 6).
  EXPECT_EQ(Ints(out.at("S")), (std::vector<int64_t>{1, 2, 0, 0, 15, 18}));
  EXPECT_EQ(Ints(out.at("F")), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(Ints(out.at("Sh")), (std::vector<int64_t>{3, 2}));
}

TEST(EvalTile, PrngTriple) {
  const Program p = Compile(R"(function (S) -> (V, NS) {
  T = prng_step(S, 3, 5);
  V = prng_value(T);
  NS = prng_state(T);
}
)",
                            {{"S", Shape{DataType::U32, {3, 2048}}}});
  Tensor s(Shape{DataType::U32, {3, 2048}});
  for (int64_t i = 0; i < s.size(); ++i) s.as<uint32_t>()[i] = static_cast<uint32_t>(1000 + 77 * i);
  const auto out = Evaluate(p, {{"S", s}});
  const Tensor& v = out.at("V");
  ASSERT_EQ(v.shape(), F32({3, 5}));
  for (int64_t i = 0; i < 15; ++i) {
    uint32_t s1 = s.as<uint32_t>()[i], s2 = s.as<uint32_t>()[2048 + i],
             s3 = s.as<uint32_t>()[4096 + i];
    s1 = ((s1 & 4294967294u) << 12) ^ (((s1 << 13) ^ s1) >> 19);
    s2 = ((s2 & 4294967288u) << 4) ^ (((s2 << 2) ^ s2) >> 25);
    s3 = ((s3 & 4294967280u) << 17) ^ (((s3 << 3) ^ s3) >> 11);
    EXPECT_EQ(v.as<float>()[i], static_cast<float>((s1 ^ s2 ^ s3) / 4294967296.0)) << i;
    EXPECT_EQ(out.at("NS").as<uint32_t>()[i], s1);
  }
  // Columns past the 15 used are unchanged.
  EXPECT_EQ(out.at("NS").as<uint32_t>()[100], s.as<uint32_t>()[100]);
}

TEST(EvalTile, AssignConflictPointsAtTheContraction) {
  const std::string text = "function (I[N]) -> (O) {\n  O[j : 1] = =(I[i]);\n}\n";
  const Program p = Compile(text, {{"I", I32({2})}});
  try {
    Evaluate(p, {{"I", MakeInt(I32({2}), {3, 5})}});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.message(), "conflicting assignments to O[0]: 3 and 5");
    EXPECT_EQ(e.Render().rfind("test.tile:2:", 0), 0u) << e.Render();
  }
}

TEST(EvalTile, InputShapeMismatch) {
  const Program p = Compile(kSeedConvRelu, {{"D", F32({1, 56, 56, 64})}, {"K", F32({3, 3, 64, 64})}});
  try {
    Evaluate(p, {{"D", Tensor(F32({1, 56, 56}))}, {"K", Tensor(F32({3, 3, 64, 64}))}});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.message(),
              "input 'D' has shape f32[1, 56, 56] but the program was bound to f32[1, 56, 56, 64]");
  }
}

}  // namespace
}  // namespace tilec::lang
