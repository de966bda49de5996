// GGUF: "GGUF", u32 version, u64 tensor count, u64 metadata count, the
// key/value pairs, the tensor infos (name, u32 n_dims, u64 ne[n_dims],
// u32 type, u64 offset), padding to the alignment, then the data section.
// Every integer and float is in the file's byte order: little-endian, or
// big-endian when the version field reads as a byte-swapped 2 or 3.
#include "tessel/io/gguf.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <unordered_set>

#include "core/check.hpp"
#include "core/utf8.hpp"
#include "io/atomic_file.hpp"
#include "io/byteswap.hpp"
#include "io/file_view.hpp"
#include "io/stream_tensors.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel {

namespace {

constexpr int kMaxArrayDepth = 8;
constexpr int kMaxDims = 4;

// ggml_type ids (ggml.h); the block layouts are tessel's dtypes of the
// same names.
constexpr std::pair<std::uint32_t, DType> kTypes[] = {
    {0, DType::F32},     {1, DType::F16},      {2, DType::Q4_0},
    {3, DType::Q4_1},    {6, DType::Q5_0},     {7, DType::Q5_1},
    {8, DType::Q8_0},    {9, DType::Q8_1},     {10, DType::Q2_K},
    {11, DType::Q3_K},   {12, DType::Q4_K},    {13, DType::Q5_K},
    {14, DType::Q6_K},   {15, DType::Q8_K},    {16, DType::IQ2_XXS},
    {17, DType::IQ2_XS}, {18, DType::IQ3_XXS}, {19, DType::IQ1_S},
    {20, DType::IQ4_NL}, {21, DType::IQ3_S},   {22, DType::IQ2_S},
    {23, DType::IQ4_XS}, {24, DType::I8},      {25, DType::I16},
    {26, DType::I32},    {27, DType::I64},     {28, DType::F64},
    {29, DType::IQ1_M},  {30, DType::BF16},    {34, DType::TQ1_0},
    {35, DType::TQ2_0},  {39, DType::MXFP4},
};

constexpr const char* kOp = "load_gguf";

// Bounds-checked reads in the file's byte order (little-endian until
// set_big_endian).
class Cursor {
 public:
  Cursor(const std::uint8_t* data, std::uint64_t size)
      : data_(data), size_(size) {}

  std::uint64_t offset() const { return pos_; }
  std::uint64_t remaining() const { return size_ - pos_; }
  void set_big_endian() { swap_ = true; }

  template <class T>
  T read(const char* what) {
    if (remaining() < sizeof(T)) {
      detail::fail_at(kOp, pos_, "the file ends inside {}", what);
    }
    T v;
    if (swap_ && sizeof(T) > 1) {
      v = io::load_swapped<T>(data_ + pos_);
    } else {
      std::memcpy(&v, data_ + pos_, sizeof(T));
    }
    pos_ += sizeof(T);
    return v;
  }

  std::string read_string(const char* what) {
    const std::uint64_t at = pos_;
    const auto n = read<std::uint64_t>(what);
    if (n > remaining()) {
      detail::fail_at(kOp, at, "{} of {} bytes runs past the end of the file",
                      what, n);
    }
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }

 private:
  const std::uint8_t* data_;
  std::uint64_t size_;
  std::uint64_t pos_ = 0;
  bool swap_ = false;
};

// The smallest encoding of one value of a type (for checking array counts
// against the bytes left before reserving anything).
std::uint64_t min_bytes(GgufValue::Type t) {
  using T = GgufValue::Type;
  switch (t) {
    case T::U8:
    case T::I8:
    case T::Bool: return 1;
    case T::U16:
    case T::I16: return 2;
    case T::U32:
    case T::I32:
    case T::F32: return 4;
    case T::U64:
    case T::I64:
    case T::F64:
    case T::String: return 8;
    case T::Array: return 12;
  }
  return 1;
}

GgufValue::Type read_type(Cursor& c, const char* what) {
  const std::uint64_t at = c.offset();
  const auto t = c.read<std::uint32_t>(what);
  TESSEL_CHECK_AT(t <= 12, kOp, at, "unknown value type {}", t);
  return static_cast<GgufValue::Type>(t);
}

GgufValue read_value(Cursor& c, GgufValue::Type type, int depth) {
  using T = GgufValue::Type;
  GgufValue v;
  v.type = type;
  switch (type) {
    case T::U8: v.value = std::uint64_t{c.read<std::uint8_t>("a u8")}; break;
    case T::I8: v.value = std::int64_t{c.read<std::int8_t>("an i8")}; break;
    case T::U16: v.value = std::uint64_t{c.read<std::uint16_t>("a u16")}; break;
    case T::I16: v.value = std::int64_t{c.read<std::int16_t>("an i16")}; break;
    case T::U32: v.value = std::uint64_t{c.read<std::uint32_t>("a u32")}; break;
    case T::I32: v.value = std::int64_t{c.read<std::int32_t>("an i32")}; break;
    case T::U64: v.value = c.read<std::uint64_t>("a u64"); break;
    case T::I64: v.value = c.read<std::int64_t>("an i64"); break;
    case T::F32: v.value = double{c.read<float>("an f32")}; break;
    case T::F64: v.value = c.read<double>("an f64"); break;
    case T::Bool: {
      const std::uint64_t at = c.offset();
      const auto b = c.read<std::uint8_t>("a bool");
      TESSEL_CHECK_AT(b <= 1, kOp, at, "a bool holds {}, not 0 or 1", b);
      v.value = b == 1;
      break;
    }
    case T::String: v.value = c.read_string("a string"); break;
    case T::Array: {
      const std::uint64_t at = c.offset();
      if (depth >= kMaxArrayDepth) {
        detail::fail_at(kOp, at, "arrays nested deeper than {}",
                        kMaxArrayDepth);
      }
      v.element_type = read_type(c, "an array's element type");
      const auto count = c.read<std::uint64_t>("an array's length");
      if (count > c.remaining() / min_bytes(v.element_type)) {
        detail::fail_at(kOp, at,
                        "an array of {} elements cannot fit in the "
                        "{} bytes left",
                        count, c.remaining());
      }
      std::vector<GgufValue> items;
      items.reserve(count);
      for (std::uint64_t i = 0; i < count; ++i) {
        items.push_back(read_value(c, v.element_type, depth + 1));
      }
      v.value = std::move(items);
      break;
    }
  }
  return v;
}

std::uint64_t align_up(std::uint64_t x, std::uint64_t a) {
  return (x + a - 1) / a * a;
}

const GgufValue* find_value(
    const std::vector<std::pair<std::string, GgufValue>>& kv,
    const std::string& key) {
  for (const auto& [k, v] : kv) {
    if (k == key) return &v;
  }
  return nullptr;
}

struct Info {
  std::string name;
  Shape shape;
  DType dtype;
  std::uint64_t offset;
  std::uint64_t nbytes;
  std::uint64_t at;  // where the info starts, for messages
};

}  // namespace

std::uint32_t gguf_type_id(DType dtype) {
  for (const auto& [id, d] : kTypes) {
    if (d == dtype) return id;
  }
  detail::fail(ErrorCode::BadDType, "gguf", "dtype {} has no GGUF type",
               dtype_name(dtype));
}

std::optional<DType> dtype_from_gguf_type(std::uint32_t id) {
  for (const auto& [i, d] : kTypes) {
    if (i == id) return d;
  }
  return std::nullopt;
}

const GgufValue* GgufFile::find(const std::string& key) const {
  return find_value(metadata, key);
}

const Tensor& GgufFile::at(const std::string& name) const {
  for (const Tensor& t : tensors) {
    if (t.name() == name) return t;
  }
  throw FormatError(ErrorCode::MalformedFile,
                    fmt::format("[gguf] no tensor named '{}'", name));
}

GgufFile parse_gguf(const Storage& file) {
  static_assert(std::endian::native == std::endian::little,
                "GGUF reading assumes a little-endian host");
  const auto size = static_cast<std::uint64_t>(file.nbytes());
  const auto* bytes = static_cast<const std::uint8_t*>(file.data());
  Cursor c(bytes, size);
  const auto magic = c.read<std::uint32_t>("the magic");
  if (std::memcmp(&magic, "GGUF", 4) != 0)
    detail::fail_at(kOp, 0, "not a GGUF file (bad magic)");
  GgufFile out;
  // The byte order: GGUF marks it nowhere, but a version of 2 or 3 read
  // in the wrong order is 0x02000000 or 0x03000000, which no version is.
  out.version = c.read<std::uint32_t>("the version");
  if (out.version != 2 && out.version != 3) {
    const std::uint32_t swapped = __builtin_bswap32(out.version);
    if (swapped == 2 || swapped == 3) {
      out.big_endian = true;
      out.version = swapped;
      c.set_big_endian();
    } else if (swapped == 1) {
      detail::fail_at(kOp, 4, "unsupported GGUF version 1 (big-endian)");
    } else {
      detail::fail_at(kOp, 4, "unsupported GGUF version {}", out.version);
    }
  }
  const auto n_tensors = c.read<std::uint64_t>("the tensor count");
  const auto n_kv = c.read<std::uint64_t>("the metadata count");
  // Each key/value needs at least 8 (key length) + 4 (type) + 1 bytes,
  // each tensor info 8 + 4 + 4 + 8.
  if (n_kv > c.remaining() / 13) {
    detail::fail_at(kOp, 16, "{} metadata entries cannot fit in the file",
                    n_kv);
  }
  if (n_tensors > c.remaining() / 24) {
    detail::fail_at(kOp, 8, "{} tensors cannot fit in the file", n_tensors);
  }
  // Keys and tensor names are UTF-8 by the spec and unique (a second one
  // would be read as either, and a tensor lost on conversion); both are
  // checked here so that no later JSON printer or writer meets them.
  std::unordered_set<std::string_view> seen;
  const auto check_name = [&](const std::string& name, std::uint64_t at,
                              const char* what) {
    const std::size_t bad = detail::utf8_invalid_offset(name);
    if (bad != std::string::npos) {
      detail::fail_at(kOp, static_cast<std::int64_t>(at + 8 + bad),
                      "{} is not valid UTF-8 (byte {} of it)", what, bad);
    }
  };
  for (std::uint64_t i = 0; i < n_kv; ++i) {
    const std::uint64_t key_at = c.offset();  // for the message
    std::string key = c.read_string("a metadata key");
    check_name(key, key_at, "a metadata key");
    const GgufValue::Type type = read_type(c, "a metadata type");
    GgufValue value = read_value(c, type, 0);
    if (key == "general.alignment") {
      const auto* a = std::get_if<std::uint64_t>(&value.value);
      if (type != GgufValue::Type::U32 || a == nullptr || *a == 0 ||
          *a % 8 != 0) {
        detail::fail_at(kOp, c.offset(),
                        "general.alignment must be a u32 multiple of 8");
      }
      out.alignment = static_cast<std::uint32_t>(*a);
    }
    out.metadata.emplace_back(std::move(key), std::move(value));
  }
  for (const auto& [key, value] : out.metadata) {
    if (!seen.insert(key).second) {
      detail::fail_at(kOp, 24, "metadata key '{}' appears twice", key);
    }
  }
  seen.clear();

  std::vector<Info> infos;
  infos.reserve(n_tensors);
  for (std::uint64_t i = 0; i < n_tensors; ++i) {
    Info info;
    info.at = c.offset();
    info.name = c.read_string("a tensor name");
    check_name(info.name, info.at, "a tensor name");
    const std::uint64_t dims_at = c.offset();
    const auto n_dims = c.read<std::uint32_t>("a tensor's dimension count");
    if (n_dims > kMaxDims) {
      detail::fail_at(kOp, dims_at,
                      "tensor '{}' has {} dimensions (at most "
                      "{})",
                      info.name, n_dims, kMaxDims);
    }
    std::vector<std::int64_t> ne;
    for (std::uint32_t d = 0; d < n_dims; ++d) {
      const auto e = c.read<std::uint64_t>("a tensor dimension");
      if (e > static_cast<std::uint64_t>(INT64_MAX)) {
        detail::fail_at(kOp, dims_at, "tensor '{}' has extent {}", info.name,
                        e);
      }
      ne.push_back(static_cast<std::int64_t>(e));
    }
    const std::uint64_t type_at = c.offset();
    const auto type = c.read<std::uint32_t>("a tensor type");
    const auto dtype = dtype_from_gguf_type(type);
    if (!dtype) {
      detail::fail_at(kOp, type_at,
                      "tensor '{}' has GGUF type {}, which "
                      "tessel does not support",
                      info.name, type);
    }
    if (out.big_endian && is_block_quantized(*dtype)) {
      // gguf-py's GGUFWriter(endianess=BIG) stores block bytes as given
      // (little-endian scales), while gguf_convert_endian.py and ggml on a
      // big-endian host store the f16/f32 scales big-endian; nothing in
      // the file says which, so either reading could be wrong.
      detail::fail_at(kOp, type_at,
                      "tensor '{}' is {} in a big-endian file; the "
                      "byte order of the scales inside its blocks is "
                      "not defined (export the model little-endian)",
                      info.name, dtype_name(*dtype));
    }
    info.dtype = *dtype;
    info.offset = c.read<std::uint64_t>("a tensor offset");
    info.shape = Shape(ne.rbegin(), ne.rend());  // innermost first -> row-major
    const std::int64_t block = dtype_traits(*dtype).block_size;
    if (!ne.empty() && ne[0] % block != 0) {
      detail::fail_at(kOp, dims_at,
                      "tensor '{}': row length {} is not a "
                      "multiple of the {} block of {}",
                      info.name, ne[0], dtype_name(*dtype), block);
    }
    try {
      info.nbytes = static_cast<std::uint64_t>(
          storage_bytes(*dtype, checked_numel(info.shape)));
    } catch (const Error&) {
      detail::fail_at(kOp, dims_at, "tensor '{}': the size overflows",
                      info.name);
    }
    infos.push_back(std::move(info));
  }
  // Names are compared once every info is in place: the vector no longer
  // moves, so the views stay valid.
  for (const Info& info : infos) {
    if (!seen.insert(info.name).second) {
      detail::fail_at(kOp, static_cast<std::int64_t>(info.at),
                      "tensor name '{}' appears twice", info.name);
    }
  }

  const std::uint64_t data_start = align_up(c.offset(), out.alignment);
  if (data_start > size && !infos.empty()) {
    detail::fail_at(kOp, c.offset(),
                    "the data section starts past the end of the file");
  }
  std::vector<const Info*> by_offset;
  for (const Info& info : infos) by_offset.push_back(&info);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const Info* a, const Info* b) { return a->offset < b->offset; });
  std::uint64_t end_of_previous = 0;
  for (const Info* info : by_offset) {
    if (info->offset % out.alignment != 0) {
      detail::fail_at(kOp, info->at,
                      "tensor '{}': offset {} is not a "
                      "multiple of the alignment {}",
                      info->name, info->offset, out.alignment);
    }
    if (info->offset < end_of_previous) {
      detail::fail_at(kOp, info->at,
                      "tensor '{}' overlaps the tensor before "
                      "it",
                      info->name);
    }
    if (info->offset > size - std::min(size, data_start) ||
        info->nbytes > size - std::min(size, data_start) - info->offset) {
      detail::fail_at(kOp, info->at,
                      "tensor '{}' ({} bytes at data offset "
                      "{}) runs past the end of the file",
                      info->name, info->nbytes, info->offset);
    }
    end_of_previous = info->offset + info->nbytes;
  }

  for (const Info& info : infos) {
    Tensor t = io::file_view(file, data_start + info.offset,
                             static_cast<std::int64_t>(info.nbytes), info.shape,
                             info.dtype);
    // Big-endian data (plain types only) is copied and swapped into memory
    // of its own, not a view of the file.
    if (out.big_endian) t = io::swapped_copy(t);
    t.set_name(info.name);
    out.tensors.push_back(std::move(t));
  }
  return out;
}

GgufFile load_gguf(const std::filesystem::path& path, MapMode mode) {
  // map_file opens, sizes (an empty file maps too) and maps in one go;
  // the parser refuses what is too short.
  return parse_gguf(Storage::map_file(path, mode));
}

namespace {

class Writer {
 public:
  void bytes(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  template <class T>
  void put(T v) {
    bytes(&v, sizeof v);
  }
  void string(const std::string& s) {
    put<std::uint64_t>(s.size());
    bytes(s.data(), s.size());
  }
  void value(const GgufValue& v) {
    using T = GgufValue::Type;
    // A value whose variant does not hold what its type says is the
    // caller's configuration error, not a crash.
    const auto get = [&](auto* tag) {
      using V = std::remove_pointer_t<decltype(tag)>;
      const V* p = std::get_if<V>(&v.value);
      TESSEL_CHECK(p != nullptr, BadConfig, "save_gguf",
                   "a metadata value of GGUF type {} holds another kind of "
                   "value",
                   static_cast<int>(v.type));
      return *p;
    };
    const auto u = [&] { return get(static_cast<std::uint64_t*>(nullptr)); };
    const auto i = [&] { return get(static_cast<std::int64_t*>(nullptr)); };
    switch (v.type) {
      case T::U8: put(static_cast<std::uint8_t>(u())); break;
      case T::I8: put(static_cast<std::int8_t>(i())); break;
      case T::U16: put(static_cast<std::uint16_t>(u())); break;
      case T::I16: put(static_cast<std::int16_t>(i())); break;
      case T::U32: put(static_cast<std::uint32_t>(u())); break;
      case T::I32: put(static_cast<std::int32_t>(i())); break;
      case T::U64: put(u()); break;
      case T::I64: put(i()); break;
      case T::F32:
        put(static_cast<float>(get(static_cast<double*>(nullptr))));
        break;
      case T::F64: put(get(static_cast<double*>(nullptr))); break;
      case T::Bool:
        put<std::uint8_t>(get(static_cast<bool*>(nullptr)) ? 1 : 0);
        break;
      case T::String: string(get(static_cast<std::string*>(nullptr))); break;
      case T::Array: {
        const auto items = get(static_cast<std::vector<GgufValue>*>(nullptr));
        put(static_cast<std::uint32_t>(v.element_type));
        put<std::uint64_t>(items.size());
        for (const GgufValue& item : items) {
          TESSEL_CHECK(item.type == v.element_type, BadConfig, "save_gguf",
                       "an array of type {} holds a value of type {}",
                       static_cast<int>(v.element_type),
                       static_cast<int>(item.type));
          value(item);
        }
        break;
      }
    }
  }
  void pad_to(std::uint64_t alignment) {
    out_.resize(align_up(out_.size(), alignment), 0);
  }
  std::vector<std::uint8_t>& data() { return out_; }

 private:
  std::vector<std::uint8_t> out_;
};

}  // namespace

void save_gguf(const std::filesystem::path& path,
               const std::vector<std::pair<std::string, GgufValue>>& metadata,
               TensorSource& source, std::uint32_t alignment) {
  std::vector<std::pair<std::string, GgufValue>> kv = metadata;
  const auto find = [&](const std::string& key) { return find_value(kv, key); };
  const auto has = [&](const std::string& key) { return find(key) != nullptr; };
  TESSEL_CHECK(has("general.architecture"), BadConfig, "save_gguf",
               "GGUF requires the metadata key general.architecture");
  // The file must be laid out as its general.alignment says (metadata
  // copied from another GGUF carries one): the key decides unless the
  // caller asked for a different alignment, which is a contradiction.
  if (const GgufValue* a = find("general.alignment")) {
    const auto* value = std::get_if<std::uint64_t>(&a->value);
    TESSEL_CHECK(a->type == GgufValue::Type::U32 && value != nullptr, BadConfig,
                 "save_gguf", "general.alignment must be a u32");
    TESSEL_CHECK(alignment == 32 || alignment == *value, BadConfig, "save_gguf",
                 "alignment {} contradicts the metadata's general.alignment {}",
                 alignment, *value);
    alignment = static_cast<std::uint32_t>(*value);
  }
  TESSEL_CHECK(alignment > 0 && alignment % 8 == 0, BadConfig, "save_gguf",
               "alignment {} is not a positive multiple of 8", alignment);
  if (alignment != 32 && !has("general.alignment")) {
    kv.emplace_back("general.alignment",
                    GgufValue{GgufValue::Type::U32, GgufValue::Type::U8,
                              std::uint64_t{alignment}});
  }
  bool quantised = false;
  for (std::size_t i = 0; i < source.size(); ++i)
    quantised = quantised || is_block_quantized(source.spec(i).dtype);
  if (quantised && !has("general.quantization_version")) {
    kv.emplace_back(
        "general.quantization_version",
        GgufValue{GgufValue::Type::U32, GgufValue::Type::U8, std::uint64_t{2}});
  }
  // What load_gguf refuses is never written: keys and names unique and
  // UTF-8.
  std::unordered_set<std::string> names;
  for (const auto& [key, value] : kv) {
    TESSEL_CHECK(detail::utf8_invalid_offset(key) == std::string::npos,
                 BadConfig, "save_gguf", "a metadata key is not valid UTF-8");
    TESSEL_CHECK(names.insert(key).second, BadConfig, "save_gguf",
                 "metadata key '{}' appears twice", key);
  }
  names.clear();
  for (std::size_t i = 0; i < source.size(); ++i) {
    const TensorSpec& t = source.spec(i);
    TESSEL_CHECK(!t.name.empty() && t.name.size() <= 64, BadShape, "save_gguf",
                 "tensor name '{}' must have 1 to 64 bytes", t.name);
    TESSEL_CHECK(detail::utf8_invalid_offset(t.name) == std::string::npos,
                 BadShape, "save_gguf", "tensor name '{}' is not valid UTF-8",
                 t.name);
    TESSEL_CHECK(names.insert(t.name).second, BadShape, "save_gguf",
                 "tensor name '{}' appears twice", t.name);
    TESSEL_CHECK(t.shape.size() <= kMaxDims, BadShape, "save_gguf",
                 "tensor '{}' has {} dimensions; GGUF allows {}", t.name,
                 t.shape.size(), kMaxDims);
    gguf_type_id(t.dtype);  // E2201 before anything is written
    // GGUF stores block types row by row: each row whole blocks.
    const std::int64_t block = dtype_traits(t.dtype).block_size;
    TESSEL_CHECK(
        block == 1 || (!t.shape.empty() && t.shape.back() % block == 0),
        BadShape, "save_gguf",
        "tensor '{}' of {}: rows of {} elements are not whole "
        "blocks of {}",
        t.name, dtype_name(t.dtype), t.shape.empty() ? 1 : t.shape.back(),
        block);
    t.nbytes();  // E2303 when the size overflows
  }

  Writer w;
  w.bytes("GGUF", 4);
  w.put<std::uint32_t>(3);
  w.put<std::uint64_t>(source.size());
  w.put<std::uint64_t>(kv.size());
  for (const auto& [key, value] : kv) {
    w.string(key);
    w.put(static_cast<std::uint32_t>(value.type));
    w.value(value);
  }
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < source.size(); ++i) {
    const TensorSpec& t = source.spec(i);
    w.string(t.name);
    const std::size_t rank = t.shape.size();
    w.put(rank == 0 ? std::uint32_t{1} : static_cast<std::uint32_t>(rank));
    if (rank == 0) w.put<std::uint64_t>(1);
    for (std::size_t d = rank; d-- > 0;) {
      w.put(static_cast<std::uint64_t>(t.shape[d]));
    }
    w.put(gguf_type_id(t.dtype));
    w.put(offset);
    offset =
        align_up(offset + static_cast<std::uint64_t>(t.nbytes()), alignment);
  }
  w.pad_to(alignment);

  io::AtomicFile file(path);
  file.write(w.data());
  std::vector<std::uint8_t> zeros(alignment, 0);
  std::vector<std::uint8_t> buffer;
  for (std::size_t i = 0; i < source.size(); ++i) {
    io::write_tensor_data(file, source, i, buffer);
    const auto n = static_cast<std::uint64_t>(source.spec(i).nbytes());
    file.write({zeros.data(), align_up(n, alignment) - n});
  }
  file.commit();
}

void save_gguf(const std::filesystem::path& path,
               const std::vector<std::pair<std::string, GgufValue>>& metadata,
               const std::vector<Tensor>& tensors, std::uint32_t alignment) {
  TensorListSource source(tensors);
  save_gguf(path, metadata, source, alignment);
}

}  // namespace tessel
