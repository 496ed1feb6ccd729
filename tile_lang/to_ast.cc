#include "tile_lang/to_ast.h"

#include <fmt/format.h>

#include <cmath>
#include <numeric>

#include "support/error.h"

namespace tilec::lang {
namespace {

using ast::BinaryOp;
using ast::ExprPtr;

// sum of `k * var` and a constant, all integers; `k` of 0 terms are absent.
ExprPtr IntegerSum(const std::vector<std::pair<std::string, int64_t>>& terms, int64_t constant) {
  ExprPtr sum;
  auto add = [&](ExprPtr term, bool negative) {
    if (!sum) {
      sum = negative ? ast::MakeUnary(ast::UnaryOp::Neg, term) : term;
      return;
    }
    sum = ast::MakeBinary(negative ? BinaryOp::Sub : BinaryOp::Add, sum, term);
  };
  for (const auto& [var, k] : terms) {
    ExprPtr v = ast::MakeName(var, ast::NameClass::Index);
    int64_t mag = k < 0 ? -k : k;
    add(mag == 1 ? v : ast::MakeBinary(BinaryOp::Mul, ast::MakeInt(mag), v), k < 0);
  }
  if (constant != 0 || !sum) add(ast::MakeInt(constant < 0 ? -constant : constant), constant < 0);
  return sum;
}

ExprPtr Call(const std::string& name, std::vector<ExprPtr> args) { return ast::MakeCall(name, std::move(args)); }

std::optional<BinaryOp> BinaryOf(ElemFn fn) {
  switch (fn) {
    case ElemFn::Add: return BinaryOp::Add;
    case ElemFn::Sub: return BinaryOp::Sub;
    case ElemFn::Mul: return BinaryOp::Mul;
    case ElemFn::Div: return BinaryOp::Div;
    case ElemFn::Mod: return BinaryOp::Mod;
    case ElemFn::CmpEq: return BinaryOp::Eq;
    case ElemFn::CmpNe: return BinaryOp::Ne;
    case ElemFn::CmpLt: return BinaryOp::Lt;
    case ElemFn::CmpGt: return BinaryOp::Gt;
    case ElemFn::CmpLe: return BinaryOp::Le;
    case ElemFn::CmpGe: return BinaryOp::Ge;
    case ElemFn::BitAnd: return BinaryOp::BitAnd;
    case ElemFn::BitOr: return BinaryOp::BitOr;
    case ElemFn::BitXor: return BinaryOp::BitXor;
    case ElemFn::Shl: return BinaryOp::Shl;
    case ElemFn::Shr: return BinaryOp::Shr;
    case ElemFn::LogicalAnd: return BinaryOp::LogicalAnd;
    case ElemFn::LogicalOr: return BinaryOp::LogicalOr;
    default: return std::nullopt;
  }
}

ExprPtr ElementwiseExpr(const ElementwiseOp& op, const Program& program, const std::vector<ExprPtr>& x) {
  if (auto b = BinaryOf(op.fn)) return ast::MakeBinary(*b, x.at(0), x.at(1));
  switch (op.fn) {
    case ElemFn::Ident:
      TILEC_CHECK(op.operands.at(0).is_tensor, "copy of a constant into '{}'", op.output);
      return x.at(0);
    case ElemFn::Neg: return ast::MakeUnary(ast::UnaryOp::Neg, x.at(0));
    case ElemFn::BitNot: return ast::MakeUnary(ast::UnaryOp::BitNot, x.at(0));
    case ElemFn::LogicalNot: return ast::MakeUnary(ast::UnaryOp::LogicalNot, x.at(0));
    case ElemFn::Cond: return ast::MakeTernary(x.at(0), x.at(1), x.at(2));
    case ElemFn::Cast: {
      DataType t = program.Tensor(op.output).shape.dtype;
      if (t == DataType::Bool) return Call("as_bool", {x.at(0)});
      std::string fn = IsFloat(t) ? "as_float" : IsSigned(t) ? "as_int" : "as_uint";
      return Call(fn, {x.at(0), ast::MakeInt(BitWidth(t))});
    }
    case ElemFn::Index: return Call("index", {x.at(0), ast::MakeInt(op.axis)});
    default:
      // The math functions are spelled as their builtins.
      return Call(std::string(Name(op.fn)), x);
  }
}

}  // namespace

ExprPtr PolynomialExpr(const Polynomial& p) {
  int64_t den = p.constant.den;
  for (const auto& [var, k] : p.terms) den = std::lcm(den, k.den);
  auto scaled = [&](Rational r) {
    Rational s = r * Rational(den);
    TILEC_CHECK(s.IsInteger());
    return s.num;
  };
  // Positive terms first: `i - a`, not `-a + i`.
  std::vector<std::pair<std::string, int64_t>> terms;
  for (const auto& [var, k] : p.terms)
    if (k > Rational(0)) terms.emplace_back(var, scaled(k));
  for (const auto& [var, k] : p.terms)
    if (k < Rational(0)) terms.emplace_back(var, scaled(k));
  ExprPtr num = IntegerSum(terms, scaled(p.constant));
  if (den == 1) return num;
  if (p.terms.empty())
    TILEC_USER_ERROR("the constant index {} is not an integer and cannot be written as Tile", ToString(p));
  return ast::MakeBinary(BinaryOp::Div, num, ast::MakeInt(den));
}

ExprPtr ScalarExpr(const Scalar& s) {
  // Negative literals print as `-3`, which parses back to the same literal.
  if (!s.is_float) return ast::MakeInt(s.i);
  if (!std::isfinite(s.f)) TILEC_USER_ERROR("the constant {} has no spelling in Tile", ToString(s));
  return ast::MakeFloat(s.f);
}

ExprPtr TensorExpr(const std::string& name) { return ast::MakeName(name, ast::NameClass::Tensor); }

ast::Statement AssignmentStatement(const std::string& name, ExprPtr value) {
  ast::Statement st;
  st.kind = ast::Statement::Kind::Assignment;
  st.assignment.name = name;
  st.assignment.value = std::move(value);
  return st;
}

ast::Statement ContractionStatement(ast::Contraction c) {
  ast::Statement st;
  st.kind = ast::Statement::Kind::Contraction;
  c.has_colon = true;
  st.contraction = std::move(c);
  return st;
}

std::string& DefinedName(ast::Statement& st) {
  return st.kind == ast::Statement::Kind::Assignment ? st.assignment.name : st.contraction.output.name;
}

std::vector<ast::Statement> OpStatements(const Op& op, const Program& program,
                                         const std::function<std::string(const std::string&)>& rename,
                                         const std::function<std::string(const std::string&)>& fresh) {
  if (const auto* c = std::get_if<ContractionOp>(&op)) {
    auto ref = [&](const std::string& tensor, const std::vector<Polynomial>& index) {
      ast::TensorRef r;
      r.name = rename(tensor);
      for (const Polynomial& p : index) r.indices.push_back(PolynomialExpr(p));
      return r;
    };
    ast::Contraction out;
    out.output = ref(c->output, c->output_index);
    for (int64_t d : program.Tensor(c->output).shape.dims) out.sizes.push_back(ast::MakeInt(d));
    out.agg = c->agg;
    out.comb = c->comb;
    for (const auto& a : c->inputs) out.inputs.push_back(ref(a.tensor, a.index));
    for (const auto& k : c->constraints)
      out.constraints.push_back({PolynomialExpr(k.poly), ast::MakeInt(k.range), {}});
    out.no_defract = c->no_defract;
    if (c->default_tensor) out.default_tensor = rename(*c->default_tensor);
    return {ContractionStatement(std::move(out))};
  }
  if (const auto* e = std::get_if<ElementwiseOp>(&op)) {
    std::vector<ExprPtr> x;
    for (const Operand& o : e->operands) x.push_back(o.is_tensor ? TensorExpr(rename(o.tensor)) : ScalarExpr(o.scalar));
    return {AssignmentStatement(rename(e->output), ElementwiseExpr(*e, program, x))};
  }
  const auto& s = std::get<SpecialOp>(op);
  std::vector<ExprPtr> args;
  for (const std::string& in : s.inputs) args.push_back(TensorExpr(rename(in)));
  auto dims_of = [&](const std::string& t) {
    for (int64_t d : program.Tensor(t).shape.dims) args.push_back(ast::MakeInt(d));
  };
  switch (s.fn) {
    case SpecialFn::Gather: return {AssignmentStatement(rename(s.outputs.at(0)), Call("gather", args))};
    case SpecialFn::Scatter: return {AssignmentStatement(rename(s.outputs.at(0)), Call("scatter", args))};
    case SpecialFn::Shape: return {AssignmentStatement(rename(s.outputs.at(0)), Call("shape", args))};
    case SpecialFn::Reshape:
      dims_of(s.outputs.at(0));
      return {AssignmentStatement(rename(s.outputs.at(0)), Call("reshape", args))};
    case SpecialFn::PrngStep: {
      dims_of(s.outputs.at(0));
      std::string step = fresh("Step");
      return {AssignmentStatement(step, Call("prng_step", args)),
              AssignmentStatement(rename(s.outputs.at(0)), Call("prng_value", {TensorExpr(step)})),
              AssignmentStatement(rename(s.outputs.at(1)), Call("prng_state", {TensorExpr(step)}))};
    }
  }
  TILEC_UNREACHABLE("bad SpecialFn {}", static_cast<int>(s.fn));
}

}  // namespace tilec::lang
