// This machine's ceilings, measured in the same run as the kernels they
// bind: STREAM-like bandwidth (BM_StreamCopy/Add/Read) and peak arithmetic
// (BM_PeakFmaF32, BM_PeakDpBf16, BM_PeakVnniU8S8), all on every thread of
// tessel's pool. The compute kernels are compiled for their instruction
// sets with target attributes and run only where the CPU has them.
#pragma once

#include <cstddef>
#include <cstdint>

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

// One pass of BM_StreamCopy: y = x for n floats, split over tessel's pool.
void copy_pass(const float* x, float* y, std::int64_t n);

// One pass of BM_StreamRead over [p, p + n), split over tessel's pool; the
// bytes are folded into the result so that the reads are not optimised
// away. `far` asks for each line 12 KiB ahead into L2 instead of 2 KiB
// ahead into L1 (the distances the quantised kernels use on Zen 4 and
// elsewhere); which reads faster moves with the host.
std::uint64_t read_pass(const std::uint8_t* p, std::size_t n, bool far = false);

}  // namespace bench
