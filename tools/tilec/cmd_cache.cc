// `tilec cache info|list|clear`: the disk cache of compiled kernels (its
// directory and switches come from TILEC_CACHE, TILEC_CACHE_DIR,
// XDG_CACHE_HOME; see runtime/settings.h).
#include <memory>

#include "runtime/settings.h"
#include "tools/tilec/common.h"

namespace tilec::tools {
namespace {

void PrintInfo(const hal::KernelCache& cache) {
  const hal::KernelCacheOptions& o = cache.options();
  std::vector<hal::KernelCacheEntry> entries = cache.List();
  uint64_t total = 0;
  for (const hal::KernelCacheEntry& e : entries) total += e.bytes;
  fmt::print("directory: {}\n", o.dir.empty() ? "(none: set TILEC_CACHE_DIR, XDG_CACHE_HOME or HOME)" : o.dir);
  fmt::print("enabled: {}\n", o.enabled ? "yes" : "no (TILEC_CACHE=0)");
  fmt::print("entries: {}\n", entries.size());
  fmt::print("size: {} bytes of at most {} (TILEC_CACHE_MAX_MB)\n", total, o.max_bytes);
  fmt::print("tilec version in keys: {}\n", o.version);
}

}  // namespace

Command AddCacheCommand(CLI::App& parent, const GlobalOptions& global) {
  CLI::App* app = parent.add_subcommand(
      "cache", "Show or clear the disk cache of compiled kernels (TILEC_CACHE_DIR, TILEC_CACHE=0)");
  app->footer(Footer("Examples:\n  tilec cache info\n  tilec cache list\n  tilec cache clear"));
  app->require_subcommand(1);
  CLI::App* info = app->add_subcommand("info", "Directory, state, entry count and size");
  CLI::App* list = app->add_subcommand("list", "One line per entry: name, bytes, seconds since last use");
  CLI::App* clear = app->add_subcommand("clear", "Delete every entry");
  return {app, [=] {
            hal::KernelCache cache(runtime::ProcessSettings().kernel_cache);
            if (info->parsed()) PrintInfo(cache);
            if (list->parsed())
              for (const hal::KernelCacheEntry& e : cache.List())
                fmt::print("{}  {:>10} bytes  {:>8} s\n", e.name, e.bytes, e.age_seconds);
            if (clear->parsed()) fmt::print("removed {} entries from {}\n", cache.Clear(), cache.options().dir);
          }};
}

}  // namespace tilec::tools
