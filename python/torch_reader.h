// The interface between the Python module `tilec._tilec` and its optional
// part `tilec._torch_fast` (python/_torch_fast.cc): a C struct of function
// pointers in a capsule, so that _tilec itself never links libtorch and
// `import tilec` never needs torch. _tilec imports _torch_fast only once
// torch is imported, and only when torch's major.minor version is the one
// _torch_fast was built against (TILEC_TORCH_VERSION).
#pragma once

#include <Python.h>
#include <tilec/tilec.h>

#include <cstdint>

// What the reader tells of a torch.Tensor: everything the fast path compares
// or passes on, read from its C++ TensorImpl (no Python call). `sizes` and
// `strides` (in elements) point into the tensor and stay valid while it is
// alive and not resized.
struct TilecTorchView {
  void* data;  // the first element (storage offset included)
  const int64_t* sizes;
  const int64_t* strides;
  int64_t ndim;
  tilec_dtype dtype;
  size_t itemsize;
};

inline constexpr int kTilecTorchApiVersion = 1;
inline constexpr const char* kTilecTorchCapsule = "tilec._torch_fast.api";

struct TilecTorchApi {
  int version;  // kTilecTorchApiVersion
  // 1 with `view` filled when `obj` is a torch.Tensor (exactly, or an
  // nn.Parameter) that is a plain strided CPU tensor with storage, no
  // conjugate or negative bit, of an element type Tilec has, and that does
  // not require grad while grad mode is on; 0 for anything else, with no
  // Python error set (the caller's slow path then decides).
  int (*read)(PyObject* obj, TilecTorchView* view);
};
