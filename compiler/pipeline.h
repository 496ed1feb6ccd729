// The kernel pipeline: a bound Program -> compiled kernels (sem functions
// with their launch geometry), as one readable list of stages in
// pipeline.cc:
//
//   Lower        ChooseLayouts (layouts chosen, relayouts   passes/choose_layouts.h
//                inserted), then program -> kernels (fusion) ir/kernel.h / passes/lower.h
//   SearchTiles  per flat kernel: ranked tile candidates   schedule/tile_search.h
//   Generate     per kernel: thread and read plans, sem    forms/forms.h
//   Simplify     per kernel: the sem simplifier            sem/simplify.h
//   Verify       per kernel: sem::Verify                   sem/verify.h
//
// A small wrapper gives every stage its timing and `print_after` dump, so
// stages themselves neither print nor time.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/passes/choose_layouts.h"
#include "compiler/forms/forms.h"
#include "compiler/schedule/hardware_model.h"
#include "compiler/ir/kernel.h"
#include "compiler/passes/lower.h"
#include "compiler/schedule/tile_search.h"
#include "tile_lang/program.h"

namespace tilec::compiler {

// One flat kernel's form knobs: what `tilec tune` searches and the tuning
// cache (runtime/tuning_cache.h) remembers. Unset fields keep the
// program-wide choice (CompileOptions).
struct KernelConfig {
  std::vector<int64_t> tile;      // one size per flat index; empty: the cost model's pick
  std::optional<bool> use_local;  // stage inputs in local memory
  std::optional<bool> vector;     // the vector form (where the kernel fits it)
  int64_t vector_rows = 0;        // vector form: register block rows; 0: automatic
  // Flat form: the work-group shape, threads along each flat index (1 for
  // reductions; CheckWorkGroup); empty: the cost model's (AssignOutputThreads).
  std::vector<int64_t> work_group;
  bool operator==(const KernelConfig&) const = default;
};

// "tile [8, 32, 1] local 0 vector 1 rows 4 group [1, 16, 1]" (only the
// fields that are set; "default" for none).
std::string ToString(const KernelConfig& config);

struct CompileOptions {
  HardwareModel hw;
  LowerOptions lower;
  // Layout choice for `any` outputs and temporaries, and relayouts where a
  // kernel is much faster in another layout (passes/choose_layouts.h).
  ChooseLayoutsOptions layouts;
  // Tile search for every flat kernel (forced_tile is ignored here: use
  // forced_tiles, which names the kernel).
  TileSearchOptions search;
  // Force a kernel's tile: kernel name ("kernel_0") -> one size per index.
  std::map<std::string, std::vector<int64_t>> forced_tiles;
  // Use the `rank`-th best candidate instead of the best (autotuning).
  std::map<std::string, int> candidate_rank;
  // Stage input tiles in local memory; default: hw.local_memory_managed.
  std::optional<bool> use_local;
  // Without local staging, use the vector form (forms/vector.cc) for the
  // kernels that fit it; off: the flat generator for every kernel.
  bool vectorize = true;
  // Vector form: force the register block's rows (autotuning); 0: automatic.
  int64_t vector_rows = 0;
  // Flat form: a kernel's work-group shape by kernel name (KernelConfig::
  // work_group; `--work-group`). One that does not fit the kernel's tile
  // (CheckWorkGroup) is a UserError.
  std::map<std::string, std::vector<int64_t>> work_groups;
  // A kernel's configuration by kernel name ("kernel_0"), as the tuner tries
  // candidates; takes precedence over forced_tiles, candidate_rank and tuned.
  // A tile that does not fit the kernel is a UserError.
  std::map<std::string, KernelConfig> kernel_config;
  // Tuned configurations by kernel signature hash (ir/kernel_signature.h), their
  // tiles in the signature's canonical index order (FromCanonical), applied to every kernel with that signature unless forced_tiles,
  // candidate_rank or kernel_config name it. A tile that does not fit is
  // ignored. nullopt: runtime::Program::Compile fills it from the process's
  // tuning cache (runtime/tuning_cache.h); an empty map applies none
  // (`--no-tuning-cache`).
  std::optional<std::map<std::string, KernelConfig>> tuned;
  bool simplify = true;
  // Stages whose output to print ("lower", "tiles", "plan", "sem"), and the
  // sink that receives (stage, text). Without a sink nothing is printed.
  std::set<std::string> print_after;
  std::function<void(const std::string& stage, const std::string& text)> print_sink;
  // Told before each stage starts: the stage, and for per-kernel stages the
  // kernel's index and the kernel count (0 of 0 for "lower"). For progress
  // displays; it must not throw.
  std::function<void(const std::string& stage, size_t kernel, size_t kernels)> progress;
};

struct CompiledKernel {
  KernelSpec spec;
  std::optional<TileSearchResult> search;  // flat kernels
  std::vector<int64_t> tile;               // flat kernels: the tile used
  std::string signature;                   // flat kernels: SignKernel(spec).hash
  // Flat kernels: the configuration applied (kernel_config, or a tuned one),
  // and whether it came from `tuned` (the tuning cache).
  std::optional<KernelConfig> config;
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

  sem::Module Module() const;  // every kernel's function
};

// Pre: `program` came from Bind; options.hw passes Validate.
// Post: kernels in execution order; each kernel's parameters are its
// spec.outputs then spec.inputs buffers.
CompiledProgram CompileProgram(const lang::Program& program, const CompileOptions& options);

// Names of the stages print_after accepts.
const std::vector<std::string>& StageNames();

}  // namespace tilec::compiler
