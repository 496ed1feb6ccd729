// Reference semantics of ElementwiseOp (see program.h): operands broadcast
// NumPy-style to the output dims, converted to `compute_type`, combined as C
// would (with every undefined case given a defined result), converted to the
// output dtype.
//
// Integer rules: arithmetic wraps (done in uint64, so no signed-overflow UB);
// `/` and `%` truncate toward zero; x / 0 and x % 0 are 0; MIN / -1 wraps to
// MIN and MIN % -1 is 0; shift counts are taken modulo the compute type's bit
// width; `>>` of a signed value is arithmetic. Math functions on an integer
// compute type run in double and convert back (saturating). Float min/max are
// fmin/fmax (a NaN operand loses), as OpenCL's min/max on floats.
#include <cmath>

#include "support/error.h"
#include "tile_lang/eval_internal.h"

namespace tilec::lang::eval {
namespace {

bool IsBitOp(ElemFn fn) {
  switch (fn) {
    case ElemFn::BitNot:
    case ElemFn::BitAnd:
    case ElemFn::BitOr:
    case ElemFn::BitXor:
    case ElemFn::Shl:
    case ElemFn::Shr: return true;
    default: return false;
  }
}

// Functions computed by <cmath> (on any float type F).
template <typename F>
F Math(ElemFn fn, F a, F b) {
  switch (fn) {
    case ElemFn::Exp: return std::exp(a);
    case ElemFn::Log: return std::log(a);
    case ElemFn::Sqrt: return std::sqrt(a);
    case ElemFn::Pow: return std::pow(a, b);
    case ElemFn::Tanh: return std::tanh(a);
    case ElemFn::Sin: return std::sin(a);
    case ElemFn::Cos: return std::cos(a);
    case ElemFn::Tan: return std::tan(a);
    case ElemFn::Sinh: return std::sinh(a);
    case ElemFn::Cosh: return std::cosh(a);
    case ElemFn::Asin: return std::asin(a);
    case ElemFn::Acos: return std::acos(a);
    case ElemFn::Atan: return std::atan(a);
    case ElemFn::Erf: return std::erf(a);
    case ElemFn::Sigmoid: return F(1) / (F(1) + std::exp(-a));
    default: TILEC_UNREACHABLE("{} is not a math function", Name(fn));
  }
}

template <typename F>
F ApplyFloat(ElemFn fn, F a, F b, F c) {
  switch (fn) {
    case ElemFn::Ident:
    case ElemFn::Cast: return a;
    case ElemFn::Neg: return -a;
    case ElemFn::LogicalNot: return F(a == 0);
    case ElemFn::Add: return a + b;
    case ElemFn::Sub: return a - b;
    case ElemFn::Mul: return a * b;
    case ElemFn::Div: return a / b;
    case ElemFn::Mod: return std::fmod(a, b);
    case ElemFn::CmpEq: return F(a == b);
    case ElemFn::CmpNe: return F(a != b);
    case ElemFn::CmpLt: return F(a < b);
    case ElemFn::CmpGt: return F(a > b);
    case ElemFn::CmpLe: return F(a <= b);
    case ElemFn::CmpGe: return F(a >= b);
    case ElemFn::LogicalAnd: return F(a != 0 && b != 0);
    case ElemFn::LogicalOr: return F(a != 0 || b != 0);
    case ElemFn::Cond: return a != 0 ? b : c;
    case ElemFn::Abs: return std::fabs(a);
    case ElemFn::Floor: return std::floor(a);
    case ElemFn::Ceil: return std::ceil(a);
    case ElemFn::Round: return std::round(a);  // half away from zero
    case ElemFn::Min: return std::fmin(a, b);
    case ElemFn::Max: return std::fmax(a, b);
    default: return Math<F>(fn, a, b);
  }
}

// I is an integer type or bool (whose arithmetic is C's: computed as int,
// converted back by nonzero -> true).
template <typename I>
I ApplyInt(ElemFn fn, I a, I b, I c, int bits) {
  using W = uint64_t;  // modular arithmetic without UB
  const W wa = static_cast<W>(a), wb = static_cast<W>(b);
  switch (fn) {
    case ElemFn::Ident:
    case ElemFn::Cast: return a;
    case ElemFn::Neg: return static_cast<I>(W(0) - wa);
    case ElemFn::BitNot: return static_cast<I>(~wa);
    case ElemFn::LogicalNot: return static_cast<I>(a == 0);
    case ElemFn::Add: return static_cast<I>(wa + wb);
    case ElemFn::Sub: return static_cast<I>(wa - wb);
    case ElemFn::Mul: return static_cast<I>(wa * wb);
    case ElemFn::Div:
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<I>) {
        if (b == -1) return static_cast<I>(W(0) - wa);  // MIN / -1 wraps to MIN
      }
      return static_cast<I>(a / b);
    case ElemFn::Mod:
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<I>) {
        if (b == -1) return 0;
      }
      return static_cast<I>(a % b);
    case ElemFn::CmpEq: return static_cast<I>(a == b);
    case ElemFn::CmpNe: return static_cast<I>(a != b);
    case ElemFn::CmpLt: return static_cast<I>(a < b);
    case ElemFn::CmpGt: return static_cast<I>(a > b);
    case ElemFn::CmpLe: return static_cast<I>(a <= b);
    case ElemFn::CmpGe: return static_cast<I>(a >= b);
    case ElemFn::BitAnd: return static_cast<I>(wa & wb);
    case ElemFn::BitOr: return static_cast<I>(wa | wb);
    case ElemFn::BitXor: return static_cast<I>(wa ^ wb);
    case ElemFn::Shl: return static_cast<I>(wa << (wb % static_cast<W>(bits)));
    case ElemFn::Shr: {
      const auto s = static_cast<int>(wb % static_cast<W>(bits));
      if constexpr (std::is_signed_v<I>) {
        return static_cast<I>(a >> s);  // arithmetic (defined since C++20)
      } else {
        return static_cast<I>(wa >> s);
      }
    }
    case ElemFn::LogicalAnd: return static_cast<I>(a != 0 && b != 0);
    case ElemFn::LogicalOr: return static_cast<I>(a != 0 || b != 0);
    case ElemFn::Cond: return a != 0 ? b : c;
    case ElemFn::Abs:
      if constexpr (std::is_signed_v<I>) {
        return a < 0 ? static_cast<I>(W(0) - wa) : a;
      } else {
        return a;
      }
    case ElemFn::Floor:
    case ElemFn::Ceil:
    case ElemFn::Round: return a;
    case ElemFn::Min: return b < a ? b : a;
    case ElemFn::Max: return a < b ? b : a;
    default:
      return Convert<I>(Math<double>(fn, Convert<double>(a), Convert<double>(b)));
  }
}

template <typename C>
C Apply(ElemFn fn, C a, C b, C c, int bits) {
  if constexpr (std::is_floating_point_v<C>) {
    return ApplyFloat<C>(fn, a, b, c);
  } else {
    return ApplyInt<C>(fn, a, b, c, bits);
  }
}

// Element strides of an operand with `dims` seen through NumPy broadcasting to
// `out_dims` (0 along stretched or missing dims).
std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& dims,
                                      const std::vector<int64_t>& out_dims,
                                      const std::string& what) {
  TILEC_CHECK(dims.size() <= out_dims.size(), "{} has rank {} above the output's {}", what,
              dims.size(), out_dims.size());
  const std::vector<int64_t> own = RowMajorStrides(dims);
  std::vector<int64_t> strides(out_dims.size(), 0);
  const size_t lead = out_dims.size() - dims.size();
  for (size_t d = 0; d < dims.size(); ++d) {
    TILEC_CHECK(dims[d] == out_dims[lead + d] || dims[d] == 1,
                "{} dim {} of size {} does not broadcast to {}", what, d, dims[d],
                out_dims[lead + d]);
    if (dims[d] != 1) strides[lead + d] = own[d];
  }
  return strides;
}

// Calls body(i, offs) for every output element i in row-major order; offs[k]
// is operand k's element offset, kept incrementally by an odometer.
template <typename Body>
void ForEachElement(const std::vector<int64_t>& dims,
                    const std::vector<std::vector<int64_t>>& strides, int64_t count, Body&& body) {
  const size_t rank = dims.size(), n = strides.size();
  std::vector<int64_t> coord(rank, 0), offs(n, 0);
  for (int64_t i = 0; i < count; ++i) {
    body(i, offs.data());
    for (size_t d = rank; d-- > 0;) {
      if (++coord[d] < dims[d]) {
        for (size_t k = 0; k < n; ++k) offs[k] += strides[k][d];
        break;
      }
      for (size_t k = 0; k < n; ++k) offs[k] -= strides[k][d] * (dims[d] - 1);
      coord[d] = 0;
    }
  }
}

Tensor ScalarTensor(const Scalar& s) {
  Tensor t(Shape{s.dtype, {}});
  if (s.is_float) {
    t.SetDouble(0, s.f);
  } else {
    t.SetInt(0, s.i);
  }
  return t;
}

}  // namespace

Tensor EvalElementwise(const Program& p, const ElementwiseOp& op, const Env& env) {
  Tensor out(Decl(p, op.output).shape);
  const std::vector<int64_t>& dims = out.shape().dims;

  if (op.fn == ElemFn::Index) {
    // Only the output's shape matters: element i gets its coordinate `axis`.
    if (op.axis < 0 || op.axis >= out.shape().rank())
      TILEC_USER_ERROR_AT(p.source, op.span, "index axis {} is out of range for a rank-{} tensor",
                          op.axis, out.shape().rank());
    const auto axis = static_cast<size_t>(op.axis);
    const int64_t stride = RowMajorStrides(dims)[axis];
    for (int64_t i = 0; i < out.size(); ++i)
      out.SetInt(i, static_cast<int32_t>((i / stride) % dims[axis]));
    return out;
  }

  TILEC_CHECK(Arity(op.fn) < 0 || static_cast<int>(op.operands.size()) == Arity(op.fn),
              "{} with {} operands", Name(op.fn), op.operands.size());
  TILEC_CHECK(!op.operands.empty() && op.operands.size() <= 3, "{} operands",
              op.operands.size());
  // A cast converts straight to the output type, whatever compute_type says.
  const DataType compute = op.fn == ElemFn::Cast ? out.dtype() : op.compute_type;
  if (IsBitOp(op.fn) && IsFloat(compute))
    TILEC_USER_ERROR_AT(p.source, op.span, "'{}' needs integer operands, but computes in {}",
                        Name(op.fn), Name(compute));

  // Scalars become rank-0 tensors so that broadcasting handles them.
  std::vector<Tensor> scalars;
  scalars.reserve(op.operands.size());
  std::vector<const Tensor*> operands;
  std::vector<std::vector<int64_t>> strides;
  for (size_t k = 0; k < op.operands.size(); ++k) {
    const Operand& o = op.operands[k];
    const Tensor* t = nullptr;
    if (o.is_tensor) {
      t = &env.Get(o.tensor);
    } else {
      scalars.push_back(ScalarTensor(o.scalar));
      t = &scalars.back();
    }
    operands.push_back(t);
    strides.push_back(BroadcastStrides(t->shape().dims, dims,
                                       fmt::format("operand {} of {}", k, op.output)));
  }

  const int bits = BitWidth(compute);
  VisitStorage(compute, [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = ComputeOf<S>;
    std::vector<std::vector<C>> values;
    for (size_t k = 0; k < operands.size(); ++k) {
      if (op.fn == ElemFn::Cond && k == 0) {
        // The condition is tested in its own type, not converted first
        // (0.5 is true even when the branches are integers).
        const auto truth = ConvertAll<Bool8>(*operands[0]);
        values.emplace_back(truth.begin(), truth.end());
      } else {
        values.push_back(ConvertAll<S>(*operands[k]));
      }
    }
    std::vector<C> result(static_cast<size_t>(out.size()));
    const size_t n = values.size();
    ForEachElement(dims, strides, out.size(), [&](int64_t i, const int64_t* offs) {
      const C a = values[0][offs[0]];
      const C b = n > 1 ? values[1][offs[1]] : C{};
      const C c = n > 2 ? values[2][offs[2]] : C{};
      result[i] = Apply<C>(op.fn, a, b, c, bits);
    });
    StoreAll(result, out);
  });
  return out;
}

}  // namespace tilec::lang::eval
