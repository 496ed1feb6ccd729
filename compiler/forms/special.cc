// SpecialForm (forms/form.h): gather, scatter, reshape, shape, prng, and direct
// contractions — one work item per output element (per state column for
// prng), plain loops, exact index arithmetic. These kernels favour being
// obviously right over speed.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>

#include "compiler/forms/common.h"
#include "compiler/forms/elementwise.h"
#include "compiler/sem/builder.h"
#include "support/error.h"

namespace tilec::compiler {
namespace {

using lang::DataType;
using namespace sem::builder;
using sem::Expr;
using sem::Stmt;
using sem::Type;

constexpr int64_t kGroup = 64;  // work-group size of these kernels

int64_t Count(const lang::TensorDecl& t) { return t.shape.ElementCount(); }

// Row-major logical coordinates of linear element `e` of `dims`, as index
// expressions (declared as variables into `s`).
std::vector<Expr> Coords(const Expr& e, const std::vector<int64_t>& dims, const std::string& prefix,
                         std::vector<Stmt>& s) {
  std::vector<Expr> c(dims.size());
  Expr rem = e;
  for (size_t k = dims.size(); k-- > 0;) {
    Expr v = k == 0 ? rem : rem % dims[k];
    std::string name = fmt::format("{}{}", prefix, k);
    s.push_back(_Declare(Type::Index(), name, v));
    c[k] = _Var(name, Type::Index());
    rem = rem / dims[k];
  }
  return c;
}

// Element address of logical coordinates in any layout (layout.h):
// sum stride * ((coord / divisor) % size).
Expr Address(const lang::TensorDecl& t, const std::vector<Expr>& coords) {
  Expr a = _Const(0);
  for (const lang::PhysicalDim& p : t.layout.phys) {
    Expr c = coords.at(p.dim);
    if (p.divisor != 1) c = c / p.divisor;
    int64_t quotient_range = (t.shape.dims.at(p.dim) + p.divisor - 1) / p.divisor;
    if (p.size < quotient_range) c = c % p.size;
    a = a + c * p.stride;
  }
  return a;
}

// Does `t`'s buffer hold padding (a blocked tail) that is a dense
// permutation of its physical dims, so buffer element e decodes into
// physical indices (e / stride) % size?
bool DensePadded(const lang::TensorDecl& t) {
  if (t.layout.elements <= Count(t)) return false;
  int64_t product = 1, last = 0;
  for (const lang::PhysicalDim& p : t.layout.phys) {
    if (p.size <= 0) return false;
    product *= p.size;
    last += (p.size - 1) * p.stride;
  }
  return product == t.layout.elements && last == t.layout.elements - 1;
}

// Logical coordinates of buffer element `e` of a DensePadded tensor
// (declared into `s`), and whether they are inside the tensor (not padding).
std::pair<std::vector<Expr>, Expr> BufferCoords(const Expr& e, const lang::TensorDecl& t,
                                                const std::string& prefix, std::vector<Stmt>& s) {
  std::vector<Expr> c(t.shape.dims.size(), nullptr);
  for (const lang::PhysicalDim& p : t.layout.phys) {
    Expr part = ((e / p.stride) % p.size) * p.divisor;
    c.at(p.dim) = c[p.dim] ? c[p.dim] + part : part;
  }
  Expr inside;
  for (size_t d = 0; d < c.size(); ++d) {
    std::string name = fmt::format("{}{}", prefix, d);
    s.push_back(_Declare(Type::Index(), name, c[d] ? c[d] : _Const(0)));
    c[d] = _Var(name, Type::Index());
    Expr ok = c[d] < t.shape.dims[d];
    inside = inside ? _LogicalAnd(inside, ok) : ok;
  }
  return {c, inside};
}

Expr ZeroOf(DataType t) {
  if (t == DataType::Bool) return _Bool(false);
  return lang::IsFloat(t) ? _Float(0, t) : _Const(0, t);
}

class SpecialGen {
 public:
  SpecialGen(const KernelSpec& spec, const lang::Program& program) : spec_(spec), program_(program) {}

  GeneratedKernel Run() {
    GeneratedKernel out;
    out.function.name = spec_.name;
    out.function.params = BufferParams(spec_, program_);
    int64_t biggest = 0;
    for (const auto& t : spec_.outputs) biggest = std::max(biggest, Count(program_.Tensor(t)));
    for (const auto& t : spec_.inputs) biggest = std::max(biggest, Count(program_.Tensor(t)));
    if (spec_.kind == KernelKind::Direct) biggest = std::max(biggest, DirectIndexMagnitude());
    out.function.index_type = biggest > (int64_t{1} << 30) ? DataType::I64 : DataType::I32;
    for (const sem::Param& p : out.function.params) params_.push_back(_Var(p.name, p.type));

    int64_t items = 1;
    std::vector<Stmt> body;
    // One work item per output element; for an output with padding, one per
    // buffer element: padding elements get 0 (the zero-padding contract).
    const lang::TensorDecl* target = nullptr;
    if (spec_.kind == KernelKind::Direct) target = &program_.Tensor(spec_.contraction.output);
    else if (spec_.special.fn != lang::SpecialFn::Shape && spec_.special.fn != lang::SpecialFn::PrngStep)
      target = &Out(0);
    std::vector<Stmt> prologue;
    Expr inside;
    if (target && DensePadded(*target)) std::tie(out_coords_, inside) = BufferCoords(E(), *target, "c", prologue);
    if (spec_.kind == KernelKind::Direct) {
      items = Count(*target);
      body = Direct();
    } else {
      switch (spec_.special.fn) {
        case lang::SpecialFn::Gather: items = Count(Out(0)); body = Gather(); break;
        case lang::SpecialFn::Scatter: items = Count(Out(0)); body = Scatter(); break;
        case lang::SpecialFn::Reshape: items = Count(Out(0)); body = Reshape(); break;
        case lang::SpecialFn::Shape: items = 1; body = Shape(); break;
        case lang::SpecialFn::PrngStep: items = 2048; body = Prng(); break;
      }
    }
    if (inside) {
      items = target->layout.elements;
      Stmt zero = _Store(Buffer(target->name), E(), ZeroOf(target->shape.dtype));
      prologue.push_back(_If(inside, _Block(std::move(body)), zero));
      body = std::move(prologue);
    }
    items = std::max<int64_t>(items, 1);
    int64_t group = std::min(kGroup, items);
    int64_t global = (items + group - 1) / group * group;
    std::vector<Stmt> top;
    top.push_back(_Comment(spec_.kind == KernelKind::Direct
                               ? fmt::format("direct contraction {}", spec_.contraction.output)
                               : fmt::format("{}", lang::Name(spec_.special.fn))));
    top.push_back(_Declare(Type::Index(), "e", _Index(sem::ThreadIndexKind::GlobalId, 0)));
    top.push_back(_If(_Var("e", Type::Index()) < items, _Block(std::move(body))));
    out.function.body = _Block(std::move(top));
    out.function.work_group_size = std::array<int64_t, 3>{group, 1, 1};
    out.local = {group, 1, 1};
    out.global = {global, 1, 1};
    return out;
  }

 private:
  const lang::TensorDecl& Out(size_t i) const { return program_.Tensor(spec_.special.outputs.at(i)); }
  const lang::TensorDecl& In(size_t i) const { return program_.Tensor(spec_.special.inputs.at(i)); }
  Expr E() const { return _Var("e", Type::Index()); }

  Expr Buffer(const std::string& tensor) const { return BufferOf(spec_, params_, tensor); }

  // Logical coordinates of the output element of this work item.
  std::vector<Expr> OutCoords(const std::vector<int64_t>& dims, const std::string& prefix,
                              std::vector<Stmt>& s) const {
    if (!out_coords_.empty()) return out_coords_;
    return Coords(E(), dims, prefix, s);
  }

  // A loaded integer as a clamped index in [0, n-1].
  static Expr ClampedIndex(const Expr& v, int64_t n) {
    Expr i = v->type.IsFloat() ? ConvertValue(v, DataType::I64) : v;
    i = _Cast(Type::Index(), _Clamp(ConvertValue(i, DataType::I64), _Const(0, DataType::I64),
                                    _Const(std::max<int64_t>(n - 1, 0), DataType::I64)));
    return i;
  }

  std::vector<Stmt> Gather() {
    const lang::TensorDecl &out = Out(0), &d = In(0), &idx = In(1);
    std::vector<Stmt> s;
    std::vector<Expr> c = OutCoords(out.shape.dims, "c", s);
    size_t ri = idx.shape.dims.size();
    std::vector<Expr> ic(c.begin(), c.begin() + ri);
    Expr row = ClampedIndex(_Load(Buffer(idx.name), Address(idx, ic)), d.shape.dims.at(0));
    std::vector<Expr> dc = {row};
    dc.insert(dc.end(), c.begin() + ri, c.end());
    s.push_back(_Store(Buffer(out.name), Address(out, c), _Load(Buffer(d.name), Address(d, dc))));
    return s;
  }

  std::vector<Stmt> Scatter() {
    const lang::TensorDecl &out = Out(0), &e = In(0), &idx = In(1);
    std::vector<Stmt> s;
    std::vector<Expr> c = OutCoords(out.shape.dims, "c", s);
    int64_t n_idx = Count(idx);
    size_t ri = idx.shape.dims.size();
    DataType t = out.shape.dtype;
    s.push_back(_Declare(Type::Scalar(t), "acc", lang::IsFloat(t) ? _Float(0, t) : _Const(0, t)));
    Expr acc = _Var("acc", Type::Scalar(t));
    std::vector<Stmt> inner;
    Expr j = _Var("j", Type::Index());
    std::vector<Expr> jc = Coords(j, idx.shape.dims, "jc", inner);
    Expr row = ClampedIndex(_Load(Buffer(idx.name), Address(idx, jc)), out.shape.dims.at(0));
    std::vector<Expr> ec = jc;
    ec.insert(ec.end(), c.begin() + 1, c.end());
    lang::ElementwiseOp add;
    add.fn = lang::ElemFn::Add;
    add.compute_type = t;
    Expr sum = GenerateElementwise(add, {acc, _Load(Buffer(e.name), Address(e, ec))}, t);
    inner.push_back(_If(_Eq(row, c[0]), _Assign(acc, sum)));
    (void)ri;
    s.push_back(_For("j", 0, n_idx, 1, _Block(std::move(inner))));
    s.push_back(_Store(Buffer(out.name), Address(out, c), acc));
    return s;
  }

  std::vector<Stmt> Reshape() {
    const lang::TensorDecl &out = Out(0), &in = In(0);
    std::vector<Stmt> s;
    std::vector<Expr> oc = OutCoords(out.shape.dims, "o", s);
    Expr linear = E();  // the element's row-major position
    if (!out_coords_.empty()) {
      linear = _Const(0);
      for (size_t d = 0; d < oc.size(); ++d) linear = linear * out.shape.dims[d] + oc[d];
    }
    std::vector<Expr> ic = Coords(linear, in.shape.dims, "i", s);
    s.push_back(_Store(Buffer(out.name), Address(out, oc),
                       ConvertValue(_Load(Buffer(in.name), Address(in, ic)), out.shape.dtype)));
    return s;
  }

  std::vector<Stmt> Shape() {
    const lang::TensorDecl &out = Out(0), &in = In(0);
    std::vector<Stmt> s;
    for (size_t d = 0; d < in.shape.dims.size(); ++d)
      s.push_back(_Store(Buffer(out.name), _Const(static_cast<int64_t>(d)),
                         _Const(in.shape.dims[d], out.shape.dtype)));
    return s;
  }

  // taus88, as the reference evaluator: column t = e steps for elements
  // t, t + 2048, … in order; value = float(s1 ^ s2 ^ s3) / 2^32.
  std::vector<Stmt> Prng() {
    const lang::TensorDecl &value = Out(0), &state_out = Out(1), &state = In(0);
    TILEC_CHECK(value.shape.dtype == DataType::F32 && state_out.shape.dtype == DataType::U32,
                "prng outputs must be value f32 then state u32");
    Type u = Type::Scalar(DataType::U32);
    std::vector<Stmt> s;
    for (int k = 0; k < 3; ++k)
      s.push_back(_Declare(u, fmt::format("s{}", k + 1),
                           _Load(Buffer(state.name), E() + int64_t{2048} * k)));
    Expr s1 = _Var("s1", u), s2 = _Var("s2", u), s3 = _Var("s3", u);
    auto c = [&](uint32_t v) { return _Const(static_cast<int64_t>(v), DataType::U32); };
    std::vector<Stmt> step;
    step.push_back(_Declare(u, "b1", (((s1 << c(13)) ^ s1) >> c(19))));
    step.push_back(_Assign(s1, (((s1 & c(4294967294u)) << c(12)) ^ _Var("b1", u))));
    step.push_back(_Declare(u, "b2", (((s2 << c(2)) ^ s2) >> c(25))));
    step.push_back(_Assign(s2, (((s2 & c(4294967288u)) << c(4)) ^ _Var("b2", u))));
    step.push_back(_Declare(u, "b3", (((s3 << c(3)) ^ s3) >> c(11))));
    step.push_back(_Assign(s3, (((s3 & c(4294967280u)) << c(17)) ^ _Var("b3", u))));
    Expr bits = s1 ^ s2 ^ s3;
    Expr v = _Cast(Type::Scalar(DataType::F32), bits) * _Float(1.0 / 4294967296.0, DataType::F32);
    std::vector<Expr> vc = Coords(_Var("i", Type::Index()), value.shape.dims, "c", step);
    step.push_back(_Store(Buffer(value.name), Address(value, vc), v));
    s.push_back(_For("i", E(), _Const(Count(value)), 2048, _Block(std::move(step))));
    if (DensePadded(value)) {  // zero the padding
      std::vector<Stmt> pad;
      Expr p = _Var("p", Type::Index());
      Expr inside = BufferCoords(p, value, "q", pad).second;
      pad.push_back(_If(_Not(inside), _Store(Buffer(value.name), p, ZeroOf(value.shape.dtype))));
      s.push_back(_For("p", E(), _Const(value.layout.elements), 2048, _Block(std::move(pad))));
    }
    for (int k = 0; k < 3; ++k)
      s.push_back(_Store(Buffer(state_out.name), E() + int64_t{2048} * k,
                         _Var(fmt::format("s{}", k + 1), u)));
    return s;
  }

  // A polynomial scaled by its common denominator: (sum num*v + c) / den.
  struct Scaled {
    Expr numerator;
    int64_t den = 1;
  };

  Scaled Scale(const lang::Polynomial& p, const std::map<std::string, Expr>& vars) const {
    // Checked: a fuzzer's index "i / 2 - 77777772777777777 * a" overflowed
    // the scaled coefficients (UserError, as every flat quantity).
    constexpr const char* kWhat = "an index polynomial of a direct kernel";
    int64_t den = p.constant.den;
    for (const auto& [v, c] : p.terms) den = CheckedMul(den / std::gcd(den, c.den), c.den, kWhat);
    Scaled s;
    s.den = den;
    s.numerator = _Const(CheckedMul(p.constant.num, den / p.constant.den, kWhat));
    for (const auto& [v, c] : p.terms)
      s.numerator = s.numerator + vars.at(v) * CheckedMul(c.num, den / c.den, kWhat);
    return s;
  }

  // The largest magnitude of an index-typed value Direct() computes: loop
  // bounds, scaled index and constraint numerators and the limits they are
  // compared with (a constraint `a < 4294967296` needs the i64 index type
  // even when every tensor is small). Saturates at INT64_MAX.
  int64_t DirectIndexMagnitude() const {
    const lang::ContractionOp& op = spec_.contraction;
    std::map<std::string, double> var_max;
    double biggest = 0;
    for (size_t v = 0; v < op.index_vars.size(); ++v) {
      const auto& b = op.bounds[v];
      double m = std::max(std::fabs(static_cast<double>(b.lo)), std::fabs(static_cast<double>(b.hi) + 1));
      var_max[op.index_vars[v]] = m;
      biggest = std::max(biggest, m);
    }
    auto scaled = [&](const lang::Polynomial& p, double limit) {
      int64_t den = p.constant.den;
      for (const auto& [v, c] : p.terms) den = std::lcm(den, c.den);
      double m = std::fabs(static_cast<double>(p.constant.num) * static_cast<double>(den / p.constant.den));
      // Each scaled coefficient is a constant of the code even where its
      // variable's range is empty (max 1).
      for (const auto& [v, c] : p.terms)
        m += std::fabs(static_cast<double>(c.num) * static_cast<double>(den / c.den)) * std::max(var_max.at(v), 1.0);
      biggest = std::max({biggest, m, limit * static_cast<double>(den)});
    };
    const lang::TensorDecl& out = program_.Tensor(op.output);
    for (size_t d = 0; d < op.output_index.size(); ++d)
      scaled(op.output_index[d], static_cast<double>(out.shape.dims[d]));
    for (const auto& in : op.inputs) {
      const lang::TensorDecl& t = program_.Tensor(in.tensor);
      for (size_t d = 0; d < in.index.size(); ++d)
        scaled(in.index[d], static_cast<double>(t.shape.dims[d]));
    }
    for (const auto& c : op.constraints) scaled(c.poly, static_cast<double>(c.range));
    constexpr double kMax = static_cast<double>(std::numeric_limits<int64_t>::max());
    return biggest >= kMax ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(biggest);
  }

  // One work item per output element: enumerate the index assignments that
  // land on it (vars fixed by an output dimension `v + c` are solved for).
  std::vector<Stmt> Direct() {
    const lang::ContractionOp& op = spec_.contraction;
    const lang::TensorDecl& out = program_.Tensor(op.output);
    DataType t = out.shape.dtype;
    std::vector<Stmt> s;
    std::vector<Expr> oc = OutCoords(out.shape.dims, "o", s);
    std::map<std::string, Expr> vars;
    std::map<std::string, size_t> bound_pos;
    for (size_t v = 0; v < op.index_vars.size(); ++v) bound_pos[op.index_vars[v]] = v;
    Expr solved_ok;
    auto and_ = [](Expr a, Expr b) { return a ? _LogicalAnd(a, b) : b; };
    for (size_t d = 0; d < op.output_index.size(); ++d) {
      const lang::Polynomial& p = op.output_index[d];
      if (p.terms.size() != 1 || !p.constant.IsInteger()) continue;
      const auto& [v, c] = *p.terms.begin();
      if (c != lang::Rational(1) || vars.count(v)) continue;
      std::string name = fmt::format("x_{}", bound_pos[v]);
      s.push_back(_Declare(Type::Index(), name, oc[d] - p.constant.num));
      vars[v] = _Var(name, Type::Index());
      const auto& b = op.bounds[bound_pos[v]];
      solved_ok = and_(solved_ok, _LogicalAnd(vars[v] >= b.lo, vars[v] <= b.hi));
    }
    std::vector<std::string> free;
    for (size_t v = 0; v < op.index_vars.size(); ++v)
      if (!vars.count(op.index_vars[v])) {
        free.push_back(op.index_vars[v]);
        vars[op.index_vars[v]] = _Var(fmt::format("x_{}", v), Type::Index());
      }
    s.push_back(_Declare(Type::Scalar(t), "acc", lang::IsFloat(t) ? _Float(0, t) : _Const(0, t)));
    s.push_back(_Declare(Type::Bool(), "hit", _Bool(false)));
    Expr acc = _Var("acc", Type::Scalar(t)), hit = _Var("hit", Type::Bool());

    // Validity of the point and the input values.
    Expr ok;
    std::vector<Stmt> point;
    for (size_t d = 0; d < op.output_index.size(); ++d) {
      Scaled sc = Scale(op.output_index[d], vars);
      ok = and_(ok, _Eq(sc.numerator, oc[d] * sc.den));
    }
    std::vector<Expr> values;
    for (size_t a = 0; a < op.inputs.size(); ++a) {
      const lang::TensorDecl& in = program_.Tensor(op.inputs[a].tensor);
      std::vector<Expr> ic;
      for (size_t d = 0; d < op.inputs[a].index.size(); ++d) {
        Scaled sc = Scale(op.inputs[a].index[d], vars);
        std::string name = fmt::format("n{}_{}", a, d);
        point.push_back(_Declare(Type::Index(), name, sc.numerator));
        Expr n = _Var(name, Type::Index());
        Expr coord = sc.den == 1 ? n : n / sc.den;
        if (sc.den != 1) ok = and_(ok, _Eq(n % sc.den, _Const(0)));
        ok = and_(ok, _LogicalAnd(n >= 0, n < in.shape.dims[d] * sc.den));
        ic.push_back(coord);
      }
      Expr addr = _Clamp(Address(in, ic), _Const(0), _Const(std::max<int64_t>(in.layout.elements - 1, 0)));
      values.push_back(_Load(Buffer(in.name), addr));
    }
    for (const auto& c : op.constraints) {
      Scaled sc = Scale(c.poly, vars);
      std::string name = fmt::format("k{}", point.size());
      point.push_back(_Declare(Type::Index(), name, sc.numerator));
      Expr n = _Var(name, Type::Index());
      if (sc.den != 1) ok = and_(ok, _Eq(n % sc.den, _Const(0)));
      ok = and_(ok, _LogicalAnd(n >= 0, n < c.range * sc.den));
    }
    Expr v = CombineValues(op.comb, values, t);
    Expr agg = Aggregate(op.agg, acc, v, hit, t);
    Stmt update = _Block({_Assign(acc, agg), _Assign(hit, _Bool(true))});
    point.push_back(ok ? _If(ok, update) : update);
    Stmt nest = _Block(std::move(point));
    for (auto it = free.rbegin(); it != free.rend(); ++it) {
      size_t pos = bound_pos[*it];
      const auto& b = op.bounds[pos];
      nest = _For(fmt::format("x_{}", pos), _Const(b.lo), _Const(b.hi + 1), 1, nest);
    }
    s.push_back(solved_ok ? _If(solved_ok, nest) : nest);
    Expr unreached = lang::IsFloat(t) ? _Float(0, t) : _Const(0, t);
    if (op.default_tensor) {
      const lang::TensorDecl& def = program_.Tensor(*op.default_tensor);
      unreached = ConvertValue(_Load(Buffer(def.name), Address(def, oc)), t);
    }
    s.push_back(_Store(Buffer(out.name), Address(out, oc), _Select(hit, acc, unreached)));
    return s;
  }

  static Expr Aggregate(lang::ast::AggOp agg, Expr acc, Expr v, Expr hit, DataType t) {
    using lang::ast::AggOp;
    lang::ElementwiseOp e;
    e.compute_type = t;
    switch (agg) {
      case AggOp::Sum: e.fn = lang::ElemFn::Add; break;
      case AggOp::Prod: e.fn = lang::ElemFn::Mul; break;
      case AggOp::Max: e.fn = lang::ElemFn::Max; break;
      case AggOp::Min: e.fn = lang::ElemFn::Min; break;
      case AggOp::Assign: return v;
    }
    if (t == DataType::Bool) {
      return _Select(hit, AggCombineBool(agg, acc, v), v);
    }
    return _Select(hit, GenerateElementwise(e, {acc, v}, t), v);
  }

  const KernelSpec& spec_;
  const lang::Program& program_;
  std::vector<Expr> params_;
  std::vector<Expr> out_coords_;  // set when the output has padding (BufferCoords)
};

}  // namespace

namespace {

// Special and Direct kernels; nothing to choose, so Plan only records the
// kernel and Emit generates it.
class SpecialFormImpl final : public FormImpl {
 public:
  Form id() const override { return Form::Special; }
  std::optional<FormPlan> Plan(const KernelSpec& spec, const lang::Program& program, const HardwareModel& hw,
                               const CodegenOptions& options) const override {
    if (spec.kind != KernelKind::Special && spec.kind != KernelKind::Direct) return std::nullopt;
    return StartPlan(id(), spec, program, hw, options);
  }
  GeneratedKernel Emit(const FormPlan& plan) const override {
    GeneratedKernel k = SpecialGen(*plan.spec, *plan.program).Run();
    k.form = id();
    return k;
  }
};

}  // namespace

const FormImpl& SpecialForm() {
  static const SpecialFormImpl form;
  return form;
}

}  // namespace tilec::compiler
