#include "compiler/sem/simplify.h"

#include <map>
#include <set>

#include "support/error.h"

namespace tilec::sem {
namespace {

using Int = __int128;  // wide enough for every operation on 64-bit operands

// --- Integer folding with C semantics on the operand type ---------------------

struct IntInfo {
  int bits;
  bool is_signed;
};

IntInfo InfoOf(const Type& t, int index_bits) {
  if (t.IsIndex()) return {index_bits, true};
  return {lang::BitWidth(t.dtype), lang::IsSigned(t.dtype)};
}

Int MaxOf(IntInfo i) { return i.is_signed ? (Int{1} << (i.bits - 1)) - 1 : (Int{1} << i.bits) - 1; }
Int MinOf(IntInfo i) { return i.is_signed ? -(Int{1} << (i.bits - 1)) : 0; }

// The mathematical value of a constant (u64 constants are bit patterns).
Int ValueOf(int64_t v, IntInfo i) {
  if (i.is_signed) return v;
  return static_cast<Int>(static_cast<uint64_t>(v) & static_cast<uint64_t>(MaxOf(i)));
}

// The constant for a mathematical result: unsigned types wrap, signed ones
// must fit (overflow is undefined, so such an operation is not folded).
std::optional<int64_t> Encode(Int r, IntInfo i) {
  if (i.is_signed) {
    if (r < MinOf(i) || r > MaxOf(i)) return std::nullopt;
    return static_cast<int64_t>(r);
  }
  auto wrapped = static_cast<unsigned __int128>(r) & static_cast<unsigned __int128>(MaxOf(i));
  return static_cast<int64_t>(static_cast<uint64_t>(wrapped));
}

// Folds `a op b` for an integer type; nullopt when C leaves it undefined.
// Comparisons yield 0 or 1.
std::optional<int64_t> FoldInt(BinaryOp op, Int a, Int b, IntInfo i) {
  switch (op) {
    case BinaryOp::Add: return Encode(a + b, i);
    case BinaryOp::Sub: return Encode(a - b, i);
    case BinaryOp::Mul:
      if (!i.is_signed)  // up to 2^128: wrap in unsigned arithmetic first
        return Encode(static_cast<Int>(static_cast<unsigned __int128>(a) *
                                       static_cast<unsigned __int128>(b) &
                                       static_cast<unsigned __int128>(MaxOf(i))),
                      i);
      return Encode(a * b, i);
    case BinaryOp::Div:
    case BinaryOp::Mod:
      if (b == 0 || (i.is_signed && a == MinOf(i) && b == -1)) return std::nullopt;
      return Encode(op == BinaryOp::Div ? a / b : a % b, i);
    case BinaryOp::Min: return Encode(a < b ? a : b, i);
    case BinaryOp::Max: return Encode(a < b ? b : a, i);
    case BinaryOp::BitAnd: return Encode(a & b, i);
    case BinaryOp::BitOr: return Encode(a | b, i);
    case BinaryOp::BitXor: return Encode(a ^ b, i);
    case BinaryOp::Shl:
      if (b < 0 || b >= i.bits || a < 0) return std::nullopt;
      if (!i.is_signed) return Encode(static_cast<Int>((static_cast<unsigned __int128>(a) << b) &
                                                       static_cast<unsigned __int128>(MaxOf(i))),
                                      i);
      return Encode(a << b, i);
    case BinaryOp::Shr:
      if (b < 0 || b >= i.bits || a < 0) return std::nullopt;
      return Encode(a >> b, i);
    case BinaryOp::Eq: return a == b;
    case BinaryOp::Ne: return a != b;
    case BinaryOp::Lt: return a < b;
    case BinaryOp::Gt: return a > b;
    case BinaryOp::Le: return a <= b;
    case BinaryOp::Ge: return a >= b;
    case BinaryOp::LogicalAnd:
    case BinaryOp::LogicalOr: return std::nullopt;  // not defined on integers
  }
  return std::nullopt;
}

std::optional<bool> FoldBool(BinaryOp op, bool a, bool b) {
  switch (op) {
    case BinaryOp::LogicalAnd:
    case BinaryOp::BitAnd: return a && b;
    case BinaryOp::LogicalOr:
    case BinaryOp::BitOr: return a || b;
    case BinaryOp::BitXor:
    case BinaryOp::Ne: return a != b;
    case BinaryOp::Eq: return a == b;
    case BinaryOp::Lt: return !a && b;
    case BinaryOp::Gt: return a && !b;
    case BinaryOp::Le: return !a || b;
    case BinaryOp::Ge: return a || !b;
    default: return std::nullopt;
  }
}

// A constant of `type` (broadcast when a vector).
Expr IntOf(int64_t v, const Type& type) {
  Expr c = IntConst::Make(v, type.WithWidth(1));
  return type.width > 1 ? Broadcast::Make(c, type.width) : c;
}
Expr BoolOf(bool v, int width) {
  Expr c = BoolConst::Make(v);
  return width > 1 ? Broadcast::Make(c, width) : c;
}

std::optional<double> ConstFloat(const Expr& e) {
  if (auto* c = As<FloatConst>(e)) return c->value;
  if (auto* b = As<Broadcast>(e)) return ConstFloat(b->value);
  return std::nullopt;
}

// The truth of a constant condition (bool, or integer != 0).
std::optional<bool> ConstTruth(const Expr& e) {
  if (auto b = ConstBool(e)) return b;
  if (auto i = ConstInt(e)) return *i != 0;
  return std::nullopt;
}

// Whether a statement does nothing: a block of comments and empty blocks.
bool IsEmpty(const Stmt& s) {
  auto* b = As<Block>(s);
  if (!b) return false;
  for (const Stmt& x : b->stmts)
    if (!IsEmpty(x) && x->kind != NodeKind::Comment) return false;
  return true;
}

Stmt Empty() { return Block::Make({}); }

// Names assigned, and names declared (at any depth), in a statement.
class NameScan : public Visitor {
 public:
  std::set<std::string> assigned, declared;
  using Visitor::Visit;

 protected:
  void VisitAssign(const Assign& n) override {
    assigned.insert(static_cast<const VarRef&>(*n.var).name);
    Visitor::VisitAssign(n);
  }
  void VisitDeclare(const Declare& n) override {
    declared.insert(n.name);
    Visitor::VisitDeclare(n);
  }
  void VisitFor(const For& n) override {
    declared.insert(n.var);
    Visitor::VisitFor(n);
  }
};

// --- The rewriter -------------------------------------------------------------------

class Simplifier : public Mutator {
 public:
  explicit Simplifier(const Function& f) : index_bits_(f.index_type == DataType::I64 ? 64 : 32) {
    scopes_.emplace_back();
    for (const Param& p : f.params) scopes_.back()[p.name] = nullptr;
  }

  // The body's outermost block shares the parameters' scope.
  Stmt Body(const Stmt& body) {
    auto* b = As<Block>(body);
    TILEC_CHECK(b != nullptr, "sem: function body is not a block");
    return SimplifyStmts(*b, body, /*new_scope=*/false);
  }

 protected:
  using Mutator::Mutate;

  // A name in scope maps to its replacement, or to nullptr if it stays.
  Expr MutateVarRef(const VarRef& n, const Expr& self) override {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto found = it->find(n.name);
      if (found != it->end()) return found->second ? found->second : self;
    }
    return self;
  }

  Expr MutateUnary(const Unary& n, const Expr& self) override {
    Expr a = Mutate(n.operand);
    auto* inner = As<Unary>(a);
    if (inner && inner->op == n.op) return inner->operand;  // !!b, -(-x), ~~x
    if (n.op == UnaryOp::LogicalNot) {
      if (auto b = ConstBool(a)) return BoolOf(!*b, a->type.width);
    } else if (auto v = ConstInt(a); v && a->type.IsInteger()) {
      IntInfo i = InfoOf(a->type, index_bits_);
      Int x = ValueOf(*v, i);
      auto r = n.op == UnaryOp::Neg ? Encode(-x, i) : Encode(i.is_signed ? ~x : MaxOf(i) - x, i);
      if (r) return IntOf(*r, a->type);
    }
    return a == n.operand ? self : Unary::Make(n.op, a);
  }

  Expr MutateBinary(const Binary& n, const Expr& self) override {
    Expr a = Mutate(n.a), b = Mutate(n.b);
    if (Expr folded = Fold(n.op, a, b)) return folded;
    return a == n.a && b == n.b ? self : Binary::Make(n.op, a, b);
  }

  Expr MutateSelect(const Select& n, const Expr& self) override {
    Expr c = Mutate(n.cond), t = Mutate(n.true_value), f = Mutate(n.false_value);
    if (auto v = ConstBool(c)) return *v ? t : f;
    if (t == f) return t;
    if (c == n.cond && t == n.true_value && f == n.false_value) return self;
    return Select::Make(c, t, f);
  }

  Expr MutateCond(const Cond& n, const Expr& self) override {
    Expr c = Mutate(n.cond);
    if (auto v = ConstTruth(c)) return Mutate(*v ? n.true_value : n.false_value);
    Expr t = Mutate(n.true_value), f = Mutate(n.false_value);
    if (t == f) return t;
    if (c == n.cond && t == n.true_value && f == n.false_value) return self;
    return Cond::Make(c, t, f);
  }

  Expr MutateClamp(const Clamp& n, const Expr& self) override {
    Expr v = Mutate(n.value), lo = Mutate(n.lo), hi = Mutate(n.hi);
    auto x = ConstInt(v), l = ConstInt(lo), h = ConstInt(hi);
    if (x && l && h && v->type.IsInteger()) {
      IntInfo i = InfoOf(v->type, index_bits_);
      Int r = std::max(ValueOf(*x, i), ValueOf(*l, i));
      r = std::min(r, ValueOf(*h, i));
      if (auto e = Encode(r, i)) return IntOf(*e, v->type);
    }
    if (v == n.value && lo == n.lo && hi == n.hi) return self;
    return Clamp::Make(v, lo, hi);
  }

  Expr MutateCast(const Cast& n, const Expr& self) override {
    Expr v = Mutate(n.value);
    const Type& to = n.type;
    if (v->type == to) return v;
    if (auto b = ConstBool(v)) {
      if (to.IsInteger()) return IntOf(*b ? 1 : 0, to);
    } else if (auto x = ConstInt(v); x && v->type.IsInteger()) {
      Int value = ValueOf(*x, InfoOf(v->type, index_bits_));
      if (to.IsBool()) return BoolOf(value != 0, to.width);
      if (to.IsInteger())
        if (auto r = Encode(value, InfoOf(to, index_bits_))) return IntOf(*r, to);
    }
    return v == n.value ? self : Cast::Make(to, v);
  }

  Expr MutateVectorExtract(const VectorExtract& n, const Expr& self) override {
    Expr v = Mutate(n.vector);
    if (auto* b = As<Broadcast>(v)) return b->value;
    return v == n.vector ? self : VectorExtract::Make(v, n.lane);
  }

  Stmt MutateDeclare(const Declare& n, const Stmt& self) override {
    Expr init = Mutate(n.init);
    scopes_.back()[n.name] = nullptr;  // shadows any outer binding from here on
    return init == n.init ? self : Declare::Make(n.name, n.type, init);
  }

  Stmt MutateBlock(const Block& n, const Stmt& self) override {
    return SimplifyStmts(n, self, /*new_scope=*/true);
  }

  Stmt MutateIf(const If& n, const Stmt& self) override {
    Expr c = Mutate(n.cond);
    if (auto v = ConstTruth(c)) {
      const Stmt& chosen = *v ? n.then_body : n.else_body;
      return chosen ? Scoped(chosen) : Empty();
    }
    Stmt t = Scoped(n.then_body), e = Scoped(n.else_body);
    if (e && IsEmpty(e)) e = nullptr;
    if (IsEmpty(t)) {
      if (!e) return Empty();
      return If::Make(Negate(c), e, nullptr);
    }
    if (c == n.cond && t == n.then_body && e == n.else_body) return self;
    return If::Make(c, t, e);
  }

  Stmt MutateFor(const For& n, const Stmt& self) override {
    Expr b = Mutate(n.begin), e = Mutate(n.end);
    scopes_.emplace_back();
    scopes_.back()[n.var] = nullptr;
    Stmt body = Mutate(n.body);
    scopes_.pop_back();
    if (IsEmpty(body)) return Empty();
    auto lo = ConstInt(b), hi = ConstInt(e);
    if (lo && hi) {
      IntInfo i = InfoOf(b->type, index_bits_);
      Int first = ValueOf(*lo, i), end = ValueOf(*hi, i), step = n.Step();
      Int trips = end <= first ? 0 : (end - first + step - 1) / step;
      if (trips == 0) return Empty();
      if (trips == 1) return Mutate(Block::Make({Declare::Make(n.var, b->type, b), body}));
    }
    if (b == n.begin && e == n.end && body == n.body) return self;
    return For::Make(n.var, b, e, n.step, body, n.unroll);
  }

  Stmt MutateWhile(const While& n, const Stmt& self) override {
    Expr c = Mutate(n.cond);
    if (auto v = ConstTruth(c); v && !*v) return Empty();
    Stmt body = Scoped(n.body);
    if (c == n.cond && body == n.body) return self;
    return While::Make(c, body);
  }

 private:
  // A branch or body in its own scope. A bare declaration stays wrapped in a
  // block, so that lifting the branch into its parent cannot leak the name.
  Stmt Scoped(const Stmt& s) {
    if (!s) return nullptr;
    scopes_.emplace_back();
    Stmt r = Mutate(s);
    scopes_.pop_back();
    return r->kind == NodeKind::Declare ? Block::Make({r}) : r;
  }

  // Folds constants and identities of `a op b`; nullptr if nothing applies.
  Expr Fold(BinaryOp op, const Expr& a, const Expr& b) {
    const Type& t = a->type;
    if (!t.IsValue()) return nullptr;  // pointer arithmetic
    auto ca = ConstInt(a), cb = ConstInt(b);
    if (ca && cb && t.IsInteger()) {
      IntInfo i = InfoOf(t, index_bits_);
      if (auto r = FoldInt(op, ValueOf(*ca, i), ValueOf(*cb, i), i))
        return IsComparison(op) ? BoolOf(*r != 0, t.width) : IntOf(*r, t);
      return nullptr;
    }
    auto ba = ConstBool(a), bb = ConstBool(b);
    if (ba && bb) {
      if (auto r = FoldBool(op, *ba, *bb)) return BoolOf(*r, t.width);
      return nullptr;
    }
    if (op == BinaryOp::LogicalAnd || op == BinaryOp::LogicalOr) {
      // Operands are pure, so dropping one is safe.
      bool is_and = op == BinaryOp::LogicalAnd;
      if (ba) return *ba == is_and ? b : a;
      if (bb) return *bb == is_and ? a : b;
      return nullptr;
    }
    if (t.IsInteger() && IsComparison(op) && SameVariable(a, b)) {
      // v == v, v <= v, v >= v hold and v != v, v < v, v > v do not for
      // integers (the direct form's solved output index checked against
      // itself: `o1 == o1`, which OpenCL compilers warn about).
      bool holds = op == BinaryOp::Eq || op == BinaryOp::Le || op == BinaryOp::Ge;
      return BoolOf(holds, t.width);
    }
    if (t.IsInteger()) return IntIdentity(op, a, b, ca, cb);
    if (t.IsFloat()) {
      // x*1 and x/1 are exact in IEEE arithmetic (x+0 is not: -0 + 0 = +0).
      auto fa = ConstFloat(a), fb = ConstFloat(b);
      if ((op == BinaryOp::Mul || op == BinaryOp::Div) && fb && *fb == 1.0) return a;
      if (op == BinaryOp::Mul && fa && *fa == 1.0) return b;
    }
    return nullptr;
  }

  // Both a reference to the same variable (names are unique in a scope, so
  // the same value).
  static bool SameVariable(const Expr& a, const Expr& b) {
    auto* va = As<VarRef>(a);
    auto* vb = As<VarRef>(b);
    return va && vb && va->name == vb->name;
  }

  Expr IntIdentity(BinaryOp op, const Expr& a, const Expr& b, std::optional<int64_t> ca,
                   std::optional<int64_t> cb) {
    auto is = [](std::optional<int64_t> c, int64_t v) { return c && *c == v; };
    switch (op) {
      case BinaryOp::Add:
        if (is(cb, 0)) return a;
        if (is(ca, 0)) return b;
        break;
      case BinaryOp::Sub:
      case BinaryOp::BitOr:
      case BinaryOp::BitXor:
      case BinaryOp::Shl:
      case BinaryOp::Shr:
        if (is(cb, 0)) return a;
        if (is(ca, 0) && (op == BinaryOp::BitOr || op == BinaryOp::BitXor)) return b;
        break;
      case BinaryOp::Mul:
        if (is(cb, 1)) return a;
        if (is(ca, 1)) return b;
        if (is(ca, 0) || is(cb, 0)) return IntOf(0, a->type);
        break;
      case BinaryOp::Div:
        if (is(cb, 1)) return a;
        if (is(ca, 0)) return IntOf(0, a->type);  // x == 0 would be undefined anyway
        break;
      case BinaryOp::Mod:
        if (is(cb, 1)) return IntOf(0, a->type);
        break;
      case BinaryOp::BitAnd:
        if (is(ca, 0) || is(cb, 0)) return IntOf(0, a->type);
        break;
      default: break;
    }
    return nullptr;
  }

  // !c, simplified where that is exact.
  Expr Negate(const Expr& c) {
    if (!c->type.IsBool()) return Binary::Make(BinaryOp::Eq, c, IntOf(0, c->type));
    if (auto* u = As<Unary>(c); u && u->op == UnaryOp::LogicalNot) return u->operand;
    if (auto* b = As<Binary>(c); b && IsComparison(b->op) && !b->a->type.IsFloat()) {
      // Exact for integers and bools; floats have NaN, where !(a < b) != (a >= b).
      static const std::map<BinaryOp, BinaryOp> kInverse = {
          {BinaryOp::Eq, BinaryOp::Ne}, {BinaryOp::Ne, BinaryOp::Eq}, {BinaryOp::Lt, BinaryOp::Ge},
          {BinaryOp::Ge, BinaryOp::Lt}, {BinaryOp::Gt, BinaryOp::Le}, {BinaryOp::Le, BinaryOp::Gt}};
      return Binary::Make(kInverse.at(b->op), b->a, b->b);
    }
    return Unary::Make(UnaryOp::LogicalNot, c);
  }

  // Whether `init` is a constant that `T v = init;` may be propagated as.
  static bool IsPropagatable(const Expr& init) {
    if (init->type.IsBool()) return ConstBool(init).has_value();
    return init->type.IsInteger() && ConstInt(init).has_value();
  }

  Stmt SimplifyStmts(const Block& n, const Stmt& self, bool new_scope) {
    if (new_scope) scopes_.emplace_back();
    // The last statement that assigns, and that declares, each name: a
    // name is assigned after statement k when its last assignment is past
    // k (one scan per statement, not a set per statement: blocks of
    // thousands of statements, an unrolled transpose's, stay linear).
    std::map<std::string, size_t> last_assigned, last_declared;
    for (size_t j = 0; j < n.stmts.size(); ++j) {
      NameScan scan;
      scan.Visit(n.stmts[j]);
      for (const std::string& x : scan.assigned) last_assigned[x] = j;
      for (const std::string& x : scan.declared) last_declared[x] = j;
    }
    auto after = [](const std::map<std::string, size_t>& last, const std::string& name, size_t k) {
      auto it = last.find(name);
      return it != last.end() && it->second > k;
    };
    std::vector<Stmt> out;
    bool changed = false;
    for (size_t k = 0; k < n.stmts.size(); ++k) {
      Stmt s = Mutate(n.stmts[k]);
      changed |= s != n.stmts[k];
      if (auto* d = As<Declare>(s); d && d->init && !d->type.IsArray() && !after(last_assigned, d->name, k)) {
        auto* alias = As<VarRef>(d->init);
        if (IsPropagatable(d->init) || (alias && alias->name != d->name && !after(last_assigned, alias->name, k) &&
                                        !after(last_declared, alias->name, k))) {
          scopes_.back()[d->name] = d->init;
          changed = true;
          continue;
        }
      }
      // A nested block that declares nothing is no scope: splice it in (an
      // empty one just goes; its comments stay).
      if (auto* inner = As<Block>(s)) {
        bool declares = false;
        for (const Stmt& x : inner->stmts) declares |= x->kind == NodeKind::Declare;
        if (!declares) {
          out.insert(out.end(), inner->stmts.begin(), inner->stmts.end());
          changed = true;
          continue;
        }
      }
      out.push_back(s);
    }
    if (new_scope) scopes_.pop_back();
    return changed ? Block::Make(std::move(out)) : self;
  }

  int index_bits_;
  std::vector<std::map<std::string, Expr>> scopes_;
};

}  // namespace

Function Simplify(const Function& f) {
  Function out = f;
  // Each pass can expose more (an inlined loop's constant, a folded
  // condition); the bound only guards against a rewrite cycle.
  for (int pass = 0; pass < 16; ++pass) {
    Stmt body = Simplifier(out).Body(out.body);
    if (body == out.body) break;
    out.body = body;
  }
  return out;
}

}  // namespace tilec::sem
