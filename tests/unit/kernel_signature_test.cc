// SignKernel (compiler/ir/kernel_signature.h): the same kernel in two programs
// shares its signature; a different shape, layout, dtype or post-op does not.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "compiler/ir/kernel_signature.h"
#include "compiler/passes/lower.h"
#include "tile_lang/binder.h"
#include "tile_lang/parser.h"

namespace tilec::compiler {
namespace {

lang::Shape F32(std::vector<int64_t> dims) { return {lang::DataType::F32, std::move(dims)}; }

// The signature of every flat kernel of `source`, in order.
std::vector<KernelSignature> Signatures(const std::string& source,
                                        const std::map<std::string, lang::Shape>& shapes,
                                        const std::map<std::string, std::string>& layouts = {}) {
  lang::Program p = lang::Bind(lang::Parse(MakeSource("t.tile", source)), shapes, layouts);
  std::vector<KernelSignature> out;
  for (const KernelSpec& k : Lower(p, {}).kernels)
    if (k.kind != KernelKind::Special && k.kind != KernelKind::Direct) out.push_back(SignKernel(k));
  return out;
}

const char* kConv =
    "function (D[N, X, Y, CI], K[I, J, CO, CI]) -> (R) {\n"
    "  O[n, x, y, co : N, X, Y, CO] = +(D[n, x + i - 1, y + j - 1, ci] * K[i, j, co, ci]);\n"
    "  R = relu(O);\n"
    "}\n";
// The same convolution with other names, after an unrelated kernel.
const char* kConvRenamed =
    "function (Z[B], In[N, X, Y, CI], W[I, J, CO, CI]) -> (Q, Out) {\n"
    "  Q = Z * 2;\n"
    "  Acc[b, p, q, o : N, X, Y, CO] = +(In[b, p + u - 1, q + v - 1, c] * W[u, v, o, c]);\n"
    "  Out = relu(Acc);\n"
    "}\n";

std::map<std::string, lang::Shape> ConvShapes(int64_t x) {
  return {{"D", F32({1, x, 7, 5})}, {"K", F32({3, 3, 6, 5})}};
}

TEST(KernelSignature, SameConvolutionInTwoProgramsMatches) {
  std::vector<KernelSignature> a = Signatures(kConv, ConvShapes(9));
  std::vector<KernelSignature> b = Signatures(
      kConvRenamed, {{"Z", F32({4})}, {"In", F32({1, 9, 7, 5})}, {"W", F32({3, 3, 6, 5})}});
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(a[0].hash, b[1].hash) << a[0].text << "\n---\n" << b[1].text;
  EXPECT_EQ(a[0].text, b[1].text);
  EXPECT_NE(a[0].hash, b[0].hash);
  EXPECT_EQ(a[0].hash.size(), 16u);
  // Deterministic.
  EXPECT_EQ(a[0].hash, Signatures(kConv, ConvShapes(9))[0].hash);
  // The renamed program orders its indices differently; a tile maps through
  // the canonical order to the same sizes of the same roles.
  ASSERT_EQ(a[0].order.size(), 7u);
  std::vector<int64_t> tile_a = {1, 2, 3, 4, 5, 6, 7};
  std::vector<int64_t> canonical = ToCanonical(a[0], tile_a);
  EXPECT_EQ(FromCanonical(a[0], canonical), tile_a);
  std::vector<int64_t> tile_b = FromCanonical(b[1], canonical);
  EXPECT_NE(tile_b, tile_a);  // the flat orders differ
  EXPECT_EQ(ToCanonical(b[1], tile_b), canonical);
}

TEST(KernelSignature, ShapeLayoutDtypeAndPostOpsChangeIt) {
  std::string base = Signatures(kConv, ConvShapes(9))[0].hash;
  EXPECT_NE(base, Signatures(kConv, ConvShapes(10))[0].hash);
  EXPECT_NE(base, Signatures(kConv, ConvShapes(9), {{"D", "nhwc"}})[0].hash);
  std::map<std::string, lang::Shape> f64 = ConvShapes(9);
  f64["D"].dtype = lang::DataType::F64;
  f64["K"].dtype = lang::DataType::F64;
  EXPECT_NE(base, Signatures(kConv, f64)[0].hash);
  std::string no_relu =
      "function (D[N, X, Y, CI], K[I, J, CO, CI]) -> (O) {\n"
      "  O[n, x, y, co : N, X, Y, CO] = +(D[n, x + i - 1, y + j - 1, ci] * K[i, j, co, ci]);\n"
      "}\n";
  EXPECT_NE(base, Signatures(no_relu, ConvShapes(9))[0].hash);
}

}  // namespace
}  // namespace tilec::compiler
