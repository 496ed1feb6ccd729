// hal::Device on the host CPU through LLVM (id "llvm:cpu", alias "llvm"):
// sem -> LLVM IR (emit_llvm.h), O3 and ORC JIT (jit.h), launches split over
// a persistent thread pool (thread_pool.h).
//
// Buffers are host memory (64-byte aligned, zero-filled), or the caller's
// host memory (WrapHost). Build compiles all
// kernels of a program as one module; compiled modules are cached per device,
// keyed by the module's IR text, so rebuilding the same program is free. A
// launch of G work groups gives each of min(G, threads) threads one
// contiguous chunk of the linear group ids, the caller thread included, and
// returns its wall time.
#pragma once

#include <memory>
#include <string>

#include "hal/hal.h"
#include "hal/llvm/cpu_info.h"

namespace tilec::hal::cpu {

class LlvmDevice final : public hal::Device {
 public:
  static constexpr const char* kId = "llvm:cpu";

  // A device compiling for `cpu` (NamedCpu: an LLVM CPU name, "" or "host"
  // for the host). UserError for an unknown name, DeviceError if LLVM cannot
  // target it. Code for a CPU whose features the host lacks, or of another
  // architecture (an AArch64 CPU on an x86-64 host), is compiled (EmitCode,
  // EmitObject) but never run: Build is a UserError then.
  explicit LlvmDevice(const std::string& cpu = "");
  ~LlvmDevice() override;

  const std::string& id() const override;
  std::string Describe() const override;
  const compiler::HardwareModel& hardware_model() const override;
  std::string WhyCannotRun() const override;

  std::unique_ptr<DeviceBuffer> Allocate(size_t bytes) override;
  void Write(DeviceBuffer& buffer, const void* data, size_t bytes) override;
  void Read(const DeviceBuffer& buffer, void* data, size_t bytes) override;
  // The caller's memory itself (kernels run on it in place).
  std::unique_ptr<DeviceBuffer> WrapHost(void* data, size_t bytes) override;
  bool RewrapHost(DeviceBuffer& buffer, void* data, size_t bytes) override;

  // The LLVM IR of `module` before optimization (what Build compiles, with
  // each kernel's Function::work_group_size as its group size).
  std::string EmitCode(const sem::Module& module) override;
  // The same IR after the O3 pipeline.
  std::string EmitOptimizedIR(const sem::Module& module);

  // Looks for the module's object code in the disk cache (if set) under a
  // key of the IR text, the CPU's triple, name and features, LLVM's
  // version, the optimization level and Tilec's version; compiles and stores
  // it on a miss.
  std::unique_ptr<Executable> Build(const sem::Module& module, const LaunchTable& launches) override;
  void SetKernelCache(std::shared_ptr<const KernelCache> cache) override;
  KernelCacheStats kernel_cache_stats() const override;

  // The kernels of `launches` as a position-independent object file for the
  // device's CPU (the host's, or --cpu's), the same optimized code Build runs: kernel K's entry point is
  // the symbol GroupFunctionName(K) (a GroupFn, see emit_llvm.h). For
  // ahead-of-time output; nothing is cached.
  std::string EmitObject(const sem::Module& module, const LaunchTable& launches);

  const CpuInfo& cpu() const;          // the CPU code is compiled for
  const std::string& target_triple() const;  // LLVM's triple of that code
  int threads() const;                 // of the launch pool, the caller included
  // Launches that used more than the calling thread. A kernel with at most
  // 64Ki iteration points and 256 KiB of buffers runs on the caller alone.
  uint64_t parallel_launches() const;
  size_t cached_module_count() const;  // distinct modules compiled so far

 private:
  // UserError if the host cannot run the code it compiles (WhyCannotRun).
  void CheckRunnable() const;

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tilec::hal::cpu
