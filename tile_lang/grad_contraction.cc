// The gradient rules of contractions and special ops (grad_deriver.h).
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <optional>
#include <set>
#include <tuple>

#include "support/error.h"
#include "tile_lang/grad_deriver.h"
#include "tile_lang/grad_index.h"
#include "tile_lang/to_ast.h"

namespace tilec::lang::grad {

std::vector<ast::Constraint> Deriver::Constraints(const ContractionOp& c) {
  std::vector<ast::Constraint> out;
  for (const auto& k : c.constraints) out.push_back({PolynomialExpr(k.poly), ast::MakeInt(k.range), {}});
  return out;
}

// An i32 tensor of t's shape holding `value` everywhere: reading it keeps a
// contraction's valid index assignments (ranges and integrality of t's
// indices) without t's values.
std::string Deriver::Filled(const std::string& t, int64_t value) {
  auto key = std::make_pair(t, value);
  auto it = filled_.find(key);
  if (it != filled_.end()) return it->second;
  ExprPtr zero = ast::MakeBinary(ast::BinaryOp::Mul, Call("as_int", {TensorExpr(Name(t)), ast::MakeInt(32)}),
                                 ast::MakeInt(0));
  ExprPtr v = value == 0 ? zero : ast::MakeBinary(ast::BinaryOp::Add, zero, ast::MakeInt(value));
  return filled_[key] = Emit(Name(t) + (value == 0 ? "_zero" : "_one"), v);
}

// `g` (MakeOutputPlain'd) as a contraction into a tensor shaped like `out`.
ast::Contraction Deriver::Write(Gather g, const ContractionOp& c, const std::string& out, ast::AggOp agg,
                                ast::CombOp comb) {
  ast::Contraction d;
  d.output = Ref("", g.out);
  d.sizes = Sizes(ShapeOf(out).dims);
  d.agg = agg;
  d.comb = comb;
  for (const auto& [tensor, index] : g.refs) d.inputs.push_back(Ref(tensor, index));
  for (const auto& k : g.constraints) d.constraints.push_back({PolynomialExpr(k.poly), ast::MakeInt(k.range), {}});
  return d;
}

void Deriver::Contraction(const ContractionOp& c, const std::string& g) {
  if (c.default_tensor && NeedsGrad(*c.default_tensor)) Default(c, g);
  std::vector<size_t> need;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    bool value = c.comb != ast::CombOp::Eq && (c.comb != ast::CombOp::Cond || k == 2);
    if (value && NeedsGrad(c.inputs[k].tensor)) need.push_back(k);
  }
  if (need.empty()) return;
  switch (c.agg) {
    case ast::AggOp::Prod:
      Fail(c.span, fmt::format("'{}' is a product aggregation '*(...)', which has no gradient rule", c.output));
    case ast::AggOp::Max:
    case ast::AggOp::Min:
      return Extremum(c, g);
    case ast::AggOp::Sum:
    case ast::AggOp::Assign:
      break;
  }
  const Shape& out = ShapeOf(c.output);
  for (size_t k : need) {
    const auto& a = c.inputs[k];
    if (IsBroadcast(c, a)) {
      ContributeBroadcast(a.tensor, g, out.dims, out.dtype);
      continue;
    }
    Gather d{a.index, {}, c.constraints};
    ast::CombOp comb = ast::CombOp::None;
    switch (c.comb) {
      case ast::CombOp::None: d.refs = {{g, c.output_index}}; break;
      case ast::CombOp::Mul: {
        const auto& other = c.inputs[1 - k];
        comb = ast::CombOp::Mul;
        d.refs = {{g, c.output_index}, {Name(other.tensor), other.index}};
        if (k == 1) std::swap(d.refs[0], d.refs[1]);
        break;
      }
      case ast::CombOp::Add: {
        const auto& other = c.inputs[1 - k];
        comb = ast::CombOp::Mul;
        d.refs = {{g, c.output_index}, {Filled(other.tensor, 1), other.index}};
        break;
      }
      case ast::CombOp::Cond:
        comb = ast::CombOp::Cond;
        d.refs = {{Name(c.inputs[0].tensor), c.inputs[0].index}, {Name(c.inputs[1].tensor), c.inputs[1].index},
                  {g, c.output_index}};
        break;
      case ast::CombOp::Eq: TILEC_UNREACHABLE("a comparison has no gradient");
    }
    MakeOutputPlain(d, c, ShapeOf(a.tensor).dims);
    std::string name;
    if (std::optional<std::string> b = BatchVar(d, c)) {
      // Per batch element, then summed: `K_grad_part[n, i, ...] = +(D[n, ...] * O_grad[n, ...])`,
      // `K_grad[i, ...] = +(K_grad_part[n, i, ...])`.
      Polynomial v;
      v.terms[*b] = 1;
      Gather part = d;
      part.out.insert(part.out.begin(), v);
      ast::Contraction w = Write(std::move(part), c, a.tensor, ast::AggOp::Sum, comb);
      w.sizes.insert(w.sizes.begin(), ast::MakeInt(ShapeOf(c.output).dims.at(0)));
      std::string partial = Emit(GradBase(a.tensor) + "_part", std::move(w));
      ast::Contraction sum;
      ast::TensorRef in;
      in.name = partial;
      in.indices.push_back(ast::MakeName("b", ast::NameClass::Index));
      for (size_t k = 0; k < d.out.size(); ++k) {
        sum.output.indices.push_back(ast::MakeName(fmt::format("i{}", k), ast::NameClass::Index));
        in.indices.push_back(sum.output.indices.back());
      }
      sum.sizes = Sizes(ShapeOf(a.tensor).dims);
      sum.inputs.push_back(std::move(in));
      name = Emit(GradBase(a.tensor), std::move(sum));
    } else {
      name = Emit(GradBase(a.tensor), Write(std::move(d), c, a.tensor, ast::AggOp::Sum, comb));
    }
    Contribute(a.tensor, name, ShapeOf(a.tensor).dims, out.dtype, true);
  }
}

// A weight's gradient (`K_grad[i, j, ci, co] = +(D[n, ...] * O_grad[n, ...])`)
// has few outputs and a long reduction, the whole batch: each of the
// kernel's work items would stream all of D and O_grad, far more than the
// caches hold. It is split per batch element (then summed) when a
// reduction variable `n` is the plain first index of every tensor read, in
// no other index or constraint, its range the batch (at least 2), and the
// reduction per batch element at least kMinBatchSteps steps: each work
// item then walks one element's data, which the caches keep for the
// neighbouring work items (bench/grad W2 backward-weights).
std::optional<std::string> Deriver::BatchVar(const Gather& g, const ContractionOp& c) const {
  constexpr int64_t kMinBatchSteps = 1024;
  std::set<std::string> in_out;
  for (const Polynomial& p : g.out)
    for (const auto& [v, coeff] : p.terms) in_out.insert(v);
  if (g.refs.empty() || g.refs[0].second.empty()) return std::nullopt;
  const Polynomial& first = g.refs[0].second[0];
  if (first.terms.size() != 1 || first.terms.begin()->second != Rational(1) || first.constant != Rational(0))
    return std::nullopt;
  const std::string b = first.terms.begin()->first;
  if (in_out.count(b)) return std::nullopt;
  for (const auto& [tensor, index] : g.refs) {
    if (index.empty() || !(index[0] == first)) return std::nullopt;
    for (size_t k = 1; k < index.size(); ++k)
      if (!(index[k].Coeff(b) == Rational(0))) return std::nullopt;
  }
  // The refs read the forward's output and inputs: each first dimension is the batch.
  int64_t batch = ShapeOf(c.output).dims.empty() ? -1 : ShapeOf(c.output).dims[0];
  if (c.output_index.empty() || !(c.output_index[0] == first)) return std::nullopt;
  for (const auto& in : c.inputs)
    if (!in.index.empty() && in.index[0] == first && ShapeOf(in.tensor).dims.at(0) != batch) return std::nullopt;
  for (const auto& k : g.constraints)
    if (!(k.poly.Coeff(b) == Rational(0))) return std::nullopt;
  int64_t steps = 1;
  for (size_t k = 0; k < c.index_vars.size(); ++k) {
    const std::string& v = c.index_vars[k];
    if (v == b) {
      if (c.bounds[k].lo != 0 || c.bounds[k].hi + 1 != batch) return std::nullopt;
    } else if (!in_out.count(v)) {
      steps *= c.bounds[k].hi - c.bounds[k].lo + 1;
    }
  }
  if (batch < 2 || steps < kMinBatchSteps) return std::nullopt;
  return b;
}

// `>`/`<`: the gradient of each output element goes to one input element of
// its window, the extremum of smallest row-major position. Each input element
// gets a key (larger is earlier: a window position's, WindowKey, or else
// count - position in i32); a `>` contraction picks the largest key among the
// elements equal to the result; a `+` contraction routes the gradient to the
// element holding it.
void Deriver::Extremum(const ContractionOp& c, const std::string& g) {
  if (c.comb != ast::CombOp::None)
    Fail(c.span, fmt::format("'{}' is a max/min of a combination of inputs; only a max/min of one input has a "
                             "gradient rule", c.output));
  const auto& a = c.inputs[0];
  std::vector<Polynomial> rows = a.index;
  rows.insert(rows.end(), c.output_index.begin(), c.output_index.end());
  if (Rank(rows, c.index_vars) < c.index_vars.size())
    Fail(c.span, fmt::format("an element of '{}' can be reached twice in one window of the max/min '{}', so the "
                             "gradient has no single target", a.tensor, c.output));
  const Shape& in = ShapeOf(a.tensor);
  std::string key_name;
  std::vector<Polynomial> key_index = a.index;
  if (auto window = WindowKey(c, g)) {
    std::tie(key_name, key_index) = *window;
  } else {
    int64_t count = in.ElementCount();
    if (count >= std::numeric_limits<int32_t>::max())
      Fail(c.span, fmt::format("'{}' has {} elements; the max/min gradient numbers them in i32", a.tensor, count));
    ExprPtr x = TensorExpr(Name(a.tensor));
    ExprPtr key;
    if (in.dims.empty()) {
      key = ast::MakeBinary(ast::BinaryOp::Add,
                            ast::MakeBinary(ast::BinaryOp::Mul, Call("as_int", {x, ast::MakeInt(32)}), ast::MakeInt(0)),
                            ast::MakeInt(1));
    } else {
      ExprPtr flat;
      int64_t stride = 1;
      for (size_t k = in.dims.size(); k-- > 0;) {
        ExprPtr term = Call("index", {x, ast::MakeInt(static_cast<int64_t>(k))});
        if (stride != 1) term = ast::MakeBinary(ast::BinaryOp::Mul, term, ast::MakeInt(stride));
        flat = flat ? ast::MakeBinary(ast::BinaryOp::Add, term, flat) : term;
        stride *= in.dims[k];
      }
      key = ast::MakeBinary(ast::BinaryOp::Sub, ast::MakeInt(count), flat);
    }
    key_name = Emit(Name(a.tensor) + "_key", key);
  }
  ast::Contraction w;
  w.output = Ref("", c.output_index);
  w.sizes = Sizes(ShapeOf(c.output).dims);
  w.agg = ast::AggOp::Max;
  w.comb = ast::CombOp::Cond;
  w.inputs = {Ref(Name(a.tensor), a.index), Ref(Name(c.output), c.output_index), Ref(key_name, key_index)};
  w.constraints = Constraints(c);
  std::string win = Emit(Name(c.output) + "_winner", std::move(w));
  Gather d{a.index, {{key_name, key_index}, {win, c.output_index}, {g, c.output_index}}, c.constraints};
  MakeOutputPlain(d, c, in.dims);
  std::string name = Emit(GradBase(a.tensor), Write(std::move(d), c, a.tensor, ast::AggOp::Sum, ast::CombOp::Cond));
  Contribute(a.tensor, name, in.dims, ShapeOf(c.output).dtype, true);
}

// The key of a window position, where the output's indices are distinct
// plain variables or constants (a pooling window): within a window the
// other variables (the window's, r) alone move A's row-major position, by
// sum_r s_r * r, so a tensor over the window, `Key[r - lo_r, ...] = base -
// sum_r s_r * (r - lo_r)`, orders a window's elements as the position does,
// without a key per element of A (a kernel and two reads of A's size). Its
// type is A's float type (f32 for narrower floats), the compared operands'
// width, so the vector form takes the winner and the routing. The shape
// comes from `Win[r, ... : ranges] = =(g[0, ...])` (only its shape is read).
// None where the rule does not apply (the per-element key then).
std::optional<std::pair<std::string, std::vector<Polynomial>>> Deriver::WindowKey(const ContractionOp& c,
                                                                                  const std::string& g) {
  const Shape& in = ShapeOf(c.inputs[0].tensor);
  const Shape& out = ShapeOf(c.output);
  if (out.ElementCount() == 0 || !IsFloat(in.dtype)) return std::nullopt;
  std::set<std::string> out_vars;
  for (const Polynomial& p : c.output_index) {
    if (p.IsConstant()) continue;
    if (p.terms.size() != 1 || !(p.constant == Rational(0)) || !(p.terms.begin()->second == Rational(1)) ||
        !out_vars.insert(p.terms.begin()->first).second)
      return std::nullopt;
  }
  std::vector<int64_t> strides(in.dims.size(), 1);
  for (size_t d = in.dims.size(); d-- > 1;) strides[d - 1] = strides[d] * in.dims[d];
  std::vector<std::string> vars;
  std::vector<int64_t> lo, ranges, steps;
  int64_t base = 1, top = 1;  // the key's range: [1, top]
  for (size_t k = 0; k < c.index_vars.size(); ++k) {
    const std::string& v = c.index_vars[k];
    if (out_vars.count(v)) continue;
    Rational step = 0;
    for (size_t d = 0; d < in.dims.size(); ++d) step = step + c.inputs[0].index[d].Coeff(v) * Rational(strides[d]);
    const ContractionOp::Bound& b = c.bounds[k];
    if (!step.IsInteger() || b.lo > b.hi) return std::nullopt;
    vars.push_back(v);
    lo.push_back(b.lo);
    ranges.push_back(b.hi - b.lo + 1);
    steps.push_back(step.num);
    int64_t span = std::abs(step.num) * (b.hi - b.lo);
    if (step.num > 0) base += span;
    top += span;
    if (top >= (int64_t{1} << 24)) return std::nullopt;  // exact in f32
  }
  if (vars.empty()) return std::nullopt;
  ast::Contraction win;
  std::vector<Polynomial> index;
  for (const std::string& v : vars) {
    Polynomial p;
    p.terms[v] = 1;
    win.output.indices.push_back(PolynomialExpr(p));
  }
  win.sizes = Sizes(ranges);
  win.agg = ast::AggOp::Assign;
  win.inputs.push_back(Ref(g, std::vector<Polynomial>(out.dims.size())));
  std::string shape = Emit(Name(c.output) + "_window", std::move(win));
  // base + sum over negative steps - sum over positive ones, of index * |step|
  ExprPtr plus = ast::MakeInt(base), minus;
  for (size_t k = 0; k < vars.size(); ++k) {
    ExprPtr term = Call("index", {TensorExpr(shape), ast::MakeInt(static_cast<int64_t>(k))});
    if (std::abs(steps[k]) != 1) term = ast::MakeBinary(ast::BinaryOp::Mul, term, ast::MakeInt(std::abs(steps[k])));
    if (steps[k] < 0) plus = ast::MakeBinary(ast::BinaryOp::Add, plus, term);
    if (steps[k] > 0) minus = minus ? ast::MakeBinary(ast::BinaryOp::Add, minus, term) : term;
  }
  // Window variables that do not move A's position (a window of one
  // position along them: Extremum's rank check) add no term; with none left
  // the key still reads the window, so that it is a tensor of its shape.
  if (std::all_of(steps.begin(), steps.end(), [](int64_t s) { return s == 0; }))
    plus = ast::MakeBinary(ast::BinaryOp::Add, plus,
                           ast::MakeBinary(ast::BinaryOp::Mul, Call("index", {TensorExpr(shape), ast::MakeInt(0)}),
                                           ast::MakeInt(0)));
  ExprPtr key = minus ? ast::MakeBinary(ast::BinaryOp::Sub, plus, minus) : plus;
  int bits = in.dtype == DataType::F64 ? 64 : 32;
  std::string name = Emit(Name(c.inputs[0].tensor) + "_key", Call("as_float", {key, ast::MakeInt(bits)}));
  for (size_t k = 0; k < vars.size(); ++k) {
    Polynomial p;
    p.terms[vars[k]] = 1;
    p.constant = Rational(-lo[k]);
    index.push_back(p);
  }
  return std::make_pair(name, index);
}

// `default P`: P's elements pass through where the contraction reached
// nothing. `reached` reads every input's index through a filled tensor:
// `>(Z_a[a] == Z_b[b])` is 1 where some valid assignment reaches the element.
void Deriver::Default(const ContractionOp& c, const std::string& g) {
  ast::Contraction r;
  r.output = Ref("", c.output_index);
  r.sizes = Sizes(ShapeOf(c.output).dims);
  r.agg = ast::AggOp::Max;
  const auto& a = c.inputs[0];
  const auto& b = c.inputs.size() > 1 ? c.inputs[1] : c.inputs[0];
  r.comb = c.inputs.size() > 2 ? ast::CombOp::Cond : ast::CombOp::Eq;
  r.inputs = {Ref(Filled(a.tensor, 0), a.index), Ref(Filled(b.tensor, 0), b.index)};
  if (c.inputs.size() > 2) r.inputs.push_back(Ref(Filled(c.inputs[2].tensor, 1), c.inputs[2].index));
  r.constraints = Constraints(c);
  std::string reached = Emit(Name(c.output) + "_reached", std::move(r));
  const Shape& out = ShapeOf(c.output);
  ContributeExpr(*c.default_tensor, ast::MakeTernary(TensorExpr(reached), ast::MakeInt(0), TensorExpr(g)), out.dims,
                 out.dtype);
}

void Deriver::Special(const SpecialOp& op, const std::string& g) {
  const Shape& out = ShapeOf(op.outputs.at(0));
  switch (op.fn) {
    case SpecialFn::Reshape: {
      const std::string& x = op.inputs.at(0);
      if (!NeedsGrad(x)) return;
      std::vector<ExprPtr> args{TensorExpr(g)};
      for (ExprPtr d : Sizes(ShapeOf(x).dims)) args.push_back(d);
      ContributeExpr(x, Call("reshape", args), ShapeOf(x).dims, out.dtype);
      return;
    }
    case SpecialFn::Gather: {
      const std::string& d = op.inputs.at(0);
      if (!NeedsGrad(d)) return;
      ContributeExpr(d, Call("scatter", {TensorExpr(g), TensorExpr(Name(op.inputs.at(1))), TensorExpr(Name(d))}),
                     ShapeOf(d).dims, out.dtype);
      return;
    }
    case SpecialFn::Scatter: {
      const std::string& e = op.inputs.at(0);
      if (!NeedsGrad(e)) return;
      ContributeExpr(e, Call("gather", {TensorExpr(g), TensorExpr(Name(op.inputs.at(1)))}), ShapeOf(e).dims,
                     out.dtype);
      return;
    }
    case SpecialFn::Shape:
    case SpecialFn::PrngStep:
      return;  // integer inputs: nothing to differentiate
  }
}

}  // namespace tilec::lang::grad
