// Execution tests of the vector (CPU) form of contraction and elementwise
// kernels (compiler/forms/vector.cc) on OpenCL: each case asserts which form
// the generator chose and compares the results with the reference evaluator
// on random inputs, with sizes that leave tails in the block index, padding
// constraints that put some work items on the slow path, broadcast and
// vector inputs, post-ops on vectors and lane by lane, and f64.
#include <gtest/gtest.h>

#include "compiler/sem/printer.h"
#include "tests/unit/pipeline_cases.h"

namespace tilec {
namespace {

using testing::Case;
using testing::F32;
using testing::F64;

// The vector plan text of every kernel, in order ("" for the flat form).
std::vector<std::string> Plans(const runtime::Program& p) {
  std::vector<std::string> plans;
  for (const auto& k : p.compiled().kernels) plans.push_back(k.code.plan_text);
  return plans;
}

// PoCL's CPU device planning for an AVX-512 CPU (testing::kAvx512Cpu: 16
// lanes, 32 vector registers), whatever the host: the plans asserted here
// are that CPU's; PoCL compiles the kernels for the host.
std::shared_ptr<hal::Device> Device() { return testing::PinnedDevice("opencl", testing::kAvx512Cpu); }

// Compiles in the CPU form (no local staging), checks the results and that
// kernel `kernel` has (or has not) the vector form, whose plan contains
// `expect` when given.
void CheckVector(const Case& c, const std::string& what, size_t kernel, bool vector,
                 const std::string& expect = "") {
  auto device = Device();
  if (!device) GTEST_SKIP() << "no OpenCL device";
  compiler::CompileOptions o;
  o.use_local = false;
  o.layouts.relayout = false;  // the forms of these layouts, not of relayouts into others
  auto program = testing::CheckCase(device, c, o, what);
  std::vector<std::string> plans = Plans(*program);
  ASSERT_LT(kernel, plans.size()) << what;
  EXPECT_EQ(!plans[kernel].empty(), vector) << what << ": plan\n" << plans[kernel];
  if (!expect.empty()) {
    EXPECT_NE(plans[kernel].find(expect), std::string::npos) << plans[kernel];
  }
}

// HWIO weights: co is contiguous in K and R, so K is read as vectors and D
// broadcast. 9x7 images: the y block (4 on PoCL's model) leaves a tail, and
// "same" padding puts the border work items on the slow path.
const char* kConvHwio = R"(function (D[N, X, Y, CI], K[I, J, CI, CO], B[CO]) -> (R) {
  O[n, x, y, co : N, X, Y, CO] = +(D[n, x + i - 1, y + j - 1, ci] * K[i, j, ci, co]);
  R = relu(O + B);
})";

TEST(OpenClVector, ConvHwioBiasRelu) {
  CheckVector({kConvHwio, {{"D", F32({2, 9, 7, 5})}, {"K", F32({3, 3, 5, 32})}, {"B", F32({32})}}},
              "conv hwio", 0, true, "along co");
  // 48 channels: 3 vectors of 16; 20 channels: 2 vectors of 16, the second
  // masked.
  CheckVector({kConvHwio, {{"D", F32({1, 6, 11, 3})}, {"K", F32({3, 3, 3, 48})}, {"B", F32({48})}}},
              "conv 48", 0, true, "3 x 16 lanes");
  CheckVector({kConvHwio, {{"D", F32({1, 5, 5, 2})}, {"K", F32({3, 3, 2, 20})}, {"B", F32({20})}}},
              "conv 20", 0, true, "2 x 16 lanes of float along co, block of 5 along y, masked tail");
}

TEST(OpenClVector, StridedAndDilatedConv) {
  const char* src = R"(function (D[N, X, Y, CI], K[I, J, CI, CO]) -> (R) {
  R[n, x, y, co : N, (X + 1) / 2, (Y + 1) / 2, CO] = +(D[n, 2 * x + i - 1, 2 * y + 2 * j - 2, ci] * K[i, j, ci, co]);
})";
  CheckVector({src, {{"D", F32({1, 9, 10, 4})}, {"K", F32({3, 3, 4, 16})}}}, "strided", 0, true);
}

TEST(OpenClVector, DepthwiseBothInputsVectors) {
  const char* src = R"(function (D[N, X, Y, C], K[I, J, C]) -> (O) {
  O[n, x, y, c : N, X, Y, C] = +(D[n, x + i - 1, y + j - 1, c] * K[i, j, c]);
})";
  CheckVector({src, {{"D", F32({1, 7, 13, 32})}, {"K", F32({3, 3, 32})}}}, "depthwise", 0, true,
              "D vector, K vector");
}

TEST(OpenClVector, MatmulTailsAndF64) {
  const char* src = "function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }";
  CheckVector({src, {{"A", F32({37, 29})}, {"B", F32({29, 24})}}}, "matmul", 0, true, "block of");
  CheckVector({src, {{"A", F64({5, 3})}, {"B", F64({3, 16})}}}, "matmul f64", 0, true, "double");
}

TEST(OpenClVector, SumAndPoolingWithoutMul) {
  const char* src = R"(function (D[N, X, C]) -> (S, P) {
  S[n, c : N, C] = +(D[n, x, c]);
  P[n, x, c : N, X / 2, C] = +(D[n, 2 * x + i, c]), i < 2;
})";
  CheckVector({src, {{"D", F32({3, 9, 8})}}}, "sum/pool", 0, true);
}

TEST(OpenClVector, PostOpsLaneByLane) {
  // An integer result forces the lane-by-lane epilogue; index() needs the
  // true coordinates of each lane.
  const char* src = R"(function (A[M, K], B[K, N]) -> (C, Q, X) {
  C[i, j : M, N] = +(A[i, k] * B[k, j]);
  Q = as_int(C * 100, 32);
  X = index(C, 1) + C;
})";
  CheckVector({src, {{"A", F32({5, 3})}, {"B", F32({3, 16})}}}, "lanes", 0, true, "lane by lane");
}

TEST(OpenClVector, ElementwiseKernels) {
  const char* src = R"(function (A[N, M], B[M], C[N, M]) -> (R) {
  R = relu(A * B + C);
})";
  CheckVector({src, {{"A", F32({3, 64})}, {"B", F32({64})}, {"C", F32({3, 64})}}}, "elementwise", 0,
              true, "on vectors");
  // Integer elementwise stays in the flat form; odd sizes get a masked tail.
  const char* ints = "function (A[N]) -> (R) { R = A * 3 + 1; }";
  CheckVector({ints, {{"A", {lang::DataType::I32, {64}}}}}, "int elementwise", 0, false);
  CheckVector({src, {{"A", F32({3, 7})}, {"B", F32({7})}, {"C", F32({3, 7})}}}, "odd", 0, true,
              "masked tail");
}

TEST(OpenClVector, RelayoutCopiesSmallInputs) {
  // The seed's K[I, J, CO, CI]: co has stride CI in K. K is small next to the
  // convolution's work, so Lower copies it with co innermost (kernel 0) and
  // the convolution reads the copy as vectors (kernel 1).
  const char* seed = R"(function (D[N, X, Y, CI], K[I, J, CO, CI]) -> (R) {
  O[n, x, y, co : N, X, Y, CO] = +(D[n, x + i - 1, y + j - 1, ci] * K[i, j, co, ci]);
  R = (O > 0 ? O : 0);
})";
  Case c{seed, {{"D", F32({1, 5, 6, 3})}, {"K", F32({3, 3, 16, 3})}}};
  // The copy moves the contiguous axis (ci -> co): the transpose form.
  CheckVector(c, "seed layout copy", 0, true, "Transpose form: 16 x 16 tiles of float");
  CheckVector(c, "seed layout", 1, true, "K_vec0 vector");
  // Column-major B in a matmul: B is copied, A is not.
  const char* mm = "function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }";
  CheckVector({mm, {{"A", F32({40, 9})}, {"B", F32({9, 32})}}, {{"B", "order(1,0)"}}}, "col-major B", 1,
              true, "A broadcast, B_vec0 vector");
  // B wider than a work item's 64 columns (PoCL: 16 lanes x 4), each element
  // used by 520 rows (compiler/passes/lower.cc kPanelMinUses): copied in panels of
  // 64 columns, and j splits into j/64 and j%64.
  CheckVector({mm, {{"A", F32({520, 7})}, {"B", F32({7, 128})}}}, "B in panels", 1, true,
              "along j%64");
  // The copy itself reads and writes along the columns: a vector-form copy.
  CheckVector({mm, {{"A", F32({520, 7})}, {"B", F32({7, 128})}}}, "panel copy", 0, true,
              "along i1%64");
  // A big input next to little work is not copied: k is contiguous in both
  // A and B, so each output element is a dot product (the reduction form).
  CheckVector({mm, {{"A", F32({2, 9})}, {"B", F32({9, 32})}}, {{"B", "order(1,0)"}}}, "no copy", 0,
              true, "Reduction form: sum of float along k (9 values)");
}

TEST(OpenClVector, BlockedLayouts) {
  // nChw16c in and out: Flatten splits c and co into c/16, c%16 and co/16,
  // co%16; co%16 has stride 1 in O and in the HWIO weights.
  const char* src = R"(function (D[N, C, H, W], K[I, J, C, CO]) -> (R) {
  O[n, co, x, y : N, CO, H, W] = +(D[n, c, x + i - 1, y + j - 1] * K[i, j, c, co]);
  R = relu(O);
})";
  CheckVector({src, {{"D", F32({1, 32, 5, 9})}, {"K", F32({3, 3, 32, 32})}}, {{"D", "nChw16c"}, {"R", "nChw16c"}}},
              "nChw16c", 0, true, "along co%16");
  // C = 20 padded to 32 (a constraint on the reduction), output blocked by 8.
  CheckVector({src, {{"D", F32({2, 20, 4, 6})}, {"K", F32({3, 3, 20, 16})}}, {{"D", "nChw16c"}, {"R", "nChw8c"}}},
              "padded input", 0, true, "along co%8");
  // CO = 20 padded to 24: the padding constraint is on the vector index, a
  // lane mask.
  CheckVector({src, {{"D", F32({1, 8, 4, 4})}, {"K", F32({3, 3, 8, 20})}}, {{"R", "nChw8c"}}},
              "padded output", 0, true, "constraints on co%8 as lane masks");
}

TEST(OpenClVector, MaskedTails) {
  // Per-lane guarded loads and stores in OpenCL C for the tails, lane masks
  // for constraints on v.
  auto device = Device();
  if (!device) GTEST_SKIP() << "no OpenCL device";
  compiler::CompileOptions o;
  o.use_local = false;
  o.layouts.relayout = false;  // the forms of these layouts, not of relayouts into others
  for (const auto& [c, expect] : testing::MaskedTailCases()) {
    auto program = testing::CheckCase(device, c, o, expect);
    std::string plans = testing::VectorPlans(*program);
    EXPECT_NE(plans.find(expect), std::string::npos) << plans;
  }
}

TEST(OpenClVector, ReductionChunks) {
  // The blocks' accumulators in a private array of vectors in OpenCL C.
  auto device = Device();
  if (!device) GTEST_SKIP() << "no OpenCL device";
  compiler::CompileOptions o;
  o.use_local = false;
  o.layouts.relayout = false;
  for (const auto& [c, expect] : testing::ChunkCases()) {
    auto program = testing::CheckCase(device, c, o, expect);
    std::string plans = testing::VectorPlans(*program);
    EXPECT_NE(plans.find(expect), std::string::npos) << plans;
  }
}

TEST(OpenClVector, FallsBackWhereItDoesNotFit) {
  // A max with a constraint that leaves output elements unreached (c + d >=
  // 18 for every n: they must read 0) is not in the vector form; where n = 0
  // reaches every element it is (EveryOutputReached; cpu_forms_test).
  const char* unreached = "function (A[N, C, D]) -> (M) { M[c, d : C, D] = >(A[n, c, d]), n + c + d < 18; }";
  CheckVector({unreached, {{"A", F32({5, 16, 7})}}}, "max, unreached", 0, false);
  const char* mx = "function (A[N, C]) -> (M) { M[c : C] = >(A[n, c]), n + c < 18; }";
  CheckVector({mx, {{"A", F32({5, 16})}}}, "max, reached", 0, true, "constraints on c as lane masks");
}

}  // namespace
}  // namespace tilec
