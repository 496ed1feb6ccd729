// The sem tree: Tilec's platform-neutral imperative kernel IR.
//
// The code generator builds one `Function` per kernel out of these nodes; the
// simplifier rewrites it; each backend lowers it to its target (hal/opencl to
// OpenCL C, hal/llvm to LLVM IR). Semantics, which every backend must honour:
//
// Types. A value is either of the kernel's *index* type (a signed integer of
// the width the Function chooses, int32 or int64) or of a *scalar* DataType;
// both can be vectors of 2, 3, 4, 8 or 16 lanes. Besides values there are
// pointers (element type, address space Global/Local/Constant/Private,
// const-ness of the pointee) and fixed-size arrays (private per-thread
// accumulators, or __local tiles shared by a work group). Pointer and array
// elements may be vectors, but not 3-lane ones (their storage size differs
// between targets). Arrays are not values: they are only named by a VarRef
// and used as the base of a Load or Store. Bool buffers and arrays hold one
// byte per element, 0 or 1.
//
// Expressions are pure and every node carries its type; operand types must
// agree exactly (no implicit conversions: use Cast and Broadcast). Integer
// arithmetic follows C on the operand type, without C's promotions: a u8 add
// wraps modulo 256. Signed overflow, integer division or remainder by zero,
// shifts by a negative amount or by >= the bit width, and out-of-range float
// to integer casts are undefined; the code generator never produces them.
// `/` truncates toward zero and `%` takes the sign of the dividend. Float Min
// and Max are IEEE minNum/maxNum (fmin/fmax). Clamp(x, lo, hi) means
// Min(Max(x, lo), hi). Comparisons and logical operators yield bool values of
// the operands' width; a vector bool is a per-lane mask. Select evaluates
// both sides (lane-wise for a vector condition); Cond evaluates only the side
// its scalar condition chooses, so it may guard a load. A vector Load or Store
// of width N touches the N contiguous elements base[index .. index+N-1] of a
// scalar-element pointer or array; with a vector-element pointer, index
// counts vectors. A masked Load or Store (a vector access of a scalar-element
// pointer or array with a `mask`, a bool vector of its width) touches only the
// lanes whose mask is true; the other lanes' addresses may lie outside the
// buffer, and a masked load yields 0 in them. `pointer + integer` offsets by
// elements. LimitConst is the
// lowest / highest finite value, zero or one of a type.
//
// Statements. A Block is a scope; a name may be declared once per scope and
// may shadow outer declarations, but a declaration's initializer (and a For
// loop's bounds) may not mention the name being declared. Declare of an
// array may give one element value that fills every element (not for __local
// arrays, which must also be declared in the kernel's outermost block).
// For(v, begin, end, step, body) is `for (v = begin; v < end; v += step)`
// with a constant step > 0; begin, end and step are evaluated once, and the
// body assigns neither v nor anything they read. Barrier is a work-group
// barrier with a memory fence; every thread of a group must reach it, so it
// may not sit under control flow that depends on the thread. Comment is
// ignored by semantics. Verify (verify.h) checks the rules that need context.
//
// Nodes are immutable and shared (`shared_ptr<const>`); they are built only
// through each node's `Make`, which checks the node's own invariants with
// TILEC_CHECK. A Mutator rebuilds only what changed.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tile_lang/types.h"

namespace tilec::sem {

using lang::DataType;

// ---------------------------------------------------------------------------
// Types

enum class AddressSpace : uint8_t { Private, Global, Local, Constant };
std::string_view Name(AddressSpace space);  // "private", "global", "local", "constant"

enum class TypeKind : uint8_t { Void, Index, Scalar, Pointer, Array };

// A value, pointer or array type. For Index and Scalar, `dtype` (Scalar only)
// and `width` describe the value; for Pointer and Array they describe the
// element, whose kind is `elem_kind`. Unused fields keep their defaults, so
// `==` is structural equality.
struct Type {
  TypeKind kind = TypeKind::Void;
  TypeKind elem_kind = TypeKind::Void;  // Pointer/Array: Index or Scalar
  DataType dtype = DataType::I32;       // Scalar value or element; I32 when unused
  int width = 1;                        // lanes of the value or element
  AddressSpace space = AddressSpace::Private;  // Pointer: pointee's space; Array: storage
  bool is_const = false;                // Pointer: pointee is read-only
  int64_t count = 0;                    // Array: number of elements

  static Type Void();
  static Type Index(int width = 1);
  static Type Scalar(DataType dtype, int width = 1);
  static Type Bool(int width = 1) { return Scalar(DataType::Bool, width); }
  static Type Pointer(const Type& elem, AddressSpace space, bool is_const = false);
  static Type Array(const Type& elem, int64_t count, AddressSpace space = AddressSpace::Private);

  bool IsVoid() const { return kind == TypeKind::Void; }
  bool IsIndex() const { return kind == TypeKind::Index; }
  bool IsScalar() const { return kind == TypeKind::Scalar; }  // of any width
  bool IsValue() const { return IsIndex() || IsScalar(); }
  bool IsPointer() const { return kind == TypeKind::Pointer; }
  bool IsArray() const { return kind == TypeKind::Array; }
  bool IsVector() const { return IsValue() && width > 1; }
  bool IsBool() const { return IsScalar() && dtype == DataType::Bool; }
  bool IsFloat() const { return IsScalar() && lang::IsFloat(dtype); }
  // Index or a signed/unsigned integer DataType (not bool).
  bool IsInteger() const { return IsIndex() || (IsScalar() && lang::IsInteger(dtype)); }
  bool IsUnsigned() const { return IsScalar() && lang::IsUnsigned(dtype); }

  Type Element() const;         // Pointer/Array: the element value type
  Type WithWidth(int w) const;  // Index/Scalar: the same type with w lanes

  bool operator==(const Type&) const = default;
};

// C-like spelling: "float", "float4", "index", "bool", "global const float*",
// "local float[1572]".
std::string ToString(const Type& t);
// The element's spelling of a Scalar: "float", "half", "uchar", … (width 1).
std::string_view ScalarName(DataType dtype);

// True for the vector widths a value may have: 1, 2, 3, 4, 8, 16.
bool IsValidWidth(int width);

// ---------------------------------------------------------------------------
// Operators (typed enums; each list drives its enum and spelling)

// (enumerator, spelling, class). Classes: Arith (numeric, not bool), IntArith
// (integers only), Bit (integers or bool), Shift (integers), Logical (bool),
// Compare (any value; yields bool).
#define TILEC_SEM_BINARY_OPS(X) \
  X(Add, "+", Arith)            \
  X(Sub, "-", Arith)            \
  X(Mul, "*", Arith)            \
  X(Div, "/", Arith)            \
  X(Mod, "%", IntArith)         \
  X(Min, "min", Arith)          \
  X(Max, "max", Arith)          \
  X(BitAnd, "&", Bit)           \
  X(BitOr, "|", Bit)            \
  X(BitXor, "^", Bit)           \
  X(Shl, "<<", Shift)           \
  X(Shr, ">>", Shift)           \
  X(LogicalAnd, "&&", Logical)  \
  X(LogicalOr, "||", Logical)   \
  X(Eq, "==", Compare)          \
  X(Ne, "!=", Compare)          \
  X(Lt, "<", Compare)           \
  X(Gt, ">", Compare)           \
  X(Le, "<=", Compare)          \
  X(Ge, ">=", Compare)

enum class BinaryOp : uint8_t {
#define TILEC_X(e, s, c) e,
  TILEC_SEM_BINARY_OPS(TILEC_X)
#undef TILEC_X
};
enum class BinaryClass : uint8_t { Arith, IntArith, Bit, Shift, Logical, Compare };
std::string_view Spelling(BinaryOp op);  // "+", "min", "&&", …
BinaryClass ClassOf(BinaryOp op);
bool IsComparison(BinaryOp op);

enum class UnaryOp : uint8_t { Neg, BitNot, LogicalNot };
std::string_view Spelling(UnaryOp op);  // "-", "~", "!"

// Math functions: (enumerator, name, arity). All take and return one float
// type (any width). Fma is the exactly rounded a*b+c; Mad may be less exact.
#define TILEC_SEM_CALL_FNS(X) \
  X(Exp, "exp", 1)            \
  X(Log, "log", 1)            \
  X(Sqrt, "sqrt", 1)          \
  X(Pow, "pow", 2)            \
  X(Tanh, "tanh", 1)          \
  X(Sin, "sin", 1)            \
  X(Cos, "cos", 1)            \
  X(Tan, "tan", 1)            \
  X(Sinh, "sinh", 1)          \
  X(Cosh, "cosh", 1)          \
  X(Asin, "asin", 1)          \
  X(Acos, "acos", 1)          \
  X(Atan, "atan", 1)          \
  X(Erf, "erf", 1)            \
  X(Fabs, "fabs", 1)          \
  X(Floor, "floor", 1)        \
  X(Ceil, "ceil", 1)          \
  X(Round, "round", 1)        \
  X(Fma, "fma", 3)            \
  X(Mad, "mad", 3)            \
  X(Fmod, "fmod", 2)

enum class CallFn : uint8_t {
#define TILEC_X(e, n, a) e,
  TILEC_SEM_CALL_FNS(TILEC_X)
#undef TILEC_X
};
std::string_view Name(CallFn fn);  // "exp"; round is C's (half away from zero)
int Arity(CallFn fn);

enum class ThreadIndexKind : uint8_t { LocalId, GroupId, GlobalId, LocalSize, NumGroups };
std::string_view Name(ThreadIndexKind kind);  // "get_local_id", …

enum class LimitKind : uint8_t { Min, Max, Zero, One };
std::string_view Name(LimitKind kind);  // "min_value", "max_value", "zero", "one"

enum class MemFence : uint8_t { Local, Global, LocalAndGlobal };
std::string_view Name(MemFence fence);  // "local", "global", "local|global"

// ---------------------------------------------------------------------------
// Nodes: every kind listed once, with its category (the handle type).

#define TILEC_SEM_NODES(X) \
  X(IntConst, Expr)        \
  X(FloatConst, Expr)      \
  X(BoolConst, Expr)       \
  X(LimitConst, Expr)      \
  X(VarRef, Expr)          \
  X(Load, Expr)            \
  X(Unary, Expr)           \
  X(Binary, Expr)          \
  X(Select, Expr)          \
  X(Cond, Expr)            \
  X(Clamp, Expr)           \
  X(Cast, Expr)            \
  X(Call, Expr)            \
  X(ThreadIndex, Expr)     \
  X(Broadcast, Expr)       \
  X(VectorExtract, Expr)   \
  X(VectorInsert, Expr)    \
  X(VectorShuffle, Expr)   \
  X(Declare, Stmt)         \
  X(Assign, Stmt)          \
  X(Store, Stmt)           \
  X(Prefetch, Stmt)        \
  X(Block, Stmt)           \
  X(If, Stmt)              \
  X(For, Stmt)             \
  X(While, Stmt)           \
  X(Barrier, Stmt)         \
  X(Return, Stmt)          \
  X(Comment, Stmt)

enum class NodeKind : uint8_t {
#define TILEC_X(n, c) n,
  TILEC_SEM_NODES(TILEC_X)
#undef TILEC_X
};
std::string_view Name(NodeKind kind);  // "IntConst", …

struct Node {
  const NodeKind kind;
  virtual ~Node() = default;

 protected:
  explicit Node(NodeKind k) : kind(k) {}
};

struct ExprNode : Node {
  const Type type;

 protected:
  ExprNode(NodeKind k, Type t) : Node(k), type(t) {}
};

struct StmtNode : Node {
 protected:
  explicit StmtNode(NodeKind k) : Node(k) {}
};

using Expr = std::shared_ptr<const ExprNode>;
using Stmt = std::shared_ptr<const StmtNode>;

// The node as a T if it is one, else nullptr: `if (auto* c = As<IntConst>(e))`.
template <typename T, typename N>
const T* As(const std::shared_ptr<const N>& node) {
  return node && node->kind == T::kKind ? static_cast<const T*>(node.get()) : nullptr;
}

// The value of an IntConst, or of a Broadcast of one.
std::optional<int64_t> ConstInt(const Expr& e);
// The value of a BoolConst, or of a Broadcast of one.
std::optional<bool> ConstBool(const Expr& e);

// --- Expressions ------------------------------------------------------------

// An integer constant of index or integer type (width 1). `value` must fit the
// type; a u64 constant is stored as its two's-complement bit pattern.
struct IntConst final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::IntConst;
  const int64_t value;
  static Expr Make(int64_t value, Type type = Type::Index());

 private:
  IntConst(int64_t v, Type t) : ExprNode(kKind, t), value(v) {}
};

// A float constant of a float type (width 1); converted to the type when emitted.
struct FloatConst final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::FloatConst;
  const double value;
  static Expr Make(double value, Type type = Type::Scalar(DataType::F32));

 private:
  FloatConst(double v, Type t) : ExprNode(kKind, t), value(v) {}
};

struct BoolConst final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::BoolConst;
  const bool value;
  static Expr Make(bool value);

 private:
  explicit BoolConst(bool v) : ExprNode(kKind, Type::Bool()), value(v) {}
};

// Lowest/highest finite value, zero or one of a value type (width 1).
struct LimitConst final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::LimitConst;
  const LimitKind which;
  static Expr Make(LimitKind which, Type type);

 private:
  LimitConst(LimitKind w, Type t) : ExprNode(kKind, t), which(w) {}
};

// A use of a parameter, declared variable or loop variable. `type` must be
// the declared type (Verify checks).
struct VarRef final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::VarRef;
  const std::string name;
  static Expr Make(std::string name, Type type);

 private:
  VarRef(std::string n, Type t) : ExprNode(kKind, t), name(std::move(n)) {}
};

// base[index], or `width` contiguous elements from base[index] (see top),
// only the lanes `mask` selects when it is not null.
struct Load final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Load;
  const Expr base;   // a pointer, or a VarRef of an array
  const Expr index;  // index or integer scalar
  const Expr mask;   // null, or a bool vector of the load's width
  static Expr Make(Expr base, Expr index, int width = 1, Expr mask = nullptr);

 private:
  Load(Type t, Expr b, Expr i, Expr m)
      : ExprNode(kKind, t), base(std::move(b)), index(std::move(i)), mask(std::move(m)) {}
};

struct Unary final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Unary;
  const UnaryOp op;
  const Expr operand;
  static Expr Make(UnaryOp op, Expr operand);

 private:
  Unary(Type t, UnaryOp o, Expr a) : ExprNode(kKind, t), op(o), operand(std::move(a)) {}
};

// a op b with a and b of one type; also pointer +/- integer.
struct Binary final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Binary;
  const BinaryOp op;
  const Expr a, b;
  static Expr Make(BinaryOp op, Expr a, Expr b);

 private:
  Binary(Type t, BinaryOp o, Expr x, Expr y)
      : ExprNode(kKind, t), op(o), a(std::move(x)), b(std::move(y)) {}
};

// Eager choice: both sides evaluated. cond: bool of width 1 or of the values' width.
struct Select final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Select;
  const Expr cond, true_value, false_value;
  static Expr Make(Expr cond, Expr true_value, Expr false_value);

 private:
  Select(Type t, Expr c, Expr x, Expr y)
      : ExprNode(kKind, t), cond(std::move(c)), true_value(std::move(x)), false_value(std::move(y)) {}
};

// Lazy `cond ? t : f`; cond is a scalar bool or integer (non-zero = true).
struct Cond final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Cond;
  const Expr cond, true_value, false_value;
  static Expr Make(Expr cond, Expr true_value, Expr false_value);

 private:
  Cond(Type t, Expr c, Expr x, Expr y)
      : ExprNode(kKind, t), cond(std::move(c)), true_value(std::move(x)), false_value(std::move(y)) {}
};

// min(max(value, lo), hi), all of one numeric type.
struct Clamp final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Clamp;
  const Expr value, lo, hi;
  static Expr Make(Expr value, Expr lo, Expr hi);

 private:
  Clamp(Type t, Expr v, Expr l, Expr h)
      : ExprNode(kKind, t), value(std::move(v)), lo(std::move(l)), hi(std::move(h)) {}
};

// Conversion between value types of one width (C conversion; to bool = != 0).
struct Cast final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Cast;
  const Expr value;
  static Expr Make(Type type, Expr value);

 private:
  Cast(Type t, Expr v) : ExprNode(kKind, t), value(std::move(v)) {}
};

struct Call final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Call;
  const CallFn fn;
  const std::vector<Expr> args;
  static Expr Make(CallFn fn, std::vector<Expr> args);

 private:
  Call(Type t, CallFn f, std::vector<Expr> a) : ExprNode(kKind, t), fn(f), args(std::move(a)) {}
};

// A work-item coordinate (dim 0..2), of index type.
struct ThreadIndex final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::ThreadIndex;
  const ThreadIndexKind which;
  const int dim;
  static Expr Make(ThreadIndexKind which, int dim);

 private:
  ThreadIndex(ThreadIndexKind w, int d) : ExprNode(kKind, Type::Index()), which(w), dim(d) {}
};

// A scalar repeated in every lane of a `width`-lane vector.
struct Broadcast final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Broadcast;
  const Expr value;
  static Expr Make(Expr value, int width);

 private:
  Broadcast(Type t, Expr v) : ExprNode(kKind, t), value(std::move(v)) {}
};

// Lane `lane` (a constant) of a vector.
struct VectorExtract final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::VectorExtract;
  const Expr vector;
  const int lane;
  static Expr Make(Expr vector, int lane);

 private:
  VectorExtract(Type t, Expr v, int l) : ExprNode(kKind, t), vector(std::move(v)), lane(l) {}
};

// The vector with lane `lane` replaced by a scalar.
struct VectorInsert final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::VectorInsert;
  const Expr vector;
  const int lane;
  const Expr value;
  static Expr Make(Expr vector, int lane, Expr value);

 private:
  VectorInsert(Type t, Expr v, int l, Expr x)
      : ExprNode(kKind, t), vector(std::move(v)), lane(l), value(std::move(x)) {}
};

// Lanes picked from two vectors of one type: lane i of the result is lane
// lanes[i] of `a` if it is below a's width, else lane lanes[i] - width of
// `b` (LLVM's shufflevector, OpenCL's shuffle2). The result has
// lanes.size() lanes.
struct VectorShuffle final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::VectorShuffle;
  const Expr a;
  const Expr b;
  const std::vector<int> lanes;
  static Expr Make(Expr a, Expr b, std::vector<int> lanes);

 private:
  VectorShuffle(Type t, Expr x, Expr y, std::vector<int> l)
      : ExprNode(kKind, t), a(std::move(x)), b(std::move(y)), lanes(std::move(l)) {}
};

// --- Statements -------------------------------------------------------------

// `type name [= init];` For an array, init (optional) is one element value
// that fills the array.
struct Declare final : StmtNode {
  static constexpr NodeKind kKind = NodeKind::Declare;
  const std::string name;
  const Type type;
  const Expr init;  // may be null
  static Stmt Make(std::string name, Type type, Expr init = nullptr);
  Expr Var() const;  // a VarRef to the declared variable

 private:
  Declare(std::string n, Type t, Expr i)
      : StmtNode(kKind), name(std::move(n)), type(t), init(std::move(i)) {}
};

// `var = value;` to a scalar, vector or pointer variable.
struct Assign final : StmtNode {
  static constexpr NodeKind kKind = NodeKind::Assign;
  const Expr var;  // a VarRef
  const Expr value;
  static Stmt Make(Expr var, Expr value);

 private:
  Assign(Expr v, Expr x) : StmtNode(kKind), var(std::move(v)), value(std::move(x)) {}
};

// `base[index] = value;` — a vector value stores contiguous elements (see top).
// `streaming`: a hint that the data will not be read again soon, and a
// promise that the address is aligned to the value's size (a vector of W
// elements at an index that is a multiple of W, in a buffer aligned to 64
// bytes); CPU backends then store around the caches (non-temporal stores).
// `mask` (null, or a bool vector of the value's width): only those lanes are
// written (see top); not with `streaming`.
struct Store final : StmtNode {
  static constexpr NodeKind kKind = NodeKind::Store;
  const Expr base, index, value;
  const bool streaming = false;
  const Expr mask;
  static Stmt Make(Expr base, Expr index, Expr value, bool streaming = false, Expr mask = nullptr);

 private:
  Store(Expr b, Expr i, Expr v, bool s, Expr m)
      : StmtNode(kKind), base(std::move(b)), index(std::move(i)), value(std::move(v)), streaming(s),
        mask(std::move(m)) {}
};

// `prefetch(base[index]);` — a hint that base[index], in a global buffer,
// is read soon: CPU backends fetch its cache line towards L1 while the
// code goes on (llvm.prefetch), OpenCL C calls prefetch(). It reads
// nothing and changes nothing, so a backend may drop it; the index must
// still be inside the buffer.
struct Prefetch final : StmtNode {
  static constexpr NodeKind kKind = NodeKind::Prefetch;
  const Expr base, index;
  static Stmt Make(Expr base, Expr index);

 private:
  Prefetch(Expr b, Expr i) : StmtNode(kKind), base(std::move(b)), index(std::move(i)) {}
};

// A scope holding statements in order.
struct Block final : StmtNode {
  static constexpr NodeKind kKind = NodeKind::Block;
  const std::vector<Stmt> stmts;
  static Stmt Make(std::vector<Stmt> stmts);

 private:
  explicit Block(std::vector<Stmt> s) : StmtNode(kKind), stmts(std::move(s)) {}
};

// cond is a scalar bool or integer; else_body may be null.
struct If final : StmtNode {
  static constexpr NodeKind kKind = NodeKind::If;
  const Expr cond;
  const Stmt then_body, else_body;
  static Stmt Make(Expr cond, Stmt then_body, Stmt else_body = nullptr);

 private:
  If(Expr c, Stmt t, Stmt e)
      : StmtNode(kKind), cond(std::move(c)), then_body(std::move(t)), else_body(std::move(e)) {}
};

// for (var = begin; var < end; var += step) body — see top for the rules.
struct For final : StmtNode {
  static constexpr NodeKind kKind = NodeKind::For;
  const std::string var;
  const Expr begin, end, step;  // index, int or long; step an IntConst > 0
  const Stmt body;
  // False: the backends must not unroll the loop (its body is already a
  // register block; unrolled, the loads of every iteration are hoisted
  // together and spill: `#pragma unroll 1` in OpenCL C,
  // llvm.loop.unroll.disable in LLVM IR). True: the backend decides.
  const bool unroll = true;
  static Stmt Make(std::string var, Expr begin, Expr end, Expr step, Stmt body, bool unroll = true);
  Expr Var() const;  // a VarRef to the loop variable
  int64_t Step() const;

 private:
  For(std::string v, Expr b, Expr e, Expr s, Stmt body, bool unroll)
      : StmtNode(kKind), var(std::move(v)), begin(std::move(b)), end(std::move(e)),
        step(std::move(s)), body(std::move(body)), unroll(unroll) {}
};

struct While final : StmtNode {
  static constexpr NodeKind kKind = NodeKind::While;
  const Expr cond;  // scalar bool or integer
  const Stmt body;
  static Stmt Make(Expr cond, Stmt body);

 private:
  While(Expr c, Stmt b) : StmtNode(kKind), cond(std::move(c)), body(std::move(b)) {}
};

struct Barrier final : StmtNode {
  static constexpr NodeKind kKind = NodeKind::Barrier;
  const MemFence fence;
  static Stmt Make(MemFence fence = MemFence::Local);

 private:
  explicit Barrier(MemFence f) : StmtNode(kKind), fence(f) {}
};

struct Return final : StmtNode {
  static constexpr NodeKind kKind = NodeKind::Return;
  const Expr value;  // null in a void function
  static Stmt Make(Expr value = nullptr);

 private:
  explicit Return(Expr v) : StmtNode(kKind), value(std::move(v)) {}
};

// `// text` (each line of a multi-line text becomes one comment line).
struct Comment final : StmtNode {
  static constexpr NodeKind kKind = NodeKind::Comment;
  const std::string text;
  static Stmt Make(std::string text);

 private:
  explicit Comment(std::string t) : StmtNode(kKind), text(std::move(t)) {}
};

// ---------------------------------------------------------------------------
// Functions and modules

struct Param {
  std::string name;
  Type type;             // a value or a pointer
  bool noalias = false;  // pointer: no other parameter reaches the same memory (`restrict`)
};

// A kernel (or helper) function. Kernels return void; a work-group size, when
// known, lets backends specialize (OpenCL reqd_work_group_size).
struct Function {
  std::string name;
  std::vector<Param> params;
  Type return_type = Type::Void();
  Stmt body;                               // a Block
  DataType index_type = DataType::I32;     // I32 or I64: what the index type means
  std::optional<std::array<int64_t, 3>> work_group_size;
  bool is_kernel = true;
};

struct Module {
  std::vector<Function> functions;
};

// True if `name` is a C identifier ([A-Za-z_][A-Za-z0-9_]*).
bool IsIdentifier(std::string_view name);

// ---------------------------------------------------------------------------
// Traversal

// Walks a tree; each Visit<Kind> by default visits the node's children in
// order. Override the kinds of interest and call the base to keep walking.
class Visitor {
 public:
  virtual ~Visitor() = default;
  void Visit(const Expr& e);  // null is ignored
  void Visit(const Stmt& s);

 protected:
#define TILEC_X(n, c) virtual void Visit##n(const n& node);
  TILEC_SEM_NODES(TILEC_X)
#undef TILEC_X
};

// Rebuilds a tree bottom-up; each Mutate<Kind> by default mutates the node's
// children and returns `self` when none changed, else a new node made with
// the new children (so types are re-checked).
class Mutator {
 public:
  virtual ~Mutator() = default;
  Expr Mutate(const Expr& e);  // null in, null out
  Stmt Mutate(const Stmt& s);

 protected:
#define TILEC_X(n, c) virtual c Mutate##n(const n& node, const c& self);
  TILEC_SEM_NODES(TILEC_X)
#undef TILEC_X
};

}  // namespace tilec::sem
