// The tag grammar and the named formats (tile_lang/layout_spec.cc,
// layout_names.cc): every alias parses to its tag, prints back (ToSpec) and
// round-trips through PackToLayout/UnpackFromLayout with zero padding; every
// error message.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "support/error.h"
#include "tests/unit/layout_helpers.h"
#include "tile_lang/layout.h"
#include "tile_lang/tensor.h"

namespace tilec::lang {
namespace {

using testing::CheckPackRoundTrip;
using testing::ErrorOf;
using testing::Offset;

// Dims that fill no block of any alias (blocks of 2..64): odd sizes.
std::vector<int64_t> OddDims(int rank) {
  static const int64_t kOdd[] = {3, 17, 5, 3, 2, 3};
  std::vector<int64_t> dims;
  for (int d = 0; d < rank; ++d) dims.push_back(kOdd[d]);
  return dims;
}

TEST(LayoutAliases, EachNameIsItsTag) {
  ASSERT_GE(LayoutAliases().size(), 40u);
  for (const LayoutAlias& a : LayoutAliases()) {
    std::string name(a.name);
    EXPECT_EQ(TagOf(a.name, a.rank), std::string(a.tag)) << name;
    std::vector<int64_t> dims = OddDims(a.rank);
    Layout by_name = ParseLayout(a.name, dims);
    Layout by_tag = ParseLayout(a.tag, dims);
    EXPECT_EQ(by_name.name, name);
    EXPECT_EQ(by_name.phys, by_tag.phys) << name;
    EXPECT_EQ(by_name.elements, by_tag.elements) << name;
    EXPECT_EQ(ToSpec(by_name), name);
    EXPECT_EQ(DenseTag(by_name), std::string(a.tag)) << name;
    std::vector<std::string> names = DimNames(a.name, a.rank);
    ASSERT_EQ(names.size(), a.letters.size()) << name;
    for (size_t d = 0; d < names.size(); ++d) EXPECT_EQ(names[d], std::string(1, a.letters[d])) << name;
  }
}

// docs/layouts.md lists every alias with its tag (so the docs stay true).
TEST(LayoutAliases, DocumentedWithTheirTags) {
  std::ifstream in(std::string(TILEC_SOURCE_DIR) + "/docs/layouts.md");
  ASSERT_TRUE(in) << "cannot read docs/layouts.md";
  std::stringstream text;
  text << in.rdbuf();
  std::string docs = text.str();
  for (const LayoutAlias& a : LayoutAliases()) {
    std::string row = fmt::format("| `{}` | {} | {} |", a.name, a.family, a.rank);
    size_t at = docs.find(row);
    ASSERT_NE(at, std::string::npos) << "docs/layouts.md has no row " << row;
    std::string line = docs.substr(at, docs.find('\n', at) - at);
    EXPECT_NE(line.find(fmt::format("| `{}` |", a.tag)), std::string::npos) << line;
  }
}

TEST(LayoutAliases, SeedDefinitions) {
  // Seed 002: CHWN4 is C/4, H, W, N, 4 over logical N, C, H, W.
  Layout chwn4 = ParseLayout("CHWN4", {2, 6, 3, 5});
  EXPECT_EQ(chwn4.phys, (std::vector<PhysicalDim>{{1, 4, 2, 120}, {2, 1, 3, 40}, {3, 1, 5, 8},
                                                  {0, 1, 2, 4}, {1, 1, 4, 1}}));
  EXPECT_EQ(chwn4.elements, 240);
  // Seed 001: fs_b_yx_fsv32 puts the feature slice outermost.
  Layout fs_b = ParseLayout("fs_b_yx_fsv32", {2, 40, 3, 3});
  EXPECT_EQ(fs_b.phys, (std::vector<PhysicalDim>{{1, 32, 2, 576}, {0, 1, 2, 288}, {2, 1, 3, 96},
                                                 {3, 1, 3, 32}, {1, 1, 32, 1}}));
  // os_is_yx_isv8_osv16_isv2: i split three ways (is, isv8, isv2).
  Layout w = ParseLayout("os_is_yx_isv8_osv16_isv2", {20, 17, 1, 1});
  EXPECT_EQ(w.phys, (std::vector<PhysicalDim>{{0, 16, 2, 512}, {1, 16, 2, 256}, {2, 1, 1, 256},
                                              {3, 1, 1, 256}, {1, 2, 8, 32}, {0, 1, 16, 2}, {1, 1, 2, 1}}));
  EXPECT_EQ(w.elements, 32 * 32);
  // The same name through the family grammars beyond the table.
  EXPECT_EQ(TagOf("NChw16n16c", 4), "ABcd16a16b");
  EXPECT_EQ(TagOf("nhcw", 4), "acbd");
  EXPECT_EQ(TagOf("bs_fs_zyx_bsv16_fsv16", 5), "ABcde16a16b");
  EXPECT_EQ(TagOf("wio", 3), "cba");
  EXPECT_EQ(TagOf("row-major", 2), std::nullopt);
  EXPECT_EQ(TagOf("nchw", 3), std::nullopt);
  EXPECT_EQ(DimNames("strides(1,2)", 2), (std::vector<std::string>{"d0", "d1"}));
  EXPECT_EQ(DimNames("aBc8b", 3), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(LayoutAliases, NamesOfOneMappingAreEqual) {
  std::vector<int64_t> dims = {2, 20, 3, 5};
  Layout l = ParseLayout("nChw16c", dims);
  for (const char* same : {"aBcd16b", "b_fs_yx_fsv16"}) {
    EXPECT_EQ(ParseLayout(same, dims), l) << same;
    EXPECT_EQ(ParseLayout(same, dims).name, same);
  }
  EXPECT_EQ(ParseLayout("NCHW4", dims), ParseLayout("nChw4c", dims));
  EXPECT_FALSE(ParseLayout("nChw8c", dims) == l);
  EXPECT_FALSE(ParseLayout("nchw", dims) == ParseLayout("nhwc", dims));
}

TEST(TagGrammar, PartsDivisorsAndPadding) {
  // aBcd16b with C = 20: n, c/16 (2), h, w, c%16.
  Layout l = ParseLayout("aBcd16b", {2, 20, 3, 5});
  EXPECT_EQ(l.phys, ParseLayout("nChw16c", {2, 20, 3, 5}).phys);
  EXPECT_EQ(PaddedDims(l), (std::vector<int64_t>{2, 32, 3, 5}));
  // ABcd8a16b2a: a = 16*(a/16) + 2*((a/2)%8) + a%2; b = 16*(b/16) + b%16.
  Layout d = ParseLayout("ABcd8a16b2a", {20, 17, 1, 2});
  EXPECT_EQ(d.phys, (std::vector<PhysicalDim>{{0, 16, 2, 1024}, {1, 16, 2, 512}, {2, 1, 1, 512},
                                              {3, 1, 2, 256}, {0, 2, 8, 32}, {1, 1, 16, 2}, {0, 1, 2, 1}}));
  EXPECT_EQ(d.elements, 2048);
  EXPECT_EQ(PaddedDims(d), (std::vector<int64_t>{32, 32, 1, 2}));
  EXPECT_EQ(Offset(d, {19, 16, 0, 1}), 1024 + 512 + 256 + 1 * 32 + 0 * 2 + 1);
  // Blocks may sit anywhere; the outer letter may follow its block.
  EXPECT_EQ(ParseLayout("a4bB", {1, 6}).phys,
            (std::vector<PhysicalDim>{{0, 1, 1, 8}, {1, 1, 4, 2}, {1, 4, 2, 1}}));
  EXPECT_EQ(ParseLayout("a", {7}), [] {
    Layout r = RowMajorLayout({7});
    r.name = "a";
    return r;
  }());
  // An empty tensor needs no storage, a block of 1 is allowed.
  EXPECT_EQ(ParseLayout("aBcd8b", {1, 0, 2, 2}).elements, 0);
  EXPECT_EQ(ParseLayout("aB1b", {2, 3}).elements, 6);
}

const char* kTags[] = {"abcd",      "acdb",        "dcba",     "aBcd4b",     "aBcd16b",     "ABcd16b16a",
                       "aBCd8c8b",  "ABcd8a16b2a", "Bacd32b",  "BAcd16b16a", "ABcd4a8b8a4b", "Abcde16a",
                       "aBcde16b",  "aBCde16c16b", "ab",       "Ab4a",       "bA8a",        "aBc4b2b"};

TEST(TagGrammar, EveryElementGetsItsOwnOffsetAndPaddingIsZero) {
  std::vector<std::string> specs(std::begin(kTags), std::end(kTags));
  for (const LayoutAlias& a : LayoutAliases()) specs.emplace_back(a.name);
  for (const std::string& spec : specs) {
    int rank = 0;
    for (char c : spec)
      if (std::isalpha(static_cast<unsigned char>(c)) && !std::isdigit(static_cast<unsigned char>(c))) ++rank;
    std::optional<std::string> tag;
    for (int r = 1; r <= 6 && !tag; ++r)
      if ((tag = TagOf(spec, r))) rank = r;
    ASSERT_TRUE(tag) << spec << " is a tag of no rank up to 6";
    std::vector<int64_t> dims = OddDims(rank);
    Layout l = ParseLayout(spec, dims);
    std::optional<std::vector<int64_t>> padded = PaddedDims(l);
    ASSERT_TRUE(padded) << spec;
    int64_t padded_count = 1;
    for (int64_t p : *padded) padded_count *= p;
    EXPECT_EQ(l.elements, padded_count) << spec;
    // ToSpec gives back a spec that parses to the same layout.
    EXPECT_EQ(ParseLayout(ToSpec(l), dims), l) << spec;
    Layout unnamed = l;
    unnamed.name.clear();
    EXPECT_EQ(ToSpec(unnamed), *tag) << spec;
    EXPECT_EQ(ParseLayout(ToSpec(unnamed), dims).phys, l.phys) << spec;

    CheckPackRoundTrip(l, dims, spec);
  }
}

TEST(TagGrammar, Errors) {
  struct Bad {
    const char* spec;
    std::vector<int64_t> dims;
    const char* message;
  };
  const std::vector<int64_t> k4 = {2, 3, 4, 5};
  for (const Bad& b : std::vector<Bad>{
           {"abc", k4,
            "bad layout 'abc' for a tensor of dimensions [2, 3, 4, 5]: the tag has no letter for dimension 3 "
            "('d' or 'D'): a rank-4 tensor needs each of a..d once"},
           {"abcde", k4, "the tag names dimension 'e' (dimension 4), but a rank-4 tensor has the letters a..d"},
           {"abcda", k4, "the tag gives dimension 'a' (0) more than once"},
           {"abcdc", k4, "the tag gives dimension 'c' (2) more than once"},
           {"aBcd", k4,
            "the tag writes 'B' upper-case (the outer part of a blocked dimension) but has no block of it, such "
            "as 16b"},
           {"abcd16b", k4, "the tag has blocks of 'b' but writes it lower-case; its outer part is written 'B'"},
           {"aBcd0b", k4, "the tag has a block of 0 for dimension 'b'"},
           {"aBcd16", k4, "the tag ends with the number 16 (a block size goes before its letter, as in 16b)"},
           {"a16Bcd", k4, "the tag has the block size 16 before the upper-case 'B' (a block is written 16b)"},
           {"aBcd99999999999999999999b", k4, "the tag has a block '99999999999999999999' that does not fit in 64 bits"},
           {"aBcd4294967296b4294967296b", k4, "the buffer size does not fit in 64 bits"},
           {"aBcd16b", {2, 3, 4}, "the tag names dimension 'd' (dimension 3), but a rank-3 tensor has the letters a..c"},
           {"nChw16c", {2, 3, 4}, "it needs a rank-4 tensor (logical order N, C, H, W), not rank 3"},
           {"nChw0c", k4, "it is the tag aBcd0b, which has a block of 0 for dimension 'b'"},
           {"nChw", k4, "it is the tag aBcd, which writes 'B' upper-case"},
           {"OIhw16i", k4, "it is the tag ABcd16b, which writes 'A' upper-case"},
           {"nchwn", k4, "it is the tag abcda, which gives dimension 'a' (0) more than once"},
           {"CHWN4", {2, 3, 4, 5, 6}, "it needs a rank-4 tensor (logical order N, C, H, W), not rank 5"},
           {"W", k4, "it needs a rank-1 tensor (logical order W), not rank 4"},
           {"b_fs_yx", k4, "it is the tag aBcd, which writes 'B' upper-case"},
           {"b_fs_yx_fsv", k4, "clDNN name: 'fsv' must be followed by a block size, as in fsv16"},
           {"os_is_yx_osa", k4, "clDNN name: 'osa' must be followed by a block size, as in fsv16"},
           {"b_fs_yq_fsv16", k4, "clDNN name: 'q' is not a clDNN dimension letter (b, f, w, z, y, x for data; g, "
                                 "o, i, z, y, x for weights)"},
           {"_bfyx", k4, "clDNN name: '_' separates groups of letters and cannot start, end or repeat"},
           {"b__fyx", k4, "clDNN name: '_' separates groups of letters and cannot start, end or repeat"},
           {"b_fyx_", k4, "clDNN name: '_' separates groups of letters and cannot start, end or repeat"},
           {"b_fs_yx_fsv99999999999999", k4, "clDNN name: the block after 'fsv' is too large"},
           {"b_f_xo", k4, "clDNN name with the dimensions b, f, x, o, which is no clDNN dimension order"},
           {"b_fs_yx_fsv16", {2, 3, 4}, "it needs a rank-4 tensor (logical order B, F, Y, X), not rank 3"},
           {"b_fs_yx_bs", k4, "it is the tag aBcdA, which gives dimension 'a' (0) more than once"},
           {"nchq", k4, "unknown layout (expected a oneDNN tag such as abcd"},
           {"a-b", {2, 2}, "unknown layout"},
           {"abcdefghijklm", std::vector<int64_t>(13, 1), "the tag is for rank 13; tags go up to rank 12"},
       }) {
    std::string msg = ErrorOf([&] { ParseLayout(b.spec, b.dims); });
    EXPECT_NE(msg.find(b.message), std::string::npos) << "spec '" << b.spec << "': got \"" << msg << "\"";
    EXPECT_NE(msg.find(fmt::format("bad layout '{}'", b.spec)), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace tilec::lang
