#include "compiler/passes/split_reduction.h"

#include <fmt/format.h>

#include <algorithm>

#include "tile_lang/layout.h"

namespace tilec::compiler {

using lang::ContractionOp;
using lang::Polynomial;

namespace {

Polynomial Var(const std::string& v) {
  Polynomial p;
  p.terms[v] = lang::Rational(1);
  return p;
}

}  // namespace

std::optional<SplitReductionResult> SplitReduction(const lang::Program& program, const ContractionOp& c,
                                                   const FlatContraction& flat, const std::string& name,
                                                   int64_t max_outputs, int64_t min_points,
                                                   int64_t min_chunks) {
  using lang::ast::AggOp;
  using lang::ast::CombOp;
  if (c.agg == AggOp::Assign || c.default_tensor || !c.constraints.empty() || !flat.constraints.empty())
    return std::nullopt;
  if (c.comb != CombOp::None && !(c.comb == CombOp::Mul && c.agg == AggOp::Sum)) return std::nullopt;
  const lang::TensorDecl& out = program.Tensor(c.output);
  if (out.shape.ElementCount() > max_outputs) return std::nullopt;
  // Plain layouts: one flat index per variable, in the same order.
  if (flat.num_indices() != static_cast<int>(c.index_vars.size())) return std::nullopt;
  int64_t points = 1;
  for (const FlatIndex& i : flat.indices) points = CheckedMul(points, i.range, "an index box");
  if (points < min_points) return std::nullopt;
  // s: the reduction variable with the largest stride in the first input.
  int s = -1;
  for (int i = 0; i < flat.num_indices(); ++i) {
    if (flat.output().strides[i] != 0 || c.bounds[i].lo != 0) continue;
    if (flat.indices[i].name != c.index_vars[i]) return std::nullopt;
    if (flat.indices[i].range < min_chunks) continue;
    int64_t stride = std::abs(flat.accesses.at(1).strides[i]);
    if (s < 0 || stride > std::abs(flat.accesses[1].strides[s])) s = i;
  }
  // Each partial result must still reduce over many points (a 1-D sum would
  // become a copy and a sum).
  if (s < 0 || points / flat.indices[s].range < 64) return std::nullopt;
  const std::string& var = c.index_vars[s];
  int64_t chunks = c.bounds[s].hi + 1;

  SplitReductionResult r;
  r.partials.name = name;
  r.partials.shape.dtype = out.shape.dtype;
  r.partials.shape.dims = {chunks};
  for (int64_t d : out.shape.dims) r.partials.shape.dims.push_back(d);
  r.partials.layout = lang::RowMajorLayout(r.partials.shape.dims);
  r.partials.role = lang::TensorRole::Temporary;
  r.partials.span = out.span;

  r.partial = c;
  r.partial.output = name;
  r.partial.output_index.insert(r.partial.output_index.begin(), Var(var));

  // O[o0, o1, ...] = agg(T[s, o0, o1, ...]) over fresh variables.
  ContractionOp& k = r.combine;
  k.output = c.output;
  k.agg = c.agg;
  k.comb = CombOp::None;
  k.span = c.span;
  ContractionOp::Access in{name, {Var("s")}};
  std::vector<std::pair<std::string, ContractionOp::Bound>> vars = {{"s", {0, chunks - 1}}};
  for (size_t d = 0; d < out.shape.dims.size(); ++d) {
    std::string o = fmt::format("o{}", d);
    k.output_index.push_back(Var(o));
    in.index.push_back(Var(o));
    vars.push_back({o, {0, out.shape.dims[d] - 1}});
  }
  k.inputs.push_back(in);
  std::sort(vars.begin(), vars.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [v, b] : vars) {
    k.index_vars.push_back(v);
    k.bounds.push_back(b);
  }
  return r;
}

}  // namespace tilec::compiler
