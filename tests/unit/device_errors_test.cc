// Device failure paths, each with a real trigger: an allocation larger than
// the device allows (both backends), an OpenCL build failure, and an OpenCL
// launch that needs more local memory than the device has. Each must be a
// DeviceError (tilec exits with 4) naming the kernel or tensor and carrying
// the driver's message; the ASan build checks that nothing leaks on the way.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "hal/hal.h"
#include "hal/opencl/opencl_backend.h"
#include "hal/opencl/opencl_device.h"
#include "hal/opencl/opencl_info.h"
#include "runtime/program.h"
#include "support/error.h"

namespace tilec {
namespace {

using ::testing::HasSubstr;

// 2^40 f32 elements: 4 TiB, more than any device here allows in one buffer.
const std::map<std::string, lang::Shape> kHugeShapes = {
    {"A", {lang::DataType::F32, {int64_t{1} << 40}}}};
constexpr const char* kScale = "function (A[N]) -> (B) { B = A * 2; }";

void ExpectAllocationError(const std::string& device_id) {
  std::shared_ptr<hal::Device> device = hal::OpenDevice(device_id);
  try {
    // Buffers are allocated on first use (runtime/program.h): Execute runs
    // the kernels on the staged buffers, which it allocates first.
    runtime::Program program =
        runtime::Program::Compile(MakeSource("scale.tile", kScale), kHugeShapes, device);
    program.Execute();
    FAIL() << "a 4 TiB tensor was allocated on " << device_id;
  } catch (const DeviceError& e) {
    std::string what = e.what();
    EXPECT_THAT(what, HasSubstr("tensor 'A' (f32[1099511627776], 4398046511104 bytes)"));
    EXPECT_THAT(what, HasSubstr("used by kernel 'kernel_0'"));
    EXPECT_THAT(what, HasSubstr("cannot allocate 4398046511104 bytes on " + device->id()));
  }
}

TEST(DeviceErrors, AllocationBeyondTheHostIsDeviceErrorOnLlvm) { ExpectAllocationError("llvm:cpu"); }

bool HaveOpenCl() { return !hal::opencl::ListDevices().empty(); }

TEST(DeviceErrors, AllocationBeyondTheDeviceIsDeviceErrorOnOpenCl) {
  if (!HaveOpenCl()) GTEST_SKIP() << "no OpenCL device";
  ExpectAllocationError("opencl");
}

// A build option that defines the kernel's name away makes the driver's
// compiler reject the source: the error names the kernel and carries the
// driver's build log.
TEST(DeviceErrors, OpenClBuildFailureNamesTheKernelAndCarriesTheLog) {
  if (!HaveOpenCl()) GTEST_SKIP() << "no OpenCL device";
  std::shared_ptr<hal::Device> device =
      hal::opencl::MakeOpenClDevice(hal::opencl::ListDevices().front(), {.build_options = "-Dkernel_0=", .image_access = hal::ImageAccess::kAuto, .cpu = ""});
  try {
    runtime::Program::Compile(MakeSource("scale.tile", kScale),
                              {{"A", {lang::DataType::F32, {37}}}}, device);
    FAIL() << "the build did not fail";
  } catch (const DeviceError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("cannot build kernel 'kernel_0'"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("clBuildProgram failed: CL_BUILD_PROGRAM_FAILURE"));
    EXPECT_THAT(e.build_log(), HasSubstr("error"));
    EXPECT_THAT(e.Render(), HasSubstr("--- build log ---"));
  }
}

// A kernel whose own __local array is larger than the device's local memory.
// PoCL aborts the process on such a launch instead of failing it, so Launch
// must refuse it first.
TEST(DeviceErrors, OpenClLaunchBeyondLocalMemoryIsDeviceError) {
  if (!HaveOpenCl()) GTEST_SKIP() << "no OpenCL device";
  hal::opencl::Device device = hal::opencl::OpenDevice("opencl");
  cl_ulong local_bytes = 0;
  ASSERT_EQ(clGetDeviceInfo(device.desc().device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(local_bytes),
                            &local_bytes, nullptr),
            CL_SUCCESS);
  const std::string source =
      "__kernel void big_local(__global float* out) {\n"
      "  __local float big[BIG];\n"
      "  big[get_local_id(0)] = 1;\n"
      "  barrier(CLK_LOCAL_MEM_FENCE);\n"
      "  out[get_global_id(0)] = big[BIG - 1 - get_local_id(0)];\n"
      "}\n";
  size_t floats = local_bytes / sizeof(float) + 1024;
  hal::opencl::Program program = device.Build(source, "-DBIG=" + std::to_string(floats));
  hal::opencl::Kernel kernel = device.GetKernel(program, "big_local");
  EXPECT_GT(kernel.local_mem_size(), local_bytes);
  hal::opencl::Buffer out = device.Allocate(64 * sizeof(float));
  try {
    device.Launch(kernel, {out}, {64, 1, 1}, {16, 1, 1}, 1);
    FAIL() << "the launch was not refused";
  } catch (const DeviceError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("kernel 'big_local'"));
    EXPECT_THAT(std::string(e.what()),
                HasSubstr(std::to_string(kernel.local_mem_size()) + " declared in the kernel"));
  }
  // The device is still usable.
  hal::opencl::Program small = device.Build(source, "-DBIG=64");
  device.Launch(device.GetKernel(small, "big_local"), {out}, {64, 1, 1}, {16, 1, 1}, 1);
}

}  // namespace
}  // namespace tilec
