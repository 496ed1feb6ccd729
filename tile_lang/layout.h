// Physical layouts: how a tensor's logical index maps to an element offset in
// its buffer.
//
// A layout is a list of physical dimensions, outermost first. Physical
// dimension p takes logical dimension `dim`, divides it by `divisor` and (if
// `size` is smaller than the quotient's range) reduces it modulo `size`:
//     index_p = (i[dim] / divisor) % size        (no modulo on the outermost part)
//     offset  = sum_p stride_p * index_p
// Plain layouts (NCHW, NHWC, any permutation or explicit strides) have one
// physical dim per logical dim with divisor 1. Blocked layouts split a logical
// dim into an outer and an inner part: nChw16c is
//     n, c/16 (size ceil(C/16)), h, w, c%16 (size 16)
// so every access stays affine once the compiler splits the index (c = 16*C + c16).
// A tail block that the logical size does not fill is padding; kernels write
// zeros there. `elements` is the buffer size in elements including padding.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tilec::lang {

struct PhysicalDim {
  int dim = 0;            // logical dimension it indexes
  int64_t divisor = 1;    // logical index is divided by this
  int64_t size = 0;       // extent of this physical dimension
  int64_t stride = 0;     // elements per step
  bool operator==(const PhysicalDim&) const = default;
};

struct Layout {
  std::string name;                 // "row-major", "nhwc", "nChw16c", "strided", …
  std::vector<PhysicalDim> phys;    // outermost first
  int64_t elements = 0;             // buffer size in elements, padding included

  bool IsRowMajor(const std::vector<int64_t>& dims) const;
  bool operator==(const Layout&) const = default;
};

// The dense row-major layout of `dims` (what NumPy's C order means).
Layout RowMajorLayout(const std::vector<int64_t>& dims);

std::string ToString(const Layout& l);

}  // namespace tilec::lang
