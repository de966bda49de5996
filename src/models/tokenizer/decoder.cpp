#include "models/tokenizer/decoder.hpp"

#include <nlohmann/json.hpp>

#include "models/tokenizer/byte_level.hpp"
#include "models/tokenizer/json_fields.hpp"
#include "models/tokenizer/replace.hpp"
#include "models/tokenizer/utf8.hpp"

namespace tessel::tok {

namespace {

// How far Replace steps may grow the decoded text: chains of them could
// otherwise grow it exponentially (E3001, not gigabytes).
constexpr std::size_t kMaxGrowth = 64;
constexpr std::size_t kMaxGrowthSlack = 1 << 16;

// `s` with every `from` replaced by `to`; `budget` is what the whole text
// may still grow by, and shrinks by what this adds.
void replace_all(std::string& s, const std::string& from, const std::string& to,
                 std::size_t& budget, std::size_t input) {
  const std::size_t before = s.size();
  if (!replace_all_within(s, from, to, before + budget)) {
    malformed("decoder",
              fmt::format("its Replace steps grow the text of {} tokens "
                          "past {} times its size",
                          input, kMaxGrowth));
  }
  budget -= s.size() > before ? s.size() - before : 0;
}

// "<0xAB>" -> 0xAB, or -1.
int byte_token(const std::string& t) {
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
  int v = 0;
  for (int i = 3; i < 5; ++i) {
    const char c = t[i];
    const int d = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                         : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

std::size_t json_count(const nlohmann::json& spec, const char* key,
                       const std::string& field) {
  const auto& v = json_member(spec, key, field);
  if (!v.is_number_unsigned()) malformed(field + "." + key, "expected a count");
  return v.get<std::size_t>();
}

}  // namespace

Decoder Decoder::from_json(const nlohmann::json& spec,
                           const std::string& field) {
  Decoder d;
  if (!spec.is_null()) {
    d.none_ = false;
    d.add(spec, field);
  }
  return d;
}

void Decoder::add(const nlohmann::json& spec, const std::string& field) {
  const std::string type = json_string(spec, "type", field);
  if (type == "Sequence") {
    const auto& list = json_array(spec, "decoders", field);
    for (std::size_t i = 0; i < list.size(); ++i) {
      add(list[i], field + ".decoders[" + std::to_string(i) + "]");
    }
  } else if (type == "ByteLevel") {
    steps_.push_back({Kind::ByteLevel, {}, {}});
  } else if (type == "Replace") {
    const auto& pattern = json_object(spec, "pattern", field);
    unsupported_unless(pattern.contains("String"), field + ".pattern",
                       "a Regex pattern", "String");
    steps_.push_back({Kind::Replace,
                      json_string(pattern, "String", field + ".pattern"),
                      json_string(spec, "content", field)});
  } else if (type == "ByteFallback") {
    steps_.push_back({Kind::ByteFallback, {}, {}});
  } else if (type == "Fuse") {
    steps_.push_back({Kind::Fuse, {}, {}});
  } else if (type == "Strip") {
    Step s{Kind::Strip, {}, json_string(spec, "content", field)};
    s.start = json_count(spec, "start", field);
    s.stop = json_count(spec, "stop", field);
    steps_.push_back(std::move(s));
  } else {
    unsupported(field + ".type", type,
                "Sequence, ByteLevel, Replace, ByteFallback, Fuse, Strip");
  }
}

std::string Decoder::decode(std::vector<std::string> tokens) const {
  if (none_) {
    std::string out;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      if (i > 0) out.push_back(' ');
      out += tokens[i];
    }
    return out;
  }
  std::size_t total = 0;
  for (const std::string& t : tokens) total += t.size();
  std::size_t budget = kMaxGrowth * total + kMaxGrowthSlack;
  for (const Step& step : steps_) {
    switch (step.kind) {
      case Kind::ByteLevel: {
        // A token with a character outside the alphabet stays as it is.
        std::string bytes;
        for (const std::string& t : tokens) {
          if (!byte_level_decode(t, bytes)) bytes += t;
        }
        tokens.assign(1, utf8_lossy(bytes));
        break;
      }
      case Kind::Replace:
        for (std::string& t : tokens) {
          replace_all(t, step.pattern, step.content, budget, tokens.size());
        }
        break;
      case Kind::ByteFallback: {
        std::vector<std::string> out;
        std::string pending;
        const auto flush = [&] {
          if (pending.empty()) return;
          if (utf8_invalid_offset(pending) == std::string::npos) {
            out.push_back(pending);
          } else {
            for (std::size_t i = 0; i < pending.size(); ++i) {
              out.emplace_back("\xEF\xBF\xBD");
            }
          }
          pending.clear();
        };
        for (std::string& t : tokens) {
          const int b = byte_token(t);
          if (b >= 0) {
            pending.push_back(static_cast<char>(b));
          } else {
            flush();
            out.push_back(std::move(t));
          }
        }
        flush();
        tokens = std::move(out);
        break;
      }
      case Kind::Fuse: {
        std::string all;
        for (const std::string& t : tokens) all += t;
        tokens.assign(1, std::move(all));
        break;
      }
      case Kind::Strip:
        // tokenizers strips whole characters equal to `content` (one
        // char): up to `start` at the front, `stop` at the back.
        for (std::string& t : tokens) {
          const std::string& c = step.content;
          if (c.empty()) continue;
          std::size_t front = 0, back = 0;
          while (front < step.start &&
                 t.compare(front * c.size(), c.size(), c) == 0 &&
                 (front + 1) * c.size() <= t.size()) {
            ++front;
          }
          const std::size_t left = t.size() - front * c.size();
          while (back < step.stop && (back + 1) * c.size() <= left &&
                 t.compare(t.size() - (back + 1) * c.size(), c.size(), c) ==
                     0) {
            ++back;
          }
          t = t.substr(front * c.size(), left - back * c.size());
        }
        break;
    }
  }
  std::string out;
  for (const std::string& t : tokens) out += t;
  return out;
}

}  // namespace tessel::tok
