// Fourier transforms by hand: small transforms worked on paper, closed
// forms (a shifted impulse gives the twiddles e^(-2 pi i k/n)) at lengths
// that take each path (powers of two, mixed radix, Bluestein's primes),
// the norms, padding and trimming, the real transforms' lengths and the
// errors. tests/python/test_fft.py compares with NumPy's pocketfft.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <vector>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

using c128 = std::complex<double>;
using testing::expect_near_complex;
using testing::values;

Tensor z(std::vector<c128> v) {
  const auto n = static_cast<std::int64_t>(v.size());
  return from_vector<c128>(v, {n});
}

TEST(Fft, SmallTransformsByHand) {
  // fft([1, 2, 3, 4]) = [10, -2 + 2i, -2, -2 - 2i].
  expect_near_complex(fft::fft(z({1, 2, 3, 4})), {10, {-2, 2}, -2, {-2, -2}},
                      1e-15);
  // An impulse has a flat spectrum; a constant is an impulse at 0.
  expect_near_complex(fft::fft(z({1, 0, 0})), {1, 1, 1}, 1e-15);
  expect_near_complex(fft::fft(z({2, 2, 2, 2, 2})), {10, 0, 0, 0, 0}, 1e-14);
  // ifft undoes fft: (1/4) sum_k X_k e^(2 pi i jk/4).
  expect_near_complex(fft::ifft(z({10, {-2, 2}, -2, {-2, -2}})), {1, 2, 3, 4},
                      1e-15);
  // n pads with zeros: fft([1, 1, 0, 0]) = [2, 1 - i, 0, 1 + i]; and trims.
  expect_near_complex(fft::fft(z({1, 1}), 4), {2, {1, -1}, 0, {1, 1}}, 1e-15);
  expect_near_complex(fft::fft(z({1, 2, 3, 4}), 2), {3, -1}, 1e-15);
}

TEST(Fft, ShiftedImpulseGivesTheTwiddlesAtEveryLength) {
  // fft(e_1)[k] = e^(-2 pi i k / n): powers of two, mixed radix, primes
  // below and above the direct limit (Bluestein), a prime times a power.
  for (const std::int64_t n :
       {1, 2, 8, 12, 30, 31, 37, 97, 1009, 3 * 1024, 2 * 101}) {
    std::vector<c128> x(static_cast<std::size_t>(n), 0.0);
    x[n > 1 ? 1 : 0] = 1.0;
    std::vector<c128> want(static_cast<std::size_t>(n));
    for (std::int64_t k = 0; k < n; ++k) {
      const double angle = -2.0 * std::numbers::pi *
                           static_cast<double>(k * (n > 1 ? 1 : 0)) /
                           static_cast<double>(n);
      want[static_cast<std::size_t>(k)] = {std::cos(angle), std::sin(angle)};
    }
    SCOPED_TRACE(n);
    expect_near_complex(fft::fft(z(x)), want, 4e-15);
    // And back: ifft of the twiddles is the impulse.
    expect_near_complex(fft::ifft(z(want)), x, 4e-15);
  }
}

TEST(Fft, NormsScaleOneDirectionOrBoth) {
  const Tensor x = z({1, 2, 3, 4});
  expect_near_complex(fft::fft(x, std::nullopt, -1, fft::Norm::Forward),
                      {2.5, {-0.5, 0.5}, -0.5, {-0.5, -0.5}}, 1e-15);
  expect_near_complex(fft::fft(x, std::nullopt, -1, fft::Norm::Ortho),
                      {5, {-1, 1}, -1, {-1, -1}}, 1e-15);
  expect_near_complex(fft::ifft(fft::fft(x, std::nullopt, -1, fft::Norm::Ortho),
                                std::nullopt, -1, fft::Norm::Ortho),
                      {1, 2, 3, 4}, 1e-15);
  EXPECT_EQ(fft::parse_norm("forward"), fft::Norm::Forward);
  EXPECT_THROW((void)fft::parse_norm("both"), ShapeError);
}

TEST(Fft, RealTransformsAndTheirLengths) {
  const Tensor x = from_vector<float>({1, 2, 3, 4}, {4});
  const Tensor half = fft::rfft(x);
  EXPECT_EQ(half.dtype(), DType::C64);
  expect_near_complex(half, {10, {-2, 2}, -2}, 1e-6);
  // The zero-frequency and Nyquist terms of a real signal are real,
  // exactly (even lengths take the half-length path).
  const auto parts = values<float>(imag(half));
  EXPECT_EQ(parts[0], 0.0f);
  EXPECT_EQ(parts[2], 0.0f);
  const Tensor back = fft::irfft(half);
  EXPECT_EQ(back.dtype(), DType::F32);
  EXPECT_EQ(values<float>(back), (std::vector<float>{1, 2, 3, 4}));
  // An odd length needs n: irfft of rfft([1, 2, 3]) with n = 3.
  const Tensor odd = from_vector<double>({1, 2, 3}, {3});
  expect_near_complex(fft::irfft(fft::rfft(odd), 3), {1, 2, 3}, 1e-15);
  // The imaginary parts of the zero and Nyquist terms do not matter.
  expect_near_complex(fft::irfft(z({{10, 7}, {-2, 2}, {-2, 5}})), {1, 2, 3, 4},
                      1e-15);
  // hfft of a real half spectrum [1, 0, 0] (n = 4) is the real signal
  // with a flat spectrum, unscaled: [1, 1, 1, 1].
  expect_near_complex(fft::hfft(z({1, 0, 0})), {1, 1, 1, 1}, 1e-15);
  expect_near_complex(fft::ihfft(from_vector<double>({1, 1, 1, 1}, {4})),
                      {1, 0, 0}, 1e-15);
}

TEST(Fft, ManyAxes) {
  // A 2 x 2 transform of [[1, 2], [3, 4]]: [[10, -2], [-4, 0]].
  const Tensor x = from_vector<c128>({1, 2, 3, 4}, {2, 2});
  expect_near_complex(fft::fftn(x), {10, -2, -4, 0}, 1e-15);
  const std::int64_t first[] = {0};
  // Along axis 0 only: [[4, 6], [-2, -2]].
  expect_near_complex(fft::fftn(x, {}, first), {4, 6, -2, -2}, 1e-15);
  expect_near_complex(fft::ifftn(fft::fftn(x)), {1, 2, 3, 4}, 1e-15);
  const Tensor r = from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor spectrum = fft::rfftn(r);
  EXPECT_EQ(spectrum.shape(), (Shape{2, 2}));
  const std::int64_t s[] = {2, 3};
  expect_near_complex(fft::irfftn(spectrum, s), {1, 2, 3, 4, 5, 6}, 1e-14);
  // s = -1 keeps an axis's length.
  const std::int64_t keep[] = {-1, 4};
  EXPECT_EQ(fft::fftn(r, keep).shape(), (Shape{2, 4}));
}

TEST(Fft, DTypesAndErrors) {
  EXPECT_EQ(fft::fft(ones({4}, DType::F64)).dtype(), DType::C128);
  EXPECT_EQ(fft::fft(ones({4}, DType::I32)).dtype(), DType::C64);
  EXPECT_EQ(fft::fft(ones({4}, DType::C64)).dtype(), DType::C64);
  EXPECT_EQ(fft::irfft(ones({3}, DType::C128)).dtype(), DType::F64);
  EXPECT_THROW((void)fft::fft(full({}, 1.0)), ShapeError);            // rank 0
  EXPECT_THROW((void)fft::fft(ones({4}), 0), ShapeError);             // n < 1
  EXPECT_THROW((void)fft::irfft(ones({1}, DType::C64)), ShapeError);  // n = 0
  EXPECT_THROW((void)fft::rfft(ones({4}, DType::C64)), DTypeError);
  EXPECT_THROW((void)fft::fft(ones({4}), std::nullopt, 1), ShapeError);
  const std::int64_t twice[] = {0, 0};
  EXPECT_THROW((void)fft::fftn(ones({2, 2}), {}, twice), ShapeError);
  // Zero-size batches transform to zero-size results.
  EXPECT_EQ(fft::fft(ones({0, 4})).shape(), (Shape{0, 4}));
}

}  // namespace
}  // namespace tessel
