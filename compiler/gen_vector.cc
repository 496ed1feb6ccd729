// GenerateVectorKernel: the CPU form of contraction and elementwise kernels.
//
// CPUs (and PoCL, which runs OpenCL on them) need the SIMD inside one work
// item: they do not vectorize across work items, and they have caches rather
// than programmer-managed local memory (bench/pocl_study/README.md). So one
// work item computes a register block of the output:
//
//   * a vector index v: an output index with stride 1 in everything the
//     kernel writes, and stride 0 or 1 in everything it reads; W lanes, NV
//     vectors per work item (NV*W consecutive values of v); a range that W
//     or NV*W does not divide ends in a masked tail (masked loads and
//     stores), and a constraint on v (a "same" convolution along W) becomes
//     a lane mask of the loads and the multiply-adds;
//   * a block index p: another output index, PB consecutive values, chosen so
//     that the vector loads are reused across it (stride 0 in the inputs that
//     move along v);
//   * every other output index: one value per work item (the launch grid);
//   * PB x NV vector accumulators in private variables, a loop nest over the
//     reduction indices (constrained ones outermost), in it one vector load
//     per vector input and vector, one broadcast scalar load per broadcast
//     input and p, and one fused multiply-add per accumulator;
//   * a fast path without checks when the whole block satisfies every
//     constraint and has no tail, and a slow path that guards each p
//     (constraints and the tail of p) and masks each vector (constraints on
//     v and its tail) once per iteration of the constrained loops;
//   * the post-ops on whole vectors where they are lane-wise safe (else lane
//     by lane), then vector stores.
//
// Sum aggregation of float types (the common case: convolutions, matrix
// products, pooling sums) and float copies (`=` without reductions: the
// relayouts Lower inserts); anything else goes to the flat generator.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <map>
#include <optional>

#include "compiler/codegen.h"
#include "compiler/gen_elementwise.h"
#include "compiler/sem/builder.h"
#include "support/error.h"

namespace tilec::compiler {
namespace {

using lang::DataType;
using namespace sem::builder;
using sem::Expr;
using sem::Stmt;
using sem::Type;

int64_t Abs(int64_t v) { return v < 0 ? -v : v; }

constexpr int kMaxVectors = 4;  // vectors per work item along v

// Lanes of a vector of `dtype` (hw.vec_size counts f32 lanes), 2 to 16.
int64_t MaxLanes(const HardwareModel& hw, DataType dtype) {
  return std::clamp<int64_t>(hw.vec_size * 32 / lang::BitWidth(dtype), 2, 16);
}

Expr And(Expr a, Expr b) { return a ? _LogicalAnd(std::move(a), std::move(b)) : b; }

class VecGen {
 public:
  VecGen(const KernelSpec& spec, const lang::Program& program, const HardwareModel& hw, int64_t rows)
      : spec_(spec), flat_(spec.flat), program_(program), hw_(hw), rows_(rows) {}

  std::optional<GeneratedKernel> Run() {
    if (!Plan()) return std::nullopt;
    names_ = IndexNames(flat_);
    GeneratedKernel out;
    out.function.name = spec_.name;
    // 64-bit addressing: CPU address arithmetic folds into the loads then.
    out.function.index_type = DataType::I64;
    out.function.params = BufferParams(spec_, program_);
    for (const sem::Param& p : out.function.params) params_.push_back(_Var(p.name, p.type));
    pos_.assign(flat_.num_indices(), nullptr);

    std::vector<Stmt> top;
    top.push_back(_Comment(flat_.comment.empty() ? spec_.name : flat_.comment));
    DeclarePositions(top);
    if (Masked()) DeclareLanes(top);
    if (contraction_) {
      for (int pp = 0; pp < pb_; ++pp)
        for (int vv = 0; vv < nv_; ++vv)
          top.push_back(_Declare(VecType(), AccName(pp, vv), _Float(0, VecType())));
      Expr fast = FastCondition();
      bool slow_needed = PTail() || VTail();
      for (size_t c = 0; c < flat_.constraints.size(); ++c) slow_needed |= !IsLoopBound(c);
      if (!slow_needed) top.push_back(Compute(false));
      else if (fast) top.push_back(_If(fast, Compute(false), Compute(true)));
      else top.push_back(Compute(true));
    }
    // The stores: whole vectors, or masked in the block with v's tail.
    if (VTail())
      top.push_back(_If(Pos(v_) + VSpan() <= flat_.indices[v_].range, Epilogues(false),
                        Epilogues(true)));
    else
      top.push_back(Epilogues(false));
    out.function.body = _Block(std::move(top));
    out.function.work_group_size = std::array<int64_t, 3>{1, 1, 1};
    out.local = {1, 1, 1};
    out.global = v_outer_ ? std::array<int64_t, 3>{pblocks_, grid_items_, vblocks_}
                          : std::array<int64_t, 3>{pblocks_, vblocks_, grid_items_};
    out.vector_plan = PlanText();
    return out;
  }

 private:
  // --- Planning ---------------------------------------------------------------

  bool Plan() {
    using lang::ast::AggOp;
    using lang::ast::CombOp;
    if (spec_.kind != KernelKind::Contraction && spec_.kind != KernelKind::Elementwise) return false;
    contraction_ = flat_.generate_contraction;
    const std::vector<int64_t>& out_strides = flat_.output().strides;
    if (contraction_) {
      // Sum, or a copy (`=` over no reduction: each output element once; the
      // relayout kernels Lower inserts).
      bool copy = flat_.agg_op == AggOp::Assign && flat_.comb_op == CombOp::None;
      for (int i = 0; i < flat_.num_indices() && copy; ++i) copy = out_strides[i] != 0;
      if ((flat_.agg_op != AggOp::Sum && !copy) || spec_.store_reached_only) return false;
      if (flat_.comb_op != CombOp::None && flat_.comb_op != CombOp::Mul && flat_.comb_op != CombOp::Add)
        return false;
      dtype_ = flat_.agg_type;
      if (dtype_ != DataType::F32 && dtype_ != DataType::F64) return false;
      for (int a = 1; a <= flat_.num_inputs; ++a)
        if (!lang::IsFloat(flat_.accesses[a].dtype)) return false;
    } else {
      dtype_ = program_.Tensor(flat_.output().tensor).shape.dtype;
      if (dtype_ != DataType::F32 && dtype_ != DataType::F64) return false;
    }
    // Post-ops on whole vectors, or lane by lane (contractions only).
    vector_epilogue_ = true;
    for (const lang::ElementwiseOp& op : flat_.post_ops) {
      if (!IsVectorSafe(op)) vector_epilogue_ = false;
      for (const lang::Operand& o : op.operands)
        if (o.is_tensor && !IsFloatOrBool(program_.Tensor(o.tensor).shape.dtype)) vector_epilogue_ = false;
      if (!IsFloatOrBool(program_.Tensor(op.output).shape.dtype)) vector_epilogue_ = false;
    }
    for (const std::string& t : flat_.kernel_outputs)
      if (!lang::IsFloat(program_.Tensor(t).shape.dtype)) vector_epilogue_ = false;
    if (!contraction_ && !vector_epilogue_) return false;

    // The vector index.
    for (int i = 0; i < flat_.num_indices() && v_ < 0; ++i)
      if (out_strides[i] == 1 && VectorCandidate(i)) v_ = i;
    if (v_ < 0) return false;
    // Lanes: the fewest vectors cover v; among equals an exact fit (no
    // masked tail), then the widest.
    int64_t range_v = flat_.indices[v_].range;
    int64_t max_w = MaxLanes(hw_, dtype_);
    int64_t nvec = INT64_MAX;
    bool exact = false;
    for (int w : {16, 8, 4, 2}) {
      if (w > max_w) continue;
      int64_t n = (range_v + w - 1) / w;
      bool fits = range_v % w == 0;
      if (n < nvec || (n == nvec && fits && !exact)) w_ = w, nvec = n, exact = fits;
    }
    // Vectors per work item: the most whose padding (whole masked vectors in
    // the last block) stays within 1/8 of the vectors.
    static_assert(kMaxVectors == 4);
    for (int n : contraction_ ? std::vector<int>{4, 3, 2, 1} : std::vector<int>{4, 2, 1})
      if ((nvec + n - 1) / n * n - nvec <= nvec / 8) {
        nv_ = n;
        break;
      }
    vblocks_ = (nvec + nv_ - 1) / nv_;
    for (const FlatConstraint& c : flat_.constraints) v_constrained_ |= c.lhs[v_] != 0;

    // Inputs along v: vector loads (stride 1) or broadcasts (stride 0).
    for (int a = 1; a <= flat_.num_inputs; ++a)
      vector_input_.push_back(flat_.accesses[a].strides[v_] == 1);
    if (contraction_ && nvec == 1) PlanVectorsAlongQ();

    // The block index (contractions): reuse of the vector loads first, then
    // the output's smallest stride.
    std::vector<int> outs;
    for (int i = 0; i < flat_.num_indices(); ++i)
      if (out_strides[i] != 0 && i != v_ && i != q_) outs.push_back(i);
    std::stable_sort(outs.begin(), outs.end(),
                     [&](int a, int b) { return Abs(out_strides[a]) < Abs(out_strides[b]); });
    if (contraction_) {
      int best = -1, best_score = -1;
      for (int i : outs) {
        if (flat_.indices[i].range < 2) continue;
        if (ConstrainedAlongP(i)) continue;
        int score = 0;
        for (int a = 1; a <= flat_.num_inputs; ++a)
          if (vector_input_[a - 1] && flat_.accesses[a].strides[i] == 0) ++score;
        if (score > best_score) best = i, best_score = score;
      }
      p_ = best;
    }
    if (p_ >= 0) {
      // Registers: PB*NV accumulators, NV vector loads, a broadcast and a
      // spare must fit. Any PB with at least ~12 accumulators keeps the FMA
      // units busy; larger blocks load less per FMA. Take the largest PB
      // that pads the range by at most 2%, else the one that pads least.
      // A vector input that moves with p is loaded afresh for every row:
      // keep room for two rows of it in flight (depthwise convolutions spill
      // otherwise: measured 0.074 ms at 14 rows vs 0.046 ms at 7 on W5).
      int64_t regs = std::max<int64_t>(hw_.vector_registers, 8);
      int64_t reserve = 2;
      for (int a = 1; a <= flat_.num_inputs; ++a)
        if (vector_input_[a - 1]) reserve += flat_.accesses[a].strides[p_] != 0 ? 2 * nv_ : nv_;
      reserve = std::max<int64_t>(reserve, nv_ + 2);
      int64_t budget = std::max<int64_t>(1, (regs - reserve) / nv_);
      if (rows_ > 0) budget = rows_;  // forced (CodegenOptions::vector_rows)
      int64_t range_p = flat_.indices[p_].range;
      budget = std::min(budget, range_p);
      int64_t least = std::min<int64_t>(budget, (12 + nv_ - 1) / nv_);
      int64_t best = budget, best_padded = INT64_MAX;
      for (int64_t b = budget; b >= least; --b) {
        int64_t padded = (range_p + b - 1) / b * b;
        if ((padded - range_p) * 50 <= range_p) {  // at most 2% padding: take the largest
          best = b;
          break;
        }
        if (padded < best_padded) best = b, best_padded = padded;
      }
      pb_ = static_cast<int>(best);
      pblocks_ = (range_p + pb_ - 1) / pb_;
    }
    for (int i : outs)
      if (i != p_) grid_.push_back(i);  // fastest first
    streaming_ = StreamingStores();
    grid_items_ = 1;
    for (int i : grid_) grid_items_ = CheckedMul(grid_items_, flat_.indices[i].range, "the launch size");

    // Reductions: constrained ones outermost, then by decreasing input stride.
    for (int i = 0; i < flat_.num_indices(); ++i)
      if (out_strides[i] == 0) reductions_.push_back(i);
    auto max_stride = [&](int i) {
      int64_t m = 0;
      for (int a = 1; a <= flat_.num_inputs; ++a) m = std::max(m, Abs(flat_.accesses[a].strides[i]));
      return m;
    };
    // A constraint on reductions alone (a padded blocked channel reduced
    // over: 16 * c/16 + c%16 <= 19) bounds the loop of its last index with
    // coefficient +-1 instead of guarding.
    bound_inner_.assign(flat_.constraints.size(), -1);
    std::vector<int> sorted;
    for (bool changed = true; changed;) {
      changed = false;
      sorted = reductions_;
      std::stable_sort(sorted.begin(), sorted.end(), [&](int a, int b) {
        if (Constrained(a) != Constrained(b)) return Constrained(a);
        return max_stride(a) > max_stride(b);
      });
      std::vector<int> level(flat_.num_indices(), -1);
      for (size_t k = 0; k < sorted.size(); ++k) level[sorted[k]] = static_cast<int>(k);
      for (size_t c = 0; c < flat_.constraints.size(); ++c) {
        const std::vector<int64_t>& lhs = flat_.constraints[c].lhs;
        int inner = -1, last = -1;
        bool reductions_only = true;
        for (int i = 0; i < flat_.num_indices(); ++i) {
          if (lhs[i] == 0) continue;
          reductions_only &= out_strides[i] == 0;
          last = std::max(last, level[i]);
          if (Abs(lhs[i]) == 1 && (inner < 0 || level[i] > level[inner])) inner = i;
        }
        int want = reductions_only && inner >= 0 && level[inner] == last ? inner : -1;
        if (want != bound_inner_[c]) {
          bound_inner_[c] = want;
          changed = true;
        }
      }
    }
    reductions_ = sorted;
    // A work item's panel of vector inputs (over all reductions) that is big
    // next to L2 (3x3 convolutions with many channels: 576 KB per 64 output
    // channels at 256 inputs) is reused by the whole grid before the next
    // panel: the grid indices that move only the vector inputs (a packed
    // panel's index, co/64), then the v blocks, outermost. Each core then
    // keeps its own panels: the thread pool gives each core a contiguous
    // range of work items, so the cores split the output channels.
    int64_t panel = int64_t{nv_} * w_ * lang::BitWidth(dtype_) / 8;
    for (int r : reductions_) panel = CheckedMul(panel, flat_.indices[r].range, "a panel size");
    if (contraction_ && panel * 4 > hw_.l2_bytes) {
      auto moves_panel_only = [&](int i) {
        bool vec = false;
        for (int a = 1; a <= flat_.num_inputs; ++a) {
          if (flat_.accesses[a].strides[i] == 0) continue;
          if (!vector_input_[a - 1]) return false;
          vec = true;
        }
        return vec;
      };
      std::stable_partition(grid_.begin(), grid_.end(), [&](int i) { return !moves_panel_only(i); });
      v_outer_ = vblocks_ > 1 && grid_items_ > 1;
    }
    return true;
  }

  // One vector covers v (the inner block of a blocked layout, nChw16c's
  // c%16): the work item's vectors step along another output index q
  // instead (co/16), one that no broadcast input moves along, so each
  // broadcast feeds NV vectors as along v. NV divides q's range; q is in no
  // constraint without v (lane masks take q's value per vector).
  void PlanVectorsAlongQ() {
    const std::vector<int64_t>& out_strides = flat_.output().strides;
    for (int i = 0; i < flat_.num_indices(); ++i) {
      if (i == v_ || out_strides[i] == 0 || flat_.indices[i].range < 2) continue;
      bool ok = true, moves = false;
      for (int a = 1; a <= flat_.num_inputs; ++a) {
        bool along = flat_.accesses[a].strides[i] != 0;
        if (along && !vector_input_[a - 1]) ok = false;
        moves |= along;
      }
      for (const FlatConstraint& c : flat_.constraints)
        if (c.lhs[i] != 0 && c.lhs[v_] == 0) ok = false;
      if (!ok || !moves) continue;
      for (int n : {4, 3, 2})
        if (flat_.indices[i].range % n == 0) {
          q_ = i;
          nv_ = n;
          vblocks_ = flat_.indices[i].range / n;
          return;
        }
    }
  }

  static bool IsFloatOrBool(DataType t) { return lang::IsFloat(t) || t == DataType::Bool; }

  // v may be the vector index: nothing the kernel touches moves along it
  // with a stride other than 0 or 1 (writes: exactly 1), and constraints
  // mention it with coefficient 0 or +-1 (a lane mask is an interval then).
  bool VectorCandidate(int v) const {
    for (const FlatAccess& a : flat_.accesses)
      if (a.strides[v] != 0 && a.strides[v] != 1) return false;
    for (const std::string& t : flat_.kernel_outputs)
      if (PointAccess(t).strides[v] != 1) return false;
    for (const FlatConstraint& c : flat_.constraints)
      if (Abs(c.lhs[v]) > 1) return false;
    return flat_.indices[v].range >= 2;
  }

  // i is in a constraint that the slow path checks (not a loop bound).
  bool Constrained(int i) const {
    for (size_t c = 0; c < flat_.constraints.size(); ++c)
      if (flat_.constraints[c].lhs[i] != 0 && !IsLoopBound(c)) return true;
    return false;
  }
  bool IsLoopBound(size_t c) const { return c < bound_inner_.size() && bound_inner_[c] >= 0; }

  // Lane masks are per vector and shared by the block's rows, so p must not
  // share a constraint with v.
  bool ConstrainedAlongP(int i) const {
    for (const FlatConstraint& c : flat_.constraints)
      if (c.lhs[i] != 0 && c.lhs[v_] != 0) return true;
    return false;
  }

  // Elementwise kernels writing far more than the caches hold store around
  // them, when every vector store is aligned to its size.
  bool StreamingStores() const {
    if (contraction_ || !vector_epilogue_) return false;
    int64_t bytes = 0;
    for (const std::string& t : flat_.kernel_outputs) {
      const FlatAccess& a = PointAccess(t);
      bytes += a.limit * lang::BitWidth(program_.Tensor(t).shape.dtype) / 8;
      if (a.offset % w_ != 0) return false;
      for (int i = 0; i < flat_.num_indices(); ++i)
        if (i != v_ && a.strides[i] % w_ != 0) return false;
    }
    return bytes > 8 * hw_.l2_bytes * std::max<int64_t>(hw_.compute_units, 1);
  }

  bool PTail() const { return p_ >= 0 && flat_.indices[p_].range % pb_ != 0; }
  // The last v block reaches past v's range (masked loads and stores).
  bool VTail() const { return VSpan() * (q_ >= 0 ? 1 : vblocks_) != flat_.indices[v_].range; }
  // Values of v one work item covers.
  int64_t VSpan() const { return q_ >= 0 ? w_ : int64_t{nv_} * w_; }
  // Offset of vector vv from the work item's first along v (0 along q).
  int64_t VOffset(int vv) const { return q_ >= 0 ? 0 : int64_t{vv} * w_; }
  // The slow path masks lanes (v's tail, constraints on v).
  bool Masked() const { return VTail() || v_constrained_; }

  std::string PlanText() const {
    std::string s = fmt::format("Vector form: {} x {} lanes of {} along {}", nv_, w_,
                                sem::ScalarName(dtype_), flat_.indices[v_].name);
    if (q_ >= 0) s += fmt::format(" (vectors along {})", flat_.indices[q_].name);
    if (p_ >= 0) s += fmt::format(", block of {} along {}", pb_, flat_.indices[p_].name);
    if (VTail()) s += ", masked tail";
    if (v_constrained_) s += fmt::format(", constraints on {} as lane masks", flat_.indices[v_].name);
    s += "\n";
    std::vector<std::string> grid;
    for (int i : grid_) grid.push_back(flat_.indices[i].name);
    std::string p_name = p_ >= 0 ? flat_.indices[p_].name : std::string("-");
    std::string rest = grid.empty() ? std::string("-") : fmt::format("{}", fmt::join(grid, ", "));
    const std::string& v_name = flat_.indices[q_ >= 0 ? q_ : v_].name;
    if (v_outer_)
      s += fmt::format("Grid: {} x {} x {} work items (one per {} block, {}, {} block: outermost)\n",
                       pblocks_, grid_items_, vblocks_, p_name, rest, v_name);
    else
      s += fmt::format("Grid: {} x {} x {} work items (one per {} block, {} block, {})\n", pblocks_,
                       vblocks_, grid_items_, p_name, v_name, rest);
    if (contraction_) {
      std::vector<std::string> reds;
      for (int r : reductions_) reds.push_back(flat_.indices[r].name);
      s += fmt::format("Reduction loops: {}\n", reds.empty() ? std::string("-")
                                                           : fmt::format("{}", fmt::join(reds, ", ")));
      std::vector<std::string> kinds;
      for (int a = 1; a <= flat_.num_inputs; ++a)
        kinds.push_back(fmt::format("{} {}", flat_.accesses[a].tensor,
                                    vector_input_[a - 1] ? "vector" : "broadcast"));
      s += fmt::format("Inputs: {}\n", fmt::join(kinds, ", "));
    }
    s += fmt::format("Post-ops: {}{}\n", vector_epilogue_ ? "on vectors" : "lane by lane",
                     streaming_ ? ", streaming stores" : "");
    return s;
  }

  // --- Emission ---------------------------------------------------------------

  Type VecType() const { return Type::Scalar(dtype_, w_); }
  static std::string AccName(int pp, int vv) { return fmt::format("acc_{}_{}", pp, vv); }
  Expr Acc(int pp, int vv) const { return _Var(AccName(pp, vv), VecType()); }
  Expr I(int64_t v) const { return _Const(v); }
  Expr Pos(int i) const { return pos_[i]; }

  void DeclarePositions(std::vector<Stmt>& top) {
    auto declare = [&](int i, Expr value) {
      std::string name = names_[i] + "_0";
      top.push_back(_Declare(Type::Index(), name, value));
      pos_[i] = _Var(name, Type::Index());
    };
    // Dimension 0 (the fastest on CPU devices) walks the p blocks, so
    // consecutive work items reuse the same vector-input panel in cache.
    if (p_ >= 0) declare(p_, _Index(sem::ThreadIndexKind::GroupId, 0) * int64_t{pb_});
    Expr vblock = _Index(sem::ThreadIndexKind::GroupId, v_outer_ ? 2 : 1);
    if (q_ >= 0) {
      declare(q_, vblock * int64_t{nv_});
      declare(v_, I(0));
    } else {
      declare(v_, vblock * (int64_t{nv_} * w_));
    }
    Expr rest = _Index(sem::ThreadIndexKind::GroupId, v_outer_ ? 1 : 2);
    for (size_t k = 0; k < grid_.size(); ++k) {
      int i = grid_[k];
      int64_t range = flat_.indices[i].range;
      declare(i, k + 1 == grid_.size() ? rest : rest % range);
      if (k + 1 != grid_.size()) rest = rest / range;
    }
  }

  // `lane`: the index vector 0, 1, ..., W-1 that lane masks compare with
  // (built lane by lane: sem has no vector literal).
  void DeclareLanes(std::vector<Stmt>& top) {
    top.push_back(_Declare(Type::Index(w_), "lane", _Broadcast(I(0), w_)));
    for (int k = 1; k < w_; ++k) top.push_back(_Assign(Lanes(), _Insert(Lanes(), k, I(k))));
  }
  Expr Lanes() const { return _Var("lane", Type::Index(w_)); }

  // The lanes of vector vv (of the current block) that lie inside v's range
  // and satisfy the constraints on v at the current position; null when
  // every lane does by construction.
  Expr LaneMask(int vv, bool tail, bool constraints) const {
    Expr start = pos_[v_] + VOffset(vv);  // v at lane 0
    Expr hi, lo;                               // lanes in [lo, hi)
    auto bound = [](Expr& b, Expr e, bool upper) { b = !b ? e : upper ? _Min(b, e) : _Max(b, e); };
    if (tail && VTail()) bound(hi, I(flat_.indices[v_].range) - start, true);
    for (const FlatConstraint& c : flat_.constraints) {
      int64_t k = c.lhs[v_];
      if (!constraints || k == 0) continue;
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

  // Element offset of access `a` at the current position, p moved by pp, v
  // by `dv` elements and q by vv (vectors along q).
  Expr Address(const FlatAccess& a, int pp, int64_t dv, int vv) const {
    int64_t q = q_ >= 0 ? a.strides[q_] * vv : 0;
    Expr e = I(a.offset + (p_ >= 0 ? a.strides[p_] * pp : 0) + a.strides[v_] * dv + q);
    for (int i = 0; i < flat_.num_indices(); ++i)
      if (a.strides[i] != 0 && pos_[i]) e = e + pos_[i] * a.strides[i];
    return e;
  }

  Expr Buffer(const std::string& tensor) const { return BufferOf(spec_, params_, tensor); }

  const FlatAccess& PointAccess(const std::string& tensor) const {
    return compiler::PointAccess(spec_, tensor);
  }

  // Every constraint holds on the whole block (all reduction values, PB
  // values of p), and the block has no tail.
  Expr FastCondition() const {
    Expr all;
    for (size_t n = 0; n < flat_.constraints.size(); ++n) {
      if (IsLoopBound(n)) continue;
      const FlatConstraint& c = flat_.constraints[n];
      int64_t worst = 0;
      Expr sum = I(0);
      for (int i = 0; i < flat_.num_indices(); ++i) {
        int64_t k = c.lhs[i];
        if (k == 0) continue;
        if (pos_[i] == nullptr) {  // a reduction: its whole range
          worst += k > 0 ? k * (flat_.indices[i].range - 1) : 0;
          continue;
        }
        sum = sum + pos_[i] * k;
        if (i == p_ && k > 0) worst += k * (pb_ - 1);
        if (i == v_ && k > 0) worst += k * (VSpan() - 1);
        if (i == q_ && k > 0) worst += k * (nv_ - 1);
      }
      all = And(all, sum + worst <= c.rhs);
    }
    if (PTail()) all = And(all, pos_[p_] + int64_t{pb_} <= flat_.indices[p_].range);
    if (VTail()) all = And(all, pos_[v_] + VSpan() <= flat_.indices[v_].range);
    return all;
  }

  // Constraints not on v (and p's tail) at the current point, for block row
  // pp; the ones on v are lane masks.
  Expr PointValid(int pp) const {
    Expr ok;
    for (size_t n = 0; n < flat_.constraints.size(); ++n) {
      const FlatConstraint& c = flat_.constraints[n];
      if (c.lhs[v_] != 0 || IsLoopBound(n)) continue;
      Expr sum = I(0);
      for (int i = 0; i < flat_.num_indices(); ++i)
        if (c.lhs[i] != 0) sum = sum + (i == p_ ? pos_[i] + pp : pos_[i]) * c.lhs[i];
      ok = And(ok, sum <= c.rhs);
    }
    if (PTail()) ok = And(ok, pos_[p_] + pp < flat_.indices[p_].range);
    return ok;
  }

  // Input a's value for block row pp and vector vv. `clamp`: the point may
  // be invalid, so keep the address inside the buffer (the value is unused).
  // Vector loads take the lane mask of vv when the slow path has them (the
  // masked-off lanes are not read, so need no clamp).
  Expr LoadInput(int a, int pp, int vv, bool clamp) {
    const FlatAccess& acc = flat_.accesses[a];
    Expr buf = Buffer(acc.tensor);
    int width = vector_input_[a - 1] ? w_ : 1;
    Expr mask = width > 1 && !masks_.empty() ? masks_[vv] : nullptr;
    Expr addr = Address(acc, pp, width > 1 ? VOffset(vv) : 0, vv);
    if (clamp && !mask) addr = _Clamp(addr, I(0), I(std::max<int64_t>(acc.limit - width, 0)));
    Expr v = width > 1 ? _Load(buf, addr, w_, mask) : _Broadcast(_Load(buf, addr), w_);
    if (acc.dtype != dtype_) v = _Cast(VecType(), v);
    return v;
  }

  // The loop nest over the reductions with the accumulator updates.
  Stmt Compute(bool checks) {
    for (int r : reductions_) pos_[r] = _Var(names_[r], Type::Index());
    // Position of the innermost constrained reduction loop (guards go in it).
    int guard_level = -1;
    for (size_t k = 0; k < reductions_.size(); ++k)
      if (Constrained(reductions_[k])) guard_level = static_cast<int>(k);
    std::vector<Expr> ok(pb_);
    std::vector<Stmt> guards, masks;
    bool any_ok = false;
    if (checks)
      for (int pp = 0; pp < pb_; ++pp)
        if (Expr e = PointValid(pp)) {
          std::string name = fmt::format("ok_{}", pp);
          guards.push_back(_Declare(Type::Bool(), name, e));
          ok[pp] = _Var(name, Type::Bool());
          any_ok = true;
        }
    masks_.clear();
    if (checks && Masked())
      for (int vv = 0; vv < nv_; ++vv) {
        std::string name = fmt::format("mask_{}", vv);
        masks.push_back(_Declare(Type::Bool(w_), name, LaneMask(vv, true, true)));
        masks_.push_back(_Var(name, Type::Bool(w_)));
      }

    // Innermost body: loads and multiply-adds; `guarded`: each row under its
    // ok flag, shared loads clamped.
    auto make_body = [&](bool guarded) {
      std::vector<Stmt> body;
      std::map<std::pair<int, int>, Expr> shared;  // (input, vv) -> value reused across p
      for (int a = 1; a <= flat_.num_inputs; ++a) {
        bool moves_with_p = p_ >= 0 && flat_.accesses[a].strides[p_] != 0;
        if (moves_with_p || pb_ == 1) continue;
        for (int vv = 0; vv < (vector_input_[a - 1] ? nv_ : 1); ++vv) {
          std::string name = fmt::format("in{}_{}", a, vv);
          body.push_back(_Declare(VecType(), name, LoadInput(a, 0, vv, guarded)));
          shared[{a, vv}] = _Var(name, VecType());
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
          row.push_back(_Declare(VecType(), name, LoadInput(a, pp, key_vv, false)));
          return local[{a, key_vv}] = _Var(name, VecType());
        };
        for (int vv = 0; vv < nv_; ++vv) {
          Expr acc = Acc(pp, vv);
          Expr update;
          switch (flat_.comb_op) {
            case lang::ast::CombOp::Mul: update = _Fma(value(1, vv), value(2, vv), acc); break;
            case lang::ast::CombOp::Add: update = acc + (value(1, vv) + value(2, vv)); break;
            default:  // Sum of one operand, or a copy (keeps -0.0)
              update = flat_.agg_op == lang::ast::AggOp::Assign ? value(1, vv) : acc + value(1, vv);
              break;
          }
          // Lanes a constraint excludes keep their sum (exact even where
          // the other operand is inf or NaN).
          if (v_constrained_ && !masks_.empty()) update = _Select(masks_[vv], update, acc);
          row.push_back(_Assign(acc, update));
        }
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
    // Wraps `inner` in the reduction loops at levels [from, to].
    auto loops = [&](int from, int to, Stmt inner) {
      for (int k = to; k >= from; --k) {
        int r = reductions_[k];
        Expr begin = I(0), end = I(flat_.indices[r].range);
        for (size_t n = 0; n < flat_.constraints.size(); ++n) {
          if (bound_inner_[n] != r) continue;
          const FlatConstraint& c = flat_.constraints[n];
          Expr rest = I(0);
          for (int i = 0; i < flat_.num_indices(); ++i)
            if (i != r && c.lhs[i] != 0) rest = rest + pos_[i] * c.lhs[i];
          // +-r + rest <= rhs
          if (c.lhs[r] > 0)
            end = _Min(end, I(c.rhs + 1) - rest);
          else
            begin = _Max(begin, rest - I(c.rhs));
        }
        inner = _For(names_[r], begin, end, 1, inner);
      }
      return inner;
    };
    int last = static_cast<int>(reductions_.size()) - 1;
    Stmt nest;
    if (guards.empty() && masks.empty()) {
      nest = loops(0, last, make_body(false));
    } else {
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
      nest = loops(0, guard_level, _Block(std::move(guards)));
    }
    for (int r : reductions_) pos_[r] = nullptr;
    masks_.clear();
    return nest;
  }

  // Post-ops and stores of every block row; `masked`: the block with v's
  // tail (its lanes past the range are neither read nor written).
  Stmt Epilogues(bool masked) {
    std::vector<Stmt> rows;
    std::vector<Expr> tails;
    for (int vv = 0; vv < nv_ && masked; ++vv) {
      std::string name = fmt::format("tail_{}", vv);
      rows.push_back(_Declare(Type::Bool(w_), name, LaneMask(vv, true, false)));
      tails.push_back(_Var(name, Type::Bool(w_)));
    }
    for (int pp = 0; pp < pb_; ++pp) {
      Stmt s = Epilogue(pp, tails);
      if (PTail()) s = _If(Pos(p_) + pp < flat_.indices[p_].range, s);
      rows.push_back(s);
    }
    return _Block(std::move(rows));
  }

  // Post-ops and stores of block row pp; `tails`: per vector, the lanes in
  // v's range (empty: all).
  Stmt Epilogue(int pp, const std::vector<Expr>& tails) {
    std::vector<Stmt> s;
    int counter = 0;
    for (int vv = 0; vv < nv_; ++vv) {
      int lanes = vector_epilogue_ ? 1 : w_;
      // Vectors: masked loads and stores; lane by lane: each lane under an if.
      Expr mask = tails.empty() || !vector_epilogue_ ? nullptr : tails[vv];
      for (int lane = 0; lane < lanes; ++lane) {
        size_t lane_begin = s.size();
        int64_t dv = VOffset(vv) + lane;
        int width = vector_epilogue_ ? w_ : 1;
        std::map<std::string, Expr> env;
        auto declare = [&](const std::string& tensor, Expr value) {
          std::string name = fmt::format("r{}_{}_{}", pp, counter++, Sanitize(tensor));
          s.push_back(_Declare(value->type, name, value));
          env[tensor] = _Var(name, value->type);
        };
        if (contraction_) {
          Expr acc = Acc(pp, vv);
          declare(flat_.output().tensor, vector_epilogue_ ? acc : _Extract(acc, lane));
        }
        for (const lang::ElementwiseOp& op : flat_.post_ops) {
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
              operands.push_back(width > 1 && along
                                     ? _Load(buf, Address(a, pp, dv, vv), width, mask)
                                     : _Load(buf, Address(a, pp, along ? dv : 0, vv)));
            }
          }
          Expr coordinate;
          if (op.fn == lang::ElemFn::Index) {
            coordinate = I(spec_.coords.constant.at(op.axis));
            for (int i = 0; i < flat_.num_indices(); ++i) {
              int64_t c = spec_.coords.coeffs.at(op.axis)[i];
              if (c == 0) continue;
              Expr at = i == v_   ? pos_[i] + dv
                        : i == p_ ? pos_[i] + pp
                        : i == q_ ? pos_[i] + vv
                                  : pos_[i];
              coordinate = coordinate + at * c;
            }
          }
          DataType out = program_.Tensor(op.output).shape.dtype;
          declare(op.output, GenerateElementwise(op, std::move(operands), out, coordinate));
        }
        for (const std::string& t : flat_.kernel_outputs) {
          DataType dt = program_.Tensor(t).shape.dtype;
          TILEC_CHECK(env.count(t), "kernel {} writes {} but never computes it", spec_.name, t);
          Expr value = env[t];
          if (value->type.width != width) value = _Broadcast(value, width);  // a scalar-only result
          s.push_back(_Store(Buffer(t), Address(PointAccess(t), pp, dv, vv), ConvertValue(value, dt),
                             streaming_ && width > 1 && !mask, mask));
        }
        if (!tails.empty() && !vector_epilogue_) {
          std::vector<Stmt> one(s.begin() + static_cast<std::ptrdiff_t>(lane_begin), s.end());
          s.resize(lane_begin);
          s.push_back(_If(Pos(v_) + dv < flat_.indices[v_].range, _Block(std::move(one))));
        }
      }
    }
    return _Block(std::move(s));
  }

  const KernelSpec& spec_;
  const FlatContraction& flat_;
  const lang::Program& program_;
  const HardwareModel& hw_;
  int64_t rows_ = 0;  // forced block rows, or 0

  bool contraction_ = true;
  bool v_constrained_ = false;  // a constraint mentions v (lane masks)
  bool v_outer_ = false;        // launch dimension 2 walks the v blocks (else 1)
  bool vector_epilogue_ = true;
  bool streaming_ = false;  // non-temporal vector stores (StreamingStores)
  DataType dtype_ = DataType::F32;
  int v_ = -1, w_ = 1, nv_ = 1;
  int p_ = -1, pb_ = 1;
  int q_ = -1;  // the vectors step along q, not v (PlanVectorsAlongQ)
  int64_t vblocks_ = 1, pblocks_ = 1, grid_items_ = 1;
  std::vector<int> grid_, reductions_;
  std::vector<int> bound_inner_;  // per constraint: the reduction whose loop it bounds, or -1
  std::vector<bool> vector_input_;

  std::vector<std::string> names_;
  std::vector<Expr> params_;
  std::vector<Expr> pos_;  // current value of each index (null: not in scope)
  std::vector<Expr> masks_;  // per vector: its lane mask in the slow path (empty: none)
};

}  // namespace

int64_t VectorBlockElements(const HardwareModel& hw) {
  return MaxLanes(hw, DataType::F32) * kMaxVectors;
}

std::optional<GeneratedKernel> GenerateVectorKernel(const KernelSpec& spec, const lang::Program& program,
                                                    const HardwareModel& hw, int64_t rows) {
  return VecGen(spec, program, hw, rows).Run();
}

}  // namespace tilec::compiler
