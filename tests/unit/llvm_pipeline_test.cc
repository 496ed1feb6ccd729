// Execution tests of the kernel pipeline on the llvm:cpu device: Tile
// programs compiled with the device's model and with forced tiles (so fast
// and slow paths run), in the CPU form (one work item per group) and the GPU
// form (local-memory staging, barriers, many work items per group), compared
// with the reference evaluator on random inputs. Also the device's
// registration, its IR output and its compile time.
#include <gtest/gtest.h>

#include <cstdio>

#include "compiler/sem/printer.h"
#include "hal/llvm/llvm_device.h"
#include "runtime/launch_table.h"
#include "tests/unit/pipeline_cases.h"

namespace tilec {
namespace {

using testing::Case;
using testing::kConvRelu;
using testing::F32;
using testing::F64;

std::shared_ptr<hal::Device> Device() { return testing::DeviceFor("llvm"); }

struct Form {
  bool local = false;     // stage inputs in local memory (barriers)
  int64_t threads = 1;    // work items per group the generator aims for
  bool vectorize = true;  // without local staging: the vector form where it fits
};

// The device the tests that check plans use: it plans and compiles for an
// AVX-512 CPU (testing::kAvx512Cpu) whatever the host is.
std::shared_ptr<hal::Device> Avx512() { return testing::PinnedDevice("llvm", testing::kAvx512Cpu); }

// Compiles `c` in `form` (and `options`) with `device`'s model, runs it on
// random inputs and compares every output with the reference evaluator
// (where the host runs the device's code; testing::RunsHere).
std::unique_ptr<runtime::Program> CheckOn(const std::shared_ptr<hal::Device>& device, const Case& c, Form form,
                                          compiler::CompileOptions options, const std::string& what,
                                          double tolerance = 1e-4) {
  options.hw = device->hardware_model();
  options.hw.threads = form.threads;
  options.use_local = form.local;
  options.vectorize = form.vectorize;
  auto program = testing::CompileCase(device, testing::BindCase(c), options);
  if (!device->WhyCannotRun().empty()) return program;
  testing::CompareWithEvaluator(*program,
                                fmt::format("{} (local={}, threads={}, vectorize={})", what,
                                            form.local, form.threads, form.vectorize),
                                tolerance);
  return program;
}

// CheckOn the device of the process's settings (the host, or TILEC_CPU).
std::unique_ptr<runtime::Program> Check(const Case& c, Form form, compiler::CompileOptions options,
                                        const std::string& what, double tolerance = 1e-4) {
  return CheckOn(Device(), c, form, std::move(options), what, tolerance);
}

// The vector form, the flat CPU form, local staging with one work item and
// the GPU form with barriers between many work items.
const std::vector<Form> kForms = {{false, 1}, {false, 1, false}, {true, 1}, {true, 16}, {true, 64}};

TEST(LlvmPipeline, ConvReluSamePaddingAllForms) {
  Case c = testing::ConvReluCase();
  for (const Form& f : kForms) Check(c, f, {}, "conv");
}

TEST(LlvmPipeline, ConvReluForcedTilesBothPaths) {
  // Indices: ci co i j n x y. Tiles that do not divide the ranges, and tiles
  // covering the image edge, so both the fast and the slow path run.
  Case c = testing::ConvReluCase();
  std::vector<std::vector<int64_t>> tiles = {
      {1, 1, 1, 1, 1, 1, 1}, {2, 4, 2, 3, 1, 4, 2}, {5, 6, 3, 3, 2, 9, 7}, {4, 3, 2, 2, 2, 3, 4}};
  // Every tile in the flat CPU form; the forms with local memory on a few
  // (each compile costs a few hundred milliseconds).
  for (size_t k = 0; k < tiles.size(); ++k)
    for (const Form& f : {Form{false, 1, false}, Form{true, 1}, Form{true, 16}}) {
      if (f.local && k % 2 != static_cast<size_t>(f.threads > 1)) continue;
      compiler::CompileOptions o;
      o.forced_tiles["kernel_0"] = tiles[k];
      Check(c, f, o, fmt::format("conv tile [{}]", fmt::join(tiles[k], ",")));
    }
}

TEST(LlvmPipeline, MatmulOddSizes) {
  Case c = testing::MatmulOddCase();
  for (const Form& f : {Form{false, 1}, Form{false, 1, false}, Form{true, 1}, Form{true, 64}}) {
    compiler::CompileOptions o;
    Check(c, f, o, "matmul");
    o.forced_tiles["kernel_0"] = {8, 16, 4};
    Check(c, f, o, "matmul forced");
  }
}

TEST(LlvmPipeline, ManyGroupsNotDividingTheThreads) {
  // One output element per group: 37 * 19 = 703 groups over the pool. The
  // reduction (L = 131, 92,093 points) makes the kernel large enough for
  // the pool (kInlineWork in llvm_device.cc).
  Case c("function (A[M, L], B[L, N]) -> (C) { C[m, n : M, N] = +(A[m, l] * B[l, n]); }",
         {{"A", F32({37, 131})}, {"B", F32({131, 19})}});
  compiler::CompileOptions o;
  o.forced_tiles["kernel_0"] = {131, 1, 1};  // indices l, m, n
  auto* device = dynamic_cast<hal::cpu::LlvmDevice*>(Device().get());
  ASSERT_NE(device, nullptr);
  uint64_t before = device->parallel_launches();
  auto program = Check(c, {false, 1, false}, o, "matmul, a group per element");
  const compiler::GeneratedKernel& k = program->compiled().kernels.at(0).code;
  EXPECT_EQ(k.global[0] * k.global[1] * k.global[2], 703);
  EXPECT_EQ(k.local[0] * k.local[1] * k.local[2], 1);
  if (device->threads() > 1) {
    EXPECT_NE(703 % device->threads(), 0);
    EXPECT_GT(device->parallel_launches(), before);
  }
}

// A small kernel (here 37 x 19 x 29 = 20,387 points, 7 KiB of buffers) runs
// on the calling thread: waking the pool would cost more than the kernel.
TEST(LlvmPipeline, SmallKernelsRunOnTheCaller) {
  auto* device = dynamic_cast<hal::cpu::LlvmDevice*>(Device().get());
  ASSERT_NE(device, nullptr);
  Case c = testing::MatmulOddCase();
  compiler::CompileOptions o;
  o.forced_tiles["kernel_0"] = {1, 1, 29};  // 703 groups, still one thread
  uint64_t before = device->parallel_launches();
  Check(c, {false, 1, false}, o, "small matmul");
  Check(c, {false, 1}, {}, "small matmul, vector form");
  EXPECT_EQ(device->parallel_launches(), before);
}

// The vector form (forms/vector.cc) chosen for the CPU's model: <16 x float>
// loads, broadcasts and fma; tails in the vector and block indices; padding
// on the slow path.
const char* kConvHwio = R"(function (D[N, X, Y, CI], K[I, J, CI, CO], B[CO]) -> (R) {
  O[n, x, y, co : N, X, Y, CO] = +(D[n, x + i - 1, y + j - 1, ci] * K[i, j, ci, co]);
  R = relu(O + B);
})";

TEST(LlvmPipeline, VectorForm) {
  std::vector<Case> cases = {
      {kConvHwio, {{"D", F32({2, 9, 7, 5})}, {"K", F32({3, 3, 5, 32})}, {"B", F32({32})}}},
      {kConvHwio, {{"D", F32({1, 6, 11, 3})}, {"K", F32({3, 3, 3, 48})}, {"B", F32({48})}}},
      {kConvHwio, {{"D", F32({1, 5, 5, 2})}, {"K", F32({3, 3, 2, 20})}, {"B", F32({20})}}},
      {kConvRelu, {{"D", F32({1, 9, 7, 5})}, {"K", F32({3, 3, 40, 5})}}},  // K relaid out first
      {"function (A[N, M], B[M]) -> (C) { C = exp(A) * B + 1; }",
       {{"A", F32({3, 64})}, {"B", F32({64})}}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    auto program = Check(cases[i], {false, 1}, {}, fmt::format("vector case {}", i));
    bool vector = false;
    for (const auto& k : program->compiled().kernels) vector |= !k.code.plan_text.empty();
    EXPECT_TRUE(vector) << "case " << i << " did not use the vector form";
  }
}

// Plans of an AVX-512 CPU (testing::kAvx512Cpu).
TEST(LlvmPipeline, PanelsBlockedLayoutsAndStreamingStores) {
  // B wider than a work item's columns is copied in panels; nChw16c in and
  // out splits c and co; a big elementwise kernel stores around the caches.
  const char* mm = "function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }";
  const char* blocked = R"(function (D[N, C, H, W], K[I, J, C, CO]) -> (R) {
  O[n, co, x, y : N, CO, H, W] = +(D[n, c, x + i - 1, y + j - 1] * K[i, j, c, co]);
  R = relu(O);
})";
  int64_t big = (Avx512()->hardware_model().l2_bytes * 8 *
                 std::max<int64_t>(Avx512()->hardware_model().compute_units, 1)) / 4 + 64;
  std::vector<std::pair<Case, std::string>> cases = {
      {{mm, {{"A", F32({521, 9})}, {"B", F32({9, 192})}}}, "along j%64"},  // 521 rows: kPanelMinUses
      {{mm, {{"A", F32({521, 9})}, {"B", F32({9, 192})}}}, "along i1%64"},  // the copy itself
      {{blocked, {{"D", F32({1, 32, 5, 9})}, {"K", F32({3, 3, 32, 48})}}, {{"D", "nChw16c"}, {"R", "nChw16c"}}},
       "along co%16"},
  };
  // Streaming also needs the four buffers above half the last-level cache;
  // where it is far larger (no sysfs cache entries: glibc reports the whole
  // package's L3, 508 MB on a Zen 5 VM) the case would not fit a unit test.
  const compiler::HardwareModel& hw = Avx512()->hardware_model();
  if (hw.l3_bytes == 0 || 4 * big * 4 > hw.l3_bytes / 2) {
    cases.push_back({{"function (A[N], B[N], C[N]) -> (R) { R = relu(A * B + C); }",
                      {{"A", F32({big})}, {"B", F32({big})}, {"C", F32({big})}}},
                     "streaming stores"});
  } else {
    std::printf("skipping the streaming case: L3 of %lld bytes\n", static_cast<long long>(hw.l3_bytes));
  }
  for (const auto& [c, expect] : cases) {
    auto program = CheckOn(Avx512(), c, {false, 1}, {}, expect);
    std::string plans;
    for (const auto& k : program->compiled().kernels) plans += k.code.plan_text;
    EXPECT_NE(plans.find(expect), std::string::npos) << plans;
  }
}

TEST(LlvmPipeline, StreamingStoresForResultsAboveTwiceTheL2Caches) {
  // A result of 4x the L2 caches' total (and at least half the last-level
  // cache, so that the kernel's buffers outgrow that half) goes around the
  // caches; a temporary of 4x stays cached for the kernel that reads it
  // (temporaries stream only above 8x). Sizes divide every vector width.
  const compiler::HardwareModel& hw = Device()->hardware_model();
  int64_t l2 = hw.l2_bytes * std::max<int64_t>(hw.compute_units, 1);
  if (l2 > (int64_t{64} << 20) || hw.l3_bytes > (int64_t{128} << 20))
    GTEST_SKIP() << "L2 caches of " << l2 << " bytes, L3 of " << hw.l3_bytes << ": the cases would be too large";
  int64_t n_result = (std::max(l2 * 4, hw.l3_bytes / 2) / 4 + 63) / 64 * 64;  // floats
  int64_t n = (l2 * 4 / 4 + 63) / 64 * 64;
  ASSERT_LT(n * 4, l2 * 8);
  auto plans = [](const runtime::Program& p) {
    std::vector<std::string> out;
    for (const auto& k : p.compiled().kernels) out.push_back(k.code.plan_text);
    return out;
  };
  auto result = Check({"function (A[N]) -> (R) { R = exp(A) + 1; }", {{"A", F32({n_result})}}}, {false, 1},
                      {}, "result of 4x L2");
  ASSERT_EQ(plans(*result).size(), 1u);
  EXPECT_NE(plans(*result)[0].find("streaming stores"), std::string::npos) << plans(*result)[0];
  auto temporary = Check({"function (A[N], B[M]) -> (R) { T = exp(A); R[i : N] = +(T[i] * B[j]); }",
                          {{"A", F32({n})}, {"B", F32({3})}}},
                         {false, 1}, {}, "temporary of 4x L2");
  ASSERT_EQ(plans(*temporary).size(), 2u);
  EXPECT_EQ(plans(*temporary)[0].find("streaming stores"), std::string::npos) << plans(*temporary)[0];
}

// A streaming store skips the caches well only for a whole line: x86-64-v3's
// 8 x 8 transpose tiles store rows of 32 bytes and keep ordinary stores
// (streamed, bench/suite transpose 2048x2048 ran 6x slower), x86-64-v4's
// 16 x 16 tiles store 64-byte rows and stream (16 MB, above 4 times both
// models' L2 caches and half their L3).
TEST(LlvmPipeline, StreamingStoresWriteWholeLines) {
  Case c{"function (I[N, M]) -> (O) { O[j, i : M, N] = =(I[i, j]); }", {{"I", F32({2048, 2048})}}};
  std::string avx2 = testing::VectorPlans(*CheckOn(testing::PinnedDevice("llvm", testing::kAvx2Cpu), c,
                                                   {false, 1}, {}, "transpose, AVX2"));
  EXPECT_NE(avx2.find("Transpose form: 8 x 8 tiles"), std::string::npos) << avx2;
  EXPECT_EQ(avx2.find("streaming stores"), std::string::npos) << avx2;
  std::string avx512 = testing::VectorPlans(*CheckOn(Avx512(), c, {false, 1}, {}, "transpose, AVX-512"));
  EXPECT_NE(avx512.find("Transpose form: 16 x 16 tiles"), std::string::npos) << avx512;
  EXPECT_NE(avx512.find("streaming stores"), std::string::npos) << avx512;
}

TEST(LlvmPipeline, VectorFormMaskedTails) {
  // llvm.masked.load/store for the tails, lane masks for constraints on v;
  // the plans of an AVX-512 CPU.
  for (const auto& [c, expect] : testing::MaskedTailCases()) {
    auto program = CheckOn(Avx512(), c, {false, 1}, {}, expect);
    std::string plans = testing::VectorPlans(*program);
    EXPECT_NE(plans.find(expect), std::string::npos) << plans;
  }
}

TEST(LlvmPipeline, VectorFormReductionChunks) {
  compiler::CompileOptions o;
  o.layouts.relayout = false;  // the form of these layouts, not of relayouts into others
  for (const auto& [c, expect] : testing::ChunkCases()) {  // the plans of an AVX-512 CPU
    auto program = CheckOn(Avx512(), c, {false, 1}, o, expect);
    std::string plans = testing::VectorPlans(*program);
    EXPECT_NE(plans.find(expect), std::string::npos) << plans;
  }
}

// The chunked work items along p share the blocks out evenly: 13 blocks
// are 7 + 6 on this CPU (9 + 4 before, which left one thread with the long
// items), checked against the evaluator.
TEST(LlvmPipeline, ChunkedBlocksAreSharedOutEvenly) {
  compiler::CompileOptions o;
  o.layouts.relayout = false;
  const char* expect = "Grid: 2 x 1 x 9 work items (one per 7 ci blocks, co block, j, i)";
  auto program = CheckOn(Avx512(), testing::BackwardWeightsCase(), {false, 1}, o, expect);
  std::string plans = testing::VectorPlans(*program);
  EXPECT_NE(plans.find(expect), std::string::npos) << plans;
}

// With 16 vector registers (x86-64-v3's AVX2) a product of a row broadcast
// and 4 vectors holds 3 rows' broadcasts and streams the vectors through
// them: 12 accumulators + 3 broadcasts + 1 vector; loading the 4 vectors
// first leaves room for 2 rows (8 accumulators). With 32 registers (AVX-512)
// the plain order already holds 6 rows and stays. Run against the evaluator
// where the host has AVX2: a convolution with a masked co tail, padded
// borders (the guarded rows keep the plain order) and a shifted last block,
// and an odd matmul.
TEST(LlvmPipeline, HeldRowsOnSixteenRegisters) {
  auto avx2 = testing::PinnedDevice("llvm", testing::kAvx2Cpu);
  const char* held = "(rows' broadcasts held, vectors streamed)";
  Case conv{kConvRelu, {{"D", F32({1, 13, 17, 7})}, {"K", F32({3, 3, 60, 7})}}};
  Case matmul{testing::kMatmul, {{"A", F32({29, 41})}, {"B", F32({41, 32})}}};
  for (const auto& [c, expect] : {std::pair{conv, "block of 3 along y (the last block shifted back) "},
                                  std::pair{matmul, "block of 3 along i (the last block shifted back) "}}) {
    auto program = CheckOn(avx2, c, {false, 1}, {}, "held rows");
    std::string plans = testing::VectorPlans(*program);
    EXPECT_NE(plans.find(std::string(expect) + held), std::string::npos) << plans;
    std::string wide = testing::VectorPlans(*CheckOn(Avx512(), c, {false, 1}, {}, "held rows, AVX-512"));
    EXPECT_EQ(wide.find(held), std::string::npos) << wide;
  }
}

// A small image's few rows (13 in 5 blocks of 3 on 16 registers) share
// each reduction chunk's weights panel too few times: the work items take
// 7 of the 14 rows x instead (grid chunks), so a panel read from L2 serves
// 7 blocks, not 5 (bench/suite conv3x3 n1 14x14 256>256 on x86-64-v3).
// Against the evaluator where the host has AVX2: padded borders (x checked
// per block, y per row), a shifted last y block.
TEST(LlvmPipeline, SmallImagesChunkAlongTheGrid) {
  auto avx2 = testing::PinnedDevice("llvm", testing::kAvx2Cpu);
  Case c{kConvRelu, {{"D", F32({1, 14, 13, 72})}, {"K", F32({3, 3, 32, 72})}}};
  std::string plans = testing::VectorPlans(*CheckOn(avx2, c, {false, 1}, {}, "small image, AVX2"));
  EXPECT_NE(plans.find("Grid: 5 x 1 x 2 work items (one per y block, co block, 7 x values, n)"), std::string::npos)
      << plans;
  EXPECT_NE(plans.find("Reduction chunks: i, j ("), std::string::npos) << plans;
}

// x86-64-v2 has no FMA instructions, where an exactly rounded fma is a libm
// call per lane: the vector and reduce forms' sums of products are `mad`
// there (llvm.fmuladd: a multiply and an add), `fma` where the CPU fuses
// (x86-64-v3). A convolution (vector form) and a GEMV (reduce form), each
// against the evaluator where the host runs the code.
TEST(LlvmPipeline, SumsOfProductsFuseOnlyWithFmaInstructions) {
  Case conv{kConvRelu, {{"D", F32({1, 7, 9, 8})}, {"K", F32({3, 3, 8, 8})}}};
  Case gemv{"function (A[M, K], X[K]) -> (Y) { Y[i : M] = +(A[i, k] * X[k]); }",
            {{"A", F32({7, 300})}, {"X", F32({300})}}};
  for (const auto& [c, form] : {std::pair{conv, "Vector form"}, std::pair{gemv, "Reduction form"}}) {
    for (const char* cpu : {"x86-64-v2", testing::kAvx2Cpu}) {
      bool fused = std::string(cpu) != "x86-64-v2";
      auto program = CheckOn(testing::PinnedDevice("llvm", cpu), c, {false, 1}, {}, cpu);
      std::string plans = testing::VectorPlans(*program);
      EXPECT_NE(plans.find(form), std::string::npos) << cpu << "\n" << plans;
      std::string sem = sem::Print(program->compiled().Module());
      EXPECT_NE(sem.find(fused ? "= fma(" : "= mad("), std::string::npos) << cpu << "\n" << sem;
      EXPECT_EQ(sem.find(fused ? "= mad(" : "= fma("), std::string::npos) << cpu << "\n" << sem;
      EXPECT_EQ(program->TargetCode().find("@llvm.fma.") != std::string::npos, fused) << cpu;
    }
  }
}

// The math builtins on a CPU without FMA instructions (x86-64-v2) call the
// library instead of the inline math (no llvm.fma, which would be a libm
// call per lane); x86-64-v3 keeps the inline math. Both against the
// evaluator where the host runs the code.
TEST(LlvmPipeline, MathWithoutFmaCallsTheLibrary) {
  Case c{"function (X[N, M]) -> (Y) { Y = 0.5 * X * (1.0 + erf(X * 0.7)) + exp(X) + log(X * X + 1) + "
         "tanh(X) + pow(X * X + 1, X); }",
         {{"X", F32({5, 67})}}};
  for (const char* cpu : {"x86-64-v2", testing::kAvx2Cpu}) {
    auto program = CheckOn(testing::PinnedDevice("llvm", cpu), c, {false, 1}, {}, cpu, 1e-5);
    bool fma = std::string(cpu) != "x86-64-v2";
    EXPECT_EQ(program->TargetCode().find("@llvm.fma.") != std::string::npos, fma) << cpu;
  }
}

TEST(LlvmPipeline, ReductionsAndUnreached) {
  Case c = testing::ReductionsCase();
  for (const Form& f : {Form{false, 1}, Form{false, 1, false}, Form{true, 16}})
    Check(c, f, {}, "reductions");
}

TEST(LlvmPipeline, ElementwiseChainAndBroadcast) {
  Case c = testing::ElementwiseChainCase();
  for (const Form& f : {Form{false, 1}, Form{false, 64}}) Check(c, f, {}, "elementwise");
}

TEST(LlvmPipeline, FillAndDefault) {
  Case c = testing::FillDefaultCase();
  for (const Form& f : {Form{false, 1}, Form{true, 16}}) Check(c, f, {}, "fill/default");
}

TEST(LlvmPipeline, IntegersAndCasts) {
  Case c = testing::IntegersCase();
  Check(c, {false, 1}, {}, "ints");
}

TEST(LlvmPipeline, HalfAndDouble) {
  Case h{"function (A[N], B[N]) -> (C) { C = A * B + 1; }",
         {{"A", {lang::DataType::F16, {33}}}, {"B", {lang::DataType::F16, {33}}}}};
  Check(h, {false, 1}, {}, "f16", 1e-2);
  Case d{"function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }",
         {{"A", {lang::DataType::F64, {9, 7}}}, {"B", {lang::DataType::F64, {7, 5}}}}};
  for (const Form& f : {Form{false, 1}, Form{false, 1, false}, Form{true, 16}})
    Check(d, f, {}, "f64 matmul", 1e-9);
}

TEST(LlvmPipeline, BoolCombinations) {
  Check(testing::BoolCombinationsCase(), {false, 1}, {}, "bool");
}

TEST(LlvmPipeline, GatherUpsampleArgmax) {
  Case c = testing::GatherUpsampleArgmaxCase();
  Check(c, {false, 1}, {}, "gather/upsample/argmax");
}

TEST(LlvmPipeline, DeviceRegistration) {
  std::vector<std::string> ids = hal::ListDeviceIds();
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids.front(), "llvm:cpu");
  EXPECT_EQ(hal::OpenDevice("llvm:cpu")->id(), "llvm:cpu");
  EXPECT_EQ(Device()->id(), "llvm:cpu");
  std::string all = hal::DescribeAllDevices();
  EXPECT_NE(all.find("llvm:cpu\n"), std::string::npos) << all;
  EXPECT_NE(all.find("vec_size="), std::string::npos) << all;
  EXPECT_THROW(hal::OpenDevice("llvm:gpu"), UserError);
}

// The plans of `source` on `shapes` compiled for an AVX-512 CPU's model
// (testing::kAvx512Cpu: its 16-lane vectors and transpose rows store whole
// cache lines) with these cache sizes (bytes; l3 0: unknown), one per kernel.
std::vector<std::string> PlansWithCaches(const char* source, const std::map<std::string, lang::Shape>& shapes,
                                         int64_t l2, int64_t compute_units, int64_t l3) {
  lang::Program bound = lang::Bind(lang::Parse(MakeSource("caches.tile", source)), shapes);
  compiler::CompileOptions options;
  options.hw = Avx512()->hardware_model();
  options.hw.l2_bytes = l2;
  options.hw.compute_units = compute_units;
  options.hw.l3_bytes = l3;
  std::vector<std::string> plans;
  for (const auto& k : compiler::CompileProgram(bound, options).kernels) plans.push_back(k.code.plan_text);
  return plans;
}

TEST(LlvmPipeline, StreamingStoresOnlyWhereTheBuffersOutgrowHalfTheLastLevelCache) {
  // 2 x 1 MB of L2 and 32 MB of L3 (Zen 4's), compiled only. A 6 MB result
  // (above twice the L2 caches) whose kernel reads 6 MB stays cached: 12 MB
  // fit in half the L3. With three 6 MB inputs (24 MB) it streams, and so
  // does the first where the L3 is unknown.
  const int64_t mb = 1 << 20, n = 6 * mb / 4;
  const char* one = "function (X[N]) -> (Y) { Y = X * 2.0 + 1.0; }";
  const char* three = "function (A[N], B[N], C[N]) -> (Y) { Y = A * B + C; }";
  auto streams = [](const std::vector<std::string>& plans) {
    return plans.size() == 1 && plans[0].find("streaming stores") != std::string::npos;
  };
  auto one_plans = PlansWithCaches(one, {{"X", F32({n})}}, mb, 2, 32 * mb);
  ASSERT_EQ(one_plans.size(), 1u);
  EXPECT_NE(one_plans[0].find("Vector form"), std::string::npos) << one_plans[0];
  EXPECT_FALSE(streams(one_plans)) << one_plans[0];
  EXPECT_TRUE(streams(PlansWithCaches(three, {{"A", F32({n})}, {"B", F32({n})}, {"C", F32({n})}}, mb, 2, 32 * mb)));
  EXPECT_TRUE(streams(PlansWithCaches(one, {{"X", F32({n})}}, mb, 2, 0)));
  // The transpose form: a 10 MB result (above 4x the L2 caches) streams
  // where its 20 MB outgrow half the L3, not where the L3 holds 64 MB.
  const char* transpose = "function (I[N, M]) -> (O) { O[j, i : M, N] = =(I[i, j]); }";
  auto t32 = PlansWithCaches(transpose, {{"I", F32({1280, 2048})}}, mb, 2, 32 * mb);
  auto t64 = PlansWithCaches(transpose, {{"I", F32({1280, 2048})}}, mb, 2, 64 * mb);
  ASSERT_EQ(t32.size(), 1u);
  ASSERT_EQ(t64.size(), 1u);
  EXPECT_NE(t32[0].find("Transpose form"), std::string::npos) << t32[0];
  EXPECT_NE(t32[0].find("streaming stores"), std::string::npos) << t32[0];
  EXPECT_EQ(t64[0].find("streaming stores"), std::string::npos) << t64[0];
}

// The seed's conv compiles to a small module: a guard against code blow-up
// (counted in IR instructions, never timed).
TEST(LlvmPipeline, ConvCompilesToASmallModule) {
  lang::Program bound = lang::Bind(lang::Parse(MakeSource("conv.tile", kConvRelu)),
                                   {{"D", F32({1, 56, 56, 64})}, {"K", F32({3, 3, 64, 64})}});
  compiler::CompileOptions options;
  options.hw = Device()->hardware_model();
  compiler::CompiledProgram compiled = compiler::CompileProgram(bound, options);
  std::unique_ptr<hal::Executable> exe = Device()->Build(compiled.Module(), runtime::LaunchTableOf(compiled));
  ASSERT_NE(exe, nullptr);
  std::string ir = Device()->EmitCode(compiled.Module());
  EXPECT_NE(ir.find("define void @kernel_0_groups(ptr"), std::string::npos) << ir;
  // Instructions are the indented lines of the IR's function bodies.
  size_t instructions = 0;
  for (size_t pos = 0; (pos = ir.find("\n  ", pos)) != std::string::npos; ++pos) ++instructions;
  EXPECT_GT(instructions, 20u);
  EXPECT_LT(instructions, 20000u) << "the conv+ReLU module blew up";
}

}  // namespace
}  // namespace tilec
