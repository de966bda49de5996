// .npy: "\x93NUMPY", version, header length, a Python dict literal
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}, then the data.
#include "tessel/io/npy.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "core/check.hpp"
#include "io/atomic_file.hpp"
#include "io/byteswap.hpp"
#include "io/file_view.hpp"
#include "io/stream_tensors.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel {

namespace {

constexpr const char* kOp = "load_npy";

struct Descr {
  DType dtype;
  bool big_endian;
};

Descr parse_descr(std::string_view d, std::int64_t offset) {
  TESSEL_CHECK_AT(d.size() >= 3, kOp, offset, "unsupported descr '{}'", d);
  const char order = d[0];
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    detail::fail_at(kOp, offset, "unsupported byte order in descr '{}'", d);
  }
  const std::string_view type = d.substr(1);
  constexpr std::pair<std::string_view, DType> kTypes[] = {
      {"b1", DType::Bool}, {"u1", DType::U8},    {"i1", DType::I8},
      {"i2", DType::I16},  {"i4", DType::I32},   {"i8", DType::I64},
      {"u2", DType::U16},  {"u4", DType::U32},   {"u8", DType::U64},
      {"f2", DType::F16},  {"f4", DType::F32},   {"f8", DType::F64},
      {"c8", DType::C64},  {"c16", DType::C128},
  };
  for (const auto& [name, dtype] : kTypes) {
    if (name == type) {
      const bool big = order == '>' || (order == '=' && std::endian::native ==
                                                            std::endian::big);
      return {dtype, big && element_size(dtype) > 1};
    }
  }
  detail::fail_at(kOp, offset, "descr '{}' has no tessel dtype", d);
}

// A cursor over the header dict with bounds-checked reads.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::int64_t base)
      : text_(text), base_(base) {}

  void skip_space() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t' ||
            text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool peek(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  void expect(char c) {
    if (!peek(c)) fail(fmt::format("expected '{}'", c));
    ++pos_;
  }
  std::string_view string() {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
      fail("expected a string");
    }
    const char quote = text_[pos_++];
    const std::size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) ++pos_;
    if (pos_ >= text_.size()) fail("unterminated string");
    return text_.substr(start, pos_++ - start);
  }
  bool boolean() {
    skip_space();
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("expected True or False");
  }
  Shape tuple() {
    expect('(');
    Shape shape;
    while (!peek(')')) {
      skip_space();
      std::int64_t v = 0;
      std::size_t digits = 0;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
        if (v > (std::numeric_limits<std::int64_t>::max() - 9) / 10) {
          fail("shape extent too large");
        }
        v = v * 10 + (text_[pos_++] - '0');
        ++digits;
      }
      if (digits == 0) fail("expected a non-negative integer in the shape");
      if (static_cast<std::int64_t>(shape.size()) >= kMaxRank)
        fail("too many dimensions");
      shape.push_back(v);
      if (!peek(')')) expect(',');
    }
    expect(')');
    return shape;
  }
  std::int64_t offset() const {
    return base_ + static_cast<std::int64_t>(pos_);
  }
  [[noreturn]] void fail(const std::string& what) const {
    detail::fail_at(kOp, offset(), "{}", what);
  }

 private:
  std::string_view text_;
  std::int64_t base_;
  std::size_t pos_ = 0;
};

// What the header says about the data that follows it.
struct NpyLayout {
  DType dtype;
  Shape stored;  // the shape of the bytes in C order
  bool fortran;
  bool big_endian;
  std::int64_t data_at;
  std::int64_t numel;
  std::int64_t nbytes;
};

NpyLayout parse_layout(std::span<const std::uint8_t> bytes) {
  constexpr std::uint8_t kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0) {
    detail::fail_at(kOp, 0, "not a .npy file (bad magic)");
  }
  const std::uint8_t major = bytes[6];
  if (major < 1 || major > 3)
    detail::fail_at(kOp, 6, "unsupported .npy version {}", major);
  std::size_t header_len = 0;
  std::size_t header_start = 10;
  if (major == 1) {
    header_len = bytes[8] | (static_cast<std::size_t>(bytes[9]) << 8);
  } else {
    TESSEL_CHECK_AT(bytes.size() >= 12, kOp, 8, "truncated header length");
    header_len = bytes[8] | (static_cast<std::size_t>(bytes[9]) << 8) |
                 (static_cast<std::size_t>(bytes[10]) << 16) |
                 (static_cast<std::size_t>(bytes[11]) << 24);
    header_start = 12;
  }
  if (header_len > bytes.size() - header_start) {
    detail::fail_at(kOp, static_cast<std::int64_t>(header_start - 2),
                    "header of {} bytes runs past the end of the file",
                    header_len);
  }
  const std::string_view text(
      reinterpret_cast<const char*>(bytes.data() + header_start), header_len);
  HeaderParser p(text, static_cast<std::int64_t>(header_start));
  std::optional<Descr> descr;
  std::optional<bool> fortran;
  std::optional<Shape> shape;
  p.expect('{');
  while (!p.peek('}')) {
    const std::int64_t key_at = p.offset();
    const std::string_view key = p.string();
    p.expect(':');
    if (key == "descr") {
      const std::int64_t at = p.offset();
      descr = parse_descr(p.string(), at);
    } else if (key == "fortran_order") {
      fortran = p.boolean();
    } else if (key == "shape") {
      shape = p.tuple();
    } else {
      detail::fail_at(kOp, key_at, "unknown header key '{}'", key);
    }
    if (!p.peek('}')) p.expect(',');
  }
  if (!descr || !fortran || !shape) {
    detail::fail_at(kOp, static_cast<std::int64_t>(header_start),
                    "the header needs 'descr', 'fortran_order' and 'shape'");
  }
  const std::int64_t data_at =
      static_cast<std::int64_t>(header_start + header_len);
  std::int64_t numel = 0;
  std::int64_t nbytes = 0;
  try {
    numel = checked_numel(*shape);
    nbytes = storage_bytes(descr->dtype, numel);
  } catch (const Error&) {
    detail::fail_at(kOp, static_cast<std::int64_t>(header_start),
                    "shape {} is too large", shape_string(*shape));
  }
  const auto available = static_cast<std::int64_t>(bytes.size()) - data_at;
  if (available != nbytes) {
    detail::fail_at(
        kOp, data_at, "shape {} of {} needs {} data bytes but the file has {}",
        shape_string(*shape), dtype_name(descr->dtype), nbytes, available);
  }
  // Fortran order: the bytes are the transpose in C order.
  Shape stored = *shape;
  if (*fortran) std::reverse(stored.begin(), stored.end());
  return {descr->dtype, stored, *fortran, descr->big_endian,
          data_at,      numel,  nbytes};
}

// The logical tensor over the stored bytes: Fortran order is a transposed
// view of them.
Tensor logical_view(const NpyLayout& layout, Tensor stored) {
  if (!layout.fortran || layout.stored.size() < 2) return stored;
  SmallVector<std::int64_t, 8> order;
  for (std::size_t d = layout.stored.size(); d-- > 0;)
    order.push_back(static_cast<std::int64_t>(d));
  return stored.permute(
      std::span<const std::int64_t>(order.data(), order.size()));
}

// The data after the header copied into memory of its own (byte-swapped
// when big-endian), as the logical tensor.
Tensor copy_data(const NpyLayout& layout, std::span<const std::uint8_t> bytes) {
  const Tensor stored =
      from_blob(const_cast<std::uint8_t*>(bytes.data() + layout.data_at),
                layout.stored, layout.dtype);
  return logical_view(
      layout, layout.big_endian ? io::swapped_copy(stored) : stored.clone());
}

}  // namespace

Tensor parse_npy(std::span<const std::uint8_t> bytes) {
  return copy_data(parse_layout(bytes), bytes);
}

Tensor load_npy(const std::filesystem::path& path) {
  try {
    // Mapped, so that loading costs the header alone: little-endian data
    // stays a zero-copy view of the file; only big-endian data is copied
    // (to swap its bytes). Copy-on-write: the tensor is writable, as a
    // loaded array should be, and writes stay in this process.
    const Storage file = Storage::map_file(path, MapMode::CopyOnWrite);
    const std::span<const std::uint8_t> bytes(
        static_cast<const std::uint8_t*>(file.data()),
        static_cast<std::size_t>(file.nbytes()));
    const NpyLayout layout = parse_layout(bytes);
    if (layout.big_endian && element_size(layout.dtype) > 1)
      return copy_data(layout, bytes);
    return logical_view(
        layout, io::file_view(file, static_cast<std::uint64_t>(layout.data_at),
                              layout.nbytes, layout.stored, layout.dtype));
  } catch (const FormatError& e) {
    throw FormatError(ErrorCode::MalformedFile,
                      fmt::format("{} ('{}')", e.message(), path.string()),
                      e.byte_offset());
  }
}

void save_npy(const std::filesystem::path& path, TensorSource& source,
              std::size_t index, Durability durability) {
  TESSEL_CHECK(index < source.size(), OutOfRange, "save_npy", "tensor {} of {}",
               index, source.size());
  const TensorSpec& t = source.spec(index);
  TESSEL_CHECK(is_byte_addressable(t.dtype) && t.dtype != DType::BF16 &&
                   t.dtype != DType::F8E4M3FN && t.dtype != DType::F8E5M2,
               BadDType, "save_npy", "NumPy has no {} dtype; convert first",
               dtype_name(t.dtype));
  const std::string descr =
      fmt::format("{}{}{}", element_size(t.dtype) == 1 ? '|' : '<',
                  t.dtype == DType::Bool       ? 'b'
                  : is_complex(t.dtype)        ? 'c'
                  : is_floating_point(t.dtype) ? 'f'
                  : is_signed(t.dtype)         ? 'i'
                                               : 'u',
                  element_size(t.dtype));
  static_assert(std::endian::native == std::endian::little,
                "save_npy writes native bytes as little-endian");
  std::string shape;
  for (auto e : t.shape) shape += std::to_string(e) + ", ";
  if (t.shape.size() > 1)
    shape.resize(shape.size() - 2);
  else if (t.shape.size() == 1)
    shape.resize(shape.size() - 1);
  std::string dict =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}",
                  descr, shape);
  // Pad with spaces so the data starts on a 64-byte boundary, then '\n'.
  const bool v2 = dict.size() + 11 > 65535;
  const std::size_t prefix = v2 ? 12 : 10;
  const std::size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict.push_back('\n');
  std::vector<std::uint8_t> header = {
      0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<std::uint8_t>(v2 ? 2 : 1), 0};
  const std::size_t len = dict.size();
  header.push_back(static_cast<std::uint8_t>(len & 0xff));
  header.push_back(static_cast<std::uint8_t>((len >> 8) & 0xff));
  if (v2) {
    header.push_back(static_cast<std::uint8_t>((len >> 16) & 0xff));
    header.push_back(static_cast<std::uint8_t>((len >> 24) & 0xff));
  }
  header.insert(header.end(), dict.begin(), dict.end());
  io::AtomicFile file(path);
  file.write(header);
  std::vector<std::uint8_t> buffer;
  io::write_tensor_data(file, source, index, buffer);
  file.commit(durability == Durability::Synced);
}

void save_npy(const std::filesystem::path& path, const Tensor& t) {
  TESSEL_CHECK(t.defined(), BadShape, "save_npy", "the tensor is undefined");
  TensorListSource source({t});
  save_npy(path, source, 0);
}

}  // namespace tessel
