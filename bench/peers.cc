// bench_peers: Tilec against oneDNN and OpenBLAS on the same workloads, in
// one process, round by round.
//
//   bench_peers [--device ID] [--runs 20] [--warmup 3] [--only W1,W3] [--threads N] [--local 0|1]
//
// For each workload (bench/workloads/*.tile with fixed shapes): compile the
// Tile program for the device, upload random inputs, build every peer on the
// same inputs, check Tilec's output against each peer's (a workload whose
// results disagree beyond 1e-3 relative is dropped), then time rounds: every
// round runs each side once, the order rotating from round to round so that
// a noisy machine hurts every side alike; each timed run follows --prewarm ms
// of untimed runs of the same side (OpenMP's and OpenBLAS's workers spin after a
// call and would otherwise slow down whichever side runs next). The table gives median wall times,
// GFLOP/s (tools/tilec/bench_util.h's convention, the same for every side),
// and ratio = peer time / Tilec time (Tilec's throughput relative to the
// peer: > 1 means Tilec is faster). W7 also measures the machine's streaming
// bandwidth with a triad and gives each side's GB/s as a fraction of it.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>
#include <thread>
#include <unistd.h>

#include "bench/peer.h"
#include "hal/hal.h"
#include "runtime/program.h"
#include "runtime/settings.h"
#include "support/error.h"
#include "tile_lang/binder.h"
#include "tile_lang/parser.h"
#include "tools/tilec/bench_util.h"

#ifndef TILEC_BENCH_WORKLOADS_DIR
#define TILEC_BENCH_WORKLOADS_DIR "bench/workloads"
#endif

namespace tilec::bench {
namespace {

constexpr double kMaxRelativeError = 1e-3;

struct Options {
  std::string device;  // empty: tools::DefaultDeviceId()
  std::string cpu;     // Tilec plans and compiles for this CPU (empty: TILEC_CPU, else the host)
  int runs = 20;
  int warmup = 3;
  // Untimed running of a side right before each timed run. OpenBLAS's workers
  // spin longer than 20 ms after a call: with 20, W4's Tilec runs shared a
  // core with them (11.5 ms in 5 of 6 runs, 5.9-6.3 with 60, 100 or 200).
  int prewarm_ms = 100;
  std::vector<std::string> only;
  int threads = 0;  // 0: the libraries' defaults (all cores, or OMP_NUM_THREADS / OPENBLAS_NUM_THREADS)
  int local = -1;   // -1: the device's choice
  bool no_relayout = false;  // Tilec without layout choice (ChooseLayoutsOptions::relayout)
  bool no_constants = false;  // Tilec: the weights' relayout in every timed run
  uint64_t seed = 1;
  std::string workloads = TILEC_BENCH_WORKLOADS_DIR;
};

struct Workload {
  std::string id;
  std::string title;
  std::string tile;  // file in the workloads folder
  std::map<std::string, lang::Shape> shapes;
  std::string output;  // the output every side computes
  std::function<std::vector<Runner>(const Inputs&)> peers;
  int64_t triad_count = 0;  // > 0: measure the streaming bandwidth too
  std::map<std::string, std::string> layouts = {};  // Tilec's tensors that are not row-major
  // Inputs the peers prepare once outside the timed runs (oneDNN reorders a
  // convolution's weights once): Tilec's constant inputs
  // (Program::SetConstantInputs), so its weight relayout runs once too.
  std::vector<std::string> constants = {};
};

lang::Shape F32(std::vector<int64_t> dims) { return lang::Shape{lang::DataType::F32, std::move(dims)}; }

Workload Conv3x3(std::string id, int64_t n, int64_t hw, int64_t c) {
  ConvSpec spec{.n = n, .h = hw, .w = hw, .ci = c, .co = c};
  return {std::move(id),
          fmt::format("conv3x3+relu N={} {}x{} {}->{}", n, hw, hw, c, c),
          "conv3x3_relu.tile",
          {{"D", F32({n, hw, hw, c})}, {"K", F32({3, 3, c, c})}},
          "R",
          [spec](const Inputs& in) {
            return std::vector<Runner>{OneDnnConv(spec, in, false), OneDnnConv(spec, in, true)};
          },
          0,
          {},
          {"K"}};
}

// The same convolution written over logical NCHW, with the data and the
// result in `layout` (nchw, nChw16c, nChw8c), against oneDNN in that layout.
Workload Conv3x3Layout(std::string id, int64_t hw, int64_t c, const std::string& layout) {
  ConvSpec spec{.n = 1, .h = hw, .w = hw, .ci = c, .co = c, .layout = layout};
  return {std::move(id),
          fmt::format("conv3x3+relu {}x{} {}->{} {}", hw, hw, c, c, layout),
          "conv3x3_relu_nchw.tile",
          {{"D", F32({1, c, hw, hw})}, {"K", F32({c, c, 3, 3})}},
          "R",
          [spec](const Inputs& in) { return std::vector<Runner>{OneDnnConv(spec, in, false)}; },
          0,
          {{"D", layout}, {"R", layout}},
          {"K"}};
}

std::vector<Workload> AllWorkloads() {
  std::vector<Workload> w;
  w.push_back(Conv3x3("W1", 1, 56, 64));
  w.push_back(Conv3x3("W2", 8, 56, 64));
  w.push_back(Conv3x3("W3", 4, 224, 64));
  w.push_back(
      {"W4",
       "matmul 1024x1024x1024",
       "matmul.tile",
       {{"A", F32({1024, 1024})}, {"B", F32({1024, 1024})}},
       "C",
       [](const Inputs& in) {
         return std::vector<Runner>{OpenBlasSgemm(1024, 1024, 1024, in), OneDnnMatmul(1024, 1024, 1024, in)};
       }});
  ConvSpec dw{.n = 1, .h = 112, .w = 112, .ci = 32, .co = 32, .depthwise = true, .relu = false};
  w.push_back({"W5",
               "depthwise3x3 N=1 112x112 C=32",
               "depthwise3x3.tile",
               {{"D", F32({1, 112, 112, 32})}, {"K", F32({3, 3, 32})}},
               "R",
               [dw](const Inputs& in) {
                 return std::vector<Runner>{OneDnnConv(dw, in, false), OneDnnConv(dw, in, true)};
               },
               0,
               {},
               {"K"}});
  ConvSpec pw{.n = 1, .h = 56, .w = 56, .ci = 64, .co = 256, .kh = 1, .kw = 1, .pad = 0};
  w.push_back({"W6",
               "conv1x1+relu N=1 56x56 64->256",
               "conv1x1_relu.tile",
               {{"D", F32({1, 56, 56, 64})}, {"K", F32({64, 256})}},
               "R",
               [pw](const Inputs& in) {
                 return std::vector<Runner>{OneDnnConv(pw, in, false), OneDnnConv(pw, in, true)};
               },
               0,
               {},
               {"K"}});
  constexpr int64_t kCount = int64_t{1} << 24;
  w.push_back({"W7",
               "relu(a*b+c) 16M f32",
               "mul_add_relu.tile",
               {{"A", F32({kCount})}, {"B", F32({kCount})}, {"C", F32({kCount})}},
               "R",
               [](const Inputs& in) { return std::vector<Runner>{OneDnnMulAddRelu(kCount, in)}; },
               kCount});
  // Every memory format of the seeds (issue 10): the vector form along W in
  // NCHW, along the inner block in nChw16c / nChw8c; C = 20 pads the blocks.
  w.push_back(Conv3x3Layout("L1", 56, 64, "nchw"));
  w.push_back(Conv3x3Layout("L2", 56, 64, "nChw16c"));
  w.push_back(Conv3x3Layout("L3", 56, 64, "nChw8c"));
  w.push_back(Conv3x3Layout("L4", 56, 32, "nChw16c"));
  w.push_back(Conv3x3Layout("L5", 56, 20, "nChw16c"));
  w.push_back(Conv3x3Layout("L6", 56, 20, "nChw8c"));
  // Small spatial size, many channels (issue 9 item 7).
  w.push_back(Conv3x3("S1", 1, 14, 256));
  w.push_back(Conv3x3("S2", 8, 14, 256));
  return w;
}

using Clock = std::chrono::steady_clock;

double TimeMs(const std::function<void()>& f) {
  Clock::time_point start = Clock::now();
  f();
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

SourceFilePtr ReadTile(const std::string& dir, const std::string& name) {
  std::string path = dir + "/" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) TILEC_USER_ERROR("cannot open '{}' (use --workloads DIR for the folder of the .tile files)", path);
  std::stringstream text;
  text << in.rdbuf();
  return MakeSource(path, text.str());
}

// Max abs error of `got` against `want`, and the normwise relative error
// max|got - want| / max|want|.
struct Agreement {
  double max_abs = 0;
  double rel = 0;
  double scale = 0;  // max|want|
  bool ok = false;
};

Agreement Compare(const std::vector<float>& got, const std::vector<float>& want) {
  Agreement a;
  if (got.size() != want.size()) {
    a.max_abs = a.rel = INFINITY;
    return a;
  }
  double scale = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double d = std::fabs(static_cast<double>(got[i]) - want[i]);
    if (!(d <= a.max_abs)) a.max_abs = d;  // NaN sticks
    scale = std::max(scale, std::fabs(static_cast<double>(want[i])));
  }
  a.scale = scale;
  a.rel = a.max_abs / std::max(scale, 1e-30);
  // An all-zero output would make the check prove nothing.
  a.ok = a.rel <= kMaxRelativeError && scale > 0;
  return a;
}

// A row of the final table.
struct Row {
  std::string workload;
  std::string peer;
  tools::TimeStats tilec, other;
  double flops = 0;
  double rel = 0;
};

// The bandwidth lines of a workload with a triad.
struct Bandwidth {
  std::string workload;
  double triad_gbps = 0;                              // best of the runs
  std::vector<std::pair<std::string, double>> sides;  // name, GB/s at the median time
};

struct Results {
  std::vector<Row> rows;
  std::vector<Bandwidth> bandwidth;
  std::vector<std::string> failed;
};

// Tilec's side: compiled once, inputs uploaded once.
Runner TilecRunner(const Workload& w, const lang::Program& bound, const Inputs& inputs,
                   std::shared_ptr<hal::Device> device, const Options& opts) {
  compiler::CompileOptions options;
  if (opts.local >= 0) options.use_local = opts.local != 0;
  options.layouts.relayout = !opts.no_relayout;
  auto program = std::make_shared<std::optional<runtime::Program>>();
  double compile_ms = TimeMs([&] { program->emplace(runtime::Program::Compile(bound, device, options)); });
  if (!opts.no_constants) (*program)->SetConstantInputs(w.constants);
  (*program)->Upload(inputs);
  std::vector<std::string> kernels;
  for (size_t i = 0; i < (*program)->compiled().kernels.size(); ++i) {
    const compiler::CompiledKernel& k = (*program)->compiled().kernels[i];
    kernels.push_back(fmt::format(
        "{}{}", k.search ? fmt::format("{} tile {}", k.spec.name, compiler::TileText(k.spec.flat, k.tile)) : k.spec.name,
        (*program)->constant_kernels()[i] ? " (constant weights: run once, as the peers' weight reorder)" : ""));
  }
  Runner r;
  r.name = "tilec " + device->id();
  r.detail = fmt::format("compile {:.0f} ms; {}", compile_ms, fmt::join(kernels, "; "));
  r.run = [program] { (*program)->Execute(); };
  std::string output = w.output;
  r.output = [program, output] {
    std::map<std::string, lang::Tensor> out = (*program)->Download();
    const lang::Tensor& t = out.at(output);
    return std::vector<float>(t.as<float>(), t.as<float>() + t.size());
  };
  return r;
}

void Measure(const Workload& w, const Options& opts, std::shared_ptr<hal::Device> device, int threads,
             Results& results) {
  fmt::print("\n== {} {}\n", w.id, w.title);
  lang::Program bound = lang::Bind(lang::Parse(ReadTile(opts.workloads, w.tile)), w.shapes, w.layouts);
  tools::Work work = tools::CountWork(bound);
  Inputs inputs;
  for (size_t i = 0; i < bound.inputs.size(); ++i) {
    lang::Tensor t(bound.Tensor(bound.inputs[i]).shape);
    lang::FillRandom(t, opts.seed + i);
    inputs.emplace(bound.inputs[i], std::move(t));
  }
  std::vector<Runner> sides{TilecRunner(w, bound, inputs, device, opts)};
  for (Runner& r : w.peers(inputs)) {
    // oneDNN's reference kernels (e.g. nChw16c on a CPU without AVX-512)
    // are no peer, and would take minutes: skipped, and said so.
    if (r.name.rfind("onednn", 0) == 0 && r.detail.rfind("ref:", 0) == 0) {
      fmt::print("  {}: skipped: oneDNN has only its reference kernel ({}) for this on this CPU\n", r.name,
                 r.detail);
      continue;
    }
    sides.push_back(std::move(r));
  }
  for (const Runner& r : sides) fmt::print("  {}: {}\n", r.name, r.detail);
  if (sides.size() == 1) {
    fmt::print("  {}: no peer to compare with on this CPU; workload not timed\n", w.id);
    return;
  }

  // Correctness first: one run of each side, Tilec against every peer.
  sides[0].run();
  std::vector<float> tilec_output = sides[0].output();
  std::vector<double> rel(sides.size(), 0);
  bool ok = true;
  for (size_t s = 1; s < sides.size(); ++s) {
    sides[s].run();
    Agreement a = Compare(tilec_output, sides[s].output());
    rel[s] = a.rel;
    fmt::print("  check {} vs {}: max abs error {:.3g}, relative {:.3g} (max |output| {:.3g}) {}\n",
               sides[0].name, sides[s].name, a.max_abs, a.rel, a.scale, a.ok ? "OK" : "MISMATCH");
    ok = ok && a.ok;
  }
  if (!ok) {
    fmt::print("  {}: Tilec disagrees with a peer beyond {:g} relative; workload not timed\n", w.id,
               kMaxRelativeError);
    results.failed.push_back(w.id);
    return;
  }
  if (w.triad_count > 0) sides.push_back(Triad(w.triad_count, threads));

  // Rounds: each side once per round, starting one further each round.
  std::vector<std::vector<double>> ms(sides.size());
  for (int round = 0; round < opts.warmup + opts.runs; ++round) {
    for (size_t k = 0; k < sides.size(); ++k) {
      size_t s = (k + static_cast<size_t>(round)) % sides.size();
      // Untimed runs first, for at least --prewarm ms: the previous side's
      // spinning threads (libgomp's spin for several ms after a parallel
      // region) stop and this side's sleeping ones wake, so every side is
      // timed hot and alone.
      auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(opts.prewarm_ms);
      do sides[s].run();
      while (std::chrono::steady_clock::now() < until);
      double t = TimeMs(sides[s].run);
      if (round >= opts.warmup) ms[s].push_back(t);
    }
  }
  std::vector<tools::TimeStats> stats;
  for (auto& m : ms) stats.push_back(tools::Summarize(m));
  for (size_t s = 1; s < sides.size(); ++s) {
    if (!sides[s].output) continue;  // the triad has its own line
    results.rows.push_back({w.id + " " + w.title, sides[s].name, stats[0], stats[s], work.flops, rel[s]});
  }
  if (w.triad_count > 0) {
    Bandwidth b;
    b.workload = w.id;
    b.triad_gbps = 3.0 * static_cast<double>(w.triad_count) * sizeof(float) / (stats.back().min_ms * 1e6);
    for (size_t s = 0; s + 1 < sides.size(); ++s)
      b.sides.emplace_back(sides[s].name, work.bytes / (stats[s].median_ms * 1e6));
    results.bandwidth.push_back(b);
  }
}

void PrintTable(const Results& r, int runs) {
  fmt::print(
      "\nmedian of {} rounds; ratio = peer time / Tilec time (> 1: Tilec faster); "
      "min ratio uses each side's fastest run\n\n",
      runs);
  fmt::print("{:<38} {:<24} {:>10} {:>10} {:>7} {:>9} {:>10} {:>10} {:>9}\n", "workload", "peer", "tilec ms",
             "peer ms", "ratio", "min ratio", "tilec GF/s", "peer GF/s", "rel err");
  for (const Row& row : r.rows) {
    fmt::print("{:<38} {:<24} {:>10.3f} {:>10.3f} {:>7.3f} {:>9.3f} {:>10.2f} {:>10.2f} {:>9.2g}\n",
               row.workload, row.peer, row.tilec.median_ms, row.other.median_ms,
               row.other.median_ms / row.tilec.median_ms, row.other.min_ms / row.tilec.min_ms,
               row.flops / (row.tilec.median_ms * 1e6), row.flops / (row.other.median_ms * 1e6), row.rel);
  }
  for (const Bandwidth& b : r.bandwidth) {
    fmt::print("\n{} streaming bandwidth (triad, best run): {:.2f} GB/s\n", b.workload, b.triad_gbps);
    for (const auto& [name, gbps] : b.sides)
      fmt::print("  {:<30} {:8.2f} GB/s = {:5.1f}% of it (inputs + output, median)\n", name, gbps,
                 100 * gbps / b.triad_gbps);
  }
  if (!r.failed.empty()) fmt::print("\nnot timed (failed or disagreeing): {}\n", fmt::join(r.failed, ", "));
}

// Every side's large buffers on transparent huge pages, as Tilec's runtime
// asks for its own (hal/llvm/llvm_device.cc): the peers' (oneDNN, OpenBLAS,
// the triad) through glibc's malloc tunable, set by executing this program
// again once. Without it the comparison is of page sizes as much as of
// kernels (row sum of 4096x4096: 1.6 vs 1.2 ms, bench/README.md).
void UseHugePagesForThePeers(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "--small-pages") return;
  const char* now = std::getenv("GLIBC_TUNABLES");
  std::string tunables = now ? now : "";
  if (tunables.find("glibc.malloc.hugetlb") != std::string::npos) return;
  tunables += (tunables.empty() ? "" : ":") + std::string("glibc.malloc.hugetlb=1");
  setenv("GLIBC_TUNABLES", tunables.c_str(), 1);
  execv("/proc/self/exe", argv);  // returns only on failure: small pages then
  std::fprintf(stderr, "bench_peers: could not re-execute with huge pages; the peers use small pages\n");
}

int Main(int argc, char** argv) {
  UseHugePagesForThePeers(argc, argv);
  Options opts;
  std::vector<Workload> workloads = AllWorkloads();
  CLI::App app("bench_peers: Tilec against oneDNN and OpenBLAS on the same workloads, round by round",
               "bench_peers");
  std::string ids;
  for (const Workload& w : workloads) ids += fmt::format("\n  {}  {}", w.id, w.title);
  app.footer("Workloads:" + ids +
             "\n\nratio = peer median time / Tilec median time: Tilec's throughput relative to the peer "
             "(> 1: Tilec is faster).\nGFLOP/s: 2 FLOPs per multiply-accumulate over the full index box, "
             "1 per elementwise op and element (tilec bench --help).");
  app.add_option("--device", opts.device, "Tilec's device (default: llvm if available, else opencl)");
  app.add_option("--cpu", opts.cpu,
                 "The CPU Tilec plans and compiles for (an LLVM CPU name or x86-64 level, e.g. x86-64-v3; default: "
                 "TILEC_CPU, else the host). ONEDNN_MAX_CPU_ISA=AVX2 limits oneDNN likewise")
      ->type_name("NAME");
  app.add_option("--runs", opts.runs, "Timed rounds (medians need 10 or more)")->capture_default_str();
  app.add_option("--warmup", opts.warmup, "Untimed rounds first")->capture_default_str();
  app.add_option("--prewarm", opts.prewarm_ms,
                 "Milliseconds of untimed runs of a side right before each of its timed runs (at "
                 "least one run), so the other side's spinning threads stop first")
      ->capture_default_str();
  app.add_option("--only", opts.only, "Workloads to run, e.g. --only W1,W4")->delimiter(',');
  app.add_option("--threads", opts.threads,
                 "Threads for oneDNN (OpenMP), OpenBLAS and the triad; with PoCL also Tilec's device "
                 "(default: all cores, or OMP_NUM_THREADS / OPENBLAS_NUM_THREADS)");
  app.add_option("--local", opts.local, "Tilec: 1 stage inputs in local memory, 0 read global memory")
      ->type_name("0|1");
  app.add_flag("--no-relayout", opts.no_relayout, "Tilec: no relayout kernels (the layouts as given)");
  bool small_pages = false;
  app.add_flag("--small-pages", small_pages,
               "Do not give the peers transparent huge pages (glibc.malloc.hugetlb=1); Tilec's "
               "buffers ask for them anyway");
  app.add_flag("--no-constants", opts.no_constants,
               "Tilec: relayout the weights in every timed run (by default they are constant inputs, "
               "relaid once, as oneDNN reorders them once)");
  app.add_option("--seed", opts.seed, "Seed of the random inputs")->capture_default_str();
  app.add_option("--workloads", opts.workloads, "Folder of the workloads' .tile files")
      ->capture_default_str();
  try {
    app.parse(argc, argv);
    if (opts.runs < 1) throw CLI::ValidationError("--runs", "must be at least 1");
    if (opts.warmup < 0) throw CLI::ValidationError("--warmup", "must be 0 or more");
    for (const std::string& id : opts.only)
      if (std::none_of(workloads.begin(), workloads.end(), [&](const Workload& w) { return w.id == id; }))
        throw CLI::ValidationError("--only", fmt::format("unknown workload '{}'", id));
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help: 0; a usage error: 2, as tilec
  }

  if (opts.threads > 0) {
    // PoCL reads these when the OpenCL platform loads, which has not happened yet.
    std::string n = std::to_string(opts.threads);
    setenv("POCL_CPU_MAX_CU_COUNT", n.c_str(), 0);
    setenv("POCL_MAX_PTHREAD_COUNT", n.c_str(), 0);
  }
  int onednn_threads = SetOneDnnThreads(opts.threads);
  int blas_threads = SetOpenBlasThreads(opts.threads);
  int triad_threads =
      opts.threads > 0 ? opts.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  try {
    std::string device_id = opts.device.empty() ? tools::DefaultDeviceId() : opts.device;
    std::shared_ptr<hal::Device> device = runtime::OpenDevice(device_id, opts.cpu);
    fmt::print(
        "bench_peers: tilec on {}; oneDNN {} threads, OpenBLAS {} threads, triad {} threads; {} runs after "
        "{} warm-up rounds\n",
        device->id(), onednn_threads, blas_threads, triad_threads, opts.runs, opts.warmup);
    const compiler::HardwareModel& hw = device->hardware_model();
    fmt::print("tilec plans for: {} ({} f32 lanes, {} vector registers); oneDNN's ISA: {}\n", hw.name, hw.vec_size,
               hw.vector_registers, std::getenv("ONEDNN_MAX_CPU_ISA") ? std::getenv("ONEDNN_MAX_CPU_ISA")
                                                                      : "the host's best (ONEDNN_MAX_CPU_ISA unset)");
    const char* tunables = std::getenv("GLIBC_TUNABLES");
    bool huge = tunables && std::string_view(tunables).find("glibc.malloc.hugetlb=1") != std::string_view::npos;
    fmt::print("pages: Tilec's buffers ask for huge pages; the peers' {}\n",
               huge ? "too (glibc.malloc.hugetlb=1)" : "use small pages (--small-pages)");
    if (opts.runs < 10) fmt::print("note: fewer than 10 runs; the medians are rough\n");
    Results results;
    for (const Workload& w : workloads) {
      if (!opts.only.empty() && std::find(opts.only.begin(), opts.only.end(), w.id) == opts.only.end())
        continue;
      try {
        Measure(w, opts, device, triad_threads, results);
      } catch (const Error& e) {
        fmt::print("  {}: {}\n  workload skipped\n", w.id, e.Render());
        results.failed.push_back(w.id);
      } catch (const std::exception& e) {
        // A peer library's error (dnnl::error).
        fmt::print("  {}: {}\n  workload skipped\n", w.id, e.what());
        results.failed.push_back(w.id);
      }
    }
    std::fflush(stdout);
    PrintTable(results, opts.runs);
    return results.failed.empty() ? 0 : 1;
  } catch (const Error& e) {
    fmt::print(stderr, "{}\n", e.Render());
    return 1;
  }
}

}  // namespace
}  // namespace tilec::bench

int main(int argc, char** argv) { return tilec::bench::Main(argc, argv); }
