// The tuning cache on the command lines of compile, run and bench:
// `--no-tuning-cache`, and the -v log of the tuned configurations a compile
// applied (runtime/tuning_cache.h).
#pragma once

#include <CLI/CLI.hpp>

#include "compiler/pipeline.h"
#include "hal/hal.h"
#include "tools/tilec/common.h"

namespace tilec::tools {

// Adds `--no-tuning-cache` to `app`.
void AddNoTuningCacheFlag(CLI::App* app, bool& flag);

// Sets options.tuned: empty with `no_tuning_cache`, else what the process's
// tuning cache holds for `device` (its notices printed once).
void ApplyTuningCache(compiler::CompileOptions& options, const hal::Device& device, bool no_tuning_cache);

// At -v: one line per kernel compiled with a tuned configuration,
// "tilec: kernel_0: tuned configuration from the tuning cache: tile [1, 8, 8, 4] (signature …)".
void LogTunedKernels(const GlobalOptions& global, const compiler::CompiledProgram& compiled);

// `tilec run` runs through the target registry (targets.h), whose functions
// take no options: run sets these first.
struct RunTuning {
  bool no_tuning_cache = false;
  int verbose = 0;
};
RunTuning& ProcessRunTuning();

}  // namespace tilec::tools
