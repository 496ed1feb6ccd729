// The ONNX function of the Python module `tilec._tilec`: _import_onnx (over
// tilec::Model::ImportOnnx); tilec.onnx (python/tilec/onnx.py) is on top of it.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <tilec/tilec.hpp>

#include <cstring>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dtypes.h"

namespace py = pybind11;
using tilec_python::FromDtype;
using tilec_python::ToDtype;

void DefineOnnx(py::module_& m) {
  m.def(
      "_import_onnx",
      [](py::bytes bytes, std::string origin, std::map<std::string, std::pair<py::object, std::vector<int64_t>>> shapes) {
        std::string data = bytes;
        std::vector<tilec::TensorSpec> specs;
        std::vector<std::string> names;
        names.reserve(shapes.size());
        for (auto& [name, spec] : shapes) {
          names.push_back(name);
          specs.emplace_back(names.back(), ToDtype(py::dtype::from_args(spec.first)),
                             std::span<const int64_t>(spec.second));
        }
        tilec::Model model = tilec::Model::ImportOnnx(
            std::span<const std::byte>(reinterpret_cast<const std::byte*>(data.data()), data.size()), origin, specs);
        auto tensors = [](const std::vector<tilec::ModelTensor>& list) {
          py::list out;
          for (const auto& t : list) out.append(py::make_tuple(t.name, t.tile_name, FromDtype(t.dtype), t.dims));
          return out;
        };
        py::dict constants;
        for (const auto& t : model.constants()) {
          py::array a(FromDtype(t.dtype), t.dims);
          if (t.bytes > 0) std::memcpy(a.mutable_data(), t.data, t.bytes);
          constants[py::str(t.tile_name)] = a;
        }
        py::dict out;
        out["source"] = model.source();
        out["inputs"] = tensors(model.inputs());
        out["outputs"] = tensors(model.outputs());
        out["constants"] = constants;
        return out;
      },
      py::arg("bytes"), py::arg("origin"), py::arg("shapes"),
      "Imports an ONNX model: {source, inputs [(name, tile_name, dtype, dims)], outputs, constants {tile_name: array}}");
}
