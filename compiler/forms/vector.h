// The vector form's generator (the CPU form of contraction and elementwise
// kernels; what it emits is described in forms/vector.cc), in two halves:
// VecPlan (forms/vector.cc: which index gets the lanes, the block, the grid,
// the reduction loops) decides, and VecEmitter (forms/vector_emit.cc:
// positions, lane masks, the reduction nest, post-ops and stores) builds
// the kernel from those decisions; forms/vector_chunks.cc has both halves
// of the reduction chunks. Internal to the compiler: the entry point is
// VectorForm (forms/form.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compiler/forms/common.h"
#include "compiler/sem/builder.h"

namespace tilec::compiler::vector_form {

using lang::DataType;
using sem::Expr;
using sem::Stmt;
using sem::Type;

inline int64_t Abs(int64_t v) { return v < 0 ? -v : v; }

constexpr int kMaxVectors = 4;  // vectors per work item along v
// Accumulators that keep the FMA units busy (their latency times their count).
constexpr int64_t kMinAccumulators = 12;
// Accumulators of a block that replaces a widest one that is not clean
// (ChooseVectorBlock): a 4 x 4 block keeps the 56x56 convolutions (bench/suite
// conv3x3 n1 56x56 64>64) near the FMA peak, while fewer accumulators leave
// the FMA latency exposed: over 7x7x512 -> 512 a 2 x 7 block (14) loses to
// the spilling 4 x 7 (bench/HISTORY.md).
constexpr int64_t kCleanBlockAccumulators = 16;
// Elements an elementwise work item moves at least, when its vectors are
// short (blocks of rows): one 4-lane vector per item leaves the copy bound by
// the per-item overhead, not by memory (NHWC -> abDc4d, bench/workloads
// copy_nhwc.tile at N=8).
constexpr int64_t kElementwiseItem = 64;

// Lanes of a vector of `dtype` (hw.vec_size counts f32 lanes), 2 to 16.
inline int64_t MaxLanes(const HardwareModel& hw, DataType dtype) {
  return std::clamp<int64_t>(hw.vec_size * 32 / lang::BitWidth(dtype), 2, 16);
}

// Blocks of `block` rows cover `range` with at most 2% of padding.
inline bool SmallPadding(int64_t range, int64_t block) {
  return ((range + block - 1) / block * block - range) * 50 <= range;
}

inline Expr And(Expr a, Expr b) {
  return a ? sem::builder::_LogicalAnd(std::move(a), std::move(b)) : b;
}

// The vector form's decisions (FormPlan::state): Plan makes them, nothing
// changes them after. The queries below (tails, chunks, launch groups) are
// what the plan text and the emission both read.
class VecPlan : public FormState {
 public:
  // `rows`: forced block rows (0: planned); `max_vectors`: the most vectors
  // per work item along v (ChooseVectorBlock).
  VecPlan(const KernelSpec& spec, const lang::Program& program, const HardwareModel& hw, int64_t rows,
          int max_vectors = kMaxVectors)
      : spec_(spec), flat_(spec.flat), program_(program), hw_(hw), rows_(rows), max_vectors_(max_vectors) {}

  // false: the vector form does not apply.
  bool Plan();
  std::string PlanText() const;

  // The register block a plan takes, for ChooseVectorBlock to compare.
  struct Block {
    bool comparable = false;  // a contraction's rows of vectors along v (not q), rows not forced
    bool clean = false;       // rows padded by at most 2%, no padded vector, and the block fits the registers
    bool exact = false;       // clean, and the rows divide p's range
    int vectors = 0;
    int64_t rows = 0;
    int64_t rows_budget = 0;  // the most rows the registers hold beside the vectors
    int64_t range_p = 0;      // p's range
    bool whole_vectors = false;  // no padded vector along v
  };
  // Plans (a fresh VecPlan); nullopt where the vector form does not apply.
  std::optional<Block> PlanBlock();

 protected:
  // One vector covers v (the inner block of a blocked layout, nChw16c's
  // c%16): the work item's vectors step along another output index q
  // instead (co/16), one that no broadcast input moves along, so each
  // broadcast feeds NV vectors as along v. NV divides q's range; q is in no
  // constraint without v (lane masks take q's value per vector).
  void PlanVectorsAlongQ();

  static bool IsFloatOrBool(DataType t) { return lang::IsFloat(t) || t == DataType::Bool; }

  // v may be the vector index: nothing the kernel touches moves along it
  // with a stride other than 0 or 1 (writes: exactly 1), and constraints
  // mention it with coefficient 0 or +-1 (a lane mask is an interval then).
  bool VectorCandidate(int v) const;

  // With KernelSpec::store_reached_only: an output point is reached exactly
  // when it satisfies the constraints (each mentions output indices only,
  // or reductions only and holds at reduction point 0), so the stores can
  // be masked by the constraints on output indices.
  bool ReachedIsValid() const;

  // i is in a constraint that the slow path checks (not a loop bound).
  bool Constrained(int i) const;
  bool IsLoopBound(size_t c) const { return c < bound_inner_.size() && bound_inner_[c] >= 0; }
  // Constraint c needs no guard in the reduction: it bounds a loop, or it
  // is checked once per block of a grid-chunked work item (BlockGuard).
  bool Handled(size_t c) const {
    return IsLoopBound(c) || Deferred(c) || (c < block_guard_.size() && block_guard_[c]);
  }

  // Constraints on v that mention output indices only (a blocked layout's
  // padded channels: 8 * co/8 + co%8 <= 19) are deferred: the reduction
  // runs on whole vectors, unmasked, and the lanes they exclude are reset
  // to the identity once, before the post-ops. Only where every vector
  // load then stays inside its buffer (ReachedAddresses) and no other
  // constraint shares their indices (stores limited to the reached points
  // still check them: Stores). Sets deferred_ and v_constrained_.
  void PlanLaneConstraints();
  bool Deferred(size_t c) const { return c < deferred_.size() && deferred_[c]; }
  bool AnyDeferred() const { return std::find(deferred_.begin(), deferred_.end(), true) != deferred_.end(); }

  // A product of a broadcast that moves with p and a vector input that does
  // not (a convolution's data and weights): the block may hold its rows'
  // broadcasts and stream the vectors through them (hold_rows_), one vector
  // at a time, PB + 1 registers beside the accumulators instead of NV + 1.
  bool HoldRowsFits() const;

  // Lane masks are per vector and shared by the block's rows, so p must not
  // share a constraint with v.
  bool ConstrainedAlongP(int i) const;

  // PB rows per block along p, and what follows from them (blocks, the
  // last one shifted back).
  void SetRows(int64_t rows);
  // With the reductions ordered: a block of up to two rows over the budget
  // that divides p's range exactly, when the innermost reduction loop is
  // long enough (exact_rows_min_ .. exact_rows_max_, set by Plan).
  void TakeExactBlock();
  // The block one register larger than the budget needs an inner loop at
  // least this long to pay for the accumulator it spills around it.
  static constexpr int64_t kTightBlockMinInnerLoop = 16;
  // Reduction steps a chunk needs to pay for its accumulators' traffic
  // (PlanChunks).
  static constexpr int64_t kMinChunkSteps = 48;
  // Fewer rows of p than this share a chunk's panel too few times: grid
  // chunks are tried first (PlanChunks).
  static constexpr int64_t kFewSharedRows = 16;

  // Elementwise kernels writing far more than the caches hold store around
  // them, when every vector store is aligned to its size.
  bool StreamingStores() const;

  // The last p block reaches past p's range and is guarded row by row
  // (never when the block is shifted back instead: p_shift_).
  bool PTail() const { return p_ >= 0 && !p_shift_ && flat_.indices[p_].range % pb_ != 0; }
  // The last p block may start earlier and overlap its neighbour instead:
  // nothing the kernel writes is also read by it, so computing and storing
  // some rows twice (with the same values) is harmless.
  bool PShiftAllowed() const;
  // The last v block reaches past v's range (masked loads and stores).
  bool VTail() const { return VSpan() * (q_ >= 0 ? 1 : vblocks_) != flat_.indices[v_].range; }
  // Values of v one work item covers.
  int64_t VSpan() const { return q_ >= 0 ? w_ : int64_t{nv_} * w_; }
  // Offset of vector vv from the work item's first along v (0 along q).
  int64_t VOffset(int vv) const { return q_ >= 0 ? 0 : int64_t{vv} * w_; }
  // The slow path masks lanes (v's tail, constraints on v).
  bool Masked() const { return VTail() || v_constrained_; }

  // --- Reduction chunks (forms/vector_chunks.cc) -------------------------------

  // A work item whose vector inputs' panel over all reductions is larger
  // than L1 (every block re-reads it from L2) covers SB blocks of p instead
  // and walks the reduction in chunks that fit L1: for each chunk, each
  // block's accumulators are loaded from a private array, updated over the
  // chunk and stored back; the post-ops and stores follow the last chunk.
  void PlanChunks();
  // A reduction along an outer axis of a large input (a column sum): each
  // work item's vectors read short runs (VSpan elements) rows apart, which
  // the memory system serves at half the streaming rate. The work item
  // covers SB blocks of v instead, and walks the reduction in chunks of a
  // few rows, each row read over SB blocks (PlanChunks calls it; sets
  // chunk_v_).
  void PlanColumnChunks();
  bool Chunked() const { return sb_ > 1; }
  // Chunked with the SB blocks along p (PlanChunks), not v (PlanColumnChunks)
  // nor a grid index (TakeGridChunks).
  bool PChunked() const { return Chunked() && !chunk_v_ && chunk_g_ < 0; }
  // Grid chunks: one block covers p (a small image: 7x7 or 14x14 outputs),
  // or p's blocks hold few rows (kFewSharedRows), and the panel is larger
  // than L1: the SB blocks of a chunked work item are SB values of a grid
  // index g that no vector input moves along (the output rows x), so each
  // chunk of the panel is read from memory once per work item and from L1
  // by the other SB - 1 rows. Constraints on g (a "same" convolution's
  // padding along x) may mention only g, other grid indices and the chunk
  // loops' reductions: each is checked once per block and chunk
  // (BlockGuard), and a block it excludes is skipped. PlanChunks chooses
  // them (with the chunk levels set; nullopt: no g fits) and takes them
  // (sets chunk_g_, sb_ and what follows).
  struct GridChunks {
    int g = -1;
    int64_t sb = 0;  // values of g per work item
  };
  std::optional<GridChunks> ChooseGridChunks(int64_t block_bytes) const;
  void TakeGridChunks(GridChunks grid);
  bool GChunked() const { return Chunked() && chunk_g_ >= 0; }
  // Sets prefetch_ for the chunks planned (PlanChunks and TakeGridChunks
  // call it last).
  void PlanPrefetch();
  // "; the next chunk's D, K prefetched", or empty.
  std::string PrefetchText() const;
  // The index a chunk steps along: the split level's outer part, else the
  // innermost chunk loop.
  int ChunkIndex() const;
  // Steps of reduction level k inside a chunk (a split level: its inner part).
  int64_t ChunkLevelSteps(int k) const;
  // What one chunk of the work item reads of input a: its elements from the
  // first to the last (`span`, all strides positive: `forward`), and how
  // many it reads.
  struct Span {
    bool forward = true;
    int64_t span = 1, read = 1;
  };
  Span ChunkSpan(int a) const;
  // Elements of `dtype` in a cache line (the model's mem_width, as the
  // streaming-store rule reads it): what one prefetch fetches.
  int64_t LineElements(DataType dtype) const {
    return std::max<int64_t>(1, hw_.mem_width * 8 / lang::BitWidth(dtype));
  }
  // The grid's range of index i: g's groups of SB values, else its range.
  int64_t GridRange(int i) const { return i == chunk_g_ ? g_groups_ : flat_.indices[i].range; }
  // Launch dimension 0: p blocks, or groups of SB of them.
  int64_t PGroups() const { return PChunked() ? (pblocks_ + sb_ - 1) / sb_ : pblocks_; }
  // The launch dimension of v: v blocks, or groups of SB of them (chunk_v_).
  int64_t VGroups() const { return chunk_v_ ? (vblocks_ + sb_ - 1) / sb_ : vblocks_; }
  int VDim() const { return v_outer_ ? 2 : 1; }

  // --- Constant rows (border guards that fold) -------------------------------

  // Whether p's position is a constant wherever the reduction runs: one
  // block covers p, or one work item covers every block (chunked, the
  // blocks unrolled). A "same" convolution's border rows are then known
  // when the kernel is generated.
  bool ConstRows() const;
  // Sets unrolled_: with ConstRows, the short reductions that the row
  // guards test (the window offsets along p), so every guard is a constant
  // and only the valid rows' multiply-adds remain, as a JIT kernel peels
  // its border.
  void PlanUnrolledGuards();
  std::vector<bool> unrolled_;  // per reduction level

  const FlatAccess& PointAccess(const std::string& tensor) const {
    return compiler::PointAccess(spec_, tensor);
  }

  const KernelSpec& spec_;
  const FlatContraction& flat_;
  const lang::Program& program_;
  const HardwareModel& hw_;
  int64_t rows_ = 0;  // forced block rows, or 0
  int max_vectors_ = kMaxVectors;
  int64_t vectors_along_v_ = 1;  // whole vectors that cover v
  int64_t rows_budget_ = 0;      // the rows the registers hold (TakeExactBlock may take more)

  bool contraction_ = true;
  bool v_constrained_ = false;  // a constraint that is not deferred mentions v (lane masks)
  std::vector<bool> deferred_;  // per constraint: applied to the sums (PlanLaneConstraints)
  bool v_outer_ = false;        // launch dimension 2 walks the v blocks (else 1)
  bool vector_epilogue_ = true;
  bool streaming_ = false;  // non-temporal vector stores (StreamingStores)
  DataType dtype_ = DataType::F32;
  int v_ = -1, w_ = 1, nv_ = 1;
  int p_ = -1, pb_ = 1;
  bool p_shift_ = false;  // the last p block starts at range - PB (no p tail)
  // The unguarded reduction body loads every row's broadcast first and then
  // each vector once, used by all rows (HoldRowsFits; oneDNN's AVX2 order),
  // instead of loading the NV vectors first and each row's broadcast in turn.
  bool hold_rows_ = false;
  int64_t exact_rows_min_ = 0, exact_rows_max_ = 0;  // TakeExactBlock's candidates
  int q_ = -1;  // the vectors step along q, not v (PlanVectorsAlongQ)
  int64_t vblocks_ = 1, pblocks_ = 1, grid_items_ = 1;
  std::vector<int> grid_, reductions_;
  std::vector<int> bound_inner_;  // per constraint: the reduction whose loop it bounds, or -1
  std::vector<bool> vector_input_;

  // Reduction chunks (PlanChunks): SB > 1 blocks of p per work item; the
  // reduction levels [0, chunk_levels_) are loops around the blocks, and
  // with chunk_split_ > 0 level chunk_levels_ is split in two: its outer
  // part (range / chunk_split_ values) is a chunk loop too, its inner part
  // (chunk_split_ values) stays inside.
  int sb_ = 1;
  bool chunk_v_ = false;  // the SB blocks are along v (PlanColumnChunks), not p
  int chunk_levels_ = 0;
  int64_t chunk_split_ = 0;
  int64_t chunk_bytes_ = 0;  // vector-input bytes one chunk reads
  // Per input (a - 1): how the blocks of a chunk prefetch the next chunk's
  // elements (PlanPrefetch; VecEmitter::NextChunkPrefetches). Span: the
  // lines from its first element to its last, shared out over the blocks'
  // steps; Vectors: each step's vectors of the next chunk, one per block.
  enum class Prefetch : uint8_t { None, Span, Vectors };
  std::vector<Prefetch> prefetch_;
  int chunk_g_ = -1;         // the grid index the SB blocks walk (TakeGridChunks)
  int64_t g_groups_ = 0;     // groups of SB values of chunk_g_ on the grid
  std::vector<bool> block_guard_;  // per constraint: checked once per block (TakeGridChunks)
};

// Builds the kernel a VecPlan describes (forms/vector_emit.cc, and the
// chunked body in forms/vector_chunks.cc). The emission reads the decisions
// as its own members, from a copy: the plan stays as planned, and one plan
// can be emitted again.
class VecEmitter : private VecPlan {
 public:
  explicit VecEmitter(const VecPlan& plan) : VecPlan(plan) {}

  GeneratedKernel Emit();

 private:
  Type VecType() const { return Type::Scalar(dtype_, w_); }
  // The compared inputs of `+(A == B ? C)` keep their own type (A, B).
  bool ComparedInput(int a) const { return flat_.comb_op == lang::ast::CombOp::Cond && a <= 2; }
  Type InputVecType(int a) const {
    return ComparedInput(a) ? Type::Scalar(flat_.accesses[a].dtype, w_) : VecType();
  }
  static std::string AccName(int pp, int vv) { return fmt::format("acc_{}_{}", pp, vv); }
  Expr Acc(int pp, int vv) const { return sem::builder::_Var(AccName(pp, vv), VecType()); }
  Expr Identity() const;  // the aggregation's identity, a vector
  Expr I(int64_t v) const { return sem::builder::_Const(v); }
  Expr Pos(int i) const { return pos_[i]; }

  void DeclarePositions(std::vector<Stmt>& top);

  // `lane`: the index vector 0, 1, ..., W-1 that lane masks compare with
  // (built lane by lane: sem has no vector literal).
  void DeclareLanes(std::vector<Stmt>& top);
  Expr Lanes() const { return sem::builder::_Var("lane", Type::Index(w_)); }

  // The lanes of vector vv (of the current block) that lie inside v's range
  // (`tail`) and satisfy the constraints on v at the current position, none
  // of them, those checked in the reduction (not deferred) or all; null
  // when every lane does by construction.
  enum class LaneConstraints : uint8_t { None, Checked, All };
  Expr LaneMask(int vv, bool tail, LaneConstraints which) const;
  // The deferred constraints (PlanLaneConstraints) applied to the
  // accumulators: the lanes they exclude reset to the identity.
  Stmt ResetExcludedLanes() const;

  // Element offset of access `a` at the current position, p moved by pp, v
  // by `dv` elements and q by vv (vectors along q).
  Expr Address(const FlatAccess& a, int pp, int64_t dv, int vv) const;

  Expr Buffer(const std::string& tensor) const { return BufferOf(spec_, params_, tensor); }

  // Constraint `c` holds on the whole block: every value of the reductions
  // not looped over yet (pos_ null), PB values of p, the block's lanes.
  Expr HoldsOnBlock(const FlatConstraint& c) const;
  // Every constraint holds on the whole block (all reduction values, PB
  // values of p), and the block has no tail.
  Expr FastCondition() const;
  // The constraints that bound loops at levels >= `first` hold over their
  // reductions' whole ranges at this work item's position (an interior row
  // of a padded convolution); null if no such loop is bounded.
  Expr BoundsInterior(int first) const;

  // Constraints not on v (and p's tail) at the current point, for block row
  // pp; the ones on v are lane masks.
  Expr PointValid(int pp) const;

  // Input a's value for block row pp and vector vv. `clamp`: the point may
  // be invalid, so keep the address inside the buffer (the value is unused).
  // Vector loads take the lane mask of vv when the slow path has them (the
  // masked-off lanes are not read, so need no clamp).
  Expr LoadInput(int a, int pp, int vv, bool clamp);

  // The block's accumulators, each declared with the aggregation's identity.
  void DeclareAccumulators(std::vector<Stmt>& top) const;

  // The accumulator update of block row pp, vector vv, reading input a's
  // value for vector v as value(a, v).
  Stmt Update(int pp, int vv, const std::function<Expr(int, int)>& value) const;
  // The unguarded innermost body with the rows' broadcasts held (hold_rows_):
  // `body` (the prefetches), every row's broadcast, then per vector its
  // load and the rows' multiply-adds.
  Stmt HeldRowsBody(std::vector<Stmt> body);

  // The reduction at levels [first, last]: the fast path where the whole
  // block satisfies every checked constraint (FastCondition), else the
  // slow one; only one of them where the other cannot be needed.
  Stmt Reduce(int first);

  // The loop nest over the reductions at levels [first, last] with the
  // accumulator updates (the levels before `first` are chunk loops around
  // it: their positions are set).
  // `whole_ranges`: every loop over its whole range (BoundsInterior holds).
  Stmt Compute(bool checks, int first = 0, bool whole_ranges = false);

  // `inner` in the reduction loops at levels [from, to] (constraints that
  // bound a level's loop bound it); at a split level (chunk_split_) the
  // loop runs over the inner part only. `no_unroll_last`: the innermost
  // level is not unrolled (see Compute). `whole_ranges`: no constraint
  // bounds a loop (BoundsInterior holds).
  Stmt ReductionLoops(int from, int to, Stmt inner, bool no_unroll_last, bool whole_ranges);
  // Levels [from, to]: each a loop (ReductionLoops), or, where unrolled_
  // says so, one copy of what is inside per value of its reduction with
  // the position a constant. `inner` builds the innermost part at the
  // current positions.
  Stmt LoopsOrCopies(int from, int to, const std::function<Stmt()>& inner, bool no_unroll_last,
                     bool whole_ranges);

  // The constraints checked once per block (block_guard_) at the current
  // positions; null when there are none.
  Expr BlockGuard() const;
  // The body of a chunked work item (instead of the accumulators, Compute
  // and Epilogues of Emit).
  void EmitChunked(std::vector<Stmt>& top);
  // Sets p's position to block s of the work item (a Stmt assigning it).
  Stmt SetBlock(Expr s) const;
  // In the innermost reduction body of block prefetch_block_, at the current
  // positions: prefetches of this step's share of the lines the work item
  // reads in its next chunk, so that the next chunk's first block finds
  // them in L1 rather than waiting on L2 (bench/grad W1 conv3x3 K).
  std::vector<Stmt> NextChunkPrefetches();
  // Post-ops and stores of the block: whole vectors, or masked in the
  // block with v's tail (or, storing reached elements only, where the block
  // is not wholly valid).
  Stmt Stores();

  // Post-ops and stores of every block row; `masked`: the block with v's
  // tail (its lanes past the range are neither read nor written), or one
  // not wholly valid when storing reached elements only (StoreValid).
  Stmt Epilogues(bool masked);

  // With store_reached_only: the constraints on output indices at block row
  // pp and vector vv, lane dv of it (dv < 0: the constraints not on v);
  // null when there are none.
  Expr StoreValid(int pp, int vv, int64_t dv) const;

  // Post-ops and stores of block row pp; `tails`: per vector, the lanes in
  // v's range (empty: all).
  Stmt Epilogue(int pp, const std::vector<Expr>& tails);

  std::vector<std::string> names_;
  std::vector<Expr> params_;
  std::vector<Expr> pos_;  // current value of each index (null: not in scope)
  std::vector<Expr> masks_;  // per vector: its lane mask in the slow path (empty: none)
  int64_t chunk_inner_ = 0;  // steps of the split level's inner loop being emitted (EmitChunked)
  // While EmitChunked emits a block's reduction: the block's number in the
  // work item (the innermost bodies then start with NextChunkPrefetches).
  Expr prefetch_block_;
};

// The register block for VectorForm: the most vectors per work
// item along v and the rows (0: planned), the widest block unless an exact
// one loads less per multiply-add (forms/vector.cc). `rows`: forced block
// rows, or 0.
struct VectorBlock {
  int vectors = kMaxVectors;
  int64_t rows = 0;
};
VectorBlock ChooseVectorBlock(const KernelSpec& spec, const lang::Program& program, const HardwareModel& hw,
                              int64_t rows);

}  // namespace tilec::compiler::vector_form
