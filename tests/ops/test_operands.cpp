// The op layer's one operand check (src/ops/operands.hpp): mixed devices
// are E2501 naming the op and both devices in every multi-input op, and a
// device without kernels is E2501 naming the op, before any data is read.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

// A tensor whose storage claims to live on cuda:1 (borrowed host memory
// that no kernel may touch: the check refuses first).
Tensor elsewhere(Shape shape, DType dtype) {
  static std::vector<double> backing(1024, 0.0);
  const Storage s =
      Storage::borrow(backing.data(), 8 * 1024, Device::cuda(1), [](void*) {});
  Strides strides(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) {
    strides[d - 1] = strides[d] * shape[d];
  }
  return Tensor(s, std::move(shape), std::move(strides), 0, dtype);
}

struct Case {
  const char* op;
  std::function<void()> call;
};

// Every multi-input op with one operand made by `other` (another device)
// and the rest on the CPU.
void expect_mixed_devices_refused(
    const std::function<Tensor(Shape, DType)>& other, const char* name) {
  const Tensor m = zeros({4, 4}), v = zeros({4});
  const Tensor em = other({4, 4}, DType::F32), ev = other({4}, DType::F32);
  const Tensor idx = zeros({4, 4}, DType::I64);
  const Tensor q = zeros({1, 2, 3, 4}), eq = other({1, 2, 3, 4}, DType::F32);
  const Tensor img = zeros({1, 4, 4, 4}),
               eimg = other({1, 4, 4, 4}, DType::F32);
  const std::vector<Case> cases = {
      {"add", [&] { add(m, em); }},
      {"mul", [&] { mul(em, m); }},
      {"where",
       [&] {
         where(zeros({4, 4}, DType::Bool), m, em);
       }},
      {"fma", [&] { fma(m, m, em); }},
      {"matmul", [&] { matmul(m, em); }},
      {"dot", [&] { dot(v, ev); }},
      {"outer", [&] { outer(v, ev); }},
      {"linear", [&] { linear(m, em); }},
      {"einsum",
       [&] {
         einsum("ij,jk->ik", {m, em});
       }},
      {"concat",
       [&] {
         concat({m, em}, 0);
       }},
      {"stack",
       [&] {
         stack({m, em}, 0);
       }},
      {"gather_elements", [&] { gather_elements(em, idx, 0); }},
      {"scatter", [&] { scatter(m, 0, idx, em); }},
      {"masked_fill",
       [&] {
         masked_fill(m, other({4, 4}, DType::Bool), 1);
       }},
      {"embedding", [&] { embedding(em, zeros({2}, DType::I64)); }},
      {"embedding_backward",
       [&] { embedding_backward(em, zeros({4}, DType::I64), 4); }},
      {"scaled_dot_product_attention",
       [&] { scaled_dot_product_attention(q, eq, q); }},
      {"scaled_dot_product_attention_backward",
       [&] { scaled_dot_product_attention_backward(q, q, q, q, eq); }},
      {"conv2d", [&] { conv2d(img, eimg); }},
      {"conv2d bias",
       [&] {
         conv2d(img, zeros({2, 4, 3, 3}), other({2}, DType::F32));
       }},
      {"gather", [&] { gather(m, other({2}, DType::I64), 0); }},
      {"gather_nd",
       [&] {
         gather_nd(m, other({2, 1}, DType::I64));
       }},
      {"layer_norm", [&] { layer_norm(m, ev); }},
      {"adam_update_", [&] { adam_update_(m, m, em, m, {}); }},
      {"layer_norm_backward",
       [&] { layer_norm_backward(em, m, layer_norm_with_stats(m)); }},
      {"rms_norm_backward",
       [&] { rms_norm_backward(m, m, rms_norm_with_stats(m), ev); }},
      {"rope",
       [&] {
         rope_with_tables(q, other({3, 2}, DType::F32), zeros({3, 2}));
       }},
      {"copy_", [&] { Tensor(m).copy_(em); }},
      {"take_along_axis",
       [&] {
         take_along_axis(m, other({4, 4}, DType::I64), 0);
       }},
      {"scatter_add", [&] { scatter_add(em, 0, idx, m); }},
      {"clip", [&] { clip(m, m, em); }},
      {"batch_norm", [&] { batch_norm(img, ev, v); }},
      {"make_complex", [&] { make_complex(m, em); }},
      {"solve", [&] { linalg::solve(m, em); }},
      {"searchsorted", [&] { searchsorted(v, ev); }},
      {"repeat", [&] { repeat(v, other({4}, DType::I64), 0); }},
      {"conv_transpose2d",
       [&] {
         conv_transpose2d(img, other({4, 2, 3, 3}, DType::F32));
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    EXPECT_TESSEL_ERROR(c.call(), "E2501", "cpu", name);
  }
}

TEST(Operands, MixedDevicesAreE2501InEveryMultiInputOp) {
  expect_mixed_devices_refused(elsewhere, "cuda:1");
}

// The meta backend is real: a CPU tensor never meets a meta one silently.
TEST(Operands, MixedCpuAndMetaAreE2501InEveryMultiInputOp) {
  expect_mixed_devices_refused(
      [](Shape shape, DType dtype) {
        return empty(std::move(shape), dtype, Device::meta());
      },
      "meta");
}

TEST(Operands, NoKernelsOnTheDeviceIsE2501NamingTheOp) {
  const Tensor t = elsewhere({4}, DType::F32);
  EXPECT_TESSEL_ERROR(exp(t), "E2501", "[exp]", "cuda:1");
  EXPECT_TESSEL_ERROR(sum(t), "E2501", "[sum]", "cuda:1");
  EXPECT_TESSEL_ERROR(add(t, t), "E2501", "[add]", "cuda:1");
  EXPECT_TESSEL_ERROR(t.clone(), "E2501", "[clone]", "cuda:1");
  EXPECT_TESSEL_ERROR(softmax(t, 0), "E2501", "cuda:1");
}

TEST(Operands, UndefinedOperandsAreE2102) {
  EXPECT_TESSEL_ERROR(add(Tensor(), zeros({2})), "E2102", "[add]", "undefined");
  EXPECT_TESSEL_ERROR(matmul(zeros({2, 2}), Tensor()), "E2102", "[matmul]",
                      "undefined");
  EXPECT_TESSEL_ERROR(embedding(Tensor(), zeros({2}, DType::I64)), "E2102",
                      "weight is undefined");
}

}  // namespace
}  // namespace tessel
