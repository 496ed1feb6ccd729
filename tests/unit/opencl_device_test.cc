#include "hal/opencl/opencl_device.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "hal/opencl/cl_error.h"
#include "hal/opencl/opencl_backend.h"
#include "hal/opencl/opencl_info.h"
#include "support/error.h"

namespace tilec::hal::opencl {
namespace {

bool IsPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// PoCL's Clang prints "1 error generated." to stderr on a failed build, on top
// of the build log we check; keep the test output quiet while it runs.
class QuietStderr {
 public:
  QuietStderr() : saved_(dup(STDERR_FILENO)) {
    int null_fd = open("/dev/null", O_WRONLY);
    if (saved_ >= 0 && null_fd >= 0) dup2(null_fd, STDERR_FILENO);
    if (null_fd >= 0) close(null_fd);
  }
  ~QuietStderr() {
    if (saved_ < 0) return;
    fflush(stderr);
    dup2(saved_, STDERR_FILENO);
    close(saved_);
  }
  QuietStderr(const QuietStderr&) = delete;
  QuietStderr& operator=(const QuietStderr&) = delete;

 private:
  int saved_;
};

// One device for the whole suite: contexts and PoCL builds are slow to make.
class OpenClDeviceTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!ListDevices().empty()) device_ = std::make_unique<Device>(OpenDevice("opencl"));
  }
  static void TearDownTestSuite() { device_.reset(); }
  void SetUp() override {
    if (!device_) GTEST_SKIP() << "no OpenCL device on this machine (install pocl-opencl-icd)";
  }
  static Device& device() { return *device_; }

  static std::unique_ptr<Device> device_;
};
std::unique_ptr<Device> OpenClDeviceTest::device_;

// --- Enumeration -------------------------------------------------------------

TEST(OpenClListTest, ListsDevicesWithStableIds) {
  std::vector<DeviceDesc> devices = ListDevices();
  if (devices.empty()) GTEST_SKIP() << "no OpenCL device on this machine (install pocl-opencl-icd)";
  for (const DeviceDesc& d : devices) {
    EXPECT_EQ(d.id, fmt::format("opencl:{}:{}", d.platform_index, d.device_index));
    EXPECT_NE(d.device, nullptr);
    EXPECT_NE(d.platform, nullptr);
    EXPECT_FALSE(d.name.empty());
    EXPECT_FALSE(d.platform_name.empty());
    EXPECT_EQ(d.version.rfind("OpenCL ", 0), 0u) << d.version;  // "OpenCL <major>.<minor> ..."
    EXPECT_FALSE(d.driver_version.empty());
    EXPECT_NE(d.type_name, "UNKNOWN");
    EXPECT_GT(d.max_alloc_bytes, 0u);
  }
  // Listing twice gives the same ids in the same order.
  std::vector<DeviceDesc> again = ListDevices();
  ASSERT_EQ(again.size(), devices.size());
  for (size_t i = 0; i < devices.size(); ++i) {
    EXPECT_EQ(again[i].id, devices[i].id);
    EXPECT_EQ(again[i].device, devices[i].device);
  }
}

// The ICD loader reads OCL_ICD_VENDORS once, at the first OpenCL call, so the
// no-driver case runs in a fresh process (threadsafe death-test style re-execs
// the binary) pointed at an empty vendor directory.
TEST(OpenClListTest, NoPlatformGivesEmptyListAndClearErrors) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        char dir[] = "/tmp/tilec_no_icd_XXXXXX";
        if (!mkdtemp(dir)) _exit(10);
        setenv("OCL_ICD_VENDORS", dir, 1);
        int code = 0;
        try {
          if (!ListDevices().empty()) code = 1;
          if (DescribeDevices() != "no OpenCL devices found\n") code = 2;
          try {
            OpenDevice("opencl");
            code = 3;
          } catch (const UserError&) {
          }
        } catch (...) {
          code = 4;
        }
        rmdir(dir);
        _exit(code);
      },
      testing::ExitedWithCode(0), "");
}

TEST(OpenClErrorTest, NamesErrorCodes) {
  EXPECT_STREQ(ClErrorName(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES");
  EXPECT_STREQ(ClErrorName(CL_BUILD_PROGRAM_FAILURE), "CL_BUILD_PROGRAM_FAILURE");
  EXPECT_STREQ(ClErrorName(CL_INVALID_WORK_GROUP_SIZE), "CL_INVALID_WORK_GROUP_SIZE");
  EXPECT_STREQ(ClErrorName(-72), "CL_MAX_SIZE_RESTRICTION_EXCEEDED");
  EXPECT_STREQ(ClErrorName(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
  EXPECT_STREQ(ClErrorName(12345), "CL_UNKNOWN_ERROR");
  try {
    CheckCl(CL_OUT_OF_HOST_MEMORY, "clCreateBuffer");
    FAIL() << "CheckCl did not throw";
  } catch (const DeviceError& e) {
    EXPECT_STREQ(e.what(), "clCreateBuffer failed: CL_OUT_OF_HOST_MEMORY (-6)");
  }
  EXPECT_NO_THROW(CheckCl(CL_SUCCESS, "clFinish"));
}

// --- Hardware model ----------------------------------------------------------

TEST_F(OpenClDeviceTest, HardwareModelMatchesTheDevice) {
  const compiler::HardwareModel& hw = device().hardware_model();
  EXPECT_NO_THROW(hw.Validate());
  cl_device_id dev = device().desc().device;
  auto query = [&](cl_device_info what, auto zero) {
    decltype(zero) v{};
    EXPECT_EQ(clGetDeviceInfo(dev, what, sizeof(v), &v, nullptr), CL_SUCCESS);
    return v;
  };
  EXPECT_EQ(hw.name, device().desc().name);
  EXPECT_EQ(hw.compute_units, static_cast<int64_t>(query(CL_DEVICE_MAX_COMPUTE_UNITS, cl_uint{})));
  EXPECT_EQ(hw.goal_groups, 4 * hw.compute_units);
  EXPECT_EQ(hw.max_work_group_size,
            static_cast<int64_t>(query(CL_DEVICE_MAX_WORK_GROUP_SIZE, size_t{})));
  EXPECT_TRUE(IsPowerOfTwo(hw.threads));
  EXPECT_LE(hw.threads, 256);
  EXPECT_LE(hw.threads, hw.max_work_group_size);
  // Any device with at least 256-wide groups gets exactly 256 threads.
  if (hw.max_work_group_size >= 256 && hw.max_work_item_sizes[0] >= 256) {
    EXPECT_EQ(hw.threads, 256);
  }
  cl_uint cacheline = query(CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE, cl_uint{});
  EXPECT_EQ(hw.mem_width, cacheline == 0 ? 64 : static_cast<int64_t>(cacheline));
  auto local_type = query(CL_DEVICE_LOCAL_MEM_TYPE, cl_device_local_mem_type{});
  EXPECT_EQ(hw.local_memory_managed, local_type == CL_LOCAL);
  if (local_type == CL_LOCAL) {
    EXPECT_EQ(hw.max_mem, static_cast<int64_t>(query(CL_DEVICE_LOCAL_MEM_SIZE, cl_ulong{})));
  }
  cl_uint vec = query(CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, cl_uint{});
  if (IsPowerOfTwo(vec) && vec <= 16) {
    EXPECT_EQ(hw.vec_size, static_cast<int64_t>(vec));
  }
  EXPECT_EQ(hw.has_fp64, device().desc().HasExtension("cl_khr_fp64"));
  EXPECT_EQ(hw.has_fp16, device().desc().HasExtension("cl_khr_fp16"));
  if (device().desc().is_cpu()) {
    EXPECT_GE(hw.l1_bytes, 16 * 1024);
    EXPECT_GE(hw.l2_bytes, hw.l1_bytes);
    EXPECT_LE(hw.l2_bytes, 64 * 1024 * 1024);
  }
}

TEST_F(OpenClDeviceTest, DescribeDevicesListsEveryDeviceAndItsModel) {
  std::string text = DescribeDevices();
  for (const DeviceDesc& d : ListDevices()) {
    EXPECT_NE(text.find(d.id + "\n"), std::string::npos) << text;
    EXPECT_NE(text.find("  name: " + d.name + "\n"), std::string::npos) << text;
    EXPECT_NE(text.find("  vendor: " + d.vendor + "\n"), std::string::npos) << text;
    EXPECT_NE(text.find("  version: " + d.version + "\n"), std::string::npos) << text;
  }
  EXPECT_NE(text.find("  hardware model:\n    name="), std::string::npos) << text;
  EXPECT_NE(text.find(fmt::format("\n    threads={}\n", device().hardware_model().threads)),
            std::string::npos)
      << text;
}

// --- Device selection --------------------------------------------------------

TEST_F(OpenClDeviceTest, OpenDeviceByIdAndDefault) {
  std::vector<DeviceDesc> devices = ListDevices();
  Device first = OpenDevice("opencl");
  EXPECT_EQ(first.desc().id, devices.front().id);
  Device by_id = OpenDevice(devices.back().id);
  EXPECT_EQ(by_id.desc().id, devices.back().id);
  // A moved-to Device keeps working.
  Device moved = std::move(by_id);
  Buffer b = moved.Allocate(16);
  EXPECT_EQ(b.size(), 16u);
}

TEST_F(OpenClDeviceTest, OpenDeviceWithBadIdListsAvailableIds) {
  std::string first_id = ListDevices().front().id;
  for (const char* bad :
       {"opencl:99:0", "opencl:0:99", "opencl:", "opencl:0", "cuda:0", "", "opencl:x:y"}) {
    try {
      OpenDevice(bad);
      ADD_FAILURE() << "OpenDevice accepted '" << bad << "'";
    } catch (const UserError& e) {
      EXPECT_NE(e.message().find(fmt::format("unknown device '{}'", bad)), std::string::npos)
          << e.message();
      EXPECT_NE(e.message().find(first_id), std::string::npos) << e.message();
    }
  }
}

// --- Buffers -----------------------------------------------------------------

TEST_F(OpenClDeviceTest, BufferRoundTripAndFillZero) {
  std::vector<uint8_t> data(4096);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7 + 3);
  Buffer buffer = device().Allocate(data.size());
  EXPECT_EQ(buffer.size(), data.size());
  device().Write(buffer, data.data(), data.size());
  std::vector<uint8_t> back(data.size(), 0);
  device().Read(buffer, back.data(), back.size());
  EXPECT_EQ(back, data);

  // A partial read sees the prefix.
  std::vector<uint8_t> prefix(100, 0);
  device().Read(buffer, prefix.data(), prefix.size());
  EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), data.begin()));

  device().FillZero(buffer);
  device().Read(buffer, back.data(), back.size());
  EXPECT_EQ(back, std::vector<uint8_t>(data.size(), 0));

  // Past the end is a caller bug, caught before the driver.
  std::vector<uint8_t> big(data.size() + 1);
  EXPECT_THROW(device().Write(buffer, big.data(), big.size()), InternalError);
  EXPECT_THROW(device().Read(buffer, big.data(), big.size()), InternalError);

  // Zero-size buffers are allowed and do nothing.
  Buffer empty = device().Allocate(0);
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_NE(empty.handle(), nullptr);
  device().Write(empty, nullptr, 0);
  device().FillZero(empty);
}

TEST_F(OpenClDeviceTest, AllocationBeyondDeviceLimitIsDeviceError) {
  size_t too_big = static_cast<size_t>(device().desc().max_alloc_bytes) + 1;
  try {
    device().Allocate(too_big);
    FAIL() << "allocated more than the device allows";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("largest allocation"), std::string::npos) << e.what();
  }
}

// --- Programs and kernels ----------------------------------------------------

constexpr const char* kKernels = R"CL(
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}

// Each group of 64 sums its block with a tree reduction in __local memory;
// every step depends on other work items' writes, so barriers must work.
__kernel void block_sum(__global const float* in, __global float* out) {
  __local float tile[64];
  int lid = get_local_id(0);
  tile[lid] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = 32; s > 0; s >>= 1) {
    if (lid < s) tile[lid] += tile[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) out[get_group_id(0)] = tile[0];
}

// Reverses each group's block through a __local argument sized at launch.
__kernel void block_reverse(__global const int* in, __global int* out, __local int* scratch) {
  int lid = get_local_id(0);
  int n = get_local_size(0);
  scratch[lid] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = scratch[n - 1 - lid];
}

__kernel void scalars(__global long* out, int i, long l, float f) {
  out[0] = i;
  out[1] = l;
  out[2] = (long)(f * 4.0f);
}

// Enough work that the device clock sees it.
__kernel void busy(__global float* x, int iters) {
  int i = get_global_id(0);
  float v = x[i];
  for (int k = 0; k < iters; ++k) v = v * 0.999f + 0.001f;
  x[i] = v;
}
)CL";

// What the driver's compiler writes to this process's stderr while `build`
// runs (file descriptor 2, where PoCL's clang prints "N warnings generated.").
template <typename F>
std::string StderrOf(F build) {
  char path[] = "/tmp/tilec_stderr_XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  std::fflush(stderr);
  int saved = dup(2);
  dup2(fd, 2);
  build();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::string text;
  char buf[4096];
  lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  close(fd);
  unlink(path);
  return text;
}

// Kernels are built with hal::opencl::kBuildOptions (-w): a warning of the
// driver's compiler about generated code (here a self-comparison) reaches
// neither stderr nor the log. Without -w the same source warns, so the check
// can fail (where the driver prints its count, as PoCL does).
TEST_F(OpenClDeviceTest, BuildsPrintNoWarnings) {
  const char* source = "kernel void k(global int* a) { int x = a[0]; if (x == x) a[0] = 1; }";
  std::string quiet = StderrOf([&] {
    Program p = device().Build(source, kBuildOptions);
    EXPECT_EQ(p.build_log().find("warning"), std::string::npos) << p.build_log();
  });
  EXPECT_EQ(quiet.find("warning"), std::string::npos) << quiet;
  std::string loud = StderrOf([&] {
    Program p = device().Build(source, "-cl-std=CL1.2");
    EXPECT_NE(p.build_log().find("self-comparison"), std::string::npos) << p.build_log();
  });
  std::printf("without -w the driver printed: %s\n", loud.c_str());
}

TEST_F(OpenClDeviceTest, VectorAdd) {
  const int n = 1000;  // not a multiple of the group: the kernel guards the tail
  std::vector<float> a(n), b(n), c(n, -1);
  for (int i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = static_cast<float>(2 * i + 1);
  }
  Program program = device().Build(kKernels);
  Kernel vadd = device().GetKernel(program, "vadd");
  EXPECT_EQ(vadd.name(), "vadd");
  EXPECT_EQ(vadd.num_args(), 4u);
  Buffer da = device().Allocate(n * sizeof(float));
  Buffer db = device().Allocate(n * sizeof(float));
  Buffer dc = device().Allocate(n * sizeof(float));
  device().Write(da, a.data(), n * sizeof(float));
  device().Write(db, b.data(), n * sizeof(float));
  device().Launch(vadd, {da, db, dc, n}, {1024, 1, 1}, {64, 1, 1}, 1);
  device().Read(dc, c.data(), n * sizeof(float));
  for (int i = 0; i < n; ++i) ASSERT_EQ(c[i], static_cast<float>(3 * i + 1)) << "at " << i;
}

TEST_F(OpenClDeviceTest, LocalMemoryAndBarriersInGroupsOf64) {
  const int groups = 16, n = 64 * groups;
  std::vector<float> in(n);
  for (int i = 0; i < n; ++i) in[i] = static_cast<float>(i % 97);
  Program program = device().Build(kKernels);
  Kernel sum = device().GetKernel(program, "block_sum");
  Buffer din = device().Allocate(n * sizeof(float));
  Buffer dout = device().Allocate(groups * sizeof(float));
  device().Write(din, in.data(), n * sizeof(float));
  device().Launch(sum, {din, dout}, {static_cast<size_t>(n), 1, 1}, {64, 1, 1}, 1);
  std::vector<float> out(groups);
  device().Read(dout, out.data(), groups * sizeof(float));
  for (int g = 0; g < groups; ++g) {
    float expect = std::accumulate(in.begin() + 64 * g, in.begin() + 64 * (g + 1), 0.0f);
    EXPECT_EQ(out[g], expect) << "group " << g;
  }

  // A dynamically sized __local argument.
  std::vector<int32_t> ints(n), rev(n);
  std::iota(ints.begin(), ints.end(), 0);
  Kernel reverse = device().GetKernel(program, "block_reverse");
  Buffer iin = device().Allocate(n * sizeof(int32_t));
  Buffer iout = device().Allocate(n * sizeof(int32_t));
  device().Write(iin, ints.data(), n * sizeof(int32_t));
  device().Launch(reverse, {iin, iout, LocalMemory{64 * sizeof(int32_t)}},
                  {static_cast<size_t>(n), 1, 1}, {64, 1, 1}, 1);
  device().Read(iout, rev.data(), n * sizeof(int32_t));
  for (int i = 0; i < n; ++i) ASSERT_EQ(rev[i], (i / 64) * 64 + 63 - i % 64) << "at " << i;
}

TEST_F(OpenClDeviceTest, ScalarArguments) {
  Program program = device().Build(kKernels);
  Kernel k = device().GetKernel(program, "scalars");
  Buffer out = device().Allocate(3 * sizeof(int64_t));
  device().Launch(k, {out, int32_t{-7}, int64_t{1} << 40, 2.5f}, {1, 1, 1}, {1, 1, 1}, 1);
  int64_t got[3] = {};
  device().Read(out, got, sizeof(got));
  EXPECT_EQ(got[0], -7);
  EXPECT_EQ(got[1], int64_t{1} << 40);
  EXPECT_EQ(got[2], 10);
  // A scalar of the wrong width is the driver's CL_INVALID_ARG_SIZE, named.
  try {
    device().Launch(k, {out, int64_t{1}, int64_t{1}, 1.0f}, {1, 1, 1}, {1, 1, 1}, 1);
    FAIL() << "accepted a long for an int parameter";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("clSetKernelArg failed: CL_INVALID_ARG_SIZE"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("argument 1"), std::string::npos) << e.what();
  }
}

TEST_F(OpenClDeviceTest, BuildErrorCarriesTheBuildLog) {
  const std::string source =
      "__kernel void broken(__global float* x) {\n"
      "  int i = get_global_id(0);\n"
      "  x[i] = undeclared_variable * 2.0f;\n"
      "}\n";
  QuietStderr quiet;
  try {
    device().Build(source);
    FAIL() << "a kernel with an undeclared variable built";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("CL_BUILD_PROGRAM_FAILURE"), std::string::npos)
        << e.what();
    EXPECT_NE(e.build_log().find("undeclared_variable"), std::string::npos) << e.build_log();
    // Clang-style diagnostics name the line: "<file>:3:<col>: error: ...".
    EXPECT_NE(e.build_log().find(":3:"), std::string::npos) << e.build_log();
    EXPECT_NE(e.build_log().find("error"), std::string::npos) << e.build_log();
    EXPECT_NE(e.Render().find(e.build_log()), std::string::npos);
  }
  // Failures are not cached: the same source fails again, with the log.
  try {
    device().Build(source);
    FAIL() << "second build of a broken kernel succeeded";
  } catch (const DeviceError& e) {
    EXPECT_FALSE(e.build_log().empty());
  }
}

TEST_F(OpenClDeviceTest, ProgramCacheReturnsTheSameProgram) {
  // A source no other test builds, so the first build is a real one.
  const std::string source =
      "__kernel void cached(__global int* x) { x[get_global_id(0)] += 1; }\n";
  size_t before = device().cached_program_count();
  Program first = device().Build(source);
  EXPECT_EQ(device().cached_program_count(), before + 1);
  Program second = device().Build(source);
  EXPECT_EQ(second.handle(), first.handle());
  EXPECT_EQ(device().cached_program_count(), before + 1);
  // Other options are another program.
  Program optimized = device().Build(source, "-cl-fast-relaxed-math");
  EXPECT_NE(optimized.handle(), first.handle());
  EXPECT_EQ(device().cached_program_count(), before + 2);
  // The cached program still runs.
  Kernel k = device().GetKernel(second, "cached");
  Buffer b = device().Allocate(64 * sizeof(int32_t));
  device().FillZero(b);
  device().Launch(k, {b}, {64, 1, 1}, {0, 0, 0}, 1);
  std::vector<int32_t> got(64);
  device().Read(b, got.data(), 64 * sizeof(int32_t));
  EXPECT_EQ(got, std::vector<int32_t>(64, 1));
}

TEST_F(OpenClDeviceTest, UnknownKernelNameIsDeviceError) {
  Program program = device().Build(kKernels);
  try {
    device().GetKernel(program, "no_such_kernel");
    FAIL() << "found a kernel that does not exist";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("clCreateKernel failed: CL_INVALID_KERNEL_NAME"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("no_such_kernel"), std::string::npos) << e.what();
  }
}

// --- Launches ----------------------------------------------------------------

TEST_F(OpenClDeviceTest, LaunchReportsProfiledTime) {
  const int n = 4096;
  std::vector<float> x(n, 1.0f);
  Program program = device().Build(kKernels);
  Kernel busy = device().GetKernel(program, "busy");
  Buffer dx = device().Allocate(n * sizeof(float));
  device().Write(dx, x.data(), n * sizeof(float));
  LaunchResult r =
      device().Launch(busy, {dx, int32_t{2000}}, {static_cast<size_t>(n), 1, 1}, {64, 1, 1}, 1);
  EXPECT_GT(r.duration_ns, 0u);
  EXPECT_LT(r.duration_ns, 60'000'000'000u);  // a sane clock, not garbage
  device().Finish();
}

TEST_F(OpenClDeviceTest, InvalidLaunchSizesAreRejectedBeforeTheDriver) {
  Program program = device().Build(kKernels);
  Kernel vadd = device().GetKernel(program, "vadd");
  const compiler::HardwareModel& hw = device().hardware_model();
  Buffer a = device().Allocate(4096 * sizeof(float));
  std::vector<KernelArg> args = {a, a, a, int32_t{4096}};

  // Caller bugs: internal errors.
  EXPECT_THROW(device().Launch(vadd, args, {100, 1, 1}, {64, 1, 1}, 1), InternalError);
  EXPECT_THROW(device().Launch(vadd, args, {0, 1, 1}, {64, 1, 1}, 1), InternalError);
  EXPECT_THROW(device().Launch(vadd, args, {64, 4, 1}, {64, 0, 1}, 2), InternalError);
  EXPECT_THROW(device().Launch(vadd, args, {64, 1, 1}, {64, 1, 1}, 0), InternalError);
  EXPECT_THROW(device().Launch(vadd, args, {64, 1, 1}, {64, 1, 1}, 4), InternalError);
  EXPECT_THROW(device().Launch(vadd, {a, a, a}, {64, 1, 1}, {64, 1, 1}, 1), InternalError);
  try {
    device().Launch(vadd, args, {100, 1, 1}, {64, 1, 1}, 1);
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("not a multiple of local size 64"), std::string::npos)
        << e.what();
  }

  // Beyond the device's limits: device errors.
  size_t too_wide = static_cast<size_t>(hw.max_work_item_sizes[0]) * 2;
  try {
    device().Launch(vadd, args, {too_wide, 1, 1}, {too_wide, 1, 1}, 1);
    FAIL() << "accepted a group wider than the device allows";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("exceeds the device's"), std::string::npos) << e.what();
  }
  // Each dimension within limits, but the product too large.
  size_t side = 1;
  while (static_cast<int64_t>(side * side) <= hw.max_work_group_size) side *= 2;
  if (static_cast<int64_t>(side) <= hw.max_work_item_sizes[0] &&
      static_cast<int64_t>(side) <= hw.max_work_item_sizes[1]) {
    EXPECT_THROW(device().Launch(vadd, args, {side, side, 1}, {side, side, 1}, 2), DeviceError);
  }
  // More __local memory than the device has.
  Kernel reverse = device().GetKernel(program, "block_reverse");
  size_t huge_local = static_cast<size_t>(1) << 40;
  EXPECT_THROW(device().Launch(reverse, {a, a, LocalMemory{huge_local}}, {64, 1, 1}, {64, 1, 1}, 1),
               DeviceError);

  // The same kernel still launches correctly afterwards.
  EXPECT_NO_THROW(device().Launch(vadd, args, {4096, 1, 1}, {64, 1, 1}, 1));
}

}  // namespace
}  // namespace tilec::hal::opencl
