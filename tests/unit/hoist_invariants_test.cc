// Per-channel work out of per-element kernels (compiler/passes/hoist_invariants.h):
// batch norm over NHWC data is one tiny per-channel kernel and one
// elementwise kernel that multiplies by a reciprocal, on the llvm device and
// on OpenCL (PoCL) in the CPU forms, compared with the reference evaluator
// (of the program as written, with its division) on random inputs with
// channel counts no vector divides.
#include <gtest/gtest.h>

#include "compiler/passes/hoist_invariants.h"
#include "tests/unit/pipeline_cases.h"

namespace tilec {
namespace {

using testing::Case;
using testing::F32;
using testing::F64;

// Var * Var keeps the square root's argument positive on random inputs.
const char* kBatchNorm = R"(function (X[N, H, W, C], Mean[C], Var[C], Gamma[C], Beta[C]) -> (Y) {
  Eps = 0.001;
  Y = (X - Mean) / sqrt(Var * Var + Eps) * Gamma + Beta;
})";

class Hoist : public ::testing::TestWithParam<std::string> {
 protected:
  std::unique_ptr<runtime::Program> Check(const Case& c, const std::string& what) {
    auto device = testing::DeviceFor(GetParam());
    compiler::CompileOptions o;
    o.use_local = false;
    return testing::CheckCase(device, c, o, fmt::format("{} on {}", what, GetParam()));
  }
  void SetUp() override {
    if (!testing::DeviceFor(GetParam())) GTEST_SKIP() << "no " << GetParam() << " device";
  }
};

std::string KernelList(const runtime::Program& p) {
  std::string s;
  for (const auto& k : p.compiled().kernels)
    s += fmt::format("{}: writes {}; reads {}\n", k.spec.name, fmt::join(k.spec.outputs, ", "),
                     fmt::join(k.spec.inputs, ", "));
  return s;
}

TEST_P(Hoist, BatchNormIsTwoKernels) {
  for (int64_t c : {1, 7, 19, 64}) {
    for (auto t : {F32({2, 5, 7, c}), F64({2, 3, 3, c})}) {
      lang::Shape ch{t.dtype, {c}};
      auto p = Check({kBatchNorm, {{"X", t}, {"Mean", ch}, {"Var", ch}, {"Gamma", ch}, {"Beta", ch}}},
                     fmt::format("batch norm C={}", c));
      std::string kernels = KernelList(*p);
      ASSERT_EQ(p->compiled().kernels.size(), 2u) << kernels;
      // The per-channel kernel first, writing the reciprocal the other reads.
      EXPECT_NE(kernels.find("kernel_0: writes _T3_recip; reads Var"), std::string::npos) << kernels;
      EXPECT_NE(kernels.find("kernel_1: writes Y; reads X, Mean, _T3_recip, Gamma, Beta"), std::string::npos)
          << kernels;
    }
  }
}

TEST_P(Hoist, DivisionsThatStay) {
  // Integer division, a divisor as large as the result, and a divisor
  // computed from the data are not rewritten (the evaluator's exact results).
  const char* src = R"(function (A[N, C], B[C], D[N, C], K[C]) -> (Y, Z, Q) {
  Y = A / (B * B + 1);
  Z = A / (D * D + 1);
  Q = K / 3;
})";
  auto p = Check({src, {{"A", F32({9, 5})}, {"B", F32({5})}, {"D", F32({9, 5})}, {"K", {lang::DataType::I32, {5}}}}},
                 "divisions");
  // B * B + 1 has 5 elements, A / it 45: under 1/16, so no reciprocal.
  for (const auto& k : p->compiled().kernels)
    for (const std::string& o : k.spec.outputs) EXPECT_EQ(o.find("_recip"), std::string::npos) << KernelList(*p);
  const char* wide = R"(function (A[N, C], B[C]) -> (Y) { Y = A / sqrt(B * B + 1); })";
  p = Check({wide, {{"A", F32({333, 19})}, {"B", F32({19})}}}, "reciprocal");
  EXPECT_NE(KernelList(*p).find("_recip"), std::string::npos) << KernelList(*p);
}

TEST(HoistInvariants, KeepsOrderOfEverythingElse) {
  lang::Program p = testing::BindCase({kBatchNorm, {{"X", F32({2, 4, 4, 8})}, {"Mean", F32({8})},
                                                    {"Var", F32({8})}, {"Gamma", F32({8})}, {"Beta", F32({8})}}});
  lang::Program h = compiler::HoistInvariants(p);
  std::vector<std::string> order;
  for (const lang::Op& op : h.ops) order.push_back(std::get<lang::ElementwiseOp>(op).output);
  EXPECT_EQ(fmt::format("{}", fmt::join(order, " ")), "_T1 _T2 _T3 _T3_recip _T0 _T4 _T5 Y");
  EXPECT_EQ(h.Tensor("_T3_recip").shape, F32({8}));
}

INSTANTIATE_TEST_SUITE_P(Devices, Hoist, ::testing::Values("llvm", "opencl"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tilec
