#include "tessel/core/parallel.hpp"

#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>

#include "core/check.hpp"

// Note [one set of threads]: parallel_for runs on OpenMP's thread team,
// the same team oneDNN's GEMMs and convolutions use (Debian builds oneDNN
// with its OpenMP runtime and no threadpool interface). With a pool of our
// own beside it, the two sets of workers took turns: libgomp's spun for a
// while after every GEMM on the core a tessel worker needed next, and about
// a third of a training step's CPU time was that spinning. One team means
// the thread that spins is the one about to be handed the next chunk.

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

// Held by the thread whose job occupies the team: a second caller runs its
// range inline instead of starting a second team that would oversubscribe
// the cores.
std::mutex g_team_mutex;
std::atomic<int> g_threads{0};

}  // namespace

void set_num_threads(int n) {
  TESSEL_CHECK(n >= 1 && n <= 4096, BadConfig, "set_num_threads",
               "expected 1 to 4096 threads, got {}", n);
  TESSEL_CHECK(!t_inside_parallel, BadConfig, "set_num_threads",
               "cannot resize the pool from inside a parallel region");
  g_threads = n;
}

int get_num_threads() {
  if (const int n = g_threads.load()) return n;
  int expected = 0;
  g_threads.compare_exchange_strong(expected, default_num_threads());
  return g_threads.load();
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
  const std::int64_t by_grain = (total + grain - 1) / grain;
  const int chunks =
      static_cast<int>(std::min<std::int64_t>(get_num_threads(), by_grain));
  std::unique_lock team(g_team_mutex, std::try_to_lock);
  if (chunks <= 1 || !team.owns_lock()) {
    fn(begin, end);
    return;
  }
  const std::int64_t step = (total + chunks - 1) / chunks;
  std::exception_ptr error;
  std::mutex error_mutex;
  // The split depends only on the range, grain and thread count: if the
  // runtime grants fewer threads (OMP_THREAD_LIMIT), each takes several
  // chunks.
#pragma omp parallel num_threads(chunks)
  {
    t_inside_parallel = true;
    for (int c = omp_get_thread_num(); c < chunks; c += omp_get_num_threads()) {
      const std::int64_t lo = begin + c * step;
      const std::int64_t hi = std::min(end, lo + step);
      if (lo >= hi) continue;
      try {
        fn(lo, hi);
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    }
    t_inside_parallel = false;
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace tessel
