// Concurrency through the C ABI (ctest label `threads`; run under
// ThreadSanitizer with -DTILEC_TSAN=ON): one compiled program run from
// several threads at once on different memory, and many programs compiled at
// once, some of them equal (the in-process cache's race), on every device.
#include <gtest/gtest.h>
#include <tilec/tilec.h>

#include <atomic>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kThreads = 4;

// R[i, j] = sum_k A[i, k] * B[k, j] + scale: exact in f32 for small integers.
const char* kMatmul = R"(function (A[M, K], B[K, N]) -> (R) {
  C[i, j : M, N] = +(A[i, k] * B[k, j]);
  R = C + 1.0;
})";

std::vector<float> Expected(const std::vector<float>& a, const std::vector<float>& b, int m, int k, int n) {
  std::vector<float> r(m * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float s = 0;
      for (int x = 0; x < k; ++x) s += a[i * k + x] * b[x * n + j];
      r[i * n + j] = s + 1.0f;
    }
  return r;
}

tilec_program Compile(tilec_device dev, int64_t m, int64_t k, int64_t n, bool cache) {
  int64_t ad[2] = {m, k}, bd[2] = {k, n};
  tilec_tensor_spec in[2] = {{"A", TILEC_F32, 2, ad, nullptr}, {"B", TILEC_F32, 2, bd, nullptr}};
  tilec_compile_options o{};
  o.no_cache = cache ? 0 : 1;
  tilec_program p = nullptr;
  tilec_error e = nullptr;
  if (tilec_program_compile(dev, kMatmul, "mm.tile", in, 2, &o, &p, &e) != TILEC_OK) {
    ADD_FAILURE() << tilec_error_text(e);
    tilec_error_release(e);
  }
  return p;
}

// Runs `p` (m x k times k x n) on fresh data seeded by `seed`; true if right.
bool RunAndCheck(tilec_program p, int64_t m, int64_t k, int64_t n, int seed) {
  std::vector<float> a(m * k), b(k * n), r(m * n, -1.0f);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 7 + seed) % 5) - 2;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 3 + seed) % 7) - 3;
  int64_t ad[2] = {m, k}, bd[2] = {k, n}, rd[2] = {m, n};
  tilec_tensor in[2] = {{a.data(), a.size() * 4, TILEC_F32, 2, ad, nullptr},
                        {b.data(), b.size() * 4, TILEC_F32, 2, bd, nullptr}};
  tilec_tensor out = {r.data(), r.size() * 4, TILEC_F32, 2, rd, nullptr};
  tilec_error e = nullptr;
  if (tilec_program_run(p, in, 2, &out, 1, &e) != TILEC_OK) {
    ADD_FAILURE() << tilec_error_text(e);
    tilec_error_release(e);
    return false;
  }
  return r == Expected(a, b, static_cast<int>(m), static_cast<int>(k), static_cast<int>(n));
}

class ThreadsTest : public ::testing::TestWithParam<size_t> {
 protected:
  void SetUp() override {
    if (GetParam() >= tilec_device_count()) GTEST_SKIP() << "no device " << GetParam();
#if defined(__SANITIZE_THREAD__)
    // PoCL is not instrumented: its workers synchronize where TSan cannot see
    // (docs/testing.md), so under TSan only the LLVM device is stressed.
    if (std::string(tilec_device_id(GetParam())).rfind("opencl", 0) == 0)
      GTEST_SKIP() << "OpenCL is not run under ThreadSanitizer";
#endif
    ASSERT_EQ(tilec_device_open(tilec_device_id(GetParam()), &dev_, nullptr), TILEC_OK);
  }
  void TearDown() override {
    if (dev_) tilec_device_release(dev_);
  }
  tilec_device dev_ = nullptr;
};

TEST_P(ThreadsTest, OneProgramRunsFromManyThreads) {
  tilec_program p = Compile(dev_, 19, 13, 37, true);
  ASSERT_NE(p, nullptr);
  std::atomic<int> wrong{0}, runs{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        if (!RunAndCheck(p, 19, 13, 37, t * 100 + i)) ++wrong;
        ++runs;
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(runs.load(), kThreads * 25);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(tilec_program_release(p), TILEC_OK);
}

TEST_P(ThreadsTest, ManyProgramsCompileAtOnce) {
  // Thread t compiles a shape of its own twice (cached and not) and one
  // shape every thread compiles; all run while the others still compile.
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      int64_t m = 5 + t, k = 3 + 2 * t, n = 11 + t;
      for (bool cache : {true, false}) {
        tilec_program own = Compile(dev_, m, k, n, cache);
        if (!own || !RunAndCheck(own, m, k, n, t)) ++wrong;
        if (own) tilec_program_release(own);
      }
      tilec_program shared = Compile(dev_, 9, 9, 9, true);
      if (!shared || !RunAndCheck(shared, 9, 9, 9, t)) ++wrong;
      if (shared) tilec_program_release(shared);
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST_P(ThreadsTest, ReleaseWhileOthersRun) {
  // Every thread holds the program through its handle; one releases it while
  // the rest run: later runs fail cleanly, none crashes.
  tilec_program p = Compile(dev_, 8, 8, 8, false);
  ASSERT_NE(p, nullptr);
  std::atomic<int> ok{0}, refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        if (t == 0 && i == 5) tilec_program_release(p);
        std::vector<float> a(64, 1.0f), b(64, 1.0f), r(64);
        int64_t d[2] = {8, 8};
        tilec_tensor in[2] = {{a.data(), 256, TILEC_F32, 2, d, nullptr}, {b.data(), 256, TILEC_F32, 2, d, nullptr}};
        tilec_tensor out = {r.data(), 256, TILEC_F32, 2, d, nullptr};
        tilec_error e = nullptr;
        if (tilec_program_run(p, in, 2, &out, 1, &e) == TILEC_OK) {
          if (r[0] == 9.0f) ++ok;
        } else {
          if (tilec_error_kind(e) == TILEC_ERROR_USAGE) ++refused;
          tilec_error_release(e);
        }
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(ok.load() + refused.load(), kThreads * 20);
  EXPECT_GE(refused.load(), 15);  // thread 0's own runs after its release at least
}

INSTANTIATE_TEST_SUITE_P(Devices, ThreadsTest, ::testing::Values(0, 1));

}  // namespace
