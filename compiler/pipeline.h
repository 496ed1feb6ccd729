// The kernel pipeline: a bound Program -> compiled kernels (sem functions
// with their launch geometry), as one list of passes in pipeline.cc:
//
//   hoist     CPU forms: per-channel work moved    passes/hoist_invariants.h
//             ahead of the contractions (bound program)
//   layouts   layouts chosen, relayouts inserted    passes/choose_layouts.h
//             (bound program)
//   kernels   program -> kernels, fusion            passes/lower.h (ir/kernel.h)
//   per kernel, in order:
//   plan      the kernel's form chosen and planned,  forms/forms.h
//             its sem function built; a flat-form
//             kernel's tile first (pass "tiles",     schedule/tile_search.h)
//   sem       the sem simplifier                     sem/simplify.h
//
// One runner gives every pass its progress report, its timing, its dump
// (`print_after`, `tilec compile --emit PASS`) and the verifier of the IR
// it produced (lang::VerifyDataflow, Verify(KernelPlan), sem::Verify):
// passes neither print, time nor verify. Per-kernel settings are resolved
// once, by ResolveConfig (config.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/config.h"
#include "compiler/forms/forms.h"
#include "compiler/ir/kernel.h"
#include "compiler/schedule/tile_search.h"
#include "tile_lang/program.h"

namespace tilec::compiler {

struct CompiledKernel {
  KernelSpec spec;
  std::optional<TileSearchResult> search;  // flat-form kernels
  std::vector<int64_t> tile;               // flat-form kernels: the tile used
  std::string signature;                   // flat kernels: SignKernel(spec).hash
  // Flat kernels: the configuration applied (kernel_config, or a tuned one),
  // where the kernel's settings came from, and whether from `tuned` (the
  // tuning cache).
  std::optional<KernelConfig> config;
  ConfigSource source = ConfigSource::Model;
  bool tuned = false;
  GeneratedKernel code;                    // simplified and verified
};

struct StageTime {
  std::string stage;
  double ms = 0;
};

struct CompiledProgram {
  lang::Program program;
  std::vector<CompiledKernel> kernels;
  std::vector<std::string> temporaries;
  std::vector<StageTime> timings;
  // Settings the compile did not use, one line each naming the kernel and
  // the setting (a flat-form --tile on a kernel in the vector form).
  std::vector<std::string> warnings;

  sem::Module Module() const;  // every kernel's function
};

// Pre: `program` came from Bind; options.hw passes Validate.
// Post: kernels in execution order; each kernel's parameters are its
// spec.outputs then spec.inputs buffers.
CompiledProgram CompileProgram(const lang::Program& program, const CompileOptions& options);

// UserError unless `compiled` has the kernel a setting names; `setting` is
// how the caller spelled it ("--tile kernel_7", "options.tiles kernel_7").
void CheckKernelExists(const CompiledProgram& compiled, const std::string& setting, const std::string& kernel);

// The passes in order: the names print_after, the progress hook and the
// timings use.
const std::vector<std::string>& StageNames();

}  // namespace tilec::compiler
