// LlvmDevice (llvm_device.h): buffers, the module cache, executables and
// launches over the thread pool.
#include "hal/llvm/llvm_device.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>

#include <sys/mman.h>
#include <unistd.h>

#include "hal/llvm/cpu_info.h"
#include "hal/llvm/emit_llvm.h"
#include "hal/llvm/jit.h"
#include "hal/llvm/thread_pool.h"
#include "support/error.h"

namespace tilec::hal::cpu {
namespace {

constexpr size_t kAlignment = 64;  // a cache line, and an AVX-512 vector
// Buffers of at least this size are aligned to it and asked for transparent
// huge pages (Linux's default THP mode, `madvise`, gives them only to memory
// that asks). A kernel streaming a 64 MB input walks 16384 small pages; in a
// virtual machine every TLB miss is a two-level walk (bench/suite row sum
// 4096x4096 is memory-bound and gains; bench/README.md has the C loop's
// figures).
constexpr size_t kHugePage = size_t{2} << 20;

class CpuBuffer final : public DeviceBuffer {
 public:
  explicit CpuBuffer(size_t bytes) : size_(bytes) {
    // Never empty, so kernels always get a valid pointer.
    size_t align = bytes >= kHugePage ? kHugePage : kAlignment;
    if (bytes > SIZE_MAX - align) throw DeviceError(fmt::format("cannot allocate {} bytes of host memory", bytes));
    size_t padded = (std::max<size_t>(bytes, 1) + align - 1) / align * align;
    data_ = static_cast<std::byte*>(std::aligned_alloc(align, padded));
    if (!data_) throw DeviceError(fmt::format("cannot allocate {} bytes of host memory", bytes));
    if (align == kHugePage) madvise(data_, padded, MADV_HUGEPAGE);  // advice: failure is harmless
    std::memset(data_, 0, padded);
  }
  // Caller-owned memory, used in place (WrapHost).
  CpuBuffer(std::byte* data, size_t bytes) : data_(data), size_(bytes), owned_(false) {}
  ~CpuBuffer() override {
    if (owned_) std::free(data_);
  }
  CpuBuffer(const CpuBuffer&) = delete;
  CpuBuffer& operator=(const CpuBuffer&) = delete;

  size_t size() const override { return size_; }
  std::byte* data() const { return data_; }
  // Re-points a wrapper of caller memory (false for an owned buffer).
  bool Rewrap(std::byte* data, size_t bytes) {
    if (owned_) return false;
    data_ = data;
    size_ = bytes;
    return true;
  }

 private:
  std::byte* data_ = nullptr;
  size_t size_ = 0;
  bool owned_ = true;
};

// The entry points of one compiled module, by kernel name.
using CompiledModule = std::map<std::string, GroupFn>;

struct KernelLaunch {
  std::string name;
  GroupFn fn = nullptr;
  std::array<int64_t, 3> groups = {1, 1, 1};
  size_t params = 0;
  // Points of the kernel's iteration space (the product of its flat
  // indices' ranges); -1 when unknown (special and direct kernels).
  int64_t work = -1;
};

// Calls a JIT-compiled kernel. clang's -fsanitize=function (part of UBSan
// for C++) checks an indirect call by reading a signature word just before
// the callee, which JIT code does not have (and the word before a kernel at
// the start of a page is unmapped): the check is off for this one call.
#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
void CallKernel(GroupFn fn, void** args, int64_t first, int64_t last) {
  fn(args, first, last);
}

// A launch this small runs on the calling thread alone: waking the pool's
// workers and waiting for them costs microseconds, more than the kernel
// itself (bench/suite smoke gelu(x+bias) 13x37).
// Both bounds must hold: few points, and little memory to move.
constexpr int64_t kInlineWork = 64 * 1024;
constexpr size_t kInlineBytes = 256 * 1024;

class CpuExecutable final : public Executable {
 public:
  CpuExecutable(std::vector<KernelLaunch> kernels, ThreadPool& pool,
                std::atomic<uint64_t>& parallel_launches)
      : kernels_(std::move(kernels)), pool_(pool), parallel_launches_(parallel_launches) {}

  uint64_t Launch(size_t index, const std::vector<DeviceBuffer*>& buffers) override {
    return Run(index, buffers, true);
  }
  void LaunchUntimed(size_t index, const std::vector<DeviceBuffer*>& buffers) override {
    Run(index, buffers, false);
  }

 private:
  // Launch; nanoseconds taken if `timed`, else 0.
  uint64_t Run(size_t index, const std::vector<DeviceBuffer*>& buffers, bool timed) {
    TILEC_CHECK(index < kernels_.size(), "kernel {} of {}", index, kernels_.size());
    const KernelLaunch& k = kernels_[index];
    TILEC_CHECK(buffers.size() == k.params, "kernel '{}' takes {} buffers, {} given", k.name,
                k.params, buffers.size());
    // The kernel's arguments: on the stack for the usual few (a launch of a
    // tiny kernel must not allocate), on the heap beyond.
    constexpr size_t kStackArgs = 16;
    void* stack_args[kStackArgs];
    std::vector<void*> heap_args;
    void** args = stack_args;
    if (buffers.size() + 1 > kStackArgs) {
      heap_args.resize(buffers.size() + 1);
      args = heap_args.data();
    }
    size_t bytes = 0;
    for (size_t i = 0; i < buffers.size(); ++i) {
      DeviceBuffer* b = buffers[i];
      TILEC_CHECK(b != nullptr, "kernel '{}': null buffer", k.name);
      args[i] = static_cast<CpuBuffer*>(b)->data();
      bytes += b->size();
    }
    std::array<int64_t, 3> groups = k.groups;
    args[buffers.size()] = groups.data();
    int64_t total = groups[0] * groups[1] * groups[2];
    bool small = k.work >= 0 && k.work <= kInlineWork && bytes <= kInlineBytes;
    int chunks = small ? 1 : static_cast<int>(std::min<int64_t>(total, pool_.size()));
    if (chunks > 1) parallel_launches_.fetch_add(1, std::memory_order_relaxed);
    auto start = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    // Pieces of contiguous group ids taken in order from a shared counter
    // ("guided" scheduling): each piece is a 1/(2 * threads) share of the
    // groups not yet taken, so the first pieces are large (neighbouring
    // groups run on one core) and the last ones single groups. A thread
    // slowed down (by another process, or a heavier stretch of the grid)
    // takes fewer pieces, and the threads finish within about one group of
    // each other instead of one large piece; one that has not begun when the
    // pieces are all taken is not waited for (ThreadPool::Share).
    std::atomic<int64_t> next{0};
    // A small grid (fewer than 16 groups per thread: global pooling's 8)
    // runs in fixed pieces of about 1/8 of a thread's share instead: its
    // first guided pieces would be a quarter of the launch, and the thread
    // that takes the second runs alone at the end (bench/suite global avg
    // pool n8 28x28 c256).
    bool guided = total >= int64_t{chunks} * 16;
    int64_t fixed = std::max<int64_t>(1, total / (int64_t{chunks} * 8));
    if (chunks == 1) {
      // On the caller's thread, not through the pool (whose lock would make
      // concurrent small launches take turns).
      CallKernel(k.fn, args, 0, total);
    } else {
      pool_.Share(chunks, [&](int) {
        int64_t first = next.load(std::memory_order_relaxed);
        while (first < total) {
          int64_t piece = guided ? std::max<int64_t>(1, (total - first) / (2 * int64_t{chunks})) : fixed;
          if (!next.compare_exchange_weak(first, first + piece, std::memory_order_relaxed)) continue;
          CallKernel(k.fn, args, first, std::min(total, first + piece));
          first = next.load(std::memory_order_relaxed);
        }
      });
    }
    if (!timed) return 0;
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now() - start);
    return static_cast<uint64_t>(ns.count());
  }

  std::vector<KernelLaunch> kernels_;
  ThreadPool& pool_;
  std::atomic<uint64_t>& parallel_launches_;
};

}  // namespace

struct LlvmDevice::Impl {
  explicit Impl(const std::string& cpu_name) : cpu(NamedCpu(cpu_name)), jit(cpu) {}

  CpuInfo cpu;  // the CPU code is compiled for: the host, or a named one
  Jit jit;
  compiler::HardwareModel hw = CpuHardwareModel(cpu);
  std::string id = kId;
  ThreadPool pool{HostCpu().threads};
  std::atomic<uint64_t> parallel_launches{0};
  std::mutex cache_mutex;
  std::unordered_map<std::string, std::shared_ptr<const CompiledModule>> cache;
  std::shared_ptr<const KernelCache> disk;
  std::atomic<uint64_t> disk_hits{0}, disk_misses{0};
  std::atomic<uint64_t> modules_emitted{0};  // sem modules lowered to LLVM IR by Build

  // The disk cache's key of a module whose SemModuleKey or ModuleKey is `module_key`.
  std::string DiskKey(const std::string& module_key) const {
    return fmt::format("llvm-object 3\ntilec {}\n{}\n{}\n{}\nLLVM {}\nO3\n{}", disk->options().version,
                       jit.target_triple(), jit.cpu_name(), jit.cpu_features(), LLVM_VERSION_STRING, module_key);
  }

  EmitOptions Options() const {
    EmitOptions o;
    o.target_triple = jit.target_triple();
    o.data_layout = jit.data_layout();
    o.vector_isa = jit.vector_isa();
    o.fma = jit.fma();
    return o;
  }
};

LlvmDevice::LlvmDevice(const std::string& cpu) : impl_(std::make_unique<Impl>(cpu)) {}
LlvmDevice::~LlvmDevice() = default;

const std::string& LlvmDevice::id() const { return impl_->id; }

std::string LlvmDevice::Describe() const {
  const CpuInfo& cpu = impl_->cpu;
  std::string why = WhyCannotRun();
  std::string runs = why.empty() ? "" : fmt::format("; compile only: {}", why);
  return fmt::format("{} ({}; {} threads; LLVM {} {}, {}{})",
                     cpu.named ? (cpu.model.empty() ? "named CPU" : "named CPU " + cpu.model)
                     : cpu.model.empty() ? "host CPU" : cpu.model,
                     impl_->jit.cpu_name(), threads(), LLVM_VERSION_STRING,
                     cpu.other_arch ? "ahead of time" : "ORC JIT", impl_->jit.target_triple(), runs);
}

std::string LlvmDevice::WhyCannotRun() const {
  const CpuInfo& cpu = impl_->cpu;
  if (cpu.other_arch)
    return fmt::format("the host is {}, the code {}", Name(HostCpu().arch), Name(cpu.arch));
  if (cpu.missing_on_host.empty()) return {};
  return fmt::format("the host lacks {}", fmt::join(cpu.missing_on_host, ", "));
}

void LlvmDevice::CheckRunnable() const {
  std::string why = WhyCannotRun();
  if (why.empty()) return;
  const std::string& name = impl_->cpu.llvm_name;
  TILEC_USER_ERROR(
      "code for CPU '{}' cannot run here: {} (write it for such a CPU with `tilec compile --cpu {} -o "
      "NAME`, or compile for this host: --cpu host)",
      name, why, name);
}

const compiler::HardwareModel& LlvmDevice::hardware_model() const { return impl_->hw; }

const CpuInfo& LlvmDevice::cpu() const { return impl_->cpu; }
const std::string& LlvmDevice::target_triple() const { return impl_->jit.target_triple(); }
int LlvmDevice::threads() const { return impl_->pool.size(); }
uint64_t LlvmDevice::parallel_launches() const { return impl_->parallel_launches.load(); }

size_t LlvmDevice::cached_module_count() const {
  std::lock_guard<std::mutex> lock(impl_->cache_mutex);
  return impl_->cache.size();
}

std::unique_ptr<DeviceBuffer> LlvmDevice::Allocate(size_t bytes) {
  // More than the host's physical memory cannot work. Fail before the
  // allocator, which may overcommit and leave the zero fill to the OOM killer
  // (and which aborts under AddressSanitizer instead of returning null).
  static const uint64_t host_bytes =
      static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGE_SIZE));
  if (bytes > host_bytes) {
    throw DeviceError(fmt::format("cannot allocate {} bytes on {}: the host has {} bytes of memory",
                                  bytes, kId, host_bytes));
  }
  return std::make_unique<CpuBuffer>(bytes);
}

std::unique_ptr<DeviceBuffer> LlvmDevice::WrapHost(void* data, size_t bytes) {
  // Kernels always get a valid pointer: an empty tensor gets its own buffer.
  if (data == nullptr || bytes == 0) return nullptr;
  return std::make_unique<CpuBuffer>(static_cast<std::byte*>(data), bytes);
}

bool LlvmDevice::RewrapHost(DeviceBuffer& buffer, void* data, size_t bytes) {
  if (data == nullptr || bytes == 0) return false;
  return static_cast<CpuBuffer&>(buffer).Rewrap(static_cast<std::byte*>(data), bytes);
}

void LlvmDevice::Write(DeviceBuffer& buffer, const void* data, size_t bytes) {
  auto& b = static_cast<CpuBuffer&>(buffer);
  TILEC_CHECK(bytes <= b.size(), "write of {} bytes to a buffer of {}", bytes, b.size());
  if (bytes) std::memcpy(b.data(), data, bytes);
}

void LlvmDevice::Read(const DeviceBuffer& buffer, void* data, size_t bytes) {
  auto& b = static_cast<const CpuBuffer&>(buffer);
  TILEC_CHECK(bytes <= b.size(), "read of {} bytes from a buffer of {}", bytes, b.size());
  if (bytes) std::memcpy(data, b.data(), bytes);
}

std::string LlvmDevice::EmitCode(const sem::Module& module) {
  return EmitLLVMText(module, impl_->Options());
}

std::string LlvmDevice::EmitOptimizedIR(const sem::Module& module) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> m = EmitLLVM(module, context, impl_->Options());
  impl_->jit.Optimize(*m);
  return PrintModule(*m);
}

void LlvmDevice::SetKernelCache(std::shared_ptr<const KernelCache> cache) {
  impl_->disk = std::move(cache);
}

KernelCacheStats LlvmDevice::kernel_cache_stats() const {
  return {impl_->disk_hits.load(), impl_->disk_misses.load(), impl_->modules_emitted.load()};
}

std::string LlvmDevice::EmitObject(const sem::Module& sem, const LaunchTable& launches) {
  EmitOptions options = impl_->Options();
  for (const LaunchTable::Kernel& k : launches.kernels) options.local_sizes[k.function] = k.local;
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = EmitLLVM(sem, context, options);
  return impl_->jit.EmitObject(*module);
}

std::unique_ptr<Executable> LlvmDevice::Build(const sem::Module& sem, const LaunchTable& launches) {
  CheckRunnable();
  EmitOptions options = impl_->Options();
  for (const LaunchTable::Kernel& k : launches.kernels) options.local_sizes[k.function] = k.local;
  // The module is lowered to LLVM IR only when its code is not cached, where
  // the sem text can key it (SemModuleKey).
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  auto emit = [&] {
    if (module) return;
    context = std::make_unique<llvm::LLVMContext>();
    module = EmitLLVM(sem, *context, options);
    ++impl_->modules_emitted;
  };
  std::string key = SemModuleKey(sem, options);
  if (key.empty()) {
    emit();
    key = ModuleKey(*module);
  }

  std::shared_ptr<const CompiledModule> compiled;
  {
    // Held across the compile: a second Build of the same module waits for the first.
    std::lock_guard<std::mutex> lock(impl_->cache_mutex);
    auto it = impl_->cache.find(key);
    if (it != impl_->cache.end()) {
      compiled = it->second;
    } else {
      std::vector<std::string> names, symbols;
      for (const LaunchTable::Kernel& k : launches.kernels) {
        names.push_back(k.function);
        symbols.push_back(GroupFunctionName(k.function));
      }
      std::vector<void*> addresses;
      std::optional<std::string> object;
      std::string disk_key;
      if (impl_->disk) {
        disk_key = impl_->DiskKey(key);
        object = impl_->disk->Get(disk_key);
      }
      if (object) {
        try {
          addresses = impl_->jit.Load(*object, symbols);
          ++impl_->disk_hits;
        } catch (const DeviceError&) {
          object.reset();  // an object that does not load: compiled again and replaced
        }
      }
      if (!object) {
        emit();
        std::string compiled;
        addresses = impl_->jit.Compile(std::move(context), std::move(module), symbols,
                                       impl_->disk ? &compiled : nullptr);
        if (impl_->disk) {
          ++impl_->disk_misses;
          if (!compiled.empty()) impl_->disk->Put(disk_key, compiled);
        }
      }
      auto entries = std::make_shared<CompiledModule>();
      for (size_t i = 0; i < names.size(); ++i)
        (*entries)[names[i]] = reinterpret_cast<GroupFn>(addresses[i]);
      compiled = entries;
      impl_->cache.emplace(std::move(key), compiled);
    }
  }

  std::vector<KernelLaunch> kernels;
  for (const LaunchTable::Kernel& k : launches.kernels) {
    KernelLaunch launch;
    launch.name = k.function;
    launch.fn = compiled->at(launch.name);
    auto f = std::find_if(sem.functions.begin(), sem.functions.end(),
                          [&](const sem::Function& fn) { return fn.name == k.function; });
    TILEC_CHECK(f != sem.functions.end(), "kernel '{}' is not in the module", k.function);
    launch.params = f->params.size();
    launch.work = k.points;
    for (const sem::Param& p : f->params)
      TILEC_CHECK(p.type.IsPointer(), "kernel '{}': parameter '{}' is not a buffer", launch.name,
                  p.name);
    for (int d = 0; d < 3; ++d) {
      int64_t global = k.global[d], local = k.local[d];
      TILEC_CHECK(global >= 1 && local >= 1 && global % local == 0,
                  "kernel '{}': global size {} is not a multiple of local size {} in dimension {}",
                  launch.name, global, local, d);
      launch.groups[d] = global / local;
    }
    kernels.push_back(std::move(launch));
  }
  return std::make_unique<CpuExecutable>(std::move(kernels), impl_->pool, impl_->parallel_launches);
}

}  // namespace tilec::hal::cpu
