// HostCpu and CpuHardwareModel (cpu_info.h).
#include "hal/llvm/cpu_info.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/TargetParser/Host.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>

#include "support/error.h"

namespace tilec::hal::cpu {
namespace {

std::string ModelName() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? std::string() : line.substr(start);
  }
  return {};
}

// The size of cpu0's level-3 cache as sysfs gives it ("32768K"): the part
// its cores share. glibc's sysconf(_SC_LEVEL3_CACHE_SIZE) can report the
// whole package instead (320 MB on a 2-vCPU Zen 4 VM whose cores share
// 32 MB); sysconf is the fallback.
long Level3Bytes() {
  for (int i = 0; i < 8; ++i) {
    std::string dir = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/", i);
    std::ifstream level_in(dir + "level"), size_in(dir + "size");
    int level = 0;
    std::string size;
    if (!(level_in >> level) || level != 3 || !(size_in >> size) || size.empty()) continue;
    char unit = size.back();
    long scale = unit == 'K' ? 1024 : unit == 'M' ? 1024 * 1024 : 1;
    if (scale != 1) size.pop_back();
    char* end = nullptr;
    long v = std::strtol(size.c_str(), &end, 10);
    if (end && *end == '\0' && v > 0 && v <= (1L << 40) / scale) return v * scale;
  }
  return 0;
}

long CacheBytes(int name) {
  long v = sysconf(name);
  return v > 0 ? v : 0;
}

// Caches of the CPUs LLVM names, in bytes: per core L1d and L2, and the L3
// a core shares with its complex (Zen) or socket (Intel, capped at 64 MB).
struct KnownCaches {
  const char* llvm_name;
  long l1, l2, l3;
};
constexpr long kKiB = 1024, kMiB = 1024 * 1024;
constexpr KnownCaches kKnownCaches[] = {
    {"znver1", 32 * kKiB, 512 * kKiB, 8 * kMiB},
    {"znver2", 32 * kKiB, 512 * kKiB, 16 * kMiB},
    {"znver3", 32 * kKiB, 512 * kKiB, 32 * kMiB},
    {"znver4", 32 * kKiB, 1 * kMiB, 32 * kMiB},
    {"znver5", 48 * kKiB, 1 * kMiB, 32 * kMiB},
    {"haswell", 32 * kKiB, 256 * kKiB, 8 * kMiB},
    {"broadwell", 32 * kKiB, 256 * kKiB, 8 * kMiB},
    {"skylake", 32 * kKiB, 256 * kKiB, 8 * kMiB},
    {"alderlake", 48 * kKiB, 1280 * kKiB, 24 * kMiB},
    {"skylake-avx512", 32 * kKiB, 1 * kMiB, 32 * kMiB},
    {"cascadelake", 32 * kKiB, 1 * kMiB, 32 * kMiB},
    {"icelake-server", 48 * kKiB, 1280 * kKiB, 48 * kMiB},
    {"sapphirerapids", 48 * kKiB, 2 * kMiB, 64 * kMiB},
    {"emeraldrapids", 48 * kKiB, 2 * kMiB, 64 * kMiB},
};

// Whether LLVM may use the x86 feature `f` in code of arithmetic and memory
// access, what kernels are: the SIMD and bit-manipulation extensions. System
// instructions (movdiri, rdpru, wbnoinvd, pku, …), which a virtual machine
// often hides from the host's features, never appear in a kernel.
bool UsedByKernels(const std::string& f) {
  for (const char* prefix : {"sse", "ssse3", "avx", "fma", "f16c", "bmi", "lzcnt", "popcnt", "movbe", "amx",
                             "evex512", "gfni", "vaes", "vpclmulqdq", "aes", "pclmul", "sha", "adx", "xop",
                             "tbm", "cx16", "sahf", "cmov", "egpr", "apx"})
    if (f.rfind(prefix, 0) == 0) return true;
  return false;
}

}  // namespace

void InitializeNativeTargetOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

CpuInfo NamedCpu(const std::string& name) {
  if (name.empty() || name == "host") return HostCpu();
  InitializeNativeTargetOnce();
  const CpuInfo& host = HostCpu();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(host.triple, error);
  if (!target) throw DeviceError(fmt::format("LLVM has no target for {}: {}", host.triple, error));
  // A generic subtarget first: asking for an unknown CPU would make LLVM
  // print a warning of its own.
  std::unique_ptr<llvm::MCSubtargetInfo> generic(target->createMCSubtargetInfo(host.triple, "", ""));
  TILEC_CHECK(generic != nullptr, "LLVM cannot describe the CPUs of {}", host.triple);
  std::vector<std::string> known;
  for (const llvm::SubtargetSubTypeKV& kv : generic->getAllProcessorDescriptions()) known.emplace_back(kv.Key);
  if (std::find(known.begin(), known.end(), name) == known.end()) {
    TILEC_USER_ERROR("unknown CPU '{}' for {} (LLVM knows: {}; or 'host')", name, host.triple,
                     fmt::join(known, ", "));
  }
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(host.triple, name, ""));
  TILEC_CHECK(sti != nullptr, "LLVM cannot describe CPU '{}'", name);
  std::vector<std::string> valid;
  for (const llvm::SubtargetFeatureKV& kv : sti->getAllProcessorFeatures()) valid.emplace_back(kv.Key);
  auto has = [&](const std::string& f) {
    return std::find(valid.begin(), valid.end(), f) != valid.end() && sti->checkFeatures("+" + f);
  };
  CpuInfo c;
  c.llvm_name = name;
  c.triple = host.triple;
  c.named = true;
  c.threads = host.threads;
  c.avx512f = has("avx512f");
  c.avx2 = has("avx2");
  c.fma = has("fma");
  c.l1_bytes = 32 * kKiB;
  c.l2_bytes = 1 * kMiB;
  c.l3_bytes = 32 * kMiB;
  for (const KnownCaches& k : kKnownCaches) {
    if (name == k.llvm_name) {
      c.l1_bytes = k.l1;
      c.l2_bytes = k.l2;
      c.l3_bytes = k.l3;
    }
  }
  for (const llvm::StringMapEntry<bool>& f : llvm::sys::getHostCPUFeatures()) {
    if (!f.getValue() && UsedByKernels(f.getKey().str()) && has(f.getKey().str()))
      c.missing_on_host.push_back(f.getKey().str());
  }
  std::sort(c.missing_on_host.begin(), c.missing_on_host.end());
  return c;
}

const CpuInfo& HostCpu() {
  static const CpuInfo info = [] {
    CpuInfo c;
    c.llvm_name = llvm::sys::getHostCPUName().str();
    c.model = ModelName();
    c.triple = llvm::sys::getProcessTriple();
    c.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    auto has = [&](const char* f) { return features.lookup(f); };
    c.avx512f = has("avx512f");
    c.avx2 = has("avx2");
    c.fma = has("fma");
    c.l1_bytes = CacheBytes(_SC_LEVEL1_DCACHE_SIZE);
    c.l2_bytes = CacheBytes(_SC_LEVEL2_CACHE_SIZE);
    c.l3_bytes = Level3Bytes();
    if (c.l3_bytes == 0) c.l3_bytes = CacheBytes(_SC_LEVEL3_CACHE_SIZE);
    return c;
  }();
  return info;
}

compiler::HardwareModel CpuHardwareModel(const CpuInfo& cpu) {
  compiler::HardwareModel hw;
  hw.name = cpu.model.empty() ? cpu.llvm_name : fmt::format("{} ({})", cpu.model, cpu.llvm_name);
  if (hw.name.empty()) hw.name = "host cpu";
  // One work item per group: a group is one core's tile, its loops vectorized.
  hw.threads = 1;
  hw.max_work_group_size = 1024;
  hw.max_work_item_sizes = {1024, 1024, 1024};
  hw.compute_units = cpu.threads;
  hw.mem_width = 64;  // the cache line
  hw.l1_bytes = cpu.l1_bytes >= 1024 ? cpu.l1_bytes : 32 * 1024;
  hw.l2_bytes = std::max<int64_t>(cpu.l2_bytes > 0 ? cpu.l2_bytes : 1024 * 1024, hw.l1_bytes);
  hw.l3_bytes = cpu.l3_bytes;
  // Staged tiles (when asked for) must fit where they stay hot: L1.
  hw.max_mem = hw.l1_bytes;
  hw.local_memory_managed = false;
  hw.vec_size = cpu.avx512f ? 16 : cpu.avx2 ? 8 : 4;
  hw.vector_registers = cpu.avx512f ? 32 : 16;
  // Zen 4 runs each 512-bit operation as two 256-bit halves: 8-lane vectors
  // reach the 16-lane FLOP rate (bench_peers L6, an nChw8c conv 20->20 on
  // 56x56 in its own layout, keeps pace with the same conv in NCHW with 16
  // lanes along w). Zen 5 and Intel's AVX-512 cores have full-width units.
  hw.half_vector_rate = cpu.avx512f && cpu.llvm_name == "znver4" ? 1.0 : 0.5;
  // Accumulators: a register file's worth of f32 lanes (4 bytes each).
  hw.max_regs = hw.vector_registers * hw.vec_size * 4;
  // Enough groups that every core gets several (load balance across chunks).
  hw.goal_groups = 4 * hw.compute_units;
  // The roofline knee of one core: its peak flops per cycle (two FMA pipes
  // of vec_size lanes, two flops each; half without FMA) over the 16 bytes
  // per cycle a core streams from L2 and beyond: 4 with AVX-512, 2 with
  // AVX2. The cost model counts bytes in whole cache lines per tile, so a
  // tile must reuse each line this many flops' worth to be compute-bound.
  double flops_per_cycle = 2.0 * static_cast<double>(hw.vec_size) * (cpu.fma ? 2.0 : 1.0);
  hw.goal_flops_per_byte = flops_per_cycle / 16.0;
  // Estimated times (schedule/cost_model.h EstimateTime): every core at an assumed
  // 3 GHz, and 10 GB/s of streaming bandwidth per core. Only the ratio
  // matters (it decides whether a relayout pays); bench_machine
  // (bench/suite/machine.cc) measures both, and bench/README.md has its
  // figures for the project's host.
  hw.peak_gflops = flops_per_cycle * 3.0 * static_cast<double>(hw.compute_units);
  hw.mem_bandwidth_gbs = 10.0 * static_cast<double>(hw.compute_units);
  hw.has_fma = cpu.fma;
  hw.has_fp64 = true;
  hw.has_fp16 = true;  // emulated: LLVM computes half in float
  return hw;
}

}  // namespace tilec::hal::cpu
