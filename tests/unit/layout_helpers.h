// Helpers of the layout unit tests (layout_test.cc, layout_spec_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "runtime/layout_pack.h"
#include "support/error.h"
#include "tile_lang/layout.h"
#include "tile_lang/tensor.h"

namespace tilec::lang::testing {

// Offset of a logical index, per the formula in layout.h.
inline int64_t Offset(const Layout& l, const std::vector<int64_t>& i) {
  int64_t off = 0;
  for (const auto& p : l.phys) off += (i[p.dim] / p.divisor) % p.size * p.stride;
  return off;
}

// The message of the UserError that `f` throws ("" if none).
template <typename F>
std::string ErrorOf(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.message();
  }
  return "";
}

// Packs a random f32 tensor of `dims` (no element zero) into `l` and checks:
// the buffer has l.elements elements, every element sits at its formula
// offset, every other element (padding) is zero, and unpacking gives the
// tensor back.
inline void CheckPackRoundTrip(const Layout& l, const std::vector<int64_t>& dims, const std::string& what) {
  Tensor t(Shape{DataType::F32, dims});
  FillRandom(t, 7);
  for (int64_t i = 0; i < t.size(); ++i)
    if (t.GetDouble(i) == 0) t.SetDouble(i, 1);
  std::vector<std::byte> bytes = runtime::PackToLayout(t, l);
  ASSERT_EQ(bytes.size(), static_cast<size_t>(l.elements) * sizeof(float)) << what;
  std::vector<float> buf(l.elements);
  std::memcpy(buf.data(), bytes.data(), bytes.size());
  int64_t zeros = 0;
  for (float v : buf) zeros += v == 0;
  EXPECT_EQ(zeros, l.elements - t.size()) << what;
  std::vector<int64_t> idx(dims.size(), 0);
  for (int64_t e = 0; e < t.size(); ++e) {
    ASSERT_EQ(buf[Offset(l, idx)], static_cast<float>(t.GetDouble(e))) << what << " element " << e;
    for (size_t d = dims.size(); d-- > 0;) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
  Tensor back = runtime::UnpackFromLayout(bytes.data(), bytes.size(), t.shape(), l);
  ASSERT_EQ(back.shape(), t.shape()) << what;
  EXPECT_EQ(std::memcmp(back.data(), t.data(), t.bytes()), 0) << what;
}

}  // namespace tilec::lang::testing
