#include "tile_lang/layout.h"

#include <fmt/format.h>

#include <limits>

#include "support/error.h"

namespace tilec::lang {
namespace {

int64_t CheckedMul(int64_t a, int64_t b, const std::vector<int64_t>& dims) {
  if (a < 0 || b < 0) TILEC_USER_ERROR("negative dimension in [{}]", fmt::join(dims, ", "));
  if (a != 0 && b > std::numeric_limits<int64_t>::max() / a)
    TILEC_USER_ERROR("tensor with dimensions [{}] has more elements than fit in 64 bits",
                     fmt::join(dims, ", "));
  return a * b;
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
