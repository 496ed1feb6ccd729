// Converters for ONNX's data-movement ops: Shape, Reshape and its kin,
// Transpose, Concat, Split, Slice, Gather, Expand, Pad, Tile,
// ConstantOfShape. Moves are `=` contractions whose index polynomials say
// where each element goes; shape arithmetic is folded at import time.
#include <fmt/format.h>

#include <numeric>

#include "frontend/onnx/converter.h"

namespace tilec::onnx_import {
namespace {

lang::Tensor IntVector(const std::vector<int64_t>& v) {
  lang::Tensor t(lang::Shape{lang::DataType::I64, {static_cast<int64_t>(v.size())}});
  for (size_t i = 0; i < v.size(); ++i) t.SetInt(static_cast<int64_t>(i), v[i]);
  return t;
}

void ShapeOp(NodeContext& c) {
  std::vector<int64_t> dims = c.In(0).shape.dims;
  int64_t r = static_cast<int64_t>(dims.size());
  int64_t start = c.Int("start", 0), end = c.Int("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, start, r);
  c.DefineConstant(0, IntVector({dims.begin() + start, dims.begin() + end}));
}

void SizeOp(NodeContext& c) {
  lang::Tensor t(lang::Shape{lang::DataType::I64, {}});
  t.SetInt(0, Product(c.In(0).shape.dims));
  c.DefineConstant(0, t);
}

// Y = X's elements in row-major order with dims `dims`.
void EmitReshape(NodeContext& c, const std::vector<int64_t>& dims) {
  const lang::Shape x = c.In(0).shape;
  if (Product(dims) != Product(x.dims))
    c.Fail(fmt::format("cannot reshape [{}] ({} elements) to [{}]", JoinInts(x.dims), Product(x.dims), JoinInts(dims)));
  std::string xs = c.Ref(0), name = c.OutName(0);
  if (dims == x.dims)
    c.Emit(fmt::format("{} = {}", name, xs));
  else
    c.Emit(fmt::format("{} = reshape({}{}{})", name, xs, dims.empty() ? "" : ", ", JoinInts(dims)));
  c.Define(0, lang::Shape{x.dtype, dims});
}

void Reshape(NodeContext& c) {
  const lang::Shape x = c.In(0).shape;
  std::vector<int64_t> dims = c.since() < 5 ? c.Ints("shape") : c.ConstantInts(1, "shape");
  bool allow_zero = c.Int("allowzero", 0) != 0;
  int infer = -1;
  int64_t known = 1;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] == 0 && !allow_zero) {
      if (k >= x.dims.size()) c.Fail("a 0 in the shape copies a dimension the input does not have");
      dims[k] = x.dims[k];
    }
    if (dims[k] == -1) {
      if (infer >= 0) c.Fail("the shape has more than one -1");
      infer = static_cast<int>(k);
    } else if (dims[k] < 0) {
      c.Fail(fmt::format("the shape has a negative dimension {}", dims[k]));
    } else {
      known *= dims[k];
    }
  }
  if (infer >= 0) {
    if (known == 0 || Product(x.dims) % known != 0) c.Fail("the -1 of the shape cannot be inferred");
    dims[infer] = Product(x.dims) / known;
  }
  EmitReshape(c, dims);
}

void Flatten(NodeContext& c) {
  const lang::Shape x = c.In(0).shape;
  int r = x.rank();
  int64_t axis = c.Int("axis", 1);
  if (axis < -r || axis > r) c.Fail(fmt::format("axis {} is out of range for rank {}", axis, r));
  if (axis < 0) axis += r;
  EmitReshape(c, {Product(x.dims, 0, axis), Product(x.dims, axis)});
}

void Squeeze(NodeContext& c) {
  const lang::Shape x = c.In(0).shape;
  std::vector<int64_t> axes = c.since() < 13 ? c.Ints("axes") : (c.HasInput(1) ? c.ConstantInts(1, "axes") : std::vector<int64_t>{});
  std::vector<bool> drop(x.rank(), axes.empty());
  if (axes.empty())
    for (int k = 0; k < x.rank(); ++k) drop[k] = x.dims[k] == 1;
  for (int64_t a : axes) {
    int64_t k = NormalizeAxis(c, a, x.rank());
    if (x.dims[k] != 1) c.Fail(fmt::format("axis {} has size {}, not 1", a, x.dims[k]));
    drop[k] = true;
  }
  std::vector<int64_t> dims;
  for (int k = 0; k < x.rank(); ++k)
    if (!drop[k]) dims.push_back(x.dims[k]);
  EmitReshape(c, dims);
}

void Unsqueeze(NodeContext& c) {
  const lang::Shape x = c.In(0).shape;
  std::vector<int64_t> axes = c.since() < 13 ? c.Ints("axes") : c.ConstantInts(1, "axes");
  int r = x.rank() + static_cast<int>(axes.size());
  std::vector<bool> added(r, false);
  for (int64_t a : axes) {
    int64_t k = NormalizeAxis(c, a, r);
    if (added[k]) c.Fail(fmt::format("axis {} is given twice", a));
    added[k] = true;
  }
  std::vector<int64_t> dims;
  size_t next = 0;
  for (int k = 0; k < r; ++k) dims.push_back(added[k] ? 1 : x.dims[next++]);
  EmitReshape(c, dims);
}

void Transpose(NodeContext& c) {
  const lang::Shape x = c.In(0).shape;
  int r = x.rank();
  std::vector<int64_t> perm = c.Ints("perm");
  if (perm.empty())
    for (int k = r - 1; k >= 0; --k) perm.push_back(k);
  if (static_cast<int>(perm.size()) != r) c.Fail("perm does not have one entry per axis");
  std::vector<std::string> out_idx = IndexNames(r), x_idx(r), sizes;
  std::vector<int64_t> dims;
  std::vector<bool> seen(r, false);
  for (int k = 0; k < r; ++k) {
    int64_t p = NormalizeAxis(c, perm[k], r);
    if (seen[p]) c.Fail("perm is not a permutation");
    seen[p] = true;
    x_idx[p] = out_idx[k];
    dims.push_back(x.dims[p]);
    sizes.push_back(std::to_string(x.dims[p]));
  }
  std::string xs = c.Ref(0), name = c.OutName(0);
  c.Emit(fmt::format("{}[{} : {}] = =({}[{}])", name, Join(out_idx), Join(sizes), xs, Join(x_idx)));
  c.Define(0, lang::Shape{x.dtype, dims});
}

void Concat(NodeContext& c) {
  const lang::Shape first = c.In(0).shape;
  int r = first.rank();
  int64_t axis = NormalizeAxis(c, c.Int("axis", 0), r);
  std::vector<int64_t> dims = first.dims;
  dims[axis] = 0;
  std::vector<int64_t> offsets;
  for (size_t i = 0; i < c.input_count(); ++i) {
    const lang::Shape& s = c.In(i).shape;
    if (s.rank() != r) c.Fail("the inputs have different ranks");
    for (int k = 0; k < r; ++k)
      if (k != axis && s.dims[k] != first.dims[k]) c.Fail("the inputs differ outside the concatenation axis");
    offsets.push_back(dims[axis]);
    dims[axis] += s.dims[axis];
  }
  std::vector<std::string> sizes;
  for (int64_t d : dims) sizes.push_back(std::to_string(d));
  std::string name = c.OutName(0), prev;
  std::vector<size_t> parts;
  for (size_t i = 0; i < c.input_count(); ++i)
    if (c.In(i).shape.dims[axis] > 0) parts.push_back(i);
  for (size_t p = 0; p < parts.size(); ++p) {
    size_t i = parts[p];
    std::vector<std::string> x_idx = IndexNames(r), out_idx = x_idx;
    out_idx[axis] = Affine(1, x_idx[axis], offsets[i]);
    std::string target = p + 1 == parts.size() ? name : c.Temp(fmt::format("part{}", p));
    std::string xs = c.Ref(i);
    c.Emit(fmt::format("{}[{} : {}] = =({}[{}]){}", target, Join(out_idx), Join(sizes), xs, Join(x_idx),
                       prev.empty() ? "" : " default " + prev));
    prev = target;
  }
  if (parts.empty()) c.Fail("every input is empty");
  c.Define(0, lang::Shape{first.dtype, dims});
}

// out[...] = x[... start + step * i ...] along one axis.
void EmitSlice(NodeContext& c, size_t out, const std::string& xs, const lang::Shape& x,
               const std::vector<int64_t>& starts, const std::vector<int64_t>& steps, const std::vector<int64_t>& dims) {
  std::vector<std::string> out_idx = IndexNames(x.rank()), x_idx, sizes;
  for (int k = 0; k < x.rank(); ++k) {
    x_idx.push_back(Affine(steps[k], out_idx[k], starts[k]));
    sizes.push_back(std::to_string(dims[k]));
  }
  std::string name = c.OutName(out);
  c.Emit(fmt::format("{}[{} : {}] = =({}[{}])", name, Join(out_idx), Join(sizes), xs, Join(x_idx)));
  c.Define(out, lang::Shape{x.dtype, dims});
}

void Split(NodeContext& c) {
  const lang::Shape x = c.In(0).shape;
  int r = x.rank();
  int64_t axis = NormalizeAxis(c, c.Int("axis", 0), r);
  std::vector<int64_t> split = c.since() < 13 ? c.Ints("split") : (c.HasInput(1) ? c.ConstantInts(1, "split") : std::vector<int64_t>{});
  size_t n = c.output_count();
  if (split.empty()) {
    if (x.dims[axis] % static_cast<int64_t>(n) != 0)
      c.Fail(fmt::format("axis {} of size {} does not split evenly into {} outputs", axis, x.dims[axis], n));
    split.assign(n, x.dims[axis] / static_cast<int64_t>(n));
  }
  if (split.size() != n || std::accumulate(split.begin(), split.end(), int64_t{0}) != x.dims[axis])
    c.Fail("the split sizes do not add up to the axis' size");
  std::string xs = c.Ref(0);
  int64_t offset = 0;
  for (size_t i = 0; i < n; ++i) {
    std::vector<int64_t> starts(r, 0), steps(r, 1), dims = x.dims;
    starts[axis] = offset;
    dims[axis] = split[i];
    offset += split[i];
    if (c.WantsOutput(i)) EmitSlice(c, i, xs, x, starts, steps, dims);
  }
}

void Slice(NodeContext& c) {
  const lang::Shape x = c.In(0).shape;
  int r = x.rank();
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.since() < 10) {
    starts = c.Ints("starts");
    ends = c.Ints("ends");
    axes = c.Ints("axes");
  } else {
    starts = c.ConstantInts(1, "starts");
    ends = c.ConstantInts(2, "ends");
    if (c.HasInput(3)) axes = c.ConstantInts(3, "axes");
    if (c.HasInput(4)) steps = c.ConstantInts(4, "steps");
  }
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    c.Fail("starts, ends, axes and steps differ in length");
  std::vector<int64_t> first(r, 0), step(r, 1), dims = x.dims;
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t a = NormalizeAxis(c, axes[i], r), d = x.dims[a], s = steps[i];
    if (s == 0) c.Fail("a step is 0");
    int64_t b = starts[i] < 0 ? starts[i] + d : starts[i], e = ends[i] < 0 ? ends[i] + d : ends[i];
    if (ends[i] < -d && s < 0) e = -1;
    if (s > 0) {
      b = std::clamp<int64_t>(b, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
    } else {
      b = std::clamp<int64_t>(b, 0, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
    }
    int64_t count = s > 0 ? (e - b + s - 1) / s : (b - e + (-s) - 1) / (-s);
    first[a] = b;
    step[a] = s;
    dims[a] = std::max<int64_t>(0, count);
  }
  if (Product(dims) == 0) c.Fail("the slice is empty, which Tilec does not support");
  EmitSlice(c, 0, c.Ref(0), x, first, step, dims);
}

void Gather(NodeContext& c) {
  const lang::Shape x = c.In(0).shape, idx = c.In(1).shape;
  int r = x.rank();
  int64_t axis = NormalizeAxis(c, c.Int("axis", 0), r), d = x.dims[axis];
  std::vector<int64_t> dims(x.dims.begin(), x.dims.begin() + axis);
  dims.insert(dims.end(), idx.dims.begin(), idx.dims.end());
  dims.insert(dims.end(), x.dims.begin() + axis + 1, x.dims.end());
  if (c.In(1).IsConstant() && idx.rank() <= 1) {
    // Known indices in an arithmetic progression: a strided slice.
    std::vector<int64_t> v = c.ConstantInts(1, "indices");
    for (int64_t& i : v) {
      if (i < -d || i >= d) c.Fail(fmt::format("index {} is out of range for an axis of size {}", i, d));
      if (i < 0) i += d;
    }
    int64_t step = v.size() > 1 ? v[1] - v[0] : 1;
    bool progression = !v.empty();
    for (size_t k = 1; k < v.size(); ++k) progression = progression && v[k] - v[k - 1] == step;
    if (progression) {
      std::vector<std::string> out_idx = IndexNames(static_cast<int>(dims.size())), x_idx, sizes;
      for (int k = 0; k < r; ++k) {
        if (k < axis) x_idx.push_back(out_idx[k]);
        if (k == axis) x_idx.push_back(idx.rank() == 0 ? std::to_string(v[0]) : Affine(step, out_idx[k], v[0]));
        if (k > axis) x_idx.push_back(out_idx[k - 1 + idx.rank()]);
      }
      for (int64_t s : dims) sizes.push_back(std::to_string(s));
      std::string xs = c.Ref(0), name = c.OutName(0);
      c.Emit(fmt::format("{}[{} : {}] = =({}[{}])", name, Join(out_idx), Join(sizes), xs, Join(x_idx)));
      c.Define(0, lang::Shape{x.dtype, dims});
      return;
    }
  }
  if (!lang::IsInteger(idx.dtype)) c.Fail("indices must be integers");
  // gather() takes axis 0: move `axis` to the front, gather, move back.
  std::string xs = c.Ref(0), is = c.Ref(1), name = c.OutName(0);
  std::string src = xs;
  if (axis != 0) {
    src = c.Temp("front");
    std::vector<std::string> x_idx = IndexNames(r), t_idx{x_idx[axis]}, sizes{std::to_string(d)};
    for (int k = 0; k < r; ++k)
      if (k != axis) {
        t_idx.push_back(x_idx[k]);
        sizes.push_back(std::to_string(x.dims[k]));
      }
    c.Emit(fmt::format("{}[{} : {}] = =({}[{}])", src, Join(t_idx), Join(sizes), xs, Join(x_idx)));
  }
  std::string wrapped = c.Temp("index");
  c.Emit(fmt::format("{} = ({} < 0 ? {} + {} : {})", wrapped, is, is, d, is));
  std::string gathered = axis == 0 ? name : c.Temp("gathered");
  c.Emit(fmt::format("{} = gather({}, {})", gathered, src, wrapped));
  if (axis != 0) {
    // gathered: [idx..., x dims without axis]; wanted: [x[:axis], idx..., x[axis+1:]].
    int ri = idx.rank();
    std::vector<std::string> out_idx = IndexNames(static_cast<int>(dims.size())), g_idx, sizes;
    for (int k = 0; k < ri; ++k) g_idx.push_back(out_idx[axis + k]);
    for (int k = 0; k < axis; ++k) g_idx.push_back(out_idx[k]);
    for (int k = axis + 1; k < r; ++k) g_idx.push_back(out_idx[k - 1 + ri]);
    for (int64_t s : dims) sizes.push_back(std::to_string(s));
    c.Emit(fmt::format("{}[{} : {}] = =({}[{}])", name, Join(out_idx), Join(sizes), gathered, Join(g_idx)));
  }
  c.Define(0, lang::Shape{x.dtype, dims});
}

// out[i...] = x[broadcast index] for a shape x broadcasts to.
void EmitBroadcast(NodeContext& c, const std::string& name, const std::string& xs, const lang::Shape& x,
                   const std::vector<int64_t>& dims) {
  int r = static_cast<int>(dims.size());
  std::vector<std::string> out_idx = IndexNames(r), x_idx, sizes;
  for (int k = 0; k < x.rank(); ++k) {
    int o = k + r - x.rank();
    x_idx.push_back(x.dims[k] == 1 && dims[o] != 1 ? "0" : out_idx[o]);
  }
  for (int64_t s : dims) sizes.push_back(std::to_string(s));
  c.Emit(fmt::format("{}[{} : {}] = =({}[{}])", name, Join(out_idx), Join(sizes), xs, Join(x_idx)));
}

void Expand(NodeContext& c) {
  const lang::Shape x = c.In(0).shape;
  std::vector<int64_t> dims = BroadcastDims(c, x.dims, c.ConstantInts(1, "shape"));
  std::string xs = c.Ref(0), name = c.OutName(0);
  if (dims == x.dims)
    c.Emit(fmt::format("{} = {}", name, xs));
  else
    EmitBroadcast(c, name, xs, x, dims);
  c.Define(0, lang::Shape{x.dtype, dims});
}

void ConstantOfShape(NodeContext& c) {
  std::vector<int64_t> dims = c.ConstantInts(0, "shape");
  lang::Tensor value(lang::Shape{lang::DataType::F32, {1}});
  if (auto t = c.TensorAttr("value")) value = *t;
  if (value.size() != 1) c.Fail("value must have one element");
  for (int64_t d : dims)
    if (d < 0) c.Fail(fmt::format("the shape has a negative dimension {}", d));
  lang::Shape shape{value.dtype(), dims};
  if (Product(dims) <= (1 << 16)) {
    lang::Tensor t(shape);
    for (int64_t i = 0; i < t.size(); ++i) std::memcpy(t.data() + i * value.bytes(), value.data(), value.bytes());
    c.DefineConstant(0, t);
    return;
  }
  lang::Tensor scalar(lang::Shape{value.dtype(), {}});
  std::memcpy(scalar.data(), value.data(), value.bytes());
  std::string v = c.AddConstant("value", scalar), name = c.OutName(0);
  EmitBroadcast(c, name, v, scalar.shape(), dims);
  c.Define(0, shape);
}

void Pad(NodeContext& c) {
  const lang::Shape x = c.In(0).shape;
  int r = x.rank();
  std::string mode = c.String("mode", "constant");
  if (mode != "constant") c.Fail(fmt::format("mode '{}' is not supported (only 'constant')", mode));
  std::vector<int64_t> pads = c.since() < 11 ? c.Ints("pads") : c.ConstantInts(1, "pads");
  if (static_cast<int>(pads.size()) != 2 * r) c.Fail("pads must have two values per axis");
  double value = c.since() < 11 ? c.Float("value", 0) : (c.HasInput(2) ? c.ConstantIn(2, "constant_value").GetDouble(0) : 0.0);
  std::vector<int64_t> dims;
  std::vector<std::string> x_idx = IndexNames(r), out_idx, sizes;
  for (int k = 0; k < r; ++k) {
    dims.push_back(x.dims[k] + pads[k] + pads[k + r]);
    if (dims.back() <= 0) c.Fail("the padded tensor would be empty");
    out_idx.push_back(Affine(1, x_idx[k], pads[k]));
    sizes.push_back(std::to_string(dims.back()));
  }
  std::string xs = c.Ref(0), name = c.OutName(0), fill;
  if (value != 0) {
    lang::Tensor scalar(lang::Shape{x.dtype, {}});
    scalar.SetDouble(0, value);
    fill = c.Temp("fill");
    EmitBroadcast(c, fill, c.AddConstant("value", scalar), scalar.shape(), dims);
  }
  c.Emit(fmt::format("{}[{} : {}] = =({}[{}]){}", name, Join(out_idx), Join(sizes), xs, Join(x_idx),
                     fill.empty() ? "" : " default " + fill));
  c.Define(0, lang::Shape{x.dtype, dims});
}

void TileOp(NodeContext& c) {
  const lang::Shape x = c.In(0).shape;
  std::vector<int64_t> repeats = c.ConstantInts(1, "repeats");
  int r = x.rank();
  if (static_cast<int>(repeats.size()) != r) c.Fail("repeats must have one value per axis");
  std::vector<std::string> x_idx = IndexNames(r), rep = IndexNames(r, "t"), out_idx, sizes, cons;
  std::vector<int64_t> dims;
  for (int k = 0; k < r; ++k) {
    dims.push_back(x.dims[k] * repeats[k]);
    out_idx.push_back(fmt::format("{}*{} + {}", x.dims[k], rep[k], x_idx[k]));
    sizes.push_back(std::to_string(dims.back()));
    cons.push_back(fmt::format("{} < {}", rep[k], repeats[k]));
  }
  std::string xs = c.Ref(0), name = c.OutName(0);
  c.Emit(fmt::format("{}[{} : {}] = =({}[{}]), {}", name, Join(out_idx), Join(sizes), xs, Join(x_idx), Join(cons)));
  c.Define(0, lang::Shape{x.dtype, dims});
}

void Range(NodeContext& c) {
  double start = c.ConstantIn(0, "start").GetDouble(0), limit = c.ConstantIn(1, "limit").GetDouble(0),
         delta = c.ConstantIn(2, "delta").GetDouble(0);
  if (delta == 0) c.Fail("delta is 0");
  int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((limit - start) / delta)));
  lang::Tensor t(lang::Shape{c.In(0).shape.dtype, {n}});
  for (int64_t i = 0; i < n; ++i) t.SetDouble(i, start + static_cast<double>(i) * delta);
  c.DefineConstant(0, t);
}

}  // namespace

std::vector<Registration> ShapeConverters() {
  return {
      {"Shape", 1, ShapeOp},       {"Shape", 13, ShapeOp},       {"Shape", 15, ShapeOp},
      {"Size", 1, SizeOp},         {"Size", 13, SizeOp},         {"Reshape", 5, Reshape},
      {"Reshape", 13, Reshape},    {"Reshape", 14, Reshape},     {"Flatten", 1, Flatten},
      {"Flatten", 9, Flatten},     {"Flatten", 11, Flatten},     {"Flatten", 13, Flatten},
      {"Squeeze", 1, Squeeze},     {"Squeeze", 11, Squeeze},     {"Squeeze", 13, Squeeze},
      {"Unsqueeze", 1, Unsqueeze}, {"Unsqueeze", 11, Unsqueeze}, {"Unsqueeze", 13, Unsqueeze},
      {"Transpose", 1, Transpose}, {"Transpose", 13, Transpose}, {"Concat", 4, Concat},
      {"Concat", 11, Concat},      {"Concat", 13, Concat},       {"Split", 2, Split},
      {"Split", 11, Split},        {"Split", 13, Split},         {"Slice", 1, Slice},
      {"Slice", 10, Slice},        {"Slice", 11, Slice},         {"Slice", 13, Slice},
      {"Gather", 1, Gather},       {"Gather", 11, Gather},       {"Gather", 13, Gather},
      {"Expand", 8, Expand},       {"Expand", 13, Expand},       {"ConstantOfShape", 9, ConstantOfShape},
      {"Pad", 2, Pad},             {"Pad", 11, Pad},             {"Pad", 13, Pad},
      {"Tile", 6, TileOp},         {"Tile", 13, TileOp},         {"Range", 11, Range},
  };
}

}  // namespace tilec::onnx_import
