#include "tile_lang/gradient.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <set>

#include "support/error.h"
#include "tile_lang/binder.h"
#include "tile_lang/grad_deriver.h"
#include "tile_lang/grad_reverse.h"
#include "tile_lang/grad_rules.h"
#include "tile_lang/grad_shift_free.h"
#include "tile_lang/parser.h"
#include "tile_lang/printer.h"
#include "tile_lang/to_ast.h"

namespace tilec::lang::grad {

void CollectNames(const ast::Expr& e, std::set<std::string>& names) {
  if (e.kind == ast::ExprKind::Name && e.name_class == ast::NameClass::Tensor) names.insert(e.name);
  for (const ast::ExprPtr& a : e.args)
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

namespace {

bool IsZero(const Operand& o) { return !o.is_tensor && (o.scalar.is_float ? o.scalar.f == 0 : o.scalar.i == 0); }

}  // namespace

// `y = c ? t : 0` or `y = c ? 0 : t` where c compares t with 0 (ReLU, as
// `relu` binds, and its kin): t, else empty. Its derivative in t is
// [y != 0] but where t is exactly 0, where it is 0 (PyTorch's relu'(0) = 0),
// so the backward reads the result y, which a caller has, instead of c's t.
std::string Deriver::RectifiedInput(const ElementwiseOp& op) const {
  if (op.fn != ElemFn::Cond || op.operands.size() != 3 || !op.operands[0].is_tensor) return {};
  const Operand& a = op.operands[1];
  const Operand& b = op.operands[2];
  const Operand& t = IsZero(a) ? b : a;
  if (!t.is_tensor || !IsZero(IsZero(a) ? a : b) || ShapeOf(t.tensor) != ShapeOf(op.output)) return {};
  for (const Op& def : prog_.ops) {
    const auto* c = std::get_if<ElementwiseOp>(&def);
    if (!c || c->output != op.operands[0].tensor) continue;
    bool compare = c->fn == ElemFn::CmpGt || c->fn == ElemFn::CmpGe || c->fn == ElemFn::CmpLt || c->fn == ElemFn::CmpLe;
    if (!compare || c->operands.size() != 2) return {};
    bool t_with_zero = (c->operands[0] == t && IsZero(c->operands[1])) || (c->operands[1] == t && IsZero(c->operands[0]));
    return t_with_zero ? t.tensor : std::string();
  }
  return {};
}

// `g` may be narrow (a broadcast of y's gradient, Finalize): a rule that
// reads a full-shaped tensor beside it (`g * E` for exp) is full again; one
// that does not (`-g`, `g` of an addition) passes the broadcast on to a
// full-shaped operand; an operand of another shape gets g broadcast first.
void Deriver::Elementwise(const ElementwiseOp& op, Grad g) {
  const Shape& y = ShapeOf(op.output);
  if (std::string t = RectifiedInput(op); !t.empty() && !g.narrow) {
    if (NeedsGrad(t)) {
      ExprPtr mask = ast::MakeBinary(ast::BinaryOp::Ne, TensorExpr(Name(op.output)), ast::MakeInt(0));
      ContributeExpr(t, ast::MakeTernary(mask, TensorExpr(g.name), ast::MakeInt(0)), y.dims, y.dtype);
    }
    return;
  }
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


// The forward ops the backward statements read, as statements.
std::vector<ast::Statement> Deriver::Forward(const std::set<std::string>& saved, std::vector<std::string>& reads,
                                             std::set<std::string>& needed) {
  std::set<std::string> backward_reads;
  for (const auto& st : backward_) CollectNames(st, backward_reads);
  // What a caller may save: the named results the backward reads, through
  // temporaries only (a named tensor given needs nothing behind it).
  std::set<std::string> frontier = backward_reads;
  std::set<std::string> saveable;
  for (size_t k = prog_.ops.size(); k-- > 0;) {
    const Op& op = prog_.ops[k];
    bool expand = false;
    for (const std::string& d : Writes(op)) {
      if (!frontier.count(Name(d))) continue;
      if (Saveable(d)) saveable.insert(d);
      else expand = true;
    }
    if (expand)
      for (const std::string& r : Reads(op)) frontier.insert(Name(r));
  }
  for (const Op& op : prog_.ops)
    for (const std::string& d : Writes(op))
      if (saveable.count(d)) reads.push_back(d);
  // The ops whose results the backward statements need, through other ops,
  // except results in `saved`.
  needed = backward_reads;
  std::vector<bool> keep(prog_.ops.size(), false);
  for (size_t k = prog_.ops.size(); k-- > 0;) {
    const Op& op = prog_.ops[k];
    std::vector<std::string> defs = Writes(op);
    auto wanted = [&](const std::string& d) { return needed.count(Name(d)) && !saved.count(d); };
    if (std::none_of(defs.begin(), defs.end(), wanted)) continue;
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

namespace {

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

}  // namespace

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
  for (size_t k = 0; k < prog_.ops.size(); ++k)
    if (const auto* c = std::get_if<ContractionOp>(&prog_.ops[k]))
      if ((c->agg == ast::AggOp::Max || c->agg == ast::AggOp::Min) && NeedsGrad(c->output) &&
          OutputsIgnore(prog_, outs, c->output, k))
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
  std::set<std::string> saved;
  for (const std::string& t : options.saved) {
    bool input = std::find(prog_.inputs.begin(), prog_.inputs.end(), t) != prog_.inputs.end();
    if (input || !prog_.tensors.count(t) || !Saveable(t))
      TILEC_USER_ERROR("saved tensor '{}' is {}: only the program's outputs and named intermediates can be saved", t,
                       input ? "an input" : "not a tensor of the program");
    if (!saved.insert(t).second) TILEC_USER_ERROR("saved tensor '{}' is listed twice", t);
  }
  for (const std::string& x : wrt) fn.outputs.push_back({result.gradients[x], {}});
  std::set<std::string> needed;
  fn.body = Forward(saved, result.forward_reads, needed);
  // The saved tensors the gradient reads are its inputs; the others are not
  // needed (the backward reads no such value, or one computed from it).
  for (const std::string& t : options.saved) {
    if (!needed.count(t)) continue;
    ast::Input in;
    in.name = t;
    result.input_shapes[t] = ShapeOf(t);
    result.saved.push_back(t);
    fn.inputs.push_back(std::move(in));
  }
  for (auto& st : backward_) fn.body.push_back(std::move(st));
  return result;
}

}  // namespace tilec::lang::grad

namespace tilec::lang {

GradientProgram Gradient(const ast::Function& f, const std::map<std::string, Shape>& shapes,
                         const GradientOptions& options) {
  std::map<std::string, double> factors;
  ast::Function rewritten = grad::RewriteReverseGrads(f, factors);
  Program prog = Bind(rewritten, shapes);
  GradientProgram result = grad::Deriver(rewritten, prog, factors).Run(options);
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
