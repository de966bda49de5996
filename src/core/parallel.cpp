#include "tessel/core/parallel.hpp"

#include <sched.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/check.hpp"

namespace tessel {

namespace {

int cpus_available() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

int default_num_threads() {
  if (const char* env = std::getenv("TESSEL_NUM_THREADS")) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n >= 1 && n <= 4096) {
      return static_cast<int>(n);
    }
    detail::fail(ErrorCode::BadConfig, "TESSEL_NUM_THREADS",
                 "expected a whole number from 1 to 4096, got '{}'", env);
  }
  return cpus_available();
}

thread_local bool t_inside_parallel = false;

// Workers sleep on a condition variable and each runs the chunk whose index
// matches its own; a generation counter tells them a new job has arrived.
class ThreadPool {
 public:
  explicit ThreadPool(int threads) : threads_(threads) {
    for (int w = 1; w < threads; ++w) {
      workers_.emplace_back([this, w] { work(w); });
    }
  }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
  }

  int threads() const { return threads_; }

  // Runs chunk c of `chunks` for every c; the caller takes chunk 0.
  void run(int chunks, FunctionRef<void(int)> chunk) {
    {
      std::lock_guard lock(mutex_);
      job_ = &chunk;
      chunks_ = chunks;
      pending_ = chunks - 1;
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    run_chunk(chunk, 0);
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
    job_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void run_chunk(FunctionRef<void(int)>& chunk, int c) {
    t_inside_parallel = true;
    try {
      chunk(c);
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    t_inside_parallel = false;
  }

  void work(int index) {
    std::uint64_t seen = 0;
    for (;;) {
      FunctionRef<void(int)>* job = nullptr;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
        if (index >= chunks_) continue;
        job = job_;
      }
      run_chunk(*job, index);
      bool last = false;
      {
        std::lock_guard lock(mutex_);
        last = --pending_ == 0;
      }
      if (last) done_.notify_one();
    }
  }

  int threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  FunctionRef<void(int)>* job_ = nullptr;
  int chunks_ = 0;
  int pending_ = 0;
  std::uint64_t generation_ = 0;
  bool stopping_ = false;
  std::exception_ptr error_;
};

std::mutex g_pool_mutex;  // owns the pool while a job runs or it is resized
std::unique_ptr<ThreadPool> g_pool;
std::atomic<int> g_threads{0};  // readable without the mutex

ThreadPool& pool_locked() {
  if (!g_pool) {
    g_pool = std::make_unique<ThreadPool>(default_num_threads());
    g_threads = g_pool->threads();
  }
  return *g_pool;
}

}  // namespace

void set_num_threads(int n) {
  TESSEL_CHECK(n >= 1 && n <= 4096, BadConfig, "set_num_threads",
               "expected 1 to 4096 threads, got {}", n);
  TESSEL_CHECK(!t_inside_parallel, BadConfig, "set_num_threads",
               "cannot resize the pool from inside a parallel region");
  std::lock_guard lock(g_pool_mutex);
  if (g_pool && g_pool->threads() == n) return;
  g_pool.reset();
  g_pool = std::make_unique<ThreadPool>(n);
  g_threads = n;
}

int get_num_threads() {
  if (const int n = g_threads.load()) return n;
  std::lock_guard lock(g_pool_mutex);
  return pool_locked().threads();
}

bool in_parallel_region() { return t_inside_parallel; }

void parallel_for(std::int64_t begin, std::int64_t end, std::int64_t grain,
                  FunctionRef<void(std::int64_t, std::int64_t)> fn) {
  if (end <= begin) return;
  const std::int64_t total = end - begin;
  grain = std::max<std::int64_t>(grain, 1);
  if (t_inside_parallel || total <= grain) {
    fn(begin, end);
    return;
  }
  std::unique_lock lock(g_pool_mutex, std::try_to_lock);
  if (!lock.owns_lock()) {  // another thread is using the pool
    fn(begin, end);
    return;
  }
  ThreadPool& pool = pool_locked();
  const std::int64_t by_grain = (total + grain - 1) / grain;
  const int chunks =
      static_cast<int>(std::min<std::int64_t>(pool.threads(), by_grain));
  if (chunks <= 1) {
    lock.unlock();
    fn(begin, end);
    return;
  }
  const std::int64_t step = (total + chunks - 1) / chunks;
  pool.run(chunks, [&](int c) {
    const std::int64_t lo = begin + c * step;
    const std::int64_t hi = std::min(end, lo + step);
    if (lo < hi) fn(lo, hi);
  });
}

}  // namespace tessel
