#include "compiler/forms/elementwise.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "compiler/sem/builder.h"
#include "support/error.h"

namespace tilec::compiler {

lang::DataType UnsignedOf(lang::DataType t) {
  using lang::DataType;
  switch (t) {
    case DataType::I8: return DataType::U8;
    case DataType::I16: return DataType::U16;
    case DataType::I32: return DataType::U32;
    case DataType::I64: return DataType::U64;
    default: return t;
  }
}

namespace {

using lang::DataType;
using lang::ElemFn;
using namespace sem::builder;
using sem::Expr;
using sem::Type;

bool IsSignedInt(DataType t) { return lang::IsSigned(t); }

// a op b on integers, wrapping for signed types (done in the unsigned type).
Expr Wrapping(sem::BinaryOp op, const Expr& a, const Expr& b, DataType t) {
  if (!IsSignedInt(t)) return sem::Binary::Make(op, a, b);
  Type u = Type::Scalar(UnsignedOf(t));
  return _Cast(Type::Scalar(t), sem::Binary::Make(op, _Cast(u, a), _Cast(u, b)));
}

Expr Negate(const Expr& a, DataType t) {
  if (lang::IsFloat(t)) return -a;
  return Wrapping(sem::BinaryOp::Sub, _Const(0, t), a, t);
}

Expr IsTrue(const Expr& e) {
  if (e->type.IsBool()) return e;
  return _Ne(e, e->type.IsFloat() ? _Float(0, e->type) : _Const(0, e->type));
}

Expr IntDiv(const Expr& a, const Expr& b, DataType t, bool remainder) {
  Expr zero = _Const(0, t);
  Expr one = _Const(1, t);
  Expr is_zero = _Eq(b, zero);
  Expr special = is_zero;
  if (IsSignedInt(t)) special = _LogicalOr(is_zero, _Eq(b, _Const(-1, t)));
  Expr safe = _Select(special, one, b);
  Expr q = remainder ? a % safe : a / safe;
  if (remainder) return _Select(special, zero, q);
  Expr r = _Select(is_zero, zero, q);
  if (IsSignedInt(t)) r = _Select(_Eq(b, _Const(-1, t)), Negate(a, t), r);
  return r;
}

Expr Shift(sem::BinaryOp op, const Expr& a, const Expr& b, DataType t) {
  Expr count = b & (lang::BitWidth(t) - 1);
  if (op == sem::BinaryOp::Shl) return Wrapping(op, a, count, t);
  return sem::Binary::Make(op, a, count);
}

Expr FloatCall(sem::CallFn fn, std::vector<Expr> args) { return _Call(fn, std::move(args)); }

// Arithmetic whose bool form the sem tree has no operator for.
bool IsBoolArithmetic(ElemFn fn) {
  switch (fn) {
    case ElemFn::Neg:
    case ElemFn::BitNot:  // ~ of 0 or 1 as an int is nonzero: always true, as in C
    case ElemFn::Add:
    case ElemFn::Sub:
    case ElemFn::Mul:
    case ElemFn::Div:
    case ElemFn::Mod:
    case ElemFn::Shl:
    case ElemFn::Shr:
    case ElemFn::Min:
    case ElemFn::Max: return true;
    default: return false;
  }
}

}  // namespace

Expr ScalarConst(const lang::Scalar& s) {
  if (lang::IsFloat(s.dtype)) return _Float(s.is_float ? s.f : static_cast<double>(s.i), s.dtype);
  if (s.dtype == DataType::Bool) return _Bool(s.is_float ? s.f != 0 : s.i != 0);
  int64_t v = s.is_float ? static_cast<int64_t>(s.f) : s.i;
  return _Const(v, s.dtype);
}

Expr ConvertValue(const Expr& e, DataType to) {
  const Type& from = e->type;
  TILEC_CHECK(from.IsValue(), "convert of {}", sem::ToString(from));
  int w = from.width;
  Type target = Type::Scalar(to, w);
  if (from == target) return e;
  if (to == DataType::Bool) return IsTrue(e);
  if (from.IsBool()) return _Select(e, _Const(1, target), _Const(0, target));
  if (from.IsFloat() && lang::IsInteger(to)) {
    // Saturating, NaN -> 0, without ever casting an out-of-range value.
    Expr x = e;
    DataType ft = from.dtype == DataType::F16 ? DataType::F32 : from.dtype;
    Type ftype = Type::Scalar(ft, w);
    if (ft != from.dtype) x = _Cast(ftype, x);
    int bits = lang::BitWidth(to);
    double lo = lang::IsSigned(to) ? -std::ldexp(1.0, bits - 1) : 0.0;
    double hi = std::ldexp(1.0, lang::IsSigned(to) ? bits - 1 : bits);  // first value out of range
    double below_hi = ft == DataType::F32 ? std::nextafter(static_cast<float>(hi), 0.0f)
                                          : std::nextafter(hi, 0.0);
    Expr clamped = _Clamp(x, _Float(lo, ftype), _Float(below_hi, ftype));
    Expr v = _Cast(target, clamped);
    v = _Select(x >= _Float(hi, ftype), _LimitConst(sem::LimitKind::Max, target), v);
    return _Select(_Ne(x, x), _Const(0, target), v);
  }
  return _Cast(target, e);
}

Expr CombineValues(lang::ast::CombOp op, const std::vector<Expr>& in, DataType t) {
  using lang::ast::CombOp;
  auto conv = [&](size_t a) { return ConvertValue(in.at(a), t); };
  auto arith = [&](ElemFn fn) {
    lang::ElementwiseOp e;
    e.fn = fn;
    e.compute_type = t;
    return GenerateElementwise(e, {conv(0), conv(1)}, t);
  };
  auto equal = [&]() {
    DataType pt = lang::Promote(in.at(0)->type.dtype, in.at(1)->type.dtype);
    return _Eq(ConvertValue(in[0], pt), ConvertValue(in[1], pt));
  };
  switch (op) {
    case CombOp::None: return conv(0);
    case CombOp::Mul: return t == DataType::Bool ? _LogicalAnd(conv(0), conv(1)) : arith(ElemFn::Mul);
    case CombOp::Add: return t == DataType::Bool ? _LogicalOr(conv(0), conv(1)) : arith(ElemFn::Add);
    case CombOp::Eq: return ConvertValue(equal(), t);
    case CombOp::Cond: return _Select(equal(), conv(2), _Const(0, t));
  }
  TILEC_UNREACHABLE();
}

bool IsVectorSafe(const lang::ElementwiseOp& op) {
  auto float_or_bool = [](DataType t) { return lang::IsFloat(t) || t == DataType::Bool; };
  if (!float_or_bool(op.compute_type)) return false;
  // Bool arithmetic is computed as int (GenerateElementwise): lane by lane,
  // as other integer work. Found by difftest (seeds 205434, 207809): the
  // vector form cast an int vector to a scalar (an internal error).
  if (op.compute_type == DataType::Bool && IsBoolArithmetic(op.fn)) return false;
  switch (op.fn) {
    case ElemFn::BitNot:
    case ElemFn::BitAnd:
    case ElemFn::BitOr:
    case ElemFn::BitXor:
    case ElemFn::Shl:
    case ElemFn::Shr:
    case ElemFn::Index: return false;
    default: return true;
  }
}

Expr GenerateElementwise(const lang::ElementwiseOp& op, std::vector<Expr> operands,
                         DataType out_dtype, const Expr& coordinate) {
  DataType ct = op.compute_type;
  // Arithmetic on bools is C's, as the evaluator does it: computed as int,
  // the result converted back by nonzero -> true (`true + true` is true).
  // Found by difftest: it reached sem as bool arithmetic (an internal error).
  if (ct == DataType::Bool && IsBoolArithmetic(op.fn)) {
    lang::ElementwiseOp as_int = op;
    as_int.compute_type = DataType::I32;
    return ConvertValue(GenerateElementwise(as_int, std::move(operands), DataType::I32, coordinate), out_dtype);
  }
  // Vector operands: scalars (constants, broadcast inputs) join the widest.
  int width = 1;
  for (const Expr& o : operands) width = std::max(width, o->type.width);
  if (width > 1)
    for (Expr& o : operands)
      if (o->type.width == 1) o = _Broadcast(o, width);
  auto arg = [&](size_t i) { return ConvertValue(operands.at(i), ct); };
  Expr r;
  switch (op.fn) {
    case ElemFn::Ident: r = operands.at(0); break;
    case ElemFn::Cast: r = operands.at(0); break;
    case ElemFn::Neg: r = Negate(arg(0), ct); break;
    case ElemFn::BitNot: r = ~arg(0); break;
    case ElemFn::LogicalNot: r = _Not(IsTrue(operands.at(0))); break;
    case ElemFn::Add:
      r = lang::IsFloat(ct) ? arg(0) + arg(1) : Wrapping(sem::BinaryOp::Add, arg(0), arg(1), ct);
      break;
    case ElemFn::Sub:
      r = lang::IsFloat(ct) ? arg(0) - arg(1) : Wrapping(sem::BinaryOp::Sub, arg(0), arg(1), ct);
      break;
    case ElemFn::Mul:
      r = lang::IsFloat(ct) ? arg(0) * arg(1) : Wrapping(sem::BinaryOp::Mul, arg(0), arg(1), ct);
      break;
    case ElemFn::Div:
      r = lang::IsFloat(ct) ? arg(0) / arg(1) : IntDiv(arg(0), arg(1), ct, false);
      break;
    case ElemFn::Mod:
      // fmod is exact; a - b * trunc(a / b) was not (found by difftest).
      r = lang::IsFloat(ct) ? FloatCall(sem::CallFn::Fmod, {arg(0), arg(1)}) : IntDiv(arg(0), arg(1), ct, true);
      break;
    case ElemFn::CmpEq: r = _Eq(arg(0), arg(1)); break;
    case ElemFn::CmpNe: r = _Ne(arg(0), arg(1)); break;
    case ElemFn::CmpLt: r = arg(0) < arg(1); break;
    case ElemFn::CmpGt: r = arg(0) > arg(1); break;
    case ElemFn::CmpLe: r = arg(0) <= arg(1); break;
    case ElemFn::CmpGe: r = arg(0) >= arg(1); break;
    case ElemFn::BitAnd: r = arg(0) & arg(1); break;
    case ElemFn::BitOr: r = arg(0) | arg(1); break;
    case ElemFn::BitXor: r = arg(0) ^ arg(1); break;
    case ElemFn::Shl: r = Shift(sem::BinaryOp::Shl, arg(0), arg(1), ct); break;
    case ElemFn::Shr: r = Shift(sem::BinaryOp::Shr, arg(0), arg(1), ct); break;
    case ElemFn::LogicalAnd: r = _LogicalAnd(IsTrue(operands.at(0)), IsTrue(operands.at(1))); break;
    case ElemFn::LogicalOr: r = _LogicalOr(IsTrue(operands.at(0)), IsTrue(operands.at(1))); break;
    case ElemFn::Cond: r = _Select(IsTrue(operands.at(0)), arg(1), arg(2)); break;
    case ElemFn::Exp: r = FloatCall(sem::CallFn::Exp, {arg(0)}); break;
    case ElemFn::Log: r = FloatCall(sem::CallFn::Log, {arg(0)}); break;
    case ElemFn::Sqrt: r = FloatCall(sem::CallFn::Sqrt, {arg(0)}); break;
    case ElemFn::Pow: r = FloatCall(sem::CallFn::Pow, {arg(0), arg(1)}); break;
    case ElemFn::Tanh: r = FloatCall(sem::CallFn::Tanh, {arg(0)}); break;
    case ElemFn::Sin: r = FloatCall(sem::CallFn::Sin, {arg(0)}); break;
    case ElemFn::Cos: r = FloatCall(sem::CallFn::Cos, {arg(0)}); break;
    case ElemFn::Tan: r = FloatCall(sem::CallFn::Tan, {arg(0)}); break;
    case ElemFn::Sinh: r = FloatCall(sem::CallFn::Sinh, {arg(0)}); break;
    case ElemFn::Cosh: r = FloatCall(sem::CallFn::Cosh, {arg(0)}); break;
    case ElemFn::Asin: r = FloatCall(sem::CallFn::Asin, {arg(0)}); break;
    case ElemFn::Acos: r = FloatCall(sem::CallFn::Acos, {arg(0)}); break;
    case ElemFn::Atan: r = FloatCall(sem::CallFn::Atan, {arg(0)}); break;
    case ElemFn::Erf: r = FloatCall(sem::CallFn::Erf, {arg(0)}); break;
    case ElemFn::Floor:
      r = lang::IsFloat(ct) ? FloatCall(sem::CallFn::Floor, {arg(0)}) : arg(0);
      break;
    case ElemFn::Ceil:
      r = lang::IsFloat(ct) ? FloatCall(sem::CallFn::Ceil, {arg(0)}) : arg(0);
      break;
    case ElemFn::Round:
      r = lang::IsFloat(ct) ? FloatCall(sem::CallFn::Round, {arg(0)}) : arg(0);
      break;
    case ElemFn::Abs:
      if (lang::IsFloat(ct)) r = FloatCall(sem::CallFn::Fabs, {arg(0)});
      else if (IsSignedInt(ct)) r = _Select(arg(0) < 0, Negate(arg(0), ct), arg(0));
      else r = arg(0);
      break;
    case ElemFn::Min: r = _Min(arg(0), arg(1)); break;
    case ElemFn::Max: r = _Max(arg(0), arg(1)); break;
    case ElemFn::Sigmoid: {
      Expr x = arg(0);
      r = 1.0 / (1.0 + FloatCall(sem::CallFn::Exp, {-x}));
      break;
    }
    case ElemFn::Index:
      TILEC_CHECK(coordinate != nullptr, "index() without a coordinate");
      r = coordinate;
      break;
  }
  return ConvertValue(r, out_dtype);
}

}  // namespace tilec::compiler
