// runtime::Program::CompileOnly, the path of `tilec compile`: a program
// compiled for a hardware model without a device (`--hw seed`), whose code
// another device emits, and which refuses to run.
#include <gtest/gtest.h>

#include "compiler/pipeline.h"
#include "compiler/sem/printer.h"
#include "runtime/program.h"
#include "tests/unit/pipeline_cases.h"

namespace tilec {
namespace {

TEST(CompileOnly, WithoutADeviceCompilesForTheGivenModel) {
  lang::Program bound = testing::BindCase(testing::ConvReluCase());
  compiler::CompileOptions options;
  options.hw = compiler::SeedExampleHardware();
  runtime::Program only = runtime::Program::CompileOnly(bound, nullptr, options);
  // The compiler's own result for that model, without tuned configurations.
  compiler::CompileOptions untuned = options;
  untuned.tuned = std::map<std::string, compiler::KernelConfig>{};
  compiler::CompiledProgram want = compiler::CompileProgram(bound, untuned);
  ASSERT_EQ(only.compiled().kernels.size(), want.kernels.size());
  EXPECT_EQ(sem::Print(only.compiled().Module()), sem::Print(want.Module()));
  for (const compiler::CompiledKernel& k : only.compiled().kernels) EXPECT_FALSE(k.tuned);

  // Its target code comes from a device given for it.
  std::shared_ptr<hal::Device> llvm = testing::DeviceFor("llvm");
  ASSERT_NE(llvm, nullptr);
  EXPECT_EQ(only.TargetCode(*llvm), llvm->EmitCode(want.Module()));

  // It has no device and cannot run.
  EXPECT_THROW(only.device(), InternalError);
  try {
    only.Run(testing::RandomInputs(bound));
    ADD_FAILURE() << "a program without a device ran";
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("without a device, so it cannot run"), std::string::npos) << e.message();
  }
}

TEST(CompileOnly, WithADeviceTakesItsModelAndDoesNotRun) {
  std::shared_ptr<hal::Device> llvm = testing::DeviceFor("llvm");
  ASSERT_NE(llvm, nullptr);
  lang::Program bound = testing::BindCase(testing::ConvReluCase());
  // No tuning cache: both compile from the cost model alone.
  auto untuned = [] {
    compiler::CompileOptions options;
    options.tuned.emplace();
    return options;
  };
  runtime::Program only = runtime::Program::CompileOnly(bound, llvm, untuned());
  runtime::Program built = runtime::Program::Compile(bound, llvm, untuned());
  EXPECT_EQ(sem::Print(only.compiled().Module()), sem::Print(built.compiled().Module()));
  EXPECT_EQ(only.TargetCode(), built.TargetCode());
  EXPECT_EQ(&only.device(), llvm.get());
  EXPECT_THROW(only.Run(testing::RandomInputs(bound)), UserError);
}

}  // namespace
}  // namespace tilec
