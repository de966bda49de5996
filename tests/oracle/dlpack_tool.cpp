// The oracle helper for test_torch_dlpack.py: a shared library loaded with
// ctypes, so that PyTorch and tessel exchange DLManagedTensor pointers in
// one process (wrapped in "dltensor" capsules on the Python side).
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "tessel/io/dlpack.hpp"
#include "tessel/tessel.hpp"

extern "C" {
// Exports a new tessel tensor: kind 0 is arange(12) as [3, 4]; kind 1 is
// arange(24).reshape(2, 3, 4).permute(2, 0, 1)[1:4:2] (strided, offset).
// Returns NULL on error (see tessel_last_error).
DLManagedTensor* tessel_export(const char* dtype, int kind);
// Element `i` (row-major) of the last exported tensor, read by tessel.
double tessel_exported_value(std::int64_t i);
void tessel_forget_exported();
// Imports (taking ownership of) `managed`; returns 0 or -1 on error.
int tessel_import(DLManagedTensor* managed);
int tessel_imported_ndim();
const char* tessel_imported_dtype();
void tessel_imported_layout(std::int64_t* shape, std::int64_t* strides);
// Row-major values as f64 into `out` (numel entries).
std::int64_t tessel_imported_values(double* out, std::int64_t capacity);
// Writes `value` into every element through tessel.
int tessel_imported_fill(double value);
void tessel_release_imported();
const char* tessel_last_error();
}

namespace {

tessel::Tensor g_exported;
tessel::Tensor g_imported;
std::string g_error;
std::string g_dtype;

tessel::Tensor sample(tessel::DType dtype, int kind) {
  using tessel::arange;
  if (kind == 0)
    return arange(12, tessel::DType::I64).reshape({3, 4}).to(dtype);
  return arange(24, tessel::DType::I64)
      .reshape({2, 3, 4})
      .to(dtype)
      .permute({2, 0, 1})
      .slice(0, 1, 4, 2);
}

}  // namespace

DLManagedTensor* tessel_export(const char* dtype, int kind) {
  try {
    g_exported = sample(tessel::parse_dtype(dtype), kind);
    return tessel::to_dlpack(g_exported);
  } catch (const std::exception& e) {
    g_error = e.what();
    return nullptr;
  }
}

double tessel_exported_value(std::int64_t i) {
  const tessel::Tensor flat = g_exported.contiguous().reshape({-1});
  return flat.get({i}).to<double>();
}

void tessel_forget_exported() { g_exported = tessel::Tensor(); }

int tessel_import(DLManagedTensor* managed) {
  try {
    g_imported = tessel::from_dlpack(managed);
    g_dtype = std::string(tessel::dtype_name(g_imported.dtype()));
    return 0;
  } catch (const std::exception& e) {
    g_error = e.what();
    return -1;
  }
}

int tessel_imported_ndim() { return static_cast<int>(g_imported.rank()); }
const char* tessel_imported_dtype() { return g_dtype.c_str(); }

void tessel_imported_layout(std::int64_t* shape, std::int64_t* strides) {
  for (std::int64_t i = 0; i < g_imported.rank(); ++i) {
    shape[i] = g_imported.size(i);
    strides[i] = g_imported.stride(i);
  }
}

std::int64_t tessel_imported_values(double* out, std::int64_t capacity) {
  const tessel::Tensor c = g_imported.to(tessel::DType::F64).contiguous();
  if (c.numel() > capacity) return -1;
  std::memcpy(out, c.const_data<double>(),
              static_cast<std::size_t>(c.numel()) * sizeof(double));
  return c.numel();
}

int tessel_imported_fill(double value) {
  try {
    g_imported.fill_(value);
    return 0;
  } catch (const std::exception& e) {
    g_error = e.what();
    return -1;
  }
}

void tessel_release_imported() { g_imported = tessel::Tensor(); }
const char* tessel_last_error() { return g_error.c_str(); }
