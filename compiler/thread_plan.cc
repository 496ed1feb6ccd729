#include "compiler/thread_plan.h"

#include <fmt/format.h>

#include <algorithm>

#include "compiler/cost_model.h"
#include "support/error.h"

namespace tilec::compiler {
namespace {
int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t Abs(int64_t v) { return v < 0 ? -v : v; }
}  // namespace

ThreadPlan PlanThreads(const FlatContraction& flat, const std::vector<int64_t>& tile,
                       const HardwareModel& hw) {
  TILEC_CHECK(tile.size() == flat.indices.size(), "tile of {} for {} indices", tile.size(),
              flat.indices.size());
  ThreadPlan plan;
  std::vector<int64_t> threads = AssignOutputThreads(flat, tile, hw);
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
