// Constant inputs through the C ABI (tilec_compile_options.constant_inputs,
// tilec_program_invalidate_constants) and the C++ API: the promise of
// tilec_program_run as documented (the same address keeps the old contents'
// results until an invalidation; another address is read anew), handles
// that must not share constant state through the in-process program cache,
// and every misuse an error naming what is wrong. The C ABI cannot show
// which kernels were skipped, so results alone are checked, against the
// reference evaluator; the conv's weights get a relayout kernel on every
// device (tests/unit/constant_inputs_test.cc counts the skipping).
#include <gtest/gtest.h>
#include <tilec/tilec.h>
#include <tilec/tilec.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/program_cache.h"
#include "tests/unit/c_api_check.h"
#include "tile_lang/binder.h"
#include "tile_lang/evaluator.h"
#include "tile_lang/parser.h"

namespace {

using tilec::testing::Take;

using tilec::lang::DataType;
using tilec::lang::Tensor;

// NHWC data, HWIO weights (relaid into panels along CO before the conv: each
// weight is used 23 x 23 = 529 times, enough for the copy, compiler/passes/lower.cc
// kPanelMinUses): 23 rows and 13 input channels divide no block.
const char* kConv = R"(
function (D[N, H, W, CI], K[KH, KW, CI, CO]) -> (R) {
  O[n, x, y, co : N, H, W, CO] = +(D[n, x + i - 1, y + j - 1, ci] * K[i, j, ci, co]);
  R = relu(O);
})";




class CApiConstants : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    bool found = false;
    for (size_t i = 0; i < tilec_device_count(); ++i)
      found |= std::string(tilec_device_id(i)).rfind(GetParam(), 0) == 0;
    if (!found) GTEST_SKIP() << "no " << GetParam() << " device";
    ASSERT_TILEC_OK(tilec_device_open(GetParam().c_str(), &device_, &e_));
    bound_ = tilec::lang::Bind(tilec::lang::Parse(tilec::MakeSource("conv.tile", kConv)),
                               {{"D", d_.shape()}, {"K", k1_.shape()}});
    tilec::lang::FillRandom(d_, 1);
    tilec::lang::FillRandom(k1_, 2);
    tilec::lang::FillRandom(k2_, 3);
    tilec::lang::FillRandom(k3_, 4);
  }
  void TearDown() override {
    if (device_) {
      EXPECT_EQ(tilec_device_release(device_), TILEC_OK);
    }
  }

  // Compiles kConv with `constants` (none if empty).
  tilec_program Compile(std::vector<const char*> constants, bool no_cache = false) {
    tilec_tensor_spec in[2] = {{"D", TILEC_F32, 4, d_dims_, nullptr}, {"K", TILEC_F32, 4, k_dims_, nullptr}};
    tilec_compile_options o{};
    o.constant_inputs = constants.empty() ? nullptr : constants.data();
    o.num_constant_inputs = constants.size();
    o.no_cache = no_cache;
    tilec_program p = nullptr;
    tilec_error e = nullptr;
    EXPECT_EQ(tilec_program_compile(device_, kConv, "conv.tile", in, 2, &o, &p, &e), TILEC_OK) << Take(e);
    return p;
  }

  // Runs `p` on D and the weights at `k` and checks R against the evaluator
  // on D and `want_k` (what the weights are taken to be).
  void RunAndCheck(tilec_program p, std::vector<float>& k, const Tensor& want_k, const std::string& what) {
    SCOPED_TRACE(what);
    ASSERT_NE(p, nullptr);
    std::vector<float> r(static_cast<size_t>(23 * 23 * 128), -7.0f);
    int64_t r_dims[4] = {1, 23, 23, 128};
    tilec_tensor ins[2] = {{d_.data(), d_.bytes(), TILEC_F32, 4, d_dims_, nullptr},
                           {k.data(), k.size() * sizeof(float), TILEC_F32, 4, k_dims_, nullptr}};
    tilec_tensor out = {r.data(), r.size() * sizeof(float), TILEC_F32, 4, r_dims, nullptr};
    ASSERT_TILEC_OK(tilec_program_run(p, ins, 2, &out, 1, &e_));
    Tensor want = tilec::lang::Evaluate(bound_, {{"D", d_}, {"K", want_k}}).at("R");
    for (int64_t j = 0; j < want.size(); ++j) {
      double w = want.GetDouble(j);
      ASSERT_NEAR(r[j], w, 1e-4 * std::max(1.0, std::abs(w))) << "element " << j;
    }
  }

  // The weights `k` as a float vector (new memory).
  static std::vector<float> Copy(const Tensor& k) {
    std::vector<float> v(static_cast<size_t>(k.size()));
    std::memcpy(v.data(), k.data(), k.bytes());
    return v;
  }
  // Overwrites `dst` in place with the contents of `k`.
  static void Fill(std::vector<float>& dst, const Tensor& k) { std::memcpy(dst.data(), k.data(), k.bytes()); }

  int64_t d_dims_[4] = {1, 23, 23, 13}, k_dims_[4] = {3, 3, 13, 128};
  Tensor d_{{DataType::F32, {1, 23, 23, 13}}};
  Tensor k1_{{DataType::F32, {3, 3, 13, 128}}}, k2_{k1_.shape()}, k3_{k1_.shape()};
  tilec::lang::Program bound_;
  tilec_device device_ = nullptr;
  tilec_error e_ = nullptr;
};

TEST_P(CApiConstants, TheWeightsPromiseIsHonoured) {
  tilec_program p = Compile({"K"});
  std::vector<float> a = Copy(k1_);
  for (int run = 0; run < 3; ++run) RunAndCheck(p, a, k1_, "run " + std::to_string(run));
  // Other weights at another address: read anew, then kept.
  std::vector<float> b = Copy(k2_);
  RunAndCheck(p, b, k2_, "other weights, other memory");
  RunAndCheck(p, b, k2_, "other weights again");
  RunAndCheck(p, a, k1_, "the first weights' memory again");
  RunAndCheck(p, b, k2_, "and the other weights again");
  // Changed in place without an invalidation: the documented result is the old weights'.
  Fill(b, k3_);
  RunAndCheck(p, b, k2_, "changed in place, not invalidated: the old contents' result");
  ASSERT_TILEC_OK(tilec_program_invalidate_constants(p, &e_));
  RunAndCheck(p, b, k3_, "changed in place, invalidated");
  RunAndCheck(p, b, k3_, "changed in place, invalidated, again");
  EXPECT_EQ(tilec_program_release(p), TILEC_OK);
}

TEST_P(CApiConstants, HandlesWithoutTheConstantsAreNotAffected) {
  // The same source and shapes with and without constants: two programs
  // (the constants are part of the cache key).
  tilec_program with = Compile({"K"});
  tilec_program without = Compile({});
  std::vector<float> k = Copy(k1_);
  RunAndCheck(with, k, k1_, "with constants");
  RunAndCheck(without, k, k1_, "without constants");
  RunAndCheck(with, k, k1_, "with constants, again");
  Fill(k, k2_);
  RunAndCheck(without, k, k2_, "without constants: in-place changes are seen without an invalidation");
  RunAndCheck(with, k, k1_, "with constants: the old contents' result");
  ASSERT_TILEC_OK(tilec_program_invalidate_constants(without, &e_));  // a no-op
  RunAndCheck(without, k, k2_, "without constants, after a no-op invalidation");
  EXPECT_EQ(tilec_program_release(with), TILEC_OK);
  EXPECT_EQ(tilec_program_release(without), TILEC_OK);
}

TEST_P(CApiConstants, HandlesWithConstantsDoNotShareThem) {
  // Two models with the same layer and their own weights, the second's at
  // an address the first used (as a recycled allocation would be): each
  // handle's promise covers its own runs only.
  tilec_program first = Compile({"K"});
  tilec_program second = Compile({"K"});
  std::vector<float> k = Copy(k1_);
  RunAndCheck(first, k, k1_, "first handle");
  RunAndCheck(first, k, k1_, "first handle, again");
  Fill(k, k2_);
  RunAndCheck(second, k, k2_, "second handle, first run at the first's address");
  EXPECT_EQ(tilec_program_release(first), TILEC_OK);
  EXPECT_EQ(tilec_program_release(second), TILEC_OK);
  // A model reloaded: the cached program is lent again, without the old constants.
  tilec::runtime::ProgramCacheStats before = tilec::runtime::ProcessProgramCache().stats();
  tilec_program third = Compile({"K"});
  EXPECT_EQ(tilec::runtime::ProcessProgramCache().stats().hits, before.hits + 1) << "the cached program";
  Fill(k, k3_);
  RunAndCheck(third, k, k3_, "a new handle's first run at the old address");
  // Duplicates and order do not matter; without the cache, a program of its own.
  tilec_program fourth = Compile({"K", "K"});
  tilec_program fifth = Compile({"K"}, /*no_cache=*/true);
  RunAndCheck(fourth, k, k3_, "compiled with K twice");
  RunAndCheck(fifth, k, k3_, "compiled without the cache");
  Fill(k, k1_);
  RunAndCheck(third, k, k3_, "the third handle keeps its old contents' result");
  RunAndCheck(fifth, k, k3_, "so does the uncached one");
  ASSERT_TILEC_OK(tilec_program_invalidate_constants(third, &e_));
  RunAndCheck(third, k, k1_, "the third handle, invalidated");
  RunAndCheck(fifth, k, k3_, "another handle's invalidation is not the uncached one's");
  for (tilec_program p : {third, fourth, fifth}) EXPECT_EQ(tilec_program_release(p), TILEC_OK);
}

TEST_P(CApiConstants, TheCppApi) {
  tilec::Device device(GetParam());
  tilec::CompileOptions options;
  options.constant_inputs = {"K"};
  std::vector<int64_t> d_dims(d_dims_, d_dims_ + 4), k_dims(k_dims_, k_dims_ + 4), r_dims = {1, 23, 23, 128};
  tilec::Program p = device.Compile(kConv, {{"D", TILEC_F32, d_dims}, {"K", TILEC_F32, k_dims}}, options);
  std::vector<float> k = Copy(k1_), r(23 * 23 * 128);
  std::span<float> d(reinterpret_cast<float*>(d_.data()), static_cast<size_t>(d_.size()));
  auto run = [&](const Tensor& want_k, const std::string& what) {
    SCOPED_TRACE(what);
    p.Run({tilec::Tensor(d, d_dims), tilec::Tensor(std::span(k), k_dims)}, {tilec::Tensor(std::span(r), r_dims)});
    Tensor want = tilec::lang::Evaluate(bound_, {{"D", d_}, {"K", want_k}}).at("R");
    for (int64_t j = 0; j < want.size(); ++j)
      ASSERT_NEAR(r[j], want.GetDouble(j), 1e-4 * std::max(1.0, std::abs(want.GetDouble(j)))) << j;
  };
  run(k1_, "first run");
  Fill(k, k2_);
  run(k1_, "changed in place, not invalidated");
  p.InvalidateConstants();
  run(k2_, "invalidated");
  options.constant_inputs = {"X"};
  try {
    device.Compile(kConv, {{"D", TILEC_F32, d_dims}, {"K", TILEC_F32, k_dims}}, options);
    FAIL() << "no error";
  } catch (const tilec::Error& e) {
    EXPECT_EQ(e.kind(), TILEC_ERROR_USER);
    EXPECT_NE(e.message().find("constant input 'X' is not an input"), std::string::npos) << e.what();
  }
}

TEST_P(CApiConstants, MisuseIsAnError) {
  tilec_tensor_spec in[2] = {{"D", TILEC_F32, 4, d_dims_, nullptr}, {"K", TILEC_F32, 4, k_dims_, nullptr}};
  tilec_program p = nullptr;
  tilec_compile_options o{};
  o.num_constant_inputs = 1;
  EXPECT_ERROR(tilec_program_compile(device_, kConv, "conv.tile", in, 2, &o, &p, &err_), TILEC_ERROR_USAGE,
               "options.num_constant_inputs is 1 but options.constant_inputs is NULL");
  EXPECT_EQ(p, nullptr);
  const char* names[3] = {"K", nullptr, "D"};
  o.constant_inputs = names;
  o.num_constant_inputs = 3;
  EXPECT_ERROR(tilec_program_compile(device_, kConv, "conv.tile", in, 2, &o, &p, &err_), TILEC_ERROR_USAGE,
               "options.constant_inputs[1] is NULL");
  const char* unknown[2] = {"K", "W"};
  o.constant_inputs = unknown;
  o.num_constant_inputs = 2;
  EXPECT_ERROR(tilec_program_compile(device_, kConv, "conv.tile", in, 2, &o, &p, &err_), TILEC_ERROR_USER,
               "constant input 'W' is not an input of the program (inputs: D, K)");
  const char* output[1] = {"R"};
  o.constant_inputs = output;
  o.num_constant_inputs = 1;
  EXPECT_ERROR(tilec_program_compile(device_, kConv, "conv.tile", in, 2, &o, &p, &err_), TILEC_ERROR_USER,
               "constant input 'R' is not an input");
  EXPECT_EQ(p, nullptr);
  // A count of 0 ignores the array; a NULL array with 0 is none.
  o.num_constant_inputs = 0;
  ASSERT_TILEC_OK(tilec_program_compile(device_, kConv, "conv.tile", in, 2, &o, &p, &e_));
  ASSERT_TILEC_OK(tilec_program_invalidate_constants(p, &e_));
  EXPECT_EQ(tilec_program_release(p), TILEC_OK);
  EXPECT_ERROR(tilec_program_invalidate_constants(p, &err_), TILEC_ERROR_USAGE, "not a live program");
  EXPECT_ERROR(tilec_program_invalidate_constants(nullptr, &err_), TILEC_ERROR_USAGE, "the program is NULL");
  EXPECT_EQ(tilec_program_invalidate_constants(nullptr, nullptr), TILEC_ERROR_USAGE) << "no error out pointer";
}

INSTANTIATE_TEST_SUITE_P(Devices, CApiConstants, ::testing::Values("llvm", "opencl"),
                         [](const auto& info) { return info.param; });

}  // namespace
