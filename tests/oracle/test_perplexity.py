"""`tessel perplexity` against llama.cpp's and transformers' perplexity.

On the model fixtures of model_fixtures.py (TESSEL_MODEL_FIXTURES): every
GGUF (llama, qwen2, qwen3 in f32, f16, bf16, q8_0, q4_0, q4_k_m) against
the perplexity llama.cpp computes on it by llama-perplexity's rule, and
every HF directory (qwen3 sharded and bf16 too) against transformers' by
the same rule, both on expected/perplexity.txt with the fixtures' n_ctx,
with the same token count and BOS decision. Where both compute in f32 (f32
GGUFs, every HF directory) the rule alone separates them: within 1e-5.
Other GGUF types: within 0.2%, Q4_K_M within 0.25% (measured at most
0.04% and 0.17% on an AVX-512 Xeon, 0.13% and 0.18% on an AVX2-only EPYC,
where llama.cpp's CPU kernels round and accumulate differently): there
the two runtimes' rounding differs (llama.cpp multiplies bf16 weights
with bf16-rounded activations and q8_0 weights with q8_0-quantised ones,
tessel widens to f32; the K-quant mixes), and these random models amplify
a perturbation about five times (test_model_fixtures.py). The bf16 files
again with `--matmul-precision bf16` (llama.cpp's rounding): as close
(measured 0.04-0.06%; the perturbation, not the rounding, dominates), and
different from the f32 run. The f32 GGUFs again with tessel's KV cache in
f16 and in the block types q8_0, q4_0, q5_1 and iq4_nl, against llama.cpp's cache
in the same type (see CACHE_TOLERANCE). The plain output is
llama-perplexity's.

Usage: test_perplexity.py --tessel PATH (TESSEL_MODEL_FIXTURES set)."""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_fixtures as mf  # noqa: E402

# Relative, by GGUF type; HF directories as f32.
TOLERANCE = {"f32": 1e-5, "q4_k_m": 2.5e-3}
DEFAULT_TOLERANCE = 2e-3
# f32 GGUFs with the KV cache in the same type on both sides (see
# check_cache_type), relative:
# - f16 (llama.cpp's default), where llama.cpp also rounds the queries and
#   attention weights: measured 1.2e-4 (llama), 2e-5 (qwen2, qwen3).
# - q8_0, q4_0, q5_1, iq4_nl: both rotate keys and values by the same
#   Hadamard blocks and quantise them as ggml's CPU backend does (its
#   run-time quantiser, which for iq4_nl skips the scale search);
#   llama.cpp also quantises the queries to q8_0 (q8_1 against q5_1) for
#   the key products, tessel computes in f32 on the dequantised keys.
#   Measured q8_0 2.2e-3, q4_0 3.2e-3, q5_1 4.2e-3, iq4_nl 3.2e-3 (these
#   random models amplify a perturbation about five times; a cache without
#   the rotation missed llama.cpp's by up to 6.3e-3 in q8_0 and 2.3e-2 in
#   q4_0, and an iq4_nl cache with the searched scales by 2.4e-2).
CACHE_TOLERANCE = {"f16": 1e-3, "q8_0": 5e-3, "q4_0": 1e-2, "q5_1": 1e-2,
                   "iq4_nl": 1e-2}
FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def tessel_perplexity(tessel, model, text, n_ctx, precision="f32", cache_type="f32"):
    p = subprocess.run([tessel, "perplexity", "--model", model, "--file", text,
                        "--ctx", str(n_ctx), "--json", "--matmul-precision", precision,
                        "--cache-type", cache_type],
                       capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stderr)
        return None
    return json.loads(p.stdout)


def compare(tessel, fixtures, text, n_ctx, model, reference, add_bos, label, tolerance,
            precision="f32"):
    got = tessel_perplexity(tessel, os.path.join(fixtures, model), text, n_ctx, precision)
    what = model if precision == "f32" else f"{model} (--matmul-precision {precision})"
    if got is None:
        check(False, f"{what}: tessel perplexity runs")
        return None
    diff = abs(got["perplexity"] - reference["ppl"]) / reference["ppl"]
    check(diff <= tolerance,
          f"{what}: PPL {got['perplexity']:.4f} vs {label} {reference['ppl']:.4f} "
          f"(relative {diff:.1e})")
    check(got["tokens"] == reference["n_tokens"] and got["add_bos"] == add_bos,
          f"{what}: {got['tokens']} tokens, add_bos {got['add_bos']} as {label}")
    return got["perplexity"]


def llama_cpp_cache_perplexity(path, text, n_ctx, cache_type):
    """llama.cpp's perplexity with its KV cache in `cache_type`, computed
    here (the fixtures hold the f32 cache's): f16 is its default; a block
    type needs its flash attention, which takes quantised keys and values."""
    import llama_cpp
    import model_fixtures_llama as mfl
    options = {}
    if cache_type != "f16":
        ggml_type = getattr(llama_cpp, "GGML_TYPE_" + cache_type.upper())
        options = {"type_k": ggml_type, "type_v": ggml_type, "flash_attn": True}
    with mfl.stderr_to(os.devnull):
        llm = llama_cpp.Llama(model_path=path, logits_all=True, n_threads=2,
                              n_threads_batch=2, n_ctx=n_ctx, n_batch=n_ctx,
                              n_ubatch=n_ctx, verbose=False, **options)
        with open(text, encoding="utf-8") as f:
            tokens = llm.tokenize(f.read().encode(), add_bos=True, special=False)
        vocab = llama_cpp.llama_model_get_vocab(llm.model)
        bos = llm.token_bos() if llama_cpp.llama_vocab_get_add_bos(vocab) else None
        value, _ = mf.perplexity(tokens, n_ctx, bos,
                                 lambda chunk: mfl.logits_for(llm, chunk))
        llm.close()
    return value


def check_cache_type(tessel, fixtures, text, n_ctx, g, exact, cache_type):
    """--cache-type against llama.cpp's cache in the same type; and
    different from tessel's f32 cache. f16: llama.cpp also rounds the
    queries and the attention weights to f16, which tessel does not (it
    computes in f32 on the rounded keys and values). Block types: see
    CACHE_TOLERANCE."""
    path = os.path.join(fixtures, g["file"])
    ref = llama_cpp_cache_perplexity(path, text, n_ctx, cache_type)
    got = tessel_perplexity(tessel, path, text, n_ctx, cache_type=cache_type)
    if got is None or exact is None:
        check(False, f"{g['file']}: tessel perplexity --cache-type {cache_type} runs")
        return
    diff = abs(got["perplexity"] - ref) / ref
    check(diff <= CACHE_TOLERANCE[cache_type] and got["cache_type"] == cache_type,
          f"{g['file']} (--cache-type {cache_type}): PPL {got['perplexity']:.4f} vs "
          f"llama.cpp's {cache_type} cache {ref:.4f} (relative {diff:.1e})")
    check(got["perplexity"] != exact,
          f"{g['file']}: --cache-type {cache_type} changes the perplexity "
          f"({exact:.6f} with the f32 cache)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessel", required=True)
    args = ap.parse_args()
    fixtures = os.environ["TESSEL_MODEL_FIXTURES"]
    index = mf.load_index(fixtures)
    text = os.path.join(fixtures, index["perplexity"]["text"])
    n_ctx = index["perplexity"]["n_ctx"]
    for g in index["ggufs"].values():
        ref = g["llama_cpp_perplexity"]
        tolerance = TOLERANCE.get(g["type"], DEFAULT_TOLERANCE)
        exact = compare(args.tessel, fixtures, text, n_ctx, g["file"], ref,
                        ref["add_bos"], "llama.cpp", tolerance)
        if g["type"] == "f32":
            for cache_type in CACHE_TOLERANCE:
                check_cache_type(args.tessel, fixtures, text, n_ctx, g, exact, cache_type)
        if g["type"] == "bf16":
            # The activations rounded as llama.cpp rounds them: a different
            # number (so the option reached the model), as close.
            rounded = compare(args.tessel, fixtures, text, n_ctx, g["file"], ref,
                              ref["add_bos"], "llama.cpp", tolerance, "bf16")
            check(exact is not None and rounded is not None and rounded != exact,
                  f"{g['file']}: --matmul-precision bf16 changes the perplexity")
    for name, m in index["models"].items():
        compare(args.tessel, fixtures, text, n_ctx, m["hf_dir"],
                m["transformers_perplexity"], m["add_bos"], "transformers",
                TOLERANCE["f32"])

    p = subprocess.run([args.tessel, "perplexity", "--model",
                        os.path.join(fixtures, "qwen3-f32.gguf"), "--file", text,
                        "--ctx", str(n_ctx)], capture_output=True, text=True)
    check(re.fullmatch(r"(\[\d+\]\d+\.\d{4},)+\nFinal estimate: PPL = \d+\.\d{4} "
                       r"\+/- \d+\.\d{5}\n", p.stdout) is not None and p.stderr == "",
          "plain output is llama-perplexity's, stderr quiet when piped")
    print("perplexity:", "ok" if not FAILURES else f"{len(FAILURES)} failures")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
