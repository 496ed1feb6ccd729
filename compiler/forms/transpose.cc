// TransposeForm (forms/form.h): the CPU form of a copy that moves the contiguous
// axis (B[j, i] = =(A[i, j]), NCHW <-> NHWC, a swap of the two inner axes).
//
// The vector form needs an output index that moves by 1 through the input
// too; a transpose has none, and the flat form reads or writes one side with
// a large stride (on bench/suite transpose 2048x2048 each stride of 8 KB maps
// to the same cache sets, far below the copy's bandwidth). This form copies
// W x W tiles through registers:
//
//   * o: the output index with stride 1 in the output; n: the index with
//     stride 1 in the input; each merged with the indices that continue it
//     in both tensors (h of NCHW with w: stride W in the input, W*C in the
//     output), so a 56 x 56 image is one run of 3136;
//   * W x W tiles (W lanes: 16 f32 with AVX-512), up to 8 x 8 of them per
//     work item (PlanTileBlocks), each: W vector loads along n (one per
//     value of o), the transpose in registers (log2(W) stages of two-source
//     shuffles, see Tile), W vector stores along o; both sides read and
//     write whole cache lines, and lines that unaligned rows share between
//     tiles are completed within the work item;
//   * the tiles at the end of o or n (ranges that W does not divide) take a
//     slow path with masked loads and stores, rows past the range skipped;
//   * every other index is one value per work item (the launch grid: tiles
//     along n fastest, so a core's consecutive tiles read on along the same
//     W input rows; then o, then the rest: faster than o fastest on
//     bench/suite transpose 2048x2048 and nchw>nhwc 8x64x56x56).
//
// Plain copies only: `=` without reductions, constraints, padding or
// post-ops, or an elementwise identity `R = D` (a relayout between layouts),
// the input of the output's type; anything else keeps the flat form.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <numeric>

#include "compiler/forms/common.h"
#include "compiler/sem/builder.h"
#include "support/error.h"

namespace tilec::compiler {
namespace {

using lang::DataType;
using namespace sem::builder;
using sem::Expr;
using sem::Stmt;
using sem::Type;

// The transpose form's decisions (FormPlan::state): Plan makes them,
// nothing changes them after.
class TransposePlan : public FormState {
 public:
  TransposePlan(const KernelSpec& spec, const lang::Program& program, const HardwareModel& hw)
      : spec_(spec), flat_(spec.flat), program_(program), hw_(hw) {}

  // false: the kernel does not fit the form.
  bool Plan() {
    if (!IsCopy()) return false;
    dtype_ = flat_.agg_type;
    if (dtype_ == DataType::Bool || dtype_ == DataType::F16 || flat_.accesses[1].dtype != dtype_) return false;
    const FlatAccess& out = flat_.output();
    const FlatAccess& in = flat_.accesses[1];
    for (int i = 0; i < flat_.num_indices(); ++i) {
      if (out.strides[i] == 0) return false;  // a reduction: not a copy
      if (out.strides[i] == 1 && flat_.indices[i].range >= 2) o_ = i;
      if (in.strides[i] == 1 && flat_.indices[i].range >= 2) n_ = i;
    }
    if (o_ < 0 || n_ < 0 || o_ == n_) return false;
    w_ = std::clamp<int64_t>(hw_.vec_size * 32 / lang::BitWidth(dtype_), 2, 16);
    // Merge the indices that continue o (or n) in both tensors.
    std::vector<bool> used(flat_.num_indices(), false);
    used[o_] = used[n_] = true;
    auto grow = [&](int base, std::vector<int>& run, int64_t& range) {
      run = {base};
      range = flat_.indices[base].range;
      for (bool grew = true; grew;) {
        grew = false;
        for (int i = 0; i < flat_.num_indices(); ++i) {
          if (used[i] || out.strides[i] != out.strides[base] * range ||
              in.strides[i] != in.strides[base] * range)
            continue;
          used[i] = true;
          run.push_back(i);
          range = CheckedMul(range, flat_.indices[i].range, "a transpose run");
          grew = true;
        }
      }
    };
    grow(o_, run_o_, range_o_);
    grow(n_, run_n_, range_n_);
    grid_items_ = 1;
    for (int i = 0; i < flat_.num_indices(); ++i) {
      if (used[i]) continue;
      grid_.push_back(i);
      grid_items_ = CheckedMul(grid_items_, flat_.indices[i].range, "the launch size");
    }
    std::stable_sort(grid_.begin(), grid_.end(), [&](int a, int b) {
      return std::abs(out.strides[a]) < std::abs(out.strides[b]);
    });
    streaming_ = StreamingStores();
    PlanTileBlocks();
    return true;
  }

  std::string PlanText() const {
    auto names = [&](const std::vector<int>& v) {
      std::vector<std::string> s;
      for (int i : v) s.push_back(flat_.indices[i].name);
      return s.empty() ? std::string("-") : fmt::format("{}", fmt::join(s, "*"));
    };
    std::string s = fmt::format(
        "Transpose form: {} x {} tiles of {} through registers, output along {} ({} values), input "
        "along {} ({} values){}{}{}\n",
        w_, w_, sem::ScalarName(dtype_), names(run_o_), range_o_, names(run_n_), range_n_,
        Tails() ? ", masked tails" : "", streaming_ ? ", streaming stores" : "",
        aliasing_ ? ", output rows that alias in the cache" : "");
    auto tiles = [](int64_t t, const std::string& name) {
      return t == 1 ? name + " tile" : fmt::format("{} {} tiles", t, name);
    };
    s += fmt::format("Grid: {} x {} x {} work items (one per {}, {}, {})\n", GroupsN(), GroupsO(), grid_items_,
                     tiles(tn_, names(run_n_)),
                     tiles(to_, names(run_o_)), grid_.empty() ? std::string("-") : names(grid_));
    return s;
  }

 protected:
  // A tile at the end of o or n is partial (masked loads and stores).
  bool Tails() const { return range_o_ % w_ != 0 || range_n_ % w_ != 0; }
  static int64_t Ceil(int64_t a, int64_t b) { return (a + b - 1) / b; }
  // Launch dimensions 0 and 1: groups of TN tiles along n, of TO along o.
  int64_t GroupsN() const { return Ceil(Ceil(range_n_, w_), tn_); }
  int64_t GroupsO() const { return Ceil(Ceil(range_o_, w_), to_); }

  const KernelSpec& spec_;
  const FlatContraction& flat_;
  const lang::Program& program_;
  const HardwareModel& hw_;

  DataType dtype_ = DataType::F32;
  int o_ = -1, n_ = -1;
  int64_t w_ = 16;
  bool streaming_ = false;
  int64_t to_ = 1, tn_ = 1;  // tiles per work item along o and n
  bool aliasing_ = false;    // the output's rows alias: columns of tiles (PlanTileBlocks)
  std::vector<int> run_o_, run_n_, grid_;
  int64_t range_o_ = 1, range_n_ = 1, grid_items_ = 1;

 private:
  // A copy: the contraction `=` of one input, or an elementwise kernel
  // whose one operation is the identity of one tensor (`R = D` with R in
  // another layout: the relayouts that layout choice inserts).
  bool IsCopy() const {
    if (spec_.store_reached_only || !flat_.constraints.empty() || !flat_.padding.empty()) return false;
    if (spec_.kind == KernelKind::Contraction && flat_.generate_contraction)
      return flat_.agg_op == lang::ast::AggOp::Assign && flat_.comb_op == lang::ast::CombOp::None &&
             flat_.post_ops.empty() && flat_.num_inputs == 1;
    if (spec_.kind != KernelKind::Elementwise || flat_.generate_contraction || flat_.num_inputs != 0 ||
        flat_.post_ops.size() != 1 || flat_.accesses.size() != 2 || flat_.kernel_outputs.size() != 1)
      return false;
    const lang::ElementwiseOp& op = flat_.post_ops[0];
    return op.fn == lang::ElemFn::Ident && op.operands.size() == 1 && op.operands[0].is_tensor &&
           op.operands[0].tensor == flat_.accesses[1].tensor && op.output == flat_.output().tensor &&
           op.compute_type == flat_.agg_type;
  }

  // TO x TN tiles per work item, up to 8 x 8 (128 x 128 f32: 64 KB each
  // way), fewer where the grid would keep less than 4 work items per core.
  // A tile's rows are W vectors of W lanes: where the rows of a tensor are
  // not aligned to vectors, every vector spans two cache lines, and the
  // tile next to it along the row completes those lines: within the work
  // item, while they are in L1, instead of a whole row of tiles later (the
  // lines read or written twice from memory). This pays most on rows that
  // are not aligned (a 2047 x 2047 transpose) and still on bench/suite
  // transpose 2048x2048; bench/HISTORY.md has the figures.
  //
  // Where the output's rows alias (RowsAlias: W rows a power-of-two stride
  // apart land on fewer than W offsets within a 4 KB page, so on the same
  // few cache sets), the W lines a tile writes evict each other before
  // they are whole; instead a work item takes a column of up to 32 tiles
  // along o and one along n: it writes W output rows from start to end
  // (sequential streams) and reads one line from each of up to 512 input
  // rows, and the next work item reads on along the same input rows. The
  // cases that gain are bench/suite transpose 2048x2048 and permute 021
  // 64x256x256 (output rows 8 KB and 1 KB apart). Input rows that alias
  // alone (2050 x 2048, the input's rows 8 KB apart) gain nothing and lose
  // as columns of tiles, so they keep the square blocks.
  void PlanTileBlocks() {
    aliasing_ = RowsAlias(flat_.output().strides[n_]);
    to_ = std::min<int64_t>(aliasing_ ? 32 : 8, Ceil(range_o_, w_));
    // Where o has fewer than 8 tiles, n keeps up to 8 (a column that short
    // would leave work items of a tile or two).
    tn_ = std::min<int64_t>(aliasing_ && to_ >= 8 ? 1 : 8, Ceil(range_n_, w_));
    int64_t want = 4 * std::max<int64_t>(hw_.compute_units, 1);
    auto items = [&] { return SaturatingMul(GroupsO() * GroupsN(), grid_items_); };
    while (to_ * tn_ > 1 && items() < want) {
      int64_t& larger = to_ >= tn_ ? to_ : tn_;
      larger /= 2;
    }
  }

  // W rows `stride` elements apart fall on fewer than W offsets within a
  // 4 KB page (the L1 set index uses the address bits below 4 KB): 2048
  // f32 (8 KB) puts all 16 on one offset, 512 f32 (2 KB) on two, 256 f32
  // on four; 2064 f32 or 3136 f32 spread them over 16.
  bool RowsAlias(int64_t stride) const {
    constexpr int64_t kPage = 4096;
    int64_t bytes = SaturatingMul(std::abs(stride), lang::BitWidth(dtype_) / 8);
    return kPage / std::gcd(bytes % kPage, kPage) < w_;
  }

  // Whole tiles store whole aligned vectors; where the result is far larger
  // than the caches (StreamingStoresPay, at kCopyStreamingFactor for a
  // result), they are streaming stores that skip reading each line before
  // writing it.
  bool StreamingStores() const {
    const FlatAccess& out = flat_.output();
    if (out.offset % w_ != 0) return false;
    for (int i = 0; i < flat_.num_indices(); ++i)
      if (i != o_ && out.strides[i] % w_ != 0) return false;
    int64_t bytes = SaturatingMul(out.limit, lang::BitWidth(dtype_) / 8);
    bool temporary = program_.Tensor(out.tensor).role == lang::TensorRole::Temporary;
    // A tile's output rows are W lanes each.
    return StreamingStoresPay(spec_, program_, hw_, bytes,
                              temporary ? kTemporaryStreamingFactor : kCopyStreamingFactor,
                              w_ * lang::BitWidth(dtype_) / 8);
  }
};

// Builds the kernel a TransposePlan describes. The emission reads the
// decisions as its own members, from a copy: the plan stays as planned,
// and one plan can be emitted again.
class TransposeEmitter : private TransposePlan {
 public:
  explicit TransposeEmitter(const TransposePlan& plan) : TransposePlan(plan) {}

  GeneratedKernel Emit() {
    names_ = IndexNames(flat_);
    std::vector<Stmt> top;
    GeneratedKernel out = StartCpuKernel(spec_, program_, params_, top);
    pos_.assign(flat_.num_indices(), nullptr);
    auto declare = [&](int i, Expr value) {
      std::string name = names_[i] + "_0";
      top.push_back(_Declare(Type::Index(), name, value));
      pos_[i] = _Var(name, Type::Index());
    };
    declare(o_, _Index(sem::ThreadIndexKind::GroupId, 1) * (w_ * to_));
    declare(n_, _Index(sem::ThreadIndexKind::GroupId, 0) * (w_ * tn_));
    DeclareGridPositions(flat_, names_, grid_, _Index(sem::ThreadIndexKind::GroupId, 2), top, pos_);
    bool tail = Tails();
    // TO x TN tiles per work item (PlanTileBlocks), n fastest; the ones
    // past the ranges skipped.
    Expr o0 = pos_[o_], n0 = pos_[n_];
    bool blocked = to_ * tn_ > 1;
    if (blocked) {
      pos_[o_] = o0 + _Var("t_o", Type::Index()) * w_;
      pos_[n_] = n0 + _Var("t_n", Type::Index()) * w_;
    }
    Stmt tile = !tail ? Tile(false)
                      : _If(_LogicalAnd(pos_[o_] + w_ <= I(range_o_), pos_[n_] + w_ <= I(range_n_)),
                            Tile(false), Tile(true));
    if (blocked) {
      tile = _If(_LogicalAnd(pos_[o_] < I(range_o_), pos_[n_] < I(range_n_)), tile);
      tile = _For("t_o", 0, to_, 1, _For("t_n", 0, tn_, 1, tile));
      pos_[o_] = o0;
      pos_[n_] = n0;
    }
    top.push_back(tile);
    return EndCpuKernel(std::move(out), std::move(top), {GroupsN(), GroupsO(), grid_items_});
  }

 private:
  Type VecType() const { return Type::Scalar(dtype_, static_cast<int>(w_)); }
  Expr I(int64_t v) const { return _Const(v); }

  // Element offset of access `a` at the tile's corner moved by (do, dn).
  Expr Address(const FlatAccess& a, int64_t d_o, int64_t d_n) const {
    Expr e = I(a.offset + a.strides[o_] * d_o + a.strides[n_] * d_n);
    for (int i = 0; i < flat_.num_indices(); ++i)
      if (pos_[i]) e = e + pos_[i] * a.strides[i];
    return e;
  }

  // The lanes below `count` (a runtime count); `lane` is 0, 1, ..., W-1.
  Expr FirstLanes(Expr count) const {
    return _Var("lane", Type::Index(static_cast<int>(w_))) < _Broadcast(count, static_cast<int>(w_));
  }

  // One W x W tile; `masked`: at the end of o or n.
  Stmt Tile(bool masked) {
    const FlatAccess& out = flat_.output();
    const FlatAccess& in = flat_.accesses[1];
    Expr in_buf = BufferOf(spec_, params_, in.tensor);
    Expr out_buf = BufferOf(spec_, params_, out.tensor);
    int w = static_cast<int>(w_);
    std::vector<Stmt> s;
    Expr mask_n, mask_o;
    if (masked) {
      Expr lane = _Var("lane", Type::Index(w));
      s.push_back(_Declare(Type::Index(w), "lane", _Broadcast(I(0), w)));
      for (int k = 1; k < w; ++k) s.push_back(_Assign(lane, _Insert(lane, k, I(k))));
      s.push_back(_Declare(Type::Bool(w), "mask_n", FirstLanes(I(range_n_) - pos_[n_])));
      s.push_back(_Declare(Type::Bool(w), "mask_o", FirstLanes(I(range_o_) - pos_[o_])));
      mask_n = _Var("mask_n", Type::Bool(w));
      mask_o = _Var("mask_o", Type::Bool(w));
    }
    // Rows: W vectors along n, one per value of o.
    std::vector<Expr> rows;
    for (int a = 0; a < w; ++a) {
      std::string name = fmt::format("row_{}", a);
      Expr load = _Load(in_buf, Address(in, a, 0), w, mask_n);
      if (!masked) {
        s.push_back(_Declare(VecType(), name, load));
      } else {
        s.push_back(_Declare(VecType(), name, _Broadcast(_LimitConst(sem::LimitKind::Zero, Type::Scalar(dtype_)), w)));
        s.push_back(_If(pos_[o_] + a < I(range_o_), _Assign(_Var(name, VecType()), load)));
      }
      rows.push_back(_Var(name, VecType()));
    }
    // The transpose, as x86 does it in registers (and LLVM keeps: a network
    // of one-shuffle-per-lane stages was re-combined into ~160 vpermt2ps,
    // all cross-lane, where this network needs 64 shuffles for a 16 x 16
    // f32 tile, half of them in-lane; it ran several times slower, per
    // bench/HISTORY.md). B: the lanes of one 128-bit block. First log2(B)
    // stages within blocks (unpcklps/unpckhps, then unpcklpd/unpckhpd for
    // f32), pairing rows g apart; then log2(W/B) stages of whole blocks
    // (vshuff32x4: the even blocks of two rows, then the odd ones), pairing
    // rows D apart. Each result vector then holds one column of the tile
    // with its rows in order; `cols` tracks which (element r*W+c per lane).
    int block = std::min(w, 128 / lang::BitWidth(dtype_));
    std::vector<std::vector<int>> cols(w);
    for (int r = 0; r < w; ++r)
      for (int c = 0; c < w; ++c) cols[r].push_back(r * w + c);
    int stage = 0;
    auto pair_stage = [&](int dist, auto&& lanes_of) {
      std::vector<Expr> next(w);
      std::vector<std::vector<int>> next_cols(w);
      for (int r = 0; r < w; ++r) {
        if (r & dist) continue;
        for (int half = 0; half < 2; ++half) {
          std::vector<int> lanes = lanes_of(half);
          std::string name = fmt::format("t{}_{}", stage, r + half * dist);
          s.push_back(_Declare(VecType(), name, _Shuffle(rows[r], rows[r + dist], lanes)));
          next[r + half * dist] = _Var(name, VecType());
          for (int lane : lanes)
            next_cols[r + half * dist].push_back(lane < w ? cols[r][lane] : cols[r + dist][lane - w]);
        }
      }
      rows = std::move(next);
      cols = std::move(next_cols);
      ++stage;
    };
    for (int g = 1; g < block; g *= 2)
      pair_stage(g, [&](int half) {  // chunks of g lanes from each block's low (high) half
        std::vector<int> lanes;
        for (int b0 = 0; b0 < w; b0 += block)
          for (int j = half * block / (2 * g); j < (half + 1) * block / (2 * g); ++j)
            for (int src = 0; src < 2; ++src)
              for (int k = 0; k < g; ++k) lanes.push_back(src * w + b0 + j * g + k);
        return lanes;
      });
    for (int d = block; d < w; d *= 2)
      pair_stage(d, [&](int half) {  // the even (odd) blocks of both rows
        std::vector<int> lanes;
        for (int src = 0; src < 2; ++src)
          for (int b0 = half * block; b0 < w; b0 += 2 * block)
            for (int k = 0; k < block; ++k) lanes.push_back(src * w + b0 + k);
        return lanes;
      });
    // column_of[b]: the vector that holds column b, rows 0..W-1 in its lanes.
    std::vector<Expr> column(w);
    for (int v = 0; v < w; ++v) {
      int c = cols[v][0] % w;
      for (int lane = 0; lane < w; ++lane)
        TILEC_CHECK(cols[v][lane] == lane * w + c, "transpose form: vector {} lane {} holds {}", v,
                    lane, cols[v][lane]);
      column[c] = rows[v];
    }
    rows = std::move(column);
    // Row b now holds lane b of every loaded row: stored along o.
    for (int b = 0; b < w; ++b) {
      Stmt store = _Store(out_buf, Address(out, 0, b), rows[b], !masked && streaming_, mask_o);
      s.push_back(masked ? _If(pos_[n_] + b < I(range_n_), store) : store);
    }
    return _Block(std::move(s));
  }

  std::vector<std::string> names_;
  std::vector<Expr> params_;
  std::vector<Expr> pos_;
};

}  // namespace

// Plan decides (TransposePlan), Emit builds (TransposeEmitter).
const FormImpl& TransposeForm() {
  static const PlannedCpuForm<Form::Transpose, TransposePlan, TransposeEmitter> form;
  return form;
}

}  // namespace tilec::compiler
