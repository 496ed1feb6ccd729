// The host CPU as the tile search and code generator see it: its
// compiler::HardwareModel, from LLVM's host detection, sysconf and
// /proc/cpuinfo.
//
// The CPU form: one work item per group (threads = 1), no programmer-managed
// local memory, tiles sized for the L1 data cache, vectors as wide as the
// widest SIMD unit (16 f32 lanes with AVX-512F, 8 with AVX2, else 4).
#pragma once

#include <string>

#include "compiler/hardware_model.h"

namespace tilec::hal::cpu {

struct CpuInfo {
  std::string llvm_name;  // LLVM's CPU name ("znver4", "skylake-avx512")
  std::string model;      // /proc/cpuinfo "model name", or empty
  int threads = 1;        // hardware threads (std::thread::hardware_concurrency)
  bool avx512f = false, avx2 = false, fma = false;
  long l1_bytes = 0, l2_bytes = 0, l3_bytes = 0;  // sysconf; 0 when unknown
};

// What the host reports (computed once).
const CpuInfo& HostCpu();

// The hardware model of `cpu` (passes HardwareModel::Validate).
compiler::HardwareModel CpuHardwareModel(const CpuInfo& cpu);

}  // namespace tilec::hal::cpu
