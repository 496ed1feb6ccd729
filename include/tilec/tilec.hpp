// Tilec's C++ API: header-only RAII wrappers over the C ABI (tilec.h).
//
//   tilec::Device device("llvm");
//   std::vector<int64_t> n = {16};
//   tilec::Program add = device.Compile("function (A[N], B[N]) -> (C) { C = A + B; }",
//                                       {{"A", TILEC_F32, n}, {"B", TILEC_F32, n}});
//   add.Run({tilec::Tensor(a, n), tilec::Tensor(b, n)}, {tilec::Tensor(c, n)});
//
// Failures throw tilec::Error, which carries the C error's kind, message,
// full text (source line and caret) and Tile source location. Objects are
// move-only and release their handle when destroyed.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if !defined(__cplusplus) || __cplusplus < 202002L
#error "tilec.hpp needs C++20 (std::span): compile with -std=c++20; CMake's Tilec::tilec target asks for it (cxx_std_20)"
#endif

#include "tilec/tilec.h"

namespace tilec {

class Error : public std::runtime_error {
 public:
  // Takes over `error` (released here).
  explicit Error(tilec_error error)
      : std::runtime_error(tilec_error_text(error)),
        kind_(tilec_error_kind(error)),
        message_(tilec_error_message(error)) {
    const char* file = nullptr;
    tilec_error_location(error, &file, &line_, &column_);
    file_ = file ? file : "";
    tilec_error_release(error);
  }
  tilec_status kind() const { return kind_; }
  const std::string& message() const { return message_; }  // without location
  const std::string& file() const { return file_; }
  int line() const { return line_; }      // 0 if not in Tile source
  int column() const { return column_; }

 private:
  tilec_status kind_;
  std::string message_, file_;
  int line_ = 0, column_ = 0;
};

namespace detail {
// `error` by reference: it is read after the call that sets it.
inline void Check(tilec_status status, const tilec_error& error) {
  if (status != TILEC_OK) throw Error(error);
}
}  // namespace detail

// The element type of a C++ type (float -> TILEC_F32, …).
template <typename T>
constexpr tilec_dtype DtypeOf();
template <> constexpr tilec_dtype DtypeOf<bool>() { return TILEC_BOOL; }
template <> constexpr tilec_dtype DtypeOf<int8_t>() { return TILEC_I8; }
template <> constexpr tilec_dtype DtypeOf<int16_t>() { return TILEC_I16; }
template <> constexpr tilec_dtype DtypeOf<int32_t>() { return TILEC_I32; }
template <> constexpr tilec_dtype DtypeOf<int64_t>() { return TILEC_I64; }
template <> constexpr tilec_dtype DtypeOf<uint8_t>() { return TILEC_U8; }
template <> constexpr tilec_dtype DtypeOf<uint16_t>() { return TILEC_U16; }
template <> constexpr tilec_dtype DtypeOf<uint32_t>() { return TILEC_U32; }
template <> constexpr tilec_dtype DtypeOf<uint64_t>() { return TILEC_U64; }
template <> constexpr tilec_dtype DtypeOf<float>() { return TILEC_F32; }
template <> constexpr tilec_dtype DtypeOf<double>() { return TILEC_F64; }

inline int Version() { return tilec_version(); }

// Ids of the devices this library can open.
inline std::vector<std::string> DeviceIds() {
  std::vector<std::string> ids;
  for (size_t i = 0; i < tilec_device_count(); ++i) ids.emplace_back(tilec_device_id(i));
  return ids;
}

namespace detail {
inline std::vector<std::string> SplitNames(const char* joined) {
  std::vector<std::string> names;
  std::string_view all(joined ? joined : "");
  while (!all.empty()) {
    size_t comma = all.find(',');
    names.emplace_back(all.substr(0, comma));
    all = comma == std::string_view::npos ? std::string_view() : all.substr(comma + 1);
  }
  return names;
}
}  // namespace detail

// The input names of Tile `source`, parsed without shapes; tilec::Error (a
// user error with its location) for a syntax error.
inline std::vector<std::string> SourceInputs(std::string_view source, std::string_view name = "<source>") {
  std::string text(source), file(name);
  const char* inputs = nullptr;
  tilec_error error = nullptr;
  detail::Check(tilec_source_inputs(text.c_str(), file.c_str(), &inputs, &error), error);
  return detail::SplitNames(inputs);
}

// The output names of Tile `source`, in signature order (as SourceInputs).
inline std::vector<std::string> SourceOutputs(std::string_view source, std::string_view name = "<source>") {
  std::string text(source), file(name);
  const char* outputs = nullptr;
  tilec_error error = nullptr;
  detail::Check(tilec_source_outputs(text.c_str(), file.c_str(), &outputs, &error), error);
  return detail::SplitNames(outputs);
}

// An input's shape (and layout) for compiling: the dims are copied, so they
// may be written inline ({"A", TILEC_F32, {3, 4}}) or come from any
// container; the name and layout views must outlive Compile.
struct TensorSpec {
  TensorSpec(std::string_view n, tilec_dtype t, std::span<const int64_t> d, std::string_view l = {})
      : name(n), dtype(t), dims(d.begin(), d.end()), layout(l) {}
  TensorSpec(std::string_view n, tilec_dtype t, std::initializer_list<int64_t> d, std::string_view l = {})
      : name(n), dtype(t), dims(d), layout(l) {}

  std::string_view name;
  tilec_dtype dtype;
  std::vector<int64_t> dims;
  std::string_view layout = {};  // empty: row-major
};

struct CompileOptions {
  std::vector<std::pair<std::string, std::string>> layouts;  // tensor -> layout spec
  bool vectorize = true;
  bool use_cache = true;
  bool use_tuning_cache = true;   // the winners of `tilec tune` (tuning cache)
  double tune_budget_seconds = 0;  // > 0: tune untuned kernels on first use, within this budget
  // Inputs whose contents do not change between runs (weights): see
  // tilec_compile_options.constant_inputs and Program::InvalidateConstants.
  std::vector<std::string> constant_inputs;
};

// What to differentiate (tilec_gradient_spec): empty lists mean every float
// input / every float output.
struct GradientSpec {
  std::vector<std::string> wrt;
  std::vector<std::string> outputs;
  std::vector<std::string> saved = {};  // forward tensors passed in (tilec_gradient_spec.saved)
};

namespace detail {
// C specs and options for a compile; holds the strings they point to.
struct Specs {
  Specs(std::span<const TensorSpec> inputs, const CompileOptions& o) {
    strings.reserve(2 * inputs.size());
    for (const TensorSpec& s : inputs) {
      const char* name = strings.emplace_back(s.name).c_str();
      const char* layout = s.layout.empty() ? nullptr : strings.emplace_back(s.layout).c_str();
      specs.push_back({name, s.dtype, static_cast<int>(s.dims.size()), s.dims.data(), layout});
    }
    for (const auto& [tensor, layout] : o.layouts) layouts.push_back({tensor.c_str(), layout.c_str()});
    for (const std::string& name : o.constant_inputs) constants.push_back(name.c_str());
    options.layouts = layouts.data();
    options.num_layouts = layouts.size();
    options.constant_inputs = constants.data();
    options.num_constant_inputs = constants.size();
    options.no_vector = o.vectorize ? 0 : 1;
    options.no_cache = o.use_cache ? 0 : 1;
    options.no_tuning_cache = o.use_tuning_cache ? 0 : 1;
    options.tune_budget_seconds = o.tune_budget_seconds;
  }
  std::vector<std::string> strings;
  std::vector<tilec_tensor_spec> specs;
  std::vector<tilec_layout_spec> layouts;
  std::vector<const char*> constants;
  tilec_compile_options options{};
};

struct GradientNames {
  explicit GradientNames(const GradientSpec& g) {
    for (const std::string& n : g.wrt) wrt.push_back(n.c_str());
    for (const std::string& n : g.outputs) outputs.push_back(n.c_str());
    for (const std::string& n : g.saved) saved.push_back(n.c_str());
    spec = {wrt.data(), wrt.size(), outputs.data(), outputs.size(), saved.data(), saved.size()};
  }
  std::vector<const char*> wrt, outputs, saved;
  tilec_gradient_spec spec{};
};
}  // namespace detail

// The Tile text of the reverse-mode gradient of `source` for the shapes of
// `inputs` (tilec_gradient_source; docs/user-guide.md, "tilec grad").
inline std::string GradientSource(std::string_view source, std::span<const TensorSpec> inputs,
                                  const GradientSpec& gradient = {}, std::string_view name = "<source>") {
  std::string src(source), file(name);
  detail::Specs specs(inputs, {});
  detail::GradientNames names(gradient);
  const char* text = nullptr;
  tilec_error error = nullptr;
  detail::Check(tilec_gradient_source(src.c_str(), file.c_str(), specs.specs.data(), specs.specs.size(),
                                      &names.spec, &text, &error),
                error);
  return text ? text : "";
}
inline std::string GradientSource(std::string_view source, std::initializer_list<TensorSpec> inputs,
                                  const GradientSpec& gradient = {}, std::string_view name = "<source>") {
  return GradientSource(source, std::span<const TensorSpec>(inputs.begin(), inputs.size()), gradient, name);
}

// Caller memory holding one tensor (see tilec_tensor). The spans must
// outlive the Run call.
struct Tensor {
  void* data = nullptr;
  size_t bytes = 0;
  tilec_dtype dtype = TILEC_F32;
  std::span<const int64_t> dims;
  std::span<const int64_t> strides;  // empty: the compiled layout
  tilec_memory memory = TILEC_MEMORY_HOST;

  Tensor() = default;
  Tensor(void* d, size_t b, tilec_dtype t, std::span<const int64_t> shape,
         std::span<const int64_t> s = {})
      : data(d), bytes(b), dtype(t), dims(shape), strides(s) {}
  // Typed memory: the element type and byte size follow from the span.
  template <typename T>
  Tensor(std::span<T> values, std::span<const int64_t> shape, std::span<const int64_t> s = {})
      : data(const_cast<std::remove_const_t<T>*>(values.data())),
        bytes(values.size_bytes()),
        dtype(DtypeOf<std::remove_const_t<T>>()),
        dims(shape),
        strides(s) {}
  // A cl_mem (cast to void*) holding the tensor in its compiled layout; see
  // tilec_program_run_memory.
  static Tensor ClMem(void* cl_mem, tilec_dtype dtype, std::span<const int64_t> shape) {
    Tensor t(cl_mem, 0, dtype, shape);
    t.memory = TILEC_MEMORY_CL_MEM;
    return t;
  }
};

struct TensorInfo {
  std::string name;
  tilec_dtype dtype;
  std::vector<int64_t> dims;
  std::string layout;
  std::vector<int64_t> strides;  // empty for blocked layouts
  size_t bytes;
  size_t alignment;
};

class Program {
 public:
  Program() = default;
  explicit Program(tilec_program handle) : handle_(handle) {}
  Program(Program&& o) noexcept : handle_(std::exchange(o.handle_, nullptr)) {}
  Program& operator=(Program&& o) noexcept {
    if (this != &o) Reset(std::exchange(o.handle_, nullptr));
    return *this;
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  ~Program() { Reset(nullptr); }

  tilec_program get() const { return handle_; }

  std::vector<TensorInfo> Inputs() const { return Infos(true); }
  std::vector<TensorInfo> Outputs() const { return Infos(false); }

  // One tensor per input and per output, in signature order. May be called
  // from several threads at once on different outputs.
  void Run(std::span<const Tensor> inputs, std::span<const Tensor> outputs) const {
    std::vector<tilec_tensor> all;
    std::vector<tilec_memory> memory;
    all.reserve(inputs.size() + outputs.size());
    memory.reserve(inputs.size() + outputs.size());
    for (std::span<const Tensor> list : {inputs, outputs}) {
      for (const Tensor& t : list) {
        all.push_back(ToC(t));
        memory.push_back(t.memory);
      }
    }
    tilec_error error = nullptr;
    detail::Check(tilec_program_run_memory(handle_, all.data(), memory.data(), inputs.size(),
                                           all.data() + inputs.size(), memory.data() + inputs.size(),
                                           outputs.size(), &error),
                  error);
  }
  void Run(std::initializer_list<Tensor> inputs, std::initializer_list<Tensor> outputs) const {
    Run(std::span<const Tensor>(inputs.begin(), inputs.size()),
        std::span<const Tensor>(outputs.begin(), outputs.size()));
  }

  // After the contents of a constant input changed in place (same memory):
  // the next runs read the constants anew (tilec_program_invalidate_constants).
  void InvalidateConstants() const {
    tilec_error error = nullptr;
    detail::Check(tilec_program_invalidate_constants(handle_, &error), error);
  }

 private:
  void Reset(tilec_program h) {
    if (handle_) tilec_program_release(handle_);
    handle_ = h;
  }
  static tilec_tensor ToC(const Tensor& t) {
    return tilec_tensor{t.data, t.bytes, t.dtype, static_cast<int>(t.dims.size()), t.dims.data(),
                        t.strides.empty() ? nullptr : t.strides.data()};
  }
  std::vector<TensorInfo> Infos(bool inputs) const {
    tilec_error error = nullptr;
    size_t count = 0;
    detail::Check(inputs ? tilec_program_num_inputs(handle_, &count, &error)
                         : tilec_program_num_outputs(handle_, &count, &error),
                  error);
    std::vector<TensorInfo> out;
    for (size_t i = 0; i < count; ++i) {
      tilec_tensor_info c{};
      detail::Check(inputs ? tilec_program_input(handle_, i, &c, &error)
                           : tilec_program_output(handle_, i, &c, &error),
                    error);
      TensorInfo info{c.name, c.dtype, {c.dims, c.dims + c.rank}, c.layout, {}, c.bytes, c.alignment};
      if (c.strides) info.strides.assign(c.strides, c.strides + c.rank);
      out.push_back(std::move(info));
    }
    return out;
  }

  tilec_program handle_ = nullptr;
};

class Device {
 public:
  // `cpu`: the CPU to compile and plan for (tilec_device_open_cpu; empty:
  // the host, or TILEC_CPU).
  explicit Device(std::string_view id = "llvm", std::string_view cpu = {}) {
    std::string s(id), c(cpu);
    tilec_error error = nullptr;
    detail::Check(tilec_device_open_cpu(s.c_str(), c.c_str(), &handle_, &error), error);
  }
  // The OpenCL device of the caller's cl_context and cl_command_queue (cast
  // to void*); see tilec_device_open_cl.
  static Device OpenCl(void* cl_context, void* cl_command_queue) {
    tilec_device handle = nullptr;
    tilec_error error = nullptr;
    detail::Check(tilec_device_open_cl(cl_context, cl_command_queue, &handle, &error), error);
    return Device(handle);
  }
  explicit Device(tilec_device handle) : handle_(handle) {}
  Device(Device&& o) noexcept : handle_(std::exchange(o.handle_, nullptr)) {}
  Device& operator=(Device&& o) noexcept {
    if (this != &o) {
      if (handle_) tilec_device_release(handle_);
      handle_ = std::exchange(o.handle_, nullptr);
    }
    return *this;
  }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  ~Device() {
    if (handle_) tilec_device_release(handle_);
  }

  tilec_device get() const { return handle_; }
  std::string Name() const { return tilec_device_name(handle_); }
  std::string Description() const { return tilec_device_description(handle_); }
  // An OpenCL device's cl_context and cl_command_queue (as void*).
  std::pair<void*, void*> ClHandles() const {
    void *context = nullptr, *queue = nullptr;
    tilec_error error = nullptr;
    detail::Check(tilec_device_cl_handles(handle_, &context, &queue, &error), error);
    return {context, queue};
  }

  Program Compile(std::string_view source, std::span<const TensorSpec> inputs,
                  const CompileOptions& options = {}, std::string_view source_name = "<source>") const {
    std::string src(source), src_name(source_name);
    detail::Specs specs(inputs, options);
    tilec_program program = nullptr;
    tilec_error error = nullptr;
    detail::Check(tilec_program_compile(handle_, src.c_str(), src_name.c_str(), specs.specs.data(),
                                        specs.specs.size(), &specs.options, &program, &error),
                  error);
    return Program(program);
  }
  // Compiles the gradient program of `source` (GradientSource): its inputs
  // are `inputs` then the incoming gradients O_grad, its outputs X_grad.
  Program CompileGradient(std::string_view source, std::span<const TensorSpec> inputs,
                          const GradientSpec& gradient = {}, const CompileOptions& options = {},
                          std::string_view source_name = "<source>") const {
    std::string src(source), src_name(source_name);
    detail::Specs specs(inputs, options);
    detail::GradientNames names(gradient);
    tilec_program program = nullptr;
    tilec_error error = nullptr;
    detail::Check(tilec_program_compile_gradient(handle_, src.c_str(), src_name.c_str(), specs.specs.data(),
                                                 specs.specs.size(), &names.spec, &specs.options, &program,
                                                 &error),
                  error);
    return Program(program);
  }
  Program CompileGradient(std::string_view source, std::initializer_list<TensorSpec> inputs,
                          const GradientSpec& gradient = {}, const CompileOptions& options = {},
                          std::string_view source_name = "<source>") const {
    return CompileGradient(source, std::span<const TensorSpec>(inputs.begin(), inputs.size()), gradient, options,
                           source_name);
  }
  Program Compile(std::string_view source, std::initializer_list<TensorSpec> inputs,
                  const CompileOptions& options = {}, std::string_view source_name = "<source>") const {
    return Compile(source, std::span<const TensorSpec>(inputs.begin(), inputs.size()), options,
                   source_name);
  }

 private:
  tilec_device handle_ = nullptr;
};

// An ONNX model imported as one Tile program (tilec_model_import_onnx):
// compile source() with the inputs' and constants' specs (Specs()) and the
// constants marked constant (ConstantNames()), then give the constants'
// values with every run.
struct ModelTensor {
  std::string name;       // in the ONNX graph
  std::string tile_name;  // in the program
  tilec_dtype dtype;
  std::vector<int64_t> dims;
  const void* data = nullptr;  // a constant's values (valid while the Model lives)
  size_t bytes = 0;
};

class Model {
 public:
  // `shapes` gives graph inputs whose dimensions the model leaves symbolic, by ONNX name.
  static Model ImportOnnx(std::span<const std::byte> bytes, std::string_view origin = "<model>",
                          std::span<const TensorSpec> shapes = {}) {
    std::string o(origin);
    std::vector<std::string> names;
    names.reserve(shapes.size());
    std::vector<tilec_tensor_spec> specs;
    for (const TensorSpec& s : shapes) {
      names.emplace_back(s.name);
      specs.push_back({names.back().c_str(), s.dtype, static_cast<int>(s.dims.size()), s.dims.data(), nullptr});
    }
    tilec_model handle = nullptr;
    tilec_error error = nullptr;
    detail::Check(tilec_model_import_onnx(bytes.data(), bytes.size(), o.c_str(), specs.data(), specs.size(), &handle,
                                          &error),
                  error);
    Model m;
    m.handle_ = std::shared_ptr<tilec_model_s>(handle, [](tilec_model h) { tilec_model_release(h); });
    const char* source = nullptr;
    detail::Check(tilec_model_source(handle, &source, &error), error);
    m.source_ = source;
    size_t counts[3] = {};
    detail::Check(tilec_model_counts(handle, &counts[0], &counts[1], &counts[2], &error), error);
    auto getters = {tilec_model_input, tilec_model_output, tilec_model_constant};
    std::vector<ModelTensor>* lists[] = {&m.inputs_, &m.outputs_, &m.constants_};
    int k = 0;
    for (auto get : getters) {
      for (size_t i = 0; i < counts[k]; ++i) {
        tilec_model_tensor t{};
        detail::Check(get(handle, i, &t, &error), error);
        lists[k]->push_back({t.name, t.tile_name, t.dtype, std::vector<int64_t>(t.dims, t.dims + t.rank), t.data,
                             t.bytes});
      }
      ++k;
    }
    return m;
  }

  const std::string& source() const { return source_; }
  const std::vector<ModelTensor>& inputs() const { return inputs_; }
  const std::vector<ModelTensor>& outputs() const { return outputs_; }
  const std::vector<ModelTensor>& constants() const { return constants_; }
  // Specs of the program's inputs: the graph inputs' and the constants' shapes.
  std::vector<TensorSpec> Specs() const {
    std::vector<TensorSpec> out;
    for (const auto* list : {&inputs_, &constants_})
      for (const ModelTensor& t : *list) out.emplace_back(t.tile_name, t.dtype, std::span<const int64_t>(t.dims));
    return out;
  }
  std::vector<std::string> ConstantNames() const {
    std::vector<std::string> out;
    for (const ModelTensor& t : constants_) out.push_back(t.tile_name);
    return out;
  }

 private:
  std::shared_ptr<tilec_model_s> handle_;
  std::string source_;
  std::vector<ModelTensor> inputs_, outputs_, constants_;
};

}  // namespace tilec
