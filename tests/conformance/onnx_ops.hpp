// The mapping from ONNX nodes onto tessel ops, used by onnx_runner.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessel/tessel.hpp"

namespace tessel::onnx {

// Thrown by a mapping that cannot express a test (a dtype or attribute
// tessel does not have); the test is reported as "not mapped".
struct NotMapped : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Node {
  std::vector<std::optional<Tensor>> inputs;  // absent optional inputs empty
  nlohmann::json attributes;
  int opset = 0;
  std::size_t outputs = 1;

  const Tensor& in(std::size_t i) const;
  bool has(std::size_t i) const {
    return i < inputs.size() && inputs[i].has_value();
  }
  std::int64_t attr_int(const std::string& name, std::int64_t fallback) const;
  double attr_float(const std::string& name, double fallback) const;
  std::string attr_string(const std::string& name,
                          const std::string& fallback) const;
  std::optional<std::vector<std::int64_t>> attr_ints(
      const std::string& name) const;
};

using Mapping = std::function<std::vector<Tensor>(const Node&)>;

// op_type -> mapping, for every op tessel implements so far.
const std::map<std::string, Mapping>& mappings();

// Adds the convolution, pooling, normalisation and attention mappings
// (onnx_ops_nn.cpp).
void add_nn_mappings(std::map<std::string, Mapping>& m);

// ONNX TensorProto.DataType code -> tessel dtype (NotMapped when none).
DType dtype_of_onnx_code(std::int64_t code);
// ONNX element type name ("float", "bfloat16", ...) -> tessel dtype.
std::optional<DType> dtype_of_onnx_name(const std::string& name);

}  // namespace tessel::onnx
