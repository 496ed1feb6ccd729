// The host JIT of the llvm:cpu backend: an ORC LLJIT for the host CPU (its
// name and features, e.g. AVX-512), the O3 pipeline of the new pass manager,
// libm / libgcc symbols resolved from the running process, and glibc's
// libmvec (vector_math.h) loaded when present: its variants resolve, and the
// loop vectorizer knows them.
//
// Each compiled module gets a JITDylib of its own, so kernels of different
// programs may share names; compiled code lives as long as the Jit. For a
// CPU of another architecture (CpuInfo::other_arch: AArch64 on an x86-64
// host) there is no JIT: Optimize and EmitObject work, Compile and Load are
// internal errors (the device refuses to build first).
// Thread safety: every member may be called from several threads.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hal/llvm/cpu_info.h"
#include "hal/llvm/vector_math.h"

namespace llvm {
class LLVMContext;
class Module;
namespace orc {
class JITDylib;
}  // namespace orc
}  // namespace llvm

namespace tilec::hal::cpu {

class Jit {
 public:
  // A JIT compiling for `cpu`: the host (its detected features), or a CPU
  // named by the user (NamedCpu; LLVM derives its features from the name).
  // DeviceError if LLVM has no target for it.
  explicit Jit(const CpuInfo& cpu);
  ~Jit();
  Jit(const Jit&) = delete;
  Jit& operator=(const Jit&) = delete;

  const std::string& target_triple() const;
  const std::string& data_layout() const;
  const std::string& cpu_name() const;  // LLVM's name of the CPU compiled for ("znver4")
  // The libmvec variants kernels may call: the host's, None without libmvec.
  VectorIsa vector_isa() const;
  // The CPU has fused multiply-add instructions (x86-64-v3 and later,
  // every AArch64 core): inline math may use llvm.fma.
  bool fma() const;

  // Runs the O3 pipeline on `module` (its triple and data layout set to the CPU's).
  void Optimize(llvm::Module& module);

  // Optimizes `module` (created in `context`), compiles it and returns the
  // addresses of `symbols`, in order. DeviceError if compiling or linking
  // fails (e.g. an unresolved symbol). With `object` not null, the compiled
  // object file is stored there (for the disk cache).
  std::vector<void*> Compile(std::unique_ptr<llvm::LLVMContext> context,
                             std::unique_ptr<llvm::Module> module,
                             const std::vector<std::string>& symbols, std::string* object = nullptr);

  // Optimizes `module` as Compile does and returns it as a relocatable,
  // position-independent ELF object for the CPU (its name and features),
  // for ahead-of-time use: linked into an application with no JIT.
  std::string EmitObject(llvm::Module& module);

  // Links an object file Compile produced before (in any process, on this
  // host CPU) and returns the addresses of `symbols`. DeviceError if the
  // object does not load or lacks a symbol.
  std::vector<void*> Load(const std::string& object, const std::vector<std::string>& symbols);

  // The CPU's features as LLVM sees them ("+avx2,+fma,…"; a named CPU's
  // are implied by its name: ""), for cache keys.
  const std::string& cpu_features() const;

 private:
  // The addresses of `symbols` in `dylib` (materializes it). Called with the mutex held.
  std::vector<void*> Lookup(llvm::orc::JITDylib& dylib, const std::vector<std::string>& symbols);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tilec::hal::cpu
