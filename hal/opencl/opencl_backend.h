// hal::Device on an OpenCL device: sem -> OpenCL C (emit_opencl.h), built
// and launched through opencl_device.h.
#pragma once

#include <memory>

#include "hal/hal.h"
#include "hal/opencl/opencl_info.h"

namespace tilec::hal::opencl {

std::unique_ptr<hal::Device> MakeOpenClDevice(const DeviceDesc& desc);

}  // namespace tilec::hal::opencl
