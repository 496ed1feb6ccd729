#include "compiler/schedule/cost_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "compiler/schedule/read_plan.h"
#include "support/error.h"

namespace tilec::compiler {
namespace {

int64_t Abs(int64_t v) { return v < 0 ? -v : v; }
int64_t CeilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

// mem_width in elements of a type (at least 1).
int64_t MemElems(const HardwareModel& hw, lang::DataType t) {
  return std::max<int64_t>(1, hw.mem_width / lang::ByteSize(t));
}

void CheckTile(const FlatContraction& flat, const std::vector<int64_t>& tile) {
  TILEC_CHECK(tile.size() == flat.indices.size(), "tile has {} entries for {} indices", tile.size(),
              flat.indices.size());
  for (size_t i = 0; i < tile.size(); ++i)
    TILEC_CHECK(tile[i] >= 1 && tile[i] <= flat.indices[i].range,
                "tile {} for index {} of range {}", tile[i], flat.indices[i].name,
                flat.indices[i].range);
}

// Like ostream's default float output: 6 significant digits.
std::string Num(double v) { return fmt::format("{:g}", v); }

}  // namespace

std::vector<int64_t> AssignOutputThreads(const FlatContraction& flat,
                                         const std::vector<int64_t>& tile,
                                         const HardwareModel& hw) {
  CheckTile(flat, tile);
  const std::vector<int64_t>& out_strides = flat.output().strides;
  std::vector<int> outs;
  for (size_t i = 0; i < tile.size(); ++i)
    if (out_strides[i] != 0) outs.push_back(static_cast<int>(i));
  // By |stride|, ties: later index first (PlaidML's order; it decides which
  // index gets the coalescing threads).
  std::stable_sort(outs.begin(), outs.end(), [&](int a, int b) {
    if (Abs(out_strides[a]) != Abs(out_strides[b]))
      return Abs(out_strides[a]) < Abs(out_strides[b]);
    return b < a;
  });
  std::vector<int64_t> threads(tile.size(), 0);
  for (int i : outs) threads[i] = 1;
  if (outs.empty()) return threads;

  int64_t left = hw.threads;
  int64_t mem_elems = MemElems(hw, flat.output().dtype);
  int64_t low = NearestPo2(std::min({mem_elems, hw.threads, tile[outs[0]]}));
  threads[outs[0]] = low;
  left /= low;
  while (left > 1) {
    bool nice = false;
    int64_t fewest = hw.threads;
    int pick = -1;
    for (int i : outs) {
      if (threads[i] >= tile[i]) continue;
      bool cur_nice = tile[i] % (threads[i] * 2) == 0;
      // A nicely dividing index beats a non-nice one; otherwise (even a
      // non-nice one) the least-threaded wins. This mirrors PlaidML exactly,
      // which the seed's figures depend on.
      if ((cur_nice && !nice) || threads[i] < fewest) {
        nice = cur_nice;
        fewest = threads[i];
        pick = i;
      }
    }
    if (pick < 0) break;
    threads[pick] *= 2;
    left /= 2;
  }
  return threads;
}

TileStats ComputeTileStats(const FlatContraction& flat, const std::vector<int64_t>& tile,
                           const HardwareModel& hw) {
  CheckTile(flat, tile);
  TILEC_CHECK(hw.threads >= 1, "hardware model with {} threads", hw.threads);
  TileStats s;
  const FlatAccess& out = flat.output();
  int64_t out_bytes = lang::ByteSize(out.dtype);
  int64_t out_mem_elems = MemElems(hw, out.dtype);

  // Output plan: accumulator registers and written cache lines.
  std::vector<int64_t> threads = AssignOutputThreads(flat, tile, hw);
  int64_t local_size = hw.threads;
  int64_t outputs = 1;
  int64_t output_threads = 1;
  for (size_t i = 0; i < tile.size(); ++i) {
    if (out.strides[i] == 0) continue;
    // A stride-1 run of the output is written in whole cache lines.
    int64_t writes = out.strides[i] == 1 ? CeilDiv(tile[i], out_mem_elems) : tile[i];
    outputs = CheckedMul(outputs, writes, "the output tile");
    local_size = CheckedMul(local_size, CeilDiv(tile[i], threads[i]), "the output tile");
    output_threads = CheckedMul(output_threads, threads[i], "the output threads");
  }
  s.out_regs = CheckedMul(local_size, out_bytes, "the output registers");
  s.mem_write = CheckedMul(CheckedMul(outputs, hw.mem_width, "the written bytes"),
                           static_cast<int64_t>(flat.kernel_outputs.size()), "the written bytes");

  // Inputs: cache lines loaded and local memory per inner loop.
  bool staged = hw.local_memory_managed;
  for (int a = 1; a < flat.first_post_op_input(); ++a) {
    ReadPlan plan = PlanRead(flat, a, tile, hw);
    s.mem_read = CheckedAdd(s.mem_read, CheckedMul(plan.num_loads, hw.mem_width, "the read bytes"),
                            "the read bytes");
    if (staged) {
      int64_t bytes =
          CheckedMul(plan.local_size, lang::ByteSize(flat.accesses[a].dtype), "the local memory");
      s.shared_mem = CheckedAdd(s.shared_mem, bytes, "the local memory");
    }
  }
  // Post-op inputs are read once per output element, in the output phase.
  for (size_t a = flat.first_post_op_input(); a < flat.accesses.size(); ++a) {
    int64_t bytes = CheckedMul(outputs, lang::ByteSize(flat.accesses[a].dtype), "the read bytes");
    s.mem_read = CheckedAdd(s.mem_read, bytes, "the read bytes");
  }

  int64_t iterations = 1, out_tiles = 1, all_tiles = 1, out_max_threads = 1, all_max_threads = 1;
  for (size_t i = 0; i < tile.size(); ++i) {
    int64_t range = flat.indices[i].range;
    iterations = CheckedMul(iterations, range, "the iteration count");
    all_max_threads = CheckedMul(all_max_threads, tile[i], "the tile size");
    all_tiles = CheckedMul(all_tiles, CeilDiv(range, tile[i]), "the tile count");
    if (out.strides[i] != 0) {
      out_max_threads = CheckedMul(out_max_threads, tile[i], "the tile size");
      out_tiles = CheckedMul(out_tiles, CeilDiv(range, tile[i]), "the tile count");
    }
  }
  int64_t ops_per_point =
      static_cast<int64_t>(flat.post_ops.size()) + (flat.generate_contraction ? 2 : 0);
  s.true_ops = CheckedMul(iterations, ops_per_point, "the operation count");
  s.work_groups = out_tiles;
  s.inner_loops = all_tiles / out_tiles;
  s.operations = std::min(hw.threads, all_max_threads);
  // Fewer outputs than threads: partial sums are tree-reduced through local memory.
  if (out_max_threads < s.operations)
    s.shared_mem = CheckedAdd(s.shared_mem, CheckedMul(hw.threads, out_bytes, "the local memory"),
                              "the local memory");
  while (out_max_threads < s.operations) {
    ++s.rollups;
    out_max_threads *= 2;
  }
  s.threads_used = std::max(s.operations, output_threads);
  return s;
}

TileScore ComputeScore(const TileStats& stats, const HardwareModel& hw) {
  TileScore r;
  if (stats.shared_mem > hw.max_mem) {
    r.over_memory = true;
    return r;
  }
  if (stats.out_regs > hw.max_regs) {
    r.over_regs = true;
    return r;
  }
  double goal_fpb = hw.goal_flops_per_byte;
  // Computed in doubles, as PlaidML does; exact while the figures stay below 2^53.
  double bytes = static_cast<double>(stats.work_groups) *
                 (static_cast<double>(stats.inner_loops) * static_cast<double>(stats.mem_read) +
                  static_cast<double>(stats.mem_write));
  double ops = static_cast<double>(stats.true_ops);
  if (bytes > 0) {
    r.flops_per_byte = ops / bytes;
  } else {
    // No memory traffic at all: compute bound (or nothing to do).
    r.flops_per_byte = ops > 0 ? std::numeric_limits<double>::infinity() : 0;
  }
  double roof = std::min(r.flops_per_byte, goal_fpb);
  r.occupancy = static_cast<double>(std::min(stats.work_groups, hw.goal_groups));
  r.thread_ratio = static_cast<double>(stats.threads_used) / static_cast<double>(hw.threads);
  r.roof_ratio = roof / goal_fpb;
  r.occ_ratio = r.occupancy / static_cast<double>(hw.goal_groups);
  r.score = r.roof_ratio * r.occ_ratio * r.thread_ratio;
  return r;
}

std::string ToString(const TileStats& s) {
  return fmt::format("to={} wg={} il={} sm={} or={} mr={} mw={} op={} rp={} tu={}", s.true_ops,
                     s.work_groups, s.inner_loops, s.shared_mem, s.out_regs, s.mem_read,
                     s.mem_write, s.operations, s.rollups, s.threads_used);
}

std::string ToString(const TileScore& s) {
  if (s.over_memory) return "over memory\n";
  if (s.over_regs) return "over regs\n";
  return fmt::format(
      "flops_per_byte={} occupancy={}\nroof_ratio={} occ_ratio={} thread_ratio={} score={}\n",
      Num(s.flops_per_byte), Num(s.occupancy), Num(s.roof_ratio), Num(s.occ_ratio),
      Num(s.thread_ratio), Num(s.score));
}

VectorLanes ChooseVectorLanes(int64_t range, int64_t max_lanes) {
  VectorLanes best;
  best.vectors = INT64_MAX;
  bool exact = false;
  for (int64_t w = 16; w >= 2; w /= 2) {
    if (w > max_lanes) continue;
    int64_t n = (range + w - 1) / w;
    bool fits = range % w == 0;
    if (n < best.vectors || (n == best.vectors && fits && !exact)) best = {w, n}, exact = fits;
  }
  return best;
}

TimeEstimate EstimateTime(const FlatContraction& flat, const HardwareModel& hw) {
  TimeEstimate t;
  double points = 1;
  for (const FlatIndex& idx : flat.indices) points *= static_cast<double>(idx.range);
  double ops = (flat.generate_contraction ? 2.0 : 0.0) + static_cast<double>(flat.post_ops.size());
  if (ops < 1) ops = 1;
  double bytes = 0;
  for (const FlatAccess& a : flat.accesses)
    bytes += static_cast<double>(a.limit) * static_cast<double>(lang::ByteSize(a.dtype));
  if (hw.vec_size > 1 && !hw.local_memory_managed && !flat.accesses.empty()) {
    const FlatAccess& out = flat.output();
    int64_t lanes = std::clamp<int64_t>(hw.vec_size * 32 / lang::BitWidth(out.dtype), 2, 16);
    int v = -1;
    for (int i = 0; i < flat.num_indices(); ++i)
      if (out.strides[i] == 1 && flat.indices[i].range > 1) v = i;
    if (v < 0) {
      t.lane_use = 1.0 / static_cast<double>(lanes);
    } else {
      // The vector form's lanes; narrower vectors run at their rate
      // (HardwareModel::half_vector_rate).
      int64_t r = flat.indices[v].range;
      VectorLanes vl = ChooseVectorLanes(r, lanes);
      double rate =
          std::min(1.0, static_cast<double>(vl.lanes) / static_cast<double>(lanes) * 2.0 * hw.half_vector_rate);
      t.lane_use = static_cast<double>(r) / static_cast<double>(vl.vectors * vl.lanes) * rate;
      for (size_t a = 1; a < flat.accesses.size(); ++a) {
        const FlatAccess& in = flat.accesses[a];
        int64_t s = in.strides[v];
        if (s == 0 || s == 1) continue;
        // Small weights (no other output index moves them) are copied for
        // the vectors (LowerOptions::relayout_for_vectors); any other input
        // read across the vectors leaves the kernel without the vector form
        // (VectorCandidate): scalar code.
        bool weights = static_cast<double>(in.limit) * 16 <= points;
        // (The parts co/16 and co%16 of a blocked variable are one index here.)
        auto base = [&](int i) { return flat.indices[i].name.substr(0, flat.indices[i].name.find_first_of("/%")); };
        for (int i = 0; i < flat.num_indices(); ++i)
          if (base(i) != base(v) && out.strides[i] != 0 && in.strides[i] != 0 && flat.indices[i].range > 1)
            weights = false;
        if (!weights) t.lane_use = 1.0 / static_cast<double>(lanes);
      }
    }
  }
  t.compute_s = points * ops / (hw.peak_gflops * 1e9 * t.lane_use);
  t.memory_s = bytes / (hw.mem_bandwidth_gbs * 1e9);
  return t;
}

}  // namespace tilec::compiler
