#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

using nlohmann::json;

TEST(Descriptor, DescribesAViewAndRebuildsIt) {
  Tensor x = arange(0, 24, 1, DType::F32).reshape({2, 3, 4});
  Tensor view = x.transpose(1, 2).slice(1, 1, 4);  // (2, 3, 3), strided
  view.set_name("x");
  const TensorDescriptor d = describe(view);
  const json j = json::parse(to_json(d));
  EXPECT_EQ(j["version"], "WIA-AI-011-v1.0");
  EXPECT_EQ(j["name"], "x");
  EXPECT_EQ(j["shape"]["dimensions"], json::parse("[2, 3, 3]"));
  EXPECT_EQ(j["shape"]["layout"], "strided");  // what its strides are
  EXPECT_EQ(j["dtype"]["base_type"], "FLOAT32");
  EXPECT_EQ(j["dtype"]["byte_order"], "little_endian");
  EXPECT_EQ(j["memory"]["strides"], json::parse("[12, 1, 4]"));
  EXPECT_EQ(j["memory"]["offset_bytes"], 4);  // the slice starts at x[0,0,1]
  EXPECT_EQ(j["memory"]["total_bytes"], 96);
  EXPECT_GE(j["memory"]["alignment"].get<int>(), 64);
  EXPECT_EQ(j["memory"]["device"]["type"], "CPU");
  EXPECT_EQ(j["properties"]["is_contiguous"], false);

  const TensorDescriptor back = descriptor_from_json(to_json(d));
  const Tensor rebuilt = tensor_from_descriptor(back, x.storage());
  EXPECT_TRUE(rebuilt.shares_storage_with(x));
  EXPECT_TRUE(allclose(rebuilt, view, 0, 0));
}

TEST(Descriptor, ReadsTheSpecificationsExampleOnItsNpu) {
  // The standard's own example, unchanged: an NPU buffer, which tessel
  // keeps as written but cannot serve.
  const std::string npu = R"({
    "version": "WIA-AI-011-v1.0", "tensor_id": "uuid-string",
    "name": "input_images",
    "shape": {"dimensions": [32, 3, 224, 224], "layout": "NCHW",
              "symbolic": false},
    "dtype": {"base_type": "FLOAT16", "quantization": null,
              "byte_order": "little_endian"},
    "memory": {"strides": [150528, 50176, 224, 1], "offset_bytes": 0,
               "total_bytes": 9633792, "alignment": 256,
               "device": {"type": "NPU", "id": 0, "memory_space": "device"}},
    "properties": {"requires_grad": false, "is_pinned": true,
                   "is_contiguous": true, "zero_copy_compatible": true},
    "metadata": {"created_at": "2025-01-15T10:30:00Z",
                 "framework": "pytorch", "producer": "data_loader_v2"}})";
  const TensorDescriptor d = descriptor_from_json(npu);
  EXPECT_FALSE(d.device.has_value());
  EXPECT_EQ(d.device_type, "NPU");
  EXPECT_EQ(d.memory_space, "device");
  EXPECT_EQ(d.shape(), (Shape{32, 3, 224, 224}));
  EXPECT_EQ(d.layout, "NCHW");
  EXPECT_EQ(d.dtype, DType::F16);
  EXPECT_EQ(d.alignment, 256);
  EXPECT_EQ(d.total_bytes, 9633792);
  EXPECT_EQ(d.metadata.at("framework"), "pytorch");
  EXPECT_TRUE(d.properties.at("is_pinned"));
  // Fields tessel does not know are ignored.
  EXPECT_EQ(descriptor_from_json(
                R"({"shape": [2], "dtype": "FLOAT32",
                    "future_field": {"anything": [1, 2, 3]}})")
                .shape(),
            (Shape{2}));
  // Written back as it came.
  const TensorDescriptor again = descriptor_from_json(to_json(d));
  EXPECT_EQ(again.device_type, "NPU");
  EXPECT_EQ(again.memory_space, "device");
  EXPECT_EQ(again.tensor_id, "uuid-string");
  // Serving it is what tessel cannot do.
  EXPECT_TESSEL_ERROR(tensor_from_descriptor(d, Storage::allocate(9633792)),
                      "E2501", "NPU 0", "no backend");
  // A device tessel has keeps its memory space too.
  const TensorDescriptor cpu = describe(zeros({2}));
  EXPECT_EQ(cpu.device_type, "CPU");
  EXPECT_EQ(cpu.memory_space, "host");
}

TEST(Descriptor, ReadsTheFlatLayoutForm) {
  // The standard's layout example, unchanged: no dtype, the element size.
  const TensorDescriptor d = descriptor_from_json(R"({
    "shape": [32, 3, 224, 224],
    "layout": "NCHW",
    "strides": [150528, 50176, 224, 1],
    "offset": 0,
    "element_size_bytes": 4})");
  EXPECT_EQ(d.shape(), (Shape{32, 3, 224, 224}));
  EXPECT_EQ(d.layout, "NCHW");
  EXPECT_EQ(d.dtype, DType::F32);
  EXPECT_EQ(d.strides, (std::vector<std::int64_t>{150528, 50176, 224, 1}));
  // The offset counts elements; with a dtype, the size must agree with it.
  const TensorDescriptor view = descriptor_from_json(R"({
    "shape": [2, 2], "strides": [1, 2], "offset": 3,
    "element_size_bytes": 2, "dtype": "INT16"})");
  EXPECT_EQ(view.offset_bytes, 6);
  Tensor buffer = arange(0, 8, 1, DType::I16);
  const Tensor t = tensor_from_descriptor(view, buffer.storage());
  EXPECT_EQ(t.at<std::int16_t>({1, 0}), 4);  // offset 3 + stride 1
  EXPECT_EQ(t.at<std::int16_t>({0, 1}), 5);  // offset 3 + stride 2
  EXPECT_TESSEL_ERROR(descriptor_from_json(R"({"shape": [2], "strides": [1],
                          "element_size_bytes": 4, "dtype": "FLOAT16"})"),
                      "E3001", "element_size_bytes");
  EXPECT_TESSEL_ERROR(
      descriptor_from_json(R"({"shape": [2], "element_size_bytes": 3})"),
      "E3001", "element_size_bytes");
}

TEST(Descriptor, PaddingRecordsAreKeptAndChecked) {
  // The standard's padding example, unchanged (its dtype is the default).
  const TensorDescriptor d = descriptor_from_json(R"({
    "shape": [32, 11, 224, 224],
    "physical_shape": [32, 16, 224, 224],
    "padding": {"dims": [false, true, false, false],
                "values": [0, 5, 0, 0], "mode": "zero_fill"}})");
  EXPECT_EQ(d.padding_values, (std::vector<std::int64_t>{0, 5, 0, 0}));
  EXPECT_EQ(d.padding_dims, (std::vector<bool>{false, true, false, false}));
  EXPECT_EQ(d.strides,
            (std::vector<std::int64_t>{16 * 224 * 224, 224 * 224, 224, 1}));
  const TensorDescriptor again = descriptor_from_json(to_json(d));
  EXPECT_EQ(again.padding_values, d.padding_values);
  EXPECT_EQ(again.padding_dims, d.padding_dims);
  EXPECT_TESSEL_ERROR(descriptor_from_json(R"({"shape": [2, 3],
      "physical_shape": [2, 4], "padding": {"values": [0, 2]}})"),
                      "E3001", "padding.values", "adds 1");
  EXPECT_TESSEL_ERROR(descriptor_from_json(R"({"shape": [2, 3],
      "physical_shape": [2, 4],
      "padding": {"dims": [true, true], "values": [0, 1]}})"),
                      "E3001", "padding.dims");
}

TEST(Descriptor, OverallocatedTensorsGrowInPlace) {
  // The standard's dynamic-shape example, unchanged.
  const TensorDescriptor d = descriptor_from_json(R"({
    "shape": {"dimensions": ["batch", "sequence_length", 768],
              "symbolic": true,
              "constraints": {
                "batch": {"min": 1, "max": 256},
                "sequence_length": {"min": 1, "max": 2048, "multiple_of": 8}}},
    "allocation_strategy": "overallocate",
    "max_physical_shape": [256, 2048, 768]})");
  EXPECT_EQ(d.allocation_strategy, "overallocate");
  // A KV-cache-like case, small: (batch <= 2, seq <= 16, 4).
  const TensorDescriptor cache = descriptor_from_json(R"({
    "shape": {"dimensions": ["batch", "seq", 4], "symbolic": true,
              "constraints": {"batch": {"max": 2}, "seq": {"max": 16}}},
    "dtype": "FLOAT32",
    "allocation_strategy": "overallocate", "max_physical_shape": [2, 16, 4]})");
  const TensorDescriptor short_one = cache.bind({{"batch", 2}, {"seq", 3}});
  EXPECT_EQ(short_one.strides, (std::vector<std::int64_t>{64, 4, 1}));
  EXPECT_EQ(short_one.total_bytes, 2 * 16 * 4 * 4);
  Storage buffer =
      Storage::allocate(static_cast<std::size_t>(short_one.total_bytes));
  Tensor first = tensor_from_descriptor(short_one, buffer);
  first.at<float>({1, 2, 3}) = 7.0f;
  // Grown along seq: the same buffer, the element where it was.
  const Tensor grown =
      tensor_from_descriptor(cache.bind({{"batch", 2}, {"seq", 9}}), buffer);
  EXPECT_EQ(grown.shape(), (Shape{2, 9, 4}));
  EXPECT_EQ(grown.at<float>({1, 2, 3}), 7.0f);
  EXPECT_TRUE(grown.shares_storage_with(first));
  // The buffer must hold the largest binding: a symbol without a max, or a
  // max beyond the physical extent, is refused.
  EXPECT_TESSEL_ERROR(descriptor_from_json(R"({
      "shape": {"dimensions": ["seq", 4], "symbolic": true},
      "allocation_strategy": "overallocate", "max_physical_shape": [16, 4]})"),
                      "E3001", "max_physical_shape", "no max");
  EXPECT_TESSEL_ERROR(descriptor_from_json(R"({
      "shape": {"dimensions": ["seq", 4], "symbolic": true,
                "constraints": {"seq": {"max": 32}}},
      "allocation_strategy": "overallocate", "max_physical_shape": [16, 4]})"),
                      "E3001", "max_physical_shape", "below");
  EXPECT_TESSEL_ERROR(descriptor_from_json(R"({"shape": [2],
      "allocation_strategy": "pool"})"),
                      "E3001", "allocation_strategy");
}

TEST(Descriptor, BitOrderOfSubByteTypes) {
  const TensorDescriptor lsb = descriptor_from_json(
      R"({"shape": [4], "dtype": {"base_type": "INT4", "bit_order": "lsb_first"}})");
  EXPECT_EQ(lsb.bit_order, "lsb_first");
  EXPECT_NE(to_json(lsb).find("lsb_first"), std::string::npos);
  // The standard's endianness example's bit order on whole bytes: kept.
  EXPECT_EQ(descriptor_from_json(R"({"shape": [1], "dtype": {"base_type":
                "FLOAT32", "byte_order": "little_endian",
                "bit_order": "msb_first"}})")
                .bit_order,
            "msb_first");
  EXPECT_TESSEL_ERROR(descriptor_from_json(R"({"shape": [4], "dtype":
                          {"base_type": "UINT4", "bit_order": "msb_first"}})"),
                      "E3001", "dtype.bit_order", "lsb_first");
  EXPECT_TESSEL_ERROR(descriptor_from_json(R"({"shape": [4], "dtype":
                          {"base_type": "INT4", "bit_order": "middle"}})"),
                      "E3001", "dtype.bit_order");
}

TEST(Descriptor, LayoutTagsMustMatchTheStrides) {
  const auto read = [](const std::string& layout, const std::string& dims,
                       const std::string& strides) {
    return descriptor_from_json(
        R"({"shape": {"dimensions": )" + dims + R"(, "layout": ")" + layout +
        R"("}, "dtype": "FLOAT32", "memory": {"strides": )" + strides + "}}");
  };
  // NCHW is row-major over (N, C, H, W).
  EXPECT_EQ(read("NCHW", "[2, 3, 4, 5]", "[60, 20, 5, 1]").layout, "NCHW");
  EXPECT_TESSEL_ERROR(read("NCHW", "[2, 3, 4, 5]", "[60, 1, 15, 3]"), "E3001",
                      "shape.layout", "not row-major");
  EXPECT_TESSEL_ERROR(read("NCHW", "[3, 4, 5]", "[20, 5, 1]"), "E3001",
                      "rank 4");
  // NHWC: dimensions listed NHWC and row-major, or listed NCHW with
  // PyTorch's channels_last strides (C fastest).
  EXPECT_EQ(read("NHWC", "[2, 4, 5, 3]", "[60, 15, 3, 1]").layout, "NHWC");
  EXPECT_EQ(read("NHWC", "[2, 3, 4, 5]", "[60, 1, 15, 3]").layout, "NHWC");
  EXPECT_TESSEL_ERROR(read("NHWC", "[2, 3, 4, 5]", "[60, 20, 1, 4]"), "E3001",
                      "channels-last");
  // oneDNN's blocked nChw16c: (N, C/16, H, W, 16), row-major.
  EXPECT_EQ(read("nChw16c", "[1, 2, 3, 3, 16]", "[288, 144, 48, 16, 1]").layout,
            "nChw16c");
  EXPECT_TESSEL_ERROR(read("nChw16c", "[1, 2, 3, 3, 8]", "[144, 72, 24, 8, 1]"),
                      "E3001", "block of 16");
  EXPECT_TESSEL_ERROR(read("nChw16c", "[2, 3, 3, 16]", "[144, 48, 16, 1]"),
                      "E3001", "rank 5");
  // The stride of an extent-1 axis moves nothing: still row-major.
  EXPECT_EQ(read("row-major", "[1, 3]", "[7, 1]").layout, "row-major");
  EXPECT_EQ(describe(zeros({3}).unsqueeze(0).expand({1, 3})).layout,
            "row-major");
  // Any strides are "strided"; a tag tessel does not know is refused.
  EXPECT_EQ(read("strided", "[2, 3]", "[1, 2]").layout, "strided");
  EXPECT_TESSEL_ERROR(read("row-major", "[2, 3]", "[1, 2]"), "E3001",
                      "shape.layout");
  EXPECT_TESSEL_ERROR(read("ZYX", "[2, 3]", "[3, 1]"), "E3001", "'ZYX'");
  // describe() writes the honest tag, and checks one it is given.
  const Tensor x = zeros({2, 3, 4, 5});
  EXPECT_EQ(describe(x).layout, "row-major");
  EXPECT_EQ(describe(x, "NCHW").layout, "NCHW");
  EXPECT_EQ(describe(x.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2}),
                     "NHWC")
                .layout,
            "NHWC");
  EXPECT_TESSEL_ERROR(describe(x.transpose(0, 1), "NCHW"), "E2102",
                      "[describe]", "NCHW");
}

TEST(Descriptor, SymbolicShapesBindWithTheirConstraints) {
  const TensorDescriptor d = descriptor_from_json(R"({
    "shape": {"dimensions": ["batch", "sequence_length", 768],
              "symbolic": true,
              "constraints": {"batch": {"min": 1, "max": 256},
                              "sequence_length": {"min": 1, "max": 2048,
                                                  "multiple_of": 8}}},
    "dtype": {"base_type": "BFLOAT16"}})");
  EXPECT_TRUE(d.symbolic());
  EXPECT_TESSEL_ERROR(d.shape(), "E2102", "batch");
  const TensorDescriptor b = d.bind({{"batch", 4}, {"sequence_length", 16}});
  EXPECT_EQ(b.shape(), (Shape{4, 16, 768}));
  EXPECT_EQ(b.total_bytes, 4 * 16 * 768 * 2);
  EXPECT_TESSEL_ERROR(d.bind({{"batch", 4}, {"sequence_length", 12}}), "E2102",
                      "multiple of 8");
  EXPECT_TESSEL_ERROR(d.bind({{"batch", 300}, {"sequence_length", 8}}), "E2102",
                      "maximum");
  EXPECT_TESSEL_ERROR(d.bind({{"batch", 1}}), "E2102", "sequence_length");
  // The constraints survive a round trip.
  const TensorDescriptor again = descriptor_from_json(to_json(d));
  EXPECT_EQ(again.constraints.at("sequence_length").multiple_of, 8);
}

TEST(Descriptor, PaddedTensorsExposeTheLogicalShape) {
  // Channels padded from 3 to 4: the logical view skips the padding.
  Tensor buffer = arange(0, 16, 1, DType::F32);
  const TensorDescriptor d = descriptor_from_json(R"({
    "shape": {"dimensions": [2, 2, 3]}, "physical_shape": [2, 2, 4],
    "padding": {"mode": "zero_fill"},
    "dtype": {"base_type": "FLOAT32"}})");
  EXPECT_EQ(d.strides, (std::vector<std::int64_t>{8, 4, 1}));
  EXPECT_EQ(d.total_bytes, 64);
  EXPECT_EQ(d.padding_mode, "zero_fill");
  const Tensor t = tensor_from_descriptor(d, buffer.storage());
  EXPECT_EQ(t.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(t.at<float>({1, 1, 2}), 14.0f);
  EXPECT_NE(to_json(d).find("physical_shape"), std::string::npos);
}

TEST(Descriptor, BigEndianDataIsSwapped) {
  const std::uint8_t be[] = {0x3f, 0x80, 0, 0, 0x40, 0, 0, 0};  // 1.0f, 2.0f
  Storage s = Storage::allocate(8);
  std::memcpy(s.data(), be, 8);
  const TensorDescriptor d = descriptor_from_json(
      R"({"shape": {"dimensions": [2]},
          "dtype": {"base_type": "FLOAT32", "byte_order": "big_endian"}})");
  const Tensor t = tensor_from_descriptor(d, s);
  EXPECT_EQ(t.at<float>({0}), 1.0f);
  EXPECT_EQ(t.at<float>({1}), 2.0f);
}

// memory.alignment is a promise: a buffer that breaks it is refused, and
// Tensor::aligned() gives one that keeps a consumer's stricter need.
TEST(Descriptor, AlignmentIsAPromiseAboutTheBuffer) {
  const Storage buffer = Storage::allocate(512, Device::cpu(), 256);
  TensorDescriptor d =
      describe(Tensor::contiguous_over(buffer, {16}, DType::F32));
  EXPECT_GE(d.alignment, 256);
  d.alignment = 256;
  d.total_bytes = 64;
  const TensorDescriptor back = descriptor_from_json(to_json(d));
  EXPECT_EQ(back.alignment, 256);
  EXPECT_NO_THROW(tensor_from_descriptor(back, buffer));
  // The same bytes seen 64 bytes further on are only 64-aligned.
  const Storage shifted =
      Storage::borrow(static_cast<std::byte*>(buffer.data()) + 64, 256,
                      Device::cpu(), [keep = buffer](void*) {});
  EXPECT_TESSEL_ERROR(tensor_from_descriptor(back, shifted), "E3001",
                      "memory.alignment", "256-byte");
  // A consumer that needs 256 bytes from a view one float into its buffer:
  // aligned() copies it into a buffer that starts 256-aligned, which the
  // descriptor then promises.
  const Tensor view = arange(0, 32, 1, DType::F32).slice(0, 1, 17);
  ASSERT_FALSE(view.is_aligned(256));
  const Tensor kept = view.aligned(256);
  const TensorDescriptor promised = describe(kept);
  EXPECT_GE(promised.alignment, 256);
  EXPECT_EQ(promised.offset_bytes, 0);
  EXPECT_TRUE(equal(tensor_from_descriptor(promised, kept.storage()), view));
}

// The standard's zero-copy sharing example (§2.6.1) beside a descriptor:
// kept and written back; a device-only mapping is not laid over host
// memory; malformed records are E3001.
TEST(Descriptor, ZeroCopyHandleAndMappingAreKept) {
  json j = json::parse(to_json(describe(zeros({4}, DType::F32))));
  j["buffer_handle"] = json::parse(
      R"({"type": "dma_buf_fd", "fd": 42, "size_bytes": 9633792,
          "permissions": "read_write"})");
  j["mapping"] = json::parse(
      R"({"device_address": "0x7f4a2000", "cpu_address": null,
          "access_mode": "device_only"})");
  const TensorDescriptor d = descriptor_from_json(j.dump());
  ASSERT_TRUE(d.buffer_handle && d.mapping);
  EXPECT_EQ(d.buffer_handle->type, "dma_buf_fd");
  EXPECT_EQ(d.buffer_handle->fd, 42);
  EXPECT_EQ(d.buffer_handle->size_bytes, 9633792);
  EXPECT_EQ(d.mapping->device_address, "0x7f4a2000");
  EXPECT_FALSE(d.mapping->cpu_address.has_value());
  const json back = json::parse(to_json(d));
  EXPECT_EQ(back["buffer_handle"], j["buffer_handle"]);
  EXPECT_EQ(back["mapping"], j["mapping"]);
  EXPECT_TESSEL_ERROR(tensor_from_descriptor(d, Storage::allocate(16)), "E2501",
                      "device_only");
  const auto refused = [&](const char* key, json value, const char* field) {
    json bad = j;
    bad[key] = std::move(value);
    EXPECT_TESSEL_ERROR(descriptor_from_json(bad.dump()), "E3001", field);
  };
  refused("buffer_handle", json::parse(R"({"fd": 3})"), "buffer_handle.type");
  refused("buffer_handle", json::parse(R"({"type": "memfd", "fd": -7})"),
          "buffer_handle.fd");
  refused("buffer_handle", json::parse(R"({"type": "memfd", "size_bytes": 8})"),
          "buffer_handle.size_bytes");  // less than total_bytes (16)
  refused("buffer_handle",
          json::parse(R"({"type": "memfd", "permissions": "all"})"),
          "buffer_handle.permissions");
  refused("mapping", json::parse(R"({"device_address": "7f4a"})"),
          "mapping.device_address");
  refused("mapping", json::parse(R"({"cpu_address": 12})"),
          "mapping.cpu_address");
}

TEST(Descriptor, TensorIdIsReadAndWritten) {
  const TensorDescriptor d = descriptor_from_json(
      R"({"tensor_id": "9b2f4c1e-0d3a-4e57-8a61-2f0c9d7b5e13",
          "shape": [2], "dtype": "FLOAT32"})");
  EXPECT_EQ(d.tensor_id, "9b2f4c1e-0d3a-4e57-8a61-2f0c9d7b5e13");
  EXPECT_EQ(descriptor_from_json(to_json(d)).tensor_id, d.tensor_id);
  // Absent: none, and none written.
  const TensorDescriptor plain =
      descriptor_from_json(R"({"shape": [2], "dtype": "FLOAT32"})");
  EXPECT_TRUE(plain.tensor_id.empty());
  EXPECT_EQ(to_json(plain).find("tensor_id"), std::string::npos);
  EXPECT_TESSEL_ERROR(
      descriptor_from_json(
          R"({"tensor_id": 7, "shape": [2], "dtype": "FLOAT32"})"),
      "E3001", "tensor_id");
}

TEST(Descriptor, NetworkOrderIsBigEndian) {
  // The format standard's "network_order" is big-endian: INT32 258 and -2,
  // INT16 1, each most significant byte first.
  const std::uint8_t net[] = {0, 0, 1, 2, 0xff, 0xff, 0xff, 0xfe};
  Storage s = Storage::allocate(8);
  std::memcpy(s.data(), net, 8);
  const TensorDescriptor d = descriptor_from_json(
      R"({"shape": {"dimensions": [2]},
          "dtype": {"base_type": "INT32", "byte_order": "network_order"}})");
  EXPECT_TRUE(d.big_endian);
  const Tensor t = tensor_from_descriptor(d, s);
  EXPECT_EQ(t.at<std::int32_t>({0}), 258);
  EXPECT_EQ(t.at<std::int32_t>({1}), -2);
  // Written back, the same order under the standard's other name.
  EXPECT_NE(to_json(d).find("\"big_endian\""), std::string::npos);
  Storage s16 = Storage::allocate(2);
  const std::uint8_t one[] = {0, 1};
  std::memcpy(s16.data(), one, 2);
  const Tensor h = tensor_from_descriptor(
      descriptor_from_json(
          R"({"shape": [1], "dtype": {"base_type": "INT16",
              "byte_order": "network_order"}})"),
      s16);
  EXPECT_EQ(h.at<std::int16_t>({0}), 1);
}

TEST(Descriptor, RefusesWhatItCannotHonour) {
  const auto refuse = [](const std::string& text, const char* field) {
    EXPECT_TESSEL_ERROR(descriptor_from_json(text), "E3001", field);
  };
  refuse(R"({"version": "WIA-AI-011-v2.0", "shape": [1], "dtype": "FLOAT32"})",
         "version");
  refuse(R"({"shape": [2, 2], "dtype": {"base_type": "FLOAT128"}})",
         "dtype.base_type");
  refuse(R"({"shape": [2], "dtype": {"base_type": "FLOAT32",
             "byte_order": "middle_endian"}})",
         "dtype.byte_order");
  refuse(R"({"shape": [2], "dtype": "FLOAT32", "memory": {"alignment": 48}})",
         "memory.alignment");
  refuse(R"({"shape": [2, 3], "dtype": "FLOAT32",
             "memory": {"strides": [3, 1], "total_bytes": 20}})",
         "memory.strides");
  refuse(R"({"shape": [2, 3], "dtype": "FLOAT32",
             "memory": {"strides": [1]}})",
         "memory.strides");
  refuse(R"({"shape": [2], "dtype": "FLOAT32", "memory": {"offset_bytes": 2}})",
         "memory.offset_bytes");
  refuse(R"({"shape": [-1], "dtype": "FLOAT32"})", "shape.dimensions");
  refuse(R"({"shape": [4294967296, 4294967296], "dtype": "FLOAT32"})",
         "shape.dimensions");
  refuse(R"({"shape": [2], "dtype": "FLOAT32", "memory": {"device": "tpu"}})",
         "memory.device");
  refuse(R"({"shape": [2, 2], "physical_shape": [2, 1], "dtype": "FLOAT32"})",
         "physical_shape");
  refuse("[1, 2]", "(document)");
  refuse("{", "(document)");
  // A buffer smaller than the descriptor says.
  const TensorDescriptor d =
      descriptor_from_json(R"({"shape": [4], "dtype": "FLOAT32"})");
  EXPECT_TESSEL_ERROR(tensor_from_descriptor(d, Storage::allocate(8)), "E3001",
                      "memory.total_bytes");
}

}  // namespace
}  // namespace tessel
