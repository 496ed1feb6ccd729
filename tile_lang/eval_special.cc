// Reference semantics of the special ops (gather, scatter, reshape, shape,
// prng_step); see SpecialFn in program.h.
#include <algorithm>
#include <cstring>

#include "support/error.h"
#include "tile_lang/eval_internal.h"

namespace tilec::lang::eval {
namespace {

int64_t Product(const std::vector<int64_t>& dims, size_t from) {
  int64_t n = 1;
  for (size_t d = from; d < dims.size(); ++d) n *= dims[d];
  return n;
}

// Copies n elements src[src_off..] -> dst[dst_off..], converting the type.
void CopyConverted(const Tensor& src, int64_t src_off, Tensor& dst, int64_t dst_off, int64_t n) {
  TILEC_CHECK(src_off >= 0 && n >= 0 && src_off + n <= src.size() && dst_off >= 0 &&
              dst_off + n <= dst.size());
  if (n == 0) return;
  if (src.dtype() == dst.dtype()) {
    const auto elem = static_cast<size_t>(ByteSize(src.dtype()));
    std::memcpy(dst.data() + dst_off * elem, src.data() + src_off * elem, n * elem);
    return;
  }
  VisitStorage(src.dtype(), [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    VisitStorage(dst.dtype(), [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      const From* s = Data<From>(src) + src_off;
      To* d = Data<To>(dst) + dst_off;
      for (int64_t i = 0; i < n; ++i) d[i] = Convert<To>(s[i]);
    });
  });
}

Tensor MakeOutput(const Program& p, const SpecialOp& op, size_t k) {
  TILEC_CHECK(k < op.outputs.size(), "{} has {} outputs", Name(op.fn), op.outputs.size());
  return Tensor(Decl(p, op.outputs[k]).shape);
}

const Tensor& Input(const SpecialOp& op, const Env& env, size_t k) {
  TILEC_CHECK(k < op.inputs.size(), "{} has {} inputs", Name(op.fn), op.inputs.size());
  return env.Get(op.inputs[k]);
}

int64_t Clamp(int64_t v, int64_t n) { return std::clamp<int64_t>(v, 0, n - 1); }

// out[i..., r...] = D[clamp(I[i...], 0, D0 - 1), r...]
Tensor Gather(const Program& p, const SpecialOp& op, const Env& env) {
  const Tensor& data = Input(op, env, 0);
  const Tensor& idx = Input(op, env, 1);
  Tensor out = MakeOutput(p, op, 0);
  if (data.shape().rank() == 0)
    TILEC_USER_ERROR_AT(p.source, op.span, "gather needs a tensor of rank 1 or more, got {}",
                        ToString(data.shape()));
  const int64_t rows = data.shape().dims[0];
  const int64_t row = Product(data.shape().dims, 1);
  TILEC_CHECK(out.size() == idx.size() * row, "gather output {} for data {} and index {}",
              ToString(out.shape()), ToString(data.shape()), ToString(idx.shape()));
  if (out.size() == 0) return out;
  if (rows == 0)
    TILEC_USER_ERROR_AT(p.source, op.span, "gather from {}, which has no rows",
                        ToString(data.shape()));
  for (int64_t j = 0; j < idx.size(); ++j)
    CopyConverted(data, Clamp(idx.GetInt(j), rows) * row, out, j * row, row);
  return out;
}

// out = zeros([V0] + E.dims[rank(I):]); out[clamp(I[i...]), r...] += E[i..., r...]
Tensor Scatter(const Program& p, const SpecialOp& op, const Env& env) {
  const Tensor& values = Input(op, env, 0);
  const Tensor& idx = Input(op, env, 1);
  Tensor out = MakeOutput(p, op, 0);
  const auto& e_dims = values.shape().dims;
  const auto& i_dims = idx.shape().dims;
  const bool prefix = i_dims.size() <= e_dims.size() &&
                      std::equal(i_dims.begin(), i_dims.end(), e_dims.begin());
  if (!prefix)
    TILEC_USER_ERROR_AT(p.source, op.span, "scatter: index shape {} is not a prefix of {}",
                        ToString(idx.shape()), ToString(values.shape()));
  const int64_t row = Product(e_dims, i_dims.size());
  if (out.shape().rank() == 0)
    TILEC_USER_ERROR_AT(p.source, op.span, "scatter needs an output of rank 1 or more");
  const int64_t rows = out.shape().dims[0];
  TILEC_CHECK(out.size() == rows * row, "scatter output {} for values {}", ToString(out.shape()),
              ToString(values.shape()));
  if (idx.size() == 0 || row == 0) return out;
  if (rows == 0)
    TILEC_USER_ERROR_AT(p.source, op.span, "scatter into {}, which has no rows",
                        ToString(out.shape()));
  VisitStorage(out.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = ComputeOf<S>;
    const std::vector<C> e = ConvertAll<S>(values);
    std::vector<C> acc(static_cast<size_t>(out.size()), C{});
    for (int64_t j = 0; j < idx.size(); ++j) {
      const int64_t base = Clamp(idx.GetInt(j), rows) * row;
      for (int64_t r = 0; r < row; ++r) acc[base + r] = AddWrap<C>(acc[base + r], e[j * row + r]);
    }
    StoreAll(acc, out);
  });
  return out;
}

Tensor Reshape(const Program& p, const SpecialOp& op, const Env& env) {
  const Tensor& in = Input(op, env, 0);
  Tensor out = MakeOutput(p, op, 0);
  if (in.size() != out.size())
    TILEC_USER_ERROR_AT(p.source, op.span, "cannot reshape {} ({} elements) to {} ({} elements)",
                        ToString(in.shape()), in.size(), ToString(out.shape()), out.size());
  CopyConverted(in, 0, out, 0, in.size());
  return out;
}

Tensor ShapeOf(const Program& p, const SpecialOp& op, const Env& env) {
  const Tensor& in = Input(op, env, 0);
  Tensor out = MakeOutput(p, op, 0);
  TILEC_CHECK(out.size() == in.shape().rank(), "shape() output {} for {}", ToString(out.shape()),
              ToString(in.shape()));
  for (int d = 0; d < in.shape().rank(); ++d) out.SetInt(d, in.shape().dims[d]);
  return out;
}

// prng_step, bit-exact with PlaidML's kernel (forms/special.cc): the state
// S u32[3, 2048] holds three taus88 streams per column t (s1 = S[0, t],
// s2 = S[1, t], s3 = S[2, t]). Value element i (row-major) steps column
// t = i % 2048 once:
//   b = ((s1 << 13) ^ s1) >> 19;  s1 = ((s1 & 0xfffffffe) << 12) ^ b;
//   b = ((s2 << 2) ^ s2) >> 25;   s2 = ((s2 & 0xfffffff8) << 4) ^ b;
//   b = ((s3 << 3) ^ s3) >> 11;   s3 = ((s3 & 0xfffffff0) << 17) ^ b;
// and is float((s1 ^ s2 ^ s3) / 2^32), computed in double and rounded to f32
// (so it lies in [0, 1]). The second output is the state after all steps.
std::vector<Tensor> PrngStep(const Program& p, const SpecialOp& op, const Env& env) {
  constexpr int64_t kColumns = 2048;
  const Tensor& state_in = Input(op, env, 0);
  if (state_in.shape() != Shape{DataType::U32, {3, kColumns}})
    TILEC_USER_ERROR_AT(p.source, op.span, "prng state must be u32[3, 2048], got {}",
                        ToString(state_in.shape()));
  Tensor value = MakeOutput(p, op, 0);
  Tensor state = MakeOutput(p, op, 1);
  TILEC_CHECK(state.shape() == state_in.shape(), "prng state output {}",
              ToString(state.shape()));
  std::memcpy(state.data(), state_in.data(), state.bytes());
  uint32_t* s = Data<uint32_t>(state);
  for (int64_t i = 0; i < value.size(); ++i) {
    const int64_t t = i % kColumns;
    uint32_t& s1 = s[t];
    uint32_t& s2 = s[kColumns + t];
    uint32_t& s3 = s[2 * kColumns + t];
    uint32_t b = ((s1 << 13) ^ s1) >> 19;
    s1 = ((s1 & 4294967294u) << 12) ^ b;
    b = ((s2 << 2) ^ s2) >> 25;
    s2 = ((s2 & 4294967288u) << 4) ^ b;
    b = ((s3 << 3) ^ s3) >> 11;
    s3 = ((s3 & 4294967280u) << 17) ^ b;
    const double v = static_cast<double>(s1 ^ s2 ^ s3) / 4294967296.0;
    value.SetDouble(i, static_cast<float>(v));
  }
  return {std::move(value), std::move(state)};
}

}  // namespace

std::vector<Tensor> EvalSpecial(const Program& p, const SpecialOp& op, const Env& env) {
  switch (op.fn) {
    case SpecialFn::Gather: return {Gather(p, op, env)};
    case SpecialFn::Scatter: return {Scatter(p, op, env)};
    case SpecialFn::Reshape: return {Reshape(p, op, env)};
    case SpecialFn::Shape: return {ShapeOf(p, op, env)};
    case SpecialFn::PrngStep: return PrngStep(p, op, env);
  }
  TILEC_UNREACHABLE("special op {}", static_cast<int>(op.fn));
}

}  // namespace tilec::lang::eval
