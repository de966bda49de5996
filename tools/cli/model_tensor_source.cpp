#include "cli/model_tensor_source.hpp"

#include <cstring>

#include "core/check.hpp"

namespace tessel::cli {

namespace {

std::int64_t rows_of(const Tensor& t) { return t.rank() == 0 ? 1 : t.size(0); }

std::int64_t row_elements(const Tensor& t) {
  const std::int64_t rows = rows_of(t);
  return rows == 0 ? 0 : t.numel() / rows;
}

// Rows [first, last) of a block-quantised tensor decoded to `to` (a row is
// whole blocks, so a slice of rows is one).
Tensor decoded_rows(const Tensor& t, std::int64_t first, std::int64_t last,
                    DType to) {
  Tensor rows = t.rank() >= 1 ? t.slice(0, first, last) : t;
  Tensor out = rows.to(DType::F32);
  return to == DType::F32 ? out : out.to(to);
}

}  // namespace

ModelTensorSource::ModelTensorSource(std::vector<ModelTensor> tensors,
                                     CastOptions options)
    : tensors_(std::move(tensors)), options_(options) {
  std::int64_t before = 0;
  for (ModelTensor& t : tensors_) {
    if (!t.input.is_contiguous()) t.input = t.input.contiguous();
    if (t.order != RowOrder::Same) {
      const std::int64_t rows = rows_of(t.input);
      TESSEL_CHECK(
          t.input.rank() >= 1 && t.heads > 0 && rows % (2 * t.heads) == 0,
          BadShape, "convert",
          "'{}' needs rows in whole pairs of halves per head to "
          "reorder its rotary rows: {} rows, {} heads",
          t.name, rows, t.heads);
    }
    specs_.push_back({t.name, t.dtype, t.input.shape()});
    before_.push_back(before);
    before += specs_.back().nbytes();
  }
}

std::int64_t ModelTensorSource::total_bytes() const {
  std::int64_t total = 0;
  for (const TensorSpec& s : specs_) total += s.nbytes();
  return total;
}

std::int64_t ModelTensorSource::source_row(std::size_t i,
                                           std::int64_t row) const {
  const ModelTensor& t = tensors_[i];
  if (t.order == RowOrder::Same) return row;
  return rope_row_source(row, rows_of(t.input), t.heads,
                         t.order == RowOrder::Interleave);
}

const std::uint8_t* ModelTensorSource::bytes(std::size_t i) {
  const ModelTensor& t = tensors_[i];
  if (!written_as_stored(t)) return nullptr;
  return static_cast<const std::uint8_t*>(t.input.raw_data());
}

void ModelTensorSource::read(std::size_t i, std::int64_t offset,
                             std::span<std::uint8_t> out) {
  const ModelTensor& t = tensors_[i];
  const Tensor& in = t.input;
  const std::int64_t size = element_size(t.dtype);
  const std::int64_t first = offset / size;
  const auto count = static_cast<std::int64_t>(out.size()) / size;
  const std::int64_t row_len = row_elements(in);
  const bool quantised = is_block_quantized(in.dtype());
  if (t.order == RowOrder::Same && !quantised) {
    if (in.dtype() == t.dtype) {
      std::memcpy(out.data(),
                  static_cast<const std::uint8_t*>(in.raw_data()) + offset,
                  out.size());
      return;
    }
    Tensor dst = from_blob(out.data(), {count}, t.dtype);
    dst.copy_(in.reshape({in.numel()}).slice(0, first, first + count),
              options_);
    return;
  }
  if (t.order == RowOrder::Same) {
    const std::int64_t r0 = first / row_len;
    const std::int64_t r1 = (first + count - 1) / row_len + 1;
    const Tensor rows = decoded_rows(in, r0, r1, t.dtype);
    std::memcpy(out.data(),
                static_cast<const std::uint8_t*>(rows.raw_data()) +
                    (first - r0 * row_len) * size,
                out.size());
    return;
  }
  const Tensor matrix = quantised ? in : in.reshape({rows_of(in), row_len});
  for (std::int64_t e = first; e < first + count;) {
    const std::int64_t r = e / row_len;
    const std::int64_t c0 = e - r * row_len;
    const std::int64_t c1 = std::min(first + count - r * row_len, row_len);
    const std::int64_t s = source_row(i, r);
    std::uint8_t* to = out.data() + (e - first) * size;
    if (quantised) {
      const Tensor row = decoded_rows(in, s, s + 1, t.dtype);
      std::memcpy(to,
                  static_cast<const std::uint8_t*>(row.raw_data()) + c0 * size,
                  static_cast<std::size_t>((c1 - c0) * size));
    } else {
      Tensor dst = from_blob(to, {c1 - c0}, t.dtype);
      dst.copy_(matrix.select(0, s).slice(0, c0, c1), options_);
    }
    e = r * row_len + c1;
  }
}

void ModelTensorSource::written(std::size_t i, std::int64_t end) {
  if (progress_ != nullptr) {
    const std::int64_t done = before_[i] + end;
    progress_->update(done, static_cast<double>(done), specs_[i].name);
  }
  // Input the writer is done with leaves the resident set (the page cache
  // keeps it): in order as it is consumed, or a reordered or block-
  // quantised tensor whole at its end.
  const ModelTensor& t = tensors_[i];
  const Tensor& in = t.input;
  const std::int64_t total = specs_[i].nbytes();
  std::int64_t consumed = 0;
  if (end == total) {
    consumed = in.nbytes();
  } else if (t.order == RowOrder::Same && !is_block_quantized(in.dtype())) {
    consumed = end / element_size(t.dtype) * element_size(in.dtype());
  }
  if (released_index_ != i) {
    released_index_ = i;
    released_bytes_ = 0;
  }
  if (consumed <= released_bytes_) return;
  in.release_pages(released_bytes_, consumed - released_bytes_);
  released_bytes_ = consumed;
}

std::unique_ptr<Progress> ModelTensorSource::progress_on_terminal() {
  if (!Progress::stderr_is_terminal()) return nullptr;
  auto progress =
      std::make_unique<Progress>(total_bytes(), "B", std::int64_t{1} << 30);
  set_progress(progress.get());
  return progress;
}

}  // namespace tessel::cli
