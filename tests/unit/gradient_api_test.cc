// Gradients through the C ABI (tilec_gradient_source,
// tilec_program_compile_gradient) and the C++ API (GradientSource,
// Device::CompileGradient).
#include <gtest/gtest.h>
#include <tilec/tilec.h>
#include <tilec/tilec.hpp>

#include <string>
#include <vector>

namespace {

constexpr const char* kMatmul = "function (A[M, L], B[L, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }";

// C = A B: A_grad = C_grad B^T, B_grad = A^T C_grad.
TEST(GradientApi, CompiledMatmulGradientMatchesTheFormula) {
  tilec::Device device("llvm");
  const int64_t m = 3, l = 5, n = 7;
  tilec::Program p = device.CompileGradient(kMatmul, {{"A", TILEC_F32, {m, l}}, {"B", TILEC_F32, {l, n}}});
  std::vector<tilec::TensorInfo> ins = p.Inputs(), outs = p.Outputs();
  ASSERT_EQ(ins.size(), 3u);
  EXPECT_EQ(ins[2].name, "C_grad");
  EXPECT_EQ(ins[2].dims, (std::vector<int64_t>{m, n}));
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(outs[0].name, "A_grad");
  EXPECT_EQ(outs[1].name, "B_grad");

  std::vector<float> a(m * l), b(l * n), g(m * n), ga(m * l), gb(l * n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) - 3;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) - 2;
  for (size_t i = 0; i < g.size(); ++i) g[i] = static_cast<float>(i % 3) - 1;
  std::vector<int64_t> da = {m, l}, db = {l, n}, dg = {m, n};
  p.Run({tilec::Tensor(std::span(a), da), tilec::Tensor(std::span(b), db), tilec::Tensor(std::span(g), dg)},
        {tilec::Tensor(std::span(ga), da), tilec::Tensor(std::span(gb), db)});
  for (int64_t i = 0; i < m; ++i)
    for (int64_t k = 0; k < l; ++k) {
      float want = 0;
      for (int64_t j = 0; j < n; ++j) want += g[i * n + j] * b[k * n + j];
      EXPECT_EQ(ga[i * l + k], want) << i << "," << k;
    }
  for (int64_t k = 0; k < l; ++k)
    for (int64_t j = 0; j < n; ++j) {
      float want = 0;
      for (int64_t i = 0; i < m; ++i) want += a[i * l + k] * g[i * n + j];
      EXPECT_EQ(gb[k * n + j], want) << k << "," << j;
    }
}

TEST(GradientApi, SourceOfTheGradientWithChosenInputs) {
  std::string text = tilec::GradientSource(kMatmul, {{"A", TILEC_F32, {3, 5}}, {"B", TILEC_F32, {5, 7}}},
                                           {{"B"}, {}});
  EXPECT_NE(text.find("function (A[M, L], B[L, N], C_grad) -> (B_grad) {"), std::string::npos) << text;
  EXPECT_NE(text.find("B_grad[k, j : 5, 7] = +(A[i, k] * C_grad[i, j]);"), std::string::npos) << text;
}

TEST(GradientApi, ErrorsCarryTheStatementsLocation) {
  tilec::Device device("llvm");
  try {
    device.CompileGradient("function (X[N, M]) -> (O) {\n  O[i : N] = *(X[i, j]);\n}", {{"X", TILEC_F32, {2, 3}}},
                           {}, {}, "prod.tile");
    FAIL() << "no exception";
  } catch (const tilec::Error& e) {
    EXPECT_EQ(e.kind(), TILEC_ERROR_USER);
    EXPECT_EQ(e.file(), "prod.tile");
    EXPECT_EQ(e.line(), 2);
    EXPECT_NE(e.message().find("product aggregation"), std::string::npos) << e.message();
  }
  try {
    tilec::GradientSource(kMatmul, {{"A", TILEC_F32, {3, 5}}, {"B", TILEC_F32, {5, 7}}}, {{"Z"}, {}});
    FAIL() << "no exception";
  } catch (const tilec::Error& e) {
    EXPECT_EQ(e.kind(), TILEC_ERROR_USER);
    EXPECT_NE(e.message().find("'Z' is not an input"), std::string::npos) << e.message();
  }
}

TEST(GradientApi, SourceOutputsInSignatureOrder) {
  EXPECT_EQ(tilec::SourceOutputs("function (A[N]) -> (Y, B) { Y = A * 2; B = A > 0; }"),
            (std::vector<std::string>{"Y", "B"}));
  const char* outputs = nullptr;
  EXPECT_EQ(tilec_source_outputs(nullptr, nullptr, &outputs, nullptr), TILEC_ERROR_USAGE);
}

TEST(GradientApi, CAbiRejectsMisuse) {
  const char* text = nullptr;
  tilec_error error = nullptr;
  EXPECT_EQ(tilec_gradient_source(nullptr, "x", nullptr, 0, nullptr, &text, &error), TILEC_ERROR_USAGE);
  tilec_error_release(error);
  error = nullptr;
  tilec_gradient_spec spec{};
  spec.num_wrt = 1;  // and no array
  int64_t dims[2] = {3, 5};
  tilec_tensor_spec in[1] = {{"A", TILEC_F32, 2, dims, nullptr}};
  EXPECT_EQ(tilec_gradient_source("function (A[M, N]) -> (C) { C = A * 2; }", "x", in, 1, &spec, &text, &error),
            TILEC_ERROR_USAGE);
  tilec_error_release(error);
  EXPECT_EQ(tilec_gradient_source("function (A[M, N]) -> (C) { C = A * 2; }", "x", in, 1, nullptr, &text, nullptr),
            TILEC_OK);
  EXPECT_NE(std::string(text).find("A_grad = C_grad * 2;"), std::string::npos) << text;
}

}  // namespace
