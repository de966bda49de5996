#include "tessel/core/parallel.hpp"

#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

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

namespace {

// Runs next_chunk's chunks on `threads` members of the team, each thread
// asking for another until it returns false; the first exception a chunk
// throws is rethrown here.
template <class NextChunk>
void run_team(int threads, NextChunk next_chunk,
              FunctionRef<void(std::int64_t, std::int64_t)> fn) {
  std::exception_ptr error;
  std::mutex error_mutex;
#pragma omp parallel num_threads(threads)
  {
    t_inside_parallel = true;
    std::int64_t lo = 0, hi = 0;
    int turn = 0;
    while (next_chunk(turn++, lo, hi)) {
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

// How many threads a call cut into `pieces` runs on, claiming the team in
// `team`; 1 when it runs inline on the caller: one piece or one thread, a
// nested call, or another caller's job holding the team.
int claim_team(std::int64_t pieces, std::unique_lock<std::mutex>& team) {
  if (t_inside_parallel) return 1;
  const int threads =
      static_cast<int>(std::min<std::int64_t>(get_num_threads(), pieces));
  if (threads <= 1) return 1;
  team = std::unique_lock(g_team_mutex, std::try_to_lock);
  return team.owns_lock() ? threads : 1;
}

}  // namespace

void parallel_for(std::int64_t begin, std::int64_t end, std::int64_t grain,
                  FunctionRef<void(std::int64_t, std::int64_t)> fn) {
  if (end <= begin) return;
  const std::int64_t total = end - begin;
  grain = std::max<std::int64_t>(grain, 1);
  std::unique_lock<std::mutex> team;
  const int chunks = claim_team((total + grain - 1) / grain, team);
  if (chunks == 1) {
    fn(begin, end);
    return;
  }
  const std::int64_t step = (total + chunks - 1) / chunks;
  // The split depends only on the range, grain and thread count: if the
  // runtime grants fewer threads (OMP_THREAD_LIMIT), each takes several
  // chunks.
  run_team(
      chunks,
      [&](int turn, std::int64_t& lo, std::int64_t& hi) {
        // Empty chunks can only trail the non-empty ones.
        const int c = omp_get_thread_num() + turn * omp_get_num_threads();
        lo = begin + c * step;
        hi = std::min(end, lo + step);
        return c < chunks && lo < hi;
      },
      fn);
}

namespace {

// The chunks [front, back) of one thread's share, packed in one word so
// that its owner (taking the front) and a thief (taking the back) agree on
// who gets the last one.
struct alignas(64) Share {
  std::atomic<std::uint64_t> range;

  static std::uint64_t pack(std::uint32_t front, std::uint32_t back) {
    return std::uint64_t{front} << 32 | back;
  }
  // Takes the front chunk (owner) or the back one (thief); false if none.
  bool take(bool from_front, std::int64_t& chunk) {
    std::uint64_t now = range.load(std::memory_order_relaxed);
    for (;;) {
      const auto front = static_cast<std::uint32_t>(now >> 32);
      const auto back = static_cast<std::uint32_t>(now);
      if (front >= back) return false;
      const std::uint64_t next =
          from_front ? pack(front + 1, back) : pack(front, back - 1);
      if (range.compare_exchange_weak(now, next, std::memory_order_relaxed)) {
        chunk = from_front ? front : back - 1;
        return true;
      }
    }
  }
};

}  // namespace

void parallel_for_dynamic(std::int64_t begin, std::int64_t end,
                          std::int64_t grain,
                          FunctionRef<void(std::int64_t, std::int64_t)> fn) {
  if (end <= begin) return;
  const std::int64_t total = end - begin;
  // Chunk indices are 32-bit in a Share.
  grain = std::max<std::int64_t>({grain, 1, total >> 31});
  const std::int64_t chunks = (total + grain - 1) / grain;
  std::unique_lock<std::mutex> team;
  const int threads = claim_team(chunks, team);
  if (threads == 1) {
    fn(begin, end);
    return;
  }
  std::vector<Share> shares(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    shares[static_cast<std::size_t>(t)].range.store(
        Share::pack(static_cast<std::uint32_t>(chunks * t / threads),
                    static_cast<std::uint32_t>(chunks * (t + 1) / threads)),
        std::memory_order_relaxed);
  }
  // A share whose thread the runtime did not grant is taken by the others.
  run_team(
      threads,
      [&](int, std::int64_t& lo, std::int64_t& hi) {
        const int own = omp_get_thread_num();
        std::int64_t chunk = 0;
        bool found = shares[static_cast<std::size_t>(own)].take(true, chunk);
        for (int i = 1; i < threads && !found; ++i) {
          found = shares[static_cast<std::size_t>((own + i) % threads)].take(
              false, chunk);
        }
        if (!found) return false;
        lo = begin + chunk * grain;
        hi = std::min(end, lo + grain);
        return true;
      },
      fn);
}

}  // namespace tessel
