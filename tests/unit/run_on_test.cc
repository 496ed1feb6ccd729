// Program::RunOn on caller memory: in place when the memory is in the
// compiled layout and aligned, copied otherwise (strided views, blocked
// layouts), on both backends, against the reference evaluator.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>

#include "pipeline_check.h"
#include "runtime/host_view.h"
#include "runtime/program.h"
#include "tile_lang/evaluator.h"

namespace tilec::testing {
namespace {

// Memory aligned to 64 bytes, freed on destruction.
struct Aligned {
  explicit Aligned(size_t bytes) : bytes(bytes) {
    data = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  }
  ~Aligned() { std::free(data); }
  void* data;
  size_t bytes;
};

// A 3x3 "same" convolution with ReLU over sizes that divide no tile.
const char* kConv = R"(
function (D[N, H, W, CI], K[KH, KW, CO, CI]) -> (O) {
  C[n, y, x, co : N, H, W, CO] = +(D[n, y + i - 1, x + j - 1, ci] * K[i, j, co, ci]);
  O = (C > 0 ? C : 0);
})";

void ExpectNear(const lang::Tensor& got, const lang::Tensor& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  int bad = 0;
  for (int64_t i = 0; i < want.size() && bad < 5; ++i) {
    double w = want.GetDouble(i), g = got.GetDouble(i);
    if (!(std::fabs(w - g) <= 1e-4 * std::max(1.0, std::fabs(w)))) {
      ++bad;
      ADD_FAILURE() << what << "[" << i << "] = " << g << ", expected " << w;
    }
  }
}

class RunOnTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    device_ = DeviceFor(GetParam());
    if (!device_) GTEST_SKIP() << "no " << GetParam() << " device";
  }
  std::shared_ptr<hal::Device> device_;
};

TEST_P(RunOnTest, RowMajorMemoryIsUsedInPlace) {
  Case c(kConv, {{"D", F32({2, 7, 9, 5})}, {"K", F32({3, 3, 6, 5})}});
  lang::Program bound = BindCase(c);
  runtime::Program p = runtime::Program::Compile(bound, device_);
  std::map<std::string, lang::Tensor> in;
  for (const std::string& n : bound.inputs) {
    lang::Tensor t(bound.Tensor(n).shape);
    lang::FillRandom(t, n == "D" ? 3 : 4);
    in.emplace(n, std::move(t));
  }
  lang::Tensor want = lang::Evaluate(bound, in).at("O");

  std::vector<std::unique_ptr<Aligned>> memory;
  std::vector<runtime::HostView> ins, outs;
  for (const std::string& n : bound.inputs) {
    const lang::Tensor& t = in.at(n);
    memory.push_back(std::make_unique<Aligned>(t.bytes()));
    std::memcpy(memory.back()->data, t.data(), t.bytes());
    ins.push_back({memory.back()->data, t.bytes(), t.shape(), {}});
  }
  memory.push_back(std::make_unique<Aligned>(want.bytes()));
  std::memset(memory.back()->data, 0xff, want.bytes());  // NaN everywhere until written
  outs.push_back({memory.back()->data, want.bytes(), want.shape(), {}});
  runtime::RunStats stats;
  p.RunOn(ins, outs, &stats);
  EXPECT_EQ(stats.copied_views, 0) << "in-layout aligned memory was copied";
  lang::Tensor got(want.shape());
  std::memcpy(got.data(), outs[0].data, got.bytes());
  ExpectNear(got, want, "O");
}

TEST_P(RunOnTest, StridedViewsAreCopiedCorrectly) {
  // The input is a transposed view (column-major) of a bigger buffer; the
  // output goes to every other element of its buffer.
  Case c("function (A[M, N], B[N]) -> (R) { R[m, n : M, N] = =(A[m, n] * B[n]); }",
         {{"A", F32({5, 7})}, {"B", F32({7})}});
  lang::Program bound = BindCase(c);
  runtime::Program p = runtime::Program::Compile(bound, device_);
  lang::Tensor a(F32({5, 7})), b(F32({7}));
  lang::FillRandom(a, 1);
  lang::FillRandom(b, 2);
  lang::Tensor want = lang::Evaluate(bound, {{"A", a}, {"B", b}}).at("R");

  std::vector<float> a_mem(8 * 7, -100.0f);  // column-major, leading dimension 8
  for (int m = 0; m < 5; ++m)
    for (int n = 0; n < 7; ++n) a_mem[n * 8 + m] = a.as<float>()[m * 7 + n];
  std::vector<float> r_mem(2 * 35, 7.0f);
  runtime::HostView av{a_mem.data(), a_mem.size() * 4, a.shape(), {1, 8}};
  runtime::HostView bv{b.data(), b.bytes(), b.shape(), {1}};
  runtime::HostView rv{r_mem.data(), r_mem.size() * 4, want.shape(), {14, 2}};
  runtime::RunStats stats;
  p.RunOn(std::vector{av, bv}, std::vector{rv}, &stats);
  EXPECT_EQ(stats.copied_views, 2);  // A and R; B is contiguous
  lang::Tensor got(want.shape());
  for (int i = 0; i < 35; ++i) {
    got.as<float>()[i] = r_mem[2 * i];
    EXPECT_EQ(r_mem[2 * i + 1], 7.0f) << "gap element " << 2 * i + 1 << " was written";
  }
  ExpectNear(got, want, "R");
}

TEST_P(RunOnTest, BlockedLayoutMemoryIsUsedAsIs) {
  // The caller's memory is already nChw8c (C = 5: one padded block).
  Case c("function (A[N, C, H, W]) -> (R) { R[n, c, h, w : N, C, H, W] = +(A[n, c, h, w]); }",
         {{"A", F32({1, 5, 3, 4})}},
         {{"A", "nChw8c"}, {"R", "nChw8c"}});
  lang::Program bound = BindCase(c);
  runtime::Program p = runtime::Program::Compile(bound, device_);
  const lang::Layout& layout = bound.Tensor("A").layout;
  ASSERT_EQ(layout.elements, 1 * 1 * 3 * 4 * 8);
  Aligned a(layout.elements * 4), r(layout.elements * 4);
  auto* af = static_cast<float*>(a.data);
  for (int64_t i = 0; i < layout.elements; ++i) af[i] = static_cast<float>(i % 8 < 5 ? i : 0);
  std::memset(r.data, 0xff, r.bytes);  // NaN until written, padding included
  runtime::HostView av{a.data, a.bytes, bound.Tensor("A").shape, {}};
  runtime::HostView rv{r.data, r.bytes, bound.Tensor("R").shape, {}};
  runtime::RunStats stats;
  p.RunOn(std::vector{av}, std::vector{rv}, &stats);
  EXPECT_EQ(stats.copied_views, 0);
  auto* rf = static_cast<float*>(r.data);
  // The padding lanes (c >= 5) are written as zeros.
  for (int64_t i = 0; i < layout.elements; ++i)
    EXPECT_EQ(rf[i], af[i]) << "element " << i << " (lane " << i % 8 << ")";
}

TEST_P(RunOnTest, BadViewsAreUserErrorsNamingTheTensor) {
  Case c("function (A[N], B[N]) -> (C) { C = A + B; }", {{"A", F32({16})}, {"B", F32({16})}});
  runtime::Program p = runtime::Program::Compile(BindCase(c), device_);
  std::vector<float> a(16), b(16), out(16);
  lang::Shape s = F32({16});
  runtime::HostView av{a.data(), 64, s, {}}, bv{b.data(), 64, s, {}}, cv{out.data(), 64, s, {}};
  auto expect_error = [&](std::vector<runtime::HostView> ins, std::vector<runtime::HostView> outs,
                          const std::string& part) {
    try {
      p.RunOn(ins, outs);
      ADD_FAILURE() << "no error; expected one with '" << part << "'";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_error({av}, {cv}, "has 2 inputs but 1 were given");
  expect_error({av, bv}, {}, "has 1 outputs but 0 were given");
  runtime::HostView wrong_type = bv;
  wrong_type.shape.dtype = lang::DataType::I32;
  expect_error({av, wrong_type}, {cv}, "input 'B' has element type i32");
  runtime::HostView wrong_shape = av;
  wrong_shape.shape.dims = {15};
  expect_error({wrong_shape, bv}, {cv}, "input 'A' has shape f32[15]");
  runtime::HostView small = cv;
  small.bytes = 63;
  expect_error({av, bv}, {small}, "output 'C' needs 64 bytes but 63 are given");
  runtime::HostView null_data = av;
  null_data.data = nullptr;
  expect_error({null_data, bv}, {cv}, "input 'A' has a null data pointer");
  runtime::HostView far = bv;
  far.strides = {2};
  expect_error({av, far}, {cv}, "input 'B' needs 124 bytes");
  runtime::HostView alias = cv;
  alias.strides = {0};
  expect_error({av, bv}, {alias}, "stride 0");
  runtime::HostView negative = av;
  negative.strides = {-1};
  expect_error({negative, bv}, {cv}, "negative stride");
  runtime::HostView rank = av;
  rank.strides = {1, 1};
  expect_error({rank, bv}, {cv}, "2 strides for 1 dimensions");
}

INSTANTIATE_TEST_SUITE_P(Devices, RunOnTest, ::testing::Values("llvm", "opencl"));

}  // namespace
}  // namespace tilec::testing
