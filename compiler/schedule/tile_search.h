// SearchTiles: choose tile sizes for a flat contraction. The pipeline's
// "tiles" stage (docs/architecture.md, "The pipeline").
//
// Candidates are scored by the cost model (schedule/cost_model.h). The default search
// is PlaidML's (TileOptimize in tile_opt.cc): best-first from the all-ones tile,
// expanding the best unexpanded candidate by doubling each index in turn
// (min(2*t, range)); candidates with a score <= 0 are not expanded. Every
// tile it can reach has per-index sizes that are powers of two below the
// range, or the full range; Exhaustive mode scores every such tile (for
// tests and small problems).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/schedule/cost_model.h"
#include "compiler/ir/flat.h"
#include "compiler/schedule/hardware_model.h"

namespace tilec::compiler {

struct TileSearchOptions {
  enum class Mode : uint8_t {
    BestFirst,   // PlaidML's doubling search
    Exhaustive,  // every power-of-two-or-full-range tile
  };
  Mode mode = Mode::BestFirst;
  // BestFirst: stop as soon as the best unexpanded candidate scores below the
  // most recently computed score (PlaidML's `fast`, used when one tile is
  // wanted). False: expand every candidate with a positive score.
  bool fast = true;
  // If set, score only this tile (one entry per index, 1 <= t <= range;
  // otherwise UserError).
  std::optional<std::vector<int64_t>> forced_tile;
  // Record the per-candidate log (the seed's super-verbose format).
  bool keep_log = true;
  // BestFirst: score at most this many candidates, then keep the best found
  // (the log says so). PlaidML's early stop scores ~500 for the seed's conv;
  // contractions with a dozen indices would score 10^5 without the limit.
  int64_t max_scored = 4096;
  // Exhaustive: UserError if the candidate space is larger than this.
  int64_t max_candidates = int64_t{1} << 22;
};

struct TileCandidate {
  std::vector<int64_t> tile;
  TileStats stats;
  TileScore score;
};

struct TileSearchResult {
  // Every candidate scored, best first: by decreasing score; among equal
  // scores the later-scored first (PlaidML takes the last best it inserted).
  // Never empty. A best score < 0 means no candidate fits the local-memory
  // and register limits (the best is still usable, only slower).
  std::vector<TileCandidate> ranked;
  // Per candidate, in scoring order:
  //   Computing cost for tile size: [8, 32, 1, 3, 16, 8, 2]
  //   Compute score: to=... wg=... il=... sm=... or=... mr=... mw=... op=... rp=... tu=...
  //   over memory | over regs | flops_per_byte=... occupancy=...
  //                             roof_ratio=... occ_ratio=... thread_ratio=... score=...
  // then "Final tile: [...]" and "Final score: ...". Empty unless keep_log.
  std::string log;

  const TileCandidate& best() const { return ranked.front(); }
};

// Pre: Verify(flat) holds.
// Post: see TileSearchResult. Deterministic. UserError for an invalid
// hardware model (HardwareModel::Validate), an invalid forced tile, a too
// large exhaustive space, or figures overflowing 64 bits.
TileSearchResult SearchTiles(const FlatContraction& flat, const HardwareModel& hw,
                             const TileSearchOptions& options = {});

// "[ci: 8, co: 32, i: 2, j: 3, n: 16, x: 2, y: 2]", as the seed names a tile.
std::string TileText(const FlatContraction& flat, const std::vector<int64_t>& tile);

}  // namespace tilec::compiler
