#include <fmt/format.h>

#include "compiler/hardware_model.h"
#include "hal/hal.h"
#include "hal/opencl/opencl_backend.h"
#include "hal/opencl/opencl_info.h"
#include "support/error.h"

namespace tilec::hal {

std::vector<std::string> ListDeviceIds() {
  std::vector<std::string> ids;
  for (const opencl::DeviceDesc& d : opencl::ListDevices()) ids.push_back(d.id);
  return ids;
}

std::unique_ptr<Device> OpenDevice(const std::string& id) {
  if (id == "opencl" || id.rfind("opencl:", 0) == 0) {
    std::vector<opencl::DeviceDesc> devices = opencl::ListDevices();
    if (devices.empty())
      TILEC_USER_ERROR("no OpenCL device found (is an OpenCL driver such as pocl-opencl-icd "
                       "installed and registered in /etc/OpenCL/vendors?)");
    for (const opencl::DeviceDesc& d : devices)
      if (id == "opencl" || d.id == id) return opencl::MakeOpenClDevice(d);
  }
  std::vector<std::string> ids = ListDeviceIds();
  TILEC_USER_ERROR("unknown device '{}' (available: {})", id,
                   ids.empty() ? std::string("none") : fmt::format("{}", fmt::join(ids, ", ")));
}

std::string DescribeAllDevices() { return opencl::DescribeDevices(); }

}  // namespace tilec::hal
