"""tessel's tokenizers against the `tokenizers` package and llama.cpp.

tokenizer.json: byte-level BPE tokenizers trained here, offline, with the
`tokenizers` package on the licence texts Debian installs, in the
configuration of each family's published file (GPT-2 with and without
add_prefix_space; Llama-3: Split with its regex + ByteLevel, ignore_merges,
a BOS template; Qwen2: NFC + Split with its regex + ByteLevel, plus added
tokens with lstrip/rstrip, normalized and single_word), and a Llama-2
style file (Prepend/Replace normaliser, byte fallback, its decoder chain).
Encode ids (add_special and parse_special both ways) and decode text
(skip_special both ways; every single id; random id sequences that cut
UTF-8 apart) must equal tokenizers' exactly.

GGUF: the same vocabularies written with the `gguf` package as
tokenizer.ggml.model gpt2 (pre gpt-2, llama-bpe, qwen2) and a llama/SPM
vocabulary with scores, token types and <0x00>..<0xFF> byte tokens, loaded
by llama.cpp (llama-cpp-python, vocab_only): llama_tokenize,
llama_detokenize and llama_token_to_piece must agree exactly.

The corpus: tokenizer_corpus.TEXTS (multi-byte UTF-8, emoji, CJK, marks
that NFC composes, whitespace runs, tabs and newlines, digit runs, code),
special tokens inside text, and 300 chunks of licence text. Malformed
files must be refused with E3001 naming the field."""
import argparse
import ctypes
import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tokenizer_corpus as corpus  # noqa: E402

FAILURES = []


def check(cond, what, detail=""):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        if detail:
            print("     " + detail[:2000])
        FAILURES.append(what)


def run_tool(tool, kind, path, request):
    p = subprocess.run([tool, kind, path], input=json.dumps(request),
                       capture_output=True, text=True)
    if p.returncode not in (0, 3):
        raise RuntimeError(f"tokenizer_tool failed ({p.returncode}): {p.stderr}")
    return p.returncode, json.loads(p.stdout)


def texts_with(specials):
    """The corpus, special tokens inside text, and licence chunks."""
    texts = list(corpus.TEXTS)
    for s in specials:
        texts += [f"{s}Hello{s} world {s}\n{s}", f"x{s}y", f"  {s}  ", s + s]
    lines = corpus.license_text().splitlines(keepends=True)
    texts += ["".join(lines[i:i + 7]) for i in range(0, 2100, 7)]
    return texts


def compare_encodings(name, want, got, texts, requests):
    bad = [i for i in range(len(want)) if want[i] != got[i]]
    detail = ""
    if bad:
        i = bad[0]
        detail = (f"{len(bad)} of {len(want)} differ; first: text {texts[requests[i][0]]!r} "
                  f"flags {requests[i][1:]}: want {want[i]} got {got[i]}")
    check(not bad, f"{name}: encode ids of {len(want)} cases", detail)


def compare_decodings(name, want, got, what):
    bad = [i for i in range(len(want)) if want[i] != got[i]]
    detail = f"first: want {want[bad[0]]!r} got {got[bad[0]]!r}" if bad else ""
    check(not bad, f"{name}: {what} ({len(want)} cases)", detail)


def random_ids(n_vocab, rng, count=200):
    return [[rng.randrange(n_vocab) for _ in range(rng.randrange(1, 12))]
            for _ in range(count)]


# ---- tokenizer.json against tokenizers ------------------------------------

def check_hf(tool, name, tok, path, specials, rng):
    texts = texts_with(specials + ["<tool_call>", "[MASK]", "caf\u00e9", "cafe\u0301"])
    texts += ["<tool_call>  spaced  <tool_call>\tz", "[MASK] word[MASK] [MASK]."]
    requests = [(i, a, p) for i in range(len(texts)) for a in (True, False)
                for p in (True, False)]
    want = []
    for i, a, p in requests:
        tok.encode_special_tokens = not p
        want.append(tok.encode(texts[i], add_special_tokens=a).ids)
    tok.encode_special_tokens = False
    rc, out = run_tool(tool, "hf", path, {
        "encode": [{"text": texts[i], "add_special": a, "parse_special": p}
                   for i, a, p in requests]})
    check(rc == 0, f"{name}: loads", json.dumps(out)[:500])
    if rc != 0:
        return
    compare_encodings(name, want, out["encode"], texts, requests)

    n = tok.get_vocab_size(with_added_tokens=True)
    seqs = [want[k] for k in range(0, len(want), 3)] + [[i] for i in range(n)]
    seqs += random_ids(n, rng)
    cases = [(s, skip) for s in seqs for skip in (False, True)]
    want_dec = [tok.decode(s, skip_special_tokens=skip).encode().hex() for s, skip in cases]
    _, out = run_tool(tool, "hf", path, {
        "decode": [{"ids": s, "skip_special": skip} for s, skip in cases]})
    compare_decodings(name, want_dec, out["decode"],
                      "decode of encodings, every id and random ids")
    check(out["vocab_size"] == n, f"{name}: vocab size {n}", str(out["vocab_size"]))


# ---- GGUF against llama.cpp ----------------------------------------------

class LlamaVocab:
    def __init__(self, llama_cpp, path):
        self.lc = llama_cpp
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        self.model = llama_cpp.llama_model_load_from_file(path.encode(), params)
        if not self.model:
            raise RuntimeError(f"llama.cpp cannot load {path}")
        self.vocab = llama_cpp.llama_model_get_vocab(self.model)

    def tokenize(self, data, add_special, parse_special):
        n = len(data) + 8
        while True:
            buf = (self.lc.llama_token * n)()
            k = self.lc.llama_tokenize(self.vocab, data, len(data), buf, n,
                                       add_special, parse_special)
            if k >= 0:
                return list(buf[:k])
            n = -k

    def detokenize(self, ids, unparse_special):
        arr = (self.lc.llama_token * max(1, len(ids)))(*ids)
        n = 64 + 64 * len(ids)
        while True:
            buf = ctypes.create_string_buffer(n)
            k = self.lc.llama_detokenize(self.vocab, arr, len(ids), buf, n, False,
                                         unparse_special)
            if k >= 0:
                return buf.raw[:k]
            n = -k

    def piece(self, token):
        buf = ctypes.create_string_buffer(512)
        k = self.lc.llama_token_to_piece(self.vocab, token, buf, 512, 0, True)
        return buf.raw[:k]

    def close(self):
        self.lc.llama_model_free(self.model)


def write_gguf(path, model, tokens, types, merges=None, scores=None, pre=None,
               bos=None, eos=None, add_bos=None):
    import gguf
    w = gguf.GGUFWriter(path, "llama")
    # llama.cpp reads the architecture's hyper-parameters even for
    # vocab_only loads.
    w.add_context_length(256)
    w.add_embedding_length(64)
    w.add_block_count(1)
    w.add_feed_forward_length(128)
    w.add_head_count(4)
    w.add_head_count_kv(4)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(len(tokens))
    w.add_tokenizer_model(model)
    if pre is not None:
        w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types(types)
    if scores is not None:
        w.add_token_scores(scores)
    if merges is not None:
        w.add_token_merges(merges)
    if bos is not None:
        w.add_bos_token_id(bos)
    if eos is not None:
        w.add_eos_token_id(eos)
    if add_bos is not None:
        w.add_add_bos_token(add_bos)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def gguf_vocab_from_hf(spec):
    """tokens, token types and merges of a byte-level tokenizer.json."""
    vocab = dict(spec["model"]["vocab"])
    kinds = {}
    for a in spec.get("added_tokens", []):
        vocab[a["content"]] = a["id"]
        kinds[a["id"]] = 3 if a["special"] else 4  # CONTROL, USER_DEFINED
    tokens = [None] * (max(vocab.values()) + 1)
    for t, i in vocab.items():
        tokens[i] = t
    assert all(t is not None for t in tokens)
    types = [kinds.get(i, 1) for i in range(len(tokens))]
    merges = [m if isinstance(m, str) else f"{m[0]} {m[1]}" for m in spec["model"]["merges"]]
    return tokens, types, merges


def check_gguf(tool, llama_cpp, name, path, specials, rng, n_vocab):
    texts = texts_with(specials)
    requests = [(i, a, p) for i in range(len(texts)) for a in (True, False)
                for p in (True, False)]
    ref = LlamaVocab(llama_cpp, path)
    try:
        want = [ref.tokenize(texts[i].encode(), a, p) for i, a, p in requests]
        rc, out = run_tool(tool, "gguf", path, {
            "encode": [{"text": texts[i], "add_special": a, "parse_special": p}
                       for i, a, p in requests],
            "pieces": list(range(n_vocab))})
        check(rc == 0, f"{name}: loads", json.dumps(out)[:500])
        if rc != 0:
            return
        compare_encodings(name, want, out["encode"], texts, requests)
        compare_decodings(name, [ref.piece(i).hex() for i in range(n_vocab)],
                          out["pieces"], "token_to_piece of every id")
        seqs = [want[k] for k in range(0, len(want), 3)] + random_ids(n_vocab, rng)
        cases = [(s, skip) for s in seqs for skip in (False, True)]
        want_dec = [ref.detokenize(s, not skip).hex() for s, skip in cases]
        _, out = run_tool(tool, "gguf", path, {
            "decode": [{"ids": s, "skip_special": skip} for s, skip in cases]})
        compare_decodings(name, want_dec, out["decode"], "llama_detokenize")
    finally:
        ref.close()


def spm_gguf(path, spec):
    """A llama (SentencePiece-BPE) vocabulary from the Llama-2 style file:
    scores favour tokens learnt earlier; <unk>, <s>, </s>, the byte tokens,
    and one user-defined token at the end."""
    vocab = spec["model"]["vocab"]
    tokens = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    types = [2, 3, 3] + [6] * 256 + [1] * (len(tokens) - 259)
    scores = [0.0] * 259 + [-float(i) for i in range(len(tokens) - 259)]
    tokens.append("<|user|>")
    types.append(4)
    scores.append(0.0)
    write_gguf(path, "llama", tokens, types, scores=scores, bos=1, eos=2)
    return len(tokens)


def check_errors(tool, tmp, good_gguf_args):
    bad = os.path.join(tmp, "bad.json")
    cases = [
        ('{"model": {"type": "Unigram", "vocab": []}}', "model.type"),
        ('{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}}', "model.merges[0]"),
        ('{"model": {"type": "BPE", "vocab": {}, "merges": []}, '
         '"normalizer": {"type": "Lowercase"}}', "normalizer.type"),
        ('{"model": {"type": "BPE", "vocab": {}, "merges": []}, "decoder": '
         '{"type": "Sequence", "decoders": [{"type": "WordPiece"}]}}', "decoder.decoders[0].type"),
        ('{"model": {"type": "BPE", "vocab": {}, "merges": []}, "pre_tokenizer": '
         '{"type": "Split", "pattern": {"Regex": "(unclosed"}, "behavior": "Isolated"}}',
         "pre_tokenizer.pattern.Regex"),
        ('{"model": {"type": "BPE", "vocab": {"a": "zero"}, "merges": []}}', "model.vocab.a"),
        ('{"model": {"type": "BPE", "vocab": {}}}', "model.merges"),
        ('{"model": {"type": "BPE", "vocab"', "bad.json is not JSON"),
    ]
    for text, field in cases:
        with open(bad, "w") as f:
            f.write(text)
        rc, out = run_tool(tool, "hf", bad, {})
        check(rc == 3 and out.get("error") == "E3001" and field in out.get("message", ""),
              f"malformed tokenizer.json: E3001 naming {field}", json.dumps(out))
    tokens, types, merges = good_gguf_args
    for pre, model, field in (("no-such-pre", "gpt2", "tokenizer.ggml.pre"),
                              ("gpt-2", "bert", "tokenizer.ggml.model")):
        path = os.path.join(tmp, "bad.gguf")
        write_gguf(path, model, tokens, types, merges=merges, pre=pre)
        rc, out = run_tool(tool, "gguf", path, {})
        check(rc == 3 and out.get("error") == "E3001" and field in out.get("message", "")
              and "supported" in out.get("message", ""),
              f"GGUF {field} {pre if model == 'gpt2' else model!r}: E3001 naming it",
              json.dumps(out))
    path = os.path.join(tmp, "short.gguf")
    write_gguf(path, "gpt2", tokens, types[:10], merges=merges, pre="gpt-2")
    rc, out = run_tool(tool, "gguf", path, {})
    check(rc == 3 and "tokenizer.ggml.token_type" in out.get("message", ""),
          "GGUF token_type shorter than the vocabulary: E3001 naming it", json.dumps(out))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tool", required=True)
    args = parser.parse_args()
    from tokenizers import Tokenizer
    rng = random.Random(14)
    specials = {"gpt2": ["<|endoftext|>"], "gpt2_prefix": ["<|endoftext|>"],
                "llama3": ["<|begin_of_text|>", "<|eot_id|>", "<|start_header_id|>"],
                "qwen2": ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]}
    with tempfile.TemporaryDirectory(prefix="tessel-tokenizers-") as tmp:
        specs = {}
        for family in ("gpt2", "gpt2_prefix", "llama3", "qwen2"):
            tok = corpus.train(family)
            path = os.path.join(tmp, f"{family}.json")
            tok.save(path)
            with open(path, encoding="utf-8") as f:
                specs[family] = json.load(f)
            check_hf(args.tool, f"tokenizer.json {family}", tok, path, specials[family], rng)
        spm_text = corpus.spm_style()
        spm_path = os.path.join(tmp, "spm.json")
        with open(spm_path, "w", encoding="utf-8") as f:
            f.write(spm_text)
        check_hf(args.tool, "tokenizer.json llama-2 style (byte fallback)",
                 Tokenizer.from_str(spm_text), spm_path, ["<s>", "</s>", "<unk>"], rng)

        import llama_cpp
        llama_cpp.llama_backend_init()
        quiet = llama_cpp.llama_log_callback(lambda level, text, data: None)
        llama_cpp.llama_log_set(quiet, ctypes.c_void_p())
        for family, pre, bos, eos, add_bos in (
                ("gpt2", "gpt-2", "<|endoftext|>", "<|endoftext|>", False),
                ("llama3", "llama-bpe", "<|begin_of_text|>", "<|eot_id|>", None),
                ("qwen2", "qwen2", "<|endoftext|>", "<|im_end|>", False)):
            tokens, types, merges = gguf_vocab_from_hf(specs[family])
            path = os.path.join(tmp, f"{family}.gguf")
            write_gguf(path, "gpt2", tokens, types, merges=merges, pre=pre,
                       bos=tokens.index(bos), eos=tokens.index(eos), add_bos=add_bos)
            check_gguf(args.tool, llama_cpp, f"GGUF gpt2/{pre}", path, specials[family], rng,
                       len(tokens))
        path = os.path.join(tmp, "spm.gguf")
        n = spm_gguf(path, json.loads(spm_text))
        check_gguf(args.tool, llama_cpp, "GGUF llama (SPM)", path,
                   ["<s>", "</s>", "<unk>", "<|user|>"], rng, n)

        rc, out = run_tool(args.tool, "hf", os.path.join(tmp, "gpt2.json"),
                           {"encode": [{"text_hex": "61c328"}]})
        check(out["encode"][0].get("error") == "E3001" and "byte 1" in out["encode"][0]["message"],
              "invalid UTF-8 text: E3001 naming the byte offset", json.dumps(out))
        check_errors(args.tool, tmp, gguf_vocab_from_hf(specs["gpt2"]))
    if FAILURES:
        print(f"{len(FAILURES)} failed")
        sys.exit(1)
    print("all passed")


if __name__ == "__main__":
    main()
