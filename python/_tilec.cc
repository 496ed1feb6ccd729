// The extension module `tilec._tilec` behind the Python package `tilec`
// (python/tilec/__init__.py re-exports it): Tile programs as Python callables on NumPy
// arrays and on any object with __dlpack__ (PyTorch CPU tensors), through the
// C++ API.
//
//   import tilec
//   conv = tilec.function(open("examples/conv_relu.tile").read())
//   r = conv(D=d, K=k)                  # NumPy array(s) back
//   conv(D=d, K=k, out=r)               # or into your own array
//
// A Function compiles on its first call for the inputs' dtypes and shapes and
// keeps one program per distinct (dtype, shape) signature. Arrays are passed
// to the library in place (their strides included): C-contiguous aligned
// arrays are not copied on CPU devices. Objects with __dlpack__ are read
// through their DLManagedTensor directly (dlpack.h), not through NumPy. A
// call repeating the previous out= call's signature takes a fast path
// (Function::CallFast). Runs release the GIL, except tiny ones on the fast
// path. Tile errors raise tilec.Error whose text has the source line and a
// caret.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <dlpack/dlpack.h>
#include <structmember.h>
#include <tilec/tilec.hpp>

#include "dtypes.h"
#include "torch_reader.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;
using tilec_python::FromDtype;
using tilec_python::ToDtype;

namespace {

// One argument's memory as a tilec::Tensor (strides in elements). `keep`
// holds what owns the memory for the duration of the call: the NumPy array,
// or the DLPack capsule whose deleter runs when the Arg dies.
struct Arg {
  py::object keep;
  DLManagedTensor* managed = nullptr;  // consumed DLPack tensor (deleter called in ~Arg)
  std::vector<int64_t> dims, strides;
  tilec::Tensor tensor;

  Arg() = default;
  Arg(Arg&& o) noexcept
      : keep(std::move(o.keep)), managed(std::exchange(o.managed, nullptr)),
        dims(std::move(o.dims)), strides(std::move(o.strides)), tensor(o.tensor) {}
  // (Moving the vectors keeps their storage, which `tensor` points into.)
  Arg& operator=(Arg&& o) noexcept {
    if (this != &o) {
      Release();
      keep = std::move(o.keep);
      managed = std::exchange(o.managed, nullptr);
      dims = std::move(o.dims);
      strides = std::move(o.strides);
      tensor = o.tensor;
    }
    return *this;
  }
  ~Arg() { Release(); }
  void Release() {
    if (managed && managed->deleter) managed->deleter(managed);
    managed = nullptr;
  }
};

// Bytes from the first to one past the last element (0 if empty).
size_t SpanBytes(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, size_t itemsize) {
  int64_t last = 0;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 0) return 0;
    last += (dims[d] - 1) * strides[d];
  }
  return static_cast<size_t>(last + 1) * itemsize;
}

void FromArray(py::array a, Arg& arg) {
  for (py::ssize_t d = 0; d < a.ndim(); ++d)
    if (a.strides(d) % a.itemsize() != 0 || a.strides(d) < 0) {
      a = py::array::ensure(a, py::array::c_style);
      break;
    }
  for (py::ssize_t d = 0; d < a.ndim(); ++d) {
    arg.dims.push_back(a.shape(d));
    arg.strides.push_back(a.strides(d) / a.itemsize());
  }
  size_t bytes = SpanBytes(arg.dims, arg.strides, a.itemsize());
  arg.tensor = tilec::Tensor(const_cast<void*>(a.data()), bytes, ToDtype(a.dtype()), arg.dims, arg.strides);
  arg.keep = std::move(a);
}

tilec_dtype FromDl(DLDataType t, const std::string& name) {
  constexpr uint8_t kDLBool = 6;  // DLPack >= 0.8 (Debian has 0.6); PyTorch exports bool so
  if (t.lanes == 1) {
    if (t.code == kDLBool && t.bits == 8) return TILEC_BOOL;
    if (t.code == kDLFloat && t.bits == 16) return TILEC_F16;
    if (t.code == kDLFloat && t.bits == 32) return TILEC_F32;
    if (t.code == kDLFloat && t.bits == 64) return TILEC_F64;
    static const tilec_dtype ints[] = {TILEC_I8, TILEC_I16, TILEC_I32, TILEC_I64};
    static const tilec_dtype uints[] = {TILEC_U8, TILEC_U16, TILEC_U32, TILEC_U64};
    for (int i = 0; i < 4; ++i)
      if (t.bits == (8u << i)) {
        if (t.code == kDLInt) return ints[i];
        if (t.code == kDLUInt) return uints[i];
      }
  }
  throw py::type_error("tilec: '" + name + "' has an unsupported DLPack element type (code " +
                       std::to_string(t.code) + ", " + std::to_string(t.bits) + " bits, " +
                       std::to_string(t.lanes) + " lanes)");
}

// An object with __dlpack__ (a PyTorch CPU tensor): its DLManagedTensor is
// consumed here (the capsule renamed "used_dltensor", as the protocol asks)
// and released when the Arg dies; no NumPy array in between.
void FromDlpack(const py::handle& obj, const std::string& name, Arg& arg) {
  py::object capsule = obj.attr("__dlpack__")();
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (!managed) throw py::error_already_set();
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  arg.managed = managed;
  arg.keep = std::move(capsule);
  const DLTensor& t = managed->dl_tensor;
  if (t.device.device_type != kDLCPU)
    throw py::type_error("tilec: '" + name + "' is not in CPU memory (DLPack device type " +
                         std::to_string(t.device.device_type) + ")");
  tilec_dtype dtype = FromDl(t.dtype, name);
  size_t itemsize = t.dtype.bits / 8;
  arg.dims.assign(t.shape, t.shape + t.ndim);
  if (t.strides) {
    arg.strides.assign(t.strides, t.strides + t.ndim);
  } else {  // compact row-major
    arg.strides.assign(t.ndim, 1);
    for (int d = t.ndim - 1; d > 0; --d) arg.strides[d - 1] = arg.strides[d] * arg.dims[d];
  }
  for (int64_t s : arg.strides)
    if (s < 0) throw py::value_error("tilec: '" + name + "' has a negative stride; pass a copy");
  auto* data = static_cast<char*>(t.data) + t.byte_offset;
  arg.tensor = tilec::Tensor(data, SpanBytes(arg.dims, arg.strides, itemsize), dtype, arg.dims, arg.strides);
}

// What this module knows of torch once torch is imported (it never imports
// it): the Tensor type, the dtype objects, and tilec._torch_fast's reader
// when that is built for this torch (torch_reader.h).
struct Torch {
  PyTypeObject* tensor_type = nullptr;
  std::map<PyObject*, tilec_dtype> dtypes;  // torch.float32 -> TILEC_F32...
  const TilecTorchApi* api = nullptr;       // null: read through Python attributes
};

// tilec._torch_fast's reader if it was built for this torch's major.minor
// version and imports; else null (and no Python error).
const TilecTorchApi* LoadTorchReader(PyObject* torch) {
#ifdef TILEC_TORCH_VERSION
  py::object version = py::reinterpret_steal<py::object>(PyObject_GetAttrString(torch, "__version__"));
  std::string want = TILEC_TORCH_VERSION ".";
  if (!version || !PyUnicode_Check(version.ptr()) || py::str(version).cast<std::string>().rfind(want, 0) != 0)
    return PyErr_Clear(), nullptr;
  py::object module = py::reinterpret_steal<py::object>(PyImport_ImportModule("tilec._torch_fast"));
  if (!module) return PyErr_Clear(), nullptr;
  py::object capsule = py::reinterpret_steal<py::object>(PyObject_GetAttrString(module.ptr(), "api"));
  auto* api = capsule ? static_cast<const TilecTorchApi*>(PyCapsule_GetPointer(capsule.ptr(), kTilecTorchCapsule))
                      : nullptr;
  if (!api || api->version != kTilecTorchApiVersion) return PyErr_Clear(), nullptr;
  module.release();  // kept for the process, as the capsule's pointer is
  return api;
#else
  (void)torch;
  return nullptr;
#endif
}

// Null until torch is imported; then set up once (under the GIL).
const Torch* GetTorch() {
  static Torch* state = nullptr;
  if (state) return state;
  PyObject* torch = PyDict_GetItemString(PyImport_GetModuleDict(), "torch");  // borrowed
  if (!torch || torch == Py_None) return nullptr;
  auto s = std::make_unique<Torch>();
  py::object tensor = py::reinterpret_steal<py::object>(PyObject_GetAttrString(torch, "Tensor"));
  if (!tensor || !PyType_Check(tensor.ptr())) return PyErr_Clear(), nullptr;  // torch half imported
  s->tensor_type = reinterpret_cast<PyTypeObject*>(tensor.release().ptr());  // kept for the process
  const std::pair<const char*, tilec_dtype> names[] = {
      {"bool", TILEC_BOOL},   {"int8", TILEC_I8},     {"int16", TILEC_I16},   {"int32", TILEC_I32},
      {"int64", TILEC_I64},   {"uint8", TILEC_U8},    {"float16", TILEC_F16}, {"float32", TILEC_F32},
      {"float64", TILEC_F64}};
  for (const auto& [n, t] : names) {
    PyObject* d = PyObject_GetAttrString(torch, n);  // kept for the process
    if (!d) return PyErr_Clear(), nullptr;
    s->dtypes[d] = t;
  }
  s->api = LoadTorchReader(torch);
  state = s.release();
  return state;
}

// PyTorch CPU tensors by tilec._torch_fast's reader, else by their
// attributes: data_ptr(), shape, stride() and dtype cost ~1 us where
// __dlpack__() costs ~3 us per tensor. A tensor not in CPU memory, not
// strided, negated, or of an element type Tilec lacks is an error; false
// for what is not a torch.Tensor.
bool FromTorch(const py::handle& obj, const std::string& name, Arg& arg) {
  const Torch* torch = GetTorch();
  if (!torch) return false;
  if (TilecTorchView v; torch->api && torch->api->read(obj.ptr(), &v)) {
    arg.dims.assign(v.sizes, v.sizes + v.ndim);
    arg.strides.assign(v.strides, v.strides + v.ndim);
    arg.tensor = tilec::Tensor(v.data, SpanBytes(arg.dims, arg.strides, v.itemsize), v.dtype, arg.dims, arg.strides);
    arg.keep = py::reinterpret_borrow<py::object>(obj);
    return true;
  }
  if (PyObject_IsInstance(obj.ptr(), reinterpret_cast<PyObject*>(torch->tensor_type)) != 1) return PyErr_Clear(), false;
  // A tilec.function has no backward (tilec.torch.op records one), so a
  // tensor that requires grad while autograd records is an error, never
  // silently detached (torch.no_grad() or .detach() says it is meant).
  if (obj.attr("requires_grad").cast<bool>() &&
      py::module_::import("torch").attr("is_grad_enabled")().cast<bool>())
    throw std::runtime_error("tilec: '" + name + "' requires grad; tilec functions have no backward (use torch.no_grad())");
  if (!obj.attr("is_cpu").cast<bool>())
    throw py::type_error("tilec: '" + name + "' is a torch tensor on device '" +
                         std::string(py::str(obj.attr("device"))) + "', not in CPU memory");
  if (std::string layout = py::str(obj.attr("layout")); layout != "torch.strided")
    throw py::type_error("tilec: '" + name + "' is a " + layout + " torch tensor; pass a strided one");
  // Views whose values are not their memory's (__dlpack__ would pass the memory).
  if (obj.attr("is_neg")().cast<bool>() || obj.attr("is_conj")().cast<bool>())
    throw py::value_error("tilec: '" + name + "' is a negated or conjugated view; pass x.resolve_neg()");
  py::object dtype = obj.attr("dtype");
  auto t = torch->dtypes.find(dtype.ptr());
  if (t == torch->dtypes.end())
    throw py::type_error("tilec: '" + name + "' has element type " + std::string(py::str(dtype)) +
                         ", which Tilec lacks (it has bool, int8-64, uint8, float16, float32, float64)");
  py::tuple shape = obj.attr("shape"), stride = obj.attr("stride")();
  for (size_t d = 0; d < shape.size(); ++d) {
    arg.dims.push_back(shape[d].cast<int64_t>());
    arg.strides.push_back(stride[d].cast<int64_t>());
    if (arg.strides.back() < 0) throw py::value_error("tilec: '" + name + "' has a negative stride; pass a copy");
  }
  auto* data = reinterpret_cast<void*>(obj.attr("data_ptr")().cast<uintptr_t>());
  size_t itemsize = obj.attr("element_size")().cast<size_t>();
  arg.tensor = tilec::Tensor(data, SpanBytes(arg.dims, arg.strides, itemsize), t->second, arg.dims, arg.strides);
  arg.keep = py::reinterpret_borrow<py::object>(obj);
  return true;
}

// NumPy arrays as they are; PyTorch tensors by their attributes; other
// objects through __dlpack__ (no copy in any case).
void MakeArg(const py::handle& obj, const std::string& name, Arg& arg) {
  if (py::isinstance<py::array>(obj)) return FromArray(py::reinterpret_borrow<py::array>(obj), arg);
  if (FromTorch(obj, name, arg)) return;
  if (py::hasattr(obj, "__dlpack__")) return FromDlpack(obj, name, arg);
  throw py::type_error("tilec: '" + name + "' must be a NumPy array or support __dlpack__, not " +
                       std::string(py::str(py::type::of(obj))));
}

// What the fast path of a call compares an argument with: its kind, element
// type, dims and strides (bytes for NumPy, elements for torch).
// Never the data pointer, which is read anew on every call.
struct ArgKey {
  enum Kind { kNumpy, kTorch } kind = kNumpy;
  PyObject* dtype = nullptr;  // NumPy's descr or torch's dtype (process-lived singletons)
  tilec_dtype torch_dtype = TILEC_F32;  // compared instead of `dtype` by the C++ reader
  std::vector<int64_t> dims, strides;
  bool operator==(const ArgKey&) const = default;
};

// A torch tensor through its Python attributes (no tilec._torch_fast).
bool TorchKeyMatchesByAttributes(PyObject* obj, PyTypeObject* tensor_type, const ArgKey& want, void** data) {
  if (Py_TYPE(obj) != tensor_type) return false;
  // The type's descriptors, called directly: no attribute lookup per read.
  struct Descriptors {
    PyObject *dtype, *is_cpu, *is_neg, *shape, *stride, *data_ptr, *requires_grad;
  };
  static const Descriptors ds = [tensor_type] {
    auto get = [tensor_type](const char* n) {
      PyObject* d = PyObject_GetAttrString(reinterpret_cast<PyObject*>(tensor_type), n);
      if (!d) throw py::error_already_set();
      return d;  // kept for the process
    };
    return Descriptors{get("dtype"),  get("is_cpu"),   get("is_neg"),       get("shape"),
                       get("stride"), get("data_ptr"), get("requires_grad")};
  }();
  auto attr = [&](PyObject* descr) {
    descrgetfunc getter = Py_TYPE(descr)->tp_descr_get;
    return py::reinterpret_steal<py::object>(
        getter ? getter(descr, obj, reinterpret_cast<PyObject*>(Py_TYPE(obj))) : nullptr);
  };
  auto call = [&](PyObject* descr) {
    return py::reinterpret_steal<py::object>(PyObject_Vectorcall(descr, &obj, 1, nullptr));
  };
  py::object dtype = attr(ds.dtype);
  if (!dtype || dtype.ptr() != want.dtype) return PyErr_Clear(), false;
  py::object requires_grad = attr(ds.requires_grad);  // the slow path decides about these
  if (!requires_grad || requires_grad.ptr() != Py_False) return PyErr_Clear(), false;
  py::object is_cpu = attr(ds.is_cpu);
  if (!is_cpu || is_cpu.ptr() != Py_True) return PyErr_Clear(), false;
  py::object is_neg = call(ds.is_neg);  // a negated view: its memory is not its values
  if (!is_neg || is_neg.ptr() != Py_False) return PyErr_Clear(), false;
  // A tuple of ints equal to `v`.
  auto same = [](const py::object& t, const auto& v) {
    if (!t || !PyTuple_Check(t.ptr()) || PyTuple_GET_SIZE(t.ptr()) != static_cast<Py_ssize_t>(v.size()))
      return false;
    for (size_t d = 0; d < v.size(); ++d)
      if (PyLong_AsLongLong(PyTuple_GET_ITEM(t.ptr(), d)) != v[d]) return false;
    return true;
  };
  if (!same(attr(ds.shape), want.dims)) return PyErr_Clear(), false;
  if (!same(call(ds.stride), want.strides)) return PyErr_Clear(), false;
  py::object ptr = call(ds.data_ptr);
  if (!ptr) return PyErr_Clear(), false;
  *data = PyLong_AsVoidPtr(ptr.ptr());
  if (PyErr_Occurred()) return PyErr_Clear(), false;
  return true;
}

// The key and data pointer of `obj` without building anything (false: not a
// NumPy array or a CPU torch.Tensor; the slow path decides then).
// `want` is the key to match: only it is compared, nothing allocated.
bool KeyMatches(PyObject* obj, const ArgKey& want, void** data) {
  if (want.kind == ArgKey::kNumpy) {
    if (!py::detail::npy_api::get().PyArray_Check_(obj)) return false;
    auto* a = py::detail::array_proxy(obj);
    if (a->descr != want.dtype || a->nd != static_cast<int>(want.dims.size())) return false;
    for (int d = 0; d < a->nd; ++d)
      if (a->dimensions[d] != want.dims[d] || a->strides[d] != want.strides[d]) return false;
    *data = a->data;
    return true;
  }
  const Torch* torch = GetTorch();  // set: a torch key was recorded
  if (!torch->api) return TorchKeyMatchesByAttributes(obj, torch->tensor_type, want, data);
  TilecTorchView v;
  if (!torch->api->read(obj, &v) || v.dtype != want.torch_dtype ||
      v.ndim != static_cast<int64_t>(want.dims.size()) || !std::equal(v.sizes, v.sizes + v.ndim, want.dims.begin()) ||
      !std::equal(v.strides, v.strides + v.ndim, want.strides.begin()))
    return false;
  *data = v.data;
  return true;
}

// The key of an argument the slow path has read (`arg`), if the fast path
// can read its kind again: a NumPy array passed as it is, or a CPU
// torch.Tensor (exactly that type, or a Parameter too with the C++ reader).
std::optional<ArgKey> KeyOf(PyObject* obj, const Arg& arg) {
  ArgKey k;
  if (py::detail::npy_api::get().PyArray_Check_(obj)) {
    if (arg.keep.ptr() != obj) return std::nullopt;  // copied (ensure) for odd strides
    auto* a = py::detail::array_proxy(obj);
    k.kind = ArgKey::kNumpy;
    k.dtype = a->descr;
    k.dims.assign(a->dimensions, a->dimensions + a->nd);
    k.strides.assign(a->strides, a->strides + a->nd);
    return k;
  }
  const Torch* torch = GetTorch();
  if (!torch || arg.managed || arg.keep.ptr() != obj) return std::nullopt;
  k.kind = ArgKey::kTorch;
  if (TilecTorchView v; torch->api) {
    if (!torch->api->read(obj, &v)) return std::nullopt;
    k.torch_dtype = v.dtype;
  } else {
    if (Py_TYPE(obj) != torch->tensor_type) return std::nullopt;
    py::object dtype = py::reinterpret_borrow<py::object>(obj).attr("dtype");
    k.dtype = dtype.ptr();  // torch dtypes are process-lived singletons
  }
  k.dims = arg.dims;
  k.strides = arg.strides;
  return k;
}

// "f takes keyword arguments named like its inputs: f(A=..., B=...)".
std::string fmt_positional(size_t count, const std::string& names, const std::string& call) {
  return "a Tile function takes keyword arguments named like its inputs (" + names + "), not " +
         std::to_string(count) + " positional argument" + (count == 1 ? "" : "s") + ": call f(" + call + ")";
}

class Function {
 public:
  // Parses `source` now: a syntax error is raised where the source is given.
  Function(std::string source, std::string device, std::string name, std::vector<std::string> constants)
      : source_(std::move(source)), name_(std::move(name)), device_(device),
        inputs_(tilec::SourceInputs(source_, name_)) {
    options_.constant_inputs = std::move(constants);
  }

  const std::vector<std::string>& inputs() const { return inputs_; }

  // Positional arguments: say how to call instead.
  [[noreturn]] void RejectPositional(size_t count) const {
    std::string names, call;
    for (const std::string& n : inputs_) {
      names += (names.empty() ? "" : ", ") + n;
      call += (call.empty() ? "" : ", ") + n + "=...";
    }
    throw py::type_error(fmt_positional(count, names, call));
  }

  // After a constant input's contents changed in place: every compiled
  // signature reads its constants anew on its next run.
  void InvalidateConstants() {
    for (auto& [signature, c] : programs_) c->program.InvalidateConstants();
  }
  const std::vector<std::string>& constants() const { return options_.constant_inputs; }

  py::object Call(py::args args, py::kwargs kwargs) {
    if (!args.empty()) RejectPositional(args.size());
    if (PyObject* r = CallFast(kwargs.ptr())) {
      ++fast_calls_;
      return py::reinterpret_steal<py::object>(r);
    }
    return CallSlow(kwargs);
  }

 private:
  // The last call's signature with out= given, when every argument is a
  // NumPy array or a CPU torch.Tensor: a call with the same keywords in the
  // same order and arguments of the same kinds, dtypes, dims and strides
  // runs its program directly (no specs, strings or lookups). Any difference
  // (another shape, strides, dtype, keyword) takes the slow path, which
  // checks, compiles if needed, and records the new signature.
  struct Fast {
    struct Slot {
      py::object name;   // the keyword
      ArgKey key;
      size_t tensor;     // index in `tensors` (inputs, then the output)
    };
    std::vector<Slot> slots;  // in keyword order, out= included
    std::vector<tilec_tensor> tensors;  // data set per call in a copy
    std::vector<std::vector<int64_t>> dims, strides;  // what the tensors point at
    tilec_program program = nullptr;
    size_t num_inputs = 0;
    size_t bytes = 0;  // of all tensors: a tiny run keeps the GIL
  };

  // A new reference to the result, or null for "take the slow path" (with no
  // Python error set).
  PyObject* CallFast(PyObject* kwargs) {
    if (!kwargs) return nullptr;
    Py_ssize_t pos = 0;
    return CallFastWith(PyDict_GET_SIZE(kwargs), [&](PyObject** key, PyObject** value) {
      PyDict_Next(kwargs, &pos, key, value);
    });
  }

 public:
  // The fast path for a vectorcall (FunctionObject): keyword values and names.
  PyObject* CallFast(PyObject* const* values, PyObject* kwnames) {
    if (!kwnames) return nullptr;
    Py_ssize_t i = 0;
    return CallFastWith(PyTuple_GET_SIZE(kwnames), [&](PyObject** key, PyObject** value) {
      *key = PyTuple_GET_ITEM(kwnames, i);
      *value = values[i++];
    });
  }
  void CountFastCall() { ++fast_calls_; }

 private:
  // `next(&key, &value)` gives the `count` keyword arguments in call order.
  template <typename Next>
  PyObject* CallFastWith(Py_ssize_t count, Next&& next) {
    // A copy: another thread may replace fast_ while this one runs without the GIL.
    std::shared_ptr<const Fast> keep = fast_;
    if (!keep) return nullptr;
    const Fast& f = *keep;
    constexpr size_t kMaxTensors = 16;
    if (f.tensors.size() > kMaxTensors || count != static_cast<Py_ssize_t>(f.slots.size())) return nullptr;
    tilec_tensor tensors[kMaxTensors];
    std::copy(f.tensors.begin(), f.tensors.end(), tensors);
    PyObject *key, *value, *out = nullptr;
    for (const Fast::Slot& s : f.slots) {
      next(&key, &value);
      if (key != s.name.ptr() && PyUnicode_Compare(key, s.name.ptr()) != 0) return PyErr_Clear(), nullptr;
      if (!KeyMatches(value, s.key, &tensors[s.tensor].data)) return nullptr;
      if (s.tensor == f.num_inputs) out = value;
    }
    size_t num_outputs = f.tensors.size() - f.num_inputs;
    tilec_error error = nullptr;
    tilec_status st;
    if (f.bytes <= kKeepGilBytes) {
      st = tilec_program_run(f.program, tensors, f.num_inputs, tensors + f.num_inputs, num_outputs, &error);
    } else {
      py::gil_scoped_release release;
      st = tilec_program_run(f.program, tensors, f.num_inputs, tensors + f.num_inputs, num_outputs, &error);
    }
    if (st != TILEC_OK) {
      tilec_error_release(error);
      return nullptr;  // the slow path reports it
    }
    return Py_NewRef(out);  // the out= object, as the slow path returns it
  }

  // A tiny run (this many bytes of tensors in all) keeps the GIL: releasing
  // and taking it back costs more than the kernel.
  static constexpr size_t kKeepGilBytes = 64 * 1024;

 public:
  py::object CallSlow(py::kwargs kwargs) {
    py::object out = py::none();
    // Inputs by name (sorted: the signature must not depend on keyword order).
    std::vector<std::pair<std::string, Arg>> inputs;
    inputs.reserve(kwargs.size());
    for (auto [key, value] : kwargs) {
      std::string k = py::str(key);
      if (k == "out") {
        out = py::reinterpret_borrow<py::object>(value);
        continue;
      }
      inputs.emplace_back(std::move(k), Arg());
      MakeArg(value, inputs.back().first, inputs.back().second);
    }
    std::sort(inputs.begin(), inputs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    // The program for these dtypes and shapes: the last one used, or the map.
    std::string signature;
    for (auto& [k, a] : inputs) {
      signature += k;
      signature += ':';
      signature += std::to_string(static_cast<int>(a.tensor.dtype));
      for (int64_t d : a.dims) signature += ',' + std::to_string(d);
      signature += ';';
    }
    Compiled* c = last_ && last_signature_ == signature ? last_ : nullptr;
    if (!c) {
      auto it = programs_.find(signature);
      if (it == programs_.end()) {
        std::vector<tilec::TensorSpec> specs;
        for (auto& [k, a] : inputs) specs.push_back({k, a.tensor.dtype, a.dims});
        it = programs_.emplace(signature, std::make_unique<Compiled>(device_.Compile(source_, specs, options_, name_))).first;
      }
      c = it->second.get();
      last_ = c;
      last_signature_ = std::move(signature);
    }
    // Inputs in the program's order.
    std::vector<tilec::Tensor> in;
    in.reserve(c->inputs.size());
    for (const tilec::TensorInfo& info : c->inputs) {
      auto it = std::find_if(inputs.begin(), inputs.end(), [&](const auto& p) { return p.first == info.name; });
      if (it == inputs.end()) throw py::type_error("tilec: missing input '" + info.name + "'");
      in.push_back(it->second.tensor);
    }
    // Outputs: new arrays, or the caller's (one array, or a dict by name, or a sequence).
    std::vector<py::object> results;
    std::vector<Arg> out_args(c->outputs.size());
    std::vector<tilec::Tensor> outs;
    outs.reserve(c->outputs.size());
    for (size_t o = 0; o < c->outputs.size(); ++o) {
      const tilec::TensorInfo& info = c->outputs[o];
      py::object given = py::none();
      if (py::isinstance<py::dict>(out)) {
        if (out.contains(info.name)) given = out[py::str(info.name)];
      } else if (!out.is_none() && c->outputs.size() == 1) {
        given = out;
      } else if (!out.is_none()) {
        given = out[py::int_(o)];
      }
      if (given.is_none()) given = py::array(FromDtype(info.dtype), info.dims);
      MakeArg(given, info.name, out_args[o]);
      results.push_back(std::move(given));
      outs.push_back(out_args[o].tensor);
    }
    {
      py::gil_scoped_release release;
      c->program.Run(in, outs);
    }
    Record(kwargs, *c, inputs, out, out_args);
    if (results.size() == 1) return results[0];
    return py::tuple(py::cast(results));
  }

  size_t compiled_count() const { return programs_.size(); }
  size_t fast_calls() const { return fast_calls_; }

 private:
  struct Compiled;

  // Keeps this call's signature for CallFast if it qualifies (one output
  // given as out=; every argument a kind KeyOf reads), else forgets any.
  void Record(const py::kwargs& kwargs, Compiled& c,
              const std::vector<std::pair<std::string, Arg>>& inputs, const py::object& out,
              const std::vector<Arg>& out_args) {
    fast_.reset();
    if (out.is_none() || c.outputs.size() != 1 || py::isinstance<py::dict>(out)) return;
    auto f = std::make_shared<Fast>();
    f->program = c.program.get();
    f->num_inputs = c.inputs.size();
    f->tensors.resize(c.inputs.size() + 1);
    f->dims.resize(f->tensors.size());
    f->strides.resize(f->tensors.size());
    auto fill = [&](size_t t, const Arg& a) {
      f->dims[t] = a.dims;
      f->strides[t] = a.strides;
      tilec_tensor& ct = f->tensors[t];
      ct = tilec_tensor{nullptr, a.tensor.bytes, a.tensor.dtype, static_cast<int>(a.dims.size()),
                        f->dims[t].data(), f->strides[t].data()};
      f->bytes += a.tensor.bytes;
    };
    for (auto [key, value] : kwargs) {
      std::string k = py::str(key);
      size_t t;
      const Arg* arg;
      if (k == "out") {
        t = c.inputs.size();
        arg = &out_args[0];
      } else {
        auto it = std::find_if(c.inputs.begin(), c.inputs.end(), [&](const auto& info) { return info.name == k; });
        auto a = std::find_if(inputs.begin(), inputs.end(), [&](const auto& p) { return p.first == k; });
        if (it == c.inputs.end() || a == inputs.end()) return;
        t = static_cast<size_t>(it - c.inputs.begin());
        arg = &a->second;
      }
      std::optional<ArgKey> key_of = KeyOf(value.ptr(), *arg);
      if (!key_of) return;
      fill(t, *arg);
      f->slots.push_back({py::reinterpret_borrow<py::object>(key), std::move(*key_of), t});
    }
    if (f->slots.size() != f->tensors.size()) return;
    fast_ = std::move(f);
  }

  struct Compiled {
    explicit Compiled(tilec::Program p)
        : program(std::move(p)), inputs(program.Inputs()), outputs(program.Outputs()) {}
    tilec::Program program;
    std::vector<tilec::TensorInfo> inputs, outputs;
  };
  std::string source_, name_;
  tilec::Device device_;
  std::vector<std::string> inputs_;  // the program's input names, in order
  tilec::CompileOptions options_;  // the constant inputs
  std::map<std::string, std::unique_ptr<Compiled>> programs_;
  Compiled* last_ = nullptr;
  std::string last_signature_;
  std::shared_ptr<const Fast> fast_;
  size_t fast_calls_ = 0;  // under the GIL
};

// What tilec.function returns: a plain CPython callable with a vectorcall
// entry, so a call on the fast path builds no kwargs dict and skips
// pybind11's dispatch; any other call (and every attribute) goes to the
// pybind11 Function it holds.
struct FunctionObject {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject* impl;  // the pybind11 Function (strong reference)
  Function* function;
};

PyObject* FunctionVectorcall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  auto* o = reinterpret_cast<FunctionObject*>(self);
  if (size_t n = PyVectorcall_NARGS(nargsf); n > 0) {
    try {
      o->function->RejectPositional(n);
    } catch (py::builtin_exception& e) {
      e.set_error();
      return nullptr;
    }
  }
  try {
    if (PyObject* r = o->function->CallFast(args, kwnames)) {
      o->function->CountFastCall();
      return r;
    }
  } catch (py::error_already_set& e) {
    e.restore();
    return nullptr;
  }
  if (PyErr_Occurred()) return nullptr;
  PyObject* call = PyObject_GetAttrString(o->impl, "__call__");
  if (!call) return nullptr;
  PyObject* r = PyObject_Vectorcall(call, args, nargsf, kwnames);
  Py_DECREF(call);
  return r;
}

void FunctionDealloc(PyObject* self) {
  Py_XDECREF(reinterpret_cast<FunctionObject*>(self)->impl);
  PyTypeObject* type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject* FunctionGetattr(PyObject* self, PyObject* name) {
  if (PyObject* r = PyObject_GenericGetAttr(self, name)) return r;
  if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return nullptr;
  PyErr_Clear();
  return PyObject_GetAttr(reinterpret_cast<FunctionObject*>(self)->impl, name);
}

// dir(f): the attributes of the implementation object (inputs, constants,
// compiled_count, …), which getattr reaches.
PyObject* FunctionDir(PyObject* self, PyObject*) {
  return PyObject_Dir(reinterpret_cast<FunctionObject*>(self)->impl);
}

PyTypeObject* FunctionType() {
  static PyTypeObject* type = [] {
    static PyMethodDef methods[] = {{"__dir__", FunctionDir, METH_NOARGS, nullptr}, {nullptr, nullptr, 0, nullptr}};
    static PyMemberDef members[] = {
        {"__vectorcalloffset__", T_PYSSIZET, offsetof(FunctionObject, vectorcall), READONLY, nullptr},
        {nullptr, 0, 0, 0, nullptr}};
    static PyType_Slot slots[] = {
        {Py_tp_dealloc, reinterpret_cast<void*>(FunctionDealloc)},
        {Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
        {Py_tp_getattro, reinterpret_cast<void*>(FunctionGetattr)},
        {Py_tp_members, members},
        {Py_tp_methods, methods},
        {Py_tp_doc, const_cast<char*>("A Tile program as a callable on keyword arguments named like its inputs.")},
        {0, nullptr}};
    static PyType_Spec spec = {"tilec._tilec.Function", sizeof(FunctionObject), 0,
                               Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL, slots};
    PyObject* t = PyType_FromSpec(&spec);
    if (!t) throw py::error_already_set();
    return reinterpret_cast<PyTypeObject*>(t);  // kept for the process
  }();
  return type;
}

py::object MakeFunctionObject(py::object impl) {
  PyTypeObject* type = FunctionType();
  auto* o = reinterpret_cast<FunctionObject*>(type->tp_alloc(type, 0));
  if (!o) throw py::error_already_set();
  o->vectorcall = FunctionVectorcall;
  o->function = impl.cast<Function*>();
  o->impl = impl.release().ptr();
  return py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(o));
}

}  // namespace

// tilec.gradient_source and source_outputs (_tilec_grad.cc).
void DefineGradients(py::module_& m);
void DefineOnnx(py::module_& m);

PYBIND11_MODULE(_tilec, m) {
  m.doc() = "Tilec: compile Tile tensor programs and run them on NumPy arrays and DLPack tensors";
  static py::exception<tilec::Error> error(m, "Error");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tilec::Error& e) {
      // The exception with the C++ error's fields: kind ("user", "usage",
      // "internal", "device"), message (without the location), file, line
      // and column (0 outside Tile source).
      static const char* kKinds[] = {"ok", "user", "usage", "internal", "device"};
      int kind = static_cast<int>(e.kind());
      py::object exc = py::reinterpret_borrow<py::object>(error.ptr())(e.what());
      exc.attr("kind") = kind >= 0 && kind < 5 ? kKinds[kind] : "unknown";
      exc.attr("message") = e.message();
      exc.attr("file") = e.file();
      exc.attr("line") = e.line();
      exc.attr("column") = e.column();
      PyErr_SetObject(error.ptr(), exc.ptr());
    }
  });
  m.def("version", [] { return std::string(tilec_version_string()); });
  m.def("devices", [] { return tilec::DeviceIds(); });
  m.def(
      "_torch_reader",
      []() -> py::object {
        const Torch* torch = GetTorch();
        if (!torch) return py::none();
        return py::str(torch->api ? "c++" : "attributes");
      },
      "How torch tensors are read: 'c++' (tilec._torch_fast), 'attributes', or None before torch is imported");
  py::class_<Function>(m, "_Function")
      .def("__call__", &Function::Call)
      .def_property_readonly("compiled_count", &Function::compiled_count,
                             "How many (dtype, shape) signatures were compiled")
      .def_property_readonly("fast_calls", &Function::fast_calls,
                             "How many calls took the fast path (the last out= call's signature again)")
      .def_property_readonly("constants", &Function::constants, "The constant inputs' names")
      .def_property_readonly("inputs", &Function::inputs, "The program's input names, in order")
      .def("invalidate_constants", &Function::InvalidateConstants,
           "After a constant input's contents changed in place: the next runs read the constants anew");
  m.def(
      "function",
      [](std::string source, std::string device, std::string name, std::vector<std::string> constants) {
        return MakeFunctionObject(py::cast(std::make_unique<Function>(
            std::move(source), std::move(device), std::move(name), std::move(constants))));
      },
      py::arg("source"), py::arg("device") = "llvm", py::arg("name") = "<python>", py::kw_only(),
      py::arg("constants") = std::vector<std::string>{},
      "A callable running the Tile program `source` on keyword arguments named like its inputs. "
      "`constants`: inputs whose contents do not change between calls (weights): the work that "
      "reads only them runs once, until they are given other memory or invalidate_constants() "
      "is called after they changed in place.");
  DefineGradients(m);
  m.attr("Function") = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(FunctionType()));
  DefineOnnx(m);
}
