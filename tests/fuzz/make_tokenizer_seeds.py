"""Writes the seed corpora of the tokenizer fuzz targets:
tests/fuzz/corpus/tokenizer_json/seed-* (tokenizer.json files) and
tests/fuzz/corpus/tokenizer_gguf/seed-* (GGUF vocabularies), small valid
files of each supported family and a few malformed ones. Needs the `gguf`
package (the project's .venv):  .venv/bin/python tests/fuzz/make_tokenizer_seeds.py
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GPT2 = (r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+"
        r"|\s+(?!\S)|\s+")
LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
          r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
         r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def byte_level_alphabet():
    bs = (list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD))
          + list(range(0xAE, 0x100)))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [chr(c) for _, c in sorted(zip(bs, cs))]


def byte_level_vocab(merges, full=False):
    alphabet = byte_level_alphabet()
    letters = alphabet if full else [c for c in alphabet
                                     if c in "Ġaehlnotrsw,!'ĊHdi12"]
    vocab = {c: i for i, c in enumerate(letters)}
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    return vocab


BL_MERGES = [("h", "e"), ("l", "l"), ("he", "ll"), ("hell", "o"), ("Ġ", "w"),
             ("o", "r"), ("Ġw", "or"), ("Ġwor", "l"), ("Ġworl", "d"),
             ("Ġ", "t"), ("Ġt", "he")]


def added(id_, content, special=True, **kw):
    a = {"id": id_, "content": content, "single_word": False, "lstrip": False,
         "rstrip": False, "normalized": not special, "special": special}
    a.update(kw)
    return a


def hf_files():
    files = {}
    v = byte_level_vocab(BL_MERGES)
    n = len(v)
    files["gpt2"] = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [added(n, "<|endoftext|>")],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False,
                          "trim_offsets": True, "use_regex": True},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True,
                           "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True,
                    "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": False, "vocab": v,
                  "merges": [f"{a} {b}" for a, b in BL_MERGES]},
    }
    files["llama3"] = {
        "version": "1.0",
        "added_tokens": [added(n, "<|begin_of_text|>"),
                         added(n + 1, "<|end_of_text|>"),
                         added(n + 2, "<mask>", special=False, lstrip=True,
                               single_word=True)],
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": LLAMA3},
             "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False,
             "trim_offsets": True, "use_regex": False}]},
        "post_processor": {"type": "Sequence", "processors": [
            {"type": "ByteLevel", "add_prefix_space": True,
             "trim_offsets": False, "use_regex": True},
            {"type": "TemplateProcessing",
             "single": [{"SpecialToken": {"id": "<|begin_of_text|>",
                                          "type_id": 0}},
                        {"Sequence": {"id": "A", "type_id": 0}}],
             "pair": [], "special_tokens": {"<|begin_of_text|>": {
                 "id": "<|begin_of_text|>", "ids": [n],
                 "tokens": ["<|begin_of_text|>"]}}}]},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True,
                    "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "ignore_merges": True, "vocab": v,
                  "merges": [[a, b] for a, b in BL_MERGES]},
    }
    files["qwen2"] = {
        "added_tokens": [added(n, "<|endoftext|>"), added(n + 1, "<|im_start|>"),
                         added(n + 2, "<|im_end|>")],
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": QWEN2},
             "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False,
             "trim_offsets": False, "use_regex": False}]},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": False,
                           "trim_offsets": False, "use_regex": False},
        "decoder": {"type": "ByteLevel", "add_prefix_space": False,
                    "trim_offsets": False, "use_regex": False},
        "model": {"type": "BPE", "vocab": v,
                  "merges": [f"{a} {b}" for a, b in BL_MERGES]},
    }
    full = byte_level_vocab(BL_MERGES, full=True)
    files["gpt2_full_alphabet"] = dict(files["gpt2"])
    files["gpt2_full_alphabet"]["model"] = dict(files["gpt2"]["model"],
                                                vocab=full)
    files["gpt2_full_alphabet"]["added_tokens"] = [
        added(len(full), "<|endoftext|>")]
    # SentencePiece-style BPE with byte fallback (Llama 2, Mistral).
    # Byte tokens for the non-ASCII bytes only (the seeds stay under
    # libFuzzer's -max_len of 4096).
    sp = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(128, 256)]
    sp += ["▁", "h", "e", "l", "o", "w", "r", "d", "t", "▁t", "he", "ll",
           "▁the", "▁w", "or", "▁wor"]
    sp_merges = ["▁ t", "h e", "l l", "▁t he", "▁ w", "o r", "▁w or"]
    files["spm_byte_fallback"] = {
        "added_tokens": [added(0, "<unk>"), added(1, "<s>"), added(2, "</s>")],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "▁"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
        "pre_tokenizer": None,
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "<s>",
                                                        "type_id": 0}},
                                      {"Sequence": {"id": "A", "type_id": 0}}],
                           "special_tokens": {"<s>": {"id": "<s>", "ids": [1],
                                                      "tokens": ["<s>"]}}},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": True,
                  "byte_fallback": True,
                  "vocab": {t: i for i, t in enumerate(sp)},
                  "merges": sp_merges},
    }
    files["split_digits_metaspace_like"] = {
        "added_tokens": [],
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Digits", "individual_digits": True},
            {"type": "Split", "pattern": {"String": " "},
             "behavior": "MergedWithNext", "invert": False},
            {"type": "Split", "pattern": {"Regex": r"\s+"},
             "behavior": "Removed", "invert": True},
            {"type": "ByteLevel", "add_prefix_space": True,
             "use_regex": True}]},
        "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "vocab": v,
                  "merges": [f"{a} {b}" for a, b in BL_MERGES]},
    }
    # Malformed: each must be refused with E3001.
    bad = json.loads(json.dumps(files["gpt2"]))
    bad["model"]["merges"].append("zz qq")  # unknown tokens
    files["bad_merge_unknown"] = bad
    bad = json.loads(json.dumps(files["gpt2"]))
    bad["model"]["vocab"]["huge"] = 2147483647  # id far past the vocabulary
    files["bad_huge_id"] = bad
    bad = json.loads(json.dumps(files["llama3"]))
    bad["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(a+)+$|(\\"
    files["bad_regex"] = bad
    bad = json.loads(json.dumps(files["llama3"]))
    bad["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = \
        "(?:(?:a|a|\\p{L})+)+(?:b|\\p{N}{3})"  # catastrophic backtracking
    files["catastrophic_regex"] = bad
    bad = json.loads(json.dumps(files["gpt2"]))
    bad["model"]["type"] = "WordPiece"
    files["bad_model_type"] = bad
    out = {name: json.dumps(spec, ensure_ascii=False).encode()
           for name, spec in files.items()}
    out["bad_truncated"] = out["gpt2"][:200]
    out["bad_not_object"] = b'["model"]'
    return out


def gguf_files(tmp):
    import gguf
    out = {}

    def write(name, model, tokens, types, merges=None, scores=None, pre=None,
              extra=None):
        path = os.path.join(tmp, name)
        w = gguf.GGUFWriter(path, "llama")
        w.add_tokenizer_model(model)
        if pre is not None:
            w.add_tokenizer_pre(pre)
        w.add_token_list(tokens)
        w.add_token_types(types)
        if scores is not None:
            w.add_token_scores(scores)
        if merges is not None:
            w.add_token_merges(merges)
        for f in extra or []:
            f(w)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        with open(path, "rb") as f:
            out[name] = f.read()

    v = byte_level_vocab(BL_MERGES)
    tokens = list(v) + ["<|endoftext|>", "<|im_start|>"]
    types = [1] * len(v) + [3, 4]
    merges = [f"{a} {b}" for a, b in BL_MERGES]
    for pre in ["gpt-2", "llama-bpe", "qwen2", "starcoder", "qwen35"]:
        write(f"gpt2_{pre}", "gpt2", tokens, types, merges, pre=pre,
              extra=[lambda w: w.add_bos_token_id(len(v)),
                     lambda w: w.add_eos_token_id(len(v))])
    sp = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(128, 256)]
    sp_types = [2, 3, 3] + [6] * 128
    sp += ["▁", "h", "e", "l", "o", "▁t", "he", "ll", "▁the", "▁w", "or",
           "▁wor", "<mask>", ""]
    sp_types += [1] * 12 + [4, 1]
    scores = [0.0] * 131 + [-float(i) for i in range(len(sp) - 131)]
    write("llama_spm", "llama", sp, sp_types, scores=scores)
    write("llama_spm_no_byte_tokens", "llama", sp[:3] + sp[131:],
          sp_types[:3] + sp_types[131:], scores=scores[:3] + scores[131:],
          extra=[lambda w: w.add_add_bos_token(False),
                 lambda w: w.add_add_space_prefix(False)])
    # Malformed.
    write("bad_pre", "gpt2", tokens, types, merges, pre="no-such-pre")
    write("bad_model", "bert", tokens, types, merges)
    write("bad_short_scores", "llama", sp, sp_types, scores=scores[:10])
    write("bad_merges_unknown", "gpt2", tokens, types,
          merges + ["zz qq", "nospace", "h ello"], pre="gpt-2")
    write("bad_add_bos", "gpt2", tokens[:5], types[:5], merges, pre="gpt-2",
          extra=[lambda w: w.add_add_bos_token(True)])
    return out


def main():
    import tempfile
    for name, data in hf_files().items():
        assert len(data) <= 4096, (name, len(data))
        with open(os.path.join(HERE, "corpus", "tokenizer_json",
                               f"seed-{name}"), "wb") as f:
            f.write(data)
    with tempfile.TemporaryDirectory() as tmp:
        for name, data in gguf_files(tmp).items():
            assert len(data) <= 4096, (name, len(data))
            with open(os.path.join(HERE, "corpus", "tokenizer_gguf",
                                   f"seed-{name}"), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    sys.exit(main())
