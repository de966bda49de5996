#include "merge/blocks.hpp"

#include "backends/cpu/simd/cast_simd.hpp"

#include <algorithm>
#include <cstring>

namespace tessel::merge::detail {

bool is_streamable(DType dtype) {
  return dtype == DType::F32 || dtype == DType::BF16 || dtype == DType::F16;
}

Elements::Elements(const Tensor& t) : data_(t.raw_data()), dtype_(t.dtype()) {}

void Elements::load(std::int64_t first, std::int64_t n, float* out) const {
  switch (dtype_) {
    case DType::BF16:
      simd::widen_bf16(static_cast<const std::uint16_t*>(data_) + first, out,
                       n);
      break;
    case DType::F16:
      cpu::simd::cast_f16_to_f32(
          static_cast<const std::uint16_t*>(data_) + first, out, n);
      break;
    default:
      std::memcpy(out, static_cast<const float*>(data_) + first,
                  static_cast<std::size_t>(n) * sizeof(float));
      break;
  }
  std::fill(out + n, out + padded(n), 0.0f);
}

Tensor as_f32(const Tensor& t) {
  return t.dtype() == DType::F32 ? t : t.to(DType::F32);
}

float* block_scratch(std::int64_t rows, int slot) {
  thread_local std::vector<float> scratch[2];
  std::vector<float>& s = scratch[slot];
  const auto size = static_cast<std::size_t>(rows * padded(kBlock));
  if (s.size() < size) s.resize(size);
  return s.data();
}

}  // namespace tessel::merge::detail
