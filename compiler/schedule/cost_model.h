// The cost model: figures of one tile choice, and their score against a
// hardware model. Pure functions; the model of PlaidML's tile_opt.cc,
// reproducing the seed's log figures exactly.
//
// A tile gives each index a tile size 1 <= tile[i] <= range[i]. A work group
// computes one tile of the output indices (indices with a nonzero output
// stride) and loops over the tiles of the other (reduction) indices; each
// loop iteration stages one tile of every input in local memory (schedule/read_plan.h)
// and accumulates into per-thread registers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/flat.h"
#include "compiler/schedule/hardware_model.h"

namespace tilec::compiler {

struct TileStats {
  int64_t true_ops = 0;      // to: iterations * (#post-ops + 2 if a contraction)
  int64_t work_groups = 0;   // wg: product over output indices of ceil(range / tile)
  int64_t inner_loops = 0;   // il: reduction tiles per work group
  int64_t shared_mem = 0;    // sm: local-memory bytes (input tiles + tree-reduction scratch)
  int64_t out_regs = 0;      // or: accumulator bytes per work group
  int64_t mem_read = 0;      // mr: global bytes read per inner loop (cache lines)
  int64_t mem_write = 0;     // mw: global bytes written per work group (cache lines)
  int64_t operations = 0;    // op: min(threads, product of all tiles)
  int64_t rollups = 0;       // rp: doublings of the output tile needed to reach op
  int64_t threads_used = 0;  // tu: max(op, product of output threads)
  bool operator==(const TileStats&) const = default;
};

struct TileScore {
  bool over_memory = false;  // shared_mem > max_mem
  bool over_regs = false;    // out_regs > max_regs (checked only if not over memory)
  double flops_per_byte = 0;
  double occupancy = 0;  // min(wg, goal_groups)
  double roof_ratio = 0;
  double occ_ratio = 0;
  double thread_ratio = 0;
  double score = -1;  // in (0, 1], or -1 when over a limit
};

// Pre: tile has one entry per index, 1 <= tile[i] <= range[i]; Verify(flat).
// Post: the figures of the seed's "Compute score:" line. Throws UserError if
// a figure overflows 64 bits (contractions beyond 2^63 iterations).
TileStats ComputeTileStats(const FlatContraction& flat, const std::vector<int64_t>& tile,
                           const HardwareModel& hw);

// PlaidML's score: -1 over local memory or registers; otherwise
// roof_ratio * occ_ratio * thread_ratio where roof_ratio = min(fpb, goal)/goal
// for fpb = true_ops / (wg * (il * mr + mw)), occ_ratio = min(wg, goal_groups)
// / goal_groups, thread_ratio = tu / threads.
TileScore ComputeScore(const TileStats& stats, const HardwareModel& hw);

// Threads per index of the output tile (0 for non-output indices): the
// lowest-|stride| output index gets NearestPo2(min(mem_width elements,
// threads, tile)) threads for coalesced stores, then threads are doubled one
// index at a time (preferring tiles that stay evenly divided, then the least
// threaded) until all threads are used or every tile is fully threaded.
// PlaidML's OutPlan; the thread plan reuses it.
std::vector<int64_t> AssignOutputThreads(const FlatContraction& flat,
                                         const std::vector<int64_t>& tile, const HardwareModel& hw);

// A whole kernel's estimated time on `hw`, a roofline: the larger of
//   compute_s = points * ops per point / (peak_gflops * lane_use)
//   memory_s  = compulsory bytes (every buffer the kernel touches, once,
//               padding included) / mem_bandwidth_gbs
// where points is the product of the flat index ranges (the padding of a
// blocked layout is computed too) and ops per point is 2 for a contraction
// plus one per post-op. lane_use models the CPU vector form (forms/vector.cc;
// hw.vec_size > 1 and no managed local memory; else 1): the vectors run
// along the output's stride-1 index, so lane_use = range / (range rounded up
// to whole vectors, with the vector form's choice of narrower vectors at
// their rate, HardwareModel::half_vector_rate) — 0.5 for nChw8c's c%8 on 16
// lanes (1 on Zen 4, where 8-lane vectors run at full rate), 0.875 for W = 56 —
// 1/lanes without a stride-1 output index or with an input that moves
// along it with a stride other than 0 or 1 (no vector form then), unless
// that input is small weights that Lower copies for the vectors.
// The estimate compares one kernel's forms (layouts) and the relayout
// copies between them (compiler/passes/choose_layouts.h); it is not a prediction
// of measured time.
// The CPU vector form's vectors along a run of `range` elements, at most
// `max_lanes` (a power of two, 2 to 16) wide: the fewest vectors that cover
// the run; among equals an exact fit (no masked tail), then the widest.
// forms/vector.cc generates them, EstimateTime models them.
struct VectorLanes {
  int64_t lanes = 2;
  int64_t vectors = 0;
};
VectorLanes ChooseVectorLanes(int64_t range, int64_t max_lanes);

struct TimeEstimate {
  double compute_s = 0;
  double memory_s = 0;
  double lane_use = 1;
  double seconds() const { return compute_s > memory_s ? compute_s : memory_s; }
};
TimeEstimate EstimateTime(const FlatContraction& flat, const HardwareModel& hw);

// "to=236760072192 wg=12544 il=24 sm=20656 or=32768 mr=19456 mw=32768 op=256 rp=0 tu=256"
std::string ToString(const TileStats& stats);

// "over memory\n", "over regs\n", or
// "flops_per_byte=20.5714 occupancy=20\nroof_ratio=1 occ_ratio=1 thread_ratio=1 score=1\n"
// (floats with 6 significant digits, like C++ ostream's default).
std::string ToString(const TileScore& score);

}  // namespace tilec::compiler
