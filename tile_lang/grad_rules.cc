#include "tile_lang/grad_rules.h"

#include "support/error.h"

namespace tilec::lang {
namespace {

using ast::BinaryOp;
using ast::ExprPtr;

ExprPtr Lit(double v) { return ast::MakeFloat(v); }
ExprPtr One() { return ast::MakeInt(1); }
ExprPtr Zero() { return ast::MakeInt(0); }
ExprPtr Add(ExprPtr a, ExprPtr b) { return ast::MakeBinary(BinaryOp::Add, a, b); }
ExprPtr Sub(ExprPtr a, ExprPtr b) { return ast::MakeBinary(BinaryOp::Sub, a, b); }
ExprPtr Mul(ExprPtr a, ExprPtr b) { return ast::MakeBinary(BinaryOp::Mul, a, b); }
ExprPtr Div(ExprPtr a, ExprPtr b) { return ast::MakeBinary(BinaryOp::Div, a, b); }
ExprPtr Neg(ExprPtr a) { return ast::MakeUnary(ast::UnaryOp::Neg, a); }
ExprPtr Lt(ExprPtr a, ExprPtr b) { return ast::MakeBinary(BinaryOp::Lt, a, b); }
ExprPtr Gt(ExprPtr a, ExprPtr b) { return ast::MakeBinary(BinaryOp::Gt, a, b); }
ExprPtr Eq(ExprPtr a, ExprPtr b) { return ast::MakeBinary(BinaryOp::Eq, a, b); }
ExprPtr If(ExprPtr c, ExprPtr t, ExprPtr f) { return ast::MakeTernary(c, t, f); }
ExprPtr Fn(const char* name, ExprPtr a) { return ast::MakeCall(name, {a}); }
ExprPtr Fn(const char* name, ExprPtr a, ExprPtr b) { return ast::MakeCall(name, {a, b}); }

// The share of `g` that the first operand of min (`less` = Lt) or max (Gt)
// receives: all where it wins, half on a tie.
ExprPtr Extremum(ExprPtr (*wins)(ExprPtr, ExprPtr), ExprPtr a, ExprPtr b, ExprPtr g) {
  return If(wins(a, b), g, If(Eq(a, b), Mul(g, Lit(0.5)), Zero()));
}

}  // namespace

std::vector<ExprPtr> ElementwiseGradient(ElemFn fn, const std::vector<ExprPtr>& x, const ExprPtr& y,
                                         const ExprPtr& g) {
  auto a = [&] { return x.at(0); };
  auto b = [&] { return x.at(1); };
  switch (fn) {
    // Value-preserving: the gradient passes through (a cast to a float type
    // only changes precision; the caller converts back).
    case ElemFn::Ident:
    case ElemFn::Cast: return {g};
    case ElemFn::Neg: return {Neg(g)};
    case ElemFn::Add: return {g, g};
    case ElemFn::Sub: return {g, Neg(g)};
    case ElemFn::Mul: return {Mul(g, b()), Mul(g, a())};
    case ElemFn::Div: return {Div(g, b()), Neg(Div(Mul(g, a()), Mul(b(), b())))};
    case ElemFn::Mod: {
      // fmod(a, b) = a - trunc(a / b) * b.
      ExprPtr q = Div(a(), b());
      return {g, Neg(Mul(g, If(Lt(q, Zero()), Fn("ceil", q), Fn("floor", q))))};
    }
    case ElemFn::Cond: return {nullptr, If(x.at(0), g, Zero()), If(x.at(0), Zero(), g)};
    case ElemFn::Exp: return {Mul(g, y)};
    case ElemFn::Log: return {Div(g, a())};
    case ElemFn::Sqrt: return {Div(Mul(g, Lit(0.5)), y)};
    case ElemFn::Pow:
      return {Mul(Mul(g, b()), Fn("pow", a(), Sub(b(), One()))),
              If(Gt(a(), Zero()), Mul(Mul(g, y), Fn("log", a())), Zero())};
    case ElemFn::Tanh: return {Mul(g, Sub(One(), Mul(y, y)))};
    case ElemFn::Sin: return {Mul(g, Fn("cos", a()))};
    case ElemFn::Cos: return {Neg(Mul(g, Fn("sin", a())))};
    case ElemFn::Tan: return {Mul(g, Add(One(), Mul(y, y)))};
    case ElemFn::Sinh: return {Mul(g, Fn("cosh", a()))};
    case ElemFn::Cosh: return {Mul(g, Fn("sinh", a()))};
    case ElemFn::Asin: return {Div(g, Fn("sqrt", Sub(One(), Mul(a(), a()))))};
    case ElemFn::Acos: return {Neg(Div(g, Fn("sqrt", Sub(One(), Mul(a(), a())))))};
    case ElemFn::Atan: return {Div(g, Add(One(), Mul(a(), a())))};
    case ElemFn::Abs: return {If(Lt(a(), Zero()), Neg(g), If(Gt(a(), Zero()), g, Zero()))};
    case ElemFn::Min: return {Extremum(Lt, a(), b(), g), Extremum(Lt, b(), a(), g)};
    case ElemFn::Max: return {Extremum(Gt, a(), b(), g), Extremum(Gt, b(), a(), g)};
    case ElemFn::Sigmoid: return {Mul(Mul(g, y), Sub(One(), y))};
    case ElemFn::Erf:  // 2 / sqrt(pi) * exp(-a^2)
      return {Mul(Mul(g, Lit(1.1283791670955126)), Fn("exp", Neg(Mul(a(), a()))))};
    case ElemFn::Floor:
    case ElemFn::Ceil:
    case ElemFn::Round: return {nullptr};
    case ElemFn::BitNot:
    case ElemFn::LogicalNot:
    case ElemFn::CmpEq:
    case ElemFn::CmpNe:
    case ElemFn::CmpLt:
    case ElemFn::CmpGt:
    case ElemFn::CmpLe:
    case ElemFn::CmpGe:
    case ElemFn::BitAnd:
    case ElemFn::BitOr:
    case ElemFn::BitXor:
    case ElemFn::Shl:
    case ElemFn::Shr:
    case ElemFn::LogicalAnd:
    case ElemFn::LogicalOr:
    case ElemFn::Index: return std::vector<ExprPtr>(x.size(), nullptr);
  }
  TILEC_UNREACHABLE("bad ElemFn {}", static_cast<int>(fn));
}

}  // namespace tilec::lang
