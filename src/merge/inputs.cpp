#include "merge/inputs.hpp"

#include <fmt/format.h>

#include "merge/blocks.hpp"
#include "tessel/core/error.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel::merge::detail {

void check_merge_input(const Tensor& t, const Tensor& like,
                       const char* method) {
  if (!is_streamable(t.dtype())) {
    throw_error(ErrorCode::BadDType,
                fmt::format("[merge] {} takes f32, f16 or bf16 tensors, got {}",
                            method, dtype_name(t.dtype())));
  }
  if (!t.is_contiguous() || !t.device().is_cpu()) {
    throw_error(ErrorCode::NotContiguous,
                fmt::format("[merge] {} takes contiguous CPU tensors", method));
  }
  if (t.shape() != like.shape()) {
    throw_error(
        ErrorCode::BadShape,
        fmt::format("[merge] {}: inputs of shapes {} and {}", method,
                    shape_string(t.shape()), shape_string(like.shape())));
  }
}

void bad_parameter(const char* method, const std::string& what) {
  throw_error(ErrorCode::BadConfig,
              fmt::format("[merge] {}: {}", method, what));
}

namespace {
thread_local Tensor lent_output;
}  // namespace

Tensor new_output(const Tensor& like) {
  if (lent_output.defined() && lent_output.numel() >= like.numel()) {
    Tensor out = lent_output.slice(0, 0, like.numel()).reshape(like.shape());
    lent_output = Tensor();
    return out;
  }
  return empty(like.shape(), DType::F32);
}

OutputLoan::OutputLoan(Tensor buffer) : previous_(std::move(lent_output)) {
  lent_output = std::move(buffer);
}

OutputLoan::~OutputLoan() { lent_output = std::move(previous_); }

}  // namespace tessel::merge::detail
