#include "hal/opencl/opencl_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>

#include "hal/llvm/cpu_info.h"
#include "hal/opencl/emit_opencl.h"
#include "hal/opencl/opencl_device.h"
#include "hal/opencl/opencl_images.h"
#include "support/error.h"

namespace tilec::hal::opencl {
namespace {

class ClBuffer final : public DeviceBuffer {
 public:
  explicit ClBuffer(Buffer b) : buffer_(std::move(b)) {}
  size_t size() const override { return buffer_.size(); }
  Buffer& buffer() { return buffer_; }
  const Buffer& buffer() const { return buffer_; }

 private:
  Buffer buffer_;
};

class ClExecutable final : public Executable {
 public:
  // A failed build is a DeviceError naming the program's kernels, with the
  // driver's message and build log.
  ClExecutable(opencl::Device& device, const LaunchTable& launches, const std::string& source,
               const std::string& build_options, std::vector<KernelImages> images)
      : device_(device), images_(std::move(images)) {
    Program built;
    try {
      built = device.Build(source, kBuildOptions + build_options);
    } catch (const DeviceError& e) {
      std::string names;
      for (const LaunchTable::Kernel& k : launches.kernels)
        names += fmt::format("{}'{}'", names.empty() ? "" : ", ", k.function);
      throw DeviceError(fmt::format("cannot build kernel{} {}: {}",
                                    launches.kernels.size() == 1 ? "" : "s", names, e.what()),
                        e.build_log());
    }
    for (const LaunchTable::Kernel& k : launches.kernels) {
      kernels_.push_back(device.GetKernel(built, k.function));
      global_.push_back(k.global);
      local_.push_back(k.local);
    }
  }

  uint64_t Launch(size_t index, const std::vector<DeviceBuffer*>& buffers) override {
    TILEC_CHECK(index < kernels_.size(), "kernel {} of {}", index, kernels_.size());
    // A cl_kernel carries its arguments: one launch of this program at a time.
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<KernelArg> args;
    const KernelImages& images = images_[index];
    uint64_t copy_ns = 0;  // bringing an image's other form up to date (opencl_images.h)
    auto has = [](const std::vector<size_t>& v, size_t p) { return std::find(v.begin(), v.end(), p) != v.end(); };
    for (size_t p = 0; p < buffers.size(); ++p) {
      if (images.read.count(p)) {
        args.emplace_back(static_cast<ClImage*>(buffers[p])->ImageForRead(&copy_ns));
      } else if (has(images.read_linear, p)) {
        args.emplace_back(static_cast<ClImage*>(buffers[p])->LinearForRead(&copy_ns));
      } else if (has(images.written, p)) {
        args.emplace_back(static_cast<ClImage*>(buffers[p])->LinearForWrite(&copy_ns));
      } else {
        args.emplace_back(static_cast<ClBuffer*>(buffers[p])->buffer());
      }
    }
    std::array<size_t, 3> global, local;
    for (int d = 0; d < 3; ++d) {
      global[d] = static_cast<size_t>(global_[index][d]);
      local[d] = static_cast<size_t>(local_[index][d]);
    }
    return copy_ns + device_.Launch(kernels_[index], args, global, local, 3).duration_ns;
  }

 private:
  opencl::Device& device_;
  std::mutex mutex_;
  std::vector<Kernel> kernels_;
  std::vector<std::array<int64_t, 3>> global_, local_;
  std::vector<KernelImages> images_;  // per kernel
};

class ClDevice final : public hal::Device {
 public:
  ClDevice(opencl::Device device, const ClDeviceOptions& options)
      : device_(std::move(device)),
        id_(device_.desc().id),
        build_options_(options.build_options.empty() ? "" : " " + options.build_options),
        image_access_(ResolveImageAccess(options.image_access, device_.desc())),
        hw_(device_.hardware_model()) {
    const DeviceDesc& desc = device_.desc();
    if (cpu::CpuInfo planned = cpu::NamedCpu(options.cpu); planned.named) {
      if (!desc.is_cpu())
        TILEC_USER_ERROR("--cpu {} names a CPU, but OpenCL device {} ({}) is not one", options.cpu, id_,
                         desc.name);
      compiler::HardwareModel named = cpu::CpuHardwareModel(planned);
      hw_.name = fmt::format("{}, planned for {}", hw_.name, options.cpu);
      planned_for_ = options.cpu;
      hw_.vec_size = named.vec_size;
      hw_.vector_registers = named.vector_registers;
      hw_.mask_registers = named.mask_registers;
      hw_.half_vector_rate = named.half_vector_rate;
      hw_.has_fma = named.has_fma;
      hw_.l1_bytes = named.l1_bytes;
      hw_.l2_bytes = named.l2_bytes;
      hw_.l3_bytes = named.l3_bytes;
    }
    emit_.fp16 = desc.HasExtension("cl_khr_fp16");
    emit_.fp64 = desc.HasExtension("cl_khr_fp64");
    emit_.fast_math = false;
  }

  const std::string& id() const override { return id_; }
  std::string Describe() const override {
    const DeviceDesc& d = device_.desc();
    return fmt::format("{} ({}, {}; {}; images: {}{})", d.name, d.vendor, d.version, d.platform_name,
                       Name(image_access_), planned_for_.empty() ? "" : "; planned for CPU " + planned_for_);
  }
  const compiler::HardwareModel& hardware_model() const override { return hw_; }

  std::unique_ptr<DeviceBuffer> Allocate(size_t bytes) override {
    // A zero-byte buffer is not an OpenCL object: keep one byte so kernels
    // always get a valid pointer.
    return std::make_unique<ClBuffer>(device_.Allocate(std::max<size_t>(bytes, 1)));
  }
  std::unique_ptr<DeviceBuffer> AllocateImage(int64_t width, int64_t height, lang::DataType dtype) override {
    CheckImage(Images(), "(image)", width, height, dtype);
    return std::make_unique<ClImage>(device_, width, height, dtype, image_access_ == ImageAccess::kLinear);
  }
  void Write(DeviceBuffer& b, const void* data, size_t bytes) override {
    if (auto* image = dynamic_cast<ClImage*>(&b)) return image->Write(data, bytes);
    if (bytes) device_.Write(static_cast<ClBuffer&>(b).buffer(), data, bytes);
  }
  void Read(const DeviceBuffer& b, void* data, size_t bytes) override {
    if (auto* image = dynamic_cast<const ClImage*>(&b)) return image->Read(data, bytes);
    if (bytes) device_.Read(static_cast<const ClBuffer&>(b).buffer(), data, bytes);
  }

  std::unique_ptr<DeviceBuffer> WrapHost(void* data, size_t bytes) override {
    if (data == nullptr || bytes == 0) return nullptr;
    return std::make_unique<ClBuffer>(device_.WrapHost(data, bytes));
  }
  void SyncHost(DeviceBuffer& b) override { device_.SyncHost(static_cast<ClBuffer&>(b).buffer()); }

  std::unique_ptr<DeviceBuffer> WrapDeviceMemory(void* handle, size_t bytes, bool writable) override {
    return std::make_unique<ClBuffer>(device_.Adopt(static_cast<cl_mem>(handle), bytes, writable));
  }
  NativeHandles native_handles() const override { return {device_.context(), device_.queue()}; }

  void SetKernelCache(std::shared_ptr<const KernelCache> cache) override {
    device_.SetKernelCache(std::move(cache));
  }
  KernelCacheStats kernel_cache_stats() const override { return device_.kernel_cache_stats(); }

  std::string EmitCode(const sem::Module& module) override { return EmitOpenCL(module, emit_); }

  std::string EmitProgram(const sem::Module& module, const LaunchTable& launches) override {
    return Emit(module, launches, PlanImages(launches, Images(), image_access_));
  }

  std::unique_ptr<Executable> Build(const sem::Module& module, const LaunchTable& launches) override {
    std::vector<KernelImages> images = PlanImages(launches, Images(), image_access_);
    std::string source = Emit(module, launches, images);
    return std::make_unique<ClExecutable>(device_, launches, source, build_options_, std::move(images));
  }

 private:
  opencl::Device device_;
  std::string id_;
  std::string build_options_;  // with a leading space, or empty
  ImageAccess image_access_;   // kSampler or kLinear
  compiler::HardwareModel hw_;  // the device's, or planned for a named CPU
  std::string planned_for_;     // that CPU's name, or empty
  EmitOptions emit_;
  std::once_flag images_once_;
  ImageSupport images_;

  std::string Emit(const sem::Module& module, const LaunchTable& launches,
                   const std::vector<KernelImages>& images) const {
    EmitOptions emit = emit_;
    for (size_t k = 0; k < images.size(); ++k)
      if (!images[k].read.empty()) emit.read_images[launches.kernels[k].function] = images[k].read;
    return EmitOpenCL(module, emit);
  }

  const ImageSupport& Images() {
    std::call_once(images_once_, [&] { images_ = QueryImageSupport(device_); });
    return images_;
  }
};

}  // namespace

std::unique_ptr<hal::Device> MakeOpenClDevice(const DeviceDesc& desc, const ClDeviceOptions& options) {
  return std::make_unique<ClDevice>(opencl::Device(desc), options);
}

std::unique_ptr<hal::Device> MakeOpenClDeviceOn(cl_context context, cl_command_queue queue) {
  if (!context || !queue) throw UsageError("the cl_context or the cl_command_queue is NULL");
  cl_device_id device = nullptr;
  if (clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof device, &device, nullptr) != CL_SUCCESS)
    throw UsageError("the cl_command_queue is not a valid OpenCL command queue");
  for (const DeviceDesc& d : ListDevices())
    if (d.device == device) return std::make_unique<ClDevice>(opencl::Device(d, context, queue), ClDeviceOptions{});
  throw UsageError("the cl_command_queue's device is not one of the OpenCL devices Tilec lists");
}

}  // namespace tilec::hal::opencl
