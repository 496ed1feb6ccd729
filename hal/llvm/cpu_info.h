// The CPU the llvm device compiles for, as the tile search and code
// generator see it: its compiler::HardwareModel. The host's comes from
// LLVM's host detection, sysconf and /proc/cpuinfo; a CPU named by the user
// (`--cpu NAME`, TILEC_CPU, hal::DeviceOptions::cpu) from LLVM's knowledge
// of that CPU's features and a table of cache sizes (NamedCpu).
//
// The CPU form: one work item per group (threads = 1), no programmer-managed
// local memory, tiles sized for the L1 data cache, vectors as wide as the
// widest SIMD unit (16 f32 lanes with AVX-512F, 8 with AVX2, else 4).
#pragma once

#include <string>
#include <vector>

#include "compiler/schedule/hardware_model.h"

namespace tilec::hal::cpu {

struct CpuInfo {
  std::string llvm_name;  // LLVM's CPU name ("znver4", "skylake-avx512", "x86-64-v3")
  std::string model;      // /proc/cpuinfo "model name" (the host), or empty
  std::string triple;     // the LLVM target triple code for it is compiled for
  bool named = false;     // named by the user, not detected
  int threads = 1;        // hardware threads that run kernels (the host's)
  bool avx512f = false, avx2 = false, fma = false;
  long l1_bytes = 0, l2_bytes = 0, l3_bytes = 0;  // per core L1d and L2, shared L3; 0 when unknown
  // Features code for this CPU may use that the host lacks ("avx512f", …),
  // empty when the host can run it.
  std::vector<std::string> missing_on_host;
};

// Registers LLVM's target for the host's architecture (its code generator
// and assembly printer and parser), once per process; every use of LLVM's
// target registry (NamedCpu, the JIT) calls it first.
void InitializeNativeTargetOnce();

// What the host reports (computed once).
const CpuInfo& HostCpu();

// The CPU LLVM calls `name` (its CPU names and the x86-64 levels:
// "znver3", "skylake-avx512", "x86-64-v3", "x86-64-v2"; "host" or "" is
// HostCpu()). Its features are LLVM's for that name; its caches those of a
// table of known CPUs (per core L1d and L2, the L3 of a core complex), or
// 32 KB / 1 MB / 32 MB for the others; its threads the host's, which run
// the kernels. UserError listing the names LLVM knows for an unknown one.
CpuInfo NamedCpu(const std::string& name);

// The hardware model of `cpu` (passes HardwareModel::Validate).
compiler::HardwareModel CpuHardwareModel(const CpuInfo& cpu);

}  // namespace tilec::hal::cpu
