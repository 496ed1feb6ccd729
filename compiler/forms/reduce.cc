// ReduceForm (forms/form.h): the CPU form of a reduction along a contiguous axis.
//
// The vector form (forms/vector.cc) puts its lanes along an output index, so it
// cannot serve a reduction whose reduced axis is the contiguous one (a row
// sum, a row max in softmax, GEMV, a full sum, global pooling of NCHW data):
// no output index moves by 1 through the input. This form puts the lanes
// along the reduced axis instead:
//
//   * the run r: the reduction index with stride 1 in the first input (and 0
//     or 1 in the others), merged with every reduction index that continues
//     it (h of an NCHW image whose w is r: stride W = range of w), R values;
//   * one work item per output element (every output index on the launch
//     grid, the one with the smallest output stride fastest), the other
//     reductions plain loops around the run;
//   * NA independent vector accumulators of W lanes (so the adds do not wait
//     on each other's latency): a loop loads NA vectors per step, then the
//     rest of the run takes whole vectors and one masked tail vector (R is
//     known when the kernel is built, so all of that is straight-line code);
//   * the accumulators are combined, then the lanes (a horizontal reduce),
//     then the post-ops run on the scalar and the kernel stores it.
//
// Every aggregation but Assign: Sum (0), Prod (1), Max (-inf, or the type's
// lowest integer), Min (+inf, or the highest); float types, and integers
// (Sum and Prod in the unsigned type of the same width: signed overflow
// wraps, as in the evaluator). Combinations: one input, or Sum of a product
// of two (GEMV), each input read as a vector (stride 1 along r) or a
// broadcast (stride 0). No constraints: every output element is then
// reached by some point, so no `hit` flags are needed.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>

#include "compiler/forms/common.h"
#include "compiler/forms/elementwise.h"
#include "compiler/sem/builder.h"
#include "support/error.h"

namespace tilec::compiler {
namespace {

using lang::DataType;
using lang::ast::AggOp;
using lang::ast::CombOp;
using namespace sem::builder;
using sem::Expr;
using sem::Stmt;
using sem::Type;

constexpr int kAccumulators = 4;

std::string_view AggName(AggOp op) {
  switch (op) {
    case AggOp::Sum: return "sum";
    case AggOp::Prod: return "product";
    case AggOp::Max: return "max";
    case AggOp::Min: return "min";
    case AggOp::Assign: return "assign";
  }
  return "?";
}

// The reduce form's decisions (FormPlan::state): Plan makes them, nothing
// changes them after.
class ReducePlan : public FormState {
 public:
  ReducePlan(const KernelSpec& spec, const lang::Program& program, const HardwareModel& hw)
      : spec_(spec), flat_(spec.flat), program_(program), hw_(hw) {}

  // false: the kernel does not fit the form.
  bool Plan() {
    if (spec_.kind != KernelKind::Contraction || !flat_.generate_contraction) return false;
    if (spec_.store_reached_only || !flat_.constraints.empty() || !flat_.padding.empty()) return false;
    AggOp agg = flat_.agg_op;
    if (agg == AggOp::Assign) return false;
    dtype_ = flat_.agg_type;
    bool is_float = dtype_ == DataType::F32 || dtype_ == DataType::F64;
    if (!is_float && !lang::IsInteger(dtype_)) return false;  // f16, bool: the flat form
    if (flat_.comb_op == CombOp::Mul) {
      if (agg != AggOp::Sum || !is_float) return false;
    } else if (flat_.comb_op != CombOp::None) {
      return false;
    }
    for (int a = 1; a <= flat_.num_inputs; ++a) {
      DataType t = flat_.accesses[a].dtype;
      if (t != dtype_ && !(is_float && (t == DataType::F32 || t == DataType::F64))) return false;
    }
    acc_type_ = (agg == AggOp::Sum || agg == AggOp::Prod) ? UnsignedOf(dtype_) : dtype_;

    const std::vector<int64_t>& out_strides = flat_.output().strides;
    const FlatAccess& first = flat_.accesses[1];
    for (int i = 0; i < flat_.num_indices() && r_ < 0; ++i) {
      if (out_strides[i] != 0 || first.strides[i] != 1) continue;
      bool ok = true;
      for (int a = 2; a <= flat_.num_inputs; ++a)
        ok &= flat_.accesses[a].strides[i] == 0 || flat_.accesses[a].strides[i] == 1;
      if (ok) r_ = i;
    }
    if (r_ < 0) return false;
    // Merge the reductions that continue the run (stride = run length in
    // every input that moves along it, 0 in the others).
    run_ = {r_};
    range_ = flat_.indices[r_].range;
    for (bool grew = true; grew;) {
      grew = false;
      for (int i = 0; i < flat_.num_indices(); ++i) {
        if (out_strides[i] != 0 || std::count(run_.begin(), run_.end(), i)) continue;
        bool ok = true;
        for (int a = 1; a <= flat_.num_inputs; ++a) {
          const std::vector<int64_t>& s = flat_.accesses[a].strides;
          ok &= s[i] == s[r_] * range_;
        }
        if (!ok) continue;
        run_.push_back(i);
        range_ = CheckedMul(range_, flat_.indices[i].range, "a reduction run");
        grew = true;
      }
    }
    for (int i = 0; i < flat_.num_indices(); ++i) {
      if (std::count(run_.begin(), run_.end(), i)) continue;
      if (out_strides[i] == 0) outer_.push_back(i);
      else grid_.push_back(i);
    }
    std::stable_sort(grid_.begin(), grid_.end(),
                     [&](int a, int b) { return std::abs(out_strides[a]) < std::abs(out_strides[b]); });
    grid_items_ = 1;
    for (int i : grid_) grid_items_ = CheckedMul(grid_items_, flat_.indices[i].range, "the launch size");
    // Lanes: as many as the registers hold, but no more than the run needs.
    int64_t max_w = std::clamp<int64_t>(hw_.vec_size * 32 / lang::BitWidth(dtype_), 2, 16);
    w_ = 2;
    while (w_ < max_w && w_ < range_) w_ *= 2;
    na_ = static_cast<int>(std::clamp<int64_t>((range_ + w_ - 1) / w_, 1, kAccumulators));
    return true;
  }

  std::string PlanText() const {
    std::vector<std::string> run, outer, grid;
    for (int i : run_) run.push_back(flat_.indices[i].name);
    for (int i : outer_) outer.push_back(flat_.indices[i].name);
    for (int i : grid_) grid.push_back(flat_.indices[i].name);
    std::string s = fmt::format("Reduction form: {} of {} along {} ({} values), {} accumulators x {} lanes",
                                AggName(flat_.agg_op), sem::ScalarName(dtype_), fmt::join(run, "*"),
                                range_, na_, w_);
    if (Tail() > 0) s += ", masked tail";
    s += ", horizontal reduce\n";
    s += fmt::format("Grid: {} work items (one per output element: {})\n", grid_items_,
                     grid.empty() ? std::string("-") : fmt::format("{}", fmt::join(grid, ", ")));
    s += fmt::format("Outer reduction loops: {}\n",
                     outer.empty() ? std::string("-") : fmt::format("{}", fmt::join(outer, ", ")));
    std::vector<std::string> kinds;
    for (int a = 1; a <= flat_.num_inputs; ++a)
      kinds.push_back(fmt::format("{} {}", flat_.accesses[a].tensor,
                                  flat_.accesses[a].strides[r_] == 1 ? "vector" : "broadcast"));
    s += fmt::format("Inputs: {}\n", fmt::join(kinds, ", "));
    return s;
  }

 protected:
  int64_t Step() const { return int64_t{na_} * w_; }
  int64_t MainEnd() const { return range_ / Step() * Step(); }  // the unrolled loop's end
  int64_t Tail() const { return range_ % w_; }                    // lanes of the masked vector

  const KernelSpec& spec_;
  const FlatContraction& flat_;
  const lang::Program& program_;
  const HardwareModel& hw_;

  DataType dtype_ = DataType::F32;     // the aggregation type
  DataType acc_type_ = DataType::F32;  // the accumulators' (unsigned for integer sums)
  int r_ = -1;                         // the run's first (stride 1) index
  std::vector<int> run_, outer_, grid_;
  int64_t range_ = 1;  // values in the run
  int w_ = 2;
  int na_ = 1;
  int64_t grid_items_ = 1;
};

// Builds the kernel a ReducePlan describes. The emission reads the
// decisions as its own members, from a copy: the plan stays as planned,
// and one plan can be emitted again.
class ReduceEmitter : private ReducePlan {
 public:
  explicit ReduceEmitter(const ReducePlan& plan) : ReducePlan(plan) {}

  GeneratedKernel Emit() {
    names_ = IndexNames(flat_);
    std::vector<Stmt> top;
    GeneratedKernel out = StartCpuKernel(spec_, program_, params_, top);
    pos_.assign(flat_.num_indices(), nullptr);
    // Output positions from the work-item id (fastest first).
    DeclareGridPositions(flat_, names_, grid_, _Index(sem::ThreadIndexKind::GroupId, 0), top, pos_);
    for (int a = 0; a < na_; ++a) top.push_back(_Declare(AccType(), AccName(a), Identity()));
    if (Tail() > 0) {
      // Lanes [0, tail) of the last vector are inside the run.
      top.push_back(_Declare(Type::Bool(w_), "tail_mask", _Broadcast(_Bool(false), w_)));
      for (int k = 0; k < Tail(); ++k)
        top.push_back(_Assign(TailMask(), _Insert(TailMask(), k, _Bool(true))));
    }
    top.push_back(Loops(0));
    // Combine the accumulators, then the lanes.
    for (int a = 1; a < na_; ++a) top.push_back(_Assign(Acc(0), Agg(Acc(0), Acc(a))));
    // Lanes pairwise (lane k with k + W/2, then the halves' halves), which
    // keeps float rounding like a tree's rather than a chain's.
    std::vector<Expr> lanes;
    for (int k = 0; k < w_; ++k) lanes.push_back(_Extract(Acc(0), k));
    while (lanes.size() > 1) {
      size_t half = lanes.size() / 2;
      for (size_t k = 0; k < half; ++k) lanes[k] = Agg(lanes[k], lanes[k + half]);
      lanes.resize(half);
    }
    Expr total = lanes[0];
    top.push_back(_Declare(Type::Scalar(acc_type_), "red_total", total));
    Expr value = _Var("red_total", Type::Scalar(acc_type_));
    if (acc_type_ != dtype_) value = _Cast(Type::Scalar(dtype_), value);
    top.push_back(Epilogue(value));

    return EndCpuKernel(std::move(out), std::move(top), {grid_items_, 1, 1});
  }

 private:
  Type AccType() const { return Type::Scalar(acc_type_, w_); }
  static std::string AccName(int a) { return fmt::format("acc_{}", a); }
  Expr Acc(int a) const { return _Var(AccName(a), AccType()); }
  Expr TailMask() const { return _Var("tail_mask", Type::Bool(w_)); }
  Expr I(int64_t v) const { return _Const(v); }

  Expr Identity() const { return AggIdentity(flat_.agg_op, AccType()); }

  // The aggregation of two values of the accumulator type.
  Expr Agg(Expr a, Expr b) const { return AggCombine(flat_.agg_op, std::move(a), std::move(b)); }

  // Element offset of access `a` at the current positions, moved by `k`
  // along the run.
  Expr Address(const FlatAccess& a, Expr k) const {
    Expr e = I(a.offset);
    for (int i = 0; i < flat_.num_indices(); ++i)
      if (a.strides[i] != 0 && pos_[i]) e = e + pos_[i] * a.strides[i];
    if (k && a.strides[r_] != 0) e = e + k * a.strides[r_];
    return e;
  }
  Expr Buffer(const std::string& tensor) const { return BufferOf(spec_, params_, tensor); }

  // The combined input values at run offset k (W lanes), `mask` the tail.
  Expr Value(Expr k, Expr mask) const {
    std::vector<Expr> in;
    for (int a = 1; a <= flat_.num_inputs; ++a) {
      const FlatAccess& acc = flat_.accesses[a];
      Expr v = acc.strides[r_] == 1 ? _Load(Buffer(acc.tensor), Address(acc, k), w_, mask)
                                    : _Broadcast(_Load(Buffer(acc.tensor), Address(acc, nullptr)), w_);
      if (v->type.dtype != acc_type_) v = _Cast(AccType(), v);
      in.push_back(v);
    }
    return flat_.comb_op == CombOp::Mul ? in[0] * in[1] : in[0];
  }

  // acc_a aggregated with the values at run offset k.
  Stmt Update(int a, Expr k, Expr mask) const {
    if (flat_.comb_op == CombOp::Mul && lang::IsFloat(acc_type_)) {
      std::vector<Expr> in;
      for (int b = 1; b <= 2; ++b) {
        const FlatAccess& acc = flat_.accesses[b];
        Expr v = acc.strides[r_] == 1 ? _Load(Buffer(acc.tensor), Address(acc, k), w_, mask)
                                      : _Broadcast(_Load(Buffer(acc.tensor), Address(acc, nullptr)), w_);
        if (v->type.dtype != acc_type_) v = _Cast(AccType(), v);
        in.push_back(v);
      }
      return _Assign(Acc(a), MulAdd(hw_, in[0], in[1], Acc(a)));
    }
    Expr update = Agg(Acc(a), Value(k, mask));
    // Masked-off lanes load 0: the identity of a sum, not of the others.
    if (mask && flat_.agg_op != AggOp::Sum) update = _Select(mask, update, Acc(a));
    return _Assign(Acc(a), update);
  }

  // The outer reduction loops from level `level`, the run innermost.
  Stmt Loops(size_t level) {
    if (level < outer_.size()) {
      int i = outer_[level];
      pos_[i] = _Var(names_[i], Type::Index());
      Stmt body = Loops(level + 1);
      pos_[i] = nullptr;
      return _For(names_[i], I(0), I(flat_.indices[i].range), 1, body);
    }
    std::vector<Stmt> run;
    if (MainEnd() > 0) {
      std::vector<Stmt> step;
      Expr k = _Var("run_k", Type::Index());
      for (int a = 0; a < na_; ++a) step.push_back(Update(a, k + int64_t{a} * w_, nullptr));
      run.push_back(_For("run_k", I(0), I(MainEnd()), Step(), _Block(std::move(step))));
    }
    int a = 0;
    int64_t k = MainEnd();
    for (; k + w_ <= range_; k += w_) run.push_back(Update(a++ % na_, I(k), nullptr));
    if (Tail() > 0) run.push_back(Update(a % na_, I(k), TailMask()));
    return _Block(std::move(run));
  }

  // Post-ops on the reduced scalar, then the stores.
  Stmt Epilogue(Expr value) {
    std::vector<Stmt> s;
    std::map<std::string, Expr> env;
    int counter = 0;
    auto declare = [&](const std::string& tensor, Expr v) {
      std::string name = fmt::format("r{}_{}", counter++, Sanitize(tensor));
      s.push_back(_Declare(v->type, name, v));
      env[tensor] = _Var(name, v->type);
    };
    declare(flat_.output().tensor, value);
    for (const lang::ElementwiseOp& op : flat_.post_ops) {
      std::vector<Expr> operands;
      for (const lang::Operand& o : op.operands) {
        if (!o.is_tensor) operands.push_back(ScalarConst(o.scalar));
        else if (env.count(o.tensor)) operands.push_back(env[o.tensor]);
        else operands.push_back(_Load(Buffer(o.tensor), Address(PointAccess(spec_, o.tensor), nullptr)));
      }
      Expr coordinate;
      if (op.fn == lang::ElemFn::Index) {
        coordinate = I(spec_.coords.constant.at(op.axis));
        for (int i = 0; i < flat_.num_indices(); ++i) {
          int64_t c = spec_.coords.coeffs.at(op.axis)[i];
          if (c != 0 && pos_[i]) coordinate = coordinate + pos_[i] * c;
        }
      }
      declare(op.output, GenerateElementwise(op, std::move(operands),
                                             program_.Tensor(op.output).shape.dtype, coordinate));
    }
    for (const std::string& t : flat_.kernel_outputs) {
      TILEC_CHECK(env.count(t), "kernel {} writes {} but never computes it", spec_.name, t);
      DataType dt = program_.Tensor(t).shape.dtype;
      s.push_back(_Store(Buffer(t), Address(PointAccess(spec_, t), nullptr), ConvertValue(env[t], dt)));
    }
    return _Block(std::move(s));
  }

  std::vector<std::string> names_;
  std::vector<Expr> params_;
  std::vector<Expr> pos_;
};

}  // namespace

// Plan decides (ReducePlan), Emit builds (ReduceEmitter).
const FormImpl& ReduceForm() {
  static const PlannedCpuForm<Form::Reduce, ReducePlan, ReduceEmitter> form;
  return form;
}

}  // namespace tilec::compiler
