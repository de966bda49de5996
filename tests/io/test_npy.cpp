#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

// A .npy v1.0 file with the given header dict and data bytes.
std::vector<std::uint8_t> npy(const std::string& dict,
                              const std::vector<std::uint8_t>& data) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64 != 0) header.push_back(' ');
  header.push_back('\n');
  std::string file = "\x93NUMPY";
  file += '\x01';
  file += '\x00';
  file += static_cast<char>(header.size() & 0xff);
  file += static_cast<char>(header.size() >> 8);
  file += header;
  file.append(data.begin(), data.end());
  return {file.begin(), file.end()};
}

std::vector<std::uint8_t> bytes_of(const std::vector<float>& v) {
  std::vector<std::uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

TEST(Npy, ParsesTheHeaderAndData) {
  const auto file =
      npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
          bytes_of({0, 1, 2, 3, 4, 5}));
  const Tensor t = parse_npy(file);
  EXPECT_EQ(t.dtype(), DType::F32);
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.at<float>({1, 2}), 5.0f);
  // Keys in any order, double quotes, a 1-tuple, a scalar.
  EXPECT_EQ(
      parse_npy(
          npy("{\"shape\": (3,), \"fortran_order\": False, \"descr\": \"|u1\"}",
              {7, 8, 9}))
          .at<std::uint8_t>({2}),
      9);
  EXPECT_EQ(
      parse_npy(npy("{'descr': '<f4', 'fortran_order': False, 'shape': ()}",
                    bytes_of({2.5f})))
          .rank(),
      0);
}

TEST(Npy, FortranOrderIsATransposedViewAndBigEndianIsSwapped) {
  // Fortran order: the bytes 0..5 are the (2, 3) matrix by columns.
  const Tensor f =
      parse_npy(npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3)}",
                    bytes_of({0, 1, 2, 3, 4, 5})));
  EXPECT_EQ(f.shape(), (Shape{2, 3}));
  EXPECT_EQ(f.at<float>({1, 0}), 1.0f);
  EXPECT_EQ(f.at<float>({0, 1}), 2.0f);
  // A transposed view of the stored bytes, not a copy.
  EXPECT_FALSE(f.is_contiguous());
  EXPECT_EQ(f.strides(), (Strides{1, 2}));
  // Big-endian i16 0x0102 = 258.
  const Tensor b = parse_npy(npy(
      "{'descr': '>i2', 'fortran_order': False, 'shape': (1,)}", {0x01, 0x02}));
  EXPECT_EQ(b.at<std::int16_t>({0}), 258);
}

TEST(Npy, RoundTripsThroughAFile) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("tessel_npy_" + std::to_string(::getpid()) + ".npy");
  const Tensor t = arange(24, DType::I16).reshape({2, 3, 4}).transpose(0, 2);
  save_npy(path, t);
  const Tensor back = load_npy(path);
  EXPECT_EQ(back.shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(back.dtype(), DType::I16);
  EXPECT_EQ(back.at<std::int16_t>({3, 1, 1}), t.at<std::int16_t>({3, 1, 1}));
  // Loading maps the file: the data is not copied.
  EXPECT_EQ(back.storage().origin(), StorageOrigin::MappedFile);
  save_npy(path, full({}, true));
  EXPECT_TRUE(load_npy(path).item<bool>());
  std::filesystem::remove(path);
  EXPECT_TESSEL_ERROR(save_npy(path, ones({2}, DType::BF16)), "E2201",
                      "[save_npy]", "bf16");
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(Npy, MalformedFilesAreE3001WithAnOffset) {
  EXPECT_TESSEL_ERROR(parse_npy(std::vector<std::uint8_t>{1, 2, 3}), "E3001",
                      "magic", "byte 0");
  auto good = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
                  bytes_of({1, 2}));
  auto short_data = good;
  short_data.pop_back();
  EXPECT_TESSEL_ERROR(parse_npy(short_data), "E3001", "needs 8 data bytes",
                      "has 7");
  auto long_header = good;
  long_header[8] = 0xff;
  long_header[9] = 0xff;
  EXPECT_TESSEL_ERROR(parse_npy(long_header), "E3001", "past the end");
  EXPECT_TESSEL_ERROR(
      parse_npy(npy("{'descr': '<c32', 'fortran_order': False, 'shape': (1,)}",
                    std::vector<std::uint8_t>(32))),
      "E3001", "'<c32'");  // complex256: NumPy's long double pair
  EXPECT_TESSEL_ERROR(
      parse_npy(npy("{'descr': '<f4', 'shape': (1,)}", bytes_of({1}))), "E3001",
      "needs");
  EXPECT_TESSEL_ERROR(
      parse_npy(
          npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", {})),
      "E3001", "non-negative");
  EXPECT_TESSEL_ERROR(parse_npy(npy("{'descr': '<f4', 'fortran_order': False, "
                                    "'shape': (99999999999, 99999999999)}",
                                    {})),
                      "E3001", "too large");
  EXPECT_TESSEL_ERROR(load_npy("/nonexistent/x.npy"), "E3002", "cannot open");
}

}  // namespace
}  // namespace tessel
