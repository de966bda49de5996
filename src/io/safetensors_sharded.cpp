// Sharded safetensors checkpoints and their model.safetensors.index.json.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/check.hpp"
#include "io/atomic_file.hpp"
#include "io/json_strict.hpp"
#include "io/read_file.hpp"
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
  json j;
  if (const auto defect = io::parse_json_strict(io::read_text_file(index), j)) {
    bad_index(index, fmt::format("not valid JSON ({})", defect->message));
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
    // A quantised tensor's siblings are in its own shard.
    out.quantization.merge(file.quantization);
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
    const std::map<std::string, std::string>& metadata,
    const std::map<std::string, AffineQuantization>& quantization) {
  constexpr const char* op = "save_safetensors_sharded";
  TESSEL_CHECK(max_shard_bytes > 0, BadShape, op,
               "max_shard_bytes must be positive, not {}", max_shard_bytes);
  // A quantised tensor, its scale and zero point form one unit: listed
  // siblings follow their tensor, and those not listed are added to its
  // shard by save_safetensors.
  std::map<std::string, std::string> owner_of;  // sibling -> tensor
  for (const auto& [name, p] : quantization) {
    TESSEL_CHECK(std::any_of(tensors.begin(), tensors.end(),
                             [&, &name = name](const Tensor& t) {
                               return t.defined() && t.name() == name;
                             }),
                 BadShape, op,
                 "quantization is given for '{}' but no tensor has that name",
                 name);
    owner_of[safetensors_scale_name(name)] = name;
    if (p.zero_point.defined()) {
      owner_of[safetensors_zero_point_name(name)] = name;
    }
  }
  for (const auto& [name, p] : quantization) {
    TESSEL_CHECK(!owner_of.count(name), BadShape, op,
                 "tensor '{}' cannot be quantised and the scale or zero point "
                 "of '{}' at once",
                 name, owner_of.count(name) ? owner_of.at(name) : name);
  }
  struct Unit {
    std::vector<Tensor> tensors;
    std::vector<std::string> names;  // everything the unit writes
    std::int64_t bytes = 0;
  };
  std::vector<Unit> units;
  std::map<std::string, std::size_t> unit_of;
  for (const Tensor& t : tensors) {
    if (t.defined() && owner_of.count(t.name())) continue;
    unit_of[t.defined() ? t.name() : std::string()] = units.size();
    units.push_back({{t},
                     {t.defined() ? t.name() : std::string()},
                     t.defined() ? t.nbytes() : 0});
  }
  for (const auto& [name, p] : quantization) {
    Unit& u = units[unit_of.at(name)];
    for (const auto& [sibling, param] :
         {std::pair{safetensors_scale_name(name), p.scale},
          std::pair{safetensors_zero_point_name(name), p.zero_point}}) {
      if (!param.defined()) continue;
      u.names.push_back(sibling);
      u.bytes += param.nbytes();
    }
  }
  for (const Tensor& t : tensors) {
    if (!t.defined() || !owner_of.count(t.name())) continue;
    units[unit_of.at(owner_of.at(t.name()))].tensors.push_back(t);
  }
  struct Shard {
    std::vector<Tensor> tensors;
    std::vector<std::string> names;
    std::map<std::string, AffineQuantization> quantization;
  };
  std::vector<Shard> shards;
  std::int64_t filled = 0;
  std::int64_t total = 0;
  for (Unit& u : units) {
    if (shards.empty() || filled + u.bytes > max_shard_bytes) {
      shards.emplace_back();
      filled = 0;
    }
    Shard& shard = shards.back();
    for (Tensor& t : u.tensors) shard.tensors.push_back(std::move(t));
    for (std::string& n : u.names) {
      if (const auto q = quantization.find(n); q != quantization.end()) {
        shard.quantization.insert(*q);
      }
      shard.names.push_back(std::move(n));
    }
    filled += u.bytes;
    total += u.bytes;
  }
  if (shards.empty()) shards.emplace_back();
  std::vector<fs::path> written;
  if (shards.size() == 1) {
    written.push_back(dir / "model.safetensors");
    save_safetensors(written.back(), shards[0].tensors, metadata,
                     shards[0].quantization);
    return written;
  }
  json weight_map = json::object();
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const std::string name =
        fmt::format("model-{:05}-of-{:05}.safetensors", i + 1, shards.size());
    for (const std::string& n : shards[i].names) weight_map[n] = name;
    written.push_back(dir / name);
    save_safetensors(written.back(), shards[i].tensors, metadata,
                     shards[i].quantization);
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
