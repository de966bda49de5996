// This machine's ceilings, measured in the same run as the kernels they
// bind: STREAM-like bandwidth (BM_StreamCopy/Add/Read) and peak arithmetic
// (BM_PeakFmaF32, BM_PeakDpBf16, BM_PeakVnniU8S8), all on every thread of
// tessel's pool. The compute kernels are compiled for their instruction
// sets with target attributes and run only where the CPU has them.
#pragma once

#include <cstdint>

namespace bench {

// Elements of the STREAM-like arrays (f32): each array twice the last-
// level cache and at least 64 MiB, so that they stream from DRAM. (A VM
// can see a large host L3: 480 MiB on the Sapphire Rapids machines here,
// where 64 MiB arrays measured L3, not DRAM, bandwidth.)
std::int64_t stream_elements();

}  // namespace bench
