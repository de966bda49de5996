// Complex tensors (c64, c128), hand-worked: promotion, casts, the parts as
// views, arithmetic at the edges (division by zero, branch cuts), the
// reductions and matmul, printing, and the ops that refuse complex input.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <numbers>
#include <sstream>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

using c64 = std::complex<float>;
using c128 = std::complex<double>;
using testing::expect_near_complex;
using testing::values;

Tensor c(std::vector<c64> v) {
  const auto n = static_cast<std::int64_t>(v.size());
  return from_vector<c64>(v, {n});
}

TEST(Complex, DTypeTraitsAndPromotion) {
  EXPECT_EQ(element_size(DType::C64), 8);
  EXPECT_EQ(element_size(DType::C128), 16);
  EXPECT_TRUE(is_complex(DType::C64));
  EXPECT_FALSE(is_floating_point(DType::C64));
  EXPECT_EQ(parse_dtype("complex64"), DType::C64);
  EXPECT_EQ(parse_dtype("cdouble"), DType::C128);
  EXPECT_EQ(complex_component_type(DType::C128), DType::F64);
  // c64 with f64 needs f64's precision: c128 (NumPy, the array API).
  EXPECT_EQ(promote_types(DType::C64, DType::F64), DType::C128);
  EXPECT_EQ(promote_types(DType::C64, DType::F32), DType::C64);
  EXPECT_EQ(promote_types(DType::C64, DType::BF16), DType::C64);
  EXPECT_EQ(promote_types(DType::I64, DType::C64), DType::C64);
  EXPECT_EQ(promote_types(DType::Bool, DType::C128), DType::C128);
  EXPECT_EQ(promote_types(DType::C64, DType::C128), DType::C128);
  EXPECT_EQ(float_result_type(DType::C64), DType::C64);
}

TEST(Complex, ScalarsPromoteAtTheTensorsPrecision) {
  const Scalar j = c128(0, 1);
  EXPECT_EQ(j.default_dtype(), DType::C64);
  EXPECT_EQ((ones({2}, DType::F32) + j).dtype(), DType::C64);
  EXPECT_EQ((ones({2}, DType::F64) + j).dtype(), DType::C128);
  EXPECT_EQ((ones({2}, DType::I32) * j).dtype(), DType::C64);
  EXPECT_EQ((ones({2}, DType::C128) + 1.5).dtype(), DType::C128);
  // 1 * 1j = 1j; 2 + 1j.
  expect_near_complex(ones({2}, DType::F32) * j + 1.0, {{1, 1}, {1, 1}}, 0);
  std::ostringstream os;
  os << Scalar(c128(1.5, -2));
  EXPECT_EQ(os.str(), "1.5-2j");
}

TEST(Complex, CastsToAndFromReal) {
  const Tensor r = from_vector<float>({1.5f, -2}, {2});
  expect_near_complex(r.to(DType::C64), {{1.5, 0}, {-2, 0}}, 0);
  const Tensor z = c({{1, 2}, {0, 0}, {0, -0.5f}});
  expect_near_complex(z.to(DType::C128), {{1, 2}, {0, 0}, {0, -0.5}}, 0);
  // To bool: nonzero when either part is.
  EXPECT_EQ(values<bool>(z.to(DType::Bool)),
            (std::vector<bool>{true, false, true}));
  // To a real type would drop the imaginary part: refused.
  try {
    (void)z.to(DType::F32);
    FAIL() << "c64 -> f32 must be refused";
  } catch (const DTypeError& e) {
    testing::check_error(e, "E2201", {"imaginary", "real()"});
  }
  // So would a complex value filled or set into a real tensor.
  EXPECT_THROW((void)full({2}, Scalar(c128(0, 1)), DType::F32), DTypeError);
  Tensor f = zeros({2});
  EXPECT_THROW(f.set({0}, Scalar(c128(1, 1))), DTypeError);
  EXPECT_EQ(full({1}, Scalar(c128(0, 1)), DType::Bool).item<bool>(), true);
  Tensor real_out = empty({3}, DType::F32);
  EXPECT_THROW(real_out.copy_(z), DTypeError);
  EXPECT_THROW(add_out(real_out, z, z), DTypeError);
}

TEST(Complex, PartsAreViewsThatWriteThrough) {
  Tensor z = c({{1, 2}, {3, -4}});
  const Tensor re = real(z);
  Tensor im = imag(z);
  EXPECT_EQ(re.dtype(), DType::F32);
  EXPECT_TRUE(re.shares_storage_with(z));
  EXPECT_EQ(values<float>(re), (std::vector<float>{1, 3}));
  EXPECT_EQ(values<float>(im), (std::vector<float>{2, -4}));
  im.fill_(7.0);
  expect_near_complex(z, {{1, 7}, {3, 7}}, 0);
  const Tensor parts = view_as_real(z);
  EXPECT_EQ(parts.shape(), (Shape{2, 2}));
  EXPECT_EQ(values<float>(parts), (std::vector<float>{1, 7, 3, 7}));
  const Tensor back = view_as_complex(parts);
  EXPECT_EQ(back.dtype(), DType::C64);
  EXPECT_TRUE(back.shares_storage_with(z));
  // Real tensors: real is the tensor, imag zeros, conj the tensor.
  const Tensor r = from_vector<double>({1, 2}, {2});
  EXPECT_EQ(values<double>(imag(r)), (std::vector<double>{0, 0}));
  EXPECT_TRUE(real(r).shares_storage_with(r));
  // conj flips the imaginary sign, +0 included.
  const Tensor zc = conj(c({{1, 2}, {3, 0}}));
  EXPECT_EQ(values<float>(imag(zc))[0], -2.0f);
  EXPECT_TRUE(std::signbit(values<float>(imag(zc))[1]));
  expect_near_complex(make_complex(from_vector<float>({1, 2}, {2}),
                                   from_vector<float>({3}, {1})),
                      {{1, 3}, {2, 3}}, 0);
  EXPECT_EQ(make_complex(ones({1}, DType::F64), ones({1})).dtype(),
            DType::C128);
}

TEST(Complex, ViewAsComplexRefusesSplitElements) {
  const Tensor x = arange(6, DType::F32).reshape({3, 2});
  EXPECT_THROW((void)view_as_complex(x.transpose(0, 1)), ShapeError);
  EXPECT_THROW((void)view_as_complex(arange(3, DType::F32)), ShapeError);
  EXPECT_THROW(
      (void)view_as_complex(x.reshape({-1}).slice(0, 1, 5, 1).reshape({2, 2})),
      ShapeError);  // offset 1: halves of two elements
  EXPECT_THROW((void)view_as_complex(arange(4, DType::I32).reshape({2, 2})),
               DTypeError);
  EXPECT_THROW((void)view_as_real(x), DTypeError);
}

TEST(Complex, Arithmetic) {
  const Tensor a = c({{1, 2}, {0, 1}});
  const Tensor b = c({{3, -1}, {0, 1}});
  expect_near_complex(a + b, {{4, 1}, {0, 2}}, 0);
  expect_near_complex(a - b, {{-2, 3}, {0, 0}}, 0);
  // (1+2i)(3-i) = 3 - i + 6i - 2i^2 = 5 + 5i; i * i = -1.
  expect_near_complex(a * b, {{5, 5}, {-1, 0}}, 0);
  // (5+5i)/(3-i) = 1+2i.
  expect_near_complex(c({{5, 5}}) / c({{3, -1}}), {{1, 2}}, 1e-6);
  // (1+i)^2 = 2i; i^-1 = -i.
  expect_near_complex(pow(c({{1, 1}, {0, 1}}), c({{2, 0}, {-1, 0}})),
                      {{0, 2}, {0, -1}}, 1e-6);
  expect_near_complex(-a, {{-1, -2}, {-0.0, -1}}, 0);
  expect_near_complex(square(c({{1, 1}})), {{0, 2}}, 0);
  // abs is the real magnitude, in the component dtype.
  const Tensor m = abs(c({{3, 4}, {0, -2}}));
  EXPECT_EQ(m.dtype(), DType::F32);
  EXPECT_EQ(values<float>(m), (std::vector<float>{5, 2}));
  EXPECT_EQ(values<bool>(eq(a, c({{1, 2}, {0, -1}}))),
            (std::vector<bool>{true, false}));
  EXPECT_EQ(values<bool>(ne(a, c({{1, 2}, {0, -1}}))),
            (std::vector<bool>{false, true}));
  EXPECT_EQ(values<bool>(logical_and(c({{0, 1}, {0, 0}}), c({{1, 0}, {1, 0}}))),
            (std::vector<bool>{true, false}));
}

TEST(Complex, DivisionByZeroIsInfOrNaN) {
  // NumPy's rule: (a + bi) / 0 = a/0 + (b/0)i.
  const auto q =
      values<c64>(c({{1, 0}, {1, 1}, {0, 0}}) / c({{0, 0}, {0, 0}, {0, 0}}));
  EXPECT_TRUE(std::isinf(q[0].real()));
  EXPECT_TRUE(std::isnan(q[0].imag()));
  EXPECT_TRUE(std::isinf(q[1].real()) && std::isinf(q[1].imag()));
  EXPECT_TRUE(std::isnan(q[2].real()) && std::isnan(q[2].imag()));
}

TEST(Complex, TranscendentalsAndBranchCuts) {
  const double pi = std::numbers::pi;
  // e^(i pi) = -1; log(-1) = i pi; sqrt(-4 +- 0i) = +-2i (the cut's sides).
  expect_near_complex(exp(c({{0, static_cast<float>(pi)}})), {{-1, 0}}, 1e-6);
  expect_near_complex(log(c({{-1, 0}})), {{0, pi}}, 1e-6);
  expect_near_complex(sqrt(c({{-4, 0}, {-4, -0.0f}})), {{0, 2}, {0, -2}}, 0);
  expect_near_complex(log10(c({{100, 0}})), {{2, 0}}, 1e-6);
  // sin(i) = i sinh(1).
  expect_near_complex(sin(from_vector<c128>({{0, 1}}, {1})),
                      {{0, std::sinh(1.0)}}, 1e-15);
  // expm1 and log1p keep a small argument's digits: expm1(1e-10 + 1e-10i)
  // = 1e-10 + 1e-10i to first order.
  const auto e = values<c128>(expm1(from_vector<c128>({{1e-10, 1e-10}}, {1})));
  EXPECT_NEAR(e[0].real(), 1e-10, 1e-19);
  EXPECT_NEAR(e[0].imag(), 1e-10, 1e-19);  // exp(z) - 1: 8e-18 off
  const auto l = values<c128>(log1p(from_vector<c128>({{1e-10, 0}}, {1})));
  EXPECT_NEAR(l[0].real(), 1e-10, 1e-19);
  // sign: z / |z|, 0 at 0.
  expect_near_complex(sign(c({{3, 4}, {0, 0}})), {{0.6, 0.8}, {0, 0}}, 1e-7);
  EXPECT_EQ(values<bool>(isnan(c({{std::nanf(""), 0}, {1, 1}}))),
            (std::vector<bool>{true, false}));
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(values<bool>(isinf(c({{1, inf}, {1, 1}}))),
            (std::vector<bool>{true, false}));
  EXPECT_EQ(values<bool>(isfinite(c({{1, inf}, {1, 1}}))),
            (std::vector<bool>{false, true}));
}

TEST(Complex, Reductions) {
  const Tensor z = from_vector<c64>({{1, 2}, {3, 4}, {5, 6}, {7, 8}}, {2, 2});
  expect_near_complex(sum(z), {{16, 20}}, 0);
  expect_near_complex(sum(z, {0}), {{6, 8}, {10, 12}}, 0);
  expect_near_complex(sum(z, {-1}, true), {{4, 6}, {12, 14}}, 0);
  EXPECT_EQ(sum(z, {-1}, true).shape(), (Shape{2, 1}));
  expect_near_complex(mean(z, {1}), {{2, 3}, {6, 7}}, 0);
  // (1+2i)(3+4i) = -5 + 10i; (5+6i)(7+8i) = -13 + 82i.
  expect_near_complex(prod(z, {1}), {{-5, 10}, {-13, 82}}, 0);
  expect_near_complex(prod(empty({0}, DType::C64)), {{1, 0}}, 0);
  expect_near_complex(sum(empty({0}, DType::C128)), {{0, 0}}, 0);
  expect_near_complex(sum(full({}, Scalar(c128(1, -1)), DType::C64)), {{1, -1}},
                      0);
  // Running sums along an axis: [[1+2i, 4+6i], [5+6i, 12+14i]].
  expect_near_complex(cumsum(z, -1), {{1, 2}, {4, 6}, {5, 6}, {12, 14}}, 0);
  expect_near_complex(cumsum(z, 0, true), {{0, 0}, {0, 0}, {1, 2}, {3, 4}}, 0);
  // any/all test "nonzero" (either part).
  EXPECT_EQ(values<bool>(any(c({{0, 1}, {0, 0}}).reshape({1, 2}), {1})),
            (std::vector<bool>{true}));
  EXPECT_FALSE(all(c({{0, 1}, {0, 0}})).item<bool>());
  EXPECT_THROW((void)max(z), DTypeError);
  EXPECT_THROW((void)argmax(z, 0), DTypeError);
  EXPECT_THROW((void)var(z), DTypeError);
}

TEST(Complex, Matmul) {
  // [[1+i, 2], [0, i]] @ [1, 1-i] = [3-i, 1+i].
  const Tensor a = from_vector<c64>({{1, 1}, {2, 0}, {0, 0}, {0, 1}}, {2, 2});
  const Tensor x = c({{1, 0}, {1, -1}});
  const Tensor y = matmul(a, x);
  EXPECT_EQ(y.shape(), (Shape{2}));
  expect_near_complex(y, {{3, -1}, {1, 1}}, 1e-6);
  // A real operand promotes: [[1, 2]] @ [[i], [1]] = [[2+i]].
  const Tensor r = from_vector<double>({1, 2}, {1, 2});
  const Tensor m = matmul(r, from_vector<c64>({{0, 1}, {1, 0}}, {2, 1}));
  EXPECT_EQ(m.dtype(), DType::C128);
  expect_near_complex(m, {{2, 1}}, 1e-12);
}

TEST(Complex, AllcloseComparesTheModulus) {
  EXPECT_TRUE(allclose(c({{1, 2}}), c({{1, 2.00001f}}), 1e-5, 0));
  EXPECT_FALSE(allclose(c({{1, 2}}), c({{1, 2.1f}})));
  // A real operand is +0i.
  EXPECT_TRUE(allclose(c({{3, 0}}), from_vector<float>({3}, {1})));
  EXPECT_FALSE(allclose(c({{3, 1}}), from_vector<float>({3}, {1})));
}

TEST(Complex, RefusesOrderAndRealOnlyOps) {
  const Tensor z = c({{1, 2}});
  for (auto f : {+[](const Tensor& t) { return floor(t); },
                 +[](const Tensor& t) { return relu(t); },
                 +[](const Tensor& t) { return sigmoid(t); },
                 +[](const Tensor& t) { return lt(t, t); },
                 +[](const Tensor& t) { return maximum(t, t); }}) {
    try {
      (void)f(z);
      FAIL() << "complex input must be refused";
    } catch (const DTypeError& e) {
      testing::check_error(e, "E2201", {"complex"});
    }
  }
}

TEST(Complex, CumprodIsTheRunningProduct) {
  // (i, i, 2): i, i^2 = -1, -2; exclusive 1, i, -1; reversed 2, 2i, -2.
  const Tensor z = from_vector<c64>({{0, 1}, {0, 1}, {2, 0}}, {3});
  expect_near_complex(cumprod(z, 0), {{0, 1}, {-1, 0}, {-2, 0}}, 0);
  expect_near_complex(cumprod(z, 0, /*exclusive=*/true),
                      {{1, 0}, {0, 1}, {-1, 0}}, 0);
  expect_near_complex(cumprod(z, 0, false, /*reverse=*/true),
                      {{-2, 0}, {0, 2}, {2, 0}}, 0);
  EXPECT_EQ(cumprod(z, 0).dtype(), DType::C64);
  // Along the second axis of a 2 x 2, c128: rows (1+i, 1-i) -> (1+i, 2).
  const Tensor m =
      from_vector<c128>({{1, 1}, {1, -1}, {0, 2}, {0, 0.5}}, {2, 2});
  expect_near_complex(cumprod(m, 1), {{1, 1}, {2, 0}, {0, 2}, {-1, 0}}, 0);
}

TEST(Complex, CopiesAndWhereMoveWholeElements) {
  // Strided copies of 16-byte elements, and where over complex values.
  const Tensor z = from_vector<c128>({{1, 2}, {3, 4}, {5, 6}, {7, 8}}, {2, 2});
  expect_near_complex(z.transpose(0, 1).contiguous(),
                      {{1, 2}, {5, 6}, {3, 4}, {7, 8}}, 0);
  const Tensor cond = from_vector<bool>({true, false}, {2});
  expect_near_complex(where(cond, z.select(0, 0), z.select(0, 1)),
                      {{1, 2}, {7, 8}}, 0);
  expect_near_complex(full({2}, Scalar(c128(0.5, -1)), DType::C64),
                      {{0.5, -1}, {0.5, -1}}, 0);
  Tensor t = zeros({1}, DType::C64);
  t.set({0}, Scalar(c128(2, 3)));
  EXPECT_EQ(t.item_scalar().to<c128>(), c128(2, 3));
}

TEST(Complex, PrintsAsNumPy) {
  std::ostringstream a;
  a << c({{1, 2}, {3, -4.5f}});
  EXPECT_EQ(a.str(), "tensor([1.+2.j , 3.-4.5j], shape=(2,), dtype=c64)");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  std::ostringstream b;
  b << from_vector<c128>({{1, 2}, {-3, -4.5}, {nan, 1}, {1, inf}}, {2, 2});
  // numpy: array([[ 1.+2.j , -3.-4.5j],
  //               [nan+1.j ,  1.+infj]])
  EXPECT_EQ(b.str(),
            "tensor([[ 1.+2.j , -3.-4.5j],\n        [nan+1.j ,  1.+infj]], "
            "shape=(2, 2), dtype=c128)");
}

}  // namespace
}  // namespace tessel
