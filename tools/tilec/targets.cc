// The registry of `tilec run --target` backends.
#include "tools/tilec/targets.h"

#include <fmt/format.h>

#include <vector>

#include "support/error.h"
#include "hal/hal.h"
#include "runtime/program.h"
#include "runtime/program_cache.h"
#include "tile_lang/evaluator.h"
#include "tools/tilec/tuning_flags.h"

namespace tilec::tools {
namespace {

// The tuning cache as `tilec run` was told (--no-tuning-cache, -v).
compiler::CompileOptions TuningOptions() {
  compiler::CompileOptions options;
  if (ProcessRunTuning().no_tuning_cache) options.tuned = std::map<std::string, compiler::KernelConfig>{};
  return options;
}

void LogTuned(const runtime::Program& compiled) {
  GlobalOptions global;
  global.verbose = ProcessRunTuning().verbose;
  LogTunedKernels(global, compiled.compiled());
}

// Compiles for the default OpenCL device and runs.
std::map<std::string, lang::Tensor> RunOpenCl(const lang::Program& program,
                                              const std::map<std::string, lang::Tensor>& inputs) {
  std::shared_ptr<hal::Device> device = runtime::OpenSharedDevice("opencl");
  runtime::Program compiled = runtime::Program::Compile(program, device, TuningOptions());
  LogTuned(compiled);
  return compiled.Run(inputs);
}

// Compiles for the host CPU through LLVM and runs on all its cores.
std::map<std::string, lang::Tensor> RunLlvm(const lang::Program& program,
                                            const std::map<std::string, lang::Tensor>& inputs) {
  std::shared_ptr<hal::Device> device = runtime::OpenSharedDevice("llvm");
  runtime::Program compiled = runtime::Program::Compile(program, device, TuningOptions());
  LogTuned(compiled);
  return compiled.Run(inputs);
}

// The registry: adding a backend is one line here.
constexpr Target kTargets[] = {
    {"ref", "the reference evaluator (plain loops; slow, exact)", &lang::Evaluate},
    {"opencl", "generated OpenCL kernels on the first OpenCL device", &RunOpenCl},
    {"llvm", "generated LLVM kernels on the host CPU, all cores", &RunLlvm},
};

}  // namespace

std::span<const Target> Targets() { return kTargets; }

const Target& FindTarget(std::string_view name) {
  std::vector<std::string_view> names;
  for (const Target& t : kTargets) {
    if (t.name == name) return t;
    names.push_back(t.name);
  }
  TILEC_USER_ERROR("unknown target '{}' (available: {})", name, fmt::join(names, ", "));
}

}  // namespace tilec::tools
