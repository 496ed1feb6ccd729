#include "compiler/pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "compiler/ir/kernel_signature.h"
#include "compiler/ir/verify.h"
#include "compiler/passes/choose_layouts.h"
#include "compiler/passes/hoist_invariants.h"
#include "compiler/passes/lower.h"
#include "compiler/sem/printer.h"
#include "compiler/sem/simplify.h"
#include "compiler/sem/verify.h"
#include "support/error.h"

namespace tilec::compiler {
namespace {

// Runs the passes: reports each to options.progress, times it, verifies
// the IR it produced and prints it when asked (print_after).
class PassRunner {
 public:
  PassRunner(const CompileOptions& options, std::vector<StageTime>& timings)
      : options_(options), timings_(timings) {}

  // Where the next passes run, for options.progress.
  void SetKernel(size_t kernel, size_t kernels) {
    kernel_ = kernel;
    kernels_ = kernels;
  }

  // Time(pass, run) then Check(pass, its result, verify, print).
  template <typename F, typename V, typename P>
  auto Run(const std::string& pass, F&& run, V&& verify, P&& print) {
    auto result = Time(pass, run);
    Check(pass, result, verify, print);
    return result;
  }

  // A pass, or a part of one, reported and timed.
  template <typename F>
  auto Time(const std::string& pass, F&& run) {
    if (options_.progress) options_.progress(pass, kernel_, kernels_);
    auto start = std::chrono::steady_clock::now();
    auto result = run();
    std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - start;
    Add(pass, ms.count());
    return result;
  }

  // The boundary after a pass: its IR verified, then printed if asked.
  template <typename R, typename V, typename P>
  void Check(const std::string& pass, const R& result, V&& verify, P&& print) {
    verify(result);
    if (options_.print_sink && options_.print_after.count(pass)) options_.print_sink(pass, print(result));
  }

 private:
  void Add(const std::string& pass, double ms) {
    for (StageTime& t : timings_)
      if (t.stage == pass) {
        t.ms += ms;
        return;
      }
    timings_.push_back({pass, ms});
  }

  const CompileOptions& options_;
  std::vector<StageTime>& timings_;
  size_t kernel_ = 0;
  size_t kernels_ = 0;
};

// What `--emit plan` prints for a kernel: its form's plan, or the flat
// form's tile, thread plan and read plans; then the launch.
std::string PlanText(const KernelSpec& spec, const std::vector<int64_t>& tile, const GeneratedKernel& g) {
  std::string text = fmt::format("{} ({}):\n", spec.name, Name(spec.kind));
  if (!g.plan_text.empty()) {
    text += g.plan_text;
  } else if (g.form == Form::Flat) {
    text += fmt::format("Tile: {}\n", TileText(spec.flat, tile));
    text += ToString(g.threads, spec.flat);
    for (const ReadPlan& r : g.reads)
      text += fmt::format("Read plan for {}:\n{}", spec.flat.accesses[r.tensor].tensor, ToString(r));
  }
  text += fmt::format("Launch: global [{}] local [{}]\n", fmt::join(g.global, ", "), fmt::join(g.local, ", "));
  return text;
}

std::string LayoutsText(const LayoutChoice& choice) {
  std::string text;
  for (const std::string& d : choice.decisions) text += fmt::format("layout {}\n", d);
  return text + lang::ToString(choice.program);
}

// The runner's checks of each IR.
void VerifyProgram(const lang::Program& p, std::string_view pass) { lang::VerifyDataflow(p, pass); }
void VerifyTile(const KernelSpec& spec, const std::vector<int64_t>& tile) {
  TILEC_CHECK(TileFits(spec.flat, tile), "after tiles: kernel {} has the tile [{}], which does not fit its indices",
              spec.name, fmt::join(tile, ", "));
}

}  // namespace

const std::vector<std::string>& StageNames() {
  static const std::vector<std::string> names = {"hoist", "layouts", "kernels", "tiles", "plan", "sem"};
  return names;
}

void CheckKernelExists(const CompiledProgram& compiled, const std::string& setting, const std::string& kernel) {
  std::vector<std::string> names;
  for (const CompiledKernel& k : compiled.kernels) {
    if (k.spec.name == kernel) return;
    names.push_back(k.spec.name);
  }
  TILEC_USER_ERROR("{}: the program has no kernel '{}' (kernels: {}; see tilec compile --emit kernels)", setting,
                   kernel, names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", ")));
}

sem::Module CompiledProgram::Module() const {
  sem::Module m;
  for (const CompiledKernel& k : kernels) m.functions.push_back(k.code.function);
  return m;
}

CompiledProgram CompileProgram(const lang::Program& program, const CompileOptions& options) {
  options.hw.Validate();
  const HardwareModel& hw = options.hw;
  const DerivedOptions derived = DeriveOptions(options);
  CompiledProgram out;
  out.program = program;
  PassRunner passes(options, out.timings);

  // The program's passes. Hoisting and layout choice rewrite the program the
  // kernels are cut from; the compiled program keeps the bound ops (the
  // evaluator's reference) and gains the declarations they introduce.
  lang::Program hoisted = passes.Run(
      "hoist", [&] { return derived.cpu_forms && derived.lower.fuse ? HoistInvariants(program) : program; },
      [](const lang::Program& p) { VerifyProgram(p, "hoist"); },
      [](const lang::Program& p) { return lang::ToString(p); });
  for (const auto& [name, t] : hoisted.tensors) out.program.tensors.emplace(name, t);
  LayoutChoice choice = passes.Run(
      "layouts", [&] { return ChooseLayouts(hoisted, hw, options.layouts); },
      [](const LayoutChoice& c) { VerifyProgram(c.program, "layouts"); }, LayoutsText);
  for (const lang::TensorDecl& t : choice.tensors) out.program.tensors[t.name] = t;
  KernelPlan plan = passes.Run(
      "kernels",
      [&] {
        KernelPlan p = Lower(choice.program, derived.lower);
        p.layout_decisions = std::move(choice.decisions);
        for (KernelSpec& k : p.kernels)
          for (const std::string& o : k.outputs)
            if (auto w = choice.why.find(o); w != choice.why.end()) k.why = w->second;
        for (const lang::TensorDecl& t : p.new_tensors) out.program.tensors[t.name] = t;
        return p;
      },
      [&](const KernelPlan& p) { Verify(p, out.program, "kernels"); }, [](const KernelPlan& p) { return ToString(p); });
  out.temporaries = plan.temporaries;
  // Image storage (OpenCL image2d) is for the program's inputs and outputs
  // only: a temporary keeps the element order in a plain buffer, since an
  // OpenCL 1.2 kernel cannot both read and write an image (docs/layouts.md).
  for (auto& [name, t] : out.program.tensors) {
    bool io = std::count(out.program.inputs.begin(), out.program.inputs.end(), name) ||
              std::count(out.program.outputs.begin(), out.program.outputs.end(), name);
    if (!io) t.layout.image.reset();
  }

  // The kernels' passes.
  auto verify_sem = [](const GeneratedKernel& g) { sem::Verify(g.function); };
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    KernelSpec& spec = plan.kernels[i];
    passes.SetKernel(i, plan.kernels.size());
    CompiledKernel k;
    if (!IsFlatKind(spec.kind)) {
      k.code = passes.Run("plan", [&] { return GenerateKernel(spec, out.program, {}, hw, derived.codegen); },
                          verify_sem, [&](const GeneratedKernel& g) { return PlanText(spec, k.tile, g); });
    } else {
      KernelSignature signature = SignKernel(spec);
      k.signature = signature.hash;
      ResolvedConfig config = ResolveConfig(spec, signature, options, derived);
      k.source = config.source;
      k.tuned = config.source == ConfigSource::Cache;
      std::optional<GeneratedKernel> other = passes.Time(
          "plan", [&] { return GenerateCpuForm(spec, out.program, hw, config.codegen); });
      if (other) {
        k.code = std::move(*other);
        passes.Check(
            "tiles", k.code, [](const GeneratedKernel&) {},
            [&](const GeneratedKernel& g) {
              return fmt::format("{}: {} form, no tile search\n", spec.name, Name(g.form));
            });
        for (const std::string& setting : config.flat_settings)
          out.warnings.push_back(fmt::format("{}: kernel {} is in the {} form, which has no tile or work group; the "
                                             "setting is not used (--vector 0 gives the flat form)",
                                             setting, spec.name, Name(k.code.form)));
      } else {
        TileSearchOptions search = options.search;
        search.forced_tile = config.tile;
        k.search = passes.Run(
            "tiles", [&] { return SearchTiles(spec.flat, hw, search); },
            [&](const TileSearchResult& r) { VerifyTile(spec, r.best().tile); },
            [&](const TileSearchResult& r) {
              return fmt::format("{}:\n{}Chosen tile: {}\n", spec.name, r.log, TileText(spec.flat, r.best().tile));
            });
        k.tile = ChooseTile(spec, *k.search, config);
        config.codegen.work_group = WorkGroupFor(spec, k.tile, hw, config);
        k.code = passes.Time("plan", [&] { return GenerateFlatKernel(spec, out.program, k.tile, hw, config.codegen); });
      }
      k.config = config.config;
      passes.Check("plan", k.code, verify_sem, [&](const GeneratedKernel& g) { return PlanText(spec, k.tile, g); });
    }
    k.code.function = passes.Run(
        "sem", [&] { return options.simplify ? sem::Simplify(k.code.function) : k.code.function; },
        [](const sem::Function& f) { sem::Verify(f); }, [](const sem::Function& f) { return sem::Print(f); });
    k.spec = std::move(spec);
    out.kernels.push_back(std::move(k));
  }
  return out;
}

}  // namespace tilec::compiler
