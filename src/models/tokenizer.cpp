#include "tessel/models/tokenizer.hpp"

#include "core/check.hpp"

namespace tessel {

std::vector<std::int64_t> ByteTokenizer::encode(std::string_view text) const {
  std::vector<std::int64_t> ids;
  ids.reserve(text.size());
  for (const char c : text) ids.push_back(static_cast<unsigned char>(c));
  return ids;
}

std::string ByteTokenizer::decode(const std::vector<std::int64_t>& ids) const {
  std::string text;
  text.reserve(ids.size());
  for (const std::int64_t id : ids) {
    TESSEL_CHECK(id >= 0 && id < kVocabSize, OutOfRange, "ByteTokenizer",
                 "token id {} is not a byte", id);
    text.push_back(static_cast<char>(static_cast<unsigned char>(id)));
  }
  return text;
}

}  // namespace tessel
