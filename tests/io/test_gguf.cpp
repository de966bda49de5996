#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

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

}  // namespace
}  // namespace tessel
