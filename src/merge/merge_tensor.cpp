// From a planned tensor's resolved parameters to the method's call.
#include <fmt/format.h>

#include "merge/inputs.hpp"
#include "merge/prepared.hpp"
#include "tessel/core/error.hpp"
#include "tessel/core/numerics.hpp"
#include "tessel/merge/plan.hpp"

namespace tessel::merge {

namespace {

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace

std::unique_ptr<PreparedMerge> prepare_merge(Method method,
                                             const PlannedTensor& tensor,
                                             std::span<const Tensor> inputs,
                                             std::uint64_t seed) {
  if (inputs.size() != tensor.inputs.size()) {
    throw_error(ErrorCode::BadConfig,
                fmt::format("[merge] {}: {} inputs planned, {} given",
                            tensor.name, tensor.inputs.size(), inputs.size()));
  }
  const ResolvedParameters& shared = tensor.parameters;
  const auto base = tensor.base;
  // The non-base inputs, in config order.
  std::vector<std::size_t> others;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!base || i != *base) others.push_back(i);
  }
  switch (method) {
    case Method::Linear: {
      std::vector<double> w;
      for (const PlannedInput& in : tensor.inputs) {
        w.push_back(number_parameter(in.parameters, "weight"));
      }
      return detail::prepare_linear(inputs, w,
                                    flag_parameter(shared, "normalize"));
    }
    case Method::Slerp:
      return detail::prepare_slerp(inputs[*base], inputs[others.at(0)],
                                   number_parameter(shared, "t"));
    case Method::Nuslerp: {
      NuslerpOptions o;
      o.weight_a =
          number_parameter(tensor.inputs[others.at(0)].parameters, "weight");
      o.weight_b =
          number_parameter(tensor.inputs[others.at(1)].parameters, "weight");
      o.row_wise = flag_parameter(shared, "nuslerp_row_wise");
      o.flatten = flag_parameter(shared, "nuslerp_flatten");
      return detail::prepared_result(nuslerp(base ? &inputs[*base] : nullptr,
                                             inputs[others[0]],
                                             inputs[others[1]], o));
    }
    case Method::ModelStock: {
      std::vector<Tensor> rest;
      for (const std::size_t i : others) rest.push_back(inputs[i]);
      return detail::prepared_result(model_stock(
          inputs[*base], rest, flag_parameter(shared, "filter_wise")));
    }
    case Method::Passthrough:
      return detail::prepared_result(passthrough(
          inputs[0], optional_number(tensor.inputs[0].parameters, "scale")));
    default: {
      TaskArithmeticOptions o = *task_arithmetic_defaults(method);
      o.normalize = flag_parameter(shared, "normalize");
      o.rescale = flag_parameter(shared, "rescale");
      o.lambda = number_parameter(shared, "lambda");
      std::vector<TaskInput> task;
      const std::uint64_t stream = fnv1a(tensor.name);
      for (std::size_t k = 0; k < others.size(); ++k) {
        const ResolvedParameters& p = tensor.inputs[others[k]].parameters;
        TaskInput in;
        in.tensor = inputs[others[k]];
        in.weight = number_parameter(p, "weight");
        in.density = number_parameter(p, "density");
        in.gamma = optional_number(p, "gamma").value_or(in.gamma);
        in.epsilon = optional_number(p, "epsilon").value_or(in.epsilon);
        in.random = {seed, stream + k};
        task.push_back(std::move(in));
      }
      return detail::prepare_task_arithmetic(inputs[*base], task, o);
    }
  }
}

Tensor merge_tensor(Method method, const PlannedTensor& tensor,
                    std::span<const Tensor> inputs, std::uint64_t seed,
                    Tensor output_buffer) {
  const auto merge = prepare_merge(method, tensor, inputs, seed);
  return merge->result(tensor.shape, std::move(output_buffer));
}

}  // namespace tessel::merge
