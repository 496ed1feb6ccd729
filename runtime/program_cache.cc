#include "runtime/program_cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>

#include "runtime/settings.h"
#include "runtime/tuner.h"
#include "support/error.h"
#include "tile_lang/binder.h"
#include "tile_lang/parser.h"
#include "tile_lang/printer.h"

namespace tilec::runtime {
namespace {

// The canonical id of a device: "llvm" -> "llvm:cpu", "opencl" -> its first device.
std::string CanonicalDeviceId(const std::string& id) {
  if (id == "llvm") return "llvm:cpu";
  if (id == "opencl") {
    std::vector<std::string> ids = hal::ListDeviceIds();
    for (const std::string& d : ids)
      if (d.rfind("opencl:", 0) == 0) return d;
  }
  return id;
}

}  // namespace

std::shared_ptr<hal::Device> OpenSharedDevice(const std::string& id, const std::string& cpu) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<hal::Device>> devices;
  std::string canonical = CanonicalDeviceId(id);
  std::string named = cpu.empty() ? ProcessSettings().device.cpu : cpu;
  std::string key = named.empty() || named == "host" ? canonical : canonical + " --cpu " + named;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = devices.find(key);
  if (it != devices.end()) return it->second;
  std::shared_ptr<hal::Device> device = OpenDevice(canonical, named);
  device->SetKernelCache(ProcessKernelCache());
  devices.emplace(key, device);
  return device;
}

std::shared_ptr<Program> ProgramCache::Compile(const CompileRequest& request,
                                               const std::shared_ptr<hal::Device>& device,
                                               bool use_cache) {
  TILEC_CHECK(request.source && device, "compile without source or device");
  lang::ast::Function function = lang::Parse(request.source);
  // Keyed by the device object: the cached program holds it, so its address
  // stays unique while the entry lives.
  std::string key = fmt::format("{}\n{}\n{}\n", static_cast<const void*>(device.get()),
                                device->id(), lang::Print(function));
  for (const auto& [name, shape] : request.shapes) key += fmt::format("{}={}\n", name, lang::ToString(shape));
  for (const auto& [name, spec] : request.layouts) key += fmt::format("{}:{}\n", name, spec);
  for (const auto& [kernel, tile] : request.tiles) key += fmt::format("{}@{}\n", kernel, fmt::join(tile, ","));
  key += request.vectorize ? "vector\n" : "flat\n";
  key += request.use_tuning_cache ? "tuned\n" : "untuned\n";
  std::vector<std::string> constants = request.constants;
  std::sort(constants.begin(), constants.end());
  constants.erase(std::unique(constants.begin(), constants.end()), constants.end());
  key += fmt::format("constants:{}\n", fmt::join(constants, ","));
  const bool lent = !constants.empty();
  if (use_cache) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    // Only the cache holds a program nobody borrowed: copies of it are made
    // here alone, under the lock, so the count cannot grow meanwhile.
    if (it != entries_.end() && (!lent || it->second.program.use_count() == 1)) {
      ++stats_.hits;
      it->second.last_use = ++clock_;
      // The last borrower's constants are not this caller's.
      if (lent) it->second.program->InvalidateConstants();
      return it->second.program;
    }
    ++stats_.misses;
  }
  // Compiled outside the lock: other programs compile at the same time.
  lang::Program bound = lang::Bind(function, request.shapes, request.layouts);
  compiler::CompileOptions options;
  options.forced_tiles = request.tiles;
  if (lent) options.lower.constants.insert(constants.begin(), constants.end());
  options.vectorize = request.vectorize;
  // No tuned configurations, or the caller's tuning budget (else TILEC_TUNE's)
  // and the tuning cache.
  if (!request.use_tuning_cache) options.tuned = std::map<std::string, compiler::KernelConfig>{};
  double budget_s = request.tune_budget_s > 0 ? request.tune_budget_s : ProcessSettings().tune_budget_s;
  ApplyTuning(bound, device, budget_s, options);
  auto program = std::make_shared<Program>(Program::Compile(bound, device, options));
  // A tile for a kernel the program does not have is the caller's mistake; a
  // tile for a kernel in another form than the flat one is not used (said once).
  for (const auto& [kernel, tile] : request.tiles)
    compiler::CheckKernelExists(program->compiled(), "options.tiles " + kernel, kernel);
  for (const std::string& w : program->compiled().warnings) NoticeOnce(w);
  if (lent) program->SetConstantInputs(constants);
  if (!use_cache) return program;
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, inserted] = entries_.emplace(key, Entry{program, ++clock_});
  // Another thread compiled it first: share that one (not a lent one, which
  // stays with its borrower: this caller keeps its own).
  if (!inserted) return lent ? program : it->second.program;
  while (entries_.size() > capacity_) {
    auto oldest = entries_.begin();
    for (auto e = entries_.begin(); e != entries_.end(); ++e)
      if (e->second.last_use < oldest->second.last_use) oldest = e;
    entries_.erase(oldest);
  }
  stats_.entries = entries_.size();
  return program;
}

ProgramCacheStats ProgramCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  ProgramCacheStats s = stats_;
  s.entries = entries_.size();
  return s;
}

void ProgramCache::Clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.clear();
}

ProgramCache& ProcessProgramCache() {
  static ProgramCache cache;
  return cache;
}

}  // namespace tilec::runtime
