// tilec._torch_fast: reads a torch.Tensor's data pointer, sizes, strides,
// element type and device from its C++ side (at::Tensor inside the
// THPVariable) instead of through five Python calls; see torch_reader.h.
// Built only where libtorch's headers are (python/CMakeLists.txt); _tilec
// works without it, reading the same through torch's Python attributes.
#include <torch/csrc/autograd/python_variable.h>

#include "torch_reader.h"

namespace {

tilec_dtype ToDtype(c10::ScalarType t) {
  switch (t) {
    case c10::ScalarType::Bool: return TILEC_BOOL;
    case c10::ScalarType::Char: return TILEC_I8;
    case c10::ScalarType::Short: return TILEC_I16;
    case c10::ScalarType::Int: return TILEC_I32;
    case c10::ScalarType::Long: return TILEC_I64;
    case c10::ScalarType::Byte: return TILEC_U8;
    case c10::ScalarType::Half: return TILEC_F16;
    case c10::ScalarType::Float: return TILEC_F32;
    case c10::ScalarType::Double: return TILEC_F64;
    default: return TILEC_DTYPE_FORCE_INT_;  // none of Tilec's
  }
}

int Read(PyObject* obj, TilecTorchView* view) noexcept {
  // Exactly torch.Tensor or nn.Parameter: a subclass may mean something else.
  if (!THPVariable_CheckExact(obj)) return 0;
  try {
    const at::Tensor& t = THPVariable_Unpack(obj);
    if (!t.defined()) return 0;
    const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
    // Wrappers (functorch, subclasses dispatching to Python) and views
    // whose values are not their memory's (conj, neg) go the slow way.
    if (!impl->is_cpu() || impl->layout() != c10::kStrided || impl->is_python_dispatch() ||
        impl->is_conj() || impl->is_neg() || !impl->has_storage())
      return 0;
    tilec_dtype dtype = ToDtype(t.scalar_type());
    if (dtype == TILEC_DTYPE_FORCE_INT_) return 0;
    // A tensor that requires grad while autograd records: the slow path
    // raises (a tilec.function has no backward; tilec.torch.op records one).
    if (t.requires_grad() && at::GradMode::is_enabled()) return 0;
    c10::IntArrayRef sizes = impl->sizes(), strides = impl->strides();
    view->data = impl->data();
    view->sizes = sizes.data();
    view->strides = strides.data();
    view->ndim = static_cast<int64_t>(sizes.size());
    view->dtype = dtype;
    view->itemsize = impl->itemsize();
    return 1;
  } catch (...) {  // a check of libtorch's (no storage, custom sizes...)
    return 0;
  }
}

const TilecTorchApi kApi = {kTilecTorchApiVersion, Read};

PyModuleDef kModule = {PyModuleDef_HEAD_INIT, "_torch_fast",
                       "Reads torch.Tensor fields from C++ for tilec's fast path (torch_reader.h).",
                       -1, nullptr, nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__torch_fast() {
  PyObject* m = PyModule_Create(&kModule);
  if (!m) return nullptr;
  PyObject* api = PyCapsule_New(const_cast<TilecTorchApi*>(&kApi), kTilecTorchCapsule, nullptr);
  if (!api || PyModule_AddObject(m, "api", api) < 0) {
    Py_XDECREF(api);
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
