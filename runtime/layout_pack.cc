#include "runtime/layout_pack.h"

#include <cstring>

#include "support/error.h"

namespace tilec::runtime {
namespace {

// Calls f(logical_index, element_offset) for every element, row-major.
template <typename F>
void ForEachElement(const lang::Shape& shape, const lang::Layout& layout, F&& f) {
  int64_t count = shape.ElementCount();
  int rank = shape.rank();
  std::vector<int64_t> c(rank, 0);
  for (int64_t e = 0; e < count; ++e) {
    int64_t off = 0;
    for (const lang::PhysicalDim& p : layout.phys) {
      int64_t v = c[p.dim] / p.divisor;
      if (p.size > 0) v %= p.size;
      off += v * p.stride;
    }
    TILEC_CHECK(off >= 0 && off < layout.elements, "layout {} maps an element to {} of {}",
                ToString(layout), off, layout.elements);
    f(e, off);
    for (int d = rank - 1; d >= 0; --d) {
      if (++c[d] < shape.dims[d]) break;
      c[d] = 0;
    }
  }
}

}  // namespace

std::vector<std::byte> PackToLayout(const lang::Tensor& t, const lang::Layout& layout) {
  size_t esize = lang::ByteSize(t.dtype());
  std::vector<std::byte> out(static_cast<size_t>(layout.elements) * esize);
  if (layout.IsRowMajor(t.shape().dims)) {
    std::memcpy(out.data(), t.data(), t.bytes());
    return out;
  }
  ForEachElement(t.shape(), layout, [&](int64_t e, int64_t off) {
    std::memcpy(out.data() + off * esize, t.data() + e * esize, esize);
  });
  return out;
}

lang::Tensor UnpackFromLayout(const std::byte* bytes, size_t size, const lang::Shape& shape,
                              const lang::Layout& layout) {
  lang::Tensor t(shape);
  size_t esize = lang::ByteSize(shape.dtype);
  TILEC_CHECK(size >= static_cast<size_t>(layout.elements) * esize, "buffer of {} bytes for {}",
              size, ToString(layout));
  if (layout.IsRowMajor(shape.dims)) {
    std::memcpy(t.data(), bytes, t.bytes());
    return t;
  }
  ForEachElement(shape, layout, [&](int64_t e, int64_t off) {
    std::memcpy(t.data() + e * esize, bytes + off * esize, esize);
  });
  return t;
}

}  // namespace tilec::runtime
