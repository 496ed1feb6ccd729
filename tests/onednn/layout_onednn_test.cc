// Tilec's tag grammar against oneDNN's own memory descriptors: for each
// format tag, oneDNN's padded dims, buffer size and blocking descriptor
// (strides, inner blocks) must give every logical element the offset Tilec's
// layout gives it. Built only where oneDNN is installed (tests/CMakeLists.txt).
#include <gtest/gtest.h>

#include <oneapi/dnnl/dnnl.hpp>

#include "tile_lang/layout.h"

namespace tilec {
namespace {

using tag = dnnl::memory::format_tag;

struct TagCase {
  const char* spec;  // Tilec's spelling (a tag or a oneDNN name)
  tag onednn;
  std::vector<int64_t> dims;  // sizes that fill no block
};

// oneDNN's offset of logical index `i`: outer strides, then the inner blocks
// in order (the last innermost), each block of a dim nested in the later ones.
int64_t OneDnnOffset(const dnnl_memory_desc_t& md, const std::vector<int64_t>& i) {
  const dnnl_blocking_desc_t& b = md.format_desc.blocking;
  int ndims = md.ndims;
  std::vector<int64_t> block(ndims, 1);
  for (int k = 0; k < b.inner_nblks; ++k) block[b.inner_idxs[k]] *= b.inner_blks[k];
  int64_t off = 0;
  for (int d = 0; d < ndims; ++d) off += i[d] / block[d] * b.strides[d];
  std::vector<int64_t> inner(ndims, 1);  // product of the later blocks of each dim
  int64_t step = 1;
  for (int k = b.inner_nblks - 1; k >= 0; --k) {
    int d = b.inner_idxs[k];
    off += (i[d] / inner[d]) % b.inner_blks[k] * step;
    inner[d] *= b.inner_blks[k];
    step *= b.inner_blks[k];
  }
  return off;
}

int64_t TilecOffset(const lang::Layout& l, const std::vector<int64_t>& i) {
  int64_t off = 0;
  for (const auto& p : l.phys) off += (i[p.dim] / p.divisor) % p.size * p.stride;
  return off;
}

TEST(LayoutOneDnn, TagsMatchOneDnnDescriptors) {
  const std::vector<TagCase> cases = {
      {"abcd", tag::abcd, {2, 3, 5, 7}},
      {"acdb", tag::acdb, {2, 3, 5, 7}},
      {"nhwc", tag::nhwc, {2, 3, 5, 7}},
      {"chwn", tag::chwn, {2, 3, 5, 7}},
      {"ndhwc", tag::ndhwc, {2, 3, 5, 7, 2}},
      {"nChw8c", tag::nChw8c, {2, 17, 3, 3}},
      {"nChw16c", tag::nChw16c, {2, 17, 3, 3}},
      {"aBcd16b", tag::aBcd16b, {2, 20, 3, 1}},
      {"nCdhw16c", tag::nCdhw16c, {1, 17, 2, 3, 2}},
      {"ABcd16b16a", tag::ABcd16b16a, {20, 17, 3, 3}},
      {"OIhw16i16o", tag::OIhw16i16o, {20, 17, 3, 3}},
      {"OIhw16o16i", tag::OIhw16o16i, {20, 17, 3, 3}},
      {"OIhw8i8o", tag::OIhw8i8o, {9, 10, 1, 3}},
      {"aBCd8c8b", tag::aBCd8c8b, {2, 9, 10, 3}},
      {"ABcd8a16b2a", tag::ABcd8a16b2a, {20, 17, 1, 2}},
      {"ABcd8b16a2b", tag::ABcd8b16a2b, {20, 17, 1, 2}},
      {"ABcd4a8b8a4b", tag::ABcd4a8b8a4b, {33, 35, 1, 2}},
      {"BAcd16b16a", tag::BAcd16b16a, {20, 17, 2, 1}},
      {"Goihw16g", tag::Goihw16g, {17, 2, 3, 1, 2}},
      {"gOIhw16i16o", tag::gOIhw16i16o, {2, 20, 17, 1, 2}},
      {"NChw16n16c", tag::NChw16n16c, {17, 20, 1, 2}},
  };
  for (const TagCase& c : cases) {
    dnnl::memory::dims dims(c.dims.begin(), c.dims.end());
    dnnl::memory::desc md(dims, dnnl::memory::data_type::f32, c.onednn);
    lang::Layout l = lang::ParseLayout(c.spec, c.dims);
    EXPECT_EQ(md.get_size(), static_cast<size_t>(l.elements) * sizeof(float)) << c.spec;
    std::optional<std::vector<int64_t>> padded = lang::PaddedDims(l);
    ASSERT_TRUE(padded) << c.spec;
    for (size_t d = 0; d < c.dims.size(); ++d) EXPECT_EQ(md.data.padded_dims[d], (*padded)[d]) << c.spec << " dim " << d;
    // Every logical element at oneDNN's offset.
    std::vector<int64_t> i(c.dims.size(), 0);
    int64_t count = 1;
    for (int64_t d : c.dims) count *= d;
    int bad = 0;
    for (int64_t e = 0; e < count && bad < 3; ++e) {
      int64_t want = OneDnnOffset(md.data, i), got = TilecOffset(l, i);
      if (want != got) {
        ++bad;
        ADD_FAILURE() << c.spec << ": element " << e << " at " << got << ", oneDNN puts it at " << want;
      }
      for (size_t d = c.dims.size(); d-- > 0;) {
        if (++i[d] < c.dims[d]) break;
        i[d] = 0;
      }
    }
  }
}

}  // namespace
}  // namespace tilec
