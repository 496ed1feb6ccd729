// GenerateFlatKernel: contraction, elementwise and fill kernels from their
// flat table, tile, thread plan and read plans — the seed's kernel structure
// (see forms/forms.h and the seed's final kernel).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>

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

Expr And(Expr a, Expr b) { return a ? _LogicalAnd(std::move(a), std::move(b)) : b; }

Expr Zero(DataType t) {
  if (t == DataType::Bool) return _Bool(false);
  return lang::IsFloat(t) ? _Float(0, t) : _Const(0, t);
}

class FlatGen {
 public:
  FlatGen(const KernelSpec& spec, const lang::Program& program, const std::vector<int64_t>& tile,
          const HardwareModel& hw, const CodegenOptions& options)
      : spec_(spec), flat_(spec.flat), program_(program), tile_(tile), hw_(hw), work_group_(options.work_group) {
    contraction_ = flat_.generate_contraction;
    use_local_ = contraction_ && options.use_local;
    int n = flat_.num_indices();
    names_ = IndexNames(flat_);
    gid_.resize(n);
    loc_.resize(n);
  }

  GeneratedKernel Run() {
    GeneratedKernel out;
    plan_ = PlanThreads(flat_, tile_, hw_, work_group_);
    out.function.name = spec_.name;
    out.function.index_type = IndexTypeFor(flat_);
    out.function.params = BufferParams(spec_, program_);
    for (const sem::Param& p : out.function.params) params_.push_back(_Var(p.name, p.type));

    std::vector<Stmt> top;
    top.push_back(_Comment(flat_.comment.empty() ? spec_.name : flat_.comment));
    DeclareThreadIds(top);
    DeclareGroupIds(top);
    if (contraction_) {
      hit_needed_ = NeedsHit();
      DataType t = flat_.agg_type;
      top.push_back(_Declare(Type::Array(Type::Scalar(t), plan_.accumulators), "agg", InitValue()));
      if (hit_needed_)
        top.push_back(_Declare(Type::Array(Type::Bool(), plan_.accumulators), "hit", _Bool(false)));
      if (use_local_) DeclareLocalTiles(top, out.reads);
      Stmt step = ReductionStep();
      for (auto it = plan_.reductions.rbegin(); it != plan_.reductions.rend(); ++it) {
        int r = *it;
        gid_[r] = _Var(names_[r] + "_gid", Type::Index());
        step = _For(names_[r] + "_gid", 0, flat_.indices[r].range, tile_[r], step);
      }
      top.push_back(step);
    }
    top.push_back(Epilogue());
    out.function.body = _Block(std::move(top));
    out.function.work_group_size = std::array<int64_t, 3>{plan_.threads, 1, 1};
    out.local = {plan_.threads, 1, 1};
    out.global = {CheckedMul(plan_.num_groups[0], plan_.threads, "the launch size"),
                  plan_.num_groups[1], plan_.num_groups[2]};
    out.threads = plan_;
    return out;
  }

 private:
  Expr I(int64_t v) const { return _Const(v); }

  Expr Buffer(const std::string& tensor) const { return BufferOf(spec_, params_, tensor); }

  const FlatAccess& PointAccess(const std::string& tensor) const {
    return compiler::PointAccess(spec_, tensor);
  }

  Expr Pos(int i) const {
    Expr g = gid_[i], l = loc_[i];
    if (!g) return l;
    if (!l) return g;
    return g + l;
  }

  // offset + sum stride * (gid + loc), in the index type.
  Expr Address(const FlatAccess& a) const {
    Expr e = I(a.offset);
    for (int i = 0; i < flat_.num_indices(); ++i)
      if (a.strides[i] != 0) e = e + Pos(i) * a.strides[i];
    return e;
  }

  void DeclareThreadIds(std::vector<Stmt>& top) {
    Expr tid = I(0);
    if (plan_.threads > 1) {
      top.push_back(_Declare(Type::Index(), "tid", _Index(sem::ThreadIndexKind::LocalId, 0)));
      tid = _Var("tid", Type::Index());
    }
    tid_all_ = tid;
    tid_.assign(flat_.num_indices(), I(0));
    for (const auto& d : plan_.outputs) {
      if (d.threads == 1) continue;
      Expr e = d.thread_stride == 1 ? tid : tid / d.thread_stride;
      if (d.thread_stride * d.threads < plan_.threads) e = e % d.threads;
      std::string name = names_[d.index] + "_tid";
      top.push_back(_Declare(Type::Index(), name, e));
      tid_[d.index] = _Var(name, Type::Index());
    }
  }

  void DeclareGroupIds(std::vector<Stmt>& top) {
    for (int dim = 0; dim < 3; ++dim) {
      const std::vector<int>& list = plan_.group_dims[dim];
      int64_t below = 1;
      for (auto it = list.rbegin(); it != list.rend(); ++it) {
        const auto& d = plan_.outputs[*it];
        Expr g = _Index(sem::ThreadIndexKind::GroupId, dim);
        if (below > 1) g = g / below;
        if (it + 1 != list.rend()) g = g % d.groups;
        std::string name = names_[d.index] + "_gid";
        top.push_back(_Declare(Type::Index(), name, g * d.tile));
        gid_[d.index] = _Var(name, Type::Index());
        below *= d.groups;
      }
    }
  }

  // Would some output element in the box receive no contribution? False
  // when one reduction point satisfies every constraint at every output
  // point of the box (tried at each reduction index's ends and middle).
  bool MaybeUnreached() const {
    if (flat_.constraints.empty()) return false;
    std::vector<int> reds = plan_.reductions;
    if (reds.size() > 6) return true;
    std::vector<int64_t> choice(flat_.num_indices(), 0);
    std::vector<int> digit(reds.size(), 0);
    while (true) {
      for (size_t k = 0; k < reds.size(); ++k) {
        int64_t range = flat_.indices[reds[k]].range;
        choice[reds[k]] = digit[k] == 0 ? 0 : digit[k] == 1 ? range - 1 : (range - 1) / 2;
      }
      bool all = true;
      for (const FlatConstraint& c : flat_.constraints) {
        int64_t max = 0;
        for (int i = 0; i < flat_.num_indices(); ++i) {
          bool red = std::find(reds.begin(), reds.end(), i) != reds.end();
          int64_t v = red ? choice[i] : (c.lhs[i] > 0 ? flat_.indices[i].range - 1 : 0);
          max += c.lhs[i] * v;
        }
        if (max > c.rhs) {
          all = false;
          break;
        }
      }
      if (all) return false;
      size_t k = 0;
      while (k < digit.size() && ++digit[k] == 3) digit[k++] = 0;
      if (k == digit.size()) return true;
    }
  }

  bool NeedsHit() const {
    using lang::ast::AggOp;
    if (flat_.agg_op == AggOp::Max || flat_.agg_op == AggOp::Min) return true;
    if (!MaybeUnreached()) return false;
    return spec_.store_reached_only || flat_.agg_op == AggOp::Prod;
  }

  Expr InitValue() const {
    DataType t = flat_.agg_type;
    bool one = flat_.agg_op == lang::ast::AggOp::Prod;
    if (t == DataType::Bool) return _Bool(one);
    return lang::IsFloat(t) ? _Float(one ? 1 : 0, t) : _Const(one ? 1 : 0, t);
  }

  void DeclareLocalTiles(std::vector<Stmt>& top, std::vector<ReadPlan>& reads) {
    for (int a = 1; a <= flat_.num_inputs; ++a) {
      ReadPlan plan = PlanRead(flat_, a, tile_, hw_);
      std::string name = fmt::format("in{}_shared", a);
      Type elem = Type::Scalar(flat_.accesses[a].dtype);
      top.push_back(_Declare(Type::Array(elem, plan.local_size, sem::AddressSpace::Local), name));
      local_.push_back(_Var(name, Type::Array(elem, plan.local_size, sem::AddressSpace::Local)));
      reads.push_back(plan);
    }
    reads_ = reads;
  }

  // One reduction tile: staging, the fast or slow compute nest, barriers.
  Stmt ReductionStep() {
    for (int r : plan_.reductions) gid_[r] = _Var(names_[r] + "_gid", Type::Index());
    std::vector<Stmt> s;
    if (use_local_) {
      for (int a = 1; a <= flat_.num_inputs; ++a) s.push_back(LoadTile(a));
      s.push_back(_Barrier());
    }
    if (flat_.constraints.empty()) s.push_back(Compute(false));
    else s.push_back(_If(FastCondition(), Compute(false), Compute(true)));
    if (use_local_) s.push_back(_Barrier());
    return _Block(std::move(s));
  }

  // Every constraint holds everywhere in the current tile.
  Expr FastCondition() const {
    Expr all;
    for (const FlatConstraint& c : flat_.constraints) {
      Expr sum = I(0);
      for (int i = 0; i < flat_.num_indices(); ++i) {
        if (c.lhs[i] == 0) continue;
        Expr base = gid_[i] ? gid_[i] : I(0);
        Expr worst = c.lhs[i] > 0 ? base + (tile_[i] - 1) : base;
        sum = sum + worst * c.lhs[i];
      }
      all = And(all, sum <= c.rhs);
    }
    return all;
  }

  Stmt LoadTile(int a) {
    const ReadPlan& plan = reads_[a - 1];
    const FlatAccess& acc = flat_.accesses[a];
    int64_t total = 1;
    for (const auto& m : plan.merged) total = CheckedMul(total, m.range, "a local tile");
    Expr gbase = I(acc.offset - plan.global_zero);
    for (int i = 0; i < flat_.num_indices(); ++i)
      if (acc.strides[i] != 0 && gid_[i]) gbase = gbase + gid_[i] * acc.strides[i];
    std::string e_name = fmt::format("e{}", a);
    Expr e = _Var(e_name, Type::Index());
    std::vector<Stmt> body;
    Expr lidx = I(0), gidx = gbase;
    Expr rem = e;
    for (size_t k = 0; k < plan.transfer_order.size(); ++k) {
      const auto& m = plan.merged[plan.transfer_order[k]];
      Expr coord = k + 1 == plan.transfer_order.size() ? rem : rem % m.range;
      std::string cname = fmt::format("m{}_{}", a, k);
      body.push_back(_Declare(Type::Index(), cname, coord));
      Expr cv = _Var(cname, Type::Index());
      lidx = lidx + cv * m.local_stride;
      gidx = gidx + cv * m.global_stride;
      rem = rem / m.range;
    }
    Expr src = _Load(Buffer(acc.tensor), _Clamp(gidx, I(0), I(std::max<int64_t>(acc.limit - 1, 0))));
    body.push_back(_Store(local_[a - 1], lidx, src));
    return _For(e_name, tid_all_, I(total), plan_.threads, _Block(std::move(body)));
  }

  // Value of input `a` at the current point.
  Expr LoadInput(int a, bool clamp) const {
    const FlatAccess& acc = flat_.accesses[a];
    if (use_local_) {
      const ReadPlan& plan = reads_[a - 1];
      Expr idx = I(plan.local_zero);
      for (const auto& p : plan.parts)
        idx = idx + loc_[p.index] * (plan.merged[p.merged].local_stride * p.scale);
      return _Load(local_[a - 1], idx);
    }
    Expr addr = Address(acc);
    if (clamp) addr = _Clamp(addr, I(0), I(std::max<int64_t>(acc.limit - 1, 0)));
    return _Load(Buffer(acc.tensor), addr);
  }

  Expr Combine(bool clamp) const {
    std::vector<Expr> in;
    for (int a = 1; a <= flat_.num_inputs; ++a) in.push_back(LoadInput(a, clamp));
    return CombineValues(flat_.comb_op, in, flat_.agg_type);
  }

  Expr Aggregate(Expr acc, Expr v, Expr hit) const {
    using lang::ast::AggOp;
    DataType t = flat_.agg_type;
    if (t == DataType::Bool) {
      if (flat_.agg_op == AggOp::Assign) return v;
      Expr r = AggCombineBool(flat_.agg_op, acc, v);
      return hit ? _Select(hit, r, v) : r;
    }
    lang::ElementwiseOp op;
    op.compute_type = t;
    switch (flat_.agg_op) {
      case AggOp::Sum: op.fn = lang::ElemFn::Add; break;
      case AggOp::Prod: op.fn = lang::ElemFn::Mul; break;
      case AggOp::Max: return _Select(hit, _Max(acc, v), v);
      case AggOp::Min: return _Select(hit, _Min(acc, v), v);
      case AggOp::Assign: return v;
    }
    return GenerateElementwise(op, {std::move(acc), std::move(v)}, t);
  }

  // Accumulator number of the current output loop point.
  Expr AccIndex() const {
    Expr k = I(0);
    for (const auto& d : plan_.outputs)
      if (d.loops > 1) k = k + lid_[d.index] * d.acc_stride;
    return k;
  }

  // Edge conditions of the output loops (and of reduction tiles, if asked).
  Expr EdgeCondition(bool reductions) const {
    Expr cond;
    for (const auto& d : plan_.outputs) {
      int i = d.index;
      if (d.loops * d.threads > d.tile) cond = And(cond, loc_[i] < d.tile);
      if (flat_.indices[i].range % d.tile != 0) cond = And(cond, Pos(i) < flat_.indices[i].range);
    }
    if (reductions)
      for (int r : plan_.reductions)
        if (flat_.indices[r].range % tile_[r] != 0) cond = And(cond, Pos(r) < flat_.indices[r].range);
    return cond;
  }

  // Wraps `body` in the output loops (outermost: slowest thread index).
  Stmt OutputLoops(const std::function<Stmt()>& make_body) {
    lid_.assign(flat_.num_indices(), nullptr);
    std::vector<Stmt> prologue;
    for (const auto& d : plan_.outputs) {
      int i = d.index;
      if (d.loops > 1) {
        lid_[i] = _Var(names_[i] + "_lid", Type::Index());
        loc_[i] = _Var(names_[i] + "_loc", Type::Index());
      } else {
        loc_[i] = tid_[i];
      }
    }
    Stmt body = make_body();
    for (const auto& d : plan_.outputs) {  // fastest first = innermost
      if (d.loops == 1) continue;
      int i = d.index;
      Expr loc = d.threads == 1 ? lid_[i] : lid_[i] * d.threads + tid_[i];
      body = _For(names_[i] + "_lid", 0, d.loops, 1,
                  _Block({_Declare(Type::Index(), names_[i] + "_loc", loc), body}));
    }
    return body;
  }

  Stmt Compute(bool checks) {
    for (int r : plan_.reductions) loc_[r] = _Var(names_[r] + "_lid", Type::Index());
    Stmt nest = OutputLoops([&] {
      Expr cond = EdgeCondition(true);
      if (checks)
        for (const FlatConstraint& c : flat_.constraints) {
          Expr sum = I(0);
          for (int i = 0; i < flat_.num_indices(); ++i)
            if (c.lhs[i] != 0) sum = sum + Pos(i) * c.lhs[i];
          cond = And(cond, sum <= c.rhs);
        }
      Expr k = AccIndex();
      Expr agg = _Var("agg", Type::Array(Type::Scalar(flat_.agg_type), plan_.accumulators));
      Expr hit = hit_needed_ ? _Var("hit", Type::Array(Type::Bool(), plan_.accumulators)) : nullptr;
      Expr v = Combine(checks);
      std::vector<Stmt> update;
      update.push_back(_Store(agg, k, Aggregate(_Load(agg, k), v, hit ? _Load(hit, k) : nullptr)));
      if (hit) update.push_back(_Store(hit, k, _Bool(true)));
      Stmt s = _Block(std::move(update));
      return cond ? _If(cond, s) : s;
    });
    for (auto it = plan_.reductions.rbegin(); it != plan_.reductions.rend(); ++it)
      nest = _For(names_[*it] + "_lid", 0, tile_[*it], 1, nest);
    return nest;
  }

  Stmt Epilogue() {
    for (int r : plan_.reductions) loc_[r] = nullptr, gid_[r] = nullptr;
    return OutputLoops([&] {
      std::vector<Stmt> s;
      std::map<std::string, Expr> env;
      int counter = 0;
      auto declare = [&](const std::string& tensor, Expr value) {
        std::string name = fmt::format("v{}_{}", counter++, Sanitize(tensor));
        s.push_back(_Declare(value->type, name, value));
        env[tensor] = _Var(name, value->type);
      };
      Expr hit;
      if (contraction_) {
        Expr k = AccIndex();
        Expr agg = _Var("agg", Type::Array(Type::Scalar(flat_.agg_type), plan_.accumulators));
        Expr value = _Load(agg, k);
        if (hit_needed_) {
          hit = _Load(_Var("hit", Type::Array(Type::Bool(), plan_.accumulators)), k);
          if (!spec_.store_reached_only) value = _Select(hit, value, Zero(flat_.agg_type));
        }
        declare(flat_.output().tensor, value);
      }
      // Padding points (ir/flat.h): loads clamped, stores of zero.
      Expr inside;
      for (const FlatConstraint& c : flat_.padding) {
        Expr sum = I(0);
        for (int i = 0; i < flat_.num_indices(); ++i)
          if (c.lhs[i] != 0) sum = sum + Pos(i) * c.lhs[i];
        inside = And(inside, sum <= c.rhs);
      }
      auto load = [&](const std::string& tensor) {
        const FlatAccess& a = PointAccess(tensor);
        Expr addr = Address(a);
        if (inside) addr = _Clamp(addr, I(0), I(std::max<int64_t>(a.limit - 1, 0)));
        return _Load(Buffer(tensor), addr);
      };
      for (const lang::ElementwiseOp& op : flat_.post_ops) {
        std::vector<Expr> operands;
        for (const lang::Operand& o : op.operands) {
          if (!o.is_tensor) operands.push_back(ScalarConst(o.scalar));
          else if (env.count(o.tensor)) operands.push_back(env[o.tensor]);
          else operands.push_back(load(o.tensor));
        }
        Expr coordinate;
        if (op.fn == lang::ElemFn::Index) {
          coordinate = I(spec_.coords.constant.at(op.axis));
          for (int i = 0; i < flat_.num_indices(); ++i)
            if (int64_t c = spec_.coords.coeffs.at(op.axis)[i]) coordinate = coordinate + Pos(i) * c;
        }
        DataType out = program_.Tensor(op.output).shape.dtype;
        declare(op.output, GenerateElementwise(op, std::move(operands), out, coordinate));
      }
      for (const std::string& t : flat_.kernel_outputs) {
        DataType dt = program_.Tensor(t).shape.dtype;
        TILEC_CHECK(env.count(t), "kernel {} writes {} but never computes it", spec_.name, t);
        Expr value = ConvertValue(env[t], dt);
        if (inside) value = _Select(inside, value, Zero(dt));
        s.push_back(_Store(Buffer(t), Address(PointAccess(t)), value));
      }
      Stmt body = _Block(std::move(s));
      Expr cond = EdgeCondition(false);
      if (hit && spec_.store_reached_only) cond = And(cond, hit);
      return cond ? _If(cond, body) : body;
    });
  }

  const KernelSpec& spec_;
  const FlatContraction& flat_;
  const lang::Program& program_;
  std::vector<int64_t> tile_;
  const HardwareModel& hw_;
  std::vector<int64_t> work_group_;  // CodegenOptions::work_group
  bool contraction_ = true;
  bool use_local_ = false;
  bool hit_needed_ = false;
  ThreadPlan plan_;
  std::vector<std::string> names_;
  std::vector<Expr> params_;
  Expr tid_all_;
  std::vector<Expr> tid_, gid_, loc_, lid_;
  std::vector<Expr> local_;
  std::vector<ReadPlan> reads_;
};

}  // namespace

GeneratedKernel GenerateFlatKernel(const KernelSpec& spec, const lang::Program& program,
                                   const std::vector<int64_t>& tile, const HardwareModel& hw,
                                   const CodegenOptions& options) {
  return FlatGen(spec, program, tile, hw, options).Run();
}

namespace {

// Every Contraction, Elementwise and Fill kernel fits; the plan is the tile
// and the work group (options.tile, options.work_group) the pipeline chose
// before (the tile search, WorkGroupFor). Emit generates the kernel.
class FlatFormImpl final : public FormImpl {
 public:
  Form id() const override { return Form::Flat; }
  std::optional<FormPlan> Plan(const KernelSpec& spec, const lang::Program& program, const HardwareModel& hw,
                               const CodegenOptions& options) const override {
    if (!IsFlatKind(spec.kind)) return std::nullopt;
    FormPlan plan = StartPlan(id(), spec, program, hw, options);
    const std::vector<FlatIndex>& indices = spec.flat.indices;
    for (size_t i = 0; i < options.tile.size(); ++i)
      plan.params.emplace_back(fmt::format("tile {}", i < indices.size() ? indices[i].name : "?"), options.tile[i]);
    for (size_t i = 0; i < options.work_group.size(); ++i)
      plan.params.emplace_back(fmt::format("group {}", i < indices.size() ? indices[i].name : "?"),
                               options.work_group[i]);
    return plan;
  }
  GeneratedKernel Emit(const FormPlan& plan) const override {
    return GenerateFlatKernel(*plan.spec, *plan.program, plan.options.tile, *plan.hw, plan.options);
  }
};

}  // namespace

const FormImpl& FlatForm() {
  static const FlatFormImpl form;
  return form;
}

}  // namespace tilec::compiler
