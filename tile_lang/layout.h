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
#include <string_view>
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

// Parses a layout spec for a tensor of logical dimensions `dims`:
//   "row-major"                          dense, last dim innermost (the default)
//   "nchw" "nhwc" "chwn"                 rank 4, logical order N, C, H, W
//   "ncdhw" "ndhwc"                      rank 5, logical order N, C, D, H, W
//   "order(p0, p1, ...)"                 dense; a permutation of the logical
//                                        dims, outermost first
//   "strides(s0, s1, ...)"               element stride per logical dim; gaps are
//                                        allowed (a view into a bigger buffer),
//                                        elements = largest offset + 1; the dims
//                                        must nest (no two elements alias)
//   "nChw4c" "nChw8c" "nChw16c"          rank 4 NCHW, C blocked by 4/8/16 with
//   "b_fs_yx_fsv16" (= nChw16c)          zero padding up to a whole block
// The result's name is the spec's canonical spelling. UserError naming the
// spec on any problem (unknown name, rank mismatch, bad number, aliasing
// strides, size overflow).
Layout ParseLayout(std::string_view spec, const std::vector<int64_t>& dims);

// A spec that ParseLayout turns back into an equivalent layout: the layout's
// name when it still describes it, otherwise "strides(...)" for a plain
// layout. UserError for a layout no spec describes. (ToString above is the
// debug form, which shows every physical dimension.)
std::string ToSpec(const Layout& l);

}  // namespace tilec::lang
