// RowGroupForm (forms/form.h): the form of a RowGroup kernel (ir/kernel.h,
// passes/fuse_reductions.h) — row reductions and the elementwise ops around them
// in one kernel.
//
//   * Work items over blocks of rows (a block of about 4096 values, but
//     enough items for every core); each row is a loop iteration.
//   * Per row, the ops in program order: a row reduction is one pass over
//     the row — NA independent accumulators of W lanes, whole vectors, then
//     one masked tail vector, a horizontal reduce — whose input values are
//     computed inside the pass from the kernel's inputs: every elementwise op
//     with a full-row result is inlined (recomputed) wherever it is read, so
//     it is never stored unless a later kernel or the caller reads it.
//     An elementwise op with one value per row is computed once, as a
//     scalar, when its turn comes.
//   * Last, if the kernel writes a full-row tensor, one pass computes and
//     stores those (masked tail). A full tensor a reduction pass computes
//     with a transcendental function and the store pass needs again
//     (softmax's E) is stashed by that pass in the row of an output of its
//     type and loaded back (from cache) by the store pass; a float division
//     by a per-row value is a multiply by its reciprocal, once per row.
//
// The passes re-read inputs a row at a time, from cache when the row fits
// (Lower forms a group only then). Lanes: vectors when every full-row op is
// vector-safe (forms/elementwise.h) and every reduction is of a float type;
// otherwise one value at a time (W = 1), which keeps integer arithmetic
// exactly the evaluator's.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include "compiler/forms/common.h"
#include "compiler/forms/elementwise.h"
#include "compiler/sem/builder.h"
#include "support/error.h"

namespace tilec::compiler {
namespace {

using lang::ContractionOp;
using lang::DataType;
using lang::ElementwiseOp;
using lang::ast::AggOp;
using namespace sem::builder;
using sem::Expr;
using sem::Stmt;
using sem::Type;

constexpr int kAccumulators = 4;
constexpr int64_t kItemValues = 4096;  // values a work item takes, about

// The row group form's decisions (FormPlan::state): Plan makes them,
// nothing changes them after.
class RowGroupPlan : public FormState {
 public:
  RowGroupPlan(const KernelSpec& spec, const lang::Program& program, const HardwareModel& hw)
      : spec_(spec), g_(spec.row_group), program_(program), hw_(hw) {}

  void Plan() {
    for (const lang::Op& op : g_.ops) {
      std::string name;
      if (auto* c = std::get_if<ContractionOp>(&op)) {
        name = c->output;
        vector_ &= lang::IsFloat(program_.Tensor(c->output).shape.dtype);
      } else {
        const ElementwiseOp& e = std::get<ElementwiseOp>(op);
        name = e.output;
        if (IsFull(e.output)) vector_ &= IsVectorSafe(e);
      }
      tensors_[name] = {&op, IsFull(name)};
    }
    PlanStashes();
    int bits = 32;
    for (const lang::Op& op : g_.ops) {
      std::string name = std::holds_alternative<ContractionOp>(op) ? std::get<ContractionOp>(op).output
                                                                   : std::get<ElementwiseOp>(op).output;
      bits = std::max(bits, lang::BitWidth(program_.Tensor(name).shape.dtype));
    }
    for (const std::string& t : spec_.inputs) bits = std::max(bits, lang::BitWidth(program_.Tensor(t).shape.dtype));
    w_ = 1;
    if (vector_) {
      int64_t max_w = std::clamp<int64_t>(hw_.vec_size * 32 / bits, 2, 16);
      w_ = 2;
      while (w_ < max_w && w_ < g_.length) w_ *= 2;
    }
    na_ = static_cast<int>(std::clamp<int64_t>((g_.length + w_ - 1) / w_, 1, kAccumulators));
    rows_ = 1;
    for (int64_t r : g_.rows) rows_ = CheckedMul(rows_, r, "the rows of a row group");
    int64_t cores = std::max<int64_t>(hw_.compute_units, 1);
    block_ = std::clamp<int64_t>(kItemValues / g_.length, 1, std::max<int64_t>(1, rows_ / (8 * cores)));
    items_ = (rows_ + block_ - 1) / block_;
  }

  std::string PlanText() const {
    int reductions = 0;
    for (const lang::Op& op : g_.ops) reductions += std::holds_alternative<ContractionOp>(op);
    bool stores_full = false;
    for (const std::string& t : spec_.outputs) stores_full |= IsFull(t);
    std::string s = fmt::format("Row group form: {} rows of {} values, {} reduction pass{}{}, ", rows_,
                                g_.length, reductions, reductions == 1 ? "" : "es",
                                stores_full ? " and a store pass" : "");
    if (w_ > 1) s += fmt::format("{} accumulators x {} lanes{}\n", na_, w_, Tail() > 0 ? ", masked tail" : "");
    else s += "one value at a time\n";
    s += fmt::format("Grid: {} work items of {} row{}\n", items_, block_, block_ == 1 ? "" : "s");
    s += fmt::format("Writes: {}\n", fmt::join(spec_.outputs, ", "));
    for (const auto& [t, target] : stash_)
      s += fmt::format("Stash: {} in the row of {} (computed once, read back by the store pass)\n", t, target);
    return s;
  }

 protected:
  struct Tensor {
    const lang::Op* op = nullptr;  // defining op, for the group's own tensors
    bool full = false;             // [rows..., length] (else one value per row or less)
  };

  int64_t Tail() const { return g_.length % w_; }
  int64_t Step() const { return int64_t{na_} * w_; }
  int64_t MainEnd() const { return g_.length / Step() * Step(); }

  const KernelSpec& spec_;
  const RowGroupSpec& g_;
  const lang::Program& program_;
  const HardwareModel& hw_;

  std::map<std::string, Tensor> tensors_;     // the group's own
  std::map<std::string, std::string> stash_;  // full tensor -> the output row it is stashed in
  bool vector_ = true;
  int w_ = 1;
  int na_ = 1;
  int64_t rows_ = 1, block_ = 1, items_ = 1;

 private:
  // Own full tensors computed inside `t` (itself included).
  void Closure(const std::string& t, std::set<std::string>& out) const {
    auto own = tensors_.find(t);
    if (own == tensors_.end() || !own->second.full || !out.insert(t).second) return;
    if (auto* e = std::get_if<ElementwiseOp>(own->second.op))
      for (const lang::Operand& o : e->operands)
        if (o.is_tensor) Closure(o.tensor, out);
  }

  static bool Expensive(lang::ElemFn fn) {
    using lang::ElemFn;
    switch (fn) {
      case ElemFn::Exp: case ElemFn::Log: case ElemFn::Pow: case ElemFn::Tanh: case ElemFn::Sin:
      case ElemFn::Cos: case ElemFn::Tan: case ElemFn::Sinh: case ElemFn::Cosh: case ElemFn::Asin:
      case ElemFn::Acos: case ElemFn::Atan: case ElemFn::Sigmoid: case ElemFn::Erf: return true;
      default: return false;
    }
  }

  // A full tensor a reduction pass computes with a transcendental function
  // (softmax's E = exp(X - M)) and the store pass reads again is stashed:
  // the reduction pass stores it into the row of a full output of its type
  // (itself, if it is one), and the store pass loads it back from cache
  // before overwriting that row, instead of computing exp again.
  void PlanStashes() {
    std::set<std::string> store_needs, outputs(spec_.outputs.begin(), spec_.outputs.end());
    for (const std::string& t : spec_.outputs) Closure(t, store_needs);
    std::set<std::string> targets;
    for (const lang::Op& op : g_.ops) {
      auto* c = std::get_if<ContractionOp>(&op);
      if (!c) continue;
      std::set<std::string> computed;
      for (const ContractionOp::Access& a : c->inputs) Closure(a.tensor, computed);
      for (const std::string& t : computed) {
        if (!store_needs.count(t) || stash_.count(t)) continue;
        std::set<std::string> tree;
        Closure(t, tree);
        bool expensive = false;
        for (const std::string& u : tree) expensive |= Expensive(std::get<ElementwiseOp>(*tensors_.at(u).op).fn);
        if (!expensive) continue;
        DataType dt = program_.Tensor(t).shape.dtype;
        std::string target;
        if (outputs.count(t)) target = t;
        for (const std::string& o : spec_.outputs)
          if (target.empty() && tensors_.at(o).full && !targets.count(o) && !stash_.count(o) &&
              program_.Tensor(o).shape.dtype == dt)
            target = o;
        if (target.empty() || targets.count(target)) continue;
        targets.insert(target);
        stash_[t] = target;
      }
    }
  }

  bool IsFull(const std::string& t) const {
    const std::vector<int64_t>& d = program_.Tensor(t).shape.dims;
    return !d.empty() && d.back() == g_.length && g_.length > 1;
  }
};

// Builds the kernel a RowGroupPlan describes. The emission reads the
// decisions as its own members, from a copy: the plan stays as planned,
// and one plan can be emitted again.
class RowGroupEmitter : private RowGroupPlan {
 public:
  explicit RowGroupEmitter(const RowGroupPlan& plan) : RowGroupPlan(plan) {}

  GeneratedKernel Emit() {
    std::vector<Stmt> top;
    GeneratedKernel out = StartCpuKernel(spec_, program_, params_, top);
    if (w_ > 1 && Tail() > 0) {
      top.push_back(_Declare(Type::Bool(w_), "tail_mask", _Broadcast(_Bool(false), w_)));
      for (int k = 0; k < Tail(); ++k) top.push_back(_Assign(TailMask(), _Insert(TailMask(), k, _Bool(true))));
    }
    Expr first = _Index(sem::ThreadIndexKind::GroupId, 0) * block_;
    top.push_back(_Declare(Type::Index(), "row_first", first));
    Expr row_first = _Var("row_first", Type::Index());
    Expr end = rows_ % block_ == 0 ? row_first + block_ : _Min(row_first + block_, I(rows_));
    top.push_back(_For("row", row_first, end, 1, RowBody()));
    return EndCpuKernel(std::move(out), std::move(top), {items_, 1, 1});
  }

 private:
  Expr I(int64_t v) const { return _Const(v); }
  Expr TailMask() const { return _Var("tail_mask", Type::Bool(w_)); }
  Expr Buffer(const std::string& t) const { return BufferOf(spec_, params_, t); }
  std::string Fresh(const std::string& base) { return fmt::format("v{}_{}", counter_++, Sanitize(base)); }

  // Element offset of `t` (broadcast to [rows..., length]) at the current
  // row, at row position 0; *moves set to whether it moves along the row.
  Expr RowAddress(const std::string& t, bool* moves) const {
    const std::vector<int64_t>& dims = program_.Tensor(t).shape.dims;
    size_t full_rank = g_.rows.size() + 1;
    size_t off = full_rank - dims.size();
    Expr e = I(0);
    int64_t stride = 1;
    *moves = false;
    for (size_t d = dims.size(); d-- > 0;) {
      size_t f = off + d;
      if (dims[d] != 1) {
        if (f == full_rank - 1) *moves = true;
        else e = e + coords_[f] * stride;
      }
      stride = CheckedMul(stride, dims[d], "an address");
    }
    return e;
  }

  // The value of `t` for the whole row (an input that does not move along
  // it, or a per-row result of the group).
  Expr RowValue(const std::string& t) {
    if (auto v = row_env_.find(t); v != row_env_.end()) return v->second;
    bool moves = false;
    Expr addr = RowAddress(t, &moves);
    TILEC_CHECK(!moves && !tensors_.count(t), "row group {}: {} is not a per-row value", spec_.name, t);
    return Declare(row_body_, t, _Load(Buffer(t), addr), row_env_);
  }

  Expr Declare(std::vector<Stmt>& body, const std::string& t, Expr v, std::map<std::string, Expr>& env) {
    std::string name = Fresh(t);
    body.push_back(_Declare(v->type, name, v));
    return env[t] = _Var(name, v->type);
  }

  // The value of `t` at row position k (W lanes, `mask` the tail), its
  // computations appended to `body`; `memo` caches them within one step.
  Expr Value(const std::string& t, Expr k, Expr mask, std::vector<Stmt>& body, std::map<std::string, Expr>& memo) {
    if (auto v = memo.find(t); v != memo.end()) return v->second;
    auto own = tensors_.find(t);
    if (own == tensors_.end() || !own->second.full) {
      if (own == tensors_.end()) {
        bool moves = false;
        Expr addr = RowAddress(t, &moves);
        if (moves) return Declare(body, t, _Load(Buffer(t), addr + k, w_, mask), memo);
      }
      return RowValue(t);
    }
    if (stashed_.count(t)) {
      const std::string& target = stash_.at(t);
      bool moves = false;
      return Declare(body, t, _Load(Buffer(target), RowAddress(target, &moves) + k, w_, mask), memo);
    }
    ElementwiseOp e = std::get<ElementwiseOp>(*own->second.op);
    std::vector<Expr> operands;
    for (const lang::Operand& o : e.operands)
      operands.push_back(o.is_tensor ? Value(o.tensor, k, mask, body, memo) : ScalarConst(o.scalar));
    // A float division by a per-row value: its reciprocal once per row and
    // a multiply per element (within 1.5 ULP of the quotient; see
    // passes/hoist_invariants.h).
    if (e.fn == lang::ElemFn::Div && lang::IsFloat(e.compute_type) && e.operands[1].is_tensor &&
        operands[1]->type.width == 1 && w_ > 1) {
      std::string key = "\x01recip " + e.operands[1].tensor;
      if (!row_env_.count(key)) {
        lang::ElementwiseOp recip = e;
        recip.operands[0] = lang::Operand{false, "", lang::Scalar{e.compute_type, true, 0, 1.0}};
        Declare(row_body_, key, GenerateElementwise(recip, {ScalarConst(recip.operands[0].scalar), operands[1]},
                                                    e.compute_type), row_env_);
      }
      e.fn = lang::ElemFn::Mul;
      operands[1] = row_env_.at(key);
    }
    Expr v = Declare(body, t, GenerateElementwise(e, std::move(operands), program_.Tensor(t).shape.dtype), memo);
    if (auto st = stash_.find(t); st != stash_.end() && !stashed_.count(t) && stash_pass_) {
      bool moves = false;
      body.push_back(_Store(Buffer(st->second), RowAddress(st->second, &moves) + k,
                            ConvertValue(v, program_.Tensor(st->second).shape.dtype), false, mask));
      stashing_.insert(t);
    }
    return v;
  }

  Stmt RowBody() {
    row_body_.clear();
    row_env_.clear();
    coords_.assign(g_.rows.size(), nullptr);
    Expr rest = _Var("row", Type::Index());
    for (size_t d = g_.rows.size(); d-- > 0;) {
      std::string name = fmt::format("row_c{}", d);
      row_body_.push_back(_Declare(Type::Index(), name, d == 0 ? rest : rest % g_.rows[d]));
      coords_[d] = _Var(name, Type::Index());
      if (d != 0) rest = rest / g_.rows[d];
    }
    std::set<std::string> outputs(spec_.outputs.begin(), spec_.outputs.end());
    for (const lang::Op& op : g_.ops) {
      if (auto* c = std::get_if<ContractionOp>(&op)) {
        Reduce(*c);
      } else {
        const ElementwiseOp& e = std::get<ElementwiseOp>(op);
        if (tensors_.at(e.output).full) continue;  // computed where read
        std::vector<Expr> operands;
        for (const lang::Operand& o : e.operands)
          operands.push_back(o.is_tensor ? RowValue(o.tensor) : ScalarConst(o.scalar));
        Declare(row_body_, e.output,
                GenerateElementwise(e, std::move(operands), program_.Tensor(e.output).shape.dtype), row_env_);
      }
      std::string t = std::holds_alternative<ContractionOp>(op) ? std::get<ContractionOp>(op).output
                                                                : std::get<ElementwiseOp>(op).output;
      if (!tensors_.at(t).full && outputs.count(t)) {
        bool moves = false;
        Expr addr = RowAddress(t, &moves);
        row_body_.push_back(_Store(Buffer(t), addr, ConvertValue(row_env_.at(t), program_.Tensor(t).shape.dtype)));
      }
    }
    StorePass();
    return _Block(std::move(row_body_));
  }

  // --- Reductions ---------------------------------------------------------------

  Type AccType(DataType acc) const { return Type::Scalar(acc, w_); }

  Expr Identity(AggOp agg, DataType acc) const { return AggIdentity(agg, AccType(acc)); }
  static Expr Agg(AggOp agg, Expr a, Expr b) { return AggCombine(agg, std::move(a), std::move(b)); }

  // acc aggregated with the contraction's values at row position k.
  Stmt Update(const ContractionOp& c, DataType dt, DataType acc_type, Expr acc, Expr k, Expr mask) {
    std::vector<Stmt> body;
    std::map<std::string, Expr> memo;
    std::vector<Expr> in;
    for (const ContractionOp::Access& a : c.inputs) in.push_back(Value(a.tensor, k, mask, body, memo));
    Expr v = CombineValues(c.comb, in, dt);
    if (acc_type != dt) v = _Cast(AccType(acc_type), v);
    Expr update = Agg(c.agg, acc, v);
    // Masked-off lanes computed from zeros: keep the accumulator there.
    if (mask) update = _Select(mask, update, acc);
    body.push_back(_Assign(acc, update));
    return _Block(std::move(body));
  }

  void Reduce(const ContractionOp& c) {
    DataType dt = program_.Tensor(c.output).shape.dtype;
    DataType acc_type = (c.agg == AggOp::Sum || c.agg == AggOp::Prod) ? UnsignedOf(dt) : dt;
    std::vector<Expr> accs;
    for (int a = 0; a < na_; ++a) {
      std::string name = Fresh("acc");
      row_body_.push_back(_Declare(AccType(acc_type), name, Identity(c.agg, acc_type)));
      accs.push_back(_Var(name, AccType(acc_type)));
    }
    // Build the pass's statements first: the per-row values they read are
    // declared into row_body_ ahead of them.
    std::vector<Stmt> pass;
    stash_pass_ = true;
    if (MainEnd() > 0) {
      std::string k_name = Fresh("k");
      Expr k = _Var(k_name, Type::Index());
      std::vector<Stmt> step;
      for (int a = 0; a < na_; ++a) step.push_back(Update(c, dt, acc_type, accs[a], k + int64_t{a} * w_, nullptr));
      pass.push_back(_For(k_name, I(0), I(MainEnd()), Step(), _Block(std::move(step))));
    }
    int a = 0;
    int64_t k = MainEnd();
    for (; k + w_ <= g_.length; k += w_) pass.push_back(Update(c, dt, acc_type, accs[a++ % na_], I(k), nullptr));
    if (Tail() > 0) pass.push_back(Update(c, dt, acc_type, accs[a % na_], I(k), TailMask()));
    stash_pass_ = false;
    stashed_.insert(stashing_.begin(), stashing_.end());
    stashing_.clear();
    for (Stmt& s : pass) row_body_.push_back(std::move(s));
    for (int b = 1; b < na_; ++b) row_body_.push_back(_Assign(accs[0], Agg(c.agg, accs[0], accs[b])));
    Expr total = accs[0];
    if (w_ > 1) {
      std::vector<Expr> lanes;
      for (int l = 0; l < w_; ++l) lanes.push_back(_Extract(accs[0], l));
      while (lanes.size() > 1) {
        size_t half = lanes.size() / 2;
        for (size_t l = 0; l < half; ++l) lanes[l] = Agg(c.agg, lanes[l], lanes[l + half]);
        lanes.resize(half);
      }
      total = lanes[0];
    }
    if (acc_type != dt) total = _Cast(Type::Scalar(dt), total);
    Declare(row_body_, c.output, total, row_env_);
  }

  // --- Stores of full-row results ---------------------------------------------

  Stmt StoreStep(const std::vector<std::string>& full, Expr k, Expr mask) {
    std::vector<Stmt> body;
    std::map<std::string, Expr> memo;
    // Every value first: a stashed one is loaded from a row stored below.
    std::vector<std::pair<std::string, Expr>> values;
    for (const std::string& t : full)
      if (!(stashed_.count(t) && stash_.at(t) == t)) values.emplace_back(t, Value(t, k, mask, body, memo));
    for (const auto& [t, v] : values) {
      bool moves = false;
      Expr addr = RowAddress(t, &moves) + k;
      body.push_back(_Store(Buffer(t), addr, ConvertValue(v, program_.Tensor(t).shape.dtype), false, mask));
    }
    return _Block(std::move(body));
  }

  void StorePass() {
    std::vector<std::string> full;
    for (const std::string& t : spec_.outputs)
      if (tensors_.at(t).full) full.push_back(t);
    if (full.empty()) return;
    std::vector<Stmt> pass;
    int64_t main_end = g_.length / w_ * w_;
    if (main_end > 0) {
      std::string k_name = Fresh("k");
      pass.push_back(_For(k_name, I(0), I(main_end), w_, StoreStep(full, _Var(k_name, Type::Index()), nullptr)));
    }
    if (Tail() > 0) pass.push_back(StoreStep(full, I(main_end), TailMask()));
    for (Stmt& s : pass) row_body_.push_back(std::move(s));
  }

  std::set<std::string> stashed_;   // stashes written by an earlier pass
  std::set<std::string> stashing_;  // stashes the current pass writes
  bool stash_pass_ = false;         // generating a reduction pass
  int counter_ = 0;

  std::vector<Expr> params_;
  std::vector<Expr> coords_;             // row coordinates of the current row
  std::vector<Stmt> row_body_;           // statements of the current row
  std::map<std::string, Expr> row_env_;  // per-row values, by tensor
};

// Every RowGroup kernel takes this form (Lower made it for it). Plan
// decides (RowGroupPlan), Emit builds (RowGroupEmitter).
class RowGroupFormImpl final : public FormImpl {
 public:
  Form id() const override { return Form::RowGroup; }
  std::optional<FormPlan> Plan(const KernelSpec& spec, const lang::Program& program, const HardwareModel& hw,
                               const CodegenOptions& options) const override {
    if (spec.kind != KernelKind::RowGroup) return std::nullopt;
    auto state = std::make_shared<RowGroupPlan>(spec, program, hw);
    state->Plan();
    std::string text = state->PlanText();
    return KeepState(StartPlan(id(), spec, program, hw, options), std::move(state), std::move(text));
  }
  GeneratedKernel Emit(const FormPlan& plan) const override {
    return FinishKernel(plan, RowGroupEmitter(StateOf<RowGroupPlan>(plan, *this)).Emit());
  }
};

}  // namespace

const FormImpl& RowGroupForm() {
  static const RowGroupFormImpl form;
  return form;
}

}  // namespace tilec::compiler
