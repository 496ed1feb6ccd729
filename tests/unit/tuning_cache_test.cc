// The tuning cache (runtime/tuning_cache.h) and the tuner (runtime/tuner.h):
// records round-trip through JSON lines; corrupt lines and records of
// another device or version are skipped with one notice each and never
// applied; a small tune with a fixed seed on llvm and on OpenCL records a
// winner that a later compile applies and whose outputs match the reference
// evaluator. No timing assertions: only what was tried and chosen.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "pipeline_check.h"
#include "compiler/ir/kernel_signature.h"
#include "runtime/tuner.h"
#include "runtime/tuning_cache.h"

namespace tilec::runtime {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = fs::temp_directory_path() / fmt::format("tilec_tuning_test_{}", rd());
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

TuningRecord SampleRecord(const std::string& device, const std::string& version) {
  TuningRecord r;
  r.signature = "0123456789abcdef";
  r.device = device;
  r.version = version;
  r.kernel = "contraction [13, 17, 11]";
  r.program = "mm.tile";
  r.winner.tile = {4, 8, 11};
  r.winner.vector = false;
  r.median_ms = 0.5;
  r.model_ms = 0.75;
  r.flops = 4862;
  TuningTrial model;
  model.median_ms = 0.75;
  model.min_ms = 0.7;
  model.max_ms = 0.9;
  model.ok = true;
  model.model_score = 0.25;
  TuningTrial bad;
  bad.config.vector = true;
  bad.config.vector_rows = 3;
  bad.config.use_local = true;
  bad.note = "mismatch: C[3] is 1 instead of 2";
  r.trials = {model, bad};
  return r;
}

TEST(TuningCache, RecordRoundTripsThroughJson) {
  TuningRecord r = SampleRecord("llvm:cpu | host", "0.1.0");
  std::string line = ToJsonLine(r);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  std::string error;
  std::optional<TuningRecord> back = ParseJsonLine(line, &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->signature, r.signature);
  EXPECT_EQ(back->device, r.device);
  EXPECT_EQ(back->winner, r.winner);
  EXPECT_EQ(back->median_ms, 0.5);
  ASSERT_EQ(back->trials.size(), 2u);
  EXPECT_EQ(back->trials[1].config, r.trials[1].config);
  EXPECT_EQ(back->trials[1].note, r.trials[1].note);
  EXPECT_FALSE(back->trials[1].ok);
  EXPECT_FALSE(ParseJsonLine("{\"signature\": 3", &error));
  EXPECT_FALSE(ParseJsonLine("[1, 2]", &error));
  EXPECT_FALSE(ParseJsonLine(R"({"signature": "a", "device": "d", "version": "v", "winner": {"tile": [0]}})",
                             &error));
  EXPECT_NE(error.find("tile"), std::string::npos) << error;
}

TEST(TuningCache, SkipsCorruptAndForeignLinesWithOneNoticeEach) {
  TempDir dir;
  TuningCache cache({true, dir.File("sub/tuning.jsonl"), "0.1.0"});
  EXPECT_TRUE(cache.Load("dev").records.empty());  // no file yet
  TuningRecord mine = SampleRecord("dev", "0.1.0");
  ASSERT_TRUE(cache.Append(SampleRecord("other device", "0.1.0")));
  ASSERT_TRUE(cache.Append(SampleRecord("dev", "0.0.9")));
  ASSERT_TRUE(cache.Append(mine));
  {
    std::ofstream out(dir.File("sub/tuning.jsonl"), std::ios::app);
    out << "{\"signature\": \"truncated\n\nnot json at all\n";
  }
  // The last record of a signature wins.
  mine.winner.tile = {1, 1, 1};
  ASSERT_TRUE(cache.Append(mine));

  TuningLookup lookup = cache.Load("dev");
  ASSERT_EQ(lookup.records.size(), 1u);
  EXPECT_EQ(lookup.records.at(mine.signature).winner.tile, (std::vector<int64_t>{1, 1, 1}));
  ASSERT_EQ(lookup.notices.size(), 2u);
  EXPECT_NE(lookup.notices[0].find("skipped 2 lines that do not parse (first: line 4"), std::string::npos)
      << lookup.notices[0];
  EXPECT_NE(lookup.notices[1].find("ignored 2 records of another device or Tilec version"), std::string::npos)
      << lookup.notices[1];
  EXPECT_EQ(TunedConfigs(lookup).size(), 1u);

  // Another device sees none of them.
  EXPECT_TRUE(cache.Load("elsewhere").records.empty());
  // Disabled: nothing read, nothing written.
  TuningCache off({false, dir.File("sub/tuning.jsonl"), "0.1.0"});
  EXPECT_TRUE(off.Load("dev").records.empty());
  EXPECT_FALSE(off.Append(mine));
}

// A matmul whose sizes divide no block.
const testing::Case kMatmul("function (A[M, L], B[L, N]) -> (C) {\n  C[i, j : M, N] = +(A[i, k] * B[k, j]);\n}\n",
                            {{"A", testing::F32({13, 11})}, {"B", testing::F32({11, 17})}});

void TuneAndApply(const std::string& device_prefix) {
  std::shared_ptr<hal::Device> device = testing::DeviceFor(device_prefix);
  if (!device) GTEST_SKIP() << "no " << device_prefix << " device";
  TempDir dir;
  TuningCache cache({true, dir.File("tuning.jsonl"), "test"});
  lang::Program program = testing::BindCase(kMatmul);
  TuneOptions options;
  options.trials = 4;
  options.budget_s = 120;
  options.seed = 7;
  options.top_k = 2;
  int trial_events = 0;
  options.progress = [&](const TuneProgress& p) { trial_events += p.event == TuneProgress::Event::Trial; };
  TuneResult result = TuneProgram(program, device, cache, options);
  ASSERT_EQ(result.kernels.size(), 1u);
  const KernelTuneResult& k = result.kernels[0];
  EXPECT_FALSE(k.from_cache);
  EXPECT_TRUE(k.stored) << k.store_error;
  EXPECT_GE(k.record.trials.size(), 2u);
  EXPECT_LE(k.record.trials.size(), 4u);
  EXPECT_EQ(trial_events, static_cast<int>(k.record.trials.size()));
  EXPECT_TRUE(k.record.trials[0].ok) << k.record.trials[0].note;  // the model's pick
  EXPECT_EQ(k.record.trials[0].config, compiler::KernelConfig{});
  for (const TuningTrial& t : k.record.trials) EXPECT_TRUE(t.ok) << t.note;

  // The cache now answers for this device; a second tune is served from it.
  TuningLookup lookup = cache.Load(DeviceFingerprint(*device));
  ASSERT_EQ(lookup.records.size(), 1u);
  EXPECT_EQ(lookup.records.begin()->second.winner, k.record.winner);
  options.progress = nullptr;
  TuneResult again = TuneProgram(program, device, cache, options);
  ASSERT_EQ(again.kernels.size(), 1u);
  EXPECT_TRUE(again.kernels[0].from_cache);

  // A compile with the cache's configurations applies the winner, and
  // its outputs match the reference evaluator.
  compiler::CompileOptions compile;
  compile.tuned = TunedConfigs(lookup);
  Program tuned = Program::Compile(program, device, compile);
  const compiler::CompiledKernel& ck = tuned.compiled().kernels.at(0);
  EXPECT_TRUE(ck.tuned);
  EXPECT_EQ(ck.signature, k.record.signature);
  testing::CompareWithEvaluator(tuned, "tuned " + device_prefix);
  // An empty map applies none.
  compile.tuned = std::map<std::string, compiler::KernelConfig>{};
  EXPECT_FALSE(Program::Compile(program, device, compile).compiled().kernels.at(0).tuned);
}

// A record's winner (tile in canonical order, flat form) is what the kernel
// compiles with, and its results still match the evaluator.
void CachedWinnerIsApplied(const std::string& device_prefix) {
  std::shared_ptr<hal::Device> device = testing::DeviceFor(device_prefix);
  if (!device) GTEST_SKIP() << "no " << device_prefix << " device";
  lang::Program program = testing::BindCase(kMatmul);
  compiler::CompileOptions options;
  options.tuned = std::map<std::string, compiler::KernelConfig>{};
  Program untuned = Program::Compile(program, device, options);
  const compiler::CompiledKernel& k = untuned.compiled().kernels.at(0);
  EXPECT_FALSE(k.tuned);
  compiler::KernelConfig winner;
  winner.tile = {2, 4, 3};  // canonical order
  winner.vector = false;
  options.tuned = std::map<std::string, compiler::KernelConfig>{{k.signature, winner}};
  Program tuned = Program::Compile(program, device, options);
  const compiler::CompiledKernel& t = tuned.compiled().kernels.at(0);
  EXPECT_TRUE(t.tuned);
  EXPECT_EQ(t.tile, compiler::FromCanonical(compiler::SignKernel(t.spec), winner.tile));
  EXPECT_TRUE(t.code.plan_text.empty());
  testing::CompareWithEvaluator(tuned, "cached winner " + device_prefix);
  // --tile names the kernel: it wins over the cache.
  options.forced_tiles["kernel_0"] = {1, 1, 1};
  EXPECT_FALSE(Program::Compile(program, device, options).compiled().kernels.at(0).tuned);
  // A tile that does not fit the kernel is ignored, not an error.
  options.forced_tiles.clear();
  winner.tile = {99, 1, 1};
  options.tuned = std::map<std::string, compiler::KernelConfig>{{k.signature, winner}};
  EXPECT_FALSE(Program::Compile(program, device, options).compiled().kernels.at(0).tuned);
}

TEST(Tuner, CachedWinnerIsAppliedOnLlvm) { CachedWinnerIsApplied("llvm"); }
TEST(Tuner, CachedWinnerIsAppliedOnOpenCl) { CachedWinnerIsApplied("opencl"); }

TEST(Tuner, SmallTuneOnLlvmIsAppliedByCompile) { TuneAndApply("llvm"); }
TEST(Tuner, SmallTuneOnOpenClIsAppliedByCompile) { TuneAndApply("opencl"); }

}  // namespace
}  // namespace tilec::runtime
