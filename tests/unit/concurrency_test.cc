// Concurrency stress tests, run in CI under ThreadSanitizer (ctest label
// `threads`, build-tsan/, docs/testing.md): the LLVM backend's thread pool
// with several launching threads, and Programs compiled and run from several
// threads on one shared device. Only the LLVM device: PoCL is left out of the
// TSan run (see docs/testing.md). No timing: the checks are counts and values.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "hal/hal.h"
#include "hal/llvm/thread_pool.h"
#include "runtime/program.h"
#include "tests/unit/pipeline_check.h"
#include "tile_lang/binder.h"
#include "tile_lang/evaluator.h"
#include "tile_lang/parser.h"
#include "tile_lang/tensor.h"

namespace tilec {
namespace {

using hal::cpu::ThreadPool;
using testing::RandomInputs;

constexpr int kCallers = 4;

// Several threads launch on one pool at once. Each launch writes plain
// (non-atomic) slots from its chunks and the caller reads them after Run: if
// Run did not order the chunks' writes before its return, TSan reports it.
TEST(ThreadPoolStress, ConcurrentCallersSeeEveryChunk) {
  ThreadPool pool(4);
  std::vector<int> chunk_sum(kCallers, 0);
  std::vector<std::thread> callers;
  for (int t = 0; t < kCallers; ++t) {
    callers.emplace_back([&, t] {
      for (int launch = 0; launch < 300; ++launch) {
        int chunks = 1 + (launch + t) % pool.size();
        std::vector<int> slots(chunks, 0);
        pool.Run(chunks, [&](int c) { slots[c] = c + 1; });
        for (int v : slots) chunk_sum[t] += v;
      }
    });
  }
  for (std::thread& c : callers) c.join();
  for (int t = 0; t < kCallers; ++t) {
    int want = 0;
    for (int launch = 0; launch < 300; ++launch) {
      int chunks = 1 + (launch + t) % pool.size();
      want += chunks * (chunks + 1) / 2;
    }
    EXPECT_EQ(chunk_sum[t], want) << "caller " << t;
  }
}

// Exceptions from chunks while other threads launch: each throwing launch
// rethrows in its own caller, and the pool keeps working.
TEST(ThreadPoolStress, ExceptionsWhileOthersLaunch) {
  ThreadPool pool(3);
  std::vector<int> thrown(kCallers, 0), completed(kCallers, 0);
  std::vector<std::thread> callers;
  for (int t = 0; t < kCallers; ++t) {
    callers.emplace_back([&, t] {
      for (int launch = 0; launch < 200; ++launch) {
        bool fail = launch % 3 == 0;
        try {
          pool.Run(3, [&](int c) {
            if (fail && c == launch % 3 + 1) throw std::runtime_error("chunk");
          });
          ++completed[t];
        } catch (const std::runtime_error&) {
          ++thrown[t];
        }
      }
    });
  }
  for (std::thread& c : callers) c.join();
  for (int t = 0; t < kCallers; ++t) {
    EXPECT_EQ(thrown[t], 67) << "caller " << t;
    EXPECT_EQ(completed[t], 133) << "caller " << t;
  }
}

// Pools created and destroyed while idle and right after a launch.
TEST(ThreadPoolStress, CreateLaunchDestroy) {
  int total = 0;
  for (int round = 0; round < 50; ++round) {
    ThreadPool pool(1 + round % 4);
    std::vector<int> slots(pool.size(), 0);
    pool.Run(pool.size(), [&](int c) { slots[c] = 1; });
    for (int v : slots) total += v;
  }
  int want = 0;
  for (int round = 0; round < 50; ++round) want += 1 + round % 4;
  EXPECT_EQ(total, want);
}

struct Job {
  std::string source;
  std::map<std::string, lang::Shape> shapes;
};

// Programs of several kernel kinds at sizes that divide no tile.
std::vector<Job> Jobs() {
  auto f32 = [](std::vector<int64_t> d) { return lang::Shape{lang::DataType::F32, std::move(d)}; };
  return {
      {"function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }",
       {{"A", f32({13, 17})}, {"B", f32({17, 11})}}},
      {"function (I[N, C], K[C]) -> (O) { T[n : N] = >(I[n, c] * K[c]); O = T * 2 + 1; }",
       {{"I", f32({19, 7})}, {"K", f32({7})}}},
      {"function (A[N]) -> (B) { B = exp(A) / (1 + A * A); }", {{"A", f32({1001})}}},
      {"function (I[X], K[Y]) -> (O) { O[x : X] = +(I[x + y - 1] * K[y]), y < 3; }",
       {{"I", f32({37})}, {"K", f32({3})}}},
  };
}

void ExpectNear(const std::map<std::string, lang::Tensor>& got,
                const std::map<std::string, lang::Tensor>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (const auto& [name, w] : want) {
    const lang::Tensor& g = got.at(name);
    ASSERT_EQ(g.shape(), w.shape()) << what;
    int bad = 0;
    for (int64_t i = 0; i < w.size() && bad < 5; ++i) {
      double a = g.GetDouble(i), b = w.GetDouble(i);
      if (!(std::fabs(a - b) <= 1e-4 * std::max(1.0, std::fabs(b)))) {
        ++bad;
        ADD_FAILURE() << what << ": " << name << "[" << i << "] = " << a << ", expected " << b;
      }
    }
  }
}

// Each thread compiles its own copy of every job on one shared device
// (concurrent JIT compiles and JIT-cache hits for the same kernels) and runs
// it on inputs of its own; the results are compared with the evaluator after
// the threads are done.
TEST(ConcurrentPrograms, CompileAndRunOnOneDevice) {
  std::shared_ptr<hal::Device> device = hal::OpenDevice("llvm:cpu");
  std::vector<Job> jobs = Jobs();
  constexpr int kRuns = 3;
  // results[thread][job][run]
  std::vector<std::vector<std::vector<std::map<std::string, lang::Tensor>>>> results(kCallers);
  std::vector<std::string> errors(kCallers);
  std::vector<std::thread> threads;
  for (int t = 0; t < kCallers; ++t) {
    threads.emplace_back([&, t] {
      try {
        for (size_t j = 0; j < jobs.size(); ++j) {
          runtime::Program p = runtime::Program::Compile(
              MakeSource("job.tile", jobs[j].source), jobs[j].shapes, device);
          results[t].emplace_back();
          for (int r = 0; r < kRuns; ++r)
            results[t][j].push_back(p.Run(RandomInputs(p.bound(), 100 * t + 10 * r)));
        }
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kCallers; ++t) {
    ASSERT_EQ(errors[t], "") << "thread " << t;
    ASSERT_EQ(results[t].size(), jobs.size());
    for (size_t j = 0; j < jobs.size(); ++j) {
      lang::Program bound =
          lang::Bind(lang::Parse(MakeSource("job.tile", jobs[j].source)), jobs[j].shapes);
      for (int r = 0; r < kRuns; ++r) {
        auto want = lang::Evaluate(bound, RandomInputs(bound, 100 * t + 10 * r));
        ExpectNear(results[t][j][r], want, "thread " + std::to_string(t) + " job " +
                                               std::to_string(j) + " run " + std::to_string(r));
      }
    }
  }
}

}  // namespace
}  // namespace tilec
