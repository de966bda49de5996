// Pre-tokenisation: cutting a text into the pieces that BPE encodes one by
// one. A chain of steps, each cutting every piece of the step before:
// tokenizers' Split (a regex or literal pattern with one of its five
// delimiter behaviours), Digits, and ByteLevel (optional prefix space and
// GPT-2's regex; the byte-to-character mapping itself is left to the
// vocabulary, see byte_level.hpp). llama.cpp's pre-tokenisers are chains of
// Isolated regex splits.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "models/tokenizer/regex.hpp"

namespace tessel::tok {

// GPT-2's pattern, as tokenizers' ByteLevel and llama.cpp's gpt-2
// pre-tokeniser use it.
inline constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

enum class SplitBehavior {
  Removed,
  Isolated,
  MergedWithPrevious,
  MergedWithNext,
  Contiguous
};

class PreTokenizer {
 public:
  // tokenizer.json's "pre_tokenizer" (null: the text is one piece). E3001
  // naming `field` for a malformed or unsupported one; a ByteLevel step
  // must come last (it hands bytes to the model).
  static PreTokenizer from_json(const nlohmann::json& spec,
                                const std::string& field);
  // llama.cpp: each pattern an Isolated split of the pieces before.
  static PreTokenizer from_patterns(const std::vector<std::string>& patterns,
                                    const std::string& field);

  // Whether the chain ends in ByteLevel (the model then encodes bytes).
  bool byte_level() const { return byte_level_; }

  // Calls fn(piece) for each piece of `text`, in order. Pieces are views
  // of `text` or of a buffer that lives for the call.
  template <class F>
  void run(std::string_view text, F&& fn) const {
    run_from(0, text, fn);
  }

 private:
  struct Step {
    enum class Kind { Split, ByteLevel } kind = Kind::Split;
    std::unique_ptr<Regex> regex;  // Split: the pattern, or
    std::string literal;           // a literal string
    SplitBehavior behavior = SplitBehavior::Isolated;
    bool invert = false;
    bool add_prefix_space = false;  // ByteLevel
  };
  void add(const nlohmann::json& spec, const std::string& field);
  // The pieces of `text` under step `s`, as spans of `text`.
  void cut(const Step& s, std::string_view text, std::vector<Span>& out) const;
  static std::vector<Span>& scratch(std::size_t depth);

  template <class F>
  void run_from(std::size_t depth, std::string_view text, F& fn) const {
    if (depth == steps_.size()) {
      fn(text);
      return;
    }
    const Step& s = steps_[depth];
    std::string prefixed;
    if (s.kind == Step::Kind::ByteLevel && s.add_prefix_space &&
        !text.starts_with(' ')) {
      prefixed.reserve(text.size() + 1);
      prefixed.push_back(' ');
      prefixed.append(text);
      text = prefixed;
    }
    if (s.kind == Step::Kind::ByteLevel && !s.regex) {
      run_from(depth + 1, text, fn);
      return;
    }
    std::vector<Span>& spans = scratch(depth);
    const std::size_t first = spans.size();
    // The spans of this call leave the scratch level however it ends (a
    // regex that exceeds its limits throws).
    struct Release {
      std::size_t depth, first;
      ~Release() { scratch(depth).resize(first); }
    } release{depth, first};
    cut(s, text, spans);
    const std::size_t last = spans.size();
    for (std::size_t i = first; i < last; ++i) {
      // `spans` may grow (and move) under deeper steps: index, not iterate.
      const Span span = scratch(depth)[i];
      run_from(depth + 1, text.substr(span.begin, span.end - span.begin), fn);
    }
  }

  std::vector<Step> steps_;
  bool byte_level_ = false;
};

}  // namespace tessel::tok
