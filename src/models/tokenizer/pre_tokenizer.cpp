#include "models/tokenizer/pre_tokenizer.hpp"

#include <deque>
#include <nlohmann/json.hpp>

#include "models/tokenizer/json_fields.hpp"

namespace tessel::tok {

namespace {

SplitBehavior parse_behavior(const std::string& name,
                             const std::string& field) {
  if (name == "Removed") return SplitBehavior::Removed;
  if (name == "Isolated") return SplitBehavior::Isolated;
  if (name == "MergedWithPrevious") return SplitBehavior::MergedWithPrevious;
  if (name == "MergedWithNext") return SplitBehavior::MergedWithNext;
  if (name == "Contiguous") return SplitBehavior::Contiguous;
  unsupported(field, name,
              "Removed, Isolated, MergedWithPrevious, MergedWithNext, "
              "Contiguous");
}

struct Part {
  Span span;
  bool match;
};

// tokenizers' NormalizedString::split: the parts (matches and the gaps
// between them, tiling the text) regrouped by the behaviour.
void regroup(const std::vector<Part>& parts, SplitBehavior behavior,
             std::vector<Span>& out) {
  const std::size_t first = out.size();
  switch (behavior) {
    case SplitBehavior::Isolated:
      for (const Part& p : parts) out.push_back(p.span);
      break;
    case SplitBehavior::Removed:
      for (const Part& p : parts) {
        if (!p.match) out.push_back(p.span);
      }
      break;
    case SplitBehavior::Contiguous: {
      bool previous = false;
      for (const Part& p : parts) {
        if (out.size() > first && p.match == previous) {
          out.back().end = p.span.end;
        } else {
          out.push_back(p.span);
        }
        previous = p.match;
      }
      break;
    }
    case SplitBehavior::MergedWithPrevious: {
      bool previous = false;
      for (const Part& p : parts) {
        if (p.match && !previous && out.size() > first) {
          out.back().end = p.span.end;
        } else {
          out.push_back(p.span);
        }
        previous = p.match;
      }
      break;
    }
    case SplitBehavior::MergedWithNext: {
      bool previous = false;
      for (std::size_t i = parts.size(); i-- > 0;) {
        const Part& p = parts[i];
        if (p.match && !previous && out.size() > first) {
          out.back().begin = p.span.begin;
        } else {
          out.push_back(p.span);
        }
        previous = p.match;
      }
      std::reverse(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
      break;
    }
  }
}

}  // namespace

std::vector<Span>& PreTokenizer::scratch(std::size_t depth) {
  thread_local std::deque<std::vector<Span>> levels;
  while (levels.size() <= depth) levels.emplace_back();
  return levels[depth];
}

PreTokenizer PreTokenizer::from_json(const nlohmann::json& spec,
                                     const std::string& field) {
  PreTokenizer p;
  if (!spec.is_null()) p.add(spec, field);
  for (std::size_t i = 0; i + 1 < p.steps_.size(); ++i) {
    unsupported_unless(p.steps_[i].kind != Step::Kind::ByteLevel, field,
                       "ByteLevel before another pre-tokenizer",
                       "ByteLevel as the last step");
  }
  p.byte_level_ =
      !p.steps_.empty() && p.steps_.back().kind == Step::Kind::ByteLevel;
  return p;
}

PreTokenizer PreTokenizer::from_patterns(
    const std::vector<std::string>& patterns, const std::string& field) {
  PreTokenizer p;
  for (const std::string& pattern : patterns) {
    Step s;
    s.regex = std::make_unique<Regex>(pattern, field);
    p.steps_.push_back(std::move(s));
  }
  return p;
}

void PreTokenizer::add(const nlohmann::json& spec, const std::string& field) {
  const std::string type = json_string(spec, "type", field);
  Step s;
  if (type == "Sequence") {
    const auto& list = json_array(spec, "pretokenizers", field);
    for (std::size_t i = 0; i < list.size(); ++i) {
      add(list[i], field + ".pretokenizers[" + std::to_string(i) + "]");
    }
    return;
  }
  if (type == "Split") {
    const auto& pattern = json_object(spec, "pattern", field);
    if (pattern.contains("Regex")) {
      s.regex = std::make_unique<Regex>(
          json_string(pattern, "Regex", field + ".pattern"),
          field + ".pattern.Regex");
    } else {
      s.literal = json_string(pattern, "String", field + ".pattern");
    }
    s.behavior = parse_behavior(json_string(spec, "behavior", field),
                                field + ".behavior");
    s.invert = json_bool(spec, "invert", field, false);
  } else if (type == "Digits") {
    // tokenizers splits on char::is_numeric, one character at a time.
    s.regex = std::make_unique<Regex>(R"(\p{N})", field);
    s.behavior = json_bool(spec, "individual_digits", field, false)
                     ? SplitBehavior::Isolated
                     : SplitBehavior::Contiguous;
  } else if (type == "ByteLevel") {
    s.kind = Step::Kind::ByteLevel;
    s.add_prefix_space = json_bool(spec, "add_prefix_space", field, true);
    if (json_bool(spec, "use_regex", field, true)) {
      s.regex = std::make_unique<Regex>(kGpt2Pattern, field);
    }
  } else {
    unsupported(field + ".type", type, "Sequence, Split, Digits, ByteLevel");
  }
  steps_.push_back(std::move(s));
}

void PreTokenizer::cut(const Step& s, std::string_view text,
                       std::vector<Span>& out) const {
  if (text.empty()) return;
  thread_local std::vector<Span> matches;
  thread_local std::vector<Part> parts;
  matches.clear();
  parts.clear();
  if (s.regex) {
    s.regex->find_all(text, matches);
  } else if (!s.literal.empty()) {
    for (std::size_t hit, pos = 0;
         (hit = text.find(s.literal, pos)) != std::string_view::npos;
         pos = hit + s.literal.size()) {
      matches.push_back({hit, hit + s.literal.size()});
    }
  }
  std::size_t prev = 0;
  for (const Span& m : matches) {
    if (m.begin > prev) parts.push_back({{prev, m.begin}, s.invert});
    parts.push_back({m, !s.invert});
    prev = m.end;
  }
  if (prev < text.size()) parts.push_back({{prev, text.size()}, s.invert});
  regroup(
      parts,
      s.kind == Step::Kind::ByteLevel ? SplitBehavior::Isolated : s.behavior,
      out);
}

}  // namespace tessel::tok
