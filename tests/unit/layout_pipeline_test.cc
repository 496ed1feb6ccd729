// Contractions over tensors in the seeds' blocked layouts (tag grammar and
// named formats: CHWN4, NCHW4, OIhw16i16o, aBcd16b, double blocking such as
// ABcd8a16b2a), run on both backends and compared with the reference
// evaluator, with sizes that fill no block. Layouts Flatten can express (each
// blocked dim split once, one block size per index variable) become flat
// contraction kernels; the others fall back to Direct kernels, which address
// any physical dim list (compiler/passes/lower.cc, forms/special.cc).
#include <gtest/gtest.h>

#include "compiler/pipeline.h"
#include "tests/unit/pipeline_check.h"

namespace tilec {
namespace {

using compiler::KernelKind;
using testing::Case;
using testing::F32;

// Logical NCHW convolution, 3x3 "same", weights OIHW.
constexpr const char* kConv =
    "function (D[N, C, H, W], K[CO, C, KH, KW]) -> (O) {\n"
    "  O[n, co, x, y : N, CO, H, W] = +(D[n, ci, x + i - 1, y + j - 1] * K[co, ci, i, j]), i < 3, j < 3;\n"
    "}\n";
constexpr const char* kMatmul = "function (A[M, L], B[L, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }";

struct LayoutCase {
  const char* what;
  Case c;
  KernelKind kind;  // how Lower must compute the contraction
};

std::vector<LayoutCase> Cases() {
  // C = 5, CO = 3, 20: no block of 4, 8 or 16 is full.
  auto conv = [](std::vector<int64_t> d, std::vector<int64_t> k, std::map<std::string, std::string> layouts) {
    return Case(kConv, {{"D", F32(d)}, {"K", F32(k)}}, std::move(layouts));
  };
  return {
      {"conv aBcd16b, OIhw16i16o -> aBcd16b",
       conv({2, 5, 6, 7}, {20, 5, 3, 3}, {{"D", "aBcd16b"}, {"K", "OIhw16i16o"}, {"O", "aBcd16b"}}),
       KernelKind::Contraction},
      {"conv NCHW4, OIhw4i4o -> NCHW4",
       conv({1, 5, 5, 6}, {6, 5, 3, 3}, {{"D", "NCHW4"}, {"K", "OIhw4i4o"}, {"O", "NCHW4"}}),
       KernelKind::Contraction},
      {"conv CHWN4, OIhw4i16o -> CHWN4",
       conv({3, 5, 4, 5}, {7, 5, 3, 3}, {{"D", "CHWN4"}, {"K", "OIhw4i16o"}, {"O", "CHWN4"}}),
       KernelKind::Direct},  // co is blocked by 16 in K, by 4 in O
      {"conv CHWN4, OIhw16i16o -> aBcd16b",
       conv({2, 5, 6, 7}, {3, 5, 3, 3}, {{"D", "CHWN4"}, {"K", "OIhw16i16o"}, {"O", "aBcd16b"}}),
       KernelKind::Direct},  // ci is blocked by 4 in D, by 16 in K
      {"conv ABcd8a16b2a, OIhw4i16o4i -> b_fs_yx_fsv4",
       conv({20, 17, 3, 4}, {5, 17, 3, 3}, {{"D", "ABcd8a16b2a"}, {"K", "OIhw4i16o4i"}, {"O", "b_fs_yx_fsv4"}}),
       KernelKind::Direct},  // double blocking
      {"conv NCHW, os_is_yx_osa4_isa8_osv8_isv4 -> ABcd8a16b2a",
       conv({3, 9, 4, 4}, {33, 9, 3, 3}, {{"K", "os_is_yx_osa4_isa8_osv8_isv4"}, {"O", "ABcd8a16b2a"}}),
       KernelKind::Direct},
      {"conv abCd4c (H blocked, read at x + i - 1) -> abCD4c2d",
       conv({1, 3, 7, 5}, {2, 3, 3, 3}, {{"D", "abCd4c"}, {"O", "abCD4c2d"}}),
       KernelKind::Direct},  // a blocked dim indexed by an expression
      {"matmul AB8a16b2a x BA16a4b -> Ab4a",
       Case(kMatmul, {{"A", F32({21, 19})}, {"B", F32({19, 6})}}, {{"A", "AB8a16b2a"}, {"B", "BA16a4b"}, {"C", "Ab4a"}}),
       KernelKind::Direct},
      {"matmul Ab16a x aB8b -> AB16a8b",
       Case(kMatmul, {{"A", F32({21, 19})}, {"B", F32({19, 13})}}, {{"A", "Ab16a"}, {"B", "aB8b"}, {"C", "AB16a8b"}}),
       KernelKind::Contraction},
  };
}

// A conv output and its relu in two names of one layout (nChw16c and
// b_fs_yx_fsv16): the relu is fused and written through the output's access.
TEST(LayoutPipeline, AliasesOfOneLayoutFuse) {
  Case c(
      "function (D[N, C, H, W], K[CO, C, KH, KW]) -> (O, R) {\n"
      "  O[n, co, x, y : N, CO, H, W] = +(D[n, ci, x + i - 1, y + j - 1] * K[co, ci, i, j]), i < 3, j < 3;\n"
      "  R = relu(O);\n"
      "}\n",
      {{"D", F32({1, 17, 5, 5})}, {"K", F32({20, 17, 3, 3})}},
      {{"D", "nChw16c"}, {"K", "OIhw16i16o"}, {"O", "nChw16c"}, {"R", "b_fs_yx_fsv16"}});
  auto program = testing::CheckCase(hal::OpenDevice("llvm"), c, compiler::CompileOptions{}, "aliases on llvm");
  ASSERT_EQ(program->compiled().kernels.size(), 1u);
  EXPECT_EQ(program->compiled().kernels[0].spec.outputs, (std::vector<std::string>{"O", "R"}));
}

void CheckAll(const std::shared_ptr<hal::Device>& device, const std::string& target) {
  for (const LayoutCase& lc : Cases()) {
    std::string what = fmt::format("{} on {}", lc.what, target);
    // The kernel each layout gets, without relayouts into faster layouts
    // (choose_layouts_test.cc tests those).
    compiler::CompileOptions options;
    options.layouts.relayout = false;
    auto program = testing::CheckCase(device, lc.c, options, what);
    ASSERT_TRUE(program) << what;
    const auto& kernels = program->compiled().kernels;
    ASSERT_EQ(kernels.size(), 1u) << what;
    EXPECT_EQ(kernels[0].spec.kind, lc.kind) << what;
  }
}

TEST(LayoutPipeline, LlvmMatchesEvaluator) { CheckAll(hal::OpenDevice("llvm"), "llvm"); }

TEST(LayoutPipeline, OpenClMatchesEvaluator) {
  auto device = testing::DeviceFor("opencl");
  if (!device) GTEST_SKIP() << "no OpenCL device";
  CheckAll(device, "opencl");
}

}  // namespace
}  // namespace tilec
