// The op catalogue behind `tessel ops`: the shape-engine seed's 17 Core v1
// ops in its order, and agreement between what the catalogue measures
// (admitted dtypes, differentiability) and what the op tables declare and
// the ops do.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "tessel/tessel.hpp"

namespace tessel {
namespace {

const OpDescription& find_op(const std::string& name) {
  for (const OpDescription& d : op_catalogue()) {
    if (d.name == name) return d;
  }
  throw std::runtime_error("no op " + name);
}

bool admits(const OpDescription& d, DType t) {
  return std::find(d.dtypes.begin(), d.dtypes.end(), t) != d.dtypes.end();
}

TEST(OpCatalogue, CoreV1IsTheSeedsSeventeenInOrder) {
  const std::vector<OpDescription> core = core_v1_ops();
  std::vector<std::string> names;
  for (const OpDescription& d : core) names.push_back(*d.core_v1);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "relu", "add", "sub", "mul", "div", "sum", "mean",
                       "reshape", "transpose", "expand_dims", "squeeze",
                       "index", "slice", "gather", "matmul", "dot", "conv2d"}));
  // tessel's names for the two the seed names differently.
  EXPECT_EQ(core[9].name, "unsqueeze");
  EXPECT_EQ(core[11].name, "select");
  // Arity as the seed states it: binary element-wise ops, matmul, dot,
  // gather and conv2d take two tensors; the rest one.
  for (const OpDescription& d : core) {
    SCOPED_TRACE(d.name);
    const std::set<std::string> binary = {"add",    "sub",    "mul", "div",
                                          "gather", "matmul", "dot", "conv2d"};
    EXPECT_EQ(d.operands, binary.count(d.name) ? 2 : 1);
    EXPECT_TRUE(d.differentiable);
    EXPECT_TRUE(admits(d, DType::F32));
  }
  EXPECT_EQ(core[16].optional_operands, 1);  // conv2d's bias
}

TEST(OpCatalogue, EveryRowRunsAndIsNamedOnce) {
  std::set<std::string> names;
  for (const OpDescription& d : op_catalogue()) {
    EXPECT_TRUE(names.insert(d.name).second) << d.name << " twice";
    // An empty list would mean the probe call never ran.
    EXPECT_FALSE(d.dtypes.empty()) << d.name;
  }
  // Every element-wise row of the op tables is there.
  for (const OpInfo& op : kUnaryOps) EXPECT_TRUE(names.count(op.name));
  for (const OpInfo& op : kBinaryOps) EXPECT_TRUE(names.count(op.name));
}

// The measured dtypes agree with the op tables' declared inputs.
TEST(OpCatalogue, MeasuredDTypesAgreeWithTheOpTables) {
  auto check = [](const OpInfo& info, bool complex_ok) {
    SCOPED_TRACE(info.name);
    const OpDescription& d = find_op(info.name);
    EXPECT_EQ(admits(d, DType::C64), complex_ok);
    EXPECT_EQ(admits(d, DType::C128), complex_ok);
    switch (info.inputs) {
      case InputKind::Any: EXPECT_TRUE(admits(d, DType::Bool)); break;
      case InputKind::NonBool: EXPECT_FALSE(admits(d, DType::Bool)); break;
      case InputKind::Integral:
        EXPECT_TRUE(admits(d, DType::Bool));
        EXPECT_FALSE(admits(d, DType::F32));
        break;
      case InputKind::Integer:
        EXPECT_FALSE(admits(d, DType::Bool));
        EXPECT_FALSE(admits(d, DType::F32));
        EXPECT_TRUE(admits(d, DType::I32));
        break;
    }
  };
  for (int i = 0; i < kUnaryOpCount; ++i) {
    check(kUnaryOps[i], accepts_complex(static_cast<UnaryOp>(i)));
  }
  for (int i = 0; i < kBinaryOpCount; ++i) {
    check(kBinaryOps[i], accepts_complex(static_cast<BinaryOp>(i)));
  }
  // Facts stated in docs/ops.md and docs/complex.md.
  EXPECT_EQ(
      find_op("conv2d").dtypes,
      (std::vector<DType>{DType::F16, DType::BF16, DType::F32, DType::F64}));
  EXPECT_EQ(find_op("view_as_real").dtypes,
            (std::vector<DType>{DType::C64, DType::C128}));
  EXPECT_FALSE(admits(find_op("max"), DType::C64));
  EXPECT_TRUE(admits(find_op("linalg.svd"), DType::C128));
  EXPECT_FALSE(admits(find_op("linalg.svd"), DType::I32));
}

// "differentiable" is what a Variable does: rows marked so record a
// gradient, constant rows do not, Tensor-only ops have no Variable form.
TEST(OpCatalogue, DifferentiabilityIsWhatVariablesDo) {
  const Variable x(from_vector<float>({0.5f, -1.5f}), true);
  EXPECT_TRUE(find_op("tanh").differentiable);
  EXPECT_TRUE(tanh(x).requires_grad());
  EXPECT_FALSE(find_op("floor").differentiable);
  EXPECT_FALSE(floor(x).requires_grad());
  EXPECT_FALSE(find_op("eq").differentiable);
  EXPECT_FALSE(eq(x, x).requires_grad());
  EXPECT_TRUE(find_op("maximum").differentiable);
  EXPECT_TRUE(maximum(x, x).requires_grad());
  EXPECT_TRUE(find_op("gather").differentiable);
  EXPECT_TRUE(gather(x, from_vector<std::int64_t>({1, 0})).requires_grad());
  for (const char* tensor_only :
       {"argmax", "nonzero", "linalg.inv", "fft.fft", "gather_nd"}) {
    EXPECT_FALSE(find_op(tensor_only).differentiable) << tensor_only;
  }
}

}  // namespace
}  // namespace tessel
