// SearchTiles: the seed's choice and log, agreement of the best-first search
// with exhaustive search on small contractions, ranking, forced tiles.
#include "compiler/schedule/tile_search.h"

#include <gtest/gtest.h>

#include <set>

#include "compiler/passes/flatten.h"
#include "support/error.h"
#include "tests/unit/flat_fixtures.h"

namespace tilec::compiler {
namespace {

using testing::AddTensor;
using testing::Poly;
using testing::SetIndices;
using testing::Var;

TEST(TileSearch, SeedPicksTheSeedsTile) {
  FlatContraction flat = testing::SeedConvFlat();
  TileSearchResult r = SearchTiles(flat, SeedExampleHardware());
  EXPECT_EQ(r.best().tile, (std::vector<int64_t>{8, 32, 2, 3, 16, 2, 2}));
  EXPECT_EQ(TileText(flat, r.best().tile), "[ci: 8, co: 32, i: 2, j: 3, n: 16, x: 2, y: 2]");
  EXPECT_EQ(r.best().score.score, 1);
}

TEST(TileSearch, SeedLogContainsTheSeedsExcerpt) {
  TileSearchResult r = SearchTiles(testing::SeedConvFlat(), SeedExampleHardware());
  // The seed's "small bit of the output of the tile size optimizer",
  // consecutive in our log as in PlaidML's.
  const std::string excerpt =
      "Computing cost for tile size: [8, 32, 1, 3, 16, 8, 2]\n"
      "Compute score: to=236760072192 wg=12544 il=24 sm=20656 or=32768 mr=19456 mw=32768 op=256 "
      "rp=0 tu=256\n"
      "over memory\n"
      "Computing cost for tile size: [8, 32, 1, 3, 16, 4, 4]\n"
      "Compute score: to=236760072192 wg=12544 il=24 sm=16272 or=32768 mr=15360 mw=32768 op=256 "
      "rp=0 tu=256\n"
      "over regs\n"
      "Computing cost for tile size: [16, 32, 1, 1, 16, 2, 2]\n"
      "Compute score: to=236760072192 wg=50176 il=36 sm=6488 or=8192 mr=6144 mw=8192 op=256 rp=0 "
      "tu=256\n"
      "flops_per_byte=20.5714 occupancy=20\n"
      "roof_ratio=1 occ_ratio=1 thread_ratio=1 score=1\n"
      "Computing cost for tile size: [8, 32, 2, 1, 16, 2, 2]\n"
      "Compute score: to=236760072192 wg=50176 il=48 sm=5264 or=8192 mr=5120 mw=8192 op=256 rp=0 "
      "tu=256\n"
      "flops_per_byte=18.5806 occupancy=20\n"
      "roof_ratio=0.929032 occ_ratio=1 thread_ratio=1 score=0.929032\n";
  EXPECT_NE(r.log.find(excerpt), std::string::npos);
  EXPECT_EQ(r.log.rfind("Computing cost for tile size: [1, 1, 1, 1, 1, 1, 1]\n", 0), 0u);
  const std::string tail = "Final tile: [8, 32, 2, 3, 16, 2, 2]\nFinal score: 1\n";
  ASSERT_GE(r.log.size(), tail.size());
  EXPECT_EQ(r.log.substr(r.log.size() - tail.size()), tail);
}

// Sorted best first, every scored tile once, the log lists each of them.
void CheckRanked(const TileSearchResult& r) {
  ASSERT_FALSE(r.ranked.empty());
  std::set<std::vector<int64_t>> tiles;
  for (size_t k = 0; k < r.ranked.size(); ++k) {
    if (k > 0) {
      EXPECT_GE(r.ranked[k - 1].score.score, r.ranked[k].score.score) << k;
    }
    EXPECT_TRUE(tiles.insert(r.ranked[k].tile).second) << "tile scored twice";
  }
  size_t logged = 0;
  for (size_t pos = 0;
       (pos = r.log.find("Computing cost for tile size:", pos)) != std::string::npos; ++pos)
    ++logged;
  EXPECT_EQ(logged, r.ranked.size());
}

TEST(TileSearch, RankedListIsSortedAndComplete) {
  TileSearchResult seed = SearchTiles(testing::SeedConvFlat(), SeedExampleHardware());
  CheckRanked(seed);
  // Over-limit tiles are ranked too, last.
  EXPECT_EQ(seed.ranked.back().score.score, -1);
}

TEST(TileSearch, TiesGoToTheLaterScoredTile) {
  FlatContraction flat = testing::SeedConvFlat();
  TileSearchOptions opts;
  TileSearchResult r = SearchTiles(flat, SeedExampleHardware(), opts);
  // Several tiles score 1; the chosen one is the last of them in the log.
  ASSERT_GE(r.ranked.size(), 2u);
  ASSERT_EQ(r.ranked[1].score.score, 1);
  std::string best = fmt::format("size: [{}]\n", fmt::join(r.ranked[0].tile, ", "));
  std::string second = fmt::format("size: [{}]\n", fmt::join(r.ranked[1].tile, ", "));
  EXPECT_GT(r.log.find(best), r.log.find(second));
}

// C[i, j] = +(A[i, k] * B[k, j]), 37 x 29 x 19, through Flatten.
FlatContraction Matmul() {
  lang::Program p;
  AddTensor(p, "A", {37, 19});
  AddTensor(p, "B", {19, 29});
  AddTensor(p, "C", {37, 29}, lang::DataType::F32, lang::TensorRole::Output);
  lang::ContractionOp op;
  op.output = "C";
  op.output_index = {Var("i"), Var("j")};
  op.comb = lang::ast::CombOp::Mul;
  op.inputs = {{"A", {Var("i"), Var("k")}}, {"B", {Var("k"), Var("j")}}};
  SetIndices(op, {{"i", {0, 36}}, {"j", {0, 28}}, {"k", {0, 18}}});
  return Flatten(p, op);
}

// O[x, co] = +(I[x + i - 1, ci] * K[i, ci, co]): "same" 1-D convolution with
// padding constraints, X = 30, CI = 6, CO = 10, I = 3.
FlatContraction PaddedConv() {
  lang::Program p;
  AddTensor(p, "I", {30, 6});
  AddTensor(p, "K", {3, 6, 10});
  AddTensor(p, "O", {30, 10}, lang::DataType::F32, lang::TensorRole::Output);
  lang::ContractionOp op;
  op.output = "O";
  op.output_index = {Var("x"), Var("co")};
  op.comb = lang::ast::CombOp::Mul;
  op.inputs = {{"I", {Poly({{"x", 1}, {"i", 1}}, -1), Var("ci")}},
               {"K", {Var("i"), Var("ci"), Var("co")}}};
  SetIndices(op, {{"ci", {0, 5}}, {"co", {0, 9}}, {"i", {0, 2}}, {"x", {0, 29}}});
  FlatContraction flat = Flatten(p, op);
  EXPECT_EQ(flat.constraints.size(), 2u);
  return flat;
}

// O[r] = +(I[r, c]) over I f32[12, 300].
FlatContraction RowSum() {
  lang::Program p;
  AddTensor(p, "I", {12, 300});
  AddTensor(p, "O", {12}, lang::DataType::F32, lang::TensorRole::Output);
  lang::ContractionOp op;
  op.output = "O";
  op.output_index = {Var("r")};
  op.inputs = {{"I", {Var("r"), Var("c")}}};
  SetIndices(op, {{"c", {0, 299}}, {"r", {0, 11}}});
  return Flatten(p, op);
}

HardwareModel SmallGpu() {
  HardwareModel hw;
  hw.name = "small";
  hw.threads = 16;
  hw.mem_width = 16;
  hw.max_mem = 1024;
  hw.max_regs = 512;
  hw.goal_groups = 4;
  hw.goal_flops_per_byte = 2;
  return hw;
}

TEST(TileSearch, BestFirstAgreesWithExhaustiveSearch) {
  std::vector<std::pair<std::string, FlatContraction>> cases = {
      {"matmul", Matmul()}, {"padded conv", PaddedConv()}, {"row sum", RowSum()}};
  for (const HardwareModel& hw : {SeedExampleHardware(), SmallGpu()}) {
    for (const auto& [name, flat] : cases) {
      SCOPED_TRACE(name + " on " + hw.name);
      TileSearchOptions ex;
      ex.mode = TileSearchOptions::Mode::Exhaustive;
      TileSearchResult all = SearchTiles(flat, hw, ex);
      CheckRanked(all);
      TileSearchOptions full;
      full.fast = false;
      TileSearchResult best_first = SearchTiles(flat, hw, full);
      CheckRanked(best_first);
      EXPECT_EQ(best_first.best().score.score, all.best().score.score);
      EXPECT_GT(all.best().score.score, 0);
      // Same candidate space: everything best-first scores, exhaustive scores identically.
      std::map<std::vector<int64_t>, TileStats> by_tile;
      for (const TileCandidate& c : all.ranked) by_tile[c.tile] = c.stats;
      for (const TileCandidate& c : best_first.ranked) {
        auto it = by_tile.find(c.tile);
        ASSERT_NE(it, by_tile.end());
        EXPECT_EQ(it->second, c.stats);
      }
    }
  }
}

// PlaidML's `fast` stop trades optimality for time: it ends as soon as the
// queue's best falls below the last score computed. On these small cases it
// stops short of the optimum (e.g. matmul on the seed's hardware: 0.0398 vs
// 0.0692), which is why the full search is what agrees with exhaustive search.
TEST(TileSearch, FastStopScoresFewerTiles) {
  for (const FlatContraction& flat : {Matmul(), PaddedConv(), RowSum()}) {
    TileSearchOptions full;
    full.fast = false;
    TileSearchResult all = SearchTiles(flat, SmallGpu(), full);
    TileSearchResult fast = SearchTiles(flat, SmallGpu());
    CheckRanked(fast);
    EXPECT_LT(fast.ranked.size(), all.ranked.size());
    EXPECT_LE(fast.best().score.score, all.best().score.score);
    // What fast mode scores is a prefix of what the full search scores.
    ASSERT_EQ(all.log.compare(0, fast.log.rfind("Final tile:"), fast.log, 0,
                              fast.log.rfind("Final tile:")),
              0);
  }
}

// The best-first walk is bounded by a count of scored candidates, so a
// contraction with many indices cannot make the compile slow (a fuzzer's
// 13-index 3-D convolution scored 145,669 tiles in 7 s before the limit).
TEST(TileSearch, ScoredCandidatesAreBounded) {
  TileSearchOptions few;
  few.fast = false;
  few.max_scored = 5;
  TileSearchResult r = SearchTiles(Matmul(), SmallGpu(), few);
  CheckRanked(r);
  EXPECT_EQ(r.ranked.size(), 5u);
  EXPECT_NE(r.log.find("Stopped after 5 candidates (the search's limit)"), std::string::npos);

  // O[a..f] = +(I[a..f, g..l]): 12 indices of range 5, 4^12 tiles in the
  // doubling space; the default limit holds in both modes.
  lang::Program p;
  AddTensor(p, "I", std::vector<int64_t>(12, 5));
  AddTensor(p, "O", std::vector<int64_t>(6, 5), lang::DataType::F32, lang::TensorRole::Output);
  lang::ContractionOp op;
  op.output = "O";
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> ranges;
  std::vector<lang::Polynomial> in_index;
  for (char c = 'a'; c <= 'l'; ++c) {
    std::string name(1, c);
    if (c <= 'f') op.output_index.push_back(Var(name));
    in_index.push_back(Var(name));
    ranges.push_back({name, {0, 4}});
  }
  op.inputs = {{"I", in_index}};
  SetIndices(op, {ranges.begin(), ranges.end()});
  FlatContraction flat = Flatten(p, op);
  ASSERT_EQ(flat.indices.size(), 12u);
  for (bool fast : {true, false}) {
    TileSearchOptions o;
    o.fast = fast;
    TileSearchResult many = SearchTiles(flat, SmallGpu(), o);
    CheckRanked(many);
    EXPECT_LE(many.ranked.size(), static_cast<size_t>(o.max_scored));
  }
}

TEST(TileSearch, ExhaustiveSpaceIsPowersOfTwoOrFullRange) {
  FlatContraction flat = Matmul();  // ranges 37, 29, 19
  TileSearchOptions ex;
  ex.mode = TileSearchOptions::Mode::Exhaustive;
  ex.keep_log = false;
  TileSearchResult r = SearchTiles(flat, SeedExampleHardware(), ex);
  // 37: 1 2 4 8 16 32 37; 29: 1 2 4 8 16 29; 19: 1 2 4 8 16 19.
  EXPECT_EQ(r.ranked.size(), 7u * 6u * 6u);
  EXPECT_TRUE(r.log.empty());
  for (const TileCandidate& c : r.ranked) {
    for (size_t i = 0; i < c.tile.size(); ++i) {
      int64_t t = c.tile[i];
      EXPECT_TRUE(t == flat.indices[i].range || (t & (t - 1)) == 0) << t;
    }
  }
  ex.max_candidates = 100;
  EXPECT_THROW(SearchTiles(flat, SeedExampleHardware(), ex), UserError);
}

TEST(TileSearch, ForcedTile) {
  FlatContraction flat = testing::SeedConvFlat();
  TileSearchOptions opts;
  opts.forced_tile = std::vector<int64_t>{16, 32, 1, 1, 16, 2, 2};
  TileSearchResult r = SearchTiles(flat, SeedExampleHardware(), opts);
  ASSERT_EQ(r.ranked.size(), 1u);
  EXPECT_EQ(r.best().tile, *opts.forced_tile);
  EXPECT_EQ(r.best().score.score, 1);
  EXPECT_EQ(r.best().stats.mem_read, 6144);
  // Over a limit: still the answer (the user asked for it), score -1.
  opts.forced_tile = std::vector<int64_t>{8, 32, 1, 3, 16, 8, 2};
  EXPECT_EQ(SearchTiles(flat, SeedExampleHardware(), opts).best().score.score, -1);
}

TEST(TileSearch, ForcedTileIsValidated) {
  FlatContraction flat = testing::SeedConvFlat();
  TileSearchOptions opts;
  for (std::vector<int64_t> bad : std::vector<std::vector<int64_t>>{
           {8, 32, 2, 3, 16, 2},        // too few
           {8, 32, 2, 3, 16, 2, 2, 1},  // too many
           {8, 32, 0, 3, 16, 2, 2},     // zero
           {8, 32, -2, 3, 16, 2, 2},    // negative
           {8, 32, 4, 3, 16, 2, 2},     // above the range of i (3)
       }) {
    opts.forced_tile = bad;
    EXPECT_THROW(SearchTiles(flat, SeedExampleHardware(), opts), UserError)
        << ::testing::PrintToString(bad);
  }
  opts.forced_tile = std::vector<int64_t>{8, 32, 4, 3, 16, 2, 2};
  try {
    SearchTiles(flat, SeedExampleHardware(), opts);
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("index i"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("[1, 3]"), std::string::npos) << e.message();
  }
}

TEST(TileSearch, RejectsInvalidHardware) {
  HardwareModel hw = SeedExampleHardware();
  hw.threads = 100;
  EXPECT_THROW(SearchTiles(Matmul(), hw), UserError);
}

TEST(TileSearch, ScalarContraction) {
  // O[] = +(I[]): no indices, one candidate (the empty tile).
  FlatContraction f;
  f.accesses = {{"O", lang::DataType::F32, 0, {}, 1}, {"I", lang::DataType::F32, 0, {}, 1}};
  f.num_inputs = 1;
  f.kernel_outputs = {"O"};
  for (auto mode : {TileSearchOptions::Mode::BestFirst, TileSearchOptions::Mode::Exhaustive}) {
    TileSearchOptions opts;
    opts.mode = mode;
    TileSearchResult r = SearchTiles(f, SeedExampleHardware(), opts);
    ASSERT_EQ(r.ranked.size(), 1u);
    EXPECT_TRUE(r.best().tile.empty());
    EXPECT_GT(r.best().score.score, 0);
  }
}

TEST(TileSearch, Deterministic) {
  FlatContraction flat = PaddedConv();
  EXPECT_EQ(SearchTiles(flat, SmallGpu()).log, SearchTiles(flat, SmallGpu()).log);
}

}  // namespace
}  // namespace tilec::compiler
