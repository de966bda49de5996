"""`tessel generate` against transformers' greedy generation.

On the model fixtures of model_fixtures.py (TESSEL_MODEL_FIXTURES): for
llama, qwen2 and qwen3, the HF directory and the f32 GGUF made by
llama.cpp's converter, `tessel generate --json` of the fixtures' generate
text (encoded with each checkpoint's own tokeniser: tokenizer.json, or the
GGUF's embedded vocabulary) must give transformers' prompt ids and its 32
greedy tokens (generate(do_sample=False)), up to the first step whose two
best logits lie within 1e-3 (a tie floating-point order may break either
way) or an end token, where tessel stops and transformers (told of no end
token) goes on: its token at that step must be tessel's end token. At
least MIN_COMPARED tokens must be compared (the fixtures' first ties come
later: all 32 steps are decisive). --chat names the template it cannot
render.

Usage: test_generate.py --tessel PATH (TESSEL_MODEL_FIXTURES set)."""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_fixtures as mf  # noqa: E402

FAILURES = []
TIE = 1e-3
MIN_COMPARED = 8


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessel", required=True)
    args = ap.parse_args()
    fixtures = os.environ["TESSEL_MODEL_FIXTURES"]
    index = mf.load_index(fixtures)
    for name in mf.MODELS:
        ref = index["models"][name]["generate"]
        expected = ref["new_ids"]
        decisive = next((i for i, gap in enumerate(ref["top2_gaps"]) if gap < TIE),
                        len(expected))
        for model in (index["models"][name]["hf_dir"], f"{name}-f32.gguf"):
            p = subprocess.run([args.tessel, "generate", "--model",
                                os.path.join(fixtures, model), "--prompt",
                                index["generate_text"], "--max-tokens",
                                str(len(expected)), "--json"],
                               capture_output=True, text=True)
            if p.returncode != 0:
                print(p.stderr)
                check(False, f"{model}: tessel generate runs")
                continue
            got = json.loads(p.stdout)
            check(got["prompt_tokens"] == len(ref["prompt_ids"]),
                  f"{model}: prompt of {got['prompt_tokens']} tokens as transformers")
            ids = got["token_ids"]
            stopped = got["stop"] == "eos"
            n = min(decisive, len(ids) if stopped else len(expected))
            check(ids[:n] == expected[:n] and len(ids) >= n,
                  f"{model}: greedy tokens equal transformers' ({n} compared, "
                  f"stop {got['stop']})")
            check(n >= MIN_COMPARED,
                  f"{model}: {n} tokens compared, at least {MIN_COMPARED}")
            if stopped and len(ids) < decisive:
                end = got["end_token_id"]
                check(expected[len(ids)] == end,
                      f"{model}: tessel's end token {end} at step {len(ids)} "
                      f"is transformers' token there ({expected[len(ids)]})")
    p = subprocess.run([args.tessel, "generate", "--model", os.path.join(fixtures, "qwen3"),
                        "--prompt", "hi", "--chat"], capture_output=True, text=True)
    check(p.returncode == 4 and "E4001" in p.stderr and "has a chat template" in p.stderr,
          "--chat is E4001 naming the checkpoint's template")
    print("generate:", "ok" if not FAILURES else f"{len(FAILURES)} failures")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
