#include "tools/tilec/tuning_flags.h"

namespace tilec::tools {

void LogTunedKernels(const GlobalOptions& global, const compiler::CompiledProgram& compiled) {
  if (global.verbose < 1) return;
  for (const compiler::CompiledKernel& k : compiled.kernels)
    if (k.tuned && k.config)
      fmt::print(stderr, "tilec: {}: tuned configuration from the tuning cache: {} (signature {})\n",
                 k.spec.name, compiler::ToString(*k.config), k.signature);
}

}  // namespace tilec::tools
