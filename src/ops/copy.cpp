// The Tensor members that move element data: contiguous, clone, to, fill_,
// copy_. Packed i4/u4 go through one byte per element; block-quantised
// tensors are copied as whole blocks, and convert to and from other dtypes
// through f32 (dequantise / quantise, src/quant).
#include <bit>
#include <cstring>

#include "core/check.hpp"
#include "ops/operands.hpp"
#include "quant/block_codecs.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel {

namespace {

// The one-byte-per-element dtype that packed values unpack to.
DType unpacked_dtype(DType packed) {
  return packed == DType::I4 ? DType::I8 : DType::U8;
}

Tensor unpack(const Tensor& packed) {
  Tensor bytes =
      empty(packed.shape(), unpacked_dtype(packed.dtype()), packed.device());
  ops::backend_of(bytes).unpack_nibbles(bytes, packed);
  return bytes;
}

// A block-quantised tensor seen as the u8 bytes of its blocks (same storage).
Tensor block_bytes_view(const Tensor& t) {
  const auto& tr = dtype_traits(t.dtype());
  Shape shape = t.shape();
  Strides strides = t.strides();
  for (std::size_t d = 0; d + 1 < shape.size(); ++d) {
    strides[d] = strides[d] / tr.block_size * tr.block_bytes;
  }
  shape.back() = shape.back() / tr.block_size * tr.block_bytes;
  strides.back() = 1;
  return Tensor(t.storage(), std::move(shape), std::move(strides),
                t.storage_offset() / tr.block_size * tr.block_bytes, DType::U8);
}

// Block-quantised data converts through f32 (DESIGN §1 rule 4): any block
// type dequantises; quantising needs the type's quantiser and rows of whole
// blocks. `t` is the tensor being converted (for its name and shape).
//
// Complex to a real type would drop the imaginary part without a word
// (NumPy warns, the array API leaves it undefined): refused, the caller
// says which part it means (real, imag, abs). Complex to bool is the
// nonzero test, as the array API's astype.
void check_castable(const Tensor& t, DType to, const char* op) {
  const DType from = t.dtype();
  TESSEL_CHECK(!is_complex(from) || is_complex(to) || to == DType::Bool,
               BadDType, op,
               "{} -> {} would drop the imaginary part; take real(), imag() "
               "or abs() first",
               dtype_name(from), dtype_name(to));
  if (from == to || !is_block_quantized(to)) return;
  const auto& tr = dtype_traits(to);
  TESSEL_CHECK(quant::block_codec(to)->quantize != nullptr, BadDType, op,
               "{} -> {}: ggml quantises {} only with an importance matrix, "
               "which tessel does not take; it can read {} tensors but not "
               "write them (docs/quantisation.md)",
               dtype_name(from), tr.name, tr.name, tr.name);
  const std::int64_t row = t.rank() == 0 ? 1 : t.shape().back();
  TESSEL_CHECK(row % tr.block_size == 0, BadShape, op,
               "{}{}{}: rows of {} elements are not whole {}-element {} "
               "blocks",
               t.name().empty() ? "" : "'", t.name(),
               t.name().empty() ? "tensor" : "'", row, tr.block_size, tr.name);
}

// Contiguous f32 of src's values (dequantised when src is block-quantised).
Tensor as_f32(const Tensor& src, CastOptions options) {
  if (!is_block_quantized(src.dtype()))
    return src.to(DType::F32, options).contiguous();
  Tensor out = empty(src.shape(), DType::F32, src.device());
  if (out.numel() > 0) ops::backend_of(out).dequantize_blocks(out, src);
  return out;
}

// dst and src have the same shape; src's dtype passed check_castable for
// dst's.
void copy_same_shape(const Tensor& dst, const Tensor& src,
                     CastOptions options) {
  const Backend& backend = ops::backend_of(dst);
  if (is_block_quantized(dst.dtype())) {
    if (src.dtype() == dst.dtype()) {
      backend.copy_cast(block_bytes_view(dst), block_bytes_view(src), false);
    } else if (dst.is_contiguous()) {
      backend.quantize_blocks(dst, as_f32(src, options),
                              options.runtime_quantizer);
    } else {
      // A view of whole blocks: quantise contiguously, then copy the blocks.
      Tensor blocks = empty(dst.shape(), dst.dtype(), dst.device());
      backend.quantize_blocks(blocks, as_f32(src, options),
                              options.runtime_quantizer);
      backend.copy_cast(block_bytes_view(dst), block_bytes_view(blocks), false);
    }
  } else if (is_block_quantized(src.dtype())) {
    if (dst.dtype() == DType::F32 && dst.is_contiguous()) {
      backend.dequantize_blocks(dst, src);  // straight into place
    } else {
      copy_same_shape(dst, as_f32(src, options), options);
    }
  } else if (is_packed(dst.dtype())) {
    const Tensor bytes =
        is_packed(src.dtype()) && src.dtype() == dst.dtype()
            ? unpack(src)
            : src.to(unpacked_dtype(dst.dtype()), options).contiguous();
    backend.pack_nibbles(dst, bytes);
  } else if (is_packed(src.dtype())) {
    backend.copy_cast(dst, unpack(src), options.saturate);
  } else {
    backend.copy_cast(dst, src, options.saturate);
  }
}

}  // namespace

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  return clone();
}

bool Tensor::is_aligned(std::size_t alignment) const {
  TESSEL_CHECK(alignment >= 1 && std::has_single_bit(alignment), BadShape,
               "is_aligned", "alignment {} is not a power of two", alignment);
  const ops::CheckedOperands checked("is_aligned", *this);
  if (!ops::backend_of(*this).has_data()) return true;
  return reinterpret_cast<std::uintptr_t>(raw_data()) % alignment == 0;
}

Tensor Tensor::aligned(std::size_t alignment) const {
  if (is_aligned(alignment)) return *this;
  Tensor out = Tensor::contiguous_over(
      Storage::allocate(storage_bytes(dtype(), numel()), device(), alignment),
      shape(), dtype());
  if (numel() > 0) copy_same_shape(out, *this, {});
  out.set_name(name());
  return out;
}

Tensor Tensor::clone() const {
  const ops::CheckedOperands checked("clone", *this);
  Tensor out = empty(shape(), dtype(), device());
  if (numel() > 0) copy_same_shape(out, *this, {});
  out.set_name(name());
  return out;
}

Tensor Tensor::to(DType target, CastOptions options) const {
  if (target == dtype()) return *this;
  const ops::CheckedOperands checked("to", *this);
  check_castable(*this, target, "to");
  Tensor out = empty(shape(), target, device());
  if (numel() > 0) copy_same_shape(out, *this, options);
  return out;
}

Tensor Tensor::to(Device target) const {
  if (target == device()) return *this;
  require_device(target, "to");
  const ops::CheckedOperands checked("to", *this);
  // To meta: the same shape and dtype, no data (as PyTorch's .to("meta")).
  if (target.is_meta()) {
    Tensor out = empty(shape(), dtype(), target);
    out.set_name(name());
    return out;
  }
  TESSEL_CHECK(!device().is_meta(), DeviceMismatch, "to",
               "a tensor on meta has no data to copy to {}", target.str());
  // A transfer between data-holding devices comes with the CUDA backend.
  detail::fail(ErrorCode::DeviceMismatch, "to", "no transfer from {} to {}",
               device().str(), target.str());
}

Tensor& Tensor::fill_(Scalar value) {
  check_writable("fill_");
  const ops::CheckedOperands checked("fill_", *this);
  TESSEL_CHECK(
      !value.is_complex() || is_complex(dtype()) || dtype() == DType::Bool,
      BadDType, "fill_",
      "a complex value in a {} tensor would drop its imaginary part",
      dtype_name(dtype()));
  // Block types: the quantised form of a tensor full of `value`.
  if (is_block_quantized(dtype())) {
    return copy_(full(shape(), value, DType::F32, device()));
  }
  if (numel() == 0) return *this;
  if (is_packed(dtype())) {
    const Tensor bytes =
        full(shape(), value, unpacked_dtype(dtype()), device());
    ops::backend_of(*this).pack_nibbles(*this, bytes);
    return *this;
  }
  ops::backend_of(*this).fill(*this, value);
  return *this;
}

Tensor& Tensor::copy_(const Tensor& src, CastOptions options) {
  check_writable("copy_");
  TESSEL_CHECK(src.device() == device(), DeviceMismatch, "copy_",
               "source on {} but destination on {}", src.device().str(),
               device().str());
  check_castable(src, dtype(), "copy_");
  const ops::CheckedOperands checked("copy_", *this);
  Tensor source = src.expand(shape());
  // Overlapping memory: read everything before writing anything.
  if (source.shares_storage_with(*this)) source = source.clone();
  if (numel() > 0) copy_same_shape(*this, source, options);
  return *this;
}

}  // namespace tessel
