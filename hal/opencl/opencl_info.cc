#include "hal/opencl/opencl_info.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "support/error.h"

namespace tilec::hal::opencl {
namespace {

// cl_ext.h's CL_PLATFORM_NOT_FOUND_KHR: what the ICD loader returns when no
// vendor driver is installed.
constexpr cl_int kPlatformNotFoundKhr = -1001;

// PlaidML's defaults for what OpenCL cannot tell (its HardwareSettings).
constexpr int64_t kDefaultMemWidth = 64;         // cache line when the device reports 0
constexpr int64_t kDefaultMaxRegs = 16384;       // accumulator bytes per work group
constexpr double kDefaultGoalFlopsPerByte = 50;  // roofline knee of PlaidML's OpenCL HAL
constexpr int64_t kMaxThreads = 256;             // work-group size the generator aims for
// A tile budget for devices whose "local" memory is not programmer-managed and
// who report too little of it to plan with (only custom devices may).
constexpr int64_t kUnmanagedLocalBudget = 16384;
// CPU caches: OpenCL has no query for L1 and reports a single cache level.
constexpr int64_t kCpuL1Bytes = 32 * 1024;       // L1d of every current x86/ARM core is >= 32 KiB
constexpr int64_t kCpuL2CapBytes = 1024 * 1024;  // typical per-core L2 of current server cores

std::string Trim(std::string s) {
  // Info strings end in a NUL and drivers sometimes pad them with spaces.
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ' || s.back() == '\n')) s.pop_back();
  size_t start = s.find_first_not_of(' ');
  return start == std::string::npos ? std::string() : s.substr(start);
}

std::string PlatformString(cl_platform_id platform, cl_platform_info what, const char* what_name) {
  size_t size = 0;
  cl_int status = clGetPlatformInfo(platform, what, 0, nullptr, &size);
  if (status != CL_SUCCESS) ThrowClError("clGetPlatformInfo", status, what_name);
  std::string value(size, '\0');
  status = clGetPlatformInfo(platform, what, size, value.data(), nullptr);
  if (status != CL_SUCCESS) ThrowClError("clGetPlatformInfo", status, what_name);
  return Trim(std::move(value));
}

std::string DeviceString(cl_device_id device, cl_device_info what, const char* what_name) {
  size_t size = 0;
  cl_int status = clGetDeviceInfo(device, what, 0, nullptr, &size);
  if (status != CL_SUCCESS) ThrowClError("clGetDeviceInfo", status, what_name);
  std::string value(size, '\0');
  status = clGetDeviceInfo(device, what, size, value.data(), nullptr);
  if (status != CL_SUCCESS) ThrowClError("clGetDeviceInfo", status, what_name);
  return Trim(std::move(value));
}

#define TILEC_DEVICE_STRING(device, what) DeviceString(device, what, #what)
#define TILEC_DEVICE_VALUE(T, device, what) DeviceValue<T>(device, what, #what)
#define TILEC_PLATFORM_STRING(platform, what) PlatformString(platform, what, #what)

std::vector<std::string> SplitWords(const std::string& text) {
  std::vector<std::string> words;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t start = text.find_first_not_of(' ', pos);
    if (start == std::string::npos) break;
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    words.push_back(text.substr(start, end - start));
    pos = end;
  }
  return words;
}

std::string TypeName(cl_device_type type) {
  std::string out;
  auto add = [&](cl_device_type bit, const char* name) {
    if (!(type & bit)) return;
    if (!out.empty()) out += '|';
    out += name;
  };
  add(CL_DEVICE_TYPE_CPU, "CPU");
  add(CL_DEVICE_TYPE_GPU, "GPU");
  add(CL_DEVICE_TYPE_ACCELERATOR, "ACCELERATOR");
  add(CL_DEVICE_TYPE_CUSTOM, "CUSTOM");
  add(CL_DEVICE_TYPE_DEFAULT, "DEFAULT");
  return out.empty() ? "UNKNOWN" : out;
}

int64_t ClampToInt64(uint64_t v) {
  return static_cast<int64_t>(std::min<uint64_t>(v, std::numeric_limits<int64_t>::max()));
}

// Largest power of two <= v (v >= 1).
int64_t FloorPow2(int64_t v) {
  int64_t p = 1;
  while (p <= v / 2) p *= 2;
  return p;
}

DeviceDesc ReadDeviceDesc(cl_platform_id platform, int platform_index,
                          const std::string& platform_name, const std::string& platform_vendor,
                          const std::string& platform_version, cl_device_id device,
                          int device_index) {
  DeviceDesc d;
  d.id = fmt::format("opencl:{}:{}", platform_index, device_index);
  d.platform_index = platform_index;
  d.device_index = device_index;
  d.platform = platform;
  d.device = device;
  d.platform_name = platform_name;
  d.platform_vendor = platform_vendor;
  d.platform_version = platform_version;
  d.name = TILEC_DEVICE_STRING(device, CL_DEVICE_NAME);
  d.vendor = TILEC_DEVICE_STRING(device, CL_DEVICE_VENDOR);
  d.version = TILEC_DEVICE_STRING(device, CL_DEVICE_VERSION);
  d.driver_version = TILEC_DEVICE_STRING(device, CL_DRIVER_VERSION);
  d.opencl_c_version = TILEC_DEVICE_STRING(device, CL_DEVICE_OPENCL_C_VERSION);
  d.type = TILEC_DEVICE_VALUE(cl_device_type, device, CL_DEVICE_TYPE);
  d.type_name = TypeName(d.type);
  d.extensions = SplitWords(TILEC_DEVICE_STRING(device, CL_DEVICE_EXTENSIONS));
  d.global_mem_bytes = TILEC_DEVICE_VALUE(cl_ulong, device, CL_DEVICE_GLOBAL_MEM_SIZE);
  d.max_alloc_bytes = TILEC_DEVICE_VALUE(cl_ulong, device, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  return d;
}

}  // namespace

bool DeviceDesc::HasExtension(std::string_view ext) const {
  return std::find(extensions.begin(), extensions.end(), ext) != extensions.end();
}

std::vector<DeviceDesc> ListDevices() {
  cl_uint num_platforms = 0;
  cl_int status = clGetPlatformIDs(0, nullptr, &num_platforms);
  if (status == kPlatformNotFoundKhr || (status == CL_SUCCESS && num_platforms == 0)) return {};
  CheckCl(status, "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(num_platforms);
  CheckCl(clGetPlatformIDs(num_platforms, platforms.data(), nullptr), "clGetPlatformIDs");

  std::vector<DeviceDesc> out;
  for (cl_uint p = 0; p < num_platforms; ++p) {
    cl_uint num_devices = 0;
    status = clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, nullptr, &num_devices);
    if (status == CL_DEVICE_NOT_FOUND || (status == CL_SUCCESS && num_devices == 0)) continue;
    CheckCl(status, "clGetDeviceIDs");
    std::vector<cl_device_id> devices(num_devices);
    CheckCl(clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, num_devices, devices.data(), nullptr),
            "clGetDeviceIDs");
    std::string platform_name = TILEC_PLATFORM_STRING(platforms[p], CL_PLATFORM_NAME);
    std::string platform_vendor = TILEC_PLATFORM_STRING(platforms[p], CL_PLATFORM_VENDOR);
    std::string platform_version = TILEC_PLATFORM_STRING(platforms[p], CL_PLATFORM_VERSION);
    for (cl_uint d = 0; d < num_devices; ++d) {
      out.push_back(ReadDeviceDesc(platforms[p], static_cast<int>(p), platform_name,
                                   platform_vendor, platform_version, devices[d],
                                   static_cast<int>(d)));
    }
  }
  return out;
}

compiler::HardwareModel QueryHardwareModel(const DeviceDesc& desc) {
  cl_device_id dev = desc.device;
  TILEC_CHECK(dev != nullptr, "device description '{}' has no device handle", desc.id);
  compiler::HardwareModel hw;
  hw.name = desc.name.empty() ? desc.id : desc.name;

  // --- Work decomposition.
  hw.max_work_group_size =
      ClampToInt64(TILEC_DEVICE_VALUE(size_t, dev, CL_DEVICE_MAX_WORK_GROUP_SIZE));
  if (hw.max_work_group_size < 1) {
    throw DeviceError(fmt::format("device {} reports a maximum work-group size of 0", desc.id));
  }
  cl_uint dims = TILEC_DEVICE_VALUE(cl_uint, dev, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS);
  if (dims < 1) {
    throw DeviceError(fmt::format("device {} reports 0 work-item dimensions", desc.id));
  }
  std::vector<size_t> item_sizes(dims);
  CheckCl(clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_ITEM_SIZES, dims * sizeof(size_t),
                          item_sizes.data(), nullptr),
          "clGetDeviceInfo(CL_DEVICE_MAX_WORK_ITEM_SIZES)");
  for (size_t d = 0; d < hw.max_work_item_sizes.size(); ++d) {
    // Dimensions the device lacks can only be 1 wide.
    hw.max_work_item_sizes[d] = d < dims ? std::max<int64_t>(1, ClampToInt64(item_sizes[d])) : 1;
  }
  // Work groups are (threads, 1, 1): bounded by the group size and dimension 0.
  hw.threads =
      FloorPow2(std::min({kMaxThreads, hw.max_work_group_size, hw.max_work_item_sizes[0]}));
  // A driver reporting 0 compute units still runs one group at a time.
  hw.compute_units =
      std::max<int64_t>(1, TILEC_DEVICE_VALUE(cl_uint, dev, CL_DEVICE_MAX_COMPUTE_UNITS));
  hw.goal_groups = 4 * hw.compute_units;  // PlaidML: enough groups to hide latency

  // --- Memory.
  int64_t cacheline = TILEC_DEVICE_VALUE(cl_uint, dev, CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE);
  hw.mem_width =
      cacheline > 0 ? std::clamp<int64_t>(FloorPow2(cacheline), 8, 4096) : kDefaultMemWidth;
  auto local_type = TILEC_DEVICE_VALUE(cl_device_local_mem_type, dev, CL_DEVICE_LOCAL_MEM_TYPE);
  int64_t local_size = ClampToInt64(TILEC_DEVICE_VALUE(cl_ulong, dev, CL_DEVICE_LOCAL_MEM_SIZE));
  // CL_LOCAL: dedicated on-chip memory the kernel stages tiles in (GPUs).
  // CL_GLOBAL: "local" arrays live in ordinary memory behind the caches
  // (CPU drivers such as PoCL), so the caches, not the program, manage them.
  hw.local_memory_managed = local_type == CL_LOCAL;
  if (hw.local_memory_managed) {
    if (local_size < 1024) {
      throw DeviceError(
          fmt::format("device {} has only {} bytes of local memory; Tilec needs at least 1024",
                      desc.id, local_size));
    }
    hw.max_mem = local_size;
  } else {
    hw.max_mem = local_size >= 1024 ? local_size : kUnmanagedLocalBudget;
  }
  hw.max_regs = kDefaultMaxRegs;
  if (desc.is_cpu()) {
    hw.l1_bytes = kCpuL1Bytes;
    // OpenCL reports one cache level, on CPUs the last-level cache shared by
    // all cores; a work group can count on its core's share, capped at a
    // typical per-core L2.
    uint64_t llc = TILEC_DEVICE_VALUE(cl_ulong, dev, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
    int64_t share = llc > 0 ? ClampToInt64(llc) / hw.compute_units : kCpuL2CapBytes;
    hw.l2_bytes = std::clamp<int64_t>(share, hw.l1_bytes, kCpuL2CapBytes);
    hw.l3_bytes = ClampToInt64(llc);
    // PoCL names CPU devices after the LLVM target ("pthread-skylake-avx512-…");
    // AVX-512 doubles the architectural vector registers from 16 to 32.
    if (desc.name.find("avx512") != std::string::npos) {
      hw.vector_registers = 32;
      hw.mask_registers = true;
    }
  }

  // --- Throughput goals.
  hw.goal_flops_per_byte = kDefaultGoalFlopsPerByte;

  // --- Vectors and number formats.
  int64_t vec = TILEC_DEVICE_VALUE(cl_uint, dev, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT);
  hw.vec_size = vec > 0 ? std::min<int64_t>(16, FloorPow2(vec)) : 1;
  auto fp_config = TILEC_DEVICE_VALUE(cl_device_fp_config, dev, CL_DEVICE_SINGLE_FP_CONFIG);
  hw.has_fma = (fp_config & CL_FP_FMA) != 0;
  hw.has_fp16 = desc.HasExtension("cl_khr_fp16");
  hw.has_fp64 = desc.HasExtension("cl_khr_fp64");

  try {
    hw.Validate();
  } catch (const UserError& e) {
    TILEC_UNREACHABLE("derived an invalid hardware model for {}: {}", desc.id, e.message());
  }
  return hw;
}

ImageAccess ResolveImageAccess(ImageAccess requested, const DeviceDesc& desc) {
  if (requested != ImageAccess::kAuto) return requested;
  return desc.is_cpu() ? ImageAccess::kLinear : ImageAccess::kSampler;
}

std::string DescribeDevices(ImageAccess images) {
  std::vector<DeviceDesc> devices = ListDevices();
  if (devices.empty()) return "no OpenCL devices found\n";
  std::string out;
  for (const DeviceDesc& d : devices) {
    if (!out.empty()) out += '\n';
    out += fmt::format("{}\n", d.id);
    out += fmt::format("  name: {}\n", d.name);
    out += fmt::format("  vendor: {}\n", d.vendor);
    out += fmt::format("  type: {}\n", d.type_name);
    out += fmt::format("  version: {}\n", d.version);
    out += fmt::format("  driver: {}\n", d.driver_version);
    out += fmt::format("  platform: {} ({})\n", d.platform_name, d.platform_version);
    ImageAccess access = ResolveImageAccess(images, d);
    out += fmt::format("  images: {}{}\n", Name(access),
                       images != ImageAccess::kAuto ? " (TILEC_CL_IMAGES)"
                       : access == ImageAccess::kLinear
                           ? " (a CPU device: its images are software, kernels use their linear buffers)"
                           : " (read_imagef)");
    // One broken device must not hide the others from the listing.
    std::string model;
    try {
      model = compiler::ToString(QueryHardwareModel(d));
    } catch (const Error& e) {
      out += fmt::format("  hardware model: unavailable: {}\n", e.what());
      continue;
    }
    out += "  hardware model:\n";
    size_t pos = 0;
    while (pos < model.size()) {
      size_t end = model.find('\n', pos);
      if (end == std::string::npos) end = model.size();
      out += fmt::format("    {}\n", std::string_view(model).substr(pos, end - pos));
      pos = end + 1;
    }
  }
  return out;
}

}  // namespace tilec::hal::opencl
