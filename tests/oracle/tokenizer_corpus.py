"""Shared by test_tokenizers.py and bench/compare_tokenizers.py: local
training text, the varied test texts, and byte-level BPE tokenizers
trained offline with the `tokenizers` package in the configuration each
model family's tokenizer.json uses (patterns as the families publish them)."""
import glob
import json
import os

# The pre-tokenizer patterns of the families' tokenizer.json files.
LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
          r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
         r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

MULTILINGUAL = [
    "naïve café résumé déjà vu", "Grüße aus Köln und Düsseldorf",
    "Ελληνικά κείμενα για δοκιμή", "Русский текст для проверки токенизатора",
    "日本語のテキストと漢字とカタカナ", "中文分词测试，标点符号。", "한국어 텍스트 토큰화",
    "emoji 😀👍🏽🎉 family 👨‍👩‍👧‍👦 flags 🇩🇪🇯🇵", "العربية نص للاختبار",
    "हिन्दी पाठ परीक्षण", "ไทย ภาษา ทดสอบ", "Tiếng Việt có dấu",
]

TEXTS = [
    "", " ", "\n", "a", "Hello, world! It's a test. They'll've done it; we're ready.",
    "I'M HERE, DON'T SHOUT; it's 'quoted' text and rock'n'roll",
    "  leading spaces", "trailing   ", "multiple     spaces  between words",
    "\t\ttabs\tand\nnewlines\n\n\r\nand\r\rcarriage", "   \n  \n\t \n   x",
    "1234567890 12 345 6789 3.14159 1,000,000 007 2024-06-01 12:30:45",
    "def f(x):\n    return x**2  # square\n\n\nfor (int i = 0; i < n; ++i) {\n\ta[i] += b[i];\n}\n",
    "if (a != b && c >= d) { printf(\"%d\\n\", a << 2); } // done",
    "<html><body class=\"x\">&amp; &lt;tag&gt;</body></html>",
    "e\u0301 a\u0308 o\u0302 \u00c5 vs A\u030a, \u212b and \u2126 vs \u03a9, n\u0303o",
    "\ufb01 ligature, \u00bd half, \u2460 circled, \uff21\uff22 fullwidth",
    "x\u00a0nbsp\u2003em\u3000ideographic\u2028line\u200bzero-width\ufeffbom",
    "next\u0085line \u0085 \u180emongolian \u2029para\u000bvt\u000cff  \u00a0 \u00a0",
    "mixed日本語and English混ざり123数字",
    "....!!!???,,,;;;:::---___===+++***",
    "ALLCAPS lowercase MiXeD CamelCaseWord snake_case_word kebab-case-word",
    "   ", "\n\n\n", "\r\n\r\n", "a \n b \n\n c",
] + MULTILINGUAL + [m + " " + m.upper() + "\n" for m in MULTILINGUAL[:4]]


def license_text():
    parts = []
    for path in sorted(glob.glob("/usr/share/common-licenses/*")):
        if os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                parts.append(f.read())
    return "\n".join(parts)


def training_lines():
    lines = license_text().splitlines(keepends=True)
    return lines + (MULTILINGUAL + TEXTS) * 20


def train(family, vocab_size=3000, lines=None):
    """A tokenizers.Tokenizer of `family` trained on `lines` (default: the
    licences and the test texts)."""
    from tokenizers import (AddedToken, Regex, Tokenizer, decoders, models,
                            normalizers, pre_tokenizers, processors, trainers)
    lines = training_lines() if lines is None else lines
    if family in ("gpt2", "gpt2_prefix"):
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(
            add_prefix_space=family == "gpt2_prefix")
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
        specials = ["<|endoftext|>"]
    elif family == "llama3":
        tok = Tokenizer(models.BPE(ignore_merges=True))
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(LLAMA3), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True,
                                     use_regex=False)])
        specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
                    "<|end_header_id|>", "<|eot_id|>"]
    elif family == "qwen2":
        tok = Tokenizer(models.BPE())
        tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(QWEN2), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
        specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    else:
        raise ValueError(family)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(lines, trainer)
    if family == "llama3":
        bos = tok.token_to_id("<|begin_of_text|>")
        tok.post_processor = processors.Sequence([
            processors.ByteLevel(trim_offsets=False),
            processors.TemplateProcessing(single="<|begin_of_text|> $A",
                                          special_tokens=[("<|begin_of_text|>", bos)])])
    if family == "qwen2":
        # Added tokens that are not special, with the flags tokenizers has.
        tok.add_tokens([
            AddedToken("<tool_call>", normalized=False, lstrip=True, rstrip=True),
            AddedToken("caf\u00e9", normalized=True),
            AddedToken("[MASK]", single_word=True, normalized=False),
        ])
    return tok


def spm_style(lines=None, vocab_size=1500):
    """A Llama-2 style tokenizer.json (no byte-level: Prepend/Replace
    normaliser, BPE with byte fallback over <0x00>..<0xFF> in the model's
    vocabulary, the Replace/ByteFallback/Fuse/Strip decoder), as JSON text."""
    from tokenizers import Tokenizer, decoders, models, normalizers, trainers
    lines = training_lines() if lines is None else lines
    tok = Tokenizer(models.BPE(byte_fallback=True, fuse_unk=True, unk_token="<unk>"))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("\u2581"),
                                           normalizers.Replace(" ", "\u2581")])
    tok.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(),
                                     decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<unk>"],
                                  show_progress=False, max_token_length=16)
    tok.train_from_iterator([l.replace("\n", " ") for l in lines[:3000]], trainer)
    spec = json.loads(tok.to_str())
    # Byte tokens and <s>, </s> go into the model's vocabulary (as in
    # Llama-2's file), ids 0..258, the trained tokens after them.
    old = spec["model"]["vocab"]
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = 3 + b
    for t, _ in sorted(old.items(), key=lambda kv: kv[1]):
        if t not in vocab:
            vocab[t] = len(vocab)
    spec["model"]["vocab"] = vocab
    spec["added_tokens"] = [
        {"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True} for c, i in (("<unk>", 0), ("<s>", 1), ("</s>", 2))]
    spec["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                   {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [{"Sequence": {"id": "A", "type_id": 0}}],
        "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}}
    return json.dumps(spec, ensure_ascii=False)
