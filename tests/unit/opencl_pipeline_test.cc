// Execution tests of the kernel pipeline on OpenCL: programs compiled with
// several tile choices, with and without local-memory staging, compared with
// the reference evaluator on random inputs.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/unit/pipeline_check.h"

namespace tilec {
namespace {

using testing::Case;
using testing::F32;

std::shared_ptr<hal::Device> Device() { return testing::DeviceFor("opencl"); }

// Compiles `c` with `options`, runs it on random inputs and compares every
// output with the reference evaluator.
void Check(const Case& c, compiler::CompileOptions options, const std::string& what) {
  auto device = Device();
  if (!device) GTEST_SKIP() << "no OpenCL device";
  testing::CheckCase(device, c, options, what);
}

const char* kConvRelu = R"(function (D[N, X, Y, CI], K[I, J, CO, CI]) -> (R) {
  O[n, x, y, co : N, X, Y, CO] = +(D[n, x + i - 1, y + j - 1, ci] * K[i, j, co, ci]);
  R = (O > 0 ? O : 0);
})";

TEST(OpenClPipeline, ConvReluDefaultTiles) {
  Case c{kConvRelu, {{"D", F32({2, 9, 7, 5})}, {"K", F32({3, 3, 6, 5})}}};
  for (bool local : {false, true}) {
    compiler::CompileOptions o;
    o.use_local = local;
    o.vectorize = false;
    Check(c, o, local ? "local" : "global");
  }
}

TEST(OpenClPipeline, ConvReluForcedTilesBothPaths) {
  // Indices: ci co i j n x y. Tiles that do not divide the ranges, and tiles
  // covering the image edge, so both the fast and the slow path run.
  Case c{kConvRelu, {{"D", F32({2, 9, 7, 5})}, {"K", F32({3, 3, 6, 5})}}};
  std::vector<std::vector<int64_t>> tiles = {
      {1, 1, 1, 1, 1, 1, 1}, {2, 4, 2, 3, 1, 4, 2}, {5, 6, 3, 3, 2, 9, 7}, {4, 3, 2, 2, 2, 3, 4}};
  for (bool local : {false, true})
    for (const auto& t : tiles) {
      compiler::CompileOptions o;
      o.use_local = local;
      o.vectorize = false;
      o.forced_tiles["kernel_0"] = t;
      Check(c, o, fmt::format("tile [{}] local={}", fmt::join(t, ","), local));
    }
}

TEST(OpenClPipeline, MatmulOddSizes) {
  Case c{"function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }",
         {{"A", F32({37, 29})}, {"B", F32({29, 19})}}};
  for (bool local : {false, true}) {
    compiler::CompileOptions o;
    o.use_local = local;
    o.vectorize = false;
    Check(c, o, "matmul");
    o.forced_tiles["kernel_0"] = {8, 16, 4};
    Check(c, o, "matmul forced");
  }
}

TEST(OpenClPipeline, ReductionsAndUnreached) {
  Case c{R"(function (I[N, M]) -> (S, P, MX, MN) {
  S[i : N] = +(I[i, j]);
  P[i : N] = *(I[i, j]), j < 3;
  MX[i : N] = >(I[i, j]), i + j < 4;
  MN[j : M] = <(I[i, j]);
})",
         {{"I", F32({6, 5})}}};
  for (bool local : {false, true}) {
    compiler::CompileOptions o;
    o.use_local = local;
    Check(c, o, "reductions");
  }
}

TEST(OpenClPipeline, ElementwiseChainAndBroadcast) {
  Case c{R"(function (A[N, M], B[M]) -> (C, D) {
  C = exp(A) * B + 1;
  D = (A > B ? A - B : -A) / 2;
})",
         {{"A", F32({7, 13})}, {"B", F32({13})}}};
  Check(c, {}, "elementwise");
}

TEST(OpenClPipeline, FillAndDefault) {
  Case c{R"(function (A[N], P[M]) -> (O, Q) {
  O[2 * i : 2 * N] = =(A[i]);
  Q[i + 1 : M] = =(A[i]) default P;
})",
         {{"A", F32({5})}, {"P", F32({9})}}};
  Check(c, {}, "fill/default");
}

TEST(OpenClPipeline, IntegersAndCasts) {
  Case c{R"(function (A[N], B[N]) -> (Q, R, F) {
  Q = A / B;
  R = A % B;
  F = as_int(A * 1.7, 32);
})",
         {{"A", {lang::DataType::I32, {17}}}, {"B", {lang::DataType::I32, {17}}}}};
  Check(c, {}, "ints");
}

TEST(OpenClPipeline, GatherUpsampleArgmax) {
  Case c{R"(function (D[N, C], I[K], U[L]) -> (G, O, AM) {
  G = gather(D, I);
  O[i : 2 * L] = =(U[i / 2]);
  Mx[n : N] = >(D[n, c]);
  Ix = index(D, 1);
  AM[n : N] = >(D[n, c] == Mx[n] ? Ix[n, c]);
})",
         {{"D", F32({4, 6})}, {"I", {lang::DataType::I32, {5}}}, {"U", F32({7})}}};
  Check(c, {}, "gather/upsample/argmax");
}

}  // namespace
}  // namespace tilec

namespace tilec {
namespace {

// A contraction reading and writing blocked (nChw16c, padded) tensors runs as
// a Direct kernel and matches the evaluator.
TEST(OpenClPipeline, BlockedLayoutsDirect) {
  auto device = Device();
  if (!device) GTEST_SKIP() << "no OpenCL device";
  const char* src = R"(function (D[N, C, H, W], K[CO, C, I, J]) -> (O) {
  O[n, co, x, y : N, CO, H, W] = +(D[n, c, x + i - 1, y + j - 1] * K[co, c, i, j]);
})";
  lang::Program bound = lang::Bind(lang::Parse(MakeSource("blocked.tile", src)),
                                   {{"D", F32({1, 20, 5, 6})}, {"K", F32({18, 20, 3, 3})}},
                                   {{"D", "nChw16c"}, {"O", "nChw8c"}});
  runtime::Program program = runtime::Program::Compile(bound, device);
  lang::Tensor d(bound.Tensor("D").shape), k(bound.Tensor("K").shape);
  lang::FillRandom(d, 3);
  lang::FillRandom(k, 4);
  auto want = lang::Evaluate(bound, {{"D", d}, {"K", k}}).at("O");
  auto got = program.Run({{"D", d}, {"K", k}}).at("O");
  for (int64_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got.GetDouble(i), want.GetDouble(i), 1e-4 * std::max(1.0, std::fabs(want.GetDouble(i))))
        << "element " << i;
}

TEST(OpenClPipeline, BlockedElementwiseIsAUserError) {
  auto device = Device();
  if (!device) GTEST_SKIP() << "no OpenCL device";
  lang::Program bound =
      lang::Bind(lang::Parse(MakeSource("e.tile", "function (A[N, C, H, W]) -> (B) { B = A * 2; }")),
                 {{"A", F32({1, 20, 2, 2})}}, {{"A", "nChw16c"}});
  try {
    runtime::Program::Compile(bound, device);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("blocked layout"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tilec
