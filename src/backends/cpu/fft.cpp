// Fourier transforms of any length, written here: Debian's FFTW is GPL
// and pocketfft (NumPy's and PyTorch's engine) is not packaged, and the
// array API's fft extension needs only the plain complex transform. Lengths
// whose prime factors are all small run a recursive mixed-radix
// Cooley-Tukey (decimation in time; radix 2 to 5 written out, a generic
// radix-p butterfly above); a length with a large prime factor runs
// Bluestein's chirp-z convolution
// through a power-of-two transform, so every length costs O(n log n).
// Everything is computed in f64 with twiddles from sin/cos of exactly
// reduced angles, so the error grows like eps * log n, as pocketfft's.
#include <cmath>
#include <complex>
#include <cstdint>
#include <numbers>
#include <vector>

#include "backends/cpu/fft_kernels.hpp"
#include "tessel/core/parallel.hpp"

namespace tessel::cpu {

namespace {

using C = std::complex<double>;

// The textbook product: std::complex's operator* calls the C runtime's
// Annex G routine (__muldc3, not inlined), several times slower, and its
// recovery of infinities has no use inside a transform.
inline C mul(C a, C b) {
  return {a.real() * b.real() - a.imag() * b.imag(),
          a.real() * b.imag() + a.imag() * b.real()};
}

// a * (sign i): a quarter turn, exact.
inline C quarter_turn(C a, double sign) {
  return sign < 0 ? C(a.imag(), -a.real()) : C(-a.imag(), a.real());
}

// The largest prime factor the Cooley-Tukey path takes: its radix-p
// butterfly costs p^2 per group, so longer prime runs go to Bluestein.
constexpr std::int64_t kMaxDirectPrime = 31;

// e^(sign 2 pi i k / n) for k < n, each from its own exactly reduced angle
// (using the octant symmetries would save sin/cos calls, not accuracy).
std::vector<C> twiddles(std::int64_t n, double sign) {
  std::vector<C> w(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k) {
    // k/n in [0, 1): fold to [-1/2, 1/2] so the angle is at most pi.
    double f = static_cast<double>(k) / static_cast<double>(n);
    if (f > 0.5) f -= 1.0;
    const double angle = sign * 2.0 * std::numbers::pi * f;
    w[static_cast<std::size_t>(k)] = {std::cos(angle), std::sin(angle)};
  }
  return w;
}

std::vector<std::int64_t> factorize(std::int64_t n) {
  std::vector<std::int64_t> factors;
  while (n % 4 == 0) {
    factors.push_back(4);
    n /= 4;
  }
  for (std::int64_t p = 2; p * p <= n; ++p) {
    while (n % p == 0) {
      factors.push_back(p);
      n /= p;
    }
  }
  if (n > 1) factors.push_back(n);
  return factors;
}

// A mixed-radix transform of one length: its factors and twiddles.
class MixedRadix {
 public:
  MixedRadix(std::int64_t n, double sign)
      : n_(n), sign_(sign), factors_(factorize(n)), w_(twiddles(n, sign)) {}

  // out[0..n) = DFT of in[0], in[stride], ..., in[(n-1) stride].
  void run(const C* in, std::int64_t stride, C* out,
           std::vector<C>& scratch) const {
    if (scratch.size() < static_cast<std::size_t>(largest_factor())) {
      scratch.resize(static_cast<std::size_t>(largest_factor()));
    }
    step(in, stride, out, n_, 0, scratch.data());
  }

  std::int64_t largest_factor() const {
    std::int64_t m = 1;
    for (auto p : factors_) m = std::max(m, p);
    return m;
  }

 private:
  // The DFT of length `len` of in[0], in[stride], ...; factors from
  // `level` on. Twiddles of this length are w_[j * (n_ / len)].
  void step(const C* in, std::int64_t stride, C* out, std::int64_t len,
            std::size_t level, C* t) const {
    if (len == 1) {
      out[0] = in[0];
      return;
    }
    const std::int64_t p = factors_[level];
    const std::int64_t m = len / p;
    for (std::int64_t q = 0; q < p; ++q) {
      step(in + q * stride, stride * p, out + q * m, m, level + 1, t);
    }
    const std::int64_t unit = n_ / len;  // w_len^j = w_[j * unit]
    const std::int64_t p_unit = n_ / p;  // w_p^j = w_[j * p_unit]
    for (std::int64_t k = 0; k < m; ++k) {
      // t_q = (sub-transform q at k) * w_len^(q k) (q k < len: no wrap),
      // then a p-point DFT; radices 2 to 5 written out.
      t[0] = out[k];
      for (std::int64_t q = 1; q < p; ++q) {
        t[q] = mul(out[q * m + k], w_[static_cast<std::size_t>(q * k * unit)]);
      }
      switch (p) {
        case 2:
          out[k] = t[0] + t[1];
          out[k + m] = t[0] - t[1];
          break;
        case 3: {
          // w_3 = -1/2 + sign i sqrt(3)/2.
          const C s = t[1] + t[2];
          const C d = quarter_turn(t[1] - t[2], sign_) * kHalfSqrt3;
          const C base = t[0] - 0.5 * s;
          out[k] = t[0] + s;
          out[k + m] = base + d;
          out[k + 2 * m] = base - d;
          break;
        }
        case 4: {
          const C a0 = t[0] + t[2];
          const C a1 = t[0] - t[2];
          const C a2 = t[1] + t[3];
          const C a3 = quarter_turn(t[1] - t[3], sign_);
          out[k] = a0 + a2;
          out[k + m] = a1 + a3;
          out[k + 2 * m] = a0 - a2;
          out[k + 3 * m] = a1 - a3;
          break;
        }
        case 5: {
          // y_r = t0 + sum over the pairs (q, 5 - q) of
          // (t_q + t_5-q) cos(2 pi q r / 5) + sign i (t_q - t_5-q) sin(...).
          const C a1 = t[1] + t[4];
          const C b1 = t[1] - t[4];
          const C a2 = t[2] + t[3];
          const C b2 = t[2] - t[3];
          const C r1 = t[0] + kCos1 * a1 + kCos2 * a2;
          const C r2 = t[0] + kCos2 * a1 + kCos1 * a2;
          const C i1 = quarter_turn(kSin1 * b1 + kSin2 * b2, sign_);
          const C i2 = quarter_turn(kSin2 * b1 - kSin1 * b2, sign_);
          out[k] = t[0] + a1 + a2;
          out[k + m] = r1 + i1;
          out[k + 2 * m] = r2 + i2;
          out[k + 3 * m] = r2 - i2;
          out[k + 4 * m] = r1 - i1;
          break;
        }
        default:
          for (std::int64_t r = 0; r < p; ++r) {
            C sum = t[0];
            for (std::int64_t q = 1; q < p; ++q) {
              sum +=
                  mul(t[q], w_[static_cast<std::size_t>((q * r % p) * p_unit)]);
            }
            out[k + r * m] = sum;
          }
      }
    }
  }

  static constexpr double kHalfSqrt3 = 0.86602540378443864676;
  // cos and sin of 2 pi / 5 and 4 pi / 5.
  static constexpr double kCos1 = 0.30901699437494742410;
  static constexpr double kCos2 = -0.80901699437494742410;
  static constexpr double kSin1 = 0.95105651629515357212;
  static constexpr double kSin2 = 0.58778525229247312917;

  std::int64_t n_;
  double sign_;
  std::vector<std::int64_t> factors_;
  std::vector<C> w_;
};

// Bluestein: jk = (j^2 + k^2 - (k - j)^2) / 2 turns the DFT into a
// convolution with the chirp c_j = e^(sign pi i j^2 / n), done by three
// power-of-two transforms of length m >= 2n - 1.
class Bluestein {
 public:
  Bluestein(std::int64_t n, double sign)
      : n_(n),
        m_(power_of_two_at_least(2 * n - 1)),
        forward_(m_, -1.0),
        backward_(m_, 1.0),
        chirp_(static_cast<std::size_t>(n)) {
    // j^2 mod 2n kept exactly, (j + 1)^2 = j^2 + 2j + 1, so that the
    // angle stays below 2 pi and no product overflows.
    std::int64_t square = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      const double angle = sign * std::numbers::pi *
                           static_cast<double>(square) / static_cast<double>(n);
      chirp_[static_cast<std::size_t>(j)] = {std::cos(angle), std::sin(angle)};
      square = (square + 2 * j + 1) % (2 * n);
    }
    // The transform of b_j = conj(c_|j|), j in (-n, n), wrapped into m.
    std::vector<C> b(static_cast<std::size_t>(m_));
    for (std::int64_t j = 0; j < n; ++j) {
      const C v = std::conj(chirp_[static_cast<std::size_t>(j)]);
      b[static_cast<std::size_t>(j)] = v;
      if (j > 0) b[static_cast<std::size_t>(m_ - j)] = v;
    }
    kernel_.resize(static_cast<std::size_t>(m_));
    std::vector<C> scratch;
    forward_.run(b.data(), 1, kernel_.data(), scratch);
  }

  void run(const C* in, C* out, std::vector<C>& a, std::vector<C>& fa,
           std::vector<C>& scratch) const {
    a.assign(static_cast<std::size_t>(m_), C(0.0, 0.0));
    for (std::int64_t j = 0; j < n_; ++j) {
      a[static_cast<std::size_t>(j)] =
          mul(in[j], chirp_[static_cast<std::size_t>(j)]);
    }
    fa.resize(static_cast<std::size_t>(m_));
    forward_.run(a.data(), 1, fa.data(), scratch);
    for (std::int64_t k = 0; k < m_; ++k) {
      fa[static_cast<std::size_t>(k)] =
          mul(fa[static_cast<std::size_t>(k)],
              kernel_[static_cast<std::size_t>(k)]);
    }
    backward_.run(fa.data(), 1, a.data(), scratch);
    const double scale = 1.0 / static_cast<double>(m_);
    for (std::int64_t k = 0; k < n_; ++k) {
      out[k] = mul(a[static_cast<std::size_t>(k)],
                   chirp_[static_cast<std::size_t>(k)]) *
               scale;
    }
  }

 private:
  static std::int64_t power_of_two_at_least(std::int64_t v) {
    std::int64_t p = 1;
    while (p < v) p *= 2;
    return p;
  }

  std::int64_t n_;
  std::int64_t m_;
  MixedRadix forward_;
  MixedRadix backward_;
  std::vector<C> chirp_;
  std::vector<C> kernel_;
};

bool has_large_prime(std::int64_t n) {
  for (const std::int64_t p : factorize(n)) {
    if (p > kMaxDirectPrime) return true;
  }
  return false;
}

}  // namespace

void fft_rows(const KernelInput& in, const KernelOutput& out, bool inverse) {
  const std::int64_t n = in.shape().back();
  const std::int64_t rows = n == 0 ? 0 : in.numel() / n;
  const double sign = inverse ? 1.0 : -1.0;
  const C* x = in.const_data<C>();
  C* y = out.data<C>();
  const std::int64_t grain =
      std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(n, 1));
  if (has_large_prime(n)) {
    const Bluestein plan(n, sign);
    parallel_for(0, rows, grain, [&](std::int64_t lo, std::int64_t hi) {
      std::vector<C> a, fa, scratch;
      for (std::int64_t r = lo; r < hi; ++r)
        plan.run(x + r * n, y + r * n, a, fa, scratch);
    });
    return;
  }
  const MixedRadix plan(n, sign);
  parallel_for(0, rows, grain, [&](std::int64_t lo, std::int64_t hi) {
    std::vector<C> scratch;
    for (std::int64_t r = lo; r < hi; ++r)
      plan.run(x + r * n, 1, y + r * n, scratch);
  });
}

}  // namespace tessel::cpu
