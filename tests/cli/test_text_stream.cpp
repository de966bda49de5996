// The streamed text of `tessel generate` on hand-made decoders: characters
// split over tokens wait until complete, lossy decoders' U+FFFD for a
// partial character is held back, SentencePiece's dropped leading space is
// kept, and the pieces always join to the whole decoding.
#include <gtest/gtest.h>

#include "cli/text_stream.hpp"

namespace {

using tessel::cli::complete_utf8_prefix;
using tessel::cli::TextStream;
using Ids = std::vector<std::int64_t>;

// Token i is byte i: what GGUF's raw-byte decoding does.
std::string raw_bytes(std::span<const std::int64_t> ids) {
  std::string s;
  for (const std::int64_t id : ids) s.push_back(static_cast<char>(id));
  return s;
}

// Every maximal invalid part (here: any byte >= 0x80 not forming a
// complete two-byte sequence) becomes U+FFFD, as tokenizers' ByteLevel.
std::string lossy(std::span<const std::int64_t> ids) {
  const std::string bytes = raw_bytes(ids);
  std::string s;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const auto b = static_cast<unsigned char>(bytes[i]);
    if (b < 0x80) {
      s += bytes[i];
    } else if (b >= 0xC2 && b <= 0xDF && i + 1 < bytes.size() &&
               (static_cast<unsigned char>(bytes[i + 1]) & 0xC0) == 0x80) {
      s += bytes.substr(i++, 2);
    } else {
      s += "\xEF\xBF\xBD";
    }
  }
  return s;
}

std::vector<std::string> stream_all(const TextStream::Decode& decode,
                                    const Ids& context, const Ids& tokens,
                                    std::string* joined) {
  TextStream stream(decode, context);
  std::vector<std::string> pieces;
  for (const std::int64_t t : tokens) pieces.push_back(stream.push(t));
  pieces.push_back(stream.finish());
  joined->clear();
  for (const auto& p : pieces) *joined += p;
  return pieces;
}

TEST(TextStream, CompleteUtf8Prefix) {
  EXPECT_EQ(complete_utf8_prefix("abc"), 3u);
  EXPECT_EQ(complete_utf8_prefix("a\xC3"), 1u);          // é's first byte
  EXPECT_EQ(complete_utf8_prefix("a\xC3\xA9"), 3u);      // é complete
  EXPECT_EQ(complete_utf8_prefix("\xE4\xB8"), 0u);       // 中 missing one
  EXPECT_EQ(complete_utf8_prefix("x\xF0\x9F\x98"), 1u);  // 😀 missing one
  EXPECT_EQ(complete_utf8_prefix("x\xF0\x9F\x98\x80"), 5u);
  // A byte no continuation can complete is final (raw output).
  EXPECT_EQ(complete_utf8_prefix("x\xFF"), 2u);
  EXPECT_EQ(complete_utf8_prefix("x\x80"), 2u);
  // Trailing replacement characters wait.
  EXPECT_EQ(complete_utf8_prefix("ab\xEF\xBF\xBD\xEF\xBF\xBD"), 2u);
}

TEST(TextStream, RawBytesWaitForTheWholeCharacter) {
  std::string joined;
  // "é" (C3 A9) and "😀" (F0 9F 98 80) one byte per token.
  const auto pieces =
      stream_all(raw_bytes, {'h', 'i'},
                 {0xC3, 0xA9, '!', 0xF0, 0x9F, 0x98, 0x80}, &joined);
  const std::vector<std::string> expected = {
      "", "\xC3\xA9", "!", "", "", "", "\xF0\x9F\x98\x80", ""};
  EXPECT_EQ(pieces, expected);
  EXPECT_EQ(joined, "\xC3\xA9!\xF0\x9F\x98\x80");
}

TEST(TextStream, LossyReplacementIsHeldBack) {
  std::string joined;
  const auto pieces =
      stream_all(lossy, {'a'}, {'b', 0xC3, 0xA9, 0xC3, 'c'}, &joined);
  // The lone C3 before 'c' is a real invalid byte: it comes out (as
  // U+FFFD) with the 'c' that proves it.
  const std::vector<std::string> expected = {"b",
                                             "",
                                             "\xC3\xA9",
                                             "",
                                             "\xEF\xBF\xBD"
                                             "c",
                                             ""};
  EXPECT_EQ(pieces, expected);
  EXPECT_EQ(joined, lossy(Ids{'b', 0xC3, 0xA9, 0xC3, 'c'}));
}

TEST(TextStream, FinishFlushesAnIncompleteTail) {
  std::string joined;
  stream_all(raw_bytes, {}, {'o', 'k', 0xE4, 0xB8}, &joined);
  EXPECT_EQ(joined, "ok\xE4\xB8");
  stream_all(lossy, {}, {'o', 0xE4}, &joined);
  EXPECT_EQ(joined, "o\xEF\xBF\xBD");
}

TEST(TextStream, LeadingSpaceOfAPieceIsKept) {
  // SentencePiece-style: tokens are words with a leading space, and the
  // decoder strips the space at the start of a text. Decoding a new token
  // alone would lose it.
  const std::vector<std::string> words = {"", " Hello", " big", " world"};
  const TextStream::Decode spm = [&](std::span<const std::int64_t> ids) {
    std::string s;
    for (const std::int64_t id : ids) s += words[static_cast<std::size_t>(id)];
    return s.starts_with(' ') ? s.substr(1) : s;
  };
  std::string joined;
  const auto pieces = stream_all(spm, {1}, {2, 3}, &joined);
  EXPECT_EQ(pieces, (std::vector<std::string>{" big", " world", ""}));
  // Without a prompt the first piece loses its space, as decode does.
  stream_all(spm, {}, {1, 2}, &joined);
  EXPECT_EQ(joined, "Hello big");
}

TEST(TextStream, LongStreamsDecodeShortWindows) {
  // The decoder sees only a few tokens per call, however long the text.
  std::size_t longest = 0;
  const TextStream::Decode counting = [&](std::span<const std::int64_t> ids) {
    longest = std::max(longest, ids.size());
    return raw_bytes(ids);
  };
  const Ids prompt(100, 'p');
  std::string joined;
  stream_all(counting, prompt, Ids(500, 'x'), &joined);
  EXPECT_EQ(joined, std::string(500, 'x'));
  EXPECT_LE(longest, 10u);
}

}  // namespace
