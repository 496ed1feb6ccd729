// hal::Device on an OpenCL device: sem -> OpenCL C (emit_opencl.h), built
// and launched through opencl_device.h.
#pragma once

#include <memory>
#include <string>

#include "hal/hal.h"
#include "hal/opencl/opencl_info.h"

namespace tilec::hal::opencl {

// The options every program is built with: OpenCL C 1.2, and no warnings
// (-w): the driver's compiler would print "N warnings generated." on stderr
// about generated code a user cannot change; a failed build still carries
// the whole log (DeviceError::build_log).
inline constexpr const char* kBuildOptions = "-cl-std=CL1.2 -w";

struct ClDeviceOptions {
  // Appended to the options of every clBuildProgram (tests pass a -D that
  // breaks the source to exercise build failures).
  std::string build_options;
  // How kernels access image tensors (hal.h); kAuto resolves by the
  // device's type when the device is made.
  ImageAccess image_access = ImageAccess::kAuto;
  // A CPU to plan for (hal::DeviceOptions::cpu): on a CPU device, the
  // hardware model's vectors, registers and caches become that CPU's; the
  // driver still compiles for its own. UserError for a GPU or accelerator.
  std::string cpu;
};
std::unique_ptr<hal::Device> MakeOpenClDevice(const DeviceDesc& desc, const ClDeviceOptions& options = {});

// A device running on the caller's `context` and `queue` (retained), whose
// device must be one ListDevices reports. UsageError for a NULL or invalid
// handle or a queue of another context (opencl::Device's constructor).
std::unique_ptr<hal::Device> MakeOpenClDeviceOn(cl_context context, cl_command_queue queue);

}  // namespace tilec::hal::opencl
