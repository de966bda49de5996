// The meta device (Note [meta backend]): every op runs on tensors without
// data and gives the shapes, dtypes and strides the CPU gives, without
// allocating; values it would need to read are refused with E2501.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

// Makes an operand on the device under test. CPU operands hold valid
// values for every op below (zeros are valid indices, small positive
// floats valid everywhere).
using Make = std::function<Tensor(Shape, DType)>;

Tensor on_cpu(Shape shape, DType dtype) {
  if (is_floating_point(dtype)) {
    return add(rand(std::move(shape), DType::F32), 0.5).to(dtype);
  }
  return zeros(std::move(shape), dtype);
}

Tensor on_meta(Shape shape, DType dtype) {
  return empty(std::move(shape), dtype, Device::meta());
}

struct MetaCase {
  std::string op;
  std::function<std::vector<Tensor>(const Make&)> run;
};

void expect_same_layout(const std::vector<Tensor>& cpu,
                        const std::vector<Tensor>& meta) {
  ASSERT_EQ(cpu.size(), meta.size());
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i));
    ASSERT_TRUE(meta[i].defined());
    EXPECT_EQ(meta[i].device(), Device::meta());
    EXPECT_EQ(meta[i].shape(), cpu[i].shape());
    EXPECT_EQ(meta[i].dtype(), cpu[i].dtype());
    EXPECT_EQ(meta[i].strides(), cpu[i].strides());
    // Nothing was allocated: meta storage records a size and holds no
    // memory.
    EXPECT_EQ(meta[i].storage().data(), nullptr);
  }
}

void run_cases(const std::vector<MetaCase>& cases) {
  for (const MetaCase& c : cases) {
    SCOPED_TRACE(c.op);
    const std::vector<Tensor> cpu = c.run(on_cpu);
    std::vector<Tensor> meta;
    try {
      meta = c.run(on_meta);
    } catch (const Error& e) {
      ADD_FAILURE() << "on meta: " << e.what();
      continue;
    }
    expect_same_layout(cpu, meta);
  }
}

DType input_dtype(const OpInfo& info) {
  return info.inputs == InputKind::Integral || info.inputs == InputKind::Integer
             ? DType::I32
             : DType::F32;
}

TEST(Meta, EveryUnaryOpOfTheTable) {
  std::vector<MetaCase> cases;
  for (int i = 0; i < kUnaryOpCount; ++i) {
    const auto op = static_cast<UnaryOp>(i);
    cases.push_back({op_info(op).name, [op](const Make& make) {
                       const DType t = input_dtype(op_info(op));
                       const Tensor x = make({3, 1, 5}, t);
                       // A strided narrow-float operand too, where the op takes
                       // floats.
                       const Tensor y = t == DType::F32 ? x.to(DType::BF16) : x;
                       return std::vector<Tensor>{
                           unary(op, x, default_params(op)),
                           unary(op, y.transpose(0, 2), default_params(op))};
                     }});
  }
  run_cases(cases);
}

TEST(Meta, EveryBinaryOpOfTheTable) {
  std::vector<MetaCase> cases;
  for (int i = 0; i < kBinaryOpCount; ++i) {
    const auto op = static_cast<BinaryOp>(i);
    cases.push_back({op_info(op).name, [op](const Make& make) {
                       const DType t = input_dtype(op_info(op));
                       return std::vector<Tensor>{
                           binary(op, make({3, 1, 5}, t), make({4, 1}, t))};
                     }});
  }
  run_cases(cases);
}

TEST(Meta, EveryOtherOp) {
  using V = std::vector<Tensor>;
  const std::vector<MetaCase> cases = {
      // ---- element-wise with scalars, ternary, casts ----
      {"add scalar",
       [](const Make& m) {
         return V{add(m({2, 3}, DType::F32), 2.0)};
       }},
      {"where",
       [](const Make& m) {
         return V{where(m({2, 3}, DType::Bool), m({2, 3}, DType::F32),
                        m({3}, DType::F16))};
       }},
      {"where scalar",
       [](const Make& m) {
         return V{where(m({2, 3}, DType::Bool), 1.0, 2.0)};
       }},
      {"fft",
       [](const Make& m) {
         const Tensor x = m({3, 8}, DType::F32);
         const std::int64_t s[] = {4, 6};
         return V{fft::fft(x), fft::rfft(x, 6), fft::irfft(fft::rfft(x)),
                  fft::fftn(x, s), fft::rfft(m({3, 7}, DType::F64))};
       }},
      {"complex",
       [](const Make& m) {
         const Tensor z = m({2, 3}, DType::C64);
         return V{mul(z, z),   abs(z),
                  sum(z, {1}), matmul(z, m({3, 2}, DType::C64)),
                  real(z),     view_as_real(z),
                  conj(z)};
       }},
      {"fma",
       [](const Make& m) {
         return V{fma(m({2, 3}, DType::F32), m({3}, DType::F32),
                      m({2, 1}, DType::F32))};
       }},
      {"clip",
       [](const Make& m) {
         return V{clip(m({2, 3}, DType::F32), m({3}, DType::F32),
                       m({3}, DType::F32))};
       }},
      {"to bf16 / i4 / clone / contiguous",
       [](const Make& m) {
         const Tensor x = m({4, 6}, DType::F32);
         return V{x.to(DType::BF16), x.to(DType::I4), x.clone(),
                  x.transpose(0, 1).contiguous()};
       }},
      {"views",
       [](const Make& m) {
         const Tensor x = m({2, 3, 4}, DType::F32);
         return V{x.reshape({6, 4}),   x.permute({2, 0, 1}),
                  x.slice(2, 1, 4, 2), x.unsqueeze(1).expand({2, 5, 3, 4}),
                  x.select(1, 2),      x.flatten()};
       }},
      {"copy_ / fill_",
       [](const Make& m) {
         Tensor x = m({2, 3}, DType::F32);
         x.copy_(m({3}, DType::I32));
         Tensor y = m({2, 3}, DType::I4);
         y.fill_(3);
         // The optimiser step in place: fused (contiguous f32) and op by op.
         const Tensor p = m({2, 3}, DType::F32), s1 = m({2, 3}, DType::F32),
                      s2 = m({2, 3}, DType::F32);
         adam_update_(p, m({2, 3}, DType::F32), s1, s2, {});
         const Tensor q = m({3, 2}, DType::F64).transpose(0, 1);
         adam_update_(q, m({2, 3}, DType::F32), m({2, 3}, DType::F64),
                      m({2, 3}, DType::F64),
                      {.options = {}, .decoupled = true});
         return V{x, y, p, s1, s2, q};
       }},
      // ---- reductions ----
      {"reductions",
       [](const Make& m) {
         const Tensor x = m({3, 4, 5}, DType::F32);
         return V{sum(x),
                  sum(x, {1}, true),
                  mean(x, {0, 2}),
                  max(x, {-1}),
                  prod(m({3, 4}, DType::I32), {0}),
                  min(x, {0}, true),
                  all(m({3, 4}, DType::Bool)),
                  sum_squares(x, {1}),
                  any(m({3, 4}, DType::Bool), {1}),
                  var(x, {1}),
                  std(x, {1}),
                  norm(x, 2.0, {2}),
                  logsumexp(x, {0}),
                  argmax(x, 1),
                  argmin(x),
                  cumsum(x, 1),
                  cumprod(m({3, 4}, DType::I32), 0),
                  softmax(x, 1),
                  log_softmax(x),
                  hardmax(x, 0)};
       }},
      {"empty reduction",
       [](const Make& m) {
         return V{sum(m({0, 3}, DType::F32), {0})};
       }},
      // ---- products ----
      {"matmul",
       [](const Make& m) {
         return V{matmul(m({2, 3, 4}, DType::F32), m({4, 5}, DType::F32)),
                  matmul(m({4}, DType::BF16), m({4, 5}, DType::BF16)),
                  matmul(m({3, 4}, DType::I8), m({4, 2}, DType::U8)),
                  matmul(m({3, 4}, DType::F64), m({4}, DType::F64))};
       }},
      {"linear / dot / outer / einsum",
       [](const Make& m) {
         return V{linear(m({2, 3, 4}, DType::F32), m({5, 4}, DType::F32),
                         m({5}, DType::F32)),
                  dot(m({4}, DType::F32), m({4}, DType::F32)),
                  outer(m({3}, DType::F32), m({4}, DType::F32)),
                  einsum("bij,bjk->bik",
                         {m({2, 3, 4}, DType::F32), m({2, 4, 5}, DType::F32)})};
       }},
      // ---- convolution and pooling ----
      {"conv",
       [](const Make& m) {
         ConvOptions o;
         o.stride = {2, 1};
         o.padding = {1, 1};
         return V{conv2d(m({1, 4, 8, 8}, DType::F32),
                         m({6, 4, 3, 3}, DType::F32), m({6}, DType::F32), o),
                  conv1d(m({2, 3, 10}, DType::F64), m({5, 3, 3}, DType::F64)),
                  conv_transpose2d(m({1, 4, 5, 5}, DType::F32),
                                   m({4, 2, 3, 3}, DType::F32))};
       }},
      {"pooling",
       [](const Make& m) {
         PoolOptions o;
         o.kernel = {2, 2};
         const Tensor x = m({1, 3, 6, 6}, DType::F32);
         return V{
             max_pool2d(x, o), avg_pool2d(x, o), global_avg_pool(x),
             avg_pool_backward(m({1, 3, 3, 3}, DType::F32), {1, 3, 6, 6}, o)};
       }},
      // ---- normalisation ----
      {"norms",
       [](const Make& m) {
         const Tensor x = m({2, 3, 8}, DType::F32);
         const NormResult ln =
             layer_norm_with_stats(x, m({8}, DType::F32), m({8}, DType::F32));
         const Tensor dy = m({2, 3, 8}, DType::F32);
         const NormGradients lg = layer_norm_backward(
             dy, x, ln, m({8}, DType::F32), m({8}, DType::F32));
         const Tensor x64 = x.to(DType::F64);
         const NormGradients rg = rms_norm_backward(
             dy, x64, rms_norm_with_stats(x64), m({8}, DType::F64));
         return V{ln.y,
                  ln.mean,
                  ln.rstd,
                  lg.x,
                  lg.weight,
                  lg.bias,
                  rg.x,
                  rg.weight,
                  rms_norm(x.to(DType::BF16), m({8}, DType::F32)),
                  group_norm(m({2, 4, 3, 3}, DType::F32), 2),
                  instance_norm(m({2, 4, 3, 3}, DType::F32)),
                  batch_norm(m({2, 4, 3, 3}, DType::F32), m({4}, DType::F32),
                             m({4}, DType::F32), m({4}, DType::F32),
                             m({4}, DType::F32))};
       }},
      // ---- model ops ----
      {"embedding / rope / hadamard_transform",
       [](const Make& m) {
         const Tensor positions = m({5}, DType::I64);
         const Tensor x = m({1, 2, 5, 8}, DType::F32);
         return V{embedding(m({10, 8}, DType::F32), m({2, 5}, DType::I64)),
                  embedding_backward(m({2, 5, 8}, DType::BF16),
                                     m({2, 5}, DType::I64), 10),
                  rope(x, positions),
                  rope_tables(positions, 8, 1e4).cos,
                  hadamard_transform(x, 4),
                  hadamard_transform(m({3, 16}, DType::BF16))};
       }},
      {"attention",
       [](const Make& m) {
         AttentionOptions causal;
         causal.causal = true;
         AttentionOptions masked;
         masked.mask = m({5, 7}, DType::Bool);
         const Tensor q = m({1, 4, 5, 8}, DType::F32);
         const Tensor k = m({1, 2, 7, 8}, DType::F32);
         const Tensor v = m({1, 2, 7, 6}, DType::F32);
         const Tensor y = scaled_dot_product_attention(q, k, v, causal);
         const Tensor dy = m({1, 4, 5, 6}, DType::F32);
         const AttentionGradients g =
             scaled_dot_product_attention_backward(dy, q, k, v, y, masked);
         const AttentionGradients g64 = scaled_dot_product_attention_backward(
             dy, q.to(DType::F64), k, v, y, causal);
         return V{
             scaled_dot_product_attention(q, k, v),
             y,
             scaled_dot_product_attention(q, k, v, masked),
             scaled_dot_product_attention(q.to(DType::F64), k.to(DType::F64),
                                          v.to(DType::F64), causal),
             g.q,
             g.k,
             g.v,
             g64.q,
             g64.k,
             g64.v};
       }},
      // ---- indexing and layout ----
      {"joins",
       [](const Make& m) {
         const Tensor a = m({2, 3}, DType::F32);
         const std::vector<Tensor> parts = split(m({6, 3}, DType::F32), {2, 4});
         const std::vector<Tensor> chunks = chunk(m({5, 3}, DType::F32), 2);
         return V{concat({a, m({4, 3}, DType::F16)}, 0),
                  stack({a, a}, 1),
                  parts[0],
                  parts[1],
                  chunks[0],
                  chunks[1]};
       }},
      {"gathers and scatters",
       [](const Make& m) {
         const Tensor x = m({4, 5}, DType::F32);
         const Tensor idx = m({3, 5}, DType::I64);
         return V{
             gather(x, m({2, 3}, DType::I64), 1),
             index_select(x, 0, m({6}, DType::I32)),
             gather_elements(x, idx, 0),
             take_along_axis(x, idx, 0),
             gather_nd(x, m({3, 2}, DType::I64)),
             scatter(x, 0, idx, m({3, 5}, DType::F32)),
             scatter_add(x, 1, m({4, 2}, DType::I64), m({4, 2}, DType::F32)),
             masked_fill(x, m({4, 5}, DType::Bool), 1.0),
             one_hot(m({3}, DType::I64), 4)};
       }},
      {"layout",
       [](const Make& m) {
         const Tensor x = m({3, 4}, DType::F32);
         return V{tril(x),
                  triu(x, 1),
                  flip(x, {0}),
                  roll(x, {1}, {1}),
                  tile(x, {2, 1}),
                  repeat(x, 2, 0),
                  pad(x, {{1, 1}, {0, 2}}),
                  nchw_to_nhwc(m({1, 2, 3, 4}, DType::F32))};
       }},
      {"sorting",
       [](const Make& m) {
         const Tensor x = m({3, 6}, DType::F32);
         const TopK t = topk(x, 2);
         return V{sort(x), argsort(x, 0, true), t.values, t.indices};
       }},
  };
  run_cases(cases);
}

TEST(Meta, FactoriesFollowTheCurrentDevice) {
  const DeviceGuard on_meta_device(Device::meta());
  for (const Tensor& t :
       {zeros({2, 3}), ones({4}, DType::I8), full({2}, 1.5), arange(5),
        linspace(0, 1, 4), eye(3), rand({8}), randn({2, 2}, DType::BF16),
        randint(0, 5, {3}), from_vector(std::vector<float>{1, 2, 3})}) {
    EXPECT_EQ(t.device(), Device::meta());
    EXPECT_EQ(t.storage().data(), nullptr);
  }
}

TEST(Meta, AModelOfAnySizeCostsNoMemory) {
  // A 32k x 8192 embedding (1 GiB of f32) and its lookup: only sizes.
  const Tensor table = empty({32768, 8192}, DType::F32, Device::meta());
  const Tensor ids = empty({4, 2048}, DType::I64, Device::meta());
  const Tensor h = embedding(table, ids);
  const Tensor logits = linear(h, table);
  EXPECT_EQ(logits.shape(), (Shape{4, 2048, 32768}));
  EXPECT_EQ(logits.nbytes(), std::int64_t{4} * 2048 * 32768 * 4);
  EXPECT_EQ(logits.storage().nbytes(), logits.nbytes());
  EXPECT_EQ(logits.storage().data(), nullptr);
}

TEST(Meta, GradientsStayOnTheOperandsDevice) {
  // No DeviceGuard: every tensor a backward rule makes must follow its
  // operands to meta, or the step fails with mixed devices.
  const Variable x(empty({3, 4}, DType::F32, Device::meta()), true);
  const Variable w(empty({5, 4}, DType::F32, Device::meta()), true);
  const Variable terms[] = {
      sum(selu(x)),
      sum(leaky_relu(x)),
      sum(elu(x)),
      sum(softplus(x)),
      sum(clip(x, Scalar(0.0), Scalar(1.0))),
      sum(prod(x, {1})),
      sum(max(x, {0})),
      sum(mean(x)),
      sum(pad(x, {{1, 1}, {0, 2}})),
      sum(masked_fill(x, empty({3, 4}, DType::Bool, Device::meta()), 0.0)),
      sum(softmax(linear(x, w), -1)),
      sum(layer_norm(x)),
      cross_entropy(linear(x, w), empty({3}, DType::I64, Device::meta())),
  };
  Variable total = terms[0];
  for (std::size_t i = 1; i < std::size(terms); ++i) total = total + terms[i];
  total.backward();
  ASSERT_TRUE(x.grad().defined());
  EXPECT_EQ(x.grad().device(), Device::meta());
  EXPECT_EQ(x.grad().shape(), x.shape());
  EXPECT_EQ(w.grad().device(), Device::meta());
  EXPECT_EQ(w.grad().shape(), w.shape());
}

TEST(Meta, TheAllocatorCountsWhatItWouldHaveAllocated) {
  const std::int64_t before = meta_memory_stats().live_bytes;
  reset_meta_memory_peak();
  {
    const Tensor a = empty({1024}, DType::F32, Device::meta());
    const Tensor b = add(a, a);  // one more 4 KiB output
    EXPECT_EQ(meta_memory_stats().live_bytes - before, 8192);
  }
  EXPECT_EQ(meta_memory_stats().live_bytes, before);
  EXPECT_EQ(meta_memory_stats().peak_bytes - before, 8192);
  EXPECT_EQ(meta_memory_stats().allocations, 2);
}

TEST(Meta, ValuesAreNeverReadAndTheirAbsenceIsE2501) {
  const Tensor x = empty({3}, DType::F32, Device::meta());
  EXPECT_TESSEL_ERROR(x.select(0, 1).item<float>(), "E2501", "meta");
  EXPECT_TESSEL_ERROR(x.data<float>(), "E2501", "meta");
  EXPECT_TESSEL_ERROR(x.to(Device::cpu()), "E2501", "meta", "cpu");
  // Shapes that depend on values cannot be known.
  EXPECT_TESSEL_ERROR(repeat(x, empty({3}, DType::I64, Device::meta()), 0),
                      "E2501", "meta");
}

TEST(Meta, PrintsItsLayoutWithoutValues) {
  const Tensor m = empty({2, 3}, DType::BF16, Device::meta());
  EXPECT_EQ(to_string(m),
            "tensor(..., shape=(2, 3), dtype=bf16, device='meta')");
}

TEST(Meta, ToMetaKeepsShapeAndDtypeAndDropsTheData) {
  const Tensor cpu = arange(6, DType::I32).reshape({2, 3});
  const Tensor meta = cpu.to(Device::meta());
  EXPECT_EQ(meta.device(), Device::meta());
  EXPECT_EQ(meta.shape(), cpu.shape());
  EXPECT_EQ(meta.dtype(), DType::I32);
  EXPECT_EQ(meta.storage().data(), nullptr);
  EXPECT_EQ(parse_device("meta"), Device::meta());
  EXPECT_EQ(Device::meta().str(), "meta");
}

}  // namespace
}  // namespace tessel
