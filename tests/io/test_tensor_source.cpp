// The streaming writers: a file written from a TensorSource (cast chunk by
// chunk) is byte-identical to the same tensors cast first and saved whole.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

namespace fs = std::filesystem;

fs::path temp_path(const std::string& name) {
  return fs::temp_directory_path() /
         ("tessel_src_" + std::to_string(::getpid()) + "_" + name);
}

std::string file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Several 2 MiB chunks and a ragged last one.
std::vector<Tensor> sample_tensors() {
  Generator g(7);
  Tensor big = randn({1000, 1531}, g);
  big.set_name("big");
  Tensor small = randn({3, 5}, g).to(DType::F64);
  small.set_name("small");
  Tensor ids = arange(10, DType::I32);
  ids.set_name("ids");
  Tensor transposed = randn({40, 30}, g).transpose(0, 1);
  transposed.set_name("transposed");
  return {big, small, ids, transposed};
}

std::vector<Tensor> cast_floats(const std::vector<Tensor>& tensors, DType to) {
  std::vector<Tensor> out;
  for (const Tensor& t : tensors) {
    Tensor c = is_floating_point(t.dtype()) ? t.to(to) : t;
    c.set_name(t.name());
    out.push_back(c);
  }
  return out;
}

std::vector<DType> float_targets(const std::vector<Tensor>& tensors, DType to) {
  std::vector<DType> out;
  for (const Tensor& t : tensors)
    out.push_back(is_floating_point(t.dtype()) ? to : t.dtype());
  return out;
}

TEST(TensorSource, StreamedSafetensorsEqualCastThenSaved) {
  const auto tensors = sample_tensors();
  const fs::path streamed = temp_path("streamed.safetensors");
  const fs::path whole = temp_path("whole.safetensors");
  CastingSource source(tensors, float_targets(tensors, DType::BF16));
  save_safetensors(streamed, source, {{"k", "v"}});
  save_safetensors(whole, cast_floats(tensors, DType::BF16), {{"k", "v"}});
  EXPECT_EQ(file_bytes(streamed), file_bytes(whole));
  const SafetensorsFile back = load_safetensors(streamed);
  EXPECT_EQ(back.at("big").dtype(), DType::BF16);
  EXPECT_EQ(back.at("ids").dtype(), DType::I32);
  EXPECT_TRUE(allclose(back.at("transposed").to(DType::F32),
                       tensors[3].to(DType::BF16).to(DType::F32), 0, 0));
  fs::remove(streamed);
  fs::remove(whole);
}

TEST(TensorSource, StreamedGgufAndNpyEqualCastThenSaved) {
  const auto tensors = sample_tensors();
  const std::vector<std::pair<std::string, GgufValue>> kv = {
      {"general.architecture",
       GgufValue{GgufValue::Type::String, GgufValue::Type::U8,
                 std::string("test")}}};
  const fs::path streamed = temp_path("streamed.gguf");
  const fs::path whole = temp_path("whole.gguf");
  CastingSource source(tensors, float_targets(tensors, DType::F16));
  save_gguf(streamed, kv, source);
  save_gguf(whole, kv, cast_floats(tensors, DType::F16));
  EXPECT_EQ(file_bytes(streamed), file_bytes(whole));

  const fs::path npy_streamed = temp_path("streamed.npy");
  const fs::path npy_whole = temp_path("whole.npy");
  save_npy(npy_streamed, source, 0);
  save_npy(npy_whole, tensors[0].to(DType::F16));
  EXPECT_EQ(file_bytes(npy_streamed), file_bytes(npy_whole));
  for (const auto& p : {streamed, whole, npy_streamed, npy_whole})
    fs::remove(p);
}

TEST(TensorSource, BlockQuantisedTensorsPassThroughWhole) {
  // Three Q8_0 blocks of 34 bytes; passing through copies them unchanged.
  Tensor q = empty({3, 32}, DType::Q8_0);
  auto* bytes = static_cast<std::uint8_t*>(q.mutable_raw_data());
  for (int i = 0; i < 102; ++i) bytes[i] = static_cast<std::uint8_t>(i);
  q.set_name("q");
  CastingSource source({q}, {DType::Q8_0});
  EXPECT_EQ(source.spec(0).nbytes(), 102);
  std::vector<std::uint8_t> out(34);
  source.read(0, 34, out);
  EXPECT_EQ(out[0], 34);
  EXPECT_EQ(out[33], 67);
  EXPECT_EQ(storage_unit_bytes(DType::Q8_0), 34);
  EXPECT_EQ(storage_unit_bytes(DType::BF16), 2);
  EXPECT_EQ(storage_unit_bytes(DType::I4), 1);
}

TEST(TensorSource, ImpossibleCastsAreRefusedBeforeWriting) {
  Tensor q = empty({1, 32}, DType::Q8_0);
  q.set_name("q");
  EXPECT_TESSEL_ERROR(CastingSource({q}, {DType::F32}), "E2201", "q8_0", "f32");
  EXPECT_TESSEL_ERROR(CastingSource({q}, {}), "E2102", "1 tensors");
  // A dtype the output format lacks: nothing is written.
  Tensor b = ones({4});
  b.set_name("b");
  CastingSource source({b}, {DType::BF16});
  const fs::path path = temp_path("refused.npy");
  EXPECT_TESSEL_ERROR(save_npy(path, source, 0), "E2201", "bf16");
  EXPECT_FALSE(fs::exists(path));
}

}  // namespace
}  // namespace tessel

namespace tessel {
namespace {

TEST(TensorSource, ListSourceReadsNonContiguousTensorsRowMajor) {
  Tensor t = arange(6, DType::I16).reshape({2, 3}).transpose(0, 1);
  t.set_name("t");
  TensorListSource source({t});
  EXPECT_EQ(source.bytes(0), nullptr);  // not in memory row-major
  std::vector<std::uint8_t> out(4);
  source.read(0, 4, out);  // elements 2 and 3 of [[0, 3], [1, 4], [2, 5]]
  std::int16_t v[2];
  std::memcpy(v, out.data(), 4);
  EXPECT_EQ(v[0], 1);
  EXPECT_EQ(v[1], 4);
}

TEST(TensorSource, GgufKeepsTheAlignmentItsMetadataNames) {
  const fs::path path = temp_path("aligned.gguf");
  Tensor a = ones({3});
  a.set_name("a");
  Tensor b = ones({5});
  b.set_name("b");
  const auto text = [](std::string s) {
    return GgufValue{GgufValue::Type::String, GgufValue::Type::U8,
                     std::move(s)};
  };
  const GgufValue align64{GgufValue::Type::U32, GgufValue::Type::U8,
                          std::uint64_t{64}};
  // Metadata copied from a 64-aligned file: the layout follows it.
  save_gguf(
      path,
      {{"general.architecture", text("t")}, {"general.alignment", align64}},
      {a, b});
  const GgufFile back = load_gguf(path);
  EXPECT_EQ(back.alignment, 64u);
  EXPECT_EQ(back.at("b").numel(), 5);
  EXPECT_TESSEL_ERROR(save_gguf(path,
                                {{"general.architecture", text("t")},
                                 {"general.alignment", align64}},
                                {a, b}, 128),
                      "E4001", "contradicts");
  // Block types are stored row by row: rows of whole blocks only (64
  // elements are two whole blocks, but rows of 16 are not).
  struct HalfBlockRows final : TensorSource {
    TensorSpec s{"q", DType::Q8_0, {4, 16}};
    std::size_t size() const override { return 1; }
    const TensorSpec& spec(std::size_t) const override { return s; }
    void read(std::size_t, std::int64_t, std::span<std::uint8_t>) override {
      ADD_FAILURE() << "nothing may be read from a refused tensor";
    }
  } rows_of_16;
  EXPECT_TESSEL_ERROR(
      save_gguf(path, {{"general.architecture", text("t")}}, rows_of_16),
      "E2102", "rows of 16", "blocks of 32");
  fs::remove(path);
}

}  // namespace
}  // namespace tessel
