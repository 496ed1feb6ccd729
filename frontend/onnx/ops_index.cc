// Converters whose Tile is written in index notation: Einsum (a
// contraction as it stands), CumSum (a constrained sum), Trilu, OneHot and
// EyeLike (comparisons of index()), DepthToSpace and SpaceToDepth (moves).
#include <fmt/format.h>

#include <map>

#include "frontend/onnx/converter.h"

namespace tilec::onnx_import {
namespace {

std::string Sizes(const std::vector<int64_t>& dims) {
  std::vector<std::string> s;
  for (int64_t d : dims) s.push_back(std::to_string(d));
  return Join(s);
}

void Einsum(NodeContext& c) {
  std::string eq;
  for (char ch : c.String("equation", "")) if (ch != ' ') eq += ch;
  if (eq.find("...") != std::string::npos) c.Fail("ellipses ('...') are not supported");
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != c.input_count()) c.Fail("the equation's terms do not match the inputs");
  if (terms.size() > 2) c.Fail("more than two operands are not supported");
  std::map<char, int64_t> size;
  std::map<char, int> count;
  for (size_t t = 0; t < terms.size(); ++t) {
    const lang::Shape& s = c.In(t).shape;
    if (static_cast<int>(terms[t].size()) != s.rank())
      c.Fail(fmt::format("term '{}' does not match input {} of rank {}", terms[t], t, s.rank()));
    for (size_t k = 0; k < terms[t].size(); ++k) {
      char ch = terms[t][k];
      if (!std::isalpha(static_cast<unsigned char>(ch))) c.Fail(fmt::format("'{}' is not an index letter", ch));
      if (size.count(ch) && size[ch] != s.dims[k]) c.Fail(fmt::format("index '{}' has two sizes", ch));
      size[ch] = s.dims[k];
      count[ch]++;
    }
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
  } else {  // implicit: the letters used once, in alphabetical order
    for (auto& [ch, n] : count)
      if (n == 1) out += ch;
  }
  auto var = [](char ch) { return fmt::format("e{}", ch); };
  std::vector<std::string> out_idx, refs;
  std::vector<int64_t> dims;
  for (char ch : out) {
    if (!size.count(ch)) c.Fail(fmt::format("output index '{}' is in no input", ch));
    out_idx.push_back(var(ch));
    dims.push_back(size[ch]);
  }
  for (size_t t = 0; t < terms.size(); ++t) {
    std::vector<std::string> idx;
    for (char ch : terms[t]) idx.push_back(var(ch));
    refs.push_back(fmt::format("{}[{}]", c.Ref(t), Join(idx)));
  }
  lang::DataType type = c.In(0).shape.dtype;
  std::string name = c.OutName(0);
  c.Emit(fmt::format("{}[{} : {}] = +({})", name, Join(out_idx), Sizes(dims), fmt::join(refs, " * ")));
  c.Define(0, lang::Shape{type, dims});
}

void CumSum(NodeContext& c) {
  const lang::Shape x = c.In(0).shape;
  int r = x.rank();
  int64_t axis = NormalizeAxis(c, c.ConstantIn(1, "axis").GetInt(0), r), n = x.dims[axis];
  bool exclusive = c.Int("exclusive", 0) != 0, reverse = c.Int("reverse", 0) != 0;
  std::vector<std::string> out_idx = IndexNames(r), x_idx;
  for (int i = 0; i < r; ++i) x_idx.push_back(i == axis ? std::string("k") : out_idx[i]);
  // Forward: k <= i (k < i exclusive); reverse: k >= i (k > i).
  std::string d = reverse ? fmt::format("k - {}", out_idx[axis]) : fmt::format("{} - k", out_idx[axis]);
  std::string constraint = exclusive ? fmt::format("{} - 1 < {}", d, n) : fmt::format("{} < {}", d, n);
  std::string xs = c.Ref(0), name = c.OutName(0);
  c.Emit(fmt::format("{}[{} : {}] = +({}[{}]), {}", name, Join(out_idx), Sizes(x.dims), xs, Join(x_idx), constraint));
  c.Define(0, x);
}

void Trilu(NodeContext& c) {
  const lang::Shape x = c.In(0).shape;
  int r = x.rank();
  if (r < 2) c.Fail("the input needs rank 2 or more");
  int64_t k = c.HasInput(1) ? c.ConstantIn(1, "k").GetInt(0) : 0;
  bool upper = c.Int("upper", 1) != 0;
  std::string xs = c.Ref(0), name = c.OutName(0);
  std::string diff = fmt::format("index({}, {}) - index({}, {})", xs, r - 1, xs, r - 2);
  c.Emit(fmt::format("{} = (as_int({}, 64) {} {} ? {} : 0)", name, diff, upper ? ">=" : "<=", k, xs));
  c.Define(0, x);
}

void EyeLike(NodeContext& c) {
  const lang::Shape x = c.In(0).shape;
  if (x.rank() != 2) c.Fail("the input must be a matrix");
  lang::DataType t = x.dtype;
  if (c.Has("dtype")) {
    auto d = ElementType(static_cast<int>(c.Int("dtype", 1)));
    if (!d) c.Fail("the dtype is not supported");
    t = *d;
  }
  int64_t k = c.Int("k", 0);
  std::string xs = c.Ref(0), name = c.OutName(0);
  c.Emit(fmt::format("{} = {}", name,
                     CastExpr(fmt::format("as_int(index({}, 0), 64) + {} == as_int(index({}, 1), 64)", xs, k, xs), t)));
  c.Define(0, lang::Shape{t, x.dims});
}

void OneHot(NodeContext& c) {
  const lang::Shape idx = c.In(0).shape;
  int64_t depth = static_cast<int64_t>(c.ConstantIn(1, "depth").GetDouble(0));
  const lang::Tensor& values = c.ConstantIn(2, "values");
  if (values.size() != 2 || depth < 1) c.Fail("values must hold [off, on] and depth be positive");
  int r = idx.rank() + 1;
  int64_t axis = NormalizeAxis(c, c.Int("axis", -1), r);
  std::vector<std::string> out_idx = IndexNames(r), i_idx;
  std::vector<int64_t> dims;
  for (int k = 0; k < r; ++k) {
    if (k == axis) {
      dims.push_back(depth);
      continue;
    }
    i_idx.push_back(out_idx[k]);
    dims.push_back(idx.dims[k < axis ? k : k - 1]);
  }
  std::string is = c.Ref(0), name = c.OutName(0), b = c.Temp("indices");
  c.Emit(fmt::format("{}[{} : {}] = =({}[{}])", b, Join(out_idx), Sizes(dims), is, Join(i_idx)));
  lang::DataType t = values.dtype();
  auto off = Literal(values.GetDouble(0), t), on = Literal(values.GetDouble(1), t);
  if (!off || !on) c.Fail("values must be finite");
  std::string wrapped = fmt::format("({} < 0 ? {} + {} : {})", b, b, depth, b);
  c.Emit(fmt::format("{} = {}", name,
                     CastExpr(fmt::format("(as_int({}, 64) == as_int(index({}, {}), 64) ? {} : {})", wrapped, b, axis, *on,
                                          *off),
                              t)));
  c.Define(0, lang::Shape{t, dims});
}

// DepthToSpace (DCR or CRD) and SpaceToDepth on NCHW.
void DepthToSpace(NodeContext& c) {
  const lang::Shape x = c.In(0).shape;
  if (x.rank() != 4) c.Fail("the input must be NCHW");
  int64_t b = c.Int("blocksize", 0), ch = x.dims[1];
  if (b < 1 || ch % (b * b) != 0) c.Fail("the channels are not a multiple of blocksize squared");
  int64_t co = ch / (b * b);
  bool crd = c.String("mode", "DCR") == "CRD";
  std::string channel = crd ? fmt::format("{}*c + {}*i + j", b * b, b) : fmt::format("{}*i + {}*j + c", b * co, co);
  std::vector<int64_t> dims{x.dims[0], co, x.dims[2] * b, x.dims[3] * b};
  std::string xs = c.Ref(0), name = c.OutName(0);
  c.Emit(fmt::format("{}[n, c, {}*h + i, {}*w + j : {}] = =({}[n, {}, h, w]), i < {}, j < {}", name, b, b, Sizes(dims), xs,
                     channel, b, b));
  c.Define(0, lang::Shape{x.dtype, dims});
}

void SpaceToDepth(NodeContext& c) {
  const lang::Shape x = c.In(0).shape;
  if (x.rank() != 4) c.Fail("the input must be NCHW");
  int64_t b = c.Int("blocksize", 0), ch = x.dims[1];
  if (b < 1 || x.dims[2] % b != 0 || x.dims[3] % b != 0) c.Fail("the height and width are not multiples of blocksize");
  std::vector<int64_t> dims{x.dims[0], ch * b * b, x.dims[2] / b, x.dims[3] / b};
  std::string xs = c.Ref(0), name = c.OutName(0);
  c.Emit(fmt::format("{}[n, {}*i + {}*j + c, h, w : {}] = =({}[n, c, {}*h + i, {}*w + j]), i < {}, j < {}", name, b * ch,
                     ch, Sizes(dims), xs, b, b, b, b));
  c.Define(0, lang::Shape{x.dtype, dims});
}

}  // namespace

std::vector<Registration> IndexConverters() {
  return {
      {"Einsum", 12, Einsum},           {"CumSum", 11, CumSum},         {"CumSum", 14, CumSum},
      {"Trilu", 14, Trilu},             {"EyeLike", 9, EyeLike},         {"OneHot", 9, OneHot},
      {"OneHot", 11, OneHot},           {"DepthToSpace", 1, DepthToSpace}, {"DepthToSpace", 11, DepthToSpace},
      {"DepthToSpace", 13, DepthToSpace}, {"SpaceToDepth", 1, SpaceToDepth}, {"SpaceToDepth", 13, SpaceToDepth},
  };
}

}  // namespace tilec::onnx_import
