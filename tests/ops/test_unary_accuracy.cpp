// The f32 kernels (SIMD where the target has it) against libm in double,
// over a dense sweep plus the special values, with a per-op ULP budget.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "tessel/tessel.hpp"

namespace tessel {
namespace {

// Distance in representable floats; NaN matches only NaN.
std::int64_t ulp_distance(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) {
    return std::isnan(a) && std::isnan(b)
               ? 0
               : std::numeric_limits<std::int64_t>::max();
  }
  if (a == b) return 0;
  auto ordered = [](float x) {
    const auto bits = static_cast<std::int64_t>(std::bit_cast<std::int32_t>(x));
    return bits < 0 ? std::int64_t{INT32_MIN} - bits : bits;
  };
  return std::abs(ordered(a) - ordered(b));
}

std::vector<float> sweep(float lo, float hi, int n) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i)
    v.push_back(lo +
                (hi - lo) * static_cast<float>(i) / static_cast<float>(n - 1));
  const float specials[] = {0.0f,
                            -0.0f,
                            1e-30f,
                            -1e-30f,
                            1e-40f,
                            1.0f,
                            -1.0f,
                            0.5f,
                            88.0f,
                            88.7f,
                            89.0f,
                            -87.0f,
                            -104.0f,
                            200.0f,
                            -200.0f,
                            1e30f,
                            -1e30f,
                            40000.0f,
                            -1e10f,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN()};
  v.insert(v.end(), std::begin(specials), std::end(specials));
  return v;
}

struct Case {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  std::function<double(double)> reference;
  std::int64_t max_ulp;
  // Absolute tolerance near zero crossings, where ULPs are meaningless.
  double atol;
};

double gelu_ref(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}
double gelu_tanh_ref(double x) {
  return 0.5 * x *
         (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

TEST(UnaryAccuracy, F32KernelsAgainstLibmInDouble) {
  const Case cases[] = {
      {"exp", [](const Tensor& t) { return exp(t); },
       [](double x) { return std::exp(x); }, 2, 0},
      {"expm1", [](const Tensor& t) { return expm1(t); },
       [](double x) { return std::expm1(x); }, 5, 0},
      {"log", [](const Tensor& t) { return log(t); },
       [](double x) { return std::log(x); }, 3, 0},
      {"log1p", [](const Tensor& t) { return log1p(t); },
       [](double x) { return std::log1p(x); }, 4, 0},
      {"log2", [](const Tensor& t) { return log2(t); },
       [](double x) { return std::log2(x); }, 3, 0},
      {"sin", [](const Tensor& t) { return sin(t); },
       [](double x) { return std::sin(x); }, 4, 1e-7},
      {"cos", [](const Tensor& t) { return cos(t); },
       [](double x) { return std::cos(x); }, 4, 1e-7},
      {"tanh", [](const Tensor& t) { return tanh(t); },
       [](double x) { return std::tanh(x); }, 5, 0},
      {"sigmoid", [](const Tensor& t) { return sigmoid(t); },
       [](double x) { return 1 / (1 + std::exp(-x)); }, 4, 0},
      {"erf", [](const Tensor& t) { return erf(t); },
       [](double x) { return std::erf(x); }, 4, 0},
      // gelu's 1 + erf(x / sqrt 2) cancels for x < -4 (PyTorch's formula
      // does the same): there the error is absolute, below 2^-22.
      {"gelu", [](const Tensor& t) { return gelu(t); }, gelu_ref, 6, 2.4e-7},
      {"gelu_tanh", [](const Tensor& t) { return gelu_tanh(t); }, gelu_tanh_ref,
       8, 2.4e-7},
      // Subnormal results (x < -87) are compared absolutely.
      {"silu", [](const Tensor& t) { return silu(t); },
       [](double x) { return x / (1 + std::exp(-x)); }, 4, 1e-37},
      {"softplus", [](const Tensor& t) { return softplus(t); },
       [](double x) { return x > 20 ? x : std::log1p(std::exp(x)); }, 4, 0},
      {"elu", [](const Tensor& t) { return elu(t); },
       [](double x) { return x > 0 ? x : std::expm1(x); }, 5, 0},
      {"sqrt", [](const Tensor& t) { return sqrt(t); },
       [](double x) { return std::sqrt(x); }, 0, 0},
      {"rsqrt", [](const Tensor& t) { return rsqrt(t); },
       [](double x) { return 1 / std::sqrt(x); }, 1, 0},
      {"reciprocal", [](const Tensor& t) { return reciprocal(t); },
       [](double x) { return 1 / x; }, 0, 0},
      {"round", [](const Tensor& t) { return round(t); },
       [](double x) { return std::nearbyint(x); }, 0, 0},
      // The array API's rows run libm in float (glibc's float functions
      // are within 1-2 ulp; NaN outside the domain on both sides).
      {"log10", [](const Tensor& t) { return log10(t); },
       [](double x) { return std::log10(x); }, 2, 0},
      {"tan", [](const Tensor& t) { return tan(t); },
       [](double x) { return std::tan(x); }, 2, 1e-7},
      {"asin", [](const Tensor& t) { return asin(t); },
       [](double x) { return std::asin(x); }, 2, 0},
      {"acos", [](const Tensor& t) { return acos(t); },
       [](double x) { return std::acos(x); }, 2, 0},
      {"atan", [](const Tensor& t) { return atan(t); },
       [](double x) { return std::atan(x); }, 2, 0},
      {"sinh", [](const Tensor& t) { return sinh(t); },
       [](double x) { return std::sinh(x); }, 2, 0},
      {"cosh", [](const Tensor& t) { return cosh(t); },
       [](double x) { return std::cosh(x); }, 2, 0},
      {"asinh", [](const Tensor& t) { return asinh(t); },
       [](double x) { return std::asinh(x); }, 2, 0},
      {"acosh", [](const Tensor& t) { return acosh(t); },
       [](double x) { return std::acosh(x); }, 2, 0},
      {"atanh", [](const Tensor& t) { return atanh(t); },
       [](double x) { return std::atanh(x); }, 2, 0},
      {"square", [](const Tensor& t) { return square(t); },
       [](double x) { return x * x; }, 0, 0},
  };
  // Odd sizes exercise the vector tails.
  const std::vector<float> values = sweep(-30.0f, 30.0f, 200003);
  const Tensor x =
      from_vector(values, {static_cast<std::int64_t>(values.size())});
  // Every SIMD target compiled in and supported here (AVX-512, AVX2, SSE4,
  // scalar, ...), as Highway's own tests do.
  for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    for (const auto& c : cases) {
      const Tensor y = c.op(x);
      ASSERT_EQ(y.dtype(), DType::F32) << c.name;
      std::int64_t worst = 0;
      float worst_x = 0;
      for (std::size_t i = 0; i < values.size(); ++i) {
        const auto expected = static_cast<float>(c.reference(values[i]));
        const float got = y.const_data<float>()[i];
        if (std::fabs(static_cast<double>(got) - expected) <= c.atol) continue;
        const auto d = ulp_distance(got, expected);
        if (d > worst) {
          worst = d;
          worst_x = values[i];
        }
      }
      EXPECT_LE(worst, c.max_ulp)
          << c.name << " is off by " << worst << " ULP at x = " << worst_x;
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// bf16 and f16 go through the same f32 kernels and round once on store:
// the result equals rounding the f32 result.
TEST(UnaryAccuracy, NarrowFloatsRoundTheF32ResultOnce) {
  const Tensor x32 = linspace(-8.0, 8.0, 4099);
  for (DType d : {DType::BF16, DType::F16}) {
    const Tensor xn = x32.to(d);
    const Tensor expected = exp(xn.to(DType::F32)).to(d);
    const Tensor got = exp(xn);
    ASSERT_EQ(got.dtype(), d);
    EXPECT_EQ(std::memcmp(got.raw_data(), expected.raw_data(), got.nbytes()), 0)
        << dtype_name(d);
    const Tensor sum_expected = add(xn.to(DType::F32), xn.to(DType::F32)).to(d);
    EXPECT_EQ(std::memcmp(add(xn, xn).raw_data(), sum_expected.raw_data(),
                          got.nbytes()),
              0)
        << dtype_name(d);
  }
}

}  // namespace
}  // namespace tessel
