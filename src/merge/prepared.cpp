#include "merge/prepared.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>

#include "backends/cpu/simd/cast_simd.hpp"
#include "merge/blocks.hpp"
#include "merge/inputs.hpp"
#include "tessel/core/error.hpp"
#include "tessel/core/float_formats.hpp"
#include "tessel/core/numerics.hpp"
#include "tessel/core/parallel.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel::merge {

namespace {

// f32 values of a block into `dtype` at `out`.
void store(const float* in, std::int64_t n, DType dtype, void* out) {
  switch (dtype) {
    case DType::BF16:
      cpu::simd::cast_f32_to_bf16(in, static_cast<std::uint16_t*>(out), n);
      break;
    case DType::F16: {
      auto* o = static_cast<std::uint16_t*>(out);
      for (std::int64_t j = 0; j < n; ++j) o[j] = fp::f16_from_f32(in[j]);
      break;
    }
    default:
      std::memcpy(out, in, static_cast<std::size_t>(n) * sizeof(float));
      break;
  }
}

}  // namespace

void PreparedMerge::produce(std::int64_t first, std::int64_t count, DType dtype,
                            void* out) const {
  if (!detail::is_streamable(dtype)) {
    throw_error(ErrorCode::BadDType,
                fmt::format("[merge] results are produced as f32, f16 or "
                            "bf16, not {}",
                            dtype_name(dtype)));
  }
  if (count <= 0) return;
  const auto element = static_cast<std::int64_t>(element_size(dtype));
  // Blocks start on a multiple of 4 (DARE's draws come four to a Philox
  // block); the up to 3 elements before `first` are computed and dropped.
  const std::int64_t start = first / 4 * 4;
  const std::int64_t end = first + count;
  const std::int64_t blocks =
      (end - start + detail::kBlock - 1) / detail::kBlock;
  const bool check = check_numerics();
  std::mutex bad_mutex;
  std::int64_t bad_index = -1;
  float bad_value = 0.0f;
  parallel_for(0, blocks, 8, [&](std::int64_t bb, std::int64_t be) {
    float* buffer = detail::block_scratch(1, 1);
    for (std::int64_t b = bb; b < be; ++b) {
      const std::int64_t i0 = start + b * detail::kBlock;
      const std::int64_t n = std::min(detail::kBlock, end - i0);
      block(i0, n, buffer);
      const std::int64_t skip = std::max<std::int64_t>(0, first - i0);
      if (check) {
        bool finite = true;
        for (std::int64_t j = skip; j < n; ++j) {
          finite &= std::abs(buffer[j]) <= 3.40282347e38f;
        }
        if (!finite) {
          for (std::int64_t j = skip; j < n; ++j) {
            if (std::isfinite(buffer[j])) continue;
            std::lock_guard lock(bad_mutex);
            if (bad_index < 0 || i0 + j < bad_index) {
              bad_index = i0 + j;
              bad_value = buffer[j];
            }
            break;
          }
        }
      }
      store(buffer + skip, n - skip, dtype,
            static_cast<std::uint8_t*>(out) + (i0 + skip - first) * element);
    }
  });
  if (bad_index >= 0) {
    throw_error(
        ErrorCode::NonFinite,
        fmt::format("[merge] produced {} at element {}", bad_value, bad_index));
  }
}

Tensor PreparedMerge::result(const Shape& shape, Tensor buffer) const {
  const detail::OutputLoan loan(std::move(buffer));
  const Tensor like = empty(shape, DType::F32, Device::meta());
  return detail::produce_output(*this, like);
}

namespace detail {

namespace {

class PreparedResult final : public PreparedMerge {
 public:
  explicit PreparedResult(Tensor result) : result_(std::move(result)) {}
  void block(std::int64_t first, std::int64_t n, float* out) const override {
    std::memcpy(out, result_.data<float>() + first,
                static_cast<std::size_t>(n) * sizeof(float));
  }

 private:
  Tensor result_;
};

}  // namespace

std::unique_ptr<PreparedMerge> prepared_result(Tensor result) {
  return std::make_unique<PreparedResult>(std::move(result));
}

Tensor produce_output(const PreparedMerge& merge, const Tensor& like) {
  Tensor out = new_output(like);
  merge.produce(0, out.numel(), DType::F32, out.data<float>());
  return out;
}

}  // namespace detail

}  // namespace tessel::merge
