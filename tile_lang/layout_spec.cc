// The oneDNN tag grammar (layout_spec.h): one letter per logical dim, a =
// dim 0, outermost first; upper-case = the outer part of a blocked dim;
// "16b" = an inner block of 16 of dim b.
#include "tile_lang/layout_spec.h"

#include <fmt/format.h>

#include <cctype>
#include <limits>

#include "support/error.h"

namespace tilec::lang::layout_internal {
namespace {

constexpr int64_t kMaxI64 = std::numeric_limits<int64_t>::max();
constexpr int kMaxTagRank = 12;  // oneDNN's letters a..l

char Letter(int dim) { return static_cast<char>('a' + dim); }

}  // namespace

void SpecContext::Fail(std::string_view why) const {
  TILEC_USER_ERROR("bad layout '{}' for a tensor of dimensions [{}]: {}", spec_,
                   fmt::join(dims_, ", "), why);
}

int64_t SpecContext::Mul(int64_t a, int64_t b) const {
  if (a != 0 && b > kMaxI64 / a) Fail("the buffer size does not fit in 64 bits");
  return a * b;
}

int64_t SpecContext::Add(int64_t a, int64_t b) const {
  if (b > kMaxI64 - a) Fail("the buffer size does not fit in 64 bits");
  return a + b;
}

std::vector<TagPart> ParseTag(std::string_view tag, const SpecContext& ctx, std::string_view what) {
  auto fail = [&](std::string_view why) { ctx.Fail(fmt::format("{} {}", what, why)); };
  const int rank = ctx.rank();
  if (rank > kMaxTagRank) fail(fmt::format("is for rank {}; tags go up to rank {}", rank, kMaxTagRank));
  std::vector<TagPart> parts;
  size_t k = 0;
  while (k < tag.size()) {
    size_t start = k;
    while (k < tag.size() && std::isdigit(static_cast<unsigned char>(tag[k]))) ++k;
    int64_t block = -1;  // no number
    for (size_t j = start; j < k; ++j) {
      int digit = tag[j] - '0';
      if (block < 0) block = 0;
      if (block > (kMaxI64 - digit) / 10)
        fail(fmt::format("has a block '{}' that does not fit in 64 bits", tag.substr(start, k - start)));
      block = block * 10 + digit;
    }
    if (k == tag.size()) fail(fmt::format("ends with the number {} (a block size goes before its letter, as in 16b)", block));
    char c = tag[k++];
    if (!std::isalpha(static_cast<unsigned char>(c)))
      fail(fmt::format("has '{}' where a letter (a dimension) or a block size is expected", c));
    bool upper = std::isupper(static_cast<unsigned char>(c));
    int dim = std::tolower(static_cast<unsigned char>(c)) - 'a';
    if (dim >= rank) {
      fail(fmt::format("names dimension '{}' (dimension {}), but a rank-{} tensor has the letters {}", c, dim,
                       rank, rank == 0 ? std::string("none") : fmt::format("a..{}", Letter(rank - 1))));
    }
    if (block >= 0) {
      if (upper) fail(fmt::format("has the block size {} before the upper-case '{}' (a block is written {}{})",
                                  block, c, block, static_cast<char>(std::tolower(c))));
      if (block == 0) fail(fmt::format("has a block of 0 for dimension '{}'", c));
      parts.push_back({dim, TagPart::Block, block});
    } else {
      parts.push_back({dim, upper ? TagPart::Outer : TagPart::Plain, 0});
    }
  }
  // Every dim once as a letter; blocks exactly for the upper-case ones.
  std::vector<int> letters(rank, 0), blocks(rank, 0);
  std::vector<bool> upper(rank, false);
  for (const TagPart& p : parts) {
    if (p.kind == TagPart::Block) {
      ++blocks[p.dim];
      continue;
    }
    ++letters[p.dim];
    upper[p.dim] = p.kind == TagPart::Outer;
  }
  for (int d = 0; d < rank; ++d) {
    char lower = Letter(d), up = static_cast<char>(std::toupper(lower));
    if (letters[d] == 0) {
      fail(fmt::format("has no letter for dimension {} ('{}' or '{}'): a rank-{} tensor needs each of a..{} once",
                       d, lower, up, rank, Letter(rank - 1)));
    }
    if (letters[d] > 1) fail(fmt::format("gives dimension '{}' ({}) more than once", lower, d));
    if (upper[d] && blocks[d] == 0)
      fail(fmt::format("writes '{}' upper-case (the outer part of a blocked dimension) but has no block of it, "
                       "such as 16{}", up, lower));
    if (!upper[d] && blocks[d] > 0)
      fail(fmt::format("has blocks of '{}' but writes it lower-case; its outer part is written '{}'", lower, up));
  }
  return parts;
}

Layout BuildTagLayout(std::string name, const std::vector<TagPart>& parts, const SpecContext& ctx) {
  const std::vector<int64_t>& dims = ctx.dims();
  // Per dim, the product of its blocks, and per block part, the product of
  // the later blocks of its dim.
  std::vector<int64_t> product(dims.size(), 1);
  std::vector<int64_t> divisor(parts.size(), 1);
  for (size_t k = parts.size(); k-- > 0;) {
    const TagPart& p = parts[k];
    if (p.kind != TagPart::Block) continue;
    divisor[k] = product[p.dim];
    product[p.dim] = ctx.Mul(product[p.dim], p.block);
  }
  Layout l;
  l.name = std::move(name);
  l.phys.resize(parts.size());
  for (size_t k = 0; k < parts.size(); ++k) {
    const TagPart& p = parts[k];
    int64_t dim = dims[p.dim];
    switch (p.kind) {
      case TagPart::Plain: l.phys[k] = {p.dim, 1, dim, 0}; break;
      case TagPart::Outer: {
        int64_t b = product[p.dim];
        l.phys[k] = {p.dim, b, dim / b + (dim % b != 0), 0};
        break;
      }
      case TagPart::Block: l.phys[k] = {p.dim, divisor[k], p.block, 0}; break;
    }
  }
  int64_t stride = 1;
  for (size_t k = parts.size(); k-- > 0;) {
    l.phys[k].stride = stride;
    stride = ctx.Mul(stride, l.phys[k].size);
  }
  // An empty tensor needs no storage, however its blocks would pad it.
  bool empty = false;
  for (int64_t d : dims) empty = empty || d == 0;
  l.elements = empty ? 0 : stride;
  return l;
}

std::string FormatTag(const std::vector<TagPart>& parts) {
  std::string s;
  for (const TagPart& p : parts) {
    char c = Letter(p.dim);
    if (p.kind == TagPart::Block) s += std::to_string(p.block);
    s += p.kind == TagPart::Outer ? static_cast<char>(std::toupper(c)) : c;
  }
  return s;
}

}  // namespace tilec::lang::layout_internal
