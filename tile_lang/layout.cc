#include "tile_lang/layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <optional>
#include <utility>

#include "support/error.h"
#include "tile_lang/layout_spec.h"

namespace tilec::lang {
namespace {

constexpr int64_t kMaxI64 = std::numeric_limits<int64_t>::max();

int64_t CheckedMul(int64_t a, int64_t b, const std::vector<int64_t>& dims) {
  if (a < 0 || b < 0) TILEC_USER_ERROR("negative dimension in [{}]", fmt::join(dims, ", "));
  if (a != 0 && b > kMaxI64 / a)
    TILEC_USER_ERROR("tensor with dimensions [{}] has more elements than fit in 64 bits",
                     fmt::join(dims, ", "));
  return a * b;
}

using layout_internal::SpecContext;
using layout_internal::TagPart;

constexpr std::string_view kKnownSpecs =
    "a oneDNN tag such as abcd, acdb or aBcd16b; a named format such as nchw, nhwc, nChw16c, OIhw16i16o, "
    "bfyx, b_fs_yx_fsv16, NCHW4, CHWN4 or OIHW; a MACE image such as image_channel_major; row-major; any; order(p0,p1,...); strides(s0,s1,...)";

// Every problem with a spec is reported through this, so the message always
// names the spec and the dimensions it was applied to.
class SpecParser {
 public:
  SpecParser(std::string_view spec, const std::vector<int64_t>& dims)
      : spec_(spec), dims_(dims), ctx_(spec, dims) {}

  [[noreturn]] void Fail(std::string_view why) const { ctx_.Fail(why); }

  Layout Parse() {
    for (int64_t d : dims_)
      if (d < 0) Fail(fmt::format("dimension {} is negative", d));
    std::string_view s = Trim(spec_);
    if (s.empty()) Fail(fmt::format("empty layout (expected {})", kKnownSpecs));
    if (s == "row-major") return Dense("row-major", Identity());
    if (s == "any") {
      Layout l = Dense("any", Identity());
      l.any = true;
      return l;
    }
    if (auto args = Call(s, "order")) return Order(*args);
    if (auto args = Call(s, "strides")) return Strides(*args);
    if (auto image = layout_internal::ParseImageLayout(s, ctx_)) return *image;
    if (auto named = layout_internal::FindNamedFormat(s, ctx_)) {
      std::vector<TagPart> parts =
          layout_internal::ParseTag(named->tag, ctx_, fmt::format("it is the tag {}, which", named->tag));
      return layout_internal::BuildTagLayout(std::string(s), parts, ctx_);
    }
    if (IsTag(s)) return layout_internal::BuildTagLayout(std::string(s), layout_internal::ParseTag(s, ctx_, "the tag"), ctx_);
    Fail(fmt::format("unknown layout (expected {})", kKnownSpecs));
  }

  // A oneDNN tag: letters and block sizes only, and the letter a among them
  // (named formats use other letters: n, c, h, w, b, f, y, x, …).
  static bool IsTag(std::string_view s) {
    bool has_a = false;
    for (char c : s) {
      if (!std::isalnum(static_cast<unsigned char>(c))) return false;
      has_a = has_a || c == 'a' || c == 'A';
    }
    return has_a;
  }

 private:
  static std::string_view Trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
  }

  int rank() const { return static_cast<int>(dims_.size()); }

  std::vector<int> Identity() const {
    std::vector<int> order(dims_.size());
    for (int k = 0; k < rank(); ++k) order[k] = k;
    return order;
  }

  int64_t Mul(int64_t a, int64_t b) const { return ctx_.Mul(a, b); }
  int64_t Add(int64_t a, int64_t b) const { return ctx_.Add(a, b); }

  // "name(a, b, c)" -> the integers; nullopt if `s` is not a call of `name`.
  std::optional<std::vector<int64_t>> Call(std::string_view s, std::string_view name) const {
    if (!s.starts_with(name)) return std::nullopt;
    std::string_view rest = Trim(s.substr(name.size()));
    if (rest.empty() || rest.front() != '(') return std::nullopt;
    if (rest.back() != ')') Fail(fmt::format("expected ')' at the end of {}(...)", name));
    std::string_view body = Trim(rest.substr(1, rest.size() - 2));
    std::vector<int64_t> values;
    if (body.empty()) return values;
    while (true) {
      size_t comma = body.find(',');
      std::string_view item = Trim(body.substr(0, comma));
      values.push_back(Integer(item, name));
      if (comma == std::string_view::npos) break;
      body = body.substr(comma + 1);
    }
    return values;
  }

  int64_t Integer(std::string_view item, std::string_view what) const {
    bool negative = !item.empty() && item.front() == '-';
    std::string_view digits = negative ? item.substr(1) : item;
    if (digits.empty() || !std::all_of(digits.begin(), digits.end(),
                                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      Fail(fmt::format("'{}' in {}(...) is not an integer", item, what));
    int64_t v = 0;
    for (char c : digits) {
      int digit = c - '0';
      if (v > (kMaxI64 - digit) / 10) Fail(fmt::format("'{}' does not fit in 64 bits", item));
      v = v * 10 + digit;
    }
    return negative ? -v : v;
  }

  // Dense over the physical order `order` (outermost first).
  Layout Dense(std::string name, const std::vector<int>& order) const {
    Layout l;
    l.name = std::move(name);
    l.phys.resize(order.size());
    int64_t stride = 1;
    for (size_t k = order.size(); k-- > 0;) {
      int64_t size = dims_[order[k]];
      l.phys[k] = PhysicalDim{order[k], 1, size, stride};
      stride = Mul(stride, size);
    }
    l.elements = stride;
    return l;
  }

  Layout Order(const std::vector<int64_t>& args) const {
    if (static_cast<int>(args.size()) != rank())
      Fail(fmt::format("order(...) lists {} dimensions but the tensor has rank {}", args.size(),
                       rank()));
    std::vector<bool> seen(args.size(), false);
    std::vector<int> order;
    for (int64_t a : args) {
      if (a < 0 || a >= rank())
        Fail(fmt::format("order(...) names dimension {}, which is not in 0..{}", a, rank() - 1));
      if (seen[a]) Fail(fmt::format("order(...) names dimension {} twice", a));
      seen[a] = true;
      order.push_back(static_cast<int>(a));
    }
    return Dense(fmt::format("order({})", fmt::join(order, ",")), order);
  }

  // Explicit strides. Accepted only when the dimensions nest: sorted by
  // stride, each one's stride exceeds the largest offset the smaller ones
  // reach. That rules out every aliasing layout (and a few exotic
  // interleavings that do not alias, which no real format uses); an exact
  // test would be a subset-sum problem.
  Layout Strides(const std::vector<int64_t>& strides) const {
    if (static_cast<int>(strides.size()) != rank())
      Fail(fmt::format("strides(...) lists {} strides but the tensor has rank {}", strides.size(),
                       rank()));
    Layout l;
    l.name = fmt::format("strides({})", fmt::join(strides, ","));
    bool empty = false;
    std::vector<int> moving;  // dims with more than one index, by stride
    for (int d = 0; d < rank(); ++d) {
      if (strides[d] < 0) Fail(fmt::format("dimension {} has a negative stride {}", d, strides[d]));
      l.phys.push_back(PhysicalDim{d, 1, dims_[d], strides[d]});
      if (dims_[d] == 0) empty = true;
      if (dims_[d] > 1) moving.push_back(d);
    }
    std::stable_sort(moving.begin(), moving.end(),
                     [&](int a, int b) { return strides[a] < strides[b]; });
    int64_t last = 0;  // largest offset reached by the dims placed so far
    for (size_t k = 0; k < moving.size(); ++k) {
      int d = moving[k];
      if (strides[d] <= last || strides[d] == 0) {
        if (k == 0 || strides[d] == 0)
          Fail(fmt::format("dimension {} has size {} but stride 0, so its elements alias", d,
                           dims_[d]));
        Fail(fmt::format(
            "dimension {} (stride {}) overlaps dimension {} (stride {}, size {}): the "
            "dimensions with smaller strides reach offset {}, so elements would alias",
            d, strides[d], moving[k - 1], strides[moving[k - 1]], dims_[moving[k - 1]], last));
      }
      last = Add(last, Mul(strides[d], dims_[d] - 1));
    }
    l.elements = empty ? 0 : Add(last, 1);
    return l;
  }

  std::string_view spec_;
  const std::vector<int64_t>& dims_;
  SpecContext ctx_;
};

// The logical dims a layout was built for, as far as the layout tells: a
// blocked dim's padding is indistinguishable from real channels, and every
// channel count with the same block count gives the same layout.
std::optional<std::vector<int64_t>> DimsOf(const Layout& l) {
  int rank = 0;
  for (const auto& p : l.phys) {
    if (p.dim < 0 || p.divisor < 1 || p.size < 0) return std::nullopt;
    rank = std::max(rank, p.dim + 1);
  }
  std::vector<int64_t> dims(rank, -1);
  std::vector<int64_t> divisor(rank, 0);
  for (const auto& p : l.phys) {
    if (p.divisor < divisor[p.dim]) continue;
    if (p.size != 0 && p.divisor > kMaxI64 / p.size) return std::nullopt;
    divisor[p.dim] = p.divisor;
    dims[p.dim] = p.size * p.divisor;
  }
  for (int64_t d : dims)
    if (d < 0) return std::nullopt;
  return dims;
}

std::optional<Layout> TryParse(std::string_view spec, const std::vector<int64_t>& dims) {
  try {
    return ParseLayout(spec, dims);
  } catch (const UserError&) {
    return std::nullopt;
  }
}

}  // namespace

Layout RowMajorLayout(const std::vector<int64_t>& dims) {
  Layout l;
  l.name = "row-major";
  l.phys.resize(dims.size());
  int64_t stride = 1;
  for (size_t k = dims.size(); k-- > 0;) {
    l.phys[k] = PhysicalDim{static_cast<int>(k), 1, dims[k], stride};
    stride = CheckedMul(stride, dims[k], dims);
  }
  l.elements = stride;
  return l;
}

bool Layout::IsRowMajor(const std::vector<int64_t>& dims) const {
  if (phys.size() != dims.size()) return false;
  // Computed without throwing: a layout that cannot exist is simply not row-major.
  int64_t stride = 1;
  for (size_t k = dims.size(); k-- > 0;) {
    const PhysicalDim& p = phys[k];
    if (p.dim != static_cast<int>(k) || p.divisor != 1 || p.size != dims[k]) return false;
    // A dimension of extent 1 is never stepped, so its stride does not matter.
    if (dims[k] > 1 && p.stride != stride) return false;
    if (dims[k] < 0) return false;
    if (dims[k] != 0 && stride > std::numeric_limits<int64_t>::max() / dims[k]) return false;
    stride *= dims[k];
  }
  return elements == stride;
}

Layout ParseLayout(std::string_view spec, const std::vector<int64_t>& dims) {
  return SpecParser(spec, dims).Parse();
}

std::optional<std::string> TagOf(std::string_view spec, int rank) {
  if (rank < 0) return std::nullopt;
  std::vector<int64_t> dims(rank, 1);
  SpecContext ctx(spec, dims);
  try {
    if (const ImageMapping* m = FindImageMapping(spec))
      return static_cast<int>(m->letters.size()) == rank ? std::optional<std::string>(m->tag) : std::nullopt;
    if (auto named = layout_internal::FindNamedFormat(spec, ctx)) {
      layout_internal::ParseTag(named->tag, ctx, "the tag");
      return named->tag;
    }
    if (SpecParser::IsTag(spec)) return layout_internal::FormatTag(layout_internal::ParseTag(spec, ctx, "the tag"));
  } catch (const UserError&) {
  }
  return std::nullopt;
}

std::vector<std::string> DimNames(std::string_view spec, int rank) {
  std::vector<int64_t> dims(std::max(rank, 0), 1);
  SpecContext ctx(spec, dims);
  std::vector<std::string> names;
  try {
    if (const ImageMapping* m = FindImageMapping(spec)) {
      for (char c : m->letters) names.emplace_back(1, c);
    } else if (auto named = layout_internal::FindNamedFormat(spec, ctx)) names = named->dim_names;
    else if (TagOf(spec, rank))
      for (int d = 0; d < rank; ++d) names.emplace_back(1, static_cast<char>('a' + d));
  } catch (const UserError&) {
  }
  if (static_cast<int>(names.size()) != rank) {
    names.clear();
    for (int d = 0; d < rank; ++d) names.push_back(fmt::format("d{}", d));
  }
  return names;
}

std::optional<std::vector<int64_t>> PaddedDims(const Layout& l) {
  std::optional<std::vector<int64_t>> dims = DimsOf(l);
  if (!dims) return std::nullopt;
  // Each dim's parts, by divisor from the largest: each divisor is the
  // product of the sizes of the parts after it, down to 1.
  for (size_t d = 0; d < dims->size(); ++d) {
    std::vector<const PhysicalDim*> parts;
    for (const PhysicalDim& p : l.phys)
      if (p.dim == static_cast<int>(d)) parts.push_back(&p);
    std::stable_sort(parts.begin(), parts.end(),
                     [](const PhysicalDim* a, const PhysicalDim* b) { return a->divisor > b->divisor; });
    int64_t inner = 1;
    for (size_t k = parts.size(); k-- > 0;) {
      if (parts[k]->divisor != inner) return std::nullopt;
      if (k > 0 && parts[k]->size != 0 && inner > kMaxI64 / parts[k]->size) return std::nullopt;
      if (k > 0) inner *= parts[k]->size;
    }
  }
  return dims;
}

std::optional<std::string> DenseTag(const Layout& l) {
  std::optional<std::vector<int64_t>> padded = PaddedDims(l);
  if (!padded || padded->size() > 12) return std::nullopt;
  // The tag: each dim's largest-divisor part is its letter (upper-case when
  // the dim has other parts), the others its blocks.
  std::vector<int> parts_of(padded->size(), 0);
  std::vector<int64_t> largest(padded->size(), 0);
  for (const PhysicalDim& p : l.phys) {
    ++parts_of[p.dim];
    largest[p.dim] = std::max(largest[p.dim], p.divisor);
  }
  std::vector<TagPart> parts;
  for (const PhysicalDim& p : l.phys) {
    if (p.divisor == largest[p.dim]) parts.push_back({p.dim, parts_of[p.dim] > 1 ? TagPart::Outer : TagPart::Plain, 0});
    else parts.push_back({p.dim, TagPart::Block, p.size});
  }
  std::string tag = layout_internal::FormatTag(parts);
  // Dense iff the tag builds the same parts, strides and size.
  std::optional<Layout> back = TryParse(tag, *padded);
  if (!back || back->phys != l.phys) return std::nullopt;
  if (back->elements != l.elements) return std::nullopt;
  return tag;
}

std::string ToSpec(const Layout& l) {
  std::optional<std::vector<int64_t>> dims = DimsOf(l);
  if (dims) {
    // The name is kept when it still describes the layout.
    if (!l.name.empty())
      if (std::optional<Layout> named = TryParse(l.name, *dims); named && *named == l && named->image == l.image)
        return l.name;
    // Only the MACE names describe an image.
    if (l.image) TILEC_USER_ERROR("image layout {} has no spec (a MACE image name)", ToString(l));
    if (std::optional<std::string> tag = DenseTag(l)) return *tag;
    // A plain layout is its strides, listed in logical order.
    bool plain = l.phys.size() == dims->size();
    std::vector<int64_t> strides(dims->size(), 0);
    std::vector<bool> seen(dims->size(), false);
    for (const auto& p : l.phys) {
      if (p.divisor != 1 || seen[p.dim]) plain = false;
      if (!plain) break;
      seen[p.dim] = true;
      strides[p.dim] = p.stride;
    }
    if (plain) {
      std::string spec = fmt::format("strides({})", fmt::join(strides, ","));
      std::optional<Layout> back = TryParse(spec, *dims);
      // Same strides by construction; the buffer size must match too.
      if (back && back->elements == l.elements) return spec;
    }
  }
  TILEC_USER_ERROR("layout {} cannot be written as a layout spec", ToString(l));
}

std::string ToString(const Layout& l) {
  std::vector<std::string> parts;
  for (const auto& p : l.phys) {
    std::string s = fmt::format("d{}", p.dim);
    if (p.divisor != 1) s += fmt::format("/{}", p.divisor);
    s += fmt::format(":{}@{}", p.size, p.stride);
    parts.push_back(std::move(s));
  }
  return fmt::format("{}({}; {} elements)", l.name.empty() ? "layout" : l.name,
                     fmt::join(parts, ", "), l.elements);
}

}  // namespace tilec::lang
