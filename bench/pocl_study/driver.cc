// PoCL conv3x3 kernel-structure study: hand-written OpenCL variants vs oneDNN.
//
//   driver [--runs N] [--rounds R] [--dir DIR] SPEC...
//
// SPEC = name|file.cl|G0,G1,G2|L0,L1,L2|kt|build options
//   kt=1: a ktrans.cl launch (K -> Kt [I,J,CI,CO]) runs inside the timed region
//   and the variant gets Kt in place of K; kt=2: Kt is made once before timing
//   (K treated as a constant weight).  L all 0: the driver picks.
// (see run.sh for the main ones; --dir DIR: where the .cl files are, default
// the current directory). Workload: D NHWC [1,56,56,64],
// K [3,3,64(co),64(ci)], R = relu(conv "same"), checked against a C++
// reference (max abs error). Each round times oneDNN (plain NHWC, fused ReLU)
// and every variant (median of N wall-clock runs around Launch) and prints the
// ratio oneDNN_ms / variant_ms (> 1: variant faster).
#include <dnnl.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "hal/opencl/opencl_device.h"
#include "support/error.h"

namespace {

constexpr int kHw = 56, kC = 64;
constexpr double kFlop = 2.0 * kHw * kHw * kC * kC * 9;
using Clock = std::chrono::steady_clock;

double CpuMs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// Median wall ms of `runs` calls; `cpu` gets the median process CPU ms (all
// threads), which the shared machine's load disturbs much less when both
// sides run on one thread (OMP_NUM_THREADS=1 POCL_MAX_PTHREAD_COUNT=1).
template <typename F>
double MedianMs(int runs, F&& f, double* cpu = nullptr, double* min = nullptr) {
  f();  // warm-up
  std::vector<double> ms, cms;
  for (int r = 0; r < runs; ++r) {
    double c0 = CpuMs();
    auto t0 = Clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    cms.push_back(CpuMs() - c0);
  }
  std::sort(ms.begin(), ms.end());
  std::sort(cms.begin(), cms.end());
  if (cpu) *cpu = cms[cms.size() / 2];
  if (min) *min = ms[0];
  return ms[ms.size() / 2];
}

struct OneDnn {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream s{eng};
  dnnl::memory src, wei, dst;
  dnnl::convolution_forward conv;
  OneDnn() {
    using namespace dnnl;
    using tag = memory::format_tag;
    using dt = memory::data_type;
    memory::dims sd{1, kC, kHw, kHw}, wd{kC, kC, 3, 3};
    auto src_md = memory::desc(sd, dt::f32, tag::nhwc);
    auto wei_md = memory::desc(wd, dt::f32, tag::hwio);
    auto dst_md = memory::desc(sd, dt::f32, tag::nhwc);
    convolution_forward::desc desc(prop_kind::forward_inference, algorithm::convolution_direct,
                                   src_md, wei_md, dst_md, {1, 1}, {1, 1}, {1, 1});
    post_ops po;
    po.append_eltwise(1.0f, algorithm::eltwise_relu, 0.0f, 0.0f);
    primitive_attr attr;
    attr.set_post_ops(po);
    convolution_forward::primitive_desc pd(desc, attr, eng);
    src = memory(pd.src_desc(), eng);
    wei = memory(pd.weights_desc(), eng);
    dst = memory(pd.dst_desc(), eng);
    for (auto* m : {&src, &wei}) {
      float* p = static_cast<float*>(m->get_data_handle());
      size_t count = m->get_desc().get_size() / sizeof(float);
      for (size_t i = 0; i < count; ++i) p[i] = static_cast<float>((i * 7919) % 200) / 100.0f - 1.0f;
    }
    conv = convolution_forward(pd);
  }
  double Ms(int runs, double* cpu, double* min) {
    return MedianMs(runs, [&] {
      conv.execute(s, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
      s.wait();
    }, cpu, min);
  }
};

struct Spec {
  std::string name, file;
  std::array<size_t, 3> global{}, local{};
  int kt = 0;  // 0: K; 1: Kt, ktrans timed with the variant; 2: Kt made once, untimed
  std::string options;
};

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  if (!s.empty() && s.back() == sep) out.push_back("");
  return out;
}

Spec ParseSpec(const std::string& s) {
  auto f = Split(s, '|');
  if (f.size() < 5) {
    fmt::print(stderr, "bad spec '{}'\n", s);
    std::exit(2);
  }
  Spec spec;
  spec.name = f[0];
  spec.file = f[1];
  auto g = Split(f[2], ','), l = Split(f[3], ',');
  for (int d = 0; d < 3; ++d) {
    spec.global[d] = std::stoul(g.at(d));
    spec.local[d] = std::stoul(l.at(d));
  }
  spec.kt = std::stoi(f[4]);
  if (f.size() > 5) spec.options = f[5];
  return spec;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    fmt::print(stderr, "cannot read {}\n", path);
    std::exit(2);
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<float> Reference(const std::vector<float>& d, const std::vector<float>& k) {
  std::vector<float> r(kHw * kHw * kC);
  for (int x = 0; x < kHw; ++x)
    for (int y = 0; y < kHw; ++y)
      for (int co = 0; co < kC; ++co) {
        double acc = 0;
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j) {
            int xi = x + i - 1, yj = y + j - 1;
            if (xi < 0 || xi >= kHw || yj < 0 || yj >= kHw) continue;
            const float* dp = &d[(xi * kHw + yj) * kC];
            const float* kp = &k[((i * 3 + j) * kC + co) * kC];
            for (int ci = 0; ci < kC; ++ci) acc += double(dp[ci]) * kp[ci];
          }
        r[(x * kHw + y) * kC + co] = acc > 0 ? float(acc) : 0.0f;
      }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tilec::hal::opencl;
  int runs = 15, rounds = 2;
  std::string dir = ".";
  std::vector<Spec> specs;
  for (int a = 1; a < argc; ++a) {
    std::string arg = argv[a];
    if (arg == "--runs" && a + 1 < argc) runs = std::atoi(argv[++a]);
    else if (arg == "--rounds" && a + 1 < argc) rounds = std::atoi(argv[++a]);
    else if (arg == "--dir" && a + 1 < argc) dir = argv[++a];
    else specs.push_back(ParseSpec(arg));
  }
  try {
    Device dev = OpenDevice("opencl");
    size_t dn = kHw * kHw * kC, kn = 9 * kC * kC;
    std::vector<float> d(dn), k(kn), r(dn);
    srand(1);
    for (auto& v : d) v = float(rand() % 2001 - 1000) / 1000.0f;
    for (auto& v : k) v = float(rand() % 2001 - 1000) / 1000.0f;
    std::vector<float> ref = Reference(d, k);
    Buffer bd = dev.Allocate(dn * 4), bk = dev.Allocate(kn * 4), bkt = dev.Allocate(kn * 4),
           br = dev.Allocate(dn * 4);
    dev.Write(bd, d.data(), dn * 4);
    dev.Write(bk, k.data(), kn * 4);
    Kernel ktrans = dev.GetKernel(dev.Build(ReadFile(dir + "/ktrans.cl")), "ktrans");
    std::vector<Kernel> kernels;
    for (const Spec& s : specs) {
      kernels.push_back(dev.GetKernel(dev.Build(ReadFile(dir + "/" + s.file), s.options), "conv"));
    }
    auto run = [&](size_t v) {
      const Spec& s = specs[v];
      if (s.kt == 1) dev.Launch(ktrans, {bk, bkt}, {64, 64, 9}, {0, 0, 0}, 3);
      dev.Launch(kernels[v], {bd, s.kt ? bkt : bk, br}, s.global, s.local, 3);
    };
    dev.Launch(ktrans, {bk, bkt}, {64, 64, 9}, {0, 0, 0}, 3);  // for kt=2
    std::vector<double> err(specs.size());
    for (size_t v = 0; v < specs.size(); ++v) {
      dev.FillZero(br);
      run(v);
      dev.Read(br, r.data(), dn * 4);
      double e = 0;
      for (size_t q = 0; q < dn; ++q) e = std::max(e, double(std::fabs(r[q] - ref[q])));
      err[v] = e;
    }
    OneDnn dnn;
    for (int round = 0; round < rounds; ++round) {
      double dnn_cpu = 0, dnn_min = 0, dnn_ms = dnn.Ms(runs, &dnn_cpu, &dnn_min);
      fmt::print("round {}: onednn nhwc {:.3f} ms {:.1f} GFLOP/s (cpu {:.3f} ms)\n", round, dnn_ms,
                 kFlop / dnn_ms / 1e6, dnn_cpu);
      for (size_t v = 0; v < specs.size(); ++v) {
        double cpu = 0, mn = 0, ms = MedianMs(runs, [&] { run(v); }, &cpu, &mn);
        double dnn_cpu2 = 0, dnn_min2 = 0;
        double dnn2 = dnn.Ms(runs, &dnn_cpu2, &dnn_min2);  // again: the machine is shared
        double ref_ms = std::min(dnn_ms, dnn2), ref_cpu = std::min(dnn_cpu, dnn_cpu2);
        double ref_min = std::min(dnn_min, dnn_min2);
        fmt::print("  {:<24} med {:7.3f} ms {:6.1f} GF/s ratio {:.3f} | min {:6.3f} ms ratio {:.3f} | "
                   "cpu {:6.3f} ms ratio {:.3f} | dnn med {:.3f} min {:.3f} | maxerr {:.1e}{}\n",
                   specs[v].name, ms, kFlop / ms / 1e6, ref_ms / ms, mn, ref_min / mn, cpu,
                   ref_cpu / cpu, ref_ms, ref_min, err[v], err[v] > 1e-3 ? "  WRONG" : "");
        dnn_ms = dnn2;
        dnn_cpu = dnn_cpu2;
        dnn_min = dnn_min2;
      }
    }
  } catch (const tilec::Error& e) {
    fmt::print(stderr, "{}\n", e.Render());
    return 1;
  }
  return 0;
}
