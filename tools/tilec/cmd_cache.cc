// `tilec cache info|list|clear`: the disk cache of compiled kernels (its
// directory and switches come from TILEC_CACHE, TILEC_CACHE_DIR,
// XDG_CACHE_HOME) and the tuning cache (TILEC_TUNING_CACHE_FILE,
// TILEC_TUNING_CACHE; see runtime/settings.h).
#include <filesystem>
#include <fstream>
#include <memory>
#include <system_error>

#include "runtime/settings.h"
#include "tools/tilec/common.h"

namespace tilec::tools {
namespace {

void PrintInfo(const hal::KernelCache& cache) {
  const hal::KernelCacheOptions& o = cache.options();
  std::vector<hal::KernelCacheEntry> entries = cache.List();
  uint64_t total = 0;
  for (const hal::KernelCacheEntry& e : entries) total += e.bytes;
  fmt::print("  directory: {}\n", o.dir.empty() ? "(none: set TILEC_CACHE_DIR, XDG_CACHE_HOME or HOME)" : o.dir);
  fmt::print("  enabled: {}\n", o.enabled ? "yes" : "no (TILEC_CACHE=0)");
  fmt::print("  entries: {}\n", entries.size());
  fmt::print("  size: {} bytes of at most {} (TILEC_CACHE_MAX_MB)\n", total, o.max_bytes);
  fmt::print("  tilec version in keys: {}\n", o.version);
}

// Lines of the tuning cache's file (one record each); 0 when it is absent.
int64_t TuningRecords(const std::string& path) {
  std::ifstream in(path);
  int64_t lines = 0;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) ++lines;
  return lines;
}

void PrintTuningInfo(const runtime::TuningCacheOptions& t) {
  fmt::print("tuning cache (the winners of `tilec tune`, used by every compile unless --no-tuning-cache):\n");
  fmt::print("  file: {}\n", t.path.empty() ? "(none: set TILEC_TUNING_CACHE_FILE, TILEC_CACHE_DIR or HOME)" : t.path);
  fmt::print("  enabled: {}\n", t.enabled ? "yes" : "no (TILEC_TUNING_CACHE=0)");
  fmt::print("  records: {}\n", t.path.empty() ? 0 : TuningRecords(t.path));
}

// Deletes the tuning cache's file; the records it held.
int64_t ClearTuning(const std::string& path) {
  if (path.empty()) return 0;
  int64_t records = TuningRecords(path);
  std::error_code ec;
  std::filesystem::remove(path, ec);
  if (ec) TILEC_USER_ERROR("cannot delete the tuning cache '{}': {}", path, ec.message());
  return records;
}

}  // namespace

Command AddCacheCommand(CLI::App& parent, const GlobalOptions& global) {
  CLI::App* app = parent.add_subcommand(
      "cache",
      "Show or clear the caches: compiled kernels (TILEC_CACHE_DIR, TILEC_CACHE=0) and tuning records "
      "(TILEC_TUNING_CACHE_FILE, TILEC_TUNING_CACHE=0)");
  app->footer(Footer(
      "Examples:\n  tilec cache info\n  tilec cache list\n  tilec cache clear\n  tilec cache clear --tuning"));
  app->require_subcommand(0, 1);
  CLI::App* info = app->add_subcommand("info", "Both caches: where they are, whether on, their entries and size");
  CLI::App* list = app->add_subcommand("list", "One line per compiled kernel: name, bytes, seconds since last use");
  CLI::App* clear = app->add_subcommand(
      "clear", "Delete the compiled kernels (--kernels, the default), the tuning records (--tuning), or both (--all)");
  auto kernels = std::make_shared<bool>(false), tuning = std::make_shared<bool>(false),
       all = std::make_shared<bool>(false);
  clear->add_flag("--kernels", *kernels, "The disk cache of compiled kernels (the default)");
  clear->add_flag("--tuning", *tuning, "The tuning records of `tilec tune` (compiles fall back to the cost model)");
  clear->add_flag("--all", *all, "Both");
  return {app, [=] {
            if (!info->parsed() && !list->parsed() && !clear->parsed())
              TILEC_USER_ERROR(
                  "tilec cache: say what to do: info (both caches), list (the compiled kernels), clear "
                  "[--kernels|--tuning|--all]");
            const runtime::RuntimeSettings& settings = runtime::ProcessSettings();
            hal::KernelCache cache(settings.kernel_cache);
            if (info->parsed()) {
              fmt::print("kernel cache (compiled kernels, reused across processes):\n");
              PrintInfo(cache);
              PrintTuningInfo(settings.tuning_cache);
            }
            if (list->parsed())
              for (const hal::KernelCacheEntry& e : cache.List())
                fmt::print("{}  {:>10} bytes  {:>8} s\n", e.name, e.bytes, e.age_seconds);
            if (clear->parsed()) {
              if (*all || !*tuning || *kernels)
                fmt::print("removed {} compiled kernels from {}\n", cache.Clear(), cache.options().dir);
              if (*all || *tuning)
                fmt::print("removed {} tuning records ({})\n", ClearTuning(settings.tuning_cache.path),
                           settings.tuning_cache.path.empty() ? "no file" : settings.tuning_cache.path);
            }
          }};
}

}  // namespace tilec::tools
