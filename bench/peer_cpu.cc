// The peers of bench_peers that are not oneDNN: OpenBLAS's sgemm, and the
// streaming-bandwidth probe (a multi-threaded triad) that W7's elementwise
// result is measured against.
#include <cblas.h>

#include <algorithm>
#include <memory>
#include <thread>
#include <vector>

#include "bench/peer.h"
#include "support/error.h"

namespace tilec::bench {
namespace {

std::vector<float> Floats(const Inputs& inputs, const std::string& name) {
  auto it = inputs.find(name);
  TILEC_CHECK(it != inputs.end(), "the workload has no input '{}'", name);
  TILEC_CHECK(it->second.dtype() == lang::DataType::F32, "input '{}' is not f32", name);
  const float* p = it->second.as<float>();
  return std::vector<float>(p, p + it->second.size());
}

// Calls f(begin, end) on `threads` threads over [0, count) and joins them.
template <typename F>
void Parallel(int64_t count, int threads, F&& f) {
  std::vector<std::thread> pool;
  int64_t chunk = (count + threads - 1) / threads;
  for (int t = 1; t < threads; ++t) {
    int64_t begin = std::min(count, t * chunk), end = std::min(count, begin + chunk);
    pool.emplace_back([&f, begin, end] { f(begin, end); });
  }
  f(0, std::min(count, chunk));
  for (std::thread& th : pool) th.join();
}

// The triad's arrays (first touched by the threads that stream them).
struct Streams {
  int64_t count = 0;
  std::unique_ptr<float[]> a, b, c;
};

}  // namespace

Runner OpenBlasSgemm(int64_t m, int64_t n, int64_t k, const Inputs& inputs) {
  struct State {
    std::vector<float> a, b, c;
  };
  auto s = std::make_shared<State>();
  s->a = Floats(inputs, "A");
  s->b = Floats(inputs, "B");
  TILEC_CHECK(static_cast<int64_t>(s->a.size()) == m * k && static_cast<int64_t>(s->b.size()) == k * n,
              "sgemm inputs of {} and {} elements for {}x{}x{}", s->a.size(), s->b.size(), m, n, k);
  s->c.assign(static_cast<size_t>(m * n), 0.0f);
  Runner r;
  r.name = "openblas sgemm";
  r.detail = openblas_get_config();
  r.run = [s, m, n, k] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), 1.0f, s->a.data(), static_cast<int>(k), s->b.data(), static_cast<int>(n),
                0.0f, s->c.data(), static_cast<int>(n));
  };
  r.output = [s] { return s->c; };
  return r;
}

Runner Triad(int64_t count, int threads) {
  auto s = std::make_shared<Streams>();
  s->count = count;
  s->a.reset(new float[count]);
  s->b.reset(new float[count]);
  s->c.reset(new float[count]);
  threads = std::max(1, threads);
  Parallel(count, threads, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      s->a[i] = 0.0f;
      s->b[i] = static_cast<float>(i % 1024);
      s->c[i] = 1.0f;
    }
  });
  Runner r;
  r.name = "triad";
  r.detail = fmt::format("a[i] = b[i] * s + c[i], 3 x {} f32, {} threads", count, threads);
  r.run = [s, threads] {
    Parallel(s->count, threads, [&](int64_t begin, int64_t end) {
      float* __restrict a = s->a.get();
      const float* __restrict b = s->b.get();
      const float* __restrict c = s->c.get();
      for (int64_t i = begin; i < end; ++i) a[i] = b[i] * 3.0f + c[i];
    });
  };
  return r;
}

int SetOpenBlasThreads(int threads) {
  if (threads > 0) openblas_set_num_threads(threads);
  return openblas_get_num_threads();
}

}  // namespace tilec::bench
