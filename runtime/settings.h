// The runtime's settings from the environment, read once per process and
// handed down as typed options (no stage below reads the environment):
//
//   TILEC_CACHE=0            disables the disk cache of compiled kernels
//   TILEC_CACHE_DIR=DIR      its directory (default $XDG_CACHE_HOME/tilec,
//                            else $HOME/.cache/tilec; none without either)
//   TILEC_CACHE_MAX_MB=N     its size bound (default 512)
#pragma once

#include <functional>
#include <memory>

#include "hal/kernel_cache.h"

namespace tilec::runtime {

struct RuntimeSettings {
  hal::KernelCacheOptions kernel_cache;
};

// The settings `getenv` describes (a parameter, so tests need not touch the
// real environment). UserError for a malformed TILEC_CACHE_MAX_MB.
RuntimeSettings SettingsFromEnvironment(const std::function<const char*(const char*)>& getenv);

// This process's settings, read from the environment on first use.
const RuntimeSettings& ProcessSettings();

// The disk cache every device opened through OpenSharedDevice uses.
std::shared_ptr<const hal::KernelCache> ProcessKernelCache();

}  // namespace tilec::runtime
