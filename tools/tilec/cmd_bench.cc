// `tilec bench FILE -s NAME=SHAPE[:LAYOUT]... [--target T] [--runs N]
// [--warmup W] [--warmup-time DURATION] [--seed S] [--json] [--constant NAME] [--tile KERNEL=SIZES] [--rank KERNEL=K]`:
// compile a program once, upload random inputs once, then time whole-program
// executions (every kernel, inputs already on the device) and report the
// median and minimum wall time, GFLOP/s, GB/s and each kernel's device time.
#include <algorithm>
#include <chrono>
#include <iterator>
#include <memory>
#include <string_view>

#include "hal/hal.h"
#include "runtime/program.h"
#include "tile_lang/evaluator.h"
#include "tile_lang/parser.h"
#include "tile_lang/tensor.h"
#include "tools/tilec/bench_util.h"
#include "tools/tilec/common.h"
#include "tools/tilec/program_file.h"
#include "tools/tilec/tuning_flags.h"
#include "tools/tilec/json.h"
#include "tools/tilec/targets.h"

namespace tilec::tools {
namespace {

struct BenchOptions {
  std::string file;
  std::vector<std::string> shapes;
  std::vector<std::string> layouts;
  std::string target;  // set by AddTargetOption: kDefaultTarget
  int runs = 20;
  int warmup = 3;
  std::string warmup_time;  // --warmup-time: empty for none
  double warmup_s = 0;      // warmup_time in seconds (RunBench parses it)
  uint64_t seed = 1;
  bool json = false;
  bool profile = false;  // --profile: kernels sorted by time, with what each computes
  std::vector<std::string> constants;  // --constant: inputs whose derived kernels run once
  KernelOptions kernel;
};

struct KernelTime {
  std::string name;
  double median_ms = 0;   // device time
  bool constant = false;  // reads only --constant inputs: ran once, skipped in the timed runs
  std::vector<std::string> computes;  // KernelOrigins: ONNX nodes, or Tile tensors
};

struct BenchResult {
  std::string target;  // as asked: "ref", "opencl", "opencl:0:0", "llvm"
  std::string device;  // the device's id, or "ref"
  int warmup = 0;
  double compile_ms = 0;
  TimeStats time;
  Work work;
  std::vector<KernelTime> kernels;
  runtime::MemoryPlan memory;  // the temporaries' buffers (devices only)
};

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Runs `run` untimed until it has run `warmup` times and `warmup_s` seconds
// have passed, then `runs` times timed; returns the timed runs' wall times in
// milliseconds, and in `warmed` the untimed runs' count.
template <typename F>
std::vector<double> TimeRuns(int warmup, double warmup_s, int runs, int& warmed, F&& run) {
  Clock::time_point start = Clock::now();
  for (warmed = 0; warmed < warmup || MsSince(start) < warmup_s * 1e3; ++warmed) run(false);
  std::vector<double> ms;
  ms.reserve(runs);
  for (int i = 0; i < runs; ++i) {
    Clock::time_point start = Clock::now();
    run(true);
    ms.push_back(MsSince(start));
  }
  return ms;
}

// Random inputs as `tilec run --random-inputs` makes them: input i of the
// signature uses seed + i.
std::map<std::string, lang::Tensor> RandomInputs(const lang::Program& program, uint64_t seed) {
  std::map<std::string, lang::Tensor> inputs;
  for (size_t i = 0; i < program.inputs.size(); ++i) {
    lang::Tensor t(program.Tensor(program.inputs[i]).shape);
    lang::FillRandom(t, seed + i);
    inputs.emplace(program.inputs[i], std::move(t));
  }
  return inputs;
}

BenchResult BenchDevice(const BenchOptions& opts, const std::string& target, const lang::Program& program,
                        const std::map<std::string, lang::Tensor>& inputs, const ProgramFile& file,
                        const GlobalOptions& global) {
  BenchResult r;
  // A device of its own, without the disk cache of kernels: the compile time is a real compile.
  std::shared_ptr<hal::Device> device = Timed(global, "open device", [&] {
    return OpenTargetDevice(target, /*with_ref=*/true, /*shared=*/false);
  });
  r.device = device->id();
  compiler::CompileOptions options;
  ApplyKernelOptions(opts.kernel, options);
  options.lower.constants.insert(opts.constants.begin(), opts.constants.end());
  Clock::time_point start = Clock::now();
  runtime::Program compiled = runtime::Program::Compile(program, device, options);
  r.compile_ms = MsSince(start);
  if (global.verbose >= 1) fmt::print(stderr, "tilec: compile and build: {:.2f} ms\n", r.compile_ms);
  CheckKernelSettings(options, compiled.compiled());
  LogTunedKernels(global, compiled.compiled());
  compiled.SetConstantInputs(opts.constants);
  r.memory = compiled.memory_plan();
  Timed(global, "upload", [&] { compiled.Upload(inputs); });

  size_t kernel_count = compiled.compiled().kernels.size();
  std::vector<std::vector<double>> kernel_ms(kernel_count);
  std::vector<double> ms = TimeRuns(opts.warmup, opts.warmup_s, opts.runs, r.warmup, [&](bool timed) {
    runtime::RunStats stats = compiled.Execute();
    if (!timed) return;
    for (size_t k = 0; k < kernel_count && k < stats.kernel_ns.size(); ++k)
      kernel_ms[k].push_back(static_cast<double>(stats.kernel_ns[k]) / 1e6);
  });
  r.time = Summarize(std::move(ms));
  std::vector<std::vector<std::string>> computes = KernelOrigins(file, compiled.compiled());
  for (size_t k = 0; k < kernel_count; ++k) {
    KernelTime kt{compiled.compiled().kernels[k].spec.name, 0, compiled.constant_kernels()[k], computes[k]};
    if (!kernel_ms[k].empty()) kt.median_ms = Summarize(kernel_ms[k]).median_ms;
    r.kernels.push_back(std::move(kt));
  }
  return r;
}

BenchResult BenchReference(const BenchOptions& opts, const lang::Program& program,
                           const std::map<std::string, lang::Tensor>& inputs) {
  if (!opts.kernel.empty())
    TILEC_USER_ERROR(
        "--tile and --rank choose compiled kernels' tiles; the reference target 'ref' has no kernels");
  // The evaluator has no kernels to skip; the names are still checked, as
  // on a device.
  runtime::ConstantInputMask(program, opts.constants);
  BenchResult r;
  r.device = "ref";
  r.time = Summarize(
      TimeRuns(opts.warmup, opts.warmup_s, opts.runs, r.warmup, [&](bool) { lang::Evaluate(program, inputs); }));
  return r;
}

double PerSecond(double amount, double ms) { return ms > 0 ? amount / (ms * 1e-3) : 0; }

// "299 kFLOP", "1.2 GB": three significant digits and an SI prefix.
std::string Scaled(double v, std::string_view unit) {
  static constexpr std::string_view kPrefixes[] = {"", "k", "M", "G", "T", "P"};
  size_t p = 0;
  while (v >= 1000 && p + 1 < std::size(kPrefixes)) {
    v /= 1000;
    ++p;
  }
  return fmt::format("{:.3g} {}{}", v, kPrefixes[p], unit);
}

std::string ToJson(const BenchOptions& opts, const BenchResult& r) {
  std::vector<std::string> kernels;
  for (const KernelTime& k : r.kernels) {
    std::vector<std::string> computes;
    for (const std::string& c : k.computes) computes.push_back(JsonQuote(c));
    kernels.push_back(fmt::format("{{\"name\": {}, \"median_ms\": {}, \"constant\": {}, \"computes\": [{}]}}",
                                  JsonQuote(k.name), k.median_ms, k.constant, fmt::join(computes, ", ")));
  }
  return fmt::format(
      "{{\"file\": {}, \"target\": {}, \"device\": {}, \"runs\": {}, \"warmup\": {}, \"compile_ms\": {}, "
      "\"median_ms\": {}, \"min_ms\": {}, \"mean_ms\": {}, \"max_ms\": {}, \"flops\": {}, \"bytes\": {}, "
      "\"gflops\": {}, \"gbps\": {}, \"temporaries\": {}, \"temporaries_bytes\": {}, "
      "\"temporaries_unshared_bytes\": {}, \"constant_results_bytes\": {}, \"kernels\": [{}]}}\n",
      JsonQuote(opts.file), JsonQuote(r.target), JsonQuote(r.device), r.time.runs, r.warmup, r.compile_ms, r.time.median_ms,
      r.time.min_ms, r.time.mean_ms, r.time.max_ms, r.work.flops, r.work.bytes,
      PerSecond(r.work.flops, r.time.median_ms) / 1e9, PerSecond(r.work.bytes, r.time.median_ms) / 1e9,
      r.memory.temporaries, r.memory.bytes, r.memory.unshared_bytes, r.memory.constant_bytes, fmt::join(kernels, ", "));
}

std::string ToText(const BenchOptions& opts, const BenchResult& r) {
  std::string s =
      fmt::format("{} on {}: {} runs after {} warm-up", opts.file, r.device, r.time.runs, r.warmup);
  if (r.device != "ref") s += fmt::format(" (compile {:.1f} ms)", r.compile_ms);
  s += fmt::format("\n  wall time   median {:.3f} ms  min {:.3f} ms  mean {:.3f} ms\n", r.time.median_ms,
                   r.time.min_ms, r.time.mean_ms);
  s += fmt::format("  throughput  {:.2f} GFLOP/s ({} per run)  {:.2f} GB/s ({} per run)\n",
                   PerSecond(r.work.flops, r.time.median_ms) / 1e9, Scaled(r.work.flops, "FLOP"),
                   PerSecond(r.work.bytes, r.time.median_ms) / 1e9, Scaled(r.work.bytes, "B"));
  if (r.memory.temporaries > 0) {
    const runtime::MemoryPlan& m = r.memory;
    s += fmt::format("  memory      {} temporaries in {} buffers: {} ({} with one buffer each)", m.temporaries, m.buffers,
                     Scaled(static_cast<double>(m.bytes), "B"), Scaled(static_cast<double>(m.unshared_bytes), "B"));
    if (m.constant_results > 0)
      s += fmt::format("; of them {} constant results kept between runs, {}", m.constant_results,
                       Scaled(static_cast<double>(m.constant_bytes), "B"));
    s += "\n";
  }
  if (!opts.profile) {
    for (const KernelTime& k : r.kernels)
      s += fmt::format("  {:<11} median {:.3f} ms (device time{})\n", k.name, k.median_ms,
                       k.constant ? "; reads constants only: ran once before the timed runs" : "");
    return s;
  }
  // --profile: the kernels by time, each with its share and what it computes.
  std::vector<const KernelTime*> sorted;
  double total = 0;
  for (const KernelTime& k : r.kernels) {
    sorted.push_back(&k);
    total += k.median_ms;
  }
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const KernelTime* a, const KernelTime* b) { return a->median_ms > b->median_ms; });
  s += fmt::format("  {:>9}  {:>6}  {:>6}  {:<11} computes\n", "ms", "%", "cum %", "kernel");
  double cumulative = 0;
  for (const KernelTime* k : sorted) {
    cumulative += k->median_ms;
    std::string what = k->computes.empty() ? "-" : fmt::format("{}", fmt::join(k->computes, ", "));
    if (k->constant) what += "  [constants only: ran once]";
    s += fmt::format("  {:>9.3f}  {:>5.1f}%  {:>5.1f}%  {:<11} {}\n", k->median_ms,
                     total > 0 ? 100 * k->median_ms / total : 0.0, total > 0 ? 100 * cumulative / total : 0.0,
                     k->name, what);
  }
  s += fmt::format("  {:>9.3f}  kernels' device time in all (wall median {:.3f} ms)\n", total, r.time.median_ms);
  return s;
}

void RunBench(BenchOptions opts, const GlobalOptions& global) {
  if (opts.runs < 1)
    throw CLI::ValidationError("--runs", fmt::format("must be at least 1, got {}", opts.runs));
  if (opts.warmup < 0)
    throw CLI::ValidationError("--warmup", fmt::format("must be 0 or more, got {}", opts.warmup));
  if (!opts.warmup_time.empty()) opts.warmup_s = ParseDuration(opts.warmup_time, "--warmup-time");
  ProgramFile file = ReadProgramFile(opts.file, opts.shapes, opts.layouts, global);
  ShapeLayoutArgs args = file.args;
  args.shapes = file.BindShapes();
  // A model's weights are constants: the kernels that only repack them run once.
  for (const auto& [name, t] : file.constants) opts.constants.push_back(name);
  for (std::string& name : opts.constants) name = file.TileName(name);
  lang::ast::Function f = Timed(global, "parse", [&] { return ParseSource(file.source); });
  std::vector<std::string> inputs;
  for (const auto& in : f.inputs) inputs.push_back(in.name);
  for (const auto& [name, shape] : args.shapes)
    if (std::find(inputs.begin(), inputs.end(), name) == inputs.end())
      TILEC_USER_ERROR("-s {}: '{}' is not an input of the program (inputs: {})", name, name,
                       JoinNames(inputs));
  for (const std::string& name : inputs)
    if (!args.shapes.count(name))
      TILEC_USER_ERROR("no shape for input '{}': give -s {}=TYPE[DIMS] (inputs: {})", name, name,
                       JoinNames(inputs));
  lang::Program program =
      Timed(global, "bind", [&] { return BindWithLayouts(f, args.shapes, args.layouts); });
  std::map<std::string, lang::Tensor> data =
      Timed(global, "random inputs", [&] { return RandomInputs(program, opts.seed); });
  for (const auto& [name, t] : file.constants) data[name] = t;

  const std::string& target = opts.target;
  BenchResult r = IsReferenceTarget(target) ? BenchReference(opts, program, data)
                                  : BenchDevice(opts, target, program, data, file, global);
  r.target = target;
  r.work = CountWork(program);
  fmt::print("{}", opts.json ? ToJson(opts, r) : ToText(opts, r));
}

}  // namespace

Command AddBenchCommand(CLI::App& parent, const GlobalOptions& global) {
  auto opts = std::make_shared<BenchOptions>();
  CLI::App* app = parent.add_subcommand(
      "bench", "Time a compiled program: median and min wall time, GFLOP/s, GB/s, per-kernel device time");
  app->footer(Footer(
      "The program is compiled once and its random inputs (as tilec run --random-inputs makes them)\n"
      "are uploaded once; then W warm-up executions (more until --warmup-time has passed) and N\n"
      "timed executions of the whole program (every kernel) run back to back, each timed with a\n"
      "steady clock around the launches (inputs stay on the device; outputs are not read back).\n"
      "Per-kernel times are the device's own timers. With --constant, kernels that read only\n"
      "constant inputs run in the first execution only.\n\n"
      "Work (the convention oneDNN and BLAS use):\n"
      "  FLOPs: a contraction visits its full index box (the product of all its index ranges,\n"
      "         padding taps included): 2 FLOPs per point, one multiply-accumulate, for a sum\n"
      "         of products (+(A * B)); 1 per point for any other contraction; plus 1 FLOP per\n"
      "         output element of each elementwise operation (ReLU is a compare and a\n"
      "         select: 2).\n"
      "  bytes: the sizes of the program's inputs and outputs, each counted once.\n"
      "  GFLOP/s and GB/s use the median time.\n\n"
      "Examples:\n"
      "  tilec bench examples/conv_relu.tile -s D=f32[1,56,56,64] -s K=f32[3,3,64,64]\n"
      "  tilec bench examples/matmul.tile -s A=f32[512,512] -s B=f32[512,512] --runs 50 --json\n"
      "  tilec bench examples/conv_relu.tile -s D=f32[1,14,14,256] -s K=f32[3,3,256,256] --constant K\n"
      "  tilec bench examples/matmul.tile -s 'A=f32[512,512]:order(1,0)' -s B=f32[512,512] --target opencl"));
  app->add_option("file", opts->file, std::string(kProgramFileHelp))->required()->type_name("FILE");
  AddWeightsOption(app);
  AddShapeLayoutOptions(app, opts->shapes, opts->layouts);
  AddTargetOption(app, opts->target, "to time", /*with_ref=*/true);
  app->add_option("--runs", opts->runs, "Timed executions (at least 1)")
      ->capture_default_str()
      ->type_name("N");
  app->add_option("--warmup", opts->warmup, "Untimed executions first")
      ->capture_default_str()
      ->type_name("W");
  app->add_option("--warmup-time", opts->warmup_time,
                  "Untimed executions until this long has passed too, e.g. 300ms: caches, clock "
                  "frequency and worker threads settle as under a steady load (bench/suite gives every "
                  "side 0.3 s)")
      ->type_name("DURATION");
  AddSeedOption(app, opts->seed);
  AddJsonFlag(app, opts->json,
              "median_ms, min_ms, mean_ms, max_ms, gflops, gbps, flops, bytes, runs, warmup, target, device, "
              "file, compile_ms, temporaries, temporaries_bytes (the temporaries' buffers, shared by lifetime), "
              "temporaries_unshared_bytes (one buffer each), constant_results_bytes (kept between runs), kernels [{name, median_ms, constant, computes}]");
  app->add_option("--constant", opts->constants,
                  "An input whose contents stay the same between runs (a network's weights): kernels that "
                  "read only constants (a relayout of the weights) run once, as a framework would after "
                  "loading the weights, and are skipped in the timed runs (repeat per input)")
      ->type_name("NAME");
  app->add_flag("--profile", opts->profile,
                "Per kernel, sorted by time: its median device time, share and cumulative share, and what it "
                "computes (for a model, the ONNX nodes fused into it; for a program, its tensors)");
  AddKernelOptions(app, opts->kernel);
  return {app, [opts, &global] { RunBench(*opts, global); }};
}

}  // namespace tilec::tools
