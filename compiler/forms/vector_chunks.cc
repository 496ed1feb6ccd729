// The vector form's reduction chunks (VecPlan::PlanChunks, VecEmitter::EmitChunked).
//
// A register block reads the vector inputs' panel over the whole reduction
// (a 3x3 convolution's weights for 64 output channels over 64 input
// channels: 144 KB). When that panel is larger than L1, every block reads
// it from L2 again, and the loads from L2 hold the multiply-adds back (the
// 4 x 4 register block of conv 3x3 64->64 alone reaches a clearly smaller
// share of the FMA peak with its panel in L2 than in L1; bench/suite
// conv3x3 n1 56x56 64>64 is the compiled case, bench/HISTORY.md the
// figures). So a
// work item covers SB blocks of p and walks the reduction in chunks that fit
// in half of L1:
//
//   part[SB][PB][NV] = identity                  (a private array: L1)
//   for each chunk (outer reduction loops, and the outer part of a split one):
//     for each block s of the work item:
//       acc = part[s]; the inner reduction loops (fast or slow path); part[s] = acc
//   for each block s: acc = part[s]; post-ops and stores
//
// Each chunk's panel is then read from L2 once per work item and from L1 by
// the other SB - 1 blocks.
//
// Column chunks (PlanColumnChunks): the same structure with the SB blocks
// along v, for reductions along an outer axis of inputs far larger than
// the caches, where the point is the memory access pattern: a few rows of a
// 4 KB strip per chunk instead of 256-byte runs rows apart.
#include <fmt/format.h>

#include <algorithm>

#include "compiler/forms/vector.h"
#include "support/error.h"

namespace tilec::compiler::vector_form {

using namespace sem::builder;

void VecPlan::PlanColumnChunks() {
  if (q_ >= 0 || vblocks_ < 2) return;
  // Short runs: a vector input whose VSpan elements along v are a run of at
  // most 512 bytes, the innermost reduction stepping past it, far larger
  // than the caches (4 times the L2 total, as the transpose form's streaming
  // stores: below that the input stays cached between runs and chunking only
  // adds work, as on bench/suite global avg pool n8 28x28 c256) and read once.
  int last = static_cast<int>(reductions_.size()) - 1;
  int r = reductions_[last];
  bool short_runs = false;
  for (int a = 1; a <= flat_.num_inputs; ++a) {
    const FlatAccess& in = flat_.accesses[a];
    int64_t bytes = lang::BitWidth(in.dtype) / 8;
    if (!vector_input_[a - 1] || in.strides[v_] != 1 || Abs(in.strides[r]) < VSpan()) continue;
    // Read once: a panel the p blocks share (a matmul's B) is the business
    // of PlanChunks.
    if (p_ >= 0 && in.strides[p_] == 0) return;
    short_runs |= VSpan() * bytes <= 512 && LargerThanTheCaches(SaturatingMul(in.limit, bytes), kCopyStreamingFactor, hw_);
  }
  if (!short_runs) return;
  // Chunks of 4 to 16 steps (8 where it divides): the innermost levels that
  // make so many, or a split of the innermost one. Short chunks of long
  // strips read whole row pieces at about the rate of a row sum; long chunks
  // and one narrow strip over all rows fall back towards the rate of the
  // scattered 256-byte runs (a C model of bench/suite column sum 4096x4096;
  // bench/HISTORY.md has the sweep).
  auto steps = [&](int from) {
    int64_t n = 1;
    for (int k = from; k <= last; ++k) n = SaturatingMul(n, flat_.indices[reductions_[k]].range);
    return n;
  };
  constexpr int64_t kMinSteps = 4, kMaxSteps = 16, kSteps = 8;
  int64_t range = flat_.indices[r].range;
  if (range <= kMaxSteps) {
    int level = last;
    while (level > 0 && steps(level - 1) <= kMaxSteps) --level;
    if (level == 0 || steps(level) < kMinSteps) return;  // one chunk, or chunks too short
    chunk_levels_ = level;
  } else {
    for (size_t c = 0; c < flat_.constraints.size(); ++c)
      if (flat_.constraints[c].lhs[r] != 0) return;
    // A divisor near 8, else chunks of 8 and a shorter last one.
    int64_t part = 0;
    for (int64_t d : {kSteps, int64_t{7}, int64_t{6}, int64_t{5}, int64_t{9}, int64_t{10}, int64_t{12},
                      kMinSteps, int64_t{14}, int64_t{15}, kMaxSteps})
      if (part == 0 && range % d == 0) part = d;
    if (part == 0) part = kSteps;
    chunk_levels_ = last;
    chunk_split_ = part;
  }
  // SB blocks per work item: strips of 4 KB, fewer where the grid would
  // keep less than 2 work items per core.
  int64_t block_bytes = VSpan() * lang::BitWidth(dtype_) / 8;
  int64_t sb = std::clamp<int64_t>(4096 / block_bytes, 1, vblocks_);
  int64_t want = 2 * std::max<int64_t>(hw_.compute_units, 1);
  while (sb > 1 && (vblocks_ + sb - 1) / sb * grid_items_ * pblocks_ < want) sb = (sb + 1) / 2;
  if (sb < 2) {
    chunk_levels_ = 0, chunk_split_ = 0;
    return;
  }
  sb_ = static_cast<int>(sb);
  chunk_v_ = true;
  chunk_bytes_ = SaturatingMul(chunk_split_ > 0 ? chunk_split_ : steps(chunk_levels_), sb * block_bytes);
}

void VecPlan::PlanChunks() {
  if (!contraction_ || reductions_.empty()) return;
  PlanColumnChunks();
  if (chunk_v_ || p_ < 0) return;
  // One block covers p: the blocks are values of a grid index instead
  // (ChooseGridChunks), where one fits.
  bool along_grid = pblocks_ < 2;
  bool grid_allowed = q_ < 0 && !spec_.store_reached_only && !grid_.empty();
  if (along_grid && !grid_allowed) return;
  // Bytes of the vector inputs one reduction step reads for the whole block
  // (the ones that do not move with p: those are what the blocks share).
  int64_t step = 0;
  for (int a = 1; a <= flat_.num_inputs; ++a)
    if (vector_input_[a - 1] && flat_.accesses[a].strides[p_] == 0)
      step += int64_t{nv_} * w_ * lang::BitWidth(flat_.accesses[a].dtype) / 8;
  if (step == 0) return;
  int last = static_cast<int>(reductions_.size()) - 1;
  // Panel bytes of the levels [from, last], and their steps.
  auto steps = [&](int from) {
    int64_t n = 1;
    for (int k = from; k <= last; ++k) n = SaturatingMul(n, flat_.indices[reductions_[k]].range);
    return n;
  };
  if (SaturatingMul(steps(0), step) <= hw_.l1_bytes) return;  // L1 holds it
  int64_t budget = hw_.l1_bytes / 2;
  int level = -1;
  for (int k = 1; k <= last && level < 0; ++k)
    if (SaturatingMul(steps(k), step) <= budget) level = k;
  if (level > 0) {
    chunk_levels_ = level;
    chunk_bytes_ = steps(level) * step;
  } else {
    // The innermost level alone is too large: split it (an unconstrained
    // level whose loop no constraint bounds), in the largest part that fits.
    int r = reductions_[last];
    for (size_t c = 0; c < flat_.constraints.size(); ++c)
      if (flat_.constraints[c].lhs[r] != 0) return;
    int64_t range = flat_.indices[r].range;
    int64_t most = budget / step, part = 0;
    for (int64_t d = most; d >= 2 && part == 0; --d)
      if (range % d == 0) part = d;
    // No divisor long enough (a prime range: bench/suite matmul 509^3):
    // chunks as even as they can be, the last one shorter.
    if (part < kMinChunkSteps && most >= kMinChunkSteps) {
      int64_t chunks = (range + most - 1) / most;
      part = (range + chunks - 1) / chunks;
    }
    if (part == 0 || part >= range) return;
    chunk_levels_ = last;
    chunk_split_ = part;
    chunk_bytes_ = part * step;
  }
  // A chunk must be long enough to pay for loading and storing the block's
  // accumulators around it: 2 vector moves per accumulator against one FMA
  // per step. Below kMinChunkSteps the moves cost more than the panel's L1
  // hits save: at 21 steps (bench/suite conv7x7/2 n1 224x224 3>64, chunks of
  // one kernel row) and at 37 (matmul 333^3, k in 9 chunks) the unchunked
  // kernel is faster; at 96 (conv 3x3 32->32 nChw16c, bench_peers L4, chunks
  // of one kh) chunking still gains.
  if (chunk_bytes_ / step < kMinChunkSteps) {
    chunk_levels_ = 0, chunk_split_ = 0, chunk_bytes_ = 0;
    return;
  }
  int64_t block_bytes = int64_t{pb_} * nv_ * w_ * lang::BitWidth(dtype_) / 8;
  if (along_grid) {
    if (std::optional<GridChunks> grid = ChooseGridChunks(block_bytes)) return TakeGridChunks(*grid);
    chunk_levels_ = 0, chunk_split_ = 0, chunk_bytes_ = 0;
    return;
  }
  // A small image's few rows (14x14 outputs: 15 in 5 blocks of 3) share
  // each chunk's panel too few times to pay for reading it from L2: values
  // of a grid index (the rows x) share it instead where more of them do
  // (bench/suite conv3x3 n1 14x14 256>256 on x86-64-v3; at 28 rows, 2
  // blocks of 14 on x86-64-v4, the blocks along p are faster).
  if (pblocks_ * pb_ < kFewSharedRows && grid_allowed)
    if (std::optional<GridChunks> grid = ChooseGridChunks(block_bytes); grid && grid->sb > pblocks_)
      return TakeGridChunks(*grid);
  // Blocks per work item: their accumulators in a quarter of L1, while the
  // grid keeps 4 work items per core.
  int64_t sb = std::clamp<int64_t>(hw_.l1_bytes / 4 / block_bytes, 1, pblocks_);
  int64_t others = CheckedMul(vblocks_, grid_items_, "the launch size");
  int64_t want = 4 * std::max<int64_t>(hw_.compute_units, 1);
  while (sb > 1 && (pblocks_ + sb - 1) / sb * others < want) sb = (sb + 1) / 2;
  if (sb < 2) {
    chunk_levels_ = 0, chunk_split_ = 0, chunk_bytes_ = 0;
    return;
  }
  // As many work items along p, with blocks shared out evenly: 13 blocks
  // are 7 + 6, not 9 + 4, whose items take 9 / 4 of each other's time
  // (conv 3x3 64->64 backward-weights, bench/grad W1 K: one thread was left
  // with the last long items).
  int64_t items = (pblocks_ + sb - 1) / sb;
  sb = (pblocks_ + items - 1) / items;
  sb_ = static_cast<int>(sb);
  // Each chunk loop step reads a new panel: the blocks of one chunk fetch
  // the next one's.
  PlanPrefetch();
}

int VecPlan::ChunkIndex() const { return reductions_[chunk_split_ > 0 ? chunk_levels_ : chunk_levels_ - 1]; }

int64_t VecPlan::ChunkLevelSteps(int k) const {
  return k == chunk_levels_ && chunk_split_ > 0 ? chunk_split_ : flat_.indices[reductions_[k]].range;
}

VecPlan::Span VecPlan::ChunkSpan(int a) const {
  const FlatAccess& in = flat_.accesses[a];
  Span s;
  auto extent = [&](int i, int64_t count) {
    if (i < 0 || in.strides[i] == 0 || count < 2) return;
    s.forward &= in.strides[i] > 0;
    s.span += in.strides[i] * (count - 1);
    s.read = SaturatingMul(s.read, count);
  };
  for (int k = chunk_levels_; k <= static_cast<int>(reductions_.size()) - 1; ++k)
    extent(reductions_[k], ChunkLevelSteps(k));
  extent(p_, GChunked() ? pb_ : int64_t{sb_} * pb_);
  if (GChunked()) extent(chunk_g_, sb_);
  if (vector_input_[a - 1]) {
    extent(v_, VSpan());
    extent(q_, nv_);
  }
  return s;
}

void VecPlan::PlanPrefetch() {
  prefetch_.assign(flat_.num_inputs, Prefetch::None);
  int last = static_cast<int>(reductions_.size()) - 1;
  int c = ChunkIndex();
  int64_t steps = 1;
  for (int k = chunk_levels_; k <= last; ++k) steps = SaturatingMul(steps, ChunkLevelSteps(k));
  int64_t slots = SaturatingMul(steps, sb_);
  for (int a = 1; a <= flat_.num_inputs; ++a) {
    const FlatAccess& in = flat_.accesses[a];
    if (in.strides[c] == 0) continue;  // the same elements in every chunk
    auto [forward, span, read] = ChunkSpan(a);
    // The next chunk's elements are new to the work item only where the
    // chunk steps past the span (a row further on: bench/grad W1 conv3x3 K),
    // not within it (a convolution's window one pixel on: the current
    // chunk has read those lines, and the prefetches only cost loads).
    int64_t chunk_step = Abs(in.strides[c]) * (chunk_split_ > 0 ? chunk_split_ : 1);
    if (!forward || chunk_step < span) continue;
    int64_t line = LineElements(in.dtype);
    // Dense (half of the span read or more): the lines of the span, shared
    // out over the blocks' steps, at most 4 per step.
    if (span <= 2 * read) {
      if ((span + line - 1) / line <= 4 * slots) prefetch_[a - 1] = Prefetch::Span;
      continue;
    }
    // Sparse, a panel the blocks share (resnet18's layer4 weights: runs of
    // 64 output channels 9 x 64 apart): each step's vectors of the next
    // chunk, one per block. A sparse input of the blocks' own rows (the
    // layer's activations: 64 of 512 channels per pixel) is not prefetched:
    // its whole span would evict the panel, and step by step its rows come
    // up a line every 16 steps.
    bool shared = (p_ < 0 || in.strides[p_] == 0) && (!GChunked() || in.strides[chunk_g_] == 0);
    if (vector_input_[a - 1] && shared && in.strides[v_] == 1) prefetch_[a - 1] = Prefetch::Vectors;
  }
}

std::string VecPlan::PrefetchText() const {
  std::vector<std::string> names;
  for (int a = 1; a <= static_cast<int>(prefetch_.size()); ++a)
    if (prefetch_[a - 1] != Prefetch::None) names.push_back(flat_.accesses[a].tensor);
  return names.empty() ? "" : fmt::format("; the next chunk's {} prefetched", fmt::join(names, ", "));
}

std::vector<Stmt> VecEmitter::NextChunkPrefetches() {
  std::vector<Stmt> out;
  if (prefetch_.empty() || !prefetch_block_) return out;
  int last = static_cast<int>(reductions_.size()) - 1;
  int c = ChunkIndex();
  auto inner_pos = [&](int k) {
    return k == chunk_levels_ && chunk_split_ > 0 ? _Var(names_[reductions_[k]] + "_i", Type::Index())
                                                  : pos_[reductions_[k]];
  };
  // This step's slot among the work item's SB x steps ones: block-major.
  Expr step = I(0);
  int64_t steps = 1;
  for (int k = last; k >= chunk_levels_; --k) {
    step = step + inner_pos(k) * steps;
    steps = SaturatingMul(steps, ChunkLevelSteps(k));
  }
  int64_t slots = SaturatingMul(steps, sb_);
  Expr slot = prefetch_block_ * steps + step;
  std::vector<Expr> saved = pos_;
  // The chunk one step on, at `inner` along a split level's inner part.
  auto next_chunk = [&](Expr inner) {
    if (chunk_split_ > 0)
      pos_[c] = (_Var(names_[c] + "_o", Type::Index()) + 1) * chunk_split_ + inner;
    else
      pos_[c] = saved[c] + 1;
  };
  for (int a = 1; a <= flat_.num_inputs; ++a) {
    const FlatAccess& in = flat_.accesses[a];
    Expr buffer = Buffer(in.tensor);
    Expr limit = I(std::max<int64_t>(in.limit - 1, 0));
    if (prefetch_[a - 1] == Prefetch::Vectors) {
      // This step's vectors in the next chunk, block b taking vectors
      // b, b + SB, …: the step's positions, the chunk one step on.
      pos_ = saved;
      next_chunk(inner_pos(chunk_levels_));
      int64_t per_vector = q_ >= 0 ? in.strides[q_] : int64_t{w_} * in.strides[v_];
      for (int j = 0; j * sb_ < nv_; ++j) {
        Expr vv = _Min(prefetch_block_ % int64_t{nv_} + int64_t{j} * sb_, I(nv_ - 1));
        out.push_back(_Prefetch(buffer, _Clamp(Address(in, 0, 0, 0) + vv * per_vector, I(0), limit)));
      }
      continue;
    }
    if (prefetch_[a - 1] != Prefetch::Span) continue;
    // The next chunk's first element: the inner levels at 0, the work
    // item's first block (of p, or of the grid index g).
    pos_ = saved;
    for (int k = chunk_levels_; k <= last; ++k) pos_[reductions_[k]] = I(0);
    next_chunk(I(0));
    if (GChunked())
      pos_[chunk_g_] = _Var(names_[chunk_g_] + "_b", Type::Index());
    else
      pos_[p_] = _Index(sem::ThreadIndexKind::GroupId, 0) * (int64_t{sb_} * pb_);
    int64_t span = ChunkSpan(a).span;
    int64_t line = LineElements(in.dtype);
    int64_t lines = (span + line - 1) / line;
    // One prefetch per slot where the lines are fewer than the slots (a
    // line then comes up more than once: a hit, and no branch), else a few.
    int64_t per_slot = (lines + slots - 1) / slots;
    int64_t stride = per_slot > 1 ? line : std::max<int64_t>(1, (span + slots - 1) / slots);
    Expr first = Address(in, 0, 0, 0);
    for (int64_t j = 0; j < per_slot; ++j) {
      Expr at = first + _Min((slot * per_slot + j) * stride, I(span - 1));
      out.push_back(_Prefetch(buffer, _Clamp(at, I(0), limit)));
    }
  }
  pos_ = std::move(saved);
  return out;
}

std::optional<VecPlan::GridChunks> VecPlan::ChooseGridChunks(int64_t block_bytes) const {
  // Levels whose positions are fixed for a whole chunk: the chunk loops
  // (not a split level: its position moves inside the chunk).
  auto chunk_level = [&](int i) {
    auto at = std::find(reductions_.begin(), reductions_.end(), i);
    return at != reductions_.end() && at - reductions_.begin() < chunk_levels_;
  };
  auto in_grid = [&](int i) { return std::find(grid_.begin(), grid_.end(), i) != grid_.end(); };
  int g = -1;
  for (int i : grid_) {
    if (flat_.indices[i].range < 2) continue;
    bool ok = true;
    for (int a = 1; a <= flat_.num_inputs && ok; ++a)
      ok = !vector_input_[a - 1] || flat_.accesses[a].strides[i] == 0;  // the panel is the same for every value
    for (const FlatConstraint& c : flat_.constraints) {
      if (!ok || c.lhs[i] == 0) continue;
      for (int j = 0; j < flat_.num_indices() && ok; ++j)
        ok = c.lhs[j] == 0 || in_grid(j) || chunk_level(j);
    }
    if (ok) {
      g = i;
      break;
    }
  }
  if (g < 0) return std::nullopt;
  // SB values of g per work item: their accumulators in a quarter of L1, in
  // groups as even as they can be, while the grid keeps 4 work items per
  // core.
  int64_t range = flat_.indices[g].range;
  int64_t most = std::clamp<int64_t>(hw_.l1_bytes / 3 / block_bytes, 1, range);
  int64_t sb = (range + (range + most - 1) / most - 1) / ((range + most - 1) / most);
  int64_t others = CheckedMul(CheckedMul(vblocks_, pblocks_, "the launch size"), grid_items_ / range,
                              "the launch size");
  int64_t want = 4 * std::max<int64_t>(hw_.compute_units, 1);
  while (sb > 1 && (range + sb - 1) / sb * others < want) sb = (sb + 1) / 2;
  if (sb < 2) return std::nullopt;
  return GridChunks{g, sb};
}

void VecPlan::TakeGridChunks(GridChunks grid) {
  const int g = grid.g;
  const int64_t range = flat_.indices[g].range, sb = grid.sb;
  chunk_g_ = g;
  sb_ = static_cast<int>(sb);
  g_groups_ = (range + sb - 1) / sb;
  grid_items_ = grid_items_ / range * g_groups_;
  // g's constraints are checked per block, no longer bounds of a loop.
  block_guard_.assign(flat_.constraints.size(), false);
  for (size_t c = 0; c < flat_.constraints.size(); ++c)
    if (flat_.constraints[c].lhs[g] != 0) block_guard_[c] = true, bound_inner_[c] = -1;
  // The weights of a network's last layers come from memory (the layers
  // between evict them): the rows of a chunk fetch the next chunk's
  // (resnet18's layer4 3x3 convolutions).
  PlanPrefetch();
}

Expr VecEmitter::BlockGuard() const {
  Expr all;
  for (size_t n = 0; n < block_guard_.size(); ++n) {
    if (!block_guard_[n]) continue;
    const FlatConstraint& c = flat_.constraints[n];
    Expr sum = I(0);
    for (int i = 0; i < flat_.num_indices(); ++i)
      if (c.lhs[i] != 0) sum = sum + pos_[i] * c.lhs[i];
    all = And(all, sum <= c.rhs);
  }
  return all;
}

Stmt VecEmitter::SetBlock(Expr s) const {
  if (chunk_g_ >= 0) return _Assign(Pos(chunk_g_), _Var(names_[chunk_g_] + "_b", Type::Index()) + s);
  if (chunk_v_)
    return _Assign(Pos(v_), _Index(sem::ThreadIndexKind::GroupId, VDim()) * (int64_t{sb_} * VSpan()) +
                                s * VSpan());
  Expr start = _Index(sem::ThreadIndexKind::GroupId, 0) * (int64_t{sb_} * pb_) + s * int64_t{pb_};
  if (p_shift_) start = _Min(start, I(flat_.indices[p_].range - pb_));
  return _Assign(Pos(p_), start);
}

void VecEmitter::EmitChunked(std::vector<Stmt>& top) {
  Type slots = Type::Array(VecType(), int64_t{sb_} * pb_ * nv_);
  top.push_back(_Declare(slots, "part_", Identity()));
  Expr part = _Var("part_", slots);
  DeclareAccumulators(top);
  // Blocks of this work item: SB, fewer in the last one.
  Expr first_block = _Index(sem::ThreadIndexKind::GroupId, chunk_v_ ? VDim() : 0) * int64_t{sb_};
  if (chunk_g_ >= 0) first_block = _Var(names_[chunk_g_] + "_b", Type::Index());
  int64_t all_blocks = chunk_g_ >= 0 ? flat_.indices[chunk_g_].range : chunk_v_ ? vblocks_ : pblocks_;
  top.push_back(_Declare(Type::Index(), "blocks_", _Min(I(sb_), I(all_blocks) - first_block)));
  Expr blocks = _Var("blocks_", Type::Index());
  Expr blk = _Var("blk_", Type::Index());
  auto slot = [&](Expr b, int pp, int vv) { return b * (int64_t{pb_} * nv_) + int64_t{pp * nv_ + vv}; };
  auto load_accs = [&](Expr b, std::vector<Stmt>& body) {
    for (int pp = 0; pp < pb_; ++pp)
      for (int vv = 0; vv < nv_; ++vv) body.push_back(_Assign(Acc(pp, vv), _Load(part, slot(b, pp, vv))));
  };

  // The chunk loops' positions are in scope for the fast condition, the
  // guards and the inner loops.
  for (int k = 0; k < chunk_levels_; ++k) pos_[reductions_[k]] = _Var(names_[reductions_[k]], Type::Index());
  // One chunk at the current positions: every block of the work item, in a
  // loop, or (ConstRows) one copy per block with p's position a constant.
  auto one_block = [&](Expr b) {
    std::vector<Stmt> body;
    load_accs(b, body);
    prefetch_block_ = b;
    body.push_back(Reduce(chunk_levels_));
    prefetch_block_ = nullptr;
    for (int pp = 0; pp < pb_; ++pp)
      for (int vv = 0; vv < nv_; ++vv) body.push_back(_Store(part, slot(b, pp, vv), Acc(pp, vv)));
    // A block that a constraint on g excludes from this chunk is skipped.
    if (Expr guard = BlockGuard()) {
      Stmt st = _If(guard, _Block(std::move(body)));
      body.clear();
      body.push_back(std::move(st));
    }
    return body;
  };
  auto blocks_of = [&]() -> Stmt {
    Stmt blocks_stmt;
    if (PChunked() && ConstRows()) {
      Expr var = pos_[p_];
      std::vector<Stmt> copies;
      for (int64_t b = 0; b < pblocks_; ++b) {
        int64_t start = b * pb_;
        if (p_shift_) start = std::min(start, flat_.indices[p_].range - pb_);
        pos_[p_] = I(start);
        for (Stmt& st : one_block(I(b))) copies.push_back(std::move(st));
      }
      pos_[p_] = var;
      blocks_stmt = _Block(std::move(copies));
    } else {
      std::vector<Stmt> body = one_block(blk);
      body.insert(body.begin(), SetBlock(blk));
      blocks_stmt = _NoUnroll(_For("blk_", I(0), blocks, 1, _Block(std::move(body))));
    }
    return blocks_stmt;
  };
  // A split level: its whole chunks, then the remainder as one more chunk
  // of range % split steps (chunk_inner_).
  auto chunk = [&]() -> Stmt {
    if (chunk_split_ == 0) return blocks_of();
    int r = reductions_[chunk_levels_];
    int64_t whole = flat_.indices[r].range / chunk_split_, rest = flat_.indices[r].range % chunk_split_;
    std::vector<Stmt> parts;
    chunk_inner_ = chunk_split_;
    parts.push_back(_For(names_[r] + "_o", I(0), I(whole), 1, blocks_of()));
    if (rest > 0) {
      chunk_inner_ = rest;
      parts.push_back(_For(names_[r] + "_o", I(whole), I(whole + 1), 1, blocks_of()));
      chunk_inner_ = chunk_split_;
    }
    return _Block(std::move(parts));
  };
  top.push_back(LoopsOrCopies(0, chunk_levels_ - 1, chunk, false, false));
  for (int k = 0; k < chunk_levels_; ++k) pos_[reductions_[k]] = nullptr;

  // The post-ops and stores of each block.
  std::vector<Stmt> out;
  out.push_back(SetBlock(blk));
  load_accs(blk, out);
  out.push_back(Stores());
  top.push_back(_NoUnroll(_For("blk_", I(0), blocks, 1, _Block(std::move(out)))));
}

}  // namespace tilec::compiler::vector_form
