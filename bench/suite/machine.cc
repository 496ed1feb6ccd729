// bench_machine: the machine's limits, as bench/suite/suite.py measures them
// at start. Prints one JSON object:
//   fma_gflops  the FMA peak: independent fused multiply-adds on the widest
//               vectors the CPU has (AVX-512, else AVX2), or on 8 lanes with
//               --lanes 8 (the limit of AVX2 code on an AVX-512 host: suite.py
//               --cpu x86-64-v3), on --threads threads, best of --runs (2
//               FLOPs per lane per FMA)
//   stream_gbps the streaming bandwidth: bench_peers' triad (peer_cpu.cc),
//               a[i] = b[i] * s + c[i] over 3 x 16M floats, best of --runs
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "bench/peer.h"

namespace {

// kChains independent accumulators hide the FMA latency (4 cycles, 2 ports).
constexpr int kChains = 12;

// kChains accumulators acc = acc * x + y; inlined into each ISA's copy below.
template <typename V>
__attribute__((always_inline)) inline float Chains(int64_t iterations) {
  V acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = V{} + static_cast<float>(c);
  V x = V{} + 0.999999f, y = V{} + 1e-7f;
  for (int64_t i = 0; i < iterations; ++i)
    for (int c = 0; c < kChains; ++c) acc[c] = acc[c] * x + y;
  float sum = 0;
  for (int c = 0; c < kChains; ++c) sum += acc[c][0];
  return sum;
}

using V16 = float __attribute__((vector_size(64)));
using V8 = float __attribute__((vector_size(32)));

__attribute__((target("avx512f,fma"))) float Fma512(int64_t iterations) {
  return Chains<V16>(iterations);
}
__attribute__((target("avx2,fma"))) float Fma256(int64_t iterations) {
  return Chains<V8>(iterations);
}

double Seconds(const std::function<void()>& f) {
  auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, runs = 5, lanes_wanted = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--threads") threads = std::max(1, std::atoi(argv[i + 1]));
    if (a == "--runs") runs = std::max(1, std::atoi(argv[i + 1]));
    if (a == "--lanes") lanes_wanted = std::atoi(argv[i + 1]);
  }
  bool avx512 = __builtin_cpu_supports("avx512f") && lanes_wanted != 8;
  int lanes = avx512 ? 16 : 8;
  const int64_t iterations = 20'000'000;
  volatile float sink = 0;
  double best_fma = 0;
  for (int r = 0; r < runs; ++r) {
    double s = Seconds([&] {
      std::vector<std::thread> pool;
      for (int t = 0; t < threads; ++t)
        pool.emplace_back([&] { sink = sink + (avx512 ? Fma512(iterations) : Fma256(iterations)); });
      for (std::thread& th : pool) th.join();
    });
    best_fma = std::max(best_fma, 2.0 * lanes * kChains * iterations * threads / s / 1e9);
  }
  const int64_t count = 16 << 20;
  tilec::bench::Runner triad = tilec::bench::Triad(count, threads);
  triad.run();
  double best_stream = 0;
  for (int r = 0; r < runs; ++r)
    best_stream = std::max(best_stream, 3.0 * 4 * count / Seconds(triad.run) / 1e9);
  fmt::print("{{\"fma_gflops\": {:.1f}, \"stream_gbps\": {:.1f}, \"threads\": {}, \"vector\": {}}}\n",
             best_fma, best_stream, threads, avx512 ? "\"avx512\"" : "\"avx2\"");
  return 0;
}
