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
// arrays are not copied on CPU devices. Runs release the GIL. Tile errors
// raise tilec.Error whose text has the source line and a caret.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <tilec/tilec.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

tilec_dtype ToDtype(const py::dtype& d) {
  char kind = d.kind();
  size_t size = d.itemsize();
  if (kind == 'b') return TILEC_BOOL;
  if (kind == 'f' && size == 2) return TILEC_F16;
  if (kind == 'f' && size == 4) return TILEC_F32;
  if (kind == 'f' && size == 8) return TILEC_F64;
  static const tilec_dtype ints[] = {TILEC_I8, TILEC_I16, TILEC_I32, TILEC_I64};
  static const tilec_dtype uints[] = {TILEC_U8, TILEC_U16, TILEC_U32, TILEC_U64};
  for (int i = 0; i < 4; ++i)
    if (size == (size_t{1} << i)) {
      if (kind == 'i') return ints[i];
      if (kind == 'u') return uints[i];
    }
  throw py::type_error("tilec: unsupported element type " + py::repr(d).cast<std::string>());
}

py::dtype FromDtype(tilec_dtype t) {
  switch (t) {
    case TILEC_BOOL: return py::dtype::of<bool>();
    case TILEC_I8: return py::dtype::of<int8_t>();
    case TILEC_I16: return py::dtype::of<int16_t>();
    case TILEC_I32: return py::dtype::of<int32_t>();
    case TILEC_I64: return py::dtype::of<int64_t>();
    case TILEC_U8: return py::dtype::of<uint8_t>();
    case TILEC_U16: return py::dtype::of<uint16_t>();
    case TILEC_U32: return py::dtype::of<uint32_t>();
    case TILEC_U64: return py::dtype::of<uint64_t>();
    case TILEC_F16: return py::dtype("float16");
    case TILEC_F32: return py::dtype::of<float>();
    case TILEC_F64: return py::dtype::of<double>();
    case TILEC_DTYPE_FORCE_INT_: break;
  }
  throw py::type_error("tilec: unknown element type");
}

// An argument as a NumPy array over the same memory: ndarrays as they are,
// other objects through their __dlpack__ (numpy.from_dlpack, no copy).
py::array AsArray(const py::handle& obj, const std::string& name) {
  if (py::isinstance<py::array>(obj)) return py::reinterpret_borrow<py::array>(obj);
  if (py::hasattr(obj, "__dlpack__")) {
    // Looked up once; never destroyed (it would outlive the interpreter).
    static py::object* from_dlpack = new py::object(py::module_::import("numpy").attr("from_dlpack"));
    return (*from_dlpack)(obj);
  }
  throw py::type_error("tilec: '" + name + "' must be a NumPy array or support __dlpack__, not " +
                       std::string(py::str(py::type::of(obj))));
}

// The memory of `a` as a tilec::Tensor; strides in elements (a copy when a
// stride is not a whole number of elements, which NumPy allows).
struct Arg {
  py::array array;
  std::vector<int64_t> dims, strides;
  tilec::Tensor tensor;
};

Arg MakeArg(py::array a) {
  Arg arg;
  for (py::ssize_t d = 0; d < a.ndim(); ++d)
    if (a.strides(d) % a.itemsize() != 0 || a.strides(d) < 0) {
      a = py::array::ensure(a, py::array::c_style);
      break;
    }
  arg.array = a;
  int64_t last = 0;
  for (py::ssize_t d = 0; d < a.ndim(); ++d) {
    arg.dims.push_back(a.shape(d));
    arg.strides.push_back(a.strides(d) / a.itemsize());
    if (a.shape(d) == 0) last = -1;
    if (last >= 0 && a.shape(d) > 0) last += (a.shape(d) - 1) * arg.strides.back();
  }
  size_t bytes = last < 0 ? 0 : static_cast<size_t>(last + 1) * a.itemsize();
  arg.tensor = tilec::Tensor(const_cast<void*>(a.data()), bytes, ToDtype(a.dtype()), arg.dims, arg.strides);
  return arg;
}

class Function {
 public:
  Function(std::string source, std::string device, std::string name)
      : source_(std::move(source)), name_(std::move(name)), device_(device) {}

  py::object Call(py::kwargs kwargs) {
    py::object out = py::none();
    std::map<std::string, py::array> inputs;
    for (auto [key, value] : kwargs) {
      std::string k = py::str(key);
      if (k == "out") {
        out = py::reinterpret_borrow<py::object>(value);
        continue;
      }
      inputs.emplace(k, AsArray(value, k));
    }
    // The program for these dtypes and shapes.
    std::string signature;
    std::vector<Arg> args;
    for (auto& [k, a] : inputs) {
      args.push_back(MakeArg(a));
      signature += k + ":" + std::to_string(static_cast<int>(args.back().tensor.dtype));
      for (int64_t d : args.back().dims) signature += "," + std::to_string(d);
      signature += ";";
    }
    auto it = programs_.find(signature);
    if (it == programs_.end()) {
      std::vector<tilec::TensorSpec> specs;
      size_t i = 0;
      for (auto& [k, a] : inputs) specs.push_back({k, args[i].tensor.dtype, args[i].dims}), ++i;
      it = programs_.emplace(signature, std::make_unique<Compiled>(device_.Compile(source_, specs, {}, name_))).first;
    }
    Compiled& c = *it->second;
    // Inputs in signature order.
    std::map<std::string, const tilec::Tensor*> by_name;
    size_t i = 0;
    for (auto& [k, a] : inputs) by_name[k] = &args[i++].tensor;
    std::vector<tilec::Tensor> in;
    for (const tilec::TensorInfo& info : c.inputs) in.push_back(*by_name.at(info.name));
    // Outputs: new arrays, or the caller's (one array, or a dict by name, or a sequence).
    std::vector<py::array> results;
    for (size_t o = 0; o < c.outputs.size(); ++o) {
      const tilec::TensorInfo& info = c.outputs[o];
      py::object given = py::none();
      if (py::isinstance<py::dict>(out)) {
        if (out.contains(info.name)) given = out[py::str(info.name)];
      } else if (!out.is_none() && c.outputs.size() == 1) {
        given = out;
      } else if (!out.is_none()) {
        given = out[py::int_(o)];
      }
      results.push_back(given.is_none() ? py::array(FromDtype(info.dtype), info.dims)
                                        : AsArray(given, info.name));
    }
    std::vector<Arg> out_args;
    for (py::array& r : results) out_args.push_back(MakeArg(r));
    std::vector<tilec::Tensor> outs;
    for (Arg& a : out_args) outs.push_back(a.tensor);
    {
      py::gil_scoped_release release;
      c.program.Run(in, outs);
    }
    if (results.size() == 1) return results[0];
    return py::tuple(py::cast(results));
  }

  size_t compiled_count() const { return programs_.size(); }

 private:
  struct Compiled {
    explicit Compiled(tilec::Program p)
        : program(std::move(p)), inputs(program.Inputs()), outputs(program.Outputs()) {}
    tilec::Program program;
    std::vector<tilec::TensorInfo> inputs, outputs;
  };
  std::string source_, name_;
  tilec::Device device_;
  std::map<std::string, std::unique_ptr<Compiled>> programs_;
};

}  // namespace

PYBIND11_MODULE(_tilec, m) {
  m.doc() = "Tilec: compile Tile tensor programs and run them on NumPy arrays and DLPack tensors";
  static py::exception<tilec::Error> error(m, "Error");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tilec::Error& e) {
      PyErr_SetString(error.ptr(), e.what());
    }
  });
  m.def("version", [] { return std::string(tilec_version_string()); });
  m.def("devices", [] { return tilec::DeviceIds(); });
  py::class_<Function>(m, "Function")
      .def("__call__", &Function::Call)
      .def_property_readonly("compiled_count", &Function::compiled_count,
                             "How many (dtype, shape) signatures were compiled");
  m.def(
      "function",
      [](std::string source, std::string device, std::string name) {
        return std::make_unique<Function>(std::move(source), std::move(device), std::move(name));
      },
      py::arg("source"), py::arg("device") = "llvm", py::arg("name") = "<python>",
      "A callable running the Tile program `source` on keyword arguments named like its inputs.");
}
