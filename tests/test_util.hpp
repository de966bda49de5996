// Assertions shared by the unit tests.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "tessel/core/dtype.hpp"
#include "tessel/core/error.hpp"
#include "tessel/core/tensor.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel::testing {

// Every dtype with per-element values (all but the block-quantised ones).
inline constexpr DType kElementDTypes[] = {
    DType::Bool, DType::U8,  DType::I8,  DType::I16,      DType::I32,
    DType::I64,  DType::U16, DType::U32, DType::U64,      DType::F16,
    DType::BF16, DType::F32, DType::F64, DType::F8E4M3FN, DType::F8E5M2,
    DType::I4,   DType::U4};

// Sylvester's n x n Hadamard matrix over sqrt(n), from the closed form
// H[i][j] = (-1)^popcount(i & j), in f64: the reference for
// hadamard_transform and for the KV cache's rotations.
inline Tensor sylvester_hadamard(std::int64_t n) {
  std::vector<double> h(static_cast<std::size_t>(n * n));
  const double s = 1.0 / std::sqrt(static_cast<double>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      const auto bits = std::popcount(static_cast<std::uint64_t>(i & j));
      h[static_cast<std::size_t>(i * n + j)] = bits % 2 ? -s : s;
    }
  }
  return from_vector<double>(h, {n, n});
}

// The elements of t in row-major order.
template <class T>
std::vector<T> values(const Tensor& t) {
  const Tensor c = t.contiguous();
  return std::vector<T>(c.const_data<T>(), c.const_data<T>() + c.numel());
}

// A tensor holding `bytes` as its storage (block-quantised bytes written
// by hand).
inline Tensor from_bytes(const std::vector<std::uint8_t>& bytes, Shape shape,
                         DType dtype) {
  Tensor t = empty(std::move(shape), dtype);
  std::memcpy(t.mutable_raw_data(), bytes.data(), bytes.size());
  return t;
}

// Every element of t (compared in f64) within `tol` of `want`, row-major.
inline void expect_near_all(const Tensor& t, const std::vector<double>& want,
                            double tol) {
  const auto got = values<double>(t.to(DType::F64));
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol) << i;
}

// Every element of t (compared in c128) with each part within `tol` of
// `want`'s, row-major. Real tensors compare as +0i.
inline void expect_near_complex(const Tensor& t,
                                const std::vector<std::complex<double>>& want,
                                double tol) {
  const auto got = values<std::complex<double>>(t.to(DType::C128));
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[i].real(), want[i].real(), tol) << i;
    EXPECT_NEAR(got[i].imag(), want[i].imag(), tol) << i;
  }
}

inline void check_error(const Error& e, const char* code,
                        std::initializer_list<std::string_view> parts) {
  EXPECT_STREQ(e.code(), code) << e.what();
  const std::string what = e.what();
  for (auto part : parts) {
    EXPECT_NE(what.find(part), std::string::npos)
        << "message \"" << what << "\" lacks \"" << part << "\"";
  }
}

}  // namespace tessel::testing

// Runs `statement` and expects a tessel::Error with `code` whose message
// contains every further argument.
#define EXPECT_TESSEL_ERROR(statement, code, ...)                 \
  do {                                                            \
    bool thrown_ = false;                                         \
    try {                                                         \
      statement;                                                  \
    } catch (const ::tessel::Error& e_) {                         \
      thrown_ = true;                                             \
      ::tessel::testing::check_error(e_, code, {__VA_ARGS__});    \
    }                                                             \
    EXPECT_TRUE(thrown_) << #statement " did not throw " << code; \
  } while (0)
