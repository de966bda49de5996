// Sparse COO and CSR tensors: validation of untrusted parts, conversions
// and the dispatch of CSR x dense to backends/cpu/spmm.cpp. Index
// bookkeeping runs on i64 copies here; values move through existing ops
// (index_select, scatter_add), so the per-dtype code stays in their kernels.
#include "tessel/ops/sparse.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

#include "core/check.hpp"
#include "ops/operands.hpp"
#include "tessel/ops/elementwise.hpp"
#include "tessel/ops/factories.hpp"
#include "tessel/ops/indexing.hpp"

namespace tessel {

// Builds sparse tensors from parts this file has already checked.
struct SparseAccess {
  static CooTensor coo(Tensor indices, Tensor values, Shape shape,
                       bool coalesced) {
    return CooTensor(std::move(indices), std::move(values), std::move(shape),
                     coalesced);
  }
  static CsrTensor csr(Tensor crow, Tensor col, Tensor values, Shape shape) {
    return CsrTensor(std::move(crow), std::move(col), std::move(values),
                     std::move(shape));
  }
};

namespace {

using Index64 = std::vector<std::int64_t>;

void require_index_dtype(DType t, const char* what, const char* op) {
  TESSEL_CHECK(t == DType::I32 || t == DType::I64, BadDType, op,
               "{} must be i32 or i64, got {}", what, dtype_name(t));
}

// Numbers only: repeated bool entries have no sum, and packed or block
// dtypes have no addressable element.
void require_value_dtype(DType t, const char* op) {
  TESSEL_CHECK(t != DType::Bool && !is_packed(t) && !is_block_quantized(t),
               BadDType, op, "values must be numbers, got {}", dtype_name(t));
}

// i32 indices must be able to hold `largest`.
void require_fits(DType index_dtype, std::int64_t largest, const char* what,
                  const char* op) {
  TESSEL_CHECK(index_dtype == DType::I64 ||
                   largest <= std::numeric_limits<std::int32_t>::max(),
               BadDType, op, "i32 indices cannot hold {} {}; use i64", what,
               largest);
}

// Extents >= 0 whose product (and so every stride, offset and row
// pointer derived from them) fits in int64: E2102 / E2303.
void require_extents(const Shape& shape, const char* op) {
  checked_numel(shape);
  if (shape.size() == 2) checked_add(shape[0], 1, op);  // CSR row pointers
}

// The elements of an integer tensor as i64, row-major.
Index64 as_i64(const Tensor& t) {
  const Tensor c = t.to(DType::I64).contiguous();
  const std::int64_t* p = c.const_data<std::int64_t>();
  return Index64(p, p + c.numel());
}

Tensor index_tensor(const Index64& v, Shape shape, DType dtype) {
  return from_vector(v, std::move(shape)).to(dtype);
}

// Repeated entries sum in f32 for floats under 32 bits (DESIGN §1
// accumulation), in the value dtype otherwise.
DType sum_dtype(DType t) {
  return is_floating_point(t) && element_size(t) < 4 ? DType::F32 : t;
}

// Row-major order of entries a and b of indices [rank, nnz] (-1, 0, 1).
// Lexicographic rather than by linear offset, which could overflow for
// shapes no dense tensor could have.
int compare_entries(const Index64& idx, std::int64_t nnz, std::int64_t a,
                    std::int64_t b) {
  for (std::size_t off = 0; off < idx.size();
       off += static_cast<std::size_t>(nnz)) {
    const std::int64_t x = idx[off + static_cast<std::size_t>(a)];
    const std::int64_t y = idx[off + static_cast<std::size_t>(b)];
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

void require_defined(const Tensor& values, const char* op) {
  TESSEL_CHECK(values.defined(), BadShape, op,
               "the sparse tensor is empty (default-constructed)");
}

}  // namespace

// ---- COO ------------------------------------------------------------------

CooTensor CooTensor::from_parts(const Tensor& indices, const Tensor& values,
                                Shape shape) {
  const char* op = "sparse_coo";
  ops::check_defined(op, indices, "indices");
  ops::check_defined(op, values, "values");
  const ops::CheckedOperands checked(op, {&indices, &values});
  require_index_dtype(indices.dtype(), "indices", op);
  require_value_dtype(values.dtype(), op);
  require_extents(shape, op);
  const auto rank = static_cast<std::int64_t>(shape.size());
  TESSEL_CHECK(rank >= 1 && indices.rank() == 2 && indices.shape()[0] == rank &&
                   values.rank() == 1 &&
                   values.shape()[0] == indices.shape()[1],
               BadShape, op,
               "indices {} must be [rank, nnz] and values {} [nnz] for "
               "shape {} (rank >= 1)",
               shape_string(indices.shape()), shape_string(values.shape()),
               shape_string(shape));
  const std::int64_t nnz = values.shape()[0];
  const Index64 idx = as_i64(indices);
  for (std::int64_t d = 0; d < rank; ++d) {
    for (std::int64_t e = 0; e < nnz; ++e) {
      const std::int64_t i = idx[static_cast<std::size_t>(d * nnz + e)];
      TESSEL_CHECK(i >= 0 && i < shape[d], OutOfRange, op,
                   "entry {} has index {} on axis {}, outside [0, {}) of "
                   "shape {}",
                   e, i, d, shape[d], shape_string(shape));
    }
  }
  bool sorted = true;
  for (std::int64_t e = 1; e < nnz && sorted; ++e)
    sorted = compare_entries(idx, nnz, e - 1, e) < 0;
  return CooTensor(indices.clone(), values.contiguous(), std::move(shape),
                   sorted);
}

std::int64_t CooTensor::nnz() const {
  return values_.defined() ? values_.shape()[0] : 0;
}

CooTensor CooTensor::coalesce() const {
  require_defined(values_, "coalesce");
  if (coalesced_) return *this;
  const std::int64_t n = nnz();
  const Index64 idx = as_i64(indices_);
  Index64 order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t a, std::int64_t b) {
                     return compare_entries(idx, n, a, b) < 0;
                   });
  // segment[e]: the output entry input entry e adds into; first[s]: the
  // input entry whose indices output entry s takes.
  Index64 segment(static_cast<std::size_t>(n)), first;
  for (std::size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || compare_entries(idx, n, order[k - 1], order[k]) != 0)
      first.push_back(order[k]);
    segment[static_cast<std::size_t>(order[k])] =
        static_cast<std::int64_t>(first.size()) - 1;
  }
  const auto u = static_cast<std::int64_t>(first.size());
  Index64 out(static_cast<std::size_t>(rank() * u));
  for (std::int64_t d = 0; d < rank(); ++d) {
    for (std::int64_t s = 0; s < u; ++s) {
      out[static_cast<std::size_t>(d * u + s)] =
          idx[static_cast<std::size_t>(d * n + first[s])];
    }
  }
  // scatter_add applies updates in entry order, so repeats sum in the
  // order they were given.
  const DType acc = sum_dtype(dtype());
  const Tensor summed = scatter_add(zeros({u}, acc), 0,
                                    from_vector(segment, {n}), values_.to(acc));
  return CooTensor(index_tensor(out, {rank(), u}, index_dtype()),
                   summed.to(dtype()), shape_, true);
}

Tensor CooTensor::to_dense() const {
  require_defined(values_, "to_dense");
  const std::int64_t numel = checked_numel(shape_);
  const std::int64_t n = nnz();
  const Index64 idx = as_i64(indices_);
  // Row-major offsets; no overflow, as every index is inside the shape.
  Index64 offset(static_cast<std::size_t>(n), 0);
  std::int64_t stride = 1;
  for (std::int64_t d = rank() - 1; d >= 0; --d) {
    for (std::int64_t e = 0; e < n; ++e) {
      offset[static_cast<std::size_t>(e)] +=
          idx[static_cast<std::size_t>(d * n + e)] * stride;
    }
    stride *= shape_[static_cast<std::size_t>(d)];
  }
  const DType acc = sum_dtype(dtype());
  const Tensor flat = scatter_add(zeros({numel}, acc), 0,
                                  from_vector(offset, {n}), values_.to(acc));
  return flat.to(dtype()).reshape(shape_);
}

CsrTensor CooTensor::to_csr() const {
  const char* op = "to_csr";
  require_defined(values_, op);
  TESSEL_CHECK(rank() == 2, BadShape, op, "needs a 2-D COO tensor, got {}",
               shape_string(shape_));
  const CooTensor c = coalesce();
  const std::int64_t n = c.nnz(), rows = shape_[0];
  require_fits(index_dtype(), n, "nnz", op);
  const Index64 idx = as_i64(c.indices_);
  Index64 crow(static_cast<std::size_t>(rows + 1), 0);
  for (std::int64_t e = 0; e < n; ++e)
    ++crow[static_cast<std::size_t>(idx[static_cast<std::size_t>(e)] + 1)];
  std::partial_sum(crow.begin(), crow.end(), crow.begin());
  return SparseAccess::csr(index_tensor(crow, {rows + 1}, index_dtype()),
                           c.indices_.select(0, 1).clone(), c.values_, shape_);
}

CooTensor to_sparse_coo(const Tensor& dense, DType index_dtype) {
  const char* op = "to_sparse_coo";
  const ops::CheckedOperands checked(op, dense, "dense");
  require_index_dtype(index_dtype, "index dtype", op);
  require_value_dtype(dense.dtype(), op);
  TESSEL_CHECK(dense.rank() >= 1, BadShape, op,
               "needs a tensor of rank >= 1, got shape {}",
               shape_string(dense.shape()));
  const Shape& shape = dense.shape();
  for (auto e : shape) require_fits(index_dtype, e - 1, "index", op);
  const Tensor flat = dense.contiguous().reshape({-1});
  // NaN != 0, so NaN stays an entry; -0.0 == 0 drops (PyTorch does both).
  const Tensor mask = ne(flat, 0).contiguous();
  const bool* m = mask.const_data<bool>();
  Index64 pos;
  for (std::int64_t i = 0; i < mask.numel(); ++i) {
    if (m[i]) pos.push_back(i);
  }
  const auto n = static_cast<std::int64_t>(pos.size());
  const auto rank = static_cast<std::int64_t>(shape.size());
  Index64 idx(static_cast<std::size_t>(rank * n));
  for (std::int64_t e = 0; e < n; ++e) {
    std::int64_t rest = pos[static_cast<std::size_t>(e)];
    for (std::int64_t d = rank - 1; d >= 0; --d) {
      idx[static_cast<std::size_t>(d * n + e)] = rest % shape[d];
      rest /= shape[d];
    }
  }
  const Tensor values = index_select(flat, 0, from_vector(pos, {n}));
  return SparseAccess::coo(index_tensor(idx, {rank, n}, index_dtype),
                           values.contiguous(), shape, true);
}

// ---- CSR ------------------------------------------------------------------

CsrTensor CsrTensor::from_parts(const Tensor& crow, const Tensor& col,
                                const Tensor& values, Shape shape) {
  const char* op = "sparse_csr";
  ops::check_defined(op, crow, "crow_indices");
  ops::check_defined(op, col, "col_indices");
  ops::check_defined(op, values, "values");
  const ops::CheckedOperands checked(op, {&crow, &col, &values});
  require_index_dtype(crow.dtype(), "crow_indices", op);
  require_index_dtype(col.dtype(), "col_indices", op);
  TESSEL_CHECK(crow.dtype() == col.dtype(), BadDType, op,
               "crow_indices ({}) and col_indices ({}) must share a dtype",
               dtype_name(crow.dtype()), dtype_name(col.dtype()));
  require_value_dtype(values.dtype(), op);
  TESSEL_CHECK(shape.size() == 2, BadShape, op,
               "CSR tensors are 2-D, got shape {}", shape_string(shape));
  require_extents(shape, op);
  const std::int64_t rows = shape[0], cols = shape[1];
  TESSEL_CHECK(crow.rank() == 1 && crow.shape()[0] == rows + 1, BadShape, op,
               "crow_indices {} must be [{}] for shape {}",
               shape_string(crow.shape()), rows + 1, shape_string(shape));
  TESSEL_CHECK(col.rank() == 1 && values.rank() == 1 &&
                   col.shape()[0] == values.shape()[0],
               BadShape, op, "col_indices {} and values {} must both be [nnz]",
               shape_string(col.shape()), shape_string(values.shape()));
  const std::int64_t n = col.shape()[0];
  const Index64 cr = as_i64(crow), cl = as_i64(col);
  // The row pointers first: every later loop trusts them as ranges.
  TESSEL_CHECK(cr[0] == 0, MalformedFile, op,
               "crow_indices must start at 0, got {}", cr[0]);
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto i = static_cast<std::size_t>(r);
    TESSEL_CHECK(cr[i + 1] >= cr[i], MalformedFile, op,
                 "crow_indices decrease: row {} spans [{}, {})", r, cr[i],
                 cr[i + 1]);
  }
  TESSEL_CHECK(cr[static_cast<std::size_t>(rows)] == n, MalformedFile, op,
               "crow_indices end at {} but there are {} entries",
               cr[static_cast<std::size_t>(rows)], n);
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto i = static_cast<std::size_t>(r);
    for (std::int64_t p = cr[i]; p < cr[i + 1]; ++p) {
      const std::int64_t c = cl[static_cast<std::size_t>(p)];
      TESSEL_CHECK(c >= 0 && c < cols, OutOfRange, op,
                   "entry {} (row {}) has column {}, outside [0, {}) of "
                   "shape {}",
                   p, r, c, cols, shape_string(shape));
      // Sorted, unique columns: what PyTorch requires, and what lets
      // to_coo promise a coalesced result.
      TESSEL_CHECK(p == cr[i] || c > cl[static_cast<std::size_t>(p - 1)],
                   MalformedFile, op,
                   "columns of row {} must strictly increase: entry {} has "
                   "column {} after {}",
                   r, p, c, cl[static_cast<std::size_t>(p - 1)]);
    }
  }
  return CsrTensor(crow.clone(), col.clone(), values.contiguous(),
                   std::move(shape));
}

std::int64_t CsrTensor::nnz() const {
  return values_.defined() ? values_.shape()[0] : 0;
}

CooTensor CsrTensor::to_coo() const {
  require_defined(values_, "to_coo");
  const Index64 cr = as_i64(crow_);
  Index64 row(static_cast<std::size_t>(nnz()));
  for (std::int64_t r = 0; r < rows(); ++r) {
    const auto i = static_cast<std::size_t>(r);
    std::fill(row.begin() + cr[i], row.begin() + cr[i + 1], r);
  }
  const Tensor indices =
      stack({index_tensor(row, {nnz()}, index_dtype()), col_}, 0);
  return SparseAccess::coo(indices, values_, shape_, true);
}

Tensor CsrTensor::to_dense() const {
  require_defined(values_, "to_dense");
  return to_coo().to_dense();
}

CsrTensor to_sparse_csr(const Tensor& dense, DType index_dtype) {
  const char* op = "to_sparse_csr";
  const ops::CheckedOperands checked(op, dense, "dense");
  TESSEL_CHECK(dense.rank() == 2, BadShape, op,
               "CSR tensors are 2-D, got shape {}",
               shape_string(dense.shape()));
  return to_sparse_coo(dense, index_dtype).to_csr();
}

// ---- products ---------------------------------------------------------------

Tensor matmul(const CsrTensor& a, const Tensor& b) {
  const char* op = "sparse_matmul";
  require_defined(a.values(), op);
  const ops::CheckedOperands checked(op, b, "b");
  TESSEL_CHECK(b.rank() == 2, BadShape, op,
               "b must be a matrix, got shape {} for sparse {}",
               shape_string(b.shape()), shape_string(a.shape()));
  TESSEL_CHECK(b.shape()[0] == a.cols(), InnerDimMismatch, op,
               "inner dimensions differ: sparse {} @ {} ({} vs {})",
               shape_string(a.shape()), shape_string(b.shape()), a.cols(),
               b.shape()[0]);
  const DType dtype = promote_types(a.dtype(), b.dtype(), op);
  TESSEL_CHECK(dtype == DType::F16 || dtype == DType::BF16 ||
                   dtype == DType::F32 || dtype == DType::F64,
               BadDType, op,
               "computes in f16, bf16, f32 or f64; values {} and b {} give {}",
               dtype_name(a.dtype()), dtype_name(b.dtype()), dtype_name(dtype));
  const DeviceGuard on_cpu(Device::cpu());  // sparse tensors live on the CPU
  Tensor out = empty({a.rows(), b.shape()[1]}, dtype);
  if (out.numel() == 0) return out;
  // Both operands in the accumulation type, contiguous: a strided b is
  // packed once (cols x N), cheaper than strided reads in the nnz x N loop.
  const DType acc = dtype == DType::F64 ? DType::F64 : DType::F32;
  ops::backend_of(out).spmm_csr(a.crow_indices(), a.col_indices(),
                                a.values().to(acc).contiguous(),
                                b.to(acc).contiguous(), out);
  return out;
}

Tensor matmul(const CooTensor& a, const Tensor& b) {
  require_defined(a.values(), "sparse_matmul");
  TESSEL_CHECK(a.rank() == 2, BadShape, "sparse_matmul",
               "the sparse operand must be a matrix, got shape {}",
               shape_string(a.shape()));
  return matmul(a.to_csr(), b);
}

}  // namespace tessel
