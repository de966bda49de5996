// A vocabulary: token strings (as the file stores them) and their ids,
// looked up by string_view without building a std::string.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tessel::tok {

using Id = std::int32_t;

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    return std::hash<std::string_view>{}(s);
  }
};

template <class V>
using StringMap =
    std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

struct Vocab {
  std::vector<std::string> tokens;  // by id; gaps are empty strings
  StringMap<Id> ids;

  std::optional<Id> find(std::string_view token) const {
    const auto it = ids.find(token);
    if (it == ids.end()) return std::nullopt;
    return it->second;
  }
  Id size() const { return static_cast<Id>(tokens.size()); }
};

}  // namespace tessel::tok
