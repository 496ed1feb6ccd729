#include "compiler/sem/ir.h"

#include <fmt/format.h>

#include <limits>

#include "support/error.h"

namespace tilec::sem {
namespace {

bool IsElementWidth(int width) { return width != 3 && IsValidWidth(width); }

// Whether `v` is representable in an integer value type of width 1. A u64
// constant is a bit pattern, so every int64 is valid for it.
bool FitsInteger(int64_t v, const Type& t) {
  if (t.IsIndex()) return true;  // checked against the function's index width when emitted
  switch (t.dtype) {
    case DataType::I8: return v >= INT8_MIN && v <= INT8_MAX;
    case DataType::I16: return v >= INT16_MIN && v <= INT16_MAX;
    case DataType::I32: return v >= INT32_MIN && v <= INT32_MAX;
    case DataType::I64: return true;
    case DataType::U8: return v >= 0 && v <= UINT8_MAX;
    case DataType::U16: return v >= 0 && v <= UINT16_MAX;
    case DataType::U32: return v >= 0 && v <= int64_t{UINT32_MAX};
    case DataType::U64: return true;
    default: return false;
  }
}

void CheckExpr(const Expr& e, const char* what) {
  TILEC_CHECK(e != nullptr, "sem: {} is null", what);
}

void CheckValue(const Expr& e, const char* what) {
  CheckExpr(e, what);
  TILEC_CHECK(e->type.IsValue(), "sem: {} must be a value, not {}", what, ToString(e->type));
}

// A scalar (width 1) index or integer: loop bounds, subscripts.
void CheckIntegerScalar(const Expr& e, const char* what) {
  CheckValue(e, what);
  TILEC_CHECK(e->type.IsInteger() && e->type.width == 1,
              "sem: {} must be a scalar index or integer, not {}", what, ToString(e->type));
}

// A scalar condition: bool or integer, width 1.
void CheckCondition(const Expr& e, const char* what) {
  CheckValue(e, what);
  TILEC_CHECK((e->type.IsBool() || e->type.IsInteger()) && e->type.width == 1,
              "sem: {} must be a scalar bool or integer, not {}", what, ToString(e->type));
}

void CheckName(const std::string& name) {
  TILEC_CHECK(IsIdentifier(name), "sem: '{}' is not an identifier", name);
}

void CheckType(const Type& t) {
  switch (t.kind) {
    case TypeKind::Void: return;
    case TypeKind::Index:
    case TypeKind::Scalar:
      TILEC_CHECK(IsValidWidth(t.width), "sem: bad vector width {}", t.width);
      return;
    case TypeKind::Pointer:
    case TypeKind::Array:
      TILEC_CHECK(t.elem_kind == TypeKind::Index || t.elem_kind == TypeKind::Scalar,
                  "sem: pointer/array element must be a value");
      TILEC_CHECK(IsElementWidth(t.width), "sem: bad element vector width {}", t.width);
      if (t.IsArray()) {
        TILEC_CHECK(t.count > 0, "sem: array size {} must be positive", t.count);
        TILEC_CHECK(t.space == AddressSpace::Private || t.space == AddressSpace::Local,
                    "sem: arrays live in private or local memory, not {}", Name(t.space));
      }
      return;
  }
}

}  // namespace

// --- Types ---------------------------------------------------------------------

std::string_view Name(AddressSpace space) {
  switch (space) {
    case AddressSpace::Private: return "private";
    case AddressSpace::Global: return "global";
    case AddressSpace::Local: return "local";
    case AddressSpace::Constant: return "constant";
  }
  TILEC_UNREACHABLE("address space");
}

bool IsValidWidth(int width) {
  return width == 1 || width == 2 || width == 3 || width == 4 || width == 8 || width == 16;
}

Type Type::Void() { return Type{}; }

Type Type::Index(int width) {
  Type t;
  t.kind = TypeKind::Index;
  t.width = width;
  CheckType(t);
  return t;
}

Type Type::Scalar(DataType dtype, int width) {
  Type t;
  t.kind = TypeKind::Scalar;
  t.dtype = dtype;
  t.width = width;
  CheckType(t);
  return t;
}

Type Type::Pointer(const Type& elem, AddressSpace space, bool is_const) {
  TILEC_CHECK(elem.IsValue(), "sem: pointer to {}", ToString(elem));
  Type t = elem;
  t.kind = TypeKind::Pointer;
  t.elem_kind = elem.kind;
  t.space = space;
  t.is_const = is_const;
  CheckType(t);
  return t;
}

Type Type::Array(const Type& elem, int64_t count, AddressSpace space) {
  TILEC_CHECK(elem.IsValue(), "sem: array of {}", ToString(elem));
  Type t = elem;
  t.kind = TypeKind::Array;
  t.elem_kind = elem.kind;
  t.count = count;
  t.space = space;
  CheckType(t);
  return t;
}

Type Type::Element() const {
  TILEC_CHECK(IsPointer() || IsArray(), "sem: {} has no element type", ToString(*this));
  return elem_kind == TypeKind::Index ? Index(width) : Scalar(dtype, width);
}

Type Type::WithWidth(int w) const {
  TILEC_CHECK(IsValue(), "sem: {} is not a value type", ToString(*this));
  return IsIndex() ? Index(w) : Scalar(dtype, w);
}

std::string_view ScalarName(DataType dtype) {
  switch (dtype) {
    case DataType::Bool: return "bool";
    case DataType::I8: return "char";
    case DataType::I16: return "short";
    case DataType::I32: return "int";
    case DataType::I64: return "long";
    case DataType::U8: return "uchar";
    case DataType::U16: return "ushort";
    case DataType::U32: return "uint";
    case DataType::U64: return "ulong";
    case DataType::F16: return "half";
    case DataType::F32: return "float";
    case DataType::F64: return "double";
  }
  TILEC_UNREACHABLE("data type");
}

std::string ToString(const Type& t) {
  auto value = [](TypeKind kind, DataType dtype, int width) {
    std::string s = kind == TypeKind::Index ? "index" : std::string(ScalarName(dtype));
    if (width > 1) s += std::to_string(width);
    return s;
  };
  switch (t.kind) {
    case TypeKind::Void: return "void";
    case TypeKind::Index:
    case TypeKind::Scalar: return value(t.kind, t.dtype, t.width);
    case TypeKind::Pointer:
      return fmt::format("{} {}{}*", Name(t.space), t.is_const ? "const " : "",
                         value(t.elem_kind, t.dtype, t.width));
    case TypeKind::Array:
      return fmt::format("{} {}[{}]", Name(t.space), value(t.elem_kind, t.dtype, t.width), t.count);
  }
  TILEC_UNREACHABLE("type kind");
}

// --- Operator tables --------------------------------------------------------------

std::string_view Spelling(BinaryOp op) {
  switch (op) {
#define TILEC_X(e, s, c) \
  case BinaryOp::e: return s;
    TILEC_SEM_BINARY_OPS(TILEC_X)
#undef TILEC_X
  }
  TILEC_UNREACHABLE("binary op");
}

BinaryClass ClassOf(BinaryOp op) {
  switch (op) {
#define TILEC_X(e, s, c) \
  case BinaryOp::e: return BinaryClass::c;
    TILEC_SEM_BINARY_OPS(TILEC_X)
#undef TILEC_X
  }
  TILEC_UNREACHABLE("binary op");
}

bool IsComparison(BinaryOp op) { return ClassOf(op) == BinaryClass::Compare; }

std::string_view Spelling(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: return "-";
    case UnaryOp::BitNot: return "~";
    case UnaryOp::LogicalNot: return "!";
  }
  TILEC_UNREACHABLE("unary op");
}

std::string_view Name(CallFn fn) {
  switch (fn) {
#define TILEC_X(e, n, a) \
  case CallFn::e: return n;
    TILEC_SEM_CALL_FNS(TILEC_X)
#undef TILEC_X
  }
  TILEC_UNREACHABLE("call fn");
}

int Arity(CallFn fn) {
  switch (fn) {
#define TILEC_X(e, n, a) \
  case CallFn::e: return a;
    TILEC_SEM_CALL_FNS(TILEC_X)
#undef TILEC_X
  }
  TILEC_UNREACHABLE("call fn");
}

std::string_view Name(ThreadIndexKind kind) {
  switch (kind) {
    case ThreadIndexKind::LocalId: return "get_local_id";
    case ThreadIndexKind::GroupId: return "get_group_id";
    case ThreadIndexKind::GlobalId: return "get_global_id";
    case ThreadIndexKind::LocalSize: return "get_local_size";
    case ThreadIndexKind::NumGroups: return "get_num_groups";
  }
  TILEC_UNREACHABLE("thread index kind");
}

std::string_view Name(LimitKind kind) {
  switch (kind) {
    case LimitKind::Min: return "min_value";
    case LimitKind::Max: return "max_value";
    case LimitKind::Zero: return "zero";
    case LimitKind::One: return "one";
  }
  TILEC_UNREACHABLE("limit kind");
}

std::string_view Name(MemFence fence) {
  switch (fence) {
    case MemFence::Local: return "local";
    case MemFence::Global: return "global";
    case MemFence::LocalAndGlobal: return "local|global";
  }
  TILEC_UNREACHABLE("mem fence");
}

std::string_view Name(NodeKind kind) {
  switch (kind) {
#define TILEC_X(n, c) \
  case NodeKind::n: return #n;
    TILEC_SEM_NODES(TILEC_X)
#undef TILEC_X
  }
  TILEC_UNREACHABLE("node kind");
}

bool IsIdentifier(std::string_view name) {
  if (name.empty()) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!alpha(name[0])) return false;
  for (char c : name)
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  return true;
}

std::optional<int64_t> ConstInt(const Expr& e) {
  if (auto* c = As<IntConst>(e)) return c->value;
  if (auto* b = As<Broadcast>(e)) return ConstInt(b->value);
  return std::nullopt;
}

std::optional<bool> ConstBool(const Expr& e) {
  if (auto* c = As<BoolConst>(e)) return c->value;
  if (auto* b = As<Broadcast>(e)) return ConstBool(b->value);
  return std::nullopt;
}

// --- Expressions -------------------------------------------------------------------

Expr IntConst::Make(int64_t value, Type type) {
  TILEC_CHECK(type.IsInteger() && type.width == 1, "sem: IntConst of type {}", ToString(type));
  TILEC_CHECK(FitsInteger(value, type), "sem: {} does not fit {}", value, ToString(type));
  return Expr(new IntConst(value, type));
}

Expr FloatConst::Make(double value, Type type) {
  TILEC_CHECK(type.IsFloat() && type.width == 1, "sem: FloatConst of type {}", ToString(type));
  return Expr(new FloatConst(value, type));
}

Expr BoolConst::Make(bool value) { return Expr(new BoolConst(value)); }

Expr LimitConst::Make(LimitKind which, Type type) {
  TILEC_CHECK(type.IsValue() && type.width == 1, "sem: LimitConst of type {}", ToString(type));
  return Expr(new LimitConst(which, type));
}

Expr VarRef::Make(std::string name, Type type) {
  CheckName(name);
  TILEC_CHECK(!type.IsVoid(), "sem: variable '{}' of type void", name);
  return Expr(new VarRef(std::move(name), type));
}

namespace {
// The type a Load of `width` from `base` yields (also what a Store writes).
// With vector elements, a load has width 1 and a store stores one element.
Type AccessType(const Expr& base, const Expr& index, int width, bool is_store) {
  const char* what = is_store ? "store" : "load";
  CheckExpr(base, what);
  TILEC_CHECK(base->type.IsPointer() || (base->type.IsArray() && base->kind == NodeKind::VarRef),
              "sem: {} base must be a pointer or a named array, not {}", what,
              ToString(base->type));
  CheckIntegerScalar(index, "subscript");
  Type elem = base->type.Element();
  TILEC_CHECK(IsValidWidth(width), "sem: {} of width {}", what, width);
  if (elem.width > 1) {
    TILEC_CHECK(width == (is_store ? elem.width : 1), "sem: {} of width {} with elements {}", what,
                width, ToString(elem));
    return elem;
  }
  return elem.WithWidth(width);
}

// A mask must select lanes of a contiguous vector access.
void CheckMask(const Expr& mask, const Expr& base, const Type& t, const char* what) {
  if (!mask) return;
  CheckExpr(mask, "mask");
  TILEC_CHECK(t.width > 1 && base->type.Element().width == 1,
              "sem: masked {} of {} from {}", what, ToString(t), ToString(base->type));
  TILEC_CHECK(mask->type == Type::Bool(t.width), "sem: {} mask of type {} for {}", what,
              ToString(mask->type), ToString(t));
}
}  // namespace

Expr Load::Make(Expr base, Expr index, int width, Expr mask) {
  Type t = AccessType(base, index, width, false);
  CheckMask(mask, base, t, "load");
  return Expr(new Load(t, std::move(base), std::move(index), std::move(mask)));
}

Expr Unary::Make(UnaryOp op, Expr operand) {
  CheckValue(operand, "unary operand");
  const Type& t = operand->type;
  switch (op) {
    case UnaryOp::Neg:
      TILEC_CHECK(!t.IsBool(), "sem: negation of bool");
      break;
    case UnaryOp::BitNot:
      TILEC_CHECK(t.IsInteger(), "sem: ~ of {}", ToString(t));
      break;
    case UnaryOp::LogicalNot:
      TILEC_CHECK(t.IsBool(), "sem: ! of {} (compare with zero instead)", ToString(t));
      break;
  }
  return Expr(new Unary(t, op, std::move(operand)));
}

Expr Binary::Make(BinaryOp op, Expr a, Expr b) {
  CheckExpr(a, "binary operand");
  CheckExpr(b, "binary operand");
  if ((op == BinaryOp::Add || op == BinaryOp::Sub) && a->type.IsPointer()) {
    CheckIntegerScalar(b, "pointer offset");
    Type t = a->type;
    return Expr(new Binary(t, op, std::move(a), std::move(b)));
  }
  CheckValue(a, "binary operand");
  TILEC_CHECK(a->type == b->type, "sem: operands of {} differ: {} vs {}", Spelling(op),
              ToString(a->type), ToString(b->type));
  const Type& t = a->type;
  Type result = t;
  switch (ClassOf(op)) {
    case BinaryClass::Arith:
      TILEC_CHECK(!t.IsBool(), "sem: {} on bool", Spelling(op));
      break;
    case BinaryClass::IntArith:
    case BinaryClass::Shift:
      TILEC_CHECK(t.IsInteger(), "sem: {} on {}", Spelling(op), ToString(t));
      break;
    case BinaryClass::Bit:
      TILEC_CHECK(t.IsInteger() || t.IsBool(), "sem: {} on {}", Spelling(op), ToString(t));
      break;
    case BinaryClass::Logical:
      TILEC_CHECK(t.IsBool(), "sem: {} on {}", Spelling(op), ToString(t));
      break;
    case BinaryClass::Compare:
      result = Type::Bool(t.width);
      break;
  }
  return Expr(new Binary(result, op, std::move(a), std::move(b)));
}

Expr Select::Make(Expr cond, Expr true_value, Expr false_value) {
  CheckValue(cond, "select condition");
  CheckValue(true_value, "select value");
  CheckValue(false_value, "select value");
  Type t = true_value->type;
  TILEC_CHECK(t == false_value->type, "sem: select of {} and {}", ToString(t),
              ToString(false_value->type));
  TILEC_CHECK(cond->type.IsBool() && (cond->type.width == 1 || cond->type.width == t.width),
              "sem: select condition {} for {}", ToString(cond->type), ToString(t));
  return Expr(new Select(t, std::move(cond), std::move(true_value), std::move(false_value)));
}

Expr Cond::Make(Expr cond, Expr true_value, Expr false_value) {
  CheckCondition(cond, "?: condition");
  CheckValue(true_value, "?: value");
  CheckValue(false_value, "?: value");
  Type t = true_value->type;
  TILEC_CHECK(t == false_value->type, "sem: ?: of {} and {}", ToString(t),
              ToString(false_value->type));
  return Expr(new Cond(t, std::move(cond), std::move(true_value), std::move(false_value)));
}

Expr Clamp::Make(Expr value, Expr lo, Expr hi) {
  CheckValue(value, "clamp value");
  CheckValue(lo, "clamp bound");
  CheckValue(hi, "clamp bound");
  Type t = value->type;
  TILEC_CHECK(lo->type == t && hi->type == t, "sem: clamp of {} to {}, {}", ToString(t),
              ToString(lo->type), ToString(hi->type));
  TILEC_CHECK(!t.IsBool(), "sem: clamp of bool");
  return Expr(new Clamp(t, std::move(value), std::move(lo), std::move(hi)));
}

Expr Cast::Make(Type type, Expr value) {
  CheckValue(value, "cast operand");
  TILEC_CHECK(type.IsValue() && type.width == value->type.width, "sem: cast of {} to {}",
              ToString(value->type), ToString(type));
  return Expr(new Cast(type, std::move(value)));
}

Expr Call::Make(CallFn fn, std::vector<Expr> args) {
  TILEC_CHECK(static_cast<int>(args.size()) == Arity(fn), "sem: {} takes {} arguments, got {}",
              Name(fn), Arity(fn), args.size());
  for (const Expr& a : args) CheckValue(a, "call argument");
  Type t = args[0]->type;
  TILEC_CHECK(t.IsFloat(), "sem: {} of {}", Name(fn), ToString(t));
  for (const Expr& a : args)
    TILEC_CHECK(a->type == t, "sem: {} arguments differ: {} vs {}", Name(fn), ToString(t),
                ToString(a->type));
  return Expr(new Call(t, fn, std::move(args)));
}

Expr ThreadIndex::Make(ThreadIndexKind which, int dim) {
  TILEC_CHECK(dim >= 0 && dim < 3, "sem: {}({})", Name(which), dim);
  return Expr(new ThreadIndex(which, dim));
}

Expr Broadcast::Make(Expr value, int width) {
  CheckValue(value, "broadcast operand");
  TILEC_CHECK(value->type.width == 1, "sem: broadcast of vector {}", ToString(value->type));
  TILEC_CHECK(width > 1 && IsValidWidth(width), "sem: broadcast to width {}", width);
  Type t = value->type.WithWidth(width);
  return Expr(new Broadcast(t, std::move(value)));
}

Expr VectorExtract::Make(Expr vector, int lane) {
  CheckValue(vector, "extract operand");
  TILEC_CHECK(vector->type.width > 1, "sem: extract from scalar {}", ToString(vector->type));
  TILEC_CHECK(lane >= 0 && lane < vector->type.width, "sem: lane {} of {}", lane,
              ToString(vector->type));
  Type t = vector->type.WithWidth(1);
  return Expr(new VectorExtract(t, std::move(vector), lane));
}

Expr VectorInsert::Make(Expr vector, int lane, Expr value) {
  CheckValue(vector, "insert operand");
  CheckValue(value, "inserted value");
  TILEC_CHECK(vector->type.width > 1, "sem: insert into scalar {}", ToString(vector->type));
  TILEC_CHECK(lane >= 0 && lane < vector->type.width, "sem: lane {} of {}", lane,
              ToString(vector->type));
  TILEC_CHECK(value->type == vector->type.WithWidth(1), "sem: insert of {} into {}",
              ToString(value->type), ToString(vector->type));
  Type t = vector->type;
  return Expr(new VectorInsert(t, std::move(vector), lane, std::move(value)));
}

Expr VectorShuffle::Make(Expr a, Expr b, std::vector<int> lanes) {
  CheckValue(a, "shuffle operand");
  CheckValue(b, "shuffle operand");
  // Widths 2, 4, 8, 16: what OpenCL's shuffle2 takes.
  auto power_of_two = [](int w) { return w > 1 && w <= 16 && (w & (w - 1)) == 0; };
  TILEC_CHECK(a->type == b->type && power_of_two(a->type.width) && !a->type.IsBool(),
              "sem: shuffle of {} and {}", ToString(a->type), ToString(b->type));
  int width = static_cast<int>(lanes.size());
  TILEC_CHECK(power_of_two(width), "sem: shuffle to width {}", width);
  for (int lane : lanes)
    TILEC_CHECK(lane >= 0 && lane < 2 * a->type.width, "sem: shuffle lane {} of two {}", lane,
                ToString(a->type));
  Type t = a->type.WithWidth(width);
  return Expr(new VectorShuffle(t, std::move(a), std::move(b), std::move(lanes)));
}

// --- Statements -----------------------------------------------------------------

Stmt Declare::Make(std::string name, Type type, Expr init) {
  CheckName(name);
  TILEC_CHECK(type.IsValue() || type.IsPointer() || type.IsArray(), "sem: declare '{}' of {}",
              name, ToString(type));
  if (init) {
    Type want = type.IsArray() ? type.Element() : type;
    TILEC_CHECK(init->type == want, "sem: '{}' of type {} initialized with {}", name,
                ToString(type), ToString(init->type));
    TILEC_CHECK(!(type.IsArray() && type.space == AddressSpace::Local),
                "sem: local array '{}' cannot have an initializer", name);
  }
  return Stmt(new Declare(std::move(name), type, std::move(init)));
}

Expr Declare::Var() const { return VarRef::Make(name, type); }

Stmt Assign::Make(Expr var, Expr value) {
  CheckExpr(var, "assignment target");
  CheckExpr(value, "assigned value");
  TILEC_CHECK(var->kind == NodeKind::VarRef, "sem: assignment to a {}", Name(var->kind));
  TILEC_CHECK(var->type.IsValue() || var->type.IsPointer(), "sem: assignment to {}",
              ToString(var->type));
  TILEC_CHECK(var->type == value->type, "sem: assignment of {} to {}", ToString(value->type),
              ToString(var->type));
  return Stmt(new Assign(std::move(var), std::move(value)));
}

Stmt Store::Make(Expr base, Expr index, Expr value, bool streaming, Expr mask) {
  CheckValue(value, "stored value");
  Type t = AccessType(base, index, value->type.width, true);
  TILEC_CHECK(t == value->type, "sem: store of {} into {}", ToString(value->type),
              ToString(base->type));
  CheckMask(mask, base, t, "store");
  TILEC_CHECK(!(mask && streaming), "sem: a masked store cannot be streaming");
  return Stmt(new Store(std::move(base), std::move(index), std::move(value), streaming,
                        std::move(mask)));
}

Stmt Prefetch::Make(Expr base, Expr index) {
  AccessType(base, index, 1, false);
  TILEC_CHECK(base->type.IsPointer() && base->type.space == AddressSpace::Global,
              "sem: prefetch from {}, not a global pointer", ToString(base->type));
  return Stmt(new Prefetch(std::move(base), std::move(index)));
}

Stmt Block::Make(std::vector<Stmt> stmts) {
  for (const Stmt& s : stmts) TILEC_CHECK(s != nullptr, "sem: null statement in a block");
  return Stmt(new Block(std::move(stmts)));
}

Stmt If::Make(Expr cond, Stmt then_body, Stmt else_body) {
  CheckCondition(cond, "if condition");
  TILEC_CHECK(then_body != nullptr, "sem: if without a body");
  return Stmt(new If(std::move(cond), std::move(then_body), std::move(else_body)));
}

Stmt For::Make(std::string var, Expr begin, Expr end, Expr step, Stmt body, bool unroll) {
  CheckName(var);
  CheckIntegerScalar(begin, "loop begin");
  CheckIntegerScalar(end, "loop end");
  CheckIntegerScalar(step, "loop step");
  TILEC_CHECK(begin->type == end->type && begin->type == step->type,
              "sem: loop '{}' bounds of types {}, {}, {}", var, ToString(begin->type),
              ToString(end->type), ToString(step->type));
  // Only types where `v += step` past the end is undefined rather than a wrap
  // that could loop forever (C promotes narrow types, so they would wrap).
  TILEC_CHECK(begin->type.IsIndex() || begin->type.dtype == DataType::I32 ||
                  begin->type.dtype == DataType::I64,
              "sem: loop '{}' of type {} (want index, int or long)", var,
              ToString(begin->type));
  auto* s = As<IntConst>(step);
  TILEC_CHECK(s && s->value > 0, "sem: loop '{}' needs a constant step > 0", var);
  TILEC_CHECK(body != nullptr, "sem: loop '{}' without a body", var);
  return Stmt(new For(std::move(var), std::move(begin), std::move(end), std::move(step),
                      std::move(body), unroll));
}

Expr For::Var() const { return VarRef::Make(var, begin->type); }

int64_t For::Step() const { return static_cast<const IntConst&>(*step).value; }

Stmt While::Make(Expr cond, Stmt body) {
  CheckCondition(cond, "while condition");
  TILEC_CHECK(body != nullptr, "sem: while without a body");
  return Stmt(new While(std::move(cond), std::move(body)));
}

Stmt Barrier::Make(MemFence fence) { return Stmt(new Barrier(fence)); }

Stmt Return::Make(Expr value) {
  if (value) CheckValue(value, "return value");
  return Stmt(new Return(std::move(value)));
}

Stmt Comment::Make(std::string text) { return Stmt(new Comment(std::move(text))); }

}  // namespace tilec::sem
