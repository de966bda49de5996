#define PCRE2_CODE_UNIT_WIDTH 8
#include "models/tokenizer/regex.hpp"

#include <pcre2.h>

#include "core/check.hpp"
#include "models/tokenizer/utf8.hpp"

namespace tessel::tok {

namespace {

// Bounds on one match, so that a pattern from a file that backtracks
// catastrophically fails (E3001) instead of hanging or exhausting memory:
// PCRE2's default match (and depth) limit, stated here, and a heap limit
// for the interpreter far below PCRE2's default of 20 GB. The match limit
// counts per match, so the patterns tokenizers ship (whose matches are
// words and runs of spaces) stay inside it.
constexpr std::uint32_t kMatchLimit = 10'000'000;
constexpr std::uint32_t kHeapLimitKiB = 256 * 1024;

// Per-thread match data and JIT stack: matching allocates nothing. Only
// group 0 is read, so one ovector pair serves every pattern.
struct MatchScratch {
  pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
  // The default 32 KiB JIT stack overflows on long runs (a megabyte of
  // spaces under \s+(?!\S)); 8 MiB covers what a text can hold in memory.
  pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 8 << 20, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  MatchScratch() {
    pcre2_jit_stack_assign(context, nullptr, stack);
    pcre2_set_match_limit(context, kMatchLimit);
    pcre2_set_depth_limit(context, kMatchLimit);
    pcre2_set_heap_limit(context, kHeapLimitKiB);
  }
  ~MatchScratch() {
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(stack);
    pcre2_match_data_free(data);
  }
};

MatchScratch& scratch() {
  thread_local MatchScratch s;
  return s;
}

// Unicode's White_Space property as a class body. PCRE2 10.42's \s also
// matches U+180E (no longer a space since Unicode 6.3) while the peers'
// \s (oniguruma in tokenizers, llama.cpp's own tables) do not.
constexpr std::string_view kWhiteSpace =
    R"(\t-\r\x{20}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029})"
    R"(\x{202F}\x{205F}\x{3000})";

// `pattern` with \s spelt as that class (inside a class, its body) and \S
// outside a class as its complement.
std::string white_space_as_property(std::string_view p) {
  std::string out;
  bool in_class = false;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      const char n = p[++i];
      if (n == 's') {
        out += in_class ? std::string(kWhiteSpace)
                        : "[" + std::string(kWhiteSpace) + "]";
      } else if (n == 'S' && !in_class) {
        out += "[^" + std::string(kWhiteSpace) + "]";
      } else {
        out += c;
        out += n;
      }
      continue;
    }
    out += c;
    if (!in_class && c == '[') {
      in_class = true;
      // A ']' first in the class (after an optional '^') is literal.
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      if (i + 1 < p.size() && p[i + 1] == ']') out += p[++i];
    } else if (in_class && c == '[' && i + 1 < p.size() && p[i + 1] == ':') {
      const std::size_t end = p.find(":]", i + 2);  // [:alpha:]
      if (end != std::string_view::npos) {
        out.append(p.substr(i + 1, end + 1 - i));
        i = end + 1;
      }
    } else if (in_class && c == ']') {
      in_class = false;
    }
  }
  return out;
}

}  // namespace

Regex::Regex(const std::string& pattern, std::string_view field)
    : pattern_(pattern), field_(field) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  const std::string rewritten = white_space_as_property(pattern);
  pcre2_code* code = pcre2_compile(
      reinterpret_cast<PCRE2_SPTR>(rewritten.data()), rewritten.size(),
      PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof(message));
    detail::fail(ErrorCode::MalformedFile, "tokenizer",
                 "{}: pattern {:?} does not compile at character {}: {}", field,
                 pattern, offset, reinterpret_cast<char*>(message));
  }
  code_ = code;
  jit_ = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
}

Regex::~Regex() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

void Regex::find_all(std::string_view text, std::vector<Span>& out) const {
  auto* code = static_cast<pcre2_code*>(code_);
  MatchScratch& s = scratch();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(s.data);
  std::size_t start = 0;
  while (start < text.size()) {
    const int rc = jit_ ? pcre2_jit_match(code, subject, text.size(), start, 0,
                                          s.data, s.context)
                        : pcre2_match(code, subject, text.size(), start,
                                      PCRE2_NO_UTF_CHECK, s.data, s.context);
    if (rc == PCRE2_ERROR_NOMATCH) return;
    TESSEL_CHECK(rc != PCRE2_ERROR_MATCHLIMIT && rc != PCRE2_ERROR_DEPTHLIMIT &&
                     rc != PCRE2_ERROR_HEAPLIMIT &&
                     rc != PCRE2_ERROR_JIT_STACKLIMIT,
                 MalformedFile, "tokenizer",
                 "{}: pattern {:?} exceeds the match limits at byte {} of a "
                 "text of {} bytes (catastrophic backtracking; PCRE2 error {})",
                 field_, pattern_, start, text.size(), rc);
    TESSEL_CHECK(rc >= 0, MalformedFile, "tokenizer",
                 "{}: pattern {:?} failed on a text of {} bytes (PCRE2 error "
                 "{})",
                 field_, pattern_, text.size(), rc);
    const std::size_t b = ovector[0], e = ovector[1];
    if (e > b) {
      out.push_back({b, e});
      start = e;
    } else {
      start = b + static_cast<std::size_t>(
                      utf8_sequence_length(static_cast<unsigned char>(
                          text[b < text.size() ? b : text.size() - 1])));
    }
  }
}

}  // namespace tessel::tok
