// Affine-quantised tensors through the JSON descriptor and safetensors:
// round trips at every granularity (per tensor, per channel on axis 0 and
// 1, per group) for i8, i4 and u4 with exact codes, scales and zero
// points; the documented file layout (sibling names, packed nibbles, the
// tessel.quantization metadata entry); and the refusals.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path temp_path(const std::string& name) {
  return fs::temp_directory_path() /
         ("tessel_qio_" + std::to_string(::getpid()) + "_" + name);
}

std::vector<std::int64_t> codes(const Tensor& q) {
  return testing::values<std::int64_t>(q.to(DType::I64));
}

// Bitwise equality of two tensors of the same dtype and shape.
void expect_identical(const Tensor& a, const Tensor& b, const char* what) {
  ASSERT_EQ(a.defined(), b.defined()) << what;
  if (!a.defined()) return;
  EXPECT_EQ(a.dtype(), b.dtype()) << what;
  EXPECT_EQ(a.shape(), b.shape()) << what;
  if (is_floating_point(a.dtype())) {
    EXPECT_EQ(testing::values<double>(a.to(DType::F64)),
              testing::values<double>(b.to(DType::F64)))
        << what;
  } else {
    EXPECT_EQ(codes(a), codes(b)) << what;
  }
}

struct Case {
  const char* label;
  DType dtype;
  AffineChoice choice;
};

// Every granularity, symmetric and not, for i8, i4 and u4.
std::vector<Case> cases() {
  std::vector<Case> out;
  for (const DType d : {DType::I8, DType::I4, DType::U4}) {
    AffineChoice tensor;  // per tensor, symmetric
    AffineChoice tensor_asym;
    tensor_asym.symmetric = false;
    AffineChoice ch0;
    ch0.per_channel = true;
    ch0.axis = 0;
    ch0.symmetric = false;
    AffineChoice ch1;
    ch1.per_channel = true;
    ch1.axis = 1;
    AffineChoice group;
    group.group_size = 8;
    group.symmetric = false;
    AffineChoice group_sym;
    group_sym.group_size = 16;
    out.push_back({"per tensor symmetric", d, tensor});
    out.push_back({"per tensor affine", d, tensor_asym});
    out.push_back({"per channel axis 0 affine", d, ch0});
    out.push_back({"per channel axis 1 symmetric", d, ch1});
    out.push_back({"per group of 8 affine", d, group});
    out.push_back({"per group of 16 symmetric", d, group_sym});
  }
  return out;
}

std::string label(const Case& c) {
  return std::string(dtype_name(c.dtype)) + " " + c.label;
}

void expect_same_params(const AffineQuantization& a,
                        const AffineQuantization& b, const std::string& what) {
  expect_identical(a.scale, b.scale, (what + ": scale").c_str());
  expect_identical(a.zero_point, b.zero_point, (what + ": zero point").c_str());
  EXPECT_EQ(a.group_size, b.group_size) << what;
  EXPECT_EQ(affine_granularity(a), affine_granularity(b)) << what;
  if (affine_granularity(a) != AffineGranularity::PerTensor) {
    EXPECT_EQ(a.axis < 0 ? a.axis + 2 : a.axis, b.axis) << what;
  }
}

// ---- the descriptor ---------------------------------------------------------

TEST(QuantizedDescriptor, RoundTripsEveryGranularityExactly) {
  Generator gen(11);
  const Tensor x = randn({6, 32}, gen);
  for (const Case& c : cases()) {
    SCOPED_TRACE(label(c));
    const AffineQuantization p =
        choose_affine_quantization(x, c.dtype, c.choice);
    Tensor q = quantize_affine(x, c.dtype, p);
    q.set_name("w");
    const TensorDescriptor d = describe(q, p);
    ASSERT_TRUE(d.quantization);
    const std::string text = to_json(d);
    const TensorDescriptor back = descriptor_from_json(text);
    ASSERT_TRUE(back.quantization);
    EXPECT_EQ(back.dtype, c.dtype);
    EXPECT_EQ(back.quantization->scheme(), affine_scheme_name(p));
    expect_same_params(p, back.quantization->params, label(c));
    // The codes are laid over the same buffer (zero copy) and are exact;
    // dequantising is the explicit step.
    const Tensor codes_back = tensor_from_descriptor(back, q.storage());
    EXPECT_TRUE(codes_back.shares_storage_with(q));
    expect_identical(codes_back, q, "codes");
    EXPECT_TRUE(equal(dequantize_from_descriptor(back, q.storage()),
                      dequantize_affine(q, p)));
    // Writing again gives the same text.
    EXPECT_EQ(to_json(back), text);
  }
}

TEST(QuantizedDescriptor, WritesTheFormatStandardsKeys) {
  const Tensor x = from_vector<float>({-1.f, 0.f, 0.5f, 2.f}, {2, 2});
  AffineQuantization p;
  p.scale = from_vector<float>({0.5f, 0.25f}, {2});
  p.zero_point = from_vector<std::int32_t>({3, -1}, {2});
  p.axis = 0;
  const Tensor q = quantize_affine(x, DType::I8, p);
  const json j = json::parse(to_json(describe(q, p)));
  const json& quant = j["dtype"]["quantization"];
  EXPECT_EQ(j["dtype"]["base_type"], "INT8");
  EXPECT_EQ(quant["scheme"], "per_channel_affine");
  EXPECT_EQ(quant["axis"], 0);
  EXPECT_EQ(quant["scale"], json::parse("[0.5, 0.25]"));
  EXPECT_EQ(quant["zero_point"], json::parse("[3, -1]"));
  EXPECT_EQ(quant["range"], json::parse("[-128, 127]"));
  EXPECT_FALSE(quant.contains("group_size"));
  EXPECT_FALSE(quant.contains("scale_dtype"));  // f32 is the default
  // Per tensor, symmetric: numbers, zero point 0.
  AffineQuantization t;
  t.scale = full({}, 0.125, DType::F64);  // recorded as scale_dtype
  const json k = json::parse(to_json(describe(q, t)));
  const json& tq = k["dtype"]["quantization"];
  EXPECT_EQ(tq["scheme"], "per_tensor_symmetric");
  EXPECT_EQ(tq["scale"], 0.125);
  EXPECT_EQ(tq["zero_point"], 0);
  EXPECT_EQ(tq["scale_dtype"], "f64");
  const TensorDescriptor back = descriptor_from_json(k.dump());
  EXPECT_EQ(back.quantization->params.scale.dtype(), DType::F64);
  EXPECT_FALSE(back.quantization->params.zero_point.defined());
}

TEST(QuantizedDescriptor, ReadsTheFormatStandardsInt8Example) {
  // The example of the format standard: "quantization" beside a dtype
  // string, per_tensor_symmetric, with a range.
  const std::int8_t raw[] = {-128, -1, 0, 100};
  Storage s = Storage::allocate(4);
  std::memcpy(s.data(), raw, 4);
  const TensorDescriptor d = descriptor_from_json(R"({
    "shape": [4], "dtype": "INT8",
    "quantization": {"scheme": "per_tensor_symmetric", "scale": 0.0235,
                     "zero_point": 0, "range": [-128, 127]}})");
  ASSERT_TRUE(d.quantization);
  EXPECT_FALSE(d.quantization->params.zero_point.defined());
  EXPECT_EQ(d.quantization->qmin, -128);
  EXPECT_EQ(d.quantization->qmax, 127);
  const Tensor codes_t = tensor_from_descriptor(d, s);
  EXPECT_EQ(codes_t.dtype(), DType::I8);  // the codes, as stored
  testing::expect_near_all(dequantize_from_descriptor(d, s),
                           {-128 * 0.0235, -0.0235, 0, 100 * 0.0235}, 1e-6);
  // "affine" alone, with a narrowed range and a u8 zero point of 128.
  const TensorDescriptor u = descriptor_from_json(R"({
    "shape": {"dimensions": [2, 3]},
    "dtype": {"base_type": "UINT8",
              "quantization": {"scheme": "affine", "scale": 0.5,
                               "zero_point": 128, "range": [1, 255]}}})");
  EXPECT_EQ(u.quantization->scheme(), "per_tensor_affine");
  EXPECT_EQ(u.quantization->params.zero_point.item<std::int32_t>(), 128);
  EXPECT_EQ(u.quantization->qmin, 1);
  // Groups default to the last axis; a zero point number is broadcast.
  const TensorDescriptor g = descriptor_from_json(R"({
    "shape": [2, 5], "dtype": {"base_type": "INT4",
    "quantization": {"scheme": "per_group_affine", "group_size": 4,
                     "scale": [1, 2, 3, 4], "zero_point": -2}}})");
  EXPECT_EQ(g.quantization->params.axis, 1);
  EXPECT_EQ(g.quantization->params.scale.shape(), (Shape{2, 2}));
  EXPECT_EQ(codes(g.quantization->params.zero_point),
            (std::vector<std::int64_t>{-2, -2, -2, -2}));
}

TEST(QuantizedDescriptor, RefusesWhatItCannotHonour) {
  const auto refuse = [](const std::string& quantization, const char* field,
                         const char* part, const char* dims = "[4, 6]",
                         const char* base = "INT8") {
    const std::string text = std::string(R"({"shape": {"dimensions": )") +
                             dims + R"(}, "dtype": {"base_type": ")" + base +
                             R"(", "quantization": )" + quantization + "}}";
    EXPECT_TESSEL_ERROR(descriptor_from_json(text), "E3001", field, part);
  };
  refuse(R"({"scale": 0.5})", "dtype.quantization", "not FLOAT32", "[4, 6]",
         "FLOAT32");
  refuse(R"({"scheme": "per_channel_affine_float_qparams", "scale": 1})",
         "dtype.quantization.scheme", "float zero points");
  refuse(R"({"scheme": "log2", "scale": 1})", "dtype.quantization.scheme",
         "log2");
  refuse(R"({"scheme": "per_channel_symmetric", "scale": [1, 1, 1, 1]})",
         "dtype.quantization.axis", "needs an axis");
  refuse(R"({"scheme": "per_channel_symmetric", "axis": 1,
             "scale": [1, 1, 1, 1]})",
         "dtype.quantization.scale",
         "4 values where the scheme and shape need 6");
  refuse(R"({"scheme": "per_channel_symmetric", "axis": 2, "scale": [1]})",
         "dtype.quantization.axis", "rank 2");
  refuse(R"({"scheme": "per_group_symmetric", "group_size": 0, "scale": 1})",
         "dtype.quantization.group_size", "positive");
  refuse(R"({"scheme": "per_group_symmetric", "group_size": 4,
             "scale": [1, 1, 1, 1]})",
         "dtype.quantization.scale", "need 8");
  refuse(R"({"scheme": "per_tensor_affine", "scale": -0.5})",
         "dtype.quantization.scale", "positive and finite");
  refuse(R"({"scale": 1e10, "scale_dtype": "f16"})", "dtype.quantization.scale",
         "f16");
  refuse(R"({"scale": 1, "zero_point": 1.5})", "dtype.quantization.zero_point",
         "integer");
  refuse(R"({"scale": 1, "zero_point": 300, "zero_point_dtype": "i8"})",
         "dtype.quantization.zero_point", "outside i8");
  refuse(R"({"scale": 1, "range": [-200, 0]})", "dtype.quantization.range",
         "[-128, 127]");
  refuse(R"({"scale": 1, "range": [5]})", "dtype.quantization.range",
         "[min, max]");
  refuse(R"({"axis": 0, "scale": [1, 2]})", "dtype.quantization.axis",
         "concrete", R"(["n", 6])");
  refuse("[1]", "dtype.quantization", "object");
  // Per tensor over a symbolic shape is fine.
  EXPECT_NO_THROW(descriptor_from_json(
      R"({"shape": ["n", 6], "dtype": "INT8",
          "quantization": {"scale": 0.5, "zero_point": 1}})"));
  // describe() checks the parameters as dequantize_affine does.
  const Tensor q = zeros({4, 6}, DType::I8);
  AffineQuantization p;
  p.scale = ones({4});
  p.axis = 1;
  EXPECT_TESSEL_ERROR(describe(q, p), "E2102", "expected (6,)");
  p.axis = 0;
  EXPECT_TESSEL_ERROR(describe(zeros({4, 6}), p), "E2201", "f32");
  p.zero_point = ones({4});
  EXPECT_TESSEL_ERROR(describe(q, p), "E2201", "zero_point");
  // Parameters without values (meta) cannot be written.
  TensorDescriptor d = describe(q);
  d.quantization = Quantization{};
  d.quantization->params.scale = empty({4}, DType::F32, Device::meta());
  d.quantization->params.axis = 0;
  EXPECT_TESSEL_ERROR(to_json(d), "E2501", "meta");
}

// ---- safetensors ------------------------------------------------------------

struct RawFile {
  json header;
  std::vector<std::uint8_t> data;
};

RawFile read_raw(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::uint64_t n = 0;
  in.read(reinterpret_cast<char*>(&n), 8);
  std::string text(n, '\0');
  in.read(text.data(), static_cast<std::streamsize>(n));
  RawFile out;
  out.header = json::parse(text);
  out.data.assign(std::istreambuf_iterator<char>(in), {});
  return out;
}

Storage to_storage(const RawFile& f) {
  const std::string text = f.header.dump();
  const std::uint64_t n = text.size();
  Storage s =
      Storage::allocate(static_cast<std::int64_t>(8 + n + f.data.size()));
  auto* p = static_cast<std::uint8_t*>(s.data());
  std::memcpy(p, &n, 8);
  std::memcpy(p + 8, text.data(), n);
  if (!f.data.empty()) std::memcpy(p + 8 + n, f.data.data(), f.data.size());
  return s;
}

std::vector<std::uint8_t> file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(QuantizedSafetensors, RoundTripsEveryGranularityExactly) {
  Generator gen(5);
  const Tensor x = randn({6, 32}, gen);
  Tensor bias = randn({6}, gen);
  bias.set_name("layer.bias");
  const fs::path path = temp_path("roundtrip.safetensors");
  const fs::path again = temp_path("again.safetensors");
  for (const Case& c : cases()) {
    SCOPED_TRACE(label(c));
    const AffineQuantization p =
        choose_affine_quantization(x, c.dtype, c.choice);
    Tensor q = quantize_affine(x, c.dtype, p);
    q.set_name("layer.weight");
    save_safetensors(path, {q, bias}, {{"format", "pt"}},
                     {{"layer.weight", p}});
    const SafetensorsFile f = load_safetensors(path);
    // The codes, the bias and the siblings, under their documented names.
    EXPECT_EQ(f.tensors.size(), p.zero_point.defined() ? 4u : 3u);
    expect_identical(f.at("layer.weight"), q, "codes");
    expect_identical(f.at("layer.bias"), bias, "bias");
    expect_identical(f.at("layer.weight_scale"), p.scale, "scale tensor");
    EXPECT_EQ(f.contains("layer.weight_zero_point"), p.zero_point.defined());
    ASSERT_EQ(f.quantization.size(), 1u);
    expect_same_params(p, f.quantization.at("layer.weight"), label(c));
    EXPECT_EQ(f.metadata,
              (std::map<std::string, std::string>{{"format", "pt"}}));
    EXPECT_TRUE(equal(f.dequantized("layer.weight"), dequantize_affine(q, p)));
    EXPECT_TRUE(equal(f.dequantized("layer.bias"), bias));
    // Writing what was loaded gives the same bytes (the siblings in the
    // list are the quantisation's own tensors, so they are not doubled).
    save_safetensors(again, f.tensors, f.metadata, f.quantization);
    EXPECT_EQ(file_bytes(again), file_bytes(path));
  }
  fs::remove(path);
  fs::remove(again);
}

TEST(QuantizedSafetensors, LaysOutTheDocumentedNamesAndPackedNibbles) {
  // i4 codes 1..7 and -8..-2 in groups of 4 along the last axis.
  const Tensor x = from_vector<float>(
      {1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, 0, 1}, {2, 8});
  AffineQuantization p;
  p.scale = ones({2, 2});
  p.zero_point = zeros({2, 2}, DType::I8);
  p.group_size = 4;
  Tensor q = quantize_affine(x, DType::I4, p);
  q.set_name("w");
  const fs::path path = temp_path("layout.safetensors");
  save_safetensors(path, {q}, {}, {{"w", p}});
  const RawFile raw = read_raw(path);
  const json& h = raw.header;
  EXPECT_EQ(h["w"]["dtype"], "U8");
  EXPECT_EQ(h["w"]["shape"], json::parse("[2, 4]"));  // the last axis halved
  EXPECT_EQ(h["w_scale"]["dtype"], "F32");
  EXPECT_EQ(h["w_scale"]["shape"], json::parse("[2, 2]"));
  EXPECT_EQ(h["w_zero_point"]["dtype"], "I8");
  const json entry =
      json::parse(h["__metadata__"]["tessel.quantization"].get<std::string>());
  EXPECT_EQ(entry, json::parse(R"({"w": {"dtype": "i4", "shape": [2, 8],
      "scheme": "per_group_affine", "axis": 1, "group_size": 4,
      "scale": "w_scale", "zero_point": "w_zero_point"}})"));
  // Two codes per byte, the first in the low nibble, two's complement.
  const auto [lo, hi] = std::pair{h["w"]["data_offsets"][0].get<std::size_t>(),
                                  h["w"]["data_offsets"][1].get<std::size_t>()};
  const std::vector<std::uint8_t> packed(raw.data.begin() + lo,
                                         raw.data.begin() + hi);
  EXPECT_EQ(packed, (std::vector<std::uint8_t>{0x21, 0x43, 0x65, 0x87, 0xa9,
                                               0xcb, 0xed, 0x10}));
  fs::remove(path);
}

TEST(QuantizedSafetensors, PackedCodesOfAnyShapeRoundTrip) {
  // Odd counts: the bytes go 1-D and the unused nibble is written as 0.
  Generator gen(3);
  const fs::path path = temp_path("packed.safetensors");
  for (const DType d : {DType::I4, DType::U4}) {
    for (const Shape& shape :
         {Shape{3, 5}, Shape{7}, Shape{}, Shape{4, 0}, Shape{2, 3, 4}}) {
      SCOPED_TRACE(std::string(dtype_name(d)) + " " + shape_string(shape));
      const Tensor ints =
          randint(d == DType::I4 ? -8 : 0, d == DType::I4 ? 8 : 16, shape, gen);
      Tensor q = ints.to(d);
      q.set_name("codes");
      save_safetensors(path, {q});  // plain packed codes, no quantisation
      const SafetensorsFile f = load_safetensors(path);
      expect_identical(f.at("codes"), q, "codes");
      EXPECT_TRUE(f.quantization.empty());
      const RawFile raw = read_raw(path);
      const std::int64_t n = checked_numel(shape);
      if (n % 2 == 1) {
        EXPECT_EQ(raw.header["codes"]["shape"], json::array({(n + 1) / 2}));
        EXPECT_EQ(raw.data.back() >> 4, 0);
      }
    }
  }
  // A view that starts at a high nibble is written from its own bytes.
  Tensor row = arange(0, 8, 1, DType::I32).to(DType::U4).slice(0, 1, 8);
  row.set_name("row");
  save_safetensors(path, {row});
  expect_identical(load_safetensors(path).at("row"), row, "view");
  fs::remove(path);
}

TEST(QuantizedSafetensors, ShardsKeepEachTensorWithItsParameters) {
  Generator gen(9);
  std::vector<Tensor> tensors;
  std::map<std::string, AffineQuantization> params;
  AffineChoice c;
  c.group_size = 8;
  c.symmetric = false;
  for (int i = 0; i < 4; ++i) {
    const Tensor x = randn({4, 16}, gen);
    const std::string name = "layers." + std::to_string(i) + ".weight";
    params[name] = choose_affine_quantization(x, DType::U4, c);
    Tensor q = quantize_affine(x, DType::U4, params[name]);
    q.set_name(name);
    tensors.push_back(q);
  }
  const fs::path dir = temp_path("sharded");
  fs::create_directories(dir);
  const auto files = save_safetensors_sharded(dir, tensors, 48, {}, params);
  EXPECT_EQ(files.size(), 5u);  // four shards and the index
  const json index =
      json::parse(std::ifstream(dir / "model.safetensors.index.json"));
  for (const auto& [name, p] : params) {
    const std::string shard = index["weight_map"][name];
    EXPECT_EQ(index["weight_map"][name + "_scale"], shard);
    EXPECT_EQ(index["weight_map"][name + "_zero_point"], shard);
  }
  const SafetensorsFile f = load_safetensors_checkpoint(dir);
  ASSERT_EQ(f.quantization.size(), 4u);
  for (const Tensor& q : tensors) {
    expect_identical(f.at(q.name()), q, "codes");
    expect_same_params(params.at(q.name()), f.quantization.at(q.name()),
                       q.name());
  }
  fs::remove_all(dir);
}

TEST(QuantizedSafetensors, RefusesParametersThatDoNotFitWhenSaving) {
  const fs::path path = temp_path("refused.safetensors");
  Tensor q = zeros({4, 6}, DType::I8);
  q.set_name("w");
  AffineQuantization p;
  p.scale = ones({6});
  p.axis = 1;
  EXPECT_TESSEL_ERROR(save_safetensors(path, {q}, {}, {{"v", p}}), "E2102",
                      "'v'", "no tensor");
  Tensor f = zeros({4, 6});
  f.set_name("w");
  EXPECT_TESSEL_ERROR(save_safetensors(path, {f}, {}, {{"w", p}}), "E2201",
                      "f32");
  AffineQuantization wrong = p;
  wrong.axis = 0;
  EXPECT_TESSEL_ERROR(save_safetensors(path, {q}, {}, {{"w", wrong}}), "E2102",
                      "expected (4,)");
  wrong = p;
  wrong.zero_point = ones({6});
  EXPECT_TESSEL_ERROR(save_safetensors(path, {q}, {}, {{"w", wrong}}), "E2201",
                      "zero_point");
  Tensor other = full({6}, 2.0);
  other.set_name("w_scale");
  EXPECT_TESSEL_ERROR(save_safetensors(path, {q, other}, {}, {{"w", p}}),
                      "E2102", "'w_scale'", "differs");
  EXPECT_TESSEL_ERROR(
      save_safetensors(path, {q}, {{"tessel.quantization", "{}"}}), "E2102",
      "writer's own");
  // A zero point that is itself quantised.
  AffineQuantization zp = p;
  zp.zero_point = zeros({6}, DType::I8);
  AffineQuantization of_zp;
  of_zp.scale = ones({});
  EXPECT_TESSEL_ERROR(
      save_safetensors(path, {q}, {}, {{"w", zp}, {"w_zero_point", of_zp}}),
      "E2102", "'w_zero_point' cannot be quantised");
  Tensor zpt = zp.zero_point.clone();
  zpt.set_name("w_zero_point");
  EXPECT_TESSEL_ERROR(
      save_safetensors_sharded(temp_path("shards"), {q, zpt}, 1 << 20, {},
                               {{"w", zp}, {"w_zero_point", of_zp}}),
      "E2102", "'w_zero_point' cannot be quantised");
  Tensor block = zeros({32}, DType::Q8_0);
  block.set_name("b");
  EXPECT_TESSEL_ERROR(save_safetensors(path, {block}), "E2201", "q8_0");
  EXPECT_FALSE(fs::exists(path));
}

TEST(QuantizedSafetensors, RefusesFilesWhoseEntryDoesNotFit) {
  // A good file, then its header changed one way at a time.
  Tensor q = zeros({4, 6}, DType::I4);
  q.set_name("w");
  AffineQuantization p;
  p.scale = ones({4});
  p.zero_point = zeros({4}, DType::I32);
  p.axis = 0;
  const fs::path path = temp_path("good.safetensors");
  save_safetensors(path, {q}, {}, {{"w", p}});
  const RawFile good = read_raw(path);
  fs::remove(path);
  ASSERT_NO_THROW(parse_safetensors(to_storage(good)));
  const auto refuse = [&](const auto& mutate, const char* part1,
                          const char* part2) {
    RawFile bad = good;
    json entry = json::parse(
        bad.header["__metadata__"]["tessel.quantization"].get<std::string>());
    mutate(bad.header, entry);
    bad.header["__metadata__"]["tessel.quantization"] = entry.dump();
    EXPECT_TESSEL_ERROR(parse_safetensors(to_storage(bad)), "E3001", part1,
                        part2);
  };
  refuse([](json&, json& e) { e["w"]["scale"] = "w_scales"; },
         "its scale 'w_scales'", "not in the file");
  refuse([](json&, json& e) { e["w"].erase("scale"); }, "'w' is quantised",
         "no scale");
  refuse([](json&, json& e) { e["w"]["zero_point"] = "missing"; },
         "zero_point 'missing'", "not in the file");
  refuse([](json& h, json&) { h["w_scale"]["dtype"] = "I32"; },
         "scale 'w_scale' is i32", "not a float dtype");
  refuse([](json& h, json&) { h["w_zero_point"]["dtype"] = "F32"; },
         "zero point 'w_zero_point' is f32", "not an integer");
  refuse([](json& h, json&) { h["w_scale"]["shape"] = json::parse("[2, 2]"); },
         "scale of shape (2, 2)", "expected (4,)");
  refuse([](json&, json& e) { e["w"]["axis"] = 1; }, "expected (6,)", "axis 1");
  refuse([](json&, json& e) { e["w"]["scheme"] = "per_channel_symmetric"; },
         "says per_channel_symmetric", "per_channel_affine");
  refuse([](json&, json& e) { e["w"]["shape"] = json::parse("[4, 8]"); },
         "need 16 bytes", "12 bytes");
  refuse([](json&, json& e) { e["w"]["dtype"] = "f32"; }, "says f32",
         "i8 u8 i16 u16 i4 u4");
  refuse(
      [](json&, json& e) {
        e["ghost"] = {{"dtype", "i8"}};
      },
      "'ghost'", "does not hold");
  refuse([](json&, json& e) { e["w"]["dtype"] = "i8"; },
         "'w' is u8 in the header", "i8");
  refuse([](json&, json& e) { e["w"]["group_size"] = "4"; }, "group_size",
         "positive integer");
  RawFile bad = good;
  bad.header["__metadata__"]["tessel.quantization"] = "{not json";
  EXPECT_TESSEL_ERROR(parse_safetensors(to_storage(bad)), "E3001",
                      "tessel.quantization", "not valid JSON");
  // Without the entry the file is plain tensors: the codes as U8 bytes.
  bad = good;
  bad.header.erase("__metadata__");
  const SafetensorsFile plain = parse_safetensors(to_storage(bad));
  EXPECT_EQ(plain.at("w").dtype(), DType::U8);
  EXPECT_EQ(plain.at("w").shape(), (Shape{4, 3}));
  EXPECT_TRUE(plain.quantization.empty());
}

}  // namespace
}  // namespace tessel
