// Private to the reference evaluator (evaluator.cc, eval_*.cc) and tensor.cc:
// element conversions with Tilec's rules, dispatch from a DataType to a C++
// type, the evaluation environment, and one entry point per kind of op.
// Not part of the public tile_lang interface.
//
// Conversion rules (Convert<To>(from)), used everywhere a value changes type:
//  * to bool: nonzero -> 1 (NaN is nonzero);
//  * integer -> integer: modulo 2^bits (two's complement wrap);
//  * float -> integer: truncation toward zero; NaN -> 0; values beyond the
//    target's range saturate to its min/max (never UB);
//  * -> float: the nearest representable value (IEEE conversion);
//  * f16 is stored as its bits (Half) and computed in float; a double reaches
//    f16 through float (double rounding is accepted).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "support/error.h"
#include "tile_lang/program.h"
#include "tile_lang/tensor.h"
#include "tile_lang/types.h"

namespace tilec::lang::eval {

// Storage types that are not plain C++ arithmetic types: a distinct Half keeps
// f16 apart from u16, and Bool8 reads any byte without the UB of loading a
// non-0/1 byte as C++ bool.
struct Half {
  uint16_t bits;
};
struct Bool8 {
  uint8_t v;
};
static_assert(sizeof(Half) == 2 && sizeof(Bool8) == 1);

// The C++ type values of a storage type are computed in.
template <typename S>
struct ComputeOfT {
  using type = S;
};
template <>
struct ComputeOfT<Half> {
  using type = float;
};
template <>
struct ComputeOfT<Bool8> {
  using type = bool;
};
template <typename S>
using ComputeOf = typename ComputeOfT<S>::type;

template <typename T>
struct TypeTag {
  using type = T;
};

// Calls f(TypeTag<S>{}) with S the storage type of `t`; returns what f returns.
template <typename F>
decltype(auto) VisitStorage(DataType t, F&& f) {
  switch (t) {
    case DataType::Bool: return f(TypeTag<Bool8>{});
    case DataType::I8: return f(TypeTag<int8_t>{});
    case DataType::I16: return f(TypeTag<int16_t>{});
    case DataType::I32: return f(TypeTag<int32_t>{});
    case DataType::I64: return f(TypeTag<int64_t>{});
    case DataType::U8: return f(TypeTag<uint8_t>{});
    case DataType::U16: return f(TypeTag<uint16_t>{});
    case DataType::U32: return f(TypeTag<uint32_t>{});
    case DataType::U64: return f(TypeTag<uint64_t>{});
    case DataType::F16: return f(TypeTag<Half>{});
    case DataType::F32: return f(TypeTag<float>{});
    case DataType::F64: return f(TypeTag<double>{});
  }
  TILEC_UNREACHABLE("bad data type {}", static_cast<int>(t));
}

// Float -> integer with truncation, NaN -> 0 and saturation.
template <typename To, typename From>
To FloatToInt(From v) {
  using Lim = std::numeric_limits<To>;
  if (std::isnan(v)) return 0;
  // 2^digits (twice the power of two max / 2 + 1) is exact in every float type
  // and is the first value past max.
  constexpr From past_max = From(2) * static_cast<From>(Lim::max() / 2 + 1);
  if (v >= past_max) return Lim::max();
  if constexpr (std::is_signed_v<To>) {
    if (v < -past_max) return Lim::min();
  } else {
    if (v <= From(-1)) return 0;
  }
  return static_cast<To>(v);
}

template <typename To, typename From>
To Convert(From v) {
  if constexpr (std::is_same_v<From, Half>) {
    return Convert<To>(HalfToFloat(v.bits));
  } else if constexpr (std::is_same_v<From, Bool8>) {
    return Convert<To>(v.v != 0);
  } else if constexpr (std::is_same_v<To, Half>) {
    return Half{FloatToHalf(Convert<float>(v))};
  } else if constexpr (std::is_same_v<To, Bool8>) {
    return Bool8{static_cast<uint8_t>(v != 0)};
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != 0;
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(v);
  } else if constexpr (std::is_floating_point_v<From>) {
    return FloatToInt<To>(v);
  } else {
    return static_cast<To>(v);  // integer wrap: well defined since C++20
  }
}

// A value converted to storage type S (rounding to f16, wrapping, …) and then
// to S's compute type: what "convert to dtype" means for a computation.
template <typename S, typename From>
ComputeOf<S> ToCompute(From v) {
  return Convert<ComputeOf<S>>(Convert<S>(v));
}

// Wrapping + and * in T (bool: C's `a + b` / `a * b` converted back, i.e. or /
// and); integers go through uint64 so signed overflow is never UB.
template <typename T>
T AddWrap(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a || b;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  } else {
    return a + b;
  }
}
template <typename T>
T MulWrap(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a && b;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  } else {
    return a * b;
  }
}

template <typename S>
const S* Data(const Tensor& t) {
  return reinterpret_cast<const S*>(t.data());
}
template <typename S>
S* Data(Tensor& t) {
  return reinterpret_cast<S*>(t.data());
}

// Converts every element of `t` to storage type S's compute type.
template <typename S>
std::vector<ComputeOf<S>> ConvertAll(const Tensor& t) {
  std::vector<ComputeOf<S>> out(static_cast<size_t>(t.size()));
  VisitStorage(t.dtype(), [&](auto tag) {
    using From = typename decltype(tag)::type;
    const From* src = Data<From>(t);
    for (size_t i = 0; i < out.size(); ++i) out[i] = ToCompute<S>(src[i]);
  });
  return out;
}

// Writes values (of any arithmetic type) into `t`, converting to its dtype.
template <typename V>
void StoreAll(const std::vector<V>& values, Tensor& t) {
  TILEC_CHECK(static_cast<int64_t>(values.size()) == t.size());
  VisitStorage(t.dtype(), [&](auto tag) {
    using To = typename decltype(tag)::type;
    To* dst = Data<To>(t);
    for (size_t i = 0; i < values.size(); ++i) dst[i] = Convert<To>(values[i]);
  });
}

// Row-major element strides of `dims`.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims);
// "O[1, 2]": the element at row-major offset `offset` of a tensor with `dims`.
std::string ElementName(const std::string& tensor, const std::vector<int64_t>& dims,
                        int64_t offset);

// The tensors visible while a program runs: the caller's inputs (borrowed)
// and the values computed so far (owned, freed after their last use).
class Env {
 public:
  void Borrow(const std::string& name, const Tensor& t) { borrowed_[name] = &t; }
  void Put(const std::string& name, Tensor t) { owned_[name] = std::move(t); }
  // InternalError if `name` has no value (the program is inconsistent).
  const Tensor& Get(const std::string& name) const;
  // Moves out an owned value, or copies a borrowed one.
  Tensor Take(const std::string& name);
  void Free(const std::string& name) { owned_.erase(name); }

 private:
  std::map<std::string, const Tensor*> borrowed_;
  std::map<std::string, Tensor> owned_;
};

// The declaration of `name` in `p` (InternalError if missing).
const TensorDecl& Decl(const Program& p, const std::string& name);

// One entry point per kind of op; each returns the op's output tensor(s) with
// the shapes `p` declares for them. User errors point at the op's span.
Tensor EvalContraction(const Program& p, const ContractionOp& op, const Env& env);
Tensor EvalElementwise(const Program& p, const ElementwiseOp& op, const Env& env);
std::vector<Tensor> EvalSpecial(const Program& p, const SpecialOp& op, const Env& env);

}  // namespace tilec::lang::eval
