// ParseLayout / ToSpec, ParseShapeAndLayout, Bind with layouts, and packing
// into blocked layouts (whose padding must read back as zeros).
#include <gtest/gtest.h>

#include <cstring>

#include "runtime/layout_pack.h"
#include "support/error.h"
#include "tests/unit/layout_helpers.h"
#include "tile_lang/binder.h"
#include "tile_lang/layout.h"
#include "tile_lang/parser.h"
#include "tile_lang/tensor.h"

namespace tilec::lang {
namespace {

// Per logical dim, its stride (plain layouts only).
std::vector<int64_t> Strides(const Layout& l, size_t rank) {
  std::vector<int64_t> s(rank, -1);
  for (const auto& p : l.phys) {
    EXPECT_EQ(p.divisor, 1) << ToString(l);
    s.at(p.dim) = p.stride;
  }
  return s;
}

std::vector<int> Order(const Layout& l) {
  std::vector<int> o;
  for (const auto& p : l.phys) o.push_back(p.dim);
  return o;
}

using testing::CheckPackRoundTrip;
using testing::ErrorOf;
using testing::Offset;

const std::vector<int64_t> kNchw = {2, 3, 4, 5};

TEST(ParseLayout, PlainNamedFormats) {
  struct Want {
    const char* spec;
    std::vector<int> order;
    std::vector<int64_t> strides;  // per logical N, C, H, W
  };
  for (const Want& w : std::vector<Want>{{"row-major", {0, 1, 2, 3}, {60, 20, 5, 1}},
                                         {"nchw", {0, 1, 2, 3}, {60, 20, 5, 1}},
                                         {"nhwc", {0, 2, 3, 1}, {60, 1, 15, 3}},
                                         {"chwn", {1, 2, 3, 0}, {1, 40, 10, 2}},
                                         {"order(3,2,1,0)", {3, 2, 1, 0}, {1, 2, 6, 24}}}) {
    Layout l = ParseLayout(w.spec, kNchw);
    EXPECT_EQ(l.name, w.spec);
    EXPECT_EQ(Order(l), w.order) << w.spec;
    EXPECT_EQ(Strides(l, 4), w.strides) << w.spec;
    EXPECT_EQ(l.elements, 120) << w.spec;
    for (const auto& p : l.phys) EXPECT_EQ(p.size, kNchw[p.dim]) << w.spec;
  }
  EXPECT_TRUE(ParseLayout("nchw", kNchw).IsRowMajor(kNchw));
  EXPECT_FALSE(ParseLayout("nhwc", kNchw).IsRowMajor(kNchw));
}

TEST(ParseLayout, Rank5AndScalarsAndSpaces) {
  std::vector<int64_t> dims = {2, 3, 4, 5, 6};
  Layout l = ParseLayout("ndhwc", dims);
  EXPECT_EQ(Order(l), (std::vector<int>{0, 2, 3, 4, 1}));
  EXPECT_EQ(Strides(l, 5), (std::vector<int64_t>{360, 1, 90, 18, 3}));
  EXPECT_EQ(ParseLayout("ncdhw", dims), [&] {
    Layout r = RowMajorLayout(dims);
    r.name = "ncdhw";
    return r;
  }());
  EXPECT_EQ(ParseLayout("row-major", {}).elements, 1);
  EXPECT_EQ(ParseLayout("order()", {}).elements, 1);
  EXPECT_EQ(ParseLayout("strides()", {}).elements, 1);
  // Whitespace is allowed; the name is the canonical spelling.
  EXPECT_EQ(ParseLayout("  order( 0, 2 ,3,1 ) ", kNchw).name, "order(0,2,3,1)");
  EXPECT_EQ(ParseLayout(" nhwc ", kNchw).name, "nhwc");
}

TEST(ParseLayout, StridesWithGapsAreAView) {
  // A [2, 3] window of a [4, 10] row-major buffer.
  Layout l = ParseLayout("strides(10, 1)", {2, 3});
  EXPECT_EQ(l.name, "strides(10,1)");
  EXPECT_EQ(Strides(l, 2), (std::vector<int64_t>{10, 1}));
  EXPECT_EQ(l.elements, 13);  // largest offset 1*10 + 2*1, plus one
  // Column-major with padding between columns.
  Layout c = ParseLayout("strides(1, 4)", {3, 2});
  EXPECT_EQ(c.elements, 7);
  // A unit dimension may have any stride, including 0; it never steps.
  EXPECT_EQ(ParseLayout("strides(0, 1)", {1, 5}).elements, 5);
  EXPECT_EQ(ParseLayout("strides(7, 1)", {1, 5}).elements, 5);
  // An empty tensor needs no storage.
  EXPECT_EQ(ParseLayout("strides(3, 1)", {0, 3}).elements, 0);
}

TEST(ParseLayout, BlockedFormats) {
  // C = 20 with nChw16c: two blocks of 16, i.e. 32 channels of storage.
  std::vector<int64_t> dims = {2, 20, 3, 5};
  Layout l = ParseLayout("nChw16c", dims);
  EXPECT_EQ(l.name, "nChw16c");
  ASSERT_EQ(l.phys.size(), 5u);
  EXPECT_EQ(l.phys[0], (PhysicalDim{0, 1, 2, 2 * 3 * 5 * 16}));
  EXPECT_EQ(l.phys[1], (PhysicalDim{1, 16, 2, 3 * 5 * 16}));
  EXPECT_EQ(l.phys[2], (PhysicalDim{2, 1, 3, 5 * 16}));
  EXPECT_EQ(l.phys[3], (PhysicalDim{3, 1, 5, 16}));
  EXPECT_EQ(l.phys[4], (PhysicalDim{1, 1, 16, 1}));
  EXPECT_EQ(l.elements, 2 * 32 * 3 * 5);
  EXPECT_EQ(Offset(l, {1, 19, 2, 4}), 1 * 480 + 1 * 240 + 2 * 80 + 4 * 16 + 3);

  Layout same = ParseLayout("b_fs_yx_fsv16", dims);
  EXPECT_EQ(same.name, "b_fs_yx_fsv16");
  EXPECT_EQ(same.phys, l.phys);
  EXPECT_EQ(same.elements, l.elements);

  EXPECT_EQ(ParseLayout("nChw8c", dims).elements, 2 * 24 * 3 * 5);  // 3 blocks of 8
  EXPECT_EQ(ParseLayout("nChw4c", dims).elements, 2 * 20 * 3 * 5);  // no padding
  EXPECT_EQ(ParseLayout("nChw8c", {1, 3, 1, 1}).elements, 8);
  EXPECT_EQ(ParseLayout("nChw16c", {1, 0, 2, 2}).elements, 0);
  EXPECT_FALSE(l.IsRowMajor(dims));
}

TEST(ParseLayout, EveryElementGetsItsOwnOffset) {
  std::vector<int64_t> dims = {2, 5, 3, 2};
  for (const char* spec : {"row-major", "nhwc", "chwn", "order(2,0,3,1)", "strides(1,2,10,40)",
                           "nChw4c", "nChw8c", "nChw16c"}) {
    Layout l = ParseLayout(spec, dims);
    std::vector<bool> used(l.elements, false);
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t c = 0; c < 5; ++c)
        for (int64_t h = 0; h < 3; ++h)
          for (int64_t w = 0; w < 2; ++w) {
            int64_t off = Offset(l, {n, c, h, w});
            ASSERT_GE(off, 0) << spec;
            ASSERT_LT(off, l.elements) << spec;
            EXPECT_FALSE(used[off]) << spec << " aliases at " << off;
            used[off] = true;
          }
  }
}

TEST(ToSpec, RoundTrips) {
  std::vector<int64_t> dims = {2, 20, 3, 5};
  for (const char* spec : {"row-major", "nchw", "nhwc", "chwn", "order(1,0,3,2)",
                           "strides(1,2,40,120)", "strides(1000,40,10,1)", "nChw4c", "nChw8c",
                           "nChw16c", "b_fs_yx_fsv16"}) {
    Layout l = ParseLayout(spec, dims);
    std::string text = ToSpec(l);
    EXPECT_EQ(text, spec);
    EXPECT_EQ(ParseLayout(text, dims), l) << spec;
  }
  // Unnamed or misnamed dense layouts print as their tag; other plain
  // layouts as their strides.
  Layout l = ParseLayout("nhwc", dims);
  l.name.clear();
  EXPECT_EQ(ToSpec(l), "acdb");
  l.name = "nchw";
  EXPECT_EQ(ToSpec(l), "acdb");
  Layout back = ParseLayout(ToSpec(l), dims);
  EXPECT_EQ(Strides(back, 4), Strides(l, 4));
  EXPECT_EQ(back.elements, l.elements);
  Layout gap = ParseLayout("strides(1000,40,10,1)", dims);
  gap.name = "nchw";
  EXPECT_EQ(ToSpec(gap), "strides(1000,40,10,1)");
  // A blocked layout under a name that does not describe it prints as its tag.
  Layout b = ParseLayout("nChw8c", dims);
  b.name = "mine";
  EXPECT_EQ(ToSpec(b), "aBcd8b");
  EXPECT_EQ(ParseLayout("aBcd8b", dims).phys, b.phys);
  // A blocked layout that is not dense has no spec.
  b.elements += 8;
  EXPECT_THROW(ToSpec(b), UserError);
  // Neither does a plain layout whose buffer is bigger than its strides need.
  Layout big = RowMajorLayout({2, 3});
  big.name.clear();
  big.elements = 100;
  EXPECT_THROW(ToSpec(big), UserError);
}

TEST(ParseLayout, Errors) {
  struct Bad {
    const char* spec;
    std::vector<int64_t> dims;
    const char* message;
  };
  const int64_t big = int64_t{1} << 40;
  for (const Bad& b : std::vector<Bad>{
           {"nhwq", kNchw,
            "bad layout 'nhwq' for a tensor of dimensions [2, 3, 4, 5]: unknown layout "
            "(expected a oneDNN tag such as abcd, acdb or aBcd16b; a named format such as nchw, "
            "nhwc, nChw16c, OIhw16i16o, bfyx, b_fs_yx_fsv16, NCHW4, CHWN4 or OIHW; a MACE image such as "
            "image_channel_major; row-major; any; "
            "order(p0,p1,...); strides(s0,s1,...))"},
           {"", kNchw, "bad layout '' for a tensor of dimensions [2, 3, 4, 5]: empty layout"},
           {"NHWQ", kNchw, "'NHWQ' for a tensor of dimensions [2, 3, 4, 5]: unknown layout"},
           {"nhwc", {2, 3, 4}, "bad layout 'nhwc' for a tensor of dimensions [2, 3, 4]: it needs a "
                               "rank-4 tensor (logical order N, C, H, W), not rank 3"},
           {"ndhwc", kNchw, "it needs a rank-5 tensor (logical order N, C, D, H, W), not rank 4"},
           {"nChw16c", {2, 3, 4, 5, 6}, "it needs a rank-4 tensor (logical order N, C, H, W), not rank 5"},
           {"order(0,1,2)", kNchw, "order(...) lists 3 dimensions but the tensor has rank 4"},
           {"order(0,1,2,4)", kNchw, "order(...) names dimension 4, which is not in 0..3"},
           {"order(0,1,-1,2)", kNchw, "order(...) names dimension -1, which is not in 0..3"},
           {"order(0,1,1,2)", kNchw, "order(...) names dimension 1 twice"},
           {"order(0,1,x,2)", kNchw, "'x' in order(...) is not an integer"},
           {"order(0,1,,2)", kNchw, "'' in order(...) is not an integer"},
           {"order(0,1,2,3", kNchw, "expected ')' at the end of order(...)"},
           {"order 0,1,2,3", kNchw, "unknown layout"},
           {"strides(1,2)", kNchw, "strides(...) lists 2 strides but the tensor has rank 4"},
           {"strides(1,-3)", {2, 2}, "dimension 1 has a negative stride -3"},
           {"strides(1,1)", {2, 2},
            "dimension 1 (stride 1) overlaps dimension 0 (stride 1, size 2): the dimensions "
            "with smaller strides reach offset 1, so elements would alias"},
           {"strides(3,1)", {2, 4},
            "dimension 0 (stride 3) overlaps dimension 1 (stride 1, size 4): the dimensions "
            "with smaller strides reach offset 3, so elements would alias"},
           {"strides(0,1)", {2, 4}, "dimension 0 has size 2 but stride 0, so its elements alias"},
           {"strides(99999999999999999999,1)", {2, 4},
            "'99999999999999999999' does not fit in 64 bits"},
           {"strides(4611686018427387904,1)", {3, 4}, "the buffer size does not fit in 64 bits"},
           {"order(0,1)", {big, big}, "the buffer size does not fit in 64 bits"},
           {"nChw16c", {big, 16, big, 1}, "the buffer size does not fit in 64 bits"},
           {"row-major", {2, -1}, "dimension -1 is negative"},
       }) {
    std::string msg = ErrorOf([&] { ParseLayout(b.spec, b.dims); });
    EXPECT_NE(msg.find(b.message), std::string::npos)
        << "spec '" << b.spec << "': got \"" << msg << "\"";
  }
}

TEST(ParseShapeAndLayout, SplitsAndChecks) {
  auto [shape, layout] = ParseShapeAndLayout("f32[1, 64, 56, 56]:nhwc");
  EXPECT_EQ(shape, (Shape{DataType::F32, {1, 64, 56, 56}}));
  ASSERT_TRUE(layout.has_value());
  EXPECT_EQ(*layout, "nhwc");
  auto [plain, none] = ParseShapeAndLayout("i8[3]");
  EXPECT_EQ(plain, (Shape{DataType::I8, {3}}));
  EXPECT_FALSE(none.has_value());
  EXPECT_EQ(ParseShapeAndLayout("f32[2,3]: strides(1, 2) ").second, "strides(1, 2)");

  EXPECT_NE(ErrorOf([] { ParseShapeAndLayout("f32[1,2]:nhwc"); })
                .find("bad layout 'nhwc' for a tensor of dimensions [1, 2]: it needs a rank-4"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { ParseShapeAndLayout("f32[1,2]: "); }).find("no layout after ':'"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { ParseShapeAndLayout("f33[1,2]:nhwc"); }).find("unknown element type"),
            std::string::npos);
  // ParseShape itself stays strict.
  EXPECT_THROW(ParseShape("f32[1, 64, 56, 56]:nhwc"), UserError);
}

const char* kMatmul =
    "function (A[M, K], B[K, N]) -> (C) { T[i, j : M, N] = +(A[i, k] * B[k, j]); C = T + 1; }";

TEST(BindLayouts, AppliesToInputsOutputsAndIntermediates) {
  ast::Function f = Parse(MakeSource("m.tile", kMatmul));
  Program p = Bind(f, {{"A", {DataType::F32, {2, 3}}}, {"B", {DataType::F32, {3, 4}}}},
                   {{"A", "order(1,0)"}, {"C", "strides(10,1)"}, {"T", "strides(1,2)"}});
  EXPECT_EQ(p.Tensor("A").layout, ParseLayout("order(1,0)", {2, 3}));
  EXPECT_EQ(p.Tensor("B").layout, RowMajorLayout({3, 4}));
  EXPECT_EQ(p.Tensor("C").layout, ParseLayout("strides(10,1)", {2, 4}));
  EXPECT_EQ(p.Tensor("T").layout, ParseLayout("strides(1,2)", {2, 4}));
  // Everything else is what Bind without layouts gives.
  Program q = Bind(f, {{"A", {DataType::F32, {2, 3}}}, {"B", {DataType::F32, {3, 4}}}});
  EXPECT_EQ(p.inputs, q.inputs);
  EXPECT_EQ(p.outputs, q.outputs);
  EXPECT_EQ(p.ops.size(), q.ops.size());
}

TEST(BindLayouts, Errors) {
  ast::Function f = Parse(MakeSource("m.tile", kMatmul));
  std::map<std::string, Shape> shapes = {{"A", {DataType::F32, {2, 3}}},
                                         {"B", {DataType::F32, {3, 4}}}};
  EXPECT_EQ(ErrorOf([&] { Bind(f, shapes, {{"Z", "nhwc"}}); }),
            "layout 'nhwc' given for unknown tensor 'Z'; the program's tensors are A, B, C, T");
  EXPECT_EQ(ErrorOf([&] { Bind(f, shapes, {{"B", "nhwc"}}); }),
            "tensor 'B': bad layout 'nhwc' for a tensor of dimensions [3, 4]: it needs a rank-4 "
            "tensor (logical order N, C, H, W), not rank 2");
}

TEST(PackBlocked, RoundTripWithZeroPadding) {
  std::vector<int64_t> dims = {2, 20, 3, 2};
  for (const char* spec : {"nChw4c", "nChw8c", "nChw16c", "b_fs_yx_fsv16"})
    CheckPackRoundTrip(ParseLayout(spec, dims), dims, spec);
  // C = 20 in blocks of 16 stores 32 channels: 12 of every 32 are padding.
  EXPECT_EQ(ParseLayout("nChw16c", dims).elements - 2 * 20 * 3 * 2, 2 * 12 * 3 * 2);
}

}  // namespace
}  // namespace tilec::lang
