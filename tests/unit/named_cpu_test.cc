// The hardware model of a CPU named by the user (hal::DeviceOptions::cpu,
// `--cpu NAME`, TILEC_CPU, tilec_device_open_cpu): LLVM's features for the
// name, a table of caches, and the choices derived from them; devices that
// plan and compile for it on any host, and run its code where the host can.
#include <gtest/gtest.h>

#include "hal/llvm/cpu_info.h"
#include "hal/llvm/llvm_device.h"
#include "tilec/tilec.h"
#include "tests/unit/pipeline_cases.h"

namespace tilec {
namespace {

using hal::cpu::CpuHardwareModel;
using hal::cpu::NamedCpu;
using testing::F32;

// The model's fields that follow from the instruction set and the caches.
std::string IsaFields(const compiler::HardwareModel& hw) {
  return fmt::format("vec_size={} vector_registers={} max_regs={} half_vector_rate={} has_fma={} "
                     "goal_flops_per_byte={} l1={} l2={} l3={}",
                     hw.vec_size, hw.vector_registers, hw.max_regs, hw.half_vector_rate, hw.has_fma,
                     hw.goal_flops_per_byte, hw.l1_bytes, hw.l2_bytes, hw.l3_bytes);
}

// Three x86 CPUs of three vector widths, each model checked as a golden.
// (AArch64 CPUs need LLVM's AArch64 target, which the llvm device does not
// initialize: only the host's architecture is named.)
TEST(NamedCpus, ModelsOfAnAvx2AnAvx512AndAnSse4Cpu) {
  struct Want {
    const char* name;
    bool avx512f, avx2, fma;
    const char* fields;
  };
  for (const Want& w : {
           Want{"znver3", false, true, true,
                "vec_size=8 vector_registers=16 max_regs=512 half_vector_rate=0.5 has_fma=true "
                "goal_flops_per_byte=2 l1=32768 l2=524288 l3=33554432"},
           Want{"znver4", true, true, true,
                "vec_size=16 vector_registers=32 max_regs=2048 half_vector_rate=1 has_fma=true "
                "goal_flops_per_byte=4 l1=32768 l2=1048576 l3=33554432"},
           Want{"skylake-avx512", true, true, true,
                "vec_size=16 vector_registers=32 max_regs=2048 half_vector_rate=0.5 has_fma=true "
                "goal_flops_per_byte=4 l1=32768 l2=1048576 l3=33554432"},
           Want{"x86-64-v3", false, true, true,
                "vec_size=8 vector_registers=16 max_regs=512 half_vector_rate=0.5 has_fma=true "
                "goal_flops_per_byte=2 l1=32768 l2=1048576 l3=33554432"},
           Want{"x86-64-v2", false, false, false,
                "vec_size=4 vector_registers=16 max_regs=256 half_vector_rate=0.5 has_fma=false "
                "goal_flops_per_byte=0.5 l1=32768 l2=1048576 l3=33554432"},
       }) {
    hal::cpu::CpuInfo cpu = NamedCpu(w.name);
    EXPECT_TRUE(cpu.named) << w.name;
    EXPECT_EQ(cpu.llvm_name, w.name);
    EXPECT_EQ(cpu.avx512f, w.avx512f) << w.name;
    EXPECT_EQ(cpu.avx2, w.avx2) << w.name;
    EXPECT_EQ(cpu.fma, w.fma) << w.name;
    EXPECT_EQ(cpu.threads, hal::cpu::HostCpu().threads) << w.name;
    compiler::HardwareModel hw = CpuHardwareModel(cpu);
    EXPECT_NO_THROW(hw.Validate()) << w.name;
    EXPECT_EQ(hw.name, w.name);
    EXPECT_EQ(IsaFields(hw), w.fields) << w.name;
  }
}

TEST(NamedCpus, UnknownNamesAreAUserErrorListingTheKnownOnes) {
  try {
    NamedCpu("znver99");
    FAIL() << "no error";
  } catch (const UserError& e) {
    std::string m = e.message();
    EXPECT_NE(m.find("unknown CPU 'znver99'"), std::string::npos) << m;
    EXPECT_NE(m.find("znver3"), std::string::npos) << m;
    EXPECT_NE(m.find("x86-64-v3"), std::string::npos) << m;
  }
  EXPECT_THROW(hal::OpenDevice("llvm", {.cl_images = hal::ImageAccess::kAuto, .cpu = "pentium9"}), UserError);
}

TEST(NamedCpus, HostAndEmptyNameTheHost) {
  for (const char* name : {"", "host"}) {
    hal::cpu::CpuInfo cpu = NamedCpu(name);
    EXPECT_FALSE(cpu.named);
    EXPECT_EQ(cpu.llvm_name, hal::cpu::HostCpu().llvm_name);
    EXPECT_TRUE(cpu.missing_on_host.empty());
  }
}

// Every host runs x86-64-v2 code (SSE4.2); the AVX-512 level where the host
// has AVX-512, and then only.
TEST(NamedCpus, MissingFeaturesAreTheHostsLack) {
  EXPECT_TRUE(NamedCpu("x86-64-v2").missing_on_host.empty());
  hal::cpu::CpuInfo v4 = NamedCpu("x86-64-v4");
  EXPECT_EQ(v4.missing_on_host.empty(), hal::cpu::HostCpu().avx512f) << fmt::format("{}", fmt::join(v4.missing_on_host, ","));
  if (!hal::cpu::HostCpu().avx512f) {
    EXPECT_NE(std::find(v4.missing_on_host.begin(), v4.missing_on_host.end(), "avx512f"), v4.missing_on_host.end());
  }
}

// A device for x86-64-v2 (4 lanes, which every x86-64 host runs): its plans
// are that CPU's and its kernels match the evaluator.
TEST(NamedCpus, LlvmDeviceForAnotherCpuPlansAndRunsForIt) {
  auto device = std::make_shared<hal::cpu::LlvmDevice>("x86-64-v2");
  EXPECT_EQ(device->id(), "llvm:cpu");
  EXPECT_EQ(device->hardware_model().vec_size, 4);
  EXPECT_NE(device->Describe().find("x86-64-v2"), std::string::npos) << device->Describe();
  EXPECT_EQ(device->WhyCannotRun(), "");
  compiler::CompileOptions o;
  auto program = testing::CheckCase(
      device, {testing::kConvRelu, {{"D", F32({1, 7, 9, 8})}, {"K", F32({3, 3, 8, 8})}}}, o, "x86-64-v2 conv");
  EXPECT_NE(testing::VectorPlans(*program).find("x 4 lanes of float"), std::string::npos)
      << testing::VectorPlans(*program);
}

// A CPU whose features the host lacks: plans and code, and a UserError that
// names the missing features when the program is built or run.
TEST(NamedCpus, CodeTheHostCannotRunIsCompiledButNotRun) {
  const char* foreign = nullptr;
  for (const char* name : {"sapphirerapids", "x86-64-v4", "znver4"})
    if (!NamedCpu(name).missing_on_host.empty()) {
      foreign = name;
      break;
    }
  if (!foreign) GTEST_SKIP() << "the host runs code of every CPU tried";
  auto device = std::make_shared<hal::cpu::LlvmDevice>(foreign);
  EXPECT_NE(device->WhyCannotRun().find("the host lacks"), std::string::npos);
  lang::Program bound = testing::BindCase({testing::kConvRelu, {{"D", F32({1, 7, 9, 8})}, {"K", F32({3, 3, 8, 8})}}});
  compiler::CompileOptions o;
  try {
    runtime::Program::Compile(bound, device, o);
    FAIL() << "built code for " << foreign;
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find(fmt::format("code for CPU '{}' cannot run here", foreign)), std::string::npos)
        << e.message();
  }
  runtime::Program only = runtime::Program::CompileOnly(bound, device, o);
  EXPECT_NE(only.TargetCode().find("define"), std::string::npos);
  EXPECT_THROW(only.Run(testing::RandomInputs(bound)), UserError);
}

TEST(NamedCpus, OpenClCpuDevicePlansForTheNamedCpu) {
  if (!testing::DeviceFor("opencl")) GTEST_SKIP() << "no OpenCL device";
  auto device = testing::PinnedDevice("opencl", testing::kAvx2Cpu);
  EXPECT_EQ(device->hardware_model().vec_size, 8);
  EXPECT_EQ(device->hardware_model().vector_registers, 16);
  EXPECT_NE(device->Describe().find("planned for CPU x86-64-v3"), std::string::npos) << device->Describe();
  auto wide = testing::PinnedDevice("opencl", testing::kAvx512Cpu);
  EXPECT_EQ(wide->hardware_model().vec_size, 16);
  EXPECT_EQ(wide->hardware_model().vector_registers, 32);
}

TEST(NamedCpus, CApiOpensADeviceForACpu) {
  tilec_device dev = nullptr;
  tilec_error err = nullptr;
  ASSERT_EQ(tilec_device_open_cpu("llvm", "x86-64-v2", &dev, &err), TILEC_OK);
  EXPECT_NE(std::string(tilec_device_description(dev)).find("x86-64-v2"), std::string::npos);
  tilec_device_release(dev);
  EXPECT_EQ(tilec_device_open_cpu("llvm", "nosuchcpu", &dev, &err), TILEC_ERROR_USER);
  ASSERT_NE(err, nullptr);
  EXPECT_NE(std::string(tilec_error_message(err)).find("unknown CPU 'nosuchcpu'"), std::string::npos);
  tilec_error_release(err);
}

}  // namespace
}  // namespace tilec
