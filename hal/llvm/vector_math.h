// Vector math for the llvm:cpu backend: the float builtins that are library
// functions (exp, log, pow, tanh, sin, cos, tan, sinh, cosh, asin, acos, atan,
// erf)
// computed on whole vectors by glibc's libmvec, through the x86-64 vector
// function ABI (`_ZGV<isa>N<lanes><v per argument>_<libm name>`, e.g.
// `_ZGVeN16v_expf`: 16 floats in a zmm register).
//
// Two consumers, one table:
//   - the lowering (lower_expr.cc) calls a variant directly for a sem vector
//     (the vector form's explicit vectors), splitting a wider vector into the
//     widest variants and padding a short tail;
//   - the JIT (jit.cc) gives the same variants to LLVM's TargetLibraryInfo, so
//     the loop vectorizer turns a scalar loop's calls (the flat form's
//     elementwise kernels) into vector calls.
//
// Why libmvec: glibc ships it (>= 2.35 has every function above at every
// width: SSE 'b', AVX2 'd', AVX-512 'e'), so any glibc host has it with no
// extra package; LLVM 19's built-in LIBMVEC-X86 table knows only 5 of these
// functions and no AVX-512 variant, hence our own table. Accuracy: glibc
// documents at most 4 ULP for its vector functions; tests/unit/
// vector_math_test.cc measures every function against the scalar libm the
// reference evaluator uses and asserts the bounds in docs/cpu-forms.md
// ("Vector math").
// Sqrt, fabs, floor, ceil, round, fma and mad are vector instructions already
// and are not in the table. Half computes in float (the caller converts).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/sem/ir.h"

namespace tilec::hal::cpu {

struct CpuInfo;

// The widest libmvec variant set a CPU can run (vector ABI letters b, d, e).
enum class VectorIsa : uint8_t { None, Sse, Avx2, Avx512 };
std::string_view Name(VectorIsa isa);  // "none", "sse", "avx2", "avx512"

// What `cpu` can run (None off x86-64: AArch64 kernels call libm lane by
// lane where inline_math.h has no polynomial).
VectorIsa VectorIsaOf(const CpuInfo& cpu);

// The libm name of a builtin that is a library function ("exp", "tanh"), or
// empty for one that is an instruction (sqrt, fabs, …).
std::string_view LibmName(sem::CallFn fn);

// Whether the scalar lowering uses LLVM's intrinsic for `fn` (llvm.exp.*,
// which LLVM can constant-fold) rather than a libm call.
bool HasMathIntrinsic(sem::CallFn fn);

struct VectorFunction {
  std::string symbol;  // "_ZGVeN16v_expf"
  int lanes = 0;
};

// The libmvec variants of `fn` on `dtype` (F32 or F64; else none) that `isa`
// runs, widest first; empty when `fn` is not a library function.
std::vector<VectorFunction> VectorFunctions(sem::CallFn fn, sem::DataType dtype, VectorIsa isa);

// One entry of LLVM's vectorizable-function table.
struct VectorMapping {
  std::string scalar;       // "expf" or "llvm.exp.f32"
  std::string vector;       // "_ZGVeN16v_expf"
  int lanes = 0;
  std::string abi_prefix;   // "_ZGV_LLVM_N16v"
};

// Every (scalar name, variant) pair `isa` runs, for the loop vectorizer.
std::vector<VectorMapping> VectorMappings(VectorIsa isa);

// The shared library holding the variants ("libmvec.so.1").
const char* VectorLibraryName();

}  // namespace tilec::hal::cpu
