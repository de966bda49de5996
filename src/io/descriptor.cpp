#include "tessel/io/descriptor.hpp"

#include <fmt/ranges.h>
#include <algorithm>
#include <bit>
#include <cctype>
#include <climits>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <tuple>

#include "core/check.hpp"
#include "io/base_types.hpp"
#include "io/byteswap.hpp"
#include "tessel/ops/factories.hpp"
#include "tessel/ops/quantize.hpp"

namespace tessel {

namespace {

using nlohmann::json;

constexpr const char* kVersionPrefix = "WIA-AI-011-v";

[[noreturn]] void bad_field(const std::string& field, const std::string& what) {
  throw FormatError(ErrorCode::MalformedFile,
                    fmt::format("[descriptor] field '{}': {}", field, what));
}

std::int64_t get_int(const json& j, const std::string& field,
                     bool non_negative) {
  if (!j.is_number_integer() || (non_negative && j.get<std::int64_t>() < 0)) {
    bad_field(field,
              fmt::format("expected a{} integer, got {}",
                          non_negative ? " non-negative" : "n", j.dump()));
  }
  return j.get<std::int64_t>();
}

std::vector<std::int64_t> get_ints(const json& j, const std::string& field) {
  if (!j.is_array() || static_cast<std::int64_t>(j.size()) > kMaxRank) {
    bad_field(field, "expected an array of at most 64 integers");
  }
  std::vector<std::int64_t> out;
  for (const json& v : j) out.push_back(get_int(v, field, true));
  return out;
}

std::vector<std::int64_t> row_major(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> s(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) {
    s[i - 1] = checked_mul(s[i], std::max<std::int64_t>(shape[i], 1),
                           "descriptor strides");
  }
  return s;
}

// Channels-last strides for a shape listed channels-first (N, C, spatial...):
// PyTorch's channels_last memory format, C fastest.
std::vector<std::int64_t> channels_last(
    const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> s(shape.size(), 1);
  std::int64_t step = std::max<std::int64_t>(shape[1], 1);
  for (std::size_t i = shape.size(); i-- > 2;) {
    s[i] = step;
    step = checked_mul(step, std::max<std::int64_t>(shape[i], 1),
                       "descriptor strides");
  }
  s[0] = step;
  return s;
}

// Whether `strides` over `shape` (physical) lay the data out as the
// `layout` tag says; the reason when they do not. Tags: "" or "strided"
// (any strides), "row-major", the channels-first NCW/NCHW/NCDHW (row-major
// over dimensions listed in that order), the channels-last NWC/NHWC/NDHWC
// (row-major over dimensions listed in that order, or PyTorch's
// channels_last strides over dimensions listed channels-first), and
// oneDNN's blocked tags such as nChw16c / nCdhw8c, described by their
// blocked shape: (N, C/16, H, W, 16), row-major.
// Whether two stride lists address `shape` the same way: the stride of an
// axis of extent 1 never moves, and an empty tensor addresses nothing.
bool same_addressing(const std::vector<std::int64_t>& shape,
                     const std::vector<std::int64_t>& a,
                     const std::vector<std::int64_t>& b) {
  if (a.size() != b.size()) return false;
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return true;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (shape[i] > 1 && a[i] != b[i]) return false;
  }
  return true;
}

std::optional<std::string> layout_mismatch(
    const std::string& layout, const std::vector<std::int64_t>& shape,
    const std::vector<std::int64_t>& strides) {
  if (layout.empty() || layout == "strided") return std::nullopt;
  const std::vector<std::int64_t> rm = row_major(shape);
  const auto row_major_or =
      [&](const char* what) -> std::optional<std::string> {
    if (same_addressing(shape, strides, rm)) return std::nullopt;
    return fmt::format("strides {} are not {} over {}", fmt::join(strides, ","),
                       what, fmt::join(shape, ","));
  };
  if (layout == "row-major") return row_major_or("row-major");
  static const std::map<std::string, std::size_t> channels_first = {
      {"NCW", 3}, {"NCHW", 4}, {"NCDHW", 5}};
  static const std::map<std::string, std::size_t> channels_last_tags = {
      {"NWC", 3}, {"NHWC", 4}, {"NDHWC", 5}};
  const auto rank_is = [&](std::size_t want) -> std::optional<std::string> {
    if (shape.size() == want) return std::nullopt;
    return fmt::format("{} needs rank {}, the shape has rank {}", layout, want,
                       shape.size());
  };
  if (const auto f = channels_first.find(layout); f != channels_first.end()) {
    if (auto r = rank_is(f->second)) return r;
    return row_major_or("row-major");
  }
  if (const auto l = channels_last_tags.find(layout);
      l != channels_last_tags.end()) {
    if (auto r = rank_is(l->second)) return r;
    if (same_addressing(shape, strides, rm) ||
        same_addressing(shape, strides, channels_last(shape)))
      return std::nullopt;
    return fmt::format(
        "strides {} are neither row-major nor channels-last "
        "over {}",
        fmt::join(strides, ","), fmt::join(shape, ","));
  }
  // oneDNN's blocked tags: lower-case n, upper-case blocked C, lower-case
  // spatial letters, then the block size and "c": rank = letters + 1.
  if (layout.size() >= 4 && layout[0] == 'n' && layout[1] == 'C' &&
      layout.back() == 'c') {
    std::size_t letters = 2;
    while (letters < layout.size() &&
           std::islower(static_cast<unsigned char>(layout[letters])))
      ++letters;
    const std::string digits =
        layout.substr(letters, layout.size() - 1 - letters);
    const bool numeric =
        !digits.empty() && digits.size() <= 4 &&
        std::all_of(digits.begin(), digits.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c)) != 0;
        });
    if (letters > 2 && numeric) {
      const std::int64_t block = std::stoll(digits);
      if (auto r = rank_is(letters + 1)) return r;
      if (shape.back() != block) {
        return fmt::format("{}'s last extent must be its block of {}, got {}",
                           layout, block, shape.back());
      }
      return row_major_or("row-major");
    }
  }
  return fmt::format(
      "'{}' is not a layout tessel knows (strided, row-major, "
      "NCW/NCHW/NCDHW, NWC/NHWC/NDHWC, blocked like nChw16c)",
      layout);
}

// Bytes from the buffer start to one past the last addressed element.
std::int64_t extent_bytes(const std::vector<std::int64_t>& shape,
                          const std::vector<std::int64_t>& strides,
                          std::int64_t offset_bytes, std::int64_t item) {
  std::int64_t last = 0;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) return offset_bytes;
    last = checked_add(last, checked_mul(shape[i] - 1, strides[i], "extent"),
                       "extent");
  }
  return checked_add(offset_bytes, checked_mul(last + 1, item, "extent"),
                     "extent");
}

std::int64_t item_bytes(DType d) {
  // Packed and block types are described by whole bytes of row-major data.
  return is_packed(d) || is_block_quantized(d) ? 1 : element_size(d);
}

void parse_version(const json& j, TensorDescriptor& d) {
  if (!j.is_string()) bad_field("version", "expected a string");
  std::string v = j.get<std::string>();
  if (v.rfind(kVersionPrefix, 0) == 0)
    v = v.substr(std::string(kVersionPrefix).size());
  int major = 0, minor = 0;
  if (std::sscanf(v.c_str(), "%d.%d", &major, &minor) < 1 || major < 1) {
    bad_field("version",
              fmt::format("'{}' is not a version", j.get<std::string>()));
  }
  if (major > 1) {
    bad_field("version", fmt::format("major version {} is newer than this "
                                     "reader (1)",
                                     major));
  }
  d.version_major = major;
  d.version_minor = minor;
}

std::optional<Device> parse_device_field(const json& j) {
  if (j.is_string()) {
    try {
      return parse_device(j.get<std::string>());
    } catch (const Error&) {
      bad_field("memory.device", fmt::format("unknown device {}", j.dump()));
    }
  }
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) {
    bad_field("memory.device", "expected {\"type\": ..., \"id\": ...}");
  }
  const std::string type = io::upper(j["type"].get<std::string>());
  const std::int64_t id =
      j.contains("id") ? get_int(j["id"], "memory.device.id", true) : 0;
  if (type == "CPU") return Device::cpu();
  if (type == "META") return Device::meta();
  if (type == "CUDA" || type == "GPU")
    return Device::cuda(static_cast<int>(id));
  return std::nullopt;  // kept as written (NPU, TPU, ...), not served
}

// The names the standard's device object uses for a tessel device.
const char* device_type_name(const Device& device) {
  return device.is_cpu() ? "CPU" : device.is_meta() ? "META" : "CUDA";
}
const char* memory_space_name(const Device& device) {
  return device.is_cpu() ? "host" : device.is_meta() ? "none" : "device";
}

// ---- affine quantisation ---------------------------------------------------

constexpr const char* kQuant = "dtype.quantization";

std::string qfield(const char* sub) {
  return fmt::format("{}.{}", kQuant, sub);
}

// A scheme name split into its granularity (if it says one) and whether it
// is symmetric (if it says).
struct SchemeName {
  std::optional<AffineGranularity> granularity;
  std::optional<bool> symmetric;
};

SchemeName parse_scheme(const json& q) {
  SchemeName out;
  if (!q.contains("scheme") || q["scheme"].is_null()) return out;
  if (!q["scheme"].is_string())
    bad_field(qfield("scheme"), "expected a string");
  std::string s = q["scheme"].get<std::string>();
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string original = s;
  constexpr std::pair<std::string_view, AffineGranularity> kPrefixes[] = {
      {"per_tensor_", AffineGranularity::PerTensor},
      {"per_channel_", AffineGranularity::PerChannel},
      {"per_group_", AffineGranularity::PerGroup}};
  for (const auto& [prefix, g] : kPrefixes) {
    if (s.starts_with(prefix)) {
      out.granularity = g;
      s = s.substr(prefix.size());
      break;
    }
  }
  if (s == "affine" || s == "asymmetric") {
    out.symmetric = false;
  } else if (s == "symmetric") {
    out.symmetric = true;
  } else if (!s.empty()) {
    bad_field(qfield("scheme"),
              fmt::format("'{}' is not an affine scheme tessel can apply "
                          "(per_tensor_, per_channel_ or per_group_ with "
                          "affine or symmetric{})",
                          q["scheme"].get<std::string>(),
                          original.ends_with("float_qparams")
                              ? "; float zero points are not supported"
                              : ""));
  }
  return out;
}

// The items of a scale or zero point field: one value (a per-tensor scale,
// or a zero point broadcast to every channel or group), or a list of
// exactly `count`.
std::vector<const json*> read_items(const json& v, const std::string& field,
                                    std::int64_t count, bool one_allowed) {
  std::vector<const json*> out;
  if (v.is_array()) {
    if (static_cast<std::int64_t>(v.size()) != count) {
      bad_field(field, fmt::format("{} values where the scheme and shape "
                                   "need {}",
                                   v.size(), count));
    }
    for (const json& x : v) out.push_back(&x);
  } else if (one_allowed) {
    out.assign(static_cast<std::size_t>(count), &v);
  } else {
    bad_field(field, fmt::format("expected a list of {} values", count));
  }
  return out;
}

DType read_param_dtype(const json& q, const char* key, DType fallback,
                       bool want_float) {
  if (!q.contains(key) || q[key].is_null()) return fallback;
  const std::string field = qfield(key);
  if (!q[key].is_string()) bad_field(field, "expected a dtype name");
  DType d{};
  try {
    d = parse_dtype(q[key].get<std::string>());
  } catch (const Error&) {
    bad_field(field,
              fmt::format("unknown dtype '{}'", q[key].get<std::string>()));
  }
  const bool ok =
      want_float ? is_floating_point(d)
                 : is_integral(d) && is_byte_addressable(d) && d != DType::U64;
  if (!ok) {
    bad_field(field, fmt::format("{} is not {}", dtype_name(d),
                                 want_float ? "a float dtype"
                                            : "an integer dtype of at most "
                                              "64 signed bits"));
  }
  return d;
}

Quantization parse_quantization(const json& q, const TensorDescriptor& d) {
  if (!q.is_object()) bad_field(kQuant, "expected an object or null");
  if (!is_affine_quantized_dtype(d.dtype)) {
    bad_field(kQuant,
              fmt::format("affine quantisation applies to the base types "
                          "INT8, UINT8, INT16, UINT16, INT4 and UINT4, not {}",
                          io::base_type(d.dtype)));
  }
  const SchemeName scheme = parse_scheme(q);
  const auto rank = static_cast<std::int64_t>(d.dimensions.size());
  const bool has_axis = q.contains("axis") && !q["axis"].is_null();
  const bool has_group = q.contains("group_size") && !q["group_size"].is_null();
  std::int64_t group_size = 0;
  if (has_group) {
    group_size = get_int(q["group_size"], qfield("group_size"), true);
    if (group_size == 0) bad_field(qfield("group_size"), "must be positive");
  }
  const AffineGranularity g = scheme.granularity ? *scheme.granularity
                              : has_group        ? AffineGranularity::PerGroup
                              : has_axis         ? AffineGranularity::PerChannel
                                                 : AffineGranularity::PerTensor;
  if (g == AffineGranularity::PerGroup && !has_group) {
    bad_field(qfield("group_size"), "a per-group scheme needs a group_size");
  }
  if (g != AffineGranularity::PerGroup && has_group) {
    bad_field(qfield("group_size"), "only a per-group scheme has groups");
  }
  if (g == AffineGranularity::PerChannel && !has_axis) {
    bad_field(qfield("axis"), "a per-channel scheme needs an axis");
  }
  AffineQuantization p;
  p.group_size = group_size;
  Shape param_shape;
  if (g != AffineGranularity::PerTensor) {
    // Groups run along the last axis unless the descriptor says otherwise.
    const std::int64_t axis =
        has_axis ? get_int(q["axis"], qfield("axis"), false) : -1;
    if (rank == 0 || axis < -rank || axis >= rank) {
      bad_field(
          qfield("axis"),
          fmt::format("axis {} is outside a tensor of rank {}", axis, rank));
    }
    p.axis = axis < 0 ? axis + rank : axis;
    Shape concrete;
    for (std::int64_t i = 0; i < rank; ++i) {
      const auto& dim = d.dimensions[static_cast<std::size_t>(i)];
      const bool needed = g == AffineGranularity::PerGroup || i == p.axis;
      if (std::holds_alternative<std::string>(dim)) {
        if (needed) {
          bad_field(qfield("axis"),
                    fmt::format(
                        "per-{} parameters need a concrete extent "
                        "where the shape has '{}'",
                        g == AffineGranularity::PerGroup ? "group" : "channel",
                        std::get<std::string>(dim)));
        }
        concrete.push_back(1);  // not used: only the axis matters
      } else {
        concrete.push_back(std::get<std::int64_t>(dim));
      }
    }
    param_shape = affine_parameter_shape(concrete, g, p.axis, group_size);
  }
  std::int64_t count = 0;
  try {
    count = checked_numel(param_shape);
  } catch (const OverflowError&) {
    bad_field("shape.dimensions", "the size overflows");
  }
  const bool per_tensor = g == AffineGranularity::PerTensor;

  const DType scale_dtype =
      read_param_dtype(q, "scale_dtype", DType::F32, true);
  if (!q.contains("scale") || q["scale"].is_null()) {
    bad_field(qfield("scale"), "missing");
  }
  std::vector<double> scales;
  for (const json* v :
       read_items(q["scale"], qfield("scale"), count, per_tensor)) {
    if (!v->is_number()) {
      bad_field(qfield("scale"),
                fmt::format("expected a number, got {}", v->dump()));
    }
    scales.push_back(v->get<double>());
  }
  p.scale = from_vector<double>(scales, param_shape).to(scale_dtype);
  // Positive and finite in the dtype it is kept in (1e10 is Inf in f16).
  const Tensor kept = p.scale.to(DType::F64).contiguous();
  for (std::int64_t i = 0; i < kept.numel(); ++i) {
    const double v = kept.const_data<double>()[i];
    if (!(v > 0) || !std::isfinite(v)) {
      bad_field(qfield("scale"),
                fmt::format("scale {} is not positive and finite in {}",
                            scales[static_cast<std::size_t>(i)],
                            dtype_name(scale_dtype)));
    }
  }

  const DType zp_dtype =
      read_param_dtype(q, "zero_point_dtype", DType::I32, false);
  const auto [zp_min, zp_max] = io::int_range(zp_dtype);
  std::vector<std::int64_t> zps(static_cast<std::size_t>(count), 0);
  if (q.contains("zero_point") && !q["zero_point"].is_null()) {
    const std::vector<const json*> items =
        read_items(q["zero_point"], qfield("zero_point"), count, true);
    for (std::size_t i = 0; i < zps.size(); ++i) {
      zps[i] = get_int(*items[i], qfield("zero_point"), false);
      if (zps[i] < zp_min || zps[i] > zp_max) {
        bad_field(qfield("zero_point"), fmt::format("{} is outside {}", zps[i],
                                                    dtype_name(zp_dtype)));
      }
    }
  }
  const bool all_zero = std::all_of(zps.begin(), zps.end(),
                                    [](std::int64_t z) { return z == 0; });
  // Symmetric means no zero point; a symmetric scheme with non-zero points
  // (PyTorch's unsigned symmetric, 128) keeps them.
  if (!(all_zero && scheme.symmetric.value_or(true))) {
    p.zero_point = from_vector<std::int64_t>(zps, param_shape).to(zp_dtype);
  }

  Quantization out;
  out.params = std::move(p);
  std::tie(out.qmin, out.qmax) = io::int_range(d.dtype);
  if (q.contains("range") && !q["range"].is_null()) {
    const json& r = q["range"];
    if (!r.is_array() || r.size() != 2) {
      bad_field(qfield("range"), "expected [min, max]");
    }
    const std::int64_t lo = get_int(r[0], qfield("range"), false);
    const std::int64_t hi = get_int(r[1], qfield("range"), false);
    if (lo > hi || lo < out.qmin || hi > out.qmax) {
      bad_field(qfield("range"),
                fmt::format("[{}, {}] is not a range within {}'s [{}, {}]", lo,
                            hi, io::base_type(d.dtype), out.qmin, out.qmax));
    }
    out.qmin = lo;
    out.qmax = hi;
  }
  return out;
}

json quantization_json(const Quantization& q, std::int64_t rank) {
  const AffineQuantization& p = q.params;
  const AffineGranularity g = affine_granularity(p);
  const auto host = [](const Tensor& t, DType dtype) {
    return t.to(Device::cpu()).to(dtype).contiguous();
  };
  const auto values = [](const Tensor& t) {
    return std::vector<double>(t.const_data<double>(),
                               t.const_data<double>() + t.numel());
  };
  for (const Tensor* t : {&p.scale, &p.zero_point}) {
    TESSEL_CHECK(!t->defined() || !t->device().is_meta(), DeviceMismatch,
                 "to_json",
                 "quantisation parameters on the meta device have no values "
                 "to write");
  }
  TESSEL_CHECK(p.scale.defined(), BadShape, "to_json",
               "the quantisation has no scale");
  const Tensor scale = host(p.scale, DType::F64);
  json out = {{"scheme", q.scheme()}, {"range", {q.qmin, q.qmax}}};
  json zero_point = 0;
  if (p.zero_point.defined()) {
    const Tensor zi = host(p.zero_point, DType::I64);
    const std::vector<std::int64_t> zs(
        zi.const_data<std::int64_t>(),
        zi.const_data<std::int64_t>() + zi.numel());
    zero_point = g == AffineGranularity::PerTensor ? json(zs.at(0)) : json(zs);
    if (p.zero_point.dtype() != DType::I32) {
      out["zero_point_dtype"] = dtype_name(p.zero_point.dtype());
    }
  }
  if (g == AffineGranularity::PerTensor) {
    out["scale"] = values(scale).at(0);
  } else {
    out["scale"] = values(scale);
    out["axis"] = p.axis < 0 ? p.axis + rank : p.axis;
    if (g == AffineGranularity::PerGroup) out["group_size"] = p.group_size;
  }
  out["zero_point"] = zero_point;
  if (p.scale.dtype() != DType::F32) {
    out["scale_dtype"] = dtype_name(p.scale.dtype());
  }
  return out;
}

}  // namespace

std::string Quantization::scheme() const { return affine_scheme_name(params); }

bool TensorDescriptor::symbolic() const {
  for (const auto& d : dimensions) {
    if (std::holds_alternative<std::string>(d)) return true;
  }
  return false;
}

Shape TensorDescriptor::shape() const {
  Shape s;
  for (const auto& d : dimensions) {
    TESSEL_CHECK(std::holds_alternative<std::int64_t>(d), BadShape,
                 "descriptor", "dimension '{}' is symbolic; bind it first",
                 std::get<std::string>(d));
    s.push_back(std::get<std::int64_t>(d));
  }
  return s;
}

SymbolicShape TensorDescriptor::symbolic_dims() const {
  SymbolicShape out;
  for (const auto& dim : dimensions) {
    if (const auto* sym = std::get_if<std::string>(&dim)) {
      out.emplace_back(*sym);
    } else {
      out.emplace_back(std::get<std::int64_t>(dim));
    }
  }
  return out;
}

TensorDescriptor TensorDescriptor::bind(
    const std::map<std::string, std::int64_t>& values) const {
  // The symbolic checker's bind: every symbol given, every constraint met.
  const Shape bound = tessel::bind(symbolic_dims(), values, constraints);
  const std::vector<std::int64_t> concrete(bound.begin(), bound.end());
  TensorDescriptor out = *this;
  out.dimensions.assign(concrete.begin(), concrete.end());
  out.constraints.clear();
  out.offset_bytes = 0;
  if (allocation_strategy == "overallocate") {
    // A view into the buffer sized for the largest shape: the same strides
    // for every binding, so an axis grows in place.
    out.strides = row_major(max_physical_shape);
    out.physical_shape = max_physical_shape;
    out.total_bytes = storage_bytes(dtype, checked_numel(max_physical_shape));
    return out;
  }
  out.strides = row_major(concrete);
  out.total_bytes = storage_bytes(dtype, checked_numel(concrete));
  return out;
}

TensorDescriptor describe(const Tensor& t, const std::string& layout) {
  TensorDescriptor d;
  d.name = t.name();
  for (const std::int64_t e : t.shape()) d.dimensions.emplace_back(e);
  d.dtype = t.dtype();
  d.strides.assign(t.strides().begin(), t.strides().end());
  // No tag asked for: the one the strides honestly have.
  const std::vector<std::int64_t> shape(t.shape().begin(), t.shape().end());
  d.layout = !layout.empty()                                       ? layout
             : same_addressing(shape, d.strides, row_major(shape)) ? "row-major"
                                                                   : "strided";
  if (const auto why = layout_mismatch(d.layout, shape, d.strides)) {
    detail::fail(ErrorCode::BadShape, "describe", "layout {}: {}", d.layout,
                 *why);
  }
  // Packed and block data is described as whole bytes from its start.
  TESSEL_CHECK(is_byte_addressable(t.dtype()) ||
                   (t.is_contiguous() && t.storage_offset() == 0),
               NotContiguous, "describe",
               "a {} tensor must be contiguous from the start of its buffer",
               dtype_name(t.dtype()));
  d.offset_bytes = t.storage_offset() * item_bytes(t.dtype());
  d.total_bytes = t.storage().defined() ? t.storage().nbytes() : 0;
  d.alignment = t.storage().defined()
                    ? static_cast<std::int64_t>(t.storage().alignment())
                    : 64;
  d.device = t.device();
  d.device_type = device_type_name(t.device());
  d.device_id = t.device().index;
  d.memory_space = memory_space_name(t.device());
  const bool pinned =
      t.storage().defined() && t.storage().origin() == StorageOrigin::Pinned;
  d.properties = {{"requires_grad", false},
                  {"is_pinned", pinned},
                  {"is_contiguous", t.is_contiguous()},
                  {"zero_copy_compatible", t.is_contiguous()}};
  return d;
}

TensorDescriptor describe(const Tensor& q, const AffineQuantization& params,
                          const std::string& layout) {
  constexpr const char* op = "describe";
  TESSEL_CHECK(is_affine_quantized_dtype(q.dtype()), BadDType, op,
               "affine codes are i8, u8, i16, u16, i4 or u4, not {}",
               dtype_name(q.dtype()));
  const std::int64_t axis = check_affine_quantization(q.shape(), params, op);
  TensorDescriptor d = describe(q, layout);
  Quantization quant;
  quant.params.group_size = params.group_size;
  quant.params.axis =
      affine_granularity(params) == AffineGranularity::PerTensor ? -1 : axis;
  const auto on_cpu = [](const Tensor& t) {
    return t.defined() ? t.to(Device::cpu()) : t;
  };
  quant.params.scale = on_cpu(params.scale);
  quant.params.zero_point = on_cpu(params.zero_point);
  std::tie(quant.qmin, quant.qmax) = io::int_range(q.dtype());
  d.quantization = std::move(quant);
  return d;
}

std::string to_json(const TensorDescriptor& d, int indent) {
  json dims = json::array();
  for (const auto& dim : d.dimensions) {
    if (const auto* n = std::get_if<std::string>(&dim)) {
      dims.push_back(*n);
    } else {
      dims.push_back(std::get<std::int64_t>(dim));
    }
  }
  json shape = {
      {"dimensions", dims}, {"layout", d.layout}, {"symbolic", d.symbolic()}};
  if (!d.constraints.empty()) {
    json c = json::object();
    for (const auto& [name, k] : d.constraints) {
      json e = json::object();
      if (k.min) e["min"] = *k.min;
      if (k.max) e["max"] = *k.max;
      if (k.multiple_of) e["multiple_of"] = *k.multiple_of;
      c[name] = e;
    }
    shape["constraints"] = c;
  }
  json dtype = {{"base_type", io::base_type(d.dtype)},
                {"byte_order", d.big_endian ? "big_endian" : "little_endian"},
                {"quantization", nullptr}};
  if (d.quantization) {
    dtype["quantization"] = quantization_json(
        *d.quantization, static_cast<std::int64_t>(d.dimensions.size()));
  }
  json device = {{"type", d.device_type},
                 {"id", d.device_id},
                 {"memory_space", d.memory_space}};
  json j = {{"version", fmt::format("{}{}.{}", kVersionPrefix, d.version_major,
                                    d.version_minor)},
            {"name", d.name},
            {"shape", shape},
            {"dtype", dtype},
            {"memory",
             {{"strides", d.strides},
              {"offset_bytes", d.offset_bytes},
              {"total_bytes", d.total_bytes},
              {"alignment", d.alignment},
              {"device", device}}},
            {"properties", d.properties},
            {"metadata", d.metadata}};
  if (!d.tensor_id.empty()) j["tensor_id"] = d.tensor_id;
  if (!d.physical_shape.empty()) {
    j["physical_shape"] = d.physical_shape;
    j["padding"] = {{"mode", d.padding_mode}};
    if (!d.padding_values.empty()) {
      j["padding"]["dims"] = d.padding_dims;
      j["padding"]["values"] = d.padding_values;
    }
  }
  if (!d.allocation_strategy.empty()) {
    j["allocation_strategy"] = d.allocation_strategy;
    if (!d.max_physical_shape.empty())
      j["max_physical_shape"] = d.max_physical_shape;
  }
  if (!d.bit_order.empty()) j["dtype"]["bit_order"] = d.bit_order;
  if (d.buffer_handle) {
    j["buffer_handle"] = {{"type", d.buffer_handle->type},
                          {"fd", d.buffer_handle->fd},
                          {"size_bytes", d.buffer_handle->size_bytes},
                          {"permissions", d.buffer_handle->permissions}};
  }
  if (d.mapping) {
    const auto address = [](const std::optional<std::string>& a) {
      return a ? json(*a) : json(nullptr);
    };
    j["mapping"] = {{"device_address", address(d.mapping->device_address)},
                    {"cpu_address", address(d.mapping->cpu_address)},
                    {"access_mode", d.mapping->access_mode}};
  }
  return j.dump(indent);
}

namespace {

// The standard's padding record beside physical_shape: `values` (elements
// added per axis) must be physical - logical on every concrete axis, and
// `dims` (which axes are padded), when given, must agree with them.
void parse_padding_record(const json& padding, TensorDescriptor& d) {
  d.padding_values = get_ints(padding["values"], "padding.values");
  const std::size_t rank = d.dimensions.size();
  if (d.padding_values.size() != rank) {
    bad_field("padding.values", "rank differs from shape.dimensions");
  }
  for (std::size_t i = 0; i < rank; ++i) {
    const auto* e = std::get_if<std::int64_t>(&d.dimensions[i]);
    if (e && d.physical_shape[i] - *e != d.padding_values[i]) {
      bad_field("padding.values",
                fmt::format("axis {} is padded by {} but physical_shape adds "
                            "{}",
                            i, d.padding_values[i], d.physical_shape[i] - *e));
    }
    d.padding_dims.push_back(d.padding_values[i] != 0);
  }
  if (padding.contains("dims")) {
    const json& dims = padding["dims"];
    if (!dims.is_array() || dims.size() != rank) {
      bad_field("padding.dims", "expected one boolean per axis");
    }
    for (std::size_t i = 0; i < rank; ++i) {
      if (!dims[i].is_boolean() || dims[i].get<bool>() != d.padding_dims[i]) {
        bad_field("padding.dims",
                  fmt::format("axis {} disagrees with padding.values", i));
      }
    }
  }
}

// The zero-copy record: a handle of a named type, an fd of -1 or more, a
// size that holds the buffer, known permissions; a mapping whose addresses
// are hex strings or null.
void parse_sharing(const json& j, TensorDescriptor& d) {
  if (j.contains("buffer_handle") && !j["buffer_handle"].is_null()) {
    const json& h = j["buffer_handle"];
    if (!h.is_object()) bad_field("buffer_handle", "expected an object");
    BufferHandle out;
    if (!h.contains("type") || !h["type"].is_string()) {
      bad_field("buffer_handle.type", "expected a string");
    }
    out.type = h["type"].get<std::string>();
    if (h.contains("fd")) {
      if (!h["fd"].is_number_integer() || h["fd"].get<std::int64_t>() < -1 ||
          h["fd"].get<std::int64_t>() > INT_MAX) {
        bad_field("buffer_handle.fd", "expected a descriptor number or -1");
      }
      out.fd = h["fd"].get<std::int64_t>();
    }
    out.size_bytes =
        h.contains("size_bytes")
            ? get_int(h["size_bytes"], "buffer_handle.size_bytes", true)
            : d.total_bytes;
    if (out.size_bytes < d.total_bytes) {
      bad_field("buffer_handle.size_bytes",
                fmt::format("{} bytes cannot hold memory.total_bytes {}",
                            out.size_bytes, d.total_bytes));
    }
    out.permissions = "read_write";
    if (h.contains("permissions")) {
      if (!h["permissions"].is_string()) {
        bad_field("buffer_handle.permissions", "expected a string");
      }
      out.permissions = h["permissions"].get<std::string>();
      if (out.permissions != "read_only" && out.permissions != "read_write" &&
          out.permissions != "write_only") {
        bad_field("buffer_handle.permissions",
                  fmt::format("'{}' is not read_only, read_write or "
                              "write_only",
                              out.permissions));
      }
    }
    d.buffer_handle = std::move(out);
  }
  if (j.contains("mapping") && !j["mapping"].is_null()) {
    const json& m = j["mapping"];
    if (!m.is_object()) bad_field("mapping", "expected an object");
    BufferMapping out;
    for (const auto& [key, slot] :
         {std::pair{"device_address", &out.device_address},
          std::pair{"cpu_address", &out.cpu_address}}) {
      if (!m.contains(key) || m[key].is_null()) continue;
      const std::string field = std::string("mapping.") + key;
      if (!m[key].is_string())
        bad_field(field, "expected a hex string or null");
      const std::string a = m[key].get<std::string>();
      const bool hex = a.size() > 2 && a.size() <= 18 && a[0] == '0' &&
                       (a[1] == 'x' || a[1] == 'X') &&
                       std::all_of(a.begin() + 2, a.end(), [](char c) {
                         return std::isxdigit(static_cast<unsigned char>(c));
                       });
      if (!hex) bad_field(field, fmt::format("'{}' is not a hex address", a));
      *slot = a;
    }
    if (m.contains("access_mode")) {
      if (!m["access_mode"].is_string()) {
        bad_field("mapping.access_mode", "expected a string");
      }
      out.access_mode = m["access_mode"].get<std::string>();
    }
    d.mapping = std::move(out);
  }
}

// allocation_strategy "overallocate" with max_physical_shape: one extent per
// axis, at least every concrete extent and every symbolic one's `max`
// constraint (a symbol without a max could outgrow the buffer: E3001).
void parse_allocation(const json& j, TensorDescriptor& d) {
  if (!j.contains("allocation_strategy")) return;
  const json& a = j["allocation_strategy"];
  if (!a.is_string()) bad_field("allocation_strategy", "expected a string");
  d.allocation_strategy = a.get<std::string>();
  if (d.allocation_strategy != "overallocate") {
    bad_field("allocation_strategy",
              fmt::format("'{}' is not one tessel serves (overallocate)",
                          d.allocation_strategy));
  }
  if (!j.contains("max_physical_shape")) {
    bad_field("max_physical_shape", "overallocate needs it");
  }
  d.max_physical_shape =
      get_ints(j["max_physical_shape"], "max_physical_shape");
  if (d.max_physical_shape.size() != d.dimensions.size()) {
    bad_field("max_physical_shape", "rank differs from shape.dimensions");
  }
  for (std::size_t i = 0; i < d.dimensions.size(); ++i) {
    std::int64_t need = 0;
    if (const auto* e = std::get_if<std::int64_t>(&d.dimensions[i])) {
      need = *e;
    } else {
      const std::string& name = std::get<std::string>(d.dimensions[i]);
      const auto c = d.constraints.find(name);
      if (c == d.constraints.end() || !c->second.max) {
        bad_field("max_physical_shape",
                  fmt::format("the symbolic axis '{}' has no max constraint "
                              "to size it by",
                              name));
      }
      need = *c->second.max;
    }
    if (d.max_physical_shape[i] < need) {
      bad_field("max_physical_shape",
                fmt::format("extent {} of axis {} is below the {} it must "
                            "hold",
                            d.max_physical_shape[i], i, need));
    }
  }
}

}  // namespace

TensorDescriptor descriptor_from_json(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    bad_field("(document)", fmt::format("not valid JSON ({})", e.what()));
  }
  if (!j.is_object()) bad_field("(document)", "not a JSON object");
  TensorDescriptor d;
  d.layout.clear();  // derived from the strides unless the document tags it
  if (j.contains("version")) parse_version(j["version"], d);
  if (j.contains("name") && j["name"].is_string()) d.name = j["name"];
  if (j.contains("tensor_id")) {
    if (!j["tensor_id"].is_string())
      bad_field("tensor_id", "expected a string");
    d.tensor_id = j["tensor_id"];
  }

  const json& shape = j.contains("shape") ? j["shape"] : json();
  // "shape" may be the object of the descriptor or a bare list (as in the
  // padding example of the specification).
  const json& dims = shape.is_object() && shape.contains("dimensions")
                         ? shape["dimensions"]
                         : shape;
  if (!dims.is_array() || static_cast<std::int64_t>(dims.size()) > kMaxRank) {
    bad_field("shape.dimensions", "expected an array of at most 64 extents");
  }
  for (const json& v : dims) {
    if (v.is_string() && !v.get<std::string>().empty()) {
      d.dimensions.emplace_back(v.get<std::string>());
    } else {
      d.dimensions.emplace_back(get_int(v, "shape.dimensions", true));
    }
  }
  if (shape.is_object()) {
    if (shape.contains("layout") && shape["layout"].is_string()) {
      d.layout = shape["layout"];
    }
    if (shape.contains("constraints")) {
      const json& c = shape["constraints"];
      if (!c.is_object()) bad_field("shape.constraints", "expected an object");
      for (const auto& [name, k] : c.items()) {
        const std::string f = "shape.constraints." + name;
        if (!k.is_object()) bad_field(f, "expected an object");
        DimConstraint dc;
        if (k.contains("min")) dc.min = get_int(k["min"], f + ".min", false);
        if (k.contains("max")) dc.max = get_int(k["max"], f + ".max", false);
        if (k.contains("multiple_of")) {
          dc.multiple_of = get_int(k["multiple_of"], f + ".multiple_of", true);
          if (*dc.multiple_of == 0)
            bad_field(f + ".multiple_of", "must be positive");
        }
        d.constraints[name] = dc;
      }
    }
  }

  // The standard's flat layout form: a shape list beside top-level
  // `layout`, `strides` (elements), `offset` (elements) and
  // `element_size_bytes`, with no "memory" object and possibly no dtype.
  const bool flat_form =
      !j.contains("memory") && (j.contains("strides") || j.contains("offset") ||
                                j.contains("element_size_bytes"));
  if (flat_form && j.contains("layout") && j["layout"].is_string()) {
    d.layout = j["layout"];
  }
  std::optional<std::int64_t> element_size;
  if (j.contains("element_size_bytes")) {
    element_size =
        get_int(j["element_size_bytes"], "element_size_bytes", false);
  }
  json defaulted_dtype = "FLOAT32";
  if (!j.contains("dtype") && element_size) {
    // A layout-only description gives the element size alone: the float
    // type of that size (1: u8, 2: f16, 4: f32, 8: f64) stands for it,
    // which lays the same bytes out the same way. Without that either, as
    // in the standard's shape-only examples (padding, dynamic shapes), the
    // dtype is FLOAT32; tessel always writes one.
    switch (*element_size) {
      case 1: defaulted_dtype = "UINT8"; break;
      case 2: defaulted_dtype = "FLOAT16"; break;
      case 4: defaulted_dtype = "FLOAT32"; break;
      case 8: defaulted_dtype = "FLOAT64"; break;
      default:
        bad_field("element_size_bytes",
                  fmt::format("{} bytes is no element size (and there is "
                              "no dtype)",
                              *element_size));
    }
  }
  const json& dt = j.contains("dtype") ? j["dtype"] : defaulted_dtype;
  const json& base = dt.is_object()
                         ? (dt.contains("base_type") ? dt["base_type"] : json())
                         : dt;
  if (!base.is_string()) bad_field("dtype.base_type", "expected a string");
  d.dtype = io::parse_base_type(base.get<std::string>(), "dtype.base_type");
  if (dt.is_object() && dt.contains("byte_order")) {
    const json& bo = dt["byte_order"];
    const std::string order = bo.is_string() ? bo.get<std::string>() : "";
    if (order == "big_endian" || order == "network_order") {
      d.big_endian = true;
    } else if (order != "little_endian") {
      bad_field("dtype.byte_order",
                fmt::format("unknown byte order {}", bo.dump()));
    }
  }
  if (element_size &&
      (!is_byte_addressable(d.dtype) || *element_size != item_bytes(d.dtype))) {
    bad_field("element_size_bytes",
              fmt::format("{} does not match {} elements", *element_size,
                          dtype_name(d.dtype)));
  }
  if (dt.is_object() && dt.contains("bit_order")) {
    const json& bo = dt["bit_order"];
    const std::string order = bo.is_string() ? bo.get<std::string>() : "";
    if (order != "lsb_first" && order != "msb_first") {
      bad_field("dtype.bit_order",
                fmt::format("unknown bit order {}", bo.dump()));
    }
    // tessel packs sub-byte elements low bits first, as GGUF does; the
    // other order would need a nibble swap on every load.
    if (order == "msb_first" && is_packed(d.dtype)) {
      bad_field("dtype.bit_order",
                fmt::format("msb_first {} packing is not supported (tessel "
                            "and GGUF pack lsb_first)",
                            dtype_name(d.dtype)));
    }
    d.bit_order = order;
  }
  // Inside "dtype", or beside it as in the format standard's INT8 example.
  const json* quant = nullptr;
  if (dt.is_object() && dt.contains("quantization")) {
    quant = &dt["quantization"];
  } else if (j.contains("quantization")) {
    quant = &j["quantization"];
  }
  if (quant && !quant->is_null())
    d.quantization = parse_quantization(*quant, d);

  json flat_memory = json::object();
  if (flat_form) {
    if (j.contains("strides")) flat_memory["strides"] = j["strides"];
    if (j.contains("offset")) {
      flat_memory["offset_bytes"] = checked_mul(
          get_int(j["offset"], "offset", true), item_bytes(d.dtype), "offset");
    }
  }
  const json& mem = j.contains("memory") ? j["memory"] : flat_memory;
  if (!mem.is_object()) bad_field("memory", "expected an object");
  if (j.contains("physical_shape")) {
    d.physical_shape = get_ints(j["physical_shape"], "physical_shape");
    if (d.physical_shape.size() != d.dimensions.size()) {
      bad_field("physical_shape", "rank differs from shape.dimensions");
    }
    for (std::size_t i = 0; i < d.dimensions.size(); ++i) {
      const auto* e = std::get_if<std::int64_t>(&d.dimensions[i]);
      if (e && d.physical_shape[i] < *e) {
        bad_field("physical_shape", fmt::format("extent {} of axis {} is below "
                                                "the logical {}",
                                                d.physical_shape[i], i, *e));
      }
    }
    if (j.contains("padding") && j["padding"].is_object() &&
        j["padding"].contains("mode") && j["padding"]["mode"].is_string()) {
      d.padding_mode = j["padding"]["mode"];
    }
    if (j.contains("padding") && j["padding"].is_object() &&
        j["padding"].contains("values")) {
      parse_padding_record(j["padding"], d);
    }
  }
  parse_allocation(j, d);
  if (mem.contains("alignment")) {
    d.alignment = get_int(mem["alignment"], "memory.alignment", true);
    if (d.alignment == 0 ||
        !std::has_single_bit(static_cast<std::uint64_t>(d.alignment))) {
      bad_field("memory.alignment",
                fmt::format("{} is not a power of two", d.alignment));
    }
  }
  if (mem.contains("device")) {
    const json& dev = mem["device"];
    d.device = parse_device_field(dev);
    if (dev.is_object()) {
      d.device_type = dev["type"].get<std::string>();
      d.device_id =
          dev.contains("id") ? get_int(dev["id"], "memory.device.id", true) : 0;
    } else {
      d.device_type = device_type_name(*d.device);
      d.device_id = d.device->index;
    }
    d.memory_space = dev.is_object() && dev.contains("memory_space") &&
                             dev["memory_space"].is_string()
                         ? dev["memory_space"].get<std::string>()
                     : d.device ? memory_space_name(*d.device)
                                : "device";
  }
  if (mem.contains("offset_bytes")) {
    d.offset_bytes = get_int(mem["offset_bytes"], "memory.offset_bytes", true);
  }
  const std::int64_t item = item_bytes(d.dtype);
  if (!is_byte_addressable(d.dtype) && d.offset_bytes != 0) {
    bad_field(
        "memory.offset_bytes",
        fmt::format("{} data must start at offset 0", dtype_name(d.dtype)));
  }
  if (d.offset_bytes % item != 0) {
    bad_field("memory.offset_bytes",
              fmt::format("{} is not a multiple of the element size {}",
                          d.offset_bytes, item));
  }
  if (!d.symbolic()) {
    std::vector<std::int64_t> logical;
    for (const auto& e : d.dimensions)
      logical.push_back(std::get<std::int64_t>(e));
    const auto& layout_shape =
        d.physical_shape.empty() ? logical : d.physical_shape;
    try {
      const std::vector<std::int64_t> rm = row_major(layout_shape);
      d.strides = mem.contains("strides")
                      ? get_ints(mem["strides"], "memory.strides")
                      : rm;
      if (d.strides.size() != logical.size()) {
        bad_field("memory.strides", "rank differs from shape.dimensions");
      }
      if (d.layout.empty()) {
        d.layout = same_addressing(layout_shape, d.strides, rm) ? "row-major"
                                                                : "strided";
      }
      if (const auto why = layout_mismatch(d.layout, layout_shape, d.strides)) {
        bad_field("shape.layout", *why);
      }
      if ((is_packed(d.dtype) || is_block_quantized(d.dtype)) &&
          d.strides != rm) {
        bad_field("memory.strides", fmt::format("{} data must be row-major",
                                                dtype_name(d.dtype)));
      }
      const std::int64_t needed =
          is_packed(d.dtype) || is_block_quantized(d.dtype)
              ? d.offset_bytes +
                    storage_bytes(d.dtype, checked_numel(layout_shape))
              : extent_bytes(layout_shape, d.strides, d.offset_bytes, item);
      d.total_bytes =
          mem.contains("total_bytes")
              ? get_int(mem["total_bytes"], "memory.total_bytes", true)
              : needed;
      if (needed > d.total_bytes) {
        bad_field("memory.strides",
                  fmt::format("shape and strides reach byte {} of a {}-byte "
                              "buffer",
                              needed, d.total_bytes));
      }
    } catch (const OverflowError&) {
      bad_field("shape.dimensions", "the size overflows");
    }
  } else if (mem.contains("total_bytes")) {
    d.total_bytes = get_int(mem["total_bytes"], "memory.total_bytes", true);
  }
  if (d.layout.empty()) d.layout = "row-major";  // symbolic: bind() lays it out
  if (j.contains("properties") && j["properties"].is_object()) {
    for (const auto& [k, v] : j["properties"].items()) {
      if (v.is_boolean()) d.properties[k] = v.get<bool>();
    }
  }
  if (j.contains("metadata") && j["metadata"].is_object()) {
    for (const auto& [k, v] : j["metadata"].items()) {
      d.metadata[k] = v.is_string() ? v.get<std::string>() : v.dump();
    }
  }
  parse_sharing(j, d);
  return d;
}

Tensor tensor_from_descriptor(const TensorDescriptor& d,
                              const Storage& storage) {
  TESSEL_CHECK(d.device.has_value(), DeviceMismatch, "tensor_from_descriptor",
               "the descriptor's memory is on {} {} ({} memory), a device "
               "tessel has no backend for",
               d.device_type, d.device_id, d.memory_space);
  TESSEL_CHECK(!d.mapping || d.mapping->access_mode != "device_only",
               DeviceMismatch, "tensor_from_descriptor",
               "the buffer is mapped for the device only "
               "(mapping.access_mode device_only); the CPU cannot read it");
  const Shape shape = d.shape();
  if (storage.nbytes() < d.total_bytes) {
    bad_field("memory.total_bytes",
              fmt::format("the buffer holds {} bytes, the descriptor needs {}",
                          storage.nbytes(), d.total_bytes));
  }
  // memory.alignment is a promise about the buffer that consumers rely on
  // (a kernel may assume it); a buffer that breaks it is refused rather
  // than described wrongly. Tensor::aligned() makes a copy that keeps it.
  // (An empty buffer has nothing to align.)
  const auto address = reinterpret_cast<std::uintptr_t>(storage.data());
  if (d.total_bytes > 0 &&
      address % static_cast<std::uintptr_t>(d.alignment) != 0) {
    bad_field("memory.alignment",
              fmt::format("the descriptor promises {}-byte alignment but the "
                          "buffer starts at an address aligned to {} bytes",
                          d.alignment, storage.alignment()));
  }
  const std::int64_t item = item_bytes(d.dtype);
  Tensor t(storage, shape, Strides(d.strides.begin(), d.strides.end()),
           d.offset_bytes / item, d.dtype);
  t.set_name(d.name);
  if (!d.big_endian || item == 1) return t;
  Tensor swapped = io::swapped_copy(t);
  swapped.set_name(d.name);
  return swapped;
}

Tensor dequantize_from_descriptor(const TensorDescriptor& d,
                                  const Storage& storage, DType dtype) {
  TESSEL_CHECK(is_floating_point(dtype), BadDType, "dequantize_from_descriptor",
               "the result must be a float dtype, not {}", dtype_name(dtype));
  const Tensor t = tensor_from_descriptor(d, storage);
  if (!d.quantization) return t.to(dtype);
  Tensor real = dequantize_affine(t, d.quantization->params, dtype);
  real.set_name(d.name);
  return real;
}

}  // namespace tessel
