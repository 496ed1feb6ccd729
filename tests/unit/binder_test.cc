// Bind: shapes, types, constant folding, builtin expansion, index bounds and
// the program dump. Error cases are in bind_errors_test.cc.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <variant>

#include "support/error.h"
#include "tile_lang/binder.h"
#include "tile_lang/parser.h"
#include "tile_lang/program.h"

namespace tilec::lang {
namespace {

Program BindText(const std::string& text, const std::map<std::string, std::string>& shapes) {
  std::map<std::string, Shape> bound;
  for (const auto& [name, spec] : shapes) bound[name] = ParseShape(spec);
  return Bind(Parse(MakeSource("test.tile", text)), bound);
}

const ElementwiseOp& Elem(const Program& p, const std::string& out) {
  for (const auto& op : p.ops)
    if (const auto* e = std::get_if<ElementwiseOp>(&op); e && e->output == out) return *e;
  ADD_FAILURE() << "no elementwise op defines " << out << "\n" << ToString(p);
  static ElementwiseOp none;
  return none;
}

const ContractionOp& Contraction(const Program& p, const std::string& out) {
  for (const auto& op : p.ops)
    if (const auto* c = std::get_if<ContractionOp>(&op); c && c->output == out) return *c;
  ADD_FAILURE() << "no contraction defines " << out << "\n" << ToString(p);
  static ContractionOp none;
  return none;
}

const SpecialOp& Special(const Program& p, const std::string& out) {
  for (const auto& op : p.ops)
    if (const auto* s = std::get_if<SpecialOp>(&op))
      for (const auto& o : s->outputs)
        if (o == out) return *s;
  ADD_FAILURE() << "no special op defines " << out << "\n" << ToString(p);
  static SpecialOp none;
  return none;
}

Shape S(const std::string& spec) { return ParseShape(spec); }

Polynomial P(std::map<std::string, Rational> terms, Rational constant = 0) {
  Polynomial p;
  p.terms = std::move(terms);
  p.constant = constant;
  return p;
}

const char* kConvRelu = R"(function (D[N, X, Y, CI], K[I, J, CO, CI]) -> (R) {
  O[n, x, y, co : N, X, Y, CO] = +(D[n, x+i-1, y+j-1, ci] * K[i, j, co, ci]);
  R = (O > 0 ? O : 0);
})";

TEST(Bind, SeedConvShapesAndBounds) {
  Program p = BindText(kConvRelu, {{"D", "f32[1, 56, 56, 64]"}, {"K", "f32[3, 3, 64, 64]"}});
  EXPECT_EQ(p.inputs, (std::vector<std::string>{"D", "K"}));
  EXPECT_EQ(p.outputs, (std::vector<std::string>{"R"}));
  ASSERT_EQ(p.ops.size(), 3u);
  const ContractionOp& o = Contraction(p, "O");
  EXPECT_EQ(p.Tensor("O").shape, S("f32[1, 56, 56, 64]"));
  EXPECT_EQ(p.Tensor("O").role, TensorRole::Temporary);
  EXPECT_EQ(p.Tensor("R").role, TensorRole::Output);
  EXPECT_EQ(p.Tensor("D").role, TensorRole::Input);
  EXPECT_EQ(o.agg, ast::AggOp::Sum);
  EXPECT_EQ(o.comb, ast::CombOp::Mul);
  EXPECT_EQ(o.index_vars, (std::vector<std::string>{"ci", "co", "i", "j", "n", "x", "y"}));
  ASSERT_EQ(o.bounds.size(), 7u);
  const int64_t hi[] = {63, 63, 2, 2, 0, 55, 55};
  for (size_t k = 0; k < 7; ++k) {
    EXPECT_EQ(o.bounds[k].lo, 0) << o.index_vars[k];
    EXPECT_EQ(o.bounds[k].hi, hi[k]) << o.index_vars[k];
  }
  ASSERT_EQ(o.inputs.size(), 2u);
  EXPECT_EQ(o.inputs[0].tensor, "D");
  EXPECT_EQ(o.inputs[0].index[1], P({{"x", 1}, {"i", 1}}, -1));
  EXPECT_EQ(o.inputs[1].index[2], P({{"co", 1}}));
  EXPECT_EQ(o.output_index[3], P({{"co", 1}}));
  EXPECT_TRUE(o.constraints.empty());

  const ElementwiseOp& gt = Elem(p, "_T1");
  EXPECT_EQ(gt.fn, ElemFn::CmpGt);
  EXPECT_EQ(gt.compute_type, DataType::F32);
  EXPECT_EQ(p.Tensor("_T1").shape, S("bool[1, 56, 56, 64]"));
  ASSERT_EQ(gt.operands.size(), 2u);
  EXPECT_FALSE(gt.operands[1].is_tensor);
  EXPECT_EQ(gt.operands[1].scalar.dtype, DataType::F32);
  const ElementwiseOp& r = Elem(p, "R");
  EXPECT_EQ(r.fn, ElemFn::Cond);
  EXPECT_EQ(r.operands[0].tensor, "_T1");
  EXPECT_EQ(p.Tensor("R").shape, S("f32[1, 56, 56, 64]"));
  EXPECT_EQ(p.Tensor("R").layout, RowMajorLayout({1, 56, 56, 64}));
}

TEST(Bind, SeedConvGolden) {
  Program p = BindText(kConvRelu, {{"D", "f32[1, 56, 56, 64]"}, {"K", "f32[3, 3, 64, 64]"}});
  EXPECT_EQ(ToString(p),
            "function (D: f32[1, 56, 56, 64], K: f32[3, 3, 64, 64]) -> (R: f32[1, 56, 56, 64]) {\n"
            "  O[n, x, y, co]: f32[1, 56, 56, 64] = +(D[n, i + x - 1, j + y - 1, ci] * K[i, j, co, ci])\n"
            "    ranges: ci 64, co 64, i 3, j 3, n 1, x 56, y 56\n"
            "  _T1: bool[1, 56, 56, 64] = cmp_gt(O, 0)\n"
            "  R: f32[1, 56, 56, 64] = cond(_T1, O, 0)\n"
            "}\n");
}

TEST(Bind, GoldenShowsConstraintsOffsetRangesAndDefault) {
  Program p = BindText(R"(function (I[N], P[M]) -> (O) {
  O[x - 2 : M] = >(I[x + k]), k < 3 default P;
})",
                       {{"I", "f32[8]"}, {"P", "f32[6]"}});
  EXPECT_EQ(ToString(p),
            "function (I: f32[8], P: f32[6]) -> (O: f32[6]) {\n"
            "  O[x - 2]: f32[6] = >(I[k + x])\n"
            "    ranges: k 3, x [2, 7]\n"
            "    constraints: k < 3\n"
            "    default: P\n"
            "}\n");
}

TEST(Bind, TemporariesAreNumberedInProgramOrder) {
  Program p = BindText(R"(function (A, B) -> (C, D) {
  C = (A + B) * (A - B);
  D = exp(C) / 2;
})",
                       {{"A", "f32[4]"}, {"B", "f32[4]"}});
  EXPECT_EQ(Elem(p, "_T0").fn, ElemFn::Add);
  EXPECT_EQ(Elem(p, "_T1").fn, ElemFn::Sub);
  EXPECT_EQ(Elem(p, "C").fn, ElemFn::Mul);
  EXPECT_EQ(Elem(p, "C").operands[0].tensor, "_T0");
  EXPECT_EQ(Elem(p, "C").operands[1].tensor, "_T1");
  EXPECT_EQ(Elem(p, "_T2").fn, ElemFn::Exp);
  EXPECT_EQ(Elem(p, "D").fn, ElemFn::Div);
  EXPECT_EQ(p.ops.size(), 5u);
}

TEST(Bind, IdentForPlainCopy) {
  Program p = BindText("function (A) -> (B) { B = A; }", {{"A", "i16[2, 3]"}});
  ASSERT_EQ(p.ops.size(), 1u);
  EXPECT_EQ(Elem(p, "B").fn, ElemFn::Ident);
  EXPECT_EQ(Elem(p, "B").compute_type, DataType::I16);
  EXPECT_EQ(p.Tensor("B").shape, S("i16[2, 3]"));
}

TEST(Bind, OperatorMapping) {
  Program p = BindText(R"(function (A, B) -> (O1, O2, O3, O4, O5, O6, O7, O8, O9, O10, O11, O12) {
  O1 = A % B; O2 = A != B; O3 = A <= B; O4 = A >= B; O5 = A & B; O6 = A | B;
  O7 = A ^ B; O8 = A >> B; O9 = ~A; O10 = -A; O11 = A && B; O12 = !A;
})",
                       {{"A", "i32[2]"}, {"B", "i32[2]"}});
  const std::pair<const char*, ElemFn> expected[] = {
      {"O1", ElemFn::Mod},    {"O2", ElemFn::CmpNe},  {"O3", ElemFn::CmpLe},
      {"O4", ElemFn::CmpGe},  {"O5", ElemFn::BitAnd}, {"O6", ElemFn::BitOr},
      {"O7", ElemFn::BitXor}, {"O8", ElemFn::Shr},    {"O9", ElemFn::BitNot},
      {"O10", ElemFn::Neg},   {"O11", ElemFn::LogicalAnd}, {"O12", ElemFn::LogicalNot}};
  for (const auto& [name, fn] : expected) EXPECT_EQ(Elem(p, name).fn, fn) << name;
  EXPECT_EQ(p.Tensor("O2").shape.dtype, DataType::Bool);
  EXPECT_EQ(p.Tensor("O11").shape.dtype, DataType::Bool);
  EXPECT_EQ(p.Tensor("O12").shape.dtype, DataType::Bool);
  EXPECT_EQ(Elem(p, "O12").compute_type, DataType::I32);
  EXPECT_EQ(p.Tensor("O5").shape.dtype, DataType::I32);
}

TEST(Bind, WeakLiteralsTakeTheTensorType) {
  Program p = BindText(R"(function (H, I8, B, U, I) -> (O1, O2, O3, O4, O5, O6, O7) {
  O1 = H * 2.0; O2 = I8 + 1; O3 = B + 1; O4 = U * 0.5; O5 = I + 1.5; O6 = B + 2.5; O7 = H + 1;
})",
                       {{"H", "f16[3]"}, {"I8", "i8[3]"}, {"B", "bool[3]"}, {"U", "u8[3]"},
                        {"I", "i32[3]"}});
  EXPECT_EQ(p.Tensor("O1").shape.dtype, DataType::F16);  // PlaidML would give f32
  EXPECT_EQ(p.Tensor("O2").shape.dtype, DataType::I8);   // PlaidML would give i32
  EXPECT_EQ(p.Tensor("O3").shape.dtype, DataType::I32);
  EXPECT_EQ(p.Tensor("O4").shape.dtype, DataType::F32);
  EXPECT_EQ(p.Tensor("O5").shape.dtype, DataType::F32);
  EXPECT_EQ(p.Tensor("O6").shape.dtype, DataType::F32);
  EXPECT_EQ(p.Tensor("O7").shape.dtype, DataType::F16);
  // Scalar operands carry the compute type.
  EXPECT_EQ(Elem(p, "O1").operands[1].scalar.dtype, DataType::F16);
  EXPECT_EQ(Elem(p, "O1").operands[1].scalar.f, 2.0);
  EXPECT_EQ(Elem(p, "O2").operands[1].scalar.dtype, DataType::I8);
  EXPECT_EQ(Elem(p, "O2").operands[1].scalar.i, 1);
  EXPECT_EQ(Elem(p, "O3").compute_type, DataType::I32);
  EXPECT_EQ(Elem(p, "O7").operands[1].scalar.dtype, DataType::F16);
}

TEST(Bind, WeakIntegerLiteralWrapsToTheTensorType) {
  Program p = BindText("function (U) -> (O) { O = U + 300; }", {{"U", "u8[3]"}});
  EXPECT_EQ(p.Tensor("O").shape.dtype, DataType::U8);
  EXPECT_EQ(Elem(p, "O").operands[1].scalar.i, 44);  // C conversion of 300 to u8
}

TEST(Bind, PromotionBetweenTensors) {
  Program p = BindText(R"(function (H, I, J, U, S) -> (O1, O2, O3, O4, O5) {
  O1 = H + I; O2 = J + S; O3 = I + U; O4 = U + I; O5 = (J < S ? H : I);
})",
                       {{"H", "f16[2]"}, {"I", "i32[2]"}, {"J", "i8[2]"}, {"U", "u32[2]"},
                        {"S", "i16[2]"}});
  EXPECT_EQ(p.Tensor("O1").shape.dtype, DataType::F16);
  EXPECT_EQ(p.Tensor("O2").shape.dtype, DataType::I16);
  EXPECT_EQ(p.Tensor("O3").shape.dtype, DataType::I32);  // tie: first wins
  EXPECT_EQ(p.Tensor("O4").shape.dtype, DataType::U32);
  // cond skips its condition when promoting.
  EXPECT_EQ(p.Tensor("O5").shape.dtype, DataType::F16);
  EXPECT_EQ(Elem(p, "O5").compute_type, DataType::F16);
}

TEST(Bind, MathFunctionsAreFloat) {
  Program p = BindText(R"(function (I, H) -> (O1, O2, O3, O4, O5, O6, O7, O8) {
  O1 = exp(I); O2 = sqrt(H); O3 = pow(H, 2); O4 = abs(I); O5 = max(I, 0); O6 = min(H, I);
  O7 = sigmoid(I); O8 = floor(H);
})",
                       {{"I", "i32[2]"}, {"H", "f16[2]"}});
  EXPECT_EQ(p.Tensor("O1").shape.dtype, DataType::F32);
  EXPECT_EQ(Elem(p, "O1").compute_type, DataType::F32);
  EXPECT_EQ(p.Tensor("O2").shape.dtype, DataType::F16);
  EXPECT_EQ(p.Tensor("O3").shape.dtype, DataType::F16);
  EXPECT_EQ(Elem(p, "O3").fn, ElemFn::Pow);
  EXPECT_EQ(p.Tensor("O4").shape.dtype, DataType::I32);
  EXPECT_EQ(p.Tensor("O5").shape.dtype, DataType::I32);
  EXPECT_EQ(Elem(p, "O5").fn, ElemFn::Max);
  EXPECT_EQ(p.Tensor("O6").shape.dtype, DataType::F16);
  EXPECT_EQ(p.Tensor("O7").shape.dtype, DataType::F32);
  EXPECT_EQ(Elem(p, "O7").fn, ElemFn::Sigmoid);
  EXPECT_EQ(p.Tensor("O8").shape.dtype, DataType::F16);
}

TEST(Bind, Broadcasting) {
  Program p = BindText(R"(function (A, B, C, S) -> (O1, O2, O3) {
  O1 = A + B; O2 = C * B; O3 = (S > 0 ? A : C);
})",
                       {{"A", "f32[3, 1]"}, {"B", "f32[4]"}, {"C", "f32[2, 3, 4]"},
                        {"S", "f32[]"}});
  EXPECT_EQ(p.Tensor("O1").shape.dims, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(p.Tensor("O2").shape.dims, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(p.Tensor("O3").shape.dims, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(p.Tensor("_T0").shape.dims, (std::vector<int64_t>{}));
}

TEST(Bind, ConstantFolding) {
  Program p = BindText(R"(function (I[L]) -> (O) {
  Pad = (max(0, ((L + 1) / 2 - 1) * 2 + 3 - L)) / 2;
  O[x : (L + 1) / 2] = >(I[2*x + k - Pad]), k < 3;
})",
                       {{"I", "f32[7]"}});
  const ContractionOp& o = Contraction(p, "O");
  EXPECT_EQ(p.Tensor("O").shape.dims, (std::vector<int64_t>{4}));
  // Pad = (max(0, 3*2 + 3 - 7)) / 2 = 1
  EXPECT_EQ(o.inputs[0].index[0], P({{"x", 2}, {"k", 1}}, -1));
  EXPECT_EQ(o.constraints.size(), 1u);
  EXPECT_EQ(o.constraints[0].range, 3);
  // No op computes the constant.
  EXPECT_EQ(p.ops.size(), 1u);
  EXPECT_EQ(p.tensors.count("Pad"), 0u);
}

// A constant output is materialized as a rank-0 tensor, which shows folded values.
Scalar Folded(const Program& p, const std::string& name) {
  const ElementwiseOp& e = Elem(p, name);
  EXPECT_EQ(e.fn, ElemFn::Ident);
  EXPECT_EQ(e.operands.size(), 1u);
  EXPECT_TRUE(p.Tensor(name).shape.dims.empty());
  return e.operands.empty() ? Scalar{} : e.operands[0].scalar;
}

TEST(Bind, ConstantFoldingFollowsC) {
  Program p = BindText(R"(function (A[N]) -> (Q, R, F, S, C, M, T, V, W, X, Y, Z) {
  Q = -7 / 2; R = -7 % 3; F = 7.0 / 2; S = 1 << 4; C = (3 > 2) + (2 == 2.0);
  M = mod(17, 5); T = 3 ? 1 : 2.5; V = as_int(300, 8); W = as_uint(-1, 16);
  X = N * 2 - 1; Y = assert_ok(N == 4) + max(N, 9); Z = floor(7 / 2.0);
})",
                       {{"A", "f32[4]"}});
  EXPECT_EQ(Folded(p, "Q").i, -3);
  EXPECT_EQ(Folded(p, "Q").dtype, DataType::I32);
  EXPECT_EQ(Folded(p, "R").i, -1);
  EXPECT_TRUE(Folded(p, "F").is_float);
  EXPECT_EQ(Folded(p, "F").f, 3.5);
  EXPECT_EQ(Folded(p, "F").dtype, DataType::F32);
  EXPECT_EQ(Folded(p, "S").i, 16);
  EXPECT_EQ(Folded(p, "C").i, 2);
  EXPECT_EQ(Folded(p, "M").i, 2);
  EXPECT_TRUE(Folded(p, "T").is_float);  // the branches' common kind
  EXPECT_EQ(Folded(p, "T").f, 1.0);
  EXPECT_EQ(Folded(p, "V").i, 44);
  EXPECT_EQ(Folded(p, "W").i, 65535);
  EXPECT_EQ(Folded(p, "X").i, 7);
  EXPECT_EQ(Folded(p, "Y").i, 10);
  EXPECT_EQ(Folded(p, "Z").f, 3.0);
  // Constants need no ops besides the materializations; A is unused but kept.
  EXPECT_EQ(p.ops.size(), 12u);
  EXPECT_EQ(p.tensors.count("A"), 1u);
}

TEST(Bind, NamedConstantsInSizesPolynomialsAndBounds) {
  Program p = BindText(R"(function (I[N]) -> (O) {
  H = N / 2; Two = 2;
  O[i : H + 1] = +(I[Two * i + k - 1]), k < Two + 1, i + k < N;
})",
                       {{"I", "f32[10]"}});
  const ContractionOp& o = Contraction(p, "O");
  EXPECT_EQ(p.Tensor("O").shape.dims, (std::vector<int64_t>{6}));
  EXPECT_EQ(o.inputs[0].index[0], P({{"i", 2}, {"k", 1}}, -1));
  ASSERT_EQ(o.constraints.size(), 2u);
  EXPECT_EQ(o.constraints[0].range, 3);
  EXPECT_EQ(o.constraints[1].poly, P({{"i", 1}, {"k", 1}}));
  EXPECT_EQ(o.constraints[1].range, 10);
}

TEST(Bind, ContractionTypes) {
  Program p = BindText(R"(function (A[N], B[N], C[N], H[N]) -> (O1, O2, O3, O4, O5) {
  O1[] = +(A[i] == B[i]);
  O2[:] = >(A[i] == B[i] ? C[i]);
  O3[i : N] = <(A[i] * H[i]);
  O4[i : N] = *(C[i] + A[i]);
  O5[j, i : N, N] = =(A[i] * C[j]);
})",
                       {{"A", "i16[3]"}, {"B", "i16[3]"}, {"C", "u8[3]"}, {"H", "f16[3]"}});
  EXPECT_EQ(p.Tensor("O1").shape, S("bool[]"));
  EXPECT_EQ(Contraction(p, "O1").comb, ast::CombOp::Eq);
  EXPECT_EQ(p.Tensor("O2").shape, S("u8[]"));
  EXPECT_EQ(Contraction(p, "O2").comb, ast::CombOp::Cond);
  EXPECT_EQ(Contraction(p, "O2").agg, ast::AggOp::Max);
  EXPECT_EQ(p.Tensor("O3").shape, S("f16[3]"));
  EXPECT_EQ(Contraction(p, "O3").agg, ast::AggOp::Min);
  EXPECT_EQ(p.Tensor("O4").shape, S("i16[3]"));
  EXPECT_EQ(Contraction(p, "O4").agg, ast::AggOp::Prod);
  EXPECT_EQ(Contraction(p, "O4").comb, ast::CombOp::Add);
  EXPECT_EQ(p.Tensor("O5").shape, S("i16[3, 3]"));
  EXPECT_EQ(Contraction(p, "O5").agg, ast::AggOp::Assign);
  EXPECT_EQ(Contraction(p, "O5").output_index[0], P({{"j", 1}}));
}

TEST(Bind, RationalPolynomialsAndTighterBounds) {
  Program p = BindText("function (I[N], K[M]) -> (O) { O[i : 2 * N] = +(I[i/2 + k/2] * K[k]); }",
                       {{"I", "f32[5]"}, {"K", "f32[2]"}});
  const ContractionOp& o = Contraction(p, "O");
  EXPECT_EQ(o.inputs[0].index[0], P({{"i", Rational(1, 2)}, {"k", Rational(1, 2)}}));
  EXPECT_EQ(o.index_vars, (std::vector<std::string>{"i", "k"}));
  // i/2 + k/2 <= 4 with k >= 0 limits i to 8, tighter than the output's 9.
  EXPECT_EQ(o.bounds[0].lo, 0);
  EXPECT_EQ(o.bounds[0].hi, 8);
  EXPECT_EQ(o.bounds[1].lo, 0);
  EXPECT_EQ(o.bounds[1].hi, 1);
}

TEST(Bind, BoundsFromMultiIndexConstraintsAndSkipping) {
  Program p = BindText(R"(function (I[N]) -> (O, C) {
  O[i : N] = +(I[k]), i - k < N;
  C[i0 : N] = +(I[i0 - k]), k < N;
})",
                       {{"I", "f32[5]"}});
  const ContractionOp& o = Contraction(p, "O");
  EXPECT_EQ(o.bounds[0].hi, 4);
  EXPECT_EQ(o.bounds[1].hi, 4);
  const ContractionOp& c = Contraction(p, "C");
  EXPECT_EQ(c.index_vars, (std::vector<std::string>{"i0", "k"}));
  EXPECT_EQ(c.bounds[1].lo, 0);
  EXPECT_EQ(c.bounds[1].hi, 4);
}

TEST(Bind, ConstraintsNarrowOtherIndices) {
  Program p = BindText("function (I[N]) -> (O) { O[i : N] = +(I[i + j]), j < 2, i + j < 3; }",
                       {{"I", "f32[10]"}});
  const ContractionOp& o = Contraction(p, "O");
  EXPECT_EQ(o.bounds[0].lo, 0);
  EXPECT_EQ(o.bounds[0].hi, 2);  // from i + j < 3, j >= 0
  EXPECT_EQ(o.bounds[1].hi, 1);
}

TEST(Bind, EmptyBoxIsAllowed) {
  Program p = BindText("function (I[N]) -> (O) { O[x : 3] = +(I[x - 10]); }", {{"I", "f32[5]"}});
  const ContractionOp& o = Contraction(p, "O");
  ASSERT_EQ(o.bounds.size(), 1u);
  EXPECT_GT(o.bounds[0].lo, o.bounds[0].hi);
}

TEST(Bind, SoftmaxExpansion) {
  Program p = BindText("function (X[N, M]) -> (Y) { Y = builtin_softmax(X, N, M); }",
                       {{"X", "f32[3, 5]"}});
  ASSERT_EQ(p.ops.size(), 5u);
  const ContractionOp& m = Contraction(p, "_T0");
  EXPECT_EQ(m.agg, ast::AggOp::Max);
  EXPECT_EQ(p.Tensor("_T0").shape, S("f32[3, 1]"));
  EXPECT_EQ(m.output_index[1], P({}));
  EXPECT_EQ(m.bounds[1].hi, 4);  // j ranges over axis 1
  EXPECT_EQ(Elem(p, "_T1").fn, ElemFn::Sub);
  EXPECT_EQ(p.Tensor("_T1").shape, S("f32[3, 5]"));
  EXPECT_EQ(Elem(p, "_T2").fn, ElemFn::Exp);
  EXPECT_EQ(Contraction(p, "_T3").agg, ast::AggOp::Sum);
  EXPECT_EQ(Contraction(p, "_T3").inputs[0].tensor, "_T2");
  EXPECT_EQ(p.Tensor("_T3").shape, S("f32[3, 1]"));
  EXPECT_EQ(Elem(p, "Y").fn, ElemFn::Div);
  EXPECT_EQ(p.Tensor("Y").shape, S("f32[3, 5]"));
}

TEST(Bind, LogSoftmaxExpansion) {
  Program p = BindText("function (X[N, M]) -> (Y) { Y = builtin_logsoftmax(X, N, M); }",
                       {{"X", "f16[2, 4]"}});
  ASSERT_EQ(p.ops.size(), 6u);
  EXPECT_EQ(Elem(p, "_T4").fn, ElemFn::Log);
  EXPECT_EQ(p.Tensor("_T4").shape, S("f16[2, 1]"));
  EXPECT_EQ(Elem(p, "Y").fn, ElemFn::Sub);
  EXPECT_EQ(Elem(p, "Y").operands[0].tensor, "_T1");
  EXPECT_EQ(p.Tensor("Y").shape, S("f16[2, 4]"));
}

TEST(Bind, ReluAndReverseGrad) {
  Program p = BindText("function (A) -> (B, C) { B = relu(A); C = reverse_grad(A * 2, 1); }",
                       {{"A", "i8[4]"}});
  EXPECT_EQ(Elem(p, "_T0").fn, ElemFn::CmpLt);
  EXPECT_EQ(Elem(p, "B").fn, ElemFn::Cond);
  EXPECT_EQ(Elem(p, "B").operands[2].tensor, "A");
  EXPECT_EQ(p.Tensor("B").shape, S("i8[4]"));
  EXPECT_EQ(Elem(p, "C").fn, ElemFn::Mul);
}

TEST(Bind, Casts) {
  Program p = BindText(R"(function (A) -> (O1, O2, O3, O4) {
  O1 = as_float(A, 16); O2 = as_int(A, 64); O3 = as_uint(A, 8); O4 = as_bool(A);
})",
                       {{"A", "i32[2, 2]"}});
  EXPECT_EQ(p.Tensor("O1").shape, S("f16[2, 2]"));
  EXPECT_EQ(p.Tensor("O2").shape, S("i64[2, 2]"));
  EXPECT_EQ(p.Tensor("O3").shape, S("u8[2, 2]"));
  EXPECT_EQ(p.Tensor("O4").shape, S("bool[2, 2]"));
  EXPECT_EQ(Elem(p, "O1").fn, ElemFn::Cast);
  EXPECT_EQ(Elem(p, "O1").compute_type, DataType::I32);
}

TEST(Bind, SpecialOps) {
  Program p = BindText(R"(function (D, I, E, V, T) -> (G, Sc, Sh, R, X) {
  G = gather(D, I); Sc = scatter(E, I, V); Sh = shape(D); R = reshape(T, 3, 2 * 2); X = index(T, 1);
})",
                       {{"D", "f32[10, 3]"}, {"I", "i64[4, 2]"}, {"E", "f16[4, 2, 7]"},
                        {"V", "f32[9]"}, {"T", "u8[2, 6]"}});
  EXPECT_EQ(p.Tensor("G").shape, S("f32[4, 2, 3]"));
  EXPECT_EQ(Special(p, "G").fn, SpecialFn::Gather);
  EXPECT_EQ(Special(p, "G").inputs, (std::vector<std::string>{"D", "I"}));
  EXPECT_EQ(p.Tensor("Sc").shape, S("f16[9, 7]"));
  EXPECT_EQ(Special(p, "Sc").inputs, (std::vector<std::string>{"E", "I", "V"}));
  EXPECT_EQ(p.Tensor("Sh").shape, S("i32[2]"));
  EXPECT_EQ(Special(p, "Sh").fn, SpecialFn::Shape);
  EXPECT_EQ(p.Tensor("R").shape, S("u8[3, 4]"));
  EXPECT_EQ(Special(p, "R").fn, SpecialFn::Reshape);
  EXPECT_EQ(p.Tensor("X").shape, S("i32[2, 6]"));
  EXPECT_EQ(Elem(p, "X").fn, ElemFn::Index);
  EXPECT_EQ(Elem(p, "X").axis, 1);
}

TEST(Bind, PrngTriple) {
  Program p = BindText(R"(function (S) -> (V, NS, W) {
  T = prng_step(S, 3, 5); V = prng_value(T); NS = prng_state(T); W = prng_value(T) * 2;
})",
                       {{"S", "u32[3, 2048]"}});
  const SpecialOp& op = Special(p, "V");
  EXPECT_EQ(op.fn, SpecialFn::PrngStep);
  EXPECT_EQ(op.outputs, (std::vector<std::string>{"V", "NS"}));
  EXPECT_EQ(op.inputs, (std::vector<std::string>{"S"}));
  EXPECT_EQ(p.Tensor("V").shape, S("f32[3, 5]"));
  EXPECT_EQ(p.Tensor("NS").shape, S("u32[3, 2048]"));
  EXPECT_EQ(Elem(p, "W").operands[0].tensor, "V");
  EXPECT_EQ(p.ops.size(), 2u);
}

TEST(Bind, PrngValueUsedInsideAnExpressionFirst) {
  Program p = BindText(R"(function (S) -> (W, V) {
  T = prng_step(S, 4); W = prng_value(T) + 1; V = prng_value(T);
})",
                       {{"S", "u32[3, 2048]"}});
  const SpecialOp& op = Special(p, "_T0");
  EXPECT_EQ(Elem(p, "W").operands[0].tensor, op.outputs[0]);
  // The value already has a name in use, so V copies it.
  EXPECT_EQ(Elem(p, "V").fn, ElemFn::Ident);
  EXPECT_EQ(Elem(p, "V").operands[0].tensor, op.outputs[0]);
}

TEST(Bind, DeadOpsAreRemoved) {
  Program p = BindText(R"(function (A[N], B[M]) -> (C) {
  X[i : N] = +(A[i]);
  Y = X * 2;
  C = B + 1;
  Z = exp(Y);
})",
                       {{"A", "f32[3]"}, {"B", "f32[2]"}});
  ASSERT_EQ(p.ops.size(), 1u);
  EXPECT_EQ(Elem(p, "C").fn, ElemFn::Add);
  EXPECT_EQ(p.tensors.count("X"), 0u);
  EXPECT_EQ(p.tensors.count("Y"), 0u);
  EXPECT_EQ(p.tensors.count("Z"), 0u);
  EXPECT_EQ(p.tensors.count("A"), 1u);  // inputs stay, even unused
  EXPECT_EQ(p.inputs, (std::vector<std::string>{"A", "B"}));
}

TEST(Bind, DeadOpRemovalKeepsDependenciesAndDefaults) {
  Program p = BindText(R"(function (A[N]) -> (C) {
  P = A * 0;
  Unused = A + 1;
  C[i : N] = +(A[i]), i < 2 default P;
})",
                       {{"A", "f32[3]"}});
  ASSERT_EQ(p.ops.size(), 2u);
  EXPECT_EQ(Elem(p, "P").fn, ElemFn::Mul);
  EXPECT_EQ(p.tensors.count("Unused"), 0u);
}

TEST(Bind, IntermediateOutputAndVariableInputs) {
  Program p = BindText(R"(function (A, B[]) -> (X, Y) {
  X = A * B;
  Y[i : 4] = +(X[i, j]);
})",
                       {{"A", "f32[4, 6]"}, {"B", "f32[]"}});
  EXPECT_EQ(p.Tensor("X").role, TensorRole::Output);
  EXPECT_EQ(p.Tensor("X").shape, S("f32[4, 6]"));
  EXPECT_EQ(Contraction(p, "Y").bounds[1].hi, 5);
  EXPECT_EQ(p.outputs, (std::vector<std::string>{"X", "Y"}));
}

TEST(Bind, RepeatedDimensionsThatAgree) {
  Program p = BindText("function (A[N, N], B[N]) -> (C) { C[i : N] = +(A[i, j] * B[j]); }",
                       {{"A", "f32[3, 3]"}, {"B", "f32[3]"}});
  EXPECT_EQ(p.Tensor("C").shape, S("f32[3]"));
}

TEST(Bind, SpansPointAtDefinitions) {
  Program p = BindText("function (A) -> (B) {\n  B = A + 1;\n}", {{"A", "f32[2]"}});
  EXPECT_EQ(p.Tensor("B").span.begin.line, 2);
  EXPECT_EQ(p.Tensor("B").span.begin.col, 3);
  EXPECT_EQ(p.Tensor("A").span.begin.line, 1);
  EXPECT_EQ(p.source->name, "test.tile");
}

}  // namespace
}  // namespace tilec::lang
