// Vector math (vector_math.h): glibc libmvec's variants of the library builtins.
#include "hal/llvm/vector_math.h"

#include <fmt/format.h>

#include "hal/llvm/cpu_info.h"
#include "support/error.h"

namespace tilec::hal::cpu {
namespace {

using sem::CallFn;

// The builtins with a libmvec variant: every one is in glibc >= 2.35.
constexpr CallFn kLibraryFns[] = {CallFn::Exp,  CallFn::Log,  CallFn::Pow,  CallFn::Tanh,
                                  CallFn::Sin,  CallFn::Cos,  CallFn::Tan,  CallFn::Sinh,
                                  CallFn::Cosh, CallFn::Asin, CallFn::Acos, CallFn::Atan,
                                  CallFn::Erf};

struct Variant {
  VectorIsa isa;
  char letter;  // the vector ABI's ISA letter
  int f32_lanes, f64_lanes;
};

// Widest first. AVX ('c') without AVX2 gains little over SSE and is left out.
constexpr Variant kVariants[] = {{VectorIsa::Avx512, 'e', 16, 8},
                                 {VectorIsa::Avx2, 'd', 8, 4},
                                 {VectorIsa::Sse, 'b', 4, 2}};

std::string ScalarName(CallFn fn, bool is_double) {
  std::string name(LibmName(fn));
  return is_double ? name : name + "f";
}

}  // namespace

std::string_view Name(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::None: return "none";
    case VectorIsa::Sse: return "sse";
    case VectorIsa::Avx2: return "avx2";
    case VectorIsa::Avx512: return "avx512";
  }
  TILEC_UNREACHABLE("vector isa");
}

VectorIsa VectorIsaOf(const CpuInfo& cpu) {
  // The x86-64 vector function ABI only: glibc's AArch64 libmvec (2.38 and
  // later, `_ZGVnN4v_expf`) is not in every glibc an object may be linked
  // with (Debian 12's is 2.36), and LLVM 19 has no table of it, so AArch64
  // kernels take the inline polynomials and libm lane by lane.
  if (cpu.arch != CpuArch::X86_64) return VectorIsa::None;
  if (cpu.avx512f) return VectorIsa::Avx512;
  if (cpu.avx2) return VectorIsa::Avx2;
  return VectorIsa::Sse;  // SSE2 is part of x86-64
}

std::string_view LibmName(CallFn fn) {
  for (CallFn f : kLibraryFns)
    if (f == fn) return sem::Name(fn);
  return {};
}

bool HasMathIntrinsic(CallFn fn) {
  switch (fn) {
    case CallFn::Exp:
    case CallFn::Log:
    case CallFn::Pow:
    case CallFn::Sin:
    case CallFn::Cos: return true;
    default: return false;
  }
}

std::vector<VectorFunction> VectorFunctions(CallFn fn, sem::DataType dtype, VectorIsa isa) {
  std::vector<VectorFunction> out;
  bool is_double = dtype == sem::DataType::F64;
  if (LibmName(fn).empty() || (!is_double && dtype != sem::DataType::F32)) return out;
  std::string params(static_cast<size_t>(sem::Arity(fn)), 'v');
  for (const Variant& v : kVariants) {
    if (static_cast<int>(v.isa) > static_cast<int>(isa)) continue;
    int lanes = is_double ? v.f64_lanes : v.f32_lanes;
    out.push_back({fmt::format("_ZGV{}N{}{}_{}", v.letter, lanes, params,
                               ScalarName(fn, is_double)),
                   lanes});
  }
  return out;
}

std::vector<VectorMapping> VectorMappings(VectorIsa isa) {
  std::vector<VectorMapping> out;
  for (CallFn fn : kLibraryFns) {
    std::string params(static_cast<size_t>(sem::Arity(fn)), 'v');
    for (bool is_double : {false, true}) {
      std::vector<std::string> scalars = {ScalarName(fn, is_double)};
      if (HasMathIntrinsic(fn))
        scalars.push_back(fmt::format("llvm.{}.{}", LibmName(fn), is_double ? "f64" : "f32"));
      auto dtype = is_double ? sem::DataType::F64 : sem::DataType::F32;
      for (const VectorFunction& v : VectorFunctions(fn, dtype, isa))
        for (const std::string& s : scalars)
          out.push_back({s, v.symbol, v.lanes, fmt::format("_ZGV_LLVM_N{}{}", v.lanes, params)});
    }
  }
  return out;
}

const char* VectorLibraryName() { return "libmvec.so.1"; }

}  // namespace tilec::hal::cpu
