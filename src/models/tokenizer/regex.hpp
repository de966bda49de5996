// A compiled pre-tokeniser pattern: PCRE2 in UTF + UCP mode (\p{L}, \p{N}
// and \s by Unicode properties), JIT-compiled. Subjects must be valid
// UTF-8 (the tokeniser checks each text once), so matching skips PCRE2's
// own check.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tessel::tok {

struct Span {
  std::size_t begin = 0, end = 0;
};

class Regex {
 public:
  // E3001 naming `field` (where the pattern came from) when PCRE2 refuses
  // the pattern.
  Regex(const std::string& pattern, std::string_view field);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Appends the non-empty matches of `text`, left to right and
  // non-overlapping (an empty match moves the search on one character).
  // E3001 naming the field when one match exceeds PCRE2's match, depth or
  // heap limit (catastrophic backtracking).
  void find_all(std::string_view text, std::vector<Span>& out) const;

  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  std::string field_;     // where the pattern came from, for errors
  void* code_ = nullptr;  // pcre2_code_8
  bool jit_ = false;
};

}  // namespace tessel::tok
