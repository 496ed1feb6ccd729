// The gradient functions of the Python module `tilec._tilec`:
// gradient_source (over tilec::GradientSource) and source_outputs; the
// callable tilec.grad is python/tilec/grad.py on top of them.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <tilec/tilec.hpp>

#include <span>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

// A NumPy dtype's name ("float32", "int8", "bool") as a tilec_dtype.
tilec_dtype DtypeNamed(const std::string& name) {
  static const std::pair<const char*, tilec_dtype> names[] = {
      {"bool", TILEC_BOOL},       {"int8", TILEC_I8},     {"int16", TILEC_I16},     {"int32", TILEC_I32},
      {"int64", TILEC_I64},       {"uint8", TILEC_U8},    {"uint16", TILEC_U16},    {"uint32", TILEC_U32},
      {"uint64", TILEC_U64},      {"float16", TILEC_F16}, {"float32", TILEC_F32},   {"float64", TILEC_F64}};
  for (const auto& [n, t] : names)
    if (name == n) return t;
  throw py::value_error("tilec: no Tile element type for dtype '" + name + "'");
}

}  // namespace

void DefineGradients(py::module_& m) {
  m.def(
      "source_outputs", [](const std::string& source, const std::string& name) { return tilec::SourceOutputs(source, name); },
      py::arg("source"), py::arg("name") = "<python>", "The output names of Tile `source`, in signature order");
  m.def(
      "gradient_source",
      [](const std::string& source, const py::dict& shapes, const std::vector<std::string>& wrt,
         const std::vector<std::string>& outputs, const std::string& name, const std::vector<std::string>& saved) {
        std::vector<std::string> names;
        names.reserve(shapes.size());  // the specs view these strings
        std::vector<tilec::TensorSpec> specs;
        for (auto [key, value] : shapes) {
          names.push_back(py::cast<std::string>(key));
          auto spec = py::cast<py::tuple>(value);
          if (spec.size() != 2) throw py::value_error("tilec: a shape is a (dtype name, dims) pair");
          auto dims = py::cast<std::vector<int64_t>>(spec[1]);
          specs.emplace_back(names.back(), DtypeNamed(py::cast<std::string>(spec[0])), std::span<const int64_t>(dims));
        }
        return tilec::GradientSource(source, specs, {wrt, outputs, saved}, name);
      },
      py::arg("source"), py::arg("shapes"), py::arg("wrt") = std::vector<std::string>{},
      py::arg("outputs") = std::vector<std::string>{}, py::arg("name") = "<python>",
      py::arg("saved") = std::vector<std::string>{},
      "The Tile text of the reverse-mode gradient of `source` for `shapes` ({input: (dtype name, dims)}): "
      "inputs are the program's, then O_grad per differentiated output O, then the forward tensors of `saved` "
      "(not computed again); outputs X_grad per input X of `wrt` (empty lists: every float input / output). See docs/user-guide.md, \"tilec grad\".");
}
