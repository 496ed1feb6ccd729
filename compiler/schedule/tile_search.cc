#include "compiler/schedule/tile_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "support/error.h"

namespace tilec::compiler {
namespace {

using Tile = std::vector<int64_t>;

// Scores tiles once each, remembering them in scoring order.
class Scorer {
 public:
  Scorer(const FlatContraction& flat, const HardwareModel& hw, bool keep_log)
      : flat_(flat), hw_(hw), keep_log_(keep_log) {}

  double Score(const Tile& tile) {
    TileCandidate c;
    c.tile = tile;
    c.stats = ComputeTileStats(flat_, tile, hw_);
    c.score = ComputeScore(c.stats, hw_);
    if (keep_log_) {
      log_ += fmt::format("Computing cost for tile size: [{}]\nCompute score: {}\n",
                          fmt::join(tile, ", "), ToString(c.stats));
      log_ += ToString(c.score);
    }
    double s = c.score.score;
    seen_.emplace(tile, s);
    scored_.push_back(std::move(c));
    return s;
  }

  bool Seen(const Tile& tile) const { return seen_.count(tile) != 0; }
  size_t scored() const { return scored_.size(); }
  void Note(const std::string& line) {
    if (keep_log_) log_ += line;
  }

  TileSearchResult Finish() {
    TileSearchResult r;
    std::vector<size_t> order(scored_.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (scored_[a].score.score != scored_[b].score.score)
        return scored_[a].score.score > scored_[b].score.score;
      return a > b;
    });
    for (size_t k : order) r.ranked.push_back(std::move(scored_[k]));
    if (keep_log_) {
      log_ += fmt::format("Final tile: [{}]\nFinal score: {:g}\n", fmt::join(r.best().tile, ", "),
                          r.best().score.score);
    }
    r.log = std::move(log_);
    return r;
  }

 private:
  const FlatContraction& flat_;
  const HardwareModel& hw_;
  bool keep_log_;
  std::map<Tile, double> seen_;
  std::vector<TileCandidate> scored_;
  std::string log_;
};

void ValidateForced(const FlatContraction& flat, const Tile& tile) {
  std::vector<std::string> names;
  for (const FlatIndex& idx : flat.indices) names.push_back(idx.name);
  if (tile.size() != flat.indices.size()) {
    TILEC_USER_ERROR("forced tile [{}] has {} entries, but contraction {} has {} indices ({})",
                     fmt::join(tile, ", "), tile.size(), flat.name, flat.indices.size(),
                     fmt::join(names, ", "));
  }
  for (size_t i = 0; i < tile.size(); ++i) {
    if (tile[i] < 1 || tile[i] > flat.indices[i].range) {
      TILEC_USER_ERROR("forced tile size {} for index {} of contraction {} is outside [1, {}]",
                       tile[i], flat.indices[i].name, flat.name, flat.indices[i].range);
    }
  }
}

// PlaidML's TileOptimize: a best-first walk over doublings. The queue pops
// the highest score, ties to the lexicographically largest tile. Stops after
// `max_scored` candidates: with many indices (a 13-index contraction scores
// 145,000 tiles before the early stop) the walk would otherwise take seconds.
void BestFirst(const FlatContraction& flat, bool fast, int64_t max_scored, Scorer& scorer) {
  Tile tile(flat.indices.size(), 1);
  double score = scorer.Score(tile);
  std::set<std::pair<double, Tile>> to_do;
  to_do.emplace(score, tile);
  while (!to_do.empty()) {
    auto top = std::prev(to_do.end());
    // `score` is the most recently computed one, as in PlaidML.
    if (fast && top->first < score) break;
    score = top->first;
    tile = top->second;
    to_do.erase(top);
    for (size_t i = 0; i < tile.size(); ++i) {
      int64_t prev = tile[i];
      int64_t range = flat.indices[i].range;
      tile[i] = prev > range / 2 ? range : 2 * prev;
      if (!scorer.Seen(tile)) {
        if (static_cast<int64_t>(scorer.scored()) >= max_scored) {
          scorer.Note(fmt::format("Stopped after {} candidates (the search's limit)\n", max_scored));
          return;
        }
        score = scorer.Score(tile);
        if (score > 0) to_do.emplace(score, tile);
      }
      tile[i] = prev;
    }
  }
}

// Per index: 1, 2, 4, ... below the range, and the range.
std::vector<Tile> TileOptions(const FlatContraction& flat) {
  std::vector<Tile> options;
  for (const FlatIndex& idx : flat.indices) {
    Tile o;
    for (int64_t t = 1; t < idx.range; t *= 2) {
      o.push_back(t);
      if (t > idx.range / 2) break;
    }
    o.push_back(idx.range);
    options.push_back(std::move(o));
  }
  return options;
}

void Exhaustive(const FlatContraction& flat, int64_t max_candidates, Scorer& scorer) {
  std::vector<Tile> options = TileOptions(flat);
  int64_t count = 1;
  for (const Tile& o : options) {
    count = CheckedMul(count, static_cast<int64_t>(o.size()), "the tile candidate count");
    if (count > max_candidates) {
      TILEC_USER_ERROR("exhaustive tile search of {} would score more than {} candidates",
                       flat.name, max_candidates);
    }
  }
  // Odometer over the options, last index fastest.
  std::vector<size_t> digit(options.size(), 0);
  Tile tile(options.size());
  while (true) {
    for (size_t i = 0; i < options.size(); ++i) tile[i] = options[i][digit[i]];
    scorer.Score(tile);
    size_t i = options.size();
    while (i > 0 && ++digit[i - 1] == options[i - 1].size()) digit[--i] = 0;
    if (i == 0) break;
  }
}

}  // namespace

TileSearchResult SearchTiles(const FlatContraction& flat, const HardwareModel& hw,
                             const TileSearchOptions& options) {
  hw.Validate();
  Scorer scorer(flat, hw, options.keep_log);
  if (options.forced_tile) {
    ValidateForced(flat, *options.forced_tile);
    scorer.Score(*options.forced_tile);
  } else if (options.mode == TileSearchOptions::Mode::Exhaustive) {
    Exhaustive(flat, options.max_candidates, scorer);
  } else {
    BestFirst(flat, options.fast, options.max_scored, scorer);
  }
  return scorer.Finish();
}

std::string TileText(const FlatContraction& flat, const std::vector<int64_t>& tile) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < tile.size(); ++i) {
    std::string name = i < flat.indices.size() ? flat.indices[i].name : "?";
    parts.push_back(fmt::format("{}: {}", name, tile[i]));
  }
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

}  // namespace tilec::compiler
