// The pipeline as a list of passes (compiler/pipeline.h): every pass prints
// when asked and is verified at its boundary; the form is chosen before the
// tile search, which only flat-form kernels run; ResolveConfig's precedence
// (compiler/config.h); a flat-form setting on a kernel in another form is a
// warning naming the kernel; the kernel plan's verifier (compiler/ir/verify.h)
// rejects broken plans. The hardware models are written out here, not the
// host's.
#include <gtest/gtest.h>

#include "compiler/config.h"
#include "compiler/ir/verify.h"
#include "compiler/pipeline.h"
#include "support/error.h"
#include "tests/unit/pipeline_check.h"

namespace tilec::compiler {
namespace {

using testing::Case;
using testing::F32;

constexpr const char* kMatmul = "function (A[M, L], B[L, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }";

lang::Program Matmul() { return testing::BindCase(Case(kMatmul, {{"A", F32({37, 29})}, {"B", F32({29, 41})}})); }

CompileOptions CpuOptions() {
  CompileOptions options;
  options.hw = testing::Cpu16();
  options.tuned = std::map<std::string, KernelConfig>{};  // no tuning cache
  return options;
}

TEST(PipelinePasses, EveryPassPrintsWhenAsked) {
  CompileOptions options = CpuOptions();
  std::vector<std::string> printed;
  options.print_after = {StageNames().begin(), StageNames().end()};
  options.print_sink = [&](const std::string& pass, const std::string& text) {
    EXPECT_FALSE(text.empty()) << pass;
    if (printed.empty() || printed.back() != pass) printed.push_back(pass);
  };
  options.vectorize = false;  // the flat form: every pass runs
  CompileProgram(Matmul(), options);
  EXPECT_EQ(printed, StageNames());
}

TEST(PipelinePasses, TheFormIsChosenBeforeTheTileSearch) {
  CompileOptions options = CpuOptions();
  CompiledProgram vector = CompileProgram(Matmul(), options);
  ASSERT_EQ(vector.kernels.size(), 1u);
  EXPECT_EQ(vector.kernels[0].code.form, Form::Vector);
  EXPECT_FALSE(vector.kernels[0].search) << "a kernel in the vector form searched tiles";
  EXPECT_TRUE(vector.kernels[0].tile.empty());
  for (const StageTime& t : vector.timings) EXPECT_NE(t.stage, "tiles");

  options.vectorize = false;
  CompiledProgram flat = CompileProgram(Matmul(), options);
  ASSERT_EQ(flat.kernels.size(), 1u);
  EXPECT_EQ(flat.kernels[0].code.form, Form::Flat);
  ASSERT_TRUE(flat.kernels[0].search);
  EXPECT_EQ(flat.kernels[0].tile, flat.kernels[0].search->best().tile);
}

TEST(PipelinePasses, AFlatFormSettingOnAnotherFormIsAWarningNamingTheKernel) {
  CompileOptions options = CpuOptions();
  options.forced_tiles["kernel_0"] = {1, 1, 1};
  options.candidate_rank["kernel_0"] = 2;
  CompiledProgram vector = CompileProgram(Matmul(), options);
  ASSERT_EQ(vector.warnings.size(), 2u);
  EXPECT_NE(vector.warnings[0].find("--tile kernel_0=1,1,1: kernel kernel_0 is in the vector form"),
            std::string::npos)
      << vector.warnings[0];
  EXPECT_NE(vector.warnings[1].find("--rank kernel_0=2"), std::string::npos) << vector.warnings[1];

  options.vectorize = false;
  options.candidate_rank.clear();
  CompiledProgram flat = CompileProgram(Matmul(), options);
  EXPECT_TRUE(flat.warnings.empty());
  EXPECT_EQ(flat.kernels[0].tile, (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(flat.kernels[0].source, ConfigSource::Forced);
}

// Precedence: the tuner's configuration by name, then --tile/--work-group,
// then --rank, then the tuning cache by signature, then the model.
TEST(PipelinePasses, ResolveConfigTakesTheSettingsInPrecedenceOrder) {
  lang::Program bound = Matmul();
  CompileOptions options = CpuOptions();
  options.vectorize = false;
  DerivedOptions derived = DeriveOptions(options);
  KernelPlan plan = Lower(bound, derived.lower);
  ASSERT_EQ(plan.kernels.size(), 1u);
  const KernelSpec& spec = plan.kernels[0];
  KernelSignature signature = SignKernel(spec);

  EXPECT_EQ(ResolveConfig(spec, signature, options, derived).source, ConfigSource::Model);

  KernelConfig cached;
  cached.tile = {1, 1, 1};
  cached.vector_rows = 3;
  (*options.tuned)[signature.hash] = cached;
  ResolvedConfig c = ResolveConfig(spec, signature, options, derived);
  EXPECT_EQ(c.source, ConfigSource::Cache);
  ASSERT_TRUE(c.tile);
  EXPECT_EQ(c.codegen.vector_rows, 3);

  options.candidate_rank["kernel_0"] = 1;
  c = ResolveConfig(spec, signature, options, derived);
  EXPECT_EQ(c.source, ConfigSource::Rank);
  EXPECT_EQ(c.rank, 1);
  EXPECT_FALSE(c.config) << "--rank names the kernel: the cache's configuration is not applied";

  options.forced_tiles["kernel_0"] = {2, 2, 2};
  c = ResolveConfig(spec, signature, options, derived);
  EXPECT_EQ(c.source, ConfigSource::Forced);
  EXPECT_EQ(c.tile, (std::vector<int64_t>{2, 2, 2}));

  KernelConfig tuner;
  tuner.tile = {3, 3, 3};
  tuner.use_local = false;
  options.kernel_config["kernel_0"] = tuner;
  c = ResolveConfig(spec, signature, options, derived);
  EXPECT_EQ(c.source, ConfigSource::Tuner);
  EXPECT_EQ(c.tile, (std::vector<int64_t>{3, 3, 3}));
  EXPECT_EQ(c.rank, 0) << "the tuner's tile is the only candidate";

  // A cached tile that does not fit the kernel is dropped, not an error.
  CompileOptions stale = CpuOptions();
  KernelConfig big;
  big.tile = {1000, 1, 1};
  (*stale.tuned)[signature.hash] = big;
  c = ResolveConfig(spec, signature, stale, DeriveOptions(stale));
  EXPECT_EQ(c.source, ConfigSource::Model);
  EXPECT_FALSE(c.tile);
}

KernelSpec Copy(const std::string& name, const std::string& in, const std::string& out) {
  KernelSpec k;
  k.name = name;
  k.kind = KernelKind::Special;
  k.inputs = {in};
  k.outputs = {out};
  return k;
}

TEST(PipelinePasses, TheKernelPlanVerifierRejectsBrokenPlans) {
  lang::Program p = testing::BindCase(Case("function (A[N]) -> (C) { B = A + 1; C = B * 2; }", {{"A", F32({5})}}));
  KernelPlan good;
  good.kernels = {Copy("kernel_0", "A", "B"), Copy("kernel_1", "B", "C")};
  good.temporaries = {"B"};
  EXPECT_NO_THROW(Verify(good, p, "test"));

  KernelPlan reversed = good;
  std::swap(reversed.kernels[0], reversed.kernels[1]);
  EXPECT_THROW(Verify(reversed, p, "test"), InternalError);  // reads B before it is written

  KernelPlan twice = good;
  twice.kernels[1].name = "kernel_0";
  EXPECT_THROW(Verify(twice, p, "test"), InternalError);

  KernelPlan undeclared = good;
  undeclared.kernels[1].inputs.push_back("Z");
  EXPECT_THROW(Verify(undeclared, p, "test"), InternalError);

  KernelPlan no_output = good;
  no_output.kernels.pop_back();
  EXPECT_THROW(Verify(no_output, p, "test"), InternalError);  // nothing writes C

  // A tensor without elements needs no kernel (Lower gives it none).
  lang::Program empty = testing::BindCase(Case("function (A[N]) -> (C) { C = A + 1; }", {{"A", F32({0})}}));
  EXPECT_NO_THROW(Verify(KernelPlan{}, empty, "test"));

  KernelPlan io_temporary = good;
  io_temporary.temporaries.push_back("C");
  EXPECT_THROW(Verify(io_temporary, p, "test"), InternalError);
}

}  // namespace
}  // namespace tilec::compiler
