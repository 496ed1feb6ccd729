// Execution tests of matrix products at sizes no vector, panel or register
// block divides (1, 7, 17, 333, 509, odd K), batched, and with a bias and an
// activation fused, on the llvm device and on OpenCL (PoCL): each compares
// the results with the reference evaluator on random inputs and asserts the
// vector plans. A vector index longer than one work item's vectors is read
// from panels (Lower's RelayoutInputs), the last one zero-padded where no
// panel width divides the size; the product then covers its output exactly
// through the panel bound and needs no Fill kernel (passes/output_coverage.h).
#include <gtest/gtest.h>

#include <array>

#include "tests/unit/pipeline_cases.h"

namespace tilec {
namespace {

using testing::Case;
using testing::F32;
using testing::F64;

// The plans asserted are an AVX-512 CPU's (testing::kAvx512Cpu) unless a
// test sets cpu_; the device plans for that CPU on any host.
class MatmulSizes : public ::testing::TestWithParam<std::string> {
 protected:
  // Compiles `c` in the CPU form for the device, compares with the
  // evaluator, and returns the plans of all kernels; `kinds` gets the
  // kernels' kinds.
  std::string Check(const Case& c, const std::string& what,
                    std::vector<compiler::KernelKind>* kinds = nullptr) {
    auto device = testing::PinnedDevice(GetParam(), cpu_);
    if (!device) return "";
    compiler::CompileOptions o;
    o.use_local = false;
    auto program = testing::CheckCase(device, c, o, fmt::format("{} on {} for {}", what, GetParam(), cpu_));
    if (kinds)
      for (const auto& k : program->compiled().kernels) kinds->push_back(k.spec.kind);
    return testing::VectorPlans(*program);
  }
  void SetUp() override {
    if (!testing::DeviceFor(GetParam())) GTEST_SKIP() << "no " << GetParam() << " device";
  }
  std::string cpu_ = testing::kAvx512Cpu;
};

bool HasFill(const std::vector<compiler::KernelKind>& kinds) {
  return std::find(kinds.begin(), kinds.end(), compiler::KernelKind::Fill) != kinds.end();
}

TEST_P(MatmulSizes, SmallAndOddSizes) {
  for (auto [m, k, n] : std::vector<std::array<int64_t, 3>>{
           {1, 1, 1}, {1, 7, 17}, {7, 7, 7}, {17, 3, 17}, {17, 19, 1}, {5, 1, 100}, {9, 13, 257}}) {
    std::string name = fmt::format("{}x{}x{}", m, k, n);
    Check({testing::kMatmul, {{"A", F32({m, k})}, {"B", F32({k, n})}}}, name);
  }
}

// 333 columns: panels of 48 (7 panels, 336 columns computed); 509: panels of
// 64 (8 panels, 512); both with the panel bound as a lane mask, no Fill. B
// has at least 512 KB (LowerOptions::padded_panel_min_bytes), K odd.
TEST_P(MatmulSizes, PaddedPanels) {
  struct Want {
    int64_t m, k, n;
    std::string plan;
  };
  for (const Want& w : std::vector<Want>{
           {521, 400, 333, "3 x 16 lanes of float along j%48"},
           {515, 263, 509, "4 x 16 lanes of float along j%64"},
           {513, 133, 1000, "3 x 16 lanes of float along j%48"},
       }) {
    std::string name = fmt::format("{}x{}x{}", w.m, w.k, w.n);
    std::vector<compiler::KernelKind> kinds;
    Case c{testing::kMatmul, {{"A", F32({w.m, w.k})}, {"B", F32({w.k, w.n})}}};
    std::string plans = Check(c, name, &kinds);
    EXPECT_NE(plans.find(w.plan + ", block of"), std::string::npos) << name << "\n" << plans;
    EXPECT_NE(plans.find("Inputs: A broadcast, B_vec0 vector"), std::string::npos) << name << "\n" << plans;
    EXPECT_NE(plans.find("constraints on j%"), std::string::npos) << name << "\n" << plans;
    EXPECT_FALSE(HasFill(kinds)) << name << "\n" << plans;
  }
  // Fewer rows than kPanelMinUses (compiler/passes/lower.cc): each element of B is
  // used too few times for the copy to pay, so B is read in place (with the
  // padding rule alone these were copied).
  for (auto [m, k, n] : std::vector<std::array<int64_t, 3>>{{33, 400, 333}, {29, 263, 509}, {511, 64, 1024}}) {
    std::string name = fmt::format("{}x{}x{} in place", m, k, n);
    std::string in_place = Check({testing::kMatmul, {{"A", F32({m, k})}, {"B", F32({k, n})}}}, name);
    EXPECT_NE(in_place.find("Inputs: A broadcast, B vector"), std::string::npos) << name << "\n" << in_place;
    EXPECT_EQ(in_place.find("B_vec0"), std::string::npos) << name << "\n" << in_place;
  }
  // f64: 8 lanes, panels of 48 along 333 (6 vectors of 8, 336 computed).
  std::string plans = Check({testing::kMatmul, {{"A", F64({523, 200})}, {"B", F64({200, 333})}}}, "f64");
  EXPECT_NE(plans.find("B_vec0 vector"), std::string::npos) << plans;
}

// The padded-panel form with post-ops: a bias along the columns and an
// activation (vectors), and a bool result (lane by lane, each lane of the
// last panel guarded by the panel bound).
TEST_P(MatmulSizes, PaddedPanelsWithPostOps) {
  const char* bias_gelu = R"(function (A[M, K], B[K, N], Bias[N]) -> (R) {
  C[i, j : M, N] = +(A[i, k] * B[k, j]);
  R = tanh(C + Bias) * 0.5 + relu(C);
})";
  std::vector<compiler::KernelKind> kinds;
  Case c{bias_gelu, {{"A", F32({519, 400})}, {"B", F32({400, 333})}, {"Bias", F32({333})}}};
  std::string plans = Check(c, "bias", &kinds);
  EXPECT_NE(plans.find("B_vec0 vector\nPost-ops: on vectors"), std::string::npos) << plans;
  EXPECT_FALSE(HasFill(kinds)) << plans;
  const char* to_int = R"(function (A[M, K], B[K, N]) -> (C, Q) {
  C[i, j : M, N] = +(A[i, k] * B[k, j]);
  Q = C > 0;
})";
  plans = Check({to_int, {{"A", F32({517, 263})}, {"B", F32({263, 509})}}}, "bool post-op");
  EXPECT_NE(plans.find("B_vec0 vector\nPost-ops: lane by lane"), std::string::npos) << plans;
}

TEST_P(MatmulSizes, Batched) {
  const char* batched = R"(function (A[NB, M, K], B[NB, K, N]) -> (C) {
  C[b, i, j : NB, M, N] = +(A[b, i, k] * B[b, k, j]);
})";
  for (auto [nb, m, k, n] : std::vector<std::array<int64_t, 4>>{
           {3, 7, 5, 17}, {2, 13, 9, 128}, {3, 11, 7, 333}, {16, 9, 16, 128}}) {
    std::string name = fmt::format("batched {}x{}x{}x{}", nb, m, k, n);
    Check({batched, {{"A", F32({nb, m, k})}, {"B", F32({nb, k, n})}}}, name);
  }
  // Batches of 64 KB: B is read in place, not copied into panels first.
  std::string plans = Check({batched, {{"A", F32({16, 128, 128})}, {"B", F32({16, 128, 128})}}}, "16x128^3");
  EXPECT_NE(plans.find("Inputs: A broadcast, B vector"), std::string::npos) << plans;
}

INSTANTIATE_TEST_SUITE_P(Devices, MatmulSizes, ::testing::Values("llvm", "opencl"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tilec
