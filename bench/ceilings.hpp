// This machine's ceilings, measured in the same run as the kernels they
// bind: STREAM-like bandwidth (BM_StreamCopy/Add/Read) and peak arithmetic
// (BM_PeakFmaF32, BM_PeakDpBf16, BM_PeakVnniU8S8), all on every thread of
// tessel's pool. The compute kernels are compiled for their instruction
// sets with target attributes and run only where the CPU has them.
#pragma once

#include <cstdint>

namespace bench {

// Elements of the STREAM-like arrays (f32): 64 MiB each, far beyond L3.
constexpr std::int64_t kStreamN = std::int64_t{1} << 24;

}  // namespace bench
