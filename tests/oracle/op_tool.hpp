// Shared by op_tool's source files: the op table they fill.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tessel/tessel.hpp"

namespace op_tool {

using Json = nlohmann::json;
using Op = std::function<std::vector<tessel::Tensor>(
    const std::vector<tessel::Tensor>&, const Json&)>;

// Convolution, pooling, normalisation, attention, RoPE and embedding
// (op_tool_nn.cpp), for test_torch_ops.py.
void add_nn_ops(std::map<std::string, Op>& m);

}  // namespace op_tool
