// Execution tests of row groups (compiler/passes/fuse_reductions.h,
// compiler/forms/row_group.cc): softmax, log-softmax, layer norm and other
// runs of row reductions with the elementwise ops around them, on the llvm
// device and on OpenCL (PoCL) in the CPU forms. Each case asserts whether a
// row group was formed (the plans) and compares every output with the
// reference evaluator on random inputs, at row lengths no vector divides
// (1, 7, 333, 1031), rows that fit the cache threshold and rows that do not,
// floats and integers, and fused temporaries that are also outputs.
#include <gtest/gtest.h>

#include "tests/unit/pipeline_cases.h"

namespace tilec {
namespace {

using testing::Case;
using testing::F32;
using testing::F64;
using testing::Of;

const char* kSoftmax = R"(function (X[N, D]) -> (Y) {
  M[i, 0 : N, 1] = >(X[i, j]);
  E = exp(X - M);
  S[i, 0 : N, 1] = +(E[i, j]);
  Y = E / S;
})";

const char* kLogSoftmax = R"(function (X[N, D]) -> (Y) {
  M[i, 0 : N, 1] = >(X[i, j]);
  Xm = X - M;
  E = exp(Xm);
  S[i, 0 : N, 1] = +(E[i, j]);
  Y = Xm - log(S);
})";

const char* kLayerNorm = R"(function (X[N, D], Gamma[D], Beta[D]) -> (Y) {
  S[i, 0 : N, 1] = +(X[i, j]);
  Mu = S / D;
  Xc = X - Mu;
  Q[i, 0 : N, 1] = +(Xc[i, j] * Xc[i, j]);
  Var = Q / D;
  Y = Xc / sqrt(Var + 1.0e-5) * Gamma + Beta;
})";

// The plans asserted are an AVX-512 CPU's (testing::kAvx512Cpu) unless a
// test sets cpu_; the device plans for that CPU on any host.
class RowGroups : public ::testing::TestWithParam<std::string> {
 protected:
  // Compiles `c` in the CPU forms for the device (row groups up to
  // `max_row_bytes`), compares with the evaluator and returns every
  // kernel's plan.
  std::string Check(const Case& c, const std::string& what, int64_t max_row_bytes = -1) {
    auto device = testing::PinnedDevice(GetParam(), cpu_);
    if (!device) return "";
    compiler::CompileOptions o;
    o.use_local = false;
    o.lower.row_group_max_bytes = max_row_bytes;
    auto program = testing::CheckCase(device, c, o, fmt::format("{} on {} for {}", what, GetParam(), cpu_));
    return testing::VectorPlans(*program);
  }
  void SetUp() override {
    if (!testing::DeviceFor(GetParam())) GTEST_SKIP() << "no " << GetParam() << " device";
  }
  std::string cpu_ = testing::kAvx512Cpu;
};

TEST_P(RowGroups, NormFamilyAtOddLengths) {
  for (int64_t d : {1, 7, 333, 1031}) {
    for (const char* src : {kSoftmax, kLogSoftmax}) {
      std::string plans = Check({src, {{"X", F32({5, d})}}}, fmt::format("softmax {}", d));
      if (d == 1) continue;  // nothing to fuse along a row of one
      EXPECT_NE(plans.find(fmt::format("Row group form: 5 rows of {} values, 2 reduction passes and a store pass", d)),
                std::string::npos)
          << plans;
      if (d % 16 != 0) {
        EXPECT_NE(plans.find("masked tail"), std::string::npos) << plans;
      }
    }
    std::string plans = Check({kLayerNorm, {{"X", F32({3, d})}, {"Gamma", F32({d})}, {"Beta", F32({d})}}},
                              fmt::format("layer norm {}", d));
    if (d > 1) {
      EXPECT_NE(plans.find("Row group form: 3 rows of"), std::string::npos) << plans;
    }
    plans = Check({kLayerNorm, {{"X", F64({2, d})}, {"Gamma", F64({d})}, {"Beta", F32({d})}}},
                  fmt::format("layer norm f64 {}", d));
    if (d > 1) {
      EXPECT_NE(plans.find("x 8 lanes"), std::string::npos) << plans;
    }
  }
  // With AVX2, f64 rows in vectors of 4 lanes, and the f32 row groups the same.
  cpu_ = testing::kAvx2Cpu;
  for (int64_t d : {7, 1031}) {
    std::string plans = Check({kLayerNorm, {{"X", F64({2, d})}, {"Gamma", F64({d})}, {"Beta", F32({d})}}},
                              fmt::format("layer norm f64 {}", d));
    EXPECT_NE(plans.find("x 4 lanes"), std::string::npos) << plans;
    plans = Check({kSoftmax, {{"X", F32({5, d})}}}, fmt::format("softmax {}", d));
    EXPECT_NE(plans.find(fmt::format("Row group form: 5 rows of {} values, 2 reduction passes and a store pass", d)),
              std::string::npos)
        << plans;
  }
}

TEST_P(RowGroups, RowsThatDoNotFitTheCacheThreshold) {
  // Softmax reads a row of X and writes one of Y: 2 * 1031 * 4 = 8248
  // bytes. A row group up to 8192 bytes a row would re-read memory, so the
  // ops stay separate kernels (the reduction form), and still give the
  // evaluator's results.
  std::string plans = Check({kSoftmax, {{"X", F32({4, 1031})}}}, "softmax, no fit", 8192);
  EXPECT_EQ(plans.find("Row group form"), std::string::npos) << plans;
  EXPECT_NE(plans.find("Reduction form: max of float"), std::string::npos) << plans;
  plans = Check({kSoftmax, {{"X", F32({4, 1023})}}}, "softmax, fits", 8192);
  EXPECT_NE(plans.find("Row group form"), std::string::npos) << plans;
  // Layer norm reads X and Gamma and Beta along the row and writes Y: four
  // rows' worth (4 * 333 * 4 = 5328 bytes).
  Case ln{kLayerNorm, {{"X", F32({3, 333})}, {"Gamma", F32({333})}, {"Beta", F32({333})}}};
  EXPECT_EQ(Check(ln, "layer norm, no fit", 5327).find("Row group form"), std::string::npos);
  EXPECT_NE(Check(ln, "layer norm, fits", 5328).find("Row group form"), std::string::npos);
  // Off.
  EXPECT_EQ(Check({kSoftmax, {{"X", F32({4, 333})}}}, "off", 0).find("Row group form"), std::string::npos);
}

TEST_P(RowGroups, ManyRowsInBlocksAndHigherRank) {
  // 1031 rows of 7: work items of several rows, the last block partial.
  std::string plans = Check({kSoftmax, {{"X", F32({1031, 7})}}}, "many short rows");
  EXPECT_NE(plans.find("Row group form: 1031 rows of 7 values"), std::string::npos) << plans;
  EXPECT_EQ(plans.find("work items of 1 row\n"), std::string::npos) << plans;
  // Rows over two dims, inputs broadcast from every rank: G[D] along the
  // row, B[N, 1, 1] per outer row (O = P = 1), a scalar constant.
  const char* src = R"(function (X[N, H, D], G[D], B[N, O, P]) -> (Y) {
  M[n, h, 0 : N, H, 1] = <(X[n, h, j]);
  T = X * G - M + B;
  S[n, h, 0 : N, H, 1] = +(T[n, h, j]);
  Y = T / (S + 100.0) + 0.5;
})";
  plans = Check({src, {{"X", F32({3, 5, 333})}, {"G", F32({333})}, {"B", F32({3, 1, 1})}}}, "rank 3");
  EXPECT_NE(plans.find("Row group form: 15 rows of 333 values"), std::string::npos) << plans;
}

TEST_P(RowGroups, IntegersOneValueAtATime) {
  const char* src = R"(function (X[N, D]) -> (Y, S) {
  M[i, 0 : N, 1] = >(X[i, j]);
  T = X - M;
  S[i, 0 : N, 1] = +(T[i, j] * T[i, j]);
  P[i, 0 : N, 1] = *(X[i, j]);
  Y = T / 3 + S % 7 + P;
})";
  for (lang::DataType t : {lang::DataType::I32, lang::DataType::I64, lang::DataType::U8}) {
    for (int64_t d : {7, 333}) {
      std::string plans = Check({src, {{"X", Of(t, {4, d})}}}, fmt::format("{} {}", lang::Name(t), d));
      EXPECT_NE(plans.find("3 reduction passes and a store pass, one value at a time"), std::string::npos)
          << plans;
    }
  }
}

TEST_P(RowGroups, FusedTemporariesThatAreAlsoOutputs) {
  // E, M and S are program outputs: written even though fused. R reads E
  // after the group (a reduction to [N], not a row form): E is stored for it.
  const char* src = R"(function (X[N, D]) -> (Y, E, M, S, R) {
  M[i, 0 : N, 1] = >(X[i, j]);
  E = exp(X - M);
  S[i, 0 : N, 1] = +(E[i, j]);
  Y = E / S;
  R[i : N] = +(E[i, j]);
})";
  std::string plans = Check({src, {{"X", F32({6, 333})}}}, "outputs");
  EXPECT_NE(plans.find("Writes: M, E, S, Y"), std::string::npos) << plans;
  // E read only after the group, not returned: still stored.
  const char* later = R"(function (X[N, D]) -> (Y, R) {
  X2 = X * X;
  S[i, 0 : N, 1] = +(X2[i, j]);
  Y = X2 / S;
  R[i : N] = >(X2[i, j]);
})";
  plans = Check({later, {{"X", F32({6, 1031})}}}, "producer read later");
  EXPECT_NE(plans.find("Writes: X2, Y"), std::string::npos) << plans;
}

TEST_P(RowGroups, StashesInOutputRows) {
  // E = exp(X - M) and T = tanh(X) are computed in the sum's pass and
  // stashed in the rows of Y and Z; the store pass reads both back before
  // it overwrites either row.
  const char* src = R"(function (X[N, D]) -> (Y, Z) {
  M[i, 0 : N, 1] = >(X[i, j]);
  E = exp(X - M);
  T = tanh(X);
  S[i, 0 : N, 1] = +(E[i, j] * T[i, j]);
  Y = E / S;
  Z = T * E + 1;
})";
  for (int64_t d : {7, 1031}) {
    std::string plans = Check({src, {{"X", F32({5, d})}}}, fmt::format("two stashes {}", d));
    EXPECT_NE(plans.find("Stash: E in the row of Y"), std::string::npos) << plans;
    EXPECT_NE(plans.find("Stash: T in the row of Z"), std::string::npos) << plans;
  }
  // Y of another type: no row to stash E in; it is computed again.
  const char* f64 = R"(function (X[N, D]) -> (Y) {
  M[i, 0 : N, 1] = >(X[i, j]);
  E = exp(X - M);
  S[i, 0 : N, 1] = +(E[i, j]);
  Y = as_float(E / S, 64);
})";
  std::string plans = Check({f64, {{"X", F32({3, 333})}}}, "no stash");
  EXPECT_NE(plans.find("Row group form"), std::string::npos) << plans;
  EXPECT_EQ(plans.find("Stash:"), std::string::npos) << plans;
}

// Scaled attention scores, softmax(Q·Kᵀ * Scale)·V: the scale stays in the
// row group (it is not taken as the score contraction's post-op), so the
// softmax is one kernel: K's relayout, the scores, the row group, the
// product with V (the same four as without the scale). Sizes no vector
// divides; against the evaluator on both devices.
TEST_P(RowGroups, AnElementwiseProducerStaysInTheRowGroup) {
  const char* attention = R"(function (Q[L, D], K[L, D], V[L, D], Scale[]) -> (O) {
  S[i, j : L, L] = +(Q[i, d] * K[j, d]);
  Ss = S * Scale;
  M[i, 0 : L, 1] = >(Ss[i, j]);
  E = exp(Ss - M);
  Z[i, 0 : L, 1] = +(E[i, j]);
  P = E / Z;
  O[i, d : L, D] = +(P[i, j] * V[j, d]);
})";
  for (int64_t l : {77, 128}) {
    auto device = testing::PinnedDevice(GetParam(), cpu_);
    compiler::CompileOptions o;
    o.use_local = false;
    auto program = testing::CheckCase(
        device, {attention, {{"Q", F32({l, 33})}, {"K", F32({l, 33})}, {"V", F32({l, 33})}, {"Scale", F32({})}}}, o,
        fmt::format("attention {} on {}", l, GetParam()));
    const auto& kernels = program->compiled().kernels;
    EXPECT_EQ(kernels.size(), 4u) << testing::VectorPlans(*program);
    std::string plans = testing::VectorPlans(*program);
    EXPECT_NE(plans.find(fmt::format("Row group form: {} rows of {} values", l, l)), std::string::npos) << plans;
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, RowGroups, ::testing::Values("llvm", "opencl"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tilec
