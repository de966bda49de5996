#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "tessel/io/dlpack.hpp"
#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

using testing::values;

// Every tessel dtype that has a DLPack type code.
constexpr DType kDLPackDTypes[] = {
    DType::Bool, DType::U8,  DType::I8,  DType::I16,      DType::I32,
    DType::I64,  DType::U16, DType::U32, DType::U64,      DType::F16,
    DType::BF16, DType::F32, DType::F64, DType::F8E4M3FN, DType::F8E5M2};

// A hand-made producer: 12 floats, shape/strides of our choice, and a
// deleter that counts its calls.
struct Producer {
  std::vector<float> data = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  std::vector<std::int64_t> shape = {3, 4};
  std::vector<std::int64_t> strides = {4, 1};
  int deleted = 0;
  DLManagedTensor legacy{};
  dlpack::DLManagedTensorVersioned versioned{};

  Producer() {
    legacy.dl_tensor = tensor();
    legacy.manager_ctx = this;
    legacy.deleter = [](DLManagedTensor* self) {
      ++static_cast<Producer*>(self->manager_ctx)->deleted;
    };
    versioned.version = {1, 0};
    versioned.dl_tensor = tensor();
    versioned.manager_ctx = this;
    versioned.deleter = [](dlpack::DLManagedTensorVersioned* self) {
      ++static_cast<Producer*>(self->manager_ctx)->deleted;
    };
  }
  DLTensor tensor() {
    DLTensor t{};
    t.data = data.data();
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int>(shape.size());
    t.dtype = {kDLFloat, 32, 1};
    t.shape = shape.data();
    t.strides = strides.data();
    return t;
  }
};

std::vector<double> as_f64(const Tensor& t) {
  return values<double>(t.to(DType::F64));
}

// 0..11 as a [3, 4] tensor of `dtype` (bool: false, then true).
Tensor sample(DType dtype) {
  return arange(12, DType::I64).reshape({3, 4}).to(dtype);
}

TEST(DLPack, ExportDescribesAStridedViewWithoutCopying) {
  const Tensor base = arange(24, DType::F32).reshape({2, 3, 4});
  const Tensor view = base.permute({2, 0, 1}).slice(0, 1, 4, 2);  // [2,2,3]
  DLManagedTensor* m = to_dlpack(view);
  const DLTensor& dl = m->dl_tensor;
  EXPECT_EQ(dl.ndim, 3);
  EXPECT_EQ(std::vector<std::int64_t>(dl.shape, dl.shape + 3),
            (std::vector<std::int64_t>{2, 2, 3}));
  EXPECT_EQ(std::vector<std::int64_t>(dl.strides, dl.strides + 3),
            (std::vector<std::int64_t>{2, 12, 4}));
  // The first element itself: byte_offset stays 0 (PyTorch ignores it).
  EXPECT_EQ(dl.data, view.raw_data());
  EXPECT_EQ(dl.data, static_cast<const float*>(base.raw_data()) + 1);
  EXPECT_EQ(dl.byte_offset, 0u);
  EXPECT_EQ(dl.dtype.code, kDLFloat);
  EXPECT_EQ(dl.dtype.bits, 32);
  EXPECT_EQ(dl.dtype.lanes, 1);
  EXPECT_EQ(dl.device.device_type, kDLCPU);
  m->deleter(m);
}

TEST(DLPack, ExportKeepsTheStorageAliveUntilTheDeleter) {
  Storage storage;
  DLManagedTensor* m = nullptr;
  {
    const Tensor t = arange(6, DType::I32);
    storage = t.storage();
    m = to_dlpack(t);
  }  // the tessel tensor is gone; the manager still holds the storage
  EXPECT_EQ(storage.use_count(), 2);
  EXPECT_EQ(static_cast<const std::int32_t*>(m->dl_tensor.data)[5], 5);
  m->deleter(m);
  EXPECT_EQ(storage.use_count(), 1);
}

TEST(DLPack, RoundTripsEveryDTypeBothStructs) {
  for (const DType dtype : kDLPackDTypes) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    const Tensor t = sample(dtype);
    const auto want = as_f64(t);
    const Tensor a = from_dlpack(to_dlpack(t));
    EXPECT_EQ(a.dtype(), dtype);
    EXPECT_EQ(a.shape(), t.shape());
    EXPECT_EQ(a.raw_data(), t.raw_data());  // zero copy
    EXPECT_EQ(a.storage().origin(), StorageOrigin::Borrowed);
    EXPECT_EQ(as_f64(a), want);
    const Tensor b = from_dlpack(to_dlpack_versioned(t));
    EXPECT_EQ(b.dtype(), dtype);
    EXPECT_EQ(b.raw_data(), t.raw_data());
    EXPECT_TRUE(b.storage().writable());
    EXPECT_EQ(as_f64(b), want);
  }
}

TEST(DLPack, ExportsTheTypeCodesOfFormats6) {
  struct Want {
    DType dtype;
    std::uint8_t code, bits;
  };
  const Want wants[] = {{DType::Bool, 6, 8},      {DType::U16, 1, 16},
                        {DType::I64, 0, 64},      {DType::F16, 2, 16},
                        {DType::BF16, 4, 16},     {DType::F64, 2, 64},
                        {DType::F8E4M3FN, 10, 8}, {DType::F8E5M2, 12, 8}};
  for (const Want& w : wants) {
    DLManagedTensor* m = to_dlpack(zeros({2}, w.dtype));
    EXPECT_EQ(m->dl_tensor.dtype.code, w.code) << dtype_name(w.dtype);
    EXPECT_EQ(m->dl_tensor.dtype.bits, w.bits) << dtype_name(w.dtype);
    m->deleter(m);
  }
}

TEST(DLPack, RoundTripsATransposedSlicedViewSharingMemory) {
  Tensor base = arange(24, DType::I16).reshape({2, 3, 4});
  const Tensor view = base.permute({2, 0, 1}).slice(0, 1, 4, 2);
  Tensor back = from_dlpack(to_dlpack_versioned(view));
  EXPECT_EQ(back.shape(), view.shape());
  EXPECT_EQ(back.strides(), view.strides());
  EXPECT_EQ(as_f64(back), as_f64(view));
  back.set({1, 1, 2}, 99);  // element base[1, 2, 3]
  EXPECT_EQ(base.get({1, 2, 3}).to<int>(), 99);
}

TEST(DLPack, DeleterRunsOnceAfterTheLastTesselTensor) {
  Producer p;
  Tensor t = from_dlpack(&p.legacy);
  Tensor view = t.transpose(0, 1);
  Tensor copy = t;
  EXPECT_EQ(view.get({3, 2}).to<float>(), 11.0f);
  t = Tensor();
  copy = Tensor();
  EXPECT_EQ(p.deleted, 0);  // the view still uses the memory
  view = Tensor();
  EXPECT_EQ(p.deleted, 1);
}

TEST(DLPack, ImportHonoursByteOffsetAndStrides) {
  Producer p;
  p.shape = {2, 2};
  p.strides = {1, 4};  // column-major-ish over the 12 floats
  p.legacy.dl_tensor = p.tensor();
  p.legacy.dl_tensor.byte_offset = 5 * sizeof(float);
  const Tensor t = from_dlpack(&p.legacy);
  EXPECT_EQ(as_f64(t), (std::vector<double>{5, 9, 6, 10}));
}

TEST(DLPack, NullStridesMeanCompactRowMajor) {
  Producer p;
  p.shape = {2, 3};
  p.legacy.dl_tensor = p.tensor();
  p.legacy.dl_tensor.strides = nullptr;
  p.legacy.dl_tensor.byte_offset = sizeof(float);
  const Tensor t = from_dlpack(&p.legacy);
  EXPECT_EQ(t.strides(), (Strides{3, 1}));
  EXPECT_EQ(as_f64(t), (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST(DLPack, ScalarsAndEmptyTensorsRoundTrip) {
  const Tensor s = full({}, 2.5, DType::F32);
  const Tensor a = from_dlpack(to_dlpack(s));
  EXPECT_EQ(a.rank(), 0);
  EXPECT_EQ(a.item<float>(), 2.5f);
  const Tensor e = from_dlpack(to_dlpack(zeros({0, 3}, DType::I8)));
  EXPECT_EQ(e.shape(), (Shape{0, 3}));
  Producer p;  // NULL data is fine when there is nothing to address
  p.shape = {0};
  p.strides = {1};
  p.legacy.dl_tensor = p.tensor();
  p.legacy.dl_tensor.data = nullptr;
  EXPECT_EQ(from_dlpack(&p.legacy).numel(), 0);
}

TEST(DLPack, ReadOnlyFlagOnExport) {
  std::vector<float> buffer = {1, 2, 3};
  const Tensor ro(
      Storage::borrow(buffer.data(), 12, Device::cpu(), {}, /*writable=*/false),
      {3}, {}, 0, DType::F32);
  auto* v = to_dlpack_versioned(ro);
  EXPECT_EQ(v->version.major, 1u);
  EXPECT_EQ(v->flags & dlpack::kFlagReadOnly, dlpack::kFlagReadOnly);
  EXPECT_EQ(v->flags & dlpack::kFlagIsCopied, 0u);
  // ... and the flag survives the way back.
  Tensor back = from_dlpack(v);
  EXPECT_FALSE(back.storage().writable());
  EXPECT_TESSEL_ERROR(back.data<float>(), "E3002", "read-only");
  // The legacy struct cannot carry the flag: refused, not silently writable.
  EXPECT_TESSEL_ERROR(to_dlpack(ro), "E3002", "to_dlpack_versioned");
  auto* w = to_dlpack_versioned(arange(3, DType::F32));
  EXPECT_EQ(w->flags, 0u);
  w->deleter(w);
}

TEST(DLPack, ReadOnlyFlagOnImport) {
  Producer p;
  p.versioned.flags = dlpack::kFlagReadOnly;
  const Tensor ro = from_dlpack(&p.versioned);
  EXPECT_FALSE(ro.storage().writable());
  Producer q;
  Tensor rw = from_dlpack(&q.versioned);
  EXPECT_TRUE(rw.storage().writable());
  rw.data<float>()[0] = 42;
  EXPECT_EQ(q.data[0], 42.0f);
}

TEST(DLPack, PinnedHostMemoryImportsAsCpu) {
  Producer p;
  p.legacy.dl_tensor.device = {kDLCUDAHost, 0};
  EXPECT_TRUE(from_dlpack(&p.legacy).device().is_cpu());
}

// Expects from_dlpack(&p.legacy) to refuse with `code` after calling the
// deleter exactly once.
void expect_refused(Producer& p, const char* code, const char* part) {
  EXPECT_TESSEL_ERROR(from_dlpack(&p.legacy), code, part);
  EXPECT_EQ(p.deleted, 1);
}

TEST(DLPack, RefusesWhatItCannotRepresentOrTrust) {
  struct Case {
    const char* what;
    void (*spoil)(DLTensor&);
    const char* code;
    const char* part;
  };
  const Case cases[] = {
      {"lanes", [](DLTensor& t) { t.dtype.lanes = 4; }, "E3001", "lanes"},
      {"complex of 32 bits",
       [](DLTensor& t) {
         t.dtype = {kDLComplex, 32, 1};
       },
       "E3001", "complex"},
      {"unknown code", [](DLTensor& t) { t.dtype.code = 99; }, "E3001",
       "unknown"},
      {"sub-byte int",
       [](DLTensor& t) {
         t.dtype = {kDLInt, 4, 1};
       },
       "E3001", "width"},
      {"fp8 e4m3fnuz",
       [](DLTensor& t) {
         t.dtype = {11, 8, 1};
       },
       "E3001", "code 11"},
      {"opaque",
       [](DLTensor& t) {
         t.dtype = {kDLOpaqueHandle, 64, 1};
       },
       "E3001", "unsupported"},
      {"float8 as kDLFloat",
       [](DLTensor& t) {
         t.dtype = {kDLFloat, 8, 1};
       },
       "E3001", "width"},
      {"negative ndim", [](DLTensor& t) { t.ndim = -1; }, "E3001", "ndim"},
      {"huge ndim", [](DLTensor& t) { t.ndim = 1000; }, "E3001", "ndim"},
      {"null shape", [](DLTensor& t) { t.shape = nullptr; }, "E3001", "NULL"},
      {"negative extent", [](DLTensor& t) { t.shape[1] = -4; }, "E3001",
       "negative extent"},
      {"negative stride", [](DLTensor& t) { t.strides[0] = -4; }, "E3001",
       "negative stride"},
      {"overflowing extent",
       [](DLTensor& t) {
         t.shape[0] = std::int64_t{1} << 40;
         t.shape[1] = std::int64_t{1} << 40;
       },
       "E3001", "overflows"},
      {"overflowing stride",
       [](DLTensor& t) { t.strides[0] = std::numeric_limits<int64_t>::max(); },
       "E3001", "overflows"},
      {"overflowing byte_offset",
       [](DLTensor& t) {
         t.byte_offset = std::numeric_limits<std::uint64_t>::max() - 8;
       },
       "E3001", "byte_offset"},
      {"null data", [](DLTensor& t) { t.data = nullptr; }, "E3001", "NULL"},
      {"OpenCL device",
       [](DLTensor& t) {
         t.device = {kDLOpenCL, 0};
       },
       "E2501", "device type 4"},
      {"ROCm device",
       [](DLTensor& t) {
         t.device = {kDLROCM, 0};
       },
       "E2501", "device type 10"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Producer p;
    c.spoil(p.legacy.dl_tensor);
    expect_refused(p, c.code, c.part);
  }
}

TEST(DLPack, RefusesCudaMemoryWithoutAUsableDevice) {
  if (device_available(Device::cuda(0))) GTEST_SKIP() << "CUDA is usable";
  Producer p;
  p.legacy.dl_tensor.device = {kDLCUDA, 0};
  expect_refused(p, "E2501", "cuda");
}

TEST(DLPack, MajorVersionMismatchOnlyCallsTheDeleter) {
  Producer p;
  p.versioned.version = {2, 0};
  // Garbage past the deleter must not be read (its layout may differ).
  p.versioned.flags = ~std::uint64_t{0};
  p.versioned.dl_tensor.ndim = -7;
  EXPECT_TESSEL_ERROR(from_dlpack(&p.versioned), "E3001", "version 2.0");
  EXPECT_EQ(p.deleted, 1);
}

TEST(DLPack, RefusesNullManagersAndUnexportableDTypes) {
  EXPECT_TESSEL_ERROR(from_dlpack(static_cast<DLManagedTensor*>(nullptr)),
                      "E3001", "null");
  EXPECT_TESSEL_ERROR(
      from_dlpack(static_cast<dlpack::DLManagedTensorVersioned*>(nullptr)),
      "E3001", "null");
  EXPECT_TESSEL_ERROR(to_dlpack(empty({32}, DType::Q4_0)), "E2201", "q4_0");
  EXPECT_TESSEL_ERROR(to_dlpack_versioned(empty({4}, DType::I4)), "E2201",
                      "i4");
  EXPECT_TESSEL_ERROR(to_dlpack(Tensor()), "E2102", "undefined");
}

}  // namespace
}  // namespace tessel
