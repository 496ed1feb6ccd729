#include "tools/tilec/tuning_flags.h"

#include "runtime/settings.h"

namespace tilec::tools {

void ApplyTuningCache(compiler::CompileOptions& options, const hal::Device& device, bool no_tuning_cache) {
  if (no_tuning_cache) {
    options.tuned = std::map<std::string, compiler::KernelConfig>{};
  } else {
    options.tuned = runtime::ProcessTunedConfigs(device);
  }
}

void LogTunedKernels(const GlobalOptions& global, const compiler::CompiledProgram& compiled) {
  if (global.verbose < 1) return;
  for (const compiler::CompiledKernel& k : compiled.kernels)
    if (k.tuned && k.config)
      fmt::print(stderr, "tilec: {}: tuned configuration from the tuning cache: {} (signature {})\n",
                 k.spec.name, compiler::ToString(*k.config), k.signature);
}

}  // namespace tilec::tools
