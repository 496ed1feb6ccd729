// The tuning cache on the command lines of compile, run and bench (their
// `--no-tuning-cache` is a kernel option, common.h, and runtime::Program
// applies the cache): the -v log of the tuned configurations a compile
// applied (runtime/tuning_cache.h).
#pragma once

#include <CLI/CLI.hpp>

#include "compiler/pipeline.h"
#include "tools/tilec/common.h"

namespace tilec::tools {

// At -v: one line per kernel compiled with a tuned configuration,
// "tilec: kernel_0: tuned configuration from the tuning cache: tile [1, 8, 8, 4] (signature …)".
void LogTunedKernels(const GlobalOptions& global, const compiler::CompiledProgram& compiled);

}  // namespace tilec::tools
