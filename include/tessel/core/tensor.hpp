// Tensor (DESIGN §1, §7): a cheap handle to {storage, shape, strides, offset,
// dtype}. Copying a Tensor shares everything; views share the storage.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <span>
#include <string>

#include "tessel/core/convert.hpp"
#include "tessel/core/dtype.hpp"
#include "tessel/core/scalar.hpp"
#include "tessel/core/shape.hpp"
#include "tessel/core/storage.hpp"

namespace tessel {

struct CastOptions {
  // Clamp overflow to the largest finite value when casting to a narrow
  // float (ONNX Cast saturate=1) instead of Inf/NaN (ml_dtypes' default).
  bool saturate = false;
  // Quantise to a block type as ggml quantises tensors at run time (its
  // reference from_float, as llama.cpp fills its KV cache) instead of as
  // it quantises model files (ggml_quantize_chunk, the default). Only
  // IQ4_NL differs: the scale comes from the block's largest value, without
  // the search over 15 nearby scales, about 15 times faster and a slightly
  // looser fit (docs/quantisation.md).
  bool runtime_quantizer = false;
};

class Tensor {
 public:
  // An undefined tensor: only defined(), assignment and destruction work.
  Tensor() = default;

  // A tensor over existing storage. Strides and offset are in elements;
  // negative strides are refused (E2102); the addressed range must lie
  // inside the storage (E2302).
  Tensor(Storage storage, Shape shape, Strides strides, std::int64_t offset,
         DType dtype);

  bool defined() const { return impl_ != nullptr; }

  // ---- metadata -----------------------------------------------------------
  // Inline: an op reads these a dozen times per call, and out-of-line calls
  // were a tenth of a small op's time. An undefined tensor is E2102.
  const Shape& shape() const { return impl("shape").shape; }
  const Strides& strides() const { return impl("strides").strides; }
  // In elements.
  std::int64_t storage_offset() const { return impl("offset").offset; }
  DType dtype() const { return impl("dtype").dtype; }
  Device device() const { return impl("device").storage.device(); }
  std::int64_t rank() const {
    return static_cast<std::int64_t>(impl("rank").shape.size());
  }
  std::int64_t numel() const { return impl("numel").numel; }
  // Bytes of the elements the tensor addresses if it were contiguous.
  std::int64_t nbytes() const;
  bool is_contiguous() const { return impl("is_contiguous").contiguous; }
  std::int64_t size(std::int64_t dim) const;  // negative dims count back
  std::int64_t stride(std::int64_t dim) const;
  const Storage& storage() const { return impl("storage").storage; }
  bool shares_storage_with(const Tensor& other) const {
    return storage().is_same(other.storage());
  }
  const std::string& name() const { return impl("name").name; }
  Tensor& set_name(std::string name);

  // A row-major tensor at offset 0 over `storage`, which the caller has
  // just allocated for it (the factories): only the storage's size is
  // checked, not the strides a general view needs checked.
  static Tensor contiguous_over(Storage storage, Shape shape, DType dtype);

  // ---- data access --------------------------------------------------------
  // Typed pointer to the first element; T must be the dtype's element type
  // (E2201). The mutable form refuses read-only mappings (E3002).
  template <class T>
  T* data() {
    check_element_type(dtype_of_v<T>, "data");
    return static_cast<T*>(mutable_raw_data());
  }
  template <class T>
  const T* data() const {
    return const_data<T>();
  }
  template <class T>
  const T* const_data() const {
    check_element_type(dtype_of_v<T>, "data");
    return static_cast<const T*>(raw_data());
  }
  // Address of the first element (for packed i4/u4: of the byte holding it;
  // for block types: of its block).
  const void* raw_data() const;
  void* mutable_raw_data();
  // Bytes [offset, offset + nbytes) of the tensor's data, counted from
  // raw_data(), leave the resident set when its storage is a read-only file
  // mapping (Storage::release_pages): for streaming readers done with a
  // mapped tensor, or part of one. No effect on any other storage.
  void release_pages(std::int64_t offset, std::int64_t nbytes) const;

  // Checked element access: E2102 for the wrong number of indices, E2302
  // for an index out of range (negative indices count back from the end).
  template <class T>
  T& at(std::initializer_list<std::int64_t> index) {
    check_element_type(dtype_of_v<T>, "at");
    check_writable("at");
    return *const_cast<T*>(reinterpret_cast<const T*>(
        element_address({index.begin(), index.size()}, "at")));
  }
  template <class T>
  const T& at(std::initializer_list<std::int64_t> index) const {
    check_element_type(dtype_of_v<T>, "at");
    return *reinterpret_cast<const T*>(
        element_address({index.begin(), index.size()}, "at"));
  }
  // Checked flat access beside the raw data<T>(): element `i` of the
  // tensor in row-major order of its shape, whatever its strides (a view's
  // i-th element, NumPy's .flat), a negative i counting back from the end.
  // E2302 out of range, E2201 for the wrong T, E3002 writing a read-only
  // mapping.
  template <class T>
  T& flat(std::int64_t i) {
    check_element_type(dtype_of_v<T>, "flat");
    check_writable("flat");
    return *const_cast<T*>(reinterpret_cast<const T*>(flat_address(i, "flat")));
  }
  template <class T>
  const T& flat(std::int64_t i) const {
    check_element_type(dtype_of_v<T>, "flat");
    return *reinterpret_cast<const T*>(flat_address(i, "flat"));
  }
  // The one element of a one-element tensor (any rank), converted to T.
  template <class T>
  T item() const {
    return item_scalar().to<T>();
  }
  Scalar item_scalar() const;
  // Element at `index` as a Scalar; works for every non-block dtype,
  // including packed i4/u4.
  Scalar get(std::span<const std::int64_t> index) const;
  Scalar get(std::initializer_list<std::int64_t> index) const {
    return get(std::span<const std::int64_t>(index.begin(), index.size()));
  }
  void set(std::span<const std::int64_t> index, Scalar value);
  void set(std::initializer_list<std::int64_t> index, Scalar value) {
    set(std::span<const std::int64_t>(index.begin(), index.size()), value);
  }

  // ---- views (O(1), share storage) ---------------------------------------
  // A view when the strides allow it, else a contiguous copy. One extent
  // may be -1 (inferred).
  Tensor reshape(Shape shape) const;
  // Like reshape, but E2301 when a view is impossible.
  Tensor view(Shape shape) const;
  Tensor permute(std::span<const std::int64_t> dims) const;
  Tensor permute(std::initializer_list<std::int64_t> dims) const {
    return permute(std::span<const std::int64_t>(dims.begin(), dims.size()));
  }
  Tensor transpose(std::int64_t dim0, std::int64_t dim1) const;
  // Every axis reversed (NumPy's transpose without axes; the matrix
  // transpose for rank 2).
  Tensor transpose() const;
  // Python slicing of one axis: start/stop clamp like NumPy, negatives count
  // back, step must be positive (E2102).
  Tensor slice(std::int64_t dim, std::int64_t start, std::int64_t stop,
               std::int64_t step = 1) const;
  // Removes `dim` by picking one index (E2302 when out of range).
  Tensor select(std::int64_t dim, std::int64_t index) const;
  // Broadcasts to `shape` with stride 0 (NumPy rules; -1 keeps an extent).
  Tensor expand(Shape shape) const;
  // Without the size-1 axes listed (every size-1 axis when none are
  // given); E2102 for a listed axis whose extent is not 1, or listed twice.
  Tensor squeeze() const;
  Tensor squeeze(std::int64_t dim) const;
  Tensor squeeze(std::span<const std::int64_t> dims) const;
  Tensor squeeze(std::initializer_list<std::int64_t> dims) const {
    return squeeze(std::span<const std::int64_t>(dims.begin(), dims.size()));
  }
  Tensor unsqueeze(std::int64_t dim) const;
  Tensor flatten(std::int64_t start_dim = 0, std::int64_t end_dim = -1) const;

  // ---- copies (src/ops) ---------------------------------------------------
  // Itself when already contiguous, else a row-major copy.
  Tensor contiguous() const;
  // Whether the first element's address is a multiple of `alignment`
  // bytes (a power of two; E2102 otherwise). Meta tensors always are.
  bool is_aligned(std::size_t alignment) const;
  // Itself when is_aligned(alignment), else a contiguous copy in a buffer
  // aligned so (Storage::allocate's limits) — for a consumer that needs
  // more than the 64 bytes tessel always gives (device_alignment()).
  Tensor aligned(std::size_t alignment) const;
  // Always a new contiguous tensor with its own storage.
  Tensor clone() const;
  // Element-wise cast to `dtype` (docs/dtypes.md); itself if already it.
  Tensor to(DType dtype, CastOptions options = {}) const;
  // Deep copy to `device`; itself if already there. E2501 if unavailable.
  Tensor to(Device device) const;
  // Writes `value` into every element (through views too).
  Tensor& fill_(Scalar value);
  // Copies `src` into this tensor, broadcasting and casting it.
  Tensor& copy_(const Tensor& src, CastOptions options = {});

 private:
  // Validated element offset (in elements) of `index` into the storage.
  std::int64_t element_offset(std::span<const std::int64_t> index,
                              const char* op) const;
  // Its byte address (for packed dtypes the byte holding the element).
  const void* element_address(std::span<const std::int64_t> index,
                              const char* op) const;
  // The address of the element at flat (row-major) position `i`.
  const void* flat_address(std::int64_t i, const char* op) const;
  // In the header so that the accessors above inline; only tensor.cpp
  // creates or changes one.
  struct Impl {
    Storage storage;
    Shape shape;
    Strides strides;
    std::int64_t offset = 0;
    DType dtype = DType::F32;
    std::int64_t numel = 0;
    bool contiguous = true;
    std::string name;
  };
  explicit Tensor(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  const Impl& impl(const char* op) const {
    if (impl_ == nullptr) [[unlikely]]
      throw_undefined(op);
    return *impl_;
  }
  [[noreturn]] static void throw_undefined(const char* op);
  void check_element_type(DType requested, const char* op) const;
  void check_writable(const char* op) const;
  Tensor make_view(Shape shape, Strides strides, std::int64_t offset,
                   const char* op) const;

  std::shared_ptr<Impl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace tessel
