// OpenDevice, ListDeviceIds and DescribeAllDevices over every backend: the
// host CPU through LLVM ("llvm:cpu", always present) and the OpenCL devices.
#include <fmt/format.h>

#include "compiler/schedule/hardware_model.h"
#include "hal/hal.h"
#include "hal/llvm/llvm_device.h"
#include "hal/opencl/opencl_backend.h"
#include "hal/opencl/opencl_info.h"
#include "support/error.h"

namespace tilec::hal {
namespace {

// `text` with every line indented by `pad` spaces.
std::string Indent(const std::string& text, int pad) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    out += fmt::format("{:{}}{}\n", "", pad, std::string_view(text).substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

std::string DescribeLlvm(const std::string& cpu_name) {
  std::string out = fmt::format("{}\n", cpu::LlvmDevice::kId);
  try {
    cpu::LlvmDevice device(cpu_name);
    out += fmt::format("  description: {}\n", device.Describe());
    out += "  hardware model:\n" + Indent(compiler::ToString(device.hardware_model()), 4);
  } catch (const Error& e) {
    out += fmt::format("  unavailable: {}\n", e.what());
  }
  return out;
}

}  // namespace

std::vector<std::string> ListDeviceIds() {
  std::vector<std::string> ids = {cpu::LlvmDevice::kId};
  for (const opencl::DeviceDesc& d : opencl::ListDevices()) ids.push_back(d.id);
  return ids;
}

const char* Name(ImageAccess access) {
  switch (access) {
    case ImageAccess::kAuto: return "auto";
    case ImageAccess::kSampler: return "sampler";
    case ImageAccess::kLinear: return "linear";
  }
  return "?";
}

std::unique_ptr<Device> OpenDevice(const std::string& id, const DeviceOptions& options) {
  if (id == "llvm" || id == cpu::LlvmDevice::kId) return std::make_unique<cpu::LlvmDevice>(options.cpu);
  if (id == "opencl" || id.rfind("opencl:", 0) == 0) {
    std::vector<opencl::DeviceDesc> devices = opencl::ListDevices();
    if (devices.empty())
      TILEC_USER_ERROR(
          "no OpenCL device found (is an OpenCL driver such as pocl-opencl-icd "
          "installed and registered in /etc/OpenCL/vendors?)");
    std::vector<std::string> ids;
    for (const opencl::DeviceDesc& d : devices) {
      if (id == "opencl" || d.id == id) return opencl::MakeOpenClDevice(d, {.build_options = "", .image_access = options.cl_images, .cpu = options.cpu});
      ids.push_back(d.id);
    }
    // A mistyped OpenCL id: the OpenCL ids are the ones to choose from.
    TILEC_USER_ERROR("unknown device '{}' (available: {})", id, fmt::join(ids, ", "));
  }
  TILEC_USER_ERROR("unknown device '{}' (available: {})", id, fmt::join(ListDeviceIds(), ", "));
}

std::unique_ptr<DeviceBuffer> Device::WrapDeviceMemory(void* handle, size_t bytes, bool writable) {
  throw UsageError(fmt::format(
      "device '{}' runs on host memory: a cl_mem can only be used by a program compiled for an "
      "OpenCL device",
      id()));
}

std::unique_ptr<Device> OpenDeviceOn(void* cl_context, void* cl_command_queue) {
  return opencl::MakeOpenClDeviceOn(static_cast<::cl_context>(cl_context),
                                    static_cast<::cl_command_queue>(cl_command_queue));
}

std::string DescribeAllDevices(const DeviceOptions& options) {
  return DescribeLlvm(options.cpu) + "\n" + opencl::DescribeDevices(options.cl_images);
}

}  // namespace tilec::hal
