#include "compiler/schedule/hardware_model.h"

#include <fmt/format.h>

#include <cmath>

#include "support/error.h"

namespace tilec::compiler {
namespace {

bool IsPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

}  // namespace

// The ranges follow PlaidML's settings::Validate where it
// has one; the rest reject values no real device has and that would make the
// cost model divide by zero or search an empty space.
void HardwareModel::Validate() const {
  if (name.empty()) TILEC_USER_ERROR("hardware model: name must not be empty");
  if (!IsPowerOfTwo(threads) || threads > 1024) {
    TILEC_USER_ERROR("hardware model '{}': threads = {} must be a power of two in [1, 1024]", name,
                     threads);
  }
  if (max_work_group_size < 1) {
    TILEC_USER_ERROR("hardware model '{}': max_work_group_size = {} must be >= 1", name,
                     max_work_group_size);
  }
  if (threads > max_work_group_size) {
    TILEC_USER_ERROR("hardware model '{}': threads = {} exceeds max_work_group_size = {}", name,
                     threads, max_work_group_size);
  }
  for (size_t d = 0; d < max_work_item_sizes.size(); ++d) {
    if (max_work_item_sizes[d] < 1) {
      TILEC_USER_ERROR("hardware model '{}': max_work_item_sizes[{}] = {} must be >= 1", name, d,
                       max_work_item_sizes[d]);
    }
  }
  // Work groups are laid out as (threads, 1, 1), so dimension 0 must hold them.
  if (threads > max_work_item_sizes[0]) {
    TILEC_USER_ERROR("hardware model '{}': threads = {} exceeds max_work_item_sizes[0] = {}", name,
                     threads, max_work_item_sizes[0]);
  }
  if (compute_units < 1) {
    TILEC_USER_ERROR("hardware model '{}': compute_units = {} must be >= 1", name, compute_units);
  }
  if (!IsPowerOfTwo(mem_width) || mem_width < 8 || mem_width > 4096) {
    TILEC_USER_ERROR("hardware model '{}': mem_width = {} must be a power of two in [8, 4096]",
                     name, mem_width);
  }
  if (max_mem < 1024) {
    TILEC_USER_ERROR("hardware model '{}': max_mem = {} must be >= 1024 bytes", name, max_mem);
  }
  // At least one 4-byte accumulator per work group, or no tile fits.
  if (max_regs < 4) {
    TILEC_USER_ERROR("hardware model '{}': max_regs = {} must be >= 4 bytes", name, max_regs);
  }
  if (l1_bytes < 1024) {
    TILEC_USER_ERROR("hardware model '{}': l1_bytes = {} must be >= 1024", name, l1_bytes);
  }
  if (l2_bytes < l1_bytes) {
    TILEC_USER_ERROR("hardware model '{}': l2_bytes = {} must be >= l1_bytes = {}", name, l2_bytes,
                     l1_bytes);
  }
  if (l3_bytes < 0) {
    TILEC_USER_ERROR("hardware model '{}': l3_bytes = {} must be >= 0 (0: unknown)", name, l3_bytes);
  }
  if (goal_groups < 1) {
    TILEC_USER_ERROR("hardware model '{}': goal_groups = {} must be >= 1", name, goal_groups);
  }
  if (!std::isfinite(goal_flops_per_byte) || goal_flops_per_byte <= 0) {
    TILEC_USER_ERROR("hardware model '{}': goal_flops_per_byte = {} must be a finite number > 0",
                     name, goal_flops_per_byte);
  }
  if (!std::isfinite(peak_gflops) || peak_gflops <= 0) {
    TILEC_USER_ERROR("hardware model '{}': peak_gflops = {} must be a finite number > 0", name, peak_gflops);
  }
  if (!std::isfinite(mem_bandwidth_gbs) || mem_bandwidth_gbs <= 0) {
    TILEC_USER_ERROR("hardware model '{}': mem_bandwidth_gbs = {} must be a finite number > 0", name,
                     mem_bandwidth_gbs);
  }
  if (!std::isfinite(half_vector_rate) || half_vector_rate <= 0 || half_vector_rate > 1) {
    TILEC_USER_ERROR("hardware model '{}': half_vector_rate = {} must be in (0, 1]", name, half_vector_rate);
  }
  // OpenCL's vector widths that are powers of two (3 is padded to 4 anyway).
  if (!IsPowerOfTwo(vec_size) || vec_size > 16) {
    TILEC_USER_ERROR("hardware model '{}': vec_size = {} must be one of 1, 2, 4, 8, 16", name,
                     vec_size);
  }
  if (vector_registers < 1 || vector_registers > 256) {
    TILEC_USER_ERROR("hardware model '{}': vector_registers = {} must be in [1, 256]", name,
                     vector_registers);
  }
}

HardwareModel SeedExampleHardware() {
  HardwareModel hw;
  hw.name = "seed-example";
  hw.threads = 256;
  hw.goal_groups = 20;
  hw.goal_flops_per_byte = 20;
  hw.max_mem = 16384;
  hw.max_regs = 16384;
  // Derived from the seed's log: tile [8, 32, 1, 3, 16, 8, 2] loads 512 + 96
  // cache lines per inner loop (mr=19456) and writes 1024 (mw=32768), so a
  // line is 32 bytes. max_mem 16384 lies in the log's [16272, 20656) and
  // max_regs 16384 in [8192, 32768).
  hw.mem_width = 32;
  // The article's device is a GPU with programmer-managed local memory.
  hw.local_memory_managed = true;
  // A GPU fuses its multiply-adds (OpenCL GPUs report CL_FP_FMA): the CPU
  // forms' sums of products on this model are `fma` (forms/common.h MulAdd).
  hw.has_fma = true;
  return hw;
}

std::string ToString(const HardwareModel& hw) {
  std::string out;
  auto line = [&out](std::string_view key, const auto& value) {
    out += fmt::format("{}={}\n", key, value);
  };
  line("name", hw.name);
  line("threads", hw.threads);
  line("max_work_group_size", hw.max_work_group_size);
  line("max_work_item_sizes", fmt::format("{},{},{}", hw.max_work_item_sizes[0],
                                          hw.max_work_item_sizes[1], hw.max_work_item_sizes[2]));
  line("compute_units", hw.compute_units);
  line("mem_width", hw.mem_width);
  line("max_mem", hw.max_mem);
  line("max_regs", hw.max_regs);
  line("local_memory_managed", hw.local_memory_managed);
  line("l1_bytes", hw.l1_bytes);
  line("l2_bytes", hw.l2_bytes);
  line("l3_bytes", hw.l3_bytes);
  line("goal_groups", hw.goal_groups);
  line("goal_flops_per_byte", hw.goal_flops_per_byte);
  line("peak_gflops", hw.peak_gflops);
  line("mem_bandwidth_gbs", hw.mem_bandwidth_gbs);
  line("vec_size", hw.vec_size);
  line("vector_registers", hw.vector_registers);
  line("mask_registers", hw.mask_registers);
  line("half_vector_rate", hw.half_vector_rate);
  line("has_fma", hw.has_fma);
  line("has_fp16", hw.has_fp16);
  line("has_fp64", hw.has_fp64);
  return out;
}

}  // namespace tilec::compiler
