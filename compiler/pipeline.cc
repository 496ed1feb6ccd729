#include "compiler/pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "compiler/passes/hoist_invariants.h"
#include "compiler/ir/kernel_signature.h"
#include "compiler/sem/printer.h"
#include "compiler/sem/simplify.h"
#include "compiler/sem/verify.h"
#include "support/error.h"

namespace tilec::compiler {
namespace {

// Runs a stage: times it, and prints its result when asked.
class StageRunner {
 public:
  StageRunner(const CompileOptions& options, std::vector<StageTime>& timings)
      : options_(options), timings_(timings) {}

  // Where the next stages run, for options.progress.
  void SetKernel(size_t kernel, size_t kernels) {
    kernel_ = kernel;
    kernels_ = kernels;
  }

  template <typename F, typename P>
  auto Run(const std::string& stage, F&& run, P&& print) {
    if (options_.progress) options_.progress(stage, kernel_, kernels_);
    auto start = std::chrono::steady_clock::now();
    auto result = run();
    std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - start;
    Add(stage, ms.count());
    if (options_.print_sink && options_.print_after.count(stage))
      options_.print_sink(stage, print(result));
    return result;
  }

 private:
  void Add(const std::string& stage, double ms) {
    for (StageTime& t : timings_)
      if (t.stage == stage) {
        t.ms += ms;
        return;
      }
    timings_.push_back({stage, ms});
  }

  const CompileOptions& options_;
  std::vector<StageTime>& timings_;
  size_t kernel_ = 0;
  size_t kernels_ = 0;
};

bool IsFlat(KernelKind k) {
  return k == KernelKind::Contraction || k == KernelKind::Elementwise || k == KernelKind::Fill;
}

std::vector<int64_t> ChooseTile(const KernelSpec& spec, const TileSearchResult& search,
                                const CompileOptions& options) {
  auto rank = options.candidate_rank.find(spec.name);
  if (rank == options.candidate_rank.end() || rank->second == 0) return search.best().tile;
  if (rank->second < 0 || rank->second >= static_cast<int>(search.ranked.size()))
    TILEC_USER_ERROR("kernel {} has {} tile candidates; candidate {} does not exist", spec.name,
                     search.ranked.size(), rank->second);
  return search.ranked[rank->second].tile;
}

bool TileFits(const FlatContraction& flat, const std::vector<int64_t>& tile) {
  if (tile.size() != flat.indices.size()) return false;
  for (size_t i = 0; i < tile.size(); ++i)
    if (tile[i] < 1 || tile[i] > flat.indices[i].range) return false;
  return true;
}

// The configuration of a flat kernel: by name, else a tuned one by signature
// (unless --tile/--rank name the kernel).
std::optional<KernelConfig> ConfigFor(const KernelSpec& spec, const KernelSignature& signature,
                                      const CompileOptions& options, bool* tuned) {
  *tuned = false;
  if (auto c = options.kernel_config.find(spec.name); c != options.kernel_config.end())
    return c->second;
  if (!options.tuned || options.forced_tiles.count(spec.name) || options.candidate_rank.count(spec.name))
    return std::nullopt;
  auto t = options.tuned->find(signature.hash);
  if (t == options.tuned->end()) return std::nullopt;
  KernelConfig config = t->second;
  if (!config.tile.empty()) {
    if (config.tile.size() != signature.order.size()) return std::nullopt;
    config.tile = FromCanonical(signature, config.tile);
    if (!TileFits(spec.flat, config.tile)) return std::nullopt;
  }
  if (!config.work_group.empty()) {
    if (config.work_group.size() != signature.order.size()) return std::nullopt;
    config.work_group = FromCanonical(signature, config.work_group);
  }
  *tuned = true;
  return config;
}

// The work-group shape of a flat kernel whose tile is chosen: its
// configuration's, else --work-group's. A tuned one that does not fit the
// tile is dropped (the cost model's then); a named one is a UserError.
std::vector<int64_t> WorkGroupFor(const KernelSpec& spec, CompiledKernel& k, const CompileOptions& options) {
  std::vector<int64_t> shape;
  std::string origin;
  if (k.config && !k.config->work_group.empty()) {
    shape = k.config->work_group;
    origin = k.tuned ? "" : fmt::format("the work-group shape of {}", spec.name);
  } else if (auto w = options.work_groups.find(spec.name); w != options.work_groups.end()) {
    shape = w->second;
    origin = fmt::format("--work-group {}={}", spec.name, fmt::join(shape, ","));
  }
  if (shape.empty()) return shape;
  std::string why = CheckWorkGroup(spec.flat, k.tile, options.hw, shape);
  if (why.empty()) return shape;
  if (origin.empty()) {
    k.config->work_group.clear();
    return {};
  }
  TILEC_USER_ERROR("{}: {} (the tile is {}; see tilec compile --emit plan)", origin, why,
                   TileText(spec.flat, k.tile));
}

}  // namespace

std::string ToString(const KernelConfig& c) {
  std::vector<std::string> parts;
  if (!c.tile.empty()) parts.push_back(fmt::format("tile [{}]", fmt::join(c.tile, ", ")));
  if (c.use_local) parts.push_back(fmt::format("local {}", *c.use_local ? 1 : 0));
  if (c.vector) parts.push_back(fmt::format("vector {}", *c.vector ? 1 : 0));
  if (c.vector_rows) parts.push_back(fmt::format("rows {}", c.vector_rows));
  if (!c.work_group.empty()) parts.push_back(fmt::format("group [{}]", fmt::join(c.work_group, ", ")));
  return parts.empty() ? "default" : fmt::format("{}", fmt::join(parts, " "));
}

const std::vector<std::string>& StageNames() {
  static const std::vector<std::string> names = {"lower", "tiles", "plan", "sem"};
  return names;
}

sem::Module CompiledProgram::Module() const {
  sem::Module m;
  for (const CompiledKernel& k : kernels) m.functions.push_back(k.code.function);
  return m;
}

CompiledProgram CompileProgram(const lang::Program& program, const CompileOptions& options) {
  options.hw.Validate();
  CompiledProgram out;
  out.program = program;
  // Lower sees the program with per-channel work moved to the front; the
  // compiled program keeps the bound ops (the evaluator's reference) and
  // gains the declarations of the tensors that introduced.
  bool cpu_forms = !options.use_local.value_or(options.hw.local_memory_managed) && options.vectorize;
  lang::Program lowered = cpu_forms && options.lower.fuse ? HoistInvariants(program) : program;
  for (const auto& [name, t] : lowered.tensors) out.program.tensors.emplace(name, t);
  StageRunner stages(options, out.timings);
  CodegenOptions codegen;
  codegen.use_local = options.use_local.value_or(options.hw.local_memory_managed);
  codegen.vectorize = options.vectorize;
  codegen.vector_rows = options.vector_rows;

  LowerOptions lower = options.lower;
  if (!codegen.use_local && codegen.vectorize) {
    lower.relayout_for_vectors = true;
    lower.vector_block = VectorBlockElements(options.hw);
    lower.padded_panel_min_bytes = options.hw.l2_bytes / 4;
    // Fewer outputs than a few per core: split the reduction instead.
    lower.split_max_outputs = 4 * std::max<int64_t>(options.hw.compute_units, 1);
    if (lower.row_group_max_bytes < 0) lower.row_group_max_bytes = options.hw.l2_bytes / 2;
  }
  if (lower.row_group_max_bytes < 0) lower.row_group_max_bytes = 0;
  KernelPlan plan = stages.Run(
      "lower",
      [&] {
        LayoutChoice choice = ChooseLayouts(lowered, options.hw, options.layouts);
        lang::VerifyDataflow(choice.program, "choosing layouts");
        for (const lang::TensorDecl& t : choice.tensors) out.program.tensors[t.name] = t;
        KernelPlan p = Lower(choice.program, lower);
        p.layout_decisions = std::move(choice.decisions);
        for (KernelSpec& k : p.kernels)
          for (const std::string& o : k.outputs)
            if (auto w = choice.why.find(o); w != choice.why.end()) k.why = w->second;
        return p;
      },
      [](const KernelPlan& p) { return ToString(p); });
  out.temporaries = plan.temporaries;
  for (const lang::TensorDecl& t : plan.new_tensors) out.program.tensors[t.name] = t;
  // Image storage (OpenCL image2d) is for the program's inputs and outputs
  // only: a temporary keeps the element order in a plain buffer, since an
  // OpenCL 1.2 kernel cannot both read and write an image (docs/layouts.md).
  for (auto& [name, t] : out.program.tensors) {
    bool io = std::count(out.program.inputs.begin(), out.program.inputs.end(), name) ||
              std::count(out.program.outputs.begin(), out.program.outputs.end(), name);
    if (!io) t.layout.image.reset();
  }

  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    KernelSpec& spec = plan.kernels[i];
    stages.SetKernel(i, plan.kernels.size());
    CompiledKernel k;
    CodegenOptions kernel_codegen = codegen;
    if (IsFlat(spec.kind)) {
      KernelSignature signature = SignKernel(spec);
      k.signature = signature.hash;
      k.config = ConfigFor(spec, signature, options, &k.tuned);
      TileSearchOptions search = options.search;
      search.forced_tile.reset();
      if (auto f = options.forced_tiles.find(spec.name); f != options.forced_tiles.end())
        search.forced_tile = f->second;
      if (k.config) {
        if (!k.config->tile.empty()) search.forced_tile = k.config->tile;
        if (k.config->use_local) kernel_codegen.use_local = *k.config->use_local;
        if (k.config->vector) kernel_codegen.vectorize = *k.config->vector;
        if (k.config->vector_rows) kernel_codegen.vector_rows = k.config->vector_rows;
      }
      k.search = stages.Run(
          "tiles", [&] { return SearchTiles(spec.flat, options.hw, search); },
          [&](const TileSearchResult& r) {
            return fmt::format("{}:\n{}Chosen tile: {}\n", spec.name, r.log,
                               TileText(spec.flat, r.best().tile));
          });
      k.tile = k.config && !k.config->tile.empty() ? k.search->best().tile
                                                   : ChooseTile(spec, *k.search, options);
      kernel_codegen.work_group = WorkGroupFor(spec, k, options);
    }
    k.code = stages.Run(
        "plan", [&] { return GenerateKernel(spec, out.program, k.tile, options.hw, kernel_codegen); },
        [&](const GeneratedKernel& g) {
          std::string text = fmt::format("{} ({}):\n", spec.name, Name(spec.kind));
          if (!g.vector_plan.empty()) {
            text += g.vector_plan;
          } else if (IsFlat(spec.kind)) {
            text += fmt::format("Tile: {}\n", TileText(spec.flat, k.tile));
            text += ToString(g.threads, spec.flat);
            for (const ReadPlan& r : g.reads)
              text += fmt::format("Read plan for {}:\n{}", spec.flat.accesses[r.tensor].tensor,
                                  ToString(r));
          }
          text += fmt::format("Launch: global [{}] local [{}]\n", fmt::join(g.global, ", "),
                              fmt::join(g.local, ", "));
          return text;
        });
    k.code.function = stages.Run(
        "sem",
        [&] {
          sem::Function f = options.simplify ? sem::Simplify(k.code.function) : k.code.function;
          sem::Verify(f);
          return f;
        },
        [](const sem::Function& f) { return sem::Print(f); });
    k.spec = std::move(spec);
    out.kernels.push_back(std::move(k));
  }
  return out;
}

}  // namespace tilec::compiler
