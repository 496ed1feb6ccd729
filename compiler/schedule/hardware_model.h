// HardwareModel: what the tile search and code generator know about a device.
//
// Filled by a backend from its device (hal/opencl from clGetDeviceInfo, hal/llvm
// from the host CPU) or set by hand (tests, the seed's example hardware). The
// cost model (schedule/cost_model.h) is a pure function of a flat contraction, a tile
// and this struct. Field meanings follow PlaidML's HardwareSettings plus
// what a CPU target needs.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace tilec::compiler {

struct HardwareModel {
  std::string name = "generic";      // for printing: device or preset name

  // --- Work decomposition ---------------------------------------------------
  int64_t threads = 256;             // work-group size the generator aims for (power of two)
  int64_t max_work_group_size = 1024;  // device limit
  std::array<int64_t, 3> max_work_item_sizes = {1024, 1024, 1024};
  int64_t compute_units = 1;

  // --- Memory ----------------------------------------------------------------
  int64_t mem_width = 64;            // bytes of the minimum efficient global load (cache line)
  int64_t max_mem = 16384;           // bytes of local (shared) memory per work group
  int64_t max_regs = 16384;          // bytes of per-work-group output accumulators
  bool local_memory_managed = true;  // programmer-managed local memory (GPU); false: LRU caches (CPU)
  int64_t l1_bytes = 32 * 1024;      // per core data cache (CPU targets)
  int64_t l2_bytes = 1024 * 1024;    // per core L2 (CPU targets)
  int64_t l3_bytes = 0;              // last-level cache shared by the cores (CPU targets; 0: unknown)

  // --- Throughput goals (the roofline and occupancy the score aims for) -----
  int64_t goal_groups = 16;          // work groups in flight for full occupancy
  double goal_flops_per_byte = 50;   // roofline knee: flops per global byte at which compute-bound
  // Whole-device figures for estimated times (EstimateTime, schedule/cost_model.h),
  // which compare kernels in different layouts with the relayouts between
  // them (passes/choose_layouts.h): only their ratio matters to that choice.
  double peak_gflops = 100;          // arithmetic peak, all compute units
  double mem_bandwidth_gbs = 20;     // streaming bandwidth to the memory tensors live in

  // --- Vectors ---------------------------------------------------------------
  int64_t vec_size = 1;              // preferred vector width in elements (f32)
  int64_t vector_registers = 16;     // architectural SIMD registers (CPU targets)
  // Mask registers that predicate a vector load or store in one instruction
  // (AVX-512's k0-k7). Without them (AVX2, NEON) a masked tail is a blend
  // or lanes one by one: descriptive, the forms do not read it yet.
  bool mask_registers = false;
  // The arithmetic rate of vectors of vec_size / 2 lanes, as a fraction of
  // the full-width rate: 0.5 where the FMA units are vec_size lanes wide,
  // 1 where the core runs its widest vectors as two halves (Zen 4's
  // AVX-512), so nChw8c's 8-lane vectors lose nothing there.
  double half_vector_rate = 0.5;
  bool has_fma = false;
  bool has_fp16 = false;
  bool has_fp64 = false;

  // Throws UserError naming the field if a value is out of its valid range
  // (threads a power of two in [1, 1024], mem_width a power of two in
  // [8, 4096], max_mem >= 1024, …).
  void Validate() const;
};

// The hardware of the seed's example (PlaidML's GPU of the article): 256
// threads, 20 goal groups, 20 flops/byte, … — reproduces the seed's log.
HardwareModel SeedExampleHardware();

// "key=value" lines, one per field, stable order (used by `tilec devices`).
std::string ToString(const HardwareModel& hw);

}  // namespace tilec::compiler
