// The hardware model of a CPU named by the user (hal::DeviceOptions::cpu,
// `--cpu NAME`, TILEC_CPU, tilec_device_open_cpu): LLVM's features for the
// name, a table of caches, and the choices derived from them; devices that
// plan and compile for it on any host, and run its code where the host can.
#include <gtest/gtest.h>

#include "hal/llvm/cpu_info.h"
#include "hal/llvm/llvm_device.h"
#include "runtime/launch_table.h"
#include "runtime/tuning_cache.h"
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

// Three x86 CPUs of three vector widths, each model checked as a golden
// (AArch64 CPUs: AArch64CoresAreNamedOnAnyHost below).
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

// AArch64 cores: NEON's 4 lanes and 32 registers, no mask registers, FMA,
// the caches of the table (or the AArch64 defaults), code for
// aarch64-unknown-linux-gnu, which an x86-64 host compiles but does not run.
TEST(NamedCpus, AArch64CoresAreNamedOnAnyHost) {
  struct Want {
    const char* name;
    const char* fields;
  };
  bool x86_host = hal::cpu::HostCpu().arch == hal::cpu::CpuArch::X86_64;
  for (const Want& w : {
           Want{"neoverse-n1", "vec_size=4 vector_registers=32 max_regs=512 half_vector_rate=0.5 has_fma=true "
                               "goal_flops_per_byte=1 l1=65536 l2=1048576 l3=33554432"},
           Want{"neoverse-v1", "vec_size=4 vector_registers=32 max_regs=512 half_vector_rate=0.5 has_fma=true "
                               "goal_flops_per_byte=1 l1=65536 l2=1048576 l3=33554432"},
           Want{"cortex-a76", "vec_size=4 vector_registers=32 max_regs=512 half_vector_rate=0.5 has_fma=true "
                              "goal_flops_per_byte=1 l1=65536 l2=524288 l3=2097152"},
           Want{"apple-m1", "vec_size=4 vector_registers=32 max_regs=512 half_vector_rate=0.5 has_fma=true "
                            "goal_flops_per_byte=1 l1=131072 l2=12582912 l3=8388608"},
           Want{"cortex-a55", "vec_size=4 vector_registers=32 max_regs=512 half_vector_rate=0.5 has_fma=true "
                              "goal_flops_per_byte=1 l1=32768 l2=524288 l3=4194304"},
       }) {
    hal::cpu::CpuInfo cpu = NamedCpu(w.name);
    EXPECT_TRUE(cpu.named) << w.name;
    EXPECT_EQ(cpu.arch, hal::cpu::CpuArch::AArch64) << w.name;
    EXPECT_EQ(cpu.triple, x86_host ? "aarch64-unknown-linux-gnu" : hal::cpu::HostCpu().triple) << w.name;
    EXPECT_TRUE(cpu.neon && cpu.fma) << w.name;
    EXPECT_FALSE(cpu.avx512f || cpu.avx2) << w.name;
    EXPECT_EQ(cpu.other_arch, x86_host) << w.name;
    compiler::HardwareModel hw = CpuHardwareModel(cpu);
    EXPECT_NO_THROW(hw.Validate()) << w.name;
    EXPECT_FALSE(hw.mask_registers) << w.name;
    EXPECT_EQ(IsaFields(hw), w.fields) << w.name;
  }
  hal::cpu::CpuInfo m1 = NamedCpu("apple-m1");  // an alias of LLVM's
  EXPECT_EQ(m1.llvm_name, "apple-a14");
  EXPECT_EQ(CpuHardwareModel(m1).name, "apple-m1 (apple-a14)");
  EXPECT_EQ(hal::cpu::LlvmDevice("apple-m1").Describe().rfind("named CPU apple-m1 (apple-a14;", 0), 0u);
  EXPECT_TRUE(NamedCpu("neoverse-v1").sve);
  EXPECT_FALSE(NamedCpu("neoverse-n1").sve);
  EXPECT_TRUE(CpuHardwareModel(NamedCpu("x86-64-v4")).mask_registers);
  EXPECT_FALSE(CpuHardwareModel(NamedCpu("x86-64-v3")).mask_registers);
}

// "generic" is a CPU of both architectures: bare, the host's; ARCH:NAME picks.
TEST(NamedCpus, ArchitectureQualifiedNames) {
  EXPECT_EQ(NamedCpu("generic").arch, hal::cpu::HostCpu().arch);
  EXPECT_EQ(NamedCpu("aarch64:generic").arch, hal::cpu::CpuArch::AArch64);
  EXPECT_EQ(NamedCpu("arm64:neoverse-n1").llvm_name, "neoverse-n1");
  EXPECT_EQ(NamedCpu("x86_64:znver3").arch, hal::cpu::CpuArch::X86_64);
  EXPECT_EQ(NamedCpu("x86-64:generic").arch, hal::cpu::CpuArch::X86_64);
  for (const char* bad : {"aarch64:znver3", "x86_64:neoverse-n1", "mips:generic", "aarch64:"}) {
    try {
      NamedCpu(bad);
      ADD_FAILURE() << "no error for " << bad;
    } catch (const UserError& e) {
      EXPECT_NE(e.message().find(fmt::format("'{}'", bad)), std::string::npos) << e.message();
    }
  }
}

// A device for an AArch64 core on an x86-64 host: plans of 4 lanes, LLVM IR
// for AArch64 with no x86 intrinsic or vector ABI call, an AArch64 object,
// a description (and so a fingerprint and cache keys) naming the triple, and
// a UserError rather than a run.
TEST(NamedCpus, AArch64DeviceCompilesButDoesNotRunHere) {
  if (hal::cpu::HostCpu().arch != hal::cpu::CpuArch::X86_64) GTEST_SKIP() << "an x86-64 host's view";
  auto device = std::make_shared<hal::cpu::LlvmDevice>("neoverse-n1");
  EXPECT_EQ(device->WhyCannotRun(), "the host is x86_64, the code aarch64");
  EXPECT_NE(device->Describe().find("aarch64-unknown-linux-gnu"), std::string::npos) << device->Describe();
  EXPECT_NE(runtime::DeviceFingerprint(*device).find("aarch64-unknown-linux-gnu"), std::string::npos);
  EXPECT_NE(runtime::DeviceFingerprint(*device), runtime::DeviceFingerprint(hal::cpu::LlvmDevice("znver3")));
  const char* math = R"(function (X[N, M]) -> (Y) {
  Y = exp(X) + log(X * X + 1) + pow(X * X + 1, X) + erf(X) + tanh(X) + sin(X);
})";
  for (const testing::Case& c : {testing::Case{testing::kConvRelu, {{"D", F32({1, 7, 9, 8})}, {"K", F32({3, 3, 8, 8})}}},
                                 testing::Case{math, {{"X", F32({5, 67})}}}}) {
    lang::Program bound = testing::BindCase(c);
    compiler::CompileOptions o;
    EXPECT_THROW(runtime::Program::Compile(bound, device, o), UserError);
    runtime::Program only = runtime::Program::CompileOnly(bound, device, o);
    std::string ir = only.TargetCode();
    EXPECT_NE(ir.find("target triple = \"aarch64-unknown-linux-gnu\""), std::string::npos);
    std::string optimized = device->EmitOptimizedIR(only.compiled().Module());
    for (const std::string* text : {&ir, &optimized}) {
      EXPECT_EQ(text->find("x86"), std::string::npos);
      EXPECT_EQ(text->find("_ZGV"), std::string::npos);
    }
    std::string object = device->EmitObject(only.compiled().Module(), runtime::LaunchTableOf(only.compiled()));
    ASSERT_GT(object.size(), 20u);
    EXPECT_EQ(object.substr(0, 4), "\x7f" "ELF");
    EXPECT_EQ(static_cast<unsigned char>(object[18]) | static_cast<unsigned char>(object[19]) << 8, 183);  // EM_AARCH64
    EXPECT_THROW(only.Run(testing::RandomInputs(bound)), UserError);
  }
  std::string plans = testing::VectorPlans(runtime::Program::CompileOnly(
      testing::BindCase({testing::kConvRelu, {{"D", F32({1, 7, 9, 8})}, {"K", F32({3, 3, 8, 8})}}}), device, {}));
  EXPECT_NE(plans.find("x 4 lanes of float"), std::string::npos) << plans;
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
    EXPECT_NE(m.find("neoverse-n1"), std::string::npos) << m;
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
