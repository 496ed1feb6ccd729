#include "tile_lang/gradient.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <optional>
#include <set>
#include <tuple>

#include "support/error.h"
#include "tile_lang/binder.h"
#include "tile_lang/grad_rules.h"
#include "tile_lang/parser.h"
#include "tile_lang/printer.h"
#include "tile_lang/to_ast.h"

namespace tilec::lang {
namespace {

using ast::ExprPtr;

ExprPtr Call(const std::string& name, std::vector<ExprPtr> args) { return ast::MakeCall(name, std::move(args)); }

// The rank of the polynomials' coefficient rows over `vars` (Gaussian
// elimination over the rationals).
size_t Rank(const std::vector<Polynomial>& polys, const std::vector<std::string>& vars) {
  std::vector<std::vector<Rational>> m;
  for (const Polynomial& p : polys) {
    std::vector<Rational> row;
    for (const std::string& v : vars) row.push_back(p.Coeff(v));
    m.push_back(std::move(row));
  }
  size_t rank = 0;
  for (size_t col = 0; col < vars.size() && rank < m.size(); ++col) {
    size_t pivot = rank;
    while (pivot < m.size() && m[pivot][col] == Rational(0)) ++pivot;
    if (pivot == m.size()) continue;
    std::swap(m[pivot], m[rank]);
    for (size_t r = 0; r < m.size(); ++r) {
      if (r == rank || m[r][col] == Rational(0)) continue;
      Rational f = m[r][col] / m[rank][col];
      for (size_t c = col; c < vars.size(); ++c) m[r][c] = m[r][c] - f * m[rank][c];
    }
    ++rank;
  }
  return rank;
}

// A gradient contraction before it is written as Tile: output and input
// polynomials over the forward contraction's index variables, its constraints.
struct Gather {
  std::vector<Polynomial> out;
  std::vector<std::pair<std::string, std::vector<Polynomial>>> refs;
  std::vector<ContractionOp::Constraint> constraints;
};

// p with `var` replaced by `value`.
Polynomial Substitute(const Polynomial& p, const std::string& var, const Polynomial& value) {
  Rational k = p.Coeff(var);
  if (k == Rational(0)) return p;
  Polynomial q = p;
  q.terms.erase(var);
  return q + value * k;
}

// Rewrites a gradient contraction's output indices into plain variables, so
// that a kernel gathers each output element instead of scattering over
// windows (the compiler's form for a non-plain output is a slow direct one),
// keeping the valid index assignments (the rewrite is a bijection of them).
// In `x + i - 1`, x (coefficient 1, the other terms integers, so x stays an
// integer exactly when the new variable is) is renamed to stand for the
// whole index, and `x - i + 1` replaces it everywhere else:
//     D_g[n, x + i - 1, ...] = +(O_g[n, x, ...] * K[i, ...])
//     D_g[n, x, ...] = +(O_g[n, x - i + 1, ...] * K[i, ...])
// Of the candidates, the variable of largest range is taken (the spatial one
// rather than the kernel tap); only coefficient 1 for now (see below).
//
// A strided window `s * x + i + c` (s >= 2, the tap i of no larger range than
// x) made plain through i would read `F[i - 2 * x, ...]` and visit every x
// for each element though few are valid. It is split by its residue
// instead (polyphase): the index becomes `s * x + xr`, xr < s its phase,
// and the window's step xt replaces the tap, i = s * xt + xr - c and the
// old x = x - xt, so each element visits only the taps of its phase:
//     I_g[n, 2 * x + i - 1, ...] = +(O_g[n, x, ...] * F[i, ...])
//     I_g[n, 2 * x + xr, ...] = +(O_g[n, x - xt, ...] * F[2 * xt + xr + 1, ...]), xr < 2
// (a bijection of the integer assignments: i = s * x + i + c splits
// uniquely into x and xr). Such an injective output with integer
// coefficients is flattened like a plain one, so the vector and flat forms
// take it (bench/grad conv3x3/2 and max pool) when s divides the size:
// otherwise `2 * x + xr` overhangs it, and only the slow direct form takes
// such an output, so the index is made plain through the tap as before. An index without a variable
// of coefficient 1 (`2 * x`, `x / 2`, `N - 1 - x`) stays as it is.
// Call once per gather: the phase index of a split one is a unit variable again.
void MakeOutputPlain(Gather& g, const ContractionOp& c, const std::vector<int64_t>& dims) {
  auto range = [&](const std::string& v) {
    for (size_t k = 0; k < c.index_vars.size(); ++k)
      if (c.index_vars[k] == v) return c.bounds[k].hi - c.bounds[k].lo;
    return int64_t{0};
  };
  auto plain = [](const Polynomial& p) {
    return p.terms.size() == 1 && p.terms.begin()->second == Rational(1) && p.constant == Rational(0);
  };
  auto substitute = [&](const std::string& var, const Polynomial& value) {
    for (Polynomial& q : g.out) q = Substitute(q, var, value);
    for (auto& [tensor, index] : g.refs)
      for (Polynomial& q : index) q = Substitute(q, var, value);
    for (auto& k : g.constraints) k.poly = Substitute(k.poly, var, value);
  };
  auto var = [](const std::string& v) {
    Polynomial p;
    p.terms[v] = 1;
    return p;
  };
  std::set<std::string> fixed;
  for (const Polynomial& p : g.out)
    if (plain(p)) fixed.insert(p.terms.begin()->first);
  for (size_t k = 0; k < g.out.size(); ++k) {
    const Polynomial p = g.out[k];
    bool integral = p.constant.IsInteger();
    for (const auto& [v, coeff] : p.terms) integral = integral && coeff.IsInteger();
    if (plain(p) || !integral) continue;
    std::string unit;  // the variable of coefficient 1 of largest range
    for (const auto& [v, coeff] : p.terms) {
      if (fixed.count(v)) continue;
      // Coefficient -1 (`N - 1 - x`) would do too, but the llvm backend then
      // miscompiles some programs (difftest --grad seed 426); left as it is.
      if (coeff == Rational(1) && (unit.empty() || range(v) > range(unit))) unit = v;
    }
    if (unit.empty()) continue;
    if (p.terms.size() == 2) {
      const auto& [x, stride] = *std::find_if(p.terms.begin(), p.terms.end(),
                                              [&](const auto& term) { return term.first != unit; });
      if (stride.IsInteger() && stride.num >= 2 && !fixed.count(x) && range(unit) <= range(x) &&
          dims.at(k) % stride.num == 0) {
        std::set<std::string> names(c.index_vars.begin(), c.index_vars.end());
        auto collect = [&](const Polynomial& q) {
          for (const auto& [v, coeff] : q.terms) names.insert(v);
        };
        for (const Polynomial& q : g.out) collect(q);
        for (const auto& [tensor, index] : g.refs)
          for (const Polynomial& q : index) collect(q);
        auto fresh = [&](const std::string& base) {
          std::string name = base;
          for (int n = 2; names.count(name); ++n) name = fmt::format("{}{}", base, n);
          names.insert(name);
          return name;
        };
        const std::string xv = x;  // x is a reference into p, which the substitution leaves alone
        const std::string phase = fresh(xv + "r"), step = fresh(xv + "t");
        Polynomial tap = var(step) * stride + var(phase);
        tap.constant = Rational(0) - p.constant;
        substitute(unit, tap);
        substitute(xv, var(xv) - var(step));
        g.constraints.push_back({var(phase), stride.num});
        fixed.insert(xv);
        fixed.insert(phase);
        continue;
      }
    }
    // p = v + rest, so the old v is (new v) - rest.
    Polynomial rest = p;
    rest.terms.erase(unit);
    substitute(unit, var(unit) - rest);
    fixed.insert(unit);
  }
}

void CollectNames(const ast::Expr& e, std::set<std::string>& names) {
  if (e.kind == ast::ExprKind::Name && e.name_class == ast::NameClass::Tensor) names.insert(e.name);
  for (const ExprPtr& a : e.args)
    if (a) CollectNames(*a, names);
}

void CollectNames(const ast::Statement& st, std::set<std::string>& names) {
  if (st.kind == ast::Statement::Kind::Assignment) {
    CollectNames(*st.assignment.value, names);
    return;
  }
  for (const auto& r : st.contraction.inputs) names.insert(r.name);
  if (st.contraction.default_tensor) names.insert(*st.contraction.default_tensor);
}

// The constant factor `c` of reverse_grad(X, c): a literal, possibly negated.
std::optional<double> LiteralValue(const ast::Expr& e) {
  if (e.kind == ast::ExprKind::IntLit) return static_cast<double>(e.int_value);
  if (e.kind == ast::ExprKind::FloatLit) return e.float_value;
  if (e.kind == ast::ExprKind::Unary && e.unary_op == ast::UnaryOp::Neg)
    if (auto v = LiteralValue(*e.args.at(0))) return -*v;
  return std::nullopt;
}

// PlaidML's reverse_grad(X, c) is X whose gradient is multiplied by -c;
// binding forgets it. Each call becomes a tensor of its own, defined just
// before its statement (`ReverseGrad = X;`), whose gradient is scaled.
class ReverseGrads {
 public:
  explicit ReverseGrads(const ast::Function& f) : f_(f) {
    for (const auto& in : f.inputs) {
      names_.insert(in.name);
      names_.insert(in.dims.begin(), in.dims.end());
    }
    for (const auto& st : f.body)
      names_.insert(st.kind == ast::Statement::Kind::Assignment ? st.assignment.name : st.contraction.output.name);
  }

  ast::Function Rewrite(std::map<std::string, double>& factors) {
    ast::Function out = f_;
    out.body.clear();
    for (const auto& st : f_.body) {
      if (st.kind == ast::Statement::Kind::Assignment && st.assignment.value) {
        ast::Statement copy = st;
        copy.assignment.value = Replace(st.assignment.value, out.body, factors);
        out.body.push_back(std::move(copy));
      } else {
        out.body.push_back(st);
      }
    }
    return out;
  }

 private:
  ExprPtr Replace(const ExprPtr& e, std::vector<ast::Statement>& body, std::map<std::string, double>& factors) {
    if (e->kind == ast::ExprKind::Call && e->name == "reverse_grad" && e->args.size() == 2) {
      std::optional<double> c = LiteralValue(*e->args[1]);
      if (!c)
        TILEC_USER_ERROR_AT(f_.source, e->args[1]->span,
                            "the factor of 'reverse_grad' must be a literal for tilec grad");
      std::string name = "ReverseGrad";
      for (int k = 2; names_.count(name); ++k) name = fmt::format("ReverseGrad_{}", k);
      names_.insert(name);
      ast::Statement def = AssignmentStatement(name, Replace(e->args[0], body, factors));
      def.span = def.name_span = e->span;
      body.push_back(std::move(def));
      factors[name] = -*c;
      return ast::MakeName(name, ast::NameClass::Tensor, e->span);
    }
    if (e->args.empty()) return e;
    auto copy = std::make_shared<ast::Expr>(*e);
    for (auto& a : copy->args)
      if (a) a = Replace(a, body, factors);
    return copy;
  }

  const ast::Function& f_;
  std::set<std::string> names_;
};

// Shift invariance: which max/min results need no gradient. Softmax,
// log-softmax and log-sum-exp subtract a row maximum M only to keep exp in
// range: their results do not change when M changes (softmax is
// shift-invariant), so dY/dM = 0 exactly and M is a constant to the
// gradient (a stop-gradient), with none of the max rule's keys and winners.
// `ShiftFree` proves it by following a perturbation M + d (d any tensor of
// M's shape) forward through the program: each tensor is unchanged (Same),
// t + s d (Shift), t * exp(s d) (Scale), s = +-1, or anything (Other), with d
// read at the tensor's index through `map`: per dimension of M, the
// tensor's dimension that indexes it, or -1 where M's index is 0 (a size-1
// dimension, broadcast). M is a constant to the gradient when every
// differentiated output stays Same.
class ShiftFree {
 public:
  ShiftFree(const Program& prog, const std::vector<std::string>& outputs) : prog_(prog), outputs_(outputs) {}

  // Whether the outputs do not depend on `m`'s value (ops before m's
  // definition at `def` cannot read it).
  bool Check(const std::string& m, size_t def) {
    states_.clear();
    const Shape& s = prog_.Tensor(m).shape;
    State st{Kind::Shift, 1, {}};
    for (size_t k = 0; k < s.dims.size(); ++k) st.map.push_back(s.dims[k] == 1 ? -1 : static_cast<int>(k));
    states_[m] = st;
    for (size_t k = def + 1; k < prog_.ops.size(); ++k) {
      const Op& op = prog_.ops[k];
      if (const auto* e = std::get_if<ElementwiseOp>(&op)) Set(e->output, Elementwise(*e));
      else if (const auto* c = std::get_if<ContractionOp>(&op)) Set(c->output, Contraction(*c));
      else
        for (const std::string& in : std::get<SpecialOp>(op).inputs)
          if (Get(in).kind != Kind::Same)
            for (const std::string& out : std::get<SpecialOp>(op).outputs) Set(out, Other());
    }
    return std::all_of(outputs_.begin(), outputs_.end(), [&](const std::string& o) { return Get(o).kind == Kind::Same; });
  }

 private:
  enum class Kind { Same, Shift, Scale, Other };
  struct State {
    Kind kind = Kind::Same;
    int sign = 1;
    std::vector<int> map;
    bool operator==(const State&) const = default;
  };
  static State Other() { return {Kind::Other, 1, {}}; }
  static State Same() { return {}; }

  State Get(const std::string& t) const {
    auto it = states_.find(t);
    return it == states_.end() ? Same() : it->second;
  }
  void Set(const std::string& t, const State& s) {
    if (s.kind == Kind::Same) states_.erase(t);
    else states_[t] = s;
  }

  // An operand's state in the output's index space (broadcasting aligns trailing dimensions).
  State Broadcast(const Operand& o, const Shape& y) const {
    if (!o.is_tensor) return Same();
    State s = Get(o.tensor);
    if (s.kind == Kind::Same || s.kind == Kind::Other) return s;
    int off = static_cast<int>(y.dims.size() - prog_.Tensor(o.tensor).shape.dims.size());
    for (int& d : s.map)
      if (d >= 0) d += off;
    return s;
  }
  static State Negated(State s) {
    if (s.kind == Kind::Shift) s.sign = -s.sign;
    return s;  // -(t * exp(s d)) is (-t) * exp(s d)
  }
  static bool Opposite(const State& a, const State& b) { return a.map == b.map && a.sign == -b.sign; }

  State Elementwise(const ElementwiseOp& op) const {
    const Shape& y = prog_.Tensor(op.output).shape;
    std::vector<State> x;
    bool all_same = true;
    for (const Operand& o : op.operands) {
      x.push_back(Broadcast(o, y));
      all_same = all_same && x.back().kind == Kind::Same;
      if (x.back().kind == Kind::Other) return Other();
    }
    if (all_same) return Same();
    if (!IsFloat(y.dtype)) return Other();
    auto kind = [&](size_t k) { return x.at(k).kind; };
    switch (op.fn) {
      case ElemFn::Ident:
      case ElemFn::Cast: return x[0];
      case ElemFn::Neg: return Negated(x[0]);
      case ElemFn::Exp:
        if (kind(0) == Kind::Shift) return {Kind::Scale, x[0].sign, x[0].map};
        return Other();
      case ElemFn::Log:
        if (kind(0) == Kind::Scale) return {Kind::Shift, x[0].sign, x[0].map};
        return Other();
      case ElemFn::Add:
      case ElemFn::Sub: {
        State a = x[0], b = op.fn == ElemFn::Sub ? Negated(x[1]) : x[1];
        if (b.kind == Kind::Same && a.kind == Kind::Shift) return a;
        if (a.kind == Kind::Same && b.kind == Kind::Shift) return b;
        if (a.kind == Kind::Shift && b.kind == Kind::Shift && Opposite(a, b)) return Same();
        if (a.kind == Kind::Scale && b.kind == Kind::Scale && a == b) return a;
        return Other();
      }
      case ElemFn::Mul:
      case ElemFn::Div: {
        State a = x[0], b = x[1];
        if (op.fn == ElemFn::Div && b.kind == Kind::Scale) b.sign = -b.sign;  // 1 / exp(s d) = exp(-s d)
        if (a.kind == Kind::Scale && b.kind == Kind::Same) return a;
        if (a.kind == Kind::Same && b.kind == Kind::Scale) return b;
        if (a.kind == Kind::Scale && b.kind == Kind::Scale && Opposite(a, b)) return Same();
        return Other();
      }
      default: return Other();
    }
  }

  State Contraction(const ContractionOp& c) const {
    std::vector<State> x;
    for (const auto& in : c.inputs) x.push_back(Get(in.tensor));
    bool all_same = std::all_of(x.begin(), x.end(), [](const State& s) { return s.kind == Kind::Same; });
    if (all_same && (!c.default_tensor || Get(*c.default_tensor).kind == Kind::Same)) return Same();
    if (c.default_tensor || !IsFloat(prog_.Tensor(c.output).shape.dtype)) return Other();
    // One perturbed input: `+(A)`, `+(A * B)` with B unchanged (Scale only), `>`/`<`/`=` (A alone).
    size_t k = 0;
    if (c.comb == ast::CombOp::Mul && x.size() == 2) {
      if (x[0].kind != Kind::Same && x[1].kind != Kind::Same) return Other();
      k = x[0].kind == Kind::Same ? 1 : 0;
      if (x[k].kind != Kind::Scale) return Other();
    } else if (c.comb != ast::CombOp::None || x.size() != 1) {
      return Other();
    }
    State s = x[k];
    if (s.kind == Kind::Other || (c.agg == ast::AggOp::Sum && s.kind == Kind::Shift) || c.agg == ast::AggOp::Prod)
      return Other();
    // An output element no term reaches is 0, unperturbed: fine for t * exp(s d),
    // not for t + s d, which takes a contraction that reaches every element.
    if (s.kind == Kind::Shift && !ReachesEverything(c)) return Other();
    // d must be read at the same point by every term of an output element:
    // each index of d is an output index (or 0).
    const auto& index = c.inputs[k].index;
    const Shape& out = prog_.Tensor(c.output).shape;
    for (int& d : s.map) {
      if (d < 0) continue;
      int found = -1;
      for (size_t e = 0; e < c.output_index.size() && found < 0; ++e)
        if (c.output_index[e] == index.at(d)) found = static_cast<int>(e);
      if (found < 0) return Other();
      d = out.dims[found] == 1 ? -1 : found;
    }
    return s;
  }

  // Without constraints, plain indices reading every element of the input
  // and each output index a plain variable (or 0 into a size-1 dimension) of
  // the same size.
  bool ReachesEverything(const ContractionOp& c) const {
    if (!c.constraints.empty() || c.inputs.size() != 1) return false;
    auto plain = [](const Polynomial& p) {
      return p.terms.size() == 1 && p.terms.begin()->second == Rational(1) && p.constant == Rational(0);
    };
    std::map<std::string, int64_t> size;
    const auto& in = c.inputs[0];
    const Shape& is = prog_.Tensor(in.tensor).shape;
    for (size_t d = 0; d < in.index.size(); ++d) {
      if (!plain(in.index[d]) || size.count(in.index[d].terms.begin()->first)) return false;
      size[in.index[d].terms.begin()->first] = is.dims[d];
    }
    const Shape& os = prog_.Tensor(c.output).shape;
    std::set<std::string> seen;
    for (size_t e = 0; e < c.output_index.size(); ++e) {
      const Polynomial& p = c.output_index[e];
      if (p.IsConstant() ? !(p.constant == Rational(0) && os.dims[e] == 1)
                         : !plain(p) || !size.count(p.terms.begin()->first) ||
                               size[p.terms.begin()->first] != os.dims[e] ||
                               !seen.insert(p.terms.begin()->first).second)
        return false;
    }
    return true;
  }

  const Program& prog_;
  const std::vector<std::string>& outputs_;
  std::map<std::string, State> states_;
};

class Deriver {
 public:
  Deriver(const ast::Function& f, const Program& prog, std::map<std::string, double> factors)
      : f_(f), prog_(prog), factors_(std::move(factors)) {
    for (const auto& in : f.inputs) {
      used_.insert(in.name);
      used_.insert(in.dims.begin(), in.dims.end());
    }
    for (const auto& st : f.body)
      used_.insert(st.kind == ast::Statement::Kind::Assignment ? st.assignment.name : st.contraction.output.name);
    for (const auto& [name, decl] : prog.tensors) used_.insert(name);
  }

  GradientProgram Run(const GradientOptions& options);

 private:
  struct Grad {
    std::string name;
    bool owned;  // a statement made for this gradient alone (which may be renamed)
    // Set: the tensor has these dims, which broadcast to the gradient's
    // (ContributeBroadcast); Finalize broadcasts it.
    std::optional<std::vector<int64_t>> narrow = std::nullopt;
  };

  std::string Fresh(const std::string& base) {
    std::string name = base;
    for (int k = 2; used_.count(name); ++k) name = fmt::format("{}_{}", base, k);
    used_.insert(name);
    return name;
  }
  // A forward tensor's name in the derived program: temporaries `_T3` become `T3`.
  std::string Name(const std::string& t) {
    if (t.empty() || t[0] != '_') return t;
    auto it = renamed_.find(t);
    if (it == renamed_.end()) it = renamed_.emplace(t, Fresh(t.substr(1))).first;
    return it->second;
  }
  std::string GradBase(const std::string& t) { return Name(t) + "_grad"; }
  const Shape& ShapeOf(const std::string& t) const { return prog_.Tensor(t).shape; }
  bool NeedsGrad(const std::string& t) const {
    return reach_.count(t) && !constant_.count(t) && IsFloat(ShapeOf(t).dtype);
  }

  [[noreturn]] void Fail(const SourceSpan& span, const std::string& what) const {
    TILEC_USER_ERROR_AT(prog_.source, span, "cannot differentiate this statement: {}", what);
  }

  std::string Emit(const std::string& base, ExprPtr value) {
    std::string name = Fresh(base);
    backward_.push_back(AssignmentStatement(name, std::move(value)));
    return name;
  }
  std::string Emit(const std::string& base, ast::Contraction c) {
    c.output.name = Fresh(base);
    std::string name = c.output.name;
    backward_.push_back(ContractionStatement(std::move(c)));
    return name;
  }
  static ast::TensorRef Ref(const std::string& name, const std::vector<Polynomial>& index) {
    ast::TensorRef r;
    r.name = name;
    for (const Polynomial& p : index) r.indices.push_back(PolynomialExpr(p));
    return r;
  }
  static std::vector<ExprPtr> Sizes(const std::vector<int64_t>& dims) {
    std::vector<ExprPtr> sizes;
    for (int64_t d : dims) sizes.push_back(ast::MakeInt(d));
    return sizes;
  }

  void Contribute(const std::string& t, std::string name, const std::vector<int64_t>& dims, DataType dtype,
                  bool owned);
  void ContributeExpr(const std::string& t, const ExprPtr& value, const std::vector<int64_t>& dims,
                      DataType dtype);
  void ContributeBroadcast(const std::string& t, std::string name, const std::vector<int64_t>& dims,
                           DataType dtype);
  bool IsBroadcast(const ContractionOp& c, const ContractionOp::Access& a) const;
  std::optional<Grad> Finalize(const std::string& t, bool narrow_ok = false);
  Grad Materialize(const std::string& t, const std::string& name, const std::vector<int64_t>& dims);
  std::optional<std::string> BatchVar(const Gather& g, const ContractionOp& c) const;
  std::vector<ast::Constraint> Constraints(const ContractionOp& c);
  std::string Filled(const std::string& t, int64_t value);
  ast::Contraction Write(Gather g, const ContractionOp& c, const std::string& out, ast::AggOp agg,
                         ast::CombOp comb);

  void Elementwise(const ElementwiseOp& op, Grad g);
  void Contraction(const ContractionOp& c, const std::string& g);
  void Extremum(const ContractionOp& c, const std::string& g);
  std::optional<std::pair<std::string, std::vector<Polynomial>>> WindowKey(const ContractionOp& c,
                                                                           const std::string& g);
  void Default(const ContractionOp& c, const std::string& g);
  void Special(const SpecialOp& op, const std::string& g);
  std::vector<ast::Statement> Forward();

  const ast::Function& f_;
  const Program& prog_;
  std::map<std::string, double> factors_;  // reverse_grad: tensor -> its gradient's factor
  std::set<std::string> used_;
  std::map<std::string, std::string> renamed_;
  std::set<std::string> reach_;  // tensors that depend on an input being differentiated
  std::set<std::string> constant_;  // max/min results the outputs do not depend on (ShiftFree)
  std::map<std::string, std::vector<Grad>> contribs_;
  std::map<std::pair<std::string, int64_t>, std::string> filled_;  // Filled's tensors
  std::vector<ast::Statement> backward_;
};

// Adds `name` (shaped `dims`, typed `dtype`) to t's gradient, summing broadcast
// dimensions away and converting to t's type.
void Deriver::Contribute(const std::string& t, std::string name, const std::vector<int64_t>& dims,
                         DataType dtype, bool owned) {
  const Shape& to = ShapeOf(t);
  if (dims != to.dims) {
    TILEC_CHECK(dims.size() >= to.dims.size(), "gradient of '{}' has rank {}", t, dims.size());
    size_t off = dims.size() - to.dims.size();
    ast::Contraction c;
    ast::TensorRef in;
    in.name = name;
    for (size_t k = 0; k < dims.size(); ++k)
      in.indices.push_back(ast::MakeName(fmt::format("i{}", k), ast::NameClass::Index));
    for (size_t k = 0; k < to.dims.size(); ++k) {
      bool kept = to.dims[k] == dims[k + off];
      TILEC_CHECK(kept || to.dims[k] == 1, "cannot reduce a gradient of '{}' to its shape", t);
      c.output.indices.push_back(kept ? in.indices[k + off] : ast::MakeInt(0));
    }
    c.sizes = Sizes(to.dims);
    c.inputs.push_back(std::move(in));
    name = Emit(GradBase(t), std::move(c));
    owned = true;
  }
  if (dtype != to.dtype) {
    name = Emit(GradBase(t), Call("as_float", {TensorExpr(name), ast::MakeInt(BitWidth(to.dtype))}));
    owned = true;
  }
  contribs_[t].push_back({name, owned});
}

void Deriver::ContributeExpr(const std::string& t, const ExprPtr& value, const std::vector<int64_t>& dims,
                             DataType dtype) {
  if (value->kind == ast::ExprKind::Name && value->name_class == ast::NameClass::Tensor) {
    Contribute(t, value->name, dims, dtype, false);
    return;
  }
  Contribute(t, Emit(GradBase(t), value), dims, dtype, true);
}

// Adds `name` (shaped `dims`, which broadcast to t's shape as elementwise
// operands do) to t's gradient, converted to t's type. Finalize sums it
// with the other contributions, broadcasting, so that a gradient that is a
// broadcast (a row sum's: `E_grad[i, j] = +(S_grad[i, 0])`) becomes an
// operand of the elementwise ops around it rather than a contraction of its own.
void Deriver::ContributeBroadcast(const std::string& t, std::string name, const std::vector<int64_t>& dims,
                                  DataType dtype) {
  const Shape& to = ShapeOf(t);
  bool owned = false;
  if (dtype != to.dtype) {
    name = Emit(GradBase(t), Call("as_float", {TensorExpr(name), ast::MakeInt(BitWidth(to.dtype))}));
    owned = true;
  }
  contribs_[t].push_back({name, owned, dims});
}

// Whether the gather `a_grad[a] = +(O_grad[o])` of `O[o] = +(a[a])` is O_grad
// broadcast to a's shape: a's indices are distinct variables, and O's, aligned
// with a's last dimensions, the same variables of the same sizes or 0 into a
// size-1 dimension; no constraints. Every element of a is then one term.
bool Deriver::IsBroadcast(const ContractionOp& c, const ContractionOp::Access& a) const {
  if (c.comb != ast::CombOp::None || !c.constraints.empty() || c.output_index.size() > a.index.size()) return false;
  auto plain = [](const Polynomial& p) {
    return p.terms.size() == 1 && p.terms.begin()->second == Rational(1) && p.constant == Rational(0);
  };
  std::set<std::string> vars;
  for (const Polynomial& p : a.index)
    if (!plain(p) || !vars.insert(p.terms.begin()->first).second) return false;
  const Shape& in = ShapeOf(a.tensor);
  const Shape& out = ShapeOf(c.output);
  size_t off = a.index.size() - c.output_index.size();
  for (size_t e = 0; e < c.output_index.size(); ++e) {
    const Polynomial& p = c.output_index[e];
    bool zero = p.IsConstant() && p.constant == Rational(0) && out.dims[e] == 1;
    if (!zero && !(p == a.index[e + off] && out.dims[e] == in.dims[e + off])) return false;
  }
  return true;
}

// The gradient of `t` (every consumer of t has contributed), or none; with
// `narrow`, a sum of broadcast contributions stays narrow (for an
// elementwise consumer, whose rules broadcast it), otherwise it is
// broadcast to t's shape.
std::optional<Deriver::Grad> Deriver::Finalize(const std::string& t, bool narrow_ok) {
  auto it = contribs_.find(t);
  if (it == contribs_.end() || it->second.empty()) return std::nullopt;
  const auto& cs = it->second;
  const std::vector<int64_t>& full = ShapeOf(t).dims;
  bool narrow = std::any_of(cs.begin(), cs.end(), [](const Grad& g) { return g.narrow.has_value(); });
  if (cs.size() == 1 && !narrow) return cs[0];
  Grad sum = cs[0];
  if (cs.size() > 1) {
    ExprPtr e = TensorExpr(cs[0].name);
    for (size_t k = 1; k < cs.size(); ++k) e = ast::MakeBinary(ast::BinaryOp::Add, e, TensorExpr(cs[k].name));
    sum = Grad{Emit(GradBase(t), e), true};
  }
  if (!narrow) return sum;
  // The sum's shape: the contributions' broadcast (trailing dimensions aligned).
  size_t rank = 0;
  for (const Grad& g : cs) rank = std::max(rank, g.narrow ? g.narrow->size() : full.size());
  std::vector<int64_t> dims(rank, 1);
  for (const Grad& g : cs) {
    const std::vector<int64_t>& d = g.narrow ? *g.narrow : full;
    for (size_t k = 0; k < d.size(); ++k) dims[k + rank - d.size()] = std::max(dims[k + rank - d.size()], d[k]);
  }
  if (dims == full) return sum;
  if (narrow_ok) return Grad{sum.name, sum.owned, dims};
  return Materialize(t, sum.name, dims);
}

// `name` (shaped `dims`, which broadcast to t's shape) broadcast to t's shape.
Deriver::Grad Deriver::Materialize(const std::string& t, const std::string& name, const std::vector<int64_t>& dims) {
  const std::vector<int64_t>& full = ShapeOf(t).dims;
  size_t rank = dims.size();
  ast::Contraction b;  // t_grad[i0, i1, ...] = +(sum[i1, 0, ...]): trailing dimensions aligned
  ast::TensorRef in;
  in.name = name;
  for (size_t k = 0; k < full.size(); ++k) {
    ExprPtr v = ast::MakeName(fmt::format("i{}", k), ast::NameClass::Index);
    b.output.indices.push_back(v);
    if (k + rank >= full.size()) in.indices.push_back(dims[k + rank - full.size()] == 1 ? ast::MakeInt(0) : v);
  }
  b.sizes = Sizes(full);
  b.inputs.push_back(std::move(in));
  return Grad{Emit(GradBase(t), std::move(b)), true};
}

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

// `g` may be narrow (a broadcast of y's gradient, Finalize): a rule that
// reads a full-shaped tensor beside it (`g * E` for exp) is full again; one
// that does not (`-g`, `g` of an addition) passes the broadcast on to a
// full-shaped operand; an operand of another shape gets g broadcast first.
void Deriver::Elementwise(const ElementwiseOp& op, Grad g) {
  const Shape& y = ShapeOf(op.output);
  std::vector<ExprPtr> x;
  for (const Operand& o : op.operands) x.push_back(o.is_tensor ? TensorExpr(Name(o.tensor)) : ScalarExpr(o.scalar));
  std::vector<ExprPtr> rules = ElementwiseGradient(op.fn, x, TensorExpr(Name(op.output)), TensorExpr(g.name));
  if (g.narrow) {
    for (size_t k = 0; k < op.operands.size(); ++k) {
      const Operand& o = op.operands[k];
      if (o.is_tensor && rules.at(k) && NeedsGrad(o.tensor) && ShapeOf(o.tensor).dims != y.dims) {
        g = Materialize(op.output, g.name, *g.narrow);
        rules = ElementwiseGradient(op.fn, x, TensorExpr(Name(op.output)), TensorExpr(g.name));
        break;
      }
    }
  }
  for (size_t k = 0; k < op.operands.size(); ++k) {
    const Operand& o = op.operands[k];
    if (!o.is_tensor || !rules.at(k) || !NeedsGrad(o.tensor)) continue;
    if (!g.narrow) {
      ContributeExpr(o.tensor, rules[k], y.dims, y.dtype);
      continue;
    }
    // The rule's shape: the broadcast of g's and of the tensors it reads.
    std::set<std::string> names;
    CollectNames(*rules[k], names);
    std::vector<int64_t> dims = *g.narrow;
    auto widen = [&](const std::vector<int64_t>& d) {
      if (d.size() > dims.size()) dims.insert(dims.begin(), d.size() - dims.size(), 1);
      for (size_t j = 0; j < d.size(); ++j) {
        int64_t& to = dims[j + dims.size() - d.size()];
        to = std::max(to, d[j]);
      }
    };
    if (names.count(Name(op.output))) widen(y.dims);
    for (const Operand& other : op.operands)
      if (other.is_tensor && names.count(Name(other.tensor))) widen(ShapeOf(other.tensor).dims);
    if (dims == y.dims) {
      ContributeExpr(o.tensor, rules[k], y.dims, y.dtype);
      continue;
    }
    const ExprPtr& rule = rules[k];
    bool plain = rule->kind == ast::ExprKind::Name && rule->name_class == ast::NameClass::Tensor;
    ContributeBroadcast(o.tensor, plain ? rule->name : Emit(GradBase(o.tensor), rule), dims, y.dtype);
  }
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

// The forward ops the backward statements read, as statements.
std::vector<ast::Statement> Deriver::Forward() {
  std::set<std::string> needed;
  for (const auto& st : backward_) CollectNames(st, needed);
  std::vector<bool> keep(prog_.ops.size(), false);
  for (size_t k = prog_.ops.size(); k-- > 0;) {
    const Op& op = prog_.ops[k];
    std::vector<std::string> defs = Writes(op);
    if (std::none_of(defs.begin(), defs.end(), [&](const std::string& d) { return needed.count(Name(d)); }))
      continue;
    keep[k] = true;
    for (const std::string& r : Reads(op)) needed.insert(Name(r));
  }
  std::vector<ast::Statement> out;
  auto rename = [this](const std::string& t) { return Name(t); };
  auto fresh = [this](const std::string& base) { return Fresh(base); };
  for (size_t k = 0; k < prog_.ops.size(); ++k) {
    if (!keep[k]) continue;
    for (auto& st : OpStatements(prog_.ops[k], prog_, rename, fresh)) out.push_back(std::move(st));
  }
  return out;
}

std::vector<std::string> Select(const std::vector<std::string>& given, const std::vector<std::string>& all,
                                const Program& prog, const char* what) {
  std::vector<std::string> out;
  for (const std::string& name : given) {
    if (std::find(all.begin(), all.end(), name) == all.end())
      TILEC_USER_ERROR("'{}' is not an {} of the program; its {}s are {}", name, what, what, fmt::join(all, ", "));
    if (std::find(out.begin(), out.end(), name) != out.end()) TILEC_USER_ERROR("{} '{}' is listed twice", what, name);
    const Shape& s = prog.Tensor(name).shape;
    if (!IsFloat(s.dtype))
      TILEC_USER_ERROR("{} '{}' is {}: only float tensors have gradients", what, name, ToString(s));
    out.push_back(name);
  }
  if (!given.empty()) return out;
  for (const std::string& name : all)
    if (IsFloat(prog.Tensor(name).shape.dtype)) out.push_back(name);
  if (out.empty()) TILEC_USER_ERROR("the program has no float {} to differentiate", what);
  return out;
}

GradientProgram Deriver::Run(const GradientOptions& options) {
  std::vector<std::string> wrt = Select(options.wrt, prog_.inputs, prog_, "input");
  std::vector<std::string> outs = Select(options.outputs, prog_.outputs, prog_, "output");
  GradientProgram result;
  // Reserve the signature's names first so that they stay unsuffixed.
  for (const std::string& o : outs) result.incoming[o] = Fresh(o + "_grad");
  for (const std::string& x : wrt) result.gradients[x] = Fresh(x + "_grad");

  reach_.insert(wrt.begin(), wrt.end());
  for (const Op& op : prog_.ops) {
    std::vector<std::string> reads = Reads(op);
    if (std::none_of(reads.begin(), reads.end(), [&](const std::string& r) { return reach_.count(r) > 0; })) continue;
    if (const auto* s = std::get_if<SpecialOp>(&op)) reach_.insert(s->outputs.begin(), s->outputs.end());
    else if (const auto* c = std::get_if<ContractionOp>(&op)) reach_.insert(c->output);
    else reach_.insert(std::get<ElementwiseOp>(op).output);
  }
  ShiftFree shift_free(prog_, outs);
  for (size_t k = 0; k < prog_.ops.size(); ++k)
    if (const auto* c = std::get_if<ContractionOp>(&prog_.ops[k]))
      if ((c->agg == ast::AggOp::Max || c->agg == ast::AggOp::Min) && NeedsGrad(c->output) &&
          shift_free.Check(c->output, k))
        constant_.insert(c->output);
  for (const std::string& o : outs)
    if (NeedsGrad(o)) contribs_[o].push_back({result.incoming[o], false});

  for (size_t k = prog_.ops.size(); k-- > 0;) {
    const Op& op = prog_.ops[k];
    const std::string& out = std::visit(
        [](const auto& o) -> const std::string& {
          if constexpr (std::is_same_v<std::decay_t<decltype(o)>, SpecialOp>) return o.outputs.at(0);
          else return o.output;
        },
        op);
    std::optional<Grad> g = Finalize(out, std::holds_alternative<ElementwiseOp>(op) && !factors_.count(out));
    if (!g) continue;
    if (auto f = factors_.find(out); f != factors_.end())
      g = Grad{Emit(GradBase(out), ast::MakeBinary(ast::BinaryOp::Mul, TensorExpr(g->name),
                                                   ScalarExpr(Scalar{DataType::F64, true, 0, f->second}))),
               true};
    if (const auto* c = std::get_if<ContractionOp>(&op)) Contraction(*c, g->name);
    else if (const auto* e = std::get_if<ElementwiseOp>(&op)) Elementwise(*e, *g);
    else Special(std::get<SpecialOp>(op), g->name);
  }

  for (const std::string& x : wrt) {
    const std::string& name = result.gradients[x];
    std::optional<Grad> g = Finalize(x);
    if (g && g->owned) {
      for (auto& st : backward_)
        if (DefinedName(st) == g->name) DefinedName(st) = name;
      continue;
    }
    const Shape& s = ShapeOf(x);
    ExprPtr value = g ? TensorExpr(g->name)
                      : Call("as_float", {ast::MakeBinary(ast::BinaryOp::Mul,
                                                          Call("as_int", {TensorExpr(x), ast::MakeInt(32)}),
                                                          ast::MakeInt(0)),
                                          ast::MakeInt(BitWidth(s.dtype))});
    backward_.push_back(AssignmentStatement(name, value));
  }

  ast::Function& fn = result.function;
  for (const auto& in : f_.inputs) {
    ast::Input copy;
    copy.name = in.name;
    copy.has_dims = in.has_dims;
    copy.dims = in.dims;
    fn.inputs.push_back(std::move(copy));
    result.input_shapes[in.name] = prog_.Tensor(in.name).shape;
  }
  for (const std::string& o : outs) {
    ast::Input in;
    in.name = result.incoming[o];
    result.input_shapes[in.name] = ShapeOf(o);
    fn.inputs.push_back(std::move(in));
  }
  for (const std::string& x : wrt) fn.outputs.push_back({result.gradients[x], {}});
  fn.body = Forward();
  for (auto& st : backward_) fn.body.push_back(std::move(st));
  return result;
}

}  // namespace

GradientProgram Gradient(const ast::Function& f, const std::map<std::string, Shape>& shapes,
                         const GradientOptions& options) {
  std::map<std::string, double> factors;
  ast::Function rewritten = ReverseGrads(f).Rewrite(factors);
  Program prog = Bind(rewritten, shapes);
  GradientProgram result = Deriver(rewritten, prog, factors).Run(options);
  // The derivation must give ordinary Tile: check that its text binds.
  std::string text = Print(result.function);
  try {
    Bind(Parse(MakeSource("gradient.tile", text)), result.input_shapes);
  } catch (const UserError& e) {
    TILEC_CHECK(false, "the derived gradient program does not bind: {}\n{}", e.message(), text);
  }
  return result;
}

}  // namespace tilec::lang
