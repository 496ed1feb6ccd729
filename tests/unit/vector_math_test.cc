// Vector math on the llvm:cpu backend (hal/llvm/vector_math.h): the libmvec
// table, the IR of math calls on vectors (the variants, not a libm call per
// lane; narrower variants without AVX-512; libm per lane without libmvec),
// the loop vectorizer's use of the variants, and the accuracy of every
// library builtin in f32, f64 and f16: the largest error in ULPs over many
// random inputs of the function's useful range, through explicit vectors
// (all three variant widths) and through Tile programs against the reference
// evaluator, within the bounds documented in docs/architecture.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "compiler/pipeline.h"
#include "compiler/sem/builder.h"
#include "hal/llvm/cpu_info.h"
#include "hal/llvm/emit_llvm.h"
#include "hal/llvm/llvm_device.h"
#include "hal/llvm/vector_math.h"
#include "tests/unit/pipeline_check.h"
#include "tests/unit/math_reference.h"

namespace tilec::hal::cpu {
namespace {

using namespace sem::builder;
using lang::DataType;
using sem::CallFn;
using sem::Expr;
using sem::Type;

std::shared_ptr<hal::Device> Device() {
  static std::shared_ptr<hal::Device> device = hal::OpenDevice("llvm");
  return device;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

Type Ptr(DataType d) { return Type::Pointer(Type::Scalar(d), sem::AddressSpace::Global); }

// For i = 0, step, … < n (step = the sum of `widths`): o[i ..] = fn(x[i ..],
// y[i ..]) on a vector of each of `widths` in turn.
sem::Function MathKernel(CallFn fn, DataType d, std::vector<int> widths, int64_t n) {
  Expr x = _Var("x", Ptr(d)), y = _Var("y", Ptr(d)), o = _Var("o", Ptr(d));
  Expr i = _Var("i", Type::Index());
  std::vector<sem::Stmt> body;
  int step = 0;
  for (int width : widths) {
    Expr at = i + _Const(step);
    std::vector<Expr> args = {_Load(x, at, width), _Load(y, at, width)};
    args.resize(static_cast<size_t>(sem::Arity(fn)));
    body.push_back(_Store(o, at, _Call(fn, args)));
    step += width;
  }
  sem::Function f;
  f.name = "k";
  f.params = {{"x", Ptr(d), true}, {"y", Ptr(d), true}, {"o", Ptr(d), true}};
  f.body = _Block({_For("i", 0, n, step, _Block(std::move(body)))});
  f.work_group_size = std::array<int64_t, 3>{1, 1, 1};
  return f;
}

sem::Module ModuleOf(sem::Function f) {
  sem::Module m;
  m.functions.push_back(std::move(f));
  return m;
}

TEST(VectorMath, TableFollowsTheVectorFunctionAbi) {
  auto exp = VectorFunctions(CallFn::Exp, DataType::F32, VectorIsa::Avx512);
  ASSERT_EQ(exp.size(), 3u);
  EXPECT_EQ(exp[0].symbol, "_ZGVeN16v_expf");
  EXPECT_EQ(exp[0].lanes, 16);
  EXPECT_EQ(exp[1].symbol, "_ZGVdN8v_expf");
  EXPECT_EQ(exp[2].symbol, "_ZGVbN4v_expf");
  auto pow = VectorFunctions(CallFn::Pow, DataType::F64, VectorIsa::Avx2);
  ASSERT_EQ(pow.size(), 2u);
  EXPECT_EQ(pow[0].symbol, "_ZGVdN4vv_pow");
  EXPECT_EQ(pow[1].symbol, "_ZGVbN2vv_pow");
  EXPECT_EQ(VectorFunctions(CallFn::Tanh, DataType::F32, VectorIsa::Sse).size(), 1u);
  EXPECT_TRUE(VectorFunctions(CallFn::Tanh, DataType::F32, VectorIsa::None).empty());
  EXPECT_TRUE(VectorFunctions(CallFn::Sqrt, DataType::F32, VectorIsa::Avx512).empty());
  EXPECT_TRUE(VectorFunctions(CallFn::Exp, DataType::F16, VectorIsa::Avx512).empty());
  // The loop vectorizer's table: the libm name and the intrinsic map to each width.
  auto mappings = VectorMappings(VectorIsa::Avx512);
  auto has = [&](const std::string& scalar, const std::string& vector) {
    return std::any_of(mappings.begin(), mappings.end(), [&](const VectorMapping& m) {
      return m.scalar == scalar && m.vector == vector;
    });
  };
  EXPECT_TRUE(has("tanhf", "_ZGVeN16v_tanhf"));
  EXPECT_TRUE(has("llvm.exp.f32", "_ZGVdN8v_expf"));
  EXPECT_TRUE(has("llvm.pow.f64", "_ZGVeN8vv_pow"));
  EXPECT_TRUE(VectorMappings(VectorIsa::None).empty());
}

TEST(VectorMath, VectorCallsUseTheWidestVariants) {
  EmitOptions avx512, avx2, none;
  avx512.vector_isa = VectorIsa::Avx512;
  avx2.vector_isa = VectorIsa::Avx2;
  // 16 + 8 + 4 lanes: one of each variant with AVX-512, 8 + 8, 8, 4 with AVX2.
  sem::Module tanh28 = ModuleOf(MathKernel(CallFn::Tanh, DataType::F32, {16, 8, 4}, 56));
  std::string ir = EmitLLVMText(tanh28, avx512);
  EXPECT_EQ(Count(ir, "call <16 x float> @_ZGVeN16v_tanhf("), 1u) << ir;
  EXPECT_EQ(Count(ir, "call <8 x float> @_ZGVdN8v_tanhf("), 1u) << ir;
  EXPECT_EQ(Count(ir, "call <4 x float> @_ZGVbN4v_tanhf("), 1u) << ir;
  EXPECT_EQ(Count(ir, "@tanhf("), 0u) << ir;
  ir = EmitLLVMText(tanh28, avx2);
  EXPECT_EQ(Count(ir, "call <8 x float> @_ZGVdN8v_tanhf("), 3u) << ir;
  EXPECT_EQ(Count(ir, "call <4 x float> @_ZGVbN4v_tanhf("), 1u) << ir;
  EXPECT_EQ(Count(ir, "_ZGVe"), 0u) << ir;
  // Without libmvec: libm lane by lane.
  ir = EmitLLVMText(tanh28, none);
  EXPECT_EQ(Count(ir, "call float @tanhf("), 28u) << ir;
  EXPECT_EQ(Count(ir, "_ZGV"), 0u) << ir;
  // A tail narrower than every variant is padded; pow passes two vectors.
  ir = EmitLLVMText(ModuleOf(MathKernel(CallFn::Pow, DataType::F64, {3}, 3)), avx512);
  EXPECT_EQ(Count(ir, "call <2 x double> @_ZGVbN2vv_pow(<2 x double>"), 2u) << ir;
  // Exp keeps LLVM's intrinsic on scalars (constant folding), vectors call libmvec.
  ir = EmitLLVMText(ModuleOf(MathKernel(CallFn::Exp, DataType::F32, {1}, 4)), avx512);
  EXPECT_EQ(Count(ir, "call float @llvm.exp.f32("), 1u) << ir;
  ir = EmitLLVMText(ModuleOf(MathKernel(CallFn::Exp, DataType::F32, {16}, 32)), avx512);
  EXPECT_EQ(Count(ir, "call <16 x float> @_ZGVeN16v_expf("), 1u) << ir;
  EXPECT_EQ(Count(ir, "llvm.exp"), 0u) << ir;
  // Half computes in float.
  ir = EmitLLVMText(ModuleOf(MathKernel(CallFn::Sin, DataType::F16, {16}, 16)), avx512);
  EXPECT_NE(ir.find("fpext <16 x half>"), std::string::npos) << ir;
  EXPECT_EQ(Count(ir, "call <16 x float> @_ZGVeN16v_sinf("), 1u) << ir;
}

// The host's JIT: the loop vectorizer widens a scalar loop's calls.
TEST(VectorMath, LoopVectorizerCallsTheVariants) {
  auto device = std::dynamic_pointer_cast<LlvmDevice>(Device());
  ASSERT_TRUE(device);
  for (CallFn fn : {CallFn::Exp, CallFn::Tanh}) {
    std::string ir =
        device->EmitOptimizedIR(ModuleOf(MathKernel(fn, DataType::F32, {1}, 4096)));
    std::string name = fmt::format("{}f(<", sem::Name(fn));  // e.g. _ZGVdN8v_expf(<8 x float>
    EXPECT_GE(Count(ir, name), 1u) << "no vector call of " << sem::Name(fn) << ":\n" << ir;
  }
}

// --- Accuracy ------------------------------------------------------------------

struct Accuracy {
  CallFn fn;
  double lo, hi;  // x uniform in [lo, hi] (pow: x in [lo, hi], y in [-8, 8])
};

// Useful ranges: past them the results overflow, underflow or lose meaning.
const Accuracy kAccuracy[] = {
    {CallFn::Exp, -80, 80},   {CallFn::Log, 1e-6, 1e6},  {CallFn::Pow, 1e-2, 1e2},
    {CallFn::Tanh, -10, 10},  {CallFn::Sin, -100, 100},  {CallFn::Cos, -100, 100},
    {CallFn::Tan, -1.5, 1.5}, {CallFn::Sinh, -80, 80},   {CallFn::Cosh, -80, 80},
    {CallFn::Asin, -1, 1},    {CallFn::Acos, -1, 1},     {CallFn::Atan, -100, 100},
    {CallFn::Erf, -5, 5},
};

// The bound glibc documents for libmvec, in ULPs of f32 or f64 against the
// scalar libm the evaluator uses (docs/architecture.md lists the measured
// maxima: 1 to 4); half results are within 1 ULP of half.
constexpr int kMaxUlp = 4;

template <typename T>
std::vector<T> Uniform(double lo, double hi, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(dist(rng));
  return v;
}

// Runs MathKernel on vectors of 16, 8, 4 and 2 lanes (every variant, a
// padded tail) on the device.
template <typename T>
std::vector<T> RunKernel(CallFn fn, DataType d, const std::vector<T>& x, const std::vector<T>& y) {
  compiler::CompiledProgram program;
  compiler::CompiledKernel k;
  k.code.function = MathKernel(fn, d, {16, 8, 4, 2}, static_cast<int64_t>(x.size()));
  k.code.global = k.code.local = {1, 1, 1};
  program.kernels.push_back(k);
  std::unique_ptr<Executable> exe = Device()->Build(program);
  size_t bytes = x.size() * sizeof(T);
  std::vector<std::unique_ptr<DeviceBuffer>> bufs;
  for (const std::vector<T>* host : {&x, &y, &x}) {
    bufs.push_back(Device()->Allocate(bytes));
    Device()->Write(*bufs.back(), host->data(), bytes);
  }
  exe->Launch(0, {bufs[0].get(), bufs[1].get(), bufs[2].get()});
  std::vector<T> out(x.size());
  Device()->Read(*bufs[2], out.data(), bytes);
  return out;
}

template <typename T>
void CheckExplicitVectors(DataType d) {
  const size_t n = 30 * 1024;
  for (const Accuracy& a : kAccuracy) {
    std::vector<T> x = Uniform<T>(a.lo, a.hi, n, 1), y = Uniform<T>(-8, 8, n, 2);
    std::vector<T> got = RunKernel<T>(a.fn, d, x, y);
    int64_t worst = 0;
    size_t at = 0;
    for (size_t i = 0; i < n; ++i) {
      int64_t e = testing::UlpDistance(got[i], testing::CallReference(a.fn, x[i], y[i], T(0)));
      if (e > worst) worst = e, at = i;
    }
    EXPECT_LE(worst, kMaxUlp) << sem::Name(a.fn) << " " << lang::Name(d) << " at x = " << x[at]
                            << " y = " << y[at] << ": " << got[at] << " vs "
                            << testing::CallReference(a.fn, x[at], y[at], T(0));
    std::printf("%-5s %s: max %lld ulp\n", std::string(sem::Name(a.fn)).c_str(),
                std::string(lang::Name(d)).c_str(), static_cast<long long>(worst));
  }
}

TEST(VectorMath, AccuracyF32ExplicitVectors) { CheckExplicitVectors<float>(DataType::F32); }
TEST(VectorMath, AccuracyF64ExplicitVectors) { CheckExplicitVectors<double>(DataType::F64); }

// Tile programs (the loop-vectorized flat form, 4099 elements: a tail) against
// the reference evaluator, in f32, f64 and f16 (half: at most 1 ULP of half).
TEST(VectorMath, AccuracyOfTileProgramsAgainstTheEvaluator) {
  const int64_t n = 4099;
  for (DataType d : {DataType::F32, DataType::F64, DataType::F16}) {
    for (const Accuracy& a : kAccuracy) {
      bool binary = sem::Arity(a.fn) == 2;
      std::string name(sem::Name(a.fn));
      std::string source =
          binary ? fmt::format("function (X[N], Z[N]) -> (Y) {{ Y = {}(X, Z); }}", name)
                 : fmt::format("function (X[N]) -> (Y) {{ Y = {}(X); }}", name);
      std::map<std::string, lang::Shape> shapes = {{"X", {d, {n}}}};
      if (binary) shapes["Z"] = {d, {n}};
      lang::Program bound = testing::BindCase(testing::Case(source, shapes));
      runtime::Program program = runtime::Program::Compile(bound, Device());
      std::map<std::string, lang::Tensor> inputs;
      std::vector<double> x = Uniform<double>(a.lo, a.hi, n, 3), z = Uniform<double>(-8, 8, n, 4);
      // Half: keep results finite (|x| <= 11 for exp, sinh, cosh).
      double limit = d == DataType::F16 ? 11 : 1e300;
      for (double& v : x) v = std::clamp(v, -limit, limit);
      lang::Tensor tx(bound.Tensor("X").shape), tz(bound.Tensor("X").shape);
      for (int64_t i = 0; i < n; ++i) {
        tx.SetDouble(i, x[static_cast<size_t>(i)]);
        tz.SetDouble(i, z[static_cast<size_t>(i)]);
      }
      inputs.emplace("X", tx);
      if (binary) inputs.emplace("Z", tz);
      lang::Tensor want = lang::Evaluate(bound, inputs).at("Y");
      lang::Tensor got = program.Run(inputs).at("Y");
      int64_t worst = 0;
      for (int64_t i = 0; i < n; ++i) {
        int64_t e = 0;
        if (d == DataType::F32) {
          e = testing::UlpDistance(got.as<float>()[i], want.as<float>()[i]);
        } else if (d == DataType::F64) {
          e = testing::UlpDistance(got.as<double>()[i], want.as<double>()[i]);
        } else {  // half bit patterns of one sign are ordered like their values
          int64_t g = got.as<uint16_t>()[i], w = want.as<uint16_t>()[i];
          e = (g ^ w) & 0x8000 ? (g & 0x7fff) + (w & 0x7fff) : std::abs(g - w);
        }
        worst = std::max(worst, e);
      }
      EXPECT_LE(worst, d == DataType::F16 ? 1 : kMaxUlp) << name << " " << lang::Name(d) << "\n" << program.TargetCode();
    }
  }
}

// Both backends (OpenCL keeps its own builtins) on chains of functions at
// sizes that divide no vector width, in the flat and the vector form.
TEST(VectorMath, ChainsMatchTheEvaluatorOnBothBackends) {
  const std::vector<testing::Case> cases = {
      {"function (X[N, M], B[M]) -> (Y) { U = X + B; "
       "Y = 0.5 * U * (1.0 + tanh(0.7978845608 * (U + 0.044715 * U * U * U))); }",
       {{"X", testing::F32({37, 101})}, {"B", testing::F32({101})}}},
      {"function (X[N]) -> (Y) { Y = 1.0 / (1.0 + exp(-X)) + log(1.0 + X * X) + "
       "sqrt(abs(X)) + pow(abs(X) + 0.5, X) + sin(X) * cos(X) + atan(X) + erf(X); }",
       {{"X", testing::F64({1027})}}},
      {"function (A[M, K], B[K, N], Bias[N]) -> (Y) { C[m, n : M, N] = +(A[m, k] * B[k, n]); "
       "Y = tanh(C + Bias) + sigmoid(C); }",
       {{"A", testing::F32({64, 29})}, {"B", testing::F32({29, 48})}, {"Bias", testing::F32({48})}}},
  };
  int backends = 0;
  for (const char* prefix : {"llvm", "opencl"}) {
    std::shared_ptr<hal::Device> device = testing::DeviceFor(prefix);
    if (!device) continue;
    ++backends;
    for (size_t i = 0; i < cases.size(); ++i)
      testing::CheckCase(device, cases[i], {}, fmt::format("{} case {}", prefix, i));
  }
  EXPECT_GE(backends, 1);
}

}  // namespace
}  // namespace tilec::hal::cpu
