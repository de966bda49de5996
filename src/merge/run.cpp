#include "tessel/merge/run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>

#include "io/hf_checkpoint_files.hpp"
#include "io/json_strict.hpp"
#include "io/staged_directory.hpp"
#include "merge/merged_tensor_source.hpp"
#include "merge/model_input.hpp"
#include "quant/quant_mix.hpp"
#include "tessel/tessel.hpp"

namespace tessel::merge {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

[[noreturn]] void refuse(const std::string& what) {
  throw_error(ErrorCode::BadConfig, "[merge] " + what);
}

bool is_gguf_path(const fs::path& p) { return p.extension() == ".gguf"; }

// The output must not land inside (or on) an input: the staged swap or the
// rename would replace what is being read.
void check_output_path(const fs::path& output,
                       const std::vector<MergeInput>& inputs) {
  const fs::path out = fs::weakly_canonical(fs::absolute(output));
  for (const MergeInput& in : inputs) {
    const fs::path p = fs::weakly_canonical(fs::absolute(in.path()));
    const auto [pi, oi] =
        std::mismatch(p.begin(), p.end(), out.begin(), out.end());
    if (pi == p.end()) {
      refuse(fmt::format(
          "the output {} is {} the input model {}", output.string(),
          oi == out.end() ? "the same path as" : "inside", in.reference()));
    }
  }
}

bool is_float_dtype(DType d) {
  return d == DType::F32 || d == DType::F16 || d == DType::BF16;
}

// mergekit writes a tensor in out_dtype, else in the dtype the inputs were
// loaded in (`dtype`, else the stored one); a block-quantised input has no
// such dtype, and gives f32.
DType output_dtype(const MergeConfig& c, const MergePlan& plan,
                   const PlannedTensor& t,
                   const std::vector<MergeInput>& inputs) {
  if (c.out_dtype) return *c.out_dtype;
  if (c.dtype) return *c.dtype;
  const PlannedInput* donor = &t.inputs.front();
  for (const PlannedInput& in : t.inputs) {
    if (in.model == plan.donor) donor = &in;
  }
  const DType d = inputs[donor->model].stored_dtype(donor->tensor);
  return is_float_dtype(d) ? d : DType::F32;
}

std::vector<std::size_t> hf_order(const MergePlan& plan) {
  std::vector<std::size_t> order(plan.tensors.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) {
                     return io::hf_tensor_order(plan.tensors[a].name) <
                            io::hf_tensor_order(plan.tensors[b].name);
                   });
  return order;
}

// Reports each written tensor to the caller's callback, if any.
void attach_progress(const RunOptions& o, MergedTensorSource& source) {
  if (!o.on_progress) return;
  const auto total = static_cast<std::int64_t>(source.size());
  source.set_progress([&o, total](std::int64_t done, std::int64_t bytes,
                                  const std::string& name) {
    o.on_progress({done, total, bytes, name});
  });
}

// transformers' per-layer attention types follow the layers: each output
// layer takes its source layer's entry (the donor's list when the source
// model has none). Each model's config.json is read once.
json layer_types(const MergePlan& plan, const std::vector<MergeInput>& inputs,
                 const json& donor) {
  std::vector<json> lists(inputs.size(), donor);
  for (std::size_t m = 0; m < inputs.size(); ++m) {
    if (inputs[m].is_gguf()) continue;
    const json c = io::read_optional_json(inputs[m].path() / "config.json");
    if (c.is_object() && c.contains("layer_types")) lists[m] = c["layer_types"];
  }
  json out = json::array();
  for (const MergePlan::LayerSource& l : plan.layers) {
    const json& types = lists[l.model];
    if (!types.is_array() || types.empty()) return donor;
    const auto i = static_cast<std::size_t>(
        std::min<std::int64_t>(l.layer, std::int64_t(types.size()) - 1));
    out.push_back(types[i]);
  }
  return out;
}

// The files mergekit copies from the donor's directory.
constexpr const char* kTokenizerFiles[] = {
    "tokenizer_config.json", "special_tokens_map.json", "tokenizer.json",
    "tokenizer.model",       "added_tokens.json",       "merges.txt",
    "chat_template.jinja",   "generation_config.json",  "chat_template.json",
};

void write_hf(const RunOptions& o, const MergeConfig& c, const MergePlan& plan,
              const std::vector<MergeInput>& inputs, RunReport& report) {
  if (!o.quantize.empty()) {
    refuse(
        "--quantize writes GGUF block types, which a safetensors "
        "checkpoint cannot hold: name a .gguf output");
  }
  std::vector<MergeOutputTensor> outputs;
  for (const std::size_t i : hf_order(plan)) {
    const PlannedTensor& t = plan.tensors[i];
    outputs.push_back({i, t.name, output_dtype(c, plan, t, inputs), 0, {}});
  }
  const MergeInput& donor = inputs[plan.donor];
  json config;
  if (donor.is_gguf()) {
    config = json::parse(plan.config.to_json());
  } else {
    config = io::read_optional_json(donor.path() / "config.json");
  }
  config["num_hidden_layers"] = plan.config.num_hidden_layers;
  config["tie_word_embeddings"] = plan.config.tie_word_embeddings;
  if (config.contains("layer_types")) {
    config["layer_types"] = layer_types(plan, inputs, config["layer_types"]);
  }
  // transformers 5 writes "dtype", earlier versions "torch_dtype".
  const char* dtype_key = config.contains("dtype") ? "dtype" : "torch_dtype";
  for (const MergeOutputTensor& m : outputs) {
    if (plan.tensors[m.planned].shape.size() == 2) {
      config[dtype_key] = io::torch_dtype_name(m.dtype);
      break;
    }
  }
  io::refuse_to_replace_foreign(o.output, "merge");
  MergedTensorSource source(plan, inputs, std::move(outputs), c.dtype, o.seed);
  attach_progress(o, source);
  io::StagedDirectory staged(o.output);
  io::write_safetensors_shards(staged.path(), source, o.shard_bytes);
  io::write_text_file(staged.path() / "config.json", config.dump(2) + "\n");
  if (donor.is_gguf()) {
    const HfTokenizerFiles tokenizer = hf_tokenizer_files(*donor.gguf());
    if (!tokenizer.note.empty()) report.notes.push_back(tokenizer.note);
    io::write_tokenizer_files(staged.path(), tokenizer);
  } else {
    for (const char* name : kTokenizerFiles) {
      const fs::path from = donor.path() / name;
      std::error_code ec;
      if (!fs::exists(from, ec)) continue;
      if (!fs::copy_file(from, staged.path() / name, ec) || ec) {
        throw_error(ErrorCode::IoFailure,
                    fmt::format("[merge] cannot copy {}: {}", from.string(),
                                ec.message()));
      }
    }
  }
  staged.commit();
  report.tensors = source.size();
  report.bytes_written = source.total_bytes();
  report.bytes_read = source.bytes_read();
}

void write_gguf(const RunOptions& o, const MergeConfig& c,
                const MergePlan& plan, const std::vector<MergeInput>& inputs,
                RunReport& report) {
  std::vector<MergeOutputTensor> outputs;
  if (Tensor freqs = gguf_rope_freqs(plan.config); freqs.defined()) {
    outputs.push_back({0, kRopeFreqsTensor, DType::F32, 0, freqs});
  }
  DType outtype = DType::F32;
  bool first_matrix = true;
  for (const std::size_t i : hf_order(plan)) {
    const PlannedTensor& t = plan.tensors[i];
    const DType d = output_dtype(c, plan, t, inputs);
    if (t.shape.size() == 2 && first_matrix) {
      outtype = d;
      first_matrix = false;
    }
    const std::string name = *gguf_tensor_name(t.name);
    MergeOutputTensor m{
        i,
        name,
        gguf_converted_dtype(name, std::int64_t(t.shape.size()), d),
        0,
        {}};
    if (const auto heads = rope_interleave_heads(plan.config, t.name)) {
      m.interleave_heads = *heads;
    }
    outputs.push_back(std::move(m));
  }
  DecoderConfig gguf_config = plan.config;
  gguf_config.rope_interleaved = plan.config.model_type == "llama";
  GgufModelInfo info;
  info.file_type = gguf_file_type(outtype);
  if (!o.quantize.empty()) {
    const quant::QuantMix mix = quant::parse_quant_mix(o.quantize);
    quant::ModelFacts facts;
    facts.arch = plan.config.model_type;
    facts.n_layer = static_cast<int>(plan.config.num_hidden_layers);
    facts.n_head = static_cast<int>(plan.config.num_attention_heads);
    facts.n_head_kv = static_cast<int>(plan.config.num_key_value_heads);
    std::vector<quant::TensorInfo> infos;
    for (const MergeOutputTensor& m : outputs) {
      const Shape& s = m.constant.defined() ? m.constant.shape()
                                            : plan.tensors[m.planned].shape;
      infos.push_back(
          {m.name, std::vector<std::int64_t>(s.begin(), s.end()), m.dtype});
    }
    const auto plans = quant::plan_quantization(facts, infos, mix);
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      outputs[i].dtype = plans[i].dtype;
      if (!plans[i].fallback.empty()) report.notes.push_back(plans[i].fallback);
    }
    info.file_type =
        static_cast<std::uint32_t>(quant::quant_mix_info(mix).file_type);
  }
  std::int64_t parameters = 0;
  for (const PlannedTensor& t : plan.tensors) {
    std::int64_t n = 1;
    for (const std::int64_t d : t.shape) n *= d;
    parameters += n;
  }
  info.name = gguf_model_name(o.output.stem().string());
  info.size_label = gguf_size_label(parameters);
  // The converter writes key/value_length when config.json has head_dim.
  const MergeInput& donor_model = inputs[plan.donor];
  if (donor_model.is_gguf()) {
    info.head_dim_keys =
        donor_model.gguf()->find(plan.config.model_type +
                                 ".attention.key_length") != nullptr;
  } else {
    const json raw = io::read_optional_json(donor_model.path() / "config.json");
    info.head_dim_keys = raw.is_object() && raw.contains("head_dim");
  }
  auto metadata = gguf_decoder_metadata(gguf_config, info);
  const MergeInput& donor = inputs[plan.donor];
  if (donor.is_gguf()) {
    for (const auto& [key, value] : donor.gguf()->metadata) {
      if (key.starts_with("tokenizer.")) metadata.emplace_back(key, value);
    }
  } else {
    auto vocabulary = gguf_tokenizer_metadata(
        donor.path(),
        {plan.config.vocab_size, plan.config.model_type, o.tokenizer_pre});
    if (vocabulary.empty()) {
      report.notes.push_back(fmt::format(
          "{} has no tokenizer.json, so the GGUF file has no vocabulary",
          donor.reference()));
    }
    metadata.insert(metadata.end(), std::make_move_iterator(vocabulary.begin()),
                    std::make_move_iterator(vocabulary.end()));
  }
  MergedTensorSource source(plan, inputs, std::move(outputs), c.dtype, o.seed);
  attach_progress(o, source);
  save_gguf(o.output, metadata, source);
  report.tensors = source.size();
  report.bytes_written = source.total_bytes();
  report.bytes_read = source.bytes_read();
}

}  // namespace

RunReport run(const RunOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const MergeConfig config = MergeConfig::load(o.config);
  std::vector<MergeInput> inputs;
  std::vector<ModelSummary> summaries;
  for (const std::string& ref : config.referenced_models()) {
    inputs.push_back(MergeInput::open(ref));
    summaries.push_back(inputs.back().summary());
  }
  check_output_path(o.output, inputs);
  const MergePlan plan = plan_merge(config, summaries);
  RunReport report;
  report.method = std::string(method_name(config.method));
  report.models = inputs.size();
  report.layers = plan.config.num_hidden_layers;
  if (is_gguf_path(o.output)) {
    report.output_format = "gguf";
    write_gguf(o, config, plan, inputs, report);
  } else {
    report.output_format = "hf";
    write_hf(o, config, plan, inputs, report);
  }
  report.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return report;
}

}  // namespace tessel::merge
