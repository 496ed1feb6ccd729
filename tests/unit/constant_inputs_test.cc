// Constant inputs (runtime::Program::SetConstantInputs): the kernels that
// read only constants (a relayout of the weights) run once per buffer set
// and are skipped later; new memory for a constant, a new Upload, or
// InvalidateConstants runs them again. Every run is checked against the
// reference evaluator, and the skipping by RunStats::skipped_kernels (no
// timing). The LLVM backend and, where PoCL is installed, OpenCL.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <memory>
#include <string>
#include <vector>

#include "runtime/program.h"
#include "support/error.h"
#include "tests/unit/pipeline_check.h"
#include "tile_lang/evaluator.h"
#include "tile_lang/tensor.h"

// Every allocation of this test binary is counted (RunInPlaceAllocatesNothing),
// except under the sanitizers, which keep their own operator new.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TILEC_COUNTS_ALLOCATIONS 0
#else
#define TILEC_COUNTS_ALLOCATIONS 1
std::atomic<int64_t> g_allocations{0};

__attribute__((noinline)) void* operator new(size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
__attribute__((noinline)) void operator delete(void* p) noexcept { std::free(p); }
__attribute__((noinline)) void operator delete(void* p, size_t) noexcept { std::free(p); }
#endif

namespace tilec {
namespace {

using testing::F32;

// NHWC data, HWIO weights: the weights are copied into panels along CO
// (kernel_0, a relayout) before the convolution reads them (each weight is
// used 23 x 23 = 529 times, enough for the copy: compiler/passes/lower.cc
// kPanelMinUses). 23 rows and 13 input channels divide no block; CO = 128
// is two panels of 64.
const char* kConv = R"(
function (D[N, H, W, CI], K[KH, KW, CI, CO]) -> (R) {
  O[n, x, y, co : N, H, W, CO] = +(D[n, x + i - 1, y + j - 1, ci] * K[i, j, ci, co]);
  R = relu(O);
})";

testing::Case ConvCase() {
  return {kConv, {{"D", F32({1, 23, 23, 13})}, {"K", F32({3, 3, 13, 128})}}};
}

runtime::HostView View(lang::Tensor& t) {
  return runtime::HostView{t.data(), t.bytes(), t.shape(), {}};
}

class ConstantInputs : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    device_ = testing::DeviceFor(GetParam());
    if (!device_) GTEST_SKIP() << "no " << GetParam() << " device";
    bound_ = testing::BindCase(ConvCase());
    program_ = std::make_unique<runtime::Program>(runtime::Program::Compile(bound_, device_));
    inputs_ = testing::RandomInputs(bound_, 7);
  }

  // The number of kernels that read only K (the weights' relayout).
  int ConstantKernels() const {
    int n = 0;
    for (bool c : program_->constant_kernels()) n += c;
    return n;
  }

  // Runs on caller memory (D and K in place) and checks R against the
  // evaluator on the same inputs; returns the run's stats.
  runtime::RunStats RunAndCheck(lang::Tensor& d, lang::Tensor& k, const std::string& what) {
    lang::Tensor r(bound_.Tensor("R").shape);
    std::vector<runtime::HostView> in{View(d), View(k)}, out{View(r)};
    runtime::RunStats stats;
    program_->RunOn(in, out, &stats);
    std::map<std::string, lang::Tensor> want = lang::Evaluate(bound_, {{"D", d}, {"K", k}});
    EXPECT_TRUE(testing::OutputsMatch({{"R", want.at("R")}}, {{"R", r}}, "R", 1e-4)) << what;
    return stats;
  }

  std::shared_ptr<hal::Device> device_;
  lang::Program bound_;
  std::unique_ptr<runtime::Program> program_;
  std::map<std::string, lang::Tensor> inputs_;
};

TEST_P(ConstantInputs, RelayoutOfTheWeightsRunsOnceUntilTheyChange) {
  ASSERT_EQ(program_->compiled().kernels.size(), 2u) << "a weight relayout, then the convolution";
  EXPECT_EQ(ConstantKernels(), 0) << "no constant inputs yet";
  program_->SetConstantInputs({"K"});
  ASSERT_EQ(ConstantKernels(), 1);
  EXPECT_TRUE(program_->constant_kernels()[0]) << "the relayout of K";

  lang::Tensor d = inputs_.at("D"), k = inputs_.at("K");
  EXPECT_EQ(RunAndCheck(d, k, "first run").skipped_kernels, 0);
  EXPECT_EQ(RunAndCheck(d, k, "second run").skipped_kernels, 1);
  // New data, same weights: still skipped, and right.
  lang::FillRandom(d, 99);
  EXPECT_EQ(RunAndCheck(d, k, "new data").skipped_kernels, 1);

  // Other weights in other memory: the relayout runs again.
  lang::Tensor k2(k.shape());
  lang::FillRandom(k2, 123);
  EXPECT_EQ(RunAndCheck(d, k2, "other weights").skipped_kernels, 0);
  EXPECT_EQ(RunAndCheck(d, k2, "other weights again").skipped_kernels, 1);

  // Weights changed in place: InvalidateConstants, then the relayout runs.
  lang::FillRandom(k2, 321);
  program_->InvalidateConstants();
  EXPECT_EQ(RunAndCheck(d, k2, "changed in place").skipped_kernels, 0);
  EXPECT_EQ(RunAndCheck(d, k2, "changed in place, again").skipped_kernels, 1);

  // No constants any more: every kernel runs every time.
  program_->SetConstantInputs({});
  EXPECT_EQ(ConstantKernels(), 0);
  EXPECT_EQ(RunAndCheck(d, k2, "constants cleared").skipped_kernels, 0);
  EXPECT_EQ(RunAndCheck(d, k2, "constants cleared, again").skipped_kernels, 0);
}

TEST_P(ConstantInputs, StagedRunsSkipUntilTheNextUpload) {
  program_->SetConstantInputs({"K"});
  program_->Upload(inputs_);
  EXPECT_EQ(program_->Execute().skipped_kernels, 0);
  runtime::RunStats second = program_->Execute();
  EXPECT_EQ(second.skipped_kernels, 1);
  ASSERT_EQ(second.kernel_ns.size(), 2u);
  EXPECT_EQ(second.kernel_ns[0], 0u) << "a skipped kernel has no device time";
  std::map<std::string, lang::Tensor> want = lang::Evaluate(bound_, inputs_);
  EXPECT_TRUE(testing::OutputsMatch(want, program_->Download(), "R", 1e-4));

  // New weights through Upload: the relayout runs again and the result follows them.
  lang::FillRandom(inputs_.at("K"), 55);
  program_->Upload(inputs_);
  EXPECT_EQ(program_->Execute().skipped_kernels, 0);
  EXPECT_TRUE(testing::OutputsMatch(lang::Evaluate(bound_, inputs_), program_->Download(), "R", 1e-4));
}

TEST_P(ConstantInputs, RunInPlaceSkipsToo) {
  if (!program_->InPlaceRunnable()) GTEST_SKIP() << "no in-place runs on this device";
  program_->SetConstantInputs({"K"});
  lang::Tensor d = inputs_.at("D"), k = inputs_.at("K"), r(bound_.Tensor("R").shape);
  std::vector<void*> data{d.data(), k.data(), r.data()};
  std::map<std::string, lang::Tensor> want = lang::Evaluate(bound_, {{"D", d}, {"K", k}});
  for (int run = 0; run < 3; ++run) {
    std::memset(r.data(), 0, r.bytes());
    program_->RunInPlace(data);
    EXPECT_TRUE(testing::OutputsMatch(want, {{"R", r}}, "R", 1e-4)) << "run " << run;
  }
  // Other weights: recomputed.
  lang::Tensor k2(k.shape());
  lang::FillRandom(k2, 77);
  data[1] = k2.data();
  program_->RunInPlace(data);
  EXPECT_TRUE(testing::OutputsMatch(lang::Evaluate(bound_, {{"D", d}, {"K", k2}}), {{"R", r}}, "R", 1e-4));
}

// RunInPlace, the embedding API's fast path, allocates nothing once a
// pooled buffer set has run, with constant inputs as without (the check of
// the constants' memory compares in place). A tiny program, so that the
// launch itself runs inline on the caller's thread.
TEST_P(ConstantInputs, RunInPlaceAllocatesNothing) {
  if (GetParam() != "llvm") GTEST_SKIP() << "the OpenCL driver allocates in its launches";
#if !TILEC_COUNTS_ALLOCATIONS
  GTEST_SKIP() << "allocations are not counted under the sanitizers";
#else
  testing::Case c{"function (A[N], B[N]) -> (C) { C = A + B; }", {{"A", F32({16})}, {"B", F32({16})}}};
  lang::Program bound = testing::BindCase(c);
  runtime::Program p = runtime::Program::Compile(bound, device_);
  std::map<std::string, lang::Tensor> in = testing::RandomInputs(bound, 5);
  lang::Tensor out(bound.Tensor("C").shape);
  std::vector<void*> data{in.at("A").data(), in.at("B").data(), out.data()};
  for (const std::vector<std::string>& constants : {std::vector<std::string>{}, std::vector<std::string>{"B"}}) {
    p.SetConstantInputs(constants);
    p.RunInPlace(data);  // the set's first run allocates its wrappers
    int64_t before = g_allocations.load();
    for (int run = 0; run < 10; ++run) p.RunInPlace(data);
    EXPECT_EQ(g_allocations.load() - before, 0) << "constants: " << constants.size();
    EXPECT_TRUE(testing::OutputsMatch(lang::Evaluate(bound, in), {{"C", out}}, "C", 1e-6));
  }
#endif
}

TEST_P(ConstantInputs, OnlyKernelsReadingConstantsAloneAreSkipped) {
  // K feeds the convolution through an elementwise kernel that also reads
  // S (not constant): nothing that reads S may be skipped.
  testing::Case c{R"(
function (D[N, H, W, CI], K[KH, KW, CI, CO], S[CO]) -> (R) {
  KS[i, j, ci, co : KH, KW, CI, CO] = =(K[i, j, ci, co] * S[co]);
  O[n, x, y, co : N, H, W, CO] = +(D[n, x + i - 1, y + j - 1, ci] * KS[i, j, ci, co]);
  R = relu(O);
})",
                  {{"D", F32({1, 9, 9, 5})}, {"K", F32({3, 3, 5, 32})}, {"S", F32({32})}}};
  lang::Program bound = testing::BindCase(c);
  runtime::Program p = runtime::Program::Compile(bound, device_);
  p.SetConstantInputs({"K"});
  for (size_t i = 0; i < p.compiled().kernels.size(); ++i) {
    bool reads_s = false;
    for (const std::string& in : p.compiled().kernels[i].spec.inputs) reads_s |= in == "S";
    if (reads_s) {
      EXPECT_FALSE(p.constant_kernels()[i]) << p.compiled().kernels[i].spec.name;
    }
  }
  std::map<std::string, lang::Tensor> in = testing::RandomInputs(bound, 3);
  std::map<std::string, lang::Tensor> want = lang::Evaluate(bound, in);
  for (int run = 0; run < 2; ++run) {
    EXPECT_TRUE(testing::OutputsMatch(want, p.Run(in), "R", 1e-4)) << "run " << run;
    lang::FillRandom(in.at("S"), 40 + run);  // S changes between runs; K does not
    want = lang::Evaluate(bound, in);
  }
  // With both K and S constant, every kernel before the convolution may be skipped.
  p.SetConstantInputs({"K", "S"});
  EXPECT_TRUE(testing::OutputsMatch(want, p.Run(in), "R", 1e-4));
  runtime::RunStats stats;
  std::map<std::string, lang::Tensor> again = p.Run(in, &stats);
  EXPECT_TRUE(testing::OutputsMatch(want, again, "R", 1e-4));
  int constant = 0;
  for (bool b : p.constant_kernels()) constant += b;
  EXPECT_EQ(stats.skipped_kernels, constant);
  EXPECT_GE(constant, 1);
}

// A constant input's copy runs once, so Lower makes it however few times
// each element is used (LowerOptions::constants): on a 7x9 image each
// weight is used 63 times, too few to pack weights that change every run
// (compiler/passes/lower.cc kPanelMinUses), and they are read in place;
// compiled with K constant, they are copied into panels once.
TEST_P(ConstantInputs, ConstantWeightsArePackedHoweverFewTheirUses) {
  testing::Case c{kConv, {{"D", F32({1, 7, 9, 13})}, {"K", F32({3, 3, 13, 128})}}};
  lang::Program bound = testing::BindCase(c);
  runtime::Program plain = runtime::Program::Compile(bound, device_);
  EXPECT_EQ(plain.compiled().kernels.size(), 1u) << "the weights read in place";
  compiler::CompileOptions options;
  options.lower.constants = {"K"};
  runtime::Program packed = runtime::Program::Compile(bound, device_, options);
  ASSERT_EQ(packed.compiled().kernels.size(), 2u) << "a copy of the weights in panels, then the convolution";
  packed.SetConstantInputs({"K"});
  EXPECT_TRUE(packed.constant_kernels()[0]) << "the copy reads K alone";
  std::map<std::string, lang::Tensor> inputs = testing::RandomInputs(bound, 7);
  lang::Tensor d = inputs.at("D"), k = inputs.at("K");
  std::map<std::string, lang::Tensor> want = lang::Evaluate(bound, {{"D", d}, {"K", k}});
  for (int run = 0; run < 2; ++run) {
    lang::Tensor r(bound.Tensor("R").shape);
    std::vector<runtime::HostView> in{View(d), View(k)}, out{View(r)};
    runtime::RunStats stats;
    packed.RunOn(in, out, &stats);
    EXPECT_TRUE(testing::OutputsMatch({{"R", want.at("R")}}, {{"R", r}}, "R", 1e-4)) << "run " << run;
    EXPECT_EQ(stats.skipped_kernels, run) << "the copy runs in the first run only";
  }
}

TEST_P(ConstantInputs, UnknownNameIsAUserError) {
  try {
    program_->SetConstantInputs({"K", "X"});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("constant input 'X' is not an input of the program (inputs: D, K)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(program_->SetConstantInputs({"R"}), UserError) << "an output is not an input";
  EXPECT_EQ(ConstantKernels(), 0) << "a failed call changes nothing";
}

INSTANTIATE_TEST_SUITE_P(Devices, ConstantInputs, ::testing::Values("llvm", "opencl"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tilec
