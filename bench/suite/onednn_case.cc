// bench_onednn: one case of bench/suite computed by oneDNN primitives, the
// suite's oneDNN peer (suite.py builds the command line from each case's
// `onednn` entry). Every primitive is created and its inputs reordered into
// the layouts it wants once, outside the timed runs, as in bench_peers.
//
//   bench_onednn OP [KEY=VALUE ...] --in NAME=FILE.npy ... [--out FILE.npy]
//                [--runs N] [--warmup W] [--threads T]
//
// prints one JSON object {"median_ms", "min_ms", "impl"} and, with --out,
// writes the output (row-major, the Tile program's layout) after the first
// run. Ops and their keys (inputs by the Tile programs' names):
//   conv      n h w ci co k stride pad dil relu depthwise  D (NHWC), K (HWIO, or [KH,KW,C])
//   conv_bwd_data    n h w ci co k stride pad wei g  K (HWIO), G (g= renames: the gradient of the
//                    conv's output, NHWC) -> the gradient of D (NHWC); weights in oneDNN's
//                    choice (wei=any, the default; reordered once outside the timing) or hwio
//   conv_bwd_weights n h w ci co k stride pad wei g  D (NHWC), G (NHWC) -> the gradient of K, in
//                    oneDNN's choice (wei=any) or hwio; written HWIO by --out either way
//   matmul    batch m n k bias gelu   A, B (a=, b= rename), Bias: C = A·B (+ Bias, GELU tanh)
//   reduce    src dst alg (sum|mean)  X (x= renames): dims with 1 where reduced
//   pool      n h w c k stride pad_r alg (max|avg)  I (NHWC)
//   softmax   m n log                 X: along rows
//   layernorm m n eps                 X, Gamma, Beta
//   batchnorm n h w c eps             X (NHWC), Mean, Var, Gamma, Beta
//   reorder   dims strides [dst]      X (x= renames): the output's logical dims, the input's
//                                     strides for them; the output row-major or in layout dst
//   reorder   dims src dst            X row-major, placed in layout src (nchw, nhwc, nChw8c,
//                                     nChw16c) outside the timing, reordered into layout dst
//   eltwise   count alg               X: logistic, tanh, gelu_erf, soft_relu
//   bias_eltwise m n alg              X, Bias: alg(X + Bias) as binary add + eltwise post-op
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "bench/onednn_state.h"
#include "runtime/npy.h"

#ifdef TILEC_BENCH_OPENMP
#include <omp.h>
#endif

namespace tilec::bench {
namespace {

using namespace onednn;
using Alg = dnnl::algorithm;
using dnnl::prop_kind;
using Params = std::map<std::string, std::string>;

const std::string& Get(const Params& p, const std::string& key) {
  auto it = p.find(key);
  TILEC_CHECK(it != p.end(), "bench_onednn: missing {}=", key);
  return it->second;
}
std::string Get(const Params& p, const std::string& key, const std::string& fallback) {
  auto it = p.find(key);
  return it == p.end() ? fallback : it->second;
}
int64_t Int(const Params& p, const std::string& key, int64_t fallback = -1) {
  auto it = p.find(key);
  if (it == p.end()) {
    TILEC_CHECK(fallback >= 0, "bench_onednn: missing {}=", key);
    return fallback;
  }
  return std::stoll(it->second);
}
memory::dims Dims(const std::string& text) {
  memory::dims d;
  for (size_t at = 0; at <= text.size();) {
    size_t comma = std::min(text.find(',', at), text.size());
    d.push_back(std::stoll(text.substr(at, comma - at)));
    at = comma + 1;
  }
  return d;
}

Alg EltwiseAlg(const std::string& name) {
  static const std::map<std::string, Alg> kAlgs = {{"logistic", Alg::eltwise_logistic},
                                                  {"tanh", Alg::eltwise_tanh},
                                                  {"gelu_erf", Alg::eltwise_gelu_erf},
                                                  {"gelu_tanh", Alg::eltwise_gelu_tanh},
                                                  {"soft_relu", Alg::eltwise_soft_relu},
                                                  {"relu", Alg::eltwise_relu}};
  auto it = kAlgs.find(name);
  TILEC_CHECK(it != kAlgs.end(), "bench_onednn: unknown eltwise algorithm '{}'", name);
  return it->second;
}

dnnl::primitive_attr PostOp(const std::string& alg) {
  dnnl::primitive_attr attr;
  if (!alg.empty() && alg != "none") {
    dnnl::post_ops po;
    po.append_eltwise(1.0f, EltwiseAlg(alg), 0.0f, 0.0f);
    attr.set_post_ops(po);
  }
  return attr;
}

// oneDNN's plain (row-major) tag for `rank` dimensions.
Tag PlainTag(size_t rank) {
  static const Tag kTags[] = {Tag::a, Tag::ab, Tag::abc, Tag::abcd};
  TILEC_CHECK(rank >= 1 && rank <= 4, "bench_onednn: {} dimensions", rank);
  return kTags[rank - 1];
}

// The tag of a 4-D layout name of the reorder cases.
Tag LayoutTag(const std::string& name) {
  static const std::map<std::string, Tag> kTags = {
      {"nchw", Tag::nchw}, {"nhwc", Tag::nhwc}, {"nChw8c", Tag::nChw8c}, {"nChw16c", Tag::nChw16c}};
  auto it = kTags.find(name);
  TILEC_CHECK(it != kTags.end(), "bench_onednn: layout {} (nchw, nhwc, nChw8c, nChw16c)", name);
  return it->second;
}

// The runner of primitive `pd` that reads the data input `x`, laid out as
// `src`, and writes `dst`; other arguments (scale, shift, …) are in s->args
// already.
template <typename Primitive, typename Pd>
Runner SrcToDst(std::shared_ptr<State> s, const Pd& pd, const memory::desc& src, const lang::Tensor& x,
                const memory::desc& dst, const char* name) {
  s->primitive = Primitive(pd);
  s->args[DNNL_ARG_SRC] = Place(*s, src, src, x);
  s->args[DNNL_ARG_DST] = memory(dst, s->engine);
  s->output_user = dst;
  return MakeRunner(std::move(s), name, pd.impl_info_str());
}

// Convolution over NHWC data; the weights in oneDNN's choice (`any`).
Runner Conv(const Params& p, const Inputs& in) {
  auto s = std::make_shared<State>();
  int64_t n = Int(p, "n"), h = Int(p, "h"), w = Int(p, "w"), ci = Int(p, "ci"), co = Int(p, "co", ci);
  int64_t k = Int(p, "k"), stride = Int(p, "stride", 1), pad = Int(p, "pad", 0), dil = Int(p, "dil", 1);
  bool depthwise = Int(p, "depthwise", 0) != 0;
  int64_t extent = dil * (k - 1) + 1;
  int64_t oh = Int(p, "oh", (h + 2 * pad - extent) / stride + 1);
  int64_t ow = Int(p, "ow", (w + 2 * pad - extent) / stride + 1);
  int64_t pad_rh = (oh - 1) * stride + extent - h - pad, pad_rw = (ow - 1) * stride + extent - w - pad;
  TILEC_CHECK(pad_rh >= 0 && pad_rw >= 0, "bench_onednn: conv output larger than its input allows");
  memory::dims src{n, ci, h, w}, dst{n, co, oh, ow};
  memory::dims wei = depthwise ? memory::dims{ci, 1, 1, k, k} : memory::dims{co, ci, k, k};
  memory::desc src_md(src, Dt::f32, Tag::nhwc), dst_md(dst, Dt::f32, Tag::nhwc);
  memory::desc wei_user(wei, Dt::f32, depthwise ? Tag::hwigo : Tag::hwio);
  dnnl::convolution_forward::desc desc(prop_kind::forward_inference, Alg::convolution_direct, src_md,
                                       memory::desc(wei, Dt::f32, Tag::any), dst_md, {stride, stride},
                                       {dil - 1, dil - 1}, {pad, pad}, {pad_rh, pad_rw});
  dnnl::convolution_forward::primitive_desc pd(desc, PostOp(Int(p, "relu", 0) ? "relu" : ""), s->engine);
  s->primitive = dnnl::convolution_forward(pd);
  s->args[DNNL_ARG_SRC] = Place(*s, pd.src_desc(), src_md, Input(in, "D"));
  s->args[DNNL_ARG_WEIGHTS] = Place(*s, pd.weights_desc(), wei_user, Input(in, "K"));
  s->args[DNNL_ARG_DST] = memory(pd.dst_desc(), s->engine);
  s->output_user = dst_md;
  return MakeRunner(s, "onednn conv", pd.impl_info_str());
}

// The geometry of a convolution case: NCHW-ordered dims for oneDNN (data
// NHWC, weights HWIO as the Tile programs give them), strides and padding.
struct ConvGeometry {
  memory::dims src, dst, wei, strides, dil, pad_l, pad_r;
};
ConvGeometry Geometry(const Params& p) {
  int64_t n = Int(p, "n"), h = Int(p, "h"), w = Int(p, "w"), ci = Int(p, "ci"), co = Int(p, "co", ci);
  int64_t k = Int(p, "k"), stride = Int(p, "stride", 1), pad = Int(p, "pad", 0);
  int64_t oh = Int(p, "oh", (h + 2 * pad - k) / stride + 1), ow = Int(p, "ow", (w + 2 * pad - k) / stride + 1);
  int64_t pad_rh = (oh - 1) * stride + k - h - pad, pad_rw = (ow - 1) * stride + k - w - pad;
  TILEC_CHECK(pad_rh >= 0 && pad_rw >= 0, "bench_onednn: conv output larger than its input allows");
  return {{n, ci, h, w}, {n, co, oh, ow}, {co, ci, k, k}, {stride, stride}, {0, 0}, {pad, pad}, {pad_rh, pad_rw}};
}

// The forward primitive a backward one takes as its hint (forward_training).
dnnl::convolution_forward::primitive_desc ForwardHint(const ConvGeometry& g, const memory::desc& wei,
                                                      const dnnl::engine& engine) {
  memory::desc src(g.src, Dt::f32, Tag::nhwc), dst(g.dst, Dt::f32, Tag::nhwc);
  dnnl::convolution_forward::desc desc(prop_kind::forward_training, Alg::convolution_direct, src, wei, dst,
                                       g.strides, g.dil, g.pad_l, g.pad_r);
  return {desc, engine};
}

memory::desc WeightsMd(const Params& p, const ConvGeometry& g) {
  std::string wei = Get(p, "wei", "any");
  TILEC_CHECK(wei == "any" || wei == "hwio", "bench_onednn: wei={} (any or hwio)", wei);
  return memory::desc(g.wei, Dt::f32, wei == "any" ? Tag::any : Tag::hwio);
}

// The gradient of the convolution's input D from the gradient of its output
// (G) and the weights K: convolution_backward_data, NHWC in and out.
Runner ConvBwdData(const Params& p, const Inputs& in) {
  auto s = std::make_shared<State>();
  ConvGeometry g = Geometry(p);
  memory::desc wei = WeightsMd(p, g), wei_user(g.wei, Dt::f32, Tag::hwio);
  memory::desc diff_src(g.src, Dt::f32, Tag::nhwc), diff_dst(g.dst, Dt::f32, Tag::nhwc);
  dnnl::convolution_backward_data::desc desc(Alg::convolution_direct, diff_src, wei, diff_dst, g.strides, g.dil,
                                             g.pad_l, g.pad_r);
  dnnl::convolution_backward_data::primitive_desc pd(desc, s->engine, ForwardHint(g, wei, s->engine));
  s->primitive = dnnl::convolution_backward_data(pd);
  s->args[DNNL_ARG_DIFF_DST] = Place(*s, pd.diff_dst_desc(), diff_dst, Input(in, Get(p, "g", "G")));
  s->args[DNNL_ARG_WEIGHTS] = Place(*s, pd.weights_desc(), wei_user, Input(in, "K"));
  s->args[DNNL_ARG_DIFF_SRC] = memory(pd.diff_src_desc(), s->engine);
  s->output_arg = DNNL_ARG_DIFF_SRC;
  s->output_user = diff_src;
  return MakeRunner(s, "onednn conv bwd data", pd.impl_info_str());
}

// The gradient of the weights K from the input D and the gradient of the
// output (G): convolution_backward_weights (no bias), D and G NHWC.
Runner ConvBwdWeights(const Params& p, const Inputs& in) {
  auto s = std::make_shared<State>();
  ConvGeometry g = Geometry(p);
  memory::desc wei = WeightsMd(p, g), wei_user(g.wei, Dt::f32, Tag::hwio);
  memory::desc src(g.src, Dt::f32, Tag::nhwc), diff_dst(g.dst, Dt::f32, Tag::nhwc);
  dnnl::convolution_backward_weights::desc desc(Alg::convolution_direct, src, wei, diff_dst, g.strides, g.dil,
                                                g.pad_l, g.pad_r);
  dnnl::convolution_backward_weights::primitive_desc pd(desc, s->engine, ForwardHint(g, wei, s->engine));
  s->primitive = dnnl::convolution_backward_weights(pd);
  s->args[DNNL_ARG_SRC] = Place(*s, pd.src_desc(), src, Input(in, "D"));
  s->args[DNNL_ARG_DIFF_DST] = Place(*s, pd.diff_dst_desc(), diff_dst, Input(in, Get(p, "g", "G")));
  s->args[DNNL_ARG_DIFF_WEIGHTS] = memory(pd.diff_weights_desc(), s->engine);
  s->output_arg = DNNL_ARG_DIFF_WEIGHTS;
  s->output_user = wei_user;  // reordered to HWIO for --out, outside the timing
  return MakeRunner(s, "onednn conv bwd weights", pd.impl_info_str());
}

// C = A·B, 2-D or batched, optionally + Bias[n] and a GELU (tanh) post-op.
Runner Matmul(const Params& p, const Inputs& in) {
  auto s = std::make_shared<State>();
  int64_t batch = Int(p, "batch", 0), m = Int(p, "m"), n = Int(p, "n"), k = Int(p, "k");
  auto dims = [&](int64_t r, int64_t c) { return batch ? memory::dims{batch, r, c} : memory::dims{r, c}; };
  Tag plain = batch ? Tag::abc : Tag::ab;
  memory::desc a(dims(m, k), Dt::f32, plain), b(dims(k, n), Dt::f32, plain), c(dims(m, n), Dt::f32, plain);
  bool bias = Int(p, "bias", 0) != 0;
  memory::desc bias_md(dims(1, n), Dt::f32, plain);
  dnnl::matmul::desc desc = bias ? dnnl::matmul::desc(a, b, bias_md, c) : dnnl::matmul::desc(a, b, c);
  dnnl::matmul::primitive_desc pd(desc, PostOp(Get(p, "gelu", "")), s->engine);
  s->primitive = dnnl::matmul(pd);
  s->args[DNNL_ARG_SRC] = Place(*s, pd.src_desc(), a, Input(in, Get(p, "a", "A")));
  s->args[DNNL_ARG_WEIGHTS] = Place(*s, pd.weights_desc(), b, Input(in, Get(p, "b", "B")));
  if (bias) s->args[DNNL_ARG_BIAS] = Place(*s, pd.bias_desc(), bias_md, Input(in, "Bias"));
  s->args[DNNL_ARG_DST] = memory(pd.dst_desc(), s->engine);
  s->output_user = c;
  return MakeRunner(s, "onednn matmul", pd.impl_info_str());
}

Runner Reduce(const Params& p, const Inputs& in) {
  auto s = std::make_shared<State>();
  memory::dims src = Dims(Get(p, "src")), dst = Dims(Get(p, "dst"));
  memory::desc src_md(src, Dt::f32, PlainTag(src.size())), dst_md(dst, Dt::f32, PlainTag(dst.size()));
  Alg alg = Get(p, "alg", "sum") == "mean" ? Alg::reduction_mean : Alg::reduction_sum;
  dnnl::reduction::primitive_desc pd(dnnl::reduction::desc(alg, src_md, dst_md, 0.0f, 0.0f), s->engine);
  return SrcToDst<dnnl::reduction>(s, pd, src_md, Input(in, Get(p, "x", "X")), dst_md, "onednn reduction");
}

Runner Pool(const Params& p, const Inputs& in) {
  auto s = std::make_shared<State>();
  int64_t n = Int(p, "n"), h = Int(p, "h"), w = Int(p, "w"), c = Int(p, "c");
  int64_t k = Int(p, "k"), stride = Int(p, "stride"), pad_r = Int(p, "pad_r", 0);
  int64_t oh = (h + pad_r - k) / stride + 1, ow = (w + pad_r - k) / stride + 1;
  memory::desc src_md({n, c, h, w}, Dt::f32, Tag::nhwc), dst_md({n, c, oh, ow}, Dt::f32, Tag::nhwc);
  Alg alg = Get(p, "alg") == "max" ? Alg::pooling_max : Alg::pooling_avg_exclude_padding;
  dnnl::pooling_forward::desc desc(prop_kind::forward_inference, alg, src_md, dst_md, {stride, stride}, {k, k},
                                   {0, 0}, {pad_r, pad_r});
  dnnl::pooling_forward::primitive_desc pd(desc, s->engine);
  return SrcToDst<dnnl::pooling_forward>(s, pd, src_md, Input(in, "I"), dst_md, "onednn pooling");
}

Runner Softmax(const Params& p, const Inputs& in) {
  auto s = std::make_shared<State>();
  memory::desc md({Int(p, "m"), Int(p, "n")}, Dt::f32, Tag::ab);
  if (Int(p, "log", 0)) {
    dnnl::logsoftmax_forward::primitive_desc pd({prop_kind::forward_inference, md, 1}, s->engine);
    return SrcToDst<dnnl::logsoftmax_forward>(s, pd, md, Input(in, "X"), md, "onednn log-softmax");
  }
  dnnl::softmax_forward::primitive_desc pd({prop_kind::forward_inference, md, 1}, s->engine);
  return SrcToDst<dnnl::softmax_forward>(s, pd, md, Input(in, "X"), md, "onednn softmax");
}

// A per-channel vector (scale, shift, mean, variance) as oneDNN's 1-D `a`.
memory Vector(State& s, const Inputs& in, const std::string& name, int64_t c) {
  memory::desc md({c}, Dt::f32, Tag::a);
  return Place(s, md, md, Input(in, name));
}

Runner LayerNorm(const Params& p, const Inputs& in) {
  auto s = std::make_shared<State>();
  int64_t m = Int(p, "m"), n = Int(p, "n");
  memory::desc md({m, n}, Dt::f32, Tag::ab);
  auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
  dnnl::layer_normalization_forward::desc desc(prop_kind::forward_inference, md,
                                               std::stof(Get(p, "eps")), flags);
  dnnl::layer_normalization_forward::primitive_desc pd(desc, s->engine);
  s->args[DNNL_ARG_SCALE] = Vector(*s, in, "Gamma", n);
  s->args[DNNL_ARG_SHIFT] = Vector(*s, in, "Beta", n);
  return SrcToDst<dnnl::layer_normalization_forward>(s, pd, md, Input(in, "X"), md, "onednn layer norm");
}

Runner BatchNorm(const Params& p, const Inputs& in) {
  auto s = std::make_shared<State>();
  int64_t c = Int(p, "c");
  memory::desc md({Int(p, "n"), c, Int(p, "h"), Int(p, "w")}, Dt::f32, Tag::nhwc);
  auto flags = dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
               dnnl::normalization_flags::use_shift;
  dnnl::batch_normalization_forward::desc desc(prop_kind::forward_inference, md,
                                               std::stof(Get(p, "eps")), flags);
  dnnl::batch_normalization_forward::primitive_desc pd(desc, s->engine);
  s->args[DNNL_ARG_MEAN] = Vector(*s, in, "Mean", c);
  s->args[DNNL_ARG_VARIANCE] = Vector(*s, in, "Var", c);
  s->args[DNNL_ARG_SCALE] = Vector(*s, in, "Gamma", c);
  s->args[DNNL_ARG_SHIFT] = Vector(*s, in, "Beta", c);
  return SrcToDst<dnnl::batch_normalization_forward>(s, pd, md, Input(in, "X"), md, "onednn batch norm");
}

// A transpose or permutation: the input seen through `strides` as the
// output's logical dims, reordered into a row-major output.
Runner Reorder(const Params& p, const Inputs& in) {
  auto s = std::make_shared<State>();
  memory::dims dims = Dims(Get(p, "dims"));
  memory::desc plain_md(dims, Dt::f32, PlainTag(dims.size()));
  memory::desc dst_md = p.count("dst") ? memory::desc(dims, Dt::f32, LayoutTag(Get(p, "dst"))) : plain_md;
  const lang::Tensor& x = Input(in, Get(p, "x", "X"));
  memory src;
  if (p.count("strides")) {  // X's bytes as they are, a strided view of the dims
    memory::desc src_md(dims, Dt::f32, Dims(Get(p, "strides")));
    TILEC_CHECK(src_md.get_size() == x.bytes(), "bench_onednn: reorder strides do not cover the input");
    src = memory(src_md, s->engine);
    std::copy(x.data(), x.data() + x.bytes(), static_cast<std::byte*>(src.get_data_handle()));
  } else {  // X row-major, placed in layout src= outside the timed runs
    src = Place(*s, memory::desc(dims, Dt::f32, LayoutTag(Get(p, "src"))), plain_md, x);
  }
  memory dst(dst_md, s->engine);
  dnnl::reorder::primitive_desc pd(s->engine, src.get_desc(), s->engine, dst_md);
  s->primitive = dnnl::reorder(pd);
  s->args[DNNL_ARG_FROM] = src;
  s->args[DNNL_ARG_TO] = dst;
  s->output_arg = DNNL_ARG_TO;
  s->output_user = plain_md;  // written row-major, as Tilec's run writes its outputs
  return MakeRunner(s, "onednn reorder", pd.impl_info_str());
}

Runner Eltwise(const Params& p, const Inputs& in) {
  auto s = std::make_shared<State>();
  memory::desc md({Int(p, "count")}, Dt::f32, Tag::a);
  dnnl::eltwise_forward::primitive_desc pd(
      {prop_kind::forward_inference, EltwiseAlg(Get(p, "alg")), md, 0.0f, 0.0f}, s->engine);
  return SrcToDst<dnnl::eltwise_forward>(s, pd, md, Input(in, "X"), md, "onednn eltwise");
}

Runner BiasEltwise(const Params& p, const Inputs& in) {
  auto s = std::make_shared<State>();
  int64_t m = Int(p, "m"), n = Int(p, "n");
  memory::desc md({m, n}, Dt::f32, Tag::ab), bias_md({1, n}, Dt::f32, Tag::ab);
  dnnl::binary::primitive_desc pd({Alg::binary_add, md, bias_md, md}, PostOp(Get(p, "alg")), s->engine);
  s->primitive = dnnl::binary(pd);
  s->args[DNNL_ARG_SRC_0] = Place(*s, md, md, Input(in, "X"));
  s->args[DNNL_ARG_SRC_1] = Place(*s, bias_md, bias_md, Input(in, "Bias"));
  s->args[DNNL_ARG_DST] = memory(md, s->engine);
  s->output_user = md;
  return MakeRunner(s, "onednn binary+eltwise", pd.impl_info_str());
}

Runner Make(const std::string& op, const Params& p, const Inputs& in) {
  if (op == "conv") return Conv(p, in);
  if (op == "conv_bwd_data") return ConvBwdData(p, in);
  if (op == "conv_bwd_weights") return ConvBwdWeights(p, in);
  if (op == "matmul") return Matmul(p, in);
  if (op == "reduce") return Reduce(p, in);
  if (op == "pool") return Pool(p, in);
  if (op == "softmax") return Softmax(p, in);
  if (op == "layernorm") return LayerNorm(p, in);
  if (op == "batchnorm") return BatchNorm(p, in);
  if (op == "reorder") return Reorder(p, in);
  if (op == "eltwise") return Eltwise(p, in);
  if (op == "bias_eltwise") return BiasEltwise(p, in);
  TILEC_CHECK(false, "bench_onednn: unknown op '{}'", op);
  return {};
}

double Ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

int Main(int argc, char** argv) {
  TILEC_CHECK(argc >= 2, "usage: bench_onednn OP [KEY=VALUE ...] --in NAME=FILE.npy ... [--out FILE.npy] "
                         "[--runs N] [--warmup W] [--threads T]");
  std::string op = argv[1], out_path;
  Params params;
  Inputs inputs;
  int runs = 10, warmup = 3;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      TILEC_CHECK(i + 1 < argc, "bench_onednn: {} needs a value", a);
      return argv[++i];
    };
    if (a == "--in") {
      std::string v = value();
      size_t eq = v.find('=');
      TILEC_CHECK(eq != std::string::npos, "bench_onednn: --in NAME=FILE.npy, got '{}'", v);
      inputs.emplace(v.substr(0, eq), runtime::ReadNpy(v.substr(eq + 1)));
    } else if (a == "--out") {
      out_path = value();
    } else if (a == "--runs") {
      runs = std::max(1, std::stoi(value()));
    } else if (a == "--warmup") {
      warmup = std::max(0, std::stoi(value()));
    } else if (a == "--threads") {
#ifdef TILEC_BENCH_OPENMP
      omp_set_num_threads(std::stoi(value()));
#else
      value();
#endif
    } else {
      size_t eq = a.find('=');
      TILEC_CHECK(eq != std::string::npos, "bench_onednn: expected KEY=VALUE, got '{}'", a);
      params[a.substr(0, eq)] = a.substr(eq + 1);
    }
  }
  Runner r = Make(op, params, inputs);
  r.run();
  if (!out_path.empty()) {
    std::vector<float> out = r.output();
    lang::Tensor t(lang::Shape{lang::DataType::F32, {static_cast<int64_t>(out.size())}});
    std::copy(out.begin(), out.end(), t.as<float>());
    runtime::WriteNpy(out_path, t);
  }
  // As the suite times PyTorch: warm-up calls, then at least 0.3 s of calls
  // (the OpenMP workers are awake), then the timed ones.
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < warmup || Ms(std::chrono::steady_clock::now() - start) < 300; ++i) r.run();
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    r.run();
    times.push_back(Ms(std::chrono::steady_clock::now() - t0));
  }
  std::sort(times.begin(), times.end());
  double median = times.size() % 2 ? times[times.size() / 2]
                                   : (times[times.size() / 2 - 1] + times[times.size() / 2]) / 2;
  std::string impl = r.detail;
  std::replace(impl.begin(), impl.end(), '"', '\'');
  std::printf("%s\n", fmt::format(R"({{"median_ms": {}, "min_ms": {}, "impl": "{}"}})", median, times.front(),
                                  impl)
                          .c_str());
  return 0;
}

}  // namespace
}  // namespace tilec::bench

int main(int argc, char** argv) {
  try {
    return tilec::bench::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_onednn: %s\n", e.what());
    return 1;
  }
}
