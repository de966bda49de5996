#include "models/tokenizer/normalizer.hpp"

#include <utf8proc.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "models/tokenizer/json_fields.hpp"
#include "models/tokenizer/replace.hpp"

namespace tessel::tok {

namespace {

// Code points below `limit` pass the form unchanged: below U+0300 nothing
// composes, reorders or decomposes canonically except the precomposed
// Latin-1 letters (from U+00C0), and only ASCII has no compatibility
// mapping (U+00A0 has one). Texts that are all below it skip utf8proc.
unsigned char unchanged_below(utf8proc_option_t options) {
  if (options & UTF8PROC_COMPAT) return 0x80;
  if (options & UTF8PROC_DECOMPOSE) return 0xC3;  // lead bytes < U+00C0
  return 0xCC;                                    // lead bytes < U+0300
}

void unicode_form(std::string_view in, std::string& out,
                  utf8proc_option_t options) {
  const unsigned char limit = unchanged_below(options);
  bool simple = true;
  for (const char c : in) {
    if (static_cast<unsigned char>(c) >= limit) {
      simple = false;
      break;
    }
  }
  if (simple) {
    out.assign(in);
    return;
  }
  utf8proc_uint8_t* result = nullptr;
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(in.data()),
                   static_cast<utf8proc_ssize_t>(in.size()), &result,
                   static_cast<utf8proc_option_t>(options | UTF8PROC_STABLE));
  // The text is valid UTF-8 (checked on entry), so utf8proc cannot fail
  // except by running out of memory.
  if (n < 0) throw std::bad_alloc();
  out.assign(reinterpret_cast<const char*>(result),
             static_cast<std::size_t>(n));
  std::free(result);
}

// How far Prepend and Replace steps may grow a text: chains of Replace
// steps could otherwise grow it exponentially (E3001, not gigabytes).
constexpr std::size_t kMaxGrowth = 64;
constexpr std::size_t kMaxGrowthSlack = 1 << 16;

[[noreturn]] void too_long(std::size_t input, std::size_t limit) {
  malformed("normalizer",
            fmt::format("its Prepend and Replace steps grow a text of {} "
                        "bytes past {} bytes",
                        input, limit));
}

void replace_all(std::string& s, const std::string& from, const std::string& to,
                 std::size_t input, std::size_t limit) {
  if (!replace_all_within(s, from, to, limit)) too_long(input, limit);
}

}  // namespace

Normalizer Normalizer::from_json(const nlohmann::json& spec,
                                 const std::string& field) {
  Normalizer n;
  if (!spec.is_null()) n.add(spec, field);
  return n;
}

void Normalizer::add(const nlohmann::json& spec, const std::string& field) {
  const std::string type = json_string(spec, "type", field);
  if (type == "Sequence") {
    const auto& list = json_array(spec, "normalizers", field);
    for (std::size_t i = 0; i < list.size(); ++i) {
      add(list[i], field + ".normalizers[" + std::to_string(i) + "]");
    }
  } else if (type == "NFC") {
    steps_.push_back({Kind::Nfc, {}, {}});
  } else if (type == "NFD") {
    steps_.push_back({Kind::Nfd, {}, {}});
  } else if (type == "NFKC") {
    steps_.push_back({Kind::Nfkc, {}, {}});
  } else if (type == "NFKD") {
    steps_.push_back({Kind::Nfkd, {}, {}});
  } else if (type == "Prepend") {
    steps_.push_back({Kind::Prepend, {}, json_string(spec, "prepend", field)});
  } else if (type == "Replace") {
    const auto& pattern = json_object(spec, "pattern", field);
    unsupported_unless(pattern.contains("String"), field + ".pattern",
                       "a Regex pattern", "String");
    steps_.push_back({Kind::Replace,
                      json_string(pattern, "String", field + ".pattern"),
                      json_string(spec, "content", field)});
  } else {
    unsupported(field + ".type", type,
                "Sequence, NFC, NFD, NFKC, NFKD, Prepend, Replace");
  }
}

void Normalizer::apply(std::string_view text, std::string& out) const {
  const std::size_t limit = kMaxGrowth * text.size() + kMaxGrowthSlack;
  out.assign(text);
  std::string tmp;
  for (const Step& step : steps_) {
    switch (step.kind) {
      case Kind::Nfc:
      case Kind::Nfd:
      case Kind::Nfkc:
      case Kind::Nfkd: {
        const utf8proc_option_t options =
            step.kind == Kind::Nfc   ? UTF8PROC_COMPOSE
            : step.kind == Kind::Nfd ? UTF8PROC_DECOMPOSE
            : step.kind == Kind::Nfkc
                ? static_cast<utf8proc_option_t>(UTF8PROC_COMPOSE |
                                                 UTF8PROC_COMPAT)
                : static_cast<utf8proc_option_t>(UTF8PROC_DECOMPOSE |
                                                 UTF8PROC_COMPAT);
        unicode_form(out, tmp, options);
        out.swap(tmp);
        break;
      }
      case Kind::Prepend:
        // tokenizers prepends only to a non-empty string.
        if (out.empty()) break;
        if (step.content.size() > limit - std::min(limit, out.size())) {
          too_long(text.size(), limit);
        }
        out.insert(0, step.content);
        break;
      case Kind::Replace:
        replace_all(out, step.pattern, step.content, text.size(), limit);
        break;
    }
  }
}

}  // namespace tessel::tok
