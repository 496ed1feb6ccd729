// The header-only C++ API (include/tilec/tilec.hpp) over the C ABI.
#include <gtest/gtest.h>
#include <tilec/tilec.hpp>

#include <array>
#include <vector>

namespace {

TEST(CppApi, CompilesQueriesAndRuns) {
  tilec::Device device("llvm");
  EXPECT_EQ(device.Name(), "llvm:cpu");
  std::array<int64_t, 2> dims = {3, 5};
  tilec::Program p = device.Compile("function (A[M, N], B[N]) -> (C) { C = A * B; }",
                                    {{"A", TILEC_F32, dims}, {"B", TILEC_F32, std::span(dims).last(1)}});
  std::vector<tilec::TensorInfo> ins = p.Inputs(), outs = p.Outputs();
  ASSERT_EQ(ins.size(), 2u);
  EXPECT_EQ(ins[1].name, "B");
  EXPECT_EQ(ins[1].dims, std::vector<int64_t>{5});
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].name, "C");
  EXPECT_EQ(outs[0].bytes, 60u);
  EXPECT_EQ(outs[0].strides, (std::vector<int64_t>{5, 1}));

  std::vector<float> a(15), b = {1, 2, 3, 4, 5}, c(15);
  for (int i = 0; i < 15; ++i) a[i] = static_cast<float>(i);
  std::span<const int64_t> d(dims), bd = d.last(1);
  p.Run({tilec::Tensor(std::span(a), d), tilec::Tensor(std::span(b), bd)}, {tilec::Tensor(std::span(c), d)});
  for (int i = 0; i < 15; ++i) EXPECT_EQ(c[i], a[i] * b[i % 5]);

  // Moving keeps one owner; the moved-from object is empty.
  tilec::Program q = std::move(p);
  EXPECT_EQ(p.get(), nullptr);
  EXPECT_NE(q.get(), nullptr);
}

// Dims written inline (the spec keeps a copy), a layout beside them.
TEST(CppApi, DimsWrittenInline) {
  tilec::Device device("llvm");
  tilec::Program p = device.Compile("function (A[M, N], B[N]) -> (C) { C = A + B; }",
                                    {{"A", TILEC_F32, {2, 3}, "order(1,0)"}, {"B", TILEC_F32, {3}}});
  ASSERT_EQ(p.Inputs().size(), 2u);
  EXPECT_EQ(p.Inputs()[0].dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(p.Inputs()[0].strides, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(p.Inputs()[1].dims, std::vector<int64_t>{3});
}

TEST(CppApi, ErrorsAreExceptionsWithKindAndLocation) {
  tilec::Device device;
  std::array<int64_t, 1> n = {4};
  try {
    device.Compile("function (A[N]) -> (C) {\n  C = A + nope;\n}", {{"A", TILEC_F32, n}}, {}, "x.tile");
    FAIL() << "no exception";
  } catch (const tilec::Error& e) {
    EXPECT_EQ(e.kind(), TILEC_ERROR_USER);
    EXPECT_EQ(e.file(), "x.tile");
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.column(), 11);
    EXPECT_NE(std::string(e.what()).find("^~~~"), std::string::npos) << e.what();
  }
  tilec::Program p = device.Compile("function (A[N]) -> (C) { C = A; }", {{"A", TILEC_F32, n}});
  std::vector<int32_t> wrong(4);
  std::vector<float> out(4);
  try {
    p.Run({tilec::Tensor(std::span(wrong), n)}, {tilec::Tensor(std::span(out), n)});
    FAIL() << "no exception";
  } catch (const tilec::Error& e) {
    EXPECT_EQ(e.kind(), TILEC_ERROR_USER);
    EXPECT_NE(e.message().find("element type i32"), std::string::npos) << e.message();
  }
  EXPECT_THROW(tilec::Device("nowhere"), tilec::Error);
}

}  // namespace
