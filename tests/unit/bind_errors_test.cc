// Every user error Bind reports, rendered as the user sees it:
// `file:line:col: error: message`, the source line, and a caret under the span.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "support/error.h"
#include "tile_lang/binder.h"
#include "tile_lang/parser.h"

namespace tilec::lang {
namespace {

std::string BindError(const std::string& text, const std::map<std::string, std::string>& shapes) {
  std::map<std::string, Shape> bound;
  for (const auto& [name, spec] : shapes) bound[name] = ParseShape(spec);
  ast::Function f = Parse(MakeSource("test.tile", text));  // must parse: these are bind errors
  try {
    Bind(f, bound);
  } catch (const UserError& e) {
    return e.Render();
  } catch (const Error& e) {
    return "not a user error: " + e.Render();
  }
  return "no error";
}

const std::map<std::string, std::string> kA3 = {{"A", "f32[3]"}};

// ---- inputs ----------------------------------------------------------------

TEST(BindErrors, MissingInputShape) {
  EXPECT_EQ(BindError("function (A, K) -> (C) { C = A; }", kA3),
            "test.tile:1:14: error: no shape given for input 'K'\n"
            "function (A, K) -> (C) { C = A; }\n"
            "             ^");
}

TEST(BindErrors, ShapeForUnknownInputListsInputs) {
  EXPECT_EQ(BindError("function (A, B) -> (C) { C = A; }",
                      {{"A", "f32[3]"}, {"B", "f32[3]"}, {"Q", "f32[1]"}}),
            "test.tile: error: shape given for unknown input 'Q'; the function's inputs are A, B");
}

TEST(BindErrors, RankMismatch) {
  EXPECT_EQ(BindError("function (A[M, N]) -> (C) { C = A; }", {{"A", "f32[3, 4, 5]"}}),
            "test.tile:1:11: error: input 'A' declared with 2 dimensions but bound to f32[3, 4, 5]\n"
            "function (A[M, N]) -> (C) { C = A; }\n"
            "          ^~~~~~~");
}

TEST(BindErrors, RepeatedDimensionDisagreesAcrossInputs) {
  EXPECT_EQ(BindError("function (A[N], B[N]) -> (C) { C = A + B; }",
                      {{"A", "f32[4]"}, {"B", "f32[3]"}}),
            "test.tile:1:19: error: dimension 'N' is 3 here but 4 for input 'A'\n"
            "function (A[N], B[N]) -> (C) { C = A + B; }\n"
            "                  ^");
}

TEST(BindErrors, RepeatedDimensionDisagreesWithinInput) {
  EXPECT_EQ(BindError("function (A[N, N]) -> (C) { C = A; }", {{"A", "f32[3, 4]"}}),
            "test.tile:1:16: error: dimension 'N' is 4 here but 3 for input 'A'\n"
            "function (A[N, N]) -> (C) { C = A; }\n"
            "               ^");
}

TEST(BindErrors, DimensionNameReusesInputName) {
  EXPECT_EQ(BindError("function (N[M], B[N]) -> (C) { C = B; }",
                      {{"N", "f32[3]"}, {"B", "f32[3]"}}),
            "test.tile:1:19: error: 'N' is already defined at 1:11\n"
            "function (N[M], B[N]) -> (C) { C = B; }\n"
            "                  ^");
}

// ---- names and statements --------------------------------------------------

TEST(BindErrors, Reassignment) {
  EXPECT_EQ(BindError("function (A) -> (C) {\n  C = A;\n  C = A * 2;\n}", kA3),
            "test.tile:3:3: error: 'C' is already defined at 2:3\n"
            "  C = A * 2;\n"
            "  ^");
}

TEST(BindErrors, AssignToInput) {
  EXPECT_EQ(BindError("function (A) -> (C) {\n  A = 3;\n  C = A;\n}", kA3),
            "test.tile:2:3: error: 'A' is an input and cannot be assigned\n"
            "  A = 3;\n"
            "  ^");
}

TEST(BindErrors, ContractionOutputAlreadyDefined) {
  EXPECT_EQ(BindError("function (A[N]) -> (C) {\n  C = A;\n  C[i : N] = +(A[i]);\n}", kA3),
            "test.tile:3:3: error: 'C' is already defined at 2:3\n"
            "  C[i : N] = +(A[i]);\n"
            "  ^");
}

TEST(BindErrors, UndefinedName) {
  EXPECT_EQ(BindError("function (A) -> (C) { C = A + Bx; }", kA3),
            "test.tile:1:31: error: undefined name 'Bx'\n"
            "function (A) -> (C) { C = A + Bx; }\n"
            "                              ^~");
}

TEST(BindErrors, UndefinedNameInDeadCodeIsStillReported) {
  EXPECT_EQ(BindError("function (A) -> (C) {\n  C = A;\n  D = exp(Nope);\n}", kA3),
            "test.tile:3:11: error: undefined name 'Nope'\n"
            "  D = exp(Nope);\n"
            "          ^~~~");
}

TEST(BindErrors, IndexVariableOutsideContraction) {
  EXPECT_EQ(BindError("function (A) -> (C) { C = A + i; }", kA3),
            "test.tile:1:31: error: index variable 'i' can only be used inside a contraction\n"
            "function (A) -> (C) { C = A + i; }\n"
            "                              ^");
}

// ---- outputs -----------------------------------------------------------------

TEST(BindErrors, OutputNeverDefined) {
  EXPECT_EQ(BindError("function (A) -> (C, D) { C = A; }", kA3),
            "test.tile:1:21: error: output 'D' is never defined\n"
            "function (A) -> (C, D) { C = A; }\n"
            "                    ^");
}

TEST(BindErrors, DuplicateOutput) {
  EXPECT_EQ(BindError("function (A) -> (C, C) { C = A; }", kA3),
            "test.tile:1:21: error: output 'C' is listed twice\n"
            "function (A) -> (C, C) { C = A; }\n"
            "                    ^");
}

TEST(BindErrors, OutputIsAnInput) {
  EXPECT_EQ(BindError("function (A) -> (A) { C = A; }", kA3),
            "test.tile:1:18: error: output 'A' is an input; return a copy instead (e.g. `O = A;`)\n"
            "function (A) -> (A) { C = A; }\n"
            "                 ^");
}

// ---- elementwise -------------------------------------------------------------

TEST(BindErrors, BroadcastMismatchShowsBothShapes) {
  EXPECT_EQ(BindError("function (A, B) -> (C) { C = A + B; }", {{"A", "f32[3, 4]"}, {"B", "f32[5]"}}),
            "test.tile:1:32: error: cannot broadcast f32[3, 4] and f32[5] in '+'\n"
            "function (A, B) -> (C) { C = A + B; }\n"
            "                               ^");
}

TEST(BindErrors, BitOpOnFloat) {
  EXPECT_EQ(BindError("function (A) -> (C) { C = A << 2; }", kA3),
            "test.tile:1:29: error: bitwise operator '<<' needs integer operands, got f32\n"
            "function (A) -> (C) { C = A << 2; }\n"
            "                            ^~");
}

TEST(BindErrors, ConstantDivisionByZero) {
  EXPECT_EQ(BindError("function (A[N]) -> (C) { K = N / (N - 3); C = A * K; }", kA3),
            "test.tile:1:32: error: division by zero in constant expression\n"
            "function (A[N]) -> (C) { K = N / (N - 3); C = A * K; }\n"
            "                               ^");
}

TEST(BindErrors, ConstantOverflow) {
  EXPECT_EQ(BindError("function (A) -> (C) { K = 9223372036854775807 + 1; C = A * K; }", kA3),
            "test.tile:1:47: error: integer overflow in constant expression '+'\n"
            "function (A) -> (C) { K = 9223372036854775807 + 1; C = A * K; }\n"
            "                                              ^");
}

TEST(BindErrors, UnknownFunction) {
  EXPECT_EQ(BindError("function (A) -> (C) { C = foo(A); }", kA3),
            "test.tile:1:27: error: unknown function 'foo'\n"
            "function (A) -> (C) { C = foo(A); }\n"
            "                          ^~~~~~");
}

TEST(BindErrors, WrongArity) {
  EXPECT_EQ(BindError("function (A) -> (C) { C = exp(A, A); }", kA3),
            "test.tile:1:27: error: 'exp' takes 1 argument but was given 2\n"
            "function (A) -> (C) { C = exp(A, A); }\n"
            "                          ^~~~~~~~~");
}

TEST(BindErrors, BadCastWidth) {
  EXPECT_EQ(BindError("function (A) -> (C) { C = as_int(A, 7); }", kA3),
            "test.tile:1:37: error: 'as_int' takes a bit width of 8, 16, 32, 64, not 7\n"
            "function (A) -> (C) { C = as_int(A, 7); }\n"
            "                                    ^");
}

TEST(BindErrors, IndexAxisOutOfRange) {
  EXPECT_EQ(BindError("function (A) -> (C) { C = index(A, 1); }", kA3),
            "test.tile:1:36: error: axis 1 of 'index' is out of range for f32[3] (rank 1)\n"
            "function (A) -> (C) { C = index(A, 1); }\n"
            "                                   ^");
}

TEST(BindErrors, ReshapeElementCountMismatch) {
  EXPECT_EQ(BindError("function (A) -> (C) { C = reshape(A, 2, 2); }", kA3),
            "test.tile:1:27: error: 'reshape' of f32[3] (3 elements) to [2, 2] (4 elements)\n"
            "function (A) -> (C) { C = reshape(A, 2, 2); }\n"
            "                          ^~~~~~~~~~~~~~~~");
}

TEST(BindErrors, GatherNeedsIntegerIndices) {
  EXPECT_EQ(BindError("function (A) -> (C) { C = gather(A, A); }", kA3),
            "test.tile:1:37: error: the index tensor of 'gather' must have an integer type, got f32[3]\n"
            "function (A) -> (C) { C = gather(A, A); }\n"
            "                                    ^");
}

TEST(BindErrors, PrngStateShape) {
  EXPECT_EQ(BindError("function (A) -> (C) { T = prng_step(A, 3); C = A; }", kA3),
            "test.tile:1:37: error: 'prng_step' needs a u32[3, 2048] state tensor, got f32[3]\n"
            "function (A) -> (C) { T = prng_step(A, 3); C = A; }\n"
            "                                    ^");
}

TEST(BindErrors, PrngResultUsedAsTensor) {
  EXPECT_EQ(BindError("function (S) -> (C) { T = prng_step(S, 3); C = T + 1; }",
                      {{"S", "u32[3, 2048]"}}),
            "test.tile:1:48: error: 'T' is the result of prng_step; use prng_value(T) or prng_state(T)\n"
            "function (S) -> (C) { T = prng_step(S, 3); C = T + 1; }\n"
            "                                               ^~~~~");
}

TEST(BindErrors, PrngStepNested) {
  EXPECT_EQ(BindError("function (S) -> (C) { C = prng_step(S, 3) * 2; }", {{"S", "u32[3, 2048]"}}),
            "test.tile:1:27: error: 'prng_step' must be assigned directly to a name: T = prng_step(S, ...)\n"
            "function (S) -> (C) { C = prng_step(S, 3) * 2; }\n"
            "                          ^~~~~~~~~~~~~~~");
}

TEST(BindErrors, PrngValueOfTensor) {
  EXPECT_EQ(BindError("function (A) -> (C) { C = prng_value(A); }", kA3),
            "test.tile:1:38: error: 'prng_value' needs the result of prng_step (T = prng_step(S, ...))\n"
            "function (A) -> (C) { C = prng_value(A); }\n"
            "                                     ^");
}

TEST(BindErrors, ModOnTensor) {
  EXPECT_EQ(BindError("function (A) -> (C) { C = mod(A, 2); }", kA3),
            "test.tile:1:27: error: 'mod' is evaluated at bind time and needs constant arguments; use '%' on tensors\n"
            "function (A) -> (C) { C = mod(A, 2); }\n"
            "                          ^~~~~~~~~");
}

TEST(BindErrors, AssertionFails) {
  EXPECT_EQ(BindError("function (A[N]) -> (C) {\n  Ok = assert_big_enough(N - 3);\n  C = A;\n}", kA3),
            "test.tile:2:8: error: assertion 'assert_big_enough' failed\n"
            "  Ok = assert_big_enough(N - 3);\n"
            "       ^~~~~~~~~~~~~~~~~~~~~~~~");
}

TEST(BindErrors, SoftmaxNeedsMatchingDims) {
  EXPECT_EQ(BindError("function (A[N]) -> (C) { C = builtin_softmax(A, N, N); }", kA3),
            "test.tile:1:30: error: 'builtin_softmax' needs a 2-D tensor of dimensions [3, 3], got f32[3]\n"
            "function (A[N]) -> (C) { C = builtin_softmax(A, N, N); }\n"
            "                             ^~~~~~~~~~~~~~~~~~~~~~~~");
}

// ---- contractions --------------------------------------------------------------

TEST(BindErrors, NonAffineIndex) {
  EXPECT_EQ(BindError("function (A[N]) -> (C) { C[i : N] = +(A[i * j]); }", kA3),
            "test.tile:1:41: error: index polynomial is not affine: both factors depend on index variables\n"
            "function (A[N]) -> (C) { C[i : N] = +(A[i * j]); }\n"
            "                                        ^~~~~");
}

TEST(BindErrors, WrongNumberOfIndices) {
  EXPECT_EQ(BindError("function (A[N]) -> (C) { C[i : N] = +(A[i, j]); }", kA3),
            "test.tile:1:39: error: 'A' has 1 dimension (f32[3]) but is indexed with 2\n"
            "function (A[N]) -> (C) { C[i : N] = +(A[i, j]); }\n"
            "                                      ^~~~~~~");
}

TEST(BindErrors, MissingSizes) {
  EXPECT_EQ(BindError("function (A[N]) -> (C) { C[i] = +(A[i]); }", kA3),
            "test.tile:1:26: error: output 'C' has 1 index but no sizes; write C[..., : N, ...]\n"
            "function (A[N]) -> (C) { C[i] = +(A[i]); }\n"
            "                         ^~~~");
}

TEST(BindErrors, NegativeSize) {
  EXPECT_EQ(BindError("function (A[N]) -> (C) { C[i : N - 4] = +(A[i]); }", kA3),
            "test.tile:1:32: error: size -1 of output 'C' is negative\n"
            "function (A[N]) -> (C) { C[i : N - 4] = +(A[i]); }\n"
            "                               ^~~~~");
}

TEST(BindErrors, SizeMustBeConstant) {
  EXPECT_EQ(BindError("function (A[N]) -> (C) { C[i : A] = +(A[i]); }", kA3),
            "test.tile:1:32: error: a size of output 'C' must be a constant, but 'A' is a tensor\n"
            "function (A[N]) -> (C) { C[i : A] = +(A[i]); }\n"
            "                               ^");
}

TEST(BindErrors, FloatConstraintBound) {
  EXPECT_EQ(BindError("function (A[N]) -> (C) { C[i : N] = +(A[i]), i < 1.5; }", kA3),
            "test.tile:1:50: error: a constraint bound must be an integer, got 1.5\n"
            "function (A[N]) -> (C) { C[i : N] = +(A[i]), i < 1.5; }\n"
            "                                                 ^~~");
}

TEST(BindErrors, ConstantUsedAsContractionInput) {
  EXPECT_EQ(BindError("function (A[N]) -> (C) { C[i : N] = +(N[i]); }", kA3),
            "test.tile:1:39: error: 'N' is the constant 3, not a tensor\n"
            "function (A[N]) -> (C) { C[i : N] = +(N[i]); }\n"
            "                                      ^~~~");
}

TEST(BindErrors, TensorInIndexPolynomial) {
  EXPECT_EQ(BindError("function (A[N]) -> (C) { C[i : N] = +(A[i + A]); }", kA3),
            "test.tile:1:45: error: tensor 'A' cannot be used in an index polynomial\n"
            "function (A[N]) -> (C) { C[i : N] = +(A[i + A]); }\n"
            "                                            ^");
}

TEST(BindErrors, IndexDivisionByZero) {
  EXPECT_EQ(BindError("function (A[N]) -> (C) { C[i : N] = +(A[i / 0]); }", kA3),
            "test.tile:1:43: error: division by zero in index polynomial\n"
            "function (A[N]) -> (C) { C[i : N] = +(A[i / 0]); }\n"
            "                                          ^");
}

TEST(BindErrors, UnboundedIndex) {
  EXPECT_EQ(BindError("function (A[N]) -> (C) { C[i : N] = +(A[i + j - k]); }", kA3),
            "test.tile:1:26: error: index 'j' is unbounded: no output, input or constraint limits its smallest value\n"
            "function (A[N]) -> (C) { C[i : N] = +(A[i + j - k]); }\n"
            "                         ^~~~~~~~~~~~~~~~~~~~~~~~~~");
}

TEST(BindErrors, DefaultShapeMismatch) {
  EXPECT_EQ(BindError("function (A[N], P[M]) -> (C) { C[i : N] = +(A[i]) default P; }",
                      {{"A", "f32[3]"}, {"P", "f32[4]"}}),
            "test.tile:1:59: error: default 'P' is f32[4] but output 'C' has dimensions [3]\n"
            "function (A[N], P[M]) -> (C) { C[i : N] = +(A[i]) default P; }\n"
            "                                                          ^");
}

TEST(BindErrors, OutputTooLarge) {
  EXPECT_EQ(BindError("function (A[N]) -> (C) { C[i, j : 4294967296, 4294967296] = +(A[i]); }", kA3),
            "test.tile:1:26: error: shape f32[4294967296, 4294967296] has more elements than fit in 64 bits\n"
            "function (A[N]) -> (C) { C[i, j : 4294967296, 4294967296] = +(A[i]); }\n"
            "                         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~");
}

TEST(BindErrors, RationalOverflowInIndex) {
  EXPECT_EQ(BindError("function (A[N]) -> (C) { C[i : N] = +(A[9223372036854775807 * i + i]); }", kA3),
            "test.tile:1:41: error: integer overflow in rational arithmetic (a value exceeds 64 bits)\n"
            "function (A[N]) -> (C) { C[i : N] = +(A[9223372036854775807 * i + i]); }\n"
            "                                        ^~~~~~~~~~~~~~~~~~~~~~~~~~~");
}

}  // namespace
}  // namespace tilec::lang
