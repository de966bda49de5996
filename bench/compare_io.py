"""The interchange issue's speed targets, measured in one run:

1. Loading is O(header): load_safetensors / load_gguf (BM_LoadHeader,
   BM_LoadGgufHeader) and the real `tessel inspect FILE` (a subprocess,
   best of N) on files of 10 MiB to 2 GiB with 100 tensors each; the
   ratio of the 2 GiB time to the 10 MiB time is ~1 when flat.
2. convert f32 -> bf16 of a cached 512 MiB file streams at >= 70% of the
   machine's memory-copy bandwidth (BM_StreamCopy, all threads, same run):
   prints GB/s of the full convert, of its in-memory cast stream and of a
   plain file copy, and their ratios.

GB/s count bytes read + bytes written, as BM_StreamCopy does (its memcpy
of 64 MiB counts 128 MiB); the "input GB/s" column divides the input's
size alone by the time.

Usage: compare_io.py BUILD/bench/bench_io [--cli BUILD/tools/cli/tessel]
                     [--repeats N]
Files go to a temporary directory under TMPDIR (default /tmp) and are
removed at the end (bench_io removes its own at exit)."""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import best_seconds, run_benchmarks  # noqa: E402

SIZES_MIB = [10, 100, 1024, 2048]
TENSORS, ROW = 100, 256
TARGET = 0.70


def rows_for(mib):
    return (mib << 20) // TENSORS // (ROW * 4)


def sparse_safetensors(path, mib):
    """The layout bench_io writes: 100 f32 tensors [rows, 256], the data a
    hole left by truncate (a sparse file)."""
    rows = rows_for(mib)
    nbytes = rows * ROW * 4
    header = {"__metadata__": {"format": "pt"}}
    for i in range(TENSORS):
        header[f"model.layers.{i}.weight"] = {"dtype": "F32", "shape": [rows, ROW],
                                              "data_offsets": [i * nbytes, (i + 1) * nbytes]}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        f.truncate(8 + len(text) + TENSORS * nbytes)


def sparse_gguf(path, mib):
    rows = rows_for(mib)
    nbytes = rows * ROW * 4

    def s(v):
        return struct.pack("<Q", len(v)) + v.encode()
    h = b"GGUF" + struct.pack("<IQQ", 3, TENSORS, 2)
    h += s("general.architecture") + struct.pack("<I", 8) + s("llama")
    h += s("general.name") + struct.pack("<I", 8) + s("bench")
    for i in range(TENSORS):
        h += s(f"blk.{i}.weight") + struct.pack("<IQQIQ", 2, ROW, rows, 0, i * nbytes)
    h += b"\0" * (-len(h) % 32)
    with open(path, "wb") as f:
        f.write(h)
        f.truncate(len(h) + TENSORS * nbytes)


def best_of(tool, pattern, min_time, runs):
    """run_benchmarks `runs` times; per benchmark, the entry of the run with
    the lowest real time (other processes on the machine only ever add
    time)."""
    best = {}
    for _ in range(runs):
        for name, e in run_benchmarks(tool, pattern, min_time=min_time).items():
            if name not in best or seconds(e) < seconds(best[name]):
                best[name] = e
    return best


def seconds(entry):
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[entry["time_unit"]]
    return entry["real_time"] * scale


def cli_inspect_times(cli, repeats):
    """Best-of-`repeats` wall time of `tessel inspect FILE` per size."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="tessel-compare-io-") as tmp:
        for mib in SIZES_MIB:
            for kind, write in (("safetensors", sparse_safetensors), ("gguf", sparse_gguf)):
                path = os.path.join(tmp, f"m{mib}.{kind}")
                write(path, mib)
                cmd = [cli, "inspect", path]
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                out[(kind, mib)] = best_seconds(
                    lambda: subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL), repeats)
                os.remove(path)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tool")
    parser.add_argument("--cli", help="the tessel command (default: BUILD/tools/cli/tessel)")
    parser.add_argument("--repeats", type=int, default=15,
                        help="CLI runs per file (best of)")
    parser.add_argument("--runs", type=int, default=3,
                        help="runs of the benchmark binary (best of)")
    args = parser.parse_args()
    cli = args.cli or os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(args.tool))),
                                   "tools", "cli", "tessel")
    threads = os.environ.get("TESSEL_NUM_THREADS", os.cpu_count())

    # 1. O(header) loading.
    loads = best_of(args.tool, "BM_Load", 0.3, args.runs)
    cli_times = cli_inspect_times(cli, args.repeats)
    print(f"Loading from the header alone (100 f32 tensors, sparse files); best of "
          f"{args.runs} runs, {args.repeats} for the CLI:")
    print(f"{'file':>8} {'load_safetensors':>17} {'load_gguf':>10} "
          f"{'inspect .safetensors':>21} {'inspect .gguf':>14}")
    t = {}
    for mib in SIZES_MIB:
        t[mib] = (seconds(loads[f"BM_LoadHeader/{mib}"]), seconds(loads[f"BM_LoadGgufHeader/{mib}"]),
                  cli_times[("safetensors", mib)], cli_times[("gguf", mib)])
        size = f"{mib} MiB" if mib < 1024 else f"{mib // 1024} GiB"
        print(f"{size:>8} {t[mib][0] * 1e6:>14.0f} us {t[mib][1] * 1e6:>7.0f} us "
              f"{t[mib][2] * 1e3:>18.2f} ms {t[mib][3] * 1e3:>11.2f} ms")
    ratios = [t[2048][k] / t[10][k] for k in range(4)]
    print(f"{'2G/10M':>8} {ratios[0]:>16.2f}x {ratios[1]:>9.2f}x {ratios[2]:>20.2f}x "
          f"{ratios[3]:>13.2f}x")
    start = [cli, "--version"]
    startup = best_seconds(lambda: subprocess.run(start, check=True, stdout=subprocess.DEVNULL),
                           args.repeats)
    print(f"(`tessel --version`, the process start alone: {startup * 1e3:.2f} ms)")
    flat = all(r < 1.5 for r in ratios)
    print(f"inspect time flat from 10 MiB to 2 GiB (every ratio < 1.5): "
          f"{'MET' if flat else 'MISSED'}\n")

    # 2. Streaming convert against the ceilings.
    s = best_of(args.tool, "BM_StreamCopy|BM_CastStream|BM_ConvertF32ToBF16|BM_FileCopy", 2,
                args.runs)
    copy = s["BM_StreamCopy"]["bytes_per_second"]
    rows = [("BM_StreamCopy", "memcpy 64 MiB, all threads")]
    rows.append(("BM_CastStream", "CastingSource f32->bf16, 2 MiB chunks"))
    for where in ("tmpdir", "shm"):
        rows.append((f"BM_ConvertF32ToBF16/{where}", "load + cast + write + fsync + rename"))
    for where in ("tmpdir", "shm"):
        rows.append((f"BM_FileCopy/{where}", "write() + fsync + rename of the input"))
    print(f"512 MiB of f32 in the page cache, {threads} threads, best of {args.runs} runs; "
          f"GB/s = (read + written) / s")
    print(f"{'benchmark':<29} {'ms':>8} {'GB/s':>7} {'input GB/s':>11} {'/StreamCopy':>12}  where")
    for name, _ in rows:
        e = s.get(name)
        if e is None:
            print(f"{name:<29} (failed or skipped)")
            continue
        gbs = e["bytes_per_second"] / 1e9
        inp = e["input_bytes"] / seconds(e) / 1e9 if "input_bytes" in e else gbs / 2
        print(f"{name:<29} {seconds(e) * 1e3:>8.1f} {gbs:>7.2f} {inp:>11.2f} "
              f"{e['bytes_per_second'] / copy:>11.2f}x  {e.get('label', '')}")

    def rate(name):
        return s[name]["bytes_per_second"] if name in s else float("nan")
    print()
    print(f"cast stream / StreamCopy            {rate('BM_CastStream') / copy:.2f}")
    for where in ("tmpdir", "shm"):
        conv = rate(f"BM_ConvertF32ToBF16/{where}")
        fcopy = rate(f"BM_FileCopy/{where}")
        print(f"convert ({where}) / StreamCopy  {conv / copy:>9.2f}   "
              f"convert / file copy ({where}) {conv / fcopy:.2f}")
    # The floor of any convert that write()s its output: the file copy's
    # time scaled to the convert's output bytes (bf16: half the input).
    for where in ("tmpdir", "shm"):
        conv, fcopy = s.get(f"BM_ConvertF32ToBF16/{where}"), s.get(f"BM_FileCopy/{where}")
        if conv and fcopy:
            floor = seconds(fcopy) * conv["output_bytes"] / fcopy["output_bytes"]
            print(f"writing the {conv['output_bytes'] / 2**20:.0f} MiB output alone ({where}, "
                  f"from the file copy) {floor * 1e3:.0f} ms = {floor / seconds(conv):.0%} of "
                  f"the convert's {seconds(conv) * 1e3:.0f} ms")
    for where in ("tmpdir", "shm"):
        ratio = rate(f"BM_ConvertF32ToBF16/{where}") / copy
        print(f"convert f32->bf16 >= {TARGET:.0%} of memory-copy bandwidth ({where}): "
              f"{'MET' if ratio >= TARGET else 'MISSED'} ({ratio:.0%})")


if __name__ == "__main__":
    main()
