// Gradients of views and casts: each sends the gradient back to the
// input's shape (and dtype) without touching values.
#include <numeric>

#include "autograd/graph.hpp"
#include "tessel/ops/factories.hpp"
#include "tessel/ops/indexing.hpp"
#include "tessel/ops/reduce.hpp"

namespace tessel {

using autograd::Needs;
using autograd::record;

Variable Variable::reshape(Shape shape) const {
  const Shape in = this->shape();
  return record("reshape", value().reshape(std::move(shape)), {*this},
                [in](const Tensor& g, const Needs&) {
                  return std::vector<Tensor>{g.reshape(in)};
                });
}

Variable Variable::permute(std::span<const std::int64_t> dims) const {
  std::vector<std::int64_t> inverse(dims.size());
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::int64_t d = dims[i] < 0 ? dims[i] + rank() : dims[i];
    if (d >= 0 && d < rank())
      inverse[static_cast<std::size_t>(d)] = static_cast<std::int64_t>(i);
  }
  return record("permute", value().permute(dims), {*this},
                [inverse](const Tensor& g, const Needs&) {
                  return std::vector<Tensor>{
                      g.permute(std::span<const std::int64_t>(inverse))};
                });
}

Variable Variable::transpose(std::int64_t dim0, std::int64_t dim1) const {
  return record("transpose", value().transpose(dim0, dim1), {*this},
                [dim0, dim1](const Tensor& g, const Needs&) {
                  return std::vector<Tensor>{g.transpose(dim0, dim1)};
                });
}

// Reversing every axis is its own inverse.
Variable Variable::transpose() const {
  return record("transpose", value().transpose(), {*this},
                [](const Tensor& g, const Needs&) {
                  return std::vector<Tensor>{g.transpose()};
                });
}

Variable Variable::slice(std::int64_t dim, std::int64_t start,
                         std::int64_t stop, std::int64_t step) const {
  const Tensor v = value();
  const Tensor out = v.slice(dim, start, stop, step);
  // The view's elements inside zeros of the input's shape: write through a
  // view of the same slice of a fresh tensor.
  return record("slice", out, {*this},
                [v, dim, start, stop, step](const Tensor& g, const Needs&) {
                  Tensor full = zeros(v.shape(), g.dtype(), g.device());
                  full.slice(dim, start, stop, step).copy_(g);
                  return std::vector<Tensor>{full};
                });
}

Variable Variable::select(std::int64_t dim, std::int64_t index) const {
  const Tensor v = value();
  return record("select", v.select(dim, index), {*this},
                [v, dim, index](const Tensor& g, const Needs&) {
                  Tensor full = zeros(v.shape(), g.dtype(), g.device());
                  full.select(dim, index).copy_(g);
                  return std::vector<Tensor>{full};
                });
}

Variable Variable::expand(Shape shape) const {
  const Shape in = this->shape();
  return record("expand", value().expand(std::move(shape)), {*this},
                [in](const Tensor& g, const Needs&) {
                  return std::vector<Tensor>{autograd::sum_to(g, in)};
                });
}

Variable Variable::squeeze(std::int64_t dim) const {
  const Shape in = shape();
  return record("squeeze", value().squeeze(dim), {*this},
                [in](const Tensor& g, const Needs&) {
                  return std::vector<Tensor>{g.reshape(in)};
                });
}

Variable Variable::squeeze(std::span<const std::int64_t> dims) const {
  const Shape in = shape();
  return record("squeeze", value().squeeze(dims), {*this},
                [in](const Tensor& g, const Needs&) {
                  return std::vector<Tensor>{g.reshape(in)};
                });
}

Variable Variable::unsqueeze(std::int64_t dim) const {
  const Shape in = shape();
  return record("unsqueeze", value().unsqueeze(dim), {*this},
                [in](const Tensor& g, const Needs&) {
                  return std::vector<Tensor>{g.reshape(in)};
                });
}

Variable Variable::flatten(std::int64_t start_dim, std::int64_t end_dim) const {
  const Shape in = shape();
  return record("flatten", value().flatten(start_dim, end_dim), {*this},
                [in](const Tensor& g, const Needs&) {
                  return std::vector<Tensor>{g.reshape(in)};
                });
}

Variable Variable::contiguous() const {
  return record(
      "contiguous", value().contiguous(), {*this},
      [](const Tensor& g, const Needs&) { return std::vector<Tensor>{g}; });
}

Variable Variable::to(DType dtype) const {
  const DType in = this->dtype();
  return record("to", value().to(dtype), {*this},
                [in](const Tensor& g, const Needs&) {
                  return std::vector<Tensor>{g.to(in)};
                });
}

}  // namespace tessel
