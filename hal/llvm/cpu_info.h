// The CPU the llvm device compiles for, as the tile search and code
// generator see it: its compiler::HardwareModel. The host's comes from
// LLVM's host detection, sysconf and /proc/cpuinfo; a CPU named by the user
// (`--cpu NAME`, TILEC_CPU, hal::DeviceOptions::cpu) from LLVM's knowledge
// of that CPU's features and a table of cache sizes (NamedCpu). A named CPU
// may be of another architecture than the host's (x86-64 or AArch64): its
// code is compiled and written (`tilec compile -o`), never run here.
//
// The CPU form: one work item per group (threads = 1), no programmer-managed
// local memory, tiles sized for the L1 data cache, vectors as wide as the
// widest SIMD unit (16 f32 lanes with AVX-512F, 8 with AVX2, else 4; 4 on
// AArch64: the forms plan NEON's 128-bit vectors, also on SVE cores).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/schedule/hardware_model.h"

namespace tilec::hal::cpu {

// The instruction set architectures a CPU may have.
enum class CpuArch : uint8_t { X86_64, AArch64, Other };
std::string_view Name(CpuArch arch);  // "x86_64", "aarch64", "other"

struct CpuInfo {
  std::string llvm_name;  // LLVM's CPU name ("znver4", "skylake-avx512", "x86-64-v3", "neoverse-n1")
  std::string model;      // /proc/cpuinfo "model name" (the host), an alias named ("apple-m1"), or empty
  std::string triple;     // the LLVM target triple code for it is compiled for
  CpuArch arch = CpuArch::Other;  // the triple's architecture
  bool named = false;     // named by the user, not detected
  int threads = 1;        // hardware threads that run kernels (the host's)
  bool avx512f = false, avx2 = false, fma = false;  // x86-64 (fma: also AArch64, where it is always there)
  bool neon = false, sve = false;                   // AArch64
  long l1_bytes = 0, l2_bytes = 0, l3_bytes = 0;  // per core L1d and L2, shared L3; 0 when unknown
  // Features code for this CPU may use that the host lacks ("avx512f", …),
  // empty when the host can run it (or the architecture is another).
  std::vector<std::string> missing_on_host;
  // The host's architecture is another (x86-64 code on an AArch64 host or the
  // reverse): the code is compiled and written, never run.
  bool other_arch = false;
};

// Registers LLVM's targets for the host's architecture, x86-64 and AArch64
// (their code generators and assembly printers; the host's assembly parser),
// once per process; every use of LLVM's target registry (NamedCpu, the JIT)
// calls it first.
void InitializeTargetsOnce();

// What the host reports (computed once).
const CpuInfo& HostCpu();

// The CPU LLVM calls `name` (its CPU names and the x86-64 levels:
// "znver3", "skylake-avx512", "x86-64-v3", "x86-64-v2"; AArch64 cores:
// "neoverse-n1", "cortex-a76", "apple-m1"; "host" or "" is HostCpu()). A
// bare name is looked up among the host architecture's CPUs first, then
// among the other's (x86-64 before AArch64 on an x86-64 host): "generic",
// which both have, is the host's. "ARCH:NAME" (ARCH "x86_64" or "aarch64")
// names the architecture: "aarch64:generic". Code for x86-64 is compiled
// for the host's triple (or x86_64-pc-linux-gnu), for AArch64 for
// aarch64-unknown-linux-gnu (or the host's). Its features are LLVM's for
// that name; its caches those of a table of known CPUs (per core L1d and
// L2, the L3 of a core complex), or 32 KB / 1 MB / 32 MB for other x86-64
// CPUs and 32 KB / 512 KB / 4 MB for other AArch64 ones; its threads the
// host's, which run the kernels. UserError listing the names LLVM knows for
// an unknown one.
CpuInfo NamedCpu(const std::string& name);

// The hardware model of `cpu` (passes HardwareModel::Validate).
compiler::HardwareModel CpuHardwareModel(const CpuInfo& cpu);

}  // namespace tilec::hal::cpu
