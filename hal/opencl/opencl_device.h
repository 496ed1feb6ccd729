// One OpenCL device opened for use: its context and a profiling command queue,
// buffers, programs (built once per source and options), kernels and launches.
//
// Every operation is synchronous: when a call returns, the device has finished
// it (Launch waits for its event so it can report the kernel's time). Failures
// of the driver throw DeviceError naming the OpenCL call and error; a failed
// build carries the driver's build log. Launch sizes are checked against the
// device's limits before the driver sees them.
//
// Thread safety: Build, Allocate, Write, Read and FillZero may be called from
// several threads. A Kernel carries its arguments, so one Kernel object must
// not be launched from two threads at once (look up one per thread).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "compiler/schedule/hardware_model.h"
#include "hal/kernel_cache.h"
#include "hal/opencl/cl_error.h"
#include "hal/opencl/opencl_info.h"

namespace tilec::hal::opencl {

// Owns one reference to an OpenCL object; copies retain, destruction releases.
template <typename Handle, auto Retain, auto Release>
class ClRef {
 public:
  ClRef() = default;
  // Adopts `handle` (a reference the caller got from a clCreate* call).
  explicit ClRef(Handle handle) : handle_(handle) {}
  ClRef(const ClRef& other) : handle_(other.handle_) {
    if (handle_) Retain(handle_);
  }
  ClRef(ClRef&& other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
  ClRef& operator=(ClRef other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  ~ClRef() {
    if (handle_) Release(handle_);
  }
  Handle get() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr; }

 private:
  Handle handle_ = nullptr;
};

using MemRef = ClRef<cl_mem, clRetainMemObject, clReleaseMemObject>;
using ProgramRef = ClRef<cl_program, clRetainProgram, clReleaseProgram>;
using KernelRef = ClRef<cl_kernel, clRetainKernel, clReleaseKernel>;

// Device memory. Move-only: one owner per allocation.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Buffer&&) noexcept = default;
  Buffer& operator=(Buffer&&) noexcept = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  cl_mem handle() const { return mem_.get(); }
  size_t size() const { return size_; }  // bytes requested (may be 0)

 private:
  friend class Device;
  Buffer(cl_mem mem, size_t size) : mem_(mem), size_(size) {}
  MemRef mem_;
  size_t size_ = 0;
};

// A program built for one device. Copies share the cl_program.
class Program {
 public:
  Program() = default;
  cl_program handle() const { return program_.get(); }
  // The driver's log of the successful build (warnings; often empty).
  const std::string& build_log() const { return build_log_; }

 private:
  friend class Device;
  Program(ProgramRef program, std::string build_log)
      : program_(std::move(program)), build_log_(std::move(build_log)) {}
  ProgramRef program_;
  std::string build_log_;
};

// One __kernel of a built program, with what launch validation needs.
class Kernel {
 public:
  Kernel() = default;
  cl_kernel handle() const { return kernel_.get(); }
  const std::string& name() const { return name_; }
  size_t num_args() const { return num_args_; }
  // CL_KERNEL_WORK_GROUP_SIZE: this kernel's own limit on this device, which
  // may be below the device's maximum (registers, local memory).
  size_t max_work_group_size() const { return max_work_group_size_; }
  // CL_KERNEL_LOCAL_MEM_SIZE: the __local memory the kernel declares itself
  // (static __local arrays), which the launch adds to its __local arguments.
  uint64_t local_mem_size() const { return local_mem_size_; }

 private:
  friend class Device;
  KernelRef kernel_;
  std::string name_;
  size_t num_args_ = 0;
  size_t max_work_group_size_ = 0;
  uint64_t local_mem_size_ = 0;
};

// A __local pointer argument: the driver allocates `bytes` per work group.
struct LocalMemory {
  size_t bytes = 0;
};

// One kernel argument. The Buffer must outlive the Launch call.
class KernelArg {
 public:
  KernelArg(const Buffer& buffer) : value_(buffer.handle()) {}
  explicit KernelArg(cl_mem mem) : value_(mem) {}  // an image (opencl_images.h)
  KernelArg(int32_t v) : value_(v) {}
  KernelArg(int64_t v) : value_(v) {}
  KernelArg(float v) : value_(v) {}
  KernelArg(double v) : value_(v) {}
  KernelArg(LocalMemory local) : value_(local) {}

  using Value = std::variant<cl_mem, int32_t, int64_t, float, double, LocalMemory>;
  const Value& value() const { return value_; }

 private:
  Value value_;
};

struct LaunchResult {
  uint64_t duration_ns = 0;  // CL_PROFILING_COMMAND_END - CL_PROFILING_COMMAND_START
  uint64_t queued_ns = 0;    // CL_PROFILING_COMMAND_START - CL_PROFILING_COMMAND_QUEUED
};

class Device {
 public:
  // Creates a context and an in-order command queue with profiling on `desc`.
  explicit Device(DeviceDesc desc);
  // Runs on the caller's `context` and `queue` (both retained) instead, so
  // buffers the caller made in that context can be used in place. The queue
  // must belong to `context` and to `desc.device` (UsageError otherwise).
  // Without CL_QUEUE_PROFILING_ENABLE on the queue, launches report 0 ns.
  Device(DeviceDesc desc, cl_context context, cl_command_queue queue);
  ~Device();
  Device(Device&&) noexcept;
  Device& operator=(Device&&) noexcept;

  const DeviceDesc& desc() const;
  const compiler::HardwareModel& hardware_model() const;
  cl_context context() const;
  cl_command_queue queue() const;

  // `bytes` may be 0 (a zero-element tensor); more than the device's maximum
  // allocation throws DeviceError.
  Buffer Allocate(size_t bytes);
  // Copy `bytes` (<= buffer.size()) from the host to the start of `buffer`.
  void Write(Buffer& buffer, const void* data, size_t bytes);
  // Copy `bytes` (<= buffer.size()) from the start of `buffer` to the host.
  void Read(const Buffer& buffer, void* data, size_t bytes);
  void FillZero(Buffer& buffer);
  // A buffer over caller-owned host memory (CL_MEM_USE_HOST_PTR), which must
  // outlive it; `bytes` > 0. DeviceError if the driver refuses it.
  Buffer WrapHost(void* data, size_t bytes);
  // Maps and unmaps a WrapHost buffer, so the device's writes are in its host memory.
  void SyncHost(const Buffer& buffer);
  // A Buffer sharing the caller's `mem` (retained), which kernels use in
  // place. UsageError unless `mem` is a buffer object of this device's
  // context holding at least `bytes`, and (`writable`) not CL_MEM_READ_ONLY
  // writable by kernels (not CL_MEM_READ_ONLY).
  Buffer Adopt(cl_mem mem, size_t bytes, bool writable);

  // Builds `source` with `options` (clBuildProgram's option string), or returns
  // the program built before for the same (source, options) on this device:
  // the cache lives as long as the Device and its context. A failed build
  // throws DeviceError whose build_log() is the driver's full log; failures
  // are not cached.
  Program Build(const std::string& source, const std::string& options = {});
  size_t cached_program_count() const;

  // The disk cache of program binaries Build looks in (keyed by Tilec's
  // version, the platform and device names, versions and driver, the build
  // options and the source) and fills after building from source.
  void SetKernelCache(std::shared_ptr<const KernelCache> cache);
  KernelCacheStats kernel_cache_stats() const;

  // The __kernel `name` of `program`; an unknown name throws DeviceError.
  Kernel GetKernel(const Program& program, const std::string& name);

  // Runs `kernel` over `global` work items in groups of `local` (the first
  // `dims` entries of each count; dims in 1..3), waits for it and returns its
  // profiled time. `local` all zero lets the driver choose the group size.
  // A wrong argument count, a zero size or a global size not divisible by the
  // local size is a caller bug (InternalError); a group larger than the device
  // or kernel allows, or more local memory than the device has, throws
  // DeviceError. Both happen before the driver is called. (Some drivers, PoCL
  // among them, abort the process on a launch whose local memory exceeds the
  // device's instead of returning CL_OUT_OF_RESOURCES.)
  LaunchResult Launch(const Kernel& kernel, const std::vector<KernelArg>& args,
                      std::array<size_t, 3> global, std::array<size_t, 3> local, int dims);

  // Copies all of a [width, height] 2-D image into `buffer` (its pixels
  // row-major, no pitch) or back, waits, and returns the copy's profiled time.
  uint64_t CopyImageToBuffer(cl_mem image, Buffer& buffer, size_t width, size_t height);
  uint64_t CopyBufferToImage(const Buffer& buffer, cl_mem image, size_t width, size_t height);

  // Waits until all work queued on the device is done.
  void Finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Opens the device with id "opencl:P:D" (see ListDevices), or the first device
// for "opencl". An unknown id throws UserError listing the available ids.
Device OpenDevice(const std::string& id);

}  // namespace tilec::hal::opencl
