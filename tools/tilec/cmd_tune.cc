// `tilec tune FILE -s … [--target T] [--trials N] [--budget 60s] [--seed S]`:
// autotune every kernel of a program on a device (runtime/tuner.h) and keep
// the winners in the tuning cache, which compile, run, bench and the library
// then apply; `tilec tune --show FILE -s …` prints what the cache knows.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cmath>
#include <memory>

#include "runtime/program_cache.h"
#include "runtime/settings.h"
#include "runtime/tuner.h"
#include "tile_lang/parser.h"
#include "tools/tilec/bench_util.h"
#include "tools/tilec/common.h"
#include "tools/tilec/program_file.h"
#include "tools/tilec/targets.h"

namespace tilec::tools {
namespace {

struct TuneCliOptions {
  std::string file;
  std::vector<std::string> shapes;
  std::vector<std::string> layouts;
  std::string target;  // --target (default: the default device)
  int trials = 20;
  std::string budget = "60s";
  uint64_t seed = 1;
  int top = 6;
  bool retune = false;
  bool show = false;
  bool quiet = false;
  int vector = 1;
};

std::atomic<bool> g_interrupted{false};

extern "C" void OnInterrupt(int) { g_interrupted.store(true); }

// SIGINT sets g_interrupted while it lives (a second Ctrl-C still stops the
// tuner at its next check, not the process).
class InterruptGuard {
 public:
  InterruptGuard() {
    g_interrupted.store(false);
    struct sigaction sa {};
    sa.sa_handler = OnInterrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_);
  }
  ~InterruptGuard() { sigaction(SIGINT, &old_, nullptr); }

 private:
  struct sigaction old_ {};
};

std::string Gflops(double flops, double ms) {
  return ms > 0 ? fmt::format("{:.2f} GFLOP/s", flops / (ms * 1e-3) / 1e9) : "- GFLOP/s";
}

// "+19%": the tuned best's gain over the model's pick (time saved / best time).
std::string Gain(double model_ms, double best_ms) {
  if (model_ms <= 0 || best_ms <= 0) return "-";
  return fmt::format("{:+.0f}%", (model_ms / best_ms - 1) * 100);
}

std::string Spread(const runtime::TuningTrial& t) {
  if (!t.ok || t.median_ms <= 0) return "";
  return fmt::format(" (min {:.4f}, max {:.4f}, spread {:.0f}%)", t.min_ms, t.max_ms,
                     (t.max_ms - t.min_ms) / t.median_ms * 100);
}

// Progress on stderr: a bar redrawn per kernel on a terminal, plain log
// lines otherwise, nothing with -q.
class ProgressPrinter {
 public:
  explicit ProgressPrinter(bool quiet) : quiet_(quiet), tty_(isatty(STDERR_FILENO) != 0) {}

  void operator()(const runtime::TuneProgress& p) {
    if (quiet_) return;
    using Event = runtime::TuneProgress::Event;
    if (p.event == Event::Cached) {
      fmt::print(stderr, "tilec: tune {}: known from the tuning cache ({:.4f} ms)\n", p.kernel, p.best_ms);
      return;
    }
    if (p.event == Event::Start) {
      if (!tty_) fmt::print(stderr, "tilec: tune {} ({} of {}): up to {} trials\n", p.kernel,
                            p.kernel_index + 1, p.kernel_count, p.trials);
      return;
    }
    if (tty_) {
      int width = 20;
      int filled = p.trials > 0 ? std::min(width, p.trial * width / p.trials) : 0;
      fmt::print(stderr, "\r\033[K{} [{}{}] trial {}/{}  best {}  {}  gain {}  {:.0f} s left", p.kernel,
                 std::string(filled, '#'), std::string(width - filled, '.'), p.trial, p.trials,
                 p.best_ms > 0 ? fmt::format("{:.4f} ms", p.best_ms) : "-", Gflops(p.flops, p.best_ms),
                 Gain(p.model_ms, p.best_ms), p.seconds_left);
      std::fflush(stderr);
      return;
    }
    const runtime::TuningTrial& t = p.last;
    fmt::print(stderr, "tilec: tune {} trial {}/{}: {}: {}{}; best {:.4f} ms, gain {}, {:.0f} s left\n",
               p.kernel, p.trial, p.trials, p.last_text, t.ok ? fmt::format("{:.4f} ms", t.median_ms) : t.note,
               Spread(t), p.best_ms, Gain(p.model_ms, p.best_ms), p.seconds_left);
  }

  void EndLine() {
    if (!quiet_ && tty_) fmt::print(stderr, "\n");
  }

 private:
  bool quiet_;
  bool tty_;
};

lang::Program BindProgram(const TuneCliOptions& opts, const GlobalOptions& global) {
  ProgramFile file = ReadProgramFile(opts.file, opts.shapes, opts.layouts, global);
  ShapeLayoutArgs args = file.args;
  args.shapes = file.BindShapes();
  lang::ast::Function f = Timed(global, "parse", [&] { return lang::Parse(file.source); });
  std::vector<std::string> inputs;
  for (const auto& in : f.inputs) inputs.push_back(in.name);
  for (const std::string& name : inputs)
    if (!args.shapes.count(name))
      TILEC_USER_ERROR("no shape for input '{}': give -s {}=TYPE[DIMS] (inputs: {})", name, name,
                       JoinNames(inputs));
  return Timed(global, "bind", [&] { return BindWithLayouts(f, args.shapes, args.layouts); });
}

std::shared_ptr<hal::Device> OpenTarget(const std::string& target) {
  if (target == "ref")
    TILEC_USER_ERROR("--target ref: the reference evaluator has no kernels to tune; give a device id");
  return OpenTargetDevice(target, /*with_ref=*/false);
}

void PrintRecord(const runtime::TuningRecord& r, const std::string& winner,
                 const std::vector<std::string>& texts, bool trials) {
  fmt::print("  winner {}: {:.4f} ms ({}); the cost model's pick {:.4f} ms; gain {}\n", winner, r.median_ms,
             Gflops(r.flops, r.median_ms), r.model_ms, Gain(r.model_ms, r.median_ms));
  if (!trials) return;
  for (size_t i = 0; i < r.trials.size(); ++i) {
    const runtime::TuningTrial& t = r.trials[i];
    fmt::print("    {:<48} {}{}\n", i < texts.size() ? texts[i] : compiler::ToString(t.config),
               t.ok ? fmt::format("{:.4f} ms", t.median_ms) : t.note, Spread(t));
  }
}

void RunShow(const TuneCliOptions& opts, const GlobalOptions& global) {
  lang::Program program = BindProgram(opts, global);
  std::shared_ptr<hal::Device> device = OpenTarget(opts.target);
  const runtime::TuningCache& cache = runtime::ProcessTuningCache();
  compiler::CompileOptions base;
  base.vectorize = opts.vector != 0;
  runtime::CachedTuning known = runtime::ShowTuning(program, *device, cache, base);
  for (const std::string& n : known.lookup.notices) fmt::print(stderr, "tilec: note: {}\n", n);
  fmt::print("tuning cache {} on {}\n", cache.options().enabled ? cache.options().path : "(disabled)",
             device->id());
  for (const runtime::CachedTuning::Kernel& k : known.kernels) {
    fmt::print("{} {} (signature {}): {}\n", k.name, k.description, k.signature,
               k.record ? fmt::format("tuned, {} trials", k.record->trials.size()) : "not tuned");
    if (k.record) PrintRecord(*k.record, k.winner_text, k.trial_texts, global.verbose >= 1);
  }
}

void RunTune(const TuneCliOptions& opts, const GlobalOptions& global) {
  if (opts.trials < 1) throw CLI::ValidationError("--trials", fmt::format("must be at least 1, got {}", opts.trials));
  if (opts.top < 1) throw CLI::ValidationError("--top", fmt::format("must be at least 1, got {}", opts.top));
  double budget = ParseDuration(opts.budget, "--budget");
  if (opts.show) return RunShow(opts, global);
  lang::Program program = BindProgram(opts, global);
  std::shared_ptr<hal::Device> device = OpenTarget(opts.target);
  const runtime::TuningCache& cache = runtime::ProcessTuningCache();
  if (!cache.options().enabled)
    fmt::print(stderr, "tilec: note: the tuning cache is disabled (TILEC_TUNING_CACHE=0 or no cache "
                       "directory): results are not kept\n");

  runtime::TuneOptions options;
  options.base.vectorize = opts.vector != 0;
  options.trials = opts.trials;
  options.budget_s = budget;
  options.seed = opts.seed;
  options.top_k = opts.top;
  options.retune = opts.retune;
  options.program_name = opts.file;
  options.stop = [] { return g_interrupted.load(); };
  ProgressPrinter printer(opts.quiet || global.quiet);
  std::string current;
  options.progress = [&](const runtime::TuneProgress& p) {
    if (p.event == runtime::TuneProgress::Event::Start && !current.empty()) printer.EndLine();
    if (p.event == runtime::TuneProgress::Event::Start) current = p.kernel;
    printer(p);
  };
  InterruptGuard guard;
  runtime::TuneResult result = runtime::TuneProgram(program, device, cache, options);
  if (!current.empty()) printer.EndLine();
  for (const std::string& n : result.notices) fmt::print(stderr, "tilec: note: {}\n", n);

  fmt::print("{} on {}: {} kernel{} in {:.1f} s{}\n", opts.file, device->id(), result.kernels.size(),
             result.kernels.size() == 1 ? "" : "s", result.seconds,
             result.interrupted ? " (interrupted: kept what was measured)" : "");
  for (const runtime::KernelTuneResult& k : result.kernels) {
    int ok = 0;
    for (const runtime::TuningTrial& t : k.record.trials) ok += t.ok;
    fmt::print("{} {}: {}\n", k.kernel, k.record.kernel,
               k.from_cache ? "from the tuning cache"
                            : fmt::format("{} trials ({} verified and timed)", k.record.trials.size(), ok));
    PrintRecord(k.record, k.winner_text, k.trial_texts, global.verbose >= 1);
    if (!k.from_cache && !k.stored && cache.options().enabled)
      fmt::print(stderr, "tilec: note: {}: not kept: {}\n", k.kernel,
                 k.store_error.empty() ? "nothing was measured" : k.store_error);
  }
  if (cache.options().enabled) fmt::print("tuning cache: {}\n", cache.options().path);
}

}  // namespace

Command AddTuneCommand(CLI::App& parent, const GlobalOptions& global) {
  auto opts = std::make_shared<TuneCliOptions>();
  CLI::App* app = parent.add_subcommand(
      "tune", "Autotune a program's kernels on a device and keep the winners in the tuning cache");
  app->footer(
      std::string(kExitCodesHelp) +
      "\n\nPer kernel, the candidates are the cost model's top tiles and the form knobs that matter on\n"
      "the device (vector rows and the flat form on CPUs, local memory on or off on OpenCL), then a\n"
      "local search around the best (each tile size doubled and halved). Every candidate is compiled,\n"
      "checked against the reference evaluator (on large kernels, against the cost model's pick)\n"
      "and timed: warm-up, then repeated runs; the kernel's median device time wins.\n\n"
      "The winners go to the tuning cache (TILEC_TUNING_CACHE_FILE, default tuning.jsonl in the\n"
      "cache directory; TILEC_TUNING_CACHE=0 disables it), keyed by the kernel's flat form, the\n"
      "device and Tilec's version: compile, run, bench and the library use them from then on\n"
      "(--no-tuning-cache ignores them). Kernels the cache knows are not tuned again (--retune).\n"
      "Ctrl-C stops tuning and keeps what was measured.\n\n"
      "Examples:\n"
      "  tilec tune examples/conv_relu.tile -s D=f32[1,56,56,64] -s K=f32[3,3,64,64]\n"
      "  tilec tune examples/matmul.tile -s A=f32[512,512] -s B=f32[512,512] --target opencl --budget 2m\n"
      "  tilec tune --show examples/conv_relu.tile -s D=f32[1,56,56,64] -s K=f32[3,3,64,64]");
  app->add_option("file", opts->file, std::string(kProgramFileHelp))->required()->type_name("FILE");
  AddWeightsOption(app);
  AddShapeLayoutOptions(app, opts->shapes, opts->layouts);
  AddTargetOption(app, opts->target, "to tune for", /*with_ref=*/false);
  app->add_option("--trials", opts->trials, "Candidates measured per kernel at most, the model's pick included")
      ->capture_default_str()
      ->type_name("N");
  app->add_option("--budget", opts->budget, "Time for the whole program, e.g. 60s, 2m, 500ms")
      ->capture_default_str()
      ->type_name("TIME");
  AddSeedOption(app, opts->seed);
  app->add_option("--top", opts->top, "The cost model's best tiles tried before the local search")
      ->capture_default_str()
      ->type_name("K");
  app->add_option("--vector", opts->vector, "0: tune the flat form only (as --vector 0 compiles)")
      ->capture_default_str()
      ->check(CLI::IsMember({0, 1}))
      ->type_name("0|1");
  app->add_flag("--retune", opts->retune, "Tune kernels the tuning cache already knows again");
  app->add_flag("--show", opts->show,
                "Print what the tuning cache knows for the program's kernels on the device (-v: every trial)");
  // -q before the subcommand (tilec -q tune …) is the global one; after it, this.
  app->add_flag("-q,--quiet", opts->quiet, "No progress output");
  return {app, [opts, &global] { RunTune(*opts, global); }};
}

}  // namespace tilec::tools
