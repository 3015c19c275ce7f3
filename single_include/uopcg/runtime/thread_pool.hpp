// uopcg single header runtime/thread_pool.hpp: the optional header include/uopcg/runtime/thread_pool.hpp (its comment says what it needs).
// Generated from include/ by tools/amalgamate.py — do not edit; regenerate with
// `python3 tools/amalgamate.py`. Do not mix with include/'s headers in one translation unit;
// the single headers combine with each other (shared include guards).
// Inlined, in order: 1 headers from include/
//   uopcg/runtime/thread_pool.hpp
#pragma once
#ifndef UOPCG_SINGLE_HEADER
#define UOPCG_SINGLE_HEADER 1
#endif

// ---- begin uopcg/runtime/thread_pool.hpp ----
#ifndef UOPCG_SINGLE_RUNTIME_THREAD_POOL_HPP
#define UOPCG_SINGLE_RUNTIME_THREAD_POOL_HPP
// A fixed set of worker threads for index-parallel work: run(n, f) calls f(0) ... f(n - 1) spread
// over the workers and the calling thread, and returns when every call has returned. The BEAM
// search (beam_search.hpp) compiles and builds its candidates with it. An exception from f does not
// stop the other calls; run rethrows the one of the smallest index once all are done, so a caller
// sees the same error whatever the threads' timing.

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace uopcg::runtime {

class ThreadPool {
 public:
  /// `threads` threads work on each run, the caller included (so threads - 1 workers are started);
  /// 0: std::thread::hardware_concurrency(), at least 1.
  explicit ThreadPool(std::size_t threads = 0) {
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    workers_.reserve(threads - 1);
    for (std::size_t i = 0; i + 1 < threads; ++i) workers_.emplace_back([this] { work(); });
  }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      quit_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  /// Threads working on a run, the caller included.
  std::size_t size() const { return workers_.size() + 1; }

  /// f(i) for every i < n, in parallel; returns when all have returned. Runs from several threads
  /// take turns; f must not call run on the same pool.
  void run(std::size_t n, const std::function<void(std::size_t)>& f) {
    if (n == 0) return;
    std::lock_guard<std::mutex> one_run(run_mutex_);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &f;
      n_ = n;
      next_.store(0);
      busy_ = workers_.size();
      error_index_ = n;
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    drain();
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return busy_ == 0; });
    job_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  /// Takes indices of the current run until there are none left.
  void drain() {
    for (std::size_t i; (i = next_.fetch_add(1)) < n_;) {
      try {
        (*job_)(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (i < error_index_) {
          error_index_ = i;
          error_ = std::current_exception();
        }
      }
    }
  }

  void work() {
    std::size_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return quit_ || generation_ != seen; });
        if (quit_) return;
        seen = generation_;
      }
      drain();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        --busy_;
      }
      done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex run_mutex_;  // one run at a time
  std::mutex mutex_;      // guards everything below but next_
  std::condition_variable wake_, done_;
  const std::function<void(std::size_t)>* job_ = nullptr;
  std::size_t n_ = 0;
  std::atomic<std::size_t> next_{0};
  std::size_t busy_ = 0;        // workers still draining the current run
  std::size_t generation_ = 0;  // counts runs: a worker takes part once per run
  std::size_t error_index_ = 0;
  std::exception_ptr error_;
  bool quit_ = false;
};

}  // namespace uopcg::runtime
#endif  // UOPCG_SINGLE_RUNTIME_THREAD_POOL_HPP
// ---- end uopcg/runtime/thread_pool.hpp ----
