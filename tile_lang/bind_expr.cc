// Elementwise expressions: SSA splitting, typing, broadcasting and constant
// folding.
//
// Typing follows PlaidML's upcast (types.h Promote) over the value operands,
// with ONE deliberate deviation: literals and folded constants are "weak".
// PlaidML types an integer literal as i32 and a float literal as f32, so
// `A_f16 * 2.0` or `A_i8 + 1` silently widen the result; users write such
// expressions meaning "in A's type". Here a constant has no type of its own:
//  * an integer constant takes the promoted type of the tensor operands it
//    meets (i32 if that is bool);
//  * a float constant takes that type if it is a float, f32 otherwise;
//  * with no tensor operand at all, an integer constant is i32 and a float
//    constant f32.
// The op's compute type is then Promote over all value operands in order.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "support/error.h"
#include "tile_lang/bind_context.h"

namespace tilec::lang::bind {
namespace {

enum class Category { Arith, Bit, Compare, Logical, Cond, Math, Other };

Category CategoryOf(ElemFn fn) {
  switch (fn) {
    case ElemFn::BitNot: case ElemFn::BitAnd: case ElemFn::BitOr: case ElemFn::BitXor:
    case ElemFn::Shl: case ElemFn::Shr:
      return Category::Bit;
    case ElemFn::CmpEq: case ElemFn::CmpNe: case ElemFn::CmpLt: case ElemFn::CmpGt:
    case ElemFn::CmpLe: case ElemFn::CmpGe:
      return Category::Compare;
    case ElemFn::LogicalAnd: case ElemFn::LogicalOr: case ElemFn::LogicalNot:
      return Category::Logical;
    case ElemFn::Cond:
      return Category::Cond;
    case ElemFn::Exp: case ElemFn::Log: case ElemFn::Sqrt: case ElemFn::Pow: case ElemFn::Tanh:
    case ElemFn::Sin: case ElemFn::Cos: case ElemFn::Tan: case ElemFn::Sinh: case ElemFn::Cosh:
    case ElemFn::Asin: case ElemFn::Acos: case ElemFn::Atan: case ElemFn::Floor:
    case ElemFn::Ceil: case ElemFn::Round: case ElemFn::Sigmoid: case ElemFn::Erf:
      return Category::Math;
    case ElemFn::Cast: case ElemFn::Index:
      return Category::Other;
    default:
      return Category::Arith;  // ident neg add sub mul div mod abs min max
  }
}

ElemFn FnOf(ast::BinaryOp op) {
  switch (op) {
    case ast::BinaryOp::LogicalOr: return ElemFn::LogicalOr;
    case ast::BinaryOp::LogicalAnd: return ElemFn::LogicalAnd;
    case ast::BinaryOp::BitXor: return ElemFn::BitXor;
    case ast::BinaryOp::BitOr: return ElemFn::BitOr;
    case ast::BinaryOp::BitAnd: return ElemFn::BitAnd;
    case ast::BinaryOp::Eq: return ElemFn::CmpEq;
    case ast::BinaryOp::Ne: return ElemFn::CmpNe;
    case ast::BinaryOp::Lt: return ElemFn::CmpLt;
    case ast::BinaryOp::Gt: return ElemFn::CmpGt;
    case ast::BinaryOp::Le: return ElemFn::CmpLe;
    case ast::BinaryOp::Ge: return ElemFn::CmpGe;
    case ast::BinaryOp::Shl: return ElemFn::Shl;
    case ast::BinaryOp::Shr: return ElemFn::Shr;
    case ast::BinaryOp::Add: return ElemFn::Add;
    case ast::BinaryOp::Sub: return ElemFn::Sub;
    case ast::BinaryOp::Mul: return ElemFn::Mul;
    case ast::BinaryOp::Div: return ElemFn::Div;
    case ast::BinaryOp::Mod: return ElemFn::Mod;
  }
  TILEC_UNREACHABLE("bad BinaryOp {}", static_cast<int>(op));
}

// ---- constant folding ------------------------------------------------------

struct Folder {
  const Context& ctx;
  const SourceSpan& span;
  std::string_view what;

  [[noreturn]] void Overflow() const {
    ctx.Fail(span, "integer overflow in constant expression {}", what);
  }
  int64_t Add(int64_t a, int64_t b) const {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) Overflow();
    return r;
  }
  int64_t Sub(int64_t a, int64_t b) const {
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r)) Overflow();
    return r;
  }
  int64_t Mul(int64_t a, int64_t b) const {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) Overflow();
    return r;
  }
  void NonZero(const Const& b) const {
    if (!b.IsTrue()) ctx.Fail(span, "division by zero in constant expression");
  }
  void IntegerOnly(const std::vector<Const>& cs) const {
    for (const auto& c : cs)
      if (c.is_float) ctx.Fail(span, "bitwise operator {} needs integer operands, got {}", what, ToString(c));
  }

  Const Fold(ElemFn fn, const std::vector<Const>& c) const {
    auto any_float = [&](size_t from) {
      for (size_t k = from; k < c.size(); ++k)
        if (c[k].is_float) return true;
      return false;
    };
    auto math = [&](double (*f)(double)) { return Const::Float(f(c[0].AsDouble())); };
    auto boolean = [](bool b) { return Const::Int(b ? 1 : 0); };
    switch (fn) {
      case ElemFn::Ident: return c[0];
      case ElemFn::Neg:
        if (c[0].is_float) return Const::Float(-c[0].f);
        return Const::Int(Sub(0, c[0].i));
      case ElemFn::Add:
        return any_float(0) ? Const::Float(c[0].AsDouble() + c[1].AsDouble()) : Const::Int(Add(c[0].i, c[1].i));
      case ElemFn::Sub:
        return any_float(0) ? Const::Float(c[0].AsDouble() - c[1].AsDouble()) : Const::Int(Sub(c[0].i, c[1].i));
      case ElemFn::Mul:
        return any_float(0) ? Const::Float(c[0].AsDouble() * c[1].AsDouble()) : Const::Int(Mul(c[0].i, c[1].i));
      case ElemFn::Div:
        NonZero(c[1]);
        if (any_float(0)) return Const::Float(c[0].AsDouble() / c[1].AsDouble());
        if (c[0].i == std::numeric_limits<int64_t>::min() && c[1].i == -1) Overflow();
        return Const::Int(c[0].i / c[1].i);  // C: truncates toward zero
      case ElemFn::Mod:
        NonZero(c[1]);
        if (any_float(0)) return Const::Float(std::fmod(c[0].AsDouble(), c[1].AsDouble()));
        if (c[1].i == -1) return Const::Int(0);  // INT64_MIN % -1 is UB in C++
        return Const::Int(c[0].i % c[1].i);
      case ElemFn::CmpEq: return boolean(any_float(0) ? c[0].AsDouble() == c[1].AsDouble() : c[0].i == c[1].i);
      case ElemFn::CmpNe: return boolean(any_float(0) ? c[0].AsDouble() != c[1].AsDouble() : c[0].i != c[1].i);
      case ElemFn::CmpLt: return boolean(any_float(0) ? c[0].AsDouble() < c[1].AsDouble() : c[0].i < c[1].i);
      case ElemFn::CmpGt: return boolean(any_float(0) ? c[0].AsDouble() > c[1].AsDouble() : c[0].i > c[1].i);
      case ElemFn::CmpLe: return boolean(any_float(0) ? c[0].AsDouble() <= c[1].AsDouble() : c[0].i <= c[1].i);
      case ElemFn::CmpGe: return boolean(any_float(0) ? c[0].AsDouble() >= c[1].AsDouble() : c[0].i >= c[1].i);
      case ElemFn::BitAnd: IntegerOnly(c); return Const::Int(c[0].i & c[1].i);
      case ElemFn::BitOr: IntegerOnly(c); return Const::Int(c[0].i | c[1].i);
      case ElemFn::BitXor: IntegerOnly(c); return Const::Int(c[0].i ^ c[1].i);
      case ElemFn::BitNot: IntegerOnly(c); return Const::Int(~c[0].i);
      case ElemFn::Shl:
      case ElemFn::Shr: {
        IntegerOnly(c);
        if (c[1].i < 0 || c[1].i >= 64)
          ctx.Fail(span, "shift amount {} is out of range [0, 64) in constant expression", c[1].i);
        if (fn == ElemFn::Shr) return Const::Int(c[0].i >> c[1].i);
        return Const::Int(static_cast<int64_t>(static_cast<uint64_t>(c[0].i) << c[1].i));
      }
      case ElemFn::LogicalAnd: return boolean(c[0].IsTrue() && c[1].IsTrue());
      case ElemFn::LogicalOr: return boolean(c[0].IsTrue() || c[1].IsTrue());
      case ElemFn::LogicalNot: return boolean(!c[0].IsTrue());
      case ElemFn::Cond: {
        Const r = c[0].IsTrue() ? c[1] : c[2];
        // The result has the branches' common (weak) kind.
        if (any_float(1) && !r.is_float) r = Const::Float(r.AsDouble());
        return r;
      }
      case ElemFn::Exp: return math(std::exp);
      case ElemFn::Log: return math(std::log);
      case ElemFn::Sqrt: return math(std::sqrt);
      case ElemFn::Pow: return Const::Float(std::pow(c[0].AsDouble(), c[1].AsDouble()));
      case ElemFn::Tanh: return math(std::tanh);
      case ElemFn::Sin: return math(std::sin);
      case ElemFn::Cos: return math(std::cos);
      case ElemFn::Tan: return math(std::tan);
      case ElemFn::Sinh: return math(std::sinh);
      case ElemFn::Cosh: return math(std::cosh);
      case ElemFn::Asin: return math(std::asin);
      case ElemFn::Acos: return math(std::acos);
      case ElemFn::Atan: return math(std::atan);
      case ElemFn::Erf: return math(std::erf);
      case ElemFn::Floor: return math(std::floor);
      case ElemFn::Ceil: return math(std::ceil);
      case ElemFn::Round: return math(std::round);
      case ElemFn::Sigmoid: return Const::Float(1.0 / (1.0 + std::exp(-c[0].AsDouble())));
      case ElemFn::Abs:
        if (c[0].is_float) return Const::Float(std::fabs(c[0].f));
        return Const::Int(c[0].i < 0 ? Sub(0, c[0].i) : c[0].i);
      case ElemFn::Min:
        if (any_float(0)) return Const::Float(std::fmin(c[0].AsDouble(), c[1].AsDouble()));
        return Const::Int(std::min(c[0].i, c[1].i));
      case ElemFn::Max:
        if (any_float(0)) return Const::Float(std::fmax(c[0].AsDouble(), c[1].AsDouble()));
        return Const::Int(std::max(c[0].i, c[1].i));
      case ElemFn::Cast:
      case ElemFn::Index:
        break;
    }
    TILEC_UNREACHABLE("cannot fold {}", Name(fn));
  }
};

// ---- typing ----------------------------------------------------------------

// See the file comment: the compute type over the value operands args[first..].
DataType PromoteOperands(const Context& ctx, const std::vector<Value>& args, size_t first) {
  std::optional<DataType> tensors;
  bool any_float_const = false;
  for (size_t k = first; k < args.size(); ++k) {
    if (args[k].kind == Value::Kind::Tensor) {
      DataType t = ctx.ShapeOf(args[k].name).dtype;
      tensors = tensors ? Promote(*tensors, t) : t;
    } else {
      any_float_const = any_float_const || args[k].c.is_float;
    }
  }
  if (!tensors) return any_float_const ? DataType::F32 : DataType::I32;
  std::optional<DataType> result;
  for (size_t k = first; k < args.size(); ++k) {
    DataType t;
    if (args[k].kind == Value::Kind::Tensor) {
      t = ctx.ShapeOf(args[k].name).dtype;
    } else if (args[k].c.is_float) {
      t = IsFloat(*tensors) ? *tensors : DataType::F32;
    } else {
      t = *tensors == DataType::Bool ? DataType::I32 : *tensors;
    }
    result = result ? Promote(*result, t) : t;
  }
  return *result;
}

// NumPy broadcasting of the tensor operands' dims.
std::vector<int64_t> BroadcastDims(const Context& ctx, const std::vector<Value>& args,
                                   const SourceSpan& op_span, std::string_view what) {
  std::vector<int64_t> dims;
  std::optional<Shape> first;
  for (const auto& a : args) {
    if (a.kind != Value::Kind::Tensor) continue;
    const Shape& s = ctx.ShapeOf(a.name);
    if (!first) {
      first = s;
      dims = s.dims;
      continue;
    }
    size_t rank = std::max(dims.size(), s.dims.size());
    std::vector<int64_t> out(rank);
    for (size_t k = 0; k < rank; ++k) {
      // Right-aligned: position k from the end in both.
      int64_t x = k < dims.size() ? dims[dims.size() - 1 - k] : 1;
      int64_t y = k < s.dims.size() ? s.dims[s.dims.size() - 1 - k] : 1;
      if (x != y && x != 1 && y != 1)
        ctx.Fail(op_span, "cannot broadcast {} and {} in {}",
                 ToString(Shape{first->dtype, dims}), ToString(s), what);
      out[rank - 1 - k] = x == 1 ? y : x;
    }
    dims = std::move(out);
  }
  return dims;
}

}  // namespace

Scalar ToScalar(const Const& c, DataType t) {
  Scalar s;
  s.dtype = t;
  if (IsFloat(t)) {
    // An integer constant stays integral (it prints as `0`, not `0.0`); every
    // consumer converts a Scalar's value to its dtype.
    s.is_float = c.is_float;
    s.i = c.is_float ? 0 : c.i;
    s.f = c.is_float ? c.f : 0;
    return s;
  }
  TILEC_CHECK(!c.is_float, "float constant {} as a {} operand", c.f, Name(t));
  if (t == DataType::Bool) {
    s.i = c.i != 0;
    return s;
  }
  // C conversion to a narrower integer: keep the low bits, sign-extend if signed.
  int bits = BitWidth(t);
  if (bits < 64) {
    uint64_t mask = (uint64_t{1} << bits) - 1;
    uint64_t low = static_cast<uint64_t>(c.i) & mask;
    if (IsSigned(t) && (low >> (bits - 1)) != 0) low |= ~mask;
    s.i = static_cast<int64_t>(low);
  } else {
    s.i = c.i;
  }
  return s;
}

Value EmitElementwise(Context& ctx, ElemFn fn, const std::vector<Value>& args,
                      const SourceSpan& span, const SourceSpan& op_span, std::string_view what,
                      const std::string& dest) {
  TILEC_CHECK(static_cast<int>(args.size()) == Arity(fn), "{} with {} operands", Name(fn),
              args.size());
  bool all_const = true;
  for (const auto& a : args) {
    ctx.CheckNotPrng(a, span);
    all_const = all_const && a.kind == Value::Kind::Const;
  }
  if (all_const) {
    std::vector<Const> cs;
    for (const auto& a : args) cs.push_back(a.c);
    return Value::Of(Folder{ctx, op_span, what}.Fold(fn, cs));
  }

  Category cat = CategoryOf(fn);
  size_t first_value = cat == Category::Cond ? 1 : 0;
  DataType compute = PromoteOperands(ctx, args, first_value);
  DataType out = compute;
  switch (cat) {
    case Category::Bit:
      if (IsFloat(compute))
        ctx.Fail(op_span, "bitwise operator {} needs integer operands, got {}", what, Name(compute));
      break;
    case Category::Compare:
    case Category::Logical:
      out = DataType::Bool;
      break;
    case Category::Math:
      if (!IsFloat(compute)) compute = DataType::F32;
      out = compute;
      break;
    case Category::Arith:
    case Category::Cond:
      break;
    case Category::Other:
      TILEC_UNREACHABLE("{} is emitted by its builtin", Name(fn));
  }

  std::vector<int64_t> dims = BroadcastDims(ctx, args, op_span, what);
  ElementwiseOp op;
  op.fn = fn;
  op.compute_type = compute;
  op.span = span;
  for (size_t k = 0; k < args.size(); ++k) {
    const Value& a = args[k];
    if (a.kind == Value::Kind::Tensor) {
      op.operands.push_back(Operand{true, a.name, {}});
    } else if (k < first_value) {
      // A constant condition only matters as true/false.
      op.operands.push_back(Operand{false, {}, ToScalar(Const::Int(a.c.IsTrue()), compute)});
    } else {
      op.operands.push_back(Operand{false, {}, ToScalar(a.c, compute)});
    }
  }
  op.output = ctx.OutputName(dest);
  ctx.AddTensor(op.output, Shape{out, std::move(dims)}, span);
  std::string name = op.output;
  ctx.program().ops.push_back(std::move(op));
  return Value::Tensor(name);
}

Value BindExpr(Context& ctx, const ast::Expr& e, const std::string& dest) {
  switch (e.kind) {
    case ast::ExprKind::IntLit:
      return Value::Of(Const::Int(e.int_value));
    case ast::ExprKind::FloatLit:
      return Value::Of(Const::Float(e.float_value));
    case ast::ExprKind::Name: {
      if (e.name_class == ast::NameClass::Index)
        ctx.Fail(e.span, "index variable '{}' can only be used inside a contraction", e.name);
      const Symbol& s = ctx.Lookup(e.name, e.span);
      switch (s.kind) {
        case Symbol::Kind::Input:
        case Symbol::Kind::Tensor:
          return Value::Tensor(e.name);
        case Symbol::Kind::Dim:
        case Symbol::Kind::Constant:
          return Value::Of(s.value);
        case Symbol::Kind::Prng:
          return Value::Prng(e.name);
      }
      TILEC_UNREACHABLE();
    }
    case ast::ExprKind::Unary: {
      TILEC_CHECK(e.args.size() == 1);
      Value a = BindExpr(ctx, *e.args[0], "");
      ElemFn fn = e.unary_op == ast::UnaryOp::Neg      ? ElemFn::Neg
                  : e.unary_op == ast::UnaryOp::BitNot ? ElemFn::BitNot
                                                       : ElemFn::LogicalNot;
      return EmitElementwise(ctx, fn, {a}, e.span, e.span,
                             fmt::format("'{}'", ast::Spelling(e.unary_op)), dest);
    }
    case ast::ExprKind::Binary: {
      TILEC_CHECK(e.args.size() == 2);
      Value a = BindExpr(ctx, *e.args[0], "");
      Value b = BindExpr(ctx, *e.args[1], "");
      return EmitElementwise(ctx, FnOf(e.binary_op), {a, b}, e.span, ctx.OperatorSpan(e),
                             fmt::format("'{}'", ast::Spelling(e.binary_op)), dest);
    }
    case ast::ExprKind::Ternary: {
      TILEC_CHECK(e.args.size() == 3);
      Value c = BindExpr(ctx, *e.args[0], "");
      Value t = BindExpr(ctx, *e.args[1], "");
      Value f = BindExpr(ctx, *e.args[2], "");
      return EmitElementwise(ctx, ElemFn::Cond, {c, t, f}, e.span, e.span, "'?:'", dest);
    }
    case ast::ExprKind::Call:
      return BindCall(ctx, e, dest);
  }
  TILEC_UNREACHABLE("bad expression kind {}", static_cast<int>(e.kind));
}

Const RequireConst(Context& ctx, const ast::Expr& e, std::string_view what) {
  Value v = BindExpr(ctx, e, "");
  if (v.kind != Value::Kind::Const) ctx.Fail(e.span, "{} must be a constant, but '{}' is a tensor", what, v.name);
  return v.c;
}

int64_t RequireInt(Context& ctx, const ast::Expr& e, std::string_view what) {
  Const c = RequireConst(ctx, e, what);
  if (c.is_float) ctx.Fail(e.span, "{} must be an integer, got {}", what, ToString(c));
  return c.i;
}

}  // namespace tilec::lang::bind
