// Tensors with image storage on OpenCL (tile_lang/layout.h ImageStorage: the
// MACE image2d mappings of seed 000).
//
// An image tensor is a CL_RGBA image2d of CL_FLOAT (f32) or CL_HALF_FLOAT
// (f16, where the device lists that format) pixels. Its host bytes are the
// layout's linear equivalent (pixels row-major, 4 elements each), which is
// exactly what clEnqueueRead/WriteImage move with a row pitch of width * 4
// elements.
//
// Kernels read an image with read_imagef (emit_opencl.h, read_images). A
// kernel that writes one writes whole pixels only through a pack: it stores
// into the image's `linear` buffer (its linear equivalent, created on first
// write), then the pack kernel below copies that buffer into the image,
// 4 elements per write_imagef. The linear buffer is kept equal to the image
// (host writes go to both), so a kernel that writes only part of the tensor
// (a contraction after its Fill) keeps the rest. See docs/layouts.md
// ("Images") for why, and the measured cost.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "compiler/pipeline.h"
#include "hal/hal.h"
#include "hal/opencl/opencl_device.h"

namespace tilec::hal::opencl {

// What a device offers for images (clGetDeviceInfo, clGetSupportedImageFormats).
struct ImageSupport {
  bool images = false;           // CL_DEVICE_IMAGE_SUPPORT
  int64_t max_width = 0;         // CL_DEVICE_IMAGE2D_MAX_WIDTH, pixels
  int64_t max_height = 0;        // CL_DEVICE_IMAGE2D_MAX_HEIGHT
  bool rgba_float = false;       // CL_RGBA / CL_FLOAT readable and writable
  bool rgba_half = false;        // CL_RGBA / CL_HALF_FLOAT
  std::string device;            // the device id, for messages
};
ImageSupport QueryImageSupport(const Device& device);

// Throws for an image `tensor` the device cannot hold: UserError for a dtype
// other than f32/f16, DeviceError without image support, without the
// format, or beyond the size limits. Each message names the tensor.
void CheckImage(const ImageSupport& support, const std::string& tensor, int64_t width, int64_t height,
                lang::DataType dtype);

// An image tensor's storage (hal::DeviceBuffer): the image and, once a
// kernel writes it, its linear buffer.
class ClImage final : public DeviceBuffer {
 public:
  ClImage(Device& device, int64_t width, int64_t height, lang::DataType dtype);
  size_t size() const override { return bytes_; }
  cl_mem image() const { return image_.get(); }
  int64_t width() const { return width_; }
  int64_t height() const { return height_; }
  lang::DataType dtype() const { return dtype_; }

  void Write(const void* data, size_t bytes);
  void Read(void* data, size_t bytes) const;
  // The linear buffer (created holding the image's contents on first use).
  Buffer& Linear();

 private:
  Device& device_;
  int64_t width_, height_;
  lang::DataType dtype_;
  size_t bytes_;
  MemRef image_;
  std::mutex mutex_;
  std::optional<Buffer> linear_;
};

// Per kernel of a program, which parameters are image tensors: read ones
// (positions -> width, for EmitOptions::read_images) and written ones (the
// kernel gets their linear buffer and a pack follows).
struct KernelImages {
  std::map<size_t, int64_t> read;
  std::vector<size_t> written;
};
// Checks every image tensor of `program` against `support` (CheckImage).
std::vector<KernelImages> PlanImages(const compiler::CompiledProgram& program, const ImageSupport& support);

// OpenCL C of the pack kernels, tilec_pack_image_f32 / _f16: (linear buffer,
// __write_only image2d_t, width) over a (width, height) range.
std::string PackImageSource();

// Runs the pack kernel of `image`'s dtype from `program` (built with
// PackImageSource): its linear buffer into the image. Returns device ns.
uint64_t PackImage(Device& device, const Kernel& pack_f32, const Kernel& pack_f16, ClImage& image);

}  // namespace tilec::hal::opencl
