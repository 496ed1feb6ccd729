// Flatten and the flat contraction printer: the seed's table, matmul, strided
// layouts, index shifts, constraint derivation, the rejections; and
// ReachedAddresses (the span of an access over the valid points).
#include "compiler/passes/flatten.h"

#include <gtest/gtest.h>

#include <sstream>

#include "support/error.h"
#include "tile_lang/binder.h"
#include "tile_lang/parser.h"
#include "tests/unit/flat_fixtures.h"

namespace tilec::compiler {
namespace {

using testing::AddTensor;
using testing::Poly;
using testing::SetIndices;
using testing::Var;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(Flatten, SeedConvTable) {
  lang::Program p = testing::SeedConvProgram();
  FlatContraction flat = Flatten(p, testing::FirstContraction(p));
  FlatContraction seed = testing::SeedConvFlat();
  EXPECT_EQ(flat.indices, seed.indices);
  ASSERT_EQ(flat.accesses.size(), 3u);
  for (size_t a = 0; a < 3; ++a) EXPECT_EQ(flat.accesses[a], seed.accesses[a]) << a;
  EXPECT_EQ(flat.accesses[1].offset, -14400);
  EXPECT_EQ(flat.constraints, seed.constraints);
  EXPECT_EQ(flat.num_inputs, 2);
  EXPECT_EQ(flat.agg_op, lang::ast::AggOp::Sum);
  EXPECT_EQ(flat.comb_op, lang::ast::CombOp::Mul);
  EXPECT_EQ(flat.agg_type, lang::DataType::F32);
  EXPECT_TRUE(flat.post_ops.empty());
  EXPECT_EQ(flat.kernel_outputs, std::vector<std::string>{"O"});
}

// The same table from the seed's Tile text, through the parser and binder.
TEST(Flatten, SeedConvFromTileSource) {
  SourceFilePtr src = MakeSource("seed.tile",
                                 "function (D[N, X, Y, CI], K[I, J, CO, CI]) -> (R) {\n"
                                 "  O[n, x, y, co : N, X, Y, CO] = +(D[n, x+i-1, y+j-1, ci] * "
                                 "K[i, j, co, ci]);\n"
                                 "  R = (O > 0 ? O : 0);\n"
                                 "}\n");
  lang::Program p = lang::Bind(lang::Parse(src), {{"D", lang::ParseShape("f32[32, 224, 224, 64]")},
                                                  {"K", lang::ParseShape("f32[3, 3, 64, 64]")}});
  const lang::ContractionOp* op = nullptr;
  for (const lang::Op& o : p.ops)
    if (auto* c = std::get_if<lang::ContractionOp>(&o)) op = c;
  ASSERT_NE(op, nullptr);
  FlatContraction flat = Flatten(p, *op);
  FlatContraction seed = testing::SeedConvFlat();
  EXPECT_EQ(flat.indices, seed.indices);
  ASSERT_EQ(flat.accesses.size(), 3u);
  for (size_t a = 0; a < 3; ++a) EXPECT_EQ(flat.accesses[a], seed.accesses[a]) << a;
  EXPECT_EQ(flat.constraints, seed.constraints);
}

TEST(Flatten, SeedConvPrintsTheSeedsLines) {
  lang::Program p = testing::SeedConvProgram();
  FlatContraction flat = Flatten(p, testing::FirstContraction(p));
  flat.post_ops = testing::SeedPostOps();
  std::vector<std::string> want = {
      "Contraction O:",
      "O[n, x, y, co : 32, 224, 224, 64] = +(D[n, i + x - 1, j + y - 1, ci] * K[i, j, co, ci])",
      // From here on, verbatim the seed's lines.
      "Range O D K",
      "ci 64 0 1 1",
      "co 64 1 0 64",
      "i 3 0 14336 12288",
      "j 3 0 64 4096",
      "n 32 3211264 3211264 0",
      "x 224 14336 14336 0",
      "y 224 64 64 0",
      "off 0 -14400 0",
      "Constraint: (0,0,-1,0,0,-1,0) <= -1",
      "Constraint: (0,0,1,0,0,1,0) <= 224",
      "Constraint: (0,0,0,-1,0,0,-1) <= -1",
      "Constraint: (0,0,0,1,0,0,1) <= 224",
      "Output operations:",
      "_T1 = cmp_gt(O, 0)",
      "R = cond(_T1, O, 0)",
  };
  EXPECT_EQ(Lines(ToString(flat)), want);
}

TEST(Flatten, HandTypedSeedTablePrintsTheSameRows) {
  std::vector<std::string> lines = Lines(ToString(testing::SeedConvFlat()));
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[0], "Contraction kernel_ID_0:");
  EXPECT_EQ(lines[1], "Range O D K");  // no comment line when there is no comment
}

// C[i, j : 37, 29] = +(A[i, k] * B[k, j]) with A f32[37, 19], B f32[19, 29].
lang::Program Matmul() {
  lang::Program p;
  AddTensor(p, "A", {37, 19});
  AddTensor(p, "B", {19, 29});
  AddTensor(p, "C", {37, 29}, lang::DataType::F32, lang::TensorRole::Output);
  lang::ContractionOp op;
  op.output = "C";
  op.output_index = {Var("i"), Var("j")};
  op.comb = lang::ast::CombOp::Mul;
  op.inputs = {{"A", {Var("i"), Var("k")}}, {"B", {Var("k"), Var("j")}}};
  SetIndices(op, {{"i", {0, 36}}, {"j", {0, 28}}, {"k", {0, 18}}});
  p.ops.push_back(op);
  return p;
}

TEST(Flatten, Matmul) {
  lang::Program p = Matmul();
  FlatContraction flat = Flatten(p, testing::FirstContraction(p));
  EXPECT_EQ(flat.indices, (std::vector<FlatIndex>{{"i", 37}, {"j", 29}, {"k", 19}}));
  EXPECT_EQ(flat.accesses[0].strides, (std::vector<int64_t>{29, 1, 0}));
  EXPECT_EQ(flat.accesses[1].strides, (std::vector<int64_t>{19, 0, 1}));
  EXPECT_EQ(flat.accesses[2].strides, (std::vector<int64_t>{0, 1, 29}));
  EXPECT_EQ(flat.accesses[0].limit, 37 * 29);
  EXPECT_EQ(flat.accesses[1].limit, 37 * 19);
  EXPECT_EQ(flat.accesses[2].limit, 19 * 29);
  for (const FlatAccess& a : flat.accesses) EXPECT_EQ(a.offset, 0);
  EXPECT_TRUE(flat.constraints.empty());
  EXPECT_EQ(Lines(ToString(flat))[2], "Range C A B");
  EXPECT_EQ(Lines(ToString(flat))[3], "i 37 29 19 0");
}

// An NCHW logical view of NHWC storage: logical dims [N, C, H, W] =
// [2, 3, 5, 7], physical order n, h, w, c. O[n, c, h, w] = +(I[n, c, h + k - 1, w]) * W[k]).
TEST(Flatten, StridedNchwView) {
  lang::Program p;
  AddTensor(p, "I", {2, 3, 5, 7});
  lang::Layout nhwc;
  nhwc.name = "nhwc";
  nhwc.phys = {{0, 1, 2, 5 * 7 * 3}, {2, 1, 5, 7 * 3}, {3, 1, 7, 3}, {1, 1, 3, 1}};
  nhwc.elements = 2 * 3 * 5 * 7;
  p.tensors["I"].layout = nhwc;
  AddTensor(p, "W", {3});
  AddTensor(p, "O", {2, 3, 5, 7}, lang::DataType::F32, lang::TensorRole::Output);
  lang::ContractionOp op;
  op.output = "O";
  op.output_index = {Var("n"), Var("c"), Var("h"), Var("w")};
  op.comb = lang::ast::CombOp::Mul;
  op.inputs = {{"I", {Var("n"), Var("c"), Poly({{"h", 1}, {"k", 1}}, -1), Var("w")}},
               {"W", {Var("k")}}};
  SetIndices(op, {{"c", {0, 2}}, {"h", {0, 4}}, {"k", {0, 2}}, {"n", {0, 1}}, {"w", {0, 6}}});
  p.ops.push_back(op);
  FlatContraction flat = Flatten(p, testing::FirstContraction(p));
  //                   c   h   k   n    w
  EXPECT_EQ(flat.accesses[0].strides, (std::vector<int64_t>{35, 7, 0, 105, 1}));
  EXPECT_EQ(flat.accesses[1].strides, (std::vector<int64_t>{1, 21, 21, 105, 3}));
  EXPECT_EQ(flat.accesses[1].offset, -21);
  EXPECT_EQ(flat.accesses[1].limit, 210);
  EXPECT_EQ(flat.accesses[2].strides, (std::vector<int64_t>{0, 0, 1, 0, 0}));
  EXPECT_EQ(flat.constraints,
            (std::vector<FlatConstraint>{{{0, -1, -1, 0, 0}, -1}, {{0, 1, 1, 0, 0}, 5}}));
}

TEST(Flatten, ShiftsLowerBoundsIntoOffsetsAndConstraints) {
  // O[i : 5] = +(I[i - 2]), i + j < 5 over I f32[3]: i in [2, 4], j in [1, 2].
  lang::Program p;
  AddTensor(p, "I", {3});
  AddTensor(p, "O", {5}, lang::DataType::F32, lang::TensorRole::Output);
  lang::ContractionOp op;
  op.output = "O";
  op.output_index = {Var("i")};
  op.inputs = {{"I", {Poly({{"i", 1}}, -2)}}};
  op.constraints = {{Poly({{"i", 1}, {"j", 1}}), 5}};
  SetIndices(op, {{"i", {2, 4}}, {"j", {1, 2}}});
  p.ops.push_back(op);
  FlatContraction flat = Flatten(p, testing::FirstContraction(p));
  EXPECT_EQ(flat.indices, (std::vector<FlatIndex>{{"i", 3}, {"j", 2}}));
  EXPECT_EQ(flat.accesses[0].offset, 2);
  EXPECT_EQ(flat.accesses[1].offset, 0);
  // i' + 2 + j' + 1 <= 4  ->  i' + j' <= 1; the lower side is implied.
  EXPECT_EQ(flat.constraints, (std::vector<FlatConstraint>{{{1, 1}, 1}}));
}

TEST(Flatten, ImpliedSidesAreDroppedAndParallelOnesMerged) {
  // O[x : 5] = >(I[2x + k] + J[2x + k]), k < 3, over I, J f32[10].
  lang::Program p;
  AddTensor(p, "I", {10});
  AddTensor(p, "J", {10});
  AddTensor(p, "O", {5}, lang::DataType::F32, lang::TensorRole::Output);
  lang::ContractionOp op;
  op.output = "O";
  op.output_index = {Var("x")};
  op.agg = lang::ast::AggOp::Max;
  op.comb = lang::ast::CombOp::Add;
  op.inputs = {{"I", {Poly({{"x", 2}, {"k", 1}})}}, {"J", {Poly({{"x", 2}, {"k", 1}})}}};
  op.constraints = {{Var("k"), 3}, {Poly({{"x", 2}, {"k", 2}}), 11}};
  SetIndices(op, {{"k", {0, 2}}, {"x", {0, 4}}});
  p.ops.push_back(op);
  FlatContraction flat = Flatten(p, testing::FirstContraction(p));
  // k + 2x <= 9 once (I and J give the same side); both sides of k < 3 and
  // the lower sides are implied by the box; 2k + 2x <= 10 reduces to
  // k + x <= 5, which the box does not imply (2 + 4 > 5).
  EXPECT_EQ(flat.constraints, (std::vector<FlatConstraint>{{{1, 2}, 9}, {{1, 1}, 5}}));
}

TEST(Flatten, GcdReductionMergesParallelConstraints) {
  // O[i : 8] = +(I[i] * J[j]), i + j < 4, 2i + 2j < 9 (the same, looser).
  lang::Program p;
  AddTensor(p, "I", {8});
  AddTensor(p, "J", {8});
  AddTensor(p, "O", {8}, lang::DataType::F32, lang::TensorRole::Output);
  lang::ContractionOp op;
  op.output = "O";
  op.output_index = {Var("i")};
  op.comb = lang::ast::CombOp::Mul;
  op.inputs = {{"I", {Var("i")}}, {"J", {Var("j")}}};
  op.constraints = {{Poly({{"i", 2}, {"j", 2}}), 9}, {Poly({{"i", 1}, {"j", 1}}), 4}};
  SetIndices(op, {{"i", {0, 7}}, {"j", {0, 7}}});
  p.ops.push_back(op);
  FlatContraction flat = Flatten(p, testing::FirstContraction(p));
  // 2i + 2j <= 8 -> i + j <= 4; then i + j <= 3 tightens it in place.
  EXPECT_EQ(flat.constraints, (std::vector<FlatConstraint>{{{1, 1}, 3}}));
}

TEST(Flatten, FractionalConstraintIsMultipliedThrough) {
  // O[i : 8] = +(I[i]), i/2 + j/3 < 2 over j in [0, 5]: 3i + 2j <= 11.
  lang::Program p;
  AddTensor(p, "I", {8});
  AddTensor(p, "O", {8}, lang::DataType::F32, lang::TensorRole::Output);
  lang::ContractionOp op;
  op.output = "O";
  op.output_index = {Var("i")};
  op.inputs = {{"I", {Var("i")}}};
  lang::Polynomial c;
  c.terms["i"] = lang::Rational(1, 2);
  c.terms["j"] = lang::Rational(1, 3);
  op.constraints = {{c, 2}};
  SetIndices(op, {{"i", {0, 7}}, {"j", {0, 5}}});
  p.ops.push_back(op);
  FlatContraction flat = Flatten(p, testing::FirstContraction(p));
  EXPECT_EQ(flat.constraints, (std::vector<FlatConstraint>{{{3, 2}, 11}}));
  // j is used by no tensor but still an index: it multiplies the sum.
  EXPECT_EQ(flat.indices[1], (FlatIndex{"j", 6}));
  EXPECT_EQ(flat.accesses[1].strides, (std::vector<int64_t>{1, 0}));
}

TEST(Flatten, RejectsFractionalAccess) {
  lang::Program p;
  AddTensor(p, "I", {8});
  AddTensor(p, "O", {4}, lang::DataType::F32, lang::TensorRole::Output);
  lang::ContractionOp op;
  op.output = "O";
  op.output_index = {Var("i")};
  lang::Polynomial half;
  half.terms["j"] = lang::Rational(1, 2);
  op.inputs = {{"I", {half}}};
  SetIndices(op, {{"i", {0, 3}}, {"j", {0, 7}}});
  p.ops.push_back(op);
  try {
    Flatten(p, testing::FirstContraction(p));
    FAIL() << "expected InternalError";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("fractional index polynomials need defractionalization"),
              std::string::npos)
        << e.what();
  }
}

TEST(Flatten, SplitsBlockedDimensions) {
  lang::Program p = testing::SeedConvProgram();
  // D as nChw16c-like: N, C/16, H, W, C%16 over logical [N, X, Y, CI].
  lang::Layout blocked;
  blocked.name = "nhwc16c";
  blocked.phys = {{0, 1, 32, 224 * 224 * 64},
                  {3, 16, 4, 224 * 224 * 16},
                  {1, 1, 224, 224 * 16},
                  {2, 1, 224, 16},
                  {3, 1, 16, 1}};
  blocked.elements = 32 * 224 * 224 * 64;
  p.tensors["D"].layout = blocked;
  FlatContraction flat = Flatten(p, testing::FirstContraction(p));
  // ci becomes ci/16 and ci%16 (the first two flat indices: ci sorts first).
  ASSERT_EQ(flat.indices.size(), 8u);
  EXPECT_EQ(flat.indices[0], (FlatIndex{"ci/16", 4}));
  EXPECT_EQ(flat.indices[1], (FlatIndex{"ci%16", 16}));
  const FlatAccess& d = flat.accesses[1];
  const FlatAccess& k = flat.accesses[2];
  EXPECT_EQ(d.strides[0], 224 * 224 * 16);
  EXPECT_EQ(d.strides[1], 1);
  EXPECT_EQ(k.strides[0], 16);  // K[i, j, co, ci] row-major: ci = 16*(ci/16) + ci%16
  EXPECT_EQ(k.strides[1], 1);
  EXPECT_EQ(d.limit, blocked.elements);
  ASSERT_EQ(flat.vars.size(), 7u);
  EXPECT_EQ(flat.vars[0].var, "ci");
  EXPECT_EQ(flat.vars[0].coeffs, (std::vector<int64_t>{16, 1, 0, 0, 0, 0, 0, 0}));
  // 64 = 4 * 16: no padding constraint beyond the seed's four.
  EXPECT_EQ(flat.constraints.size(), 4u);
}

TEST(Flatten, RejectsBlockedDimensionsOfCompoundIndices) {
  lang::Program p = testing::SeedConvProgram();
  // X blocked by 8: indexed by x + i - 1, which a split cannot express.
  lang::Layout blocked;
  blocked.name = "xblocked";
  blocked.phys = {{0, 1, 32, 224 * 224 * 64},
                  {1, 8, 28, 8 * 224 * 64},
                  {2, 1, 224, 8 * 64},
                  {3, 1, 64, 8},
                  {1, 1, 8, 1}};
  blocked.elements = 32 * 224 * 224 * 64;
  p.tensors["D"].layout = blocked;
  EXPECT_FALSE(TryFlatten(p, testing::FirstContraction(p)).has_value());
  try {
    Flatten(p, testing::FirstContraction(p));
    FAIL() << "expected InternalError";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("is blocked by 8 but indexed by"), std::string::npos)
        << e.what();
  }
}

TEST(Flatten, UnsetLayoutIsRowMajor) {
  lang::Program p = Matmul();
  p.tensors["A"].layout = lang::Layout{};
  FlatContraction flat = Flatten(p, testing::FirstContraction(p));
  EXPECT_EQ(flat.accesses[1].strides, (std::vector<int64_t>{19, 0, 1}));
  EXPECT_EQ(flat.accesses[1].limit, 37 * 19);
}

TEST(Flatten, EmptyBoxContributesNothing) {
  lang::Program p = Matmul();
  auto& op = std::get<lang::ContractionOp>(p.ops[0]);
  op.bounds[2] = {5, 4};  // no valid k
  FlatContraction flat = Flatten(p, op);
  EXPECT_EQ(flat.indices[2], (FlatIndex{"k", 1}));
  EXPECT_EQ(flat.constraints, (std::vector<FlatConstraint>{{{0, 0, 0}, -1}}));
}

TEST(Flatten, OverflowingStridesAreUserErrors) {
  lang::Program p = Matmul();
  auto& op = std::get<lang::ContractionOp>(p.ops[0]);
  op.inputs[0].index[0] = Poly({{"i", int64_t{1} << 62}});
  EXPECT_THROW(Flatten(p, op), UserError);
}

TEST(FlatVerify, CatchesInconsistentTables) {
  FlatContraction f = testing::SeedConvFlat();
  EXPECT_NO_THROW(Verify(f));
  FlatContraction bad = f;
  bad.accesses[1].strides.pop_back();
  EXPECT_THROW(Verify(bad), InternalError);
  bad = f;
  bad.constraints[0].lhs.push_back(0);
  EXPECT_THROW(Verify(bad), InternalError);
  bad = f;
  bad.indices[0].range = 0;
  EXPECT_THROW(Verify(bad), InternalError);
  bad = f;
  bad.num_inputs = 3;
  EXPECT_THROW(Verify(bad), InternalError);
}

}  // namespace
}  // namespace tilec::compiler

namespace tilec::compiler {
namespace {

// The weights panel of a blocked convolution (forms/vector.cc defers the
// constraint on its lanes when every load stays inside): c = 8 * c/8 + c%8
// <= 19 over panels of 8 output channels co, the lanes free.
FlatContraction PanelTable() {
  FlatContraction flat;
  flat.indices = {{"c/8", 3}, {"c%8", 8}, {"co", 8}};
  flat.accesses = {{"K", lang::DataType::F32, 0, {64, 8, 1}, 3 * 64}};
  flat.constraints = {{{8, 1, 0}, 19}, {{0, 0, 1}, 4}};
  return flat;
}

TEST(ReachedAddresses, EnumeratesConstrainedIndicesAndFreesTheLanes) {
  FlatContraction flat = PanelTable();
  // c at most 19: (c/8, c%8) = (2, 3); co (free) its whole range, although a
  // constraint (co <= 4) mentions it.
  std::optional<AddressSpan> span = ReachedAddresses(flat, flat.accesses[0], {false, false, true});
  ASSERT_TRUE(span.has_value());
  EXPECT_EQ(span->lo, 0);
  EXPECT_EQ(span->hi, 2 * 64 + 3 * 8 + 7);
  // co not free: its constraint counts too.
  span = ReachedAddresses(flat, flat.accesses[0], {false, false, false});
  ASSERT_TRUE(span.has_value());
  EXPECT_EQ(span->hi, 2 * 64 + 3 * 8 + 4);
}

TEST(ReachedAddresses, NegativeStridesOffsetsAndNoValidPoint) {
  FlatContraction flat = PanelTable();
  flat.accesses[0].strides = {-64, 8, 1};
  flat.accesses[0].offset = 200;
  std::optional<AddressSpan> span = ReachedAddresses(flat, flat.accesses[0], {false, false, true});
  ASSERT_TRUE(span.has_value());
  EXPECT_EQ(span->lo, 200 - 2 * 64);
  EXPECT_EQ(span->hi, 200 + 7 * 8 + 7);  // c/8 = 0 allows every c%8
  flat.constraints.push_back({{0, 1, 0}, -1});  // c%8 <= -1: no point
  EXPECT_FALSE(ReachedAddresses(flat, flat.accesses[0], {false, false, true}).has_value());
}

TEST(ReachedAddresses, LargeGroupsAreBoundedByTheirRanges) {
  // x + i - 1 >= 0 links 300000 x 3 points: more than are enumerated, so
  // the span is the whole box (an outer bound: i = 0 with x = 0 is invalid,
  // still counted).
  FlatContraction flat;
  flat.indices = {{"x", 300000}, {"i", 3}};
  flat.accesses = {{"D", lang::DataType::F32, -1, {1, 1}, 300000}};
  flat.constraints = {{{-1, -1}, -1}};
  std::optional<AddressSpan> span = ReachedAddresses(flat, flat.accesses[0], {false, false});
  ASSERT_TRUE(span.has_value());
  EXPECT_EQ(span->lo, -1);
  EXPECT_EQ(span->hi, 300000);
}

}  // namespace
}  // namespace tilec::compiler
