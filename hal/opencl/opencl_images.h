// Tensors with image storage on OpenCL (tile_lang/layout.h ImageStorage: the
// MACE image2d mappings of seed 000).
//
// An image tensor is a CL_RGBA image2d of CL_FLOAT (f32) or CL_HALF_FLOAT
// (f16, where the device lists that format) pixels. Its host bytes are the
// layout's linear equivalent (pixels row-major, 4 elements each), which is
// exactly what clEnqueueRead/WriteImage move with a row pitch of width * 4
// elements, and what its `linear` buffer holds.
//
// A ClImage has two forms of the same bytes, each made on first use: the
// image2d_t and the linear buffer. Whichever was written last is current;
// the other is brought up to date by one clEnqueueCopy{Image,Buffer}To*
// when it is asked for. Kernels write whole pixels only through the linear
// buffer (so every kernel kind can write an image); they read the image with
// read_imagef (ImageAccess::kSampler) or the linear buffer (kLinear: on CPU
// devices, where images are software, no copy is ever made). A kernel that
// writes only part of a tensor (a contraction after its Fill) keeps the rest,
// since the linear buffer is brought up to date before it runs. See
// docs/layouts.md ("Images") for why, and the measured cost.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "hal/hal.h"
#include "hal/launch_table.h"
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

// An image tensor's storage (hal::DeviceBuffer): the image and its linear
// buffer (above). Thread-safe; each method returns the device time of the
// copy it made (0 if none).
class ClImage final : public DeviceBuffer {
 public:
  // `prefer_linear`: host writes go to the linear buffer (kLinear devices),
  // else to the image.
  ClImage(Device& device, int64_t width, int64_t height, lang::DataType dtype, bool prefer_linear);
  size_t size() const override { return bytes_; }
  int64_t width() const { return width_; }
  int64_t height() const { return height_; }
  lang::DataType dtype() const { return dtype_; }

  void Write(const void* data, size_t bytes);
  void Read(void* data, size_t bytes) const;
  // The image, up to date, for a kernel that reads it.
  cl_mem ImageForRead(uint64_t* copy_ns);
  // The linear buffer, up to date, for a kernel that reads it or writes it;
  // after a write the image is out of date.
  Buffer& LinearForRead(uint64_t* copy_ns);
  Buffer& LinearForWrite(uint64_t* copy_ns);
  // For tests: how many copies between the two forms this image made.
  int copies() const { return copies_; }

 private:
  enum class Current { kNone, kImage, kLinear, kBoth };  // kNone: never written (zeros)
  cl_mem Image();    // (mutex_ held)
  Buffer& Linear();  // made on first use (mutex_ held)
  void MakeLinearCurrent(uint64_t* copy_ns);
  void MakeImageCurrent(uint64_t* copy_ns);

  Device& device_;
  int64_t width_, height_;
  lang::DataType dtype_;
  bool prefer_linear_;
  size_t bytes_;
  mutable std::mutex mutex_;
  MemRef image_;  // made by the constructor
  std::optional<Buffer> linear_;
  Current current_ = Current::kNone;
  int copies_ = 0;
};

// Per kernel of a launch table, which parameters are image tensors: read ones
// (positions -> width, for EmitOptions::read_images; kSampler only), read
// through their linear buffer (kLinear), and written ones (the kernel gets
// their linear buffer).
struct KernelImages {
  std::map<size_t, int64_t> read;
  std::vector<size_t> read_linear;
  std::vector<size_t> written;
};
// Checks every image buffer of `launches` against `support` (CheckImage).
// `access` is kSampler or kLinear.
std::vector<KernelImages> PlanImages(const LaunchTable& launches, const ImageSupport& support,
                                     ImageAccess access);

}  // namespace tilec::hal::opencl
