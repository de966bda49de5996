#include "merge/inputs.hpp"

#include <fmt/format.h>

#include "tessel/core/error.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel::merge::detail {

void check_merge_input(const Tensor& t, const Tensor& like,
                       const char* method) {
  if (t.dtype() != DType::F32) {
    throw_error(ErrorCode::BadDType,
                fmt::format("[merge] {} takes f32 tensors, got {}", method,
                            dtype_name(t.dtype())));
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

Tensor new_like(const Tensor& like) { return empty(like.shape(), DType::F32); }

}  // namespace tessel::merge::detail
