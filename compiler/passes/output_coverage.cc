#include "compiler/passes/output_coverage.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace tilec::compiler {
namespace {

// Sorted by stride, each (stride, range) starts where the smaller ones end,
// and together they span `limit` elements.
bool Dense(std::vector<std::pair<int64_t, int64_t>> sr, int64_t limit) {
  std::sort(sr.begin(), sr.end());
  int64_t expect = 1;
  for (auto [s, r] : sr) {
    if (s != expect) return false;
    expect = CheckedMul(s, r, "an output size");
  }
  return expect == limit;
}

}  // namespace

bool OutputInjective(const FlatContraction& flat) {
  std::vector<std::pair<int64_t, int64_t>> sr;  // |stride|, range
  for (int i = 0; i < flat.num_indices(); ++i) {
    int64_t s = flat.output().strides[i];
    if (s != 0 && flat.indices[i].range > 1) sr.emplace_back(s < 0 ? -s : s, flat.indices[i].range);
  }
  std::sort(sr.begin(), sr.end());
  int64_t span = 1;  // elements covered by the smaller strides
  for (auto [s, r] : sr) {
    if (s < span) return false;
    span = s * r;
  }
  return true;
}

bool OutputDense(const FlatContraction& flat) {
  const FlatAccess& out = flat.output();
  if (out.offset != 0) return false;
  std::vector<std::pair<int64_t, int64_t>> sr;
  for (int i = 0; i < flat.num_indices(); ++i) {
    int64_t s = out.strides[i];
    if (s < 0) return false;
    if (s != 0 && flat.indices[i].range > 1) sr.emplace_back(s, flat.indices[i].range);
  }
  return Dense(std::move(sr), out.limit);
}

bool OutputCovered(const FlatContraction& flat) {
  const FlatAccess& out = flat.output();
  if (out.offset != 0 || flat.constraints.empty()) return false;
  int n = flat.num_indices();
  std::vector<int64_t> range(n), stride = out.strides;
  for (int i = 0; i < n; ++i) range[i] = flat.indices[i].range;
  std::vector<bool> merged(n, false);
  for (const FlatConstraint& c : flat.constraints) {
    std::vector<int> outs;
    bool reductions = false;
    for (int i = 0; i < n; ++i) {
      if (c.lhs[i] == 0) continue;
      if (out.strides[i] != 0) outs.push_back(i);
      else reductions = true;
    }
    if (outs.empty()) {
      if (c.rhs < 0) return false;  // fails at reduction point 0
      continue;
    }
    if (reductions || outs.size() != 2) return false;
    // B * a + b <= N - 1 with b in [0, B) and a's stride B times b's.
    int a = outs[0], b = outs[1];
    if (c.lhs[a] == 1) std::swap(a, b);
    int64_t block = c.lhs[a], total = c.rhs + 1;
    if (c.lhs[b] != 1 || block < 2 || range[b] != block || merged[a] || merged[b]) return false;
    if (stride[b] <= 0 || stride[a] != CheckedMul(block, stride[b], "an output stride")) return false;
    if (total <= (range[a] - 1) * block || total > range[a] * block) return false;
    range[b] = total;
    stride[a] = 0;
    merged[a] = merged[b] = true;
  }
  std::vector<std::pair<int64_t, int64_t>> sr;
  for (int i = 0; i < n; ++i) {
    if (stride[i] < 0) return false;
    if (stride[i] != 0 && range[i] > 1) sr.emplace_back(stride[i], range[i]);
  }
  return Dense(std::move(sr), out.limit);
}

bool EveryOutputReached(const FlatContraction& flat) {
  const size_t n = flat.indices.size(), nc = flat.constraints.size();
  const std::vector<int64_t>& out = flat.output().strides;
  // Union the constraints that share a reduction index.
  std::vector<size_t> group(nc);
  for (size_t c = 0; c < nc; ++c) group[c] = c;
  auto find = [&](size_t c) {
    while (group[c] != c) c = group[c];
    return c;
  };
  for (size_t i = 0; i < n; ++i) {
    if (out[i] != 0) continue;
    size_t first = nc;
    for (size_t c = 0; c < nc; ++c) {
      if (flat.constraints[c].lhs[i] == 0) continue;
      if (first == nc) first = c;
      group[find(c)] = find(first);
    }
  }
  for (size_t root = 0; root < nc; ++root) {
    if (find(root) != root) continue;
    std::vector<const FlatConstraint*> cs;
    std::vector<size_t> outs, reds;  // the indices the group mentions
    for (size_t c = 0; c < nc; ++c)
      if (find(c) == root) cs.push_back(&flat.constraints[c]);
    int64_t points = 1;
    for (size_t i = 0; i < n; ++i) {
      if (std::none_of(cs.begin(), cs.end(), [&](const FlatConstraint* c) { return c->lhs[i] != 0; }))
        continue;
      (out[i] == 0 ? reds : outs).push_back(i);
      points = SaturatingMul(points, flat.indices[i].range);
    }
    if (points > kReachedPointLimit) return false;
    // Odometers over the group's output indices and, for each of their
    // points, over its reduction indices until one satisfies every constraint.
    std::vector<int64_t> at(n, 0);
    auto next = [&](const std::vector<size_t>& idx) {
      for (size_t i : idx) {
        if (++at[i] < flat.indices[i].range) return true;
        at[i] = 0;
      }
      return false;
    };
    auto holds = [&](const FlatConstraint* c) {
      int64_t lhs = 0;
      for (size_t i = 0; i < n; ++i) lhs += c->lhs[i] * at[i];
      return lhs <= c->rhs;
    };
    do {
      bool reached = false;
      do {
        reached = std::all_of(cs.begin(), cs.end(), holds);
      } while (!reached && next(reds));
      if (!reached) return false;
      for (size_t i : reds) at[i] = 0;
    } while (next(outs));
  }
  return true;
}

}  // namespace tilec::compiler
