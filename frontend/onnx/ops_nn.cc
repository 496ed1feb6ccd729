// Converters for ONNX's neural-network ops: Conv (groups, dilations,
// strides, pads, auto_pad), Gemm, MatMul, BatchNormalization, the pools, and
// the normalizations. Each is a contraction in the tensor's own NCHW…
// layout; out-of-range taps of a padded window simply do not exist in Tile,
// so padding needs no padded copy.
#include <fmt/format.h>

#include <cmath>

#include "frontend/onnx/converter.h"

namespace tilec::onnx_import {
namespace {

// A window's geometry along each spatial axis.
struct Windows {
  std::vector<int64_t> kernel, strides, dilations, pad_begin, pad_end, out;
};

Windows Geometry(const NodeContext& c, const std::vector<int64_t>& in, std::vector<int64_t> kernel, bool pool) {
  size_t sp = in.size();
  Windows w;
  w.kernel = std::move(kernel);
  if (w.kernel.size() != sp) c.Fail(fmt::format("kernel_shape has {} values for {} spatial axes", w.kernel.size(), sp));
  w.strides = c.Ints("strides", std::vector<int64_t>(sp, 1));
  w.dilations = c.Ints("dilations", std::vector<int64_t>(sp, 1));
  std::vector<int64_t> pads = c.Ints("pads", std::vector<int64_t>(2 * sp, 0));
  if (w.strides.size() != sp || w.dilations.size() != sp || pads.size() != 2 * sp)
    c.Fail("strides, dilations or pads do not match the number of spatial axes");
  std::string auto_pad = c.String("auto_pad", "NOTSET");
  bool ceil_mode = pool && c.Int("ceil_mode", 0) != 0;
  for (size_t k = 0; k < sp; ++k) {
    int64_t s = w.strides[k], d = w.dilations[k], eff = d * (w.kernel[k] - 1) + 1;
    if (s < 1 || d < 1 || w.kernel[k] < 1) c.Fail("strides, dilations and kernel sizes must be positive");
    int64_t pb = pads[k], pe = pads[k + sp], out;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out = (in[k] + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (out - 1) * s + eff - in[k]);
      pb = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe = total - pb;
    } else if (auto_pad == "VALID") {
      pb = pe = 0;
      out = (in[k] - eff) / s + 1;
    } else if (auto_pad == "NOTSET") {
      int64_t span = in[k] + pb + pe - eff;
      if (span < 0) c.Fail(fmt::format("the window ({}) is larger than the padded input ({})", eff, in[k] + pb + pe));
      out = ceil_mode ? (span + s - 1) / s + 1 : span / s + 1;
      if (ceil_mode && (out - 1) * s >= in[k] + pb) --out;
    } else {
      c.Fail(fmt::format("auto_pad '{}' is not supported", auto_pad));
    }
    if (out < 1) c.Fail("the output would be empty");
    w.pad_begin.push_back(pb);
    w.pad_end.push_back(pe);
    w.out.push_back(out);
  }
  return w;
}

// "2*o0 + k0 - 1": the input position of output `o` and tap `k`.
std::string Tap(const Windows& w, size_t k) {
  std::string o = fmt::format("o{}", k), t = fmt::format("k{}", k);
  std::string s = w.strides[k] == 1 ? o : fmt::format("{}*{}", w.strides[k], o);
  s += w.dilations[k] == 1 ? " + " + t : fmt::format(" + {}*{}", w.dilations[k], t);
  if (w.pad_begin[k] > 0) s += fmt::format(" - {}", w.pad_begin[k]);
  if (w.pad_begin[k] < 0) s += fmt::format(" + {}", -w.pad_begin[k]);
  return s;
}

std::vector<int64_t> Spatial(const lang::Shape& s) { return {s.dims.begin() + 2, s.dims.end()}; }

// A [C] vector as a [C, 1, …] tensor that broadcasts over NCHW's channels.
std::string ChannelVector(NodeContext& c, size_t input, int rank, std::string_view hint) {
  const Value& v = c.In(input);
  if (v.shape.rank() != 1) c.Fail(fmt::format("input {} must be a vector", input));
  std::vector<int64_t> dims(rank - 1, 1);
  dims[0] = v.shape.dims[0];
  if (v.IsConstant()) {
    lang::Tensor t(lang::Shape{v.shape.dtype, dims});
    if (t.bytes() > 0) std::memcpy(t.data(), v.constant->data(), t.bytes());
    return c.AddConstant(hint, std::move(t));
  }
  std::string name = c.Temp(hint);
  c.Emit(fmt::format("{} = reshape({}, {})", name, c.Ref(input), JoinInts(dims)));
  return name;
}

// The index lists of a convolution's contraction O[out] = +(X[x] * W[w]), constraint.
struct ConvIndices {
  std::vector<std::string> out, x, w, sizes;
  std::string constraint;  // ", c < 4" or empty
};

// Conv and ConvTranspose: the contraction, then the bias (input 2) added
// over the channels; output 0 is [N, co, spatial...].
void EmitConvolution(NodeContext& c, const ConvIndices& i, int64_t co, const std::vector<int64_t>& spatial) {
  const lang::Shape x = c.In(0).shape;
  lang::Shape out{x.dtype, {x.dims[0], co}};
  out.dims.insert(out.dims.end(), spatial.begin(), spatial.end());
  std::string xs = c.Ref(0), ws = c.Ref(1);
  std::string bias = c.HasInput(2) ? ChannelVector(c, 2, x.rank(), "bias") : "";
  std::string name = c.OutName(0);
  std::string target = bias.empty() ? name : c.Temp("conv");
  c.Emit(fmt::format("{}[{} : {}] = +({}[{}] * {}[{}]){}", target, Join(i.out), Join(i.sizes), xs, Join(i.x), ws,
                     Join(i.w), i.constraint));
  if (!bias.empty()) c.Emit(fmt::format("{} = {} + {}", name, target, bias));
  c.Define(0, out);
}

void Conv(NodeContext& c) {
  const lang::Shape x = c.In(0).shape, w = c.In(1).shape;
  int r = x.rank();
  if (r < 3 || w.rank() != r) c.Fail("input and weights must have the same rank, at least 3 (N, C, spatial…)");
  int64_t group = c.Int("group", 1), ci = x.dims[1], co = w.dims[0], cig = w.dims[1];
  if (group < 1 || cig * group != ci || co % group != 0)
    c.Fail(fmt::format("{} input channels, {} weight channels and group {} do not fit", ci, cig, group));
  int64_t cog = co / group;
  std::vector<int64_t> kernel(w.dims.begin() + 2, w.dims.end());
  if (c.Has("kernel_shape") && c.Ints("kernel_shape") != kernel) c.Fail("kernel_shape differs from the weights' shape");
  Windows g = Geometry(c, Spatial(x), kernel, false);
  size_t sp = g.out.size();
  std::vector<std::string> out_idx{"n"}, x_idx{"n"}, w_idx, sizes{std::to_string(x.dims[0]), std::to_string(co)};
  std::string constraint;
  if (group == 1) {
    out_idx.push_back("co");
    x_idx.push_back("ci");
    w_idx = {"co", "ci"};
  } else if (cig == 1 && cog == 1) {  // depthwise
    out_idx.push_back("c");
    x_idx.push_back("c");
    w_idx = {"c", "0"};
  } else {
    out_idx.push_back(fmt::format("{}*g + c", cog));
    x_idx.push_back(cig == 1 ? "g" : fmt::format("{}*g + ci", cig));
    w_idx = {fmt::format("{}*g + c", cog), cig == 1 ? "0" : "ci"};
    constraint = fmt::format(", c < {}", cog);
  }
  for (size_t k = 0; k < sp; ++k) {
    out_idx.push_back(fmt::format("o{}", k));
    x_idx.push_back(Tap(g, k));
    w_idx.push_back(fmt::format("k{}", k));
    sizes.push_back(std::to_string(g.out[k]));
  }
  EmitConvolution(c, {out_idx, x_idx, w_idx, sizes, constraint}, co, g.out);
}

// ConvTranspose: each input position scatters its window into the output;
// in Tile that is a contraction whose output index is the affine
// s*i + d*k - pad (positions outside the output do not exist), so no
// scatter is written. W is [CI, CO/group, k...].
void ConvTranspose(NodeContext& c) {
  const lang::Shape x = c.In(0).shape, w = c.In(1).shape;
  int r = x.rank();
  if (r < 3 || w.rank() != r) c.Fail("input and weights must have the same rank, at least 3");
  size_t sp = static_cast<size_t>(r - 2);
  int64_t group = c.Int("group", 1), ci = x.dims[1], cog = w.dims[1], co = cog * group;
  if (group < 1 || w.dims[0] != ci || ci % group != 0) c.Fail("input channels, weights and group do not fit");
  int64_t cig = ci / group;
  std::vector<int64_t> kernel(w.dims.begin() + 2, w.dims.end());
  std::vector<int64_t> strides = c.Ints("strides", std::vector<int64_t>(sp, 1)),
                       dil = c.Ints("dilations", std::vector<int64_t>(sp, 1)),
                       pads = c.Ints("pads", std::vector<int64_t>(2 * sp, 0)),
                       out_pad = c.Ints("output_padding", std::vector<int64_t>(sp, 0)),
                       out_shape = c.Ints("output_shape");
  std::string auto_pad = c.String("auto_pad", "NOTSET");
  if (strides.size() != sp || dil.size() != sp || pads.size() != 2 * sp || out_pad.size() != sp)
    c.Fail("strides, dilations, pads or output_padding do not match the spatial axes");
  if (!out_shape.empty() && out_shape.size() != sp) {
    if (out_shape.size() == static_cast<size_t>(r)) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
    else c.Fail("output_shape does not match the spatial axes");
  }
  std::vector<int64_t> out(sp), pad_begin(sp);
  for (size_t k = 0; k < sp; ++k) {
    int64_t in = x.dims[2 + k], full = strides[k] * (in - 1) + out_pad[k] + (kernel[k] - 1) * dil[k] + 1;
    if (!out_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      int64_t want = out_shape.empty() ? in * strides[k] : out_shape[k];
      int64_t total = full - want;
      // As ONNX's reference computes it: floor division (total may be negative).
      int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      pad_begin[k] = auto_pad == "SAME_UPPER" ? half : total - half;
      out[k] = want;
    } else if (auto_pad == "NOTSET" || auto_pad == "VALID") {
      int64_t pb = auto_pad == "VALID" ? 0 : pads[k], pe = auto_pad == "VALID" ? 0 : pads[k + sp];
      pad_begin[k] = pb;
      out[k] = full - pb - pe;
    } else {
      c.Fail(fmt::format("auto_pad '{}' is not supported", auto_pad));
    }
    if (out[k] < 1) c.Fail("the output would be empty");
  }
  std::vector<std::string> out_idx{"n"}, x_idx{"n"}, w_idx, sizes{std::to_string(x.dims[0]), std::to_string(co)};
  std::string constraint;
  if (group == 1) {
    out_idx.push_back("co");
    x_idx.push_back("ci");
    w_idx = {"ci", "co"};
  } else {
    out_idx.push_back(fmt::format("{}*g + c", cog));
    x_idx.push_back(fmt::format("{}*g + ci", cig));
    w_idx = {fmt::format("{}*g + ci", cig), "c"};
    constraint = fmt::format(", ci < {}", cig);
  }
  for (size_t k = 0; k < sp; ++k) {
    std::string o = fmt::format("{}*i{} + {}*k{}", strides[k], k, dil[k], k);
    if (pad_begin[k] > 0) o += fmt::format(" - {}", pad_begin[k]);
    if (pad_begin[k] < 0) o += fmt::format(" + {}", -pad_begin[k]);
    out_idx.push_back(o);
    x_idx.push_back(fmt::format("i{}", k));
    w_idx.push_back(fmt::format("k{}", k));
    sizes.push_back(std::to_string(out[k]));
  }
  EmitConvolution(c, {out_idx, x_idx, w_idx, sizes, constraint}, co, out);
}

void Gemm(NodeContext& c) {
  const lang::Shape a = c.In(0).shape, b = c.In(1).shape;
  if (a.rank() != 2 || b.rank() != 2) c.Fail("A and B must be matrices");
  bool ta = c.Int("transA", 0), tb = c.Int("transB", 0);
  int64_t m = ta ? a.dims[1] : a.dims[0], k = ta ? a.dims[0] : a.dims[1];
  int64_t n = tb ? b.dims[0] : b.dims[1], kb = tb ? b.dims[1] : b.dims[0];
  if (k != kb) c.Fail(fmt::format("A's {} columns do not match B's {} rows", k, kb));
  double alpha = c.Float("alpha", 1.0f), beta = c.Float("beta", 1.0f);
  std::string as = c.Ref(0), bs = c.Ref(1);
  bool has_c = c.HasInput(2) && beta != 0;
  std::string cs = has_c ? c.Ref(2) : "";
  std::string name = c.OutName(0);
  bool direct = alpha == 1 && !has_c;
  std::string p = direct ? name : c.Temp("mm");
  c.Emit(fmt::format("{}[i, j : {}, {}] = +({}[{}] * {}[{}])", p, m, n, as, ta ? "k, i" : "i, k", bs,
                     tb ? "j, k" : "k, j"));
  if (!direct) {
    std::string e = alpha == 1 ? p : fmt::format("{} * {}", *Literal(alpha, a.dtype), p);
    if (has_c) e += beta == 1 ? fmt::format(" + {}", cs) : fmt::format(" + {} * {}", *Literal(beta, a.dtype), cs);
    c.Emit(fmt::format("{} = {}", name, e));
  }
  if (has_c) BroadcastDims(c, {m, n}, c.In(2).shape.dims);
  c.Define(0, lang::Shape{a.dtype, {m, n}});
}

void MatMul(NodeContext& c) {
  const lang::Shape a = c.In(0).shape, b = c.In(1).shape;
  if (a.rank() < 1 || b.rank() < 1) c.Fail("MatMul needs inputs of rank 1 or more");
  int ra = a.rank(), rb = b.rank();
  int64_t k = a.dims[ra - 1], kb = rb == 1 ? b.dims[0] : b.dims[rb - 2];
  if (k != kb) c.Fail(fmt::format("A's last dimension {} does not match B's {}", k, kb));
  std::vector<int64_t> ba(a.dims.begin(), a.dims.end() - std::min(ra, 2)), bb(b.dims.begin(), b.dims.end() - std::min(rb, 2));
  std::vector<int64_t> batch = BroadcastDims(c, ba, bb);
  std::vector<std::string> out_idx, a_idx, b_idx, sizes;
  size_t nb = batch.size();
  for (size_t i = 0; i < nb; ++i) {
    out_idx.push_back(fmt::format("b{}", i));
    sizes.push_back(std::to_string(batch[i]));
  }
  auto batch_index = [&](const std::vector<int64_t>& dims, std::vector<std::string>& idx) {
    for (size_t i = 0; i < dims.size(); ++i) {
      size_t o = i + nb - dims.size();
      idx.push_back(dims[i] == 1 && batch[o] != 1 ? "0" : fmt::format("b{}", o));
    }
  };
  batch_index(ba, a_idx);
  batch_index(bb, b_idx);
  lang::Shape out{a.dtype, batch};
  if (ra >= 2) {
    a_idx.push_back("i");
    out_idx.push_back("i");
    sizes.push_back(std::to_string(a.dims[ra - 2]));
    out.dims.push_back(a.dims[ra - 2]);
  }
  a_idx.push_back("k");
  b_idx.push_back("k");
  if (rb >= 2) {
    b_idx.push_back("j");
    out_idx.push_back("j");
    sizes.push_back(std::to_string(b.dims[rb - 1]));
    out.dims.push_back(b.dims[rb - 1]);
  }
  std::string as = c.Ref(0), bs = c.Ref(1), name = c.OutName(0);
  c.Emit(fmt::format("{}[{} : {}] = +({}[{}] * {}[{}])", name, Join(out_idx), Join(sizes), as, Join(a_idx), bs,
                     Join(b_idx)));
  c.Define(0, out);
}

void BatchNormalization(NodeContext& c) {
  if (c.Int("training_mode", 0) != 0) c.Fail("training_mode is not supported (inference only)");
  for (size_t i = 1; i < c.output_count(); ++i)
    if (c.WantsOutput(i)) c.Fail("the running mean and variance outputs are not supported (inference only)");
  const lang::Shape x = c.In(0).shape;
  int r = x.rank();
  if (r < 2) c.Fail("the input needs a channel axis");
  double eps = c.Float("epsilon", 1e-5f);
  bool constant = true;
  for (size_t i = 1; i <= 4; ++i) constant = constant && c.In(i).IsConstant();
  std::string xs = c.Ref(0);
  std::string name = c.OutName(0);
  if (constant) {
    // Y = X * s + t, s and t computed here.
    int64_t ch = x.dims[1];
    std::vector<int64_t> dims(r - 1, 1);
    dims[0] = ch;
    lang::Tensor s(lang::Shape{x.dtype, dims}), t(lang::Shape{x.dtype, dims});
    const lang::Tensor &scale = *c.In(1).constant, &bias = *c.In(2).constant, &mean = *c.In(3).constant,
                       &var = *c.In(4).constant;
    for (int64_t k = 0; k < ch; ++k) {
      double sk = scale.GetDouble(k) / std::sqrt(var.GetDouble(k) + eps);
      s.SetDouble(k, sk);
      t.SetDouble(k, bias.GetDouble(k) - mean.GetDouble(k) * sk);
    }
    std::string sn = c.AddConstant("scale", std::move(s)), tn = c.AddConstant("shift", std::move(t));
    c.Emit(fmt::format("{} = {} * {} + {}", name, xs, sn, tn));
  } else {
    std::string sc = ChannelVector(c, 1, r, "scale"), b = ChannelVector(c, 2, r, "bias"),
                m = ChannelVector(c, 3, r, "mean"), v = ChannelVector(c, 4, r, "var");
    c.Emit(fmt::format("{} = ({} - {}) / sqrt({} + {}) * {} + {}", name, xs, m, v, *Literal(eps, x.dtype), sc, b));
  }
  c.Define(0, x);
}

void Pool(NodeContext& c, bool max) {
  const lang::Shape x = c.In(0).shape;
  if (x.rank() < 3) c.Fail("the input must have rank 3 or more (N, C, spatial…)");
  if (c.WantsOutput(1)) c.Fail("the Indices output is not supported");
  Windows g = Geometry(c, Spatial(x), c.Ints("kernel_shape"), true);
  size_t sp = g.out.size();
  std::vector<std::string> out_idx{"n", "c"}, x_idx{"n", "c"}, sizes{std::to_string(x.dims[0]), std::to_string(x.dims[1])},
      cons;
  for (size_t k = 0; k < sp; ++k) {
    out_idx.push_back(fmt::format("o{}", k));
    x_idx.push_back(Tap(g, k));
    sizes.push_back(std::to_string(g.out[k]));
    cons.push_back(fmt::format("k{} < {}", k, g.kernel[k]));
  }
  lang::Shape out{x.dtype, {x.dims[0], x.dims[1]}};
  out.dims.insert(out.dims.end(), g.out.begin(), g.out.end());
  std::string xs = c.Ref(0), name = c.OutName(0);
  std::string target = max ? name : c.Temp("sum");
  c.Emit(fmt::format("{}[{} : {}] = {}({}[{}]), {}", target, Join(out_idx), Join(sizes), max ? '>' : '+', xs,
                     Join(x_idx), Join(cons)));
  if (!max) {
    // The divisor of each output position: the taps inside the input (or
    // inside the padded input, with count_include_pad).
    bool include_pad = c.Int("count_include_pad", 0) != 0;
    lang::Tensor count(lang::Shape{x.dtype, g.out});
    bool uniform = true;
    for (int64_t flat = 0; flat < count.size(); ++flat) {
      int64_t rest = flat, n = 1;
      for (size_t k = sp; k-- > 0;) {
        int64_t o = rest % g.out[k];
        rest /= g.out[k];
        int64_t lo = include_pad ? -g.pad_begin[k] : 0, hi = include_pad ? x.dims[2 + k] + g.pad_end[k] : x.dims[2 + k];
        int64_t taps = 0;
        for (int64_t t = 0; t < g.kernel[k]; ++t) {
          int64_t pos = o * g.strides[k] + t * g.dilations[k] - g.pad_begin[k];
          taps += pos >= lo && pos < hi;
        }
        n *= taps;
      }
      count.SetDouble(flat, static_cast<double>(n));
      uniform = uniform && count.GetDouble(flat) == count.GetDouble(0);
    }
    std::string divisor = uniform ? *Literal(count.GetDouble(0), x.dtype) : c.AddConstant("count", std::move(count));
    c.Emit(fmt::format("{} = {} / {}", name, target, divisor));
  }
  c.Define(0, out);
}

void GlobalPool(NodeContext& c, bool max) {
  const lang::Shape x = c.In(0).shape;
  int r = x.rank();
  if (r < 3) c.Fail("the input must have rank 3 or more (N, C, spatial…)");
  std::vector<std::string> out_idx{"n", "c"}, x_idx{"n", "c"}, sizes{std::to_string(x.dims[0]), std::to_string(x.dims[1])};
  lang::Shape out{x.dtype, {x.dims[0], x.dims[1]}};
  for (int k = 2; k < r; ++k) {
    out_idx.push_back("0");
    x_idx.push_back(fmt::format("s{}", k));
    sizes.push_back("1");
    out.dims.push_back(1);
  }
  std::string xs = c.Ref(0), name = c.OutName(0);
  std::string target = max ? name : c.Temp("sum");
  c.Emit(fmt::format("{}[{} : {}] = {}({}[{}])", target, Join(out_idx), Join(sizes), max ? '>' : '+', xs, Join(x_idx)));
  if (!max)
    c.Emit(fmt::format("{} = {} / {}", name, target, *Literal(static_cast<double>(Product(x.dims, 2)), x.dtype)));
  c.Define(0, out);
}

}  // namespace

std::vector<Registration> NnConverters() {
  auto max_pool = [](NodeContext& c) { Pool(c, true); };
  auto avg_pool = [](NodeContext& c) { Pool(c, false); };
  return {
      {"Conv", 1, Conv},
      {"Conv", 11, Conv},
      {"ConvTranspose", 1, ConvTranspose},
      {"ConvTranspose", 11, ConvTranspose},
      {"Gemm", 7, Gemm},
      {"Gemm", 9, Gemm},
      {"Gemm", 11, Gemm},
      {"Gemm", 13, Gemm},
      {"MatMul", 1, MatMul},
      {"MatMul", 9, MatMul},
      {"MatMul", 13, MatMul},
      {"BatchNormalization", 7, BatchNormalization},
      {"BatchNormalization", 9, BatchNormalization},
      {"BatchNormalization", 14, BatchNormalization},
      {"BatchNormalization", 15, BatchNormalization},
      {"MaxPool", 8, max_pool},
      {"MaxPool", 10, max_pool},
      {"MaxPool", 11, max_pool},
      {"MaxPool", 12, max_pool},
      {"AveragePool", 7, avg_pool},
      {"AveragePool", 10, avg_pool},
      {"AveragePool", 11, avg_pool},
      {"GlobalAveragePool", 1, [](NodeContext& c) { GlobalPool(c, false); }},
      {"GlobalMaxPool", 1, [](NodeContext& c) { GlobalPool(c, true); }},
  };
}

}  // namespace tilec::onnx_import
