// Physical layouts: how a tensor's logical index maps to an element offset in
// its buffer. docs/layouts.md is the user's view (notation, names, padding).
//
// A layout is a list of physical dimensions, outermost first. Physical
// dimension p takes logical dimension `dim`, divides it by `divisor` and (if
// `size` is smaller than the quotient's range) reduces it modulo `size`:
//     index_p = (i[dim] / divisor) % size        (no modulo on the outermost part)
//     offset  = sum_p stride_p * index_p
// Plain layouts (NCHW, NHWC, any permutation or explicit strides) have one
// physical dim per logical dim with divisor 1. Blocked layouts split a logical
// dim into an outer part and one or more inner blocks: nChw16c (tag aBcd16b) is
//     n, c/16 (size ceil(C/16)), h, w, c%16 (size 16)
// and the double-blocked ABcd8a16b2a splits a into a/16, (a/2)%8 and a%2, so
// every access stays affine once the compiler splits the index (c = 16*C + c16).
// A dim's padded size is its size rounded up to the product of its blocks; the
// tail block that the logical size does not fill is padding, which holds zeros
// (kernels write them, PackToLayout fills them). `elements` is the buffer size
// in elements including padding.
//
// Storage: a layout is a linear buffer of elements, or (`image`) an OpenCL
// 2-D RGBA image (MACE's image2d mappings, seed 000; layout_image.cc). An
// image layout keeps `phys` as the element order of the image's linear
// equivalent: pixels row-major, 4 elements per pixel (R, G, B, A), so
//     offset = (y * width + x) * 4 + component
// and the compiler's affine offsets stay valid; `image` adds the image's
// size in pixels. The LLVM backend stores that linear equivalent as a plain
// buffer; the OpenCL backend an image2d_t (hal/opencl/opencl_images.cc).
#pragma once

#include <cstdint>
#include <optional>
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

// An OpenCL image2d with CL_RGBA pixels: elements = width * height * 4.
struct ImageStorage {
  int64_t width = 0;   // pixels
  int64_t height = 0;  // pixels
  bool operator==(const ImageStorage&) const = default;
};

struct Layout {
  std::string name;                 // the spec it was parsed from: "row-major", "nhwc", "aBcd16b", …
  std::vector<PhysicalDim> phys;    // outermost first
  int64_t elements = 0;             // buffer size in elements, padding included
  std::optional<ImageStorage> image;  // set: the elements live in an RGBA image (see above)
  // "any" (oneDNN's format_tag::any): the compiler chooses the layout
  // (compiler/passes/choose_layouts.h) and replaces this one, which is row-major
  // until then. Allowed on outputs and intermediates, not on inputs.
  bool any = false;

  bool IsRowMajor(const std::vector<int64_t>& dims) const;
  // The same memory mapping: equal parts and buffer size, whatever the names
  // (nChw16c, aBcd16b and b_fs_yx_fsv16 are one layout). The storage
  // (buffer or image) is not compared: an image and its linear equivalent
  // hold the same elements in the same order.
  bool operator==(const Layout& o) const { return phys == o.phys && elements == o.elements; }
};

// The dense row-major layout of `dims` (what NumPy's C order means).
Layout RowMajorLayout(const std::vector<int64_t>& dims);

std::string ToString(const Layout& l);

// Parses a layout spec for a tensor of logical dimensions `dims`:
//   "row-major"                  dense, last dim innermost (the default)
//   "any"                        the compiler chooses (Layout::any; row-major
//                                until it does)
//   a oneDNN tag                 one letter per logical dim, a = dim 0, b = dim 1, …
//                                in physical order, outermost first; an
//                                upper-case letter is the outer part of a
//                                blocked dim and "16b" an inner block of 16 of
//                                dim b: "abcd", "acdb", "aBcd16b", "ABcd16b16a",
//                                "ABcd8a16b2a" (a blocked twice); dense, every
//                                blocked dim padded to the product of its blocks
//   a named format               an alias of a tag (layout_names.cc; the full
//                                table is docs/layouts.md): oneDNN names over
//                                n,c,d,h,w / g,o,i,d,h,w letters (nchw, nhwc,
//                                nChw16c, OIhw16i16o, Goihw16g, …), clDNN names
//                                (bfyx, b_fs_yx_fsv16, os_is_yx_isv16_osv16, …),
//                                MegEngine (NCHW, NHWC, NCHW4, NCHW32, NCHW64,
//                                CHWN4), MACE CPU buffers (NCHW, OIHW, MIHW)
//   a MACE image mapping         image_channel_major, image_height_major,
//                                image_width_major (logical NHWC),
//                                image_conv_filter (OIHW), image_dw_filter
//                                (MIHW, M = 1), image_argument (W); also by
//                                MACE's names IN_OUT_CHANNEL, … (ImageMappings)
//   "order(p0, p1, ...)"         dense; a permutation of the logical dims,
//                                outermost first
//   "strides(s0, s1, ...)"       element stride per logical dim; gaps are
//                                allowed (a view into a bigger buffer),
//                                elements = largest offset + 1; the dims
//                                must nest (no two elements alias)
// The result's name is the spec as given (trimmed). UserError naming the spec
// and the problem (unknown name or letter, rank mismatch, a dim missing or
// given twice, a block of 0, bad number, aliasing strides, size overflow).
Layout ParseLayout(std::string_view spec, const std::vector<int64_t>& dims);

// The oneDNN tag a spec stands for at rank `rank` ("nChw16c" -> "aBcd16b",
// "CHWN4" -> "Bcda4b", "abcd" -> "abcd"), or nullopt for a spec that is not a
// tag or a named format (row-major, order(...), strides(...)) or does not fit
// the rank. Never throws.
std::optional<std::string> TagOf(std::string_view spec, int rank);

// The names the spec gives the logical dims, for printing ("bfyx" -> b, f, y,
// x; "nChw8c" -> n, c, h, w; "NCHW4" -> n, c, h, w; a tag -> a, b, c, …;
// anything else -> d0, d1, …).
std::vector<std::string> DimNames(std::string_view spec, int rank);

// The tag that describes a dense layout (every stride the product of the
// sizes inside it, each blocked dim's parts nested), or nullopt.
std::optional<std::string> DenseTag(const Layout& l);

// Per logical dim, its size rounded up to the product of its blocks (what the
// buffer holds), or nullopt for a layout whose parts do not nest that way.
std::optional<std::vector<int64_t>> PaddedDims(const Layout& l);

// A named format (an alias of a tag).
struct LayoutAlias {
  std::string_view name;      // "b_fs_yx_fsv16"
  std::string_view family;    // "oneDNN", "clDNN", "MegEngine", "MACE"
  int rank;
  std::string_view tag;       // "aBcd16b"
  std::string_view letters;   // names of the logical dims, in logical order: "bfyx"
};
// Every name the docs list, in the docs' order. Each parses (ParseLayout) to
// the layout of its tag; the oneDNN and clDNN names are examples of their
// families' notations, which parse beyond this list (layout_names.cc).
const std::vector<LayoutAlias>& LayoutAliases();

// One of MACE's OpenCL image mappings (seed 000), in the seed's order.
struct ImageMapping {
  std::string_view name;       // "image_channel_major"
  std::string_view mace_name;  // MACE's OpenCLBufferType: "IN_OUT_CHANNEL"
  std::string_view seed_row;   // the seed's tensor type: "Channel-Major Input/Output"
  std::string_view letters;    // logical dims in logical order: "nhwc"
  std::string_view tag;        // the element order of the linear equivalent: "abDc4d"
  std::string_view size;       // the seed's image size: "[W * (C+3)/4, N * H]"
  std::string_view pixel;      // the pixel mapping as the seed writes it (corrected: docs/layouts.md)
};
const std::vector<ImageMapping>& ImageMappings();
// The mapping `spec` names (either name), or null.
const ImageMapping* FindImageMapping(std::string_view spec);

// A spec that ParseLayout turns back into an equivalent layout: the layout's
// name when it still describes it, otherwise its dense tag, otherwise
// "strides(...)" for a plain layout. UserError for a layout no spec
// describes. (ToString above is the debug form, which shows every physical
// dimension.)
std::string ToSpec(const Layout& l);

}  // namespace tilec::lang
