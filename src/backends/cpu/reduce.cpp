// Reductions over the (A, R, B) view. f32, bf16 and f16 sums, extremes and
// arg-extremes run on the SIMD kernels; everything else on one scalar
// reducer per output element. Long rows are split into fixed chunks whose
// partial results are combined in order, so results do not depend on the
// thread count.
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "backends/cpu/elementwise_common.hpp"
#include "backends/cpu/reduce_kernels.hpp"
#include "backends/cpu/simd/reduce_simd.hpp"
#include "core/dispatch.hpp"
#include "tessel/core/parallel.hpp"

namespace tessel::cpu {

namespace {

constexpr std::int64_t kChunk = std::int64_t{1} << 16;  // elements per partial
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Neumaier's compensated summation in f64; Inf and NaN pass through.
struct CompensatedSum {
  double sum = 0.0;
  double carry = 0.0;
  void add(double x) {
    const double t = sum + x;
    if (std::isfinite(t)) {
      carry += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
    }
    sum = t;
  }
  double value() const { return std::isfinite(sum) ? sum + carry : sum; }
};

template <class T>
double to_double(T v) {
  return static_cast<double>(convert<compute_t<T>>(v));
}

// ---- the scalar reducer: one output from R elements `stride` apart ----

template <class T, class Out>
void reduce_one(ReduceOp op, double correction, const T* x, std::int64_t stride,
                std::int64_t n, Out* out) {
  using C = compute_t<T>;
  constexpr bool is_float = std::is_floating_point_v<C>;
  auto at = [&](std::int64_t r) { return x[r * stride]; };
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Mean:
    case ReduceOp::SumSquares:
    case ReduceOp::L1:
    case ReduceOp::L2: {
      auto term = [&](double v) {
        if (op == ReduceOp::SumSquares || op == ReduceOp::L2) return v * v;
        if (op == ReduceOp::L1) return std::fabs(v);
        return v;
      };
      if constexpr (!is_float) {
        if (op != ReduceOp::Mean && op != ReduceOp::L2) {
          // Integers: exact, wrapping in 64 bits.
          std::uint64_t s = 0;
          for (std::int64_t r = 0; r < n; ++r) {
            const auto v =
                static_cast<std::uint64_t>(static_cast<std::int64_t>(at(r)));
            if (op == ReduceOp::SumSquares)
              s += v * v;
            else if (op == ReduceOp::L1)
              s += static_cast<std::int64_t>(v) < 0 ? 0 - v : v;
            else
              s += v;
          }
          *out = std::is_unsigned_v<C>
                     ? convert<Out>(s)
                     : convert<Out>(static_cast<std::int64_t>(s));
          return;
        }
      }
      CompensatedSum s;
      for (std::int64_t r = 0; r < n; ++r) s.add(term(to_double(at(r))));
      double v = s.value();
      if (op == ReduceOp::Mean) v /= static_cast<double>(n);
      if (op == ReduceOp::L2) v = std::sqrt(v);
      *out = convert<Out>(v);
      return;
    }
    case ReduceOp::Prod: {
      if constexpr (!is_float) {
        std::uint64_t p = 1;
        for (std::int64_t r = 0; r < n; ++r) {
          p *= static_cast<std::uint64_t>(static_cast<std::int64_t>(at(r)));
        }
        *out = std::is_unsigned_v<C>
                   ? convert<Out>(p)
                   : convert<Out>(static_cast<std::int64_t>(p));
      } else {
        double p = 1.0;
        for (std::int64_t r = 0; r < n; ++r) p *= to_double(at(r));
        *out = convert<Out>(p);
      }
      return;
    }
    case ReduceOp::Max:
    case ReduceOp::Min:
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin: {
      const bool want_max = op == ReduceOp::Max || op == ReduceOp::ArgMax;
      C best = convert<C>(at(0));
      std::int64_t index = 0;
      bool nan = false;
      if constexpr (is_float) nan = std::isnan(best);
      for (std::int64_t r = 1; r < n && !nan; ++r) {
        const C v = convert<C>(at(r));
        if constexpr (is_float) {
          if (std::isnan(v)) {  // NaN is the extreme (NumPy): first one wins
            best = v;
            index = r;
            nan = true;
            break;
          }
        }
        if (want_max ? v > best : v < best) {
          best = v;
          index = r;
        }
      }
      if (op == ReduceOp::ArgMax || op == ReduceOp::ArgMin) {
        *out = convert<Out>(index);
      } else {
        *out = convert<Out>(best);
      }
      return;
    }
    case ReduceOp::LInf: {
      double m = 0.0;
      for (std::int64_t r = 0; r < n; ++r) {
        const double v = std::fabs(to_double(at(r)));
        if (std::isnan(v)) {
          m = v;
          break;
        }
        m = std::max(m, v);
      }
      *out = convert<Out>(m);
      return;
    }
    case ReduceOp::Any:
    case ReduceOp::All: {
      const bool want_any = op == ReduceOp::Any;
      bool result = !want_any;
      for (std::int64_t r = 0; r < n; ++r) {
        const bool v = convert<bool>(at(r));
        if (v == want_any) {
          result = want_any;
          break;
        }
      }
      *out = convert<Out>(result);
      return;
    }
    case ReduceOp::LogSumExp: {
      double m = -kInf;
      for (std::int64_t r = 0; r < n; ++r) {
        const double v = to_double(at(r));
        if (std::isnan(v) || v > m) m = v;
        if (std::isnan(v)) break;
      }
      if (!std::isfinite(m)) {  // all -Inf, any +Inf, or NaN
        *out = convert<Out>(m);
        return;
      }
      CompensatedSum s;
      for (std::int64_t r = 0; r < n; ++r)
        s.add(std::exp(to_double(at(r)) - m));
      *out = convert<Out>(m + std::log(s.value()));
      return;
    }
    case ReduceOp::Var:
    case ReduceOp::Std: {
      // Two passes: the mean, then the squared deviations from it.
      CompensatedSum s;
      for (std::int64_t r = 0; r < n; ++r) s.add(to_double(at(r)));
      const double mean = s.value() / static_cast<double>(n);
      CompensatedSum d2;
      for (std::int64_t r = 0; r < n; ++r) {
        const double d = to_double(at(r)) - mean;
        d2.add(d * d);
      }
      const double dof = static_cast<double>(n) - correction;
      double v = dof > 0 ? d2.value() / dof : kNaN;
      if (op == ReduceOp::Std) v = std::sqrt(v);
      *out = convert<Out>(v);
      return;
    }
  }
}

// ---- the SIMD paths ----

bool simd_kind(ReduceOp op, simd::RowReduce* kind) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Mean: *kind = simd::RowReduce::Sum; return true;
    case ReduceOp::SumSquares:
    case ReduceOp::L2: *kind = simd::RowReduce::SumSquares; return true;
    case ReduceOp::L1: *kind = simd::RowReduce::SumAbs; return true;
    case ReduceOp::Max: *kind = simd::RowReduce::Max; return true;
    case ReduceOp::Min: *kind = simd::RowReduce::Min; return true;
    case ReduceOp::LInf: *kind = simd::RowReduce::MaxAbs; return true;
    case ReduceOp::ArgMax: *kind = simd::RowReduce::ArgMax; return true;
    case ReduceOp::ArgMin: *kind = simd::RowReduce::ArgMin; return true;
    default: return false;
  }
}

bool is_sum_kind(simd::RowReduce k) {
  return k == simd::RowReduce::Sum || k == simd::RowReduce::SumSquares ||
         k == simd::RowReduce::SumAbs;
}

double finish(ReduceOp op, double v, std::int64_t n) {
  if (op == ReduceOp::Mean) return v / static_cast<double>(n);
  if (op == ReduceOp::L2) return std::sqrt(v);
  return v;
}

// Combines the partial of a later chunk into `acc` (chunks in order).
void combine(simd::RowReduce k, simd::RowResult& acc, const simd::RowResult& p,
             std::int64_t offset) {
  if (is_sum_kind(k)) {
    acc.value += p.value;
    return;
  }
  if (std::isnan(acc.value)) return;  // the first NaN stays
  const bool want_min =
      k == simd::RowReduce::Min || k == simd::RowReduce::ArgMin;
  if (std::isnan(p.value) ||
      (want_min ? p.value < acc.value : p.value > acc.value)) {
    acc.value = p.value;
    acc.index = p.index + offset;
  }
}

template <class T, class Out>
void rows_simd(ReduceOp op, simd::RowReduce kind, const T* x, Out* out,
               const ReduceShape& s) {
  const std::int64_t chunks = (s.reduce + kChunk - 1) / kChunk;
  std::vector<simd::RowResult> partial(
      static_cast<std::size_t>(s.outer * chunks));
  const std::int64_t grain =
      std::max<std::int64_t>(1, kChunk / std::max<std::int64_t>(1, s.reduce));
  parallel_for(0, s.outer * chunks, grain,
               [&](std::int64_t lo, std::int64_t hi) {
                 for (std::int64_t t = lo; t < hi; ++t) {
                   const std::int64_t a = t / chunks;
                   const std::int64_t start = (t % chunks) * kChunk;
                   const std::int64_t n = std::min(kChunk, s.reduce - start);
                   partial[static_cast<std::size_t>(t)] = simd::reduce_row(
                       kind, simd_storage<T>(), x + a * s.reduce + start, n);
                 }
               });
  for (std::int64_t a = 0; a < s.outer; ++a) {
    simd::RowResult acc = partial[static_cast<std::size_t>(a * chunks)];
    for (std::int64_t c = 1; c < chunks; ++c) {
      combine(kind, acc, partial[static_cast<std::size_t>(a * chunks + c)],
              c * kChunk);
    }
    if (op == ReduceOp::ArgMax || op == ReduceOp::ArgMin) {
      out[a] = convert<Out>(acc.index);
    } else {
      out[a] = convert<Out>(finish(op, acc.value, s.reduce));
    }
  }
}

// Column reductions: tasks are (outer index, chunk of kRowChunk rows); each
// streams whole rows into f64 partials, which are then combined in chunk
// order (so the result does not depend on the thread count).
template <class T, class Out>
void columns_simd(ReduceOp op, simd::RowReduce kind, const T* x, Out* out,
                  const ReduceShape& s) {
  constexpr std::int64_t kRowChunk = 256;
  const std::int64_t chunks = (s.reduce + kRowChunk - 1) / kRowChunk;
  const double init = kind == simd::RowReduce::Min   ? kInf
                      : kind == simd::RowReduce::Max ? -kInf
                                                     : 0.0;
  std::vector<double> partial(
      static_cast<std::size_t>(s.outer * chunks * s.inner), init);
  parallel_for(0, s.outer * chunks, 1, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t t = lo; t < hi; ++t) {
      const std::int64_t a = t / chunks;
      const std::int64_t r0 = (t % chunks) * kRowChunk;
      const std::int64_t rows = std::min(kRowChunk, s.reduce - r0);
      simd::reduce_columns(kind, simd_storage<T>(),
                           x + (a * s.reduce + r0) * s.inner, rows, s.inner,
                           s.inner, partial.data() + t * s.inner);
    }
  });
  parallel_for(
      0, s.outer * s.inner, 4096, [&](std::int64_t lo, std::int64_t hi) {
        for (std::int64_t o = lo; o < hi; ++o) {
          const std::int64_t a = o / s.inner;
          const std::int64_t b = o % s.inner;
          double v =
              partial[static_cast<std::size_t>(a * chunks * s.inner + b)];
          for (std::int64_t c = 1; c < chunks; ++c) {
            const double p = partial[static_cast<std::size_t>(
                (a * chunks + c) * s.inner + b)];
            if (is_sum_kind(kind)) {
              v += p;
            } else if (std::isnan(v) || std::isnan(p)) {
              v = kNaN;
            } else {
              v = kind == simd::RowReduce::Min ? std::min(v, p)
                                               : std::max(v, p);
            }
          }
          out[o] = convert<Out>(finish(op, v, s.reduce));
        }
      });
}

// Calls f with the C++ type of a reduction's output: the input's own type
// or one of the few widened ones (i64, u64, bool, f32, f64).
template <class T, class F>
void dispatch_result(DType out, F&& f) {
  if (out == dtype_of_v<T>) return f.template operator()<T>();
  switch (out) {
    case DType::I64: return f.template operator()<std::int64_t>();
    case DType::U64: return f.template operator()<std::uint64_t>();
    case DType::Bool: return f.template operator()<bool>();
    case DType::F32: return f.template operator()<float>();
    case DType::F64: return f.template operator()<double>();
    default: break;
  }
  TESSEL_ASSERT(false && "unexpected reduction output dtype");
}

// The textbook complex product (NumPy's, not std::complex's Annex G
// operator, which rescues infinities at a branch per multiply).
std::complex<double> times(std::complex<double> v, std::complex<double> z) {
  return {v.real() * z.real() - v.imag() * z.imag(),
          v.real() * z.imag() + v.imag() * z.real()};
}

// The product of complex values, the one complex reduction without a
// real-view form (the op layer runs complex sums and means on
// view_as_real). Accumulates in c128, rounding once, like the f32 paths.
void complex_product(const KernelInput& in, const KernelOutput& out,
                     const ReduceShape& s) {
  detail::dispatch_complex_type(in.dtype(), "prod", [&]<class C>() {
    const C* x = in.const_data<C>();
    C* y = out.data<C>();
    parallel_for(
        0, s.outer * s.inner, 256, [&](std::int64_t lo, std::int64_t hi) {
          for (std::int64_t o = lo; o < hi; ++o) {
            const C* row = x + (o / s.inner) * s.reduce * s.inner + o % s.inner;
            std::complex<double> v(1.0, 0.0);
            for (std::int64_t r = 0; r < s.reduce; ++r)
              v = times(v, std::complex<double>(row[r * s.inner]));
            y[o] = C(v);
          }
        });
  });
}

// The running product of complex values (cumulative sums run on
// view_as_real in the op layer), accumulated in c128 as prod is.
void complex_running_product(bool exclusive, bool reverse,
                             const KernelInput& in, const KernelOutput& out,
                             const ReduceShape& s) {
  detail::dispatch_complex_type(in.dtype(), "cumprod", [&]<class C>() {
    const C* x = in.const_data<C>();
    C* y = out.data<C>();
    parallel_for(
        0, s.outer * s.inner,
        std::max<std::int64_t>(1, 32768 / std::max<std::int64_t>(1, s.reduce)),
        [&](std::int64_t lo, std::int64_t hi) {
          for (std::int64_t o = lo; o < hi; ++o) {
            const std::int64_t base =
                (o / s.inner) * s.reduce * s.inner + o % s.inner;
            std::complex<double> v(1.0, 0.0);
            for (std::int64_t k = 0; k < s.reduce; ++k) {
              const std::int64_t i =
                  base + (reverse ? s.reduce - 1 - k : k) * s.inner;
              if (exclusive) y[i] = C(v);
              v = times(v, std::complex<double>(x[i]));
              if (!exclusive) y[i] = C(v);
            }
          }
        });
  });
}

}  // namespace

void reduce(ReduceOp op, double correction, const KernelInput& in,
            const KernelOutput& out, const ReduceShape& s) {
  if (is_complex(in.dtype())) {
    complex_product(in, out, s);  // the op layer sends only prod here
    return;
  }
  detail::dispatch_element_type(in.dtype(), "reduce", [&]<class T>() {
    dispatch_result<T>(out.dtype(), [&]<class Out>() {
      const T* x = in.const_data<T>();
      Out* y = out.data<Out>();
      if constexpr (has_simd_storage<T>()) {
        simd::RowReduce kind;
        const bool column_ok = op != ReduceOp::ArgMax && op != ReduceOp::ArgMin;
        if (simd_kind(op, &kind)) {
          if (s.inner == 1) return rows_simd(op, kind, x, y, s);
          if (column_ok) return columns_simd(op, kind, x, y, s);
        }
      }
      const std::int64_t outputs = s.outer * s.inner;
      const std::int64_t grain = std::max<std::int64_t>(1, 32768 / s.reduce);
      parallel_for(0, outputs, grain, [&](std::int64_t lo, std::int64_t hi) {
        for (std::int64_t o = lo; o < hi; ++o) {
          const std::int64_t a = o / s.inner;
          const std::int64_t b = o % s.inner;
          reduce_one(op, correction, x + a * s.reduce * s.inner + b, s.inner,
                     s.reduce, y + o);
        }
      });
    });
  });
}

void cumulative(bool product, bool exclusive, bool reverse,
                const KernelInput& in, const KernelOutput& out,
                const ReduceShape& s) {
  if (is_complex(in.dtype())) {
    // The op layer sends only products here.
    complex_running_product(exclusive, reverse, in, out, s);
    return;
  }
  detail::dispatch_element_type(in.dtype(), "cumsum", [&]<class T>() {
    dispatch_result<T>(out.dtype(), [&]<class Out>() {
      using C = compute_t<Out>;
      // Floats accumulate in f64 (PyTorch's CPU accumulate type), integers
      // in their own type with wrap-around.
      using Acc = std::conditional_t<std::is_floating_point_v<C>, double, C>;
      const T* x = in.const_data<T>();
      Out* y = out.data<Out>();
      parallel_for(0, s.outer * s.inner,
                   std::max<std::int64_t>(
                       1, 32768 / std::max<std::int64_t>(1, s.reduce)),
                   [&](std::int64_t lo, std::int64_t hi) {
                     for (std::int64_t o = lo; o < hi; ++o) {
                       const std::int64_t a = o / s.inner;
                       const std::int64_t b = o % s.inner;
                       const std::int64_t base = a * s.reduce * s.inner + b;
                       Acc acc = product ? Acc(1) : Acc(0);
                       for (std::int64_t k = 0; k < s.reduce; ++k) {
                         const std::int64_t r = reverse ? s.reduce - 1 - k : k;
                         const std::int64_t i = base + r * s.inner;
                         const Acc v = static_cast<Acc>(convert<C>(x[i]));
                         if (exclusive)
                           y[i] = convert<Out>(static_cast<C>(acc));
                         if constexpr (std::is_same_v<Acc, bool>) {
                           acc = product ? (acc && v) : (acc || v);
                         } else if constexpr (std::is_integral_v<Acc>) {
                           using U = std::make_unsigned_t<Acc>;
                           acc = product
                                     ? static_cast<Acc>(static_cast<U>(acc) *
                                                        static_cast<U>(v))
                                     : static_cast<Acc>(static_cast<U>(acc) +
                                                        static_cast<U>(v));
                         } else {
                           acc = product ? acc * v : acc + v;
                         }
                         if (!exclusive)
                           y[i] = convert<Out>(static_cast<C>(acc));
                       }
                     }
                   });
    });
  });
}

void softmax(SoftmaxKind kind, const KernelInput& in, const KernelOutput& out,
             const ReduceShape& s) {
  detail::dispatch_float_type(in.dtype(), "softmax", [&]<class T>() {
    const T* x = in.const_data<T>();
    T* y = out.data<T>();
    if (kind == SoftmaxKind::Hardmax) {
      // One at the first maximum along R, zeros elsewhere (ONNX Hardmax).
      parallel_for(
          0, s.outer * s.inner, 64, [&](std::int64_t lo, std::int64_t hi) {
            for (std::int64_t o = lo; o < hi; ++o) {
              const std::int64_t a = o / s.inner;
              const std::int64_t b = o % s.inner;
              const std::int64_t base = a * s.reduce * s.inner + b;
              std::int64_t index = 0;
              reduce_one(ReduceOp::ArgMax, 0.0, x + base, s.inner, s.reduce,
                         &index);
              for (std::int64_t r = 0; r < s.reduce; ++r) {
                y[base + r * s.inner] = convert<T>(r == index ? 1.0f : 0.0f);
              }
            }
          });
      return;
    }
    const bool log = kind == SoftmaxKind::LogSoftmax;
    if constexpr (has_simd_storage<T>()) {
      if (s.inner == 1) {
        parallel_for(
            0, s.outer, std::max<std::int64_t>(1, 16384 / s.reduce),
            [&](std::int64_t lo, std::int64_t hi) {
              std::vector<float> scratch(static_cast<std::size_t>(s.reduce));
              for (std::int64_t a = lo; a < hi; ++a) {
                const T* next = a + 1 < hi ? x + (a + 1) * s.reduce : nullptr;
                simd::softmax_row(simd_storage<T>(), x + a * s.reduce,
                                  y + a * s.reduce, s.reduce, log,
                                  scratch.data(), next);
              }
            });
        return;
      }
    }
    // Strided (or f64/f8) rows: max, then the sum of exponentials, in f64.
    parallel_for(
        0, s.outer * s.inner, 64, [&](std::int64_t lo, std::int64_t hi) {
          for (std::int64_t o = lo; o < hi; ++o) {
            const std::int64_t a = o / s.inner;
            const std::int64_t b = o % s.inner;
            const std::int64_t base = a * s.reduce * s.inner + b;
            double m = -kInf;
            for (std::int64_t r = 0; r < s.reduce; ++r) {
              const double v = to_double(x[base + r * s.inner]);
              if (std::isnan(v) || v > m) m = v;
              if (std::isnan(v)) break;
            }
            CompensatedSum sum;
            for (std::int64_t r = 0; r < s.reduce; ++r) {
              sum.add(std::exp(to_double(x[base + r * s.inner]) - m));
            }
            const double total = sum.value();
            const double log_total = std::log(total);
            for (std::int64_t r = 0; r < s.reduce; ++r) {
              const double v = to_double(x[base + r * s.inner]) - m;
              y[base + r * s.inner] =
                  convert<T>(log ? v - log_total : std::exp(v) / total);
            }
          }
        });
  });
}

}  // namespace tessel::cpu
