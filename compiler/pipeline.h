// The kernel pipeline: a bound Program -> compiled kernels (sem functions
// with their launch geometry), as one readable list of stages in
// pipeline.cc:
//
//   Lower        program -> kernels (fusion)               kernel.h / lower.h
//   SearchTiles  per flat kernel: ranked tile candidates   tile_search.h
//   Generate     per kernel: thread and read plans, sem    codegen.h
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

#include "compiler/codegen.h"
#include "compiler/hardware_model.h"
#include "compiler/kernel.h"
#include "compiler/lower.h"
#include "compiler/tile_search.h"
#include "tile_lang/program.h"

namespace tilec::compiler {

struct CompileOptions {
  HardwareModel hw;
  LowerOptions lower;
  // Tile search for every flat kernel (forced_tile is ignored here: use
  // forced_tiles, which names the kernel).
  TileSearchOptions search;
  // Force a kernel's tile: kernel name ("kernel_0") -> one size per index.
  std::map<std::string, std::vector<int64_t>> forced_tiles;
  // Use the `rank`-th best candidate instead of the best (autotuning).
  std::map<std::string, int> candidate_rank;
  // Stage input tiles in local memory; default: hw.local_memory_managed.
  std::optional<bool> use_local;
  // Without local staging, use the vector form (gen_vector.cc) for the
  // kernels that fit it; off: the flat generator for every kernel.
  bool vectorize = true;
  // Vector form: force the register block's rows (autotuning); 0: automatic.
  int64_t vector_rows = 0;
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
