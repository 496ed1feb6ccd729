// Bind: the entry point and the statement-level work (inputs, statement order,
// outputs, dead ops), plus the Context shared by the binder's files.
// Expressions are in bind_expr.cc, calls in builtins.cc, contractions in
// bind_contraction.cc, index bounds in bounds.cc.
#include "tile_lang/binder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>

#include "support/error.h"
#include "tile_lang/bind_context.h"
#include "tile_lang/layout.h"

namespace tilec::lang {
namespace bind {

std::string ToString(const Const& c) {
  return c.is_float ? lang::ToString(Scalar{DataType::F32, true, 0, c.f}) : fmt::format("{}", c.i);
}

std::string Context::Where(const SourceSpan& span) const {
  return fmt::format("{}:{}", span.begin.line, span.begin.col);
}

const Symbol* Context::Find(const std::string& name) const {
  auto it = symbols_.find(name);
  return it == symbols_.end() ? nullptr : &it->second;
}

Symbol* Context::FindMutable(const std::string& name) {
  auto it = symbols_.find(name);
  return it == symbols_.end() ? nullptr : &it->second;
}

const Symbol& Context::Lookup(const std::string& name, const SourceSpan& span) const {
  const Symbol* s = Find(name);
  if (!s) Fail(span, "undefined name '{}'", name);
  return *s;
}

void Context::CheckFree(const std::string& name, const SourceSpan& span, bool assigning) const {
  const Symbol* s = Find(name);
  if (!s) return;
  if (assigning && s->kind == Symbol::Kind::Input)
    Fail(span, "'{}' is an input and cannot be assigned", name);
  Fail(span, "'{}' is already defined at {}", name, Where(s->span));
}

void Context::Define(const std::string& name, Symbol symbol) {
  TILEC_CHECK(!symbols_.count(name), "'{}' defined twice", name);
  symbols_.emplace(name, std::move(symbol));
}

void Context::Rename(const std::string& from, const std::string& to, const SourceSpan& span) {
  auto sym = symbols_.extract(from);
  TILEC_CHECK(!sym.empty(), "renaming unknown symbol '{}'", from);
  sym.key() = to;
  sym.mapped().span = span;
  symbols_.insert(std::move(sym));
  auto decl = program_.tensors.extract(from);
  TILEC_CHECK(!decl.empty(), "renaming unknown tensor '{}'", from);
  decl.key() = to;
  decl.mapped().name = to;
  decl.mapped().span = span;
  program_.tensors.insert(std::move(decl));
}

void Context::SetSpan(const std::string& name, const SourceSpan& span) {
  if (Symbol* s = FindMutable(name)) s->span = span;
  auto it = program_.tensors.find(name);
  if (it != program_.tensors.end()) it->second.span = span;
}

std::string Context::NewTemp() {
  // User code cannot spell `_T<n>` without an escape; skip any it did take.
  std::string name;
  do {
    name = fmt::format("_T{}", next_temp_++);
  } while (symbols_.count(name));
  return name;
}

void Context::AddTensor(const std::string& name, Shape shape, const SourceSpan& span) {
  CheckFree(name, span, true);
  AtSpan(span, [&] { return shape.ElementCount(); });
  Layout layout = RowMajorLayout(shape.dims);
  program_.tensors[name] = TensorDecl{name, std::move(shape), std::move(layout),
                                      TensorRole::Temporary, span};
  Define(name, Symbol{Symbol::Kind::Tensor, span, {}, {}, 0, {false, false}});
}

const std::string& Context::TensorOf(const Value& v, const SourceSpan& span,
                                     std::string_view what) const {
  CheckNotPrng(v, span);
  if (v.kind == Value::Kind::Const)
    Fail(span, "{} must be a tensor, not the constant {}", what, ToString(v.c));
  return v.name;
}

void Context::CheckNotPrng(const Value& v, const SourceSpan& span) const {
  if (v.kind == Value::Kind::Prng)
    Fail(span, "'{0}' is the result of prng_step; use prng_value({0}) or prng_state({0})", v.name);
}

SourceSpan Context::OperatorSpan(const ast::Expr& e) const {
  if (e.kind != ast::ExprKind::Binary || e.args.size() != 2 || !fn_.source) return e.span;
  const SourceSpan& l = e.args[0]->span;
  const SourceSpan& r = e.args[1]->span;
  if (!l.known() || !r.known() || l.end.line != r.begin.line) return e.span;
  std::string_view line = fn_.source->Line(l.end.line);
  int from = l.end.col - 1, to = r.begin.col - 1;
  if (from < 0 || to > static_cast<int>(line.size()) || from > to) return e.span;
  std::string_view spelling = ast::Spelling(e.binary_op);
  size_t pos = line.substr(from, to - from).find(spelling);
  if (pos == std::string_view::npos) return e.span;
  SourceSpan s;
  s.begin = {l.end.line, from + static_cast<int>(pos) + 1};
  s.end = {l.end.line, s.begin.col + static_cast<int>(spelling.size())};
  return s;
}

}  // namespace bind

namespace {

using bind::Const;
using bind::Context;
using bind::Symbol;
using bind::Value;

void BindInputs(Context& ctx, const std::map<std::string, Shape>& shapes) {
  const ast::Function& f = ctx.fn();
  std::vector<std::string> names;
  for (const auto& in : f.inputs) names.push_back(in.name);
  for (const auto& [name, shape] : shapes) {
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    if (names.empty())
      ctx.Fail({}, "shape given for unknown input '{}'; the function has no inputs", name);
    ctx.Fail({}, "shape given for unknown input '{}'; the function's inputs are {}", name,
             fmt::join(names, ", "));
  }
  Program& prog = ctx.program();
  for (const auto& in : f.inputs) {
    ctx.CheckFree(in.name, in.span, false);
    auto it = shapes.find(in.name);
    if (it == shapes.end()) ctx.Fail(in.span, "no shape given for input '{}'", in.name);
    const Shape& shape = it->second;
    for (int64_t d : shape.dims)
      if (d < 0) ctx.Fail(in.span, "input '{}' bound to {}, which has a negative dimension", in.name, ToString(shape));
    ctx.AtSpan(in.span, [&] { return shape.ElementCount(); });
    if (in.has_dims && static_cast<int>(in.dims.size()) != shape.rank())
      ctx.Fail(in.span, "input '{}' declared with {} dimensions but bound to {}", in.name,
               in.dims.size(), ToString(shape));
    prog.tensors[in.name] =
        TensorDecl{in.name, shape, RowMajorLayout(shape.dims), TensorRole::Input, in.span};
    prog.inputs.push_back(in.name);
    ctx.Define(in.name, Symbol{Symbol::Kind::Input, in.span, {}, {}, 0, {false, false}});
    if (!in.has_dims) continue;
    for (size_t k = 0; k < in.dims.size(); ++k) {
      const std::string& dim = in.dims[k];
      SourceSpan span = k < in.dim_spans.size() ? in.dim_spans[k] : in.span;
      const Symbol* prev = ctx.Find(dim);
      if (prev && prev->kind == Symbol::Kind::Dim) {
        if (prev->value.i != shape.dims[k])
          ctx.Fail(span, "dimension '{}' is {} here but {} for input '{}'", dim, shape.dims[k],
                   prev->value.i, prev->input);
        continue;
      }
      ctx.CheckFree(dim, span, false);
      ctx.Define(dim, Symbol{Symbol::Kind::Dim, span, Const::Int(shape.dims[k]), in.name, 0,
                             {false, false}});
    }
  }
}

void BindAssignment(Context& ctx, const ast::Statement& st) {
  const std::string& name = st.assignment.name;
  ctx.CheckFree(name, st.name_span, true);
  TILEC_CHECK(st.assignment.value != nullptr, "assignment to '{}' without a value", name);
  const ast::Expr& rhs = *st.assignment.value;
  Value v = bind::BindExpr(ctx, rhs, name);
  switch (v.kind) {
    case Value::Kind::Const:
      ctx.Define(name, Symbol{Symbol::Kind::Constant, st.name_span, v.c, {}, 0, {false, false}});
      break;
    case Value::Kind::Tensor:
      // `X = Y` (or an expression that ends in an existing tensor) copies.
      if (v.name != name)
        bind::EmitElementwise(ctx, ElemFn::Ident, {v}, rhs.span, rhs.span, "assignment", name);
      break;
    case Value::Kind::Prng:
      if (v.name != name) ctx.CheckNotPrng(v, rhs.span);
      break;
  }
  ctx.SetSpan(name, st.name_span);
}

void BindOutputs(Context& ctx) {
  Program& prog = ctx.program();
  std::set<std::string> seen;
  for (const auto& out : ctx.fn().outputs) {
    if (!seen.insert(out.name).second) ctx.Fail(out.span, "output '{}' is listed twice", out.name);
    const Symbol* s = ctx.Find(out.name);
    if (!s) ctx.Fail(out.span, "output '{}' is never defined", out.name);
    switch (s->kind) {
      case Symbol::Kind::Input:
        // Downstream stages give every output its own buffer; a copy says so explicitly.
        ctx.Fail(out.span, "output '{0}' is an input; return a copy instead (e.g. `O = {0};`)",
                 out.name);
      case Symbol::Kind::Prng:
        ctx.Fail(out.span,
                 "output '{0}' is the result of prng_step; return prng_value({0}) or "
                 "prng_state({0})",
                 out.name);
      case Symbol::Kind::Dim:
      case Symbol::Kind::Constant: {
        // A constant output becomes a rank-0 tensor holding it.
        Const c = s->value;
        DataType t = c.is_float ? DataType::F32 : DataType::I32;
        Shape shape{t, {}};
        prog.tensors[out.name] =
            TensorDecl{out.name, shape, RowMajorLayout({}), TensorRole::Output, out.span};
        ElementwiseOp op;
        op.output = out.name;
        op.fn = ElemFn::Ident;
        op.operands.push_back(Operand{false, {}, bind::ToScalar(c, t)});
        op.compute_type = t;
        op.span = out.span;
        prog.ops.push_back(std::move(op));
        break;
      }
      case Symbol::Kind::Tensor:
        break;
    }
    prog.tensors.at(out.name).role = TensorRole::Output;
    prog.outputs.push_back(out.name);
  }
}

// Names an op defines and reads.
void OpNames(const Op& op, std::vector<std::string>& defs, std::vector<std::string>& uses) {
  if (const auto* c = std::get_if<ContractionOp>(&op)) {
    defs.push_back(c->output);
    for (const auto& a : c->inputs) uses.push_back(a.tensor);
    if (c->default_tensor) uses.push_back(*c->default_tensor);
  } else if (const auto* e = std::get_if<ElementwiseOp>(&op)) {
    defs.push_back(e->output);
    for (const auto& o : e->operands)
      if (o.is_tensor) uses.push_back(o.tensor);
  } else {
    const auto& s = std::get<SpecialOp>(op);
    defs.insert(defs.end(), s.outputs.begin(), s.outputs.end());
    uses.insert(uses.end(), s.inputs.begin(), s.inputs.end());
  }
}

// Keeps only the ops the outputs depend on, and the tensors those ops touch.
void RemoveDeadOps(Program& prog) {
  std::set<std::string> needed(prog.outputs.begin(), prog.outputs.end());
  std::vector<bool> keep(prog.ops.size(), false);
  for (size_t k = prog.ops.size(); k-- > 0;) {
    std::vector<std::string> defs, uses;
    OpNames(prog.ops[k], defs, uses);
    bool live = false;
    for (const auto& d : defs) live = live || needed.count(d);
    if (!live) continue;
    keep[k] = true;
    for (const auto& d : defs) needed.insert(d);  // every output of a kept op exists
    needed.insert(uses.begin(), uses.end());
  }
  std::vector<Op> ops;
  for (size_t k = 0; k < prog.ops.size(); ++k)
    if (keep[k]) ops.push_back(std::move(prog.ops[k]));
  prog.ops = std::move(ops);
  needed.insert(prog.inputs.begin(), prog.inputs.end());
  for (auto it = prog.tensors.begin(); it != prog.tensors.end();) {
    it = needed.count(it->first) ? std::next(it) : prog.tensors.erase(it);
  }
}

}  // namespace

Program Bind(const ast::Function& f, const std::map<std::string, Shape>& inputs) {
  Program prog;
  prog.source = f.source;
  Context ctx(f, prog);
  BindInputs(ctx, inputs);
  for (const auto& st : f.body) {
    if (st.kind == ast::Statement::Kind::Contraction) {
      // PlaidML's parser gives every contraction a temporary too (renamed to
      // its output); numbering temporaries the same way keeps our dumps equal
      // to its debug output (the seed's `_T1 = cmp_gt(O, 0)`).
      ctx.NewTemp();
      bind::BindContraction(ctx, st);
    } else {
      BindAssignment(ctx, st);
    }
  }
  BindOutputs(ctx);
  // Last, so that errors in code the outputs do not need are still reported.
  RemoveDeadOps(prog);
  return prog;
}

Program Bind(const ast::Function& f, const std::map<std::string, Shape>& inputs,
             const std::map<std::string, std::string>& layouts) {
  Program prog = Bind(f, inputs);
  for (const auto& [name, spec] : layouts) {
    auto it = prog.tensors.find(name);
    if (it == prog.tensors.end()) {
      std::vector<std::string> names;
      for (const auto& [t, decl] : prog.tensors) names.push_back(t);
      TILEC_USER_ERROR("layout '{}' given for unknown tensor '{}'; the program's tensors are {}",
                       spec, name, fmt::join(names, ", "));
    }
    try {
      it->second.layout = ParseLayout(spec, it->second.shape.dims);
    } catch (const UserError& e) {
      TILEC_USER_ERROR("tensor '{}': {}", name, e.message());
    }
    if (it->second.layout.any && it->second.role == TensorRole::Input)
      TILEC_USER_ERROR("layout 'any' given for input '{}': the caller's data must come in a known layout "
                       "('any' lets the compiler choose the layout of an output or intermediate)",
                       name);
  }
  return prog;
}

std::pair<Shape, std::optional<std::string>> ParseShapeAndLayout(std::string_view spec) {
  size_t colon = spec.find(':');
  Shape shape = ParseShape(spec.substr(0, colon));
  if (colon == std::string_view::npos) return {shape, std::nullopt};
  std::string_view rest = spec.substr(colon + 1);
  auto blank = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!rest.empty() && blank(rest.front())) rest.remove_prefix(1);
  while (!rest.empty() && blank(rest.back())) rest.remove_suffix(1);
  if (rest.empty())
    TILEC_USER_ERROR(
        "malformed shape '{}': no layout after ':' (expected e.g. 'f32[1, 64, 56, 56]:nhwc')", spec);
  std::string layout(rest);
  ParseLayout(layout, shape.dims);  // reports a bad layout now, not at Bind
  return {shape, layout};
}

Shape ParseShape(std::string_view spec) {
  auto fail = [&](std::string_view why) -> Shape {
    TILEC_USER_ERROR("malformed shape '{}': {} (expected e.g. 'f32[32, 224, 224, 64]' or 'f32[]')",
                     spec, why);
  };
  size_t pos = 0;
  auto skip_space = [&] {
    while (pos < spec.size() && std::isspace(static_cast<unsigned char>(spec[pos]))) ++pos;
  };
  skip_space();
  size_t name_begin = pos;
  while (pos < spec.size() && (std::isalnum(static_cast<unsigned char>(spec[pos])) || spec[pos] == '_'))
    ++pos;
  std::string_view type_name = spec.substr(name_begin, pos - name_begin);
  if (type_name.empty()) return fail("missing element type");
  std::optional<DataType> dtype = ParseDataType(type_name);
  if (!dtype) return fail(fmt::format("unknown element type '{}'", type_name));
  Shape shape;
  shape.dtype = *dtype;
  skip_space();
  if (pos >= spec.size() || spec[pos] != '[') return fail("expected '[' after the element type");
  ++pos;
  skip_space();
  if (pos < spec.size() && spec[pos] == ']') {
    ++pos;
  } else {
    while (true) {
      skip_space();
      if (pos >= spec.size() || !std::isdigit(static_cast<unsigned char>(spec[pos])))
        return fail("expected a non-negative integer dimension");
      int64_t d = 0;
      while (pos < spec.size() && std::isdigit(static_cast<unsigned char>(spec[pos]))) {
        int digit = spec[pos] - '0';
        if (d > (std::numeric_limits<int64_t>::max() - digit) / 10)
          return fail("dimension does not fit in 64 bits");
        d = d * 10 + digit;
        ++pos;
      }
      shape.dims.push_back(d);
      skip_space();
      if (pos < spec.size() && spec[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < spec.size() && spec[pos] == ']') {
        ++pos;
        break;
      }
      return fail("expected ',' or ']' after a dimension");
    }
  }
  skip_space();
  if (pos != spec.size()) return fail("unexpected text after ']'");
  try {
    shape.ElementCount();
  } catch (const UserError&) {
    return fail("its element count does not fit in 64 bits");
  }
  return shape;
}

}  // namespace tilec::lang
