// Replace steps of normalizers and decoders: every `from` in a text becomes
// `to`, in one pass. A tokenizer.json can make a Replace grow the text
// without bound (a one-byte pattern to a long content, steps chained), so
// the new length is computed first and the text is left as it is when it
// would pass `limit`: the caller then raises its own E3001.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

namespace tessel::tok {

// False (s untouched) when the result would be longer than `limit`.
inline bool replace_all_within(std::string& s, const std::string& from,
                               const std::string& to, std::size_t limit) {
  if (from.empty()) return true;
  if (to.size() > from.size()) {
    std::size_t hits = 0;
    for (std::size_t hit, pos = 0;
         (hit = s.find(from, pos)) != std::string::npos;
         pos = hit + from.size()) {
      ++hits;
    }
    if (hits > (limit - std::min(limit, s.size())) / (to.size() - from.size()))
      return false;
  }
  std::string out;
  std::size_t pos = 0;
  for (std::size_t hit; (hit = s.find(from, pos)) != std::string::npos;
       pos = hit + from.size()) {
    out.append(s, pos, hit - pos).append(to);
  }
  if (pos == 0) return true;
  out.append(s, pos, std::string::npos);
  s = std::move(out);
  return true;
}

}  // namespace tessel::tok
