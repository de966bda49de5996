"""Issue 13's speed targets, tessel against ggml (llama-cpp-python's) in one
run of bench_quant, printed as ratios (tessel / ggml throughput, so > 1 means
tessel is faster) and as fractions of this machine's ceilings measured in the
same binary:

- dequantise to f32: GB/s of bytes read + written, against BM_StreamCopy
  (a copy of arrays four times the last-level cache, 256 MiB at least,
  counted the same way), from BM_DequantizeAgainstCopy (below); target
  >= 85%; and, since a dequantiser writes 3.8-7.5 bytes for each it reads,
  the output's GB/s against the write rate (BM_StreamWrite's memset)
  beside it, the bound that holds it (docs/quantisation.md);
- quantise f32 -> block type: >= 1.0x ggml_quantize_chunk on one thread, and
  the all-thread rate for scaling (ggml's split over std::threads);
- y = x W^T with W 4096 x 4096: M = 1 over cold weights (distinct copies
  spanning four times the last-level cache, 256 MiB at least, so read from
  DRAM) as GB/s of weight bytes against the read ceiling (BM_StreamRead's
  loop, from BM_LinearAgainstRead below; target >= 85%) and ggml (>= 1.0x, aim 1.2x for Q4_K and Q8_0); M = 16 and 512 against
  ggml (>= 1.0x). ggml runs llama.cpp's default path (the repacked layouts
  for Q4_0 and Q4_K);
- M = 1 with one copy of the weights, in the last-level cache: how fast each
  kernel runs when it does not wait on DRAM (no target; it says which of
  the cold figures are bound by the kernel and which by the memory).

Usage: compare_quant.py BUILD/bench/bench_quant [--rounds N] [--types q4_k,...]
Each round runs the whole binary; per benchmark the fastest round counts
(other processes on the machine only ever add time), except for the two
paired benchmarks below, which run once and report medians. Time it on an idle
machine: ggml's OpenMP threads spin, and a busy second core collapses them.

Some hosts' DRAM rate moves by half within minutes (the Zen 4 VMs here:
30-60 GB/s), so the cold M = 1 figures come from BM_LinearAgainstRead:
in one process, 24 rounds of a tessel pass over the cold copies and a
ggml pass, each between two passes of the read ceiling's loop. The table
shows medians over the rounds of the rates and of the per-round ratios
(each kernel's rate over the mean of the reads either side of it, and
tessel over ggml). The dequantisations are set against the copy the same
way (BM_DequantizeAgainstCopy, 16 rounds).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import run_benchmarks  # noqa: E402

TYPES = ["q4_0", "q8_0", "q4_k", "q5_k", "q6_k", "iq4_xs"]


def best(tool, pattern, rounds, min_time):
    out = {}
    for _ in range(rounds):
        for name, e in run_benchmarks(tool, pattern, min_time=min_time).items():
            if name not in out or e["real_time"] < out[name]["real_time"]:
                out[name] = e
    return out


def gbps(e):
    return e["bytes_per_second"] / 1e9 if e else None


def paired(tool, name, types):
    """Per type: the counters (medians over its rounds) of BM_<name>/type,
    a benchmark that alternates the kernels with a ceiling's loop."""
    out = {}
    for key, e in run_benchmarks(tool, f"BM_{name}/(" + "|".join(types) + ")/",
                                 0.01).items():
        out[key.split("/")[1]] = e
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--types", default=",".join(TYPES))
    ap.add_argument("--min-time", type=float, default=0.3)
    args = ap.parse_args()
    types = args.types.split(",")
    pattern = ("BM_Stream(Copy|Read|Write)/|BM_Quantize/(" + "|".join(types) + ")/|"
               "BM_LinearInCache/(" + "|".join(types) + ")/|"
               "BM_Linear/(" + "|".join(types) + ")/[a-z]+/(16|512)/")
    r = best(args.tool, pattern, args.rounds, args.min_time)
    dequant = paired(args.tool, "DequantizeAgainstCopy", types)
    cold = paired(args.tool, "LinearAgainstRead", types)
    copy, read = gbps(r.get("BM_StreamCopy")), gbps(r.get("BM_StreamRead"))
    write = gbps(r.get("BM_StreamWrite"))
    print(f"STREAM copy {copy:.1f} GB/s, read {read:.1f} GB/s, write "
          f"{write:.1f} GB/s (fastest round; the fractions below use the "
          f"ceilings measured beside each kernel)\n")

    def ratio(a, b):
        return f"{gbps(a) / gbps(b):.2f}x" if a and b else "-"

    def get(kind, t, who, arg):
        return r.get(f"BM_{kind}/{t}/{who}/{arg}")

    threads = max(int(k.rsplit("/", 1)[1]) for k in r if k.startswith("BM_Quantize/"))
    print("| type | dequantise GB/s tessel / ggml | copy GB/s | tessel of copy | "
          "ggml of copy | ratio | write GB/s | tessel of write | ggml of write | "
          "quantise 1 thread ratio | all threads ratio | tessel scaling |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for t in types:
        d = dequant.get(t)
        cells = (f"{d['tessel_GBps']:.1f} / {d['ggml_GBps']:.1f} | {d['copy_GBps']:.1f} | "
                 f"{d['tessel_of_copy']:.0%} | {d['ggml_of_copy']:.0%} | "
                 f"{d['tessel_over_ggml']:.2f}x | {d['write_GBps']:.1f} | "
                 f"{d['tessel_of_write']:.0%} | {d['ggml_of_write']:.0%}"
                 if d else "- | - | - | - | - | - | - | -")
        q1t, q1g = get("Quantize", t, "tessel", 1), get("Quantize", t, "ggml", 1)
        qat, qag = get("Quantize", t, "tessel", threads), get("Quantize", t, "ggml", threads)
        scaling = f"{gbps(qat) / gbps(q1t):.2f}x" if qat and q1t else "-"
        print(f"| {t} | {cells} | {ratio(q1t, q1g)} | {ratio(qat, qag)} | {scaling} |")
    print()
    print("| type | M=1 cold GB/s tessel / ggml | read GB/s | tessel of read | ggml of read | "
          "ratio | M=1 in cache tessel / ggml | M=16 ratio | M=512 ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for t in types:
        c = cold.get(t)
        ct, cg = get("LinearInCache", t, "tessel", 1), get("LinearInCache", t, "ggml", 1)
        hot = f"{gbps(ct):.1f} / {gbps(cg):.1f}" if ct and cg else "-"
        warm = (f"{ratio(get('Linear', t, 'tessel', 16), get('Linear', t, 'ggml', 16))} | "
                f"{ratio(get('Linear', t, 'tessel', 512), get('Linear', t, 'ggml', 512))}")
        if not c:
            print(f"| {t} | - | - | - | - | - | {hot} | {warm} |")
            continue
        print(f"| {t} | {c['tessel_GBps']:.1f} / {c['ggml_GBps']:.1f} | {c['read_GBps']:.1f} | "
              f"{c['tessel_of_read']:.0%} | {c['ggml_of_read']:.0%} | "
              f"{c['tessel_over_ggml']:.2f}x | {hot} | {warm} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
