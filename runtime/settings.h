// The runtime's settings from the environment, read once per process and
// handed down as typed options (no stage below reads the environment):
//
//   TILEC_CACHE=0            disables the disk cache of compiled kernels
//   TILEC_CACHE_DIR=DIR      its directory (default $XDG_CACHE_HOME/tilec,
//                            else $HOME/.cache/tilec; none without either)
//   TILEC_CACHE_MAX_MB=N     its size bound (default 512)
//   TILEC_TUNING_CACHE=0     disables the tuning cache (tuning_cache.h)
//   TILEC_TUNING_CACHE_FILE=PATH  its file (default tuning.jsonl in the
//                            cache directory above)
//   TILEC_TUNE=SECONDS       tune every program on first use, within this
//                            budget (runtime/tuner.h; default 0: never)
//   TILEC_CL_IMAGES=auto|sampler|linear  how OpenCL kernels access image
//                            tensors (hal::ImageAccess; default auto)
//   TILEC_CPU=NAME           the CPU kernels are planned and compiled for
//                            (hal::DeviceOptions::cpu; default the host)
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "compiler/pipeline.h"
#include "hal/hal.h"
#include "hal/kernel_cache.h"
#include "runtime/tuning_cache.h"

namespace tilec::runtime {

struct RuntimeSettings {
  hal::KernelCacheOptions kernel_cache;
  TuningCacheOptions tuning_cache;
  // > 0: Program::Compile tunes the kernels the tuning cache does not know
  // yet, within this many seconds, before compiling (off by default).
  double tune_budget_s = 0;
  // What every device the runtime and the tools open gets.
  hal::DeviceOptions device;
};

// The settings `getenv` describes (a parameter, so tests need not touch the
// real environment). UserError for a malformed TILEC_CACHE_MAX_MB, TILEC_TUNE
// or TILEC_CL_IMAGES.
RuntimeSettings SettingsFromEnvironment(const std::function<const char*(const char*)>& getenv);

// This process's settings, read from the environment on first use.
const RuntimeSettings& ProcessSettings();

// hal::OpenDevice with this process's device options; a non-empty `cpu`
// replaces TILEC_CPU's.
std::unique_ptr<hal::Device> OpenDevice(const std::string& id, const std::string& cpu = "");

// The disk cache every device opened through OpenSharedDevice uses.
std::shared_ptr<const hal::KernelCache> ProcessKernelCache();

// The tuning cache of this process's settings.
const TuningCache& ProcessTuningCache();

// The tuned configurations the process's tuning cache holds for `device`
// (read again on every call: `tilec tune` may have added some). Its notices
// (corrupt lines, records of another device or version) go to stderr, each
// once per process.
std::map<std::string, compiler::KernelConfig> ProcessTunedConfigs(const hal::Device& device);

// Prints `notice` to stderr as "tilec: note: …" unless this process printed
// it already.
void NoticeOnce(const std::string& notice);

}  // namespace tilec::runtime
