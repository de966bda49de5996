"""tessel's compute-bound kernels next to their peers, with this machine's
ceilings measured in the same run. Prints the tables of BENCHMARKS.md and
checks the targets of the matmul/convolution/transformer issue.

    .venv/bin/python bench/compare_kernels.py build/bench/bench_kernels [--only TEXT]

--only runs the rows whose label contains TEXT (and the targets on them).

Peers at their best, in one run:
- oneDNN called directly (bench_kernels): its BLAS-like sgemm and its
  matmul primitive (f32, bf16, u8s8s32);
- OpenBLAS's sgemm (bench_kernels loads libopenblas.so.0) with the core
  type named for this CPU: OPENBLAS_CORETYPE=SkylakeX where the CPU has
  AVX-512, Haswell otherwise (Debian's OpenBLAS 0.3.21 may not recognise
  newer CPUs and fall back to slower kernels);
- PyTorch CPU (Debian's 1.13, OpenBLAS for GEMM, oneDNN for convolution)
  with every core and ATEN_CPU_CAPABILITY=avx512 where the CPU has it.
Ceilings: BM_PeakFmaF32 (f32 FMA), BM_PeakDpBf16 (VDPBF16PS),
BM_PeakVnniU8S8 (VPDPBUSD), BM_StreamRead (DRAM read bandwidth).
"""
import argparse
import os
import sys

AVX512 = "avx512f" in open("/proc/cpuinfo").read()
# Both this script's PyTorch and the benchmark's OpenBLAS read these when
# they load: set them first.
os.environ["OPENBLAS_CORETYPE"] = "SkylakeX" if AVX512 else "Haswell"
if AVX512:
    os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx512")

from timing import best_seconds, median, run_benchmarks  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

THREADS = len(os.sched_getaffinity(0))
torch.set_num_threads(THREADS)
ROUNDS = 3
HIDDEN = 4096
COLD_BYTES = 256 << 20
DECODE_LENGTHS = (128, 4096)


def torch_peers():
    """name -> (work per call, callable): work in flops, or weight bytes."""
    g = torch.Generator().manual_seed(0)
    peers = {}
    for n in (512, 1024, 2048):
        a, b = torch.randn(n, n, generator=g), torch.randn(n, n, generator=g)
        c = torch.empty(n, n)
        peers[f"mm{n}"] = (2.0 * n ** 3, lambda a=a, b=b, c=c: torch.mm(a, b, out=c))
    a16, b16 = torch.randn(2048, 2048).bfloat16(), torch.randn(2048, 2048).bfloat16()
    peers["mm2048_bf16"] = (2.0 * 2048 ** 3, lambda: torch.mm(a16, b16))
    for dtype, tag in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
        size = HIDDEN * HIDDEN * (4 if dtype == torch.float32 else 2)
        weights = [torch.randn(HIDDEN, HIDDEN, generator=g).to(dtype)
                   for _ in range(max(2, COLD_BYTES // size))]
        for m in (1, 16, 64):
            x = torch.randn(m, HIDDEN, generator=g).to(dtype)
            state = {"i": 0}

            def linear(x=x, weights=weights, state=state):
                state["i"] += 1
                return F.linear(x, weights[state["i"] % len(weights)])
            peers[f"linear_{tag}_{m}"] = (size, linear)
    w_prompt = torch.randn(3072, 1024, generator=g).bfloat16()
    for m in (128, 512):
        x = torch.randn(m, 1024, generator=g).bfloat16()
        peers[f"linear_bf16_prompt_{m}"] = (2.0 * m * 3072 * 1024,
                                            lambda x=x: F.linear(x, w_prompt))
    x = torch.randn(8, 64, 56, 56, generator=g)
    w = torch.randn(64, 64, 3, 3, generator=g)
    conv_flops = 2.0 * 8 * 64 * 56 * 56 * 64 * 9
    peers["conv_nchw"] = (conv_flops, lambda: F.conv2d(x, w, padding=1))
    xl = x.to(memory_format=torch.channels_last)
    wl = w.to(memory_format=torch.channels_last)
    peers["conv_nhwc"] = (conv_flops, lambda: F.conv2d(xl, wl, padding=1))
    q, k, v = (torch.randn(1, 32, 2048, 128, generator=g) for _ in range(3))
    mask = torch.full((2048, 2048), float("-inf")).triu(1)
    peers["attention"] = (2.0 * 2 * 32 * 2048.0 * 2048 * 128 / 2,
                          lambda: torch.softmax(q @ k.transpose(-1, -2) / 128 ** 0.5 + mask, -1) @ v)
    # A decode step: the two query heads of each key/value head as the rows
    # of one product (PyTorch's fastest form: no repeated keys), against a
    # cache that is a prefix of a longer buffer, as bench_kernels has it.
    for length in DECODE_LENGTHS:
        qd = torch.randn(1, 8, 2, 128, generator=g)
        kd, vd = (torch.randn(1, 8, 2 * length, 128, generator=g)[:, :, :length]
                  for _ in range(2))
        peers[f"decode_attention_{length}"] = (
            2 * 8 * length * 128 * 4,
            lambda qd=qd, kd=kd, vd=vd: torch.softmax(qd @ kd.transpose(-1, -2) / 128 ** 0.5, -1) @ vd)
    return peers


# One row per comparison: label, tessel benchmark, in-process peers, PyTorch
# peer, ceiling, and whether rates are flops ("G") or weight bytes ("GB").
ROWS = []
for n in (512, 1024, 2048):
    ROWS.append((f"f32 GEMM {n}", f"BM_Matmul/f32/{n}",
                 {"oneDNN sgemm": f"BM_OneDnnSgemm/{n}", "oneDNN matmul": f"BM_OneDnn/f32/{n}",
                  "OpenBLAS": f"BM_OpenBlas/{n}"}, f"mm{n}", "BM_PeakFmaF32", "G"))
ROWS.append(("bf16 GEMM 2048", "BM_Matmul/bf16/2048", {"oneDNN matmul": "BM_OneDnn/bf16/2048"},
             "mm2048_bf16", "BM_PeakDpBf16", "G"))
ROWS.append(("u8s8s32 GEMM 2048", "BM_Matmul/u8s8/2048", {"oneDNN matmul": "BM_OneDnn/u8s8/2048"},
             None, "BM_PeakVnniU8S8", "G"))
for m in (1, 16, 64):
    ROWS.append((f"x W^T f32, M={m}", f"BM_LinearCold/f32/{m}",
                 {"oneDNN matmul": f"BM_OneDnnLinearCold/{m}", "OpenBLAS": f"BM_OpenBlasLinearCold/{m}"},
                 f"linear_f32_{m}", "BM_StreamRead", "GB"))
    ROWS.append((f"x W^T bf16, M={m}", f"BM_LinearCold/bf16/{m}", {}, f"linear_bf16_{m}",
                 "BM_StreamRead", "GB"))
# A bf16 checkpoint's prompt products (f32 activations, bf16 weights of
# 3072 x 1024) under each matmul precision, against PyTorch's bf16 linear
# (a bf16 model's activations are bf16 there).
for m in (128, 512):
    for precision in ("f32", "bf16"):
        ROWS.append((f"x W^T bf16 weights, {precision} precision, M={m}",
                     f"BM_LinearBf16Weights/{precision}/{m}", {}, f"linear_bf16_prompt_{m}",
                     "BM_PeakDpBf16", "G"))
ROWS.append(("conv2d NCHW/OIHW", "BM_Conv2d/nchw", {}, "conv_nchw", "BM_PeakFmaF32", "G"))
ROWS.append(("conv2d NHWC/HWCF", "BM_Conv2d/nhwc", {}, "conv_nhwc", "BM_PeakFmaF32", "G"))
ROWS.append(("causal attention [1,32,2048,128]", "BM_AttentionCausal", {}, "attention",
             "BM_PeakFmaF32", "G"))
# Rated in bytes of keys and values; at these lengths they sit in the last
# level cache, so the STREAM column says how far from DRAM speed, not a limit.
for length in DECODE_LENGTHS:
    ROWS.append((f"decode attention 16/8 heads, {length} positions", f"BM_AttentionDecode/{length}",
                 {}, f"decode_attention_{length}", "BM_StreamRead", "GB"))


def run_bench(tool, names):
    """{name: (G items/s, GB/s, tokens/s, label)} for exactly these benchmarks."""
    found = run_benchmarks(tool, "^(" + "|".join(names) + ")/real_time$")
    return {name: (b.get("items_per_second", 0) / 1e9, b.get("bytes_per_second", 0) / 1e9,
                   b.get("tokens_per_second"), b.get("label", ""))
            for name, b in found.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("--only", default="", help="run the rows whose label contains this")
    args = ap.parse_args()
    tool = args.tool
    peers = torch_peers()
    results = {}
    for label, mine, direct, torch_key, ceiling, unit in ROWS:
        if args.only not in label:
            continue
        names = [mine, ceiling] + list(direct.values())
        samples = {n: [] for n in names}
        tokens = []
        labels = {}
        torch_rates = []
        # Kernel, ceiling and peers back to back, ROUNDS times: the machine's
        # bandwidth and clocks drift over minutes.
        for _ in range(ROUNDS):
            got = run_bench(tool, names)
            for n in names:
                if n in got:
                    g_items, gbytes, tok, lab = got[n]
                    rate = gbytes if (unit == "GB" or n == "BM_StreamRead") else g_items
                    samples[n].append(rate)
                    labels[n] = lab
            if mine in got:
                tokens.append(got[mine][2])
            if torch_key:
                work, fn = peers[torch_key]
                torch_rates.append(work / best_seconds(fn, 3) / 1e9)
        results[label] = {
            "tessel": median(samples[mine]), "ceiling": median(samples[ceiling]),
            "ceiling_name": ceiling, "unit": unit, "tokens": median(tokens),
            "peers": {p: median(samples[b]) for p, b in direct.items()},
            "torch": median(torch_rates) if torch_key else None,
            "labels": labels,
        }

    openblas_core = next((r["labels"].get("BM_OpenBlas/2048") for r in results.values()
                          if "BM_OpenBlas/2048" in r["labels"]), "?")
    print(f"CPU threads: {THREADS}; PyTorch {torch.__version__} ({torch.get_num_threads()} threads, "
          f"ATEN_CPU_CAPABILITY={os.environ.get('ATEN_CPU_CAPABILITY', 'default')}); "
          f"OpenBLAS core {openblas_core}; medians of {ROUNDS} interleaved rounds\n")
    # A CPU without AVX-512 BF16 or VNNI has no such ceiling, and oneDNN has
    # no bf16 kernel there: those cells and targets say "n/a".
    print("| kernel | tessel | of ceiling | oneDNN sgemm | oneDNN matmul | OpenBLAS | PyTorch | vs best peer |")
    print("|---|---|---|---|---|---|---|---|")
    for label, r in results.items():
        unit = "GB/s" if r["unit"] == "GB" else ("GOP/s" if "u8s8" in label else "GFLOP/s")
        fmt = lambda v: f"{v:.0f}" if v else "-"
        peer_values = [v for v in list(r["peers"].values()) + [r["torch"]] if v]
        best = max(peer_values) if peer_values else None
        ceiling = r["ceiling_name"].replace("BM_Peak", "").replace("BM_Stream", "STREAM ")
        vs_best = f"{r['tessel'] / best:.2f}x" if best else "-"
        of_ceiling = (f"{r['tessel'] / r['ceiling']:.0%} of {ceiling} {r['ceiling']:.0f}"
                      if r["ceiling"] else f"n/a (no {ceiling} here)")
        print(f"| {label} | {r['tessel']:.0f} {unit} | {of_ceiling} | "
              f"{fmt(r['peers'].get('oneDNN sgemm'))} | "
              f"{fmt(r['peers'].get('oneDNN matmul'))} | {fmt(r['peers'].get('OpenBLAS'))} | "
              f"{fmt(r['torch'])} | {vs_best} |")

    def cell(label, *keys):
        """results[label][keys...], None for a row this run skipped (--only)."""
        value = results.get(label)
        for key in keys:
            if value is None:
                return None
            value = value.get(key)
        return value

    def ratio_best(label):
        r = results.get(label)
        if r is None:
            return None
        peer_values = [v for v in list(r["peers"].values()) + [r["torch"]] if v]
        return r["tessel"] / max(peer_values) if peer_values else None

    def ratio(a, b):
        return a / b if a and b else None

    def vs(label, what, *keys):
        return ratio(cell(label, "tessel"), cell(label, what, *keys))

    targets = []
    for n in (512, 1024, 2048):
        targets.append((f"f32 GEMM {n} >= best peer", ratio_best(f"f32 GEMM {n}"), 1.0))
    targets.append(("f32 GEMM 2048 >= 80% of FMA peak", vs("f32 GEMM 2048", "ceiling"), 0.80))
    for m in (1, 16, 64):
        targets.append((f"x W^T f32 M={m} >= best peer", ratio_best(f"x W^T f32, M={m}"), 1.0))
        targets.append((f"x W^T bf16 M={m} >= PyTorch bf16", ratio_best(f"x W^T bf16, M={m}"), 1.0))
    targets.append(("x W^T f32 M=1 >= 85% of STREAM read", vs("x W^T f32, M=1", "ceiling"), 0.85))
    targets.append(("bf16 weights >= 1.8x f32 tokens/s at M=1",
                    ratio(cell("x W^T bf16, M=1", "tokens"), cell("x W^T f32, M=1", "tokens")), 1.8))
    targets.append(("bf16 GEMM 2048 >= oneDNN bf16 matmul",
                    vs("bf16 GEMM 2048", "peers", "oneDNN matmul"), 1.0))
    targets.append(("int8 GEMM 2048 >= 0.9x oneDNN u8s8s32",
                    vs("u8s8s32 GEMM 2048", "peers", "oneDNN matmul"), 0.9))
    targets.append(("conv2d NHWC >= PyTorch channels-last", vs("conv2d NHWC/HWCF", "torch"), 1.0))
    targets.append(("conv2d NCHW >= 1.5x PyTorch NCHW", vs("conv2d NCHW/OIHW", "torch"), 1.5))
    targets.append(("causal attention >= 1.5x PyTorch softmax(QK^T)V",
                    vs("causal attention [1,32,2048,128]", "torch"), 1.5))
    print("\n| target | measured | wanted | |\n|---|---|---|---|")
    for description, value, wanted in targets:
        if value is None and args.only:
            continue
        if value is None:
            print(f"| {description} | n/a on this CPU | {wanted:.2f} | |")
            continue
        print(f"| {description} | {value:.2f} | {wanted:.2f} | {'met' if value >= wanted else 'MISSED'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
