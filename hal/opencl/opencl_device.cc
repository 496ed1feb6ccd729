#include "hal/opencl/opencl_device.h"

#include <fmt/format.h>

#include <mutex>
#include <optional>
#include <type_traits>
#include <unordered_map>

#include "support/error.h"

namespace tilec::hal::opencl {
namespace {

using ContextRef = ClRef<cl_context, clRetainContext, clReleaseContext>;
using QueueRef = ClRef<cl_command_queue, clRetainCommandQueue, clReleaseCommandQueue>;
using EventRef = ClRef<cl_event, clRetainEvent, clReleaseEvent>;

// The build log, or a note why there is none: a failed build must still be
// reported even if the log query fails too.
std::string BuildLog(cl_program program, cl_device_id device) {
  size_t size = 0;
  cl_int status = clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
  if (status != CL_SUCCESS) {
    return fmt::format("(clGetProgramBuildInfo failed: {})", ClErrorName(status));
  }
  std::string log(size, '\0');
  status = clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  if (status != CL_SUCCESS) {
    return fmt::format("(clGetProgramBuildInfo failed: {})", ClErrorName(status));
  }
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n' || log.back() == ' ')) {
    log.pop_back();
  }
  return log;
}

uint64_t ProfilingInfo(cl_event event, cl_profiling_info what, const char* what_name) {
  cl_ulong value = 0;
  cl_int status = clGetEventProfilingInfo(event, what, sizeof(value), &value, nullptr);
  if (status != CL_SUCCESS) ThrowClError("clGetEventProfilingInfo", status, what_name);
  return value;
}

// Waits for `event`; a command that failed on the device throws DeviceError.
void WaitFor(cl_event event, const char* call, const std::string& what) {
  cl_int status = clWaitForEvents(1, &event);
  cl_int exec = CL_COMPLETE;
  cl_int info =
      clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(exec), &exec, nullptr);
  if (info == CL_SUCCESS && exec < 0) ThrowClError(call, exec, what + " (failed on the device)");
  if (status != CL_SUCCESS) ThrowClError("clWaitForEvents", status, what);
}

// Takes `raw` (an enqueued command's event), waits for it and returns its
// profiled times (0 without profiling on the queue).
LaunchResult Timed(cl_event raw, bool profiling, const char* call, const std::string& what) {
  EventRef event(raw);
  WaitFor(event.get(), call, what);
  if (!profiling) return {};  // a caller's queue without profiling
  uint64_t queued = ProfilingInfo(event.get(), CL_PROFILING_COMMAND_QUEUED, "CL_PROFILING_COMMAND_QUEUED");
  uint64_t start = ProfilingInfo(event.get(), CL_PROFILING_COMMAND_START, "CL_PROFILING_COMMAND_START");
  uint64_t end = ProfilingInfo(event.get(), CL_PROFILING_COMMAND_END, "CL_PROFILING_COMMAND_END");
  LaunchResult result;
  // Guard against drivers whose clocks are not monotonic across these points.
  result.duration_ns = end > start ? end - start : 0;
  result.queued_ns = start > queued ? start - queued : 0;
  return result;
}

std::string JoinSizes(const std::array<size_t, 3>& sizes, int dims) {
  std::string out;
  for (int d = 0; d < dims; ++d) out += fmt::format("{}{}", d ? "x" : "", sizes[d]);
  return out;
}

}  // namespace

struct Device::Impl {
  DeviceDesc desc;
  compiler::HardwareModel hw;
  uint64_t local_mem_bytes = 0;  // what the device really has, for __local arguments
  // Declared before the cache and released after it: programs belong to the context.
  ContextRef context;
  QueueRef queue;
  std::mutex cache_mutex;
  std::unordered_map<std::string, Program> programs;
  std::shared_ptr<const KernelCache> disk;  // program binaries; guarded by cache_mutex
  uint64_t disk_hits = 0, disk_misses = 0;
  bool profiling = true;  // the queue has CL_QUEUE_PROFILING_ENABLE

  ~Impl() {
    // Let queued work finish before the objects it uses go away.
    if (queue) clFinish(queue.get());
  }
};

Device::Device(DeviceDesc desc) : impl_(std::make_unique<Impl>()) {
  TILEC_CHECK(desc.device != nullptr, "device description '{}' has no device handle", desc.id);
  impl_->hw = QueryHardwareModel(desc);
  CheckCl(clGetDeviceInfo(desc.device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(cl_ulong),
                          &impl_->local_mem_bytes, nullptr),
          "clGetDeviceInfo(CL_DEVICE_LOCAL_MEM_SIZE)");
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                   reinterpret_cast<cl_context_properties>(desc.platform), 0};
  cl_int status = CL_SUCCESS;
  impl_->context = ContextRef(clCreateContext(props, 1, &desc.device, nullptr, nullptr, &status));
  if (status != CL_SUCCESS) ThrowClError("clCreateContext", status, desc.id);
  impl_->queue = QueueRef(
      clCreateCommandQueue(impl_->context.get(), desc.device, CL_QUEUE_PROFILING_ENABLE, &status));
  if (status != CL_SUCCESS) ThrowClError("clCreateCommandQueue", status, desc.id);
  impl_->desc = std::move(desc);
}

Device::Device(DeviceDesc desc, cl_context context, cl_command_queue queue)
    : impl_(std::make_unique<Impl>()) {
  TILEC_CHECK(desc.device != nullptr, "device description '{}' has no device handle", desc.id);
  if (!context || !queue) throw UsageError("the cl_context or the cl_command_queue is NULL");
  cl_context queue_context = nullptr;
  cl_device_id queue_device = nullptr;
  cl_command_queue_properties props = 0;
  if (clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof queue_context, &queue_context,
                            nullptr) != CL_SUCCESS ||
      clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof queue_device, &queue_device, nullptr) !=
          CL_SUCCESS ||
      clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof props, &props, nullptr) != CL_SUCCESS)
    throw UsageError("the cl_command_queue is not a valid OpenCL command queue");
  if (queue_context != context)
    throw UsageError("the cl_command_queue belongs to another cl_context than the one given");
  if (queue_device != desc.device)
    throw UsageError(fmt::format("the cl_command_queue is not on device {}", desc.id));
  impl_->hw = QueryHardwareModel(desc);
  CheckCl(clGetDeviceInfo(desc.device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(cl_ulong),
                          &impl_->local_mem_bytes, nullptr),
          "clGetDeviceInfo(CL_DEVICE_LOCAL_MEM_SIZE)");
  CheckCl(clRetainContext(context), "clRetainContext");
  impl_->context = ContextRef(context);
  CheckCl(clRetainCommandQueue(queue), "clRetainCommandQueue");
  impl_->queue = QueueRef(queue);
  impl_->profiling = (props & CL_QUEUE_PROFILING_ENABLE) != 0;
  impl_->desc = std::move(desc);
}

Device::~Device() = default;
Device::Device(Device&&) noexcept = default;
Device& Device::operator=(Device&&) noexcept = default;

const DeviceDesc& Device::desc() const {
  TILEC_CHECK(impl_, "use of a moved-from Device");
  return impl_->desc;
}

const compiler::HardwareModel& Device::hardware_model() const {
  TILEC_CHECK(impl_, "use of a moved-from Device");
  return impl_->hw;
}

cl_context Device::context() const {
  TILEC_CHECK(impl_, "use of a moved-from Device");
  return impl_->context.get();
}

cl_command_queue Device::queue() const {
  TILEC_CHECK(impl_, "use of a moved-from Device");
  return impl_->queue.get();
}

Buffer Device::Allocate(size_t bytes) {
  TILEC_CHECK(impl_, "use of a moved-from Device");
  if (bytes > impl_->desc.max_alloc_bytes) {
    throw DeviceError(
        fmt::format("cannot allocate {} bytes on {}: its largest allocation is {} bytes", bytes,
                    impl_->desc.id, impl_->desc.max_alloc_bytes));
  }
  // OpenCL has no empty buffers; a zero-element tensor still gets a handle.
  cl_int status = CL_SUCCESS;
  cl_mem mem = clCreateBuffer(impl_->context.get(), CL_MEM_READ_WRITE, bytes == 0 ? 1 : bytes,
                              nullptr, &status);
  if (status != CL_SUCCESS) ThrowClError("clCreateBuffer", status, fmt::format("{} bytes", bytes));
  return Buffer(mem, bytes);
}

void Device::Write(Buffer& buffer, const void* data, size_t bytes) {
  TILEC_CHECK(impl_, "use of a moved-from Device");
  TILEC_CHECK(buffer.handle() != nullptr, "write to an empty Buffer");
  TILEC_CHECK(bytes <= buffer.size(), "write of {} bytes to a buffer of {}", bytes, buffer.size());
  if (bytes == 0) return;
  TILEC_CHECK(data != nullptr, "write of {} bytes from a null pointer", bytes);
  CheckCl(clEnqueueWriteBuffer(impl_->queue.get(), buffer.handle(), CL_TRUE, 0, bytes, data, 0,
                               nullptr, nullptr),
          "clEnqueueWriteBuffer");
}

void Device::Read(const Buffer& buffer, void* data, size_t bytes) {
  TILEC_CHECK(impl_, "use of a moved-from Device");
  TILEC_CHECK(buffer.handle() != nullptr, "read from an empty Buffer");
  TILEC_CHECK(bytes <= buffer.size(), "read of {} bytes from a buffer of {}", bytes, buffer.size());
  if (bytes == 0) return;
  TILEC_CHECK(data != nullptr, "read of {} bytes into a null pointer", bytes);
  CheckCl(clEnqueueReadBuffer(impl_->queue.get(), buffer.handle(), CL_TRUE, 0, bytes, data, 0,
                              nullptr, nullptr),
          "clEnqueueReadBuffer");
}

Buffer Device::WrapHost(void* data, size_t bytes) {
  TILEC_CHECK(impl_, "use of a moved-from Device");
  TILEC_CHECK(data != nullptr && bytes > 0, "wrap of {} bytes at {}", bytes, data);
  cl_int status = CL_SUCCESS;
  cl_mem mem = clCreateBuffer(impl_->context.get(), CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes,
                              data, &status);
  if (status != CL_SUCCESS)
    ThrowClError("clCreateBuffer", status, fmt::format("{} bytes of host memory", bytes));
  return Buffer(mem, bytes);
}

void Device::SyncHost(const Buffer& buffer) {
  TILEC_CHECK(impl_, "use of a moved-from Device");
  if (buffer.size() == 0) return;
  cl_int status = CL_SUCCESS;
  void* mapped = clEnqueueMapBuffer(impl_->queue.get(), buffer.handle(), CL_TRUE, CL_MAP_READ, 0,
                                    buffer.size(), 0, nullptr, nullptr, &status);
  if (status != CL_SUCCESS) ThrowClError("clEnqueueMapBuffer", status, fmt::format("{} bytes", buffer.size()));
  cl_event raw = nullptr;
  CheckCl(clEnqueueUnmapMemObject(impl_->queue.get(), buffer.handle(), mapped, 0, nullptr, &raw),
          "clEnqueueUnmapMemObject");
  EventRef event(raw);
  WaitFor(event.get(), "clEnqueueUnmapMemObject", fmt::format("{} bytes", buffer.size()));
}

Buffer Device::Adopt(cl_mem mem, size_t bytes, bool writable) {
  TILEC_CHECK(impl_, "use of a moved-from Device");
  if (!mem) throw UsageError("the cl_mem is NULL");
  cl_mem_object_type type = 0;
  cl_context context = nullptr;
  size_t size = 0;
  cl_mem_flags flags = 0;
  if (clGetMemObjectInfo(mem, CL_MEM_TYPE, sizeof type, &type, nullptr) != CL_SUCCESS ||
      clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof context, &context, nullptr) != CL_SUCCESS ||
      clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, nullptr) != CL_SUCCESS ||
      clGetMemObjectInfo(mem, CL_MEM_FLAGS, sizeof flags, &flags, nullptr) != CL_SUCCESS)
    throw UsageError("the cl_mem is not a valid OpenCL memory object");
  if (type != CL_MEM_OBJECT_BUFFER) throw UsageError("the cl_mem is an image, not a buffer");
  if (context != impl_->context.get())
    throw UsageError(fmt::format(
        "the cl_mem belongs to another cl_context than {}'s (open the device on your context "
        "with tilec_device_open_cl, or create the buffer in tilec_device_cl_handles' context)",
        impl_->desc.id));
  if (size < bytes)
    throw UsageError(fmt::format("the cl_mem holds {} bytes but the tensor needs {}", size, bytes));
  if (writable && (flags & CL_MEM_READ_ONLY))
    throw UsageError("the cl_mem of an output is CL_MEM_READ_ONLY");
  CheckCl(clRetainMemObject(mem), "clRetainMemObject");
  return Buffer(mem, bytes);
}

void Device::FillZero(Buffer& buffer) {
  TILEC_CHECK(impl_, "use of a moved-from Device");
  TILEC_CHECK(buffer.handle() != nullptr, "fill of an empty Buffer");
  if (buffer.size() == 0) return;
  const cl_uchar zero = 0;
  cl_event raw = nullptr;
  CheckCl(clEnqueueFillBuffer(impl_->queue.get(), buffer.handle(), &zero, sizeof(zero), 0,
                              buffer.size(), 0, nullptr, &raw),
          "clEnqueueFillBuffer");
  EventRef event(raw);
  WaitFor(event.get(), "clEnqueueFillBuffer", fmt::format("{} bytes", buffer.size()));
}

Program Device::Build(const std::string& source, const std::string& options) {
  TILEC_CHECK(impl_, "use of a moved-from Device");
  Impl& im = *impl_;
  // Neither the id nor a C option string contains a NUL, so the key is unambiguous.
  std::string key = im.desc.id;
  key += '\0';
  key += options;
  key += '\0';
  key += source;
  // Held across the build: a second thread asking for the same program waits
  // for the first build instead of compiling it again.
  std::lock_guard<std::mutex> lock(im.cache_mutex);
  if (auto it = im.programs.find(key); it != im.programs.end()) return it->second;

  cl_device_id device = im.desc.device;
  // The disk cache: the program binary of an earlier build (any process).
  std::string disk_key;
  if (im.disk) {
    const DeviceDesc& d = im.desc;
    disk_key = fmt::format("opencl-binary 1\ntilec {}\n{}\n{}\n{}\n{}\n{}\n{}\n{}", im.disk->options().version,
                           d.platform_name, d.platform_version, d.name, d.vendor, d.driver_version,
                           options, source);
    if (std::optional<std::string> binary = im.disk->Get(disk_key)) {
      const auto* bytes = reinterpret_cast<const unsigned char*>(binary->data());
      size_t size = binary->size();
      cl_int status = CL_SUCCESS, binary_status = CL_SUCCESS;
      ProgramRef program(clCreateProgramWithBinary(im.context.get(), 1, &device, &size, &bytes,
                                                   &binary_status, &status));
      if (status == CL_SUCCESS && binary_status == CL_SUCCESS &&
          clBuildProgram(program.get(), 1, &device, options.c_str(), nullptr, nullptr) == CL_SUCCESS) {
        ++im.disk_hits;
        std::string log = BuildLog(program.get(), device);
        Program built(std::move(program), std::move(log));
        im.programs.emplace(std::move(key), built);
        return built;
      }
      // A binary the driver refuses: built from source below and replaced.
    }
    ++im.disk_misses;
  }

  const char* text = source.c_str();
  size_t length = source.size();
  cl_int status = CL_SUCCESS;
  ProgramRef program(clCreateProgramWithSource(im.context.get(), 1, &text, &length, &status));
  if (status != CL_SUCCESS) ThrowClError("clCreateProgramWithSource", status);
  status = clBuildProgram(program.get(), 1, &device, options.c_str(), nullptr, nullptr);
  std::string log = BuildLog(program.get(), device);
  if (status != CL_SUCCESS) {
    throw DeviceError(
        fmt::format("clBuildProgram failed: {} ({}) on {}{}", ClErrorName(status), status,
                    im.desc.id, options.empty() ? "" : fmt::format(" with options '{}'", options)),
        std::move(log));
  }
  if (im.disk) {
    size_t size = 0;
    if (clGetProgramInfo(program.get(), CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) ==
            CL_SUCCESS &&
        size > 0) {
      std::string binary(size, '\0');
      unsigned char* out = reinterpret_cast<unsigned char*>(binary.data());
      if (clGetProgramInfo(program.get(), CL_PROGRAM_BINARIES, sizeof out, &out, nullptr) == CL_SUCCESS)
        im.disk->Put(disk_key, binary);
    }
  }
  Program built(std::move(program), std::move(log));
  im.programs.emplace(std::move(key), built);
  return built;
}

void Device::SetKernelCache(std::shared_ptr<const KernelCache> cache) {
  TILEC_CHECK(impl_, "use of a moved-from Device");
  std::lock_guard<std::mutex> lock(impl_->cache_mutex);
  impl_->disk = std::move(cache);
}

KernelCacheStats Device::kernel_cache_stats() const {
  TILEC_CHECK(impl_, "use of a moved-from Device");
  std::lock_guard<std::mutex> lock(impl_->cache_mutex);
  return {impl_->disk_hits, impl_->disk_misses};
}

size_t Device::cached_program_count() const {
  TILEC_CHECK(impl_, "use of a moved-from Device");
  std::lock_guard<std::mutex> lock(impl_->cache_mutex);
  return impl_->programs.size();
}

Kernel Device::GetKernel(const Program& program, const std::string& name) {
  TILEC_CHECK(impl_, "use of a moved-from Device");
  TILEC_CHECK(program.handle() != nullptr, "kernel lookup in an empty Program");
  cl_int status = CL_SUCCESS;
  Kernel kernel;
  kernel.kernel_ = KernelRef(clCreateKernel(program.handle(), name.c_str(), &status));
  if (status != CL_SUCCESS)
    ThrowClError("clCreateKernel", status, fmt::format("kernel '{}'", name));
  kernel.name_ = name;
  cl_uint num_args = 0;
  CheckCl(
      clGetKernelInfo(kernel.handle(), CL_KERNEL_NUM_ARGS, sizeof(num_args), &num_args, nullptr),
      "clGetKernelInfo(CL_KERNEL_NUM_ARGS)");
  kernel.num_args_ = num_args;
  CheckCl(clGetKernelWorkGroupInfo(kernel.handle(), impl_->desc.device, CL_KERNEL_WORK_GROUP_SIZE,
                                   sizeof(size_t), &kernel.max_work_group_size_, nullptr),
          "clGetKernelWorkGroupInfo(CL_KERNEL_WORK_GROUP_SIZE)");
  cl_ulong local_mem = 0;
  CheckCl(clGetKernelWorkGroupInfo(kernel.handle(), impl_->desc.device, CL_KERNEL_LOCAL_MEM_SIZE,
                                   sizeof(local_mem), &local_mem, nullptr),
          "clGetKernelWorkGroupInfo(CL_KERNEL_LOCAL_MEM_SIZE)");
  kernel.local_mem_size_ = local_mem;
  return kernel;
}

LaunchResult Device::Launch(const Kernel& kernel, const std::vector<KernelArg>& args,
                            std::array<size_t, 3> global, std::array<size_t, 3> local, int dims) {
  TILEC_CHECK(impl_, "use of a moved-from Device");
  Impl& im = *impl_;
  const std::string& name = kernel.name();
  TILEC_CHECK(kernel.handle() != nullptr, "launch of an empty Kernel");
  TILEC_CHECK(dims >= 1 && dims <= 3, "kernel '{}': dims = {} must be 1, 2 or 3", name, dims);
  TILEC_CHECK(args.size() == kernel.num_args(), "kernel '{}' takes {} arguments, {} given", name,
              kernel.num_args(), args.size());

  // --- Launch geometry, checked here so errors name the kernel and the limit.
  bool driver_chooses = true;
  for (int d = 0; d < dims; ++d) driver_chooses = driver_chooses && local[d] == 0;
  size_t group = 1;
  for (int d = 0; d < dims; ++d) {
    TILEC_CHECK(global[d] > 0, "kernel '{}': global size {} is empty in dimension {}", name,
                JoinSizes(global, dims), d);
    if (driver_chooses) continue;
    TILEC_CHECK(local[d] > 0, "kernel '{}': local size {} is zero in dimension {}", name,
                JoinSizes(local, dims), d);
    TILEC_CHECK(global[d] % local[d] == 0,
                "kernel '{}': global size {} is not a multiple of local size {} in dimension {}",
                name, JoinSizes(global, dims), JoinSizes(local, dims), d);
    if (static_cast<int64_t>(local[d]) > im.hw.max_work_item_sizes[d]) {
      throw DeviceError(fmt::format(
          "kernel '{}': local size {} exceeds the device's {} work items in dimension {} on {}",
          name, JoinSizes(local, dims), im.hw.max_work_item_sizes[d], d, im.desc.id));
    }
    group *= local[d];  // no overflow: each factor is within the device's limits
  }
  if (!driver_chooses) {
    if (static_cast<int64_t>(group) > im.hw.max_work_group_size) {
      throw DeviceError(fmt::format(
          "kernel '{}': work group of {} items ({}) exceeds the device's maximum {} on {}", name,
          group, JoinSizes(local, dims), im.hw.max_work_group_size, im.desc.id));
    }
    if (group > kernel.max_work_group_size()) {
      throw DeviceError(fmt::format(
          "kernel '{}': work group of {} items ({}) exceeds this kernel's maximum {} on {}", name,
          group, JoinSizes(local, dims), kernel.max_work_group_size(), im.desc.id));
    }
  }

  // --- Arguments.
  uint64_t local_bytes = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    auto set = [&](size_t size, const void* value) {
      cl_int status = clSetKernelArg(kernel.handle(), static_cast<cl_uint>(i), size, value);
      if (status != CL_SUCCESS) {
        ThrowClError("clSetKernelArg", status, fmt::format("kernel '{}' argument {}", name, i));
      }
    };
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, LocalMemory>) {
            TILEC_CHECK(v.bytes > 0, "kernel '{}' argument {}: empty local memory", name, i);
            local_bytes += v.bytes;
            set(v.bytes, nullptr);
          } else if constexpr (std::is_same_v<T, cl_mem>) {
            TILEC_CHECK(v != nullptr, "kernel '{}' argument {}: empty Buffer", name, i);
            set(sizeof(v), &v);
          } else {
            set(sizeof(v), &v);
          }
        },
        args[i].value());
  }
  if (local_bytes > im.local_mem_bytes) {
    throw DeviceError(
        fmt::format("kernel '{}': {} bytes of __local arguments exceed the {} bytes of {}", name,
                    local_bytes, im.local_mem_bytes, im.desc.id));
  }
  if (kernel.local_mem_size() > im.local_mem_bytes - local_bytes) {
    throw DeviceError(fmt::format(
        "kernel '{}': {} bytes of __local memory ({} declared in the kernel, {} in arguments) "
        "exceed the {} bytes of {}",
        name, kernel.local_mem_size() + local_bytes, kernel.local_mem_size(), local_bytes,
        im.local_mem_bytes, im.desc.id));
  }

  // --- Run and time.
  cl_event raw = nullptr;
  cl_int status = clEnqueueNDRangeKernel(im.queue.get(), kernel.handle(),
                                         static_cast<cl_uint>(dims), nullptr, global.data(),
                                         driver_chooses ? nullptr : local.data(), 0, nullptr, &raw);
  if (status != CL_SUCCESS) {
    ThrowClError("clEnqueueNDRangeKernel", status,
                 fmt::format("kernel '{}' global {} local {}", name, JoinSizes(global, dims),
                             driver_chooses ? "auto" : JoinSizes(local, dims)));
  }
  return Timed(raw, im.profiling, "clEnqueueNDRangeKernel", fmt::format("kernel '{}'", name));
}

uint64_t Device::CopyImageToBuffer(cl_mem image, Buffer& buffer, size_t width, size_t height) {
  TILEC_CHECK(impl_, "use of a moved-from Device");
  size_t origin[3] = {0, 0, 0};
  size_t region[3] = {width, height, 1};
  cl_event raw = nullptr;
  CheckCl(clEnqueueCopyImageToBuffer(impl_->queue.get(), image, buffer.handle(), origin, region, 0, 0, nullptr, &raw),
          "clEnqueueCopyImageToBuffer");
  return Timed(raw, impl_->profiling, "clEnqueueCopyImageToBuffer", fmt::format("[{}, {}] pixels", width, height))
      .duration_ns;
}

uint64_t Device::CopyBufferToImage(const Buffer& buffer, cl_mem image, size_t width, size_t height) {
  TILEC_CHECK(impl_, "use of a moved-from Device");
  size_t origin[3] = {0, 0, 0};
  size_t region[3] = {width, height, 1};
  cl_event raw = nullptr;
  CheckCl(clEnqueueCopyBufferToImage(impl_->queue.get(), buffer.handle(), image, 0, origin, region, 0, nullptr, &raw),
          "clEnqueueCopyBufferToImage");
  return Timed(raw, impl_->profiling, "clEnqueueCopyBufferToImage", fmt::format("[{}, {}] pixels", width, height))
      .duration_ns;
}

void Device::Finish() {
  TILEC_CHECK(impl_, "use of a moved-from Device");
  CheckCl(clFinish(impl_->queue.get()), "clFinish");
}

Device OpenDevice(const std::string& id) {
  std::vector<DeviceDesc> devices = ListDevices();
  if (id == "opencl") {
    if (devices.empty())
      TILEC_USER_ERROR("no OpenCL device found (is an OpenCL driver installed?)");
    return Device(std::move(devices.front()));
  }
  for (DeviceDesc& d : devices) {
    if (d.id == id) return Device(std::move(d));
  }
  if (devices.empty()) {
    TILEC_USER_ERROR("unknown device '{}': no OpenCL device found (is an OpenCL driver installed?)",
                     id);
  }
  std::string ids;
  for (const DeviceDesc& d : devices)
    ids += fmt::format("{}{} ({})", ids.empty() ? "" : ", ", d.id, d.name);
  TILEC_USER_ERROR("unknown device '{}'; available: opencl, {}", id, ids);
}

}  // namespace tilec::hal::opencl
