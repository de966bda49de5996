// Sparse tensors (DESIGN §5): COO of any rank and CSR matrices with i32 or
// i64 indices and one scalar value per entry (no hybrid dense axes). They
// convert to and from dense tensors and multiply dense matrices. Semantics
// follow PyTorch: an uncoalesced COO may hold unsorted and repeated
// entries, and repeated entries sum. See docs/sparse.md.
#pragma once

#include <cstdint>

#include "tessel/core/tensor.hpp"

namespace tessel {

class CsrTensor;
struct SparseAccess;

class CooTensor {
 public:
  // Empty: no shape, no entries.
  CooTensor() = default;

  // Validates parts from an untrusted source: `indices` i32 or i64 (E2201)
  // of shape [rank, nnz] and `values` [nnz] of a number dtype (E2201,
  // E2102), every index in [0, shape[d]) (E2302). The indices are copied,
  // so later writes through the caller's handle cannot break them. The
  // result is marked coalesced when its entries are already in row-major
  // order without repeats.
  static CooTensor from_parts(const Tensor& indices, const Tensor& values,
                              Shape shape);

  const Tensor& indices() const { return indices_; }  // [rank, nnz]
  const Tensor& values() const { return values_; }    // [nnz]
  const Shape& shape() const { return shape_; }
  std::int64_t rank() const { return static_cast<std::int64_t>(shape_.size()); }
  std::int64_t nnz() const;
  DType dtype() const { return values_.dtype(); }
  DType index_dtype() const { return indices_.dtype(); }
  bool is_coalesced() const { return coalesced_; }

  // Entries in row-major order, repeats summed (16-bit floats sum in f32
  // and round once); itself when already coalesced.
  CooTensor coalesce() const;
  // The dense tensor; repeated entries sum. E2303 if it cannot be sized.
  Tensor to_dense() const;
  // 2-D only (E2102); coalesces first. Keeps the index dtype.
  CsrTensor to_csr() const;

 private:
  friend struct SparseAccess;  // src/ops/sparse.cpp: builds checked parts
  CooTensor(Tensor indices, Tensor values, Shape shape, bool coalesced)
      : indices_(std::move(indices)),
        values_(std::move(values)),
        shape_(std::move(shape)),
        coalesced_(coalesced) {}

  Tensor indices_;
  Tensor values_;
  Shape shape_;
  bool coalesced_ = false;
};

class CsrTensor {
 public:
  CsrTensor() = default;

  // Validates parts from an untrusted source: `crow` [rows + 1] and `col`
  // [nnz] of one dtype, i32 or i64 (E2201); `values` [nnz] (E2102); shape
  // [rows, cols] (E2102). crow must start at 0, never decrease and end at
  // nnz, and the columns of each row must strictly increase (E3001); every
  // column lies in [0, cols) (E2302). Index tensors are copied.
  static CsrTensor from_parts(const Tensor& crow, const Tensor& col,
                              const Tensor& values, Shape shape);

  const Tensor& crow_indices() const { return crow_; }  // [rows + 1]
  const Tensor& col_indices() const { return col_; }    // [nnz]
  const Tensor& values() const { return values_; }      // [nnz]
  const Shape& shape() const { return shape_; }
  std::int64_t rows() const { return shape_.empty() ? 0 : shape_[0]; }
  std::int64_t cols() const { return shape_.empty() ? 0 : shape_[1]; }
  std::int64_t nnz() const;
  DType dtype() const { return values_.dtype(); }
  DType index_dtype() const { return col_.dtype(); }

  Tensor to_dense() const;
  // A coalesced COO with the same index dtype.
  CooTensor to_coo() const;

 private:
  friend struct SparseAccess;
  CsrTensor(Tensor crow, Tensor col, Tensor values, Shape shape)
      : crow_(std::move(crow)),
        col_(std::move(col)),
        values_(std::move(values)),
        shape_(std::move(shape)) {}

  Tensor crow_;
  Tensor col_;
  Tensor values_;
  Shape shape_;
};

// The non-zero elements of `dense` (rank >= 1, any strides) in row-major
// order; NaN counts as non-zero, -0.0 as zero. `index_dtype` is i32 or
// i64 (E2201; i32 also when an extent does not fit in it).
CooTensor to_sparse_coo(const Tensor& dense, DType index_dtype = DType::I64);
// The same for a matrix (E2102 for other ranks), in CSR.
CsrTensor to_sparse_csr(const Tensor& dense, DType index_dtype = DType::I64);

// Sparse x dense: a [rows, cols] @ b [cols, N] (any strides) -> dense
// [rows, N] (E2102 unless b is 2-D, E2103 when cols differ). The dtype is
// the promotion of a's values and b; f16, bf16, f32, f64 (E2201 for
// others), accumulating in f32, or f64 for f64.
Tensor matmul(const CsrTensor& a, const Tensor& b);
// COO is converted to CSR first (coalescing it).
Tensor matmul(const CooTensor& a, const Tensor& b);

}  // namespace tessel
