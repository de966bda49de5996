// KVCache: per-layer key and value buffers in the cache's dtype, and the
// sizes of the rotations a quantised cache stores its keys and values
// under.
#include <vector>

#include "core/check.hpp"
#include "tessel/models/kv_cache.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel {

namespace {

// llama.cpp's --cache-type-k/-v choices: the 16-bit floats and the block
// types of 32 elements that quantise without an importance matrix.
bool is_cache_dtype(DType t) {
  switch (t) {
    case DType::F32:
    case DType::F16:
    case DType::BF16:
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::IQ4_NL: return true;
    default: return false;
  }
}

// llama.cpp's key rotation size: the largest power of two from 64 on that
// divides head_dim (it measured larger blocks better for keys, and 64 for
// values).
std::int64_t key_rotation_size(std::int64_t head_dim) {
  std::int64_t n = 64;
  while (head_dim % (2 * n) == 0) n *= 2;
  return n;
}

}  // namespace

KVCache::KVCache(const DecoderConfig& config, std::int64_t batch,
                 std::int64_t capacity, DType dtype)
    : batch_(batch), capacity_(capacity), dtype_(dtype) {
  TESSEL_CHECK(batch > 0 && capacity > 0, BadShape, "KVCache",
               "batch ({}) and capacity ({}) must be positive", batch,
               capacity);
  TESSEL_CHECK(is_cache_dtype(dtype), BadDType, "KVCache",
               "keys and values are kept in f32, f16, bf16, q8_0, q4_0, "
               "q4_1, q5_0, q5_1 or iq4_nl, not {}",
               dtype_name(dtype));
  if (is_block_quantized(dtype)) {
    const std::int64_t block = dtype_traits(dtype).block_size;
    TESSEL_CHECK(config.head_dim % block == 0, BadShape, "KVCache",
                 "a {} cache quantises each head's keys and values in "
                 "blocks of {}, which head_dim {} is not a multiple of",
                 dtype_name(dtype), block, config.head_dim);
    if (config.head_dim % 64 == 0) {
      key_rotation_block_ = key_rotation_size(config.head_dim);
      value_rotation_block_ = 64;
    }
  }
  for (std::int64_t i = 0; i < config.num_hidden_layers; ++i) {
    const Shape shape{batch, config.num_key_value_heads, capacity,
                      config.head_dim};
    keys_.push_back(zeros(shape, dtype));
    values_.push_back(zeros(shape, dtype));
  }
}

std::pair<Tensor, Tensor> KVCache::append(std::int64_t layer, const Tensor& k,
                                          const Tensor& v) {
  const std::int64_t steps = k.size(2);
  TESSEL_CHECK(length_ + steps <= capacity_, OutOfRange, "KVCache",
               "{} cached + {} new positions exceed the capacity of {}",
               length_, steps, capacity_);
  Tensor& keys = keys_.at(static_cast<std::size_t>(layer));
  Tensor& values = values_.at(static_cast<std::size_t>(layer));
  // Block types quantise as llama.cpp's cache does (ggml's run-time
  // quantiser: IQ4_NL without its scale search).
  CastOptions as_llama_cpp;
  as_llama_cpp.runtime_quantizer = true;
  keys.slice(2, length_, length_ + steps).copy_(k, as_llama_cpp);
  values.slice(2, length_, length_ + steps).copy_(v, as_llama_cpp);
  return {keys.slice(2, 0, length_ + steps),
          values.slice(2, 0, length_ + steps)};
}

void KVCache::advance(std::int64_t steps) { length_ += steps; }

}  // namespace tessel
