"""Header cost against the tensor count (issue 19: inspect and GGUF writes
were quadratic). For 1k to 100k tensors of 4 f32 values each, times the
`tessel` command reading a safetensors file (`inspect`, `inspect --json`),
reading a GGUF file (`inspect`), and writing GGUF, safetensors and a
directory of .npy files from it; and, as peers in the same run, the
`safetensors` package opening the file and listing its tensors (its Rust
header parser) and the `gguf` package reading (GGUFReader) and writing
(GGUFWriter, without fsync) the same tensors. Best of --rounds.

    .venv/bin/python bench/bench_many_tensors.py build/tools/cli/tessel
"""
import argparse
import os
import subprocess
import tempfile
import time

import gguf
import numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file


def best(fn, rounds):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def tessel(exe, *args):
    subprocess.run([exe, *args], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("tessel")
    p.add_argument("--counts", default="1000,10000,40000,80000,100000")
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    exe = os.path.abspath(a.tessel)
    print(f"{'tensors':>8} {'inspect st':>10} {'safe_open':>9} {'ratio':>6} "
          f"{'--json':>7} {'inspect gguf':>12} {'GGUFReader':>10} {'ratio':>6} "
          f"{'write gguf':>10} {'GGUFWriter':>10} {'ratio':>6} "
          f"{'write st':>8} {'npy-dir':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(c) for c in a.counts.split(",")]:
            tensors = {f"model.layers.{i // 16}.t{i % 16}.weight":
                       np.full(4, i, np.float32) for i in range(n)}
            st = os.path.join(tmp, f"m{n}.safetensors")
            save_file(tensors, st)
            gg = os.path.join(tmp, f"m{n}.gguf")
            tessel(exe, "convert", st, gg, "--tensors", "--arch", "llama")

            def safe_open_keys():
                with safe_open(st, "np") as f:
                    assert len(list(f.keys())) == n

            def gguf_reader():
                assert len(gguf.GGUFReader(gg).tensors) == n

            def gguf_writer():
                w = gguf.GGUFWriter(os.path.join(tmp, "peer.gguf"), "llama")
                for name, t in tensors.items():
                    w.add_tensor(name, t)
                w.write_header_to_file()
                w.write_kv_data_to_file()
                w.write_tensors_to_file()
                w.close()

            # A fresh directory, and nothing deleted before it: ext4 looks
            # for a free inode past recently deleted ones, so writing 80k
            # files just after removing 80k takes minutes of kernel time,
            # whoever writes them.
            def npy_dir():
                tessel(exe, "convert", st, os.path.join(tmp, f"npy{n}"),
                       "--to", "npy-dir")

            r = a.rounds
            t_inspect = best(lambda: tessel(exe, "inspect", st), r)
            t_safe = best(safe_open_keys, r)
            t_json = best(lambda: tessel(exe, "inspect", "--json", st), r)
            t_inspect_g = best(lambda: tessel(exe, "inspect", gg), r)
            t_reader = best(gguf_reader, r)
            t_write_g = best(lambda: tessel(exe, "convert", st,
                                            os.path.join(tmp, "w.gguf"),
                                            "--tensors", "--arch", "llama"), r)
            t_writer = best(gguf_writer, r)
            t_write_st = best(lambda: tessel(exe, "convert", gg,
                                             os.path.join(tmp, "w.safetensors")),
                              r)
            t_npy = best(npy_dir, 1)
            print(f"{n:>8} {t_inspect:>10.3f} {t_safe:>9.3f} "
                  f"{t_safe / t_inspect:>5.2f}x {t_json:>7.3f} "
                  f"{t_inspect_g:>12.3f} {t_reader:>10.3f} "
                  f"{t_reader / t_inspect_g:>5.1f}x {t_write_g:>10.3f} "
                  f"{t_writer:>10.3f} {t_writer / t_write_g:>5.1f}x "
                  f"{t_write_st:>8.3f} {t_npy:>8.2f}", flush=True)
    print("seconds, best of the rounds (npy-dir: one); ratio = peer / tessel "
          "(above 1: tessel faster). tessel's times are whole processes "
          "(start-up included) and its writes fsync; GGUFWriter's do not.")


if __name__ == "__main__":
    main()
