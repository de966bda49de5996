"""Tokeniser encoding speed against the `tokenizers` package, one thread.

Trains byte-level BPE tokenizers of the GPT-2, Llama-3 and Qwen2 families
(tests/oracle/tokenizer_corpus.py, vocabulary 32000) on the copyright files
Debian installs (/usr/share/doc/*/copyright, the first 4 MiB), saves their
tokenizer.json, and times, in the same run and on the same text:
  - document: the whole text in one encode call (tessel's encode,
    tokenizers' Tokenizer.encode), no special tokens added;
  - lines: the text line by line (a tessel encode per line; tokenizers'
    encode_batch_fast over the list, its fastest path, sequential under
    RAYON_NUM_THREADS=1).
tokenizers runs with RAYON_NUM_THREADS=1 and TOKENIZERS_PARALLELISM=false;
tessel's tokenizer is single-threaded. Both keep their per-word caches
across repeats (as they do in use). Ratio = tessel speed / tokenizers
speed; above 1 means tessel is faster. The token counts of both are
printed and must agree.

Usage: compare_tokenizers.py BUILD/bench/bench_tokenizers [--repeats N]"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile
import time

os.environ["RAYON_NUM_THREADS"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "oracle"))
from timing import run_benchmarks  # noqa: E402
import tokenizer_corpus  # noqa: E402

CORPUS_BYTES = 4 << 20


def corpus():
    parts, size = [], 0
    for path in sorted(glob.glob("/usr/share/doc/*/copyright")):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        parts.append(text)
        size += len(text.encode())
        if size >= CORPUS_BYTES:
            break
    return "\n".join(parts)


def best(fn, repeats):
    fn()
    t = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - start)
    return t


def seconds(entry):
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[entry["time_unit"]]
    return entry["real_time"] * scale


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tool")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    import tokenizers
    text = corpus()
    nbytes = len(text.encode())
    lines = [line + "\n" for line in text.split("\n")]
    print(f"corpus: {nbytes / 2**20:.2f} MiB, {len(lines)} lines; tokenizers "
          f"{tokenizers.__version__}, one thread")
    print(f"{'family':8} {'case':9} {'tessel MB/s':>12} {'tokenizers MB/s':>16} "
          f"{'ratio':>6} {'tokens (tessel/tokenizers)':>28}")
    with tempfile.TemporaryDirectory(prefix="tessel-bench-tok-") as tmp:
        corpus_path = os.path.join(tmp, "corpus.txt")
        with open(corpus_path, "w", encoding="utf-8") as f:
            f.write(text)
        for family in ("gpt2", "llama3", "qwen2"):
            tok = tokenizer_corpus.train(family, vocab_size=32000, lines=lines)
            path = os.path.join(tmp, f"{family}.json")
            tok.save(path)
            env = dict(os.environ, TESSEL_BENCH_TOKENIZER=path,
                       TESSEL_BENCH_CORPUS=corpus_path, TESSEL_NUM_THREADS="1")
            raw = subprocess.run([args.tool, "--benchmark_format=json",
                                  "--benchmark_min_time=1", "--benchmark_repetitions=3",
                                  "--benchmark_report_aggregates_only=false"],
                                 env=env, check=True, capture_output=True, text=True).stdout
            import json
            mine = {}
            for b in json.loads(raw)["benchmarks"]:
                if b.get("run_type") != "iteration":
                    continue
                name = b["name"].split("/")[0]
                if name not in mine or seconds(b) < seconds(mine[name]):
                    mine[name] = b
            doc_ids = tok.encode(text, add_special_tokens=False).ids
            t_doc = best(lambda: tok.encode(text, add_special_tokens=False), args.repeats)
            line_tokens = sum(len(e) for e in tok.encode_batch_fast(lines, add_special_tokens=False))
            t_lines = best(lambda: tok.encode_batch_fast(lines, add_special_tokens=False),
                           args.repeats)
            for case, name, theirs, their_tokens in (
                    ("document", "BM_EncodeDocument", t_doc, len(doc_ids)),
                    ("lines", "BM_EncodeLines", t_lines, line_tokens)):
                ours = seconds(mine[name])
                print(f"{family:8} {case:9} {nbytes / ours / 1e6:12.2f} "
                      f"{nbytes / theirs / 1e6:16.2f} {theirs / ours:6.2f} "
                      f"{int(mine[name]['tokens']):>13}/{their_tokens:<14}")


if __name__ == "__main__":
    main()
