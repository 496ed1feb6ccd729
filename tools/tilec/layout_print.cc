// Printing a layout for `tilec layout` (layout_print.h).
#include "tools/tilec/layout_print.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include "support/error.h"

namespace tilec::tools {
namespace {

using lang::Layout;
using lang::PhysicalDim;

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// What every form needs: the layout, the logical dims and their names, and
// per physical part how it relates to the other parts of its dim.
struct View {
  std::string spec;
  const Layout& layout;
  std::vector<int64_t> dims;
  std::vector<std::string> names;            // per logical dim
  std::optional<std::vector<int64_t>> padded;
  std::optional<std::string> tag;            // the dense tag, if any
  std::vector<int> parts_of;                 // per logical dim: its physical parts
  std::vector<bool> is_outer;                // per part: the largest divisor of a split dim
  std::vector<int> blocks_of;                // per logical dim: parts other than the outer one

  View(std::string_view s, const Layout& l, const std::vector<int64_t>& d, std::vector<std::string> n)
      : spec(s), layout(l), dims(d), names(std::move(n)), padded(lang::PaddedDims(l)), tag(lang::DenseTag(l)) {
    parts_of.assign(dims.size(), 0);
    std::vector<int64_t> largest(dims.size(), 0);
    for (const PhysicalDim& p : l.phys) {
      ++parts_of[p.dim];
      largest[p.dim] = std::max(largest[p.dim], p.divisor);
    }
    blocks_of.assign(dims.size(), 0);
    for (const PhysicalDim& p : l.phys) {
      bool outer = parts_of[p.dim] > 1 && p.divisor == largest[p.dim];
      is_outer.push_back(outer);
      if (parts_of[p.dim] > 1 && !outer) ++blocks_of[p.dim];
    }
  }

  bool Split(size_t k) const { return parts_of[layout.phys[k].dim] > 1; }
  bool Block(size_t k) const { return Split(k) && !is_outer[k]; }
  const std::string& Name(size_t k) const { return names[layout.phys[k].dim]; }

  // "n", "C" (outer part), "8c" (block) as in the tag, over the spec's names.
  std::string TagLabel(size_t k) const {
    if (Block(k)) return fmt::format("{}{}", layout.phys[k].size, Name(k));
    return is_outer[k] ? Upper(Name(k)) : Name(k);
  }

  // The index expression of part k: n, (c / 8), (c % 8), (a / 2 % 8).
  std::string Term(size_t k) const {
    const PhysicalDim& p = layout.phys[k];
    bool modulo = Block(k);
    if (p.divisor > 1 && modulo) return fmt::format("({} / {} % {})", Name(k), p.divisor, p.size);
    if (p.divisor > 1) return fmt::format("({} / {})", Name(k), p.divisor);
    if (modulo) return fmt::format("({} % {})", Name(k), p.size);
    return Name(k);
  }

  // The logical index stored at `offset` (components may exceed the dims:
  // padding), or nullopt for an offset no index reaches.
  std::optional<std::vector<int64_t>> IndexAt(int64_t offset) const {
    std::vector<size_t> order;
    for (size_t k = 0; k < layout.phys.size(); ++k)
      if (layout.phys[k].size > 1 && layout.phys[k].stride > 0) order.push_back(k);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return layout.phys[a].stride > layout.phys[b].stride; });
    std::vector<int64_t> index(dims.size(), 0);
    int64_t rem = offset;
    for (size_t k : order) {
      const PhysicalDim& p = layout.phys[k];
      int64_t q = rem / p.stride;
      if (q >= p.size) return std::nullopt;
      rem -= q * p.stride;
      index[p.dim] += q * p.divisor;
    }
    if (rem != 0) return std::nullopt;
    return index;
  }

  bool IsPadding(const std::vector<int64_t>& index) const {
    for (size_t d = 0; d < dims.size(); ++d)
      if (index[d] >= dims[d]) return true;
    return false;
  }

  int64_t Listed(int64_t count) const { return count <= 0 ? layout.elements : std::min(count, layout.elements); }

  int64_t LogicalCount() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }

  // Numeric formula: n * 216 + (c / 8) * 72 + … + (c % 8).
  std::string NumericFormula() const {
    std::vector<std::string> terms;
    for (size_t k = 0; k < layout.phys.size(); ++k) {
      int64_t s = layout.phys[k].stride;
      terms.push_back(s == 1 ? Term(k) : fmt::format("{} * {}", Term(k), s));
    }
    return terms.empty() ? "0" : fmt::format("{}", fmt::join(terms, " + "));
  }

  // The stride of part k of a dense layout in the seed's symbols: the parts
  // inside it, a dim whose every part is inside as its upper-case name (its
  // padded size), lone blocks as numbers: "CHW", "HW*8", "8".
  std::string SymbolicStride(size_t k) const {
    std::vector<int> inside(dims.size(), 0);
    for (size_t j = k + 1; j < layout.phys.size(); ++j) ++inside[layout.phys[j].dim];
    std::vector<std::string> symbols;
    std::vector<bool> named(dims.size(), false);
    int64_t number = 1;
    bool single_letters = true;
    for (const std::string& n : names) single_letters = single_letters && n.size() == 1;
    for (size_t j = k + 1; j < layout.phys.size(); ++j) {
      const PhysicalDim& p = layout.phys[j];
      if (inside[p.dim] == parts_of[p.dim]) {
        if (!named[p.dim]) symbols.push_back(Upper(names[p.dim]));
        named[p.dim] = true;
      } else if (Block(j)) {
        number *= p.size;
      } else {
        symbols.push_back(fmt::format("{}/{}", Upper(names[p.dim]), p.divisor));
        single_letters = false;
      }
    }
    std::string text = fmt::format("{}", fmt::join(symbols, single_letters ? "" : "*"));
    if (number != 1 || text.empty()) text += text.empty() ? fmt::format("{}", number) : fmt::format("*{}", number);
    return text;
  }
};

std::string Args(const View& v) { return fmt::format("{}", fmt::join(v.names, ", ")); }

// "2x17x3x3", or "a scalar".
std::string DimsText(const View& v) {
  return v.dims.empty() ? std::string("a scalar") : fmt::format("{}", fmt::join(v.dims, "x"));
}

std::string FunctionName(const std::string& spec) {
  std::string s = "offset_";
  for (char c : spec) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

std::string Brackets(const View& v, const std::vector<int64_t>& index, std::string_view sep) {
  std::vector<std::string> parts;
  for (size_t d = 0; d < index.size(); ++d) parts.push_back(fmt::format("{}={}", v.names[d], index[d]));
  return fmt::format("[{}]", fmt::join(parts, sep));
}

// An image layout's storage: its size and how an offset is a pixel.
std::string ImageLines(const View& v) {
  if (!v.layout.image) return "";
  const lang::ImageStorage& im = *v.layout.image;
  std::string out = fmt::format("image: [{}, {}] pixels [width, height], CL_RGBA: 4 elements per pixel\n", im.width,
                                im.height);
  out += fmt::format("offset = (y * {} + x) * 4 + component, pixel (x, y) = ((offset / 4) % {}, offset / {})\n",
                     im.width, im.width, im.width * 4);
  if (const lang::ImageMapping* m = lang::FindImageMapping(v.spec))
    out += fmt::format("pixel mapping (seed 000): {}, k=[0, 4)\n", m->pixel);
  return out;
}

std::string Table(const View& v, const LayoutPrintOptions& o) {
  std::string out = fmt::format("layout {} for {} ({})\n", v.spec, DimsText(v), Args(v));
  if (v.tag) out += fmt::format("tag: {}\n", *v.tag);
  if (v.padded) {
    std::vector<std::string> pd;
    for (size_t d = 0; d < v.dims.size(); ++d)
      pd.push_back((*v.padded)[d] == v.dims[d] ? fmt::format("{}={}", v.names[d], v.dims[d])
                                              : fmt::format("{}={} (padded from {})", v.names[d], (*v.padded)[d], v.dims[d]));
    out += fmt::format("padded dims: {}\n", fmt::join(pd, ", "));
  }
  int64_t logical = v.LogicalCount();
  out += fmt::format("elements: {} ({} logical, {} padding or gaps)\n", v.layout.elements, logical,
                     v.layout.elements - logical);
  out += ImageLines(v);
  out += "physical dims, outermost first:\n";
  out += fmt::format("  {:<6} {:<6} {:>8} {:>8} {:>10}\n", "part", "dim", "divisor", "size", "stride");
  for (size_t k = 0; k < v.layout.phys.size(); ++k) {
    const PhysicalDim& p = v.layout.phys[k];
    out += fmt::format("  {:<6} {:<6} {:>8} {:>8} {:>10}\n", v.TagLabel(k), v.names[p.dim], p.divisor, p.size, p.stride);
  }
  out += fmt::format("offset({}) = {}\n", Args(v), v.NumericFormula());
  int64_t n = v.Listed(o.count);
  out += fmt::format("first {} of {} buffer elements (offset: index):\n", n, v.layout.elements);
  for (int64_t e = 0; e < n; ++e) {
    std::optional<std::vector<int64_t>> index = v.IndexAt(e);
    if (!index) out += fmt::format("  {}: unused\n", e);
    else out += fmt::format("  {}: {}{}\n", e, Brackets(v, *index, ", "), v.IsPadding(*index) ? " padding" : "");
  }
  return out;
}

// clDNN's part names: b, fs (outer), fsv (block; fsv8, fsv2 when f has several).
std::string ClDnnPart(const View& v, size_t k) {
  if (v.is_outer[k]) return v.Name(k) + "s";
  if (!v.Block(k)) return v.Name(k);
  const PhysicalDim& p = v.layout.phys[k];
  return v.blocks_of[p.dim] > 1 ? fmt::format("{}sv{}", v.Name(k), p.size) : v.Name(k) + "sv";
}

std::string ClDnn(const View& v, const LayoutPrintOptions& o) {
  auto sizes = [&](const std::vector<int64_t>& d) {
    std::vector<std::string> s;
    for (size_t k = 0; k < d.size(); ++k) s.push_back(fmt::format("{}: {}", v.names[k], d[k]));
    return fmt::format("[{}]", fmt::join(s, "; "));
  };
  std::string out = fmt::format("tensor size {}\n", sizes(v.dims));
  if (v.padded) out += fmt::format("buffer size {}, total size = {}\n", sizes(*v.padded), v.layout.elements);
  bool blocked = false;
  for (size_t k = 0; k < v.layout.phys.size(); ++k) blocked = blocked || v.Split(k);
  for (int64_t e = 0, n = v.Listed(o.count); e < n; ++e) {
    std::optional<std::vector<int64_t>> index = v.IndexAt(e);
    if (!index) {
      out += fmt::format("i = {} => unused;\n", e);
      continue;
    }
    std::string line = fmt::format("i = {} => {}", e, Brackets(v, *index, "; "));
    if (blocked) {
      std::vector<std::string> parts;
      for (size_t k = 0; k < v.layout.phys.size(); ++k) {
        const PhysicalDim& p = v.layout.phys[k];
        int64_t q = (*index)[p.dim] / p.divisor;
        if (v.Block(k)) q %= p.size;
        parts.push_back(fmt::format("{}={}", ClDnnPart(v, k), q));
      }
      line += fmt::format(" == [{}]", fmt::join(parts, "; "));
    }
    out += line + ";";
    if (v.IsPadding(*index)) out += " (padding)";
    out += "\n";
  }
  return out;
}

std::string OneDnn(const View& v) {
  std::string fn = FunctionName(v.spec);
  std::string out;
  const auto& phys = v.layout.phys;
  if (v.tag) {
    bool blocked = false;
    for (size_t k = 0; k < phys.size(); ++k) blocked = blocked || v.Split(k);
    std::vector<std::string> terms;
    for (size_t k = 0; k < phys.size(); ++k) {
      std::string s = v.SymbolicStride(k);
      terms.push_back(s == "1" ? v.Term(k) : fmt::format("{} * {}", v.Term(k), s));
    }
    out += fmt::format("{}({}) = ", fn, Args(v));
    // One line for plain layouts, one term per line for blocked ones, as in the seed.
    if (blocked) out += fmt::format("{}\n", fmt::join(terms, "\n+ "));
    else out += fmt::format("{}\n", fmt::join(terms, " + "));
    std::vector<std::string> where;
    for (size_t d = 0; d < v.dims.size(); ++d) {
      int64_t padded = v.padded ? (*v.padded)[d] : v.dims[d];
      where.push_back(padded == v.dims[d] ? fmt::format("{} = {}", Upper(v.names[d]), v.dims[d])
                                          : fmt::format("{} = {} (padded from {})", Upper(v.names[d]), padded, v.dims[d]));
    }
    out += fmt::format("where {}:\n", fmt::join(where, ", "));
  }
  out += fmt::format("{}({}) = {}\n", fn, Args(v), v.NumericFormula());
  // oneDNN's blocking descriptor: a stride per logical dim (of its outer or
  // only part) and the inner blocks, which must all be innermost.
  std::vector<int64_t> strides(v.dims.size(), 0);
  std::vector<int64_t> inner_idxs, inner_blks;
  size_t first_block = phys.size();
  for (size_t k = phys.size(); k-- > 0 && v.Block(k);) first_block = k;
  bool descriptor = v.padded.has_value();
  for (size_t k = 0; k < phys.size(); ++k) {
    if (v.Block(k)) {
      if (k < first_block) descriptor = false;
      inner_idxs.push_back(phys[k].dim);
      inner_blks.push_back(phys[k].size);
    } else {
      strides[phys[k].dim] = phys[k].stride;
    }
  }
  out += fmt::format("dims = {{{}}}\n", fmt::join(v.dims, ", "));
  if (!descriptor) return out + "(no oneDNN blocking descriptor: a block is not innermost)\n";
  out += fmt::format("padded_dims = {{{}}}\n", fmt::join(*v.padded, ", "));
  out += fmt::format("strides = {{{}}}\n", fmt::join(strides, ", "));
  out += fmt::format("inner_nblks = {}\n", inner_blks.size());
  out += fmt::format("inner_idxs = {{{}}}\n", fmt::join(inner_idxs, ", "));
  out += fmt::format("inner_blks = {{{}}}\n", fmt::join(inner_blks, ", "));
  return out;
}

// Memory order as the seed's figures number elements: by their plain
// (row-major) position, four digits, "pad" for padding.
std::string MegEngine(const View& v, const LayoutPrintOptions& o) {
  int64_t logical = v.LogicalCount();
  size_t width = std::max<size_t>(4, std::to_string(std::max<int64_t>(logical - 1, 0)).size());
  std::string out = fmt::format("{} of {} ({}): memory order, each element by its NCHW-style number\n", v.spec,
                                DimsText(v), Args(v));
  constexpr int64_t kPerLine = 8;
  int64_t n = v.Listed(o.count);
  for (int64_t e = 0; e < n; e += kPerLine) {
    std::vector<std::string> items;
    for (int64_t j = e; j < std::min(n, e + kPerLine); ++j) {
      std::optional<std::vector<int64_t>> index = v.IndexAt(j);
      if (!index || v.IsPadding(*index)) {
        items.push_back(fmt::format("{:>{}}", index ? "pad" : "-", width));
        continue;
      }
      int64_t number = 0;
      for (size_t d = 0; d < v.dims.size(); ++d) number = number * v.dims[d] + (*index)[d];
      items.push_back(fmt::format("{:0{}}", number, width));
    }
    out += fmt::format("{:>6}: {}\n", e, fmt::join(items, " "));
  }
  return out;
}

// Seed 000's GPU tables: the image size row, the pixel mapping row, and
// P[x, y] = {E[...] x 4} per pixel (padding components as `pad`).
std::string MaceImage(const View& v, const lang::ImageMapping& m, const LayoutPrintOptions& o) {
  const lang::ImageStorage& im = *v.layout.image;
  std::string buffer(m.letters);
  for (char& c : buffer) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string out = fmt::format("MACE GPU image: {}: {} ({}), buffer {}\n", m.seed_row, m.name, m.mace_name, buffer);
  out += fmt::format("Image size [width, height] = {} = [{}, {}]\n", m.size, im.width, im.height);
  out += fmt::format("{}, k=[0, 4)\n", m.pixel);
  int64_t pixels = (v.Listed(o.count) + 3) / 4;
  for (int64_t p = 0; p < pixels; ++p) {
    std::vector<std::string> items;
    for (int64_t k = 0; k < 4; ++k) {
      std::optional<std::vector<int64_t>> index = v.IndexAt(p * 4 + k);
      items.push_back(!index || v.IsPadding(*index) ? "pad" : fmt::format("E[{}]", fmt::join(*index, ", ")));
    }
    int64_t x = p % std::max<int64_t>(im.width, 1), y = p / std::max<int64_t>(im.width, 1);
    out += fmt::format("P[{}, {}] = {{{}}}\n", x, y, fmt::join(items, ", "));
  }
  return out;
}

std::string Mace(const View& v, const LayoutPrintOptions& o) {
  if (const lang::ImageMapping* m = lang::FindImageMapping(v.spec); m && v.layout.image) return MaceImage(v, *m, o);
  static const std::pair<std::string_view, std::string_view> kTypes[] = {
      {"NCHW", "Intermediate input/output"},
      {"OIHW", "Convolution Filter"},
      {"MIHW", "Depthwise Convolution Filter"},
      {"W", "1-D Argument, length = W"}};
  std::string out;
  for (const auto& [name, type] : kTypes) {
    if (name == v.spec) out += fmt::format("MACE CPU buffer: {}: {}\n", type, name);
  }
  if (out.empty()) out += fmt::format("MACE CPU buffer in layout {} (MACE names NCHW, OIHW, MIHW, W)\n", v.spec);
  out += "(MACE GPU images: image_channel_major, image_height_major, image_width_major, image_conv_filter, "
         "image_dw_filter, image_argument)\n";
  out += fmt::format("buffer[{}] = E[{}]\n", v.NumericFormula(), Args(v));
  for (int64_t e = 0, n = v.Listed(o.count); e < n; ++e) {
    std::optional<std::vector<int64_t>> index = v.IndexAt(e);
    if (!index) out += fmt::format("buffer[{}] unused\n", e);
    else out += fmt::format("buffer[{}] = E[{}]{}\n", e, fmt::join(*index, ", "), v.IsPadding(*index) ? " (padding)" : "");
  }
  return out;
}

}  // namespace

const std::vector<std::pair<std::string, LayoutForm>>& LayoutForms() {
  static const std::vector<std::pair<std::string, LayoutForm>> forms = {{"table", LayoutForm::Table},
                                                                        {"cldnn", LayoutForm::ClDnn},
                                                                        {"onednn", LayoutForm::OneDnn},
                                                                        {"megengine", LayoutForm::MegEngine},
                                                                        {"mace", LayoutForm::Mace}};
  return forms;
}

std::string PrintLayout(std::string_view spec, const Layout& layout, const lang::Shape& shape,
                        const LayoutPrintOptions& options) {
  std::vector<std::string> names = options.names;
  if (names.empty()) names = lang::DimNames(spec, shape.rank());
  if (static_cast<int>(names.size()) != shape.rank())
    TILEC_USER_ERROR("--names lists {} names but the tensor has rank {}", names.size(), shape.rank());
  View v(spec, layout, shape.dims, std::move(names));
  switch (options.form) {
    case LayoutForm::Table: return Table(v, options);
    case LayoutForm::ClDnn: return ClDnn(v, options);
    case LayoutForm::OneDnn: return OneDnn(v);
    case LayoutForm::MegEngine: return MegEngine(v, options);
    case LayoutForm::Mace: return Mace(v, options);
  }
  return {};
}

}  // namespace tilec::tools
