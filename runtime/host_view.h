// Caller-owned host memory holding one tensor, as the public API hands it to
// Program::RunOn: a pointer, the bytes available there, the logical shape,
// and either element strides or nothing (the memory is already in the
// tensor's compiled layout, blocked layouts included).
//
// The helpers check a view against the tensor it stands for, tell whether
// it can be used in place, and move data between a strided view and the
// compiled layout when it cannot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "tile_lang/layout.h"
#include "tile_lang/program.h"
#include "tile_lang/tensor.h"

namespace tilec::runtime {

struct HostView {
  void* data = nullptr;          // inputs are only read
  size_t bytes = 0;              // bytes available at data
  lang::Shape shape;
  std::vector<int64_t> strides;  // elements per step of each dim; empty: the compiled layout
  // Not host memory but the device's own (a cl_mem; `data` and `bytes` are
  // then unused), in the compiled layout: hal::Device::WrapDeviceMemory
  // checks it and the kernels use it in place.
  void* device_memory = nullptr;
};

// UserError naming the tensor ("input 'A'": `kind` and `name`) unless `view`
// has the tensor's dtype and dims, non-negative strides (one per dim) whose
// elements fit in `view.bytes`, and a non-null pointer when it has elements.
// Outputs (`writable`) may not have a zero stride along a dim of extent > 1.
// Device memory (view.device_memory) must have no strides (UsageError); its
// size is the device's to check.
// Formats nothing unless it throws (it runs on every run).
void CheckView(const HostView& view, const lang::TensorDecl& tensor, std::string_view kind,
               std::string_view name, bool writable);

// The element stride of each logical dim of a plain layout (one physical dim
// per logical dim, divisor 1); nullopt for a blocked layout.
std::optional<std::vector<int64_t>> PlainStrides(const lang::Layout& layout, int rank);

// True if the view's memory is laid out exactly as `layout` (no strides
// given, or the layout's strides along every dim of extent > 1).
bool MatchesLayout(const HostView& view, const lang::Layout& layout);

// The row-major strides of `dims`.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims);
// A view of a dense row-major tensor's own memory (read through, or written
// when the tensor is not const at the caller).
HostView ViewOf(const lang::Tensor& t);

// The view's elements as a dense row-major tensor (view has strides).
lang::Tensor Gather(const HostView& view);
// Writes `t` (dense, the view's shape) into the view's strided memory.
void Scatter(const lang::Tensor& t, const HostView& view);

}  // namespace tilec::runtime
