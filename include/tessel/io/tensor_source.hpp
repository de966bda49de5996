// What the file writers consume: a list of tensors described by name,
// dtype and shape before any of their data exists, and a way to produce
// each one's bytes only when the writer reaches it. A conversion can then
// lay out the whole output file first and stream the data chunk by chunk,
// holding one chunk (not one model) in memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tessel/core/tensor.hpp"

namespace tessel {

struct TensorSpec {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;

  std::int64_t numel() const;
  // Row-major bytes of the data (blocks and packed nibbles included).
  std::int64_t nbytes() const;
};

class TensorSource {
 public:
  virtual ~TensorSource() = default;

  virtual std::size_t size() const = 0;
  virtual const TensorSpec& spec(std::size_t i) const = 0;

  // Tensor i's row-major bytes when they already lie in memory in full
  // (a writer then writes them without a copy); nullptr otherwise.
  virtual const std::uint8_t* bytes(std::size_t /*i*/) { return nullptr; }
  // Fills `out` with bytes [offset, offset + out.size()) of tensor i's
  // row-major data. Writers ask for ranges that start and end on whole
  // storage units (elements, or blocks of a block-quantised dtype).
  virtual void read(std::size_t i, std::int64_t offset,
                    std::span<std::uint8_t> out) = 0;
  // Told by the writer, after each chunk, that it has taken tensor i's
  // bytes up to `end` (into the file, or into its buffer for the next 2
  // MiB piece): for progress reports, and for sources that free what has
  // been consumed.
  virtual void written(std::size_t /*i*/, std::int64_t /*end*/) {}
};

// Tensors already in memory, under their names (the source holds its own
// handles). E2501 for a tensor not on the CPU.
class TensorListSource final : public TensorSource {
 public:
  explicit TensorListSource(std::vector<Tensor> tensors);

  std::size_t size() const override { return specs_.size(); }
  const TensorSpec& spec(std::size_t i) const override { return specs_[i]; }
  const std::uint8_t* bytes(std::size_t i) override;
  void read(std::size_t i, std::int64_t offset,
            std::span<std::uint8_t> out) override;

 private:
  const Tensor& contiguous(std::size_t i);

  std::vector<Tensor> tensors_;
  std::vector<TensorSpec> specs_;
  // The row-major copy of the last non-contiguous tensor asked for.
  std::size_t cached_index_ = static_cast<std::size_t>(-1);
  Tensor cached_;
};

// Tensors (typically zero-copy views of an input file) written as other
// dtypes: `dtypes[i]` is tensor i's output dtype, and each chunk a writer
// asks for is cast from the matching input elements when it is asked for,
// so converting a model holds one chunk of it in memory. A tensor whose
// dtype stays the same is passed through byte for byte. E2201 up front
// when a cast is impossible (block-quantised or packed input or output
// with a different dtype); E2102 when the counts differ.
class CastingSource final : public TensorSource {
 public:
  CastingSource(std::vector<Tensor> tensors, const std::vector<DType>& dtypes,
                CastOptions options = {});

  std::size_t size() const override { return specs_.size(); }
  const TensorSpec& spec(std::size_t i) const override { return specs_[i]; }
  const std::uint8_t* bytes(std::size_t i) override;
  void read(std::size_t i, std::int64_t offset,
            std::span<std::uint8_t> out) override;
  // Input a writer is done with leaves the resident set when it is a
  // read-only file mapping (Storage::release_pages), so converting a file
  // holds about one chunk of it, not all of it.
  void written(std::size_t i, std::int64_t end) override;

 private:
  // Tensor i row-major: itself, or a copy kept until another tensor is
  // asked for (a Fortran-order .npy), so one tensor's copy at most exists.
  const Tensor& contiguous(std::size_t i);

  std::vector<Tensor> tensors_;
  std::vector<TensorSpec> specs_;
  CastOptions options_;
  std::size_t cached_index_ = static_cast<std::size_t>(-1);
  Tensor cached_;
  // Input bytes of tensor released_index_ already released.
  std::size_t released_index_ = static_cast<std::size_t>(-1);
  std::int64_t released_bytes_ = 0;
};

// The bytes of one storage unit of `dtype`: a chunk of a tensor must be a
// multiple of it (1 for packed 4-bit integers, read two at a time).
std::int64_t storage_unit_bytes(DType dtype);

}  // namespace tessel
