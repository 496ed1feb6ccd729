// The vector form's emission (VecEmitter: the sem tree from a VecPlan's
// decisions: positions from the group ids, lane masks, the fast and slow
// reduction nests, post-ops and stores). Planning is in forms/vector.cc.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <functional>
#include <limits>
#include <map>
#include <optional>

#include "compiler/forms/elementwise.h"
#include "compiler/forms/vector.h"
#include "support/error.h"

namespace tilec::compiler::vector_form {

using namespace sem::builder;

GeneratedKernel VecEmitter::Emit() {
  names_ = IndexNames(flat_);
  std::vector<Stmt> top;
  GeneratedKernel out = StartCpuKernel(spec_, program_, params_, top);
  pos_.assign(flat_.num_indices(), nullptr);
  DeclarePositions(top);
  if (Masked() || AnyDeferred()) DeclareLanes(top);
  if (Chunked()) {
    EmitChunked(top);  // the blocks, the reduction in chunks, the stores
  } else if (contraction_) {
    DeclareAccumulators(top);
    top.push_back(Reduce(0));
  }
  // The stores (the chunked form stores block by block).
  if (!Chunked()) top.push_back(Stores());
  return EndCpuKernel(std::move(out), std::move(top),
                      v_outer_ ? std::array<int64_t, 3>{PGroups(), grid_items_, VGroups()}
                               : std::array<int64_t, 3>{PGroups(), VGroups(), grid_items_});
}

void VecEmitter::DeclarePositions(std::vector<Stmt>& top) {
  auto declare = [&](int i, Expr value) {
    std::string name = names_[i] + "_0";
    top.push_back(_Declare(Type::Index(), name, value));
    pos_[i] = _Var(name, Type::Index());
  };
  // Dimension 0 (the fastest on CPU devices) walks the p blocks, so
  // consecutive work items reuse the same vector-input panel in cache.
  if (p_ >= 0) {
    // Chunked: SB blocks per work item, the position set per block (SetBlock).
    Expr start = _Index(sem::ThreadIndexKind::GroupId, 0) * (int64_t{pb_} * (PChunked() ? sb_ : 1));
    if (p_shift_ && !PChunked()) start = _Min(start, I(flat_.indices[p_].range - pb_));
    if (!PChunked() && ConstRows())
      pos_[p_] = I(0);  // one block, at row 0: a constant (PlanUnrolledGuards)
    else
      declare(p_, start);
  }
  Expr vblock = _Index(sem::ThreadIndexKind::GroupId, VDim());
  if (q_ >= 0) {
    declare(q_, vblock * int64_t{nv_});
    declare(v_, I(0));
  } else {
    // Chunked along v: the work item's first block (SetBlock moves it).
    declare(v_, vblock * (int64_t{nv_} * w_ * (chunk_v_ ? sb_ : 1)));
  }
  Expr rest = _Index(sem::ThreadIndexKind::GroupId, v_outer_ ? 1 : 2);
  for (size_t k = 0; k < grid_.size(); ++k) {
    int i = grid_[k];
    int64_t range = GridRange(i);
    Expr at = k + 1 == grid_.size() ? rest : rest % range;
    if (i == chunk_g_) {
      // The work item's first value of g (SetBlock moves it).
      top.push_back(_Declare(Type::Index(), names_[i] + "_b", at * int64_t{sb_}));
      at = _Var(names_[i] + "_b", Type::Index());
    }
    declare(i, at);
    if (k + 1 != grid_.size()) rest = rest / range;
  }
}

void VecEmitter::DeclareLanes(std::vector<Stmt>& top) {
  top.push_back(_Declare(Type::Index(w_), "lane", _Broadcast(I(0), w_)));
  for (int k = 1; k < w_; ++k) top.push_back(_Assign(Lanes(), _Insert(Lanes(), k, I(k))));
}

Expr VecEmitter::LaneMask(int vv, bool tail, LaneConstraints which) const {
  Expr start = pos_[v_] + VOffset(vv);  // v at lane 0
  Expr hi, lo;                               // lanes in [lo, hi)
  auto bound = [](Expr& b, Expr e, bool upper) { b = !b ? e : upper ? _Min(b, e) : _Max(b, e); };
  if (tail && VTail()) bound(hi, I(flat_.indices[v_].range) - start, true);
  for (size_t n = 0; n < flat_.constraints.size(); ++n) {
    const FlatConstraint& c = flat_.constraints[n];
    int64_t k = c.lhs[v_];
    if (which == LaneConstraints::None || k == 0 || (which == LaneConstraints::Checked && Deferred(n))) continue;
    Expr rest = I(0);
    for (int i = 0; i < flat_.num_indices(); ++i)
      if (i != v_ && c.lhs[i] != 0) rest = rest + (i == q_ ? pos_[i] + vv : pos_[i]) * c.lhs[i];
    // k * (start + lane) + rest <= rhs, k = +-1
    if (k > 0)
      bound(hi, I(c.rhs + 1) - rest - start, true);
    else
      bound(lo, rest - I(c.rhs) - start, false);
  }
  Expr mask;
  if (hi) mask = Lanes() < _Broadcast(hi, w_);
  if (lo) mask = And(mask, Lanes() >= _Broadcast(lo, w_));
  return mask;
}

Expr VecEmitter::Address(const FlatAccess& a, int pp, int64_t dv, int vv) const {
  int64_t q = q_ >= 0 ? a.strides[q_] * vv : 0;
  Expr e = I(a.offset + (p_ >= 0 ? a.strides[p_] * pp : 0) + a.strides[v_] * dv + q);
  for (int i = 0; i < flat_.num_indices(); ++i)
    if (a.strides[i] != 0 && pos_[i]) e = e + pos_[i] * a.strides[i];
  return e;
}

Expr VecEmitter::HoldsOnBlock(const FlatConstraint& c) const {
  int64_t worst = 0;
  Expr sum = I(0);
  for (int i = 0; i < flat_.num_indices(); ++i) {
    int64_t k = c.lhs[i];
    if (k == 0) continue;
    if (pos_[i] == nullptr) {  // a reduction not yet looped over: its whole range
      worst += k > 0 ? k * (flat_.indices[i].range - 1) : 0;
      continue;
    }
    sum = sum + pos_[i] * k;
    if (i == p_ && k > 0) worst += k * (pb_ - 1);
    if (i == v_ && k > 0) worst += k * (VSpan() - 1);
    if (i == q_ && k > 0) worst += k * (nv_ - 1);
  }
  return sum + worst <= c.rhs;
}

Expr VecEmitter::FastCondition() const {
  Expr all;
  for (size_t n = 0; n < flat_.constraints.size(); ++n)
    if (!Handled(n)) all = And(all, HoldsOnBlock(flat_.constraints[n]));
  if (PTail()) all = And(all, pos_[p_] + int64_t{pb_} <= flat_.indices[p_].range);
  if (VTail()) all = And(all, pos_[v_] + VSpan() <= flat_.indices[v_].range);
  return all;
}

Expr VecEmitter::BoundsInterior(int first) const {
  Expr all;
  for (size_t n = 0; n < flat_.constraints.size(); ++n) {
    if (!IsLoopBound(n)) continue;
    int r = bound_inner_[n];
    if (std::find(reductions_.begin() + first, reductions_.end(), r) != reductions_.end())
      all = And(all, HoldsOnBlock(flat_.constraints[n]));
  }
  return all;
}

Expr VecEmitter::PointValid(int pp) const {
  Expr ok;
  for (size_t n = 0; n < flat_.constraints.size(); ++n) {
    const FlatConstraint& c = flat_.constraints[n];
    if (c.lhs[v_] != 0 || Handled(n)) continue;
    Expr sum = I(0);
    for (int i = 0; i < flat_.num_indices(); ++i)
      if (c.lhs[i] != 0) sum = sum + (i == p_ ? pos_[i] + pp : pos_[i]) * c.lhs[i];
    ok = And(ok, sum <= c.rhs);
  }
  if (PTail()) ok = And(ok, pos_[p_] + pp < flat_.indices[p_].range);
  return ok;
}

Expr VecEmitter::LoadInput(int a, int pp, int vv, bool clamp) {
  const FlatAccess& acc = flat_.accesses[a];
  Expr buf = Buffer(acc.tensor);
  int width = vector_input_[a - 1] ? w_ : 1;
  Expr mask = width > 1 && !masks_.empty() ? masks_[vv] : nullptr;
  Expr addr = Address(acc, pp, width > 1 ? VOffset(vv) : 0, vv);
  if (clamp && !mask) addr = _Clamp(addr, I(0), I(std::max<int64_t>(acc.limit - width, 0)));
  Expr v = width > 1 ? _Load(buf, addr, w_, mask) : _Broadcast(_Load(buf, addr), w_);
  if (acc.dtype != dtype_ && !ComparedInput(a)) v = _Cast(VecType(), v);
  return v;
}

void VecEmitter::DeclareAccumulators(std::vector<Stmt>& top) const {
  for (int pp = 0; pp < pb_; ++pp)
    for (int vv = 0; vv < nv_; ++vv) top.push_back(_Declare(VecType(), AccName(pp, vv), Identity()));
}

Stmt VecEmitter::Reduce(int first) {
  bool slow_needed = PTail() || VTail();
  for (size_t c = 0; c < flat_.constraints.size(); ++c) slow_needed |= !Handled(c);
  Expr fast = slow_needed ? FastCondition() : nullptr;
  Stmt bounded = !slow_needed ? Compute(false, first)
                 : fast       ? _If(fast, Compute(false, first), Compute(true, first))
                              : Compute(true, first);
  // Work items away from the border (where no bounding constraint cuts a
  // loop short) run the fast path over constant ranges, which LLVM unrolls
  // when they are short (bench/suite depthwise3x3 n1 112x112 c32, W5).
  Expr interior = BoundsInterior(first);
  if (!interior) return bounded;
  if (fast) interior = And(interior, fast);
  return _If(interior, Compute(false, first, /*whole_ranges=*/true), bounded);
}

Stmt VecEmitter::Compute(bool checks, int first, bool whole_ranges) {
  for (size_t k = first; k < reductions_.size(); ++k) {
    int r = reductions_[k];
    pos_[r] = _Var(names_[r], Type::Index());
    if (static_cast<int>(k) == chunk_levels_ && chunk_split_ > 0)  // outer part * split + inner part
      pos_[r] = _Var(names_[r] + "_o", Type::Index()) * chunk_split_ + _Var(names_[r] + "_i", Type::Index());
  }
  // Position of the innermost constrained reduction loop (guards go in it).
  int guard_level = first - 1;
  for (size_t k = first; k < reductions_.size(); ++k)
    if (Constrained(reductions_[k])) guard_level = static_cast<int>(k);
  std::vector<Expr> ok(pb_);
  std::vector<Stmt> guards, masks;
  bool any_ok = false;
  // The rows' ok flags and the lanes' masks at the current positions.
  auto make_guards = [&] {
    ok.assign(pb_, nullptr);
    guards.clear();
    masks.clear();
    masks_.clear();
    any_ok = false;
    if (!checks) return;
    for (int pp = 0; pp < pb_; ++pp)
      if (Expr e = PointValid(pp)) {
        std::string name = fmt::format("ok_{}", pp);
        guards.push_back(_Declare(Type::Bool(), name, e));
        ok[pp] = _Var(name, Type::Bool());
        any_ok = true;
      }
    if (Masked())
      for (int vv = 0; vv < nv_; ++vv) {
        std::string name = fmt::format("mask_{}", vv);
        masks.push_back(_Declare(Type::Bool(w_), name, LaneMask(vv, true, LaneConstraints::Checked)));
        masks_.push_back(_Var(name, Type::Bool(w_)));
      }
  };
  make_guards();

  // Innermost body: loads and multiply-adds; `guarded`: each row under its
  // ok flag, shared loads clamped.
  auto make_body = [&](bool guarded) {
    std::vector<Stmt> body = NextChunkPrefetches();
    if (hold_rows_ && !guarded) return HeldRowsBody(std::move(body));
    std::map<std::pair<int, int>, Expr> shared;  // (input, vv) -> value reused across p
    for (int a = 1; a <= flat_.num_inputs; ++a) {
      bool moves_with_p = p_ >= 0 && flat_.accesses[a].strides[p_] != 0;
      if (moves_with_p || pb_ == 1) continue;
      for (int vv = 0; vv < (vector_input_[a - 1] ? nv_ : 1); ++vv) {
        std::string name = fmt::format("in{}_{}", a, vv);
        body.push_back(_Declare(InputVecType(a), name, LoadInput(a, 0, vv, guarded)));
        shared[{a, vv}] = _Var(name, InputVecType(a));
      }
    }
    for (int pp = 0; pp < pb_; ++pp) {
      std::vector<Stmt> row;
      std::map<std::pair<int, int>, Expr> local;
      auto value = [&](int a, int vv) -> Expr {
        int key_vv = vector_input_[a - 1] ? vv : 0;
        if (auto it = shared.find({a, key_vv}); it != shared.end()) return it->second;
        if (auto it = local.find({a, key_vv}); it != local.end()) return it->second;
        std::string name = fmt::format("in{}_{}_{}", a, pp, key_vv);
        row.push_back(_Declare(InputVecType(a), name, LoadInput(a, pp, key_vv, false)));
        return local[{a, key_vv}] = _Var(name, InputVecType(a));
      };
      for (int vv = 0; vv < nv_; ++vv) row.push_back(Update(pp, vv, value));
      Stmt st = _Block(std::move(row));
      body.push_back(guarded && ok[pp] ? _If(ok[pp], st) : st);
    }
    Stmt all = _Block(std::move(body));
    // Masked shared loads are not clamped: they run only when a row is valid.
    if (guarded && !masks_.empty() && any_ok) {
      Expr some;
      for (const Expr& e : ok)
        if (e) some = some ? _LogicalOr(some, e) : e;
      all = _If(some, all);
    }
    return all;
  };
  int last = static_cast<int>(reductions_.size()) - 1;
  // The body is a register block already: unrolled (LLVM unrolls a loop of
  // 3 input channels whole), the loads of every iteration are scheduled
  // together and spill (bench/suite conv7x7/2 n1 224x224 3>64 runs about
  // twice as long unrolled).
  bool no_unroll = int64_t{pb_} * nv_ >= 8;
  auto loops = [&](int from, int to, Stmt inner) {
    return ReductionLoops(from, to, std::move(inner), no_unroll, whole_ranges);
  };
  Stmt nest;
  if (guards.empty() && masks.empty()) {
    nest = loops(first, last, make_body(false));
  } else {
    // The guards and the loops below them, at the current positions (the
    // unrolled levels above make them constants: sem::Simplify folds them).
    auto guarded = [&]() -> Stmt {
      make_guards();
      // Where every row is valid (most of a border block), the loops below
      // run without guards.
      for (Stmt& m : masks) guards.push_back(std::move(m));
      if (!any_ok) {
        guards.push_back(loops(guard_level + 1, last, make_body(false)));
      } else {
        Expr all;
        for (const Expr& e : ok)
          if (e) all = And(all, e);
        guards.push_back(_If(all, loops(guard_level + 1, last, make_body(false)),
                             loops(guard_level + 1, last, make_body(true))));
      }
      return _Block(std::move(guards));
    };
    nest = LoopsOrCopies(first, guard_level, guarded, no_unroll, whole_ranges);
  }
  for (size_t k = first; k < reductions_.size(); ++k) pos_[reductions_[k]] = nullptr;
  masks_.clear();
  return nest;
}

Stmt VecEmitter::Update(int pp, int vv, const std::function<Expr(int, int)>& value) const {
  Expr acc = Acc(pp, vv);
  Expr update;
  switch (flat_.comb_op) {
    case lang::ast::CombOp::Mul: update = MulAdd(hw_, value(1, vv), value(2, vv), acc); break;
    case lang::ast::CombOp::Add: update = acc + (value(1, vv) + value(2, vv)); break;
    case lang::ast::CombOp::Cond:
      update = acc + _Select(_Eq(value(1, vv), value(2, vv)), value(3, vv), _Float(0, VecType()));
      break;
    default:  // one operand: a copy (keeps -0.0), or aggregated
      update = flat_.agg_op == lang::ast::AggOp::Assign ? value(1, vv) : AggCombine(flat_.agg_op, acc, value(1, vv));
      break;
  }
  // Lanes a constraint excludes keep their sum (exact even where the other
  // operand is inf or NaN).
  if (v_constrained_ && !masks_.empty()) update = _Select(masks_[vv], update, acc);
  return _Assign(acc, update);
}

Stmt VecEmitter::HeldRowsBody(std::vector<Stmt> body) {
  // HoldRowsFits: one input moves with p (a broadcast per row), the other
  // is a vector input that does not.
  int moving = flat_.accesses[1].strides[p_] != 0 ? 1 : 2, streamed = 3 - moving;
  std::vector<Expr> rows;  // each row's broadcast
  for (int pp = 0; pp < pb_; ++pp) {
    std::string name = fmt::format("in{}_{}_0", moving, pp);
    body.push_back(_Declare(InputVecType(moving), name, LoadInput(moving, pp, 0, false)));
    rows.push_back(_Var(name, InputVecType(moving)));
  }
  for (int vv = 0; vv < nv_; ++vv) {
    std::string name = fmt::format("in{}_{}", streamed, vv);
    body.push_back(_Declare(InputVecType(streamed), name, LoadInput(streamed, 0, vv, false)));
    Expr vector = _Var(name, InputVecType(streamed));
    for (int pp = 0; pp < pb_; ++pp)
      body.push_back(Update(pp, vv, [&](int a, int) { return a == moving ? rows[pp] : vector; }));
  }
  return _Block(std::move(body));
}

Stmt VecEmitter::LoopsOrCopies(int from, int to, const std::function<Stmt()>& inner, bool no_unroll_last,
                           bool whole_ranges) {
  if (from > to) return inner();
  int r = reductions_[from];
  if (unrolled_.empty() || !unrolled_[from])
    return ReductionLoops(from, from, LoopsOrCopies(from + 1, to, inner, no_unroll_last, whole_ranges),
                          no_unroll_last, whole_ranges);
  Expr var = pos_[r];
  std::vector<Stmt> copies;
  for (int64_t t = 0; t < flat_.indices[r].range; ++t) {
    pos_[r] = I(t);
    copies.push_back(LoopsOrCopies(from + 1, to, inner, no_unroll_last, whole_ranges));
  }
  pos_[r] = var;
  return _Block(std::move(copies));
}

Stmt VecEmitter::ReductionLoops(int from, int to, Stmt inner, bool no_unroll_last, bool whole_ranges) {
  int last = static_cast<int>(reductions_.size()) - 1;
  for (int k = to; k >= from; --k) {
    int r = reductions_[k];
    if (k == chunk_levels_ && chunk_split_ > 0) {  // the inner part of a split level
      inner = _For(names_[r] + "_i", I(0), I(chunk_inner_), 1, inner);
    } else {
      Expr begin = I(0), end = I(flat_.indices[r].range);
      for (size_t n = 0; n < flat_.constraints.size() && !whole_ranges; ++n) {
        if (bound_inner_[n] != r) continue;
        const FlatConstraint& c = flat_.constraints[n];
        Expr rest = I(0);
        for (int i = 0; i < flat_.num_indices(); ++i)
          if (i != r && c.lhs[i] != 0) rest = rest + pos_[i] * c.lhs[i];
        // k * r + rest <= rhs. |k| > 1 (a strided window): r <= floor((rhs -
        // rest) / k), r >= ceil((rest - rhs) / |k|), the numerators clamped
        // at 0 so that the index type's truncating division rounds the same
        // way (below 0 the loop starts at 0 or is empty either way).
        int64_t k = c.lhs[r];
        if (k == 1)
          end = _Min(end, I(c.rhs + 1) - rest);
        else if (k == -1)
          begin = _Max(begin, rest - I(c.rhs));
        else if (k > 0)
          end = _Min(end, _Max(I(c.rhs + k) - rest, I(0)) / k);
        else
          begin = _Max(begin, (_Max(rest - I(c.rhs), I(0)) + (-k - 1)) / (-k));
      }
      inner = _For(names_[r], begin, end, 1, inner);
    }
    if (k == last && no_unroll_last) inner = _NoUnroll(inner);
  }
  return inner;
}

Stmt VecEmitter::ResetExcludedLanes() const {
  std::vector<Stmt> s;
  for (int vv = 0; vv < nv_; ++vv) {
    std::string name = fmt::format("keep_{}", vv);
    s.push_back(_Declare(Type::Bool(w_), name, LaneMask(vv, false, LaneConstraints::All)));
    for (int pp = 0; pp < pb_; ++pp)
      s.push_back(_Assign(Acc(pp, vv), _Select(_Var(name, Type::Bool(w_)), Acc(pp, vv), Identity())));
  }
  return _Block(std::move(s));
}

Stmt VecEmitter::Stores() {
  Stmt stores;
  if (spec_.store_reached_only && (VTail() || !flat_.constraints.empty())) {
    // Storing reached elements only: masked where the block is not wholly
    // valid (the deferred constraints too, which FastCondition leaves out).
    Expr all = FastCondition();
    for (size_t n = 0; n < flat_.constraints.size(); ++n)
      if (Deferred(n)) all = And(all, HoldsOnBlock(flat_.constraints[n]));
    stores = all ? _If(all, Epilogues(false), Epilogues(true)) : Epilogues(true);
  } else if (!VTail()) {
    stores = Epilogues(false);
  } else {
    stores = _If(Pos(v_) + VSpan() <= flat_.indices[v_].range, Epilogues(false), Epilogues(true));
  }
  if (!contraction_ || !AnyDeferred()) return stores;
  return _Block({ResetExcludedLanes(), stores});
}

Stmt VecEmitter::Epilogues(bool masked) {
  std::vector<Stmt> rows;
  std::vector<Expr> tails;
  for (int vv = 0; vv < nv_ && masked; ++vv) {
    std::string name = fmt::format("tail_{}", vv);
    Expr mask = LaneMask(vv, true, spec_.store_reached_only ? LaneConstraints::All : LaneConstraints::None);
    if (!mask) mask = _Broadcast(_Bool(true), w_);
    rows.push_back(_Declare(Type::Bool(w_), name, mask));
    tails.push_back(_Var(name, Type::Bool(w_)));
  }
  for (int pp = 0; pp < pb_; ++pp) {
    Stmt s = Epilogue(pp, tails);
    if (Expr ok = masked ? StoreValid(pp, 0, -1) : nullptr) s = _If(ok, s);
    if (PTail()) s = _If(Pos(p_) + pp < flat_.indices[p_].range, s);
    rows.push_back(s);
  }
  return _Block(std::move(rows));
}

namespace {

// Whether no operation is a math function the CPU backend calls a library
// for (hal/llvm/inline_math.h emits f32 exp, log, pow, erf and tanh inline; the
// rest, and all of f64, call libmvec). A call clobbers every vector
// register, so the vectors of such an epilogue stay one after the other:
// interleaved, each call spilled the others' values (GELU's tanh, when it
// was a libmvec call, more than doubled its time: bench/suite
// gelu(x+bias) 1024x3072).
bool NoLibraryCalls(const std::vector<lang::ElementwiseOp>& ops) {
  using lang::ElemFn;
  for (const lang::ElementwiseOp& op : ops) {
    switch (op.fn) {
      case ElemFn::Exp: case ElemFn::Log: case ElemFn::Pow: case ElemFn::Erf: case ElemFn::Sigmoid:
      case ElemFn::Tanh:
        if (op.compute_type == DataType::F64) return false;
        break;
      case ElemFn::Sin: case ElemFn::Cos: case ElemFn::Tan: case ElemFn::Sinh:
      case ElemFn::Cosh: case ElemFn::Asin: case ElemFn::Acos: case ElemFn::Atan:
        return false;
      default: break;
    }
  }
  return true;
}

}  // namespace

Stmt VecEmitter::Epilogue(int pp, const std::vector<Expr>& tails) {
  std::vector<Stmt> s;
  int counter = 0;
  using Env = std::map<std::string, Expr>;
  auto declare = [&](Env& env, const std::string& tensor, Expr value) {
    std::string name = fmt::format("r{}_{}_{}", pp, counter++, Sanitize(tensor));
    s.push_back(_Declare(value->type, name, value));
    env[tensor] = _Var(name, value->type);
  };
  int width = vector_epilogue_ ? w_ : 1;
  // Vectors: masked loads and stores; lane by lane: each lane under an if.
  auto mask_of = [&](int vv) { return tails.empty() || !vector_epilogue_ ? nullptr : tails[vv]; };
  auto start = [&](Env& env, int vv, int lane) {
    if (!contraction_) return;
    Expr acc = Acc(pp, vv);
    declare(env, flat_.output().tensor, vector_epilogue_ ? acc : _Extract(acc, lane));
  };
  auto apply = [&](Env& env, const lang::ElementwiseOp& op, int vv, int64_t dv) {
    std::vector<Expr> operands;
    for (const lang::Operand& o : op.operands) {
      if (!o.is_tensor) {
        operands.push_back(ScalarConst(o.scalar));
      } else if (env.count(o.tensor)) {
        operands.push_back(env[o.tensor]);
      } else {
        const FlatAccess& a = PointAccess(o.tensor);
        Expr buf = Buffer(o.tensor);
        bool along = a.strides[v_] == 1;
        operands.push_back(width > 1 && along ? _Load(buf, Address(a, pp, dv, vv), width, mask_of(vv))
                                              : _Load(buf, Address(a, pp, along ? dv : 0, vv)));
      }
    }
    Expr coordinate;
    if (op.fn == lang::ElemFn::Index) {
      coordinate = I(spec_.coords.constant.at(op.axis));
      for (int i = 0; i < flat_.num_indices(); ++i) {
        int64_t c = spec_.coords.coeffs.at(op.axis)[i];
        if (c == 0) continue;
        Expr at = i == v_ ? pos_[i] + dv : i == p_ ? pos_[i] + pp : i == q_ ? pos_[i] + vv : pos_[i];
        coordinate = coordinate + at * c;
      }
    }
    DataType out = program_.Tensor(op.output).shape.dtype;
    declare(env, op.output, GenerateElementwise(op, std::move(operands), out, coordinate));
  };
  auto store = [&](Env& env, int vv, int64_t dv) {
    for (const std::string& t : flat_.kernel_outputs) {
      DataType dt = program_.Tensor(t).shape.dtype;
      TILEC_CHECK(env.count(t), "kernel {} writes {} but never computes it", spec_.name, t);
      Expr value = env[t];
      if (value->type.width != width) value = _Broadcast(value, width);  // a scalar-only result
      s.push_back(_Store(Buffer(t), Address(PointAccess(t), pp, dv, vv), ConvertValue(value, dt),
                         streaming_ && width > 1 && !mask_of(vv), mask_of(vv)));
    }
  };
  if (vector_epilogue_ && NoLibraryCalls(flat_.post_ops)) {
    // Each operation on every vector before the next operation: the vectors'
    // independent chains (an exp then a log, each tens of cycles deep) sit
    // side by side in the code, where an out-of-order core overlaps them
    // (bench/suite log(1+exp(x)) 8M).
    std::vector<Env> envs(static_cast<size_t>(nv_));
    for (int vv = 0; vv < nv_; ++vv) start(envs[vv], vv, 0);
    for (const lang::ElementwiseOp& op : flat_.post_ops)
      for (int vv = 0; vv < nv_; ++vv) apply(envs[vv], op, vv, VOffset(vv));
    for (int vv = 0; vv < nv_; ++vv) store(envs[vv], vv, VOffset(vv));
    return _Block(std::move(s));
  }
  for (int vv = 0; vv < nv_; ++vv) {
    for (int lane = 0; lane < (vector_epilogue_ ? 1 : w_); ++lane) {
      size_t lane_begin = s.size();
      int64_t dv = VOffset(vv) + lane;
      Env env;
      start(env, vv, lane);
      for (const lang::ElementwiseOp& op : flat_.post_ops) apply(env, op, vv, dv);
      store(env, vv, dv);
      if (!tails.empty() && !vector_epilogue_) {
        std::vector<Stmt> one(s.begin() + static_cast<std::ptrdiff_t>(lane_begin), s.end());
        s.resize(lane_begin);
        Expr ok = Pos(v_) + dv < flat_.indices[v_].range;
        if (Expr valid = StoreValid(pp, vv, dv)) ok = _LogicalAnd(ok, valid);
        s.push_back(_If(ok, _Block(std::move(one))));
      }
    }
  }
  return _Block(std::move(s));
}

Expr VecEmitter::StoreValid(int pp, int vv, int64_t dv) const {
  if (!spec_.store_reached_only) return nullptr;
  Expr ok;
  for (const FlatConstraint& c : flat_.constraints) {
    if (dv < 0 && c.lhs[v_] != 0) continue;
    Expr sum = I(0);
    bool outs = false;
    for (int i = 0; i < flat_.num_indices(); ++i) {
      if (c.lhs[i] == 0) continue;
      if (flat_.output().strides[i] == 0) break;  // reductions only (ReachedIsValid)
      outs = true;
      Expr at = i == v_ ? pos_[i] + dv : i == p_ ? pos_[i] + pp : i == q_ ? pos_[i] + vv : pos_[i];
      sum = sum + at * c.lhs[i];
    }
    if (outs) ok = And(ok, sum <= c.rhs);
  }
  return ok;
}

// The accumulators' start: the aggregation's identity (a copy's, which
// overwrites it, starts from 0 too).
Expr VecEmitter::Identity() const {
  using lang::ast::AggOp;
  return AggIdentity(flat_.agg_op == AggOp::Assign ? AggOp::Sum : flat_.agg_op, VecType());
}

}  // namespace tilec::compiler::vector_form
