#include "tessel/core/parallel.hpp"

#include <linux/futex.h>
#include <omp.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
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

// Note [a held team]: a decode step makes dozens of parallel_for calls of
// tens of microseconds each, and OpenMP starts and joins a team for every
// one (0.75-0.79 us for an empty pass on two Zen 4 cores; 0.29-0.35
// held). Held, the
// team is one OpenMP region around the whole step: thread 0 runs the
// step's code, and each parallel_for it makes posts its chunks to the
// other threads, which wait for the next post spinning (then asleep on a
// futex, past a fifth of a millisecond).
struct HeldTeam {
  enum class Job { Run, Release };
  // Bumped by the holder for each job it posts; the members wait on it.
  alignas(64) std::atomic<std::uint32_t> posted{0};
  // Members yet to finish the job posted last.
  alignas(64) std::atomic<int> busy{0};
  std::atomic<int> sleepers{0};
  // Written by the holder only while no member runs a job (busy == 0).
  alignas(64) Job job = Job::Run;
  const FunctionRef<void(int, int)>* run = nullptr;
  int members = 1;
};

thread_local HeldTeam* t_held = nullptr;

}  // namespace

void set_num_threads(int n) {
  TESSEL_CHECK(n >= 1 && n <= 4096, BadConfig, "set_num_threads",
               "expected 1 to 4096 threads, got {}", n);
  TESSEL_CHECK(!t_inside_parallel && t_held == nullptr, BadConfig,
               "set_num_threads",
               "cannot resize the pool from inside a parallel region or "
               "while the team is held");
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

// ---- the held team's hand-offs ----

// The futex calls take the atomic's address as the 32-bit word it wraps.
static_assert(sizeof(std::atomic<std::uint32_t>) == 4 &&
              std::atomic<std::uint32_t>::is_always_lock_free);

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word),
          FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void futex_wake_all(std::atomic<std::uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word),
          FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

void pause_briefly() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// A member's wait for the post after `seen`: spinning while the holder's
// serial stretches are short, then asleep. The sleeper count is what lets
// post() skip the wake-up syscall when everyone spins (both sides use
// sequentially consistent operations, so one of them sees the other).
std::uint32_t await_post(HeldTeam& team, std::uint32_t seen) {
  using Clock = std::chrono::steady_clock;
  const auto spin_until = Clock::now() + std::chrono::microseconds(200);
  for (int i = 1;; ++i) {
    const std::uint32_t now = team.posted.load(std::memory_order_acquire);
    if (now != seen) return now;
    pause_briefly();
    if (i % 256 == 0 && Clock::now() > spin_until) break;
  }
  team.sleepers.fetch_add(1);
  std::uint32_t now;
  while ((now = team.posted.load()) == seen) futex_wait(team.posted, seen);
  team.sleepers.fetch_sub(1);
  return now;
}

// The holder's: wait until no member runs a job. With more threads than
// free cores the member it waits for may be descheduled: past a thousand
// pauses the holder gives up its time slice each round.
void await_members(HeldTeam& team) {
  for (int i = 1; team.busy.load(std::memory_order_acquire) != 0; ++i) {
    pause_briefly();
    if (i % 1024 == 0) sched_yield();
  }
}

// The holder's, with busy == 0: hand `job` (its fields already written)
// to every member.
void post(HeldTeam& team, HeldTeam::Job job) {
  team.job = job;
  team.busy.store(team.members - 1, std::memory_order_relaxed);
  team.posted.fetch_add(1);
  if (team.sleepers.load() != 0) futex_wake_all(team.posted);
}

void serve_held_team(HeldTeam& team, int me) {
  std::uint32_t seen = 0;
  for (;;) {
    seen = await_post(team, seen);
    switch (team.job) {
      case HeldTeam::Job::Release: return;
      case HeldTeam::Job::Run: (*team.run)(me, team.members); break;
    }
    team.busy.fetch_sub(1, std::memory_order_release);
  }
}

// The holder's parallel pass: `member` runs on every thread of the held
// team, the holder's share (member 0) here. The members are awaited
// however the holder's share ends: they read `member` until they are done.
void run_held(HeldTeam& team, const FunctionRef<void(int, int)>& member) {
  struct AwaitMembers {
    HeldTeam& team;
    ~AwaitMembers() { await_members(team); }
  };
  team.run = &member;
  post(team, HeldTeam::Job::Run);
  const AwaitMembers await{team};
  member(0, team.members);
}

// Runs next_chunk's chunks on `threads` members of the team (the held
// one, else a region started for it), each asking for another until it
// returns false; the first exception a chunk throws is rethrown here.
template <class NextChunk>
void run_team(int threads, NextChunk next_chunk,
              FunctionRef<void(std::int64_t, std::int64_t)> fn) {
  std::exception_ptr error;
  std::mutex error_mutex;
  // Member `me` of a team of `size` threads, of which the first `threads`
  // take part.
  auto member = [&](int me, int size) {
    const int count = std::min(size, threads);
    if (me >= count) return;
    t_inside_parallel = true;
    std::int64_t lo = 0, hi = 0;
    int turn = 0;
    while (next_chunk(me, count, turn++, lo, hi)) {
      try {
        fn(lo, hi);
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    }
    t_inside_parallel = false;
  };
  if (t_held != nullptr) {  // with more than one member: claim_team
    run_held(*t_held, FunctionRef<void(int, int)>(member));
  } else {
#pragma omp parallel num_threads(threads)
    member(omp_get_thread_num(), omp_get_num_threads());
  }
  if (error) std::rethrow_exception(error);
}

// How many threads a call cut into `pieces` runs on, claiming the team in
// `team`; 1 when it runs inline on the caller: one piece or one thread, a
// nested call, or another caller's job holding the team.
int claim_team(std::int64_t pieces, std::unique_lock<std::mutex>& team) {
  if (t_inside_parallel) return 1;
  if (t_held != nullptr) {
    return static_cast<int>(std::min<std::int64_t>(t_held->members, pieces));
  }
  const int threads =
      static_cast<int>(std::min<std::int64_t>(get_num_threads(), pieces));
  if (threads <= 1) return 1;
  team = std::unique_lock(g_team_mutex, std::try_to_lock);
  return team.owns_lock() ? threads : 1;
}

}  // namespace

void with_team_held(FunctionRef<void()> body) {
  std::unique_lock<std::mutex> lock;
  const int threads =
      t_held != nullptr ? 1 : claim_team(get_num_threads(), lock);
  if (threads == 1) {
    body();
    return;
  }
  HeldTeam team;
  std::exception_ptr error;
#pragma omp parallel num_threads(threads)
  {
    const int me = omp_get_thread_num();
    if (me == 0) {
      // Held even when the runtime grants one thread (OMP_THREAD_LIMIT, an
      // enclosing region): the calls in body then run inline, as
      // claim_team gives them one thread, rather than trying the team's
      // mutex this thread already owns.
      team.members = omp_get_num_threads();
      t_held = &team;
      try {
        body();
      } catch (...) {
        error = std::current_exception();
      }
      t_held = nullptr;
      if (team.members > 1) post(team, HeldTeam::Job::Release);
    } else {
      serve_held_team(team, me);
    }
  }
  if (error) std::rethrow_exception(error);
}

bool holding_team() {
  return t_held != nullptr && t_held->members > 1 && !t_inside_parallel;
}

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
      [&](int me, int count, int turn, std::int64_t& lo, std::int64_t& hi) {
        // Empty chunks can only trail the non-empty ones.
        const int c = me + turn * count;
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
      [&](int own, int, int, std::int64_t& lo, std::int64_t& hi) {
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
