#include "runtime/settings.h"

#include <tilec/tilec.h>

#include <charconv>
#include <cstdlib>
#include <string>

#include "support/error.h"

namespace tilec::runtime {

RuntimeSettings SettingsFromEnvironment(const std::function<const char*(const char*)>& getenv) {
  auto get = [&](const char* name) -> std::string {
    const char* v = getenv(name);
    return v ? v : "";
  };
  RuntimeSettings s;
  hal::KernelCacheOptions& c = s.kernel_cache;
  c.version = fmt::format("{}.{}.{}", TILEC_VERSION_MAJOR, TILEC_VERSION_MINOR, TILEC_VERSION_PATCH);
  if (std::string dir = get("TILEC_CACHE_DIR"); !dir.empty()) {
    c.dir = dir;
  } else if (std::string xdg = get("XDG_CACHE_HOME"); !xdg.empty()) {
    c.dir = xdg + "/tilec";
  } else if (std::string home = get("HOME"); !home.empty()) {
    c.dir = home + "/.cache/tilec";
  }
  c.enabled = !c.dir.empty() && get("TILEC_CACHE") != "0";
  if (std::string mb = get("TILEC_CACHE_MAX_MB"); !mb.empty()) {
    uint64_t value = 0;
    auto [end, ec] = std::from_chars(mb.data(), mb.data() + mb.size(), value);
    if (ec != std::errc() || end != mb.data() + mb.size() || value > (uint64_t{1} << 40))
      TILEC_USER_ERROR("TILEC_CACHE_MAX_MB='{}' is not a size in megabytes", mb);
    c.max_bytes = value << 20;
  }
  return s;
}

const RuntimeSettings& ProcessSettings() {
  static const RuntimeSettings settings = SettingsFromEnvironment([](const char* n) { return std::getenv(n); });
  return settings;
}

std::shared_ptr<const hal::KernelCache> ProcessKernelCache() {
  static const auto cache = std::make_shared<const hal::KernelCache>(ProcessSettings().kernel_cache);
  return cache;
}

}  // namespace tilec::runtime
