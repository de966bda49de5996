#include <cstring>

#include "backends/cpu/elementwise_common.hpp"
#include "backends/cpu/kernels.hpp"
#include "backends/cpu/simd/cast_simd.hpp"
#include "backends/cpu/strided_loop.hpp"
#include "core/dispatch.hpp"

namespace tessel::cpu {

namespace {

// `Saturate` is a template parameter so that the contiguous loop compiles
// to straight-line (vectorisable) code.
template <class To, class From, bool Saturate>
void cast_run(std::array<char*, 2>& p, const std::array<std::int64_t, 2>& s,
              std::int64_t n) {
  auto* out = p[0];
  const auto* in = p[1];
  if (s[0] == sizeof(To) && s[1] == sizeof(From)) {
    auto* o = reinterpret_cast<To*>(out);
    const auto* i = reinterpret_cast<const From*>(in);
    // The casts a model conversion runs on every weight get Highway
    // kernels (bit-identical to convert<>); the compiler does not
    // vectorise their scalar rounding and NaN rules.
    if constexpr (std::is_same_v<From, Half> && std::is_same_v<To, float>) {
      simd::cast_f16_to_f32(reinterpret_cast<const std::uint16_t*>(i), o, n);
      return;
    }
    if constexpr (std::is_same_v<From, float> && !Saturate) {
      if constexpr (std::is_same_v<To, BFloat16>) {
        simd::cast_f32_to_bf16(i, reinterpret_cast<std::uint16_t*>(o), n);
        return;
      } else if constexpr (std::is_same_v<To, Half>) {
        if (simd::cast_f32_to_f16(i, reinterpret_cast<std::uint16_t*>(o), n))
          return;
      }
    }
    for (std::int64_t k = 0; k < n; ++k) o[k] = convert<To>(i[k], Saturate);
    return;
  }
  for (std::int64_t k = 0; k < n; ++k) {
    *reinterpret_cast<To*>(out + k * s[0]) =
        convert<To>(*reinterpret_cast<const From*>(in + k * s[1]), Saturate);
  }
}

// A c128 element: moved as one 16-byte word.
struct Word16 {
  std::uint64_t half[2];
};

// Same dtype: move bytes, as wide words when the runs are contiguous.
template <class Word>
void move_run(std::array<char*, 2>& p, const std::array<std::int64_t, 2>& s,
              std::int64_t n) {
  if (s[0] == sizeof(Word) && s[1] == sizeof(Word)) {
    std::memcpy(p[0], p[1], static_cast<std::size_t>(n) * sizeof(Word));
    return;
  }
  for (std::int64_t k = 0; k < n; ++k) {
    std::memcpy(p[0] + k * s[0], p[1] + k * s[1], sizeof(Word));
  }
}

// Note [blocked transpose]
// A copy whose innermost output axis is the input's outermost-stride-1 axis
// (contiguous() of a transposed matrix, NCHW <-> NHWC) reads one operand
// against its layout whatever the loop order. Copying square tiles makes
// both the reads and the writes of a tile hit few cache lines.
template <class Word>
bool try_blocked_transpose(const std::array<char*, 2>& base,
                           const StridedDims<2>& dims) {
  const std::size_t r = dims.extent.size();
  if (r < 2) return false;
  const auto& inner = dims.stride[r - 1];  // output-contiguous axis
  const auto& outer = dims.stride[r - 2];
  constexpr auto kSize = static_cast<std::int64_t>(sizeof(Word));
  if (inner[0] != kSize || outer[1] != kSize || inner[1] == kSize) return false;
  const std::int64_t rows = dims.extent[r - 2];
  const std::int64_t cols = dims.extent[r - 1];
  if (rows < 16 || cols < 16) return false;
  std::int64_t batches = 1;
  for (std::size_t k = 0; k + 2 < r; ++k) batches *= dims.extent[k];
  constexpr std::int64_t kTile = 16;
  const std::int64_t row_tiles = (rows + kTile - 1) / kTile;
  const std::int64_t col_tiles = (cols + kTile - 1) / kTile;
  parallel_for(0, batches * row_tiles * col_tiles, 4,
               [&](std::int64_t lo, std::int64_t hi) {
                 for (std::int64_t t = lo; t < hi; ++t) {
                   std::int64_t rest = t / (row_tiles * col_tiles);
                   const std::int64_t tile = t % (row_tiles * col_tiles);
                   std::array<char*, 2> p = base;
                   for (std::size_t k = r - 2; k-- > 0;) {
                     const std::int64_t i = rest % dims.extent[k];
                     rest /= dims.extent[k];
                     p[0] += i * dims.stride[k][0];
                     p[1] += i * dims.stride[k][1];
                   }
                   // Consecutive tiles walk along the input's rows (its
                   // contiguous axis, the output's rows), so each input row is
                   // read front to back.
                   const std::int64_t i0 = tile % row_tiles * kTile;
                   const std::int64_t j0 = tile / row_tiles * kTile;
                   const std::int64_t i1 = std::min(rows, i0 + kTile);
                   const std::int64_t j1 = std::min(cols, j0 + kTile);
                   for (std::int64_t i = i0; i < i1; ++i) {
                     auto* out = reinterpret_cast<Word*>(p[0] + i * outer[0]);
                     const char* in = p[1] + i * kSize;
                     for (std::int64_t j = j0; j < j1; ++j) {
                       std::memcpy(out + j, in + j * inner[1], sizeof(Word));
                     }
                   }
                 }
               });
  return true;
}

}  // namespace

void copy_cast(const KernelOutput& dst, const KernelInput& src, bool saturate) {
  const Strides ds = dst.byte_strides();
  const Strides ss = src.byte_strides();
  std::array<char*, 2> base{base_pointer(dst), base_pointer(src)};
  const std::array<std::span<const std::int64_t>, 2> strides{
      std::span<const std::int64_t>(ds), std::span<const std::int64_t>(ss)};
  if (dst.dtype() == src.dtype()) {
    auto run = [&]<class Word>() {
      if (dst.numel() >= 4096 &&
          try_blocked_transpose<Word>(base,
                                      coalesce_dims<2>(dst.shape(), strides))) {
        return;
      }
      for_each_strided<2>(dst.shape(), base, strides,
                          [](auto& p, const auto& s, std::int64_t n) {
                            move_run<Word>(p, s, n);
                          });
    };
    switch (element_size(dst.dtype())) {
      case 1: run.template operator()<std::uint8_t>(); break;
      case 2: run.template operator()<std::uint16_t>(); break;
      case 4: run.template operator()<std::uint32_t>(); break;
      case 8: run.template operator()<std::uint64_t>(); break;
      default: run.template operator()<Word16>(); break;
    }
    return;
  }
  detail::dispatch_any_element_type(dst.dtype(), "copy", [&]<class To>() {
    detail::dispatch_any_element_type(src.dtype(), "copy", [&]<class From>() {
      if (saturate) {
        for_each_strided<2>(dst.shape(), base, strides,
                            cast_run<To, From, true>);
      } else {
        for_each_strided<2>(dst.shape(), base, strides,
                            cast_run<To, From, false>);
      }
    });
  });
}

void fill(const KernelOutput& dst, const Scalar& value) {
  detail::dispatch_any_element_type(dst.dtype(), "fill", [&]<class T>() {
    const T v = value.to<T>();
    const Strides ds = dst.byte_strides();
    const std::array<std::span<const std::int64_t>, 1> strides{
        std::span<const std::int64_t>(ds)};
    std::array<char*, 1> base{base_pointer(dst)};
    for_each_strided<1>(dst.shape(), base, strides,
                        [v](auto& p, const auto& s, std::int64_t n) {
                          if (s[0] == sizeof(T)) {
                            std::fill_n(reinterpret_cast<T*>(p[0]), n, v);
                            return;
                          }
                          for (std::int64_t k = 0; k < n; ++k) {
                            *reinterpret_cast<T*>(p[0] + k * s[0]) = v;
                          }
                        });
  });
}

namespace {

// Calls f(linear_index, element_offset) for every element of `t` in
// row-major order; packed tensors are rare, so a plain odometer suffices.
template <class View, class F>
void for_each_element_offset(const View& t, F&& f) {
  const auto& shape = t.shape();
  const auto& strides = t.strides();
  const std::int64_t n = t.numel();
  SmallVector<std::int64_t, 6> index(shape.size(), 0);
  std::int64_t offset = t.storage_offset();
  for (std::int64_t i = 0; i < n; ++i) {
    f(i, offset);
    for (std::size_t d = shape.size(); d-- > 0;) {
      offset += strides[d];
      if (++index[d] < shape[d]) break;
      offset -= shape[d] * strides[d];
      index[d] = 0;
    }
  }
}

}  // namespace

void unpack_nibbles(const KernelOutput& dst_bytes,
                    const KernelInput& src_packed) {
  const auto* packed =
      reinterpret_cast<const std::uint8_t*>(src_packed.storage_base());
  auto* out = dst_bytes.data<std::uint8_t>();
  const bool is_signed = src_packed.dtype() == DType::I4;
  for_each_element_offset(src_packed, [&](std::int64_t i, std::int64_t e) {
    const std::uint8_t byte = packed[e / 2];
    int v = e % 2 == 0 ? byte & 0x0f : byte >> 4;
    if (is_signed && v >= 8) v -= 16;
    out[i] = static_cast<std::uint8_t>(v);
  });
}

void pack_nibbles(const KernelOutput& dst_packed,
                  const KernelInput& src_bytes) {
  auto* packed = reinterpret_cast<std::uint8_t*>(dst_packed.storage_base());
  const auto* in = src_bytes.data<std::uint8_t>();
  for_each_element_offset(dst_packed, [&](std::int64_t i, std::int64_t e) {
    const auto nibble = static_cast<std::uint8_t>(in[i] & 0x0f);
    std::uint8_t& byte = packed[e / 2];
    byte = e % 2 == 0
               ? static_cast<std::uint8_t>((byte & 0xf0) | nibble)
               : static_cast<std::uint8_t>((byte & 0x0f) | (nibble << 4));
  });
}

}  // namespace tessel::cpu
