#include "tessel/io/tensor_source.hpp"

#include <cstring>

#include "core/check.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel {

namespace {

TensorSpec spec_of(const Tensor& t) { return {t.name(), t.dtype(), t.shape()}; }

void check_range(const TensorSpec& spec, std::int64_t offset,
                 std::size_t size) {
  const std::int64_t unit = storage_unit_bytes(spec.dtype);
  const auto n = static_cast<std::int64_t>(size);
  TESSEL_ASSERT(offset >= 0 && n <= spec.nbytes() - offset);
  TESSEL_ASSERT(offset % unit == 0 &&
                (n % unit == 0 || offset + n == spec.nbytes()));
}

// `t` itself when row-major, else a copy cached for the last index.
const Tensor& row_major(const Tensor& t, std::size_t i, std::size_t& index,
                        Tensor& cache) {
  if (t.is_contiguous()) return t;
  if (index != i) {
    cache = Tensor();  // free the previous copy first
    cache = t.contiguous();
    index = i;
  }
  return cache;
}

void require_cpu(const Tensor& t) {
  TESSEL_CHECK(t.defined(), BadShape, "save", "a tensor is undefined");
  TESSEL_CHECK(t.device().is_cpu(), DeviceMismatch, "save",
               "tensor '{}' is on {}; copy it to the CPU first", t.name(),
               t.device().str());
}

}  // namespace

std::int64_t TensorSpec::numel() const { return checked_numel(shape); }

std::int64_t TensorSpec::nbytes() const {
  return storage_bytes(dtype, numel());
}

std::int64_t storage_unit_bytes(DType dtype) {
  if (is_block_quantized(dtype)) return dtype_traits(dtype).block_bytes;
  if (is_packed(dtype)) return 1;
  return element_size(dtype);
}

TensorListSource::TensorListSource(std::vector<Tensor> tensors)
    : tensors_(std::move(tensors)) {
  specs_.reserve(tensors_.size());
  for (const Tensor& t : tensors_) {
    require_cpu(t);
    specs_.push_back(spec_of(t));
  }
}

const Tensor& TensorListSource::contiguous(std::size_t i) {
  return row_major(tensors_[i], i, cached_index_, cached_);
}

const std::uint8_t* TensorListSource::bytes(std::size_t i) {
  return tensors_[i].is_contiguous()
             ? static_cast<const std::uint8_t*>(tensors_[i].raw_data())
             : nullptr;
}

void TensorListSource::read(std::size_t i, std::int64_t offset,
                            std::span<std::uint8_t> out) {
  check_range(specs_[i], offset, out.size());
  const auto* data = static_cast<const std::uint8_t*>(contiguous(i).raw_data());
  std::memcpy(out.data(), data + offset, out.size());
}

CastingSource::CastingSource(std::vector<Tensor> tensors,
                             const std::vector<DType>& dtypes,
                             CastOptions options)
    : tensors_(std::move(tensors)), options_(options) {
  TESSEL_CHECK(tensors_.size() == dtypes.size(), BadShape, "convert",
               "{} tensors but {} output dtypes", tensors_.size(),
               dtypes.size());
  specs_.reserve(tensors_.size());
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    const Tensor& t = tensors_[i];
    require_cpu(t);
    TESSEL_CHECK(t.dtype() == dtypes[i] || (is_byte_addressable(t.dtype()) &&
                                            is_byte_addressable(dtypes[i])),
                 BadDType, "convert",
                 "tensor '{}' cannot be cast from {} to {} (block-quantised "
                 "and packed data are passed through unchanged or "
                 "(de)quantised, not cast)",
                 t.name(), dtype_name(t.dtype()), dtype_name(dtypes[i]));
    TensorSpec s = spec_of(t);
    s.dtype = dtypes[i];
    specs_.push_back(std::move(s));
  }
}

const std::uint8_t* CastingSource::bytes(std::size_t i) {
  const Tensor& t = tensors_[i];
  return t.dtype() == specs_[i].dtype && t.is_contiguous()
             ? static_cast<const std::uint8_t*>(t.raw_data())
             : nullptr;
}

const Tensor& CastingSource::contiguous(std::size_t i) {
  return row_major(tensors_[i], i, cached_index_, cached_);
}

void CastingSource::read(std::size_t i, std::int64_t offset,
                         std::span<std::uint8_t> out) {
  check_range(specs_[i], offset, out.size());
  const Tensor& t = contiguous(i);
  const DType to = specs_[i].dtype;
  if (t.dtype() == to) {
    std::memcpy(out.data(),
                static_cast<const std::uint8_t*>(t.raw_data()) + offset,
                out.size());
    return;
  }
  const std::int64_t first = offset / element_size(to);
  const auto count = static_cast<std::int64_t>(out.size()) / element_size(to);
  const Tensor input = t.reshape({t.numel()}).slice(0, first, first + count);
  Tensor output = from_blob(out.data(), {count}, to);
  output.copy_(input, options_);
}

void CastingSource::written(std::size_t i, std::int64_t end) {
  const Tensor& t = tensors_[i];
  if (!t.is_contiguous() || t.numel() == 0) return;
  if (released_index_ != i) {
    released_index_ = i;
    released_bytes_ = 0;
  }
  // Output bytes written -> input bytes consumed (same element count).
  const DType to = specs_[i].dtype;
  const std::int64_t consumed =
      t.dtype() == to ? end : end / element_size(to) * element_size(t.dtype());
  if (consumed <= released_bytes_) return;
  t.release_pages(released_bytes_, consumed - released_bytes_);
  released_bytes_ = consumed;
}

}  // namespace tessel
