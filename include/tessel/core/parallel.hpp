// The one set of threads every kernel uses (OpenMP's team, shared with
// oneDNN). Its size comes from set_num_threads(), else TESSEL_NUM_THREADS,
// else the CPUs this process may run on.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

namespace tessel {

void set_num_threads(int n);  // n >= 1, else E4001
int get_num_threads();

// A non-owning reference to a callable (no allocation, unlike std::function).
template <class Signature>
class FunctionRef;
template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  template <class F>
  requires(!std::is_same_v<std::decay_t<F>, FunctionRef>)
      FunctionRef(F&& f)  // NOLINT: implicit by design
      : object_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, Args... a) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(o))(
              std::forward<Args>(a)...);
        }) {}
  R operator()(Args... a) const {
    return call_(object_, std::forward<Args>(a)...);
  }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

// Whether the calling thread is running a chunk of a parallel_for.
bool in_parallel_region();

// Splits [begin, end) into at most get_num_threads() contiguous chunks of at
// least `grain` items and runs fn(chunk_begin, chunk_end) on the pool; the
// caller runs the first chunk. The split depends only on the range, grain
// and thread count. Nested calls, and calls made while another thread owns
// the pool, run inline. The first exception thrown by a chunk is rethrown.
void parallel_for(std::int64_t begin, std::int64_t end, std::int64_t grain,
                  FunctionRef<void(std::int64_t, std::int64_t)> fn);

// Like parallel_for, but balanced while it runs: each thread walks its
// own contiguous share in chunks of `grain` items from the front, and a
// thread that finishes early takes chunks from the back of the others'
// shares. A thread the host slows down then holds the others up by at
// most one chunk, while each share is still read as one sequential stream
// (the interleaved chunks of a plain work queue read memory slower).
// Which thread runs which chunk varies from call to call: use it only
// where each item's result does not depend on how the range is cut. As
// with parallel_for, one thread, a nested call or a busy team runs the
// whole range in one call.
void parallel_for_dynamic(std::int64_t begin, std::int64_t end,
                          std::int64_t grain,
                          FunctionRef<void(std::int64_t, std::int64_t)> fn);

// Runs body with the team held for it (Note [a held team] in
// parallel.cpp): the parallel_for calls body makes on this thread hand
// their chunks to the team's other threads, which wait between calls,
// instead of a team being started and joined for each call. Meant for
// a run of short parallel passes on the calling thread, such as a decode
// step. oneDNN's work in body runs on one thread (its OpenMP regions nest
// inside the held one): hold the team only around tessel's own kernels.
// Runs body as a plain call when the pool has one thread, another
// caller's job holds the team, or the caller already holds it or is
// running a chunk. Exceptions from body reach the caller.
void with_team_held(FunctionRef<void()> body);

// Whether the calling thread is inside with_team_held's body with the
// team held (and not running a chunk of a parallel_for).
bool holding_team();

}  // namespace tessel
