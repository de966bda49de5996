// The Fourier transform ops: axes, lengths (pad or trim), dtypes and the
// norm's scale here; the transform of contiguous c128 rows is the
// backend's (fft_rows). Every op works on c128 internally and rounds to
// the result dtype once, so an n-dimensional transform of c64 data is not
// rounded between its axes.
#include "tessel/ops/fft.hpp"

#include <cmath>
#include <complex>
#include <numbers>
#include <string_view>
#include <vector>

#include "core/check.hpp"
#include "ops/operands.hpp"
#include "tessel/ops/complex.hpp"
#include "tessel/ops/elementwise.hpp"
#include "tessel/ops/factories.hpp"
#include "tessel/ops/indexing.hpp"

namespace tessel::fft {

namespace {

// The complex dtype a transform of x returns (complex inputs keep theirs).
DType complex_result(DType t) {
  if (is_complex(t)) return t;
  return complex_type_for(
      float_result_type(is_byte_addressable(t) ? t : DType::F32));
}

Norm swap_direction(Norm norm) {
  return norm == Norm::Backward  ? Norm::Forward
         : norm == Norm::Forward ? Norm::Backward
                                 : Norm::Ortho;
}

double scale_of(Norm norm, std::int64_t len, bool inverse) {
  switch (norm) {
    case Norm::Backward: return inverse ? 1.0 / static_cast<double>(len) : 1.0;
    case Norm::Forward: return inverse ? 1.0 : 1.0 / static_cast<double>(len);
    case Norm::Ortho: break;
  }
  return 1.0 / std::sqrt(static_cast<double>(len));
}

std::int64_t checked_length(std::int64_t len, const char* op) {
  TESSEL_CHECK(len >= 1, BadShape, op,
               "invalid number of data points ({}): a transform needs at "
               "least one",
               len);
  return len;
}

// x with axis `axis` trimmed or zero-padded to `len`.
Tensor resize_axis(const Tensor& x, std::int64_t axis, std::int64_t len) {
  const std::int64_t have = x.shape()[static_cast<std::size_t>(axis)];
  if (have == len) return x;
  if (have > len) return x.slice(axis, 0, len);
  Shape shape = x.shape();
  shape[static_cast<std::size_t>(axis)] = len;
  Tensor out = zeros(shape, x.dtype(), x.device());
  if (x.numel() > 0) out.slice(axis, 0, have).copy_(x);
  return out;
}

// The axes of a rank-r tensor with `axis` moved last, and back.
std::vector<std::int64_t> axis_last(std::int64_t rank, std::int64_t axis) {
  std::vector<std::int64_t> order;
  for (std::int64_t d = 0; d < rank; ++d) {
    if (d != axis) order.push_back(d);
  }
  order.push_back(axis);
  return order;
}

Tensor restore_axis(const Tensor& t, const std::vector<std::int64_t>& order) {
  std::vector<std::int64_t> back(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    back[static_cast<std::size_t>(order[i])] = static_cast<std::int64_t>(i);
  }
  return t.permute(back);
}

// On the parts: a real product, so an infinite part stays NaN-free.
void scale_in_place(const Tensor& t, double scale) {
  if (scale != 1.0 && t.numel() > 0) mul_(view_as_real(t), scale);
}

// The transform of c128 x along `axis` (normalised), of length n (the
// axis's own by default).
Tensor c2c_axis(const Tensor& x_in, std::int64_t axis,
                std::optional<std::int64_t> n, Norm norm, bool inverse,
                const char* op) {
  const std::int64_t len = checked_length(
      n.value_or(x_in.shape()[static_cast<std::size_t>(axis)]), op);
  const Tensor x = resize_axis(x_in, axis, len);
  // The axis last and contiguous: the rows the backend transforms.
  const auto order = axis_last(x.rank(), axis);
  const Tensor rows = x.permute(order).contiguous();
  Tensor out = empty(rows.shape(), DType::C128, x.device());
  if (out.numel() > 0) ops::backend_of(out).fft_rows(rows, out, inverse);
  scale_in_place(out, scale_of(norm, len, inverse));
  return restore_axis(out, order);
}

// rfft of real rows of even length n through one complex transform of
// half the length: z_j = x_2j + i x_2j+1 (a view of the f64 rows), Z its
// transform, then X_k = E_k + e^(-2 pi i k/n) O_k for k <= n/2 with
// E_k = (Z_k + conj Z_(n/2-k)) / 2 and O_k = (Z_k - conj Z_(n/2-k)) / 2i.
// Half the transform work of rfft through the full complex transform.
Tensor r2c_even_rows(const Tensor& rows, std::int64_t n) {
  const std::int64_t half = n / 2;
  Shape pairs = rows.shape();
  pairs.back() = half;
  pairs.push_back(2);
  const Tensor z = view_as_complex(rows.reshape(pairs));
  Tensor spectrum = empty(z.shape(), DType::C128, rows.device());
  if (spectrum.numel() > 0)
    ops::backend_of(spectrum).fft_rows(z, spectrum, false);
  const Tensor ext = concat({spectrum, spectrum.slice(-1, 0, 1)}, -1);
  const Tensor mirrored = conj(flip(ext, {-1}));
  const Tensor even = mul(add(ext, mirrored), 0.5);
  const Tensor odd =
      mul(sub(ext, mirrored), Scalar(std::complex<double>(0, -0.5)));
  const Tensor k = arange(0, half + 1, 1, DType::F64).to(rows.device());
  const Tensor angle = mul(k, -2.0 * std::numbers::pi / static_cast<double>(n));
  // e^(-i pi) exactly (sin(-pi) is -1.2e-16 in f64), so that the Nyquist
  // term of a real signal is real, as the zero-frequency term is.
  const Tensor twiddle = where(eq(k, static_cast<double>(half)),
                               Scalar(std::complex<double>(-1.0, 0.0)),
                               make_complex(cos(angle), sin(angle)));
  return add(even, mul(twiddle, odd));
}

std::int64_t checked_axis(const Tensor& x, std::int64_t axis, const char* op) {
  const ops::CheckedOperands checked(op, x);
  TESSEL_CHECK(x.rank() >= 1, BadShape, op,
               "needs at least one axis, got a rank-0 tensor");
  return normalize_axis(axis, x.rank(), op);
}

// rfft in c128, before the final rounding.
Tensor r2c(const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis,
           Norm norm, const char* op) {
  const std::int64_t a = checked_axis(x, axis, op);
  TESSEL_CHECK(!is_complex(x.dtype()), BadDType, op,
               "takes a real tensor, got {} (use fft)", dtype_name(x.dtype()));
  const std::int64_t len =
      checked_length(n.value_or(x.shape()[static_cast<std::size_t>(a)]), op);
  if (len % 2 != 0) {
    return c2c_axis(x.to(DType::C128), a, len, norm, false, op)
        .slice(a, 0, len / 2 + 1);
  }
  const auto order = axis_last(x.rank(), a);
  const Tensor rows =
      resize_axis(x.to(DType::F64), a, len).permute(order).contiguous();
  Tensor out = r2c_even_rows(rows, len);
  scale_in_place(out, scale_of(norm, len, false));
  return restore_axis(out, order);
}

// irfft in f64, before the final rounding: the Hermitian extension of
// the half spectrum, an inverse c2c, and its real part (which drops the
// imaginary parts of the zero and Nyquist terms, as pocketfft's c2r).
Tensor c2r(const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis,
           Norm norm, const char* op) {
  const std::int64_t a = checked_axis(x, axis, op);
  const std::int64_t m = x.shape()[static_cast<std::size_t>(a)];
  const std::int64_t len = checked_length(n.value_or(2 * (m - 1)), op);
  const std::int64_t half = len / 2 + 1;
  const Tensor xc = resize_axis(x.to(DType::C128), a, half);
  Shape shape = xc.shape();
  shape[static_cast<std::size_t>(a)] = len;
  Tensor full = empty(shape, DType::C128, x.device());
  if (full.numel() > 0) {
    full.slice(a, 0, half).copy_(xc);
    // full[k] = conj(x[len - k]) for k in [half, len).
    const std::int64_t tail = len - half;
    if (tail > 0) {
      full.slice(a, half, len).copy_(conj(flip(xc.slice(a, 1, 1 + tail), {a})));
    }
  }
  return real(c2c_axis(full, a, len, norm, true, op));
}

struct AxisPlan {
  std::vector<std::int64_t> axes;
  std::vector<std::optional<std::int64_t>> lengths;
};

AxisPlan plan_axes(const Tensor& x, std::span<const std::int64_t> s,
                   std::span<const std::int64_t> axes, const char* op) {
  const ops::CheckedOperands checked(op, x);
  const std::int64_t rank = x.rank();
  AxisPlan p;
  if (axes.empty()) {
    TESSEL_CHECK(static_cast<std::int64_t>(s.size()) <= rank, BadShape, op,
                 "s has {} entries but the tensor has {} axes", s.size(), rank);
    const std::int64_t first =
        s.empty() ? 0 : rank - static_cast<std::int64_t>(s.size());
    for (std::int64_t d = first; d < rank; ++d) p.axes.push_back(d);
  } else {
    std::vector<bool> seen(static_cast<std::size_t>(rank), false);
    for (const std::int64_t axis : axes) {
      const std::int64_t a = normalize_axis(axis, rank, op);
      TESSEL_CHECK(!seen[static_cast<std::size_t>(a)], BadShape, op,
                   "axis {} is given twice", a);
      seen[static_cast<std::size_t>(a)] = true;
      p.axes.push_back(a);
    }
  }
  TESSEL_CHECK(s.empty() || s.size() == p.axes.size(), BadShape, op,
               "s has {} entries for {} axes", s.size(), p.axes.size());
  TESSEL_CHECK(!p.axes.empty(), BadShape, op,
               "needs at least one axis to transform");
  for (std::size_t i = 0; i < p.axes.size(); ++i) {
    if (s.empty() || s[i] == -1) {
      p.lengths.push_back(std::nullopt);
    } else {
      p.lengths.push_back(s[i]);
    }
  }
  return p;
}

Tensor c2c_nd(const Tensor& x, std::span<const std::int64_t> s,
              std::span<const std::int64_t> axes, Norm norm, bool inverse,
              const char* op) {
  const AxisPlan p = plan_axes(x, s, axes, op);
  Tensor r = x.to(DType::C128);
  for (std::size_t i = p.axes.size(); i-- > 0;) {
    r = c2c_axis(r, p.axes[i], p.lengths[i], norm, inverse, op);
  }
  return r.to(complex_result(x.dtype()));
}

}  // namespace

Norm parse_norm(std::string_view name) {
  if (name == "backward") return Norm::Backward;
  if (name == "ortho") return Norm::Ortho;
  if (name == "forward") return Norm::Forward;
  detail::fail(ErrorCode::BadShape, "fft",
               "norm must be 'backward', 'ortho' or 'forward', got '{}'", name);
}

Tensor fft(const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis,
           Norm norm) {
  const std::int64_t a = checked_axis(x, axis, "fft");
  return c2c_axis(x.to(DType::C128), a, n, norm, false, "fft")
      .to(complex_result(x.dtype()));
}

Tensor ifft(const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis,
            Norm norm) {
  const std::int64_t a = checked_axis(x, axis, "ifft");
  return c2c_axis(x.to(DType::C128), a, n, norm, true, "ifft")
      .to(complex_result(x.dtype()));
}

Tensor rfft(const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis,
            Norm norm) {
  return r2c(x, n, axis, norm, "rfft").to(complex_result(x.dtype()));
}

Tensor irfft(const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis,
             Norm norm) {
  return c2r(x, n, axis, norm, "irfft")
      .to(complex_component_type(complex_result(x.dtype())))
      .contiguous();
}

Tensor hfft(const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis,
            Norm norm) {
  return c2r(conj(x), n, axis, swap_direction(norm), "hfft")
      .to(complex_component_type(complex_result(x.dtype())))
      .contiguous();
}

Tensor ihfft(const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis,
             Norm norm) {
  return conj(r2c(x, n, axis, swap_direction(norm), "ihfft"))
      .to(complex_result(x.dtype()));
}

Tensor fftn(const Tensor& x, std::span<const std::int64_t> s,
            std::span<const std::int64_t> axes, Norm norm) {
  return c2c_nd(x, s, axes, norm, false, "fftn");
}

Tensor ifftn(const Tensor& x, std::span<const std::int64_t> s,
             std::span<const std::int64_t> axes, Norm norm) {
  return c2c_nd(x, s, axes, norm, true, "ifftn");
}

Tensor rfftn(const Tensor& x, std::span<const std::int64_t> s,
             std::span<const std::int64_t> axes, Norm norm) {
  const AxisPlan p = plan_axes(x, s, axes, "rfftn");
  Tensor r = r2c(x, p.lengths.back(), p.axes.back(), norm, "rfftn");
  for (std::size_t i = p.axes.size() - 1; i-- > 0;) {
    r = c2c_axis(r, p.axes[i], p.lengths[i], norm, false, "rfftn");
  }
  return r.to(complex_result(x.dtype()));
}

Tensor irfftn(const Tensor& x, std::span<const std::int64_t> s,
              std::span<const std::int64_t> axes, Norm norm) {
  const AxisPlan p = plan_axes(x, s, axes, "irfftn");
  Tensor r = x.to(DType::C128);
  for (std::size_t i = 0; i + 1 < p.axes.size(); ++i) {
    r = c2c_axis(r, p.axes[i], p.lengths[i], norm, true, "irfftn");
  }
  return c2r(r, p.lengths.back(), p.axes.back(), norm, "irfftn")
      .to(complex_component_type(complex_result(x.dtype())))
      .contiguous();
}

}  // namespace tessel::fft
