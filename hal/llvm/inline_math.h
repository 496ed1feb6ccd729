// Inline math for the llvm:cpu backend: f32 builtins that Tilec emits as
// LLVM IR instead of calling libmvec (vector_math.h), where libmvec's variant
// is what bounds a kernel: erf, pow, exp, log and tanh (below). A libmvec
// call clobbers every vector register and hides its chain from the
// scheduler; inline, the bench/suite cases softmax 1024x1024, sigmoid 8M
// (exp), gelu(x+bias) 1024x3072 (tanh), gelu erf 1024x3072 (erf),
// pow+sqrt bcast 2048x2048 (pow) and log(1+exp(x)) 8M (exp, log) gain.
//
//   - erf: two polynomials chosen per lane, no division (x·P(x²) below 1,
//     1 − C(|x| − m) up to 3.92, then ±1). Coefficients from
//     hal/llvm/fit/fit_erf.py, which also measures the f32 evaluation: at most
//     2 ULP against the correctly rounded erf (libmvec's erff: 4). On
//     16-lane AVX-512 vectors instead: one degree-5 polynomial per interval
//     of width 1/4, coefficients looked up by vpermps
//     (hal/llvm/fit/fit_erf_table.py, also 2 ULP): 5 FMAs and 6 permutes, which
//     run beside the multipliers, against 18 FMAs (bench/suite gelu erf
//     1024x3072).
//   - pow: two tiers. The first runs in f32 lanes: log2 x = k + log2 m
//     from the bits, log2 m = c0·s + s³·T(s²) with s = (m − 1)/(m + 1) and
//     c0·s carried as pairs of floats, y·log2 x split the same way, then
//     2^f by a fitted polynomial plus n in its exponent's bits; it holds for
//     x normal and finite, y finite and |y·log2 m| ≤ 8 with a normal result.
//     A vector with any other lane takes the second tier: log2 x in f64 (the
//     atanh series: every f32 is a normal f64), y·log2 x in f64, 2^z in f32,
//     for x > 0 finite, y finite and |y·log2 x| < 126; a vector with a lane
//     outside that takes the library call (`fallback`), which keeps every
//     special case of C's powf exact. Within 2 ULP both; the f32 tier is
//     what keeps bench/suite pow+sqrt bcast 2048x2048 fast, the f64 tier
//     alone runs far slower.
//
// FastMath below gives the fast paths alone, for a run of calls that tests
// their lanes once (docs/cpu-forms.md, "Inline f32 erf, pow, exp, log and tanh").
//
// Both take and return `float` or `<N x float>` values; half computes in
// float (the caller converts), f64 keeps libmvec.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <functional>
#include <string_view>

#include "compiler/sem/ir.h"

namespace tilec::hal::cpu {

// `cond ? taken() : otherwise`, with taken() emitted in a block of its own
// (NAME.special) that runs only when `cond` holds; `unlikely` weighs the
// branch for the fast path. Leaves `b` at the end of the joining block.
llvm::Value* IfThen(llvm::IRBuilder<>& b, llvm::Value* cond, const std::function<llvm::Value*()>& taken,
                    llvm::Value* otherwise, std::string_view name, bool unlikely = false);

// Whether `fn` on f32 values of `width` lanes has an inline form here.
bool HasInlineMath(sem::CallFn fn, int width);

// The fast path of exp, log or pow alone: its value and the lanes it holds
// for (`ok`, i1 lanes). InlineExp/InlineLog/InlinePow branch on `ok` to the
// exact paths; FunctionLowering::VersionedDeclares tests the `ok` of a whole
// run of statements once instead (one block without branches; pow's calls
// batched in one long vector, so that their long chains interleave).
struct FastMath {
  llvm::Value* value;
  llvm::Value* ok;
};
// Whether `fn` on f32 values of `width` lanes has such a fast path; on
// values of type `t` (f32, or f16 computed in f32; not f64).
bool HasFastPath(sem::CallFn fn, int width);
bool HasFastPath(sem::CallFn fn, const sem::Type& t);
// Whether some lane of `ok` (i1 lanes) is false, as one i1.
llvm::Value* AnyLaneOutside(llvm::IRBuilder<>& b, llvm::Value* ok);
FastMath ExpFast(llvm::IRBuilder<>& b, llvm::Value* x);
// `avx512_table`: `x` is a 16-lane vector and log may look up its
// intervals' constants by vpermps (no division; InlineLog).
FastMath LogFast(llvm::IRBuilder<>& b, llvm::Value* x, bool avx512_table);
// pow's f32 tier (see InlinePow for `avx512_tables`).
FastMath PowFast(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y, bool avx512_tables);

// erf(x) for a float or float vector `x`. `avx512_table`: `x` is a 16-lane
// vector and AVX-512's vpermps may look up the coefficients of one
// polynomial per interval of width 1/4 (ErfByTable) instead of evaluating
// two polynomials per lane; within 2 ULP either way.
llvm::Value* InlineErf(llvm::IRBuilder<>& b, llvm::Value* x, bool avx512_table);
// tanh(x) for float vectors: −m/(2 + m), m = expm1(−2|x|) by Cody–Waite and
// a fitted polynomial, the sign of x; within 2 ULP, every input (±0, ±∞,
// NaN and subnormals too), no branch.
llvm::Value* InlineTanh(llvm::IRBuilder<>& b, llvm::Value* x);

// exp(x) for float vectors: e^r by a fitted polynomial of r = x − n·ln 2
// (Cody–Waite), times 2^n by its exponent bits; within 2 ULP. Only for
// |x| < 87; a vector with any other lane (overflow, underflow to subnormals
// or 0, ±inf, NaN) takes `fallback()`, the library call.
llvm::Value* InlineExp(llvm::IRBuilder<>& b, llvm::Value* x, const std::function<llvm::Value*()>& fallback);

// log(x) for float vectors: ln(1 + g) = g − s·(g − s²·Q(s²)), s = g/(2 + g),
// plus k·ln 2 (x = 2^k·(1 + g)); within 1 ULP. Only for normal finite
// x > 0; a vector with any other lane takes `fallback()`.
// On 16-lane AVX-512 vectors (`avx512_table`) instead: x = 2^k·z, z in
// [0.699, 1.398), r = z·c − 1 with c and −log c looked up for the interval
// of z (16 of them, hal/llvm/fit/fit_log_table.py), log1p(r) by a polynomial; also
// within 1 ULP, no division.
llvm::Value* InlineLog(llvm::IRBuilder<>& b, llvm::Value* x, const std::function<llvm::Value*()>& fallback,
                       bool avx512_table);

// pow(x, y) for float vectors; `fallback()` emits the library call on the
// same arguments, run only when some lane is outside the fast path. Leaves
// `b` at the end of a new block. Two tiers: f32 lanes (`avx512_tables`:
// `x` is whole 16-lane vectors and the logarithm's and 2^z's constants are
// looked up by AVX-512's vpermi2ps, hal/llvm/fit/fit_pow_table.py, no division;
// otherwise an atanh series with one division), within 1 ULP while
// |y·log2 m| ≤ 16 or 8; then log2 x in f64; then the library.
llvm::Value* InlinePow(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y,
                       const std::function<llvm::Value*()>& fallback, bool avx512_tables);
// InlinePow past its f32 tier: the f64 tier, then `fallback()`.
llvm::Value* PowBeyondFast(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y,
                           const std::function<llvm::Value*()>& fallback);

}  // namespace tilec::hal::cpu
