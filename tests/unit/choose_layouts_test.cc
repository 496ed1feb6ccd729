// Layout choice and relayouts (compiler/passes/choose_layouts.h): programs whose
// tensors are in different layouts run on both backends against the
// reference evaluator (sizes that fill no block); `any` resolves to a
// concrete layout; a relayout is inserted where the estimate says it pays
// and not where it does not; the C ABI reports the chosen layout.
#include <gtest/gtest.h>

#include "compiler/passes/choose_layouts.h"
#include "compiler/pipeline.h"
#include "hal/llvm/cpu_info.h"
#include <tilec/tilec.h>

#include "tests/unit/pipeline_check.h"

namespace tilec {
namespace {

using testing::Case;
using testing::F32;

constexpr const char* kConvRelu =
    "function (D[N, C, H, W], K[CO, C, KH, KW]) -> (R) {\n"
    "  O[n, co, x, y : N, CO, H, W] = +(D[n, ci, x + i - 1, y + j - 1] * K[co, ci, i, j]), i < 3, j < 3;\n"
    "  R = relu(O);\n"
    "}\n";

Case Conv(std::vector<int64_t> d, std::vector<int64_t> k, std::map<std::string, std::string> layouts) {
  return Case(kConvRelu, {{"D", F32(std::move(d))}, {"K", F32(std::move(k))}}, std::move(layouts));
}

int Relayouts(const compiler::CompiledProgram& c) {
  int n = 0;
  for (const auto& k : c.kernels) n += !k.spec.why.empty();
  return n;
}

std::vector<Case> MixedCases() {
  return {
      Conv({1, 20, 9, 11}, {20, 20, 3, 3}, {{"R", "nChw16c"}}),                       // NCHW in, nChw16c out
      Conv({1, 19, 7, 10}, {13, 19, 3, 3}, {{"D", "nhwc"}, {"R", "nChw8c"}}),          // NHWC in, nChw8c out
      Conv({2, 17, 6, 5}, {20, 17, 3, 3}, {{"K", "OIhw16i16o"}}),                      // blocked weights, NCHW data
      Conv({1, 21, 6, 7}, {12, 21, 3, 3}, {{"D", "nChw8c"}, {"R", "nChw8c"}}),         // nChw8c through
      Conv({1, 18, 5, 9}, {11, 18, 3, 3}, {{"D", "nChw8c"}, {"R", "any"}}),            // any
      Conv({1, 10, 7, 9}, {18, 10, 3, 3}, {{"K", "Acdb4a"}, {"R", "nChw4c"}}),         // weights blocked by 4 along co
  };
}

void CheckMixed(const std::shared_ptr<hal::Device>& device, const std::string& target) {
  for (bool relayout : {true, false})
    for (const Case& c : MixedCases()) {
      compiler::CompileOptions options;
      options.layouts.relayout = relayout;
      std::string what = fmt::format("{} relayout {} layouts", target, relayout);
      for (const auto& [t, l] : c.layouts) what += fmt::format(" {}={}", t, l);
      auto program = testing::CheckCase(device, c, options, what);
      ASSERT_TRUE(program) << what;
      EXPECT_FALSE(program->bound().Tensor("R").layout.any) << what;
      if (!relayout) {
        EXPECT_EQ(Relayouts(program->compiled()), 0) << what;
      }
    }
}

TEST(ChooseLayouts, MixedLayoutsMatchEvaluatorOnLlvm) { CheckMixed(hal::OpenDevice("llvm"), "llvm"); }

TEST(ChooseLayouts, MixedLayoutsMatchEvaluatorOnOpenCl) {
  auto device = testing::DeviceFor("opencl");
  if (!device) GTEST_SKIP() << "no OpenCL device";
  CheckMixed(device, "opencl");
}

// nChw8c in and out on 16 lanes: the kernel is estimated ~2x faster in
// another layout, which pays for the relayouts: one is inserted, with its reason.
TEST(ChooseLayouts, RelayoutWhereItPays) {
  lang::Program bound = testing::BindCase(Conv({1, 64, 56, 56}, {64, 64, 3, 3}, {{"D", "nChw8c"}, {"R", "nChw8c"}}));
  compiler::LayoutChoice choice = compiler::ChooseLayouts(bound, testing::Cpu16());
  ASSERT_FALSE(choice.why.empty());
  EXPECT_NE(choice.why.begin()->second.find("why: estimated"), std::string::npos);
  EXPECT_GT(choice.program.ops.size(), bound.ops.size());
  EXPECT_EQ(choice.program.Tensor("R").layout, bound.Tensor("R").layout);  // the caller's layout stays
  compiler::CompileOptions options;
  options.hw = testing::Cpu16();
  compiler::CompiledProgram compiled = compiler::CompileProgram(bound, options);
  EXPECT_GE(Relayouts(compiled), 1);
  options.layouts.relayout = false;
  EXPECT_EQ(Relayouts(compiler::CompileProgram(bound, options)), 0);
}

// The same on a core whose 8-lane vectors run at the 16-lane rate (Zen 4:
// HardwareModel::half_vector_rate = 1): nChw8c's vectors lose nothing, no
// form is estimated faster, and the kernel stays in nChw8c with 8-lane
// vectors (C = 20: 0.137 ms there against 0.172 ms through NCHW and two
// relayouts, bench_peers L6).
TEST(ChooseLayouts, NoRelayoutWhereHalfVectorsRunAtFullRate) {
  compiler::HardwareModel zen4 = testing::Cpu16();
  zen4.half_vector_rate = 1.0;
  for (int64_t c : {64, 20}) {
    lang::Program bound = testing::BindCase(Conv({1, c, 56, 56}, {c, c, 3, 3}, {{"D", "nChw8c"}, {"R", "nChw8c"}}));
    EXPECT_FALSE(compiler::ChooseLayouts(bound, testing::Cpu16()).why.empty()) << c;  // at half rate: relayouts
    compiler::LayoutChoice choice = compiler::ChooseLayouts(bound, zen4);
    EXPECT_TRUE(choice.why.empty()) << c << ": " << fmt::format("{}", fmt::join(choice.decisions, "\n"));
    compiler::CompileOptions options;
    options.hw = zen4;
    compiler::CompiledProgram compiled = compiler::CompileProgram(bound, options);
    EXPECT_EQ(Relayouts(compiled), 0) << c;
    bool eight = false;
    for (const auto& k : compiled.kernels)
      eight |= k.code.plan_text.find("x 8 lanes of float along co%8") != std::string::npos;
    EXPECT_TRUE(eight) << c;
  }
}

// Weights blocked by 4 along the output channel (MACE's image_conv_filter
// order Acdb4a) with the data and result in blocks of 4: computed in another
// layout, the weights are relayouted to row-major (so Lower packs them in
// panels of whole vectors) instead of giving the kernel 4-lane vectors.
TEST(ChooseLayouts, WeightsBlockedAlongTheOutputChannelAreRelayouted) {
  lang::Program bound = testing::BindCase(
      Conv({1, 64, 56, 56}, {64, 64, 3, 3}, {{"D", "nChw4c"}, {"K", "Acdb4a"}, {"R", "nChw4c"}}));
  compiler::LayoutChoice choice = compiler::ChooseLayouts(bound, testing::Cpu16());
  bool weights = false;
  for (const std::string& d : choice.decisions)
    weights |= d.rfind("K: relayouted from Acdb4a into row-major", 0) == 0;
  EXPECT_TRUE(weights) << fmt::format("{}", fmt::join(choice.decisions, "\n"));
  EXPECT_EQ(choice.program.Tensor("K").layout, bound.Tensor("K").layout);  // the caller's layout stays
  compiler::CompileOptions options;
  options.hw = testing::Cpu16();
  compiler::CompiledProgram compiled = compiler::CompileProgram(bound, options);
  bool whole = false;  // the convolution's vectors are 16 lanes wide
  for (const auto& k : compiled.kernels)
    whole |= k.code.plan_text.find("x 16 lanes of float along co") != std::string::npos;
  EXPECT_TRUE(whole);
}

// Plain NCHW (56 of 64 lanes) and nChw16c: no form is 20% faster with relayouts.
TEST(ChooseLayouts, NoRelayoutWhereItDoesNotPay) {
  for (const char* layout : {"nchw", "nChw16c"}) {
    lang::Program bound =
        testing::BindCase(Conv({1, 64, 56, 56}, {64, 64, 3, 3}, {{"D", layout}, {"R", layout}}));
    compiler::LayoutChoice choice = compiler::ChooseLayouts(bound, testing::Cpu16());
    EXPECT_TRUE(choice.why.empty()) << layout;
    EXPECT_EQ(choice.program.ops.size(), bound.ops.size()) << layout;
  }
}

TEST(ChooseLayouts, AnyResolvesToAConcreteLayout) {
  lang::Program bound = testing::BindCase(Conv({1, 32, 10, 10}, {32, 32, 3, 3}, {{"R", "any"}}));
  ASSERT_TRUE(bound.Tensor("R").layout.any);
  compiler::LayoutChoice choice = compiler::ChooseLayouts(bound, testing::Cpu16());
  const lang::Layout& r = choice.program.Tensor("R").layout;
  EXPECT_FALSE(r.any);
  EXPECT_NE(lang::ToSpec(r), "any");
  ASSERT_FALSE(choice.decisions.empty());
  EXPECT_NE(choice.decisions[0].find("R: any -> "), std::string::npos) << choice.decisions[0];
  // Off: row-major.
  compiler::ChooseLayoutsOptions off;
  off.relayout = false;
  EXPECT_TRUE(compiler::ChooseLayouts(bound, testing::Cpu16(), off).program.Tensor("R").layout.IsRowMajor({1, 32, 10, 10}));
  // An elementwise-only program: an any result takes its operand's layout.
  lang::Program add = lang::Bind(lang::Parse(MakeSource("t.tile", "function (A[N, C, H, W]) -> (B) { B = A + 1; }")),
                                 {{"A", F32({1, 20, 3, 3})}}, {{"A", "nChw16c"}, {"B", "any"}});
  EXPECT_EQ(lang::ToSpec(compiler::ChooseLayouts(add, testing::Cpu16()).program.Tensor("B").layout), "nChw16c");
}

TEST(ChooseLayouts, AnyOnAnInputIsAUserError) {
  try {
    testing::BindCase(Conv({1, 4, 5, 5}, {4, 4, 3, 3}, {{"D", "any"}}));
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("input 'D'"), std::string::npos) << e.what();
  }
}

// The C ABI: an output declared `any` reports the layout chosen, and the
// run returns logical data.
TEST(ChooseLayouts, CApiReportsTheChosenLayout) {
  tilec_device device = nullptr;
  ASSERT_EQ(tilec_device_open("llvm", &device, nullptr), TILEC_OK);
  int64_t d_dims[] = {1, 18, 5, 6}, k_dims[] = {12, 18, 3, 3};
  tilec_tensor_spec in[] = {{"D", TILEC_F32, 4, d_dims, "nChw8c"}, {"K", TILEC_F32, 4, k_dims, nullptr}};
  tilec_layout_spec any{"R", "any"};
  tilec_compile_options o{};
  o.layouts = &any;
  o.num_layouts = 1;
  tilec_program p = nullptr;
  tilec_error err = nullptr;
  ASSERT_EQ(tilec_program_compile(device, kConvRelu, nullptr, in, 2, &o, &p, &err), TILEC_OK)
      << (err ? tilec_error_message(err) : "");
  tilec_tensor_info info{};
  ASSERT_EQ(tilec_program_output(p, 0, &info, nullptr), TILEC_OK);
  EXPECT_STREQ(info.name, "R");
  std::string layout = info.layout;
  EXPECT_NE(layout, "any");
  EXPECT_FALSE(layout.empty());
  tilec_program_release(p);
  tilec_device_release(device);
}

// An elementwise op read by two contractions' groups: the first group
// computes O = X + Z in a blocked layout as O_re0 and queues the copy back
// into O; the second (Z's) saw no reader of O_re0 outside its group (the
// copy was only queued), renamed it again without a copy back, and the
// queued copy read O_re0 unwritten: zeros on llvm (difftest, gradient
// programs). Every tensor an op reads is now an input or written before,
// for each CPU's model, and the program runs right on the host's.
TEST(ChooseLayouts, QueuedRelayoutKeepsItsSourceWritten) {
  const char* source =
      "function (A[N], G[M]) -> (O) {\n"
      "  T1[k, j, i : 1, 1, 6] = +(A[i]);\n"
      "  X[q : 7] = +(T1[o, p, p - 2] * G[-q]);\n"
      "  Z[i : 7] = +(A[i]);\n"
      "  O = X + Z;\n"
      "}\n";
  Case c(source, {{"A", {lang::DataType::F64, {7}}}, {"G", {lang::DataType::F64, {6}}}});
  lang::Program bound = testing::BindCase(c);
  int relayouted = 0;
  for (const char* cpu : {"znver3", "znver4", "skylake-avx512", "x86-64-v3", "x86-64-v2"}) {
    compiler::LayoutChoice choice = compiler::ChooseLayouts(bound, hal::cpu::CpuHardwareModel(hal::cpu::NamedCpu(cpu)));
    relayouted += !choice.why.empty();
    std::set<std::string> defined(choice.program.inputs.begin(), choice.program.inputs.end());
    for (const lang::Op& op : choice.program.ops) {
      for (const std::string& t : lang::Reads(op))
        EXPECT_TRUE(defined.count(t)) << cpu << ": " << t << " is read before it is written:\n"
                                      << fmt::format("{}", fmt::join(choice.decisions, "\n"));
      for (const std::string& t : lang::Writes(op)) defined.insert(t);
    }
    for (const std::string& o : choice.program.outputs) EXPECT_TRUE(defined.count(o)) << cpu << ": " << o;
  }
  EXPECT_GE(relayouted, 1) << "no CPU's model relayouts O: the case no longer tests the queued copy";
  for (const char* name : {"llvm", "opencl"})
    if (std::shared_ptr<hal::Device> device = testing::DeviceFor(name)) testing::CheckCase(device, c, {}, name);
}

// A depthwise convolution has a channel too (c: alone in the output, used
// by the weights, alone in one dimension of the data): after a convolution
// whose result is channels-inner (mobilenet_v2's first layers), its free
// result follows the data into channels-last and gets the vector form along
// c, instead of staying NCHW with no vector form (scalar code).
TEST(ChooseLayouts, DepthwiseFollowsItsDataChannelsInner) {
  const char* source =
      "function (D[N, C, H, W], K[C, KO, KH, KW], B[C, O1, O2]) -> (Y) {\n"
      "  T[n, c, x, y : N, C, H, W] = +(D[n, c, x + i - 1, y + j - 1] * K[c, 0, i, j]), i < 3, j < 3;\n"
      "  U = T + B;\n"
      "  Y = (U < 0.0 ? 0.0 : U);\n"
      "}\n";
  for (const char* cpu : {"znver3", "znver4", "skylake-avx512"}) {
    compiler::HardwareModel hw = hal::cpu::CpuHardwareModel(hal::cpu::NamedCpu(cpu));
    Case c(source, {{"D", F32({1, 32, 56, 56})}, {"K", F32({32, 1, 3, 3})}, {"B", F32({32, 1, 1})}},
           {{"D", "nhwc"}, {"Y", "any"}});
    compiler::LayoutChoice choice = compiler::ChooseLayouts(testing::BindCase(c), hw);
    EXPECT_EQ(choice.program.Tensor("Y").layout.name, "nhwc")
        << cpu << ":\n" << fmt::format("{}", fmt::join(choice.decisions, "\n"));
    EXPECT_TRUE(choice.why.empty()) << cpu << ": no relayout is needed";
    // Row-major data: the depthwise stays NCHW (vectors along y), nothing moves.
    Case plain(source, {{"D", F32({1, 32, 56, 56})}, {"K", F32({32, 1, 3, 3})}, {"B", F32({32, 1, 1})}},
               {{"Y", "any"}});
    EXPECT_TRUE(compiler::ChooseLayouts(testing::BindCase(plain), hw).program.Tensor("Y").layout.IsRowMajor(
        {1, 32, 56, 56}))
        << cpu;
  }
  // Sizes no block or vector divides, on both backends.
  Case odd(source, {{"D", F32({2, 19, 13, 11})}, {"K", F32({19, 1, 3, 3})}, {"B", F32({19, 1, 1})}},
           {{"D", "nhwc"}, {"Y", "any"}});
  for (const char* name : {"llvm", "opencl"})
    if (std::shared_ptr<hal::Device> device = testing::DeviceFor(name)) testing::CheckCase(device, odd, {}, name);
}

}  // namespace
}  // namespace tilec
