// A persistent pool of worker threads for kernel launches on the CPU.
//
// Created once per device; Run hands out chunks of one launch, the calling
// thread working on chunk 0 and worker w on chunk w, and returns when every
// chunk is done. Share is for work that every thread takes from a shared
// counter: it does not wait for a worker that has not started when the
// caller's share is done, so a worker kept off its core (by another process,
// or by another thread pool in the same process: PyTorch's OpenMP workers
// spin for milliseconds after each parallel region) cannot hold up the
// launch. Launches from several threads run one at a time. Workers (and the
// caller, waiting for them) spin for a few microseconds before sleeping, so
// back-to-back launches of short kernels do not pay a wake-up each.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tilec::hal::cpu {

class ThreadPool {
 public:
  // `threads` counts the caller: threads - 1 workers are started (>= 1).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(c) for every c in [0, chunks), chunks <= size(), each on its
  // own thread, and waits for all. An exception of a chunk is rethrown here.
  void Run(int chunks, const std::function<void(int)>& fn);

  // Calls fn(0) on the caller's thread and fn(w) on each worker w < threads
  // that wakes while fn(0) runs (threads <= size()); returns when every call
  // made has returned. fn must take its work from shared state until none
  // is left, so that fn(0) alone does all of it when no worker comes. An
  // exception of any call is rethrown here.
  void Share(int threads, const std::function<void(int)>& fn);

 private:
  void Work(int index);
  // Run and Share: starts a launch of `chunks` (under run_mutex_), runs
  // fn(0), and waits for the workers that run.
  void Launch(int chunks, bool share, const std::function<void(int)>& fn);

  std::vector<std::thread> workers_;
  std::mutex run_mutex_;  // one launch at a time
  std::mutex mutex_;
  std::condition_variable start_, finished_;
  std::atomic<uint64_t> generation_{0};  // bumped per launch
  int chunks_ = 0;
  bool share_ = false;  // Share: workers join only while open_
  bool open_ = false;
  std::atomic<int> pending_{0};  // worker chunks not finished (Share: begun and not finished)
  const std::function<void(int)>* fn_ = nullptr;
  std::exception_ptr error_;
  bool stop_ = false;
};

}  // namespace tilec::hal::cpu
