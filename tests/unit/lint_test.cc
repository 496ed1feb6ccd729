// lang::Lint: warnings for tensors computed and never used and for unused
// inputs, with their locations; none for outputs, reads by later statements,
// defaults, indices and bind-time checks.
#include "tile_lang/lint.h"

#include <gtest/gtest.h>

#include "tile_lang/parser.h"

namespace tilec::lang {
namespace {

std::vector<std::string> Warnings(const char* text) {
  std::vector<std::string> out;
  for (const UserError& w : Lint(Parse(MakeSource("t.tile", text)))) out.push_back(w.Render());
  return out;
}

TEST(Lint, UnusedTensorsAndInputs) {
  std::vector<std::string> w = Warnings("function (X[N], W[N]) -> (Y) {\n  T = X * 2;\n  Y = X + 1;\n}");
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0], "t.tile:1:17: warning: input 'W' is never used\nfunction (X[N], W[N]) -> (Y) {\n                ^~~~");
  EXPECT_EQ(w[1].substr(0, 60), "t.tile:2:3: warning: 'T' is computed but never used (it is n");
}

TEST(Lint, ReadsOfEveryKindCount) {
  // A contraction's inputs, an assignment's expression, a default, the
  // output itself: nothing to warn about.
  EXPECT_TRUE(Warnings(R"(function (A[N, M], B[M], D[N]) -> (O, Y) {
  P[i : N] = +(A[i, j] * B[j]) default D;
  Y = exp(P);
  O[i : N] = >(P[i]);
})").empty());
  // A tensor read only before it is defined again is not possible; one read
  // only by an earlier statement does not count: here nothing reads T.
  EXPECT_EQ(Warnings("function (A[N]) -> (Y) {\n  Y = A + 1;\n  T = Y * 2;\n}").size(), 1u);
  // A bind-time check's value is never meant to be read.
  EXPECT_TRUE(Warnings("function (I[N, M]) -> (T) {\n  Ok = assert_square(N == M);\n  T[] = +(I[i, i]);\n}").empty());
}

}  // namespace
}  // namespace tilec::lang
