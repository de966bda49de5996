// safetensors: u64 header length N, N bytes of JSON
// {"__metadata__": {...}, "name": {"dtype": "F32", "shape": [2, 3],
//  "data_offsets": [begin, end]}, ...}, then the data buffer that the
// [begin, end) ranges (relative to its start) tile exactly.
#include "tessel/io/safetensors.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string_view>

#include "core/check.hpp"
#include "core/utf8.hpp"
#include "io/atomic_file.hpp"
#include "io/file_view.hpp"
#include "io/json_strict.hpp"
#include "io/stream_tensors.hpp"
#include "tessel/ops/reduce.hpp"

namespace tessel {

namespace {

using nlohmann::json;

// The reference parser's limit on the header.
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

constexpr const char* kOp = "load_safetensors";

constexpr std::pair<std::string_view, DType> kDTypes[] = {
    {"BOOL", DType::Bool},
    {"U8", DType::U8},
    {"I8", DType::I8},
    {"F8_E5M2", DType::F8E5M2},
    {"F8_E4M3", DType::F8E4M3FN},
    {"I16", DType::I16},
    {"U16", DType::U16},
    {"F16", DType::F16},
    {"BF16", DType::BF16},
    {"I32", DType::I32},
    {"U32", DType::U32},
    {"F32", DType::F32},
    {"F64", DType::F64},
    {"I64", DType::I64},
    {"U64", DType::U64},
    {"C64", DType::C64},  // safetensors has no complex128
};

std::optional<DType> dtype_from_string(std::string_view s) {
  for (const auto& [name, dtype] : kDTypes) {
    if (name == s) return dtype;
  }
  return std::nullopt;
}

// i4/u4 codes are stored as U8 bytes, two per byte (docs/quantisation.md).
DType header_dtype(DType dtype) { return is_packed(dtype) ? DType::U8 : dtype; }

std::string_view dtype_string(DType dtype) {
  dtype = header_dtype(dtype);
  for (const auto& [name, d] : kDTypes) {
    if (d == dtype) return name;
  }
  detail::fail(ErrorCode::BadDType, "save_safetensors",
               "dtype {} has no safetensors equivalent", dtype_name(dtype));
}

struct Entry {
  std::string name;
  DType dtype;
  Shape shape;
  std::uint64_t begin;
  std::uint64_t end;
};

std::uint64_t read_offset(const json& v, std::int64_t at,
                          const std::string& name) {
  if (!v.is_number_unsigned() &&
      !(v.is_number_integer() && v.get<std::int64_t>() >= 0)) {
    detail::fail_at(kOp, at,
                    "tensor '{}': data_offsets must be two "
                    "non-negative integers",
                    name);
  }
  return v.get<std::uint64_t>();
}

Entry parse_entry(const std::string& name, const json& e, std::int64_t at) {
  if (!e.is_object()) {
    detail::fail_at(kOp, at, "tensor '{}' is not an object", name);
  }
  const auto dt = e.find("dtype");
  const auto sh = e.find("shape");
  const auto off = e.find("data_offsets");
  if (dt == e.end() || sh == e.end() || off == e.end()) {
    detail::fail_at(kOp, at,
                    "tensor '{}' needs dtype, shape and "
                    "data_offsets",
                    name);
  }
  if (!dt->is_string()) {
    detail::fail_at(kOp, at, "tensor '{}': dtype is not a string", name);
  }
  const auto dtype = dtype_from_string(dt->get_ref<const std::string&>());
  if (!dtype) {
    detail::fail_at(kOp, at,
                    "tensor '{}': dtype '{}' is not supported by "
                    "tessel",
                    name, dt->get_ref<const std::string&>());
  }
  if (!sh->is_array() || static_cast<std::int64_t>(sh->size()) > kMaxRank) {
    detail::fail_at(kOp, at,
                    "tensor '{}': shape must be an array of at "
                    "most {} extents",
                    name, kMaxRank);
  }
  Shape shape;
  for (const json& d : *sh) {
    if (!d.is_number_integer() || d.get<std::int64_t>() < 0 ||
        (d.is_number_unsigned() &&
         d.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))) {
      detail::fail_at(kOp, at,
                      "tensor '{}': extents must be non-negative "
                      "integers",
                      name);
    }
    shape.push_back(d.get<std::int64_t>());
  }
  if (!off->is_array() || off->size() != 2) {
    detail::fail_at(kOp, at,
                    "tensor '{}': data_offsets must be [begin, "
                    "end]",
                    name);
  }
  Entry entry{name, *dtype, shape, read_offset((*off)[0], at, name),
              read_offset((*off)[1], at, name)};
  if (entry.end < entry.begin) {
    detail::fail_at(kOp, at, "tensor '{}': data_offsets end before begin",
                    name);
  }
  std::int64_t nbytes = 0;
  try {
    nbytes = checked_mul(checked_numel(entry.shape), element_size(*dtype),
                         "safetensors tensor size");
  } catch (const Error&) {
    detail::fail_at(kOp, at, "tensor '{}': the size of shape {} overflows",
                    name, fmt::join(entry.shape, ", "));
  }
  if (entry.end - entry.begin != static_cast<std::uint64_t>(nbytes)) {
    detail::fail_at(kOp, at,
                    "tensor '{}': {} bytes for shape [{}] of {}, "
                    "which needs {}",
                    name, entry.end - entry.begin, fmt::join(entry.shape, ", "),
                    dtype_name(*dtype), nbytes);
  }
  return entry;
}

json parse_header_json(std::string_view text) {
  // Duplicate keys are refused at every depth: two entries for one tensor
  // name, or two values for one __metadata__ key, would be read as either.
  json header;
  if (const auto defect = io::parse_json_strict(text, header)) {
    detail::fail_at(kOp, 8 + std::max<std::int64_t>(defect->byte, 0),
                    "the header is not valid JSON ({})", defect->message);
  }
  if (!header.is_object())
    detail::fail_at(kOp, 8, "the header is not a JSON object");
  return header;
}

// ---- the tessel.quantization entry ----------------------------------------
// {"w": {"dtype": "i4", "shape": [4, 64], "scheme": "per_group_affine",
//        "axis": 1, "group_size": 32, "scale": "w_scale",
//        "zero_point": "w_zero_point"}, ...}: "dtype" for every entry,
// "shape" for packed codes, the rest for quantised tensors.

// The header shape of packed codes: the last axis halved when it is even
// (rows stay rows for a reader without the entry), else the bytes in 1-D.
std::vector<std::int64_t> header_shape(const TensorSpec& t) {
  std::vector<std::int64_t> s(t.shape.begin(), t.shape.end());
  if (!is_packed(t.dtype)) return s;
  if (!s.empty() && s.back() % 2 == 0) {
    s.back() /= 2;
    return s;
  }
  return {t.nbytes()};
}

// Packed codes of odd count leave the high nibble of their last byte
// unused: it is written as 0, so equal tensors give equal files.
class ZeroPadNibble final : public TensorSource {
 public:
  explicit ZeroPadNibble(TensorSource& inner) : inner_(inner) {}
  std::size_t size() const override { return inner_.size(); }
  const TensorSpec& spec(std::size_t i) const override {
    return inner_.spec(i);
  }
  const std::uint8_t* bytes(std::size_t i) override {
    return odd_packed(i) ? nullptr : inner_.bytes(i);
  }
  void read(std::size_t i, std::int64_t offset,
            std::span<std::uint8_t> out) override {
    inner_.read(i, offset, out);
    if (odd_packed(i) && !out.empty() &&
        offset + static_cast<std::int64_t>(out.size()) == spec(i).nbytes()) {
      out.back() &= 0x0f;
    }
  }
  void written(std::size_t i, std::int64_t end) override {
    inner_.written(i, end);
  }

 private:
  bool odd_packed(std::size_t i) const {
    const TensorSpec& t = inner_.spec(i);
    return is_packed(t.dtype) && t.numel() % 2 == 1;
  }
  TensorSource& inner_;
};

// Removes the entry from the metadata and parses it ({} when absent).
json take_quantization_entry(std::map<std::string, std::string>& metadata) {
  const auto it = metadata.find(kSafetensorsQuantizationKey);
  if (it == metadata.end()) return json::object();
  json j;
  try {
    j = json::parse(it->second);
  } catch (const json::exception& e) {
    detail::fail_at(kOp, 8, "__metadata__ '{}' is not valid JSON ({})",
                    kSafetensorsQuantizationKey, e.what());
  }
  TESSEL_CHECK_AT(j.is_object(), kOp, 8, "__metadata__ '{}' is not an object",
                  kSafetensorsQuantizationKey);
  metadata.erase(it);
  return j;
}

// The dtype and shape packed codes get back, by tensor name, after
// checking every entry against the header.
std::map<std::string, std::pair<DType, Shape>> restored_dtypes(
    const json& entries, const std::vector<Entry>& header) {
  std::map<std::string, const Entry*> by_name;
  for (const Entry& e : header) by_name[e.name] = &e;
  std::map<std::string, std::pair<DType, Shape>> packed;
  for (const auto& [name, q] : entries.items()) {
    const auto found = by_name.find(name);
    TESSEL_CHECK_AT(found != by_name.end(), kOp, 8,
                    "{} describes tensor '{}', which the file does not hold",
                    kSafetensorsQuantizationKey, name);
    TESSEL_CHECK_AT(
        q.is_object() && q.contains("dtype") && q["dtype"].is_string(), kOp, 8,
        "{} of tensor '{}' needs a dtype name", kSafetensorsQuantizationKey,
        name);
    const std::string& dtype_text = q["dtype"].get_ref<const std::string&>();
    DType dtype{};
    try {
      dtype = parse_dtype(dtype_text);
    } catch (const Error&) {
      detail::fail_at(kOp, 8, "tensor '{}': unknown dtype '{}' in {}", name,
                      dtype_text, kSafetensorsQuantizationKey);
    }
    TESSEL_CHECK_AT(is_affine_quantized_dtype(dtype), kOp, 8,
                    "tensor '{}': {} says {}, not one of i8 u8 i16 u16 i4 u4",
                    name, kSafetensorsQuantizationKey, dtype_name(dtype));
    const Entry& e = *found->second;
    const std::uint64_t stored = e.end - e.begin;
    if (!is_packed(dtype)) {
      TESSEL_CHECK_AT(e.dtype == dtype, kOp, 8,
                      "tensor '{}' is {} in the header but {} in {}", name,
                      dtype_name(e.dtype), dtype_name(dtype),
                      kSafetensorsQuantizationKey);
      continue;
    }
    const auto sh = q.find("shape");
    TESSEL_CHECK_AT(sh != q.end() && sh->is_array() &&
                        static_cast<std::int64_t>(sh->size()) <= kMaxRank,
                    kOp, 8,
                    "tensor '{}': packed {} codes need their shape (at most "
                    "{} extents) in {}",
                    name, dtype_name(dtype), kMaxRank,
                    kSafetensorsQuantizationKey);
    Shape shape;
    for (const json& d : *sh) {
      TESSEL_CHECK_AT(
          d.is_number_integer() && d.get<std::int64_t>() >= 0 &&
              !(d.is_number_unsigned() &&
                d.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)),
          kOp, 8, "tensor '{}': extents must be non-negative integers", name);
      shape.push_back(d.get<std::int64_t>());
    }
    std::int64_t need = 0;
    try {
      need = storage_bytes(dtype, checked_numel(shape));
    } catch (const Error&) {
      detail::fail_at(kOp, 8, "tensor '{}': the size of shape [{}] overflows",
                      name, fmt::join(shape, ", "));
    }
    TESSEL_CHECK_AT(
        e.dtype == DType::U8 && stored == static_cast<std::uint64_t>(need), kOp,
        8,
        "tensor '{}' holds {} bytes of {} where {} codes of shape [{}], two "
        "per byte, need {} bytes of U8",
        name, stored, dtype_name(e.dtype), dtype_name(dtype),
        fmt::join(shape, ", "), need);
    packed[name] = {dtype, std::move(shape)};
  }
  return packed;
}

// A quantised tensor's parameters from its entry, the siblings looked up
// among the loaded tensors.
AffineQuantization read_parameters(const std::string& name, const json& q,
                                   const SafetensorsFile& file) {
  const auto sibling = [&](const char* key, bool required) {
    if (!q.contains(key) || q[key].is_null()) {
      TESSEL_CHECK_AT(!required, kOp, 8,
                      "tensor '{}' is quantised but {} names no {} tensor",
                      name, kSafetensorsQuantizationKey, key);
      return Tensor();
    }
    TESSEL_CHECK_AT(q[key].is_string(), kOp, 8,
                    "tensor '{}': the {} must be a tensor name", name, key);
    const std::string& other = q[key].get_ref<const std::string&>();
    TESSEL_CHECK_AT(other != name, kOp, 8, "tensor '{}' cannot be its own {}",
                    name, key);
    TESSEL_CHECK_AT(file.contains(other), kOp, 8,
                    "tensor '{}' is quantised but its {} '{}' is not in the "
                    "file",
                    name, key, other);
    return file.at(other);
  };
  TESSEL_CHECK_AT(q.contains("scheme") && q["scheme"].is_string(), kOp, 8,
                  "tensor '{}': {} needs a scheme", name,
                  kSafetensorsQuantizationKey);
  const std::string& scheme = q["scheme"].get_ref<const std::string&>();
  AffineQuantization p;
  p.scale = sibling("scale", true);
  p.zero_point = sibling("zero_point", false);
  TESSEL_CHECK_AT(is_floating_point(p.scale.dtype()), kOp, 8,
                  "tensor '{}': its scale '{}' is {}, not a float dtype", name,
                  p.scale.name(), dtype_name(p.scale.dtype()));
  TESSEL_CHECK_AT(
      !p.zero_point.defined() || (is_integral(p.zero_point.dtype())), kOp, 8,
      "tensor '{}': its zero point '{}' is {}, not an integer "
      "dtype",
      name, p.zero_point.name(), dtype_name(p.zero_point.dtype()));
  if (q.contains("axis")) {
    TESSEL_CHECK_AT(q["axis"].is_number_integer(), kOp, 8,
                    "tensor '{}': axis is not an integer", name);
    p.axis = q["axis"].get<std::int64_t>();
  }
  if (q.contains("group_size")) {
    TESSEL_CHECK_AT(q["group_size"].is_number_integer() &&
                        q["group_size"].get<std::int64_t>() > 0,
                    kOp, 8, "tensor '{}': group_size is not a positive integer",
                    name);
    p.group_size = q["group_size"].get<std::int64_t>();
  }
  const Tensor& codes = file.at(name);
  std::int64_t axis = 0;
  try {
    axis = check_affine_quantization(codes.shape(), p,
                                     kSafetensorsQuantizationKey);
  } catch (const Error& e) {
    detail::fail_at(kOp, 8, "tensor '{}': {}", name, e.message());
  }
  // The scheme the parameters make must be the one written.
  TESSEL_CHECK_AT(affine_scheme_name(p) == scheme, kOp, 8,
                  "tensor '{}': {} says {} but its parameters (scale of "
                  "shape {}, {}, group_size {}) make it {}",
                  name, kSafetensorsQuantizationKey, scheme,
                  shape_string(p.scale.shape()),
                  p.zero_point.defined() ? "a zero point" : "no zero point",
                  p.group_size, affine_scheme_name(p));
  p.axis = affine_granularity(p) == AffineGranularity::PerTensor ? -1 : axis;
  return p;
}

}  // namespace

bool SafetensorsFile::contains(const std::string& name) const {
  return std::any_of(tensors.begin(), tensors.end(),
                     [&](const Tensor& t) { return t.name() == name; });
}

const Tensor& SafetensorsFile::at(const std::string& name) const {
  for (const Tensor& t : tensors) {
    if (t.name() == name) return t;
  }
  throw FormatError(ErrorCode::MalformedFile,
                    fmt::format("[safetensors] no tensor named '{}'", name));
}

Tensor SafetensorsFile::dequantized(const std::string& name,
                                    DType dtype) const {
  TESSEL_CHECK(is_floating_point(dtype), BadDType, "dequantized",
               "the result must be a float dtype, not {}", dtype_name(dtype));
  const Tensor& t = at(name);
  const auto it = quantization.find(name);
  if (it == quantization.end()) return t.to(dtype);
  Tensor real = dequantize_affine(t, it->second, dtype);
  real.set_name(name);
  return real;
}

std::string safetensors_scale_name(const std::string& name) {
  return name + "_scale";
}

std::string safetensors_zero_point_name(const std::string& name) {
  return name + "_zero_point";
}

SafetensorsFile parse_safetensors(const Storage& file) {
  static_assert(std::endian::native == std::endian::little,
                "safetensors data is little-endian; big-endian hosts need a "
                "byte-swapping load");
  const auto size = static_cast<std::uint64_t>(file.nbytes());
  const auto* bytes = static_cast<const std::uint8_t*>(file.data());
  if (size < 8)
    detail::fail_at(kOp, 0, "the file is shorter than its 8-byte length");
  std::uint64_t header_len = 0;
  std::memcpy(&header_len, bytes, 8);
  if (header_len > kMaxHeaderBytes) {
    detail::fail_at(kOp, 0, "header length {} exceeds the limit of {}",
                    header_len, kMaxHeaderBytes);
  }
  if (header_len > size - 8) {
    detail::fail_at(kOp, 0,
                    "header length {} runs past the end of the "
                    "{}-byte file",
                    header_len, size);
  }
  const json header = parse_header_json(
      std::string_view(reinterpret_cast<const char*>(bytes + 8), header_len));

  SafetensorsFile out;
  std::vector<Entry> entries;
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      if (!value.is_object())
        detail::fail_at(kOp, 8, "__metadata__ is not an object");
      for (const auto& [k, v] : value.items()) {
        if (!v.is_string()) {
          detail::fail_at(kOp, 8,
                          "__metadata__ value of '{}' is not a "
                          "string",
                          k);
        }
        out.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    entries.push_back(parse_entry(name, value, 8));
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
  });
  const std::uint64_t data_start = 8 + header_len;
  const std::uint64_t data_size = size - data_start;
  std::uint64_t expected = 0;
  for (const Entry& e : entries) {
    if (e.begin != expected) {
      detail::fail_at(
          kOp,
          static_cast<std::int64_t>(data_start + std::min(e.begin, data_size)),
          "tensor '{}' starts at data offset {} but the "
          "previous data ends at {} (gap or overlap)",
          e.name, e.begin, expected);
    }
    expected = e.end;
  }
  if (expected != data_size) {
    detail::fail_at(
        kOp,
        static_cast<std::int64_t>(data_start + std::min(expected, data_size)),
        "the tensors cover {} data bytes but the file "
        "holds {}",
        expected, data_size);
  }

  json quant;
  std::map<std::string, std::pair<DType, Shape>> packed;
  try {
    quant = take_quantization_entry(out.metadata);
    packed = restored_dtypes(quant, entries);
  } catch (const json::exception& e) {
    detail::fail_at(kOp, 8, "{} is malformed ({})", kSafetensorsQuantizationKey,
                    e.what());
  }

  out.tensors.reserve(entries.size());
  for (Entry& e : entries) {
    const auto restored = packed.find(e.name);
    const bool is_codes = restored != packed.end();
    Tensor t = io::file_view(file, data_start + e.begin,
                             static_cast<std::int64_t>(e.end - e.begin),
                             is_codes ? restored->second.second : e.shape,
                             is_codes ? restored->second.first : e.dtype);
    t.set_name(std::move(e.name));
    out.tensors.push_back(std::move(t));
  }
  try {
    for (const auto& [name, q] : quant.items()) {
      if (q.contains("scheme") || q.contains("scale")) {
        out.quantization[name] = read_parameters(name, q, out);
      }
    }
  } catch (const json::exception& e) {
    detail::fail_at(kOp, 8, "{} is malformed ({})", kSafetensorsQuantizationKey,
                    e.what());
  }
  return out;
}

SafetensorsFile load_safetensors(const std::filesystem::path& path,
                                 MapMode mode) {
  // map_file opens, sizes (an empty file maps too) and maps in one go;
  // the parser refuses what is too short.
  return parse_safetensors(Storage::map_file(path, mode));
}

void save_safetensors(
    const std::filesystem::path& path, TensorSource& input,
    const std::map<std::string, std::string>& metadata,
    const std::map<std::string, AffineQuantization>& quantization) {
  constexpr const char* op = "save_safetensors";
  ZeroPadNibble source(input);
  std::vector<std::size_t> order;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < source.size(); ++i) {
    const TensorSpec& t = source.spec(i);
    TESSEL_CHECK(!t.name.empty() && t.name != "__metadata__", BadShape, op,
                 "every tensor needs a name (and not '__metadata__')");
    TESSEL_CHECK(index.emplace(t.name, i).second, BadShape, op,
                 "tensor name '{}' appears twice", t.name);
    dtype_string(t.dtype);  // E2201 before anything is written
    order.push_back(i);
  }
  TESSEL_CHECK(!metadata.count(kSafetensorsQuantizationKey), BadShape, op,
               "the metadata key '{}' is the writer's own; pass quantisation "
               "parameters as `quantization`",
               kSafetensorsQuantizationKey);
  json entries = json::object();
  for (std::size_t i = 0; i < source.size(); ++i) {
    const TensorSpec& t = source.spec(i);
    if (!is_packed(t.dtype)) continue;
    entries[t.name] = {
        {"dtype", dtype_name(t.dtype)},
        {"shape", std::vector<std::int64_t>(t.shape.begin(), t.shape.end())}};
  }
  for (const auto& [name, p] : quantization) {
    const auto it = index.find(name);
    TESSEL_CHECK(it != index.end(), BadShape, op,
                 "quantization is given for '{}' but no tensor has that name",
                 name);
    const TensorSpec& t = source.spec(it->second);
    TESSEL_CHECK(is_affine_quantized_dtype(t.dtype), BadDType, op,
                 "tensor '{}' is {}; quantised codes are i8, u8, i16, u16, "
                 "i4 or u4",
                 name, dtype_name(t.dtype));
    const std::int64_t axis = check_affine_quantization(t.shape, p, op);
    const auto sibling = [&, &name = name](const std::string& other,
                                           const Tensor& param,
                                           const char* what) {
      TESSEL_CHECK(!quantization.count(other), BadShape, op,
                   "tensor '{}' cannot be quantised and the {} of '{}' at "
                   "once",
                   other, what, name);
      const auto s = index.find(other);
      TESSEL_CHECK(s != index.end(), BadShape, op,
                   "the {} of '{}' is written as tensor '{}', which the "
                   "source does not hold",
                   what, name, other);
      const TensorSpec& have = source.spec(s->second);
      TESSEL_CHECK(have.dtype == param.dtype() && have.shape == param.shape(),
                   BadShape, op,
                   "tensor '{}' ({} of shape {}) is not the {} of '{}' ({} "
                   "of shape {})",
                   other, dtype_name(have.dtype), shape_string(have.shape),
                   what, name, dtype_name(param.dtype()),
                   shape_string(param.shape()));
    };
    json& e = entries[name];
    e["dtype"] = dtype_name(t.dtype);
    e["scheme"] = affine_scheme_name(p);
    const AffineGranularity g = affine_granularity(p);
    if (g != AffineGranularity::PerTensor) e["axis"] = axis;
    if (g == AffineGranularity::PerGroup) e["group_size"] = p.group_size;
    sibling(safetensors_scale_name(name), p.scale, "scale");
    e["scale"] = safetensors_scale_name(name);
    if (p.zero_point.defined()) {
      sibling(safetensors_zero_point_name(name), p.zero_point, "zero point");
      e["zero_point"] = safetensors_zero_point_name(name);
    }
  }
  std::map<std::string, std::string> meta = metadata;
  if (!entries.empty()) meta[kSafetensorsQuantizationKey] = entries.dump();
  // The header is JSON text, so every name and metadata string must be
  // UTF-8 (a GGUF string value or a file name may not be).
  const auto require_utf8 = [](std::string_view text, std::string_view what) {
    TESSEL_CHECK(detail::utf8_invalid_offset(text) == std::string_view::npos,
                 MalformedFile, "save_safetensors",
                 "{} is not valid UTF-8, which a safetensors header (JSON) "
                 "cannot hold",
                 what);
  };
  for (const auto& [key, value] : meta) {
    require_utf8(key, "a metadata key");
    require_utf8(value, fmt::format("the metadata value of '{}'", key));
  }
  for (std::size_t i = 0; i < source.size(); ++i) {
    require_utf8(source.spec(i).name, "a tensor name");
  }

  // The reference writer's order: larger elements first, then by name.
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) {
                     const TensorSpec& sa = source.spec(a);
                     const TensorSpec& sb = source.spec(b);
                     const auto ea = element_size(header_dtype(sa.dtype));
                     const auto eb = element_size(header_dtype(sb.dtype));
                     return ea != eb ? ea > eb : sa.name < sb.name;
                   });
  json header = json::object();
  if (!meta.empty()) header["__metadata__"] = meta;
  std::uint64_t offset = 0;
  for (const std::size_t i : order) {
    const TensorSpec& t = source.spec(i);
    const auto nbytes = static_cast<std::uint64_t>(t.nbytes());
    header[t.name] = {{"dtype", dtype_string(t.dtype)},
                      {"shape", header_shape(t)},
                      {"data_offsets", {offset, offset + nbytes}}};
    offset += nbytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::uint8_t length[8];
  const std::uint64_t header_len = text.size();
  std::memcpy(length, &header_len, 8);

  io::AtomicFile file(path);
  file.write(length);
  file.write({reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
  std::vector<std::uint8_t> buffer;
  for (const std::size_t i : order) {
    io::write_tensor_data(file, source, i, buffer);
  }
  file.commit();
}

void save_safetensors(
    const std::filesystem::path& path, const std::vector<Tensor>& tensors,
    const std::map<std::string, std::string>& metadata,
    const std::map<std::string, AffineQuantization>& quantization) {
  constexpr const char* op = "save_safetensors";
  std::vector<Tensor> all;
  all.reserve(tensors.size() + 2 * quantization.size());
  std::map<std::string, std::size_t> index;
  for (const Tensor& t : tensors) {
    Tensor u = t;
    // Packed codes that start at a high nibble are not whole bytes.
    if (t.defined() && is_packed(t.dtype()) && t.storage_offset() % 2 != 0) {
      u = t.clone();
      u.set_name(t.name());
    }
    index.emplace(t.defined() ? t.name() : std::string(), all.size());
    all.push_back(std::move(u));
  }
  // Each scale and zero point joins the list under its sibling name,
  // unless the list holds it already (as a loaded file's list does).
  const auto add = [&](const std::string& owner, const std::string& name,
                       const Tensor& param, const char* what) {
    if (!param.defined()) return;  // refused by the checks that follow
    if (const auto it = index.find(name); it != index.end()) {
      const Tensor& have = all[it->second];
      const bool same = have.dtype() == param.dtype() &&
                        have.shape() == param.shape() &&
                        ((have.shares_storage_with(param) &&
                          have.storage_offset() == param.storage_offset() &&
                          have.strides() == param.strides()) ||
                         equal(have, param));
      TESSEL_CHECK(same, BadShape, op,
                   "tensor '{}' in the list differs from the {} of '{}'", name,
                   what, owner);
      return;
    }
    Tensor sibling(param.storage(), param.shape(), param.strides(),
                   param.storage_offset(), param.dtype());
    sibling.set_name(name);
    index.emplace(name, all.size());
    all.push_back(std::move(sibling));
  };
  for (const auto& [name, p] : quantization) {
    add(name, safetensors_scale_name(name), p.scale, "scale");
    add(name, safetensors_zero_point_name(name), p.zero_point, "zero point");
  }
  TensorListSource source(std::move(all));
  save_safetensors(path, source, metadata, quantization);
}

}  // namespace tessel
