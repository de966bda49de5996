#include "merge/merged_tensor_source.hpp"

#include <algorithm>
#include <cstring>

namespace tessel::merge {

MergedTensorSource::MergedTensorSource(const MergePlan& plan,
                                       const std::vector<MergeInput>& inputs,
                                       std::vector<MergeOutputTensor> outputs,
                                       std::optional<DType> round_inputs_to,
                                       std::uint64_t seed)
    : plan_(plan),
      inputs_(inputs),
      outputs_(std::move(outputs)),
      round_to_(round_inputs_to),
      seed_(seed) {
  for (const MergeOutputTensor& o : outputs_) {
    specs_.push_back({o.name, o.dtype,
                      o.constant.defined()
                          ? o.constant.shape()
                          : plan_.tensors.at(o.planned).shape});
    if (!o.constant.defined()) {
      largest_ = std::max(largest_, specs_.back().numel());
    }
  }
}

std::int64_t MergedTensorSource::total_bytes() const {
  std::int64_t n = 0;
  for (const TensorSpec& s : specs_) n += s.nbytes();
  return n;
}

bool MergedTensorSource::streamed(std::size_t i) const {
  const MergeOutputTensor& o = outputs_[i];
  return !o.constant.defined() && o.interleave_heads == 0 &&
         (o.dtype == DType::F32 || o.dtype == DType::F16 ||
          o.dtype == DType::BF16);
}

std::vector<Tensor> MergedTensorSource::read_inputs(const PlannedTensor& p) {
  std::vector<Tensor> read;
  while (input_buffers_.size() < p.inputs.size()) {
    // Pages are touched only when a quantised input is dequantised.
    input_buffers_.push_back(empty(Shape{largest_}, DType::F32));
  }
  for (const PlannedInput& in : p.inputs) {
    const MergeInput& model = inputs_[in.model];
    read.push_back(
        model.read(in.tensor, round_to_, input_buffers_[read.size()]));
    bytes_read_ +=
        TensorSpec{in.tensor, model.stored_dtype(in.tensor), p.shape}.nbytes();
  }
  return read;
}

void MergedTensorSource::release_inputs(const PlannedTensor& p) {
  for (const PlannedInput& in : p.inputs) {
    inputs_[in.model].release(in.tensor);
  }
}

const PreparedMerge& MergedTensorSource::prepared(std::size_t i) {
  if (prepared_index_ != i) {
    prepared_.reset();
    prepared_index_ = static_cast<std::size_t>(-1);
    const PlannedTensor& p = plan_.tensors[outputs_[i].planned];
    prepared_inputs_ = read_inputs(p);
    prepared_ = prepare_merge(plan_.method, p, prepared_inputs_, seed_);
    prepared_index_ = i;
  }
  return *prepared_;
}

const Tensor& MergedTensorSource::whole(std::size_t i) {
  if (cached_index_ == i) return cached_;
  cached_ = Tensor();
  cached_index_ = static_cast<std::size_t>(-1);
  const MergeOutputTensor& o = outputs_[i];
  if (o.constant.defined()) {
    cached_ = o.constant.to(o.dtype).contiguous();
  } else {
    const PlannedTensor& p = plan_.tensors[o.planned];
    if (!output_buffer_.defined()) {
      output_buffer_ = empty(Shape{largest_}, DType::F32);
    }
    Tensor out =
        merge_tensor(plan_.method, p, read_inputs(p), seed_, output_buffer_);
    release_inputs(p);
    if (o.interleave_heads > 0) {
      out = interleave_rope_rows(out, o.interleave_heads);
    }
    cached_ = out.to(o.dtype).contiguous();
  }
  cached_index_ = i;
  return cached_;
}

const std::uint8_t* MergedTensorSource::bytes(std::size_t i) {
  if (streamed(i)) return nullptr;
  return static_cast<const std::uint8_t*>(whole(i).raw_data());
}

void MergedTensorSource::read(std::size_t i, std::int64_t offset,
                              std::span<std::uint8_t> out) {
  if (!streamed(i)) {
    std::memcpy(out.data(), whole(i).const_data<std::uint8_t>() + offset,
                out.size());
    return;
  }
  const std::int64_t element = element_size(outputs_[i].dtype);
  prepared(i).produce(offset / element,
                      static_cast<std::int64_t>(out.size()) / element,
                      outputs_[i].dtype, out.data());
}

void MergedTensorSource::written(std::size_t i, std::int64_t end) {
  if (end < specs_[i].nbytes()) return;
  if (prepared_index_ == i) {
    prepared_.reset();
    prepared_inputs_.clear();
    prepared_index_ = static_cast<std::size_t>(-1);
    release_inputs(plan_.tensors[outputs_[i].planned]);
  }
  if (cached_index_ == i) {
    cached_ = Tensor();
    cached_index_ = static_cast<std::size_t>(-1);
  }
  ++done_tensors_;
  if (progress_) progress_(done_tensors_, bytes_read_, specs_[i].name);
}

}  // namespace tessel::merge
