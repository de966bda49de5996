#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

namespace fs = std::filesystem;

fs::path temp_path(const std::string& name) {
  return fs::temp_directory_path() /
         ("tessel_st_" + std::to_string(::getpid()) + "_" + name);
}

// A file from a header text and data bytes, as other writers produce it.
Storage file_bytes(const std::string& header, std::size_t data_bytes,
                   std::uint8_t fill = 0) {
  std::vector<std::uint8_t> bytes(8 + header.size() + data_bytes, fill);
  const std::uint64_t n = header.size();
  std::memcpy(bytes.data(), &n, 8);
  std::memcpy(bytes.data() + 8, header.data(), header.size());
  Storage s = Storage::allocate(static_cast<std::int64_t>(bytes.size()));
  std::memcpy(s.data(), bytes.data(), bytes.size());
  return s;
}

void expect_malformed(const std::string& header, std::size_t data_bytes,
                      const std::string& message_part) {
  try {
    parse_safetensors(file_bytes(header, data_bytes));
    ADD_FAILURE() << "accepted: " << header;
  } catch (const FormatError& e) {
    EXPECT_STREQ(e.code(), "E3001");
    EXPECT_NE(std::string(e.what()).find(message_part), std::string::npos)
        << e.what();
    EXPECT_GE(e.byte_offset(), 0);
  }
}

TEST(Safetensors, RoundTripsEveryDTypeByMapping) {
  const fs::path path = temp_path("roundtrip.safetensors");
  std::vector<Tensor> tensors;
  for (DType d :
       {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I64, DType::I32,
        DType::I16, DType::I8, DType::U8, DType::Bool, DType::F8E4M3FN,
        DType::F8E5M2, DType::U16, DType::U32, DType::U64}) {
    Tensor t = arange(0, 6, 1, DType::F32).reshape({2, 3}).to(d);
    t.set_name(std::string("t_") + std::string(dtype_name(d)));
    tensors.push_back(t);
  }
  Tensor scalar = full({}, 2.5, DType::F32);
  scalar.set_name("scalar");
  Tensor empty = zeros({0, 4}, DType::F32);
  empty.set_name("empty");
  Tensor odd = arange(0, 3, 1, DType::U8);  // misaligns what follows it
  odd.set_name("a_odd");
  tensors.insert(tensors.end(), {scalar, empty, odd});
  // A non-contiguous tensor is written row-major.
  Tensor transposed =
      arange(0, 6, 1, DType::F32).reshape({2, 3}).transpose(0, 1);
  transposed.set_name("transposed");
  tensors.push_back(transposed);
  save_safetensors(path, tensors, {{"format", "pt"}});

  const SafetensorsFile file = load_safetensors(path);
  EXPECT_EQ(file.metadata.at("format"), "pt");
  ASSERT_EQ(file.tensors.size(), tensors.size());
  for (const Tensor& t : tensors) {
    const Tensor& loaded = file.at(t.name());
    EXPECT_EQ(loaded.dtype(), t.dtype()) << t.name();
    EXPECT_EQ(loaded.shape(), t.shape()) << t.name();
    EXPECT_TRUE(allclose(loaded.to(DType::F64), t.to(DType::F64), 0, 0))
        << t.name();
    // Zero copy: the data lives in the mapping.
    EXPECT_FALSE(loaded.storage().writable()) << t.name();
  }
  EXPECT_EQ(file.at("t_f32").storage().origin(), StorageOrigin::MappedFile);
  fs::remove(path);
}

TEST(Safetensors, WritesTheReferenceLayout) {
  const fs::path path = temp_path("layout.safetensors");
  Tensor a = ones({2}, DType::F16);
  a.set_name("b");
  Tensor b = ones({3}, DType::F32);
  b.set_name("a");
  save_safetensors(path, {a, b});
  std::ifstream in(path, std::ios::binary);
  std::uint64_t n = 0;
  in.read(reinterpret_cast<char*>(&n), 8);
  EXPECT_EQ(n % 8, 0u);  // header padded to 8 bytes
  std::string header(n, '\0');
  in.read(header.data(), static_cast<std::streamsize>(n));
  // f32 (larger elements) first: its data starts at offset 0.
  EXPECT_NE(header.find("\"a\":{\"data_offsets\":[0,12]"), std::string::npos)
      << header;
  EXPECT_NE(header.find("\"b\":{\"data_offsets\":[12,16]"), std::string::npos)
      << header;
  EXPECT_EQ(fs::file_size(path), 8 + n + 16);
  fs::remove(path);
}

TEST(Safetensors, RefusesWhatItCannotWrite) {
  const fs::path path = temp_path("refused.safetensors");
  Tensor unnamed = ones({2}, DType::F32);
  EXPECT_TESSEL_ERROR(save_safetensors(path, {unnamed}), "E2102");
  Tensor a = ones({2}, DType::F32);
  a.set_name("x");
  EXPECT_TESSEL_ERROR(save_safetensors(path, {a, a}), "E2102");
  // Block-quantised data has no safetensors dtype (i4/u4 are written
  // packed in U8: tests/io/test_quantized_io.cpp).
  Tensor block = zeros({32}, DType::Q8_0);
  block.set_name("b");
  EXPECT_TESSEL_ERROR(save_safetensors(path, {block}), "E2201");
  EXPECT_FALSE(fs::exists(path));
}

TEST(Safetensors, RejectsMalformedHeaders) {
  const std::string ok =
      R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  EXPECT_NO_THROW(parse_safetensors(file_bytes(ok, 8)));
  expect_malformed(ok, 4, "cover");                  // truncated data
  expect_malformed(ok, 12, "cover");                 // trailing bytes
  expect_malformed("{\"x\":", 0, "not valid JSON");  // broken JSON
  expect_malformed("[]", 0, "not a JSON object");
  expect_malformed(R"({"x":{"dtype":"F32","shape":[1e99999]}})", 0,
                   "not valid JSON");  // found by the fuzzer
  expect_malformed(
      R"({"x":{"dtype":"F8_E8M0","shape":[1],"data_offsets":[0,1]}})", 1,
      "not supported");
  expect_malformed(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})",
                   8, "needs 12");
  expect_malformed(R"({"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}})",
                   0, "non-negative");
  expect_malformed(
      R"({"x":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})",
      0, "overflows");
  expect_malformed(
      R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"y":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
      12, "gap or overlap");
  expect_malformed(
      R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"x":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
      16, "appears twice");
  expect_malformed(R"({"__metadata__":{"a":1}})", 0, "not a string");
  // Duplicates at any depth: a metadata key, a field of one entry.
  expect_malformed(R"({"__metadata__":{"k":"1","k":"2"}})", 0,
                   "key 'k' appears twice");
  expect_malformed(
      R"({"x":{"dtype":"F32","dtype":"F16","shape":[2],"data_offsets":[0,8]}})",
      8, "key 'dtype' appears twice");
  expect_malformed(std::string(600, '[') + std::string(600, ']'), 0,
                   "nesting deeper than 512");
  expect_malformed(R"({"x":{"dtype":"F32","shape":[2]}})", 8, "needs dtype");

  // A header length past the end of the file, and an absurd one.
  Storage s = file_bytes(ok, 8);
  const std::uint64_t huge = 1ull << 40;
  std::memcpy(s.data(), &huge, 8);
  EXPECT_TESSEL_ERROR(parse_safetensors(s), "E3001");
  const std::uint64_t past = 1000;
  std::memcpy(s.data(), &past, 8);
  EXPECT_TESSEL_ERROR(parse_safetensors(s), "E3001");
}

TEST(Safetensors, MissingFilesAndTensors) {
  EXPECT_TESSEL_ERROR(load_safetensors(temp_path("does-not-exist")), "E3002");
  // A FIFO would block open() until a writer came: refused at once.
  const fs::path fifo = temp_path("fifo.safetensors");
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_TESSEL_ERROR(load_safetensors(fifo), "E3001");
  fs::remove(fifo);
  EXPECT_TESSEL_ERROR(load_safetensors(fs::temp_directory_path()), "E3001");
  const SafetensorsFile f = parse_safetensors(file_bytes("{}", 0));
  EXPECT_TRUE(f.tensors.empty());
  EXPECT_TESSEL_ERROR(f.at("nope"), "E3001");
}

}  // namespace
}  // namespace tessel
