#include "runtime/tuner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <atomic>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "compiler/schedule/cost_model.h"
#include "compiler/ir/kernel_signature.h"
#include "compiler/sem/printer.h"
#include "compiler/schedule/thread_plan.h"
#include "compiler/schedule/tile_search.h"
#include "runtime/program.h"
#include "runtime/settings.h"
#include "support/error.h"
#include "tile_lang/evaluator.h"

namespace tilec::runtime {
namespace {

using Clock = std::chrono::steady_clock;
using compiler::KernelConfig;
using Inputs = std::map<std::string, lang::Tensor>;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Above this many points in all, the reference evaluator is too slow to check
// every candidate: candidates are compared with the model's pick instead.
constexpr double kEvaluatorPoints = 2e7;

double ProgramPoints(const compiler::CompiledProgram& compiled) {
  double points = 0;
  for (const compiler::CompiledKernel& k : compiled.kernels) {
    double p = 1;
    for (const compiler::FlatIndex& i : k.spec.flat.indices) p *= static_cast<double>(i.range);
    points += p;
  }
  return points;
}

Inputs RandomInputs(const lang::Program& program, uint64_t seed) {
  Inputs inputs;
  for (size_t i = 0; i < program.inputs.size(); ++i) {
    lang::Tensor t(program.Tensor(program.inputs[i]).shape);
    lang::FillRandom(t, seed + i);
    inputs.emplace(program.inputs[i], std::move(t));
  }
  return inputs;
}

// "" if every output matches (allclose with a tolerance by dtype; integers
// exactly), else what differs.
std::string Compare(const Inputs& got, const Inputs& want) {
  for (const auto& [name, w] : want) {
    auto g = got.find(name);
    if (g == got.end() || g->second.size() != w.size()) return fmt::format("output {} is missing", name);
    bool is_float = lang::IsFloat(w.dtype());
    double rtol = w.dtype() == lang::DataType::F16 ? 1e-2 : w.dtype() == lang::DataType::F64 ? 1e-9 : 1e-3;
    double atol = rtol;
    for (int64_t i = 0; i < w.size(); ++i) {
      if (!is_float) {
        if (g->second.GetInt(i) != w.GetInt(i))
          return fmt::format("{}[{}] is {} instead of {}", name, i, g->second.GetInt(i), w.GetInt(i));
        continue;
      }
      double a = g->second.GetDouble(i), b = w.GetDouble(i);
      if (std::isnan(a) && std::isnan(b)) continue;
      if (!(std::fabs(a - b) <= atol + rtol * std::fabs(b)))
        return fmt::format("{}[{}] is {:g} instead of {:g}", name, i, a, b);
    }
  }
  return "";
}

// What makes two candidates the same kernel: its code and launch geometry.
std::string CodeKey(const compiler::GeneratedKernel& g) {
  return fmt::format("{}\n{}/{}", sem::Print(g.function), fmt::join(g.global, ","), fmt::join(g.local, ","));
}

// ConfigText of a configuration whose tile is in flat order.
std::string FlatConfigText(compiler::KernelConfig c, const compiler::FlatContraction& flat) {
  if (c.tile.empty() && c.work_group.empty()) return compiler::ToString(c);
  std::string tile = c.tile.empty() ? "" : "tile " + compiler::TileText(flat, c.tile);
  std::string group = c.work_group.empty() ? "" : "group " + compiler::TileText(flat, c.work_group);
  c.tile.clear();
  c.work_group.clear();
  std::string rest = compiler::ToString(c);
  std::vector<std::string> parts;
  for (std::string* s : {&tile, &rest, &group})
    if (!s->empty() && *s != "default") parts.push_back(*s);
  return fmt::format("{}", fmt::join(parts, " "));
}

struct Measured {
  TuningTrial trial;
  std::vector<int64_t> tile;  // the tile the kernel used
  std::vector<int64_t> work_group;  // flat form: its threads along each index
  bool vector_form = false;
  int64_t rows = 0;  // the configuration's rows (0: automatic)
};

// Tunes one kernel; `reference` is filled by the first trial when the
// evaluator is not used.
class KernelTuner {
 public:
  KernelTuner(const lang::Program& program, const std::shared_ptr<hal::Device>& device,
              const TuneOptions& options, const compiler::CompiledProgram& baseline, size_t index,
              const Inputs& inputs, const Inputs* reference)
      : program_(program),
        device_(device),
        options_(options),
        baseline_(baseline),
        index_(index),
        spec_(baseline.kernels[index].spec),
        inputs_(inputs),
        reference_(reference) {}

  // Measures candidates until `deadline`, the trial limit or a stop.
  TuningRecord Run(Clock::time_point deadline, Clock::time_point global_deadline, int kernel_index,
                   int kernel_count, bool* interrupted) {
    deadline_ = deadline;
    global_deadline_ = global_deadline;
    kernel_index_ = kernel_index;
    kernel_count_ = kernel_count;
    const compiler::HardwareModel& hw = device_->hardware_model();
    compiler::TileSearchOptions search;
    search.fast = false;
    search.keep_log = false;
    compiler::TileSearchResult ranked = compiler::SearchTiles(spec_.flat, hw, search);
    for (size_t i = 0; i < ranked.ranked.size(); ++i)
      scores_.emplace(ranked.ranked[i].tile, std::make_pair(ranked.ranked[i].score.score, static_cast<int>(i)));

    Report(TuneProgress::Event::Start, nullptr);
    Try(KernelConfig{});  // the model's pick
    std::vector<std::vector<int64_t>> top;
    for (const compiler::TileCandidate& c : ranked.ranked) {
      if (static_cast<int>(top.size()) >= options_.top_k) break;
      top.push_back(c.tile);
    }
    bool vector_form = baseline_.kernels[index_].code.form != compiler::Form::Flat;
    // OpenCL: local staging the other way than the device's default (the
    // flat form; the vector form never stages).
    bool opencl = device_->id().rfind("opencl", 0) == 0;
    bool flipped_local = !options_.base.use_local.value_or(hw.local_memory_managed);
    std::vector<KernelConfig> initial;
    if (opencl) initial.push_back({{}, flipped_local, false, 0, {}});
    if (vector_form) {
      for (int64_t rows : {2, 4, 8, 6, 3, 1}) initial.push_back({{}, std::nullopt, true, rows, {}});
      // The flat form is rarely competitive where the vector form applies:
      // only the model's best two tiles.
      for (size_t t = 0; t < top.size() && t < 2; ++t) initial.push_back({top[t], std::nullopt, false, 0, {}});
    } else {
      for (const auto& tile : top) initial.push_back({tile, std::nullopt, std::nullopt, 0, {}});
    }
    if (opencl)
      for (size_t t = 0; t < top.size() && t < 3; ++t) initial.push_back({top[t], flipped_local, false, 0, {}});
    Precompile(initial);
    for (const KernelConfig& c : initial)
      if (!Try(c)) break;
    // OpenCL: other work-group shapes for the best flat-form candidate.
    if (opencl) {
      std::vector<KernelConfig> shapes = WorkGroupCandidates();
      Precompile(shapes);
      for (const KernelConfig& c : shapes)
        if (!Try(c)) break;
    }
    // Local search around the best, while it improves.
    while (!Done()) {
      const Measured* best = Best();
      if (!best) break;
      double before = best->trial.median_ms;
      KernelConfig center = best->trial.config;
      std::vector<KernelConfig> next;
      if (best->vector_form) {
        int64_t rows = best->rows ? best->rows : 4;
        for (int64_t r : {rows - 1, rows + 1})
          if (r >= 1 && r <= 16) next.push_back({{}, center.use_local, true, r, {}});
      } else {
        std::vector<int64_t> tile = best->tile;
        for (size_t i = 0; i < tile.size(); ++i) {
          int64_t range = spec_.flat.indices[i].range;
          for (int64_t t : {tile[i] > range / 2 ? range : tile[i] * 2, std::max<int64_t>(1, tile[i] / 2)}) {
            if (t == tile[i]) continue;
            KernelConfig c = center;
            c.tile = tile;
            c.tile[i] = t;
            c.work_group.clear();  // the shape of the old tile may not fit the new one
            next.push_back(std::move(c));
          }
        }
      }
      bool tried = false;
      for (const KernelConfig& c : next) {
        if (tried_.count(c)) continue;
        tried = true;
        if (!Try(c)) break;
      }
      const Measured* after = Best();
      if (!tried || !after || after->trial.median_ms >= before) break;
    }
    Confirm();
    *interrupted = stopped_;
    return Record();
  }

 private:
  bool Done() {
    if (!stopped_ && options_.stop && options_.stop()) stopped_ = true;
    return stopped_ || trials_ >= options_.trials || Clock::now() >= deadline_;
  }

  // After Confirm, only the trials timed side by side compete.
  const Measured* Best() const {
    const Measured* best = nullptr;
    for (const Measured& m : measured_)
      if (m.trial.ok && (!confirmed_ || m.trial.paired) && (!best || m.trial.median_ms < best->trial.median_ms))
        best = &m;
    return best;
  }

  // The search compares medians taken one after another; on a shared
  // machine the speed drifts between them (one free core or two), and the
  // model's pick, timed first, can look far slower than candidates that
  // are as fast or slower when timed side by side (bench/tuning, issue 12;
  // bench/HISTORY.md).
  // So the model's pick and the fastest other candidates are timed again in
  // turns (A B C A B C ...; each turn one untimed run, then a few timed
  // ones, so each keeps its data in cache), and the winner and both figures
  // come from these turns.
  void Confirm() {
    if (stopped_ || measured_.empty() || !measured_.front().trial.ok) return;
    std::vector<size_t> order;
    for (size_t i = 1; i < measured_.size(); ++i)
      if (measured_[i].trial.ok) order.push_back(i);
    if (order.empty()) return;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return measured_[a].trial.median_ms < measured_[b].trial.median_ms;
    });
    order.resize(std::min<size_t>(order.size(), kConfirmed - 1));
    order.insert(order.begin(), 0);
    std::vector<Program> programs;
    std::vector<size_t> who;
    for (size_t i : order) {
      Compiled c = CompileCandidate(measured_[i].trial.config);
      if (!c.program) continue;  // it built before: not expected
      programs.push_back(std::move(*c.program));
      programs.back().Upload(inputs_);
      programs.back().Execute();
      who.push_back(i);
    }
    if (programs.size() < 2 || who.front() != 0) return;
    // Timed runs per turn: about 10 ms of the slowest, 2 to 5.
    double slowest = 0;
    for (size_t i : who) slowest = std::max(slowest, measured_[i].trial.median_ms);
    int runs = static_cast<int>(std::clamp(10.0 / std::max(slowest, 1e-3), 2.0, 5.0));
    std::vector<std::vector<double>> ms(programs.size());
    Clock::time_point start = Clock::now();
    for (int round = 0; round < kConfirmRounds; ++round) {
      for (size_t c = 0; c < programs.size(); ++c) {
        programs[c].Execute();
        for (int r = 0; r < runs; ++r)
          ms[c].push_back(static_cast<double>(programs[c].Execute().kernel_ns.at(index_)) / 1e6);
      }
      if (options_.stop && options_.stop()) return;  // keep the search's figures
      if (round >= 2 && SecondsSince(start) > kConfirmSeconds) break;
    }
    for (size_t c = 0; c < programs.size(); ++c) {
      TuningTrial& t = measured_[who[c]].trial;
      SetTimes(std::move(ms[c]), t);
      t.paired = true;
    }
    confirmed_ = true;
  }

  // Work-group shapes around the best flat-form trial's: the threads the
  // cost model would spread for a quarter, half and twice the work-group
  // size (AssignOutputThreads), and its shape with one index's threads
  // halved or doubled (the others kept), within the tile and the device.
  std::vector<KernelConfig> WorkGroupCandidates() const {
    const Measured* best = nullptr;
    for (const Measured& m : measured_)
      if (m.trial.ok && !m.vector_form && !m.work_group.empty() &&
          (!best || m.trial.median_ms < best->trial.median_ms))
        best = &m;
    std::vector<KernelConfig> out;
    if (!best) return out;
    const compiler::HardwareModel& hw = device_->hardware_model();
    const compiler::FlatContraction& flat = spec_.flat;
    auto add = [&](std::vector<int64_t> shape) {
      for (int64_t& t : shape) t = std::max<int64_t>(t, 1);
      if (shape == best->work_group || !compiler::CheckWorkGroup(flat, best->tile, hw, shape).empty()) return;
      KernelConfig c{best->tile, best->trial.config.use_local, false, 0, shape};
      if (out.size() < kShapes && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(std::move(c));
    };
    int64_t threads = 1;
    for (int64_t t : best->work_group) threads *= t;
    for (int64_t size : {threads / 4, threads / 2, threads * 2}) {
      if (size < 1 || size > hw.max_work_group_size) continue;
      compiler::HardwareModel resized = hw;
      resized.threads = size;
      add(compiler::AssignOutputThreads(flat, best->tile, resized));
    }
    for (size_t i = 0; i < best->work_group.size(); ++i) {
      for (int64_t t : {best->work_group[i] / 2, best->work_group[i] * 2}) {
        std::vector<int64_t> shape = best->work_group;
        shape[i] = t;
        add(shape);
      }
    }
    return out;
  }

  // A candidate compiled ahead of its trial: the program, or the error.
  struct Compiled {
    std::optional<Program> program;
    std::string note;
  };

  Compiled CompileCandidate(const KernelConfig& config) const {
    Compiled c;
    try {
      compiler::CompileOptions options = options_.base;
      options.tuned = std::map<std::string, KernelConfig>{};
      if (config != KernelConfig{}) options.kernel_config[spec_.name] = config;
      c.program.emplace(Program::Compile(program_, device_, options));
    } catch (const UserError& e) {
      c.note = "error: " + e.message();
    } catch (const DeviceError& e) {
      c.note = fmt::format("device error: {}", e.what());
    }
    return c;
  }

  // Compiles the candidates (up to the trial limit) on every core at once,
  // before any is timed: compiling beside a timed run would disturb it,
  // and the trials then only time. Programs compile concurrently by design
  // (docs/embedding.md, "Threads").
  void Precompile(const std::vector<KernelConfig>& configs) {
    std::vector<KernelConfig> todo;
    for (const KernelConfig& c : configs)
      if (!tried_.count(c) && !precompiled_.count(c) &&
          static_cast<int>(todo.size()) < options_.trials - trials_)
        todo.push_back(c);
    if (todo.size() < 2) return;
    std::vector<Compiled> done(todo.size());
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i; (i = next++) < todo.size();) done[i] = CompileCandidate(todo[i]);
    };
    size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, todo.size());
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (std::thread& t : pool) t.join();
    for (size_t i = 0; i < todo.size(); ++i) precompiled_.emplace(todo[i], std::move(done[i]));
  }

  // Compiles (unless Precompile did), verifies and times `config`; false
  // once the kernel's budget is spent (nothing measured then).
  bool Try(const KernelConfig& config) {
    if (Done()) return false;
    if (!tried_.insert(config).second) return true;
    Measured m;
    m.trial.config = config;
    Compiled compiled;
    if (auto it = precompiled_.find(config); it != precompiled_.end()) {
      compiled = std::move(it->second);
      precompiled_.erase(it);
    } else {
      compiled = CompileCandidate(config);
    }
    try {
      if (!compiled.program) throw CompileFailed{compiled.note};
      Program& p = *compiled.program;
      const compiler::CompiledKernel& k = p.compiled().kernels.at(index_);
      m.tile = k.tile;
      m.vector_form = k.code.form != compiler::Form::Flat;
      m.rows = config.vector_rows;
      if (!m.vector_form && k.search) {
        m.work_group.assign(spec_.flat.num_indices(), 1);
        for (const compiler::ThreadPlan::OutDim& d : k.code.threads.outputs) m.work_group[d.index] = d.threads;
      }
      auto score = scores_.find(k.tile);
      if (!m.vector_form && score != scores_.end()) {
        m.trial.model_score = score->second.first;
        m.trial.model_rank = score->second.second;
      }
      if (!codes_.insert(CodeKey(k.code)).second) return true;  // the same kernel as an earlier trial
      Inputs outputs = p.Run(inputs_);
      if (!reference_) {
        own_reference_ = outputs;  // the model's pick: the reference on large kernels
        reference_ = &own_reference_;
      } else if (std::string diff = Compare(outputs, *reference_); !diff.empty()) {
        m.trial.note = "mismatch: " + diff;
      }
      if (m.trial.note.empty()) Time(p, m.trial);
    } catch (const CompileFailed& e) {
      m.trial.note = e.note;
    } catch (const UserError& e) {
      m.trial.note = "error: " + e.message();
    } catch (const DeviceError& e) {
      m.trial.note = fmt::format("device error: {}", e.what());
    }
    ++trials_;
    measured_.push_back(m);
    Report(TuneProgress::Event::Trial, &measured_.back().trial);
    return true;
  }

  // Warm-up, then repeated runs for about 0.25 s (5 to 25 runs): the
  // kernel's device time.
  void Time(Program& p, TuningTrial& trial) {
    p.Upload(inputs_);
    Clock::time_point start = Clock::now();
    p.Execute();
    double first = SecondsSince(start);
    p.Execute();
    int runs = static_cast<int>(std::clamp(0.25 / std::max(first, 1e-6), 5.0, 25.0));
    std::vector<double> ms;
    for (int r = 0; r < runs; ++r) {
      RunStats s = p.Execute();
      ms.push_back(static_cast<double>(s.kernel_ns.at(index_)) / 1e6);
      if (options_.stop && options_.stop()) break;
    }
    SetTimes(std::move(ms), trial);
    trial.ok = true;
  }

  // The median, min and max of a trial's timed runs (ms, at least one).
  static void SetTimes(std::vector<double> ms, TuningTrial& trial) {
    std::sort(ms.begin(), ms.end());
    size_t n = ms.size();
    trial.median_ms = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
    trial.min_ms = ms.front();
    trial.max_ms = ms.back();
  }

  void Report(TuneProgress::Event event, const TuningTrial* last) {
    if (!options_.progress) return;
    TuneProgress p;
    p.event = event;
    p.kernel = spec_.name;
    p.kernel_index = kernel_index_;
    p.kernel_count = kernel_count_;
    p.trial = trials_;
    p.trials = options_.trials;
    if (last) {
      p.last = *last;
      p.last_text = FlatConfigText(last->config, spec_.flat);
    }
    if (const Measured* b = Best()) p.best_ms = b->trial.median_ms;
    if (!measured_.empty() && measured_.front().trial.ok) p.model_ms = measured_.front().trial.median_ms;
    p.flops = KernelFlops(spec_);
    p.seconds_left = std::max(0.0, std::chrono::duration<double>(global_deadline_ - Clock::now()).count());
    options_.progress(p);
  }

  TuningRecord Record() const {
    TuningRecord r;
    // Tiles are kept in the signature's canonical index order.
    compiler::KernelSignature signature = compiler::SignKernel(spec_);
    auto canonical = [&](KernelConfig c) {
      if (!c.tile.empty()) c.tile = compiler::ToCanonical(signature, c.tile);
      if (!c.work_group.empty()) c.work_group = compiler::ToCanonical(signature, c.work_group);
      return c;
    };
    r.signature = signature.hash;
    r.kernel = DescribeKernel(spec_);
    r.program = options_.program_name;
    r.flops = KernelFlops(spec_);
    if (!measured_.empty() && measured_.front().trial.ok) r.model_ms = measured_.front().trial.median_ms;
    if (const Measured* b = Best()) {
      r.winner = canonical(b->trial.config);
      r.median_ms = b->trial.median_ms;
    }
    for (const Measured& m : measured_) {
      r.trials.push_back(m.trial);
      r.trials.back().config = canonical(m.trial.config);
    }
    return r;
  }

  const lang::Program& program_;
  const std::shared_ptr<hal::Device>& device_;
  const TuneOptions& options_;
  const compiler::CompiledProgram& baseline_;
  size_t index_;
  const compiler::KernelSpec& spec_;
  const Inputs& inputs_;
  const Inputs* reference_;
  Inputs own_reference_;
  std::map<std::vector<int64_t>, std::pair<double, int>> scores_;  // tile -> score, rank
  struct ConfigLess {
    bool operator()(const KernelConfig& a, const KernelConfig& b) const {
      return std::tie(a.tile, a.use_local, a.vector, a.vector_rows, a.work_group) <
             std::tie(b.tile, b.use_local, b.vector, b.vector_rows, b.work_group);
    }
  };
  std::set<KernelConfig, ConfigLess> tried_;
  std::map<KernelConfig, Compiled, ConfigLess> precompiled_;
  struct CompileFailed {
    std::string note;
  };
  std::set<std::string> codes_;
  std::vector<Measured> measured_;
  int trials_ = 0;
  bool stopped_ = false;
  bool confirmed_ = false;  // Confirm timed the finalists side by side
  static constexpr size_t kShapes = 6;  // work-group shapes tried
  static constexpr size_t kConfirmed = 3;  // the model's pick and the two fastest others
  static constexpr int kConfirmRounds = 7;
  static constexpr double kConfirmSeconds = 2;
  Clock::time_point deadline_, global_deadline_;
  int kernel_index_ = 0, kernel_count_ = 0;
};

compiler::CompiledProgram CompileForSignatures(const lang::Program& program, const hal::Device& device,
                                               compiler::CompileOptions options) {
  options.hw = device.hardware_model();
  options.tuned = std::map<std::string, KernelConfig>{};
  return compiler::CompileProgram(program, options);
}

void FillTexts(const compiler::KernelSpec& spec, const TuningRecord& r, std::string& winner,
               std::vector<std::string>& trials) {
  winner = ConfigText(r.winner, spec);
  for (const TuningTrial& t : r.trials) trials.push_back(ConfigText(t.config, spec));
}

}  // namespace

std::string ConfigText(const compiler::KernelConfig& canonical, const compiler::KernelSpec& spec) {
  compiler::KernelConfig c = canonical;
  compiler::KernelSignature s = compiler::SignKernel(spec);
  for (std::vector<int64_t>* sizes : {&c.tile, &c.work_group}) {
    if (sizes->empty()) continue;
    if (sizes->size() != s.order.size()) return compiler::ToString(canonical) + " (does not fit)";
    *sizes = compiler::FromCanonical(s, *sizes);
  }
  return FlatConfigText(c, spec.flat);
}

std::string DescribeKernel(const compiler::KernelSpec& spec) {
  std::vector<int64_t> ranges;
  for (const compiler::FlatIndex& i : spec.flat.indices) ranges.push_back(i.range);
  std::string kind(compiler::Name(spec.kind));
  std::transform(kind.begin(), kind.end(), kind.begin(), [](char c) { return std::tolower(c); });
  return fmt::format("{} [{}]", kind, fmt::join(ranges, ", "));
}

double KernelFlops(const compiler::KernelSpec& spec) {
  const compiler::FlatContraction& flat = spec.flat;
  double points = 1, outputs = 1;
  for (int i = 0; i < flat.num_indices(); ++i) {
    points *= static_cast<double>(flat.indices[i].range);
    if (flat.output().strides[i] != 0) outputs *= static_cast<double>(flat.indices[i].range);
  }
  double flops = static_cast<double>(flat.post_ops.size()) * outputs;
  if (flat.generate_contraction)
    flops += points * (flat.agg_op == lang::ast::AggOp::Sum && flat.comb_op == lang::ast::CombOp::Mul ? 2 : 1);
  return flops;
}

TuneResult TuneProgram(const lang::Program& program, const std::shared_ptr<hal::Device>& device,
                       const TuningCache& cache, const TuneOptions& options) {
  Clock::time_point start = Clock::now();
  Clock::time_point deadline =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.budget_s));
  TuneResult result;
  std::string fingerprint = DeviceFingerprint(*device);
  TuningLookup lookup = cache.Load(fingerprint);
  result.notices = lookup.notices;
  compiler::CompiledProgram plan = CompileForSignatures(program, *device, options.base);

  // The kernels to tune: flat ones, one per signature, not known yet.
  std::vector<size_t> todo;
  std::set<std::string> signatures;
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    const compiler::CompiledKernel& k = plan.kernels[i];
    if (!compiler::IsFlatKind(k.spec.kind) || !signatures.insert(k.signature).second) continue;
    auto known = lookup.records.find(k.signature);
    if (known != lookup.records.end() && !options.retune) {
      KernelTuneResult r{k.spec.name, known->second, true, false, "", "", {}};
      FillTexts(k.spec, r.record, r.winner_text, r.trial_texts);
      result.kernels.push_back(std::move(r));
      if (options.progress) {
        TuneProgress p;
        p.event = TuneProgress::Event::Cached;
        p.kernel = k.spec.name;
        p.best_ms = known->second.median_ms;
        p.model_ms = known->second.model_ms;
        p.flops = known->second.flops;
        options.progress(p);
      }
      continue;
    }
    todo.push_back(i);
  }
  if (!todo.empty()) {
    // The model's pick of every kernel, built for the device: what the trials compare with.
    Inputs inputs = RandomInputs(program, options.seed);
    Inputs reference;
    bool use_evaluator = ProgramPoints(plan) <= kEvaluatorPoints;
    if (use_evaluator) reference = lang::Evaluate(program, inputs);
    for (size_t n = 0; n < todo.size(); ++n) {
      size_t index = todo[n];
      if (options.stop && options.stop()) {
        result.interrupted = true;
        break;
      }
      double left = std::chrono::duration<double>(deadline - Clock::now()).count();
      if (left <= 0) break;
      Clock::time_point kernel_deadline =
          Clock::now() + std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>(left / static_cast<double>(todo.size() - n)));
      KernelTuner tuner(program, device, options, plan, index, inputs, use_evaluator ? &reference : nullptr);
      bool interrupted = false;
      TuningRecord record = tuner.Run(kernel_deadline, deadline, static_cast<int>(n),
                                      static_cast<int>(todo.size()), &interrupted);
      record.device = fingerprint;
      record.version = cache.options().version;
      KernelTuneResult r{plan.kernels[index].spec.name, std::move(record), false, false, "", "", {}};
      FillTexts(plan.kernels[index].spec, r.record, r.winner_text, r.trial_texts);
      bool measured = std::any_of(r.record.trials.begin(), r.record.trials.end(),
                                  [](const TuningTrial& t) { return t.ok; });
      if (measured) r.stored = cache.Append(r.record, &r.store_error);
      result.kernels.push_back(std::move(r));
      if (interrupted) {
        result.interrupted = true;
        break;
      }
    }
  }
  // Program order.
  std::map<std::string, size_t> order;
  for (size_t i = 0; i < plan.kernels.size(); ++i) order[plan.kernels[i].spec.name] = i;
  std::stable_sort(result.kernels.begin(), result.kernels.end(),
                   [&](const KernelTuneResult& a, const KernelTuneResult& b) {
                     return order[a.kernel] < order[b.kernel];
                   });
  result.seconds = SecondsSince(start);
  return result;
}

CachedTuning ShowTuning(const lang::Program& program, const hal::Device& device, const TuningCache& cache,
                        const compiler::CompileOptions& base) {
  CachedTuning out;
  out.lookup = cache.Load(DeviceFingerprint(device));
  compiler::CompiledProgram plan = CompileForSignatures(program, device, base);
  for (const compiler::CompiledKernel& k : plan.kernels) {
    if (!compiler::IsFlatKind(k.spec.kind)) continue;
    CachedTuning::Kernel kernel{k.spec.name, k.signature, DescribeKernel(k.spec), std::nullopt, "", {}};
    if (auto it = out.lookup.records.find(k.signature); it != out.lookup.records.end()) {
      kernel.record = it->second;
      FillTexts(k.spec, it->second, kernel.winner_text, kernel.trial_texts);
    }
    out.kernels.push_back(std::move(kernel));
  }
  return out;
}

void ApplyTuning(const lang::Program& program, const std::shared_ptr<hal::Device>& device, double budget_s,
                 compiler::CompileOptions& options) {
  if (options.tuned) return;
  if (budget_s > 0 && ProcessTuningCache().options().enabled) {
    TuneOptions tune;
    tune.base = options;
    tune.budget_s = budget_s;
    for (const std::string& n : TuneProgram(program, device, ProcessTuningCache(), tune).notices) NoticeOnce(n);
  }
  options.tuned = ProcessTunedConfigs(*device);
}

}  // namespace tilec::runtime
