// NumPy dtypes and Tile element types, both ways, for the extension
// module's files (_tilec.cc, _tilec_onnx.cc).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <tilec/tilec.h>

#include <string>

namespace tilec_python {

namespace py = pybind11;

// A NumPy dtype's Tile element type; TypeError for one Tile has none of.
inline tilec_dtype ToDtype(const py::dtype& d) {
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

// A Tile element type's NumPy dtype.
inline py::dtype FromDtype(tilec_dtype t) {
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

}  // namespace tilec_python
