// What OpenCL devices this machine has, and what the compiler should assume
// about each (its HardwareModel).
//
// Device ids are "opencl:<platform-index>:<device-index>" in the order the ICD
// loader reports platforms and clGetDeviceIDs(CL_DEVICE_TYPE_ALL) reports
// devices; they are stable as long as the set of installed drivers is.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/schedule/hardware_model.h"
#include "hal/hal.h"
#include "hal/opencl/cl_error.h"

namespace tilec::hal::opencl {

// One fixed-size clGetDeviceInfo value; a DeviceError naming `what_name`
// when the query fails.
template <typename T>
T DeviceValue(cl_device_id device, cl_device_info what, const char* what_name) {
  T value{};
  cl_int status = clGetDeviceInfo(device, what, sizeof(T), &value, nullptr);
  if (status != CL_SUCCESS) ThrowClError("clGetDeviceInfo", status, what_name);
  return value;
}

struct DeviceDesc {
  std::string id;  // "opencl:P:D"
  int platform_index = 0;
  int device_index = 0;
  // Handles owned by the ICD loader; valid for the whole process.
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;

  std::string platform_name;
  std::string platform_vendor;
  std::string platform_version;
  std::string name;
  std::string vendor;
  std::string version;           // CL_DEVICE_VERSION
  std::string driver_version;    // CL_DRIVER_VERSION
  std::string opencl_c_version;  // CL_DEVICE_OPENCL_C_VERSION
  cl_device_type type = 0;
  std::string type_name;  // "CPU", "GPU", "ACCELERATOR", "CUSTOM", joined by '|'
  std::vector<std::string> extensions;
  uint64_t global_mem_bytes = 0;  // CL_DEVICE_GLOBAL_MEM_SIZE
  uint64_t max_alloc_bytes = 0;   // CL_DEVICE_MAX_MEM_ALLOC_SIZE

  bool is_cpu() const { return (type & CL_DEVICE_TYPE_CPU) != 0; }
  bool HasExtension(std::string_view ext) const;
};

// Every device of every platform. No OpenCL platform installed (the ICD
// loader's CL_PLATFORM_NOT_FOUND_KHR, or zero platforms) gives an empty list;
// a platform without devices contributes none. Any other failing OpenCL call
// throws DeviceError naming the call and the CL error.
std::vector<DeviceDesc> ListDevices();

// The hardware model of `desc`, from clGetDeviceInfo. The result passes
// HardwareModel::Validate(); the defaults used where OpenCL has no query are
// documented at each field in the implementation. Throws DeviceError if a query
// fails or the device cannot host Tilec's kernels at all.
compiler::HardwareModel QueryHardwareModel(const DeviceDesc& desc);

// How a device opened with `requested` accesses image tensors: kAuto is
// kLinear on a CPU device (software images), kSampler on others.
ImageAccess ResolveImageAccess(ImageAccess requested, const DeviceDesc& desc);

// What `tilec devices` prints: one block per device (id, name, vendor, type,
// versions, platform, image access as `images` would resolve, then the
// ToString(HardwareModel) lines indented), blocks separated by a blank line;
// "no OpenCL devices found\n" if there are none.
std::string DescribeDevices(ImageAccess images = ImageAccess::kAuto);

}  // namespace tilec::hal::opencl
