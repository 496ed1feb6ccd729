#include "compiler/schedule/thread_plan.h"

#include <fmt/format.h>

#include <algorithm>

#include "compiler/schedule/cost_model.h"
#include "support/error.h"

namespace tilec::compiler {
namespace {
int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t Abs(int64_t v) { return v < 0 ? -v : v; }
}  // namespace

std::string CheckWorkGroup(const FlatContraction& flat, const std::vector<int64_t>& tile,
                           const HardwareModel& hw, const std::vector<int64_t>& work_group) {
  if (work_group.size() != flat.indices.size())
    return fmt::format("{} sizes for {} indices", work_group.size(), flat.indices.size());
  int64_t total = 1;
  for (size_t i = 0; i < work_group.size(); ++i) {
    const std::string& name = flat.indices[i].name;
    int64_t t = work_group[i];
    if (flat.output().strides[i] == 0) {
      if (t != 1) return fmt::format("{} is a reduction index: its threads must be 1, not {}", name, t);
      continue;
    }
    // As AssignOutputThreads may: up to the tile rounded up to a power of
    // two (the threads past the tile's edge idle).
    int64_t most = 1;
    while (most < tile[i]) most *= 2;
    if (t < 1) return fmt::format("{} threads along {}: at least 1", t, name);
    if (t > most)
      return fmt::format("{} threads along {}: at most {} (its tile, {}, rounded up to a power of two)", t, name,
                         most, tile[i]);
    total *= t;  // <= twice the product of the tile, which fits in 64 bits
  }
  if (total > hw.max_work_group_size)
    return fmt::format("{} threads in all: the device allows at most {}", total, hw.max_work_group_size);
  return "";
}

ThreadPlan PlanThreads(const FlatContraction& flat, const std::vector<int64_t>& tile,
                       const HardwareModel& hw, const std::vector<int64_t>& work_group) {
  TILEC_CHECK(tile.size() == flat.indices.size(), "tile of {} for {} indices", tile.size(),
              flat.indices.size());
  ThreadPlan plan;
  std::vector<int64_t> threads;
  if (work_group.empty()) {
    threads = AssignOutputThreads(flat, tile, hw);
  } else {
    std::string why = CheckWorkGroup(flat, tile, hw, work_group);
    TILEC_CHECK(why.empty(), "work-group shape: {}", why);
    threads = work_group;
  }
  const std::vector<int64_t>& out_strides = flat.output().strides;
  std::vector<int> outs;
  for (int i = 0; i < flat.num_indices(); ++i) {
    if (out_strides[i] != 0) outs.push_back(i);
    else plan.reductions.push_back(i);
  }
  // Same order as AssignOutputThreads: by |stride|, ties later index first.
  std::stable_sort(outs.begin(), outs.end(), [&](int a, int b) {
    if (Abs(out_strides[a]) != Abs(out_strides[b])) return Abs(out_strides[a]) < Abs(out_strides[b]);
    return b < a;
  });
  int64_t thread_stride = 1;
  for (int i : outs) {
    ThreadPlan::OutDim d;
    d.index = i;
    d.tile = tile[i];
    d.threads = std::max<int64_t>(1, threads[i]);
    d.thread_stride = thread_stride;
    d.loops = CeilDiv(d.tile, d.threads);
    d.groups = CeilDiv(flat.indices[i].range, d.tile);
    thread_stride *= d.threads;
    plan.outputs.push_back(d);
  }
  plan.threads = thread_stride;
  // Accumulators: the slowest output's loop is the outermost digit.
  int64_t acc = 1;
  for (auto it = plan.outputs.begin(); it != plan.outputs.end(); ++it) {
    it->acc_stride = acc;
    acc *= it->loops;
  }
  plan.accumulators = acc;

  // Pack group ids: largest group counts first, each into the hardware
  // dimension with the fewest groups so far.
  std::vector<int> multi;
  for (size_t p = 0; p < plan.outputs.size(); ++p)
    if (plan.outputs[p].groups > 1) multi.push_back(static_cast<int>(p));
  std::stable_sort(multi.begin(), multi.end(),
                   [&](int a, int b) { return plan.outputs[a].groups > plan.outputs[b].groups; });
  for (int p : multi) {
    int best = 0;
    for (int d = 1; d < 3; ++d)
      if (plan.num_groups[d] < plan.num_groups[best]) best = d;
    plan.group_dims[best].push_back(p);
    plan.num_groups[best] = CheckedMul(plan.num_groups[best], plan.outputs[p].groups,
                                       "the number of work groups");
  }
  return plan;
}

std::string ToString(const ThreadPlan& plan, const FlatContraction& flat) {
  std::string out = fmt::format("Threads {} accumulators {}\n", plan.threads, plan.accumulators);
  out += "Index Tile Threads Loops Groups\n";
  for (const auto& d : plan.outputs)
    out += fmt::format("{} {} {} {} {}\n", flat.indices[d.index].name, d.tile, d.threads, d.loops,
                       d.groups);
  for (int r : plan.reductions) out += fmt::format("{} reduction\n", flat.indices[r].name);
  for (int d = 0; d < 3; ++d) {
    std::vector<std::string> names;
    for (int p : plan.group_dims[d]) names.push_back(flat.indices[plan.outputs[p].index].name);
    out += fmt::format("group dim {}: {} [{}]\n", d, plan.num_groups[d], fmt::join(names, ", "));
  }
  return out;
}

}  // namespace tilec::compiler
