#include "compiler/sem/builder.h"

#include "support/error.h"

namespace tilec::sem::builder {
namespace {
Expr Widen(Expr scalar, int width) {
  return width == 1 ? scalar : Broadcast::Make(std::move(scalar), width);
}
}  // namespace

Expr _Const(int64_t v, const Type& type) {
  TILEC_CHECK(type.IsValue(), "sem: constant of type {}", ToString(type));
  Type scalar = type.WithWidth(1);
  Expr c;
  if (scalar.IsBool()) {
    c = BoolConst::Make(v != 0);
  } else if (scalar.IsFloat()) {
    c = FloatConst::Make(static_cast<double>(v), scalar);
  } else {
    c = IntConst::Make(v, scalar);
  }
  return Widen(c, type.width);
}

Expr _Const(int64_t v, DataType dtype) { return _Const(v, Type::Scalar(dtype)); }

Expr _Float(double v, DataType dtype) { return FloatConst::Make(v, Type::Scalar(dtype)); }

Expr _Float(double v, const Type& type) {
  TILEC_CHECK(type.IsFloat(), "sem: float constant of type {}", ToString(type));
  return Widen(FloatConst::Make(v, type.WithWidth(1)), type.width);
}

Expr _Bool(bool v) { return BoolConst::Make(v); }

Expr _LimitConst(LimitKind which, const Type& type) {
  TILEC_CHECK(type.IsValue(), "sem: limit of type {}", ToString(type));
  return Widen(LimitConst::Make(which, type.WithWidth(1)), type.width);
}

Expr _Var(std::string name, const Type& type) { return VarRef::Make(std::move(name), type); }
Expr _Index(ThreadIndexKind which, int dim) { return ThreadIndex::Make(which, dim); }

Expr _Load(Expr base, Expr index, int width, Expr mask) {
  return Load::Make(std::move(base), std::move(index), width, std::move(mask));
}
Expr _Select(Expr cond, Expr true_value, Expr false_value) {
  return Select::Make(std::move(cond), std::move(true_value), std::move(false_value));
}
Expr _Cond(Expr cond, Expr true_value, Expr false_value) {
  return Cond::Make(std::move(cond), std::move(true_value), std::move(false_value));
}
Expr _Clamp(Expr value, Expr lo, Expr hi) {
  return Clamp::Make(std::move(value), std::move(lo), std::move(hi));
}
Expr _Cast(const Type& type, Expr value) { return Cast::Make(type, std::move(value)); }
Expr _Call(CallFn fn, std::vector<Expr> args) { return Call::Make(fn, std::move(args)); }
Expr _Fma(Expr a, Expr b, Expr c) { return Call::Make(CallFn::Fma, {a, b, c}); }
Expr _Mad(Expr a, Expr b, Expr c) { return Call::Make(CallFn::Mad, {a, b, c}); }
Expr _Min(Expr a, Expr b) { return Binary::Make(BinaryOp::Min, std::move(a), std::move(b)); }
Expr _Max(Expr a, Expr b) { return Binary::Make(BinaryOp::Max, std::move(a), std::move(b)); }
Expr _LogicalAnd(Expr a, Expr b) {
  return Binary::Make(BinaryOp::LogicalAnd, std::move(a), std::move(b));
}
Expr _LogicalOr(Expr a, Expr b) {
  return Binary::Make(BinaryOp::LogicalOr, std::move(a), std::move(b));
}
Expr _Not(Expr a) { return Unary::Make(UnaryOp::LogicalNot, std::move(a)); }
Expr _Eq(Expr a, Expr b) { return Binary::Make(BinaryOp::Eq, std::move(a), std::move(b)); }
Expr _Ne(Expr a, Expr b) { return Binary::Make(BinaryOp::Ne, std::move(a), std::move(b)); }
Expr _Broadcast(Expr value, int width) { return Broadcast::Make(std::move(value), width); }
Expr _Extract(Expr vector, int lane) { return VectorExtract::Make(std::move(vector), lane); }
Expr _Insert(Expr vector, int lane, Expr value) {
  return VectorInsert::Make(std::move(vector), lane, std::move(value));
}

Expr _Shuffle(Expr a, Expr b, std::vector<int> lanes) {
  return VectorShuffle::Make(std::move(a), std::move(b), std::move(lanes));
}

Stmt _Declare(const Type& type, std::string name, Expr init) {
  return Declare::Make(std::move(name), type, std::move(init));
}
Stmt _Assign(Expr var, Expr value) { return Assign::Make(std::move(var), std::move(value)); }
Stmt _Store(Expr base, Expr index, Expr value, bool streaming, Expr mask) {
  return Store::Make(std::move(base), std::move(index), std::move(value), streaming,
                     std::move(mask));
}
Stmt _Block(std::vector<Stmt> stmts) { return Block::Make(std::move(stmts)); }
Stmt _If(Expr cond, Stmt then_body, Stmt else_body) {
  return If::Make(std::move(cond), std::move(then_body), std::move(else_body));
}
Stmt _For(std::string var, Expr begin, Expr end, int64_t step, Stmt body) {
  TILEC_CHECK(begin.get() != nullptr, "sem: loop '{}' without a begin", var);
  Expr s = IntConst::Make(step, begin->type);
  return For::Make(std::move(var), std::move(begin), std::move(end), std::move(s),
                   std::move(body));
}
Stmt _For(std::string var, int64_t begin, int64_t end, int64_t step, Stmt body) {
  return _For(std::move(var), IntConst::Make(begin), IntConst::Make(end), step, std::move(body));
}
Stmt _NoUnroll(const Stmt& for_loop) {
  TILEC_CHECK(for_loop && for_loop->kind == NodeKind::For, "sem: _NoUnroll of a statement that is not a loop");
  const auto& f = static_cast<const For&>(*for_loop);
  return For::Make(f.var, f.begin, f.end, f.step, f.body, false);
}
Stmt _While(Expr cond, Stmt body) { return While::Make(std::move(cond), std::move(body)); }
Stmt _Prefetch(Expr base, Expr index) { return Prefetch::Make(std::move(base), std::move(index)); }
Stmt _Barrier(MemFence fence) { return Barrier::Make(fence); }
Stmt _Return(Expr value) { return Return::Make(std::move(value)); }
Stmt _Comment(std::string text) { return Comment::Make(std::move(text)); }

Expr Literal(const Expr& like, int64_t v) {
  TILEC_CHECK(like.get() != nullptr, "sem: literal next to a null operand");
  return _Const(v, like->type);
}

Expr Literal(const Expr& like, double v) {
  TILEC_CHECK(like.get() != nullptr, "sem: literal next to a null operand");
  TILEC_CHECK(like->type.IsFloat(), "sem: float literal {} next to {}", v, ToString(like->type));
  return _Float(v, like->type);
}

#define TILEC_X(sym, op) \
  Expr operator sym(const Expr& a, const Expr& b) { return Binary::Make(BinaryOp::op, a, b); }
TILEC_X(+, Add)
TILEC_X(-, Sub)
TILEC_X(*, Mul)
TILEC_X(/, Div)
TILEC_X(%, Mod)
TILEC_X(&, BitAnd)
TILEC_X(|, BitOr)
TILEC_X(^, BitXor)
TILEC_X(<<, Shl)
TILEC_X(>>, Shr)
TILEC_X(<, Lt)
TILEC_X(>, Gt)
TILEC_X(<=, Le)
TILEC_X(>=, Ge)
#undef TILEC_X

Expr operator-(const Expr& a) { return Unary::Make(UnaryOp::Neg, a); }
Expr operator~(const Expr& a) { return Unary::Make(UnaryOp::BitNot, a); }

}  // namespace tilec::sem::builder
