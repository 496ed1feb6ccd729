// Dispatch and default traversal for sem::Visitor and sem::Mutator.
#include "compiler/sem/ir.h"
#include "support/error.h"

namespace tilec::sem {

// --- Visitor ----------------------------------------------------------------------

void Visitor::Visit(const Expr& e) {
  if (!e) return;
  switch (e->kind) {
#define TILEC_X_Expr(n) \
  case NodeKind::n: return Visit##n(static_cast<const n&>(*e));
#define TILEC_X_Stmt(n)
#define TILEC_X(n, c) TILEC_X_##c(n)
    TILEC_SEM_NODES(TILEC_X)
#undef TILEC_X
#undef TILEC_X_Stmt
#undef TILEC_X_Expr
    default: break;
  }
  TILEC_UNREACHABLE("expression of kind {}", Name(e->kind));
}

void Visitor::Visit(const Stmt& s) {
  if (!s) return;
  switch (s->kind) {
#define TILEC_X_Stmt(n) \
  case NodeKind::n: return Visit##n(static_cast<const n&>(*s));
#define TILEC_X_Expr(n)
#define TILEC_X(n, c) TILEC_X_##c(n)
    TILEC_SEM_NODES(TILEC_X)
#undef TILEC_X
#undef TILEC_X_Stmt
#undef TILEC_X_Expr
    default: break;
  }
  TILEC_UNREACHABLE("statement of kind {}", Name(s->kind));
}

void Visitor::VisitIntConst(const IntConst&) {}
void Visitor::VisitFloatConst(const FloatConst&) {}
void Visitor::VisitBoolConst(const BoolConst&) {}
void Visitor::VisitLimitConst(const LimitConst&) {}
void Visitor::VisitVarRef(const VarRef&) {}
void Visitor::VisitLoad(const Load& n) {
  Visit(n.base);
  Visit(n.index);
  Visit(n.mask);
}
void Visitor::VisitUnary(const Unary& n) { Visit(n.operand); }
void Visitor::VisitBinary(const Binary& n) {
  Visit(n.a);
  Visit(n.b);
}
void Visitor::VisitSelect(const Select& n) {
  Visit(n.cond);
  Visit(n.true_value);
  Visit(n.false_value);
}
void Visitor::VisitCond(const Cond& n) {
  Visit(n.cond);
  Visit(n.true_value);
  Visit(n.false_value);
}
void Visitor::VisitClamp(const Clamp& n) {
  Visit(n.value);
  Visit(n.lo);
  Visit(n.hi);
}
void Visitor::VisitCast(const Cast& n) { Visit(n.value); }
void Visitor::VisitCall(const Call& n) {
  for (const Expr& a : n.args) Visit(a);
}
void Visitor::VisitThreadIndex(const ThreadIndex&) {}
void Visitor::VisitBroadcast(const Broadcast& n) { Visit(n.value); }
void Visitor::VisitVectorExtract(const VectorExtract& n) { Visit(n.vector); }
void Visitor::VisitVectorInsert(const VectorInsert& n) {
  Visit(n.vector);
  Visit(n.value);
}
void Visitor::VisitVectorShuffle(const VectorShuffle& n) {
  Visit(n.a);
  Visit(n.b);
}
void Visitor::VisitDeclare(const Declare& n) { Visit(n.init); }
void Visitor::VisitAssign(const Assign& n) {
  Visit(n.var);
  Visit(n.value);
}
void Visitor::VisitStore(const Store& n) {
  Visit(n.base);
  Visit(n.index);
  Visit(n.value);
  Visit(n.mask);
}
void Visitor::VisitPrefetch(const Prefetch& n) {
  Visit(n.base);
  Visit(n.index);
}
void Visitor::VisitBlock(const Block& n) {
  for (const Stmt& s : n.stmts) Visit(s);
}
void Visitor::VisitIf(const If& n) {
  Visit(n.cond);
  Visit(n.then_body);
  Visit(n.else_body);
}
void Visitor::VisitFor(const For& n) {
  Visit(n.begin);
  Visit(n.end);
  Visit(n.step);
  Visit(n.body);
}
void Visitor::VisitWhile(const While& n) {
  Visit(n.cond);
  Visit(n.body);
}
void Visitor::VisitBarrier(const Barrier&) {}
void Visitor::VisitReturn(const Return& n) { Visit(n.value); }
void Visitor::VisitComment(const Comment&) {}

// --- Mutator ----------------------------------------------------------------------

Expr Mutator::Mutate(const Expr& e) {
  if (!e) return nullptr;
  switch (e->kind) {
#define TILEC_X_Expr(n) \
  case NodeKind::n: return Mutate##n(static_cast<const n&>(*e), e);
#define TILEC_X_Stmt(n)
#define TILEC_X(n, c) TILEC_X_##c(n)
    TILEC_SEM_NODES(TILEC_X)
#undef TILEC_X
#undef TILEC_X_Stmt
#undef TILEC_X_Expr
    default: break;
  }
  TILEC_UNREACHABLE("expression of kind {}", Name(e->kind));
}

Stmt Mutator::Mutate(const Stmt& s) {
  if (!s) return nullptr;
  switch (s->kind) {
#define TILEC_X_Stmt(n) \
  case NodeKind::n: return Mutate##n(static_cast<const n&>(*s), s);
#define TILEC_X_Expr(n)
#define TILEC_X(n, c) TILEC_X_##c(n)
    TILEC_SEM_NODES(TILEC_X)
#undef TILEC_X
#undef TILEC_X_Stmt
#undef TILEC_X_Expr
    default: break;
  }
  TILEC_UNREACHABLE("statement of kind {}", Name(s->kind));
}

Expr Mutator::MutateIntConst(const IntConst&, const Expr& self) { return self; }
Expr Mutator::MutateFloatConst(const FloatConst&, const Expr& self) { return self; }
Expr Mutator::MutateBoolConst(const BoolConst&, const Expr& self) { return self; }
Expr Mutator::MutateLimitConst(const LimitConst&, const Expr& self) { return self; }
Expr Mutator::MutateVarRef(const VarRef&, const Expr& self) { return self; }
Expr Mutator::MutateThreadIndex(const ThreadIndex&, const Expr& self) { return self; }

Expr Mutator::MutateLoad(const Load& n, const Expr& self) {
  Expr base = Mutate(n.base), index = Mutate(n.index), mask = Mutate(n.mask);
  if (base == n.base && index == n.index && mask == n.mask) return self;
  int width = n.base->type.Element().width > 1 ? 1 : n.type.width;
  return Load::Make(base, index, width, mask);
}

Expr Mutator::MutateUnary(const Unary& n, const Expr& self) {
  Expr a = Mutate(n.operand);
  return a == n.operand ? self : Unary::Make(n.op, a);
}

Expr Mutator::MutateBinary(const Binary& n, const Expr& self) {
  Expr a = Mutate(n.a), b = Mutate(n.b);
  return a == n.a && b == n.b ? self : Binary::Make(n.op, a, b);
}

Expr Mutator::MutateSelect(const Select& n, const Expr& self) {
  Expr c = Mutate(n.cond), t = Mutate(n.true_value), f = Mutate(n.false_value);
  if (c == n.cond && t == n.true_value && f == n.false_value) return self;
  return Select::Make(c, t, f);
}

Expr Mutator::MutateCond(const Cond& n, const Expr& self) {
  Expr c = Mutate(n.cond), t = Mutate(n.true_value), f = Mutate(n.false_value);
  if (c == n.cond && t == n.true_value && f == n.false_value) return self;
  return Cond::Make(c, t, f);
}

Expr Mutator::MutateClamp(const Clamp& n, const Expr& self) {
  Expr v = Mutate(n.value), lo = Mutate(n.lo), hi = Mutate(n.hi);
  if (v == n.value && lo == n.lo && hi == n.hi) return self;
  return Clamp::Make(v, lo, hi);
}

Expr Mutator::MutateCast(const Cast& n, const Expr& self) {
  Expr v = Mutate(n.value);
  return v == n.value ? self : Cast::Make(n.type, v);
}

Expr Mutator::MutateCall(const Call& n, const Expr& self) {
  std::vector<Expr> args;
  bool changed = false;
  for (const Expr& a : n.args) {
    args.push_back(Mutate(a));
    changed |= args.back() != a;
  }
  return changed ? Call::Make(n.fn, std::move(args)) : self;
}

Expr Mutator::MutateBroadcast(const Broadcast& n, const Expr& self) {
  Expr v = Mutate(n.value);
  return v == n.value ? self : Broadcast::Make(v, n.type.width);
}

Expr Mutator::MutateVectorExtract(const VectorExtract& n, const Expr& self) {
  Expr v = Mutate(n.vector);
  return v == n.vector ? self : VectorExtract::Make(v, n.lane);
}

Expr Mutator::MutateVectorInsert(const VectorInsert& n, const Expr& self) {
  Expr v = Mutate(n.vector), x = Mutate(n.value);
  if (v == n.vector && x == n.value) return self;
  return VectorInsert::Make(v, n.lane, x);
}

Expr Mutator::MutateVectorShuffle(const VectorShuffle& n, const Expr& self) {
  Expr a = Mutate(n.a), b = Mutate(n.b);
  if (a == n.a && b == n.b) return self;
  return VectorShuffle::Make(a, b, n.lanes);
}

Stmt Mutator::MutateDeclare(const Declare& n, const Stmt& self) {
  Expr init = Mutate(n.init);
  return init == n.init ? self : Declare::Make(n.name, n.type, init);
}

Stmt Mutator::MutateAssign(const Assign& n, const Stmt& self) {
  Expr var = Mutate(n.var), value = Mutate(n.value);
  if (var == n.var && value == n.value) return self;
  return Assign::Make(var, value);
}

Stmt Mutator::MutateStore(const Store& n, const Stmt& self) {
  Expr base = Mutate(n.base), index = Mutate(n.index), value = Mutate(n.value);
  Expr mask = Mutate(n.mask);
  if (base == n.base && index == n.index && value == n.value && mask == n.mask) return self;
  return Store::Make(base, index, value, n.streaming, mask);
}

Stmt Mutator::MutatePrefetch(const Prefetch& n, const Stmt& self) {
  Expr base = Mutate(n.base), index = Mutate(n.index);
  if (base == n.base && index == n.index) return self;
  return Prefetch::Make(base, index);
}

Stmt Mutator::MutateBlock(const Block& n, const Stmt& self) {
  std::vector<Stmt> stmts;
  bool changed = false;
  for (const Stmt& s : n.stmts) {
    stmts.push_back(Mutate(s));
    changed |= stmts.back() != s;
  }
  return changed ? Block::Make(std::move(stmts)) : self;
}

Stmt Mutator::MutateIf(const If& n, const Stmt& self) {
  Expr c = Mutate(n.cond);
  Stmt t = Mutate(n.then_body), e = Mutate(n.else_body);
  if (c == n.cond && t == n.then_body && e == n.else_body) return self;
  return If::Make(c, t, e);
}

Stmt Mutator::MutateFor(const For& n, const Stmt& self) {
  Expr b = Mutate(n.begin), e = Mutate(n.end), s = Mutate(n.step);
  Stmt body = Mutate(n.body);
  if (b == n.begin && e == n.end && s == n.step && body == n.body) return self;
  return For::Make(n.var, b, e, s, body, n.unroll);
}

Stmt Mutator::MutateWhile(const While& n, const Stmt& self) {
  Expr c = Mutate(n.cond);
  Stmt body = Mutate(n.body);
  if (c == n.cond && body == n.body) return self;
  return While::Make(c, body);
}

Stmt Mutator::MutateBarrier(const Barrier&, const Stmt& self) { return self; }

Stmt Mutator::MutateReturn(const Return& n, const Stmt& self) {
  Expr v = Mutate(n.value);
  return v == n.value ? self : Return::Make(v);
}

Stmt Mutator::MutateComment(const Comment&, const Stmt& self) { return self; }

}  // namespace tilec::sem
