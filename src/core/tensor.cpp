// Tensor metadata, views and element access. Anything that moves element
// data (contiguous, clone, to, fill_, copy_) lives in src/ops/copy.cpp.
#include "tessel/core/tensor.hpp"

#include <algorithm>
#include <numeric>
#include <optional>

#include "core/check.hpp"
#include "core/dispatch.hpp"
#include "core/operand_scope.hpp"
#include "core/shape_rules.hpp"

namespace tessel {

namespace {

// Byte position of the element at element offset `e` (for packed dtypes the
// byte holding it; for block dtypes, e must start a block).
std::int64_t byte_offset_of(DType dtype, std::int64_t e) {
  const auto& t = dtype_traits(dtype);
  if (t.kind == DTypeKind::Quantized) return e / t.block_size * t.block_bytes;
  if (t.bits == 4) return e / 2;
  return e * (t.bits / 8);
}

// Block-quantised tensors address whole blocks: the innermost axis must be
// unit-stride and a whole number of blocks, and every other stride and the
// offset must land on block starts.
void check_block_layout(DType dtype, const Shape& shape, const Strides& strides,
                        std::int64_t offset, const char* op) {
  const auto& t = dtype_traits(dtype);
  if (t.kind != DTypeKind::Quantized) return;
  const auto rank = shape.size();
  bool ok = rank > 0 && offset % t.block_size == 0 &&
            shape[rank - 1] % t.block_size == 0 &&
            (strides[rank - 1] == 1 || shape[rank - 1] <= 1);
  for (std::size_t i = 0; ok && i + 1 < rank; ++i) {
    ok = shape[i] <= 1 || strides[i] % t.block_size == 0;
  }
  TESSEL_CHECK(ok, NotContiguous, op,
               "{} tensors need whole {}-element blocks along a unit-stride "
               "innermost axis; shape {} strides {} offset {} does not",
               t.name, t.block_size, shape_string(shape), shape_string(strides),
               offset);
}

// Strides for viewing (shape, strides) as `target` without copying, or
// nothing when the memory layout does not allow it (PyTorch's algorithm:
// each run of mutually contiguous old axes must be split exactly).
std::optional<Strides> view_strides(const Shape& shape, const Strides& strides,
                                    const Shape& target, std::int64_t numel) {
  if (numel == 0 || is_contiguous(shape, strides)) {
    return contiguous_strides(target);
  }
  Strides out(target.size(), 0);
  auto view_d = static_cast<std::int64_t>(target.size()) - 1;
  std::int64_t chunk_stride = strides.back();
  std::int64_t tensor_numel = 1;
  std::int64_t view_numel = 1;
  for (auto d = static_cast<std::int64_t>(shape.size()) - 1; d >= 0; --d) {
    tensor_numel *= shape[d];
    const bool chunk_ends =
        d == 0 ||
        (shape[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || target[view_d] == 1)) {
      out[view_d] = view_numel * chunk_stride;
      view_numel *= target[view_d];
      --view_d;
    }
    if (view_numel != tensor_numel) return std::nullopt;
    if (d > 0) {
      chunk_stride = strides[d - 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

// Replaces a single -1 extent by the one that keeps the element count.
Shape infer_shape(Shape target, const Shape& from, const char* op) {
  Shape shape = rules::reshape<Shape>(std::move(target), from, op);
  checked_numel(shape);  // rank limit, and overflow hidden behind a 0 extent
  return shape;
}

}  // namespace

Tensor::Tensor(Storage storage, Shape shape, Strides strides,
               std::int64_t offset, DType dtype) {
  constexpr const char* op = "tensor";
  TESSEL_CHECK(storage.defined(), BadShape, op, "undefined storage");
  if (strides.empty() && !shape.empty()) strides = contiguous_strides(shape);
  TESSEL_CHECK(strides.size() == shape.size(), BadShape, op,
               "shape {} has rank {} but strides {} have {} entries",
               shape_string(shape), shape.size(), shape_string(strides),
               strides.size());
  const std::int64_t numel = checked_numel(shape);
  TESSEL_CHECK(offset >= 0, BadShape, op, "negative offset {}", offset);
  std::int64_t last = offset;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    TESSEL_CHECK(strides[i] >= 0, BadShape, op,
                 "negative stride {} (use flip, which copies)", strides[i]);
    if (shape[i] > 0) {
      last = checked_add(last, checked_mul(shape[i] - 1, strides[i], op), op);
    }
  }
  check_block_layout(dtype, shape, strides, offset, op);
  if (numel > 0) {
    const std::int64_t end = bytes_through_element(dtype, last);
    TESSEL_CHECK(end <= storage.nbytes(), OutOfRange, op,
                 "shape {} strides {} offset {} of {} address byte {} but the "
                 "storage holds {} bytes",
                 shape_string(shape), shape_string(strides), offset,
                 dtype_name(dtype), end, storage.nbytes());
  }
  impl_ = std::make_shared<Impl>();
  impl_->storage = std::move(storage);
  impl_->contiguous = ::tessel::is_contiguous(shape, strides);
  impl_->shape = std::move(shape);
  impl_->strides = std::move(strides);
  impl_->offset = offset;
  impl_->dtype = dtype;
  impl_->numel = numel;
}

void Tensor::throw_undefined(const char* op) {
  detail::fail(ErrorCode::BadShape, op,
               "the tensor is undefined (default-constructed)");
}

Tensor Tensor::contiguous_over(Storage storage, Shape shape, DType dtype) {
  constexpr const char* op = "tensor";
  TESSEL_CHECK(storage.defined(), BadShape, op, "undefined storage");
  const std::int64_t numel = checked_numel(shape);
  const std::int64_t bytes = storage_bytes(dtype, numel);
  TESSEL_CHECK(bytes <= storage.nbytes(), OutOfRange, op,
               "shape {} of {} needs {} bytes but the storage holds {}",
               shape_string(shape), dtype_name(dtype), bytes, storage.nbytes());
  if (is_block_quantized(dtype)) {
    // Whole blocks along the last axis: the general constructor's rule.
    return Tensor(std::move(storage), std::move(shape), Strides{}, 0, dtype);
  }
  auto impl = std::make_shared<Impl>();
  impl->storage = std::move(storage);
  impl->strides = contiguous_strides(shape);
  impl->shape = std::move(shape);
  impl->dtype = dtype;
  impl->numel = numel;
  impl->contiguous = true;
  return Tensor(std::move(impl));
}

void Tensor::release_pages(std::int64_t offset, std::int64_t nbytes) const {
  const std::int64_t start = static_cast<const std::uint8_t*>(raw_data()) -
                             static_cast<const std::uint8_t*>(storage().data());
  storage().release_pages(start + offset, nbytes);
}
std::int64_t Tensor::nbytes() const { return storage_bytes(dtype(), numel()); }
std::int64_t Tensor::size(std::int64_t dim) const {
  return shape()[normalize_axis(dim, rank(), "size")];
}
std::int64_t Tensor::stride(std::int64_t dim) const {
  return strides()[normalize_axis(dim, rank(), "stride")];
}
Tensor& Tensor::set_name(std::string name) {
  impl("set_name");
  impl_->name = std::move(name);
  return *this;
}

void Tensor::check_element_type(DType requested, const char* op) const {
  TESSEL_CHECK(requested == dtype(), BadDType, op,
               "element type {} requested from a {} tensor",
               dtype_name(requested), dtype_name(dtype()));
}

void Tensor::check_writable(const char* op) const {
  TESSEL_CHECK(storage().writable(), IoFailure, op,
               "the tensor's memory is read-only ({}); clone() it, or map "
               "the file copy-on-write",
               origin_name(storage().origin()));
}

const void* Tensor::raw_data() const {
  const auto& i = impl("raw_data");
  TESSEL_CHECK(!i.storage.device().is_meta(), DeviceMismatch, "raw_data",
               "a tensor on meta has no data to read or write");
  return static_cast<const char*>(i.storage.data()) +
         byte_offset_of(i.dtype, i.offset);
}

void* Tensor::mutable_raw_data() {
  check_writable("data");
  return const_cast<void*>(raw_data());
}

std::int64_t Tensor::element_offset(std::span<const std::int64_t> index,
                                    const char* op) const {
  const auto& i = impl(op);
  TESSEL_CHECK(i.storage.device().is_cpu(), DeviceMismatch, op,
               "elements of a tensor on {} are not addressable from the host",
               i.storage.device().str());
  TESSEL_CHECK(index.size() == i.shape.size(), BadShape, op,
               "{} indices given for a tensor of shape {}", index.size(),
               shape_string(i.shape));
  std::int64_t e = i.offset;
  for (std::size_t d = 0; d < index.size(); ++d) {
    std::int64_t k = index[d];
    const std::int64_t extent = i.shape[d];
    TESSEL_CHECK(k >= -extent && k < extent, OutOfRange, op,
                 "index {} is out of range for axis {} of extent {} (shape {})",
                 k, d, extent, shape_string(i.shape));
    if (k < 0) k += extent;
    e += k * i.strides[d];
  }
  return e;
}

const void* Tensor::flat_address(std::int64_t i, const char* op) const {
  const std::int64_t n = numel();
  TESSEL_CHECK(i >= -n && i < n, OutOfRange, op,
               "flat index {} is out of range for {} elements (shape {})", i, n,
               shape_string(shape()));
  if (i < 0) i += n;
  // Unravel over the shape, last axis fastest.
  const Shape& s = shape();
  Shape index(s.size(), 0);
  for (auto d = static_cast<std::int64_t>(s.size()) - 1; d >= 0; --d) {
    const std::int64_t extent = s[static_cast<std::size_t>(d)];
    index[static_cast<std::size_t>(d)] = i % extent;
    i /= extent;
  }
  return element_address(
      std::span<const std::int64_t>(index.data(), index.size()), op);
}

const void* Tensor::element_address(std::span<const std::int64_t> index,
                                    const char* op) const {
  return static_cast<const char*>(storage().data()) +
         byte_offset_of(dtype(), element_offset(index, op));
}

// Packed i4/u4 elements: element e is the low nibble of byte e/2 when e is
// even, the high nibble when odd; i4 is sign-extended.
Scalar Tensor::get(std::span<const std::int64_t> idx) const {
  const std::int64_t e = element_offset(idx, "get");
  const char* address =
      static_cast<const char*>(storage().data()) + byte_offset_of(dtype(), e);
  if (is_packed(dtype())) {
    const auto byte = static_cast<std::uint8_t>(*address);
    const int nibble = e % 2 == 0 ? byte & 0x0f : byte >> 4;
    if (dtype() == DType::U4) return Scalar(static_cast<std::uint8_t>(nibble));
    return Scalar(static_cast<std::int8_t>(nibble >= 8 ? nibble - 16 : nibble));
  }
  return detail::dispatch_any_element_type(dtype(), "get", [&]<class T>() {
    return Scalar(*reinterpret_cast<const T*>(address));
  });
}

void Tensor::set(std::span<const std::int64_t> idx, Scalar value) {
  check_writable("set");
  TESSEL_CHECK(
      !value.is_complex() || is_complex(dtype()) || dtype() == DType::Bool,
      BadDType, "set",
      "a complex value in a {} tensor would drop its imaginary part",
      dtype_name(dtype()));
  const std::int64_t e = element_offset(idx, "set");
  char* address =
      static_cast<char*>(storage().data()) + byte_offset_of(dtype(), e);
  if (is_packed(dtype())) {
    auto& byte = *reinterpret_cast<std::uint8_t*>(address);
    const auto nibble =
        static_cast<std::uint8_t>(value.to<std::int8_t>() & 0x0f);
    byte = e % 2 == 0
               ? static_cast<std::uint8_t>((byte & 0xf0) | nibble)
               : static_cast<std::uint8_t>((byte & 0x0f) | (nibble << 4));
    return;
  }
  detail::dispatch_any_element_type(dtype(), "set", [&]<class T>() {
    *reinterpret_cast<T*>(address) = value.to<T>();
  });
}

Scalar Tensor::item_scalar() const {
  TESSEL_CHECK(numel() == 1, BadShape, "item",
               "a tensor of shape {} ({} elements) is not a single value",
               shape_string(shape()), numel());
  const Shape origin(static_cast<std::size_t>(rank()), 0);
  return get(origin);
}

// ---- views -----------------------------------------------------------------

Tensor Tensor::make_view(Shape shape, Strides strides, std::int64_t offset,
                         const char* op) const {
  const auto& i = impl(op);
  check_block_layout(i.dtype, shape, strides, offset, op);
  auto v = std::make_shared<Impl>();
  v->storage = i.storage;
  v->numel = checked_numel(shape);
  v->contiguous = ::tessel::is_contiguous(shape, strides);
  v->shape = std::move(shape);
  v->strides = std::move(strides);
  v->offset = offset;
  v->dtype = i.dtype;
  return Tensor(std::move(v));
}

Tensor Tensor::view(Shape target) const {
  const auto& i = impl("view");
  const detail::OperandScope operands({this});
  target = infer_shape(std::move(target), i.shape, "view");
  auto strides = view_strides(i.shape, i.strides, target, i.numel);
  TESSEL_CHECK(strides.has_value(), NotContiguous, "view",
               "a tensor of shape {} with strides {} cannot be viewed as {} "
               "without copying; use reshape",
               shape_string(i.shape), shape_string(i.strides),
               shape_string(target));
  return make_view(std::move(target), std::move(*strides), i.offset, "view");
}

Tensor Tensor::reshape(Shape target) const {
  const auto& i = impl("reshape");
  const detail::OperandScope operands({this});
  target = infer_shape(std::move(target), i.shape, "reshape");
  if (auto strides = view_strides(i.shape, i.strides, target, i.numel)) {
    return make_view(std::move(target), std::move(*strides), i.offset,
                     "reshape");
  }
  return contiguous().view(std::move(target));
}

Tensor Tensor::permute(std::span<const std::int64_t> dims) const {
  const auto& i = impl("permute");
  const detail::OperandScope operands({this});
  const auto axes = rules::permutation(
      dims, static_cast<std::int64_t>(i.shape.size()), "permute");
  Shape shape(dims.size());
  Strides strides(dims.size());
  for (std::size_t k = 0; k < axes.size(); ++k) {
    shape[k] = i.shape[static_cast<std::size_t>(axes[k])];
    strides[k] = i.strides[static_cast<std::size_t>(axes[k])];
  }
  return make_view(std::move(shape), std::move(strides), i.offset, "permute");
}

Tensor Tensor::transpose(std::int64_t dim0, std::int64_t dim1) const {
  const auto& i = impl("transpose");
  const detail::OperandScope operands({this});
  const auto rank = static_cast<std::int64_t>(i.shape.size());
  const auto a = normalize_axis(dim0, rank, "transpose");
  const auto b = normalize_axis(dim1, rank, "transpose");
  Shape shape = i.shape;
  Strides strides = i.strides;
  std::swap(shape[a], shape[b]);
  std::swap(strides[a], strides[b]);
  return make_view(std::move(shape), std::move(strides), i.offset, "transpose");
}

Tensor Tensor::transpose() const {
  const auto axes = rules::reversed_axes(rank());
  return permute(std::span<const std::int64_t>(axes.data(), axes.size()));
}

Tensor Tensor::slice(std::int64_t dim, std::int64_t start, std::int64_t stop,
                     std::int64_t step) const {
  const auto& i = impl("slice");
  const detail::OperandScope operands({this});
  const auto d =
      normalize_axis(dim, static_cast<std::int64_t>(i.shape.size()), "slice");
  Shape shape = i.shape;
  Strides strides = i.strides;
  const rules::SlicedAxis axis =
      rules::sliced_axis(i.shape[d], start, stop, step, "slice");
  shape[d] = axis.extent;
  strides[d] = checked_mul(i.strides[d], step, "slice");
  const std::int64_t offset =
      i.offset + (axis.extent > 0 ? axis.lo * i.strides[d] : 0);
  return make_view(std::move(shape), std::move(strides), offset, "slice");
}

Tensor Tensor::select(std::int64_t dim, std::int64_t index) const {
  const auto& i = impl("select");
  const detail::OperandScope operands({this});
  const std::size_t d = rules::selected_axis(i.shape, dim, index, "select");
  if (index < 0) index += i.shape[d];
  const std::int64_t offset = i.offset + index * i.strides[d];
  return make_view(rules::without_axis(i.shape, d),
                   rules::without_axis(i.strides, d), offset, "select");
}

Tensor Tensor::expand(Shape target) const {
  const auto& i = impl("expand");
  const detail::OperandScope operands({this});
  TESSEL_CHECK(target.size() >= i.shape.size(), BadShape, "expand",
               "cannot expand {} to the lower rank {}", shape_string(i.shape),
               shape_string(target));
  const std::size_t lead = target.size() - i.shape.size();
  Strides strides(target.size(), 0);
  for (std::size_t k = 0; k < target.size(); ++k) {
    if (k < lead) {
      TESSEL_CHECK(target[k] >= 0, BadShape, "expand",
                   "new leading axis {} needs an explicit extent in {}", k,
                   shape_string(target));
      continue;
    }
    const std::int64_t have = i.shape[k - lead];
    if (target[k] == -1) target[k] = have;
    if (target[k] == have) {
      strides[k] = i.strides[k - lead];
    } else {
      TESSEL_CHECK(have == 1 && target[k] >= 0, BroadcastMismatch, "expand",
                   "shape {} cannot be broadcast to {}: axis {} has extent {}",
                   shape_string(i.shape), shape_string(target), k, have);
    }
  }
  return make_view(std::move(target), std::move(strides), i.offset, "expand");
}

Tensor Tensor::squeeze() const {
  const auto& i = impl("squeeze");
  Shape shape;
  Strides strides;
  for (std::size_t k = 0; k < i.shape.size(); ++k) {
    if (i.shape[k] == 1) continue;
    shape.push_back(i.shape[k]);
    strides.push_back(i.strides[k]);
  }
  return make_view(std::move(shape), std::move(strides), i.offset, "squeeze");
}

Tensor Tensor::squeeze(std::int64_t dim) const {
  const auto& i = impl("squeeze");
  const detail::OperandScope operands({this});
  const std::size_t d = rules::squeezed_axis(i.shape, dim, "squeeze");
  Shape shape = i.shape;
  Strides strides = i.strides;
  shape.erase(d);
  strides.erase(d);
  return make_view(std::move(shape), std::move(strides), i.offset, "squeeze");
}

Tensor Tensor::squeeze(std::span<const std::int64_t> dims) const {
  const auto& i = impl("squeeze");
  const detail::OperandScope operands({this});
  Shape shape = i.shape;
  Strides strides = i.strides;
  for (const std::size_t d : rules::squeezed_axes(i.shape, dims, "squeeze")) {
    shape.erase(d);
    strides.erase(d);
  }
  return make_view(std::move(shape), std::move(strides), i.offset, "squeeze");
}

Tensor Tensor::unsqueeze(std::int64_t dim) const {
  const auto& i = impl("unsqueeze");
  const detail::OperandScope operands({this});
  const auto rank = static_cast<std::int64_t>(i.shape.size());
  const auto d = normalize_axis(dim, rank + 1, "unsqueeze");
  Shape shape = i.shape;
  Strides strides = i.strides;
  const std::int64_t stride = d < rank ? i.strides[d] * i.shape[d] : 1;
  shape.insert(static_cast<std::size_t>(d), 1);
  strides.insert(static_cast<std::size_t>(d), stride);
  return make_view(std::move(shape), std::move(strides), i.offset, "unsqueeze");
}

Tensor Tensor::flatten(std::int64_t start_dim, std::int64_t end_dim) const {
  const auto& i = impl("flatten");
  const detail::OperandScope operands({this});
  return reshape(rules::flatten(i.shape, start_dim, end_dim, "flatten"));
}

}  // namespace tessel
