#include "io/hf_checkpoint_files.hpp"

#include <fmt/format.h>

#include <charconv>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

namespace tessel::io {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Some of the tensors of another source, renumbered.
class SubsetSource final : public TensorSource {
 public:
  SubsetSource(TensorSource& inner, std::vector<std::size_t> indices)
      : inner_(inner), indices_(std::move(indices)) {}
  std::size_t size() const override { return indices_.size(); }
  const TensorSpec& spec(std::size_t i) const override {
    return inner_.spec(indices_[i]);
  }
  const std::uint8_t* bytes(std::size_t i) override {
    return inner_.bytes(indices_[i]);
  }
  void read(std::size_t i, std::int64_t offset,
            std::span<std::uint8_t> out) override {
    inner_.read(indices_[i], offset, out);
  }
  void written(std::size_t i, std::int64_t end) override {
    inner_.written(indices_[i], end);
  }

 private:
  TensorSource& inner_;
  std::vector<std::size_t> indices_;
};

}  // namespace

std::pair<std::int64_t, std::string> hf_tensor_order(const std::string& name) {
  constexpr std::string_view layers = "model.layers.";
  if (name.starts_with(layers)) {
    std::int64_t i = 0;
    const char* begin = name.data() + layers.size();
    std::from_chars(begin, name.data() + name.size(), i);
    return {1 + i, name};
  }
  if (name.starts_with("model.embed_tokens")) return {0, name};
  if (name.starts_with("lm_head")) return {INT64_MAX, name};
  return {INT64_MAX - 1, name};
}

const char* torch_dtype_name(DType d) {
  switch (d) {
    case DType::F16: return "float16";
    case DType::BF16: return "bfloat16";
    case DType::F64: return "float64";
    default: return "float32";
  }
}

void refuse_to_replace_foreign(const fs::path& out, const char* command) {
  std::error_code ec;
  if (!fs::exists(out, ec)) return;
  const auto ours = [](const std::string& n) {
    return n == "config.json" || n == "generation_config.json" ||
           n == "model.safetensors.index.json" || n == "tokenizer.json" ||
           n == "tokenizer_config.json" || n == "special_tokens_map.json" ||
           n == "chat_template.jinja" ||
           (n.starts_with("model") && n.ends_with(".safetensors"));
  };
  bool only_ours = fs::is_directory(out, ec);
  if (only_ours) {
    for (const auto& e : fs::directory_iterator(out, ec)) {
      only_ours = only_ours && e.is_regular_file(ec) &&
                  ours(e.path().filename().string());
    }
  }
  if (!only_ours || ec) {
    throw_error(
        ErrorCode::BadConfig,
        fmt::format("[{}] '{}' exists and holds more than a checkpoint's "
                    "files; the output directory replaces its target "
                    "whole, so choose a new or empty directory",
                    command, out.string()));
  }
}

void write_text_file(const fs::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f.write(text.data(), static_cast<std::streamsize>(text.size()));
  f.close();
  if (!f) {
    throw_error(ErrorCode::IoFailure,
                fmt::format("cannot write {}", path.string()));
  }
}

void write_tokenizer_files(const fs::path& dir, const HfTokenizerFiles& files) {
  if (!files.tokenizer_json.empty()) {
    write_text_file(dir / "tokenizer.json", files.tokenizer_json);
  }
  if (!files.tokenizer_config_json.empty()) {
    write_text_file(dir / "tokenizer_config.json", files.tokenizer_config_json);
  }
}

void write_safetensors_shards(const fs::path& dir, TensorSource& source,
                              std::int64_t limit) {
  std::vector<std::vector<std::size_t>> shards;
  std::int64_t filled = 0;
  for (std::size_t i = 0; i < source.size(); ++i) {
    const std::int64_t n = source.spec(i).nbytes();
    if (shards.empty() || (filled > 0 && filled + n > limit)) {
      shards.emplace_back();
      filled = 0;
    }
    shards.back().push_back(i);
    filled += n;
  }
  const std::map<std::string, std::string> metadata{{"format", "pt"}};
  if (shards.size() <= 1) {
    SubsetSource all(source,
                     shards.empty() ? std::vector<std::size_t>{} : shards[0]);
    save_safetensors(dir / "model.safetensors", all, metadata);
    return;
  }
  json weight_map = json::object();
  std::int64_t total = 0;
  for (std::size_t s = 0; s < shards.size(); ++s) {
    const std::string name =
        fmt::format("model-{:05}-of-{:05}.safetensors", s + 1, shards.size());
    for (const std::size_t i : shards[s]) {
      weight_map[source.spec(i).name] = name;
      total += source.spec(i).nbytes();
    }
    SubsetSource part(source, shards[s]);
    save_safetensors(dir / name, part, metadata);
  }
  const json index = {{"metadata", {{"total_size", total}}},
                      {"weight_map", weight_map}};
  write_text_file(dir / "model.safetensors.index.json", index.dump(2) + "\n");
}

}  // namespace tessel::io
