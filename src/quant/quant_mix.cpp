// The rules follow llama.cpp's llama-quant.cpp (the version vendored by
// llama-cpp-python 0.3.36): tensor_allows_quantization, tensor_get_category,
// llama_tensor_get_type(_impl) and tensor_type_fallback, reduced to what the
// architectures llama, qwen2 and qwen3 reach without an importance matrix.
#include "quant/quant_mix.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <numeric>
#include <optional>

#include "core/check.hpp"

namespace tessel::quant {
namespace {

constexpr std::string_view kOp = "quantize";

constexpr std::array<QuantMixInfo, 23> kMixes{{
    {QuantMix::F32, "F32", 0, DType::F32},
    {QuantMix::F16, "F16", 1, DType::F16},
    {QuantMix::BF16, "BF16", 32, DType::BF16},
    {QuantMix::Q4_0, "Q4_0", 2, DType::Q4_0},
    {QuantMix::Q4_1, "Q4_1", 3, DType::Q4_1},
    {QuantMix::Q5_0, "Q5_0", 8, DType::Q5_0},
    {QuantMix::Q5_1, "Q5_1", 9, DType::Q5_1},
    {QuantMix::Q8_0, "Q8_0", 7, DType::Q8_0},
    {QuantMix::Q2_K, "Q2_K", 10, DType::Q2_K},
    {QuantMix::Q2_K_S, "Q2_K_S", 21, DType::Q2_K},
    {QuantMix::Q3_K_S, "Q3_K_S", 11, DType::Q3_K},
    {QuantMix::Q3_K_M, "Q3_K_M", 12, DType::Q3_K},
    {QuantMix::Q3_K_L, "Q3_K_L", 13, DType::Q3_K},
    {QuantMix::Q4_K_S, "Q4_K_S", 14, DType::Q4_K},
    {QuantMix::Q4_K_M, "Q4_K_M", 15, DType::Q4_K},
    {QuantMix::Q5_K_S, "Q5_K_S", 16, DType::Q5_K},
    {QuantMix::Q5_K_M, "Q5_K_M", 17, DType::Q5_K},
    {QuantMix::Q6_K, "Q6_K", 18, DType::Q6_K},
    {QuantMix::IQ4_NL, "IQ4_NL", 25, DType::IQ4_NL},
    {QuantMix::IQ4_XS, "IQ4_XS", 30, DType::IQ4_XS},
    {QuantMix::TQ1_0, "TQ1_0", 36, DType::TQ1_0},
    {QuantMix::TQ2_0, "TQ2_0", 37, DType::TQ2_0},
    {QuantMix::MXFP4_MOE, "MXFP4_MOE", 38, DType::MXFP4},
}};

// llama.cpp mixes whose IQ1/IQ2/IQ3_XXS tensors only quantise with an
// importance matrix (llama.cpp refuses them without one).
constexpr std::array<std::string_view, 8> kImatrixOnlyMixes{
    "IQ2_XXS", "IQ2_XS", "IQ2_S",   "IQ2_M",
    "IQ1_S",   "IQ1_M",  "IQ3_XXS", "IQ3_XS"};

// llama.cpp mixes built on IQ3_S blocks, which tessel has no encoder for.
constexpr std::array<std::string_view, 2> kIq3sMixes{"IQ3_S", "IQ3_M"};

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::toupper(static_cast<unsigned char>(x)) ==
                  std::toupper(static_cast<unsigned char>(y));
         });
}

bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// ggml_type_name spellings, which llama.cpp's fallback warning prints.
std::string_view ggml_type_name(DType t) {
  switch (t) {
    case DType::Q2_K: return "q2_K";
    case DType::Q3_K: return "q3_K";
    case DType::Q4_K: return "q4_K";
    case DType::Q5_K: return "q5_K";
    case DType::Q6_K: return "q6_K";
    case DType::Q8_K: return "q8_K";
    default: return dtype_name(t);
  }
}

// ---- shapes in ggml terms ----

// ggml's ne[i]: tessel shapes are ne reversed; missing axes are 1.
std::int64_t ggml_ne(const std::vector<std::int64_t>& shape, std::size_t i) {
  return i < shape.size() ? shape[shape.size() - 1 - i] : 1;
}

// ggml_n_dims: trailing size-1 axes do not count, so [1, n] is 1-D.
int ggml_n_dims(const std::vector<std::int64_t>& shape) {
  for (std::size_t i = shape.size(); i > 1; --i)
    if (ggml_ne(shape, i - 1) > 1) return static_cast<int>(i);
  return 1;
}

// The row length llama.cpp checks against the block size (ne[0]).
std::int64_t row_length(const TensorInfo& t) { return ggml_ne(t.shape, 0); }

// The N of "blk.N.", as llama.cpp's sscanf("blk.%d.") reads it.
std::optional<int> block_index(std::string_view name) {
  constexpr std::string_view kPrefix = "blk.";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  const char* first = name.data() + kPrefix.size();
  int index = 0;
  const auto [end, ec] =
      std::from_chars(first, name.data() + name.size(), index);
  if (ec != std::errc{}) return std::nullopt;
  return index;
}

// ---- which tensors are quantised, and how they are grouped ----

enum class Category {
  TokenEmbd,
  AttnQ,
  AttnV,
  AttnK,
  AttnQkv,
  AttnKvB,
  AttnOutput,
  FfnUp,
  FfnGate,
  FfnDown,
  Output,
  Other
};

// llama.cpp's tensor_get_category: substring tests, first match wins.
Category categorize(std::string_view name) {
  if (name == "output.weight") return Category::Output;
  if (name == "token_embd.weight" || name == "per_layer_token_embd.weight")
    return Category::TokenEmbd;
  if (contains(name, "attn_qkv.weight")) return Category::AttnQkv;
  if (contains(name, "attn_kv_b.weight")) return Category::AttnKvB;
  if (contains(name, "attn_v.weight")) return Category::AttnV;
  if (contains(name, "attn_k.weight")) return Category::AttnK;
  if (contains(name, "attn_q.weight")) return Category::AttnQ;
  if (contains(name, "attn_output.weight")) return Category::AttnOutput;
  if (contains(name, "ffn_up")) return Category::FfnUp;
  if (contains(name, "ffn_gate")) return Category::FfnGate;
  if (contains(name, "ffn_down")) return Category::FfnDown;
  return Category::Other;
}

// attn_qkv and attn_kv_b carry V, so llama.cpp gives them attn_v's rules
// (its separate attn_qkv branch is never reached).
bool is_attn_v_like(Category c) {
  return c == Category::AttnV || c == Category::AttnQkv ||
         c == Category::AttnKvB;
}

// llama.cpp's tensor_allows_quantization, for the name patterns that can
// occur in llama/qwen2/qwen3 files: 2-D/3-D weights except norms, MoE
// routers and position/token-type embeddings.
bool allows_quantization(const TensorInfo& t) {
  if (ggml_n_dims(t.shape) < 2) return false;
  const std::string_view name = t.name;
  return ends_with(name, "weight") && !contains(name, "_norm.weight") &&
         !contains(name, "ffn_gate_inp.weight") &&
         !contains(name, "ffn_gate_tid2eid.weight") &&
         name != "position_embd.weight" && name != "token_types.weight";
}

// ---- the per-model state llama.cpp keeps while it walks the tensors ----

struct Planner {
  QuantMix mix;
  DType base;
  int n_layer;
  int n_gqa;  // n_head / n_head_kv of layer 0; 0 when n_head_kv is 0
  int n_expert;
  bool is_70b;  // llama.cpp's LLM_TYPE_70B, which bumps attn_v
  bool tied_embeddings;
  int n_attn_v = 0;
  int i_attn_v = 0;
  int i_ffn_down = 0;
};

bool is_mix(const Planner& p, std::initializer_list<QuantMix> mixes) {
  return std::find(mixes.begin(), mixes.end(), p.mix) != mixes.end();
}

// llama.cpp's use_more_bits: the first and last eighth of the layers and
// every third layer in between get more bits.
bool use_more_bits(int i_layer, int n_layers) {
  return i_layer < n_layers / 8 || i_layer >= 7 * n_layers / 8 ||
         (i_layer - n_layers / 8) % 3 == 2;
}

// llama.cpp sets LLM_TYPE_70B for 80-layer llama with grouped-query
// attention and for every 80-layer qwen2; qwen3 has no 70B type.
bool is_70b_model(const ModelFacts& m, int n_head_kv) {
  if (m.n_layer != 80) return false;
  if (m.arch == "llama") return m.n_expert != 8 && m.n_head != n_head_kv;
  return m.arch == "qwen2";
}

Planner make_planner(const ModelFacts& m, std::span<const TensorInfo> tensors,
                     QuantMix mix) {
  const int n_head_kv = m.n_head_kv < 0 ? m.n_head : m.n_head_kv;
  Planner p{.mix = mix,
            .base = quant_mix_info(mix).base,
            .n_layer = m.n_layer,
            .n_gqa = n_head_kv == 0 ? 0 : m.n_head / n_head_kv,
            .n_expert = m.n_expert,
            .is_70b = is_70b_model(m, n_head_kv),
            .tied_embeddings = true};
  // llama.cpp counts over every tensor, quantisable or not.
  for (const TensorInfo& t : tensors) {
    const Category c = categorize(t.name);
    if (is_attn_v_like(c)) ++p.n_attn_v;
    if (c == Category::Output) p.tied_embeddings = false;
  }
  return p;
}

// The layer llama.cpp attributes an ffn_down tensor to: the running count
// for dense models, the "blk.N." of the name when experts may interleave.
int ffn_down_layer(const Planner& p, const std::string& name) {
  if (p.n_expert <= 1) return p.i_ffn_down;
  const std::optional<int> layer = block_index(name);
  TESSEL_CHECK(layer.has_value(), BadConfig, kOp,
               "cannot determine the layer of tensor {}", name);
  TESSEL_CHECK(*layer >= 0 && *layer < p.n_layer, BadConfig, kOp,
               "bad layer {} for tensor {}; must be in [0, {})", *layer, name,
               p.n_layer);
  return *layer;
}

// ---- the rules per tensor category (llama_tensor_get_type_impl) ----

// output.weight, and token_embd.weight when it doubles as the output.
DType output_type(const Planner& p, const TensorInfo& t) {
  // MXFP4_MOE keeps the vocabulary projection at Q8_0.
  if (p.mix == QuantMix::MXFP4_MOE) return DType::Q8_0;
  // A row that does not fill whole blocks of the bulk type gets Q8_0.
  if (row_length(t) % dtype_traits(p.base).block_size != 0) return DType::Q8_0;
  // The output projection is quality-critical: Q6_K unless the mix is Q8_0.
  return p.base == DType::Q8_0 ? DType::Q8_0 : DType::Q6_K;
}

// MXFP4 is for expert tensors (3-D); everything else in the mix is Q8_0.
DType mxfp4_moe_type(const TensorInfo& t) {
  return ggml_ne(t.shape, 2) > 1 ? DType::MXFP4 : DType::Q8_0;
}

// token_embd.weight with a separate output.weight.
DType token_embd_type(const Planner& p) {
  // Ternary mixes: llama.cpp stores untied embeddings as Q4_K, not ternary.
  if (is_mix(p, {QuantMix::TQ1_0, QuantMix::TQ2_0})) return DType::Q4_K;
  return p.base;
}

// attn_v (and fused qkv / kv_b): small under GQA, so llama.cpp spends bits.
DType attn_v_type(Planner& p) {
  using M = QuantMix;
  DType t = p.base;
  const int i = p.i_attn_v;
  if (p.mix == M::Q2_K) {
    t = p.n_gqa >= 4 ? DType::Q4_K : DType::Q3_K;
  } else if (p.mix == M::Q2_K_S && p.n_gqa >= 4) {
    t = DType::Q4_K;
  } else if (p.mix == M::Q3_K_M) {
    // The first two attn_v tensors get Q5_K.
    t = i < 2 ? DType::Q5_K : DType::Q4_K;
  } else if (p.mix == M::Q3_K_L) {
    t = DType::Q5_K;
  } else if (is_mix(p, {M::IQ4_NL, M::IQ4_XS}) && p.n_gqa >= 4) {
    t = DType::Q5_K;
  } else if (is_mix(p, {M::Q4_K_M, M::Q5_K_M}) &&
             use_more_bits(i, p.n_attn_v)) {
    t = DType::Q6_K;
  } else if (p.mix == M::Q4_K_S && i < 4) {
    t = DType::Q5_K;
  }
  // 70B: attn_v is 8x smaller than attn_q, so Q5_K costs little.
  if (p.is_70b && (t == DType::Q3_K || t == DType::Q4_K)) t = DType::Q5_K;
  // 8-expert models: attn_v is shared by all experts, Q8_0 is cheap.
  if (p.n_expert == 8) t = DType::Q8_0;
  ++p.i_attn_v;
  return t;
}

// attn_k: only 8-expert models raise it (to Q8_0, like attn_v).
DType attn_k_type(const Planner& p) {
  return p.n_expert == 8 ? DType::Q8_0 : p.base;
}

// ffn_down: the most quantisation-sensitive matrix of each layer.
DType ffn_down_type(Planner& p, const std::string& name) {
  using M = QuantMix;
  const int i = ffn_down_layer(p, name);
  const int n = p.n_layer;
  DType t = p.base;
  if (p.mix == M::Q2_K) {
    t = DType::Q3_K;
  } else if (p.mix == M::Q2_K_S) {
    if (i < n / 8) t = DType::Q4_K;
  } else if (p.mix == M::Q3_K_M) {
    // Q5_K for the first sixteenth of the layers, Q4_K after.
    t = i < n / 16 ? DType::Q5_K : DType::Q4_K;
  } else if (p.mix == M::Q3_K_L) {
    t = DType::Q5_K;
  } else if (p.mix == M::Q4_K_M) {
    if (use_more_bits(i, n)) t = DType::Q6_K;
  } else if (is_mix(p, {M::IQ4_NL, M::IQ4_XS}) && i < n / 8) {
    // Without an imatrix the first eighth of IQ4 ffn_down gets Q5_K.
    t = DType::Q5_K;
  } else if (p.mix == M::Q5_K_M && use_more_bits(i, n)) {
    t = DType::Q6_K;
  } else if (p.mix == M::Q4_K_S && i < n / 8) {
    t = DType::Q5_K;
  }
  ++p.i_ffn_down;
  return t;
}

// attn_output: raised for the low-bit K mixes, and for 8-expert models.
DType attn_output_type(const Planner& p) {
  using M = QuantMix;
  if (p.n_expert == 8) {
    const bool raise = is_mix(p, {M::Q2_K, M::Q3_K_S, M::Q3_K_M, M::IQ4_NL,
                                  M::Q4_K_S, M::Q4_K_M, M::IQ4_XS});
    return raise ? DType::Q5_K : p.base;
  }
  if (p.mix == M::Q2_K) return DType::Q3_K;
  if (p.mix == M::Q3_K_M) return DType::Q4_K;
  if (p.mix == M::Q3_K_L) return DType::Q5_K;
  return p.base;
}

// The mix's choice for a quantisable tensor, before the row-length check.
DType mix_type(Planner& p, const TensorInfo& t) {
  const Category c = categorize(t.name);
  // Tied embeddings: token_embd is also the output, so it gets output's type.
  if (c == Category::Output || (p.tied_embeddings && c == Category::TokenEmbd))
    return output_type(p, t);
  if (p.mix == QuantMix::MXFP4_MOE) return mxfp4_moe_type(t);
  if (c == Category::TokenEmbd) return token_embd_type(p);
  if (is_attn_v_like(c)) return attn_v_type(p);
  if (c == Category::AttnK) return attn_k_type(p);
  if (c == Category::FfnDown) return ffn_down_type(p, t.name);
  if (c == Category::AttnOutput) return attn_output_type(p);
  return p.base;
}

// ---- rows that do not fill whole blocks (tensor_type_fallback) ----

// The 32-element type llama.cpp demotes a 256-element type to.
DType smaller_block_type(DType t, const std::string& name) {
  switch (t) {
    case DType::IQ4_XS: return DType::IQ4_NL;
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::TQ1_0:
    case DType::TQ2_0: return DType::Q4_0;
    case DType::Q4_K: return DType::Q5_0;
    case DType::Q5_K: return DType::Q5_1;
    case DType::Q6_K: return DType::Q8_0;
    default:
      // A 32-element type has nothing smaller; the F16 check below takes it.
      TESSEL_CHECK(dtype_traits(t).block_size <= 32, BadConfig, kOp,
                   "no fallback type for {} (tensor {})", dtype_name(t), name);
      return t;
  }
}

// Returns the dtype that fits the row and sets `note` to llama.cpp's
// warning when it differs from `target`.
DType fit_row_length(const TensorInfo& t, DType target, std::string& note) {
  const std::int64_t ncols = row_length(t);
  const int block = dtype_traits(target).block_size;
  if (ncols % block == 0) return target;
  DType fitted = smaller_block_type(target, t.name);
  std::string f16_warning;
  // Not even 32 divides the row: llama.cpp stores it as F16.
  if (ncols % dtype_traits(fitted).block_size != 0) {
    fitted = DType::F16;
    f16_warning = "(WARNING: must use F16 due to unusual shape) ";
  }
  note = fmt::format(
      "warning: {:<36} - ncols {:6} not divisible by {:3} (required for type "
      "{:>7}) {}-> falling back to {:>7}",
      t.name, ncols, block, ggml_type_name(target), f16_warning,
      ggml_type_name(fitted));
  return fitted;
}

// llama.cpp's tensor_requires_imatrix for the types our mixes reach: only
// Q2_K inside a Q2_K_S file (embeddings and output excepted).
bool requires_imatrix(const Planner& p, const TensorInfo& t, DType target) {
  const Category c = categorize(t.name);
  if (c == Category::TokenEmbd || c == Category::Output) return false;
  return target == DType::Q2_K && p.mix == QuantMix::Q2_K_S;
}

bool can_convert_from(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 ||
         is_block_quantized(t);
}

void check_conversion(const TensorInfo& t, DType target) {
  if (target == t.dtype) return;
  TESSEL_CHECK(!is_block_quantized(t.dtype), BadConfig, kOp,
               "requantizing from type {} is disabled (tensor {})",
               dtype_name(t.dtype), t.name);
  TESSEL_CHECK(can_convert_from(t.dtype), BadConfig, kOp,
               "cannot convert tensor {} of type {}", t.name,
               dtype_name(t.dtype));
}

TensorPlan plan_tensor(Planner& p, const TensorInfo& t) {
  TensorPlan plan{.dtype = t.dtype, .fallback = {}};
  if (!allows_quantization(t)) return plan;
  // F32/F16/BF16 mixes convert every quantisable weight, with no rules.
  if (!is_block_quantized(p.base)) {
    plan.dtype = p.base;
  } else {
    plan.dtype = fit_row_length(t, mix_type(p, t), plan.fallback);
  }
  TESSEL_CHECK(!requires_imatrix(p, t, plan.dtype), BadConfig, kOp,
               "mix {} needs an importance matrix for tensor {} ({}), which "
               "tessel quantize does not take",
               quant_mix_info(p.mix).name, t.name, ggml_type_name(plan.dtype));
  check_conversion(t, plan.dtype);
  return plan;
}

void check_model(const ModelFacts& m) {
  TESSEL_CHECK(
      m.arch == "llama" || m.arch == "qwen2" || m.arch == "qwen3", BadConfig,
      kOp, "architecture '{}' is not supported (llama, qwen2, qwen3)", m.arch);
  TESSEL_CHECK(m.n_layer > 0, BadConfig, kOp, "block_count {} must be > 0",
               m.n_layer);
}

}  // namespace

std::span<const QuantMixInfo> quant_mixes() { return kMixes; }

const QuantMixInfo& quant_mix_info(QuantMix mix) {
  return kMixes[static_cast<std::size_t>(mix)];
}

QuantMix parse_quant_mix(std::string_view name) {
  for (const QuantMixInfo& info : kMixes)
    if (equals_ignoring_case(name, info.name)) return info.mix;
  for (std::string_view mix : kImatrixOnlyMixes)
    TESSEL_CHECK(!equals_ignoring_case(name, mix), BadConfig, kOp,
                 "mix {} needs an importance matrix, which tessel quantize "
                 "does not take",
                 mix);
  for (std::string_view mix : kIq3sMixes)
    TESSEL_CHECK(!equals_ignoring_case(name, mix), BadConfig, kOp,
                 "mix {} needs IQ3_S blocks, which tessel cannot encode", mix);
  std::string known;
  for (const QuantMixInfo& info : kMixes)
    known += fmt::format("{}{}", known.empty() ? "" : " ", info.name);
  detail::fail(ErrorCode::BadConfig, kOp, "unknown mix '{}'; known: {}", name,
               known);
}

std::vector<std::size_t> llama_tensor_order(
    std::span<const TensorInfo> tensors) {
  std::vector<std::size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // llama.cpp's weight_name_comparer: block index first (-1 outside the
  // blocks), then the name.
  const auto key = [&](std::size_t i) {
    return std::pair{block_index(tensors[i].name).value_or(-1),
                     std::string_view(tensors[i].name)};
  };
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  return order;
}

std::vector<TensorPlan> plan_quantization(const ModelFacts& model,
                                          std::span<const TensorInfo> tensors,
                                          QuantMix mix) {
  check_model(model);
  Planner planner = make_planner(model, tensors, mix);
  std::vector<TensorPlan> plans(tensors.size());
  // The attn_v and ffn_down counters run in llama.cpp's tensor order.
  for (std::size_t i : llama_tensor_order(tensors))
    plans[i] = plan_tensor(planner, tensors[i]);
  return plans;
}

std::string fallback_summary(std::span<const TensorPlan> plans) {
  const auto n =
      std::count_if(plans.begin(), plans.end(),
                    [](const TensorPlan& p) { return !p.fallback.empty(); });
  if (n == 0) return {};
  return fmt::format(
      "llama_model_quantize_impl: WARNING: {} of {} tensor(s) required "
      "fallback quantization",
      n, plans.size());
}

}  // namespace tessel::quant
