// Moving host tensors (dense, row-major, logical) into and out of a
// tensor's physical layout (tile_lang/layout.h): strides, blocking with
// zero-padded tails. The bytes are what a device buffer holds.
#pragma once

#include <cstddef>
#include <vector>

#include "tile_lang/layout.h"
#include "tile_lang/tensor.h"

namespace tilec::runtime {

// Buffer bytes of `t` in `layout` (padding zero-filled).
std::vector<std::byte> PackToLayout(const lang::Tensor& t, const lang::Layout& layout);

// The logical tensor of `shape` held in `bytes` laid out as `layout`.
lang::Tensor UnpackFromLayout(const std::byte* bytes, size_t size, const lang::Shape& shape,
                              const lang::Layout& layout);

}  // namespace tilec::runtime
