#include "compiler/schedule/read_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "support/error.h"

namespace tilec::compiler {
namespace {

struct Orig {
  int index;
  int64_t stride;
  int64_t range;  // the tile size of the index
};

int64_t Abs(int64_t v) { return v < 0 ? -v : v; }

}  // namespace

int64_t NearestPo2(int64_t v) {
  int64_t p = 1;
  while (p < v && p <= INT64_MAX / 2) p *= 2;
  return p;
}

ReadPlan PlanRead(const FlatContraction& flat, int tensor, const std::vector<int64_t>& tile,
                  const HardwareModel& hw) {
  TILEC_CHECK(tensor >= 1 && tensor < static_cast<int>(flat.accesses.size()),
              "no input access {} in {}", tensor, flat.name);
  TILEC_CHECK(tile.size() == flat.indices.size(), "tile has {} entries for {} indices", tile.size(),
              flat.indices.size());
  const FlatAccess& access = flat.accesses[tensor];
  ReadPlan plan;
  plan.tensor = tensor;
  plan.mem_elems = std::max<int64_t>(1, hw.mem_width / lang::ByteSize(access.dtype));

  std::vector<Orig> orig;
  for (size_t i = 0; i < tile.size(); ++i) {
    TILEC_CHECK(tile[i] >= 1 && tile[i] <= flat.indices[i].range,
                "tile {} for index {} of range {}", tile[i], flat.indices[i].name,
                flat.indices[i].range);
    if (access.strides[i] != 0) orig.push_back({static_cast<int>(i), access.strides[i], tile[i]});
  }
  // Stable, so equal strides keep index order (the seed's "i_x", not "x_i").
  std::stable_sort(orig.begin(), orig.end(),
                   [](const Orig& a, const Orig& b) { return Abs(a.stride) < Abs(b.stride); });

  // Merge each index into the first merged dim whose stride divides its own
  // and whose current extent reaches the quotient, so the two overlap or
  // abut; otherwise it starts a new merged dim.
  std::vector<ReadPlan::Merged> merged;
  std::vector<ReadPlan::Part> parts;
  for (const Orig& o : orig) {
    ReadPlan::Part part{o.index, -1, 1};
    for (size_t m = 0; m < merged.size(); ++m) {
      int64_t base = merged[m].global_stride;
      int64_t q = Abs(o.stride) / Abs(base);
      if (Abs(o.stride) % Abs(base) == 0 && merged[m].range >= q) {
        part.merged = static_cast<int>(m);
        part.scale = o.stride / base;  // exact; negative when the signs differ
        int64_t extent = CheckedMul(q, o.range - 1, "a read plan");
        merged[m].range = CheckedAdd(merged[m].range, extent, "a read plan");
        if (part.scale < 0) merged[m].zero += extent;
        merged[m].name += "_" + flat.indices[o.index].name;
        break;
      }
    }
    if (part.merged < 0) {
      part.merged = static_cast<int>(merged.size());
      merged.push_back({flat.indices[o.index].name, o.range, o.stride, 0, 0});
    }
    parts.push_back(part);
  }

  // Layout order: odd ranges need no padding, so they go first; then larger
  // ranges first, which keeps the padding small.
  std::vector<int> order(merged.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    bool odd_a = merged[a].range % 2 == 1, odd_b = merged[b].range % 2 == 1;
    if (odd_a != odd_b) return odd_a;
    return merged[a].range > merged[b].range;
  });
  std::vector<int> new_pos(merged.size());
  for (size_t k = 0; k < order.size(); ++k) {
    new_pos[order[k]] = static_cast<int>(k);
    plan.merged.push_back(merged[order[k]]);
  }
  for (ReadPlan::Part& p : parts) p.merged = new_pos[p.merged];
  plan.parts = std::move(parts);

  // Local strides: cumulative sizes, bumped to odd whenever even; the pad
  // after the last dimension is never addressed, so it is dropped.
  bool padded = false;
  for (ReadPlan::Merged& m : plan.merged) {
    m.local_stride = plan.local_size;
    plan.local_size = CheckedMul(plan.local_size, m.range, "a local buffer size");
    if (plan.local_size % 2 == 0) {
      ++plan.local_size;
      padded = true;
    }
  }
  if (padded) --plan.local_size;
  for (const ReadPlan::Merged& m : plan.merged) {
    plan.local_zero =
        CheckedAdd(plan.local_zero, CheckedMul(m.local_stride, m.zero, "an offset"), "an offset");
    plan.global_zero =
        CheckedAdd(plan.global_zero, CheckedMul(m.global_stride, m.zero, "an offset"), "an offset");
  }

  // Transfer order: dims with strides under half a cache line vary fastest
  // across threads (coalescing), smallest first; then dims whose range is
  // closest to a power of two (they divide the threads evenly).
  plan.transfer_order.resize(plan.merged.size());
  std::iota(plan.transfer_order.begin(), plan.transfer_order.end(), 0);
  std::stable_sort(plan.transfer_order.begin(), plan.transfer_order.end(), [&](int a, int b) {
    const ReadPlan::Merged& ma = plan.merged[a];
    const ReadPlan::Merged& mb = plan.merged[b];
    bool near_a = Abs(ma.global_stride) < plan.mem_elems / 2;
    bool near_b = Abs(mb.global_stride) < plan.mem_elems / 2;
    if (near_a != near_b) return near_a;
    if (near_a) return Abs(ma.global_stride) < Abs(mb.global_stride);
    double ua = static_cast<double>(ma.range) / static_cast<double>(NearestPo2(ma.range));
    double ub = static_cast<double>(mb.range) / static_cast<double>(NearestPo2(mb.range));
    return ua > ub;
  });

  // Loads: one per element, divided by the best reuse of a cache line along
  // any one merged dimension (consecutive elements of a small stride).
  int64_t elements = 1;
  int64_t best_speedup = 1;
  for (const ReadPlan::Merged& m : plan.merged) {
    elements = CheckedMul(elements, m.range, "a load count");
    int64_t stride = Abs(m.global_stride);
    int64_t span = stride > plan.mem_elems / m.range ? plan.mem_elems : stride * m.range;
    best_speedup = std::max(best_speedup, std::min(plan.mem_elems, span) / stride);
  }
  plan.num_loads = elements / best_speedup;
  return plan;
}

std::string ToString(const ReadPlan& plan) {
  std::vector<const ReadPlan::Merged*> rows;
  for (const ReadPlan::Merged& m : plan.merged) rows.push_back(&m);
  std::stable_sort(rows.begin(), rows.end(),
                   [](const ReadPlan::Merged* a, const ReadPlan::Merged* b) {
                     bool odd_a = a->range % 2 == 1, odd_b = b->range % 2 == 1;
                     if (odd_a != odd_b) return odd_a;
                     return a->range < b->range;
                   });
  std::string out = "Range Global Local\n";
  for (const ReadPlan::Merged* m : rows)
    out += fmt::format("{} {} {} {}\n", m->name, m->range, m->global_stride, m->local_stride);
  return out;
}

}  // namespace tilec::compiler
