// HostCpu, NamedCpu and CpuHardwareModel (cpu_info.h).
#include "hal/llvm/cpu_info.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/TargetParser/AArch64TargetParser.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>

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
    // AArch64: the L3 is the system-level cache of the usual parts
    // (Graviton2 and 3: 32 MB; a Raspberry Pi 5's Cortex-A76: 2 MB). Apple
    // M1: a performance core's L1d, the 12 MB L2 its cluster shares (one
    // core may fill it), the 8 MB system-level cache.
    {"neoverse-n1", 64 * kKiB, 1 * kMiB, 32 * kMiB},
    {"neoverse-v1", 64 * kKiB, 1 * kMiB, 32 * kMiB},
    {"cortex-a76", 64 * kKiB, 512 * kKiB, 2 * kMiB},
    {"apple-m1", 128 * kKiB, 12 * kMiB, 8 * kMiB},
};

// The caches of a CPU not in the table.
constexpr KnownCaches kDefaultX86Caches = {"", 32 * kKiB, 1 * kMiB, 32 * kMiB};
constexpr KnownCaches kDefaultAArch64Caches = {"", 32 * kKiB, 512 * kKiB, 4 * kMiB};

CpuArch ArchOf(const std::string& triple) {
  switch (llvm::Triple(triple).getArch()) {
    case llvm::Triple::x86_64: return CpuArch::X86_64;
    case llvm::Triple::aarch64: return CpuArch::AArch64;
    default: return CpuArch::Other;
  }
}

// The triples NamedCpu looks names up in, the host's architecture first.
std::vector<std::string> CandidateTriples(const std::string& host_triple) {
  constexpr const char* kX86 = "x86_64-pc-linux-gnu";
  constexpr const char* kAArch64 = "aarch64-unknown-linux-gnu";
  switch (ArchOf(host_triple)) {
    case CpuArch::X86_64: return {host_triple, kAArch64};
    case CpuArch::AArch64: return {host_triple, kX86};
    case CpuArch::Other: break;
  }
  return {host_triple, kX86, kAArch64};
}

// Whether LLVM may use the feature `f` in code of arithmetic and memory
// access, what kernels are: the SIMD and bit-manipulation extensions. System
// instructions (movdiri, rdpru, wbnoinvd, pku, …), which a virtual machine
// often hides from the host's features, never appear in a kernel.
bool UsedByKernels(CpuArch arch, const std::string& f) {
  static constexpr const char* kX86[] = {"sse",  "ssse3", "avx",  "fma",    "f16c", "bmi",  "lzcnt", "popcnt",
                                         "movbe", "amx",  "evex512", "gfni", "vaes", "vpclmulqdq", "aes",
                                         "pclmul", "sha", "adx",  "xop",    "tbm",  "cx16", "sahf",  "cmov",
                                         "egpr",  "apx"};
  static constexpr const char* kAArch64[] = {"neon", "fp-armv8", "fullfp16", "fp16fml", "sve", "sme",
                                             "dotprod", "i8mm", "bf16", "rdm", "crc", "lse"};
  auto any = [&](const auto& prefixes) {
    for (const char* prefix : prefixes)
      if (f.rfind(prefix, 0) == 0) return true;
    return false;
  };
  return arch == CpuArch::X86_64 ? any(kX86) : arch == CpuArch::AArch64 ? any(kAArch64) : false;
}

// LLVM's CPU names for `triple` (empty when LLVM has no target for it).
std::vector<std::string> KnownCpus(const std::string& triple) {
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) return {};
  // A generic subtarget: asking for an unknown CPU would make LLVM print a
  // warning of its own.
  std::unique_ptr<llvm::MCSubtargetInfo> generic(target->createMCSubtargetInfo(triple, "", ""));
  TILEC_CHECK(generic != nullptr, "LLVM cannot describe the CPUs of {}", triple);
  std::vector<std::string> known;
  for (const llvm::SubtargetSubTypeKV& kv : generic->getAllProcessorDescriptions()) known.emplace_back(kv.Key);
  return known;
}

// The CPU `name` of `triple`, which LLVM knows.
CpuInfo DescribeCpu(const std::string& triple, const std::string& name) {
  const CpuInfo& host = HostCpu();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) throw DeviceError(fmt::format("LLVM has no target for {}: {}", triple, error));
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(triple, name, ""));
  TILEC_CHECK(sti != nullptr, "LLVM cannot describe CPU '{}'", name);
  std::vector<std::string> valid;
  for (const llvm::SubtargetFeatureKV& kv : sti->getAllProcessorFeatures()) valid.emplace_back(kv.Key);
  auto has = [&](const std::string& f) {
    return std::find(valid.begin(), valid.end(), f) != valid.end() && sti->checkFeatures("+" + f);
  };
  CpuInfo c;
  c.llvm_name = name;
  c.triple = triple;
  c.arch = ArchOf(triple);
  c.named = true;
  c.threads = host.threads;
  KnownCaches caches = kDefaultX86Caches;
  if (c.arch == CpuArch::AArch64) {
    // Every AArch64 core has NEON, and its fused multiply-adds.
    c.neon = has("neon");
    c.sve = has("sve");
    c.fma = c.neon;
    caches = kDefaultAArch64Caches;
  } else {
    c.avx512f = has("avx512f");
    c.avx2 = has("avx2");
    c.fma = has("fma");
  }
  for (const KnownCaches& k : kKnownCaches)
    if (name == k.llvm_name) caches = k;
  c.l1_bytes = caches.l1;
  c.l2_bytes = caches.l2;
  c.l3_bytes = caches.l3;
  c.other_arch = c.arch != host.arch;
  if (!c.other_arch) {
    for (const llvm::StringMapEntry<bool>& f : llvm::sys::getHostCPUFeatures()) {
      if (!f.getValue() && UsedByKernels(c.arch, f.getKey().str()) && has(f.getKey().str()))
        c.missing_on_host.push_back(f.getKey().str());
    }
    std::sort(c.missing_on_host.begin(), c.missing_on_host.end());
  }
  return c;
}

}  // namespace

std::string_view Name(CpuArch arch) {
  switch (arch) {
    case CpuArch::X86_64: return "x86_64";
    case CpuArch::AArch64: return "aarch64";
    case CpuArch::Other: return "other";
  }
  TILEC_UNREACHABLE("cpu arch");
}

void InitializeTargetsOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
#if LLVM_HAS_X86_TARGET
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
#endif
#if LLVM_HAS_AARCH64_TARGET
    LLVMInitializeAArch64TargetInfo();
    LLVMInitializeAArch64Target();
    LLVMInitializeAArch64TargetMC();
    LLVMInitializeAArch64AsmPrinter();
#endif
  });
}

CpuInfo NamedCpu(const std::string& spec) {
  if (spec.empty() || spec == "host") return HostCpu();
  InitializeTargetsOnce();
  const CpuInfo& host = HostCpu();
  std::vector<std::string> triples = CandidateTriples(host.triple);
  std::string name = spec;
  if (size_t colon = spec.find(':'); colon != std::string::npos) {
    std::string arch = spec.substr(0, colon);
    name = spec.substr(colon + 1);
    CpuArch want = arch == "x86_64" || arch == "x86-64" ? CpuArch::X86_64
                   : arch == "aarch64" || arch == "arm64" ? CpuArch::AArch64
                                                            : CpuArch::Other;
    if (want == CpuArch::Other || name.empty())
      TILEC_USER_ERROR("CPU '{}': ARCH:NAME takes the architecture x86_64 or aarch64 and a CPU name "
                       "('aarch64:neoverse-n1')", spec);
    std::erase_if(triples, [&](const std::string& t) { return ArchOf(t) != want; });
  }
  std::vector<std::string> lists;
  for (const std::string& triple : triples) {
    std::vector<std::string> known = KnownCpus(triple);
    auto knows = [&](const std::string& n) { return std::find(known.begin(), known.end(), n) != known.end(); };
    if (knows(name)) return DescribeCpu(triple, name);
    // AArch64's aliases ("apple-m1" is LLVM's "apple-a14"): LLVM's name, the
    // caches of the one asked for, which names the model.
    if (std::string alias = llvm::AArch64::resolveCPUAlias(name).str();
        ArchOf(triple) == CpuArch::AArch64 && alias != name && knows(alias)) {
      CpuInfo c = DescribeCpu(triple, alias);
      c.model = name;
      for (const KnownCaches& k : kKnownCaches)
        if (name == k.llvm_name) std::tie(c.l1_bytes, c.l2_bytes, c.l3_bytes) = std::tie(k.l1, k.l2, k.l3);
      return c;
    }
    if (!known.empty()) lists.push_back(fmt::format("{} (LLVM knows: {})", triple, fmt::join(known, ", ")));
  }
  TILEC_USER_ERROR("unknown CPU '{}' for {}; or 'host'", spec, fmt::join(lists, " or "));
}

const CpuInfo& HostCpu() {
  static const CpuInfo info = [] {
    CpuInfo c;
    c.llvm_name = llvm::sys::getHostCPUName().str();
    c.model = ModelName();
    c.triple = llvm::sys::getProcessTriple();
    c.arch = ArchOf(c.triple);
    c.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    auto has = [&](const char* f) { return features.lookup(f); };
    c.avx512f = has("avx512f");
    c.avx2 = has("avx2");
    c.fma = has("fma");
    c.neon = has("neon");
    c.sve = has("sve");
    if (c.arch == CpuArch::AArch64) c.fma = c.neon;
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
  // AArch64: NEON's 4 f32 lanes and 32 registers, no predicates. On SVE
  // cores (neoverse-v1) the forms still plan NEON's fixed width; only LLVM's
  // loop vectorizer, widening a scalar loop itself, may take SVE's vectors.
  bool aarch64 = cpu.arch == CpuArch::AArch64;
  hw.vec_size = cpu.avx512f ? 16 : cpu.avx2 ? 8 : 4;
  hw.vector_registers = cpu.avx512f || aarch64 ? 32 : 16;
  hw.mask_registers = cpu.avx512f;
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
  // AVX2, 1 with NEON (Neoverse N1's two 128-bit FMA pipes). The cost model counts bytes in whole cache lines per tile, so a
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
