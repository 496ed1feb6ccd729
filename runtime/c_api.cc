// The C ABI (include/tilec/tilec.h) over runtime::Program: handles from
// HandleRegistry, every exception turned into a tilec_error.
#include <tilec/tilec.h>

#include <fmt/format.h>

#include <cstring>
#include <new>
#include <optional>

#include "frontend/onnx/import.h"
#include "runtime/handle_registry.h"
#include "runtime/program_cache.h"
#include "runtime/settings.h"
#include "support/error.h"
#include "tile_lang/layout.h"
#include "tile_lang/gradient.h"
#include "tile_lang/parser.h"
#include "tile_lang/printer.h"

namespace tilec::runtime {
namespace {

#define TILEC_USAGE_ERROR(...) throw UsageError(::fmt::format(__VA_ARGS__))

struct ErrorObject {
  tilec_status kind = TILEC_ERROR_INTERNAL;
  std::string message, text, file;
  int line = 0, column = 0;
};

struct DeviceObject {
  std::shared_ptr<hal::Device> device;
  std::string description;
};

// An input or output's tilec_tensor_info and the storage its pointers use.
struct TensorInfo {
  std::string name, layout;
  std::vector<int64_t> dims;
  std::optional<std::vector<int64_t>> strides;
  tilec_tensor_info info{};
};

struct ProgramObject {
  std::shared_ptr<Program> program;
  std::vector<TensorInfo> inputs, outputs;
  bool in_place_runnable = false;  // Program::InPlaceRunnable
};

// An imported model and the storage its tilec_model_tensor pointers use.
struct ModelObject {
  onnx_import::ImportedModel model;
  struct Entry {
    std::string name, tile_name;
    std::vector<int64_t> dims;
    const lang::Tensor* data = nullptr;
    tilec_model_tensor info{};
  };
  std::vector<Entry> inputs, outputs, constants;
};

HandleRegistry<ModelObject>& Models() {
  static HandleRegistry<ModelObject> r;
  return r;
}

HandleRegistry<ErrorObject>& Errors() {
  static HandleRegistry<ErrorObject> r;
  return r;
}
HandleRegistry<DeviceObject>& Devices() {
  static HandleRegistry<DeviceObject> r;
  return r;
}
HandleRegistry<ProgramObject>& Programs() {
  static HandleRegistry<ProgramObject> r;
  return r;
}

template <typename H>
uintptr_t Value(H handle) {
  return reinterpret_cast<uintptr_t>(handle);
}
template <typename H>
H Handle(uintptr_t value) {
  return reinterpret_cast<H>(value);
}

ErrorObject Plain(tilec_status kind, std::string message, std::string text) {
  ErrorObject e;
  e.kind = kind;
  e.message = std::move(message);
  e.text = std::move(text);
  return e;
}

// Stores a new error object in `*out` (if out) and returns its kind.
tilec_status Fail(tilec_error* out, ErrorObject e) {
  tilec_status kind = e.kind;
  if (out) *out = Handle<tilec_error>(Errors().Add(std::make_shared<ErrorObject>(std::move(e))));
  return kind;
}

// Runs `body`; every exception becomes an error object.
template <typename F>
tilec_status Guard(tilec_error* out, F&& body) noexcept {
  try {
    body();
    return TILEC_OK;
  } catch (const UserError& e) {
    ErrorObject o = Plain(TILEC_ERROR_USER, e.message(), e.Render());
    if (e.file()) o.file = e.file()->name;
    if (e.span().known()) o.line = e.span().begin.line, o.column = e.span().begin.col;
    return Fail(out, std::move(o));
  } catch (const UsageError& e) {
    return Fail(out, Plain(TILEC_ERROR_USAGE, e.what(), fmt::format("usage error: {}", e.what())));
  } catch (const DeviceError& e) {
    return Fail(out, Plain(TILEC_ERROR_DEVICE, e.what(), e.Render()));
  } catch (const InternalError& e) {
    return Fail(out, Plain(TILEC_ERROR_INTERNAL, e.what(), e.Render()));
  } catch (const std::bad_alloc&) {
    return Fail(out, Plain(TILEC_ERROR_DEVICE, "out of host memory", "device error: out of host memory"));
  } catch (const std::exception& e) {
    return Fail(out, Plain(TILEC_ERROR_INTERNAL, e.what(), fmt::format("internal error: {}", e.what())));
  } catch (...) {
    return Fail(out, Plain(TILEC_ERROR_INTERNAL, "unknown exception", "internal error: unknown exception"));
  }
}

std::shared_ptr<DeviceObject> LiveDevice(tilec_device d) {
  if (!d) TILEC_USAGE_ERROR("the device is NULL");
  std::shared_ptr<DeviceObject> o = Devices().Get(Value(d));
  if (!o) TILEC_USAGE_ERROR("the device handle is not a live device (released already, or never opened)");
  return o;
}

std::shared_ptr<ProgramObject> LiveProgram(tilec_program p) {
  if (!p) TILEC_USAGE_ERROR("the program is NULL");
  std::shared_ptr<ProgramObject> o = Programs().Get(Value(p));
  if (!o) TILEC_USAGE_ERROR("the program handle is not a live program (released already, or never compiled)");
  return o;
}

template <typename T>
void RequireOut(T* out, const char* what) {
  if (!out) TILEC_USAGE_ERROR("{} is NULL", what);
}

constexpr int kNumDtypes = 12;
static_assert(TILEC_BOOL == static_cast<int>(lang::DataType::Bool) &&
              TILEC_I64 == static_cast<int>(lang::DataType::I64) &&
              TILEC_U8 == static_cast<int>(lang::DataType::U8) &&
              TILEC_F16 == static_cast<int>(lang::DataType::F16) &&
              TILEC_F64 == static_cast<int>(lang::DataType::F64) && kNumDtypes == TILEC_F64 + 1);

// `what()` names the argument in messages (formatted only on failure).
// The caller's dtype field read as the int it is in C: in C++ a tilec_dtype
// holding a value outside its enumerators' range (e.g. -1) may not even be
// loaded as a tilec_dtype (UBSan's -fsanitize=enum), so it is copied out.
template <typename What>
lang::DataType ToDataType(const tilec_dtype& t, What&& what) {
  int v;
  static_assert(sizeof(v) == sizeof(t));
  std::memcpy(&v, &t, sizeof v);
  if (v < 0 || v >= kNumDtypes) TILEC_USAGE_ERROR("{}: {} is not a tilec_dtype", what(), v);
  return static_cast<lang::DataType>(v);
}

template <typename What>
std::vector<int64_t> Dims(int rank, const int64_t* dims, What&& what) {
  if (rank < 0) TILEC_USAGE_ERROR("{}: negative rank {}", what(), rank);
  if (rank > 0 && !dims) TILEC_USAGE_ERROR("{}: rank {} but dims is NULL", what(), rank);
  std::vector<int64_t> out(dims, dims + rank);
  for (int d = 0; d < rank; ++d)
    if (out[d] < 0) TILEC_USAGE_ERROR("{}: negative size {} in dimension {}", what(), out[d], d);
  return out;
}

TensorInfo MakeInfo(const Program& program, const std::string& name) {
  const lang::TensorDecl& t = program.bound().Tensor(name);
  TensorInfo i;
  i.name = name;
  i.dims = t.shape.dims;
  try {
    i.layout = lang::ToSpec(t.layout);
  } catch (const UserError&) {
    i.layout = t.layout.name;
  }
  i.strides = PlainStrides(t.layout, t.shape.rank());
  i.info.dtype = static_cast<tilec_dtype>(t.shape.dtype);
  i.info.rank = t.shape.rank();
  i.info.bytes = static_cast<size_t>(t.layout.elements) * lang::ByteSize(t.shape.dtype);
  i.info.alignment = program.HostAlignment(name);
  return i;
}

// Points each info's pointers at its own storage (after the vector stopped moving).
void FixPointers(std::vector<TensorInfo>& infos) {
  for (TensorInfo& i : infos) {
    i.info.name = i.name.c_str();
    i.info.layout = i.layout.c_str();
    i.info.dims = i.dims.data();
    i.info.strides = i.strides ? i.strides->data() : nullptr;
  }
}

// `memory` is the tensor's tilec_memory, read as an int for the reason ToDataType says.
template <typename What>
HostView ToView(const tilec_tensor& t, const tilec_memory* memory, What&& what) {
  HostView v;
  v.shape.dtype = ToDataType(t.dtype, what);
  v.shape.dims = Dims(t.rank, t.dims, what);
  int kind = TILEC_MEMORY_HOST;
  if (memory) std::memcpy(&kind, memory, sizeof kind);
  if (kind == TILEC_MEMORY_CL_MEM) {
    if (!t.data) TILEC_USAGE_ERROR("{}: the cl_mem is NULL", what());
    if (t.strides || t.bytes)
      TILEC_USAGE_ERROR("{} is a cl_mem: its bytes and strides fields must be 0 and NULL (the "
                        "buffer holds the tensor in the compiled layout)",
                        what());
    v.device_memory = t.data;
    return v;
  }
  if (kind != TILEC_MEMORY_HOST) TILEC_USAGE_ERROR("{}: {} is not a tilec_memory", what(), kind);
  v.data = t.data;
  v.bytes = t.bytes;
  if (t.strides) v.strides.assign(t.strides, t.strides + t.rank);
  return v;
}

// True if `t` is host memory holding tensor `i` exactly as compiled (dtype,
// dims, no strides or the layout's own, enough bytes, aligned, non-empty):
// memory the kernels use in place with nothing else to check or copy.
bool InPlace(const tilec_tensor& t, const tilec_memory* memory, const TensorInfo& i) {
  int kind = TILEC_MEMORY_HOST, dtype;
  if (memory) std::memcpy(&kind, memory, sizeof kind);
  std::memcpy(&dtype, &t.dtype, sizeof dtype);
  const tilec_tensor_info& want = i.info;
  if (kind != TILEC_MEMORY_HOST || dtype != want.dtype || t.rank != want.rank || !t.data ||
      want.bytes == 0 || t.bytes < want.bytes ||
      reinterpret_cast<uintptr_t>(t.data) % want.alignment != 0)
    return false;
  if (t.rank > 0 && (!t.dims || std::memcmp(t.dims, want.dims, sizeof(int64_t) * t.rank) != 0))
    return false;
  if (t.strides) {
    if (!want.strides) return false;
    for (int d = 0; d < t.rank; ++d)
      if (want.dims[d] > 1 && t.strides[d] != want.strides[d]) return false;
  }
  return true;
}

tilec_status Run(tilec_program program, const tilec_tensor* inputs, const tilec_memory* input_memory,
                 size_t num_inputs, const tilec_tensor* outputs, const tilec_memory* output_memory,
                 size_t num_outputs, tilec_error* error) {
  return Guard(error, [&] {
    std::shared_ptr<ProgramObject> p = LiveProgram(program);
    if (num_inputs > 0 && !inputs) TILEC_USAGE_ERROR("{} inputs but the array is NULL", num_inputs);
    if (num_outputs > 0 && !outputs) TILEC_USAGE_ERROR("{} outputs but the array is NULL", num_outputs);
    if (num_inputs != p->inputs.size())
      TILEC_USAGE_ERROR("the program has {} inputs but {} were given", p->inputs.size(), num_inputs);
    if (num_outputs != p->outputs.size())
      TILEC_USAGE_ERROR("the program has {} outputs but {} were given", p->outputs.size(), num_outputs);
    // The fast path: every tensor in place (no views, checks or copies to build).
    constexpr size_t kStackTensors = 16;
    if (num_inputs + num_outputs <= kStackTensors && p->in_place_runnable) {
      void* data[kStackTensors];
      bool fast = true;
      for (size_t i = 0; fast && i < num_inputs; ++i) {
        fast = InPlace(inputs[i], input_memory ? input_memory + i : nullptr, p->inputs[i]);
        data[i] = inputs[i].data;
      }
      for (size_t i = 0; fast && i < num_outputs; ++i) {
        fast = InPlace(outputs[i], output_memory ? output_memory + i : nullptr, p->outputs[i]);
        data[num_inputs + i] = outputs[i].data;
      }
      if (fast) return p->program->RunInPlace(std::span<void* const>(data, num_inputs + num_outputs));
    }
    std::vector<HostView> views;
    views.reserve(num_inputs + num_outputs);
    for (size_t i = 0; i < num_inputs; ++i)
      views.push_back(ToView(inputs[i], input_memory ? input_memory + i : nullptr,
                             [&] { return fmt::format("input '{}'", p->inputs[i].name); }));
    for (size_t i = 0; i < num_outputs; ++i)
      views.push_back(ToView(outputs[i], output_memory ? output_memory + i : nullptr,
                             [&] { return fmt::format("output '{}'", p->outputs[i].name); }));
    std::span<const HostView> all(views);
    p->program->RunOn(all.first(num_inputs), all.subspan(num_inputs));
  });
}

tilec_status GetInfo(tilec_program program, size_t index, tilec_tensor_info* info,
                     tilec_error* error, bool input) {
  return Guard(error, [&] {
    std::shared_ptr<ProgramObject> p = LiveProgram(program);
    RequireOut(info, "info");
    const std::vector<TensorInfo>& list = input ? p->inputs : p->outputs;
    if (index >= list.size())
      TILEC_USAGE_ERROR("{} index {} out of range (the program has {})", input ? "input" : "output",
                        index, list.size());
    *info = list[index].info;
  });
}

}  // namespace
}  // namespace tilec::runtime

using namespace tilec;
using namespace tilec::runtime;

extern "C" {

int tilec_version(void) { return TILEC_VERSION; }
const char* tilec_version_string(void) {
  static const std::string s =
      fmt::format("{}.{}.{}", TILEC_VERSION_MAJOR, TILEC_VERSION_MINOR, TILEC_VERSION_PATCH);
  return s.c_str();
}

// ---- Errors

tilec_status tilec_error_kind(tilec_error error) {
  std::shared_ptr<ErrorObject> e = Errors().Get(Value(error));
  return e ? e->kind : TILEC_ERROR_USAGE;
}

// Error strings live as long as the error object; a bad handle gets a static text.
const char* tilec_error_message(tilec_error error) {
  std::shared_ptr<ErrorObject> e = Errors().Get(Value(error));
  return e ? e->message.c_str() : "not a live tilec_error (NULL or released)";
}

const char* tilec_error_text(tilec_error error) {
  std::shared_ptr<ErrorObject> e = Errors().Get(Value(error));
  return e ? e->text.c_str() : "usage error: not a live tilec_error (NULL or released)";
}

void tilec_error_location(tilec_error error, const char** file, int* line, int* column) {
  std::shared_ptr<ErrorObject> e = Errors().Get(Value(error));
  if (file) *file = e ? e->file.c_str() : "";
  if (line) *line = e ? e->line : 0;
  if (column) *column = e ? e->column : 0;
}

tilec_status tilec_error_release(tilec_error error) {
  if (!error) return TILEC_ERROR_USAGE;
  return Errors().Remove(Value(error)) ? TILEC_OK : TILEC_ERROR_USAGE;
}

// ---- Devices

}  // extern "C"  (the helpers below have C++ linkage)

namespace {
const std::vector<std::string>& DeviceIds() {
  static const std::vector<std::string> ids = [] {
    try {
      return hal::ListDeviceIds();
    } catch (...) {
      return std::vector<std::string>{"llvm:cpu"};
    }
  }();
  return ids;
}
}  // namespace

extern "C" {

size_t tilec_device_count(void) { return DeviceIds().size(); }

const char* tilec_device_id(size_t index) {
  return index < DeviceIds().size() ? DeviceIds()[index].c_str() : nullptr;
}

tilec_status tilec_device_open(const char* id, tilec_device* device, tilec_error* error) {
  return tilec_device_open_cpu(id, nullptr, device, error);
}

tilec_status tilec_device_open_cpu(const char* id, const char* cpu, tilec_device* device, tilec_error* error) {
  return Guard(error, [&] {
    RequireOut(device, "the device out pointer");
    *device = nullptr;
    if (!id) TILEC_USAGE_ERROR("the device id is NULL");
    auto o = std::make_shared<DeviceObject>();
    o->device = OpenSharedDevice(id, cpu ? cpu : "");
    o->description = o->device->Describe();
    *device = Handle<tilec_device>(Devices().Add(std::move(o)));
  });
}

const char* tilec_device_name(tilec_device device) {
  std::shared_ptr<DeviceObject> d = Devices().Get(Value(device));
  return d ? d->device->id().c_str() : nullptr;
}

const char* tilec_device_description(tilec_device device) {
  std::shared_ptr<DeviceObject> d = Devices().Get(Value(device));
  return d ? d->description.c_str() : nullptr;
}

tilec_status tilec_device_release(tilec_device device) {
  return Guard(nullptr, [&] {
    if (!device) TILEC_USAGE_ERROR("NULL device");
    if (!Devices().Remove(Value(device))) TILEC_USAGE_ERROR("device released twice");
  });
}

tilec_status tilec_device_open_cl(void* cl_context, void* cl_command_queue, tilec_device* device,
                                  tilec_error* error) {
  return Guard(error, [&] {
    RequireOut(device, "the device out pointer");
    *device = nullptr;
    auto o = std::make_shared<DeviceObject>();
    // Not shared by id: its context is the caller's (programs are cached per device object).
    o->device = hal::OpenDeviceOn(cl_context, cl_command_queue);
    o->device->SetKernelCache(ProcessKernelCache());
    o->description = o->device->Describe();
    *device = Handle<tilec_device>(Devices().Add(std::move(o)));
  });
}

tilec_status tilec_device_cl_handles(tilec_device device, void** cl_context, void** cl_command_queue,
                                     tilec_error* error) {
  return Guard(error, [&] {
    std::shared_ptr<DeviceObject> d = LiveDevice(device);
    hal::Device::NativeHandles h = d->device->native_handles();
    if (!h.context) TILEC_USAGE_ERROR("device '{}' is not an OpenCL device", d->device->id());
    if (cl_context) *cl_context = h.context;
    if (cl_command_queue) *cl_command_queue = h.queue;
  });
}

// ---- Programs

}  // extern "C"  (the helpers below have C++ linkage)

namespace {
// The names of the inputs (or outputs) of `source`, separated by commas,
// valid until this thread's next call.
tilec_status SourceNames(const char* source, const char* source_name, const char** names_out, bool outputs,
                         tilec_error* error) {
  return Guard(error, [&] {
    RequireOut(names_out, outputs ? "the outputs out pointer" : "the inputs out pointer");
    *names_out = nullptr;
    if (!source) TILEC_USAGE_ERROR("the source is NULL");
    lang::ast::Function f = lang::Parse(MakeSource(source_name ? source_name : "<source>", source));
    thread_local std::string names;
    names.clear();
    if (outputs) {
      for (const auto& out : f.outputs) names += (names.empty() ? "" : ",") + out.name;
    } else {
      for (const auto& in : f.inputs) names += (names.empty() ? "" : ",") + in.name;
    }
    *names_out = names.c_str();
  });
}
}  // namespace

extern "C" {

tilec_status tilec_source_inputs(const char* source, const char* source_name, const char** inputs,
                                 tilec_error* error) {
  return SourceNames(source, source_name, inputs, false, error);
}

tilec_status tilec_source_outputs(const char* source, const char* source_name, const char** outputs,
                                  tilec_error* error) {
  return SourceNames(source, source_name, outputs, true, error);
}

}  // extern "C"  (the helpers below have C++ linkage)

namespace {

// The shapes and layouts of `inputs` (one spec per input).
void AddInputSpecs(CompileRequest& request, const tilec_tensor_spec* inputs, size_t num_inputs) {
  if (num_inputs > 0 && !inputs) TILEC_USAGE_ERROR("{} inputs but the array is NULL", num_inputs);
  for (size_t i = 0; i < num_inputs; ++i) {
    const tilec_tensor_spec& s = inputs[i];
    if (!s.name) TILEC_USAGE_ERROR("input spec {} has a NULL name", i);
    auto what = [&] { return fmt::format("input spec '{}'", s.name); };
    lang::Shape shape{ToDataType(s.dtype, what), Dims(s.rank, s.dims, what)};
    if (!request.shapes.emplace(s.name, shape).second) TILEC_USAGE_ERROR("input '{}' has two specs", s.name);
    if (s.layout) request.layouts[s.name] = s.layout;
  }
}

// Applies `options` (may be NULL) to `request`; returns whether to use the program cache.
bool AddOptions(CompileRequest& request, const tilec_compile_options* options) {
  if (!options) return true;
  if (options->num_layouts > 0 && !options->layouts)
    TILEC_USAGE_ERROR("options.num_layouts is {} but options.layouts is NULL", options->num_layouts);
  for (size_t i = 0; i < options->num_layouts; ++i) {
    const tilec_layout_spec& l = options->layouts[i];
    if (!l.tensor || !l.layout) TILEC_USAGE_ERROR("options.layouts[{}] has a NULL field", i);
    if (!request.layouts.emplace(l.tensor, l.layout).second)
      TILEC_USAGE_ERROR("tensor '{}' is given two layouts", l.tensor);
  }
  if (options->num_tiles > 0 && !options->tiles)
    TILEC_USAGE_ERROR("options.num_tiles is {} but options.tiles is NULL", options->num_tiles);
  for (size_t i = 0; i < options->num_tiles; ++i) {
    const tilec_tile_spec& t = options->tiles[i];
    if (!t.kernel) TILEC_USAGE_ERROR("options.tiles[{}] has a NULL kernel name", i);
    request.tiles[t.kernel] = Dims(t.count, t.sizes, [&] { return fmt::format("options.tiles[{}]", i); });
  }
  request.vectorize = options->no_vector == 0;
  request.use_tuning_cache = options->no_tuning_cache == 0;
  if (!(options->tune_budget_seconds >= 0) || options->tune_budget_seconds > 86400)
    TILEC_USAGE_ERROR("options.tune_budget_seconds is {}, not a budget in [0, 86400]",
                      options->tune_budget_seconds);
  request.tune_budget_s = options->tune_budget_seconds;
  if (options->num_constant_inputs > 0 && !options->constant_inputs)
    TILEC_USAGE_ERROR("options.num_constant_inputs is {} but options.constant_inputs is NULL",
                      options->num_constant_inputs);
  for (size_t i = 0; i < options->num_constant_inputs; ++i) {
    if (!options->constant_inputs[i]) TILEC_USAGE_ERROR("options.constant_inputs[{}] is NULL", i);
    request.constants.emplace_back(options->constant_inputs[i]);
  }
  return options->no_cache == 0;
}

tilec_program CompileHandle(const std::shared_ptr<DeviceObject>& d, const CompileRequest& request, bool use_cache) {
  auto o = std::make_shared<ProgramObject>();
  o->program = ProcessProgramCache().Compile(request, d->device, use_cache);
  for (const std::string& n : o->program->bound().inputs) o->inputs.push_back(MakeInfo(*o->program, n));
  for (const std::string& n : o->program->bound().outputs) o->outputs.push_back(MakeInfo(*o->program, n));
  FixPointers(o->inputs);
  FixPointers(o->outputs);
  o->in_place_runnable = o->program->InPlaceRunnable();
  return Handle<tilec_program>(Programs().Add(std::move(o)));
}

std::vector<std::string> Names(const char* const* names, size_t count, const char* what) {
  if (count > 0 && !names) TILEC_USAGE_ERROR("{} names but the {} array is NULL", count, what);
  std::vector<std::string> out;
  for (size_t i = 0; i < count; ++i) {
    if (!names[i]) TILEC_USAGE_ERROR("{}[{}] is NULL", what, i);
    out.emplace_back(names[i]);
  }
  return out;
}

// The gradient of `source` for the shapes of `request` (whose source becomes
// the gradient program's text, named after the original).
lang::GradientProgram DeriveGradient(CompileRequest& request, const char* source, const char* source_name,
                                     const tilec_gradient_spec* spec) {
  if (!source) TILEC_USAGE_ERROR("the source is NULL");
  std::string name = source_name ? source_name : "<source>";
  lang::GradientOptions options;
  if (spec) {
    options.wrt = Names(spec->wrt, spec->num_wrt, "spec.wrt");
    options.outputs = Names(spec->outputs, spec->num_outputs, "spec.outputs");
    options.saved = Names(spec->saved, spec->num_saved, "spec.saved");
  }
  lang::GradientProgram g = lang::Gradient(lang::Parse(MakeSource(name, source)), request.shapes, options);
  request.source = MakeSource(name + " (gradient)", lang::Print(g.function));
  request.shapes = g.input_shapes;
  return g;
}

}  // namespace

extern "C" {

tilec_status tilec_program_compile(tilec_device device, const char* source, const char* source_name,
                                   const tilec_tensor_spec* inputs, size_t num_inputs,
                                   const tilec_compile_options* options, tilec_program* program,
                                   tilec_error* error) {
  return Guard(error, [&] {
    RequireOut(program, "the program out pointer");
    *program = nullptr;
    std::shared_ptr<DeviceObject> d = LiveDevice(device);
    if (!source) TILEC_USAGE_ERROR("the source is NULL");
    CompileRequest request;
    request.source = MakeSource(source_name ? source_name : "<source>", source);
    AddInputSpecs(request, inputs, num_inputs);
    bool use_cache = AddOptions(request, options);
    *program = CompileHandle(d, request, use_cache);
  });
}

tilec_status tilec_gradient_source(const char* source, const char* source_name, const tilec_tensor_spec* inputs,
                                   size_t num_inputs, const tilec_gradient_spec* spec, const char** gradient,
                                   tilec_error* error) {
  return Guard(error, [&] {
    RequireOut(gradient, "the gradient out pointer");
    *gradient = nullptr;
    CompileRequest request;
    AddInputSpecs(request, inputs, num_inputs);
    DeriveGradient(request, source, source_name, spec);
    thread_local std::string text;
    text = request.source->text;
    *gradient = text.c_str();
  });
}

tilec_status tilec_program_compile_gradient(tilec_device device, const char* source, const char* source_name,
                                            const tilec_tensor_spec* inputs, size_t num_inputs,
                                            const tilec_gradient_spec* spec, const tilec_compile_options* options,
                                            tilec_program* program, tilec_error* error) {
  return Guard(error, [&] {
    RequireOut(program, "the program out pointer");
    *program = nullptr;
    std::shared_ptr<DeviceObject> d = LiveDevice(device);
    CompileRequest request;
    AddInputSpecs(request, inputs, num_inputs);
    DeriveGradient(request, source, source_name, spec);
    bool use_cache = AddOptions(request, options);
    *program = CompileHandle(d, request, use_cache);
  });
}

tilec_status tilec_program_release(tilec_program program) {
  return Guard(nullptr, [&] {
    if (!program) TILEC_USAGE_ERROR("NULL program");
    if (!Programs().Remove(Value(program))) TILEC_USAGE_ERROR("program released twice");
  });
}

tilec_status tilec_program_invalidate_constants(tilec_program program, tilec_error* error) {
  return Guard(error, [&] { LiveProgram(program)->program->InvalidateConstants(); });
}

tilec_status tilec_program_num_inputs(tilec_program program, size_t* count, tilec_error* error) {
  return Guard(error, [&] {
    std::shared_ptr<ProgramObject> p = LiveProgram(program);
    RequireOut(count, "count");
    *count = p->inputs.size();
  });
}

tilec_status tilec_program_num_outputs(tilec_program program, size_t* count, tilec_error* error) {
  return Guard(error, [&] {
    std::shared_ptr<ProgramObject> p = LiveProgram(program);
    RequireOut(count, "count");
    *count = p->outputs.size();
  });
}

tilec_status tilec_program_input(tilec_program program, size_t index, tilec_tensor_info* info,
                                 tilec_error* error) {
  return GetInfo(program, index, info, error, true);
}

tilec_status tilec_program_output(tilec_program program, size_t index, tilec_tensor_info* info,
                                  tilec_error* error) {
  return GetInfo(program, index, info, error, false);
}

tilec_status tilec_program_run(tilec_program program, const tilec_tensor* inputs, size_t num_inputs,
                               const tilec_tensor* outputs, size_t num_outputs, tilec_error* error) {
  return Run(program, inputs, nullptr, num_inputs, outputs, nullptr, num_outputs, error);
}

tilec_status tilec_program_run_memory(tilec_program program, const tilec_tensor* inputs,
                                      const tilec_memory* input_memory, size_t num_inputs,
                                      const tilec_tensor* outputs, const tilec_memory* output_memory,
                                      size_t num_outputs, tilec_error* error) {
  return Run(program, inputs, input_memory, num_inputs, outputs, output_memory, num_outputs, error);
}

// --- Models ----------------------------------------------------------------------------

}  // extern "C"  (the helpers below have C++ linkage)

namespace {

std::shared_ptr<ModelObject> LiveModel(tilec_model m) {
  if (!m) TILEC_USAGE_ERROR("the model is NULL");
  std::shared_ptr<ModelObject> o = Models().Get(Value(m));
  if (!o) TILEC_USAGE_ERROR("the model handle is not a live model (released already, or never imported)");
  return o;
}

tilec_status GetModelTensor(tilec_model model, size_t index, tilec_model_tensor* info, tilec_error* error,
                            std::vector<ModelObject::Entry> ModelObject::*which, const char* what) {
  return Guard(error, [&] {
    std::shared_ptr<ModelObject> m = LiveModel(model);
    RequireOut(info, "info");
    const auto& list = (*m).*which;
    if (index >= list.size()) TILEC_USAGE_ERROR("{} index {} is out of range (the model has {})", what, index, list.size());
    *info = list[index].info;
  });
}

}  // namespace

extern "C" {

tilec_status tilec_model_import_onnx(const void* bytes, size_t size, const char* origin,
                                     const tilec_tensor_spec* shapes, size_t num_shapes, tilec_model* model,
                                     tilec_error* error) {
  return Guard(error, [&] {
    RequireOut(model, "the model out pointer");
    *model = nullptr;
    if (!bytes && size > 0) TILEC_USAGE_ERROR("{} bytes but the pointer is NULL", size);
    if (num_shapes > 0 && !shapes) TILEC_USAGE_ERROR("{} shapes but the array is NULL", num_shapes);
    onnx_import::ImportOptions options;
    for (size_t i = 0; i < num_shapes; ++i) {
      auto what = [&] { return fmt::format("shapes[{}]", i); };
      if (!shapes[i].name) TILEC_USAGE_ERROR("{}: the name is NULL", what());
      options.shapes[shapes[i].name] =
          lang::Shape{ToDataType(shapes[i].dtype, what), Dims(shapes[i].rank, shapes[i].dims, what)};
    }
    auto m = std::make_shared<ModelObject>();
    m->model = onnx_import::Import(std::string_view(static_cast<const char*>(bytes), size),
                                   origin ? origin : "<model>", options);
    auto add = [](std::vector<ModelObject::Entry>& list, const std::string& name, const std::string& tile,
                  const lang::Shape& shape, const lang::Tensor* data) {
      ModelObject::Entry e;
      e.name = name;
      e.tile_name = tile;
      e.dims = shape.dims;
      e.data = data;
      e.info.dtype = static_cast<tilec_dtype>(shape.dtype);
      e.info.rank = shape.rank();
      list.push_back(std::move(e));
    };
    for (const auto& t : m->model.inputs) add(m->inputs, t.onnx_name, t.tile_name, t.shape, nullptr);
    for (const auto& t : m->model.outputs) add(m->outputs, t.onnx_name, t.tile_name, t.shape, nullptr);
    for (const auto& [name, t] : m->model.constants) add(m->constants, name, name, t.shape(), &t);
    for (auto* list : {&m->inputs, &m->outputs, &m->constants})
      for (ModelObject::Entry& e : *list) {
        e.info.name = e.name.c_str();
        e.info.tile_name = e.tile_name.c_str();
        e.info.dims = e.dims.data();
        e.info.data = e.data ? e.data->data() : nullptr;
        e.info.bytes = e.data ? e.data->bytes() : 0;
      }
    *model = Handle<tilec_model>(Models().Add(std::move(m)));
  });
}

tilec_status tilec_model_release(tilec_model model) {
  return Guard(nullptr, [&] {
    LiveModel(model);
    Models().Remove(Value(model));
  });
}

tilec_status tilec_model_source(tilec_model model, const char** source, tilec_error* error) {
  return Guard(error, [&] {
    std::shared_ptr<ModelObject> m = LiveModel(model);
    RequireOut(source, "source");
    *source = m->model.source.c_str();
  });
}

tilec_status tilec_model_counts(tilec_model model, size_t* inputs, size_t* outputs, size_t* constants,
                                tilec_error* error) {
  return Guard(error, [&] {
    std::shared_ptr<ModelObject> m = LiveModel(model);
    if (inputs) *inputs = m->inputs.size();
    if (outputs) *outputs = m->outputs.size();
    if (constants) *constants = m->constants.size();
  });
}

tilec_status tilec_model_input(tilec_model model, size_t index, tilec_model_tensor* info, tilec_error* error) {
  return GetModelTensor(model, index, info, error, &ModelObject::inputs, "input");
}

tilec_status tilec_model_output(tilec_model model, size_t index, tilec_model_tensor* info, tilec_error* error) {
  return GetModelTensor(model, index, info, error, &ModelObject::outputs, "output");
}

tilec_status tilec_model_constant(tilec_model model, size_t index, tilec_model_tensor* info, tilec_error* error) {
  return GetModelTensor(model, index, info, error, &ModelObject::constants, "constant");
}

}  // extern "C"
