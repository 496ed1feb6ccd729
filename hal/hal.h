// The backend interface: what the runtime needs from a device, whatever it
// is (OpenCL through the ICD loader, the host CPU through LLVM).
//
// A Device allocates buffers, moves bytes, turns a sem module into target
// code (EmitCode, for `--emit`) and builds it, with the launch table of its
// kernels (launch_table.h), into an Executable whose kernels it launches
// synchronously. Nothing else of the compiler's plans reaches a device.
//
// Thread safety: every Device member, and Executable::Launch, may be called
// from several threads at once (launches of one Executable may serialize).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/schedule/hardware_model.h"
#include "compiler/sem/ir.h"
#include "hal/kernel_cache.h"
#include "hal/launch_table.h"
#include "tile_lang/types.h"

namespace tilec::hal {

class DeviceBuffer {
 public:
  virtual ~DeviceBuffer() = default;
  virtual size_t size() const = 0;  // bytes
};

// The kernels of one launch table, built for one device.
class Executable {
 public:
  virtual ~Executable() = default;
  // Runs kernel `index` (position in LaunchTable::kernels) on `buffers`
  // (its parameters, as LaunchTable::Kernel::buffers lists them) and waits
  // for it.
  // Returns the kernel's device time in nanoseconds.
  virtual uint64_t Launch(size_t index, const std::vector<DeviceBuffer*>& buffers) = 0;
  // Launch without measuring the time (the embedding API's fast path, where
  // reading the clock twice costs a third of a tiny run).
  virtual void LaunchUntimed(size_t index, const std::vector<DeviceBuffer*>& buffers) {
    Launch(index, buffers);
  }
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const std::string& id() const = 0;            // "opencl:0:0", "llvm:cpu"
  virtual std::string Describe() const = 0;             // name, vendor, … for `tilec devices`
  virtual const compiler::HardwareModel& hardware_model() const = 0;
  // Why this host cannot run the device's code ("the host lacks avx512f"),
  // empty when it can: a device compiling for another CPU (DeviceOptions::cpu)
  // still plans, emits and writes objects, but Build is a UserError.
  virtual std::string WhyCannotRun() const { return {}; }

  virtual std::unique_ptr<DeviceBuffer> Allocate(size_t bytes) = 0;
  // Storage for a tensor whose layout is an image (tile_lang/layout.h,
  // ImageStorage): `width` x `height` RGBA pixels of `dtype`. Write and Read
  // move its linear equivalent (pixels row-major, 4 elements each). Devices
  // without images (the CPU) give a plain buffer of those bytes; OpenCL an
  // image2d (hal/opencl/opencl_images.h), DeviceError if the device has no
  // image support or the size exceeds its limits, UserError for a dtype
  // other than f32 and f16.
  virtual std::unique_ptr<DeviceBuffer> AllocateImage(int64_t width, int64_t height, lang::DataType dtype) {
    return Allocate(static_cast<size_t>(width * height * 4) * lang::ByteSize(dtype));
  }
  virtual void Write(DeviceBuffer& buffer, const void* data, size_t bytes) = 0;
  virtual void Read(const DeviceBuffer& buffer, void* data, size_t bytes) = 0;

  // A buffer over `bytes` of caller-owned host memory at `data` (which must
  // outlive it), so kernels read and write that memory in place: host memory
  // on CPU devices, CL_MEM_USE_HOST_PTR on OpenCL. Null when the device
  // cannot use the memory directly (the caller then copies through Allocate).
  virtual std::unique_ptr<DeviceBuffer> WrapHost(void* data, size_t bytes) { return nullptr; }
  // Makes the kernels' writes to a WrapHost buffer visible in its host memory.
  virtual void SyncHost(DeviceBuffer& buffer) {}
  // Points a buffer WrapHost returned at other host memory of `bytes` (> 0),
  // so a caller running again on new memory allocates nothing; false if the
  // device cannot (OpenCL: a CL_MEM_USE_HOST_PTR buffer is bound to its
  // memory), and then the caller wraps the memory anew.
  virtual bool RewrapHost(DeviceBuffer& buffer, void* data, size_t bytes) { return false; }

  // A buffer over memory the caller already has on this device (`handle` is
  // a cl_mem on OpenCL; retained while the buffer lives), which kernels use
  // in place: it must hold at least `bytes`, and be writable if `writable`.
  // UsageError if it cannot be used: the device has no such memory (CPU
  // devices), or the handle is invalid, of another context, too small or
  // read-only.
  virtual std::unique_ptr<DeviceBuffer> WrapDeviceMemory(void* handle, size_t bytes, bool writable);

  // The native objects a framework shares with the device: OpenCL's
  // cl_context and cl_command_queue (Tilec runs every command on that queue);
  // both null on devices without them.
  struct NativeHandles {
    void* context = nullptr;
    void* queue = nullptr;
  };
  virtual NativeHandles native_handles() const { return {}; }

  // The target code of `module` (OpenCL C, LLVM IR, …).
  virtual std::string EmitCode(const sem::Module& module) = 0;
  // The target code Build compiles: EmitCode of `module`, plus what the
  // kernels' buffers change (OpenCL: image parameters).
  virtual std::string EmitProgram(const sem::Module& module, const LaunchTable& launches) {
    return EmitCode(module);
  }
  // Builds every kernel of `launches`, whose functions `module` holds.
  // DeviceError (with the build log) if the target compiler rejects the code.
  virtual std::unique_ptr<Executable> Build(const sem::Module& module, const LaunchTable& launches) = 0;

  // The persistent cache Build looks in before generating code and fills
  // after (kernel_cache.h); none by default. Set before the first Build.
  virtual void SetKernelCache(std::shared_ptr<const KernelCache> cache) {}
  virtual KernelCacheStats kernel_cache_stats() const { return {}; }
};

// How OpenCL kernels access tensors with image storage (docs/layouts.md,
// Images). kSampler: read_imagef on the image2d_t, writes packed into it.
// kLinear: through the image's linear buffer (same pixels, same bytes); the
// image2d_t is brought up to date only when something reads it as an image.
// kAuto: kLinear on CPU devices, whose images are emulated in software
// (PoCL: a read_imagef costs tens of nanoseconds), kSampler elsewhere.
enum class ImageAccess { kAuto, kSampler, kLinear };
const char* Name(ImageAccess access);  // "auto", "sampler", "linear"

// What opening a device may choose (runtime/settings.h fills it from the
// environment).
struct DeviceOptions {
  ImageAccess cl_images = ImageAccess::kAuto;
  // The CPU kernels are planned and compiled for (an LLVM CPU name:
  // "znver3", "skylake-avx512", "x86-64-v3"; empty or "host": the host).
  // The llvm device compiles for it (and runs its code only where the host
  // has its features); an OpenCL CPU device plans for its vector width,
  // registers and caches, while its driver compiles for the host.
  std::string cpu;
};

// Opens a device by id: "opencl" (the first OpenCL device), "opencl:P:D".
// UserError for an unknown id (listing the available ones); DeviceError if
// the device exists but cannot be opened.
std::unique_ptr<Device> OpenDevice(const std::string& id, const DeviceOptions& options = {});

// An OpenCL device on the caller's `cl_context` and `cl_command_queue`
// (passed as void* so callers need no OpenCL headers). UsageError for NULL or
// invalid handles, or a queue of another context.
std::unique_ptr<Device> OpenDeviceOn(void* cl_context, void* cl_command_queue);

// Ids of every device this build can open, in a stable order.
std::vector<std::string> ListDeviceIds();

// The `tilec devices` text: one block per device with its id, description
// and hardware model. Says so when there is none.
std::string DescribeAllDevices(const DeviceOptions& options = {});

}  // namespace tilec::hal
