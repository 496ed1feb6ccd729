// The disk cache of compiled kernels (hal/kernel_cache.h) and its use by the
// LLVM device: hits across devices (a fresh JIT, as in a second process),
// invalidation by Tilec's version, corrupt entries ignored and replaced, the
// size bound, concurrent writers, and the environment settings.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "hal/kernel_cache.h"
#include "hal/llvm/emit_llvm.h"
#include "hal/llvm/llvm_device.h"
#include "pipeline_check.h"
#include "runtime/settings.h"

namespace tilec::testing {
namespace {

namespace fs = std::filesystem;

// A fresh directory under the build tree's temp dir, removed afterwards.
class CacheDir {
 public:
  CacheDir() {
    path_ = fs::temp_directory_path() /
            fmt::format("tilec-cache-test-{}-{}", getpid(), counter_++);
    fs::remove_all(path_);
  }
  ~CacheDir() { fs::remove_all(path_); }
  hal::KernelCacheOptions Options(std::string version = "9.9.9", uint64_t max = 1 << 20) const {
    return {true, path_.string(), max, std::move(version)};
  }
  const fs::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

TEST(KernelCache, StoresAndFindsEntries) {
  CacheDir dir;
  hal::KernelCache cache(dir.Options());
  EXPECT_FALSE(cache.Get("k1"));
  cache.Put("k1", "object one");
  cache.Put("k2", std::string("\0binary\xff", 8));
  EXPECT_EQ(cache.Get("k1"), "object one");
  EXPECT_EQ(cache.Get("k2"), std::string("\0binary\xff", 8));
  EXPECT_EQ(cache.List().size(), 2u);
  // No temporary file is left behind.
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().extension(), ".bin") << e.path();
  EXPECT_EQ(cache.Clear(), 2u);
  EXPECT_FALSE(cache.Get("k1"));
}

TEST(KernelCache, DisabledCacheNeitherReadsNorWrites) {
  CacheDir dir;
  hal::KernelCacheOptions o = dir.Options();
  o.enabled = false;
  hal::KernelCache cache(o);
  cache.Put("k", "v");
  EXPECT_FALSE(cache.Get("k"));
  EXPECT_FALSE(fs::exists(dir.path()));
}

TEST(KernelCache, CorruptEntriesAreIgnoredAndReplaced) {
  CacheDir dir;
  hal::KernelCache cache(dir.Options());
  fs::path file = dir.path() / hal::KernelCache::EntryName("k");
  for (int variant = 0; variant < 3; ++variant) {
    cache.Put("k", "the object code");
    ASSERT_TRUE(fs::exists(file));
    if (variant == 0) {
      fs::resize_file(file, 10);  // shorter than the header
    } else if (variant == 1) {
      fs::resize_file(file, fs::file_size(file) - 1);  // truncated payload
    } else {
      std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(-3, std::ios::end);
      f.put('X');  // one flipped byte
    }
    EXPECT_FALSE(cache.Get("k")) << "variant " << variant;
    EXPECT_FALSE(fs::exists(file)) << "corrupt entry not removed, variant " << variant;
    cache.Put("k", "the object code");
    EXPECT_EQ(cache.Get("k"), "the object code");
  }
}

TEST(KernelCache, StaysWithinItsSizeBound) {
  CacheDir dir;
  hal::KernelCache cache(dir.Options("1", 10000));
  std::string payload(3000, 'x');
  for (int i = 0; i < 10; ++i) cache.Put(fmt::format("key{}", i), payload);
  EXPECT_LE(cache.TotalBytes(), 10000u);
  EXPECT_GE(cache.List().size(), 2u);
  EXPECT_EQ(cache.Get("key9"), payload) << "the newest entry was evicted";
}

TEST(KernelCache, ConcurrentWritersAndReaders) {
  CacheDir dir;
  hal::KernelCache cache(dir.Options());
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        std::string key = fmt::format("key{}", i % 5);  // every thread writes the same keys
        std::string value(1000 + (i % 5), static_cast<char>('a' + i % 5));
        cache.Put(key, value);
        std::optional<std::string> got = cache.Get(key);
        if (got && *got != value) ++wrong;  // a miss is fine (another thread's rename); a torn entry is not
        if (cache.Get(fmt::format("own{}", t))) ++wrong;
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(cache.List().size(), 5u);
}

TEST(RuntimeSettings, FromEnvironment) {
  auto settings = [](std::map<std::string, std::string> env) {
    return runtime::SettingsFromEnvironment([env](const char* n) -> const char* {
             auto it = env.find(n);
             return it == env.end() ? nullptr : it->second.c_str();
           })
        .kernel_cache;
  };
  hal::KernelCacheOptions o = settings({{"HOME", "/h"}});
  EXPECT_TRUE(o.enabled);
  EXPECT_EQ(o.dir, "/h/.cache/tilec");
  EXPECT_FALSE(o.version.empty());
  EXPECT_EQ(settings({{"HOME", "/h"}, {"XDG_CACHE_HOME", "/x"}}).dir, "/x/tilec");
  EXPECT_EQ(settings({{"XDG_CACHE_HOME", "/x"}, {"TILEC_CACHE_DIR", "/t"}}).dir, "/t");
  EXPECT_FALSE(settings({{"HOME", "/h"}, {"TILEC_CACHE", "0"}}).enabled);
  EXPECT_FALSE(settings({}).enabled);
  EXPECT_EQ(settings({{"HOME", "/h"}, {"TILEC_CACHE_MAX_MB", "3"}}).max_bytes, 3u << 20);
  EXPECT_THROW(settings({{"TILEC_CACHE_MAX_MB", "lots"}}), UserError);
}

// The seed's conv+ReLU compiled on a device with the cache, then on a fresh
// device (its own JIT: what a second process sees).
const Case kConv(R"(function (D[N, X, Y, CI], K[I, J, CO, CI]) -> (R) {
  O[n, x, y, co : N, X, Y, CO] = +(D[n, x + i - 1, y + j - 1, ci] * K[i, j, co, ci]);
  R = (O > 0 ? O : 0);
})",
                 {{"D", F32({1, 9, 7, 5})}, {"K", F32({3, 3, 6, 5})}});

// Compiles and checks kConv on `device` with a disk cache of `options`.
hal::KernelCacheStats BuildWithCache(const std::shared_ptr<hal::Device>& device,
                                     const hal::KernelCacheOptions& options) {
  device->SetKernelCache(std::make_shared<hal::KernelCache>(options));
  compiler::CompileOptions o;
  o.hw = device->hardware_model();
  runtime::Program p = runtime::Program::Compile(BindCase(kConv), device, o, true);
  CompareWithEvaluator(p, "conv_relu on " + device->id());
  return device->kernel_cache_stats();
}

hal::KernelCacheStats BuildOnFreshDevice(const hal::KernelCacheOptions& options) {
  return BuildWithCache(std::make_shared<hal::cpu::LlvmDevice>(), options);
}

TEST(LlvmDiskCache, SecondDeviceLoadsTheObjectCode) {
  CacheDir dir;
  hal::KernelCacheStats first = BuildOnFreshDevice(dir.Options());
  EXPECT_EQ(first.disk_hits, 0u);
  EXPECT_EQ(first.disk_misses, 1u);
  EXPECT_EQ(hal::KernelCache(dir.Options()).List().size(), 1u);
  hal::KernelCacheStats second = BuildOnFreshDevice(dir.Options());
  EXPECT_EQ(second.disk_hits, 1u);
  EXPECT_EQ(second.disk_misses, 0u);
}

// A warm start lowers nothing to LLVM IR: the module's sem text and the
// emitter's build id key the object code.
TEST(LlvmDiskCache, WarmStartEmitsNoLlvmIr) {
  ASSERT_FALSE(hal::cpu::EmitterBuildId().empty()) << "tilec is linked without a GNU build id";
  CacheDir dir;
  EXPECT_EQ(BuildOnFreshDevice(dir.Options()).modules_emitted, 1u);
  hal::KernelCacheStats second = BuildOnFreshDevice(dir.Options());
  EXPECT_EQ(second.disk_hits, 1u);
  EXPECT_EQ(second.modules_emitted, 0u);
}

TEST(LlvmDiskCache, AnotherVersionMisses) {
  CacheDir dir;
  BuildOnFreshDevice(dir.Options("1.0.0"));
  hal::KernelCacheStats other = BuildOnFreshDevice(dir.Options("1.0.1"));
  EXPECT_EQ(other.disk_hits, 0u);
  EXPECT_EQ(hal::KernelCache(dir.Options()).List().size(), 2u);
}

TEST(LlvmDiskCache, CorruptObjectIsCompiledAgainAndReplaced) {
  CacheDir dir;
  BuildOnFreshDevice(dir.Options());
  std::vector<hal::KernelCacheEntry> entries = hal::KernelCache(dir.Options()).List();
  ASSERT_EQ(entries.size(), 1u);
  fs::path file = dir.path() / entries[0].name;
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x7f');
    f.put('\x00');
  }
  hal::KernelCacheStats again = BuildOnFreshDevice(dir.Options());
  EXPECT_EQ(again.disk_hits, 0u);
  EXPECT_EQ(again.disk_misses, 1u);
  EXPECT_EQ(BuildOnFreshDevice(dir.Options()).disk_hits, 1u) << "the entry was not replaced";
}

}  // namespace
}  // namespace tilec::testing

namespace tilec::testing {
namespace {

// OpenCL: the program binary of the first device's build is what a second
// device (a new context, as in a second process) builds from.
hal::KernelCacheStats BuildOnFreshOpenClDevice(const hal::KernelCacheOptions& options) {
  std::vector<std::string> ids = hal::ListDeviceIds();
  auto it = std::find_if(ids.begin(), ids.end(), [](const std::string& id) { return id.rfind("opencl:", 0) == 0; });
  if (it == ids.end()) return {};
  return BuildWithCache(hal::OpenDevice(*it), options);
}

TEST(OpenClDiskCache, SecondDeviceBuildsFromTheBinary) {
  if (!DeviceFor("opencl")) GTEST_SKIP() << "no OpenCL device";
  CacheDir dir;
  hal::KernelCacheStats first = BuildOnFreshOpenClDevice(dir.Options());
  EXPECT_EQ(first.disk_hits, 0u);
  EXPECT_EQ(first.disk_misses, 1u);
  hal::KernelCacheStats second = BuildOnFreshOpenClDevice(dir.Options());
  EXPECT_EQ(second.disk_hits, 1u);
  EXPECT_EQ(second.disk_misses, 0u);
  EXPECT_EQ(BuildOnFreshOpenClDevice(dir.Options("another version")).disk_hits, 0u);
}

}  // namespace
}  // namespace tilec::testing
