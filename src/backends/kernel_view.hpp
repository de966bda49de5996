// Note [kernel views]
// What a kernel sees of an operand: where its elements are and how they
// are laid out, nothing else. No storage handle (a kernel cannot keep an
// operand alive, resize it or ask its device), no name, no autograd. The
// op layer has validated shapes, dtypes and devices and allocated the
// outputs before a backend builds these, so nothing here checks anything.
//
// An input is a KernelInput (read-only pointer), an output a KernelOutput
// (writable pointer): the constness is in the type, so a kernel never
// casts it away to write. Shape and strides are borrowed from the tensor
// (no copies per call). Strides are in elements, as the Tensor's are:
// packed 4-bit types have no whole-byte stride, and byte_strides() gives
// the byte form for the byte-addressable dtypes that every strided loop
// walks.
#pragma once

#include <cstdint>
#include <span>
#include <type_traits>

#include "tessel/core/dtype.hpp"
#include "tessel/core/shape.hpp"
#include "tessel/core/tensor.hpp"

namespace tessel {

template <bool Writable>
class KernelView {
 public:
  using Byte = std::conditional_t<Writable, char, const char>;
  using Extents = std::span<const std::int64_t>;

  KernelView() = default;
  // `base` is the start of the operand's buffer (null for meta tensors),
  // `offset` the first element's position in it, in elements. The shape
  // and strides are borrowed, not copied (a view is made per kernel call,
  // and copying them cost small ops a sixth of their time): the tensor
  // they come from must outlive the view, so build views in the call that
  // uses them.
  KernelView(Byte* base, std::int64_t offset, Extents shape, Extents strides,
             DType dtype, std::int64_t numel, bool contiguous)
      : base_(base),
        offset_(offset),
        shape_(shape),
        strides_(strides),
        dtype_(dtype),
        numel_(numel),
        contiguous_(contiguous),
        defined_(true) {}

  // An output may be read back (a kernel that accumulates into it, a
  // helper that only needs its layout): the writable view converts to the
  // read-only one, never the other way.
  template <bool W = Writable, class = std::enable_if_t<W>>
  operator KernelView<false>() const {  // NOLINT: implicit, as T* -> const T*
    if (!defined_) return {};
    return {base_, offset_, shape_, strides_, dtype_, numel_, contiguous_};
  }

  // An optional operand that was not given (a bias, saved statistics).
  bool defined() const { return defined_; }
  Extents shape() const { return shape_; }
  Extents strides() const { return strides_; }
  std::int64_t size(std::size_t dim) const { return shape_[dim]; }
  std::int64_t rank() const { return static_cast<std::int64_t>(shape_.size()); }
  std::int64_t numel() const { return numel_; }
  DType dtype() const { return dtype_; }
  bool is_contiguous() const { return contiguous_; }
  // Position of the first element in the buffer, in elements (packed
  // kernels need its parity).
  std::int64_t storage_offset() const { return offset_; }
  // Start of the buffer the offsets count from.
  Byte* storage_base() const { return base_; }

  // Address of the first element (for packed 4-bit types: the byte holding
  // it; for block types: its block).
  Byte* raw_data() const {
    if (base_ == nullptr) return nullptr;
    const auto& t = dtype_traits(dtype_);
    const std::int64_t bytes = t.kind == DTypeKind::Quantized
                                   ? offset_ / t.block_size * t.block_bytes
                               : t.bits == 4 ? offset_ / 2
                                             : offset_ * (t.bits / 8);
    return base_ + bytes;
  }
  // Typed first element; T is the dtype's element type (the op layer made
  // sure of it).
  template <class T>
  auto data() const {
    using Pointer = std::conditional_t<Writable, T*, const T*>;
    return reinterpret_cast<Pointer>(raw_data());
  }
  template <class T>
  const T* const_data() const {
    return reinterpret_cast<const T*>(raw_data());
  }
  // Strides in bytes, for byte-addressable dtypes.
  Strides byte_strides() const {
    Strides s(strides_.begin(), strides_.end());
    const int size = element_size(dtype_);
    for (auto& v : s) v *= size;
    return s;
  }

 private:
  Byte* base_ = nullptr;
  std::int64_t offset_ = 0;
  Extents shape_;
  Extents strides_;
  DType dtype_ = DType::F32;
  std::int64_t numel_ = 0;
  bool contiguous_ = true;
  bool defined_ = false;
};

using KernelInput = KernelView<false>;
using KernelOutput = KernelView<true>;

namespace detail {

// An undefined tensor gives an undefined view. Storage hands out a
// writable address (it owns the buffer); the op layer refused read-only
// outputs already.
template <bool Writable>
KernelView<Writable> view_of(const Tensor& t) {
  if (!t.defined()) return {};
  using Byte = typename KernelView<Writable>::Byte;
  return {static_cast<Byte*>(t.storage().data()),
          t.storage_offset(),
          t.shape(),
          t.strides(),
          t.dtype(),
          t.numel(),
          t.is_contiguous()};
}

}  // namespace detail

// The read-only view of an input's elements.
inline KernelInput input_view(const Tensor& t) {
  return detail::view_of<false>(t);
}

// The writable view of an output's elements.
inline KernelOutput output_view(const Tensor& t) {
  return detail::view_of<true>(t);
}

}  // namespace tessel
