#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

namespace fs = std::filesystem;

fs::path temp_file(const std::string& name) {
  return fs::temp_directory_path() /
         ("tessel_gguf_" + std::to_string(::getpid()) + name);
}

GgufValue str(const std::string& s) {
  return {GgufValue::Type::String, GgufValue::Type::U8, s};
}

TEST(Gguf, WritesAndReadsBack) {
  const fs::path path = temp_file("rt.gguf");
  Tensor w = arange(0, 12, 1, DType::F32).reshape({3, 4});
  w.set_name("w");
  Tensor s = full({}, 7, DType::I32);
  s.set_name("scalar");
  Tensor view = arange(0, 12, 1, DType::F16).reshape({3, 4}).transpose(0, 1);
  view.set_name("transposed");
  GgufValue list{
      GgufValue::Type::Array, GgufValue::Type::I32,
      std::vector<GgufValue>{
          {GgufValue::Type::I32, GgufValue::Type::U8, std::int64_t{-1}},
          {GgufValue::Type::I32, GgufValue::Type::U8, std::int64_t{2}}}};
  save_gguf(path, {{"general.architecture", str("llama")}, {"list", list}},
            {w, s, view}, 64);
  const GgufFile f = load_gguf(path);
  EXPECT_EQ(f.alignment, 64u);
  EXPECT_FALSE(f.big_endian);
  ASSERT_NE(f.find("list"), nullptr);
  EXPECT_EQ(std::get<std::vector<GgufValue>>(f.find("list")->value).size(), 2u);
  EXPECT_TRUE(allclose(f.at("w"), w, 0, 0));
  EXPECT_EQ(f.at("scalar").shape(), (Shape{1}));  // GGUF has no rank 0
  EXPECT_TRUE(
      allclose(f.at("transposed").to(DType::F32), view.to(DType::F32), 0, 0));
  EXPECT_EQ(f.at("w").storage().origin(), StorageOrigin::MappedFile);
  fs::remove(path);
}

TEST(Gguf, RefusesWhatItCannotWrite) {
  const fs::path path = temp_file("bad.gguf");
  const std::vector<std::pair<std::string, GgufValue>> arch{
      {"general.architecture", str("llama")}};
  Tensor t = ones({2}, DType::F32);
  t.set_name("t");
  EXPECT_TESSEL_ERROR(save_gguf(path, {}, {t}), "E4001",
                      "general.architecture");
  EXPECT_TESSEL_ERROR(save_gguf(path, arch, {t, t}), "E2102", "twice");
  // What load_gguf refuses is never written.
  Tensor bad_name = ones({2}, DType::F32);
  bad_name.set_name("w\xff");
  EXPECT_TESSEL_ERROR(save_gguf(path, arch, {bad_name}), "E2102", "UTF-8");
  auto twice = arch;
  twice.emplace_back("general.architecture", str("qwen2"));
  EXPECT_TESSEL_ERROR(save_gguf(path, twice, {t}), "E4001", "twice");
  Tensor b = ones({2}, DType::Bool);
  b.set_name("b");
  EXPECT_TESSEL_ERROR(save_gguf(path, arch, {b}), "E2201");
  Tensor five = ones({1, 1, 1, 1, 2}, DType::F32);
  five.set_name("five");
  EXPECT_TESSEL_ERROR(save_gguf(path, arch, {five}), "E2102", "dimensions");
  EXPECT_TESSEL_ERROR(save_gguf(path, arch, {t}, 12), "E4001", "alignment");
  auto mismatched = arch;
  mismatched.emplace_back("n", GgufValue{GgufValue::Type::U32,
                                         GgufValue::Type::U8, str("x").value});
  EXPECT_TESSEL_ERROR(save_gguf(path, mismatched, {t}), "E4001",
                      "another kind");
  EXPECT_FALSE(fs::exists(path));
}

// --- Big-endian files, built byte by byte -------------------------------

// A GGUF image in either byte order. Integers are written by shifting, so
// the bytes do not depend on the host; floats are given as their IEEE bit
// patterns (e.g. 0x3FC00000 is 1.5f).
struct GgufBytes {
  bool big;
  std::vector<std::uint8_t> b;

  void uint(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) {
      const int shift = 8 * (big ? n - 1 - i : i);
      b.push_back(static_cast<std::uint8_t>(v >> shift));
    }
  }
  void u8(std::uint64_t v) { uint(v, 1); }
  void u16(std::uint64_t v) { uint(v, 2); }
  void u32(std::uint64_t v) { uint(v, 4); }
  void u64(std::uint64_t v) { uint(v, 8); }
  void str(const std::string& s) {
    u64(s.size());
    b.insert(b.end(), s.begin(), s.end());
  }
  void key(const std::string& k, std::uint32_t type) {
    str(k);
    u32(type);
  }
  void pad_to(std::size_t n) { b.resize(n, 0); }
  void header(std::uint64_t n_tensors, std::uint64_t n_kv) {
    b.insert(b.end(), {'G', 'G', 'U', 'F'});
    u32(3);
    u64(n_tensors);
    u64(n_kv);
  }
};

Storage storage_of(const std::vector<std::uint8_t>& bytes, std::size_t n) {
  Storage s = Storage::allocate(static_cast<std::int64_t>(n));
  if (n > 0) std::memcpy(s.data(), bytes.data(), n);
  return s;
}

struct Marks {
  std::size_t u64_value = 0;  // where k.u64's value starts
  std::size_t tensor_infos = 0;
};

// Metadata of every value type (nested and empty arrays included) and one
// tensor of each plain type, 64-byte aligned.
std::vector<std::uint8_t> sample_gguf(bool big, Marks* marks = nullptr) {
  GgufBytes g{big, {}};
  g.header(8, 21);
  g.key("general.architecture", 8);
  g.str("llama");
  g.key("general.alignment", 4);
  g.u32(64);
  g.key("k.u8", 0);
  g.u8(200);
  g.key("k.i8", 1);
  g.u8(0xFB);  // -5
  g.key("k.u16", 2);
  g.u16(0x1234);
  g.key("k.i16", 3);
  g.u16(0xFFFE);  // -2
  g.key("k.u32", 4);
  g.u32(0xDEADBEEF);
  g.key("k.i32", 5);
  g.u32(0xFFFE7960);  // -100000
  g.key("k.f32", 6);
  g.u32(0xC0200000);  // -2.5f
  g.key("k.bool", 7);
  g.u8(1);
  g.key("k.str", 8);
  g.str("h\xc3\xa9llo");
  g.key("k.u64", 10);
  if (marks) marks->u64_value = g.b.size();
  g.u64(0x0102030405060708);
  g.key("k.i64", 11);
  g.u64(0xFFFFFFFFFFFFFFFD);  // -3
  g.key("k.f64", 12);
  g.u64(0xBFD0000000000000);  // -0.25
  g.key("k.u16s", 9);
  g.u32(2);  // of u16
  g.u64(2);
  g.u16(0x0001);
  g.u16(0x0102);
  g.key("k.f32s", 9);
  g.u32(6);
  g.u64(2);
  g.u32(0x3F800000);  // 1
  g.u32(0xC1200000);  // -10
  g.key("k.strs", 9);
  g.u32(8);
  g.u64(2);
  g.str("a");
  g.str("bc");
  g.key("k.nested", 9);  // [[-1, 7], [16777216]] of i32
  g.u32(9);
  g.u64(2);
  g.u32(5);
  g.u64(2);
  g.u32(0xFFFFFFFF);
  g.u32(7);
  g.u32(5);
  g.u64(1);
  g.u32(0x01000000);
  g.key("k.i64s", 9);
  g.u32(11);
  g.u64(1);
  g.u64(0x8000000000000000);  // INT64_MIN
  g.key("k.bools", 9);
  g.u32(7);
  g.u64(2);
  g.u8(1);
  g.u8(0);
  g.key("k.empty", 9);
  g.u32(4);
  g.u64(0);
  if (marks) marks->tensor_infos = g.b.size();
  struct T {
    const char* name;
    std::vector<std::uint64_t> ne;
    std::uint32_t type;
  };
  const T infos[] = {{"f", {3, 2}, 0}, {"h", {4}, 1},  {"i", {2}, 26},
                     {"b", {2}, 30},   {"s", {2}, 25}, {"q", {1}, 27},
                     {"d", {1}, 28},   {"c", {2}, 24}};
  std::uint64_t offset = 0;
  for (const T& t : infos) {
    g.str(t.name);
    g.u32(t.ne.size());
    for (std::uint64_t e : t.ne) g.u64(e);
    g.u32(t.type);
    g.u64(offset);
    offset += 64;
  }
  const std::size_t data = (g.b.size() + 63) / 64 * 64;
  g.pad_to(data);
  // f32 [1.5, -2, 0.25, 3, -0.5, 1024]
  for (std::uint32_t v : {0x3FC00000u, 0xC0000000u, 0x3E800000u, 0x40400000u,
                          0xBF000000u, 0x44800000u})
    g.u32(v);
  g.pad_to(data + 64);
  // f16 [1, -2, 0.5, 65504]
  for (std::uint32_t v : {0x3C00u, 0xC000u, 0x3800u, 0x7BFFu}) g.u16(v);
  g.pad_to(data + 128);
  g.u32(0xFFFFFFFE);  // i32 -2
  g.u32(0x01020304);  // i32 16909060
  g.pad_to(data + 192);
  g.u16(0x3F80);  // bf16 1
  g.u16(0xC040);  // bf16 -3
  g.pad_to(data + 256);
  g.u16(0xFFFE);  // i16 -2
  g.u16(0x0102);  // i16 258
  g.pad_to(data + 320);
  g.u64(0xFFFFFFFFFFFFFFFD);  // i64 -3
  g.pad_to(data + 384);
  g.u64(0xBFD0000000000000);  // f64 -0.25
  g.pad_to(data + 448);
  g.u8(0xFF);  // i8 -1
  g.u8(5);     // the file ends here
  return g.b;
}

template <class V>
V meta(const GgufFile& f, const std::string& key) {
  const GgufValue* v = f.find(key);
  EXPECT_NE(v, nullptr) << key;
  return v ? std::get<V>(v->value) : V{};
}

std::vector<GgufValue> items(const GgufFile& f, const std::string& key) {
  return meta<std::vector<GgufValue>>(f, key);
}

void expect_sample_values(const GgufFile& f) {
  using testing::values;
  using VT = GgufValue::Type;
  EXPECT_EQ(f.version, 3u);
  EXPECT_EQ(f.alignment, 64u);
  ASSERT_EQ(f.metadata.size(), 21u);
  EXPECT_EQ(meta<std::string>(f, "general.architecture"), "llama");
  EXPECT_EQ(meta<std::uint64_t>(f, "k.u8"), 200u);
  EXPECT_EQ(meta<std::int64_t>(f, "k.i8"), -5);
  EXPECT_EQ(meta<std::uint64_t>(f, "k.u16"), 0x1234u);
  EXPECT_EQ(meta<std::int64_t>(f, "k.i16"), -2);
  EXPECT_EQ(meta<std::uint64_t>(f, "k.u32"), 0xDEADBEEFu);
  EXPECT_EQ(meta<std::int64_t>(f, "k.i32"), -100000);
  EXPECT_EQ(meta<double>(f, "k.f32"), -2.5);
  EXPECT_EQ(f.find("k.f32")->type, VT::F32);
  EXPECT_EQ(meta<bool>(f, "k.bool"), true);
  EXPECT_EQ(meta<std::string>(f, "k.str"), "h\xc3\xa9llo");
  EXPECT_EQ(meta<std::uint64_t>(f, "k.u64"), 0x0102030405060708u);
  EXPECT_EQ(meta<std::int64_t>(f, "k.i64"), -3);
  EXPECT_EQ(meta<double>(f, "k.f64"), -0.25);
  EXPECT_EQ(f.find("k.f64")->type, VT::F64);

  const auto u16s = items(f, "k.u16s");
  ASSERT_EQ(u16s.size(), 2u);
  EXPECT_EQ(f.find("k.u16s")->element_type, VT::U16);
  EXPECT_EQ(std::get<std::uint64_t>(u16s[0].value), 1u);
  EXPECT_EQ(std::get<std::uint64_t>(u16s[1].value), 258u);
  const auto f32s = items(f, "k.f32s");
  ASSERT_EQ(f32s.size(), 2u);
  EXPECT_EQ(std::get<double>(f32s[0].value), 1.0);
  EXPECT_EQ(std::get<double>(f32s[1].value), -10.0);
  const auto strs = items(f, "k.strs");
  ASSERT_EQ(strs.size(), 2u);
  EXPECT_EQ(std::get<std::string>(strs[0].value), "a");
  EXPECT_EQ(std::get<std::string>(strs[1].value), "bc");
  const auto nested = items(f, "k.nested");
  ASSERT_EQ(nested.size(), 2u);
  EXPECT_EQ(nested[0].element_type, VT::I32);
  const auto& n0 = std::get<std::vector<GgufValue>>(nested[0].value);
  const auto& n1 = std::get<std::vector<GgufValue>>(nested[1].value);
  ASSERT_EQ(n0.size(), 2u);
  ASSERT_EQ(n1.size(), 1u);
  EXPECT_EQ(std::get<std::int64_t>(n0[0].value), -1);
  EXPECT_EQ(std::get<std::int64_t>(n0[1].value), 7);
  EXPECT_EQ(std::get<std::int64_t>(n1[0].value), 16777216);
  const auto i64s = items(f, "k.i64s");
  ASSERT_EQ(i64s.size(), 1u);
  EXPECT_EQ(std::get<std::int64_t>(i64s[0].value), INT64_MIN);
  const auto bools = items(f, "k.bools");
  ASSERT_EQ(bools.size(), 2u);
  EXPECT_TRUE(std::get<bool>(bools[0].value));
  EXPECT_FALSE(std::get<bool>(bools[1].value));
  EXPECT_TRUE(items(f, "k.empty").empty());

  ASSERT_EQ(f.tensors.size(), 8u);
  EXPECT_EQ(f.at("f").shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>(f.at("f")),
            (std::vector<float>{1.5f, -2.0f, 0.25f, 3.0f, -0.5f, 1024.0f}));
  EXPECT_EQ(f.at("h").dtype(), DType::F16);
  EXPECT_EQ(values<float>(f.at("h").to(DType::F32)),
            (std::vector<float>{1.0f, -2.0f, 0.5f, 65504.0f}));
  EXPECT_EQ(values<std::int32_t>(f.at("i")),
            (std::vector<std::int32_t>{-2, 16909060}));
  EXPECT_EQ(f.at("b").dtype(), DType::BF16);
  EXPECT_EQ(values<float>(f.at("b").to(DType::F32)),
            (std::vector<float>{1.0f, -3.0f}));
  EXPECT_EQ(values<std::int16_t>(f.at("s")),
            (std::vector<std::int16_t>{-2, 258}));
  EXPECT_EQ(values<std::int64_t>(f.at("q")), (std::vector<std::int64_t>{-3}));
  EXPECT_EQ(values<double>(f.at("d")), (std::vector<double>{-0.25}));
  EXPECT_EQ(values<std::int8_t>(f.at("c")), (std::vector<std::int8_t>{-1, 5}));
}

TEST(Gguf, ReadsBigEndianFiles) {
  const auto be = sample_gguf(true);
  // The builder's bytes are big-endian: version 3 is 00 00 00 03.
  ASSERT_EQ(std::vector<std::uint8_t>(be.begin() + 4, be.begin() + 8),
            (std::vector<std::uint8_t>{0, 0, 0, 3}));
  const GgufFile f = parse_gguf(storage_of(be, be.size()));
  EXPECT_TRUE(f.big_endian);
  expect_sample_values(f);
  // Swapped copies, not views of the file's bytes.
  for (const Tensor& t : f.tensors) {
    EXPECT_EQ(t.storage().origin(), StorageOrigin::Owned) << t.name();
  }

  // The same file in little-endian order reads the same values, as views.
  const auto le = sample_gguf(false);
  const GgufFile g = parse_gguf(storage_of(le, le.size()));
  EXPECT_FALSE(g.big_endian);
  expect_sample_values(g);
}

TEST(Gguf, LoadsBigEndianFilesFromDisk) {
  const fs::path path = temp_file("be.gguf");
  const auto be = sample_gguf(true);
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(be.data()),
              static_cast<std::streamsize>(be.size()));
  }
  {
    const GgufFile f = load_gguf(path);
    EXPECT_TRUE(f.big_endian);
    expect_sample_values(f);
    // tessel writes it back little-endian, with the same values.
    const fs::path copy = temp_file("be_copy.gguf");
    save_gguf(copy, f.metadata, f.tensors, f.alignment);
    const GgufFile g = load_gguf(copy);
    EXPECT_FALSE(g.big_endian);
    expect_sample_values(g);
    fs::remove(copy);
  }
  fs::remove(path);
}

TEST(Gguf, TruncatedBigEndianFilesAreE3001WithTheOffset) {
  Marks marks;
  const auto be = sample_gguf(true, &marks);
  for (std::size_t n = 0; n < be.size(); ++n) {
    try {
      parse_gguf(storage_of(be, n));
      ADD_FAILURE() << "a prefix of " << n << " bytes was accepted";
    } catch (const FormatError& e) {
      EXPECT_STREQ(e.code(), "E3001") << n;
      EXPECT_GE(e.byte_offset(), 0) << n;
      EXPECT_LE(e.byte_offset(), static_cast<std::int64_t>(n)) << n;
    }
  }
  // Inside k.u64's value: reported where the value starts.
  try {
    parse_gguf(storage_of(be, marks.u64_value + 3));
    ADD_FAILURE() << "accepted";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.byte_offset(), static_cast<std::int64_t>(marks.u64_value));
    testing::check_error(
        e, "E3001",
        {"ends inside a u64", std::to_string(marks.u64_value).c_str()});
  }
  // One byte short: the last tensor runs past the end.
  EXPECT_TESSEL_ERROR(parse_gguf(storage_of(be, be.size() - 1)), "E3001",
                      "tensor 'c'", "past the end");
}

TEST(Gguf, BigEndianCountsAndLengthsAreCheckedInTheirOrder) {
  // An absurd tensor count, big-endian: refused before allocating.
  GgufBytes g{true, {}};
  g.header(std::uint64_t{1} << 60, 0);
  EXPECT_TESSEL_ERROR(parse_gguf(storage_of(g.b, g.b.size())), "E3001",
                      "1152921504606846976 tensors");
  // A string length of 2^40 (it would be 2^16 read little-endian).
  GgufBytes s{true, {}};
  s.header(0, 1);
  s.key("general.architecture", 8);
  s.u64(std::uint64_t{1} << 40);
  EXPECT_TESSEL_ERROR(parse_gguf(storage_of(s.b, s.b.size())), "E3001",
                      "1099511627776 bytes", "at byte 56");
  // Version 1 in big-endian order is still version 1.
  GgufBytes v{true, {}};
  v.b = {'G', 'G', 'U', 'F'};
  v.u32(1);
  v.u64(0);
  v.u64(0);
  EXPECT_TESSEL_ERROR(parse_gguf(storage_of(v.b, v.b.size())), "E3001",
                      "version 1", "at byte 4");
}

TEST(Gguf, RefusesQuantisedTensorsInBigEndianFiles) {
  for (bool big : {true, false}) {
    GgufBytes g{big, {}};
    g.header(1, 1);
    g.key("general.architecture", 8);
    g.str("llama");
    g.str("w");
    g.u32(1);
    g.u64(32);
    const std::size_t type_at = g.b.size();
    g.u32(8);  // Q8_0
    g.u64(0);
    g.pad_to((g.b.size() + 31) / 32 * 32);
    g.u16(0x3C00);  // d = 1
    for (int i = 0; i < 32; ++i) g.u8(static_cast<std::uint8_t>(i));
    if (!big) {
      const GgufFile f = parse_gguf(storage_of(g.b, g.b.size()));
      EXPECT_EQ(f.at("w").dtype(), DType::Q8_0);
      continue;
    }
    try {
      parse_gguf(storage_of(g.b, g.b.size()));
      ADD_FAILURE() << "accepted";
    } catch (const FormatError& e) {
      testing::check_error(e, "E3001", {"tensor 'w'", "q8_0", "big-endian"});
      EXPECT_EQ(e.byte_offset(), static_cast<std::int64_t>(type_at));
    }
  }
}

// Two tensors of one name were once accepted and one of them lost on
// conversion; two values of one key would be read as either; names that
// are not UTF-8 escaped later as foreign JSON exceptions.
TEST(Gguf, RefusesDuplicateAndNonUtf8Names) {
  const auto file = [](std::vector<std::string> names,
                       std::vector<std::string> keys) {
    GgufBytes g{false, {}};
    g.header(names.size(), keys.size());
    for (const std::string& k : keys) {
      g.key(k, 8);
      g.str("llama");
    }
    std::uint64_t offset = 0;
    for (const std::string& n : names) {
      g.str(n);
      g.u32(1);
      g.u64(1);
      g.u32(0);  // f32
      g.u64(offset);
      offset += 32;
    }
    g.pad_to((g.b.size() + 31) / 32 * 32 + offset);
    return g.b;
  };
  const auto refused = [](const std::vector<std::uint8_t>& b,
                          std::initializer_list<std::string_view> parts) {
    try {
      parse_gguf(storage_of(b, b.size()));
      ADD_FAILURE() << "accepted";
    } catch (const FormatError& e) {
      testing::check_error(e, "E3001", parts);
      EXPECT_GE(e.byte_offset(), 0);
    }
  };
  const std::string arch = "general.architecture";
  EXPECT_NO_THROW(parse_gguf(
      storage_of(file({"a", "b"}, {arch}), file({"a", "b"}, {arch}).size())));
  refused(file({"a", "b", "a"}, {arch}), {"tensor name 'a' appears twice"});
  refused(file({"a"}, {arch, "x", arch}),
          {"metadata key 'general.architecture' appears twice"});
  refused(file({"ok", "\xff\xfe"}, {arch}), {"tensor name is not valid UTF-8"});
  refused(file({"a"}, {arch, "bad\xc3"}), {"metadata key is not valid UTF-8"});
}

}  // namespace
}  // namespace tessel
