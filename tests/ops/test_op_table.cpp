// Every row of the element-wise tables (op_list.hpp) run through both CPU
// kernels: contiguous f32 data takes the Highway body of a row marked Simd,
// a strided view of the same values takes the scalar body. The two must
// agree for every row, so a row whose SIMD body is missing or wrong fails
// here even where the compiler could not tell (the rows marked Scalar are
// checked to take the same path on both layouts).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tessel/tessel.hpp"

namespace tessel {
namespace {

std::vector<float> probe_values() {
  std::vector<float> v;
  for (int i = 0; i <= 600; ++i)
    v.push_back(-6.0f + 0.02f * static_cast<float>(i) + 0.003f);
  const float specials[] = {0.0f,
                            -0.0f,
                            0.5f,
                            -0.5f,
                            1.5f,
                            2.5f,
                            -2.5f,
                            1.0f,
                            -1.0f,
                            1e-3f,
                            30.0f,
                            -30.0f,
                            1e-30f,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN()};
  v.insert(v.end(), std::begin(specials), std::end(specials));
  return v;
}

// The same values as a contiguous tensor and as a stride-2 view.
struct Layouts {
  Tensor dense;
  Tensor strided;
};

Layouts layouts(const std::vector<float>& values) {
  const auto n = static_cast<std::int64_t>(values.size());
  std::vector<float> spread(values.size() * 2, 12345.0f);
  for (std::size_t i = 0; i < values.size(); ++i) spread[2 * i] = values[i];
  Layouts l{from_vector(values, {n}),
            from_vector(spread, {2 * n}).slice(0, 0, 2 * n, 2)};
  EXPECT_TRUE(l.dense.is_contiguous());
  EXPECT_FALSE(l.strided.is_contiguous());
  return l;
}

// The SIMD bodies approximate exp/log/erf/tanh/sin within a few ULP
// (test_unary_accuracy.cpp bounds each); 1e-5 relative plus 1e-6 absolute
// covers those and still fails a body that returns its input or is wrong.
void expect_agree(const Tensor& simd, const Tensor& scalar, const char* op) {
  ASSERT_EQ(simd.dtype(), scalar.dtype()) << op;
  ASSERT_EQ(simd.shape(), scalar.shape()) << op;
  const Tensor a = simd.to(DType::F64).contiguous();
  const Tensor b = scalar.to(DType::F64).contiguous();
  int bad = 0;
  for (std::int64_t i = 0; i < a.numel() && bad < 3; ++i) {
    const double x = a.const_data<double>()[i];
    const double y = b.const_data<double>()[i];
    if (std::isnan(x) && std::isnan(y)) continue;
    if (x == y || std::fabs(x - y) <= 1e-6 + 1e-5 * std::fabs(y)) continue;
    ADD_FAILURE() << op << " at element " << i << ": contiguous (SIMD) " << x
                  << " vs strided (scalar) " << y;
    ++bad;
  }
}

TEST(OpTable, EveryUnaryRowAgreesOnBothKernels) {
  const Layouts in = layouts(probe_values());
  int simd_rows = 0;
  for (int i = 0; i < kUnaryOpCount; ++i) {
    const auto op = static_cast<UnaryOp>(i);
    const OpInfo& info = op_info(op);
    // Not defined on floats.
    if (info.inputs == InputKind::Integral || info.inputs == InputKind::Integer)
      continue;
    SCOPED_TRACE(info.name);
    simd_rows += info.kernel == KernelKind::Simd;
    expect_agree(unary(op, in.dense, default_params(op)),
                 unary(op, in.strided, default_params(op)), info.name);
  }
  EXPECT_GE(simd_rows, 20);  // the table really marks its float ops Simd
}

TEST(OpTable, EveryBinaryRowAgreesOnBothKernels) {
  std::vector<float> a = probe_values();
  std::vector<float> b(a.rbegin(), a.rend());
  for (float& x : b) x = x * 0.5f + 0.25f;
  const Layouts la = layouts(a);
  const Layouts lb = layouts(b);
  for (int i = 0; i < kBinaryOpCount; ++i) {
    const auto op = static_cast<BinaryOp>(i);
    const OpInfo& info = op_info(op);
    // Not defined on floats.
    if (info.inputs == InputKind::Integral || info.inputs == InputKind::Integer)
      continue;
    SCOPED_TRACE(info.name);
    expect_agree(binary(op, la.dense, lb.dense),
                 binary(op, la.strided, lb.strided), info.name);
  }
}

TEST(OpTable, NamesFindTheirRows) {
  for (int i = 0; i < kUnaryOpCount; ++i) {
    const auto op = static_cast<UnaryOp>(i);
    EXPECT_EQ(unary_op_from_name(op_info(op).name), op);
  }
  for (int i = 0; i < kBinaryOpCount; ++i) {
    const auto op = static_cast<BinaryOp>(i);
    EXPECT_EQ(binary_op_from_name(op_info(op).name), op);
  }
  EXPECT_FALSE(unary_op_from_name("no_such_op").has_value());
  EXPECT_FALSE(binary_op_from_name("exp").has_value());
  // The named overloads' defaults are the table's.
  const Tensor x = from_vector(std::vector<float>{-2.0f, 3.0f}, {2});
  EXPECT_TRUE(allclose(
      leaky_relu(x),
      unary(UnaryOp::LeakyRelu, x, default_params(UnaryOp::LeakyRelu))));
  EXPECT_EQ(leaky_relu(x).at<float>({0}), -0.02f);
  EXPECT_THROW(unary(UnaryOp::Softplus, x, {0.0, 20.0}), ShapeError);
}

}  // namespace
}  // namespace tessel
