// The oneDNN peers of bench_peers: convolution (plain NHWC or oneDNN's
// blocked layouts, depthwise, fused ReLU), matmul, and relu(a * b + c) as a
// binary primitive with post-ops. Every primitive is created, and its inputs
// reordered into the layouts it wants, once, outside the timed runs.
#include <fmt/format.h>

#include <dnnl.hpp>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench/onednn_state.h"
#include "bench/peer.h"
#include "support/error.h"

#ifdef TILEC_BENCH_OPENMP
#include <omp.h>
#endif

namespace tilec::bench {

using namespace onednn;

Runner OneDnnConv(const ConvSpec& c, const Inputs& inputs, bool blocked) {
  auto s = std::make_shared<State>();
  int64_t oh = c.h + 2 * c.pad - c.kh + 1, ow = c.w + 2 * c.pad - c.kw + 1;
  memory::dims src{c.n, c.ci, c.h, c.w}, dst{c.n, c.co, oh, ow};
  memory::dims wei =
      c.depthwise ? memory::dims{c.ci, 1, 1, c.kh, c.kw} : memory::dims{c.co, c.ci, c.kh, c.kw};
  // K[KH, KW, CI, CO] is hwio; K[KH, KW, C] is hwigo with i = o = 1; with
  // logical NCHW data, K[CO, CI, KH, KW] is oihw.
  bool nhwc = c.layout == "nhwc";
  Tag data = nhwc                  ? Tag::nhwc
             : c.layout == "nchw"    ? Tag::nchw
             : c.layout == "nChw16c" ? Tag::nChw16c
             : c.layout == "nChw8c"  ? Tag::nChw8c
                                     : Tag::undef;
  TILEC_CHECK(data != Tag::undef, "no oneDNN tag for layout '{}'", c.layout);
  TILEC_CHECK(nhwc || !c.depthwise, "depthwise convolutions are NHWC here");
  Tag user = nhwc ? Tag::nhwc : Tag::nchw;
  memory::desc wei_user(wei, Dt::f32, c.depthwise ? Tag::hwigo : nhwc ? Tag::hwio : Tag::oihw);
  memory::desc src_user(src, Dt::f32, user), dst_user(dst, Dt::f32, user);
  memory::desc src_md(src, Dt::f32, blocked ? Tag::any : data);
  memory::desc dst_md(dst, Dt::f32, blocked ? Tag::any : data);
  memory::desc wei_md(wei, Dt::f32, Tag::any);
  dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                       dnnl::algorithm::convolution_direct, src_md, wei_md, dst_md, {1, 1},
                                       {c.pad, c.pad}, {c.pad, c.pad});
  dnnl::primitive_attr attr;
  if (c.relu) {
    dnnl::post_ops po;
    po.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    attr.set_post_ops(po);
  }
  dnnl::convolution_forward::primitive_desc pd(desc, attr, s->engine);
  s->primitive = dnnl::convolution_forward(pd);
  s->args[DNNL_ARG_SRC] = Place(*s, pd.src_desc(), src_user, Input(inputs, "D"));
  s->args[DNNL_ARG_WEIGHTS] = Place(*s, pd.weights_desc(), wei_user, Input(inputs, "K"));
  s->args[DNNL_ARG_DST] = memory(pd.dst_desc(), s->engine);
  s->output_user = dst_user;
  std::string name = fmt::format("onednn {}{}", c.depthwise ? "dw " : "", blocked ? "blocked (any)" : c.layout);
  return MakeRunner(s, name, pd.impl_info_str());
}

Runner OneDnnMatmul(int64_t m, int64_t n, int64_t k, const Inputs& inputs) {
  auto s = std::make_shared<State>();
  memory::desc a({m, k}, Dt::f32, Tag::ab), b({k, n}, Dt::f32, Tag::ab), c({m, n}, Dt::f32, Tag::ab);
  dnnl::matmul::desc desc(a, b, c);
  dnnl::matmul::primitive_desc pd(desc, s->engine);
  s->primitive = dnnl::matmul(pd);
  s->args[DNNL_ARG_SRC] = Place(*s, pd.src_desc(), a, Input(inputs, "A"));
  s->args[DNNL_ARG_WEIGHTS] = Place(*s, pd.weights_desc(), b, Input(inputs, "B"));
  s->args[DNNL_ARG_DST] = memory(pd.dst_desc(), s->engine);
  s->output_user = c;
  return MakeRunner(s, "onednn matmul", pd.impl_info_str());
}

Runner OneDnnMulAddRelu(int64_t count, const Inputs& inputs) {
  memory::desc md({count}, Dt::f32, Tag::a);
  dnnl::binary::desc mul(dnnl::algorithm::binary_mul, md, md, md);
  dnnl::post_ops po;
  po.append_binary(dnnl::algorithm::binary_add, md);
  po.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(po);
  auto s = std::make_shared<State>();
  std::optional<dnnl::binary::primitive_desc> fused;
  try {
    fused.emplace(mul, attr, s->engine);
  } catch (const dnnl::error&) {
    // This oneDNN cannot fuse a full-tensor binary post-op: two primitives.
  }
  if (fused) {
    s->primitive = dnnl::binary(*fused);
    s->args[DNNL_ARG_SRC_0] = Place(*s, md, md, Input(inputs, "A"));
    s->args[DNNL_ARG_SRC_1] = Place(*s, md, md, Input(inputs, "B"));
    s->args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] = Place(*s, md, md, Input(inputs, "C"));
    s->args[DNNL_ARG_DST] = memory(md, s->engine);
    s->output_user = md;
    return MakeRunner(s, "onednn binary+post-ops", fused->impl_info_str());
  }
  dnnl::binary::primitive_desc mul_pd(mul, s->engine);
  dnnl::post_ops relu;
  relu.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  dnnl::primitive_attr relu_attr;
  relu_attr.set_post_ops(relu);
  dnnl::binary::primitive_desc add_pd(dnnl::binary::desc(dnnl::algorithm::binary_add, md, md, md), relu_attr,
                                      s->engine);
  auto mul_prim = dnnl::binary(mul_pd);
  auto add_prim = dnnl::binary(add_pd);
  memory a = Place(*s, md, md, Input(inputs, "A")), b = Place(*s, md, md, Input(inputs, "B"));
  memory c = Place(*s, md, md, Input(inputs, "C")), t(md, s->engine), r(md, s->engine);
  Runner runner = MakeRunner(s, "onednn mul, add+relu", add_pd.impl_info_str());
  s->args[DNNL_ARG_DST] = r;
  s->output_user = md;
  runner.run = [s, mul_prim, add_prim, a, b, c, t, r] {
    mul_prim.execute(s->stream, {{DNNL_ARG_SRC_0, a}, {DNNL_ARG_SRC_1, b}, {DNNL_ARG_DST, t}});
    add_prim.execute(s->stream, {{DNNL_ARG_SRC_0, t}, {DNNL_ARG_SRC_1, c}, {DNNL_ARG_DST, r}});
    s->stream.wait();
  };
  return runner;
}

int SetOneDnnThreads(int threads) {
#ifdef TILEC_BENCH_OPENMP
  if (threads > 0) omp_set_num_threads(threads);
  return omp_get_max_threads();
#else
  return threads > 0 ? -1 : 0;  // unknown: built without OpenMP's header
#endif
}

}  // namespace tilec::bench
