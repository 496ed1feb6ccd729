// VectorForm (forms/form.h): the CPU form of contraction and elementwise kernels.
//
// CPUs (and PoCL, which runs OpenCL on them) need the SIMD inside one work
// item: they do not vectorize across work items, and they have caches rather
// than programmer-managed local memory (the PoCL study in bench/HISTORY.md). So one
// work item computes a register block of the output:
//
//   * a vector index v: an output index with stride 1 in everything the
//     kernel writes, and stride 0 or 1 in everything it reads; W lanes, NV
//     vectors per work item (NV*W consecutive values of v); a range that W
//     or NV*W does not divide ends in a masked tail (masked loads and
//     stores), and a constraint on v (a "same" convolution along W) becomes
//     a lane mask of the loads and the multiply-adds, unless it mentions
//     output indices only (a blocked layout's padded channels) and the
//     unmasked loads stay in their buffers: then the sums of the lanes it
//     excludes are reset once, before the post-ops;
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
// products, pooling sums), max, min and product of one float input without
// constraints (column reductions), and float copies (`=` without
// reductions: the relayouts Lower inserts); anything else goes to the
// reduction or transpose form (forms/reduce.cc, forms/transpose.cc) or the flat
// generator.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <map>
#include <memory>
#include <optional>

#include "compiler/schedule/cost_model.h"
#include "compiler/forms/elementwise.h"
#include "compiler/forms/vector.h"
#include "compiler/passes/output_coverage.h"
#include "support/error.h"

namespace tilec::compiler {
namespace vector_form {

using namespace sem::builder;

bool VecPlan::Plan() {
  using lang::ast::AggOp;
  using lang::ast::CombOp;
  if (spec_.kind != KernelKind::Contraction && spec_.kind != KernelKind::Elementwise) return false;
  contraction_ = flat_.generate_contraction;
  const std::vector<int64_t>& out_strides = flat_.output().strides;
  if (contraction_) {
    // Sum, or a copy (`=` over no reduction: each output element once; the
    // relayout kernels Lower inserts), or a max, min or product of one
    // input whose every output element is reached (no constraints, or a
    // pooling window's padding: EveryOutputReached), so starting from the
    // identity needs no `hit` flags.
    bool copy = flat_.agg_op == AggOp::Assign && flat_.comb_op == CombOp::None;
    for (int i = 0; i < flat_.num_indices() && copy; ++i) copy = out_strides[i] != 0;
    bool other = (flat_.agg_op == AggOp::Max || flat_.agg_op == AggOp::Min || flat_.agg_op == AggOp::Prod) &&
                 flat_.comb_op == CombOp::None && (flat_.constraints.empty() || EveryOutputReached(flat_));
    if (flat_.agg_op != AggOp::Sum && !copy && !other) return false;
    if (spec_.store_reached_only && !ReachedIsValid()) return false;
    // `+(A == B ? C)` (a max pool's gradient routing): A and B compared in
    // their own type, lane by lane, so they must share it and its width.
    bool cond = flat_.comb_op == CombOp::Cond && flat_.agg_op == AggOp::Sum && flat_.num_inputs == 3;
    if (flat_.comb_op != CombOp::None && flat_.comb_op != CombOp::Mul && flat_.comb_op != CombOp::Add && !cond)
      return false;
    dtype_ = flat_.agg_type;
    if (dtype_ != DataType::F32 && dtype_ != DataType::F64) return false;
    for (int a = 1; a <= flat_.num_inputs; ++a) {
      DataType t = flat_.accesses[a].dtype;
      if (cond && a <= 2) {
        if (t != flat_.accesses[1].dtype || t == DataType::Bool || lang::BitWidth(t) != lang::BitWidth(dtype_))
          return false;
      } else if (!lang::IsFloat(t)) {
        return false;
      }
    }
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
  // masked tail), then the widest (ChooseVectorLanes, which the cost model
  // shares).
  VectorLanes lanes = ChooseVectorLanes(flat_.indices[v_].range, MaxLanes(hw_, dtype_));
  w_ = static_cast<int>(lanes.lanes);
  int64_t nvec = lanes.vectors;
  // Vectors per work item: the most whose padding (whole masked vectors in
  // the last block) stays within 1/8 of the vectors.
  static_assert(kMaxVectors == 4);
  vectors_along_v_ = nvec;
  for (int n : contraction_ ? std::vector<int>{4, 3, 2, 1} : std::vector<int>{4, 2, 1})
    if (n <= max_vectors_ && (nvec + n - 1) / n * n - nvec <= nvec / 8) {
      nv_ = n;
      break;
    }
  vblocks_ = (nvec + nv_ - 1) / nv_;

  // Inputs along v: vector loads (stride 1) or broadcasts (stride 0).
  for (int a = 1; a <= flat_.num_inputs; ++a)
    vector_input_.push_back(flat_.accesses[a].strides[v_] == 1);
  if (nvec == 1) PlanVectorsAlongQ();
  PlanLaneConstraints();

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
  } else if (int64_t{nv_} * w_ < kElementwiseItem) {
    // Short vectors (a relayout into blocks of 4: NHWC -> MACE image order
    // abDc4d, nChw4c): a block of rows, so a work item moves enough
    // elements to pay for itself (kElementwiseItem in forms/vector.h:
    // bench/workloads copy_nhwc.tile into abDc4d).
    for (int i : outs)
      if (flat_.indices[i].range >= 2 && !ConstrainedAlongP(i)) {
        p_ = i;
        break;
      }
  }
  if (p_ >= 0) {
    // Registers: PB*NV accumulators, NV vector loads, a broadcast and a
    // spare must fit. Any PB with at least ~12 accumulators keeps the FMA
    // units busy; larger blocks load less per FMA. Take the largest PB
    // that pads the range by at most 2%, else the one that pads least.
    // A vector input that moves with p is loaded afresh for every row:
    // keep room for two rows of it in flight (depthwise convolutions spill
    // otherwise: bench_peers W5 runs slower at 14 rows than at 7).
    int64_t regs = std::max<int64_t>(hw_.vector_registers, 8);
    int64_t reserve = 2;
    for (int a = 1; a <= flat_.num_inputs; ++a)
      if (vector_input_[a - 1]) reserve += flat_.accesses[a].strides[p_] != 0 ? 2 * nv_ : nv_;
    reserve = std::max<int64_t>(reserve, nv_ + 2);
    int64_t budget = std::max<int64_t>(1, (regs - reserve) / nv_);
    if (!contraction_) budget = std::max<int64_t>(1, kElementwiseItem / (int64_t{nv_} * w_));
    // Held rows (HoldRowsFits): PB broadcasts and one streamed vector beside
    // the accumulators; taken where it holds more rows (16 registers, 4
    // vectors: 3 rows instead of 2, 12 accumulators instead of 8).
    const int64_t plain_budget = budget;
    if (contraction_ && rows_ == 0 && HoldRowsFits()) {
      int64_t held = (regs - 1) / (nv_ + 1);
      if (held > budget) budget = held, hold_rows_ = true;
    }
    if (rows_ > 0) budget = rows_;  // forced (CodegenOptions::vector_rows)
    int64_t range_p = flat_.indices[p_].range;
    budget = std::min(budget, range_p);
    // Forced rows are taken as they are.
    int64_t least = rows_ > 0 || !contraction_ ? budget : std::min<int64_t>(budget, (kMinAccumulators + nv_ - 1) / nv_);
    int64_t best = budget, best_padded = INT64_MAX;
    for (int64_t b = budget; b >= least; --b) {
      int64_t padded = (range_p + b - 1) / b * b;
      if (SmallPadding(range_p, b)) {  // at most 2% padding: take the largest
        best = b;
        break;
      }
      if (padded < best_padded) best = b, best_padded = padded;
    }
    SetRows(best);
    if (hold_rows_ && pb_ <= plain_budget) hold_rows_ = false, budget = std::min(plain_budget, range_p);
    rows_budget_ = budget;
    // A block that divides p's range exactly and is larger than the budget
    // (TakeExactBlock, once the innermost reduction is known) up to this.
    exact_rows_max_ =
        contraction_ && rows_ == 0 && !hold_rows_ ? std::min((regs - (reserve - 2)) / nv_, range_p) : 0;
    exact_rows_min_ = budget + 1;
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
  // A constraint on reductions and grid indices alone (a padded blocked
  // channel reduced over: 16 * c/16 + c%16 <= 19; a "same" convolution's
  // padding along the rows the grid walks: 0 <= x + i - 1) bounds the loop
  // of its last reduction instead of guarding: the grid indices are fixed in
  // a work item (any coefficient k: the bound is rounded, ReductionLoops).
  bound_inner_.assign(flat_.constraints.size(), -1);
  // Reductions in a constraint with an output index (the padding of a
  // convolution: short loops, guarded or bounded per work item) go outermost.
  auto border = [&](int r) {
    for (const FlatConstraint& c : flat_.constraints) {
      if (c.lhs[r] == 0) continue;
      for (int i = 0; i < flat_.num_indices(); ++i)
        if (c.lhs[i] != 0 && out_strides[i] != 0) return true;
    }
    return false;
  };
  std::vector<int> sorted;
  // Which constraints bound a loop changes the order, and the order which
  // constraints can: iterate to a fixed point. There may be none (fuzz_compile
  // found a strided window, I[n, 2 * x + y, 2 * y + j, ci], whose order flipped
  // forever), so after a few rounds every constraint is checked instead
  // (always valid).
  int rounds = 0;
  for (bool changed = true; changed;) {
    changed = false;
    bool give_up = ++rounds > static_cast<int>(flat_.constraints.size()) + 2;
    if (give_up) bound_inner_.assign(flat_.constraints.size(), -1);
    sorted = reductions_;
    std::stable_sort(sorted.begin(), sorted.end(), [&](int a, int b) {
      bool outer_a = Constrained(a) || border(a), outer_b = Constrained(b) || border(b);
      if (outer_a != outer_b) return outer_a;
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
        bool grid = std::find(grid_.begin(), grid_.end(), i) != grid_.end();
        reductions_only &= out_strides[i] == 0 || grid;
        if (out_strides[i] != 0) continue;
        last = std::max(last, level[i]);
        // Any coefficient: a strided window's gather (a strided convolution's
        // backward data, 2 * x - i <= 1 with i on the grid) bounds x to the
        // one or two taps that exist instead of guarding all of its range.
        if (inner < 0 || level[i] > level[inner]) inner = i;
      }
      int want = !give_up && reductions_only && inner >= 0 && level[inner] == last ? inner : -1;
      if (want != bound_inner_[c]) {
        bound_inner_[c] = want;
        changed = true;
      }
    }
  }
  reductions_ = sorted;
  TakeExactBlock();
  // A work item's panel of vector inputs (over all reductions) that is big
  // next to L2 (3x3 convolutions with many channels: 576 KB per 64 output
  // channels at 256 inputs) is reused by the whole grid before the next
  // panel: the grid indices that move only the vector inputs (a packed
  // panel's index, co/64), then the v blocks, outermost. Each core then
  // keeps its own panels: the thread pool gives each core a contiguous
  // range of work items, so the cores split the output channels.
  int64_t panel = int64_t{nv_} * w_ * lang::BitWidth(dtype_) / 8;
  for (int r : reductions_) panel = SaturatingMul(panel, flat_.indices[r].range);
  if (contraction_ && panel > hw_.l2_bytes / 4) {
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
  PlanChunks();
  PlanUnrolledGuards();
  return true;
}

void VecPlan::PlanVectorsAlongQ() {
  const std::vector<int64_t>& out_strides = flat_.output().strides;
  // Contractions: the first index that moves a vector input and no other.
  // Elementwise kernels (every operand loaded per vector, vectors or
  // scalars alike): the output's smallest stride.
  std::vector<int> order(flat_.num_indices());
  for (int i = 0; i < flat_.num_indices(); ++i) order[i] = i;
  if (!contraction_)
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return Abs(out_strides[a]) < Abs(out_strides[b]); });
  for (int i : order) {
    if (i == v_ || out_strides[i] == 0 || flat_.indices[i].range < 2) continue;
    bool ok = true, moves = !contraction_;
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

bool VecPlan::ConstRows() const {
  // Chunked, every block in one work item: at most this many copies.
  constexpr int64_t kMaxCopiedBlocks = 4;
  if (p_ < 0) return false;
  return PChunked() ? PGroups() == 1 && pblocks_ <= kMaxCopiedBlocks : pblocks_ == 1;
}

void VecPlan::PlanUnrolledGuards() {
  unrolled_.assign(reductions_.size(), false);
  if (!ConstRows()) return;
  constexpr int64_t kMaxCopies = 16;
  std::vector<bool> want(reductions_.size(), false);
  for (size_t n = 0; n < flat_.constraints.size(); ++n) {
    const FlatConstraint& c = flat_.constraints[n];
    if (c.lhs[v_] != 0 || Handled(n)) continue;  // lane masks, loop bounds: not row guards
    for (int i = 0; i < flat_.num_indices(); ++i) {
      if (c.lhs[i] == 0 || i == p_) continue;
      auto at = std::find(reductions_.begin(), reductions_.end(), i);
      if (at == reductions_.end()) return;  // a grid index: the guard stays a guard
      int k = static_cast<int>(at - reductions_.begin());
      if (k == chunk_levels_ && chunk_split_ > 0) return;  // a split level
      want[k] = true;
    }
  }
  // A level that a loop-bound constraint bounds stays a loop: its copies
  // would run the whole range (a strided window's gather: `y - yt >= 0` with
  // y on the grid bounds yt, `yr + 2 * yt < 3` guards the rows yr).
  for (size_t n = 0; n < flat_.constraints.size(); ++n)
    for (size_t k = 0; k < want.size(); ++k)
      if (want[k] && IsLoopBound(n) && bound_inner_[n] == reductions_[k]) return;
  int64_t copies = 1;
  for (size_t k = 0; k < want.size(); ++k)
    if (want[k]) copies = SaturatingMul(copies, flat_.indices[reductions_[k]].range);
  if (copies > kMaxCopies) return;
  unrolled_ = want;
}

bool VecPlan::PShiftAllowed() const {
  // accesses[1..]: everything the kernel reads from memory (contraction and
  // post-op inputs); post-ops reading an earlier result use its register.
  for (size_t a = 1; a < flat_.accesses.size(); ++a)
    for (const std::string& t : flat_.kernel_outputs)
      if (flat_.accesses[a].tensor == t) return false;
  return true;
}

bool VecPlan::ReachedIsValid() const {
  const std::vector<int64_t>& out_strides = flat_.output().strides;
  for (const FlatConstraint& c : flat_.constraints) {
    bool outs = false, reductions = false;
    for (int i = 0; i < flat_.num_indices(); ++i) {
      if (c.lhs[i] == 0) continue;
      (out_strides[i] != 0 ? outs : reductions) = true;
    }
    if (outs && reductions) return false;
    if (!outs && c.rhs < 0) return false;
  }
  return true;
}

bool VecPlan::VectorCandidate(int v) const {
  for (const FlatAccess& a : flat_.accesses)
    if (a.strides[v] != 0 && a.strides[v] != 1) return false;
  for (const std::string& t : flat_.kernel_outputs)
    if (PointAccess(t).strides[v] != 1) return false;
  for (const FlatConstraint& c : flat_.constraints)
    if (Abs(c.lhs[v]) > 1) return false;
  return flat_.indices[v].range >= 2;
}

bool VecPlan::Constrained(int i) const {
  for (size_t c = 0; c < flat_.constraints.size(); ++c)
    if (flat_.constraints[c].lhs[i] != 0 && !Handled(c)) return true;
  return false;
}

std::optional<VecPlan::Block> VecPlan::PlanBlock() {
  if (!Plan()) return std::nullopt;
  Block b;
  b.comparable = contraction_ && p_ >= 0 && q_ < 0 && rows_ == 0;
  if (!b.comparable) return b;
  b.vectors = nv_;
  b.rows = pb_;
  b.rows_budget = rows_budget_;
  b.range_p = flat_.indices[p_].range;
  b.whole_vectors = vblocks_ * nv_ == vectors_along_v_;
  b.clean = SmallPadding(b.range_p, pb_) && b.whole_vectors && pb_ <= rows_budget_;
  b.exact = b.clean && b.range_p % pb_ == 0;
  return b;
}

VectorBlock ChooseVectorBlock(const KernelSpec& spec, const lang::Program& program, const HardwareModel& hw,
                              int64_t rows) {
  // Where the widest block is not clean (it pads its rows by more than 2%,
  // or spills: TakeExactBlock's block of one row more than the registers
  // hold), the exact blocks (whole blocks of rows and vectors, within the
  // registers) of at least kCleanBlockAccumulators (or as many as the
  // widest, if that is fewer): fewer rows of the widest vectors, or fewer
  // vectors along v and more rows; the one that loads least per
  // multiply-add ((vectors + rows) / (vectors * rows): a vector load per
  // vector, a broadcast per row), the more accumulators on a tie.
  // The cases (f32 on AVX-512): bench/suite conv3x3 n1 14x14 256>256 and
  // n8 (S1, S2) take 2 x 16 lanes x 14 rows instead of the spilling
  // 4 x 16 x 7; bench_peers W3 (4x224x224x64 -> 64) takes 4 x 4 rows
  // instead of the spilling 4 x 7 and of 2 x 14; over 7x7x512 -> 512 the
  // spilling 4 x 7 stays (2 x 7 has only 14 accumulators). A clean widest
  // block stays (conv1x1 n1 56x56 64>256, W6), and so does one that
  // nothing divides (matmul 1024^3, W4). bench/HISTORY.md has the figures.
  if (rows > 0) return {kMaxVectors, rows};
  std::optional<VecPlan::Block> widest = VecPlan(spec, program, hw, 0).PlanBlock();
  if (!widest || !widest->comparable || widest->clean) return {};
  const int64_t least =
      std::max(kMinAccumulators, std::min(kCleanBlockAccumulators, widest->vectors * widest->rows));
  VectorBlock choice;
  bool found = false;
  double best_cost = 0;
  int64_t best_accumulators = 0;
  auto consider = [&](int vectors, int64_t block_rows, int64_t forced) {
    int64_t accumulators = vectors * block_rows;
    if (accumulators < least) return;
    double cost = static_cast<double>(vectors + block_rows) / static_cast<double>(accumulators);
    if (found && (cost > best_cost || (cost == best_cost && accumulators <= best_accumulators))) return;
    found = true;
    choice = {vectors, forced};
    best_cost = cost;
    best_accumulators = accumulators;
  };
  // The widest vectors, the largest exact rows within the registers.
  if (widest->whole_vectors)
    for (int64_t r = std::min(widest->rows_budget, widest->range_p); r >= 1; --r)
      if (widest->range_p % r == 0) {
        consider(widest->vectors, r, r);
        break;
      }
  // Two vectors at least: with one, every multiply-add would wait on a load of its own.
  for (int n = widest->vectors - 1; n >= 2; --n) {
    std::optional<VecPlan::Block> b = VecPlan(spec, program, hw, 0, n).PlanBlock();
    if (!b || !b->exact || b->vectors != n) continue;
    consider(n, b->rows, 0);
  }
  return choice;
}

void VecPlan::SetRows(int64_t rows) {
  int64_t range_p = flat_.indices[p_].range;
  pb_ = static_cast<int>(rows);
  pblocks_ = (range_p + pb_ - 1) / pb_;
  // A tail of p costs a guarded slow path in its whole block (a third of
  // the work of a 14x14 convolution in blocks of 5); recomputing a few
  // rows of the previous block costs less.
  p_shift_ = range_p % pb_ != 0 && PShiftAllowed();
}

void VecPlan::TakeExactBlock() {
  // A block that divides the range exactly, one or two rows more than the
  // budget (every register but the broadcast's, which the FMAs then read
  // from memory), beats a padded one: 14 rows in 2 blocks of 7 instead of
  // 3 shifted blocks of 5 (bench/suite conv3x3 n1 14x14 256>256). LLVM
  // keeps the broadcast in a register all the same, so one accumulator
  // spills around the innermost reduction loop: only worth it when that
  // loop is long (256 channels), not over 3 input channels (bench/suite
  // conv7x7/2 n1 224x224 3>64 is slower at 7 rows than at 6). Without
  // a reduction there is no loop to spill around.
  if (p_ < 0 || exact_rows_max_ < exact_rows_min_) return;
  int64_t range_p = flat_.indices[p_].range;
  if (range_p % pb_ == 0) return;
  if (!reductions_.empty() && flat_.indices[reductions_.back()].range < kTightBlockMinInnerLoop) return;
  for (int64_t b = exact_rows_max_; b >= exact_rows_min_; --b)
    if (range_p % b == 0) return SetRows(b);
}

bool VecPlan::HoldRowsFits() const {
  if (flat_.num_inputs != 2 || flat_.comb_op != lang::ast::CombOp::Mul || nv_ < 2) return false;
  int moving = 0, streamed = 0;
  for (int a = 1; a <= 2; ++a) {
    bool moves = flat_.accesses[a].strides[p_] != 0;
    if (moves && !vector_input_[a - 1]) ++moving;
    if (!moves && vector_input_[a - 1]) ++streamed;
  }
  return moving == 1 && streamed == 1;
}

void VecPlan::PlanLaneConstraints() {
  deferred_.assign(flat_.constraints.size(), false);
  v_constrained_ = false;
  std::vector<bool> lanes(flat_.num_indices(), false);  // the indices of the constraints on v
  bool defer = contraction_;
  for (const FlatConstraint& c : flat_.constraints) {
    if (c.lhs[v_] == 0) continue;
    v_constrained_ = true;
    for (int i = 0; i < flat_.num_indices(); ++i)
      if (c.lhs[i] != 0) {
        lanes[i] = true;
        defer &= flat_.output().strides[i] != 0;
      }
  }
  if (!v_constrained_ || !defer) return;
  for (const FlatConstraint& c : flat_.constraints)
    for (int i = 0; i < flat_.num_indices() && c.lhs[v_] == 0; ++i)
      if (c.lhs[i] != 0 && lanes[i]) return;
  // An excluded lane's vector load is no longer masked: it must stay in
  // the buffer (the panel's or the blocked tensor's padding).
  for (int a = 1; a <= flat_.num_inputs; ++a) {
    if (!vector_input_[a - 1]) continue;
    std::optional<AddressSpan> span = ReachedAddresses(flat_, flat_.accesses[a], lanes);
    if (!span || span->lo < 0 || span->hi >= flat_.accesses[a].limit) return;
  }
  for (size_t c = 0; c < flat_.constraints.size(); ++c) deferred_[c] = flat_.constraints[c].lhs[v_] != 0;
  v_constrained_ = false;
}

bool VecPlan::ConstrainedAlongP(int i) const {
  for (const FlatConstraint& c : flat_.constraints)
    if (c.lhs[i] != 0 && c.lhs[v_] != 0) return true;
  return false;
}

bool VecPlan::StreamingStores() const {
  if (contraction_ || !vector_epilogue_) return false;
  int64_t bytes = 0, run_bytes = INT64_MAX;
  bool temporaries = false;
  for (const std::string& t : flat_.kernel_outputs) {
    const FlatAccess& a = PointAccess(t);
    int64_t elem_bytes = lang::BitWidth(program_.Tensor(t).shape.dtype) / 8;
    bytes = SaturatingAdd(bytes, SaturatingMul(a.limit, elem_bytes));
    // A row's vectors are contiguous along v (along q, each is alone).
    run_bytes = std::min(run_bytes, (q_ >= 0 ? w_ : VSpan()) * elem_bytes);
    temporaries |= program_.Tensor(t).role == lang::TensorRole::Temporary;
    if (a.offset % w_ != 0) return false;
    for (int i = 0; i < flat_.num_indices(); ++i)
      if (i != v_ && a.strides[i] % w_ != 0) return false;
  }
  // A result goes back to the caller: above twice the L2 caches' total it
  // would only push the inputs out of the last level (StreamingStoresPay).
  return StreamingStoresPay(spec_, program_, hw_, bytes,
                            temporaries ? kTemporaryStreamingFactor : kResultStreamingFactor, run_bytes);
}

std::string VecPlan::PlanText() const {
  std::string s = fmt::format("Vector form: {} x {} lanes of {} along {}", nv_, w_,
                              sem::ScalarName(dtype_), flat_.indices[v_].name);
  if (contraction_ && flat_.agg_op != lang::ast::AggOp::Sum && flat_.agg_op != lang::ast::AggOp::Assign)
    s += fmt::format(" ({})", flat_.agg_op == lang::ast::AggOp::Max   ? "max"
                              : flat_.agg_op == lang::ast::AggOp::Min ? "min"
                                                                      : "product");
  if (q_ >= 0) s += fmt::format(" (vectors along {})", flat_.indices[q_].name);
  if (p_ >= 0) s += fmt::format(", block of {} along {}{}{}", pb_, flat_.indices[p_].name,
                                p_shift_ ? " (the last block shifted back)" : "",
                                hold_rows_ ? " (rows' broadcasts held, vectors streamed)" : "");
  if (VTail()) s += ", masked tail";
  if (v_constrained_) s += fmt::format(", constraints on {} as lane masks", flat_.indices[v_].name);
  if (AnyDeferred()) s += fmt::format(", constraints on {} applied to the sums", flat_.indices[v_].name);
  s += "\n";
  std::vector<std::string> grid;
  for (int i : grid_)
    grid.push_back(i == chunk_g_ ? fmt::format("{} {} values", sb_, flat_.indices[i].name) : flat_.indices[i].name);
  std::string p_name = p_ >= 0 ? flat_.indices[p_].name : std::string("-");
  std::string rest = grid.empty() ? std::string("-") : fmt::format("{}", fmt::join(grid, ", "));
  const std::string& v_name = flat_.indices[q_ >= 0 ? q_ : v_].name;
  std::string p_blocks = PChunked() ? fmt::format("{} {} blocks", sb_, p_name) : p_name + " block";
  std::string v_blocks = chunk_v_ ? fmt::format("{} {} blocks", sb_, v_name) : v_name + " block";
  if (v_outer_)
    s += fmt::format("Grid: {} x {} x {} work items (one per {}, {}, {}: outermost)\n",
                     PGroups(), grid_items_, VGroups(), p_blocks, rest, v_blocks);
  else
    s += fmt::format("Grid: {} x {} x {} work items (one per {}, {}, {})\n", PGroups(),
                     VGroups(), grid_items_, p_blocks, v_blocks, rest);
  if (contraction_) {
    std::vector<std::string> reds;
    for (int r : reductions_) reds.push_back(flat_.indices[r].name);
    s += fmt::format("Reduction loops: {}\n", reds.empty() ? std::string("-")
                                                         : fmt::format("{}", fmt::join(reds, ", ")));
    if (Chunked()) {
      std::vector<std::string> outer(reds.begin(), reds.begin() + chunk_levels_);
      if (chunk_split_ > 0) outer.push_back(fmt::format("{}/{}", reds[chunk_levels_], chunk_split_));
      s += fmt::format("Reduction chunks: {} ({} KB of vector inputs each; {} blocks' accumulators in memory{})\n",
                       fmt::join(outer, ", "), (chunk_bytes_ + 1023) / 1024, sb_,
                       PrefetchText());
    }
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

}  // namespace vector_form

int64_t VectorBlockElements(const HardwareModel& hw) {
  return vector_form::MaxLanes(hw, lang::DataType::F32) * vector_form::kMaxVectors;
}

namespace {

// Plan: the register block (ChooseVectorBlock), then the decisions
// (VecPlan); Emit builds the kernel from them (VecEmitter).
class VectorFormImpl final : public FormImpl {
 public:
  Form id() const override { return Form::Vector; }
  std::optional<FormPlan> Plan(const KernelSpec& spec, const lang::Program& program, const HardwareModel& hw,
                               const CodegenOptions& options) const override {
    if (PaddingNeedsZeros(spec)) return std::nullopt;
    vector_form::VectorBlock block = vector_form::ChooseVectorBlock(spec, program, hw, options.vector_rows);
    auto state = std::make_shared<vector_form::VecPlan>(spec, program, hw, block.rows, block.vectors);
    if (!state->Plan()) return std::nullopt;
    FormPlan plan = StartPlan(id(), spec, program, hw, options);
    // The most vectors per work item along v, and the block rows (0: planned
    // from the registers; the text says what was planned).
    plan.params = {{"vectors", block.vectors}, {"rows", block.rows}};
    std::string text = state->PlanText();
    return KeepState(std::move(plan), std::move(state), std::move(text));
  }
  GeneratedKernel Emit(const FormPlan& plan) const override {
    return FinishKernel(plan, vector_form::VecEmitter(StateOf<vector_form::VecPlan>(plan, *this)).Emit());
  }
};

}  // namespace

const FormImpl& VectorForm() {
  static const VectorFormImpl form;
  return form;
}

}  // namespace tilec::compiler
