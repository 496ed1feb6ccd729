// Lowers a sem module to LLVM IR for the host CPU (the llvm:cpu backend).
//
// A CPU is not a GPU: a work group does not become hundreds of threads.
// Each kernel `K` becomes two functions:
//
//   internal void @K(<params>, i64 first, i64 last, i64 ng0, i64 ng1, i64 ng2)
//     runs the work groups with linear ids in [first, last) of a launch of
//     ng0 x ng1 x ng2 groups (linear id = g0 + ng0 * (g1 + ng1 * g2)); inside
//     a group its work items run as loops over the local ids (dim 0
//     fastest), the kernel body inlined in the loops. Pointer parameters
//     carry `noalias` when the sem Param says so.
//   void @K_groups(ptr args, i64 first, i64 last)       (GroupFunctionName)
//     the entry point the runtime calls (GroupFn); `args` is described at
//     GroupFn.
//
// Kernels with barriers and more than one work item per group (the GPU
// form with __local staging) are split at their barriers: every maximal
// barrier-free run of statements executes for all work items in turn before
// the next run starts. Variables declared directly in a run live on after it,
// so they are kept once per work item (arrays of the group size, indexed by
// the linear local id); control flow around barriers is uniform (sem::Verify
// checks it), so its conditions and loop bounds are evaluated once, as work
// item 0 sees them. A Return ends the work item: it is flagged and skips the
// remaining runs. __local arrays are one alloca shared by the group's items.
//
// Values: the index type is i32 or i64 (Function::index_type); DataTypes map
// to i1 (bool), i8..i64, half, float, double; vectors to fixed vectors; bool
// values are i1 (masks <N x i1>) but one byte (0/1) in memory. Every address
// space is LLVM's 0. A vector Load/Store of N elements from a scalar-element
// pointer is one unaligned access (alignment = element size). Integer
// arithmetic wraps in its type (index arithmetic carries nsw: the generator
// never overflows it); / and % are sdiv/udiv/srem/urem; float min/max are
// llvm.minnum/maxnum; Cond branches (lazy) and Select selects (eager); a
// scalar && or || whose right side may trap (a load, a division) is lazy
// too, like C. Math calls use LLVM intrinsics where they exist (exp, log,
// sqrt, pow, sin, cos, fabs, floor, ceil, round, fma, fmuladd for mad) and
// libm otherwise (tanh, tan, sinh, cosh, asin, acos, atan); the library ones
// (vector_math.h) on a vector call libmvec's vector variants (split into the
// widest ones EmitOptions::vector_isa allows, a short tail padded), or libm
// lane by lane when vector_isa is None; half computes in float.
//
// Pre: the module passes sem::Verify (checked: InternalError). The result
// passes llvm::verifyModule (checked: InternalError).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "compiler/sem/ir.h"
#include "hal/llvm/vector_math.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace tilec::hal::cpu {

struct EmitOptions {
  // Work-group size of a kernel (by name); else Function::work_group_size;
  // else 1 x 1 x 1.
  std::map<std::string, std::array<int64_t, 3>> local_sizes;
  // Set on the module when not empty (the JIT's host target).
  std::string target_triple;
  std::string data_layout;
  // Which libmvec variants math builtins on vectors may call (the host's
  // when the library loaded, Jit::vector_isa); None: libm lane by lane.
  VectorIsa vector_isa = VectorIsa::None;
  // The CPU has FMA instructions (Jit::fma). Without them the inline math
  // (inline_math.h), written with fused multiply-adds, is not used: an
  // exactly rounded llvm.fma would be a libm call per lane; math builtins
  // call the library (libmvec's variants, or libm lane by lane).
  bool fma = true;
};

// The entry point of kernel `kernel`: "<kernel>_groups".
std::string GroupFunctionName(const std::string& kernel);

// The signature of a group function. args[i], for each sem parameter i, is
// the buffer's address for a pointer parameter, or the address of the value
// for a value parameter (bool: one byte 0/1, half: IEEE binary16);
// args[params] is the address of an int64_t[3]: the number of groups per
// dimension. Runs the groups with linear ids in [first_group, last_group).
using GroupFn = void (*)(void** args, int64_t first_group, int64_t last_group);

// The LLVM module of `module`, created in `context`.
std::unique_ptr<llvm::Module> EmitLLVM(const sem::Module& module, llvm::LLVMContext& context,
                                       const EmitOptions& options = {});

// The textual IR of EmitLLVM (in a context of its own).
std::string EmitLLVMText(const sem::Module& module, const EmitOptions& options = {});

// The textual IR of an LLVM module.
std::string PrintModule(const llvm::Module& module);

// What identifies an LLVM module's code, as a cache key: its bitcode, which
// holds everything the text does and is written several times faster
// (resnet50's 75 kernels: the text printer's column tracking took a sixth
// of a warm start).
std::string ModuleKey(const llvm::Module& module);

// What identifies the code EmitLLVM makes of `module` with `options`,
// without making it: the module's sem text, the options, and the GNU build
// id of the binary this emitter is linked into (EmitterBuildId), which
// changes with any change to the emitter. A warm start then finds its
// kernels in the disk cache without lowering them to LLVM IR. Empty where
// the binary has no build id: callers key by ModuleKey instead.
std::string SemModuleKey(const sem::Module& module, const EmitOptions& options);

// The GNU build id (NT_GNU_BUILD_ID, hex) of the ELF object holding this
// function's code; empty when it has none (a linker without --build-id,
// or not ELF).
const std::string& EmitterBuildId();

}  // namespace tilec::hal::cpu
