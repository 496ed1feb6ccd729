// Execution tests of the kernel pipeline on OpenCL: programs compiled with
// several tile choices, with and without local-memory staging, compared with
// the reference evaluator on random inputs.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/unit/pipeline_cases.h"

namespace tilec {
namespace {

using testing::Case;
using testing::kConvRelu;
using testing::F32;

std::shared_ptr<hal::Device> Device() { return testing::DeviceFor("opencl"); }

// Compiles `c` with `options`, runs it on random inputs and compares every
// output with the reference evaluator.
void Check(const Case& c, compiler::CompileOptions options, const std::string& what) {
  auto device = Device();
  if (!device) GTEST_SKIP() << "no OpenCL device";
  testing::CheckCase(device, c, options, what);
}

TEST(OpenClPipeline, ConvReluDefaultTiles) {
  Case c = testing::ConvReluCase();
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
  Case c = testing::ConvReluCase();
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

TEST(OpenClPipeline, ConvReluForcedWorkGroups) {
  // Indices: ci co i j n x y (ranges 5 6 3 3 2 9 7; outputs co n x y).
  // Shapes with threads that do not divide the tile (loops with an edge)
  // and are not powers of two, on a tile that divides none of ci co x y,
  // staged and not.
  Case c = testing::ConvReluCase();
  std::vector<int64_t> tile = {4, 4, 3, 3, 2, 5, 4};
  std::vector<std::vector<int64_t>> shapes = {
      {1, 1, 1, 1, 1, 1, 1}, {1, 3, 1, 1, 2, 3, 4}, {1, 4, 1, 1, 1, 5, 1}, {1, 2, 1, 1, 2, 5, 3},
      {1, 4, 1, 1, 2, 8, 4}};  // the last: 3 threads past x's tile idle
  for (bool local : {false, true})
    for (const auto& shape : shapes) {
      compiler::CompileOptions o;
      o.use_local = local;
      o.vectorize = false;
      o.forced_tiles["kernel_0"] = tile;
      o.work_groups["kernel_0"] = shape;
      Check(c, o, fmt::format("work group [{}] local={}", fmt::join(shape, ","), local));
    }
}

TEST(OpenClPipeline, WorkGroupThatDoesNotFitIsAUserError) {
  Case c = testing::ConvReluCase();
  compiler::CompileOptions o;
  o.hw = compiler::SeedExampleHardware();
  o.vectorize = false;
  o.forced_tiles["kernel_0"] = {5, 6, 3, 3, 2, 9, 7};
  o.work_groups["kernel_0"] = {2, 1, 1, 1, 1, 1, 1};
  try {
    compiler::CompileProgram(testing::BindCase(c), o);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("--work-group kernel_0=2,1,1,1,1,1,1: ci is a reduction index"), std::string::npos)
        << e.message();
  }
}

TEST(OpenClPipeline, MatmulOddSizes) {
  Case c = testing::MatmulOddCase();
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
  Case c = testing::ReductionsCase();
  for (bool local : {false, true}) {
    compiler::CompileOptions o;
    o.use_local = local;
    Check(c, o, "reductions");
  }
}

TEST(OpenClPipeline, ElementwiseChainAndBroadcast) {
  Case c = testing::ElementwiseChainCase();
  Check(c, {}, "elementwise");
}

TEST(OpenClPipeline, FillAndDefault) {
  Case c = testing::FillDefaultCase();
  Check(c, {}, "fill/default");
}

TEST(OpenClPipeline, IntegersAndCasts) {
  Case c = testing::IntegersCase();
  Check(c, {}, "ints");
}

TEST(OpenClPipeline, BoolCombinations) { Check(testing::BoolCombinationsCase(), {}, "bool"); }

TEST(OpenClPipeline, GatherUpsampleArgmax) {
  Case c = testing::GatherUpsampleArgmaxCase();
  Check(c, {}, "gather/upsample/argmax");
}

}  // namespace
}  // namespace tilec

namespace tilec {
namespace {

// A contraction reading and writing blocked (nChw16c, nChw8c), padded
// tensors (Flatten splits c and co; the K layout keeps co out of the vector
// form, so the flat generator runs) matches the evaluator.
TEST(OpenClPipeline, BlockedLayoutsPadded) {
  auto device = Device();
  if (!device) GTEST_SKIP() << "no OpenCL device";
  const char* src = R"(function (D[N, C, H, W], K[CO, C, I, J]) -> (O) {
  O[n, co, x, y : N, CO, H, W] = +(D[n, c, x + i - 1, y + j - 1] * K[co, c, i, j]);
})";
  lang::Program bound = lang::Bind(lang::Parse(MakeSource("blocked.tile", src)),
                                   {{"D", F32({1, 20, 5, 6})}, {"K", F32({18, 20, 3, 3})}},
                                   {{"D", "nChw16c"}, {"O", "nChw8c"}});
  compiler::CompileOptions options;
  options.layouts.relayout = false;  // this kernel in these layouts, not relayouts into others
  runtime::Program program = runtime::Program::Compile(bound, device, options);
  for (const auto& kernel : program.compiled().kernels)
    EXPECT_NE(kernel.spec.kind, compiler::KernelKind::Direct) << kernel.spec.name;
  lang::Tensor d(bound.Tensor("D").shape), k(bound.Tensor("K").shape);
  lang::FillRandom(d, 3);
  lang::FillRandom(k, 4);
  auto want = lang::Evaluate(bound, {{"D", d}, {"K", k}}).at("O");
  auto got = program.Run({{"D", d}, {"K", k}}).at("O");
  for (int64_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got.GetDouble(i), want.GetDouble(i), 1e-4 * std::max(1.0, std::fabs(want.GetDouble(i))))
        << "element " << i;
}

// An elementwise statement on a blocked input (once refused as "not
// supported") runs: A is copied out of nChw16c, B written plain; and with B
// in nChw16c too, the kernel runs over A's padded blocks.
TEST(OpenClPipeline, BlockedElementwise) {
  auto device = Device();
  if (!device) GTEST_SKIP() << "no OpenCL device";
  const char* src = "function (A[N, C, H, W]) -> (B) { B = A * 2; }";
  testing::CheckCase(device, {src, {{"A", F32({1, 20, 2, 2})}}, {{"A", "nChw16c"}}}, {},
                     "plain result");
  testing::CheckCase(device, {src, {{"A", F32({1, 20, 2, 2})}}, {{"A", "nChw16c"}, {"B", "nChw16c"}}},
                     {}, "blocked result");
}

}  // namespace
}  // namespace tilec
