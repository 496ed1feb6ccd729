// TuneProgram: autotuning with profiling (issue 12). For each flat kernel of
// a program it measures candidate configurations on the device and records
// the fastest verified one in the tuning cache (tuning_cache.h), which every
// later compile applies.
//
// Per kernel (kernels with one signature are tuned once):
//  1. The cost model's pick (the untuned compile) is trial 1.
//  2. Candidates: the cost model's top tiles (a full best-first search), and
//     the form knobs that matter on the device — on CPUs the vector form's
//     register rows, and the flat form with the top tiles; on OpenCL local
//     staging on and off, then work-group shapes for the fastest flat-form
//     tile. Candidates that generate the same code as one tried already are
//     skipped without a trial.
//  3. A local search around the best so far: each tile size doubled and
//     halved (vector rows one up and down), while it improves.
//  4. The model's pick and the two fastest others timed again side by side,
//     in turns: the winner and the record's figures come from those turns
//     (sequential medians drift with the machine's load).
// Every candidate is compiled, run on random inputs and compared with the
// reference evaluator (on large kernels, with the model's pick's outputs)
// before it may win, then timed: warm-up runs, then repeated runs of the
// whole program; the kernel's own device time is taken, median and spread.
// Budgets: `trials` per kernel and `budget_s` in all, split over the kernels
// still to tune; `stop` (Ctrl-C) ends the search keeping what was measured.
// Kernels already in the cache for this device and version are answered from
// it without compiling for the device (unless `retune`).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/pipeline.h"
#include "hal/hal.h"
#include "runtime/tuning_cache.h"
#include "tile_lang/program.h"

namespace tilec::runtime {

struct TuneProgress {
  enum class Event : uint8_t { Start, Trial, Done, Cached };
  Event event = Event::Start;
  std::string kernel;        // "kernel_0"
  int kernel_index = 0;      // among the kernels tuned, from 0
  int kernel_count = 0;
  int trial = 0;             // trials run for this kernel so far
  int trials = 0;            // its trial limit
  TuningTrial last;          // Event::Trial: the trial just measured
  std::string last_text;     // its configuration, ConfigText
  double best_ms = -1;       // the best verified so far (-1: none)
  double model_ms = -1;      // the cost model's pick
  double flops = 0;          // per kernel run
  double seconds_left = 0;   // of the whole budget
};

struct TuneOptions {
  compiler::CompileOptions base;  // the options every candidate starts from
  int trials = 20;                // per kernel, the model's pick included
  double budget_s = 60;           // in all
  uint64_t seed = 1;              // of the random inputs
  int top_k = 6;                  // the cost model's top tiles tried
  bool retune = false;            // tune kernels the cache already knows
  std::string program_name;       // kept in the records, for people
  std::function<bool()> stop;     // polled; true: stop now, keep what was measured
  std::function<void(const TuneProgress&)> progress;
};

struct KernelTuneResult {
  std::string kernel;  // name in the program
  TuningRecord record;
  bool from_cache = false;
  bool stored = false;  // appended to the cache file
  std::string store_error;
  // ConfigText of the winner and of each trial (index names, flat order).
  std::string winner_text;
  std::vector<std::string> trial_texts;
};

struct TuneResult {
  std::vector<KernelTuneResult> kernels;  // flat kernels, in program order, one per signature
  bool interrupted = false;
  double seconds = 0;
  std::vector<std::string> notices;  // the cache's (corrupt or foreign lines)
};

// Pre: `program` came from Bind. UserError / DeviceError only for the model's
// pick (a candidate that fails to build or to verify is recorded as such).
TuneResult TuneProgram(const lang::Program& program, const std::shared_ptr<hal::Device>& device,
                       const TuningCache& cache, const TuneOptions& options);

// Tune on first use, then the tuning cache: what every compile through
// runtime::Program (and the program cache) does with `options.tuned`. Unless
// it is set already (an explicit set; empty: the cost model's picks), tunes
// the kernels of `program` the process's tuning cache does not know yet,
// within `budget_s` seconds (when > 0 and the cache is enabled; the cache's
// notices printed once), then sets `options.tuned` to what the cache holds
// for `device`.
void ApplyTuning(const lang::Program& program, const std::shared_ptr<hal::Device>& device, double budget_s,
                 compiler::CompileOptions& options);

// The kernels of `program` as the cache knows them for `device` (the
// records found; `kernels` lists every flat kernel with its signature).
struct CachedTuning {
  struct Kernel {
    std::string name;
    std::string signature;
    std::string description;
    std::optional<TuningRecord> record;  // nullopt: not tuned
    std::string winner_text;               // ConfigText of the winner
    std::vector<std::string> trial_texts;  // and of each trial
  };
  TuningLookup lookup;
  std::vector<Kernel> kernels;
};
CachedTuning ShowTuning(const lang::Program& program, const hal::Device& device,
                        const TuningCache& cache, const compiler::CompileOptions& base);

// A configuration kept in the cache (tiles in the signature's canonical
// order) as the kernel's own indices name it: "tile [x: 8, co: 16] vector 0".
std::string ConfigText(const compiler::KernelConfig& canonical, const compiler::KernelSpec& spec);

// "contraction [1, 9, 7, 6, 3, 3, 5]": a kernel's kind and index ranges.
std::string DescribeKernel(const compiler::KernelSpec& spec);
// FLOPs of one run of a flat kernel: points x 2 for a sum of products (1 for
// other contractions), plus one per output element and post-op.
double KernelFlops(const compiler::KernelSpec& spec);

}  // namespace tilec::runtime
