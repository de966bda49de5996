// Sharded safetensors checkpoints and their model.safetensors.index.json.
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/check.hpp"
#include "io/atomic_file.hpp"
#include "tessel/io/safetensors.hpp"

namespace tessel {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kIndexName = "model.safetensors.index.json";

[[noreturn]] void bad_index(const fs::path& index, const std::string& what) {
  throw FormatError(ErrorCode::MalformedFile,
                    fmt::format("[load_safetensors_checkpoint] {}: {}",
                                index.string(), what));
}

// A shard must be a plain file name in the index's directory.
void check_shard_name(const fs::path& index, const std::string& shard) {
  if (shard.empty() || shard == "." || shard == ".." ||
      shard.find('/') != std::string::npos ||
      shard.find('\\') != std::string::npos) {
    bad_index(index, fmt::format("shard name '{}' is not a file name in the "
                                 "index's directory",
                                 shard));
  }
}

SafetensorsFile load_by_index(const fs::path& index, MapMode mode) {
  const std::vector<std::uint8_t> bytes = io::read_file(index);
  json j;
  try {
    j = json::parse(bytes.begin(), bytes.end());
  } catch (const json::exception& e) {
    bad_index(index, fmt::format("not valid JSON ({})", e.what()));
  }
  const auto map = j.is_object() ? j.find("weight_map") : j.end();
  if (map == j.end() || !map->is_object()) {
    bad_index(index, "no weight_map object");
  }
  // shard -> the tensors the index puts in it
  std::map<std::string, std::set<std::string>> shards;
  for (const auto& [name, shard] : map->items()) {
    if (!shard.is_string()) {
      bad_index(index, fmt::format("the shard of '{}' is not a string", name));
    }
    check_shard_name(index, shard.get<std::string>());
    shards[shard.get<std::string>()].insert(name);
  }
  SafetensorsFile out;
  for (const auto& [shard, names] : shards) {
    SafetensorsFile file = load_safetensors(index.parent_path() / shard, mode);
    if (out.metadata.empty()) out.metadata = file.metadata;
    // Every tensor of the shard is one the index names (names within a
    // file are unique), so equal counts mean the same set.
    std::set<std::string> found;
    for (Tensor& t : file.tensors) {
      if (!names.count(t.name())) {
        bad_index(index, fmt::format("shard '{}' holds '{}', which the index "
                                     "does not give it",
                                     shard, t.name()));
      }
      found.insert(t.name());
      out.tensors.push_back(std::move(t));
    }
    for (const std::string& name : names) {
      if (!found.count(name)) {
        bad_index(index,
                  fmt::format("'{}' is not in its shard '{}'", name, shard));
      }
    }
  }
  return out;
}

}  // namespace

SafetensorsFile load_safetensors_checkpoint(const fs::path& path,
                                            MapMode mode) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (fs::exists(path / kIndexName, ec)) {
      return load_by_index(path / kIndexName, mode);
    }
    return load_safetensors(path / "model.safetensors", mode);
  }
  if (path.filename().string().ends_with(".index.json")) {
    return load_by_index(path, mode);
  }
  return load_safetensors(path, mode);
}

std::vector<fs::path> save_safetensors_sharded(
    const fs::path& dir, const std::vector<Tensor>& tensors,
    std::int64_t max_shard_bytes,
    const std::map<std::string, std::string>& metadata) {
  TESSEL_CHECK(max_shard_bytes > 0, BadShape, "save_safetensors_sharded",
               "max_shard_bytes must be positive, not {}", max_shard_bytes);
  std::vector<std::vector<Tensor>> shards;
  std::int64_t filled = 0;
  std::int64_t total = 0;
  for (const Tensor& t : tensors) {
    if (shards.empty() || filled + t.nbytes() > max_shard_bytes) {
      shards.emplace_back();
      filled = 0;
    }
    shards.back().push_back(t);
    filled += t.nbytes();
    total += t.nbytes();
  }
  if (shards.empty()) shards.emplace_back();
  std::vector<fs::path> written;
  if (shards.size() == 1) {
    written.push_back(dir / "model.safetensors");
    save_safetensors(written.back(), shards[0], metadata);
    return written;
  }
  json weight_map = json::object();
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const std::string name =
        fmt::format("model-{:05}-of-{:05}.safetensors", i + 1, shards.size());
    for (const Tensor& t : shards[i]) weight_map[t.name()] = name;
    written.push_back(dir / name);
    save_safetensors(written.back(), shards[i], metadata);
  }
  const json index = {{"metadata", {{"total_size", total}}},
                      {"weight_map", weight_map}};
  const std::string text = index.dump(2) + "\n";
  written.push_back(dir / kIndexName);
  io::write_file_atomically(
      written.back(),
      {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()}, {});
  return written;
}

}  // namespace tessel
