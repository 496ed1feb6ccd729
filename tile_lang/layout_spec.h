// Internal to tile_lang's layout files (layout.cc, layout_spec.cc,
// layout_names.cc): the tag grammar and the named-format translators. Users
// include tile_lang/layout.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tile_lang/layout.h"

namespace tilec::lang::layout_internal {

// Reports a problem with one spec: every message names the spec and the
// dimensions it was applied to.
class SpecContext {
 public:
  SpecContext(std::string_view spec, const std::vector<int64_t>& dims) : spec_(spec), dims_(dims) {}
  [[noreturn]] void Fail(std::string_view why) const;
  const std::vector<int64_t>& dims() const { return dims_; }
  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t Mul(int64_t a, int64_t b) const;  // Fail on overflow
  int64_t Add(int64_t a, int64_t b) const;

 private:
  std::string_view spec_;
  const std::vector<int64_t>& dims_;
};

// One token of a tag: a logical dim written plain (lower-case letter), as the
// outer part of a blocked dim (upper-case), or as an inner block ("16b").
struct TagPart {
  int dim = 0;
  enum Kind { Plain, Outer, Block } kind = Plain;
  int64_t block = 0;  // Block: its size
};

// Parses a oneDNN tag ("aBcd16b") for a tensor of ctx.rank() dims. `what`
// introduces the tag in messages ("the tag", "it is the tag aBcd16b, and").
std::vector<TagPart> ParseTag(std::string_view tag, const SpecContext& ctx, std::string_view what);

// The dense layout of `parts` (outermost first) over ctx.dims(): each blocked
// dim's outer part has divisor = product of its blocks and size =
// ceil(dim / divisor); a block's divisor is the product of the blocks of the
// same dim after it.
Layout BuildTagLayout(std::string name, const std::vector<TagPart>& parts, const SpecContext& ctx);

// The tag text of `parts`.
std::string FormatTag(const std::vector<TagPart>& parts);

// A named format (layout_names.cc): its tag and the names of its logical dims.
struct NamedFormat {
  std::string tag;
  std::vector<std::string> dim_names;
  int rank = 0;
};

// The named format `spec` is (exact table entry, oneDNN letters over
// n,c,d,h,w / g,o,i,d,h,w, or clDNN notation), nullopt if it is none of
// them. Fails (through ctx) for a spec of one of these families that is
// malformed, and for a rank other than ctx.rank().
std::optional<NamedFormat> FindNamedFormat(std::string_view spec, const SpecContext& ctx);

// The MACE image layout `spec` names (layout_image.cc: the tag of its linear
// equivalent plus the image size), nullopt if it names none. Fails (through
// ctx) for a wrong rank and a depthwise filter with M != 1.
std::optional<Layout> ParseImageLayout(std::string_view spec, const SpecContext& ctx);

}  // namespace tilec::lang::layout_internal
