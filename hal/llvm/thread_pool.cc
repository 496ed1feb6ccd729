// ThreadPool (thread_pool.h): workers waiting on a launch generation.
#include "hal/llvm/thread_pool.h"

#include <chrono>

#include "support/error.h"

namespace tilec::hal::cpu {

ThreadPool::ThreadPool(int threads) {
  TILEC_CHECK(threads >= 1, "thread pool of {} threads", threads);
  for (int w = 1; w < threads; ++w) workers_.emplace_back([this, w] { Work(w); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  start_.notify_all();
  for (std::thread& t : workers_) t.join();
}

namespace {

// Spins until `done()` or kSpin has passed.
constexpr std::chrono::microseconds kSpin{20};

template <typename F>
void SpinWhileNot(F&& done) {
  auto until = std::chrono::steady_clock::now() + kSpin;
  while (!done()) {
    for (int i = 0; i < 32; ++i) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    if (std::chrono::steady_clock::now() >= until) return;
  }
}

}  // namespace

void ThreadPool::Work(int index) {
  uint64_t seen = 0;
  while (true) {
    const std::function<void(int)>* fn = nullptr;
    SpinWhileNot([&] { return generation_.load(std::memory_order_acquire) != seen; });
    {
      std::unique_lock<std::mutex> lock(mutex_);
      start_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (index >= chunks_ || !open_) continue;
      if (share_) ++pending_;
      fn = fn_;
    }
    std::exception_ptr error;
    try {
      (*fn)(index);
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (error && !error_) error_ = error;
    if (--pending_ == 0) finished_.notify_all();
  }
}

void ThreadPool::Run(int chunks, const std::function<void(int)>& fn) { Launch(chunks, false, fn); }

void ThreadPool::Share(int threads, const std::function<void(int)>& fn) { Launch(threads, true, fn); }

void ThreadPool::Launch(int chunks, bool share, const std::function<void(int)>& fn) {
  TILEC_CHECK(chunks >= 0 && chunks <= size(), "{} chunks for a pool of {} threads", chunks,
              size());
  std::lock_guard<std::mutex> run_lock(run_mutex_);
  if (chunks <= 1) {
    if (chunks == 1) fn(0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = &fn;
    chunks_ = chunks;
    share_ = share;
    open_ = true;
    pending_ = share ? 0 : chunks - 1;
    error_ = nullptr;
    ++generation_;
  }
  start_.notify_all();
  std::exception_ptr error;
  try {
    fn(0);
  } catch (...) {
    error = std::current_exception();
  }
  if (share) {
    // The work is taken: a worker that has not begun has nothing to do.
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = false;
  }
  SpinWhileNot([&] { return pending_.load(std::memory_order_acquire) == 0; });
  std::unique_lock<std::mutex> lock(mutex_);
  finished_.wait(lock, [&] { return pending_ == 0; });
  fn_ = nullptr;
  open_ = false;
  if (!error) error = error_;
  if (error) std::rethrow_exception(error);
}

}  // namespace tilec::hal::cpu
