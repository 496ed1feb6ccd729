// The settings of a compile and the one place their precedence is decided.
//
// CompileOptions holds what a client asks for: the hardware model, the
// passes' options, and the per-kernel knobs (--tile, --rank, --work-group,
// the tuner's configurations, the tuning cache's). Two functions turn them
// into what the passes read:
//
//   DeriveOptions   the program-wide options that follow from the hardware
//                   model (CPU forms or the GPU form, Lower's vector packing,
//                   row-group and split thresholds)
//   ResolveConfig   one kernel's configuration, with where it came from
//                   (ConfigSource): by name from the tuner, forced by a flag,
//                   a ranked candidate, the tuning cache by signature, or the
//                   model's pick
//
// Nothing else in the compiler reads CompileOptions' per-kernel maps.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/forms/forms.h"
#include "compiler/ir/kernel.h"
#include "compiler/ir/kernel_signature.h"
#include "compiler/passes/choose_layouts.h"
#include "compiler/passes/lower.h"
#include "compiler/schedule/hardware_model.h"
#include "compiler/schedule/tile_search.h"

namespace tilec::compiler {

// One flat kernel's form knobs: what `tilec tune` searches and the tuning
// cache (runtime/tuning_cache.h) remembers. Unset fields keep the
// program-wide choice (CompileOptions).
struct KernelConfig {
  std::vector<int64_t> tile;      // one size per flat index; empty: the cost model's pick
  std::optional<bool> use_local;  // stage inputs in local memory
  std::optional<bool> vector;     // the CPU forms (where the kernel fits one)
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
  // Tile search for every flat-form kernel (forced_tile is ignored here: use
  // forced_tiles, which names the kernel).
  TileSearchOptions search;
  // Force a kernel's tile: kernel name ("kernel_0") -> one size per index.
  std::map<std::string, std::vector<int64_t>> forced_tiles;
  // Use the `rank`-th best candidate instead of the best (autotuning).
  std::map<std::string, int> candidate_rank;
  // Stage input tiles in local memory; default: hw.local_memory_managed.
  std::optional<bool> use_local;
  // Without local staging, use the CPU forms (vector, reduce, transpose:
  // docs/cpu-forms.md) for the kernels that fit one; off: the flat form for
  // every flat kernel.
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
  // Tuned configurations by kernel signature hash (ir/kernel_signature.h),
  // their tiles in the signature's canonical index order (FromCanonical),
  // applied to every kernel with that signature unless forced_tiles,
  // candidate_rank or kernel_config name it. A tile that does not fit is
  // ignored. nullopt: runtime::Program::Compile fills it from the process's
  // tuning cache (runtime/tuning_cache.h); an empty map applies none
  // (`--no-tuning-cache`).
  std::optional<std::map<std::string, KernelConfig>> tuned;
  bool simplify = true;
  // Passes whose output to print (StageNames(): "hoist", "layouts",
  // "kernels", "tiles", "plan", "sem"), and the sink that receives (pass,
  // text). Without a sink nothing is printed.
  std::set<std::string> print_after;
  std::function<void(const std::string& stage, const std::string& text)> print_sink;
  // Told before each pass starts: the pass, and for per-kernel passes the
  // kernel's index and the kernel count (0 of 0 for the program's passes).
  // For progress displays; it must not throw.
  std::function<void(const std::string& stage, size_t kernel, size_t kernels)> progress;
};

// The program-wide options the passes read, derived from CompileOptions and
// its hardware model.
struct DerivedOptions {
  // The CPU forms are tried (no local staging, vectorize): hoisting and
  // Lower's packing for the vector form follow.
  bool cpu_forms = false;
  LowerOptions lower;
  CodegenOptions codegen;
};
DerivedOptions DeriveOptions(const CompileOptions& options);

// Where a kernel's configuration came from, in precedence order.
enum class ConfigSource {
  Tuner,   // kernel_config: the tuner's trial (or an API client), by name
  Forced,  // forced_tiles / work_groups: --tile, --work-group
  Rank,    // candidate_rank: --rank
  Cache,   // tuned: the tuning cache, by kernel signature
  Model,   // nothing set: the cost model's and the forms' own choices
};
const char* Name(ConfigSource source);

// One kernel's resolved configuration.
struct ResolvedConfig {
  ConfigSource source = ConfigSource::Model;
  // Set by the tuner or the tuning cache (tiles and shapes in the kernel's
  // own index order).
  std::optional<KernelConfig> config;
  CodegenOptions codegen;                          // what the forms read
  std::optional<std::vector<int64_t>> tile;        // forced tile (flat form)
  int rank = 0;                                    // candidate to take (flat form)
  std::vector<int64_t> work_group;                 // given shape (flat form)
  // Where the work-group shape came from, for its error when it does not fit
  // the tile; empty: from the tuning cache, dropped then.
  std::string work_group_origin;
  // The flat-form settings a user gave for this kernel by name, as flags
  // ("--tile kernel_0=8,32,1"), for the warning when the kernel gets
  // another form.
  std::vector<std::string> flat_settings;
};

// Pre: spec is a flat kernel (Contraction, Elementwise, Fill) and signature
// is SignKernel(spec). A tuned configuration that does not fit the kernel is
// dropped (the cache may be older than the compiler); the others are
// checked where they are used (SearchTiles, CheckWorkGroup: UserError).
ResolvedConfig ResolveConfig(const KernelSpec& spec, const KernelSignature& signature,
                             const CompileOptions& options, const DerivedOptions& derived);

// The tile of a flat-form kernel from its ranked candidates: the rank's, or
// the best (a forced tile is the only candidate). UserError for a rank the
// search did not reach.
std::vector<int64_t> ChooseTile(const KernelSpec& spec, const TileSearchResult& search,
                                const ResolvedConfig& config);

// The work-group shape of a flat-form kernel whose tile is chosen: the
// configuration's, else the forced one; empty: the cost model's. A cached
// one that does not fit the tile is dropped; a named one is a UserError.
std::vector<int64_t> WorkGroupFor(const KernelSpec& spec, const std::vector<int64_t>& tile,
                                  const HardwareModel& hw, ResolvedConfig& config);

}  // namespace tilec::compiler
