// Execution tests of non-row-major plain layouts on OpenCL: programs bound
// with layouts on inputs, outputs and intermediates ("order(...)"
// permutations, "strides(...)" with gaps), run through runtime::Program (which
// packs the logical tensors into those layouts) and compared with the
// reference evaluator on the same logical inputs. If a kernel ignored a
// layout it would read the packed buffers at the wrong offsets.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/unit/pipeline_check.h"
#include "tile_lang/layout.h"

namespace tilec {
namespace {

std::shared_ptr<hal::Device> Device() { return testing::DeviceFor("opencl"); }

using testing::Case;
using testing::F32;

// The name of the (only) contraction kernel of `program`. Outputs with gaps
// make Lower emit a fill kernel first, so it is not always kernel_0.
std::string ContractionKernel(const runtime::Program& program) {
  std::string name;
  for (const auto& k : program.compiled().kernels)
    if (k.spec.kind == compiler::KernelKind::Contraction) {
      EXPECT_TRUE(name.empty()) << "two contraction kernels";
      name = k.spec.name;
    }
  EXPECT_FALSE(name.empty()) << "no contraction kernel";
  return name;
}

// Binds `c` with its layouts, compiles it with `options` (and `tile` forced
// on its contraction kernel, if given), runs it on random inputs and compares
// every output with the reference evaluator.
void Check(const Case& c, compiler::CompileOptions options, const std::string& what,
           const std::vector<int64_t>& tile = {}) {
  auto device = Device();
  if (!device) GTEST_SKIP() << "no OpenCL device";
  lang::Program bound =
      lang::Bind(lang::Parse(MakeSource("test.tile", c.source)), c.shapes, c.layouts);
  for (const auto& [name, spec] : c.layouts) {
    const lang::TensorDecl& t = bound.Tensor(name);
    ASSERT_EQ(t.layout, lang::ParseLayout(spec, t.shape.dims)) << what << ": " << name;
    ASSERT_FALSE(t.layout.IsRowMajor(t.shape.dims)) << what << ": " << name << " " << spec;
  }
  options.hw = device->hardware_model();
  // The kernels of these layouts themselves, not relayouts into others.
  options.layouts.relayout = false;
  runtime::Program program = runtime::Program::Compile(bound, device, options, true);
  if (!tile.empty()) {
    std::string kernel = ContractionKernel(program);
    options.forced_tiles[kernel] = tile;
    program = runtime::Program::Compile(bound, device, options, true);
    for (const auto& k : program.compiled().kernels)
      if (k.spec.name == kernel) {
        EXPECT_EQ(k.tile, tile) << what;
      }
  }
  // The compiled program keeps the layouts its buffers are packed in.
  for (const auto& [name, spec] : c.layouts) {
    auto it = program.bound().tensors.find(name);
    if (it != program.bound().tensors.end()) {
      EXPECT_EQ(it->second.layout.name, lang::ParseLayout(spec, it->second.shape.dims).name)
          << what << ": " << name;
    }
  }
  testing::CompareWithEvaluator(program, what);
}

// Runs `c` with default tiles: the vector form (where it applies), the flat
// form without and with local-memory staging.
void CheckBothPaths(const Case& c, const std::string& what) {
  for (int form = 0; form < 3; ++form) {
    compiler::CompileOptions o;
    o.use_local = form == 2;
    o.vectorize = form == 0;
    Check(c, o, fmt::format("{} form={}", what, form));
  }
}

const char* kConvRelu = R"(function (D[N, X, Y, CI], K[I, J, CO, CI]) -> (R) {
  O[n, x, y, co : N, X, Y, CO] = +(D[n, x + i - 1, y + j - 1, ci] * K[i, j, co, ci]);
  R = (O > 0 ? O : 0);
})";

const char* kMatmul = "function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }";

TEST(OpenClLayout, ConvReluPermuted) {
  // D and R channel-first (NCHW over NHWC logical dims), K as CO, CI, I, J.
  Case c{kConvRelu,
         {{"D", F32({2, 9, 7, 5})}, {"K", F32({3, 3, 6, 5})}},
         {{"D", "order(0,3,1,2)"}, {"K", "order(2,3,0,1)"}, {"R", "order(3,0,1,2)"}}};
  CheckBothPaths(c, "conv permuted");
}

TEST(OpenClLayout, ConvReluStridedViews) {
  // D interleaved with gaps: strides nest as n(1) < ci(3) < x(20) < y(200).
  Case c{kConvRelu,
         {{"D", F32({2, 9, 7, 5})}, {"K", F32({3, 3, 6, 5})}},
         {{"D", "strides(1,20,200,3)"}, {"K", "strides(500,100,8,1)"},
          {"R", "strides(1000,100,10,1)"}}};
  CheckBothPaths(c, "conv strided");
}

TEST(OpenClLayout, ConvReluIntermediateLayout) {
  // A layout on the intermediate O as well as on the output.
  Case c{kConvRelu,
         {{"D", F32({2, 9, 7, 5})}, {"K", F32({3, 3, 6, 5})}},
         {{"D", "order(3,2,1,0)"}, {"O", "order(0,3,1,2)"}, {"R", "strides(1,2,20,160)"}}};
  CheckBothPaths(c, "conv intermediate");
}

TEST(OpenClLayout, MatmulColumnMajorAndViews) {
  Case c{kMatmul,
         {{"A", F32({37, 29})}, {"B", F32({29, 19})}},
         {{"A", "order(1,0)"}, {"B", "strides(1,40)"}, {"C", "strides(64,2)"}}};
  CheckBothPaths(c, "matmul");
  for (bool local : {false, true}) {
    compiler::CompileOptions o;
    o.use_local = local;
    Check(c, o, fmt::format("matmul forced tiles local={}", local), {8, 16, 4});
  }
}

TEST(OpenClLayout, MatmulNamedFormatsRank4) {
  // A batched matmul over rank-4 tensors in named plain formats.
  Case c{R"(function (A[B, H, M, K], W[B, H, K, N]) -> (C) {
  C[b, h, i, j : B, H, M, N] = +(A[b, h, i, k] * W[b, h, k, j]);
})",
         {{"A", F32({2, 3, 5, 7})}, {"W", F32({2, 3, 7, 4})}},
         {{"A", "nhwc"}, {"W", "chwn"}, {"C", "nhwc"}}};
  CheckBothPaths(c, "batched matmul");
}

}  // namespace
}  // namespace tilec
