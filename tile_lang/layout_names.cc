// The named formats of the seeds as aliases of oneDNN tags (layout_spec.h):
//  * oneDNN names: the tag grammar over the letters of a known dimension
//    order (nchw, ncdhw, oihw, goihw, …) instead of a, b, c, …: nChw16c is
//    aBcd16b, OIhw16i16o is ABcd16b16a, hwio is cdba;
//  * clDNN names (seed 001): groups separated by '_', outermost first; a
//    letter alone is a plain dim, "fs" the outer part (feature slice) of a
//    blocked f, "fsv16" its inner block of 16, "osa4" a block further out
//    (os_is_yx_osa4_isa8_osv8_isv4: o = 32*os + 8*osa4 + osv8, as in the tag
//    ABcd4a8b8a4b); logical order b,f,(w),(z),y,x
//    for data and (g),o,i,(z),y,x for weights;
//  * MegEngine (seed 002) and MACE CPU buffers (seed 000): a fixed table.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "support/error.h"
#include "tile_lang/layout_spec.h"

namespace tilec::lang {
namespace layout_internal {
namespace {

// Dimension letters of the named families, in logical order.
constexpr std::string_view kOneDnnOrders[] = {"nc",   "ncw",  "nchw", "ncdhw", "tnc",   "oi",
                                              "oiw",  "oihw", "oidhw", "goiw", "goihw", "goidhw"};
constexpr std::string_view kClDnnOrders[] = {"bf", "bfyx", "bfzyx", "bfwzyx", "oi", "oiyx", "oizyx", "goiyx",
                                             "goizyx"};
constexpr std::string_view kClDnnLetters = "bfwzyxoig";

std::vector<std::string> Names(std::string_view letters) {
  std::vector<std::string> names;
  for (char c : letters) names.emplace_back(1, c);
  return names;
}

std::string Sorted(std::string s) {
  std::sort(s.begin(), s.end());
  return s;
}

// The family order whose letters are exactly `letters` (any order), or "".
template <size_t N>
std::string_view OrderOf(const std::string_view (&orders)[N], const std::string& letters) {
  for (std::string_view o : orders)
    if (Sorted(std::string(o)) == Sorted(letters)) return o;
  return {};
}

// Lower-cased letters of `spec` with duplicates removed, in first-seen order.
std::string DistinctLetters(std::string_view spec) {
  std::string out;
  for (char c : spec) {
    if (!std::isalpha(static_cast<unsigned char>(c))) continue;
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (out.find(l) == std::string::npos) out += l;
  }
  return out;
}

// oneDNN letters over `order` -> tag: each letter becomes a, b, c, … by its
// place in `order`; case and block sizes are kept.
std::string OneDnnToTag(std::string_view spec, std::string_view order) {
  std::string tag;
  for (char c : spec) {
    if (!std::isalpha(static_cast<unsigned char>(c))) {
      tag += c;
      continue;
    }
    bool upper = std::isupper(static_cast<unsigned char>(c));
    char t = static_cast<char>('a' + order.find(static_cast<char>(std::tolower(static_cast<unsigned char>(c)))));
    tag += upper ? static_cast<char>(std::toupper(t)) : t;
  }
  return tag;
}

struct ClDnnToken {
  char letter;
  TagPart::Kind kind;
  int64_t block;
};

// clDNN notation -> tokens; Fail for anything that is not that notation.
std::vector<ClDnnToken> ClDnnTokens(std::string_view spec, const SpecContext& ctx) {
  std::vector<ClDnnToken> tokens;
  size_t k = 0;
  auto number = [&](std::string_view after) {
    size_t start = k;
    int64_t v = 0;
    while (k < spec.size() && std::isdigit(static_cast<unsigned char>(spec[k]))) {
      if (v > (int64_t{1} << 40)) ctx.Fail(fmt::format("clDNN name: the block after '{}' is too large", after));
      v = v * 10 + (spec[k++] - '0');
    }
    if (k == start) ctx.Fail(fmt::format("clDNN name: '{}' must be followed by a block size, as in fsv16", after));
    return v;
  };
  while (k < spec.size()) {
    char c = spec[k];
    if (c == '_') {
      if (k == 0 || k + 1 == spec.size() || spec[k + 1] == '_')
        ctx.Fail("clDNN name: '_' separates groups of letters and cannot start, end or repeat");
      ++k;
      continue;
    }
    if (kClDnnLetters.find(c) == std::string_view::npos) {
      ctx.Fail(fmt::format("clDNN name: '{}' is not a clDNN dimension letter (b, f, w, z, y, x for data; g, o, i, "
                           "z, y, x for weights)",
                           c));
    }
    ++k;
    if (k + 1 < spec.size() && spec[k] == 's' && (spec[k + 1] == 'v' || spec[k + 1] == 'a')) {
      // "fsv16": an inner block; "osa4": an intermediate one (blocks nest in order).
      std::string mark = fmt::format("{}s{}", c, spec[k + 1]);
      k += 2;
      tokens.push_back({c, TagPart::Block, number(mark)});
    } else if (k < spec.size() && spec[k] == 's') {
      ++k;
      tokens.push_back({c, TagPart::Outer, 0});
    } else {
      tokens.push_back({c, TagPart::Plain, 0});
    }
  }
  return tokens;
}

NamedFormat ClDnnFormat(std::string_view spec, const SpecContext& ctx) {
  std::vector<ClDnnToken> tokens = ClDnnTokens(spec, ctx);
  std::string letters;
  for (const ClDnnToken& t : tokens)
    if (letters.find(t.letter) == std::string::npos) letters += t.letter;
  std::string_view order = OrderOf(kClDnnOrders, letters);
  if (order.empty()) {
    ctx.Fail(fmt::format("clDNN name with the dimensions {}, which is no clDNN dimension order (bf, bfyx, "
                         "bfzyx, bfwzyx, oi, oiyx, oizyx, goiyx, goizyx)",
                         fmt::join(Names(letters), ", ")));
  }
  std::vector<TagPart> parts;
  for (const ClDnnToken& t : tokens)
    parts.push_back({static_cast<int>(order.find(t.letter)), t.kind, t.block});
  return {FormatTag(parts), Names(order), static_cast<int>(order.size())};
}

}  // namespace

std::optional<NamedFormat> FindNamedFormat(std::string_view spec, const SpecContext& ctx) {
  std::optional<NamedFormat> found;
  for (const LayoutAlias& a : LayoutAliases()) {
    if (a.name == spec && (a.family.starts_with("MegEngine") || a.family == "MACE"))
      found = NamedFormat{std::string(a.tag), Names(a.letters), a.rank};
  }
  if (!found) {
    std::string letters = DistinctLetters(spec);
    bool cldnn_marks = spec.find('_') != std::string_view::npos || spec.find("sv") != std::string_view::npos;
    bool all_lower = std::all_of(spec.begin(), spec.end(), [](char c) { return std::islower(static_cast<unsigned char>(c)); });
    bool alnum = std::all_of(spec.begin(), spec.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)); });
    if (cldnn_marks || (all_lower && !OrderOf(kClDnnOrders, letters).empty() && OrderOf(kOneDnnOrders, letters).empty())) {
      found = ClDnnFormat(spec, ctx);
    } else if (std::string_view order = OrderOf(kOneDnnOrders, letters); alnum && !order.empty()) {
      found = NamedFormat{OneDnnToTag(spec, order), Names(order), static_cast<int>(order.size())};
    }
  }
  if (found && found->rank != ctx.rank()) {
    std::string order;
    for (const std::string& n : found->dim_names) order += fmt::format("{}{}", order.empty() ? "" : ", ", n);
    std::transform(order.begin(), order.end(), order.begin(), [](char c) { return std::toupper(c); });
    ctx.Fail(fmt::format("it needs a rank-{} tensor (logical order {}), not rank {}", found->rank, order, ctx.rank()));
  }
  return found;
}

}  // namespace layout_internal

const std::vector<LayoutAlias>& LayoutAliases() {
  // Tags written out by hand from each seed's definition (the tests check
  // that the names parse to them).
  static const std::vector<LayoutAlias> aliases = {
      {"nchw", "oneDNN", 4, "abcd", "nchw"},
      {"nhwc", "oneDNN", 4, "acdb", "nchw"},
      {"chwn", "oneDNN", 4, "bcda", "nchw"},
      {"ncdhw", "oneDNN", 5, "abcde", "ncdhw"},
      {"ndhwc", "oneDNN", 5, "acdeb", "ncdhw"},
      {"nChw4c", "oneDNN", 4, "aBcd4b", "nchw"},
      {"nChw8c", "oneDNN", 4, "aBcd8b", "nchw"},
      {"nChw16c", "oneDNN", 4, "aBcd16b", "nchw"},
      {"nCdhw16c", "oneDNN", 5, "aBcde16b", "ncdhw"},
      {"NChw16n16c", "oneDNN", 4, "ABcd16a16b", "nchw"},
      {"oihw", "oneDNN", 4, "abcd", "oihw"},
      {"hwio", "oneDNN", 4, "cdba", "oihw"},
      {"OIhw8i8o", "oneDNN", 4, "ABcd8b8a", "oihw"},
      {"OIhw16i16o", "oneDNN", 4, "ABcd16b16a", "oihw"},
      {"OIhw16o16i", "oneDNN", 4, "ABcd16a16b", "oihw"},
      {"OIhw4i16o4i", "oneDNN", 4, "ABcd4b16a4b", "oihw"},
      {"OIdhw16i16o", "oneDNN", 5, "ABcde16b16a", "oidhw"},
      {"Goihw16g", "oneDNN", 5, "Abcde16a", "goihw"},
      {"gOIhw16i16o", "oneDNN", 5, "aBCde16c16b", "goihw"},
      {"bfyx", "clDNN", 4, "abcd", "bfyx"},
      {"byxf", "clDNN", 4, "acdb", "bfyx"},
      {"yxfb", "clDNN", 4, "cdba", "bfyx"},
      {"fyxb", "clDNN", 4, "bcda", "bfyx"},
      {"bfzyx", "clDNN", 5, "abcde", "bfzyx"},
      {"b_fs_yx_fsv4", "clDNN", 4, "aBcd4b", "bfyx"},
      {"b_fs_yx_fsv16", "clDNN", 4, "aBcd16b", "bfyx"},
      {"b_fs_yx_fsv32", "clDNN", 4, "aBcd32b", "bfyx"},
      {"b_fs_zyx_fsv16", "clDNN", 5, "aBcde16b", "bfzyx"},
      {"bs_fs_yx_bsv16_fsv16", "clDNN", 4, "ABcd16a16b", "bfyx"},
      {"fs_b_yx_fsv32", "clDNN", 4, "Bacd32b", "bfyx"},
      {"oiyx", "clDNN", 4, "abcd", "oiyx"},
      {"yxio", "clDNN", 4, "cdba", "oiyx"},
      {"os_iyx_osv16", "clDNN", 4, "Abcd16a", "oiyx"},
      {"os_is_yx_isv16_osv16", "clDNN", 4, "ABcd16b16a", "oiyx"},
      {"os_is_yx_osv16_isv16", "clDNN", 4, "ABcd16a16b", "oiyx"},
      {"is_os_yx_isv16_osv16", "clDNN", 4, "BAcd16b16a", "oiyx"},
      {"os_is_yx_isv8_osv16_isv2", "clDNN", 4, "ABcd8b16a2b", "oiyx"},
      {"os_is_yx_osa4_isa8_osv8_isv4", "clDNN", 4, "ABcd4a8b8a4b", "oiyx"},
      {"g_os_iyx_osv16", "clDNN", 5, "aBcde16b", "goiyx"},
      {"NCHW", "MegEngine, MACE", 4, "abcd", "nchw"},
      {"NHWC", "MegEngine", 4, "acdb", "nchw"},
      {"NCHW4", "MegEngine", 4, "aBcd4b", "nchw"},
      {"NCHW32", "MegEngine", 4, "aBcd32b", "nchw"},
      {"NCHW64", "MegEngine", 4, "aBcd64b", "nchw"},
      {"CHWN4", "MegEngine", 4, "Bcda4b", "nchw"},
      {"OIHW", "MACE", 4, "abcd", "oihw"},
      {"MIHW", "MACE", 4, "abcd", "mihw"},
      {"W", "MACE", 1, "a", "w"},
  };
  return aliases;
}

}  // namespace tilec::lang
