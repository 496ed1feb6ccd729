// Regression tests for the bugs the differential tester (tests/difftest,
// docs/testing.md) found: each case is its shrunk reproducer, widened a
// little, run on both backends against the reference evaluator.
#include "tests/unit/pipeline_check.h"

namespace tilec::testing {
namespace {

void CheckBothBackends(const Case& c, const std::string& what) {
  int ran = 0;
  for (const char* name : {"llvm", "opencl"}) {
    std::shared_ptr<hal::Device> device = DeviceFor(name);
    if (!device) continue;
    CheckCase(device, c, {}, what + " on " + name);
    ++ran;
  }
  if (ran == 0) GTEST_SKIP() << "no device";
}

lang::Shape Bool(std::vector<int64_t> dims) { return {lang::DataType::Bool, std::move(dims)}; }

// difftest seeds 48, 54, 88, 91: `/`, `*` and `+` on bool operands reached the
// sem tree as bool arithmetic, an internal error. Bool arithmetic is C's:
// computed as int, converted back by nonzero -> true.
TEST(DifftestRegressions, BoolArithmetic) {
  CheckBothBackends(Case("function (A[N, M], B[N, M]) -> (S, D, P, Q, R, G, L, H) {\n"
                         "  S = A + B; D = A - B; P = A * B; Q = A / B;\n"
                         "  R = A % B; G = -A; L = A << B; H = A >> B;\n"
                         "}",
                         {{"A", Bool({3, 7})}, {"B", Bool({3, 7})}}),
                    "bool arithmetic");
  // From comparisons, as difftest found it.
  CheckBothBackends(Case("function (A[N]) -> (T) { T = (A > 0.5) * (A >= A); }", {{"A", F32({5})}}),
                    "bool product of comparisons");
}

// difftest seed 14: on OpenCL devices without cl_khr_fp16 (f16 emulated in
// floats), a conversion to f16 inside a kernel did not round, so
// as_float(X, 16) of an f32 X kept all of X's bits. `Same` is exact: it is
// true only where X is representable in f16.
TEST(DifftestRegressions, ConversionToHalfRounds) {
  CheckBothBackends(Case("function (B[N], I[N]) -> (T, W, Same, H) {\n"
                         "  T = B + as_float(B, 16);\n"
                         "  W = as_float(as_float(B, 16), 32);\n"
                         "  Same = as_float(B, 16) == B;\n"
                         "  H = as_float(I * 1001, 16) == I * 1001;\n"
                         "}",
                         {{"B", F32({33})}, {"I", {lang::DataType::I32, {33}}}}),
                    "conversion to f16");
}

}  // namespace
}  // namespace tilec::testing
