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

ClImage::ClImage(Device& device, int64_t width, int64_t height, lang::DataType dtype, bool prefer_linear)
    : device_(device), width_(width), height_(height), dtype_(dtype), prefer_linear_(prefer_linear) {
  bytes_ = static_cast<size_t>(width * height * 4) * lang::ByteSize(dtype);
  // The image is made here even where kernels use the linear buffer, so a
  // device that cannot hold it says so when the tensor is allocated.
  std::lock_guard<std::mutex> lock(mutex_);
  Image();
}

cl_mem ClImage::Image() {
  if (!image_) {
    cl_image_format format = Format(dtype_);
    cl_image_desc desc{};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    // OpenCL has no empty images; a zero-element tensor still gets a handle.
    desc.image_width = static_cast<size_t>(std::max<int64_t>(width_, 1));
    desc.image_height = static_cast<size_t>(std::max<int64_t>(height_, 1));
    cl_int status = CL_SUCCESS;
    cl_mem mem = clCreateImage(device_.context(), CL_MEM_READ_WRITE, &format, &desc, nullptr, &status);
    if (status != CL_SUCCESS)
      ThrowClError("clCreateImage", status, fmt::format("[{}, {}] RGBA pixels", width_, height_));
    image_ = MemRef(mem);
  }
  return image_.get();
}

Buffer& ClImage::Linear() {
  if (!linear_) linear_ = device_.Allocate(bytes_);
  return *linear_;
}

void ClImage::MakeLinearCurrent(uint64_t* copy_ns) {
  if (current_ == Current::kImage && bytes_ > 0) {
    *copy_ns += device_.CopyImageToBuffer(Image(), Linear(), static_cast<size_t>(width_),
                                          static_cast<size_t>(height_));
    ++copies_;
    current_ = Current::kBoth;
  } else if (current_ == Current::kNone) {
    current_ = Current::kLinear;
  }
}

void ClImage::MakeImageCurrent(uint64_t* copy_ns) {
  if (current_ == Current::kLinear && bytes_ > 0) {
    *copy_ns += device_.CopyBufferToImage(Linear(), Image(), static_cast<size_t>(width_),
                                          static_cast<size_t>(height_));
    ++copies_;
    current_ = Current::kBoth;
  } else if (current_ == Current::kNone) {
    current_ = Current::kImage;
  }
}

void ClImage::Write(const void* data, size_t bytes) {
  if (bytes == 0) return;
  TILEC_CHECK(bytes == bytes_, "write of {} bytes to an image of {}", bytes, bytes_);
  std::lock_guard<std::mutex> lock(mutex_);
  if (prefer_linear_) {
    device_.Write(Linear(), data, bytes);
    current_ = Current::kLinear;
    return;
  }
  size_t origin[3] = {0, 0, 0};
  size_t region[3] = {static_cast<size_t>(width_), static_cast<size_t>(height_), 1};
  CheckCl(clEnqueueWriteImage(device_.queue(), Image(), CL_TRUE, origin, region, 0, 0, data, 0, nullptr, nullptr),
          "clEnqueueWriteImage");
  current_ = Current::kImage;
}

void ClImage::Read(void* data, size_t bytes) const {
  if (bytes == 0) return;
  TILEC_CHECK(bytes == bytes_, "read of {} bytes from an image of {}", bytes, bytes_);
  std::lock_guard<std::mutex> lock(mutex_);
  if (current_ == Current::kLinear) {
    device_.Read(*linear_, data, bytes);
    return;
  }
  size_t origin[3] = {0, 0, 0};
  size_t region[3] = {static_cast<size_t>(width_), static_cast<size_t>(height_), 1};
  CheckCl(clEnqueueReadImage(device_.queue(), image_.get(), CL_TRUE, origin, region, 0, 0, data, 0, nullptr, nullptr),
          "clEnqueueReadImage");
}

cl_mem ClImage::ImageForRead(uint64_t* copy_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  MakeImageCurrent(copy_ns);
  return Image();
}

Buffer& ClImage::LinearForRead(uint64_t* copy_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  MakeLinearCurrent(copy_ns);
  return Linear();
}

Buffer& ClImage::LinearForWrite(uint64_t* copy_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  MakeLinearCurrent(copy_ns);
  current_ = Current::kLinear;
  return Linear();
}

std::vector<KernelImages> PlanImages(const LaunchTable& launches, const ImageSupport& support,
                                     ImageAccess access) {
  TILEC_CHECK(access != ImageAccess::kAuto, "image access not resolved");
  std::vector<KernelImages> plan;
  for (const LaunchTable::Kernel& k : launches.kernels) {
    KernelImages images;
    for (size_t position = 0; position < k.buffers.size(); ++position) {
      const LaunchTable::Buffer& b = k.buffers[position];
      if (!b.image) continue;
      CheckImage(support, b.tensor, b.image->width, b.image->height, b.dtype);
      if (b.written) images.written.push_back(position);
      else if (access == ImageAccess::kLinear) images.read_linear.push_back(position);
      else images.read[position] = b.image->width;
    }
    plan.push_back(std::move(images));
  }
  return plan;
}

}  // namespace tilec::hal::opencl
