// PlanRead: the seed's D and K plans, the merge and odd-padding rules, load
// counts, and a brute-force check that every plan stages the tile correctly.
#include "compiler/schedule/read_plan.h"

#include <gtest/gtest.h>

#include <map>

#include "support/error.h"
#include "tests/unit/flat_fixtures.h"

namespace tilec::compiler {
namespace {

const std::vector<int64_t> kSeedTile = {8, 32, 2, 3, 16, 2, 2};

struct Row {
  std::string name;
  int64_t range, global, local;
  bool operator==(const Row&) const = default;
};

std::map<std::string, Row> Rows(const ReadPlan& plan) {
  std::map<std::string, Row> rows;
  for (const auto& m : plan.merged)
    rows[m.name] = {m.name, m.range, m.global_stride, m.local_stride};
  return rows;
}

std::vector<std::string> TransferNames(const ReadPlan& plan) {
  std::vector<std::string> names;
  for (int k : plan.transfer_order) names.push_back(plan.merged[k].name);
  return names;
}

TEST(ReadPlan, SeedImagePlan) {
  FlatContraction flat = testing::SeedConvFlat();
  ReadPlan plan = PlanRead(flat, 1, kSeedTile, SeedExampleHardware());
  std::map<std::string, Row> want = {{"i_x", {"i_x", 3, 14336, 1}},
                                     {"j_y", {"j_y", 4, 64, 393}},
                                     {"ci", {"ci", 8, 1, 49}},
                                     {"n", {"n", 16, 3211264, 3}}};
  EXPECT_EQ(Rows(plan), want);
  EXPECT_EQ(plan.local_size, 1572);
  EXPECT_EQ(ToString(plan),
            "Range Global Local\n"
            "i_x 3 14336 1\n"
            "j_y 4 64 393\n"
            "ci 8 1 49\n"
            "n 16 3211264 3\n");
  // The seed's load loop threads ci, then n, then j_y, and loops over i_x.
  EXPECT_EQ(TransferNames(plan), (std::vector<std::string>{"ci", "n", "j_y", "i_x"}));
  // 8 * 4 * 3 * 16 elements, 8 per 32-byte line along ci.
  EXPECT_EQ(plan.num_loads, 192);
  EXPECT_EQ(plan.local_zero, 0);
  EXPECT_EQ(plan.global_zero, 0);
}

TEST(ReadPlan, SeedKernelPlan) {
  FlatContraction flat = testing::SeedConvFlat();
  ReadPlan plan = PlanRead(flat, 2, kSeedTile, SeedExampleHardware());
  std::map<std::string, Row> want = {
      {"j_i", {"j_i", 6, 4096, 265}}, {"ci", {"ci", 8, 1, 33}}, {"co", {"co", 32, 64, 1}}};
  EXPECT_EQ(Rows(plan), want);
  EXPECT_EQ(plan.local_size, 1590);
  EXPECT_EQ(ToString(plan),
            "Range Global Local\n"
            "j_i 6 4096 265\n"
            "ci 8 1 33\n"
            "co 32 64 1\n");
  // The seed's K load: ci_tid = tid % 8, co_tid = (tid / 8) % 32, loop over j_i.
  EXPECT_EQ(TransferNames(plan), (std::vector<std::string>{"ci", "co", "j_i"}));
  // i merges into j with scale 3 (12288 = 3 * 4096).
  for (const ReadPlan::Part& p : plan.parts) {
    if (flat.indices[p.index].name == "i") {
      EXPECT_EQ(p.scale, 3);
    }
    if (flat.indices[p.index].name == "j") {
      EXPECT_EQ(p.scale, 1);
    }
  }
}

// A one-input flat contraction over the given (range, stride) indices.
FlatContraction OneInput(std::vector<std::pair<int64_t, int64_t>> range_stride,
                         lang::DataType dtype = lang::DataType::F32) {
  FlatContraction f;
  FlatAccess out{"O", dtype, 0, {}, 1};
  FlatAccess in{"I", dtype, 0, {}, 1 << 20};
  for (size_t i = 0; i < range_stride.size(); ++i) {
    f.indices.push_back({std::string(1, static_cast<char>('a' + i)), range_stride[i].first});
    out.strides.push_back(0);
    in.strides.push_back(range_stride[i].second);
  }
  f.accesses = {out, in};
  f.num_inputs = 1;
  f.kernel_outputs = {"O"};
  return f;
}

TEST(ReadPlan, MergesOnlyOverlappingMultiples) {
  // a: stride 1, tile 4; b: stride 4 (abuts a) merges; c: stride 40 does not
  // (a_b spans 8 < 10); d: stride 0 is dropped.
  FlatContraction f = OneInput({{4, 1}, {2, 4}, {3, 40}, {5, 0}});
  ReadPlan plan = PlanRead(f, 1, {4, 2, 3, 5}, SeedExampleHardware());
  std::map<std::string, Row> rows = Rows(plan);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows["a_b"].range, 8);  // 4 + 4 * (2 - 1)
  EXPECT_EQ(rows["c"].range, 3);
  EXPECT_EQ(plan.parts.size(), 3u);
}

TEST(ReadPlan, OddPaddingRule) {
  // Ranges 3 (odd, first), then 6 and 4 (even, larger first):
  // c: stride 1, size 3; a: stride 3, 18 -> 19; b: stride 19, 76 -> 77 -> final pad dropped: 76.
  FlatContraction f = OneInput({{6, 100}, {4, 10000}, {3, 1000000}});
  ReadPlan plan = PlanRead(f, 1, {6, 4, 3}, SeedExampleHardware());
  std::map<std::string, Row> rows = Rows(plan);
  EXPECT_EQ(rows["c"].local, 1);
  EXPECT_EQ(rows["a"].local, 3);
  EXPECT_EQ(rows["b"].local, 19);
  EXPECT_EQ(plan.local_size, 76);
  // All odd: no padding at all.
  ReadPlan odd = PlanRead(f, 1, {5, 3, 3}, SeedExampleHardware());
  EXPECT_EQ(odd.local_size, 45);
}

TEST(ReadPlan, NumLoadsUsesTheBestCacheLineReuse) {
  HardwareModel hw = SeedExampleHardware();  // 32-byte lines: 8 f32, 4 f64
  FlatContraction f = OneInput({{16, 1}, {4, 100}});
  EXPECT_EQ(PlanRead(f, 1, {16, 4}, hw).num_loads, 64 / 8);
  EXPECT_EQ(PlanRead(f, 1, {2, 4}, hw).num_loads, 8 / 2);  // only 2 of a line used
  FlatContraction d = OneInput({{16, 1}, {4, 100}}, lang::DataType::F64);
  EXPECT_EQ(PlanRead(d, 1, {16, 4}, hw).num_loads, 64 / 4);
  // Stride 2: a line holds 4 of the elements.
  FlatContraction s = OneInput({{16, 2}, {4, 1000}});
  EXPECT_EQ(PlanRead(s, 1, {16, 4}, hw).num_loads, 64 / 4);
  hw.mem_width = 128;
  EXPECT_EQ(PlanRead(f, 1, {16, 4}, hw).num_loads, 64 / 16);
}

// Every tile point's local offset is inside the buffer, and the copy loop
// put exactly the point's global element there.
void CheckStagesTile(const FlatContraction& flat, int tensor, const std::vector<int64_t>& tile) {
  ReadPlan plan = PlanRead(flat, tensor, tile, SeedExampleHardware());
  const FlatAccess& a = flat.accesses[tensor];
  // The copy loop: local -> global (relative to the tile base).
  std::map<int64_t, int64_t> copied;
  std::vector<int64_t> m(plan.merged.size(), 0);
  while (true) {
    int64_t local = 0, global = -plan.global_zero;
    for (size_t k = 0; k < m.size(); ++k) {
      local += plan.merged[k].local_stride * m[k];
      global += plan.merged[k].global_stride * m[k];
    }
    ASSERT_LT(local, plan.local_size);
    ASSERT_TRUE(copied.emplace(local, global).second) << "two elements copied to " << local;
    size_t k = m.size();
    while (k > 0 && ++m[k - 1] == plan.merged[k - 1].range) m[--k] = 0;
    if (k == 0) break;
  }
  std::vector<int64_t> idx(tile.size(), 0);
  while (true) {
    int64_t local = plan.local_zero, global = 0;
    for (const ReadPlan::Part& p : plan.parts)
      local += plan.merged[p.merged].local_stride * p.scale * idx[p.index];
    for (size_t i = 0; i < idx.size(); ++i) global += a.strides[i] * idx[i];
    auto it = copied.find(local);
    ASSERT_NE(it, copied.end()) << "point reads local " << local << " which was never written";
    ASSERT_EQ(it->second, global);
    size_t i = idx.size();
    while (i > 0 && ++idx[i - 1] == tile[i - 1]) idx[--i] = 0;
    if (i == 0) break;
  }
}

TEST(ReadPlan, StagesEveryTilePointCorrectly) {
  FlatContraction seed = testing::SeedConvFlat();
  CheckStagesTile(seed, 1, kSeedTile);
  CheckStagesTile(seed, 2, kSeedTile);
  CheckStagesTile(seed, 1, {4, 8, 3, 2, 2, 4, 1});
  CheckStagesTile(seed, 2, {1, 1, 3, 3, 1, 1, 1});
  // Negative strides (I[x - k], a reversed dimension) shift the zero point.
  CheckStagesTile(OneInput({{3, -1}, {5, 1}}), 1, {3, 5});
  CheckStagesTile(OneInput({{4, -7}, {3, 1}}), 1, {4, 3});
  CheckStagesTile(OneInput({{3, 2}, {4, -2}, {2, 1}}), 1, {3, 4, 2});
  CheckStagesTile(OneInput({{5, 3}, {2, 6}, {3, -9}}), 1, {5, 2, 3});
}

TEST(ReadPlan, NegativeStrideMergeKeepsTheTightRange) {
  // I[b - a]: b (index 1) merges into a with scale -1; range 3 + 5 - 1.
  ReadPlan plan = PlanRead(OneInput({{3, -1}, {5, 1}}), 1, {3, 5}, SeedExampleHardware());
  ASSERT_EQ(plan.merged.size(), 1u);
  EXPECT_EQ(plan.merged[0].name, "a_b");
  EXPECT_EQ(plan.merged[0].range, 7);
  EXPECT_EQ(plan.merged[0].zero, 4);
}

TEST(ReadPlan, RejectsBadArguments) {
  FlatContraction flat = testing::SeedConvFlat();
  EXPECT_THROW(PlanRead(flat, 0, kSeedTile, SeedExampleHardware()), InternalError);
  EXPECT_THROW(PlanRead(flat, 3, kSeedTile, SeedExampleHardware()), InternalError);
  EXPECT_THROW(PlanRead(flat, 1, {1, 1}, SeedExampleHardware()), InternalError);
  EXPECT_THROW(PlanRead(flat, 1, {8, 32, 4, 3, 16, 2, 2}, SeedExampleHardware()), InternalError);
}

TEST(ReadPlan, NearestPo2) {
  EXPECT_EQ(NearestPo2(0), 1);
  EXPECT_EQ(NearestPo2(1), 1);
  EXPECT_EQ(NearestPo2(3), 4);
  EXPECT_EQ(NearestPo2(8), 8);
  EXPECT_EQ(NearestPo2(9), 16);
}

}  // namespace
}  // namespace tilec::compiler
