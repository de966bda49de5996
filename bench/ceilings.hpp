// This machine's ceilings, measured in the same run as the kernels they
// bind: STREAM-like bandwidth (BM_StreamCopy/Add/Read) and peak arithmetic
// (BM_PeakFmaF32, BM_PeakDpBf16, BM_PeakVnniU8S8), all on every thread of
// tessel's pool. The compute kernels are compiled for their instruction
// sets with target attributes and run only where the CPU has them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "tessel/tessel.hpp"

namespace bench {

// Elements of the STREAM-like arrays (f32): each array four times the
// last-level cache and at least 256 MiB, so that they stream from DRAM. (A
// VM can see a large host L3: 480 MiB on the Sapphire Rapids machines
// here, where 64 MiB arrays measured L3, not DRAM, bandwidth; and the Zen 4
// VM, which reports 32 MiB, read 64 MiB partly from cache.)
std::int64_t stream_elements();

// How many copies of a `bytes`-sized operand span what stream_elements'
// arrays do (and at least `minimum`): a benchmark that cycles through them
// reads its operand from DRAM, the "cold weights" of a decode step.
int cold_copies(std::size_t bytes, int minimum = 16);

// Copy `c` of a row-major matrix of `rows` rows of `row_bytes` bytes, each
// row a sequence of `block_bytes` blocks: rows rotated by c, and each row's
// blocks rotated by c / 16. Copies then differ page for page (a hypervisor
// merges identical pages, which would then be read once, from cache): a
// row rotation alone repeats page contents every 16 copies for the row
// sizes of 4096-wide quantised matrices (row bytes = 256 mod 4096).
void distinct_copy(const std::uint8_t* src, std::int64_t rows,
                   std::size_t row_bytes, std::size_t block_bytes, int c,
                   std::uint8_t* dst);

// The middle value of v (the upper one of an even count); 0 for none.
double median(std::vector<double> v);

// How a read asks for its cache lines ahead of the loads: the ways the
// kernels do (which reads faster moves with the CPU and the host).
enum class ReadAhead {
  kL1,       // 2 KiB ahead into L1
  kL2,       // 12 KiB ahead into L2 (as far as a kernel asks on Zen 4)
  kL2AndL1,  // 4 KiB into L2 and 1.5 KiB into L1 (the kernels on Intel)
};
inline constexpr ReadAhead kReadAheads[] = {ReadAhead::kL1, ReadAhead::kL2,
                                            ReadAhead::kL2AndL1};
inline const char* read_ahead_name(ReadAhead how) {
  return how == ReadAhead::kL1   ? "l1"
         : how == ReadAhead::kL2 ? "l2"
                                 : "l2_and_l1";
}

// The DRAM read rate on demand (BM_StreamRead): an array four times the
// last-level cache (256 MiB at least) read over tessel's pool.
class ReadCeiling {
 public:
  ReadCeiling();
  // One pass, its bytes folded into the result so that the reads stay.
  std::uint64_t pass(ReadAhead how) const;
  std::size_t bytes() const;
  // GB/s of one pass read `how`.
  double gbps(ReadAhead how) const;
  // GB/s of the fastest of a pass each way.
  double gbps() const;
  // The way that read fastest in two passes each.
  ReadAhead fastest() const;

 private:
  struct Fastest {
    ReadAhead how;
    double gbps;
  };
  Fastest fastest_of(int passes_each) const;

  tessel::Tensor bytes_;
};

// The copy rate on demand (BM_StreamCopy), in GB/s of bytes read +
// written: arrays as large as ReadCeiling's, copied over tessel's pool.
class CopyCeiling {
 public:
  CopyCeiling();
  void pass();
  std::size_t bytes() const;  // read + written
  double gbps();

 private:
  tessel::Tensor from_, to_;
};

// The write rate on demand (BM_StreamWrite), in GB/s of bytes written: an
// array as large as ReadCeiling's filled with memset over tessel's pool.
// What bounds a kernel that writes far more than it reads, such as a
// dequantiser (docs/quantisation.md).
class WriteCeiling {
 public:
  WriteCeiling();
  void pass();
  std::size_t bytes() const;
  double gbps();

 private:
  tessel::Tensor to_;
  int fill_ = 0;
};

// What alternate measured: medians over its rounds.
struct Alternated {
  double ceiling = 0;            // the ceiling's passes, GB/s
  double first = 0, second = 0;  // each kernel's passes, GB/s
  // Each kernel's pass over the mean of the ceiling passes either side.
  double first_of_ceiling = 0, second_of_ceiling = 0;
  double first_over_second = 0;  // per round
};

// A kernel's rate set against a ceiling measured beside it: `rounds` times
// a pass of `first`, a pass of `ceiling`, a pass of `second` (if given)
// and one of `ceiling` again, each a function returning its pass's GB/s.
// Some hosts' DRAM rate moves by half within minutes (the Zen 4 VM here:
// about 30 to 60 GB/s), so a ceiling measured in another process, or a
// minute away, can misplace the fraction by that much. Each kernel is run
// once untimed first (page faults, thread start).
Alternated alternate(int rounds, const std::function<double()>& ceiling,
                     const std::function<double()>& first,
                     const std::function<double()>& second = {});

// GB/s of `bytes` moved by one call of `pass`, timed.
double timed_gbps(double bytes, const std::function<void()>& pass);

}  // namespace bench
