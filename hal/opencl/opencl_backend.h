// hal::Device on an OpenCL device: sem -> OpenCL C (emit_opencl.h), built
// and launched through opencl_device.h.
#pragma once

#include <memory>
#include <string>

#include "hal/hal.h"
#include "hal/opencl/opencl_info.h"

namespace tilec::hal::opencl {

struct ClDeviceOptions {
  // Appended to the options of every clBuildProgram (tests pass a -D that
  // breaks the source to exercise build failures).
  std::string build_options;
  // How kernels access image tensors (hal.h); kAuto resolves by the
  // device's type when the device is made.
  ImageAccess image_access = ImageAccess::kAuto;
};
std::unique_ptr<hal::Device> MakeOpenClDevice(const DeviceDesc& desc, const ClDeviceOptions& options = {});

// A device running on the caller's `context` and `queue` (retained), whose
// device must be one ListDevices reports. UsageError for a NULL or invalid
// handle or a queue of another context (opencl::Device's constructor).
std::unique_ptr<hal::Device> MakeOpenClDeviceOn(cl_context context, cl_command_queue queue);

}  // namespace tilec::hal::opencl
