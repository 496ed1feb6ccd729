#include "hal/opencl/opencl_images.h"

#include <fmt/format.h>

#include <algorithm>

#include "hal/opencl/opencl_info.h"
#include "support/error.h"

namespace tilec::hal::opencl {
namespace {

cl_image_format Format(lang::DataType dtype) {
  return cl_image_format{CL_RGBA, static_cast<cl_channel_type>(dtype == lang::DataType::F16 ? CL_HALF_FLOAT : CL_FLOAT)};
}

}  // namespace

ImageSupport QueryImageSupport(const Device& device) {
  ImageSupport s;
  cl_device_id id = device.desc().device;
  s.device = device.desc().id;
  s.images = DeviceValue<cl_bool>(id, CL_DEVICE_IMAGE_SUPPORT, "CL_DEVICE_IMAGE_SUPPORT") == CL_TRUE;
  if (!s.images) return s;
  s.max_width = static_cast<int64_t>(DeviceValue<size_t>(id, CL_DEVICE_IMAGE2D_MAX_WIDTH, "CL_DEVICE_IMAGE2D_MAX_WIDTH"));
  s.max_height =
      static_cast<int64_t>(DeviceValue<size_t>(id, CL_DEVICE_IMAGE2D_MAX_HEIGHT, "CL_DEVICE_IMAGE2D_MAX_HEIGHT"));
  cl_uint count = 0;
  CheckCl(clGetSupportedImageFormats(device.context(), CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, 0, nullptr, &count),
          "clGetSupportedImageFormats");
  std::vector<cl_image_format> formats(count);
  if (count)
    CheckCl(clGetSupportedImageFormats(device.context(), CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, count,
                                       formats.data(), nullptr),
            "clGetSupportedImageFormats");
  for (const cl_image_format& f : formats) {
    if (f.image_channel_order != CL_RGBA) continue;
    s.rgba_float |= f.image_channel_data_type == CL_FLOAT;
    s.rgba_half |= f.image_channel_data_type == CL_HALF_FLOAT;
  }
  return s;
}

void CheckImage(const ImageSupport& support, const std::string& tensor, int64_t width, int64_t height,
                lang::DataType dtype) {
  if (dtype != lang::DataType::F32 && dtype != lang::DataType::F16) {
    TILEC_USER_ERROR("tensor '{}' is {} in an image layout; OpenCL images hold f32 (CL_FLOAT) or f16 "
                     "(CL_HALF_FLOAT) only: give it a buffer layout",
                     tensor, lang::Name(dtype));
  }
  if (!support.images) {
    throw DeviceError(fmt::format("tensor '{}' has an image layout, but OpenCL device {} has no image support "
                                  "(CL_DEVICE_IMAGE_SUPPORT is false): give it a buffer layout",
                                  tensor, support.device));
  }
  bool half = dtype == lang::DataType::F16;
  if (!(half ? support.rgba_half : support.rgba_float)) {
    throw DeviceError(fmt::format("tensor '{}' needs CL_RGBA / {} images, which OpenCL device {} does not support",
                                  tensor, half ? "CL_HALF_FLOAT" : "CL_FLOAT", support.device));
  }
  if (width > support.max_width || height > support.max_height) {
    throw DeviceError(fmt::format(
        "tensor '{}' needs an image of [{}, {}] pixels [width, height], beyond OpenCL device {}'s limits "
        "(CL_DEVICE_IMAGE2D_MAX_WIDTH {}, CL_DEVICE_IMAGE2D_MAX_HEIGHT {})",
        tensor, width, height, support.device, support.max_width, support.max_height));
  }
}

ClImage::ClImage(Device& device, int64_t width, int64_t height, lang::DataType dtype)
    : device_(device), width_(width), height_(height), dtype_(dtype) {
  bytes_ = static_cast<size_t>(width * height * 4) * lang::ByteSize(dtype);
  cl_image_format format = Format(dtype);
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  // OpenCL has no empty images; a zero-element tensor still gets a handle.
  desc.image_width = static_cast<size_t>(std::max<int64_t>(width, 1));
  desc.image_height = static_cast<size_t>(std::max<int64_t>(height, 1));
  cl_int status = CL_SUCCESS;
  cl_mem mem = clCreateImage(device.context(), CL_MEM_READ_WRITE, &format, &desc, nullptr, &status);
  if (status != CL_SUCCESS)
    ThrowClError("clCreateImage", status, fmt::format("[{}, {}] RGBA pixels", width, height));
  image_ = MemRef(mem);
}

void ClImage::Write(const void* data, size_t bytes) {
  if (bytes == 0) return;
  TILEC_CHECK(bytes == bytes_, "write of {} bytes to an image of {}", bytes, bytes_);
  size_t origin[3] = {0, 0, 0};
  size_t region[3] = {static_cast<size_t>(width_), static_cast<size_t>(height_), 1};
  CheckCl(clEnqueueWriteImage(device_.queue(), image(), CL_TRUE, origin, region, 0, 0, data, 0, nullptr, nullptr),
          "clEnqueueWriteImage");
  std::lock_guard<std::mutex> lock(mutex_);
  if (linear_) device_.Write(*linear_, data, bytes);
}

void ClImage::Read(void* data, size_t bytes) const {
  if (bytes == 0) return;
  TILEC_CHECK(bytes == bytes_, "read of {} bytes from an image of {}", bytes, bytes_);
  size_t origin[3] = {0, 0, 0};
  size_t region[3] = {static_cast<size_t>(width_), static_cast<size_t>(height_), 1};
  CheckCl(clEnqueueReadImage(device_.queue(), image(), CL_TRUE, origin, region, 0, 0, data, 0, nullptr, nullptr),
          "clEnqueueReadImage");
}

Buffer& ClImage::Linear() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!linear_) {
    linear_ = device_.Allocate(bytes_);
    if (bytes_ > 0) {
      size_t origin[3] = {0, 0, 0};
      size_t region[3] = {static_cast<size_t>(width_), static_cast<size_t>(height_), 1};
      CheckCl(clEnqueueCopyImageToBuffer(device_.queue(), image(), linear_->handle(), origin, region, 0, 0, nullptr,
                                         nullptr),
              "clEnqueueCopyImageToBuffer");
      device_.Finish();
    }
  }
  return *linear_;
}

std::vector<KernelImages> PlanImages(const compiler::CompiledProgram& program, const ImageSupport& support) {
  std::vector<KernelImages> plan;
  for (const compiler::CompiledKernel& k : program.kernels) {
    KernelImages images;
    size_t position = 0;
    auto note = [&](const std::string& name, bool written) {
      const lang::TensorDecl& t = program.program.Tensor(name);
      if (const auto& im = t.layout.image) {
        CheckImage(support, name, im->width, im->height, t.shape.dtype);
        if (written) images.written.push_back(position);
        else images.read[position] = im->width;
      }
      ++position;
    };
    for (const std::string& n : k.spec.outputs) note(n, true);
    for (const std::string& n : k.spec.inputs) note(n, false);
    plan.push_back(std::move(images));
  }
  return plan;
}

std::string PackImageSource() {
  // Without cl_khr_fp16, half is a storage type: vload_half4 still reads it.
  return R"(
// Image packs (hal/opencl/opencl_images.h): a linear buffer into an RGBA
// image, one whole pixel per work item.
__kernel void tilec_pack_image_f32(__global const float4* src, __write_only image2d_t dst, int width) {
  int x = get_global_id(0), y = get_global_id(1);
  write_imagef(dst, (int2)(x, y), src[y * width + x]);
}
__kernel void tilec_pack_image_f16(__global const half* src, __write_only image2d_t dst, int width) {
  int x = get_global_id(0), y = get_global_id(1);
  write_imagef(dst, (int2)(x, y), vload_half4(y * width + x, src));
}
)";
}

uint64_t PackImage(Device& device, const Kernel& pack_f32, const Kernel& pack_f16, ClImage& image) {
  if (image.size() == 0) return 0;
  const Kernel& k = image.dtype() == lang::DataType::F16 ? pack_f16 : pack_f32;
  std::vector<KernelArg> args;
  args.emplace_back(image.Linear());
  args.emplace_back(image.image());
  args.emplace_back(static_cast<int32_t>(image.width()));
  std::array<size_t, 3> global = {static_cast<size_t>(image.width()), static_cast<size_t>(image.height()), 1};
  return device.Launch(k, args, global, {0, 0, 0}, 2).duration_ns;
}

}  // namespace tilec::hal::opencl
