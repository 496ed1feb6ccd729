#include "runtime/settings.h"

#include <tilec/tilec.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
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
  TuningCacheOptions& t = s.tuning_cache;
  t.version = c.version;
  t.path = get("TILEC_TUNING_CACHE_FILE");
  if (t.path.empty() && !c.dir.empty()) t.path = c.dir + "/tuning.jsonl";
  t.enabled = !t.path.empty() && get("TILEC_TUNING_CACHE") != "0";
  if (std::string tune = get("TILEC_TUNE"); !tune.empty()) {
    double seconds = -1;
    auto [end, ec] = std::from_chars(tune.data(), tune.data() + tune.size(), seconds);
    if (ec != std::errc() || end != tune.data() + tune.size() || !(seconds >= 0) || seconds > 86400)
      TILEC_USER_ERROR("TILEC_TUNE='{}' is not a tuning budget in seconds (0 to 86400)", tune);
    s.tune_budget_s = seconds;
  }
  if (std::string images = get("TILEC_CL_IMAGES"); !images.empty()) {
    bool known = false;
    for (hal::ImageAccess a : {hal::ImageAccess::kAuto, hal::ImageAccess::kSampler, hal::ImageAccess::kLinear}) {
      if (images == hal::Name(a)) s.device.cl_images = a, known = true;
    }
    if (!known) TILEC_USER_ERROR("TILEC_CL_IMAGES='{}' is not one of auto, sampler, linear", images);
  }
  s.device.cpu = get("TILEC_CPU");
  return s;
}

const RuntimeSettings& ProcessSettings() {
  static const RuntimeSettings settings = SettingsFromEnvironment([](const char* n) { return std::getenv(n); });
  return settings;
}

std::unique_ptr<hal::Device> OpenDevice(const std::string& id, const std::string& cpu) {
  hal::DeviceOptions options = ProcessSettings().device;
  if (!cpu.empty()) options.cpu = cpu;
  return hal::OpenDevice(id, options);
}

const TuningCache& ProcessTuningCache() {
  static const TuningCache cache(ProcessSettings().tuning_cache);
  return cache;
}

void NoticeOnce(const std::string& notice) {
  static std::mutex mutex;
  static std::set<std::string> printed;
  std::lock_guard<std::mutex> lock(mutex);
  if (printed.insert(notice).second) std::fprintf(stderr, "tilec: note: %s\n", notice.c_str());
}

std::map<std::string, compiler::KernelConfig> ProcessTunedConfigs(const hal::Device& device) {
  TuningLookup lookup = ProcessTuningCache().Load(DeviceFingerprint(device));
  for (const std::string& n : lookup.notices) NoticeOnce(n);
  return TunedConfigs(lookup);
}

std::shared_ptr<const hal::KernelCache> ProcessKernelCache() {
  static const auto cache = std::make_shared<const hal::KernelCache>(ProcessSettings().kernel_cache);
  return cache;
}

}  // namespace tilec::runtime
