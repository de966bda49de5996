#include "cli/merged_tensor_source.hpp"

#include <algorithm>
#include <cstring>

namespace tessel::cli {

MergedTensorSource::MergedTensorSource(const merge::MergePlan& plan,
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

const Tensor& MergedTensorSource::merged(std::size_t i) {
  if (cached_index_ == i) return cached_;
  cached_ = Tensor();
  cached_index_ = static_cast<std::size_t>(-1);
  if (pending_.valid()) {
    if (pending_index_ == i) {
      cached_ = pending_.get();
    } else {
      // Merged ahead for nothing (the writer asked for another tensor);
      // its error, if any, comes again when that tensor is asked for.
      try {
        pending_.get();
      } catch (const Error&) {
      }
    }
  }
  if (!cached_.defined()) cached_ = compute(i, buffers_[i % 2]);
  cached_index_ = i;
  // Writers ask for the tensors in order: the next one is merged (into the
  // other set of buffers) while this one is being written, so the cores
  // are not idle while the file is.
  if (i + 1 < outputs_.size()) {
    pending_index_ = i + 1;
    pending_ = std::async(std::launch::async, [this, i] {
      return compute(i + 1, buffers_[(i + 1) % 2]);
    });
  }
  return cached_;
}

Tensor MergedTensorSource::compute(std::size_t i, Buffers& buffers) {
  const MergeOutputTensor& o = outputs_[i];
  if (o.constant.defined()) return o.constant.to(o.dtype).contiguous();
  const merge::PlannedTensor& p = plan_.tensors[o.planned];
  std::vector<Tensor> read;
  while (buffers.inputs.size() < p.inputs.size()) {
    buffers.inputs.push_back(empty(Shape{largest_}, DType::F32));
  }
  if (!buffers.output.defined()) {
    buffers.output = empty(Shape{largest_}, DType::F32);
  }
  for (const merge::PlannedInput& in : p.inputs) {
    const MergeInput& model = inputs_[in.model];
    read.push_back(
        model.read(in.tensor, round_to_, buffers.inputs[read.size()]));
    bytes_read_ +=
        TensorSpec{in.tensor, model.stored_dtype(in.tensor), p.shape}.nbytes();
  }
  Tensor out =
      merge::merge_tensor(plan_.method, p, read, seed_, buffers.output);
  read.clear();  // dequantised copies go before the cast allocates
  for (const merge::PlannedInput& in : p.inputs) {
    inputs_[in.model].release(in.tensor);
  }
  if (o.interleave_heads > 0) {
    out = interleave_rope_rows(out, o.interleave_heads);
  }
  if (is_block_quantized(o.dtype)) return out.to(o.dtype).contiguous();
  // Cast into pages reused for every other tensor (a fresh result would
  // fault in and zero new ones each time).
  Tensor& typed = buffers.typed[o.dtype];
  if (!typed.defined()) typed = empty(Shape{largest_}, o.dtype);
  return typed.slice(0, 0, out.numel()).reshape(out.shape()).copy_(out);
}

const std::uint8_t* MergedTensorSource::bytes(std::size_t i) {
  return static_cast<const std::uint8_t*>(merged(i).raw_data());
}

void MergedTensorSource::read(std::size_t i, std::int64_t offset,
                              std::span<std::uint8_t> out) {
  std::memcpy(out.data(), bytes(i) + offset, out.size());
}

void MergedTensorSource::written(std::size_t i, std::int64_t end) {
  if (end < specs_[i].nbytes()) return;
  if (cached_index_ == i) {
    cached_ = Tensor();
    cached_index_ = static_cast<std::size_t>(-1);
  }
  ++done_tensors_;
  if (progress_) {
    progress_->update(done_tensors_, double(bytes_read_) / 1e6, specs_[i].name);
  }
}

}  // namespace tessel::cli
