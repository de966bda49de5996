#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

TEST(Parallel, CoversTheRangeExactlyOnce) {
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    EXPECT_EQ(get_num_threads(), threads);
    std::vector<std::atomic<int>> hits(10007);
    parallel_for(0, 10007, 100, [&](std::int64_t lo, std::int64_t hi) {
      for (std::int64_t i = lo; i < hi; ++i) ++hits[i];
    });
    for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  }
}

TEST(Parallel, SplitsIntoAtMostThreadCountChunksOfAtLeastGrain) {
  set_num_threads(3);
  std::atomic<int> chunks{0};
  parallel_for(0, 1000, 400, [&](std::int64_t lo, std::int64_t hi) {
    EXPECT_GE(hi - lo, 1);
    ++chunks;
  });
  EXPECT_EQ(chunks.load(), 3);  // ceil(1000 / 400) = 3 <= 3 threads
  chunks = 0;
  parallel_for(0, 1000, 2000, [&](std::int64_t, std::int64_t) { ++chunks; });
  EXPECT_EQ(chunks.load(), 1);
  parallel_for(5, 5, 1, [&](std::int64_t, std::int64_t) { ADD_FAILURE(); });
}

TEST(Parallel, NestedCallsRunInline) {
  set_num_threads(2);
  std::atomic<int> inner{0};
  parallel_for(0, 2, 1, [&](std::int64_t, std::int64_t) {
    parallel_for(0, 100, 1, [&](std::int64_t lo, std::int64_t hi) {
      inner += static_cast<int>(hi - lo);
    });
  });
  EXPECT_EQ(inner.load(), 200);
}

TEST(Parallel, ExceptionsReachTheCaller) {
  set_num_threads(2);
  EXPECT_THROW(parallel_for(0, 100, 1,
                            [](std::int64_t lo, std::int64_t) {
                              if (lo > 0) throw std::runtime_error("chunk");
                            }),
               std::runtime_error);
  // The pool still works afterwards.
  std::atomic<int> n{0};
  parallel_for(0, 10, 1, [&](std::int64_t lo, std::int64_t hi) {
    n += static_cast<int>(hi - lo);
  });
  EXPECT_EQ(n.load(), 10);
}

TEST(Parallel, ConcurrentCallersDoNotDeadlock) {
  set_num_threads(2);
  std::atomic<std::int64_t> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int rep = 0; rep < 50; ++rep) {
        parallel_for(0, 1000, 10, [&](std::int64_t lo, std::int64_t hi) {
          total += hi - lo;
        });
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(total.load(), 4 * 50 * 1000);
}

TEST(ParallelDynamic, CoversTheRangeExactlyOnceInChunksOfGrain) {
  for (int threads : {1, 2, 3, 5}) {
    set_num_threads(threads);
    for (std::int64_t grain : {1, 7, 100, 20000}) {
      std::vector<std::atomic<int>> hits(10007);
      parallel_for_dynamic(3, 10007, grain,
                           [&](std::int64_t lo, std::int64_t hi) {
                             // On a team, chunks start on a grain
                             // boundary and are a grain long but for the
                             // last; alone, the range runs in one call.
                             if (hi - lo < grain) {
                               EXPECT_TRUE(hi == 10007) << lo << " " << hi;
                             }
                             if (threads > 1 && grain < 10004) {
                               EXPECT_EQ((lo - 3) % grain, 0);
                               EXPECT_LE(hi - lo, grain);
                             }
                             for (std::int64_t i = lo; i < hi; ++i) ++hits[i];
                           });
      for (std::size_t i = 0; i < hits.size(); ++i) {
        ASSERT_EQ(hits[i].load(), i < 3 ? 0 : 1) << i;
      }
    }
  }
  parallel_for_dynamic(5, 5, 1,
                       [&](std::int64_t, std::int64_t) { ADD_FAILURE(); });
}

// The first chunk of thread 0's share does not return until every other
// item is done: only a thread that takes the rest of that share from its
// back end lets the call finish.
TEST(ParallelDynamic, AnIdleThreadTakesTheRestOfABusyThreadsShare) {
  set_num_threads(2);
  constexpr std::int64_t kItems = 64;
  std::atomic<std::int64_t> done{0};
  std::atomic<bool> gave_up{false};
  std::vector<std::atomic<int>> hits(kItems);
  parallel_for_dynamic(0, kItems, 1, [&](std::int64_t lo, std::int64_t hi) {
    if (lo == 0) {
      const auto deadline =
          std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (done.load() < kItems - 1) {
        if (std::chrono::steady_clock::now() > deadline) {
          gave_up = true;
          break;
        }
        std::this_thread::yield();
      }
    }
    for (std::int64_t i = lo; i < hi; ++i) ++hits[i];
    done += hi - lo;
  });
  EXPECT_FALSE(gave_up.load()) << "no thread took the busy thread's chunks";
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
}

TEST(ParallelDynamic, NestsInlineAndRethrows) {
  set_num_threads(2);
  std::atomic<int> inner{0};
  parallel_for_dynamic(0, 4, 1, [&](std::int64_t, std::int64_t) {
    EXPECT_TRUE(in_parallel_region());
    parallel_for_dynamic(0, 100, 1, [&](std::int64_t lo, std::int64_t hi) {
      inner += static_cast<int>(hi - lo);
    });
  });
  EXPECT_EQ(inner.load(), 400);
  EXPECT_THROW(parallel_for_dynamic(0, 100, 3,
                                    [](std::int64_t lo, std::int64_t) {
                                      if (lo > 50)
                                        throw std::runtime_error("x");
                                    }),
               std::runtime_error);
  std::atomic<int> n{0};
  parallel_for_dynamic(0, 10, 1, [&](std::int64_t lo, std::int64_t hi) {
    n += static_cast<int>(hi - lo);
  });
  EXPECT_EQ(n.load(), 10);
}

TEST(Parallel, InvalidThreadCountIsE4001) {
  EXPECT_TESSEL_ERROR(set_num_threads(0), "E4001", "[set_num_threads]");
  set_num_threads(2);
  EXPECT_THROW(
      parallel_for(0, 2, 1,
                   [](std::int64_t, std::int64_t) { set_num_threads(1); }),
      ConfigError);
}

// ---- the held team (with_team_held) ----

TEST(HeldTeam, EachCallsChunksRunOnceOnTheTeamsThreads) {
  for (int threads : {2, 3}) {
    set_num_threads(threads);
    std::mutex seen_mutex;
    std::set<std::thread::id> seen;
    EXPECT_FALSE(holding_team());
    with_team_held([&] {
      EXPECT_TRUE(holding_team());
      EXPECT_FALSE(in_parallel_region());
      for (int call = 0; call < 200; ++call) {
        std::vector<std::atomic<int>> hits(1009);
        const auto mark = [&](std::int64_t lo, std::int64_t hi) {
          EXPECT_TRUE(in_parallel_region());
          {
            std::lock_guard lock(seen_mutex);
            seen.insert(std::this_thread::get_id());
          }
          for (std::int64_t i = lo; i < hi; ++i) ++hits[i];
        };
        if (call % 2 == 0) {
          parallel_for(0, 1009, 10, mark);
        } else {
          parallel_for_dynamic(0, 1009, 7, mark);
        }
        for (auto& h : hits) ASSERT_EQ(h.load(), 1) << call;
      }
      // A call of fewer pieces than threads, and one of a single piece
      // (inline on the holder).
      std::atomic<int> pieces{0};
      parallel_for(0, 2, 1, [&](std::int64_t, std::int64_t) { ++pieces; });
      EXPECT_EQ(pieces.load(), 2);
      parallel_for(0, 5, 10, [&](std::int64_t lo, std::int64_t hi) {
        EXPECT_EQ(hi - lo, 5);
        ++pieces;
      });
      EXPECT_EQ(pieces.load(), 3);
    });
    EXPECT_FALSE(holding_team());
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(threads));
  }
}

// Past a fifth of a millisecond without work the waiting threads sleep;
// each call must wake them.
TEST(HeldTeam, WakesThreadsThatFellAsleep) {
  set_num_threads(2);
  with_team_held([&] {
    for (int call = 0; call < 5; ++call) {
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
      std::atomic<int> other{0};
      const auto caller = std::this_thread::get_id();
      // Thread 0's chunk waits until another thread has run one.
      parallel_for(0, 2, 1, [&](std::int64_t lo, std::int64_t) {
        if (lo == 0) {
          const auto deadline =
              std::chrono::steady_clock::now() + std::chrono::seconds(60);
          while (other.load() == 0 &&
                 std::chrono::steady_clock::now() < deadline) {
            std::this_thread::yield();
          }
        } else if (std::this_thread::get_id() != caller) {
          ++other;
        }
      });
      ASSERT_EQ(other.load(), 1) << "no waiting thread took the chunk";
    }
  });
}

TEST(HeldTeam, ExceptionsReachTheirCallers) {
  set_num_threads(2);
  int after = 0;
  EXPECT_THROW(with_team_held([&] {
                 // A chunk's exception reaches the parallel_for inside
                 // body, and the team goes on working.
                 EXPECT_THROW(parallel_for(0, 100, 1,
                                           [](std::int64_t lo, std::int64_t) {
                                             if (lo > 0)
                                               throw std::runtime_error("c");
                                           }),
                              std::runtime_error);
                 std::atomic<int> n{0};
                 parallel_for_dynamic(0, 64, 1,
                                      [&](std::int64_t lo, std::int64_t hi) {
                                        n += static_cast<int>(hi - lo);
                                      });
                 after = n.load();
                 throw std::logic_error("body");
               }),
               std::logic_error);
  EXPECT_EQ(after, 64);
  EXPECT_FALSE(holding_team());
  // The team is free again.
  std::atomic<int> n{0};
  with_team_held([&] {
    EXPECT_TRUE(holding_team());
    parallel_for(0, 10, 1, [&](std::int64_t lo, std::int64_t hi) {
      n += static_cast<int>(hi - lo);
    });
  });
  EXPECT_EQ(n.load(), 10);
}

TEST(HeldTeam, NestedHoldsAndHoldsFromChunksRunTheirBodyInline) {
  set_num_threads(2);
  int bodies = 0;
  with_team_held([&] {
    with_team_held([&] {
      EXPECT_TRUE(holding_team());
      ++bodies;
    });
    parallel_for(0, 2, 1, [&](std::int64_t, std::int64_t) {
      with_team_held([&] { EXPECT_FALSE(holding_team()); });
    });
  });
  EXPECT_EQ(bodies, 1);
  set_num_threads(1);
  with_team_held([&] {
    EXPECT_FALSE(holding_team());  // one thread: nothing to hold
    ++bodies;
  });
  EXPECT_EQ(bodies, 2);
}

// With OpenMP granting no second thread (nesting off, as inside a caller's
// own parallel region), the hold runs body on the one thread it has.
TEST(HeldTeam, OneGrantedThreadRunsEveryCallInline) {
  set_num_threads(2);
  const int levels = omp_get_max_active_levels();
  omp_set_max_active_levels(0);
  std::vector<std::atomic<int>> hits(100);
  const auto caller = std::this_thread::get_id();
  with_team_held([&] {
    EXPECT_FALSE(holding_team());
    parallel_for_dynamic(0, 100, 7, [&](std::int64_t lo, std::int64_t hi) {
      EXPECT_EQ(std::this_thread::get_id(), caller);
      for (std::int64_t i = lo; i < hi; ++i) ++hits[i];
    });
    // The pool is still the caller's to resize only outside the hold.
    EXPECT_TESSEL_ERROR(set_num_threads(1), "E4001", "[set_num_threads]");
  });
  omp_set_max_active_levels(levels);
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
}

TEST(HeldTeam, OtherThreadsRunInlineWhileItIsHeld) {
  set_num_threads(2);
  std::atomic<bool> held{false}, done{false};
  std::atomic<std::int64_t> total{0};
  std::thread other([&] {
    while (!held.load()) std::this_thread::yield();
    const auto me = std::this_thread::get_id();
    for (int rep = 0; rep < 20; ++rep) {
      parallel_for(0, 1000, 10, [&](std::int64_t lo, std::int64_t hi) {
        EXPECT_EQ(std::this_thread::get_id(), me);  // inline, no team
        total += hi - lo;
      });
    }
    with_team_held([&] { EXPECT_FALSE(holding_team()); });
    done = true;
  });
  with_team_held([&] {
    held = true;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!done.load() && std::chrono::steady_clock::now() < deadline) {
      parallel_for(0, 4, 1, [](std::int64_t, std::int64_t) {});
    }
  });
  other.join();
  EXPECT_EQ(total.load(), 20 * 1000);
}

TEST(HeldTeam, ThePoolCannotBeResizedWhileHeld) {
  set_num_threads(2);
  with_team_held([] {
    EXPECT_TESSEL_ERROR(set_num_threads(1), "E4001", "[set_num_threads]");
  });
  EXPECT_EQ(get_num_threads(), 2);
}

TEST(Parallel, KernelsGiveTheSameBitsOnAnyThreadCount) {
  Tensor src = randn({513, 517}, DType::F32).transpose(0, 1);
  set_num_threads(1);
  Tensor one = src.to(DType::BF16);
  set_num_threads(3);
  Tensor three = src.to(DType::BF16);
  EXPECT_EQ(std::memcmp(one.raw_data(), three.raw_data(), one.nbytes()), 0);
}

}  // namespace
}  // namespace tessel
