// Follows numpy/core/arrayprint.py (_formatArray, FloatingFormat with
// floatmode "maxprec", IntegerFormat, BoolFormat) for layout and numbers.
#include "tessel/core/print.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <complex>
#include <memory>
#include <ostream>
#include <vector>

#include "core/dispatch.hpp"

namespace tessel {

namespace {

// The shortest decimal that reads back as the same value of the tensor's
// float dtype, with at most `precision` fraction digits (correctly rounded
// beyond that), in fixed or scientific notation. Returns e.g. "2.5", "1",
// "1.5e-05" (no trailing '.').
std::string shortest_digits(double v, DType dtype, int precision,
                            bool scientific) {
  const auto format =
      scientific ? std::chars_format::scientific : std::chars_format::fixed;
  char buf[512];
  auto render = [&](int digits) {
    const auto r = std::to_chars(buf, buf + sizeof buf, v, format, digits);
    return std::string(buf, r.ptr);
  };
  auto fraction_digits = [](const std::string& s) {
    const auto dot = s.find('.');
    if (dot == std::string::npos) return 0;
    const auto end = s.find('e');
    return static_cast<int>((end == std::string::npos ? s.size() : end) - dot -
                            1);
  };
  std::string s;
  if (dtype == DType::F64 || dtype == DType::F32) {
    const auto r = dtype == DType::F32
                       ? std::to_chars(buf, buf + sizeof buf,
                                       static_cast<float>(v), format)
                       : std::to_chars(buf, buf + sizeof buf, v, format);
    s.assign(buf, r.ptr);
    if (fraction_digits(s) > precision) s = render(precision);
  } else {
    // Narrow floats: the fewest digits that round back to the same bits.
    s = render(precision);
    for (int digits = 0; digits < precision; ++digits) {
      const std::string candidate = render(digits);
      const double back = std::strtod(candidate.c_str(), nullptr);
      const bool same =
          detail::dispatch_float_type(dtype, "print", [&]<class T>() {
            if constexpr (is_narrow_float_v<T>) {
              return convert<T>(back).bits == convert<T>(v).bits;
            } else {
              return convert<T>(back) == convert<T>(v);
            }
          });
      if (same) {
        s = candidate;
        break;
      }
    }
  }
  // Trim trailing fraction zeros (numpy's trim='.').
  const auto e = s.find('e');
  std::string mantissa = s.substr(0, e);
  const std::string exponent = e == std::string::npos ? "" : s.substr(e);
  if (mantissa.find('.') != std::string::npos) {
    while (mantissa.back() == '0') mantissa.pop_back();
    if (mantissa.back() == '.') mantissa.pop_back();
  }
  return mantissa + exponent;
}

struct Split {
  std::string int_part;   // with sign
  std::string frac_part;  // digits after '.'
  std::string exponent;   // digits only, e.g. "05"
  char exp_sign = '+';
};

Split split_number(const std::string& s) {
  Split out;
  const auto e = s.find('e');
  const std::string mantissa = s.substr(0, e);
  if (e != std::string::npos) {
    out.exp_sign = s[e + 1];
    out.exponent = s.substr(e + 2);
  }
  const auto dot = mantissa.find('.');
  out.int_part = mantissa.substr(0, dot);
  if (dot != std::string::npos) out.frac_part = mantissa.substr(dot + 1);
  return out;
}

class ElementFormatter {
 public:
  // `plus` writes a '+' before non-negative numbers (NumPy's sign='+', for
  // the imaginary parts of complex numbers).
  ElementFormatter(DType dtype, const std::vector<Scalar>& values,
                   const PrintOptions& options, bool scalar, bool plus = false)
      : dtype_(dtype), precision_(options.precision), plus_(plus) {
    if (is_complex(dtype)) {
      // NumPy's ComplexFloatingFormat: the real parts and the imaginary
      // parts each get their own float layout.
      std::vector<Scalar> re, im;
      for (const auto& v : values) {
        const auto z = v.to<std::complex<double>>();
        re.emplace_back(z.real());
        im.emplace_back(z.imag());
      }
      const DType part = complex_component_type(dtype);
      real_ = std::make_unique<ElementFormatter>(part, re, options, scalar);
      imag_ =
          std::make_unique<ElementFormatter>(part, im, options, scalar, true);
    } else if (dtype == DType::Bool) {
      width_ = scalar ? 0 : 5;  // " True" aligns with "False" in arrays
    } else if (!is_floating_point(dtype)) {
      for (const auto& v : values) {
        width_ = std::max(width_, static_cast<int>(integer_text(v).size()));
      }
    } else {
      prepare_float(values);
    }
  }

  std::string operator()(const Scalar& v) const {
    if (real_) {
      const auto z = v.to<std::complex<double>>();
      std::string i = (*imag_)(Scalar(z.imag()));
      // The 'j' goes before the imaginary part's padding.
      const auto end = i.find_last_not_of(' ') + 1;
      i.insert(end, "j");
      return (*real_)(Scalar(z.real())) + i;
    }
    if (dtype_ == DType::Bool) {
      return fmt::format("{:>{}}", v.to<bool>() ? "True" : "False", width_);
    }
    if (!is_floating_point(dtype_)) {
      return fmt::format("{:>{}}", integer_text(v), width_);
    }
    const double x = v.to<double>();
    if (!std::isfinite(x)) {
      const std::string sign = x < 0 && std::isinf(x) ? "-" : plus_ ? "+" : "";
      const std::string text = sign + (std::isnan(x) ? "nan" : "inf");
      return fmt::format("{:>{}}", text, pad_left_ + pad_right_ + 1);
    }
    if (exp_format_) {
      Split p = split_number(digits(x, true));
      p.frac_part.resize(static_cast<std::size_t>(exp_precision_), '0');
      p.exponent.insert(
          0,
          static_cast<std::size_t>(
              std::max(0, exp_size_ - static_cast<int>(p.exponent.size()))),
          '0');
      return fmt::format("{:>{}}.{}e{}{}", p.int_part, pad_left_, p.frac_part,
                         p.exp_sign, p.exponent);
    }
    const Split p = split_number(digits(x, false));
    return fmt::format("{:>{}}.{:<{}}", p.int_part, pad_left_, p.frac_part,
                       pad_right_);
  }

 private:
  std::string digits(double x, bool scientific) const {
    std::string s = shortest_digits(x, dtype_, precision_, scientific);
    if (plus_ && s.front() != '-') s.insert(0, "+");
    return s;
  }

  static std::string integer_text(const Scalar& v) {
    return v.kind() == Scalar::Kind::UInt
               ? std::to_string(v.to<std::uint64_t>())
               : std::to_string(v.to<std::int64_t>());
  }

  void prepare_float(const std::vector<Scalar>& values) {
    std::vector<double> finite;
    bool has_nonfinite = false;
    bool has_neg_inf = false;
    for (const auto& s : values) {
      const double x = s.to<double>();
      if (std::isfinite(x)) {
        finite.push_back(x);
      } else {
        has_nonfinite = true;
        has_neg_inf = has_neg_inf || (std::isinf(x) && x < 0);
      }
    }
    double max_abs = 0.0;
    double min_abs = std::numeric_limits<double>::infinity();
    for (double x : finite) {
      if (x == 0.0) continue;
      max_abs = std::max(max_abs, std::fabs(x));
      min_abs = std::min(min_abs, std::fabs(x));
    }
    exp_format_ = max_abs > 0.0 && (max_abs >= 1e8 || min_abs < 0.0001 ||
                                    max_abs / min_abs > 1000.0);
    if (exp_format_) {
      for (double x : finite) {
        const Split p = split_number(digits(x, true));
        pad_left_ = std::max(pad_left_, static_cast<int>(p.int_part.size()));
        exp_precision_ =
            std::max(exp_precision_, static_cast<int>(p.frac_part.size()));
        exp_size_ = std::max(exp_size_, static_cast<int>(p.exponent.size()));
      }
      pad_right_ = exp_size_ + 2 + exp_precision_;
    } else {
      for (double x : finite) {
        const Split p = split_number(digits(x, false));
        pad_left_ = std::max(pad_left_, static_cast<int>(p.int_part.size()));
        pad_right_ = std::max(pad_right_, static_cast<int>(p.frac_part.size()));
      }
    }
    if (has_nonfinite) {
      const int offset = pad_right_ + 1;
      pad_left_ = std::max(
          {pad_left_, 3 - offset, 3 + (has_neg_inf || plus_ ? 1 : 0) - offset});
    }
  }

  DType dtype_;
  int precision_;
  bool plus_ = false;
  std::unique_ptr<ElementFormatter> real_;  // complex dtypes: the parts
  std::unique_ptr<ElementFormatter> imag_;
  int width_ = 0;
  bool exp_format_ = false;
  int pad_left_ = 0;
  int pad_right_ = 0;
  int exp_precision_ = 0;
  int exp_size_ = 0;
};

// The indices shown along an axis: all, or the edge items at each end.
std::vector<std::int64_t> shown_indices(std::int64_t extent, bool summarize,
                                        std::int64_t edge) {
  std::vector<std::int64_t> out;
  if (summarize && extent > 2 * edge) {
    for (std::int64_t i = 0; i < edge; ++i) out.push_back(i);
    for (std::int64_t i = extent - edge; i < extent; ++i) out.push_back(i);
  } else {
    for (std::int64_t i = 0; i < extent; ++i) out.push_back(i);
  }
  return out;
}

class ArrayFormatter {
 public:
  ArrayFormatter(const Tensor& t, const PrintOptions& options,
                 std::int64_t line_width, std::string next_line_prefix)
      : t_(t),
        options_(options),
        line_width_(line_width),
        prefix_(std::move(next_line_prefix)) {
    summarize_ = t.numel() > options.threshold;
    for (auto extent : t.shape()) {
      shown_.push_back(shown_indices(extent, summarize_, options.edge_items));
    }
    Shape index(t.shape().size(), 0);
    collect(0, index);
    formatter_.emplace(t.dtype(), values_, options, t.rank() == 0);
  }

  std::string format() {
    if (t_.rank() == 0) return (*formatter_)(values_.at(0));
    next_value_ = 0;
    return recurse(0, prefix_, line_width_);
  }

 private:
  void collect(std::size_t axis, Shape& index) {
    if (axis == shown_.size()) {
      values_.push_back(t_.get(index));
      return;
    }
    for (auto i : shown_[axis]) {
      index[axis] = i;
      collect(axis + 1, index);
    }
  }

  static void extend_line(std::string& s, std::string& line,
                          const std::string& word, std::int64_t width,
                          const std::string& prefix) {
    bool wrap = static_cast<std::int64_t>(line.size() + word.size()) > width;
    if (line.size() <= prefix.size()) wrap = false;
    if (wrap) {
      while (!line.empty() && line.back() == ' ') line.pop_back();
      s += line + "\n";
      line = prefix;
    }
    line += word;
  }

  std::string recurse(std::size_t axis, const std::string& hanging,
                      std::int64_t width) {
    if (axis == shown_.size()) return (*formatter_)(values_[next_value_++]);
    const std::string next_hanging = hanging + " ";
    const std::int64_t next_width = width - 1;
    const std::int64_t extent = t_.shape()[axis];
    const bool summary = summarize_ && extent > 2 * options_.edge_items;
    const std::size_t count = shown_[axis].size();
    const std::size_t lead = summary ? count / 2 : count;
    const std::size_t axes_left = shown_.size() - axis;
    std::string s;
    if (axes_left == 1) {
      const std::int64_t elem_width = width - 1;
      std::string line = hanging;
      for (std::size_t i = 0; i < count; ++i) {
        if (summary && i == lead) {
          extend_line(s, line, "...", elem_width, hanging);
          line += ", ";
        }
        const std::string word = recurse(axis + 1, next_hanging, next_width);
        extend_line(s, line, word, elem_width, hanging);
        if (i + 1 < count) line += ", ";
      }
      s += line;
    } else {
      const std::string line_sep = "," + std::string(axes_left - 1, '\n');
      for (std::size_t i = 0; i < count; ++i) {
        if (summary && i == lead) s += hanging + "..." + line_sep;
        s += hanging + recurse(axis + 1, next_hanging, next_width);
        if (i + 1 < count) s += line_sep;
      }
    }
    std::string out = "[";
    out.append(s, hanging.size());
    out += ']';
    return out;
  }

  const Tensor& t_;
  PrintOptions options_;
  std::int64_t line_width_;
  std::string prefix_;
  bool summarize_ = false;
  std::vector<std::vector<std::int64_t>> shown_;
  std::vector<Scalar> values_;
  std::optional<ElementFormatter> formatter_;
  std::size_t next_value_ = 0;
};

}  // namespace

std::string to_string(const Tensor& t, const PrintOptions& options) {
  if (!t.defined()) return "tensor(undefined)";
  const std::string& prefix = options.prefix;
  std::string body;
  if (is_block_quantized(t.dtype())) {
    const auto& traits = dtype_traits(t.dtype());
    body = fmt::format("<{} {} blocks of {}>", t.numel() / traits.block_size,
                       traits.name, traits.block_size);
  } else if (t.numel() == 0) {
    body = "[]";
  } else if (t.device().is_meta()) {
    body = "...";  // no values to show (PyTorch prints the same)
  } else {
    ArrayFormatter f(t, options, options.line_width - 1,
                     std::string(prefix.size() + 1, ' '));
    body = f.format();
  }
  std::string out = prefix + body + ",";
  std::string tail;
  if (options.show_shape || t.numel() == 0) {
    tail = fmt::format("shape={}, ", shape_string(t.shape()));
  }
  tail += fmt::format("dtype={}", options.dtype_label.empty()
                                      ? std::string(dtype_name(t.dtype()))
                                      : options.dtype_label);
  if (!t.device().is_cpu())
    tail += fmt::format(", device='{}'", t.device().str());
  if (!t.name().empty()) tail += fmt::format(", name='{}'", t.name());
  tail += ")";
  // Like NumPy's dtype suffix: move to a new line if it would overflow.
  const auto last_line = out.size() - (out.rfind('\n') + 1);
  const bool wrap = static_cast<std::int64_t>(last_line + tail.size() + 1) >
                    options.line_width;
  out += wrap ? "\n" + std::string(prefix.size(), ' ') : " ";
  return out + tail;
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  return os << to_string(t);
}

}  // namespace tessel
