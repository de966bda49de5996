// Bucketed parameter broadcast and gradient all-reduce
// (tessel/dist/data_parallel.hpp). A bucket is a run of consecutive
// parameters of one dtype whose bytes fit; ranks agree on the buckets
// because they hold the same parameter list (checked at start by the
// caller's check_agreement on the model config).
#include "tessel/dist/data_parallel.hpp"

#include <chrono>
#include <functional>

#include "tessel/ops/factories.hpp"
#include "tessel/ops/indexing.hpp"

namespace tessel::dist {

namespace {

struct Bucket {
  std::size_t begin = 0, end = 0;  // parameter indices
  DType dtype = DType::F32;
};

std::vector<Bucket> buckets_of(const std::vector<Variable>& parameters,
                               std::size_t bucket_bytes) {
  std::vector<Bucket> out;
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const Tensor& v = parameters[i].value();
    const auto b = static_cast<std::size_t>(v.nbytes());
    if (out.empty() || out.back().dtype != v.dtype() ||
        (bytes + b > bucket_bytes && out.back().end > out.back().begin)) {
      out.push_back({i, i, v.dtype()});
      bytes = 0;
    }
    out.back().end = i + 1;
    bytes += b;
  }
  return out;
}

// Copies each tensor of the bucket into one flat buffer, runs `collective`
// on it and copies the result back through `store`.
void run_bucket(const std::vector<Tensor>& tensors,
                const std::function<void(const Tensor&)>& collective,
                const std::function<void(std::size_t, const Tensor&)>& store) {
  std::vector<Tensor> flat;
  flat.reserve(tensors.size());
  for (const Tensor& t : tensors) flat.push_back(t.reshape({-1}));
  const Tensor buffer = concat(flat, 0);
  collective(buffer);
  std::int64_t at = 0;
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    const std::int64_t n = tensors[k].numel();
    store(k, buffer.slice(0, at, at + n).reshape(tensors[k].shape()));
    at += n;
  }
}

}  // namespace

void broadcast_parameters(ProcessGroup& group,
                          const std::vector<Variable>& parameters,
                          std::size_t bucket_bytes) {
  if (group.world_size() == 1) return;
  for (const Bucket& b : buckets_of(parameters, bucket_bytes)) {
    std::vector<Tensor> values;
    for (std::size_t i = b.begin; i < b.end; ++i) {
      values.push_back(parameters[i].value());
    }
    run_bucket(
        values, [&](const Tensor& buffer) { group.broadcast(buffer, 0); },
        [&](std::size_t k, const Tensor& v) { Tensor(values[k]).copy_(v); });
  }
}

double all_reduce_gradients(ProcessGroup& group,
                            const std::vector<Variable>& parameters,
                            std::size_t bucket_bytes) {
  if (group.world_size() == 1) return 0.0;
  double seconds = 0.0;
  for (const Bucket& b : buckets_of(parameters, bucket_bytes)) {
    std::vector<Tensor> grads;
    for (std::size_t i = b.begin; i < b.end; ++i) {
      const Variable& p = parameters[i];
      grads.push_back(p.grad().defined()
                          ? p.grad()
                          : zeros(p.shape(), p.dtype(), p.value().device()));
    }
    run_bucket(
        grads,
        [&](const Tensor& buffer) {
          const auto start = std::chrono::steady_clock::now();
          group.all_reduce(buffer, ReduceOp::Mean);
          seconds += std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
        },
        [&](std::size_t k, const Tensor& g) {
          parameters[b.begin + k].set_grad(g.contiguous());
        });
  }
  return seconds;
}

}  // namespace tessel::dist
