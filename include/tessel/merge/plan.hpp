// From a MergeConfig and what each input model holds (its decoder config
// and tensor shapes, read from headers only) to the list of output tensors
// with, for each, its inputs and every parameter resolved — mergekit's
// MergePlanner: `models` become one slice over all layers, the base model
// joins the inputs when not listed, gradients take t = layer / (layers -
// 1) within each slice (0 for the embedding, final norm and head),
// parameters are looked up per input model first, then per slice, then
// globally. Every structural problem — a missing model, tensor or
// required parameter, slices of unequal lengths, layer ranges past a
// model's layers, models of different architectures, inputs of different
// shapes, a method given the wrong number of models or no base — is E4001
// here, before anything is read or written.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tessel/core/shape.hpp"
#include "tessel/core/tensor.hpp"
#include "tessel/merge/config.hpp"
#include "tessel/models/config.hpp"

namespace tessel::merge {

// What the planner knows of one input model.
struct ModelSummary {
  DecoderConfig config;
  std::map<std::string, Shape> shapes;  // by HF tensor name
};

using ResolvedParameters = std::map<std::string, Value>;

struct PlannedInput {
  std::size_t model = 0;  // index into MergePlan::models
  std::string tensor;     // its HF name in that model
  ResolvedParameters parameters;
};

struct PlannedTensor {
  std::string name;  // HF name in the output
  Shape shape;
  std::vector<PlannedInput> inputs;
  // Index into inputs of the base model, for methods that take one.
  std::optional<std::size_t> base;
  ResolvedParameters parameters;  // the method's shared parameters
};

struct MergePlan {
  Method method = Method::Linear;
  std::vector<std::string> models;  // MergeConfig::referenced_models()
  std::size_t donor = 0;  // the model whose config and tokenizer are kept
  DecoderConfig config;   // the output's
  std::vector<PlannedTensor> tensors;
  // Where each output layer comes from (its slice's first source), for
  // per-layer config entries such as transformers' layer_types.
  struct LayerSource {
    std::size_t model = 0;
    std::int64_t layer = 0;
  };
  std::vector<LayerSource> layers;
};

// `models[i]` describes `config.referenced_models()[i]`.
MergePlan plan_merge(const MergeConfig& config,
                     const std::vector<ModelSummary>& models);

// A resolved parameter as a number or flag (validated by the config
// parser, so only a missing name is an error: E4001).
double number_parameter(const ResolvedParameters& p, const std::string& name);
bool flag_parameter(const ResolvedParameters& p, const std::string& name);
std::optional<double> optional_number(const ResolvedParameters& p,
                                      const std::string& name);

}  // namespace tessel::merge

namespace tessel::merge {

// A tensor's merge once everything that needs the whole tensor is known
// (slerp's angle, the ranked masks of TIES and breadcrumbs, DARE's
// rescale): any range of its elements can then be produced on its own, so
// a writer streams the result through a small buffer in the output dtype
// instead of holding it whole. Holds views of its inputs, which must
// outlive it.
class PreparedMerge {
 public:
  virtual ~PreparedMerge() = default;
  // Elements [first, first + count) of the flattened result, converted to
  // `dtype` (f32, f16 or bf16, rounded to nearest even) into `out`, on the
  // pool. E2401 when one is NaN or Inf; E2201 for another dtype.
  void produce(std::int64_t first, std::int64_t count, DType dtype,
               void* out) const;

  // The f32 result whole, in `buffer` (1-D f32) when it is large enough.
  Tensor result(const Shape& shape, Tensor buffer = {}) const;

  // Elements [first, first + n) as f32 into out, n <= 2048, out having
  // room for n rounded up to a multiple of 16 (what lies there past n is
  // scratch). first is a multiple of 4.
  virtual void block(std::int64_t first, std::int64_t n, float* out) const = 0;
};

// One planned tensor prepared: `inputs[i]` is planned input i as an f32,
// f16 or bf16 tensor (a mapped bf16 checkpoint is read in place). Random
// masks draw from Philox under key `seed`, stream FNV-1a(tensor name) +
// the input's position, so a tensor's mask depends on the seed, its name
// and the model's place in the config alone.
std::unique_ptr<PreparedMerge> prepare_merge(Method method,
                                             const PlannedTensor& tensor,
                                             std::span<const Tensor> inputs,
                                             std::uint64_t seed);

// prepare_merge's result whole, as f32. `output_buffer` (1-D f32, at least
// the tensor's size), when given, holds the result (a view of it is
// returned).
Tensor merge_tensor(Method method, const PlannedTensor& tensor,
                    std::span<const Tensor> inputs, std::uint64_t seed,
                    Tensor output_buffer = {});

}  // namespace tessel::merge
