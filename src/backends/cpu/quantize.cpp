// Block-quantised <-> f32 on the CPU: the codecs of src/quant run over
// [first, last) ranges of blocks split across the pool. Blocks are
// independent, so any split gives the same bytes as one thread. Also the
// one widening of 16-bit or block operands to f32 that products share.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <string>

#include "backends/cpu/kernels.hpp"
#include "backends/cpu/simd/cast_simd.hpp"
#include "backends/cpu/simd/dequant_simd.hpp"
#include "core/check.hpp"
#include "quant/block_codecs.hpp"
#include "tessel/core/parallel.hpp"

namespace tessel::cpu {

namespace {

// About 64 KiB of f32 per task: large enough to hide the pool's dispatch.
constexpr std::int64_t kElementsPerTask = 16384;

// The L3 of the first CPU as Linux's sysfs describes it (cache/indexN's
// level and size, which the kernel writes as kibibytes, "32768K"); 0 where
// there is none to read or the text is not such a size.
std::size_t sysfs_l3_bytes() {
  for (int i = 0; i < 8; ++i) {
    const std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream level_file(dir + "level");
    int level = 0;
    if (!(level_file >> level)) return 0;
    if (level != 3) continue;
    std::ifstream size_file(dir + "size");
    long long kib = 0;
    char unit = '\0';
    // Up to 1 TiB: anything larger is not a cache.
    if (!(size_file >> kib >> unit) || unit != 'K' || kib <= 0 ||
        kib > (1LL << 30)) {
      return 0;
    }
    return static_cast<std::size_t>(kib) << 10;
  }
  return 0;
}

// The last-level cache one core's data can fill, at most 32 MiB: the L3
// that serves the first CPU (sysfs), else the C library's. glibc reports
// the package's (256 MiB on the 2-vCPU Zen 3 VM: eight CCDs of 32 MiB),
// where a core is served by its CCD's; sysfs reports the CCD's. An Intel
// server's L3 is one for the socket, shared with every other core and, on a
// cloud host, with other tenants: sysfs says 480 MiB on the 2-vCPU Sapphire
// Rapids VM, where a 64 MiB output written with plain stores dequantised at
// 36-40 % of the copy against 72-84 % with non-temporal ones (twenty-second
// pass). Hence the cap. Its cost, unmeasured (no such machine here): a
// part with more L3 per CCD (an X3D's 96 MiB) streams outputs between 32
// and 96 MiB, which a caller there might have read back from cache.
std::size_t last_level_cache_bytes() {
  static const std::size_t bytes = [] {
    constexpr std::size_t kCap = std::size_t{32} << 20;
    if (const std::size_t l3 = sysfs_l3_bytes(); l3 > 0) {
      return std::min(l3, kCap);
    }
#ifdef _SC_LEVEL3_CACHE_SIZE  // a glibc extension
    const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    return l3 > 0 ? std::min(static_cast<std::size_t>(l3), kCap) : kCap;
#else
    return kCap;
#endif
  }();
  return bytes;
}

// Byte offset, from the storage base, of the first block of row `row` of a
// block tensor (rows are every index but the last axis', in row-major order).
std::int64_t row_byte_offset(const KernelInput& t, std::int64_t row) {
  const auto& tr = dtype_traits(t.dtype());
  const auto shape = t.shape();
  const auto strides = t.strides();
  std::int64_t element = t.storage_offset();
  for (std::int64_t d = t.rank() - 2; d >= 0; --d) {
    const std::int64_t extent = shape[static_cast<std::size_t>(d)];
    element += row % extent * strides[static_cast<std::size_t>(d)];
    row /= extent;
  }
  return element / tr.block_size * tr.block_bytes;
}

// Runs fn(row, first_block, last_block) over every block of a
// (rows, blocks_per_row) grid, split across the pool.
template <class F>
void for_block_ranges(std::int64_t rows, std::int64_t blocks_per_row,
                      std::int64_t block_size, F&& fn) {
  const std::int64_t total = rows * blocks_per_row;
  const std::int64_t grain =
      std::max<std::int64_t>(1, kElementsPerTask / block_size);
  parallel_for(0, total, grain, [&](std::int64_t begin, std::int64_t end) {
    while (begin < end) {
      const std::int64_t row = begin / blocks_per_row;
      const std::int64_t first = begin % blocks_per_row;
      const std::int64_t last = std::min(blocks_per_row, first + (end - begin));
      fn(row, first, last);
      begin += last - first;
    }
  });
}

}  // namespace

void dequantize_run(DType type, const std::uint8_t* blocks, float* out,
                    std::int64_t nblocks, bool stream) {
  if (simd::dequantize_blocks_simd(type, blocks, out, nblocks, stream)) return;
  quant::block_codec(type)->dequantize(blocks, out, nblocks);
}

void widen_to_f32(DType t, const std::uint8_t* in, float* out,
                  std::int64_t count) {
  const auto* h = reinterpret_cast<const std::uint16_t*>(in);
  if (t == DType::F16) {
    simd::widen_f16_operand(h, out, count);
  } else if (t == DType::BF16) {
    simd::widen_bf16_operand(h, out, count);
  } else {
    dequantize_run(t, in, out, count / dtype_traits(t).block_size);
  }
}

void dequantize_blocks(const KernelOutput& dst_f32,
                       const KernelInput& src_blocks) {
  const auto& tr = dtype_traits(src_blocks.dtype());
  const std::int64_t numel = src_blocks.numel();
  if (numel == 0) return;
  // A contiguous tensor's blocks are one run (one row of numel), decoded in
  // one call per thread's share. A call per row ended each row's streamed
  // stores with a fence: a 4096 x 4096 matrix dequantised at 74-78 % of the
  // copy on the Sapphire Rapids VM that way, 90-97 % in one run (Q4_0,
  // Q4_K, Q6_K, twenty-second pass).
  const std::int64_t row_len =
      src_blocks.rank() == 0 || src_blocks.is_contiguous()
          ? numel
          : src_blocks.size(src_blocks.rank() - 1);
  const std::int64_t rows = numel / row_len;
  const auto* base =
      reinterpret_cast<const std::uint8_t*>(src_blocks.storage_base());
  float* out = dst_f32.data<float>();
  // An output larger than the last-level cache is written past it: the
  // caller cannot read it back from cache anyway (dequant_simd.hpp).
  const bool stream = static_cast<std::size_t>(numel) * sizeof(float) >
                      last_level_cache_bytes();
  for_block_ranges(
      rows, row_len / tr.block_size, tr.block_size,
      [&](std::int64_t row, std::int64_t first, std::int64_t last) {
        dequantize_run(
            src_blocks.dtype(),
            base + row_byte_offset(src_blocks, row) + first * tr.block_bytes,
            out + row * row_len + first * tr.block_size, last - first, stream);
      });
}

void quantize_blocks(const KernelOutput& dst_blocks, const KernelInput& src_f32,
                     bool runtime) {
  const auto& tr = dtype_traits(dst_blocks.dtype());
  const quant::QuantizeBlocks quantize =
      runtime ? quant::runtime_quantizer(dst_blocks.dtype())
              : quant::block_codec(dst_blocks.dtype())->quantize;
  const std::int64_t numel = dst_blocks.numel();
  if (numel == 0) return;
  const std::int64_t total_blocks = numel / tr.block_size;
  auto* blocks = reinterpret_cast<std::uint8_t*>(dst_blocks.raw_data());
  const float* in = src_f32.data<float>();
  // Contiguous on both sides: one flat run of blocks.
  for_block_ranges(1, total_blocks, tr.block_size,
                   [&](std::int64_t, std::int64_t first, std::int64_t last) {
                     quantize(in + first * tr.block_size,
                              blocks + first * tr.block_bytes, last - first);
                   });
}

}  // namespace tessel::cpu
