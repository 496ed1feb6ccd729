// Convenience constructors for sem trees, after PlaidML's sembuilder.h: short
// `_Name(...)` functions for every node and C operators on Expr, so the code
// generator reads close to the code it generates:
//
//   using namespace tilec::sem::builder;
//   Expr tid = _Var("tid", Type::Index());
//   _Declare(Type::Index(), "ci_tid", tid % 8);
//   _Store(R, gout_idx, _Select(lr > 0.0, lr, _Const(0, lr->type)));
//
// Operators apply only where `using namespace tilec::sem::builder` is in
// effect (ADL does not find them). A number on one side of an operator
// becomes a constant of the other side's type (broadcast for vectors); an
// integer literal is accepted for float operands, a floating literal only for
// float ones. Operators that C++ code also applies to handles as pointers —
// `==` and `!=` between two Exprs, `&&`, `||`, `!` — are deliberately not
// overloaded (a pointer test would silently build a node): use _Eq, _Ne,
// _LogicalAnd, _LogicalOr and _Not; `e == 0` with a number is overloaded.
#pragma once

#include <concepts>
#include <string>
#include <vector>

#include "compiler/sem/ir.h"

namespace tilec::sem::builder {

// --- Constants and names ------------------------------------------------------

// `v` as a constant of `type`: IntConst for index/integer types, FloatConst for
// float, BoolConst (v != 0) for bool; broadcast when `type` is a vector.
Expr _Const(int64_t v, const Type& type = Type::Index());
Expr _Const(int64_t v, DataType dtype);
Expr _Float(double v, DataType dtype = DataType::F32);
Expr _Float(double v, const Type& type);  // float type, broadcast when a vector
Expr _Bool(bool v);
Expr _LimitConst(LimitKind which, const Type& type);  // broadcast when a vector
Expr _Var(std::string name, const Type& type);
Expr _Index(ThreadIndexKind which, int dim);

// --- Expressions ----------------------------------------------------------------

Expr _Load(Expr base, Expr index, int width = 1, Expr mask = nullptr);
Expr _Select(Expr cond, Expr true_value, Expr false_value);
Expr _Cond(Expr cond, Expr true_value, Expr false_value);
Expr _Clamp(Expr value, Expr lo, Expr hi);
Expr _Cast(const Type& type, Expr value);
Expr _Call(CallFn fn, std::vector<Expr> args);
Expr _Fma(Expr a, Expr b, Expr c);
Expr _Mad(Expr a, Expr b, Expr c);
Expr _Min(Expr a, Expr b);
Expr _Max(Expr a, Expr b);
Expr _LogicalAnd(Expr a, Expr b);
Expr _LogicalOr(Expr a, Expr b);
Expr _Not(Expr a);
Expr _Eq(Expr a, Expr b);
Expr _Ne(Expr a, Expr b);
Expr _Broadcast(Expr value, int width);
Expr _Extract(Expr vector, int lane);
Expr _Insert(Expr vector, int lane, Expr value);
Expr _Shuffle(Expr a, Expr b, std::vector<int> lanes);  // VectorShuffle

// --- Statements -----------------------------------------------------------------

Stmt _Declare(const Type& type, std::string name, Expr init = nullptr);
Stmt _Assign(Expr var, Expr value);
Stmt _Store(Expr base, Expr index, Expr value, bool streaming = false, Expr mask = nullptr);
Stmt _Prefetch(Expr base, Expr index);
Stmt _Block(std::vector<Stmt> stmts);
Stmt _If(Expr cond, Stmt then_body, Stmt else_body = nullptr);
// for (var = begin; var < end; var += step); the step gets begin's type.
Stmt _For(std::string var, Expr begin, Expr end, int64_t step, Stmt body);
Stmt _For(std::string var, int64_t begin, int64_t end, int64_t step, Stmt body);  // index type
// The same loop, marked not to be unrolled (For::unroll).
Stmt _NoUnroll(const Stmt& for_loop);
Stmt _While(Expr cond, Stmt body);
Stmt _Barrier(MemFence fence = MemFence::Local);
Stmt _Return(Expr value = nullptr);
Stmt _Comment(std::string text);

// --- Operators ------------------------------------------------------------------

// A literal as a constant of `like`'s type (see the top of the file).
Expr Literal(const Expr& like, int64_t v);
Expr Literal(const Expr& like, double v);

// Arithmetic shorthand for number literals of either kind.
template <typename T>
concept Number = std::integral<T> || std::floating_point<T>;

#define TILEC_SEM_BUILDER_NUMBER(sym, op)                                                    \
  template <Number T>                                                                        \
  Expr operator sym(const Expr& a, T b) {                                                    \
    if constexpr (std::integral<T>) return Binary::Make(BinaryOp::op, a, Literal(a, static_cast<int64_t>(b))); \
    else return Binary::Make(BinaryOp::op, a, Literal(a, static_cast<double>(b)));          \
  }                                                                                          \
  template <Number T>                                                                        \
  Expr operator sym(T a, const Expr& b) {                                                    \
    if constexpr (std::integral<T>) return Binary::Make(BinaryOp::op, Literal(b, static_cast<int64_t>(a)), b); \
    else return Binary::Make(BinaryOp::op, Literal(b, static_cast<double>(a)), b);          \
  }

#define TILEC_SEM_BUILDER_BINARY(sym, op)          \
  Expr operator sym(const Expr& a, const Expr& b); \
  TILEC_SEM_BUILDER_NUMBER(sym, op)

TILEC_SEM_BUILDER_BINARY(+, Add)
TILEC_SEM_BUILDER_BINARY(-, Sub)
TILEC_SEM_BUILDER_BINARY(*, Mul)
TILEC_SEM_BUILDER_BINARY(/, Div)
TILEC_SEM_BUILDER_BINARY(%, Mod)
TILEC_SEM_BUILDER_BINARY(&, BitAnd)
TILEC_SEM_BUILDER_BINARY(|, BitOr)
TILEC_SEM_BUILDER_BINARY(^, BitXor)
TILEC_SEM_BUILDER_BINARY(<<, Shl)
TILEC_SEM_BUILDER_BINARY(>>, Shr)
TILEC_SEM_BUILDER_NUMBER(==, Eq)
TILEC_SEM_BUILDER_NUMBER(!=, Ne)
TILEC_SEM_BUILDER_BINARY(<, Lt)
TILEC_SEM_BUILDER_BINARY(>, Gt)
TILEC_SEM_BUILDER_BINARY(<=, Le)
TILEC_SEM_BUILDER_BINARY(>=, Ge)
#undef TILEC_SEM_BUILDER_BINARY
#undef TILEC_SEM_BUILDER_NUMBER

Expr operator-(const Expr& a);
Expr operator~(const Expr& a);

}  // namespace tilec::sem::builder
