// The generated conv+ReLU against oneDNN, side by side in one process.
//
//   bench_conv_peer [--device opencl] [--runs 20] [--n 1] [--hw 56] [--c 64] [--local 0|1]
//
// Workload: 3x3 "same" convolution + ReLU, NHWC, N x HW x HW x C -> C, the
// seed's Tile program (K laid out [I, J, CO, CI]). oneDNN runs the same
// convolution with a fused ReLU post-op on plain NHWC tensors, and on its
// preferred (blocked) layouts. Each side runs once to warm up, then `runs`
// times; the median wall time is reported (inputs already on the device,
// outputs left there), with GFLOP/s (2 per multiply-add) and the ratio
// Tilec / oneDNN (> 1 means Tilec is faster).
#include <dnnl.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "hal/hal.h"
#include "runtime/program.h"
#include "support/error.h"

namespace {

using Clock = std::chrono::steady_clock;

template <typename F>
double MedianMs(int runs, F&& f) {
  f();  // warm-up
  std::vector<double> ms;
  for (int r = 0; r < runs; ++r) {
    auto t0 = Clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

double OneDnnMs(int64_t n, int64_t hw, int64_t c, bool blocked, int runs) {
  using namespace dnnl;
  using tag = memory::format_tag;
  using dt = memory::data_type;
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  memory::dims src{n, c, hw, hw}, wei{c, c, 3, 3}, dst{n, c, hw, hw};
  auto src_md = memory::desc(src, dt::f32, blocked ? tag::any : tag::nhwc);
  auto wei_md = memory::desc(wei, dt::f32, blocked ? tag::any : tag::hwio);
  auto dst_md = memory::desc(dst, dt::f32, blocked ? tag::any : tag::nhwc);
  convolution_forward::desc desc(prop_kind::forward_inference, algorithm::convolution_direct,
                                 src_md, wei_md, dst_md, {1, 1}, {1, 1}, {1, 1});
  post_ops po;
  po.append_eltwise(1.0f, algorithm::eltwise_relu, 0.0f, 0.0f);
  primitive_attr attr;
  attr.set_post_ops(po);
  convolution_forward::primitive_desc pd(desc, attr, eng);
  memory src_m(pd.src_desc(), eng), wei_m(pd.weights_desc(), eng), dst_m(pd.dst_desc(), eng);
  auto fill = [](memory& m) {
    float* p = static_cast<float*>(m.get_data_handle());
    size_t count = m.get_desc().get_size() / sizeof(float);
    for (size_t i = 0; i < count; ++i) p[i] = static_cast<float>((i * 7919) % 200) / 100.0f - 1.0f;
  };
  fill(src_m);
  fill(wei_m);
  convolution_forward conv(pd);
  return MedianMs(runs, [&] {
    conv.execute(s, {{DNNL_ARG_SRC, src_m}, {DNNL_ARG_WEIGHTS, wei_m}, {DNNL_ARG_DST, dst_m}});
    s.wait();
  });
}

double TilecMs(const std::string& device_id, int64_t n, int64_t hw, int64_t c, int runs,
               int local) {
  using namespace tilec;
  auto device = std::shared_ptr<hal::Device>(hal::OpenDevice(device_id));
  auto source = MakeSource("conv_relu.tile", R"(function (D[N, X, Y, CI], K[I, J, CO, CI]) -> (R) {
  O[n, x, y, co : N, X, Y, CO] = +(D[n, x + i - 1, y + j - 1, ci] * K[i, j, co, ci]);
  R = (O > 0 ? O : 0);
})");
  lang::Shape d{lang::DataType::F32, {n, hw, hw, c}}, k{lang::DataType::F32, {3, 3, c, c}};
  compiler::CompileOptions options;
  if (local >= 0) options.use_local = local != 0;
  runtime::Program p = runtime::Program::Compile(source, {{"D", d}, {"K", k}}, device, options);
  lang::Tensor dt(d), kt(k);
  lang::FillRandom(dt, 1);
  lang::FillRandom(kt, 2);
  p.Upload({{"D", dt}, {"K", kt}});
  for (const auto& kern : p.compiled().kernels)
    if (kern.search)
      fmt::print("tilec {}: tile {}\n", kern.spec.name, compiler::TileText(kern.spec.flat, kern.tile));
  return MedianMs(runs, [&] { p.Execute(); });
}

}  // namespace

int main(int argc, char** argv) {
  std::string device = "opencl";
  int runs = 20;
  int64_t n = 1, hw = 56, c = 64;
  int local = -1;  // -1: the device's choice
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--device") device = argv[i + 1];
    else if (a == "--runs") runs = std::atoi(argv[i + 1]);
    else if (a == "--n") n = std::atoll(argv[i + 1]);
    else if (a == "--hw") hw = std::atoll(argv[i + 1]);
    else if (a == "--c") c = std::atoll(argv[i + 1]);
    else if (a == "--local") local = std::atoi(argv[i + 1]);
    else {
      fmt::print(stderr, "unknown option {}\n", a);
      return 2;
    }
  }
  try {
    double flops = 2.0 * n * hw * hw * c * c * 9;
    double tilec_ms = TilecMs(device, n, hw, c, runs, local);
    double dnnl_plain = OneDnnMs(n, hw, c, false, runs);
    double dnnl_best = OneDnnMs(n, hw, c, true, runs);
    auto line = [&](const char* name, double ms) {
      fmt::print("{:<22} median {:9.3f} ms  {:8.2f} GFLOP/s\n", name, ms, flops / ms / 1e6);
    };
    fmt::print("conv3x3 same + ReLU, NHWC N={} {}x{} {}->{} ({} runs)\n", n, hw, hw, c, c, runs);
    line(("tilec " + device).c_str(), tilec_ms);
    line("onednn nhwc", dnnl_plain);
    line("onednn best layout", dnnl_best);
    fmt::print("ratio tilec/onednn-nhwc throughput: {:.3f}\n", dnnl_plain / tilec_ms);
    fmt::print("ratio tilec/onednn-best throughput: {:.3f}\n", dnnl_best / tilec_ms);
  } catch (const tilec::Error& e) {
    fmt::print(stderr, "{}\n", e.Render());
    return 1;
  }
  return 0;
}
