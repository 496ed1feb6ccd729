// The temporaries' memory plan (runtime::Program::memory_plan): temporaries
// whose lifetimes do not overlap share a buffer; constant results, padded
// layouts and images keep their own. Every program is also run twice (the
// second run on the first run's buffers) and checked against the reference
// evaluator, on the LLVM backend and, where PoCL is installed, OpenCL.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "runtime/program.h"
#include "tests/unit/pipeline_check.h"
#include "tile_lang/evaluator.h"
#include "tile_lang/tensor.h"

namespace tilec {
namespace {

using testing::F32;

// Five contractions in a chain (none fuses into the next: each reads its
// input at shifted positions), so temporary k is dead once k + 1 is written.
const char* kChain = R"(
function (X[N]) -> (R) {
  A[i : N] = +(X[i + j]), j < 2;
  B[i : N] = +(A[i + j]), j < 2;
  C[i : N] = +(B[i + j]), j < 2;
  D[i : N] = +(C[i + j]), j < 2;
  R[i : N] = +(D[i + j]), j < 2;
})";

void CheckRuns(runtime::Program& p, const std::map<std::string, lang::Tensor>& inputs) {
  std::map<std::string, lang::Tensor> want = lang::Evaluate(p.bound(), inputs);
  for (int run = 0; run < 2; ++run) {
    std::map<std::string, lang::Tensor> got = p.Run(inputs);
    for (const auto& [name, w] : want)
      for (int64_t i = 0; i < w.size(); ++i)
        ASSERT_NEAR(got.at(name).GetDouble(i), w.GetDouble(i), 1e-4 * (1 + std::abs(w.GetDouble(i))))
            << name << "[" << i << "], run " << run;
  }
}

class MemoryPlanTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    device_ = testing::DeviceFor(GetParam());
    if (!device_) GTEST_SKIP() << "no " << GetParam() << " device";
  }
  std::shared_ptr<hal::Device> device_;
};

TEST_P(MemoryPlanTest, ChainOfTemporariesSharesBuffers) {
  lang::Program bound = testing::BindCase({kChain, {{"X", F32({1003})}}});
  runtime::Program p = runtime::Program::Compile(bound, device_);
  const runtime::MemoryPlan& m = p.memory_plan();
  ASSERT_EQ(m.temporaries, 4u) << "A, B, C and D are the temporaries";
  // A and C can share (A is dead once B is written), B and D too: two buffers.
  EXPECT_EQ(m.buffers, 2u);
  EXPECT_EQ(m.unshared_bytes, 4u * 1003 * 4);
  EXPECT_EQ(m.bytes, 2u * 1003 * 4);
  EXPECT_EQ(m.constant_results, 0u);
  lang::Tensor x(F32({1003}));
  lang::FillRandom(x, 7);
  CheckRuns(p, {{"X", x}});
}

TEST_P(MemoryPlanTest, ConstantResultsKeepTheirBuffers) {
  // K's relayout into panels reads only the constant K: it is kept
  // (constant_inputs_test.cc's convolution).
  const char* src = R"(
function (D[N, H, W, CI], K[KH, KW, CI, CO]) -> (R) {
  O[n, x, y, co : N, H, W, CO] = +(D[n, x + i - 1, y + j - 1, ci] * K[i, j, ci, co]);
  R = relu(O);
})";
  lang::Program bound = testing::BindCase({src, {{"D", F32({1, 23, 23, 13})}, {"K", F32({3, 3, 13, 128})}}});
  runtime::Program p = runtime::Program::Compile(bound, device_);
  p.SetConstantInputs({"K"});
  const runtime::MemoryPlan& m = p.memory_plan();
  size_t constant_kernels = 0;
  for (bool c : p.constant_kernels()) constant_kernels += c;
  ASSERT_GT(constant_kernels, 0u) << "K's panel copy reads only the constant K";
  EXPECT_EQ(m.constant_results, constant_kernels);
  EXPECT_LE(m.bytes, m.unshared_bytes);
  std::map<std::string, lang::Tensor> in = {{"D", lang::Tensor(F32({1, 23, 23, 13}))},
                                            {"K", lang::Tensor(F32({3, 3, 13, 128}))}};
  lang::FillRandom(in["D"], 1);
  lang::FillRandom(in["K"], 2);
  CheckRuns(p, in);
  // Without constants the plan is made again: nothing is kept.
  p.SetConstantInputs({});
  EXPECT_EQ(p.memory_plan().constant_results, 0u);
  CheckRuns(p, in);
}

TEST_P(MemoryPlanTest, PaddedTemporariesKeepTheirBuffers) {
  // T and U in nChw8c with 17 channels: 7 padded channels whose zeros the
  // second convolution reads.
  const char* src = R"(function (D[N, C, H, W], K[CO, C, I, J], L[CP, CO, I, J]) -> (R) {
  T[n, co, x, y : N, CO, H, W] = +(D[n, c, x + i - 1, y + j - 1] * K[co, c, i, j]);
  U = exp(T) - 1;
  R[n, cp, x, y : N, CP, H, W] = +(U[n, co, x + i - 1, y + j - 1] * L[cp, co, i, j]);
})";
  std::map<std::string, lang::Shape> shapes = {
      {"D", F32({1, 5, 4, 3})}, {"K", F32({17, 5, 3, 3})}, {"L", F32({6, 17, 3, 3})}};
  lang::Program bound = testing::BindCase({src, shapes, {{"T", "nChw8c"}, {"U", "nChw8c"}}});
  runtime::Program p = runtime::Program::Compile(bound, device_);
  const runtime::MemoryPlan& m = p.memory_plan();
  EXPECT_EQ(m.bytes, m.unshared_bytes) << "every temporary here is padded (or a panel copy)";
  std::map<std::string, lang::Tensor> in;
  uint64_t seed = 3;
  for (const auto& [name, shape] : shapes) {
    in.emplace(name, lang::Tensor(shape));
    lang::FillRandom(in.at(name), seed++);
  }
  CheckRuns(p, in);
}

INSTANTIATE_TEST_SUITE_P(Devices, MemoryPlanTest, ::testing::Values("llvm", "opencl"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace tilec
