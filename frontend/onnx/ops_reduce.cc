// Converters for reductions (Reduce*, ArgMax/ArgMin), Softmax, LogSoftmax
// and LayerNormalization: contractions over the reduced axes, kept as size-1
// axes where the result broadcasts back.
#include <fmt/format.h>

#include "frontend/onnx/converter.h"

namespace tilec::onnx_import {
namespace {

// `out[...] = agg(x[...])` reducing the axes marked in `reduce`; the dims of
// the result (size 1 on reduced axes with `keep`, dropped otherwise).
std::vector<int64_t> EmitReduce(NodeContext& c, const std::string& out, char agg, const std::string& x,
                                const std::vector<int64_t>& dims, const std::vector<bool>& reduce, bool keep) {
  std::vector<std::string> out_idx, x_idx, sizes;
  std::vector<int64_t> out_dims;
  for (size_t k = 0; k < dims.size(); ++k) {
    std::string i = fmt::format("i{}", k);
    x_idx.push_back(i);
    if (!reduce[k]) {
      out_idx.push_back(i);
      sizes.push_back(std::to_string(dims[k]));
      out_dims.push_back(dims[k]);
    } else if (keep) {
      out_idx.push_back("0");
      sizes.push_back("1");
      out_dims.push_back(1);
    }
  }
  c.Emit(fmt::format("{}[{} : {}] = {}({}[{}])", out, Join(out_idx), Join(sizes), agg, x, Join(x_idx)));
  return out_dims;
}

// The axes a Reduce* node reduces: from the attribute (or, for ReduceSum
// from opset 13, the second input); none given means all, unless
// noop_with_empty_axes.
std::optional<std::vector<bool>> ReducedAxes(NodeContext& c, int rank, bool axes_input) {
  std::vector<int64_t> axes;
  if (axes_input) {
    if (c.HasInput(1)) axes = c.ConstantInts(1, "axes");
  } else {
    axes = c.Ints("axes");
  }
  std::vector<bool> reduce(rank, axes.empty());
  if (axes.empty() && c.Int("noop_with_empty_axes", 0)) return std::nullopt;
  for (int64_t a : axes) reduce[NormalizeAxis(c, a, rank)] = true;
  return reduce;
}

// kind: the reduction, as its ONNX name without "Reduce".
Converter Reduce(std::string kind, bool axes_input) {
  return [kind, axes_input](NodeContext& c) {
    const lang::Shape x = c.In(0).shape;
    bool keep = c.Int("keepdims", 1) != 0;
    auto reduce = ReducedAxes(c, x.rank(), axes_input);
    std::string xs = c.Ref(0), name = c.OutName(0);
    if (!reduce) {  // noop_with_empty_axes
      c.Emit(fmt::format("{} = {}", name, xs));
      c.Define(0, x);
      return;
    }
    int64_t count = 1;
    for (int k = 0; k < x.rank(); ++k) count *= (*reduce)[k] ? x.dims[k] : 1;
    std::string src = xs;
    if (kind == "SumSquare" || kind == "L2" || kind == "L1" || kind == "LogSumExp") {
      src = c.Temp("terms");
      const char* pattern = kind == "L1" ? "{0} = abs({1})" : kind == "LogSumExp" ? "{0} = exp({1})" : "{0} = {1} * {1}";
      c.Emit(fmt::format(fmt::runtime(pattern), src, xs));
    }
    char agg = kind == "Max" ? '>' : kind == "Min" ? '<' : kind == "Prod" ? '*' : '+';
    bool post = kind == "Mean" || kind == "L2" || kind == "LogSum" || kind == "LogSumExp";
    std::string target = post ? c.Temp("acc") : name;
    std::vector<int64_t> dims = EmitReduce(c, target, agg, src, x.dims, *reduce, keep);
    if (kind == "Mean") c.Emit(fmt::format("{} = {} / {}", name, target, *Literal(static_cast<double>(count), x.dtype)));
    if (kind == "L2") c.Emit(fmt::format("{} = sqrt({})", name, target));
    if (kind == "LogSum" || kind == "LogSumExp") c.Emit(fmt::format("{} = log({})", name, target));
    c.Define(0, lang::Shape{x.dtype, dims});
  };
}

// Softmax and LogSoftmax: before opset 13 over the flattened axes from
// `axis` on, from 13 over `axis` alone.
Converter Softmax(bool log) {
  return [log](NodeContext& c) {
    const lang::Shape x = c.In(0).shape;
    int r = x.rank();
    int64_t axis = NormalizeAxis(c, c.Int("axis", c.since() >= 13 ? -1 : 1), r);
    std::vector<bool> reduce(r, false);
    for (int k = 0; k < r; ++k) reduce[k] = c.since() >= 13 ? k == axis : k >= axis;
    std::string xs = c.Ref(0), name = c.OutName(0);
    std::string m = c.Temp("max"), e = c.Temp("exp"), s = c.Temp("sum");
    EmitReduce(c, m, '>', xs, x.dims, reduce, true);
    if (log) {
      std::string d = c.Temp("shifted");
      c.Emit(fmt::format("{} = {} - {}", d, xs, m));
      c.Emit(fmt::format("{} = exp({})", e, d));
      EmitReduce(c, s, '+', e, x.dims, reduce, true);
      c.Emit(fmt::format("{} = {} - log({})", name, d, s));
    } else {
      c.Emit(fmt::format("{} = exp({} - {})", e, xs, m));
      EmitReduce(c, s, '+', e, x.dims, reduce, true);
      c.Emit(fmt::format("{} = {} / {}", name, e, s));
    }
    c.Define(0, x);
  };
}

void LayerNormalization(NodeContext& c) {
  const lang::Shape x = c.In(0).shape;
  int r = x.rank();
  int64_t axis = NormalizeAxis(c, c.Int("axis", -1), r);
  double eps = c.Float("epsilon", 1e-5f);
  std::vector<bool> reduce(r, false);
  int64_t count = 1;
  for (int k = axis; k < r; ++k) {
    reduce[k] = true;
    count *= x.dims[k];
  }
  std::string xs = c.Ref(0), scale = c.Ref(1), bias = c.HasInput(2) ? c.Ref(2) : "";
  std::string name = c.OutName(0);
  std::string sum = c.Temp("sum"), mean = c.WantsOutput(1) ? c.OutName(1) : c.Temp("mean");
  std::string d = c.Temp("centered"), sq = c.Temp("sq"), var_sum = c.Temp("varsum"),
              inv = c.WantsOutput(2) ? c.OutName(2) : c.Temp("invstd");
  std::string n = *Literal(static_cast<double>(count), x.dtype);
  std::vector<int64_t> stat_dims = EmitReduce(c, sum, '+', xs, x.dims, reduce, true);
  c.Emit(fmt::format("{} = {} / {}", mean, sum, n));
  c.Emit(fmt::format("{} = {} - {}", d, xs, mean));
  c.Emit(fmt::format("{} = {} * {}", sq, d, d));
  EmitReduce(c, var_sum, '+', sq, x.dims, reduce, true);
  c.Emit(fmt::format("{} = 1 / sqrt({} / {} + {})", inv, var_sum, n, *Literal(eps, x.dtype)));
  c.Emit(fmt::format("{} = {} * {} * {}{}", name, d, inv, scale, bias.empty() ? "" : " + " + bias));
  c.Define(0, x);
  if (c.WantsOutput(1)) c.Define(1, lang::Shape{x.dtype, stat_dims});
  if (c.WantsOutput(2)) c.Define(2, lang::Shape{x.dtype, stat_dims});
}

// LRN: X / (bias + alpha / size * sum of squares over a window of channels)^beta.
void Lrn(NodeContext& c) {
  const lang::Shape x = c.In(0).shape;
  int r = x.rank();
  if (r < 3) c.Fail("the input must have rank 3 or more (N, C, spatial…)");
  int64_t size = c.Int("size", 0);
  if (size < 1) c.Fail("size must be positive");
  double alpha = c.Float("alpha", 1e-4f), beta = c.Float("beta", 0.75f), bias = c.Float("bias", 1.0f);
  std::string xs = c.Ref(0), name = c.OutName(0), sq = c.Temp("sq"), sum = c.Temp("window");
  std::vector<std::string> idx = IndexNames(r), in = idx, sizes;
  in[1] = fmt::format("{} + k - {}", idx[1], (size - 1) / 2);
  for (int64_t d : x.dims) sizes.push_back(std::to_string(d));
  c.Emit(fmt::format("{} = {} * {}", sq, xs, xs));
  c.Emit(fmt::format("{}[{} : {}] = +({}[{}]), k < {}", sum, Join(idx), Join(sizes), sq, Join(in), size));
  c.Emit(fmt::format("{} = {} / pow({} + {} * {}, {})", name, xs, *Literal(bias, x.dtype),
                     *Literal(alpha / static_cast<double>(size), x.dtype), sum, *Literal(beta, x.dtype)));
  c.Define(0, x);
}

// MeanVarianceNormalization: (X - mean) / (sqrt(E[X^2] - mean^2) + 1e-9) over `axes`.
void MeanVarianceNormalization(NodeContext& c) {
  const lang::Shape x = c.In(0).shape;
  int r = x.rank();
  std::vector<bool> reduce(r, false);
  int64_t count = 1;
  for (int64_t a : c.Ints("axes", {0, 2, 3})) {
    int64_t k = NormalizeAxis(c, a, r);
    if (!reduce[k]) count *= x.dims[k];
    reduce[k] = true;
  }
  std::string xs = c.Ref(0), name = c.OutName(0), n = *Literal(static_cast<double>(count), x.dtype);
  std::string s = c.Temp("sum"), sq = c.Temp("sq"), s2 = c.Temp("sqsum"), m = c.Temp("mean");
  EmitReduce(c, s, '+', xs, x.dims, reduce, true);
  c.Emit(fmt::format("{} = {} * {}", sq, xs, xs));
  EmitReduce(c, s2, '+', sq, x.dims, reduce, true);
  c.Emit(fmt::format("{} = {} / {}", m, s, n));
  c.Emit(fmt::format("{} = ({} - {}) / (sqrt({} / {} - {} * {}) + {})", name, xs, m, s2, n, m, m,
                     *Literal(1e-9, x.dtype)));
  c.Define(0, x);
}

// InstanceNormalization: per sample and channel over the spatial axes.
void InstanceNormalization(NodeContext& c) {
  const lang::Shape x = c.In(0).shape;
  int r = x.rank();
  if (r < 3) c.Fail("the input must have rank 3 or more (N, C, spatial…)");
  std::vector<bool> reduce(r, true);
  reduce[0] = reduce[1] = false;
  double eps = c.Float("epsilon", 1e-5f);
  int64_t count = Product(x.dims, 2);
  std::string n = *Literal(static_cast<double>(count), x.dtype);
  std::string xs = c.Ref(0), name = c.OutName(0);
  std::vector<int64_t> cdims(r - 1, 1);
  cdims[0] = x.dims[1];
  auto channel = [&](size_t i, const char* hint) {
    std::string t = c.Temp(hint);
    c.Emit(fmt::format("{} = reshape({}, {})", t, c.Ref(i), JoinInts(cdims)));
    return t;
  };
  std::string scale = channel(1, "scale"), bias = channel(2, "bias");
  std::string s = c.Temp("sum"), m = c.Temp("mean"), d = c.Temp("centered"), sq = c.Temp("sq"), v = c.Temp("varsum");
  EmitReduce(c, s, '+', xs, x.dims, reduce, true);
  c.Emit(fmt::format("{} = {} / {}", m, s, n));
  c.Emit(fmt::format("{} = {} - {}", d, xs, m));
  c.Emit(fmt::format("{} = {} * {}", sq, d, d));
  EmitReduce(c, v, '+', sq, x.dims, reduce, true);
  c.Emit(fmt::format("{} = {} / sqrt({} / {} + {}) * {} + {}", name, d, v, n, *Literal(eps, x.dtype), scale, bias));
  c.Define(0, x);
}

// ArgMax/ArgMin: the first (or, with select_last_index, the last) index of
// the extremum along `axis`, as i64.
Converter ArgExtremum(bool max) {
  return [max](NodeContext& c) {
    const lang::Shape x = c.In(0).shape;
    int r = x.rank();
    int64_t axis = NormalizeAxis(c, c.Int("axis", 0), r);
    bool keep = c.Int("keepdims", 1) != 0, last = c.Int("select_last_index", 0) != 0;
    std::vector<bool> reduce(r, false);
    reduce[axis] = true;
    std::string xs = c.Ref(0), name = c.OutName(0);
    std::string m = c.Temp("ext"), idx = c.Temp("idx"), cand = c.Temp("cand"), best = c.Temp("best");
    EmitReduce(c, m, max ? '>' : '<', xs, x.dims, reduce, true);
    // Candidates: the index where X is the extremum, else a value that loses.
    int64_t n = x.dims[axis];
    c.Emit(fmt::format("{} = as_int(index({}, {}), 64)", idx, xs, axis));
    if (last)
      c.Emit(fmt::format("{} = ({} == {} ? {} + 1 : 0)", cand, xs, m, idx));
    else
      c.Emit(fmt::format("{} = ({} == {} ? {} - {} : 0)", cand, xs, m, n, idx));
    std::vector<int64_t> dims = EmitReduce(c, best, '>', cand, x.dims, reduce, keep);
    c.Emit(last ? fmt::format("{} = {} - 1", name, best) : fmt::format("{} = {} - {}", name, n, best));
    c.Define(0, lang::Shape{lang::DataType::I64, dims});
  };
}

}  // namespace

std::vector<Registration> ReduceConverters() {
  std::vector<Registration> r;
  for (const char* kind : {"Mean", "Max", "Min", "Prod", "SumSquare", "L1", "L2", "LogSum", "LogSumExp"})
    for (int since : {1, 11, 13}) r.push_back({fmt::format("Reduce{}", kind), since, Reduce(kind, false)});
  r.push_back({"ReduceSum", 1, Reduce("Sum", false)});
  r.push_back({"ReduceSum", 11, Reduce("Sum", false)});
  r.push_back({"ReduceSum", 13, Reduce("Sum", true)});
  for (int since : {1, 11, 13}) {
    r.push_back({"Softmax", since, Softmax(false)});
    r.push_back({"LogSoftmax", since, Softmax(true)});
    r.push_back({"ArgMax", since, ArgExtremum(true)});
    r.push_back({"ArgMin", since, ArgExtremum(false)});
  }
  r.push_back({"ArgMax", 12, ArgExtremum(true)});
  r.push_back({"ArgMin", 12, ArgExtremum(false)});
  r.push_back({"LayerNormalization", 17, LayerNormalization});
  r.push_back({"LRN", 1, Lrn});
  r.push_back({"LRN", 13, Lrn});
  r.push_back({"MeanVarianceNormalization", 9, MeanVarianceNormalization});
  r.push_back({"MeanVarianceNormalization", 13, MeanVarianceNormalization});
  r.push_back({"InstanceNormalization", 6, InstanceNormalization});
  return r;
}

}  // namespace tilec::onnx_import
