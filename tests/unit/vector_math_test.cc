// Vector math on the llvm:cpu backend (hal/llvm/vector_math.h): the libmvec
// table, the IR of math calls on vectors (the variants, not a libm call per
// lane; narrower variants without AVX-512; libm per lane without libmvec),
// the loop vectorizer's use of the variants, and the accuracy of every
// library builtin in f32, f64 and f16: the largest error in ULPs over many
// random inputs of the function's useful range, through explicit vectors
// (all three variant widths) and through Tile programs against the reference
// evaluator, within the bounds documented in docs/cpu-forms.md.
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
// y[i ..]) on a vector of each of `widths` in turn. `declared`: each value
// is first declared in a variable of its own, all before the stores, as the
// vector form writes an unrolled row (a run of declarations, which the LLVM
// backend lowers with one test of all fast paths and batches same-width
// calls in one long vector: FunctionLowering::VersionedDeclares).
sem::Function MathKernel(CallFn fn, DataType d, std::vector<int> widths, int64_t n, bool declared = false) {
  Expr x = _Var("x", Ptr(d)), y = _Var("y", Ptr(d)), o = _Var("o", Ptr(d));
  Expr i = _Var("i", Type::Index());
  std::vector<sem::Stmt> body, stores;
  int step = 0;
  for (int width : widths) {
    Expr at = i + _Const(step);
    std::vector<Expr> args = {_Load(x, at, width), _Load(y, at, width)};
    args.resize(static_cast<size_t>(sem::Arity(fn)));
    Expr value = _Call(fn, args);
    if (declared) {
      std::string name = fmt::format("r{}", body.size());
      body.push_back(_Declare(value->type, name, value));
      value = _Var(name, value->type);
    }
    stores.push_back(_Store(o, at, value));
    step += width;
  }
  body.insert(body.end(), stores.begin(), stores.end());
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
  sem::Module atan28 = ModuleOf(MathKernel(CallFn::Atan, DataType::F32, {16, 8, 4}, 56));
  std::string ir = EmitLLVMText(atan28, avx512);
  EXPECT_EQ(Count(ir, "call <16 x float> @_ZGVeN16v_atanf("), 1u) << ir;
  EXPECT_EQ(Count(ir, "call <8 x float> @_ZGVdN8v_atanf("), 1u) << ir;
  EXPECT_EQ(Count(ir, "call <4 x float> @_ZGVbN4v_atanf("), 1u) << ir;
  EXPECT_EQ(Count(ir, "@atanf("), 0u) << ir;
  ir = EmitLLVMText(atan28, avx2);
  EXPECT_EQ(Count(ir, "call <8 x float> @_ZGVdN8v_atanf("), 3u) << ir;
  EXPECT_EQ(Count(ir, "call <4 x float> @_ZGVbN4v_atanf("), 1u) << ir;
  EXPECT_EQ(Count(ir, "_ZGVe"), 0u) << ir;
  // Without libmvec: libm lane by lane.
  ir = EmitLLVMText(atan28, none);
  EXPECT_EQ(Count(ir, "call float @atanf("), 28u) << ir;
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

// Without FMA instructions (x86-64-v2, EmitOptions::fma false) the inline
// math, written with fused multiply-adds, is not used: an exactly rounded
// llvm.fma would be a libm fmaf call per lane there. The functions call
// libmvec's SSE variants (4 lanes) or libm, and nothing is versioned.
TEST(VectorMath, WithoutFmaTheLibraryComputesTheMath) {
  EmitOptions sse;
  sse.vector_isa = VectorIsa::Sse;
  sse.fma = false;
  for (CallFn fn : {CallFn::Erf, CallFn::Exp, CallFn::Log, CallFn::Pow, CallFn::Tanh}) {
    std::string ir = EmitLLVMText(ModuleOf(MathKernel(fn, DataType::F32, {4, 1}, 8)), sse);
    EXPECT_EQ(Count(ir, "@llvm.fma."), 0u) << ir;
    EXPECT_EQ(Count(ir, ".special:"), 0u) << ir;  // no fast version
    sse.fma = true;
    EXPECT_NE(Count(EmitLLVMText(ModuleOf(MathKernel(fn, DataType::F32, {4, 1}, 8)), sse), "@llvm.fma."), 0u);
    sse.fma = false;
  }
  std::string ir = EmitLLVMText(ModuleOf(MathKernel(CallFn::Exp, DataType::F32, {4}, 8)), sse);
  EXPECT_EQ(Count(ir, "call <4 x float> @_ZGVbN4v_expf("), 1u) << ir;
}

// f32 erf, pow and exp are inline IR (inline_math.h): no libmvec call for
// erf; pow and exp call libmvec only in the block for vectors with a special
// lane. f64 keeps libmvec.
TEST(VectorMath, InlineErfPowAndExpOnF32) {
  EmitOptions avx512;
  avx512.vector_isa = VectorIsa::Avx512;
  std::string ir = EmitLLVMText(ModuleOf(MathKernel(CallFn::Erf, DataType::F32, {16, 1}, 34)), avx512);
  EXPECT_EQ(Count(ir, "erff"), 0u) << ir;
  // 16 lanes with AVX-512: one polynomial per interval, its 6 coefficients
  // looked up (vpermps), 5 Horner steps; elsewhere two polynomials, 6 + 12.
  EXPECT_EQ(Count(ir, "call <16 x float> @llvm.x86.avx512.permvar.sf.512("), 6u) << ir;
  EXPECT_EQ(Count(ir, "call <16 x float> @llvm.fma.v16f32("), 5u) << ir;
  EXPECT_EQ(Count(ir, "call float @llvm.fma.f32("), 18u) << ir;
  for (const std::string& text :
       {EmitLLVMText(ModuleOf(MathKernel(CallFn::Erf, DataType::F32, {16}, 32)), EmitOptions{}),
        EmitLLVMText(ModuleOf(MathKernel(CallFn::Erf, DataType::F32, {8}, 16)), avx512)}) {
    EXPECT_EQ(Count(text, "permvar"), 0u) << text;
    EXPECT_EQ(Count(text, "call <16 x float> @llvm.fma.v16f32(") + Count(text, "call <8 x float> @llvm.fma.v8f32("), 18u)
        << text;
  }
  ir = EmitLLVMText(ModuleOf(MathKernel(CallFn::Pow, DataType::F32, {16}, 32)), avx512);
  EXPECT_EQ(Count(ir, "call <16 x float> @_ZGVeN16vv_powf("), 1u) << ir;
  EXPECT_NE(ir.find("pow.special:"), std::string::npos) << ir;
  EXPECT_NE(ir.find("pow.wide.special:"), std::string::npos) << ir;  // the f64 tier's block
  // The f32 tier on whole 16-lane vectors with AVX-512: c, −log2 c (two
  // parts) and 2^(j/32) (two parts) looked up by vpermi2ps, no division; the
  // f64 tier divides.
  EXPECT_EQ(Count(ir, "call <16 x float> @llvm.x86.avx512.vpermi2var.ps.512("), 5u) << ir;
  EXPECT_EQ(Count(ir, "fdiv <16 x float>"), 0u) << ir;
  EXPECT_EQ(Count(ir, "fdiv <16 x double>"), 1u) << ir;
  // Without AVX-512 and on 8 lanes: the series, one division in each tier.
  EmitOptions avx2;
  avx2.vector_isa = VectorIsa::Avx2;
  for (const std::string& text :
       {EmitLLVMText(ModuleOf(MathKernel(CallFn::Pow, DataType::F32, {16}, 32)), avx2),
        EmitLLVMText(ModuleOf(MathKernel(CallFn::Pow, DataType::F32, {8}, 16)), avx512)}) {
    EXPECT_EQ(Count(text, "vpermi2var"), 0u) << text;
    EXPECT_EQ(Count(text, "fdiv <"), 2u) << text;
  }
  ir = EmitLLVMText(ModuleOf(MathKernel(CallFn::Exp, DataType::F32, {16}, 32)), avx512);
  EXPECT_EQ(Count(ir, "call <16 x float> @_ZGVeN16v_expf("), 1u) << ir;
  EXPECT_NE(ir.find("exp.special:"), std::string::npos) << ir;
  EXPECT_EQ(Count(ir, "call <16 x float> @llvm.fma.v16f32("), 8u) << ir;  // 2 Cody-Waite + 6 for 1 + r·E(r)
  ir = EmitLLVMText(ModuleOf(MathKernel(CallFn::Log, DataType::F32, {16}, 32)), avx512);
  EXPECT_EQ(Count(ir, "call <16 x float> @_ZGVeN16v_logf("), 1u) << ir;
  EXPECT_NE(ir.find("log.special:"), std::string::npos) << ir;
  // 16 lanes with AVX-512: c and −log c looked up (vpermps), no division;
  // 8 lanes: s = g/(2 + g).
  EXPECT_EQ(Count(ir, "call <16 x float> @llvm.x86.avx512.permvar.sf.512("), 2u) << ir;
  EXPECT_EQ(Count(ir, "fdiv"), 0u) << ir;
  ir = EmitLLVMText(ModuleOf(MathKernel(CallFn::Log, DataType::F32, {8}, 16)), avx512);
  EXPECT_EQ(Count(ir, "fdiv <8 x float>"), 1u) << ir;
  EXPECT_EQ(Count(ir, "permvar"), 0u) << ir;
  ir = EmitLLVMText(ModuleOf(MathKernel(CallFn::Erf, DataType::F64, {8}, 16)), avx512);
  EXPECT_EQ(Count(ir, "call <8 x double> @_ZGVeN8v_erf("), 1u) << ir;
  // tanh on vectors: no call and no branch, one division; one lane calls libm.
  ir = EmitLLVMText(ModuleOf(MathKernel(CallFn::Tanh, DataType::F32, {16, 1}, 34)), avx512);
  EXPECT_EQ(Count(ir, "_ZGVeN16v_tanhf"), 0u) << ir;
  EXPECT_EQ(Count(ir, "call float @tanhf("), 1u) << ir;
  EXPECT_EQ(Count(ir, "call <16 x float> @llvm.fma.v16f32("), 8u) << ir;  // u, 4 Horner steps, e, m, 2 + m
  EXPECT_EQ(Count(ir, "fdiv <16 x float>"), 1u) << ir;
  EXPECT_EQ(Count(ir, "special"), 0u) << ir;  // no block for special lanes
  ir = EmitLLVMText(ModuleOf(MathKernel(CallFn::Tanh, DataType::F64, {8}, 16)), avx512);
  EXPECT_EQ(Count(ir, "call <8 x double> @_ZGVeN8v_tanh("), 1u) << ir;
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
// scalar libm the evaluator uses (docs/cpu-forms.md lists the measured
// maxima: 1 to 4); half results are within 1 ULP of half. f32 erf and pow
// and exp are Tilec's own (inline_math.h): within 2 ULP of the correctly
// rounded value, so within 3 of glibc's scalar erff, powf and expf
// (themselves within 1).
constexpr int kMaxUlp = 4;
int MaxUlp(CallFn fn, DataType d) {
  bool inline_f32 = fn == CallFn::Erf || fn == CallFn::Pow || fn == CallFn::Exp || fn == CallFn::Log ||
                    fn == CallFn::Tanh;
  return d == DataType::F32 && inline_f32 ? 3 : kMaxUlp;
}

template <typename T>
std::vector<T> Uniform(double lo, double hi, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(dist(rng));
  return v;
}

// Puts edge k of `edges` into step k of MathKernel's input `x` (30 elements:
// vectors of 16, 8, 4 and 2 lanes), alone in its 16-lane vector, and into
// the 8-, 4- and 2-lane vectors of steps k + 1, k + 2 and k + 3 (the first
// `widths` of those four), at a lane that moves with k.
void PlaceEdges(std::vector<float>& x, const std::vector<float>& edges, int widths) {
  const size_t steps = edges.size();
  const int offset[] = {0, 16, 24, 28}, lanes[] = {16, 8, 4, 2};
  for (size_t k = 0; k < steps; ++k)
    for (int w = 0; w < widths; ++w)
      x[30 * ((k + w) % steps) + offset[w] + k % lanes[w]] = edges[k];
}

// Runs MathKernel on vectors of 16, 8, 4 and 2 lanes (every variant, a
// padded tail) on the device, or on `widths`.
template <typename T>
std::vector<T> RunKernel(CallFn fn, DataType d, const std::vector<T>& x, const std::vector<T>& y,
                         std::vector<int> widths = {16, 8, 4, 2}, bool declared = false) {
  sem::Module module;
  module.functions.push_back(MathKernel(fn, d, std::move(widths), static_cast<int64_t>(x.size()), declared));
  hal::LaunchTable launches;
  launches.kernels.push_back({module.functions[0].name, {1, 1, 1}, {1, 1, 1}, {}, 1});
  std::unique_ptr<Executable> exe = Device()->Build(module, launches);
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
    EXPECT_LE(worst, MaxUlp(a.fn, d)) << sem::Name(a.fn) << " " << lang::Name(d) << " at x = " << x[at]
                            << " y = " << y[at] << ": " << got[at] << " vs "
                            << testing::CallReference(a.fn, x[at], y[at], T(0));
    std::printf("%-5s %s: max %lld ulp\n", std::string(sem::Name(a.fn)).c_str(),
                std::string(lang::Name(d)).c_str(), static_cast<long long>(worst));
  }
}

TEST(VectorMath, AccuracyF32ExplicitVectors) { CheckExplicitVectors<float>(DataType::F32); }

// Inline f32 pow's two tiers (inline_math.h), each within 2 ULP of the
// correctly rounded power: bases in [0.5, 4] with |y| ≤ 16 keep
// |y·log2 m| ≤ 8, the f32 tier; bases in [1.2, 1.4] with y in [35, 240] give
// |y·log2 m| from 9 to 117, which the f32 tier's error would not keep within
// 2 ULP, so every vector must take the f64 tier; then both kinds mixed in
// the same vectors.
TEST(VectorMath, InlinePowTiersWithin2UlpOfTheRoundedPower) {
  const size_t n = 30 * 1024;
  auto check = [&](const std::vector<float>& x, const std::vector<float>& y, const char* what) {
    std::vector<float> got = RunKernel<float>(CallFn::Pow, DataType::F32, x, y);
    int64_t worst = 0;
    size_t at = 0;
    for (size_t i = 0; i < n; ++i) {
      auto want = static_cast<float>(std::pow(static_cast<double>(x[i]), static_cast<double>(y[i])));
      int64_t e = testing::UlpDistance(got[i], want);
      if (e > worst) worst = e, at = i;
    }
    EXPECT_LE(worst, 2) << what << ": pow(" << x[at] << ", " << y[at] << ") = " << got[at];
    std::printf("pow %s: max %lld ulp\n", what, static_cast<long long>(worst));
  };
  std::vector<float> x1 = Uniform<float>(0.5, 4, n, 11), y1 = Uniform<float>(-16, 16, n, 12);
  check(x1, y1, "f32 tier");
  std::vector<float> x2 = Uniform<float>(1.2, 1.4, n, 13), y2 = Uniform<float>(35, 240, n, 14);
  check(x2, y2, "f64 tier");
  for (size_t i = 0; i < n; i += 7) x1[i] = x2[i], y1[i] = y2[i];
  check(x1, y1, "mixed");
}

// The f32 tier's table form (whole 16-lane vectors with AVX-512, PowByTable)
// is within 1 ULP of the correctly rounded power up to |y·log2 m| = 16
// (hal/llvm/fit/fit_pow_table.py measures 0.71 ULP from the exact power): bases
// in [1.3, 1.45] with y in [±20, ±28] put every lane in (7.5, 15.1], bases
// across many binades with small y exercise k, and bases beside 1 with
// large y exercise the intervals where c = 1.
TEST(VectorMath, InlinePowTablesWithin1UlpToProductsOf16) {
  auto device = std::dynamic_pointer_cast<LlvmDevice>(Device());
  ASSERT_TRUE(device);
  if (device->EmitCode(ModuleOf(MathKernel(CallFn::Pow, DataType::F32, {16}, 16))).find("vpermi2var") ==
      std::string::npos) {
    GTEST_SKIP() << "the host has no AVX-512: pow takes the series";
  }
  const size_t n = 30 * 1024;
  std::vector<float> x1 = Uniform<float>(1.3, 1.45, n, 21), y1 = Uniform<float>(20, 28, n, 22);
  std::vector<float> x2 = Uniform<float>(-100, 100, n, 23), y2 = Uniform<float>(-1.2, 1.2, n, 24);
  std::vector<float> x3 = Uniform<float>(0.97, 1.03, n, 25), y3 = Uniform<float>(-400, 400, n, 26);
  for (size_t i = 0; i < n; ++i) {
    if (i % 2) y1[i] = -y1[i];
    x2[i] = std::exp2(x2[i]);
  }
  for (auto [x, y] : {std::pair{&x1, &y1}, std::pair{&x2, &y2}, std::pair{&x3, &y3}}) {
    // Only the 16-lane vectors of MathKernel's steps (16, 8, 4, 2 lanes) take the tables.
    std::vector<float> got = RunKernel<float>(CallFn::Pow, DataType::F32, *x, *y);
    int64_t worst = 0;
    size_t at = 0;
    for (size_t i = 0; i < n; ++i) {
      auto want = static_cast<float>(std::pow(static_cast<double>((*x)[i]), static_cast<double>((*y)[i])));
      int64_t e = testing::UlpDistance(got[i], want);
      if (e > worst) worst = e, at = i;
    }
    EXPECT_LE(worst, 1) << "pow(" << (*x)[at] << ", " << (*y)[at] << ") = " << got[at];
  }
}

// Inline f32 pow and erf at the edges: pow's special lanes (zeros, negative
// bases, infinities, NaN, results that overflow or are subnormal, subnormal
// bases) take the library path and must equal glibc's scalar powf exactly,
// whichever other lanes share their vector; erf's edges (±0, subnormals, the
// pieces' boundaries, ±∞, NaN) are within the accuracy bound.
TEST(VectorMath, InlinePowAndErfAtTheEdges) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  const float denorm = std::numeric_limits<float>::denorm_min();
  std::vector<std::pair<float, float>> special = {
      {0.0f, 2.0f},   {-0.0f, 3.0f},   {0.0f, -1.0f},   {-0.0f, -1.0f},  {-2.0f, 3.0f},
      {-2.0f, 0.5f},  {-2.0f, -2.0f},  {inf, 0.5f},     {inf, -0.5f},    {-inf, 3.0f},
      {nan, 0.0f},    {1.0f, nan},     {nan, 2.0f},     {2.0f, nan},     {0.5f, inf},
      {2.0f, inf},    {0.5f, -inf},    {1.0f, inf},     {-1.0f, inf},    {10.0f, 40.0f},
      {10.0f, -40.0f}, {2.0f, 127.5f}, {2.0f, -130.0f}, {2.0f, -149.0f}, {3.0f, -90.0f},
      {1e-40f, 1.0f}};
  std::vector<std::pair<float, float>> exact = {
      {2.0f, 3.0f}, {4.0f, 0.5f}, {1.0f, 123.0f}, {7.0f, 0.0f}, {0.25f, -2.0f}, {2.0f, -126.0f}};
  // MathKernel's step is 30 elements: vectors of 16, 8, 4 and 2. Special case
  // k alone in the 16-lane vector of step k; exact case k in the 8-lane one.
  const size_t steps = 32, n = 30 * steps;
  std::vector<float> x(n), y(n);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> base(0.5f, 2.0f), expo(-4.0f, 4.0f);
  for (size_t i = 0; i < n; ++i) x[i] = base(rng), y[i] = expo(rng);
  ASSERT_LE(special.size(), steps);
  for (size_t k = 0; k < special.size(); ++k) {
    size_t at = 30 * k + k % 16;
    x[at] = special[k].first, y[at] = special[k].second;
  }
  for (size_t k = 0; k < exact.size(); ++k) {
    size_t at = 30 * k + 16 + k % 8;
    x[at] = exact[k].first, y[at] = exact[k].second;
  }
  x[30 * 31 + 5] = denorm, y[30 * 31 + 5] = 0.5f;  // subnormal bases on the fast path
  x[30 * 31 + 7] = 3e-39f, y[30 * 31 + 7] = -0.25f;
  std::vector<float> got = RunKernel<float>(CallFn::Pow, DataType::F32, x, y);
  for (size_t i = 0; i < n; ++i) {
    float want = std::pow(x[i], y[i]);
    bool is_special = std::find(special.begin(), special.end(), std::make_pair(x[i], y[i])) != special.end() ||
                      std::find(exact.begin(), exact.end(), std::make_pair(x[i], y[i])) != exact.end();
    if (is_special) {
      EXPECT_EQ(testing::UlpDistance(got[i], want), 0)
          << "pow(" << x[i] << ", " << y[i] << ") = " << got[i] << ", powf: " << want;
      if (!std::isnan(want)) {
        EXPECT_EQ(std::signbit(got[i]), std::signbit(want)) << "pow(" << x[i] << ", " << y[i] << ")";
      }
    } else {
      EXPECT_LE(testing::UlpDistance(got[i], want), 3) << "pow(" << x[i] << ", " << y[i] << ")";
    }
  }

  std::vector<float> e = {0.0f,   -0.0f,  denorm, -denorm, 1e-30f, -1e-30f, 0.999999f, 1.0f,
                          -1.0f,  1.00001f, 3.9199f, 3.92f,  -3.9201f, 10.0f, -1e30f,   inf,
                          -inf,   nan,    0.5f,   -2.5f,   2.46f,   1e-3f,   -1e-20f,  5.0f,
                          // the table's intervals (16 lanes with AVX-512) at their ends
                          0.25f, 0.24999999f, -3.75f, 3.7499998f, 1.2500001f, -0.75f, 2.0f, 1.9999999f};
  const size_t edges = e.size();
  e.resize(n, 0.75f);
  for (size_t i = n; i-- > 0;) e[i] = e[i % edges];  // each edge in vectors of every width
  got = RunKernel<float>(CallFn::Erf, DataType::F32, e, e);
  for (size_t i = 0; i < n; ++i) {
    float want = std::erf(e[i]);
    EXPECT_LE(testing::UlpDistance(got[i], want), 3) << "erf(" << e[i] << ") = " << got[i] << ", erff: " << want;
    if (!std::isnan(want)) {
      EXPECT_EQ(std::signbit(got[i]), std::signbit(want)) << "erf(" << e[i] << ")";
    }
  }
}
// Inline f32 log at its edges, each alone among ordinary lanes in vectors of
// 16 and 8 lanes: 0, negatives, subnormals, ±inf and NaN take libmvec's logf
// for the whole vector and equal glibc's scalar logf exactly; 1, 2, powers
// of two and FLT_MIN/FLT_MAX are on the inline path, within 2 ULP.
TEST(VectorMath, InlineLogAtTheEdges) {
  const float inf = std::numeric_limits<float>::infinity();
  const float denorm = std::numeric_limits<float>::denorm_min();
  std::vector<float> special = {0.0f, -0.0f, -1.0f, denorm, 1e-40f, inf, -inf, std::nanf(""), -1e-30f};
  std::vector<float> ordinary = {1.0f, 2.0f, 0.5f, 1024.0f, std::numeric_limits<float>::min(),
                                 std::numeric_limits<float>::max(), 0.70710677f, 1.4142135f, 1.0000001f,
                                 0.99999994f,
                                 // the table's intervals (16 lanes with AVX-512) at their ends
                                 0.69921875f, 0.6992187f, 0.98046875f, 0.9804687f, 1.0234375f, 1.0234374f,
                                 1.3984375f, 1.3984374f, 2.796875f, 0.3496093f, 1e-30f, 3e38f};
  std::vector<float> all = special;
  all.insert(all.end(), ordinary.begin(), ordinary.end());
  const size_t steps = all.size(), n = 30 * steps;  // MathKernel's step: 16 + 8 + 4 + 2
  std::vector<float> x = Uniform<float>(0.01, 100, n, 21);
  PlaceEdges(x, all, 2);  // in 16- and 8-lane vectors
  std::vector<float> got = RunKernel<float>(CallFn::Log, DataType::F32, x, x);
  for (size_t i = 0; i < n; ++i) {
    float want = std::log(x[i]);
    bool is_special = std::find(special.begin(), special.end(), x[i]) != special.end() || std::isnan(x[i]);
    if (is_special) {
      EXPECT_EQ(testing::UlpDistance(got[i], want), 0) << "log(" << x[i] << ") = " << got[i] << ", logf: " << want;
    } else {
      EXPECT_LE(testing::UlpDistance(got[i], want), 2) << "log(" << x[i] << ") = " << got[i] << ", logf: " << want;
    }
  }
  EXPECT_EQ(got[30 * (special.size() + 0) + special.size() % 16], 0.0f);  // log(1) = +0 exactly
}

// Inline f32 exp at its edges, each alone among ordinary lanes in a vector of
// every width: the lanes past |x| < 87 (overflow to inf, subnormal results,
// underflow to 0, ±inf, NaN) take libmvec's expf for the whole vector; up to
// the bound, 2^n (n from −126 to 126) is added to the exponent bits. The last
// steps sweep [-87, -86] and [86, 87] (past the bound, a result whose
// exponent left the normal range there would be far off: 88 fails at -87.5).
TEST(VectorMath, InlineExpAtTheEdges) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> edges = {86.99f, -86.99f, 87.0f,  -87.0f, 88.72f, 88.73f, 89.0f,  -87.5f,
                              -100.0f, -103.9f, -104.0f, -150.0f, inf,   -inf,   std::nanf(""), 0.0f,
                              -0.0f,  1e-30f, -1e-30f, 0.5f,   -0.3465736f, 0.3465736f, 20.0f, -20.0f,
                              86.99f, -86.995f, -86.998f, 86.999f, -86.6f, -86.65f};
  const size_t steps = edges.size() + 8, n = 30 * steps;  // MathKernel's step: 16 + 8 + 4 + 2
  std::vector<float> x = Uniform<float>(-10, 10, n, 9);
  for (size_t i = 30 * edges.size(); i < n; ++i) {
    float f = static_cast<float>(i - 30 * edges.size()) / 240.0f;
    x[i] = i % 2 ? 86.0f + f : -87.0f + f;
  }
  edges.resize(steps, 1.0f);
  PlaceEdges(x, edges, 3);  // in 16-, 8- and 4-lane vectors
  std::vector<float> got = RunKernel<float>(CallFn::Exp, DataType::F32, x, x);
  for (size_t i = 0; i < n; ++i)
    EXPECT_LE(testing::UlpDistance(got[i], std::exp(x[i])), 3)
        << "exp(" << x[i] << ") = " << got[i] << ", expf: " << std::exp(x[i]);
}

// Inline f32 tanh at its edges, in vectors of every width: ±0 and subnormals
// (tanh x = x, exactly), where n = round(2|x|/ln 2) steps, the clamp at 9.1
// (tanh rounds to ±1 from 9.01 on), ±∞ and NaN, each within 2 ULP of glibc's
// tanhf (itself within 1 of the correctly rounded value), with its sign.
TEST(VectorMath, InlineTanhAtTheEdges) {
  const float inf = std::numeric_limits<float>::infinity();
  const float denorm = std::numeric_limits<float>::denorm_min();
  std::vector<float> edges = {0.0f,   -0.0f,   denorm,  -denorm, 1e-39f,  -3e-38f, 1e-30f,   -1e-7f,
                              1e-3f,  0.1733f, 0.1734f, -0.5199f, 0.52f,  0.5493f, -1.0f,    3.4f,
                              8.0f,   -8.9f,   9.0f,    9.01f,   -9.1f,   9.2f,    -20.0f,   1e30f,
                              inf,    -inf,    std::nanf(""), 5.0f};
  const size_t steps = edges.size(), n = 30 * steps;  // MathKernel's step: 16 + 8 + 4 + 2
  std::vector<float> x = Uniform<float>(-4, 4, n, 13);
  PlaceEdges(x, edges, 4);
  std::vector<float> got = RunKernel<float>(CallFn::Tanh, DataType::F32, x, x);
  for (size_t i = 0; i < n; ++i) {
    float want = std::tanh(x[i]);
    EXPECT_LE(testing::UlpDistance(got[i], want), 2) << "tanh(" << x[i] << ") = " << got[i] << ", tanhf: " << want;
    if (std::isnan(want)) continue;
    EXPECT_EQ(std::signbit(got[i]), std::signbit(want)) << "tanh(" << x[i] << ")";
    if (std::fabs(x[i]) < 1e-30f || std::fabs(x[i]) > 9.1f) {
      EXPECT_EQ(got[i], want) << "tanh(" << x[i] << ")";  // x itself, or ±1
    }
  }
}

// A run of declarations with exp, log or pow (the vector form's unrolled
// rows): their fast paths in one block, same-width calls in one long vector
// (four 16-lane pows: one <64 x float> computation, its tables looked up per
// 16 lanes), one test of all lanes, and the run again with the exact paths
// in the `exact` block: each call's fast value where its own lanes all held,
// else what lies beyond (pow's f64 tier, the library); nothing of the fast
// paths is computed twice.
TEST(VectorMath, RunsOfCallsShareOneTestOfTheirFastPaths) {
  EmitOptions avx512;
  avx512.vector_isa = VectorIsa::Avx512;
  std::string ir =
      EmitLLVMText(ModuleOf(MathKernel(CallFn::Pow, DataType::F32, {16, 16, 16, 16, 8}, 72, true)), avx512);
  EXPECT_EQ(Count(ir, "\nexact:"), 1u) << ir;
  EXPECT_EQ(Count(ir, "call <64 x float> @llvm.fma.v64f32("), 13u) << ir;  // the batch
  EXPECT_EQ(Count(ir, "fdiv <8 x float>"), 1u) << ir;  // the series, alone
  EXPECT_EQ(Count(ir, "fdiv <16 x float>"), 0u) << ir;
  // Five lookups for each 16 lanes of the batch, none in the exact paths.
  EXPECT_EQ(Count(ir, "call <16 x float> @llvm.x86.avx512.vpermi2var.ps.512("), 20u) << ir;
  EXPECT_EQ(Count(ir, "\npow.wide.special"), 5u) << ir;
  EXPECT_EQ(Count(ir, "fdiv <16 x double>"), 4u) << ir;  // the f64 tiers
  EXPECT_EQ(Count(ir, "fdiv <8 x double>"), 1u) << ir;
  EXPECT_EQ(Count(ir, "call <16 x float> @_ZGVeN16vv_powf("), 4u) << ir;
  // exp and log (short chains) share the test, not a long vector.
  ir = EmitLLVMText(ModuleOf(MathKernel(CallFn::Exp, DataType::F32, {16, 16}, 32, true)), avx512);
  EXPECT_EQ(Count(ir, "\nexact:"), 1u) << ir;
  EXPECT_EQ(Count(ir, "<32 x float>"), 0u) << ir;
  EXPECT_EQ(Count(ir, "call <16 x float> @llvm.rint.v16f32("), 2u) << ir;  // the fast paths only
  EXPECT_EQ(Count(ir, "call <16 x float> @_ZGVeN16v_expf("), 2u) << ir;
  // A call reading a variable of the batch starts a new one (still one test).
  sem::Function chain = MathKernel(CallFn::Pow, DataType::F32, {16}, 16, true);
  Type f16 = Type::Scalar(DataType::F32, 16);
  auto& loop = static_cast<const sem::For&>(*static_cast<const sem::Block&>(*chain.body).stmts[0]);
  std::vector<sem::Stmt> body = static_cast<const sem::Block&>(*loop.body).stmts;
  body.insert(body.begin() + 1, _Declare(f16, "r1", _Call(CallFn::Pow, {_Var("r0", f16), _Var("r0", f16)})));
  chain.body = _Block({_For("i", 0, 16, 16, _Block(std::move(body)))});
  ir = EmitLLVMText(ModuleOf(chain), avx512);
  EXPECT_EQ(Count(ir, "\nexact:"), 1u) << ir;
  EXPECT_EQ(Count(ir, "<32 x float>"), 0u) << ir;
  EXPECT_EQ(Count(ir, "call <16 x float> @llvm.x86.avx512.vpermi2var.ps.512("), 10u) << ir;  // 2 fast
  // One fast call alone is not versioned.
  ir = EmitLLVMText(ModuleOf(MathKernel(CallFn::Exp, DataType::F32, {16}, 16, true)), avx512);
  EXPECT_EQ(Count(ir, "exact"), 0u) << ir;
  EXPECT_EQ(Count(ir, "\nexp.special:"), 1u) << ir;
}

// The same runs on the device: one special lane (each of pow's, exp's and
// log's edges above) in one of the batched vectors or in the 8-lane one
// sends the whole run to the exact paths, whose results for those lanes
// equal glibc's scalar function; every other lane of the run stays within
// the bound. Ordinary steps (no special lane) take the fast paths.
TEST(VectorMath, RunsOfCallsAtTheEdges) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  const std::vector<int> widths = {16, 16, 16, 16, 8, 4, 2};
  const size_t step = 78;
  struct Edge {
    CallFn fn;
    std::vector<std::pair<float, float>> special;  // (x, y): exact results
    float lo, hi;                                  // ordinary x
    double (*want)(double, double);
  };
  const std::vector<Edge> edges = {
      {CallFn::Pow,
       {{0.0f, 2.0f}, {-2.0f, 3.0f}, {-2.0f, 0.5f}, {inf, 0.5f}, {nan, 2.0f}, {2.0f, nan}, {0.5f, inf},
        {10.0f, 40.0f}, {2.0f, -149.0f}, {1e-40f, 1.0f}, {1.3f, 200.0f}},
       0.5f, 2.0f, [](double x, double y) { return static_cast<double>(std::pow(static_cast<float>(x), static_cast<float>(y))); }},
      {CallFn::Exp, {{88.73f, 0}, {-104.0f, 0}, {inf, 0}, {-inf, 0}, {nan, 0}, {-150.0f, 0}},
       -10.0f, 10.0f, [](double x, double) { return static_cast<double>(std::exp(static_cast<float>(x))); }},
      {CallFn::Log, {{0.0f, 0}, {-1.0f, 0}, {1e-40f, 0}, {inf, 0}, {nan, 0}, {-inf, 0}},
       0.01f, 100.0f, [](double x, double) { return static_cast<double>(std::log(static_cast<float>(x))); }},
  };
  for (const Edge& e : edges) {
    // Step k holds special case k at lane 5 + 13·k of the step (in one of the
    // four batched vectors or the 8-lane one); the last steps have none.
    const size_t steps = e.special.size() + 3, n = step * steps;
    std::vector<float> x = Uniform<float>(e.lo, e.hi, n, 31), y = Uniform<float>(-4, 4, n, 32);
    std::vector<bool> special(n, false);
    for (size_t k = 0; k < e.special.size(); ++k) {
      size_t at = step * k + (5 + 13 * k) % 72;
      x[at] = e.special[k].first, y[at] = e.special[k].second, special[at] = true;
    }
    std::vector<float> got = RunKernel<float>(e.fn, DataType::F32, x, y, widths, /*declared=*/true);
    for (size_t i = 0; i < n; ++i) {
      auto want = static_cast<float>(e.want(x[i], y[i]));
      EXPECT_LE(testing::UlpDistance(got[i], want), special[i] ? 0 : 3)
          << sem::Name(e.fn) << "(" << x[i] << ", " << y[i] << ") = " << got[i] << ", libm: " << want
          << " at " << i;
    }
  }
}

// A declaration that shadows a variable of an enclosing scope ends the run:
// o = exp(exp(v)·0.01) + exp(v) written with an inner `v` (w = exp(v);
// v = exp(w·0.01)). Were both in one versioned run, its exact version
// (taken for the vectors with an x of 100: exp overflows) would compute w
// from the inner v.
TEST(VectorMath, RunsOfCallsEndAtAShadowedName) {
  const Type f16 = Type::Scalar(DataType::F32, 16);
  Expr x = _Var("x", Ptr(DataType::F32)), o = _Var("o", Ptr(DataType::F32));
  Expr i = _Var("i", Type::Index()), v = _Var("v", f16), w = _Var("w", f16);
  sem::Stmt inner = _Block({_Declare(f16, "w", _Call(CallFn::Exp, {v})),
                            _Declare(f16, "v", _Call(CallFn::Exp, {w * _Float(0.01, f16)})),
                            _Store(o, i, v + w)});
  const int64_t n = 64 * 16;
  sem::Function f;
  f.name = "k";
  f.params = {{"x", Ptr(DataType::F32), true}, {"y", Ptr(DataType::F32), true}, {"o", Ptr(DataType::F32), true}};
  f.body = _Block({_For("i", 0, n, 16, _Block({_Declare(f16, "v", _Load(x, i, 16)), inner}))});
  f.work_group_size = std::array<int64_t, 3>{1, 1, 1};
  sem::Module module;
  module.functions.push_back(f);
  hal::LaunchTable launches;
  launches.kernels.push_back({f.name, {1, 1, 1}, {1, 1, 1}, {}, 1});
  std::unique_ptr<Executable> exe = Device()->Build(module, launches);
  std::vector<float> in = Uniform<float>(-4, 4, n, 41);
  for (size_t at = 3; at < in.size(); at += 16 * 5) in[at] = 100.0f;
  size_t bytes = in.size() * sizeof(float);
  std::vector<std::unique_ptr<DeviceBuffer>> bufs;
  for (int b = 0; b < 3; ++b) {
    bufs.push_back(Device()->Allocate(bytes));
    Device()->Write(*bufs.back(), in.data(), bytes);
  }
  exe->Launch(0, {bufs[0].get(), bufs[1].get(), bufs[2].get()});
  std::vector<float> got(in.size());
  Device()->Read(*bufs[2], got.data(), bytes);
  for (size_t j = 0; j < in.size(); ++j) {
    float e = std::exp(in[j]), want = std::exp(e * 0.01f) + e;
    EXPECT_LE(testing::UlpDistance(got[j], want), 4) << "x = " << in[j] << ": " << got[j] << ", want " << want;
  }
}

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
      EXPECT_LE(worst, d == DataType::F16 ? 1 : MaxUlp(a.fn, d)) << name << " " << lang::Name(d) << "\n" << program.TargetCode();
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
