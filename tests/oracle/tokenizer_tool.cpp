// tessel's tokenisers for test_tokenizers.py: `tokenizer_tool hf PATH` or
// `tokenizer_tool gguf PATH` loads a tokenizer, then answers the JSON
// request on stdin
//   {"encode": [{"text": T, "text_hex": H, "add_special": B,
//                "parse_special": B}],
//    "decode": [{"ids": [...], "skip_special": B}], "pieces": [ids]}
// with {"encode": [ids or {"error": code}], "decode": [hex],
// "pieces": [hex], "vocab_size": N, "bos": id|null, "eos": id|null}.
// Decoded text is hex (llama.cpp's may not be UTF-8). A load failure
// prints {"error": code, "message": ...} and exits with 3.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tessel/tessel.hpp"

namespace {

using nlohmann::json;

std::string hex(std::string_view bytes) {
  std::string out;
  for (const char c : bytes) {
    out += fmt::format("{:02x}", static_cast<unsigned char>(c));
  }
  return out;
}

std::string unhex(const std::string& h) {
  std::string out;
  for (std::size_t i = 0; i + 1 < h.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
  }
  return out;
}

json optional_id(std::optional<tessel::TokenId> id) {
  return id ? json(*id) : json(nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    fmt::print(stderr, "usage: tokenizer_tool hf|gguf PATH < request.json\n");
    return 2;
  }
  const std::string kind = argv[1];
  std::optional<tessel::Tokenizer> tokenizer;
  try {
    if (kind == "hf") {
      tokenizer.emplace(tessel::load_hf_tokenizer(argv[2]));
    } else {
      const tessel::GgufFile file = tessel::load_gguf(argv[2]);
      tokenizer.emplace(tessel::tokenizer_from_gguf(file));
    }
  } catch (const tessel::Error& e) {
    std::cout << json{{"error", e.code()}, {"message", e.message()}}.dump()
              << "\n";
    return 3;
  }
  std::stringstream input;
  input << std::cin.rdbuf();
  const json request = json::parse(input.str());
  json response = {{"vocab_size", tokenizer->vocab_size()},
                   {"bos", optional_id(tokenizer->bos_id())},
                   {"eos", optional_id(tokenizer->eos_id())}};
  json encoded = json::array();
  for (const json& c : request.value("encode", json::array())) {
    const std::string text = c.contains("text_hex")
                                 ? unhex(c["text_hex"].get<std::string>())
                                 : c["text"].get<std::string>();
    try {
      encoded.push_back(tokenizer->encode(text, c.value("add_special", true),
                                          c.value("parse_special", true)));
    } catch (const tessel::Error& e) {
      encoded.push_back({{"error", e.code()}, {"message", e.message()}});
    }
  }
  response["encode"] = encoded;
  json decoded = json::array();
  for (const json& c : request.value("decode", json::array())) {
    const auto ids = c["ids"].get<std::vector<tessel::TokenId>>();
    try {
      decoded.push_back(
          hex(tokenizer->decode(ids, c.value("skip_special", false))));
    } catch (const tessel::Error& e) {
      decoded.push_back({{"error", e.code()}});
    }
  }
  response["decode"] = decoded;
  json pieces = json::array();
  for (const json& id : request.value("pieces", json::array())) {
    pieces.push_back(hex(tokenizer->token_to_piece(id.get<int>())));
  }
  response["pieces"] = pieces;
  std::cout << response.dump() << "\n";
  return 0;
}
