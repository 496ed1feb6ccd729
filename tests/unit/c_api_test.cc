// The C ABI (include/tilec/tilec.h): devices, compiling, queries, running on
// caller memory, and every misuse returning a clear error instead of
// crashing (this binary also runs under ASan/UBSan in the sanitizer build).
#include <gtest/gtest.h>
#include <tilec/tilec.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tests/unit/c_api_check.h"
#include "tile_lang/binder.h"
#include "tile_lang/evaluator.h"
#include "tile_lang/parser.h"

namespace {

using tilec::testing::Take;

const char* kAdd = "function (A[N], B[N]) -> (C) { C = A + B; }";



class CApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tilec_error e = nullptr;
    ASSERT_EQ(tilec_device_open("llvm", &device_, &e), TILEC_OK);
    tilec_tensor_spec in[2] = {{"A", TILEC_F32, 1, dims_, nullptr}, {"B", TILEC_F32, 1, dims_, nullptr}};
    ASSERT_EQ(tilec_program_compile(device_, kAdd, "add.tile", in, 2, nullptr, &add_, &e), TILEC_OK)
        << (e ? tilec_error_text(e) : "");
    for (int i = 0; i < 16; ++i) a_[i] = static_cast<float>(i), b_[i] = 100.0f * i;
  }
  void TearDown() override {
    if (add_) {
      EXPECT_EQ(tilec_program_release(add_), TILEC_OK);
    }
    if (device_) {
      EXPECT_EQ(tilec_device_release(device_), TILEC_OK);
    }
  }
  tilec_tensor T(float* data) { return {data, 16 * sizeof(float), TILEC_F32, 1, dims_, nullptr}; }

  int64_t dims_[1] = {16};
  alignas(64) float a_[16], b_[16], c_[16];
  tilec_device device_ = nullptr;
  tilec_program add_ = nullptr;
};

TEST(CApi, Version) {
  EXPECT_EQ(tilec_version(), TILEC_VERSION);
  EXPECT_EQ(std::string(tilec_version_string()),
            std::to_string(TILEC_VERSION_MAJOR) + "." + std::to_string(TILEC_VERSION_MINOR) + "." +
                std::to_string(TILEC_VERSION_PATCH));
}

TEST(CApi, DeviceEnumerationAndOpening) {
  ASSERT_GE(tilec_device_count(), 1u);
  EXPECT_STREQ(tilec_device_id(0), "llvm:cpu");
  EXPECT_EQ(tilec_device_id(tilec_device_count()), nullptr);
  for (size_t i = 0; i < tilec_device_count(); ++i) {
    tilec_device d = nullptr;
    tilec_error e = nullptr;
    ASSERT_EQ(tilec_device_open(tilec_device_id(i), &d, &e), TILEC_OK) << tilec_device_id(i);
    EXPECT_STREQ(tilec_device_name(d), tilec_device_id(i));
    EXPECT_GT(std::strlen(tilec_device_description(d)), 0u);
    EXPECT_EQ(tilec_device_release(d), TILEC_OK);
    EXPECT_EQ(tilec_device_release(d), TILEC_ERROR_USAGE) << "second release";
    EXPECT_EQ(tilec_device_name(d), nullptr);
  }
  tilec_device d = nullptr;
  EXPECT_ERROR(tilec_device_open("tpu:7", &d, &err_), TILEC_ERROR_USER, "unknown device 'tpu:7'");
  EXPECT_EQ(d, nullptr);
  EXPECT_ERROR(tilec_device_open(nullptr, &d, &err_), TILEC_ERROR_USAGE, "device id is NULL");
  EXPECT_ERROR(tilec_device_open("llvm", nullptr, &err_), TILEC_ERROR_USAGE, "out pointer is NULL");
  EXPECT_EQ(tilec_device_release(nullptr), TILEC_ERROR_USAGE);
}

TEST_F(CApiTest, QueriesDescribeInputsAndOutputs) {
  size_t n = 0;
  ASSERT_EQ(tilec_program_num_inputs(add_, &n, nullptr), TILEC_OK);
  EXPECT_EQ(n, 2u);
  ASSERT_EQ(tilec_program_num_outputs(add_, &n, nullptr), TILEC_OK);
  EXPECT_EQ(n, 1u);
  tilec_tensor_info info{};
  ASSERT_EQ(tilec_program_input(add_, 1, &info, nullptr), TILEC_OK);
  EXPECT_STREQ(info.name, "B");
  EXPECT_EQ(info.dtype, TILEC_F32);
  ASSERT_EQ(info.rank, 1);
  EXPECT_EQ(info.dims[0], 16);
  EXPECT_STREQ(info.layout, "row-major");
  ASSERT_NE(info.strides, nullptr);
  EXPECT_EQ(info.strides[0], 1);
  EXPECT_EQ(info.bytes, 64u);
  EXPECT_GE(info.alignment, 4u);
  ASSERT_EQ(tilec_program_output(add_, 0, &info, nullptr), TILEC_OK);
  EXPECT_STREQ(info.name, "C");
  EXPECT_ERROR(tilec_program_input(add_, 2, &info, &err_), TILEC_ERROR_USAGE, "input index 2 out of range");
  EXPECT_ERROR(tilec_program_output(add_, 0, nullptr, &err_), TILEC_ERROR_USAGE, "info is NULL");
  EXPECT_ERROR(tilec_program_num_inputs(add_, nullptr, &err_), TILEC_ERROR_USAGE, "count is NULL");
}

TEST_F(CApiTest, RunsOnCallerMemory) {
  tilec_tensor in[2] = {T(a_), T(b_)}, out = T(c_);
  tilec_error e = nullptr;
  ASSERT_EQ(tilec_program_run(add_, in, 2, &out, 1, &e), TILEC_OK) << (e ? tilec_error_text(e) : "");
  for (int i = 0; i < 16; ++i) EXPECT_EQ(c_[i], 101.0f * i);
  // A strided output: every other element of a bigger buffer.
  float wide[32];
  for (float& f : wide) f = -1;
  int64_t stride[1] = {2};
  tilec_tensor strided = {wide, sizeof wide, TILEC_F32, 1, dims_, stride};
  ASSERT_EQ(tilec_program_run(add_, in, 2, &strided, 1, &e), TILEC_OK);
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(wide[2 * i], 101.0f * i);
    EXPECT_EQ(wide[2 * i + 1], -1.0f);
  }
}

// The in-place fast path (every tensor as compiled, aligned) keeps its
// wrappers of caller memory between runs: each run must follow the memory
// it is given, and memory the fast path refuses (short, misaligned, odd
// strides) must still run correctly or fail as before.
TEST_F(CApiTest, InPlaceRunsFollowTheMemoryOfEachCall) {
  alignas(64) float a2[16], b2[16], c2[16 + 16];
  for (int i = 0; i < 16; ++i) a2[i] = -1.0f * i, b2[i] = 3.0f;
  tilec_error e = nullptr;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 16; ++i) a_[i] = static_cast<float>(i + round);  // new data, same memory
    tilec_tensor in1[2] = {T(a_), T(b_)}, out1 = T(c_);
    ASSERT_EQ(tilec_program_run(add_, in1, 2, &out1, 1, &e), TILEC_OK) << Take(e);
    tilec_tensor in2[2] = {T(a2), T(b2)}, out2 = T(c2);
    ASSERT_EQ(tilec_program_run(add_, in2, 2, &out2, 1, &e), TILEC_OK) << Take(e);
    for (int i = 0; i < 16; ++i) {
      ASSERT_EQ(c_[i], 101.0f * i + round) << i;
      ASSERT_EQ(c2[i], 3.0f - i) << i;
    }
  }
  for (int i = 0; i < 16; ++i) a_[i] = static_cast<float>(i);
  // Explicit row-major strides are the compiled layout: same result.
  int64_t unit[1] = {1};
  tilec_tensor in[2] = {T(a_), T(b_)}, out = T(c2);
  in[0].strides = unit;
  out.strides = unit;
  ASSERT_EQ(tilec_program_run(add_, in, 2, &out, 1, &e), TILEC_OK) << Take(e);
  for (int i = 0; i < 16; ++i) ASSERT_EQ(c2[i], 101.0f * i);
  // A misaligned output (one float in) is copied out, not written in place wrongly.
  out = T(c2 + 1);
  out.strides = nullptr;
  ASSERT_EQ(tilec_program_run(add_, in, 2, &out, 1, &e), TILEC_OK) << Take(e);
  for (int i = 0; i < 16; ++i) ASSERT_EQ(c2[1 + i], 101.0f * i);
  // Too few bytes is still the user error it was.
  out = T(c2);
  out.bytes = 60;
  EXPECT_ERROR(tilec_program_run(add_, in, 2, &out, 1, &err_), TILEC_ERROR_USER, "needs 64 bytes but 60");
}

TEST_F(CApiTest, MisusedRunsAreErrors) {
  tilec_tensor in[2] = {T(a_), T(b_)}, out = T(c_);
  EXPECT_ERROR(tilec_program_run(add_, in, 1, &out, 1, &err_), TILEC_ERROR_USAGE,
               "has 2 inputs but 1 were given");
  EXPECT_ERROR(tilec_program_run(add_, in, 2, &out, 0, &err_), TILEC_ERROR_USAGE,
               "has 1 outputs but 0 were given");
  EXPECT_ERROR(tilec_program_run(add_, nullptr, 2, &out, 1, &err_), TILEC_ERROR_USAGE, "array is NULL");
  tilec_tensor bad[2] = {T(a_), T(b_)};
  bad[1].dtype = TILEC_I32;
  EXPECT_ERROR(tilec_program_run(add_, bad, 2, &out, 1, &err_), TILEC_ERROR_USER,
               "input 'B' has element type i32 but the program was compiled for f32");
  bad[1] = T(b_);
  bad[1].dtype = static_cast<tilec_dtype>(99);
  EXPECT_ERROR(tilec_program_run(add_, bad, 2, &out, 1, &err_), TILEC_ERROR_USAGE, "99 is not a tilec_dtype");
  int64_t other[1] = {8};
  bad[1] = T(b_);
  bad[1].dims = other;
  EXPECT_ERROR(tilec_program_run(add_, bad, 2, &out, 1, &err_), TILEC_ERROR_USER, "input 'B' has shape f32[8]");
  bad[1] = T(b_);
  bad[1].rank = 2;
  bad[1].dims = nullptr;
  EXPECT_ERROR(tilec_program_run(add_, bad, 2, &out, 1, &err_), TILEC_ERROR_USAGE, "rank 2 but dims is NULL");
  bad[1] = T(b_);
  bad[1].rank = -1;
  EXPECT_ERROR(tilec_program_run(add_, bad, 2, &out, 1, &err_), TILEC_ERROR_USAGE, "negative rank");
  bad[1] = T(b_);
  bad[1].bytes = 60;
  EXPECT_ERROR(tilec_program_run(add_, bad, 2, &out, 1, &err_), TILEC_ERROR_USER,
               "input 'B' needs 64 bytes but 60 are given");
  bad[1] = T(nullptr);
  EXPECT_ERROR(tilec_program_run(add_, bad, 2, &out, 1, &err_), TILEC_ERROR_USER, "null data pointer");
  tilec_tensor small_out = T(c_);
  small_out.bytes = 0;
  EXPECT_ERROR(tilec_program_run(add_, in, 2, &small_out, 1, &err_), TILEC_ERROR_USER,
               "output 'C' needs 64 bytes");
}

TEST_F(CApiTest, BadHandlesAreUsageErrors) {
  tilec_tensor in[2] = {T(a_), T(b_)}, out = T(c_);
  size_t n = 0;
  EXPECT_ERROR(tilec_program_run(nullptr, in, 2, &out, 1, &err_), TILEC_ERROR_USAGE, "program is NULL");
  // A number that was never a handle, and a device handle used as a program.
  EXPECT_ERROR(tilec_program_run(reinterpret_cast<tilec_program>(0x1234), in, 2, &out, 1, &err_),
               TILEC_ERROR_USAGE, "not a live program");
  EXPECT_ERROR(tilec_program_num_inputs(reinterpret_cast<tilec_program>(device_), &n, &err_),
               TILEC_ERROR_USAGE, "not a live program");
  EXPECT_ERROR(tilec_program_compile(reinterpret_cast<tilec_device>(add_), kAdd, nullptr, nullptr, 0,
                                     nullptr, reinterpret_cast<tilec_program*>(&n), &err_),
               TILEC_ERROR_USAGE, "not a live device");
  // Released: running, querying and releasing again are errors, not crashes.
  ASSERT_EQ(tilec_program_release(add_), TILEC_OK);
  EXPECT_ERROR(tilec_program_run(add_, in, 2, &out, 1, &err_), TILEC_ERROR_USAGE, "released already");
  EXPECT_ERROR(tilec_program_num_outputs(add_, &n, &err_), TILEC_ERROR_USAGE, "released already");
  EXPECT_EQ(tilec_program_release(add_), TILEC_ERROR_USAGE);
  add_ = nullptr;
  EXPECT_EQ(tilec_program_release(nullptr), TILEC_ERROR_USAGE);
  // Errors themselves.
  tilec_error e = nullptr;
  ASSERT_NE(tilec_program_run(nullptr, in, 2, &out, 1, &e), TILEC_OK);
  ASSERT_EQ(tilec_error_release(e), TILEC_OK);
  EXPECT_EQ(tilec_error_release(e), TILEC_ERROR_USAGE);
  EXPECT_EQ(tilec_error_kind(e), TILEC_ERROR_USAGE);
  EXPECT_NE(std::string(tilec_error_message(e)).find("not a live tilec_error"), std::string::npos);
  EXPECT_EQ(tilec_error_release(nullptr), TILEC_ERROR_USAGE);
  const char* file = "x";
  int line = 7, col = 7;
  tilec_error_location(nullptr, &file, &line, &col);
  EXPECT_STREQ(file, "");
  EXPECT_EQ(line, 0);
  // A NULL error pointer: the status alone reports the failure.
  EXPECT_EQ(tilec_program_run(nullptr, in, 2, &out, 1, nullptr), TILEC_ERROR_USAGE);
}

// A forced tile names a kernel: one the program does not have is an error
// naming it, never ignored.
TEST_F(CApiTest, ForcedTilesNameAKernelOfTheProgram) {
  tilec_tensor_spec in2[2] = {{"A", TILEC_F32, 1, dims_, nullptr}, {"B", TILEC_F32, 1, dims_, nullptr}};
  tilec_program p = nullptr;
  int64_t sizes[1] = {4};
  tilec_tile_spec tile = {"kernel_7", 1, sizes};
  tilec_compile_options tiled{};
  tiled.tiles = &tile;
  tiled.num_tiles = 1;
  tiled.no_vector = 1;
  EXPECT_ERROR(tilec_program_compile(device_, kAdd, nullptr, in2, 2, &tiled, &p, &err_), TILEC_ERROR_USER,
               "options.tiles kernel_7: the program has no kernel 'kernel_7' (kernels: kernel_0; see tilec compile "
               "--emit kernels)");
  tile.kernel = "kernel_0";
  tilec_error compiled = nullptr;
  ASSERT_EQ(tilec_program_compile(device_, kAdd, nullptr, in2, 2, &tiled, &p, &compiled), TILEC_OK)
      << (compiled ? tilec_error_text(compiled) : "");
  EXPECT_EQ(tilec_program_release(p), TILEC_OK);
}

TEST_F(CApiTest, TileErrorsCarryTheSourceLocation) {
  tilec_tensor_spec in[1] = {{"A", TILEC_F32, 1, dims_, nullptr}};
  tilec_program p = nullptr;
  tilec_error e = nullptr;
  ASSERT_EQ(tilec_program_compile(device_, "function (A[N]) -> (C) {\n  C = A + Q;\n}", "bad.tile",
                                  in, 1, nullptr, &p, &e),
            TILEC_ERROR_USER);
  EXPECT_EQ(p, nullptr);
  const char* file = nullptr;
  int line = 0, col = 0;
  tilec_error_location(e, &file, &line, &col);
  EXPECT_STREQ(file, "bad.tile");
  EXPECT_EQ(line, 2);
  EXPECT_EQ(col, 11);
  EXPECT_NE(std::string(tilec_error_message(e)).find("'Q'"), std::string::npos) << tilec_error_message(e);
  std::string text = Take(e);
  EXPECT_NE(text.find("bad.tile:2:11: error:"), std::string::npos) << text;
  EXPECT_NE(text.find("  C = A + Q;\n          ^"), std::string::npos) << text;

  EXPECT_ERROR(tilec_program_compile(device_, kAdd, nullptr, in, 1, nullptr, &p, &err_), TILEC_ERROR_USER, "B");
  EXPECT_ERROR(tilec_program_compile(device_, nullptr, nullptr, in, 1, nullptr, &p, &err_),
               TILEC_ERROR_USAGE, "source is NULL");
  EXPECT_ERROR(tilec_program_compile(device_, kAdd, nullptr, nullptr, 2, nullptr, &p, &err_),
               TILEC_ERROR_USAGE, "array is NULL");
  tilec_tensor_spec twice[2] = {in[0], in[0]};
  EXPECT_ERROR(tilec_program_compile(device_, kAdd, nullptr, twice, 2, nullptr, &p, &err_),
               TILEC_ERROR_USAGE, "input 'A' has two specs");
  tilec_tensor_spec bad_layout[2] = {{"A", TILEC_F32, 1, dims_, "nhwc"}, {"B", TILEC_F32, 1, dims_, nullptr}};
  EXPECT_ERROR(tilec_program_compile(device_, kAdd, nullptr, bad_layout, 2, nullptr, &p, &err_),
               TILEC_ERROR_USER, "nhwc");
  tilec_compile_options o{};
  o.num_layouts = 1;
  EXPECT_ERROR(tilec_program_compile(device_, kAdd, nullptr, in, 1, &o, &p, &err_), TILEC_ERROR_USAGE,
               "options.layouts is NULL");
  EXPECT_ERROR(tilec_program_compile(device_, kAdd, nullptr, in, 1, nullptr, nullptr, &err_),
               TILEC_ERROR_USAGE, "program out pointer is NULL");
}

// The seed's conv+ReLU through the C ABI, NHWC memory with an nhwc-declared
// output, on every device, against the reference evaluator.
TEST(CApi, ConvReluMatchesTheEvaluatorOnEveryDevice) {
  const char* src = R"(function (D[N, X, Y, CI], K[I, J, CO, CI]) -> (R) {
  O[n, x, y, co : N, X, Y, CO] = +(D[n, x + i - 1, y + j - 1, ci] * K[i, j, co, ci]);
  R = (O > 0 ? O : 0);
})";
  std::vector<int64_t> d_dims = {1, 6, 5, 3}, k_dims = {3, 3, 7, 3};
  using tilec::lang::DataType;
  tilec::lang::Tensor d({DataType::F32, d_dims}), k({DataType::F32, k_dims});
  tilec::lang::FillRandom(d, 5);
  tilec::lang::FillRandom(k, 6);
  tilec::lang::Program bound = tilec::lang::Bind(
      tilec::lang::Parse(tilec::MakeSource("c.tile", src)), {{"D", d.shape()}, {"K", k.shape()}});
  tilec::lang::Tensor want = tilec::lang::Evaluate(bound, {{"D", d}, {"K", k}}).at("R");
  for (size_t i = 0; i < tilec_device_count(); ++i) {
    SCOPED_TRACE(tilec_device_id(i));
    tilec_device dev = nullptr;
    ASSERT_EQ(tilec_device_open(tilec_device_id(i), &dev, nullptr), TILEC_OK);
    tilec_tensor_spec in[2] = {{"D", TILEC_F32, 4, d_dims.data(), nullptr},
                               {"K", TILEC_F32, 4, k_dims.data(), nullptr}};
    tilec_program p = nullptr;
    tilec_error e = nullptr;
    ASSERT_EQ(tilec_program_compile(dev, src, "c.tile", in, 2, nullptr, &p, &e), TILEC_OK)
        << (e ? tilec_error_text(e) : "");
    std::vector<float> r(want.size(), -5.0f);
    tilec_tensor ins[2] = {{d.data(), d.bytes(), TILEC_F32, 4, d_dims.data(), nullptr},
                           {k.data(), k.bytes(), TILEC_F32, 4, k_dims.data(), nullptr}};
    tilec_tensor out = {r.data(), r.size() * 4, TILEC_F32, 4, want.shape().dims.data(), nullptr};
    ASSERT_EQ(tilec_program_run(p, ins, 2, &out, 1, &e), TILEC_OK) << (e ? tilec_error_text(e) : "");
    for (int64_t j = 0; j < want.size(); ++j)
      ASSERT_NEAR(r[j], want.GetDouble(j), 1e-4 * std::max(1.0, std::abs(want.GetDouble(j)))) << j;
    EXPECT_EQ(tilec_program_release(p), TILEC_OK);
    EXPECT_EQ(tilec_device_release(dev), TILEC_OK);
  }
}

// Input names without shapes, and a syntax error with its location.
TEST(CApiSource, InputsParseWithoutShapes) {
  const char* inputs = nullptr;
  tilec_error err = nullptr;
  ASSERT_EQ(tilec_source_inputs("function (D[N], K[M]) -> (R) { R = D + 1; }", "x.tile", &inputs, &err), TILEC_OK);
  EXPECT_STREQ(inputs, "D,K");
  ASSERT_EQ(tilec_source_inputs("function (A) -> (B) {\n  B = A +;\n}", "x.tile", &inputs, &err), TILEC_ERROR_USER);
  const char* file = nullptr;
  int line = 0, column = 0;
  tilec_error_location(err, &file, &line, &column);
  EXPECT_STREQ(file, "x.tile");
  EXPECT_EQ(line, 2);
  EXPECT_EQ(column, 10);
  tilec_error_release(err);
  err = nullptr;
  EXPECT_EQ(tilec_source_inputs(nullptr, nullptr, &inputs, &err), TILEC_ERROR_USAGE);
  tilec_error_release(err);
}

}  // namespace
