// safetensors: u64 header length N, N bytes of JSON
// {"__metadata__": {...}, "name": {"dtype": "F32", "shape": [2, 3],
//  "data_offsets": [begin, end]}, ...}, then the data buffer that the
// [begin, end) ranges (relative to its start) tile exactly.
#include "tessel/io/safetensors.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>

#include "core/check.hpp"
#include "io/atomic_file.hpp"
#include "io/file_view.hpp"
#include "io/stream_tensors.hpp"

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
};

std::optional<DType> dtype_from_string(std::string_view s) {
  for (const auto& [name, dtype] : kDTypes) {
    if (name == s) return dtype;
  }
  return std::nullopt;
}

std::string_view dtype_string(DType dtype) {
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
  std::set<std::string> seen;
  std::string duplicate;
  // Duplicate tensor names are forbidden, but JSON parsers keep the last.
  const json::parser_callback_t watch_keys = [&](int depth,
                                                 json::parse_event_t event,
                                                 json& parsed) {
    if (event == json::parse_event_t::key && depth == 1 &&
        !seen.insert(parsed.get<std::string>()).second && duplicate.empty()) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  json header;
  try {
    header = json::parse(text, watch_keys);
  } catch (const json::parse_error& e) {
    detail::fail_at(kOp, 8 + static_cast<std::int64_t>(e.byte),
                    "the header is not valid JSON ({})", e.what());
  } catch (const json::exception& e) {
    // e.g. a number too large for a double (out_of_range 406).
    detail::fail_at(kOp, 8, "the header is not valid JSON ({})", e.what());
  }
  if (!duplicate.empty()) {
    detail::fail_at(kOp, 8, "tensor '{}' appears twice", duplicate);
  }
  if (!header.is_object())
    detail::fail_at(kOp, 8, "the header is not a JSON object");
  return header;
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

  out.tensors.reserve(entries.size());
  for (Entry& e : entries) {
    Tensor t = io::file_view(file, data_start + e.begin,
                             static_cast<std::int64_t>(e.end - e.begin),
                             e.shape, e.dtype);
    t.set_name(std::move(e.name));
    out.tensors.push_back(std::move(t));
  }
  return out;
}

SafetensorsFile load_safetensors(const std::filesystem::path& path,
                                 MapMode mode) {
  // map_file opens, sizes (an empty file maps too) and maps in one go;
  // the parser refuses what is too short.
  return parse_safetensors(Storage::map_file(path, mode));
}

void save_safetensors(const std::filesystem::path& path, TensorSource& source,
                      const std::map<std::string, std::string>& metadata) {
  std::vector<std::size_t> order;
  std::set<std::string> names;
  for (std::size_t i = 0; i < source.size(); ++i) {
    const TensorSpec& t = source.spec(i);
    TESSEL_CHECK(!t.name.empty() && t.name != "__metadata__", BadShape,
                 "save_safetensors",
                 "every tensor needs a name (and not '__metadata__')");
    TESSEL_CHECK(names.insert(t.name).second, BadShape, "save_safetensors",
                 "tensor name '{}' appears twice", t.name);
    dtype_string(t.dtype);  // E2201 before anything is written
    order.push_back(i);
  }
  // The reference writer's order: larger elements first, then by name.
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) {
                     const TensorSpec& sa = source.spec(a);
                     const TensorSpec& sb = source.spec(b);
                     const auto ea = element_size(sa.dtype);
                     const auto eb = element_size(sb.dtype);
                     return ea != eb ? ea > eb : sa.name < sb.name;
                   });
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t offset = 0;
  for (const std::size_t i : order) {
    const TensorSpec& t = source.spec(i);
    const auto nbytes = static_cast<std::uint64_t>(t.nbytes());
    header[t.name] = {
        {"dtype", dtype_string(t.dtype)},
        {"shape", std::vector<std::int64_t>(t.shape.begin(), t.shape.end())},
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

void save_safetensors(const std::filesystem::path& path,
                      const std::vector<Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  TensorListSource source(tensors);
  save_safetensors(path, source, metadata);
}

}  // namespace tessel
