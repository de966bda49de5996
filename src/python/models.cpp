// tessel.CausalLM and tessel.Tokenizer: the decoder models of the C++ API
// (Llama, Qwen2, Qwen3 from HF directories and GGUF files, with their
// weights mapped, not copied) and the tokenizer that goes with a
// checkpoint. The configuration crosses as a dict (config.json's keys).
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings.hpp"

namespace tessel::python {

namespace {

nb::object json_module() { return nb::module_::import_("json"); }

nb::dict config_dict(const DecoderConfig& config) {
  return nb::cast<nb::dict>(json_module().attr("loads")(config.to_json()));
}

DecoderConfig config_from(nb::handle config) {
  const std::string text =
      nb::isinstance<nb::str>(config)
          ? nb::cast<std::string>(config)
          : nb::cast<std::string>(json_module().attr("dumps")(config));
  return DecoderConfig::from_json(text);
}

// Token ids as an integer tensor of shape (B, S); `batched` says whether
// the caller gave the batch axis (a 1-D sequence gets one added).
Tensor token_ids(nb::handle ids, bool* batched) {
  const Tensor t = to_tensor(ids);
  if (!is_integral(t.dtype())) {
    throw_error(ErrorCode::BadDType,
                "[CausalLM] token ids must be integers, got " +
                    std::string(dtype_name(t.dtype())));
  }
  if (t.rank() != 1 && t.rank() != 2) {
    throw_error(ErrorCode::BadShape,
                "[CausalLM] token ids must have shape (S,) or (B, S), got " +
                    shape_string(t.shape()));
  }
  *batched = t.rank() == 2;
  return *batched ? t : t.unsqueeze(0);
}

// `forward` (logits or next_token_logits) on ids of shape (S,) or (B, S),
// the result without the batch axis when the ids had none.
template <class Forward>
Tensor on_ids(nb::handle ids, Forward&& forward) {
  bool batched = false;
  const Tensor t = token_ids(ids, &batched);
  const Tensor out = without_gil_if(true, [&] { return forward(t); });
  return batched ? out : out.squeeze(0);
}

}  // namespace

void bind_models(nb::module_& m) {
  nb::class_<CausalLM>(
      m, "CausalLM",
      "A Llama, Qwen2 or Qwen3 decoder with its language-model head.")
      .def(
          "__init__",
          [](CausalLM* self, nb::handle config, std::uint64_t seed) {
            new (self) CausalLM(config_from(config), seed);
          },
          nb::arg("config"), nb::arg("seed") = 0,
          "Random weights (N(0, initializer_range), norms at 1) for a config "
          "dict or JSON text with config.json's keys.")
      .def_static(
          "load",
          [](const std::filesystem::path& path, bool writable, bool mmap) {
            if (writable && !mmap) {
              throw_error(ErrorCode::BadConfig,
                          "[CausalLM.load] writable=True maps the file "
                          "copy-on-write: it needs mmap=True");
            }
            return CausalLM::load(path, writable ? MapMode::CopyOnWrite
                                        : mmap   ? MapMode::ReadOnly
                                                 : MapMode::Resident);
          },
          nb::arg("path"), nb::arg("writable") = false, nb::arg("mmap") = true,
          "A checkpoint: an HF directory (config.json + safetensors, sharded "
          "or not) or a GGUF file. The weights are the file's mapped tensors "
          "(f16/bf16 and GGUF blocks stay as stored); writable=True maps "
          "them copy-on-write; mmap=False reads them into memory in 2 MiB "
          "pages instead (slower load, faster decode).")
      .def_prop_ro(
          "config", [](const CausalLM& lm) { return config_dict(lm.config()); },
          "The configuration as config.json's keys.")
      .def(
          "logits",
          [](const CausalLM& lm, nb::handle ids) {
            return on_ids(ids, [&](const Tensor& t) { return lm.logits(t); });
          },
          nb::arg("ids"),
          "Logits (B, S, vocab) for token ids (B, S), or (S, vocab) for "
          "(S,): one forward pass, nothing recorded.")
      .def(
          "next_token_logits",
          [](const CausalLM& lm, nb::handle ids) {
            return on_ids(
                ids, [&](const Tensor& t) { return lm.next_token_logits(t); });
          },
          nb::arg("ids"), "The logits of the last position only.")
      .def(
          "generate",
          [](const CausalLM& lm, nb::handle ids, std::int64_t max_new_tokens,
             double temperature, std::int64_t top_k, double top_p,
             std::uint64_t seed, nb::handle stop_token, nb::handle cache_type) {
            bool batched = false;
            const Tensor t = token_ids(ids, &batched);
            GenerateOptions options;
            options.max_new_tokens = max_new_tokens;
            options.sampling = {temperature, top_k, top_p, seed};
            options.cache_dtype = to_dtype(cache_type);
            if (!stop_token.is_none())
              options.stop_token = nb::cast<std::int64_t>(stop_token);
            std::vector<std::vector<std::int64_t>> rows;
            {
              nb::gil_scoped_release release;
              rows = generate(lm, t, options);
            }
            return batched ? nb::cast(rows) : nb::cast(rows.front());
          },
          nb::arg("ids"), nb::kw_only(), nb::arg("max_new_tokens") = 32,
          nb::arg("temperature") = 1.0, nb::arg("top_k") = 0,
          nb::arg("top_p") = 1.0, nb::arg("seed") = 0,
          nb::arg("stop_token") = nb::none(), nb::arg("cache_type") = "f32",
          "The new token ids after the prompt ids (a list, or a list per "
          "row): temperature 0 is greedy; top_k / top_p filter; a row ends "
          "at stop_token (included) or max_new_tokens. cache_type: what the "
          "KV cache keeps keys and values in, 'f32', or 'f16' / 'bf16' "
          "(half the memory; each rounded once, as llama.cpp's default f16 "
          "cache), or llama.cpp's block types 'q8_0', 'q4_0', 'q4_1', "
          "'q5_0', 'q5_1', 'iq4_nl' (head_dim a multiple of 32).")
      .def(
          "state_dict",
          [](const CausalLM& lm) {
            nb::dict out;
            for (const auto& [name, v] : lm.named_parameters())
              out[name.c_str()] = nb::cast(v.value());
            return out;
          },
          "{name: Tensor} of the parameters (the mapped tensors, not "
          "copies).")
      .def("save", &CausalLM::save, nb::arg("directory"),
           "config.json + model.safetensors into an existing directory.");

  nb::class_<ModelTokenizer>(
      m, "Tokenizer",
      "The tokenizer of a checkpoint: tokenizer.json, a GGUF vocabulary or "
      "the bytes of a `tessel train` model.")
      .def_static("load", &ModelTokenizer::load, nb::arg("model"),
                  "The tokenizer that goes with a checkpoint path (what "
                  "CausalLM.load takes).")
      .def("encode", &ModelTokenizer::encode, nb::arg("text"),
           nb::arg("add_special") = true, nb::arg("parse_special") = true,
           "Token ids of `text` (with BOS where the checkpoint adds it; "
           "special tokens written in the text are parsed).")
      .def(
          "decode",
          [](const ModelTokenizer& tok, const std::vector<std::int64_t>& ids) {
            const std::string text = tok.decode(ids);
            // GGUF vocabularies give raw bytes (possibly a partial UTF-8
            // sequence, as llama.cpp's piece does): replace what is invalid.
            return nb::steal<nb::str>(PyUnicode_DecodeUTF8(
                text.data(), static_cast<Py_ssize_t>(text.size()), "replace"));
          },
          nb::arg("ids"), "The text of `ids` (invalid UTF-8 replaced).")
      .def(
          "decode_bytes",
          [](const ModelTokenizer& tok, const std::vector<std::int64_t>& ids) {
            const std::string text = tok.decode(ids);
            return nb::bytes(text.data(), text.size());
          },
          nb::arg("ids"), "The bytes of `ids`, as the vocabulary gives them.")
      .def_prop_ro("vocab_size", &ModelTokenizer::vocab_size)
      .def_prop_ro("bos_id", &ModelTokenizer::bos_id)
      .def_prop_ro("adds_bos", &ModelTokenizer::adds_bos)
      .def_prop_ro("end_ids", &ModelTokenizer::end_ids,
                   "The tokens after which generation stops.")
      .def_prop_ro("chat_template", &ModelTokenizer::chat_template,
                   "The checkpoint's Jinja chat template, or None.");
}

}  // namespace tessel::python
