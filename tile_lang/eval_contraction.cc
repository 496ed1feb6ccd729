// Reference semantics of ContractionOp (see program.h): aggregate
// comb(inputs) over exactly the integer index assignments in the bounds box
// for which every output and input index polynomial is an integer in
// [0, dim) and every constraint 0 <= poly < range holds (a constraint's
// polynomial may take a fractional value; it is compared as a rational).
//
// How: every such condition is one linear "check" on the index variables,
// scaled by its common denominator to integer coefficients. The variables are
// looped in a fixed order (output variables first, so each output element is
// accumulated in a register by the inner reduction loops); a check is owned by
// the innermost loop level it depends on, and at that level it narrows the
// loop's range to the interval where it holds, given the outer variables. So
// padding and constraints cost nothing per point, and every point visited is
// valid. When all coefficients are integers (the usual case) the innermost
// loop is handed out as a run of points with fixed offset steps; otherwise
// each point also checks that its index values are integers ("defract") and
// is handed out alone.
//
// Accumulation follows the loop order exactly: Max/Min/Assign and the rest
// start from the first contribution (no sentinel values), and elements that
// no point reaches are 0, or the default tensor's (converted) element.
#include <algorithm>
#include <functional>
#include <memory>
#include <numeric>

#include "support/error.h"
#include "tile_lang/eval_internal.h"

namespace tilec::lang::eval {
namespace {

using ast::AggOp;
using ast::CombOp;

// Bound on every intermediate index value, so that sums of two never overflow.
constexpr int64_t kIndexLimit = int64_t{1} << 61;

// One linear condition: with S = constant + sum_p coef[p] * v[p] (the value
// times den), require 0 <= S <= hi, and den | S when `integral`.
struct Check {
  std::vector<int64_t> coef;  // per loop level
  int64_t constant = 0;
  int64_t den = 1;
  int64_t hi = -1;        // den * range - 1
  bool integral = false;  // indexes a tensor, so the value must be an integer
  int level = -1;         // innermost loop level with a nonzero coef; -1 if none
};

int64_t FloorDiv(int64_t a, int64_t k) { return a / k - (a % k != 0 && a < 0); }
int64_t CeilDiv(int64_t a, int64_t k) { return a / k + (a % k != 0 && a > 0); }

// Narrows [lo, hi] to the values v of the check's own (innermost) variable for
// which 0 <= partial + coef * v <= c.hi, `partial` being the rest of S.
void Narrow(const Check& c, int64_t partial, int64_t& lo, int64_t& hi) {
  const int64_t k = c.coef[static_cast<size_t>(c.level)];
  if (k > 0) {
    lo = std::max(lo, CeilDiv(-partial, k));
    hi = std::min(hi, FloorDiv(c.hi - partial, k));
  } else {
    lo = std::max(lo, CeilDiv(partial - c.hi, -k));
    hi = std::min(hi, FloorDiv(partial, -k));
  }
}

// Enumerates the valid index assignments of one contraction as runs of
// points: Run(count, offs, steps) stands for the points whose element offsets
// in access a (0 = output, then the inputs) are offs[a] + k * steps[a].
class LoopNest {
 public:
  static constexpr int kMaxAccesses = 4;
  using Run = std::function<void(int64_t count, const int64_t* offs, const int64_t* steps)>;

  LoopNest(const Program& p, const ContractionOp& op,
           const std::vector<const std::vector<int64_t>*>& access_dims)
      : program_(p), op_(op) {
    TILEC_CHECK(op.bounds.size() == op.index_vars.size(), "{} bounds for {} index vars",
                op.bounds.size(), op.index_vars.size());
    OrderVars();
    std::vector<const std::vector<Polynomial>*> polys = {&op.output_index};
    for (const auto& a : op.inputs) polys.push_back(&a.index);
    TILEC_CHECK(polys.size() == access_dims.size() && polys.size() <= kMaxAccesses);
    for (size_t a = 0; a < polys.size(); ++a) {
      const auto& dims = *access_dims[a];
      TILEC_CHECK(polys[a]->size() == dims.size(), "access {} of {} has {} indices for rank {}",
                  a, op.output, polys[a]->size(), dims.size());
      access_checks_.emplace_back();
      access_strides_.push_back(RowMajorStrides(dims));
      for (size_t d = 0; d < dims.size(); ++d) {
        access_checks_.back().push_back(static_cast<int>(checks_.size()));
        AddCheck((*polys[a])[d], dims[d], /*integral=*/true);
      }
    }
    for (const auto& c : op.constraints) AddCheck(c.poly, c.range, /*integral=*/false);
    integral_ = std::all_of(checks_.begin(), checks_.end(), [](const Check& c) { return c.den == 1; });
    step_.assign((vars_.size() + 1) * kMaxAccesses, 0);
    if (integral_) PrepareOffsets();
    checks_at_.resize(vars_.size());
    for (size_t c = 0; c < checks_.size(); ++c) {
      if (checks_[c].level < 0) continue;
      // In the integer case a check on one variable alone is a fixed range:
      // narrow the box once instead of at every visit of its level.
      if (integral_ && FoldIntoBox(checks_[c])) continue;
      checks_at_[checks_[c].level].push_back(static_cast<int>(c));
    }
    v_.assign(vars_.size(), 0);
    partial_.assign(checks_.size(), 0);
    value_.assign(checks_.size(), 0);
    base_.assign((vars_.size() + 1) * kMaxAccesses, 0);
  }

  void Enumerate(const Run& run) {
    run_ = &run;
    for (size_t c = 0; c < checks_.size(); ++c) {
      const Check& k = checks_[c];
      if (k.level >= 0) continue;
      if (k.constant < 0 || k.constant > k.hi || k.constant % k.den != 0) return;
      value_[c] = k.constant / k.den;
    }
    if (vars_.empty()) {
      int64_t offs[kMaxAccesses] = {}, steps[kMaxAccesses] = {};
      LeafOffsets(offs);
      run(1, offs, steps);
      return;
    }
    for (size_t a = 0; a < access_checks_.size(); ++a) base_[a] = const_off_[a];
    Level(0);
  }

 private:
  [[noreturn]] void Overflow() const {
    TILEC_USER_ERROR_AT(program_.source, op_.span,
                        "index arithmetic in the contraction defining '{}' overflows 64 bits",
                        op_.output);
  }
  int64_t Mul(int64_t a, int64_t b) const {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r) || r > kIndexLimit || r < -kIndexLimit) Overflow();
    return r;
  }
  int64_t Add(int64_t a, int64_t b) const {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r) || r > kIndexLimit || r < -kIndexLimit) Overflow();
    return r;
  }

  // Output variables first (in output dimension order), then the inputs', then
  // the rest; the innermost loops are thus reductions over one output element.
  void OrderVars() {
    std::vector<std::string> order;
    auto add = [&](const std::string& v) {
      if (std::find(order.begin(), order.end(), v) == order.end()) order.push_back(v);
    };
    for (const auto& poly : op_.output_index)
      for (const auto& [v, k] : poly.terms) add(v);
    for (const auto& in : op_.inputs)
      for (const auto& poly : in.index)
        for (const auto& [v, k] : poly.terms) add(v);
    for (const auto& v : op_.index_vars) add(v);
    TILEC_CHECK(order.size() == op_.index_vars.size(),
                "the polynomials of '{}' use index variables not in index_vars", op_.output);
    for (const auto& v : order) {
      const auto pos = std::find(op_.index_vars.begin(), op_.index_vars.end(), v) -
                       op_.index_vars.begin();
      const auto& b = op_.bounds[static_cast<size_t>(pos)];
      if (b.lo < -kIndexLimit || b.hi > kIndexLimit) Overflow();
      vars_.push_back(v);
      lo_.push_back(b.lo);
      hi_.push_back(b.hi);
    }
  }

  void AddCheck(const Polynomial& poly, int64_t range, bool integral) {
    Check c;
    c.integral = integral;
    auto den_of = [](const Rational& r) {
      TILEC_CHECK(r.den > 0, "non-normalized rational {}/{}", r.num, r.den);
      return r.den;
    };
    c.den = den_of(poly.constant);
    for (const auto& [v, k] : poly.terms) c.den = std::lcm(c.den, den_of(k));
    if (c.den > kIndexLimit) Overflow();
    c.constant = Mul(poly.constant.num, c.den / poly.constant.den);
    c.coef.assign(vars_.size(), 0);
    int64_t extent = c.constant < 0 ? -c.constant : c.constant;  // bound on |S| over the box
    for (const auto& [v, k] : poly.terms) {
      const auto level = std::find(vars_.begin(), vars_.end(), v) - vars_.begin();
      TILEC_CHECK(level < static_cast<int64_t>(vars_.size()), "unknown index var {}", v);
      const int64_t coef = Mul(k.num, c.den / k.den);
      c.coef[static_cast<size_t>(level)] = coef;
      if (coef != 0) c.level = std::max(c.level, static_cast<int>(level));
      const int64_t reach = std::max(std::abs(lo_[level]), std::abs(hi_[level]));
      extent = Add(extent, Mul(std::abs(coef), reach));
    }
    c.hi = range <= 0 ? -1 : Add(Mul(c.den, range), -1);
    checks_.push_back(std::move(c));
  }

  bool FoldIntoBox(const Check& c) {
    const auto p = static_cast<size_t>(c.level);
    for (size_t q = 0; q < vars_.size(); ++q)
      if (q != p && c.coef[q] != 0) return false;
    Narrow(c, c.constant, lo_[p], hi_[p]);
    return true;
  }

  // Integer case: offsets are affine in the variables; precompute per access
  // its constant offset and its step per loop level.
  void PrepareOffsets() {
    const size_t n = vars_.size();
    for (size_t a = 0; a < access_checks_.size(); ++a) {
      int64_t off = 0, extent = 0;
      for (size_t d = 0; d < access_checks_[a].size(); ++d) {
        const Check& c = checks_[access_checks_[a][d]];
        const int64_t stride = access_strides_[a][d];
        off = Add(off, Mul(stride, c.constant));
        for (size_t p = 0; p < n; ++p)
          step_[p * kMaxAccesses + a] = Add(step_[p * kMaxAccesses + a], Mul(stride, c.coef[p]));
      }
      extent = off < 0 ? -off : off;
      for (size_t p = 0; p < n; ++p) {
        const int64_t reach = std::max(std::abs(lo_[p]), std::abs(hi_[p]));
        extent = Add(extent, Mul(std::abs(step_[p * kMaxAccesses + a]), reach));
      }
      const_off_[a] = off;
    }
  }

  // Offsets of the current point from the check values (rational case).
  void LeafOffsets(int64_t* offs) const {
    for (size_t a = 0; a < access_checks_.size(); ++a) {
      int64_t off = 0;
      for (size_t d = 0; d < access_checks_[a].size(); ++d)
        off += access_strides_[a][d] * value_[access_checks_[a][d]];
      offs[a] = off;
    }
  }

  void Level(size_t p) {
    int64_t lo = lo_[p], hi = hi_[p];
    for (int ci : checks_at_[p]) {
      const Check& c = checks_[ci];
      int64_t partial = c.constant;
      for (size_t q = 0; q < p; ++q) partial += c.coef[q] * v_[q];
      partial_[ci] = partial;
      Narrow(c, partial, lo, hi);
    }
    if (lo > hi) return;
    const bool innermost = p + 1 == vars_.size();
    const int64_t* step = &step_[p * kMaxAccesses];
    int64_t* base = &base_[p * kMaxAccesses];
    if (integral_) {
      if (innermost) {
        int64_t offs[kMaxAccesses] = {};
        for (int a = 0; a < kMaxAccesses; ++a) offs[a] = base[a] + step[a] * lo;
        (*run_)(hi - lo + 1, offs, step);
        return;
      }
      int64_t* next = base + kMaxAccesses;
      for (int64_t v = lo; v <= hi; ++v) {
        v_[p] = v;
        for (int a = 0; a < kMaxAccesses; ++a) next[a] = base[a] + step[a] * v;
        Level(p + 1);
      }
      return;
    }
    for (int64_t v = lo; v <= hi; ++v) {
      v_[p] = v;
      bool ok = true;
      for (int ci : checks_at_[p]) {
        const Check& c = checks_[ci];
        if (!c.integral) continue;
        const int64_t s = partial_[ci] + c.coef[p] * v;
        if (s % c.den != 0) {
          ok = false;
          break;
        }
        value_[ci] = s / c.den;
      }
      if (!ok) continue;
      if (innermost) {
        int64_t offs[kMaxAccesses] = {}, steps[kMaxAccesses] = {};
        LeafOffsets(offs);
        (*run_)(1, offs, steps);
      } else {
        Level(p + 1);
      }
    }
  }

  const Program& program_;
  const ContractionOp& op_;
  std::vector<std::string> vars_;  // loop order, outermost first
  std::vector<int64_t> lo_, hi_;   // bounds box per level
  std::vector<Check> checks_;
  std::vector<std::vector<int>> access_checks_;  // per access: its check per dim
  std::vector<std::vector<int64_t>> access_strides_;
  std::vector<std::vector<int>> checks_at_;  // per level
  bool integral_ = true;
  // Integer case: offset step per (level, access), constant offset per access,
  // and the base offsets at each level of the current point.
  std::vector<int64_t> step_;
  int64_t const_off_[kMaxAccesses] = {};
  std::vector<int64_t> base_;
  // Current point: variable values; per check, its partial sum at its level
  // and (for indices) its value.
  std::vector<int64_t> v_, partial_, value_;
  const Run* run_ = nullptr;
};

// The output while a contraction runs: one accumulator per element and
// whether any point has reached it yet.
template <typename T>
struct Accumulator {
  std::unique_ptr<T[]> acc;
  std::unique_ptr<uint8_t[]> reached;
  AggOp agg = AggOp::Sum;
  const Program* program = nullptr;
  const ContractionOp* op = nullptr;
  const std::vector<int64_t>* dims = nullptr;

  template <typename V>
  static auto Printable(V v) {
    if constexpr (std::is_same_v<V, bool>) {
      return static_cast<int>(v);
    } else if constexpr (std::is_integral_v<V>) {
      return static_cast<std::conditional_t<std::is_signed_v<V>, int64_t, uint64_t>>(v);
    } else {
      return v;
    }
  }

  [[noreturn]] void Conflict(int64_t o, T a, T b) const {
    TILEC_USER_ERROR_AT(program->source, op->span, "conflicting assignments to {}: {} and {}",
                        ElementName(op->output, *dims, o), Printable(a), Printable(b));
  }
};

template <typename T>
bool SameValue(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a == b || (std::isnan(a) && std::isnan(b));
  } else {
    return a == b;
  }
}

// Inlined so that the (perfectly predicted) switch costs next to nothing in
// the inner loop.
template <typename T>
[[gnu::always_inline]] inline T Aggregate(const Accumulator<T>& s, T acc, T v, int64_t o) {
  switch (s.agg) {
    case AggOp::Sum: return AddWrap(acc, v);
    case AggOp::Prod: return MulWrap(acc, v);
    case AggOp::Max:
      if constexpr (std::is_floating_point_v<T>) {
        return std::fmax(acc, v);  // a NaN loses, as OpenCL's max
      } else {
        return acc < v ? v : acc;
      }
    case AggOp::Min:
      if constexpr (std::is_floating_point_v<T>) {
        return std::fmin(acc, v);
      } else {
        return v < acc ? v : acc;
      }
    case AggOp::Assign:
      if (!SameValue(acc, v)) s.Conflict(o, acc, v);
      return acc;
  }
  TILEC_UNREACHABLE("aggregation {}", static_cast<int>(s.agg));
}

// A tensor's elements as T: borrowed when the storage already is T, else converted.
template <typename T>
struct Array {
  std::unique_ptr<T[]> owned;
  const T* data = nullptr;
};

// Elements of `t` converted to storage type S, in S's compute type.
template <typename S>
Array<ComputeOf<S>> ToArray(const Tensor& t) {
  using T = ComputeOf<S>;
  Array<T> a;
  VisitStorage(t.dtype(), [&](auto tag) {
    using From = typename decltype(tag)::type;
    const From* src = Data<From>(t);
    if constexpr (std::is_same_v<From, S> && std::is_same_v<S, T>) {
      a.data = src;
    } else {
      a.owned = std::make_unique<T[]>(static_cast<size_t>(t.size()));
      for (int64_t i = 0; i < t.size(); ++i) a.owned[i] = ToCompute<S>(src[i]);
      a.data = a.owned.get();
    }
  });
  return a;
}

// Elements of `t` converted to `type`, held as E (double for float types,
// uint64 for the rest) so that equality is the same as in `type`.
template <typename E>
Array<E> ToEqArray(const Tensor& t, DataType type) {
  Array<E> a;
  a.owned = std::make_unique<E[]>(static_cast<size_t>(t.size()));
  VisitStorage(type, [&](auto type_tag) {
    using P = typename decltype(type_tag)::type;
    VisitStorage(t.dtype(), [&](auto tag) {
      using From = typename decltype(tag)::type;
      const From* src = Data<From>(t);
      for (int64_t i = 0; i < t.size(); ++i) a.owned[i] = Convert<E>(ToCompute<P>(src[i]));
    });
  });
  a.data = a.owned.get();
  return a;
}

template <typename T, typename E>
struct Inputs {
  const T* x = nullptr;  // None/Mul/Add operands, in the output type
  const T* y = nullptr;
  const E* ea = nullptr;  // Eq/Cond operands, in their promoted type
  const E* eb = nullptr;
  const T* c = nullptr;  // Cond's value, in the output type
};

template <typename T, typename E, CombOp kComb>
T Combine(const Inputs<T, E>& in, int64_t o1, int64_t o2, int64_t o3) {
  if constexpr (kComb == CombOp::None) {
    return in.x[o1];
  } else if constexpr (kComb == CombOp::Mul) {
    return MulWrap(in.x[o1], in.y[o2]);
  } else if constexpr (kComb == CombOp::Add) {
    return AddWrap(in.x[o1], in.y[o2]);
  } else if constexpr (kComb == CombOp::Eq) {
    return Convert<T>(in.ea[o1] == in.eb[o2]);
  } else {
    return in.ea[o1] == in.eb[o2] ? in.c[o3] : T{};
  }
}

// Adds one run of points. When the output offset does not move (the inner
// loop is a reduction) the element is accumulated in a local; the order of
// contributions is the same either way.
template <typename T, typename E, CombOp kComb>
void Accumulate(Accumulator<T>& s, const Inputs<T, E>& in, int64_t count, const int64_t* off,
                const int64_t* step) {
  int64_t o = off[0], o1 = off[1], o2 = off[2], o3 = off[3];
  const int64_t s1 = step[1], s2 = step[2], s3 = step[3];
  if (step[0] == 0) {
    T local = s.acc[o];
    bool reached = s.reached[o] != 0;
    for (int64_t k = 0; k < count; ++k, o1 += s1, o2 += s2, o3 += s3) {
      const T v = Combine<T, E, kComb>(in, o1, o2, o3);
      local = reached ? Aggregate(s, local, v, o) : v;
      reached = true;
    }
    s.acc[o] = local;
    s.reached[o] = reached;
    return;
  }
  for (int64_t k = 0; k < count; ++k, o += step[0], o1 += s1, o2 += s2, o3 += s3) {
    const T v = Combine<T, E, kComb>(in, o1, o2, o3);
    s.acc[o] = s.reached[o] ? Aggregate(s, s.acc[o], v, o) : v;
    s.reached[o] = 1;
  }
}

template <typename T, typename E, CombOp kComb>
void RunAll(LoopNest& nest, Accumulator<T>& s, const Inputs<T, E>& in) {
  nest.Enumerate([&](int64_t count, const int64_t* off, const int64_t* step) {
    Accumulate<T, E, kComb>(s, in, count, off, step);
  });
}

// Eq and Cond compare their first two inputs in the inputs' promoted type.
template <typename S, typename E>
void RunCompare(LoopNest& nest, Accumulator<ComputeOf<S>>& s, const ContractionOp& op,
                const std::vector<const Tensor*>& ins) {
  using T = ComputeOf<S>;
  const DataType promoted = Promote(ins[0]->dtype(), ins[1]->dtype());
  const Array<E> a = ToEqArray<E>(*ins[0], promoted);
  const Array<E> b = ToEqArray<E>(*ins[1], promoted);
  Inputs<T, E> in;
  in.ea = a.data;
  in.eb = b.data;
  if (op.comb == CombOp::Eq) {
    RunAll<T, E, CombOp::Eq>(nest, s, in);
  } else {
    const Array<T> c = ToArray<S>(*ins[2]);
    in.c = c.data;
    RunAll<T, E, CombOp::Cond>(nest, s, in);
  }
}

// Runs the contraction with output storage type S and writes `out`.
template <typename S>
void Contract(const Program& p, const ContractionOp& op, const std::vector<const Tensor*>& ins,
              const Env& env, LoopNest& nest, Tensor& out) {
  using T = ComputeOf<S>;
  const auto n = static_cast<size_t>(out.size());
  Accumulator<T> s;
  s.acc = std::make_unique<T[]>(n);
  s.reached = std::make_unique<uint8_t[]>(n);  // value-initialized: zeros
  s.agg = op.agg;
  s.program = &p;
  s.op = &op;
  s.dims = &out.shape().dims;

  if (op.comb == CombOp::Eq || op.comb == CombOp::Cond) {
    if (IsFloat(Promote(ins[0]->dtype(), ins[1]->dtype()))) {
      RunCompare<S, double>(nest, s, op, ins);
    } else {
      RunCompare<S, uint64_t>(nest, s, op, ins);
    }
  } else {
    const Array<T> x = ToArray<S>(*ins[0]);
    Inputs<T, char> in;
    in.x = x.data;
    if (op.comb == CombOp::None) {
      RunAll<T, char, CombOp::None>(nest, s, in);
    } else {
      const Array<T> y = ToArray<S>(*ins[1]);
      in.y = y.data;
      if (op.comb == CombOp::Mul) {
        RunAll<T, char, CombOp::Mul>(nest, s, in);
      } else {
        RunAll<T, char, CombOp::Add>(nest, s, in);
      }
    }
  }

  S* dst = Data<S>(out);
  if (op.default_tensor) {
    const Tensor& def = env.Get(*op.default_tensor);
    if (def.shape().dims != out.shape().dims)
      TILEC_USER_ERROR_AT(p.source, op.span, "default tensor '{}' has shape {} but '{}' is {}",
                          *op.default_tensor, ToString(def.shape()), op.output,
                          ToString(out.shape()));
    const Array<T> d = ToArray<S>(def);
    for (size_t i = 0; i < n; ++i) dst[i] = Convert<S>(d.data[i]);
  }
  for (size_t i = 0; i < n; ++i)
    if (s.reached[i]) dst[i] = Convert<S>(s.acc[i]);
}

}  // namespace

Tensor EvalContraction(const Program& p, const ContractionOp& op, const Env& env) {
  Tensor out(Decl(p, op.output).shape);
  const size_t arity = op.comb == CombOp::None ? 1 : op.comb == CombOp::Cond ? 3 : 2;
  TILEC_CHECK(op.inputs.size() == arity, "contraction defining '{}' has {} inputs, expected {}",
              op.output, op.inputs.size(), arity);
  std::vector<const Tensor*> ins;
  std::vector<const std::vector<int64_t>*> dims = {&out.shape().dims};
  for (const auto& a : op.inputs) {
    ins.push_back(&env.Get(a.tensor));
    dims.push_back(&ins.back()->shape().dims);
  }
  LoopNest nest(p, op, dims);
  VisitStorage(out.dtype(), [&](auto tag) {
    Contract<typename decltype(tag)::type>(p, op, ins, env, nest, out);
  });
  return out;
}

}  // namespace tilec::lang::eval
