#include "compiler/passes/flatten.h"

#include <fmt/format.h>

#include <map>
#include <numeric>
#include <utility>

#include "support/error.h"
#include "tile_lang/layout.h"

namespace tilec::compiler {
namespace {

using lang::ContractionOp;
using lang::Polynomial;

// An affine form over the flat indices with integer coefficients:
// sum_i coeffs[i] * idx[i] + constant.
struct IntForm {
  std::vector<int64_t> coeffs;
  int64_t constant = 0;
};

// Positions of the index variables, and their lower bounds.
struct IndexSpace {
  std::map<std::string, int> position;
  std::vector<int64_t> lo;
  std::vector<int64_t> range;
  bool empty = false;  // some bound is empty: no valid assignment
  // Flat indices: a variable blocked by B (read through a blocked layout)
  // becomes two, var = B * outer + inner; others map one to one.
  std::vector<int64_t> block;        // per variable: 1, or B
  std::vector<int> first_flat;       // per variable: its (outer) flat index
  std::vector<int64_t> flat_range;   // per flat index
};

IndexSpace MakeIndexSpace(const ContractionOp& op) {
  TILEC_CHECK(op.bounds.size() == op.index_vars.size(), "contraction {}: {} bounds for {} indices",
              op.output, op.bounds.size(), op.index_vars.size());
  IndexSpace space;
  for (size_t i = 0; i < op.index_vars.size(); ++i) {
    const ContractionOp::Bound& b = op.bounds[i];
    bool fresh = space.position.emplace(op.index_vars[i], static_cast<int>(i)).second;
    TILEC_CHECK(fresh, "contraction {}: index {} listed twice", op.output, op.index_vars[i]);
    space.lo.push_back(b.lo);
    if (b.lo > b.hi) {
      // No valid assignment at all: keep one point, made invalid by a
      // constraint that never holds (see Flatten's doc comment).
      space.empty = true;
      space.range.push_back(1);
      continue;
    }
    // hi - lo + 1 overflows only for bounds no tensor can have.
    space.range.push_back(
        CheckedAdd(CheckedAdd(b.hi, -b.lo, "an index range"), 1, "an index range"));
  }
  return space;
}

// Variable coefficients -> flat index coefficients.
std::vector<int64_t> Expand(const std::vector<int64_t>& coeffs, const IndexSpace& space) {
  std::vector<int64_t> flat(space.flat_range.size(), 0);
  for (size_t v = 0; v < coeffs.size(); ++v) {
    int k = space.first_flat[v];
    if (space.block[v] == 1) {
      flat[k] = coeffs[v];
    } else {
      flat[k] = CheckedMul(coeffs[v], space.block[v], "a blocked index");
      flat[k + 1] = coeffs[v];
    }
  }
  return flat;
}

int64_t Lcm(int64_t a, int64_t b) { return CheckedMul(a / std::gcd(a, b), b, "a denominator"); }

// `poly * scale` over the shifted indices (idx = idx' + lo), with integer
// coefficients. `scale` must clear every denominator.
IntForm ToIntForm(const Polynomial& poly, int64_t scale, const IndexSpace& space,
                  const ContractionOp& op) {
  IntForm f;
  f.coeffs.assign(space.lo.size(), 0);
  auto scaled = [&](const lang::Rational& r) {
    TILEC_CHECK(r.den > 0 && scale % r.den == 0, "scale {} does not clear {}/{}", scale, r.num,
                r.den);
    return CheckedMul(r.num, scale / r.den, "an index polynomial");
  };
  f.constant = scaled(poly.constant);
  for (const auto& [var, coeff] : poly.terms) {
    auto it = space.position.find(var);
    TILEC_CHECK(it != space.position.end(), "contraction {}: polynomial uses unknown index {}",
                op.output, var);
    int64_t c = scaled(coeff);
    f.coeffs[it->second] = c;
    f.constant = CheckedAdd(f.constant, CheckedMul(c, space.lo[it->second], "an index shift"),
                            "an index shift");
  }
  return f;
}

bool IsIntegral(const Polynomial& p) {
  if (!p.constant.IsInteger()) return false;
  for (const auto& [var, c] : p.terms)
    if (!c.IsInteger()) return false;
  return true;
}

}  // namespace

std::optional<std::vector<DimParts>> LayoutParts(const lang::TensorDecl& t) {
  const std::vector<int64_t>& dims = t.shape.dims;
  lang::Layout layout = t.layout;
  // An unset layout is row-major (program.h: "row-major unless bound otherwise").
  if (layout.phys.empty() && !dims.empty()) layout = lang::RowMajorLayout(dims);
  std::vector<std::vector<lang::PhysicalDim>> per_dim(dims.size());
  for (const lang::PhysicalDim& p : layout.phys) {
    TILEC_CHECK(p.dim >= 0 && p.dim < static_cast<int>(dims.size()),
                "tensor {}: layout {} names dimension {}", t.name, layout.name, p.dim);
    TILEC_CHECK(p.stride >= 0, "tensor {}: layout {} has negative stride {}", t.name, layout.name,
                p.stride);
    per_dim[p.dim].push_back(p);
  }
  std::vector<DimParts> parts(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    const auto& ps = per_dim[d];
    if (ps.size() == 1 && ps[0].divisor == 1) {
      parts[d].stride = ps[0].stride;
      continue;
    }
    // Blocked: outer (divisor B) and inner (divisor 1, size B), either order.
    if (ps.size() == 2) {
      const lang::PhysicalDim& outer = ps[0].divisor > 1 ? ps[0] : ps[1];
      const lang::PhysicalDim& inner = ps[0].divisor > 1 ? ps[1] : ps[0];
      if (inner.divisor == 1 && inner.size == outer.divisor && outer.divisor > 1) {
        parts[d] = {inner.stride, outer.divisor, outer.stride};
        continue;
      }
    }
    return std::nullopt;
  }
  return parts;
}

namespace {

std::vector<DimParts> RequireLayoutParts(const lang::TensorDecl& t) {
  std::optional<std::vector<DimParts>> parts = LayoutParts(t);
  if (!parts)
    throw InternalError(fmt::format(
        "Flatten: tensor '{}' has layout '{}' ({}): only plain dimensions and dimensions split "
        "once into blocks are supported",
        t.name, t.layout.name, lang::ToString(t.layout)));
  return *parts;
}

// The variable that alone indexes a dimension (coefficient 1, constant 0),
// or -1.
int SoleVariable(const Polynomial& p, const IndexSpace& space) {
  if (p.terms.size() != 1 || !(p.constant == lang::Rational(0))) return -1;
  const auto& [var, coeff] = *p.terms.begin();
  if (!(coeff == lang::Rational(1))) return -1;
  auto it = space.position.find(var);
  return it == space.position.end() ? -1 : it->second;
}

int64_t ElementLimit(const lang::TensorDecl& t) {
  if (t.layout.elements > 0) return t.layout.elements;
  if (t.layout.phys.empty()) return lang::RowMajorLayout(t.shape.dims).elements;
  return 0;
}

// Adds `lhs . idx <= rhs` unless the index box implies it; reduces by the
// gcd and merges with an earlier side over the same coefficients.
void AddSide(std::vector<int64_t> lhs, int64_t rhs, const IndexSpace& space,
             std::vector<FlatConstraint>& out) {
  int64_t g = 0;
  for (int64_t c : lhs) g = std::gcd(g, c);
  if (g > 1) {
    for (int64_t& c : lhs) c /= g;
    // floor(rhs / g): integer points satisfy g*x <= rhs iff x <= floor(rhs/g).
    rhs = rhs >= 0 ? rhs / g : -((-rhs + g - 1) / g);
  }
  // The largest value of lhs . idx over the box (every idx in [0, range)).
  int64_t max = 0;
  for (size_t i = 0; i < lhs.size(); ++i)
    if (lhs[i] > 0)
      max = CheckedAdd(max, CheckedMul(lhs[i], space.flat_range[i] - 1, "a constraint"),
                       "a constraint");
  if (max <= rhs) return;
  for (FlatConstraint& c : out) {
    if (c.lhs == lhs) {
      c.rhs = std::min(c.rhs, rhs);
      return;
    }
  }
  out.push_back(FlatConstraint{std::move(lhs), rhs});
}

// 0 <= f <= hi as two one-sided constraints.
void AddRange(const IntForm& f, int64_t hi, const IndexSpace& space,
              std::vector<FlatConstraint>& out) {
  std::vector<int64_t> pos = Expand(f.coeffs, space);
  std::vector<int64_t> neg(pos.size());
  for (size_t i = 0; i < neg.size(); ++i) neg[i] = -pos[i];
  AddSide(std::move(neg), f.constant, space, out);  // -sum <= constant
  AddSide(pos, CheckedAdd(hi, -f.constant, "a constraint"), space, out);
}

std::string AccessText(const std::string& tensor, const std::vector<Polynomial>& index) {
  std::vector<std::string> parts;
  for (const Polynomial& p : index) parts.push_back(lang::ToString(p));
  return fmt::format("{}[{}]", tensor, fmt::join(parts, ", "));
}

std::string_view AggText(lang::ast::AggOp op) {
  switch (op) {
    case lang::ast::AggOp::Sum: return "+";
    case lang::ast::AggOp::Prod: return "*";
    case lang::ast::AggOp::Max: return ">";
    case lang::ast::AggOp::Min: return "<";
    case lang::ast::AggOp::Assign: return "=";
  }
  return "?";
}

// "O[n, x : 32, 224] = +(D[n, i + x - 1] * K[i]), i < 3" for printing.
std::string CommentText(const lang::Program& program, const ContractionOp& op) {
  std::string out = AccessText(op.output, op.output_index);
  const lang::TensorDecl& t = program.Tensor(op.output);
  if (!t.shape.dims.empty()) {
    out.pop_back();
    out += fmt::format(" : {}]", fmt::join(t.shape.dims, ", "));
  }
  std::vector<std::string> in;
  for (const auto& a : op.inputs) in.push_back(AccessText(a.tensor, a.index));
  std::string body;
  switch (op.comb) {
    case lang::ast::CombOp::None: body = fmt::format("{}", fmt::join(in, ", ")); break;
    case lang::ast::CombOp::Mul: body = fmt::format("{}", fmt::join(in, " * ")); break;
    case lang::ast::CombOp::Add: body = fmt::format("{}", fmt::join(in, " + ")); break;
    case lang::ast::CombOp::Eq: body = fmt::format("{}", fmt::join(in, " == ")); break;
    case lang::ast::CombOp::Cond:
      if (in.size() == 3) body = fmt::format("{} == {} ? {}", in[0], in[1], in[2]);
      break;
  }
  out += fmt::format(" = {}({})", AggText(op.agg), body);
  for (const auto& c : op.constraints)
    out += fmt::format(", {} < {}", lang::ToString(c.poly), c.range);
  return out;
}

}  // namespace

FlatContraction Flatten(const lang::Program& program, const ContractionOp& op) {
  IndexSpace space = MakeIndexSpace(op);
  std::vector<ContractionOp::Access> accesses;
  accesses.push_back({op.output, op.output_index});
  for (const auto& a : op.inputs) accesses.push_back(a);

  // Blocked dimensions split their variable: var = B * outer + inner.
  size_t nvars = op.index_vars.size();
  space.block.assign(nvars, 1);
  std::vector<std::vector<DimParts>> parts;
  for (const ContractionOp::Access& a : accesses) {
    const lang::TensorDecl& t = program.Tensor(a.tensor);
    TILEC_CHECK(a.index.size() == t.shape.dims.size(), "{} accessed with {} indices, rank {}",
                a.tensor, a.index.size(), t.shape.dims.size());
    parts.push_back(RequireLayoutParts(t));
    for (size_t d = 0; d < a.index.size(); ++d) {
      int64_t b = parts.back()[d].block;
      if (b == 1) continue;
      int v = SoleVariable(a.index[d], space);
      if (v < 0 || space.lo[v] != 0 || space.empty || (space.block[v] != 1 && space.block[v] != b)) {
        throw InternalError(fmt::format(
            "Flatten: {}[..] dimension {} is blocked by {} but indexed by {}: a blocked "
            "dimension needs one index variable of its own, starting at 0, blocked alike "
            "everywhere",
            a.tensor, d, b, lang::ToString(a.index[d])));
      }
      space.block[v] = b;
    }
  }
  FlatContraction flat;
  flat.name = op.output;
  flat.comment = CommentText(program, op);
  for (size_t v = 0; v < nvars; ++v) {
    space.first_flat.push_back(static_cast<int>(flat.indices.size()));
    const std::string& name = op.index_vars[v];
    int64_t b = space.block[v];
    if (b == 1) {
      flat.indices.push_back(FlatIndex{name, space.range[v]});
      space.flat_range.push_back(space.range[v]);
    } else {
      int64_t outer = (space.range[v] + b - 1) / b;
      flat.indices.push_back(FlatIndex{fmt::format("{}/{}", name, b), outer});
      flat.indices.push_back(FlatIndex{fmt::format("{}%{}", name, b), b});
      space.flat_range.push_back(outer);
      space.flat_range.push_back(b);
    }
  }
  for (size_t v = 0; v < nvars; ++v) {
    std::vector<int64_t> unit(nvars, 0);
    unit[v] = 1;
    flat.vars.push_back({op.index_vars[v], Expand(unit, space), space.lo[v]});
  }
  flat.agg_op = op.agg;
  flat.comb_op = op.comb;
  flat.num_inputs = static_cast<int>(op.inputs.size());
  flat.agg_type = program.Tensor(op.output).shape.dtype;
  flat.kernel_outputs = {op.output};

  for (size_t n = 0; n < accesses.size(); ++n) {
    const ContractionOp::Access& a = accesses[n];
    const lang::TensorDecl& t = program.Tensor(a.tensor);
    FlatAccess fa;
    fa.tensor = a.tensor;
    fa.dtype = t.shape.dtype;
    fa.strides.assign(space.flat_range.size(), 0);
    fa.limit = ElementLimit(t);
    for (size_t d = 0; d < a.index.size(); ++d) {
      const Polynomial& p = a.index[d];
      if (!IsIntegral(p)) {
        throw InternalError(fmt::format(
            "Flatten: {}[..] dimension {} is indexed by {}: fractional index polynomials need "
            "defractionalization",
            a.tensor, d, lang::ToString(p)));
      }
      IntForm f = ToIntForm(p, 1, space, op);
      const DimParts& dim = parts[n][d];
      if (dim.block == 1) {
        std::vector<int64_t> coeffs = Expand(f.coeffs, space);
        for (size_t i = 0; i < coeffs.size(); ++i)
          fa.strides[i] = CheckedAdd(fa.strides[i], CheckedMul(coeffs[i], dim.stride, "a stride"),
                                     "a stride");
        fa.offset =
            CheckedAdd(fa.offset, CheckedMul(f.constant, dim.stride, "an offset"), "an offset");
      } else {
        int k = space.first_flat[SoleVariable(p, space)];
        fa.strides[k] = CheckedAdd(fa.strides[k], dim.outer_stride, "a stride");
        fa.strides[k + 1] = CheckedAdd(fa.strides[k + 1], dim.stride, "a stride");
      }
      AddRange(f, t.shape.dims[d] - 1, space, flat.constraints);
    }
    flat.accesses.push_back(std::move(fa));
  }
  // A blocked variable's padding: B * outer + inner <= range - 1.
  for (size_t v = 0; v < nvars; ++v) {
    if (space.block[v] == 1) continue;
    IntForm f;
    f.coeffs.assign(nvars, 0);
    f.coeffs[v] = 1;
    AddRange(f, space.range[v] - 1, space, flat.constraints);
  }

  for (const ContractionOp::Constraint& c : op.constraints) {
    // 0 <= poly < range is 0 <= L*poly <= L*range - 1 once L*poly is integral.
    int64_t scale = c.poly.constant.den;
    for (const auto& [var, coeff] : c.poly.terms) scale = Lcm(scale, coeff.den);
    IntForm f = ToIntForm(c.poly, scale, space, op);
    AddRange(f, CheckedAdd(CheckedMul(c.range, scale, "a constraint"), -1, "a constraint"), space,
             flat.constraints);
  }

  if (space.empty)
    AddSide(std::vector<int64_t>(space.flat_range.size(), 0), -1, space, flat.constraints);

  return flat;
}

std::optional<FlatContraction> TryFlatten(const lang::Program& program, const ContractionOp& op) {
  try {
    return Flatten(program, op);
  } catch (const InternalError&) {
    return std::nullopt;
  }
}

}  // namespace tilec::compiler
