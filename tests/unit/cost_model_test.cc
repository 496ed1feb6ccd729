// The cost model: the seed's four logged candidates figure by figure, and
// each formula on small hand-computed cases.
#include "compiler/schedule/cost_model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "compiler/schedule/thread_plan.h"
#include "support/error.h"
#include "tests/unit/flat_fixtures.h"

namespace tilec::compiler {
namespace {

struct SeedCandidate {
  std::vector<int64_t> tile;
  TileStats stats;
  std::string verdict;  // the seed's lines after "Compute score:"
};

// Verbatim from the seed's log.
std::vector<SeedCandidate> SeedLog() {
  const int64_t to = 236760072192;
  return {
      {{8, 32, 1, 3, 16, 8, 2},
       {to, 12544, 24, 20656, 32768, 19456, 32768, 256, 0, 256},
       "over memory\n"},
      {{8, 32, 1, 3, 16, 4, 4},
       {to, 12544, 24, 16272, 32768, 15360, 32768, 256, 0, 256},
       "over regs\n"},
      {{16, 32, 1, 1, 16, 2, 2},
       {to, 50176, 36, 6488, 8192, 6144, 8192, 256, 0, 256},
       "flops_per_byte=20.5714 occupancy=20\n"
       "roof_ratio=1 occ_ratio=1 thread_ratio=1 score=1\n"},
      {{8, 32, 2, 1, 16, 2, 2},
       {to, 50176, 48, 5264, 8192, 5120, 8192, 256, 0, 256},
       "flops_per_byte=18.5806 occupancy=20\n"
       "roof_ratio=0.929032 occ_ratio=1 thread_ratio=1 score=0.929032\n"},
  };
}

TEST(CostModel, SeedCandidatesFigureByFigure) {
  FlatContraction flat = testing::SeedConvFlat();
  HardwareModel hw = SeedExampleHardware();
  for (const SeedCandidate& c : SeedLog()) {
    SCOPED_TRACE(::testing::PrintToString(c.tile));
    TileStats stats = ComputeTileStats(flat, c.tile, hw);
    EXPECT_EQ(stats, c.stats) << ToString(stats);
    TileScore score = ComputeScore(stats, hw);
    EXPECT_EQ(ToString(score), c.verdict);
  }
}

TEST(CostModel, SeedCandidatesPrintTheSeedsLines) {
  EXPECT_EQ(ToString(SeedLog()[0].stats),
            "to=236760072192 wg=12544 il=24 sm=20656 or=32768 mr=19456 mw=32768 op=256 rp=0 "
            "tu=256");
  EXPECT_EQ(ToString(ComputeTileStats(testing::SeedConvFlat(), {16, 32, 1, 1, 16, 2, 2},
                                      SeedExampleHardware())),
            "to=236760072192 wg=50176 il=36 sm=6488 or=8192 mr=6144 mw=8192 op=256 rp=0 tu=256");
}

TEST(CostModel, SeedScores) {
  FlatContraction flat = testing::SeedConvFlat();
  HardwareModel hw = SeedExampleHardware();
  TileScore over_mem = ComputeScore(ComputeTileStats(flat, SeedLog()[0].tile, hw), hw);
  EXPECT_TRUE(over_mem.over_memory);
  EXPECT_EQ(over_mem.score, -1);
  TileScore over_regs = ComputeScore(ComputeTileStats(flat, SeedLog()[1].tile, hw), hw);
  EXPECT_FALSE(over_regs.over_memory);
  EXPECT_TRUE(over_regs.over_regs);
  EXPECT_EQ(over_regs.score, -1);
  TileScore one = ComputeScore(ComputeTileStats(flat, SeedLog()[2].tile, hw), hw);
  EXPECT_EQ(one.score, 1);
  // 236760072192 / (50176 * (36 * 6144 + 8192))
  EXPECT_DOUBLE_EQ(one.flops_per_byte, 236760072192.0 / (50176.0 * (36 * 6144 + 8192)));
  TileScore roof = ComputeScore(ComputeTileStats(flat, SeedLog()[3].tile, hw), hw);
  EXPECT_DOUBLE_EQ(roof.flops_per_byte, 236760072192.0 / (50176.0 * (48 * 5120 + 8192)));
  EXPECT_DOUBLE_EQ(roof.score, roof.flops_per_byte / 20);
  EXPECT_NEAR(roof.score, 0.929032, 1e-6);
  EXPECT_EQ(roof.occupancy, 20);
}

TEST(CostModel, SeedChosenTile) {
  FlatContraction flat = testing::SeedConvFlat();
  HardwareModel hw = SeedExampleHardware();
  std::vector<int64_t> tile = {8, 32, 2, 3, 16, 2, 2};
  TileStats s = ComputeTileStats(flat, tile, hw);
  // Local memory: the D and K tiles of the seed's kernel (1572 + 1590 floats).
  EXPECT_EQ(s.shared_mem, (1572 + 1590) * 4);
  // 2 x 2 x 16 x 32 outputs over 256 threads: 8 accumulators each.
  EXPECT_EQ(s.out_regs, 256 * 8 * 4);
  EXPECT_EQ(s.inner_loops, 8 * 2);  // ci in 8 steps, i in 2, j in 1
  EXPECT_EQ(ComputeScore(s, hw).score, 1);
  // The seed's compute threading: co_tid = tid % 8, y_tid = (tid / 8) % 2,
  // x_tid = (tid / 16) % 2, n_tid = (tid / 32) % 8.
  EXPECT_EQ(AssignOutputThreads(flat, tile, hw), (std::vector<int64_t>{0, 8, 0, 0, 8, 2, 2}));
}

// C[i, j] = +(A[i, k] * B[k, j]): 37 x 29 x 19, indices i, j, k.
FlatContraction Matmul() {
  FlatContraction f;
  f.name = "matmul";
  f.indices = {{"i", 37}, {"j", 29}, {"k", 19}};
  f.accesses = {{"C", lang::DataType::F32, 0, {29, 1, 0}, 37 * 29},
                {"A", lang::DataType::F32, 0, {19, 0, 1}, 37 * 19},
                {"B", lang::DataType::F32, 0, {0, 1, 29}, 19 * 29}};
  f.num_inputs = 2;
  f.comb_op = lang::ast::CombOp::Mul;
  f.kernel_outputs = {"C"};
  return f;
}

TEST(CostModel, MatmulByHand) {
  HardwareModel hw = SeedExampleHardware();  // 256 threads, 32-byte lines (8 floats)
  TileStats s = ComputeTileStats(Matmul(), {4, 8, 19}, hw);
  EXPECT_EQ(s.true_ops, 37 * 29 * 19 * 2);
  EXPECT_EQ(s.work_groups, 10 * 4);  // ceil(37/4) * ceil(29/8)
  EXPECT_EQ(s.inner_loops, 1);
  // A: k and i merge (19 = 19 * 1) into 76 elements, 8 per line -> 9 loads;
  // B: j (8) and k (19) stay apart: 152 elements -> 19 loads.
  EXPECT_EQ(s.mem_read, (9 + 19) * 32);
  // j gets 8 threads (a cache line), i 4: one accumulator per thread.
  EXPECT_EQ(AssignOutputThreads(Matmul(), {4, 8, 19}, hw), (std::vector<int64_t>{4, 8, 0}));
  EXPECT_EQ(s.out_regs, 256 * 4);
  EXPECT_EQ(s.mem_write, 4 * 1 * 32);  // 4 rows of one line
  EXPECT_EQ(s.operations, 256);
  // 32 outputs for 256 threads: 3 tree-reduction steps and their scratch.
  EXPECT_EQ(s.rollups, 3);
  EXPECT_EQ(s.shared_mem, (76 + 152) * 4 + 256 * 4);
  EXPECT_EQ(s.threads_used, 256);
  TileScore score = ComputeScore(s, hw);
  double fpb = 40774.0 / (40 * (896 + 128));
  EXPECT_DOUBLE_EQ(score.flops_per_byte, fpb);
  EXPECT_DOUBLE_EQ(score.score, fpb / 20);
}

TEST(CostModel, FullReductionRollsUp) {
  // O[] = +(I[k]), k < 1024.
  FlatContraction f;
  f.indices = {{"k", 1024}};
  f.accesses = {{"O", lang::DataType::F32, 0, {0}, 1}, {"I", lang::DataType::F32, 0, {1}, 1024}};
  f.num_inputs = 1;
  f.kernel_outputs = {"O"};
  HardwareModel hw = SeedExampleHardware();
  TileStats s = ComputeTileStats(f, {256}, hw);
  EXPECT_EQ(s.work_groups, 1);
  EXPECT_EQ(s.inner_loops, 4);
  EXPECT_EQ(s.operations, 256);
  EXPECT_EQ(s.rollups, 8);
  EXPECT_EQ(s.shared_mem, 256 * 4 + 256 * 4);
  EXPECT_EQ(s.out_regs, 256 * 4);
  EXPECT_EQ(s.mem_read, 32 * 32);
  EXPECT_EQ(s.mem_write, 32);
  EXPECT_EQ(s.threads_used, 256);
  // A tile of 1: one thread does anything, the rest idle.
  TileStats one = ComputeTileStats(f, {1}, hw);
  EXPECT_EQ(one.operations, 1);
  EXPECT_EQ(one.rollups, 0);
  EXPECT_EQ(one.threads_used, 1);
  EXPECT_DOUBLE_EQ(ComputeScore(one, hw).thread_ratio, 1.0 / 256);
}

TEST(CostModel, TrueOpsCountPostOps) {
  FlatContraction f = Matmul();
  HardwareModel hw = SeedExampleHardware();
  f.post_ops = testing::SeedPostOps();
  EXPECT_EQ(ComputeTileStats(f, {1, 1, 1}, hw).true_ops, 37 * 29 * 19 * 4);
  f.generate_contraction = false;
  EXPECT_EQ(ComputeTileStats(f, {1, 1, 1}, hw).true_ops, 37 * 29 * 19 * 2);
}

TEST(CostModel, WritesRoundStrideOneRunsToCacheLines) {
  FlatContraction f = Matmul();
  HardwareModel hw = SeedExampleHardware();
  EXPECT_EQ(ComputeTileStats(f, {2, 9, 1}, hw).mem_write, 2 * 2 * 32);   // 9 floats: 2 lines
  EXPECT_EQ(ComputeTileStats(f, {2, 16, 1}, hw).mem_write, 2 * 2 * 32);  // 16 floats: 2 lines
  f.kernel_outputs = {"C", "D"};
  EXPECT_EQ(ComputeTileStats(f, {2, 16, 1}, hw).mem_write, 2 * 2 * 32 * 2);
}

TEST(CostModel, PostOpInputsAreReadPerOutput) {
  FlatContraction f = Matmul();
  HardwareModel hw = SeedExampleHardware();
  int64_t base = ComputeTileStats(f, {4, 8, 19}, hw).mem_read;
  // A bias per column, as a post-op input (f64: 8 bytes per output line unit).
  f.accesses.push_back({"Bias", lang::DataType::F64, 0, {0, 1, 0}, 29});
  TileStats s = ComputeTileStats(f, {4, 8, 19}, hw);
  EXPECT_EQ(s.mem_read, base + 4 * 1 * 8);  // outputs() = 4 rows x 1 line, times 8 bytes
  EXPECT_EQ(s.shared_mem, ComputeTileStats(Matmul(), {4, 8, 19}, hw).shared_mem);
}

TEST(CostModel, RegistersCountPartialThreadTiles) {
  FlatContraction f = Matmul();
  HardwareModel hw = SeedExampleHardware();
  // j: 8 threads, i: 32 threads for a tile of 37 -> ceil(37/32) = 2 loops.
  std::vector<int64_t> tile = {37, 8, 1};
  EXPECT_EQ(AssignOutputThreads(f, tile, hw), (std::vector<int64_t>{32, 8, 0}));
  EXPECT_EQ(ComputeTileStats(f, tile, hw).out_regs, 256 * 2 * 4);
}

TEST(CostModel, UnmanagedCachesNeedNoLocalMemory) {
  HardwareModel hw = SeedExampleHardware();
  hw.local_memory_managed = false;
  TileStats s = ComputeTileStats(Matmul(), {4, 8, 19}, hw);
  EXPECT_EQ(s.shared_mem, 256 * 4);  // only the tree-reduction scratch
}

TEST(CostModel, LimitsAreInclusive) {
  HardwareModel hw = SeedExampleHardware();
  TileStats s;
  s.true_ops = 1000;
  s.work_groups = 40;
  s.inner_loops = 1;
  s.mem_read = 10;
  s.mem_write = 0;
  s.operations = 256;
  s.threads_used = 128;
  s.shared_mem = hw.max_mem;
  s.out_regs = hw.max_regs;
  TileScore ok = ComputeScore(s, hw);
  EXPECT_FALSE(ok.over_memory || ok.over_regs);
  EXPECT_DOUBLE_EQ(ok.flops_per_byte, 1000.0 / 400);
  EXPECT_DOUBLE_EQ(ok.roof_ratio, 2.5 / 20);
  EXPECT_DOUBLE_EQ(ok.occ_ratio, 1);
  EXPECT_DOUBLE_EQ(ok.thread_ratio, 0.5);
  EXPECT_DOUBLE_EQ(ok.score, 2.5 / 20 * 0.5);
  s.work_groups = 5;
  EXPECT_DOUBLE_EQ(ComputeScore(s, hw).occ_ratio, 5.0 / 20);
  s.shared_mem = hw.max_mem + 1;
  s.out_regs = hw.max_regs + 1;
  TileScore both = ComputeScore(s, hw);
  EXPECT_TRUE(both.over_memory);  // memory is checked first, as in the seed's log
  EXPECT_FALSE(both.over_regs);
  s.shared_mem = hw.max_mem;
  EXPECT_TRUE(ComputeScore(s, hw).over_regs);
}

TEST(CostModel, NoMemoryTrafficIsComputeBound) {
  HardwareModel hw = SeedExampleHardware();
  TileStats s;
  s.true_ops = 10;
  s.work_groups = 20;
  s.threads_used = 256;
  TileScore r = ComputeScore(s, hw);
  EXPECT_TRUE(std::isinf(r.flops_per_byte));
  EXPECT_EQ(r.score, 1);
}

TEST(CostModel, HugeContractionsAreUserErrors) {
  FlatContraction f;
  f.indices = {{"a", int64_t{1} << 40}, {"b", int64_t{1} << 40}};
  f.accesses = {{"O", lang::DataType::F32, 0, {1, 0}, int64_t{1} << 40},
                {"I", lang::DataType::F32, 0, {1, 1}, int64_t{1} << 41}};
  f.num_inputs = 1;
  f.kernel_outputs = {"O"};
  EXPECT_THROW(ComputeTileStats(f, {1, 1}, SeedExampleHardware()), UserError);
}

TEST(CostModel, RejectsBadTiles) {
  HardwareModel hw = SeedExampleHardware();
  EXPECT_THROW(ComputeTileStats(Matmul(), {1, 1}, hw), InternalError);
  EXPECT_THROW(ComputeTileStats(Matmul(), {0, 1, 1}, hw), InternalError);
  EXPECT_THROW(ComputeTileStats(Matmul(), {38, 1, 1}, hw), InternalError);
}

TEST(CostModel, SeedExampleHardwareMatchesTheLog) {
  HardwareModel hw = SeedExampleHardware();
  EXPECT_EQ(hw.threads, 256);
  EXPECT_EQ(hw.goal_groups, 20);
  EXPECT_EQ(hw.goal_flops_per_byte, 20);
  EXPECT_EQ(hw.mem_width, 32);
  // "over memory" at sm=20656 but not at 16272; "over regs" at or=32768 but
  // not at 8192.
  EXPECT_GE(hw.max_mem, 16272);
  EXPECT_LT(hw.max_mem, 20656);
  EXPECT_GE(hw.max_regs, 8192);
  EXPECT_LT(hw.max_regs, 32768);
}

// A work-group shape forced by the tuner or --work-group: exactly those
// threads, any count up to the tile (not only powers of two), each thread
// looping over the rest of its index's tile.
TEST(ThreadPlan, ForcedWorkGroup) {
  HardwareModel hw = SeedExampleHardware();
  FlatContraction f = Matmul();
  ThreadPlan plan = PlanThreads(f, {4, 8, 19}, hw, {3, 5, 1});
  EXPECT_EQ(plan.threads, 15);
  ASSERT_EQ(plan.outputs.size(), 2u);
  EXPECT_EQ(plan.outputs[0].index, 1);  // j: the output's stride 1, fastest
  EXPECT_EQ(plan.outputs[0].threads, 5);
  EXPECT_EQ(plan.outputs[0].loops, 2);  // ceil(8 / 5)
  EXPECT_EQ(plan.outputs[1].threads, 3);
  EXPECT_EQ(plan.outputs[1].thread_stride, 5);
  EXPECT_EQ(plan.accumulators, 4);
  // Without a shape: the cost model's (AssignOutputThreads).
  EXPECT_EQ(PlanThreads(f, {4, 8, 19}, hw).threads, 32);

  EXPECT_EQ(CheckWorkGroup(f, {4, 8, 19}, hw, {3, 5, 1}), "");
  EXPECT_EQ(CheckWorkGroup(f, {4, 8, 19}, hw, {3, 5}), "2 sizes for 3 indices");
  EXPECT_EQ(CheckWorkGroup(f, {4, 8, 19}, hw, {1, 1, 2}),
            "k is a reduction index: its threads must be 1, not 2");
  EXPECT_EQ(CheckWorkGroup(f, {4, 8, 19}, hw, {5, 1, 1}),
            "5 threads along i: at most 4 (its tile, 4, rounded up to a power of two)");
  EXPECT_EQ(CheckWorkGroup(f, {3, 8, 19}, hw, {4, 1, 1}), "");  // the 4th thread idles
  EXPECT_EQ(CheckWorkGroup(f, {4, 8, 19}, hw, {0, 1, 1}), "0 threads along i: at least 1");
  hw.max_work_group_size = 16;
  EXPECT_EQ(CheckWorkGroup(f, {4, 8, 19}, hw, {4, 8, 1}), "32 threads in all: the device allows at most 16");
}

}  // namespace
}  // namespace tilec::compiler
