"""Hostile inputs and injected faults, run against the `tessel` command as a
user would meet them (issue 19's findings, each a regression test):

- inputs that are not regular files (FIFO, socket, character device) as
  safetensors, GGUF, .npy, a shard of a sharded checkpoint and the side
  files of a model directory: refused with E3001 at once, never a hang;
- duplicate tensor names and metadata keys (GGUF, safetensors, config.json)
  and GGUF names that are not UTF-8: refused at parse with E3001 (E4001
  for a model config); a GGUF string value that is not UTF-8 prints, and
  refuses to become a safetensors header;
- absurd model configs: E4001 under a 4 GiB address-space limit;
- kill -9 at random points of `convert` (every target), `quantize`,
  `merge` and `train` checkpointing: the destination is the old one or the
  new one, byte for byte, never partial; anonymous temporaries leave
  nothing, staged directories are removed by the next run;
- a failing write (RLIMIT_FSIZE: EFBIG, as ENOSPC would) gives E3002, no
  output and nothing left;
- an input truncated while it is read: E3001 naming the file, no signal;
- concurrent readers and writers agree.

Hangs are caught by a generous timeout per run (a hang is a failure, not a
slow run). The figures at the end (runs, refusals with the right code,
leftovers) are recorded in docs/reliability.md."""
import argparse
import json
import os
import random
import resource
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np
from safetensors.numpy import save_file

FAILURES = []
COUNTS = {"runs": 0, "refusals": 0, "leftovers": 0, "kills": 0}
TESSEL = None
HANG = 60  # seconds; far beyond any run here, so only a hang reaches it
AS_LIMIT = 4 << 30  # the outside run's address-space limit


def check(cond, what):
    if not cond:
        print("FAIL " + what)
        FAILURES.append(what)
    return cond


def run(*args, expect=None, code=None, limit_as=None, limit_fsize=None,
        env=None):
    """Runs tessel; checks the exit status and the error code printed."""
    def limits():
        if limit_as:
            resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))
        if limit_fsize is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_fsize, limit_fsize))
    COUNTS["runs"] += 1
    what = "tessel " + " ".join(os.path.basename(a) if os.sep in a else a
                                for a in args)
    try:
        p = subprocess.run([TESSEL, *args], capture_output=True, text=True,
                           timeout=HANG, preexec_fn=limits,
                           env=dict(os.environ, **(env or {})))
    except subprocess.TimeoutExpired:
        check(False, f"{what}: hung past {HANG} s")
        return None
    if expect is not None:
        ok = check(p.returncode == expect,
                   f"{what}: exit {p.returncode}, wanted {expect}: "
                   f"{p.stderr.strip()[-300:]}")
        if ok and code:
            ok = check(f"error {code}:" in p.stderr,
                       f"{what}: stderr names {code}: {p.stderr.strip()[-300:]}")
        if ok and expect != 0:
            COUNTS["refusals"] += 1
    return p


def entries(directory):
    return sorted(os.listdir(directory))


def leftovers(directory, keep):
    extra = [e for e in entries(directory) if e not in keep]
    COUNTS["leftovers"] += len(extra)
    return extra


def digest(path):
    """Bytes of a file, or of every file under a directory, by name."""
    if os.path.isdir(path):
        out = {}
        for root, _, files in os.walk(path):
            for f in files:
                full = os.path.join(root, f)
                with open(full, "rb") as fh:
                    out[os.path.relpath(full, path)] = fh.read()
        return out
    with open(path, "rb") as fh:
        return fh.read()


# ---- inputs --------------------------------------------------------------

def gguf_bytes(names, kvs=(), n_floats=4):
    """A GGUF v3 file with f32 tensors of `n_floats` values, written by hand
    so that it can hold what the gguf package refuses to write."""
    def s(b):
        return struct.pack("<Q", len(b)) + b
    out = b"GGUF" + struct.pack("<IQQ", 3, len(names), len(kvs))
    for k, v in kvs:
        out += s(k) + struct.pack("<I", 8) + s(v)
    size = 4 * n_floats
    stride = (size + 31) // 32 * 32
    for i, n in enumerate(names):
        out += s(n) + struct.pack("<IQIQ", 1, n_floats, 0, i * stride)
    out += b"\0" * ((32 - len(out) % 32) % 32)
    for i in range(len(names)):
        out += np.arange(n_floats, dtype=np.float32).tobytes()
        out += b"\0" * (stride - size)
    return out


def safetensors_bytes(header_text, data=b""):
    raw = header_text.encode()
    return struct.pack("<Q", len(raw)) + raw + data


ARCH = (b"general.architecture", b"llama")


def tiny_model(directory, config_overrides=None, hidden=32, inter=64,
               layers=2, vocab=256):
    """A llama checkpoint directory with a byte-level tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    rng = np.random.default_rng(0)
    heads, kv, head_dim = 4, 2, hidden // 4
    t = {"model.embed_tokens.weight": rng.standard_normal((vocab, hidden), np.float32),
         "model.norm.weight": np.ones(hidden, np.float32)}
    for i in range(layers):
        p = f"model.layers.{i}."
        t[p + "input_layernorm.weight"] = np.ones(hidden, np.float32)
        t[p + "post_attention_layernorm.weight"] = np.ones(hidden, np.float32)
        for n, shape in [("self_attn.q_proj", (heads * head_dim, hidden)),
                         ("self_attn.k_proj", (kv * head_dim, hidden)),
                         ("self_attn.v_proj", (kv * head_dim, hidden)),
                         ("self_attn.o_proj", (hidden, heads * head_dim)),
                         ("mlp.gate_proj", (inter, hidden)),
                         ("mlp.up_proj", (inter, hidden)),
                         ("mlp.down_proj", (hidden, inter))]:
            t[p + n + ".weight"] = (rng.standard_normal(shape, np.float32) * 0.05)
    config = {"model_type": "llama", "architectures": ["LlamaForCausalLM"],
              "vocab_size": vocab, "hidden_size": hidden,
              "intermediate_size": inter, "num_hidden_layers": layers,
              "num_attention_heads": heads, "num_key_value_heads": kv,
              "max_position_embeddings": 256, "tie_word_embeddings": True,
              "rms_norm_eps": 1e-6, "rope_theta": 10000.0}
    config.update(config_overrides or {})
    os.makedirs(directory, exist_ok=True)
    save_file(t, os.path.join(directory, "model.safetensors"))
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(config, f)
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    tok = Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(alphabet)},
                               merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.save(os.path.join(directory, "tokenizer.json"))
    return directory


def refused_by_every_reader(path, out):
    """`inspect` in its three forms and `convert` to three formats: each
    must refuse `path` with E3001 (exit 3)."""
    for args in (["inspect", path], ["inspect", "--stats", path],
                 ["inspect", "--json", path],
                 ["convert", path, os.path.join(out, "x.safetensors")],
                 ["convert", path, os.path.join(out, "x.gguf"), "--tensors",
                  "--arch", "llama"],
                 ["convert", path, os.path.join(out, "x"), "--to", "npy-dir"]):
        run(*args, expect=3, code="E3001")


# ---- 1: inputs that are not regular files ---------------------------------

def special_files(tmp):
    d = os.path.join(tmp, "special")
    os.makedirs(d)
    # A checkpoint whose second shard is a FIFO.
    sharded = os.path.join(d, "sharded")
    os.makedirs(sharded)
    save_file({"a": np.zeros(4, np.float32)},
              os.path.join(sharded, "model-00001-of-00002.safetensors"))
    os.mkfifo(os.path.join(sharded, "model-00002-of-00002.safetensors"))
    with open(os.path.join(sharded, "model.safetensors.index.json"), "w") as f:
        json.dump({"weight_map": {"a": "model-00001-of-00002.safetensors",
                                  "b": "model-00002-of-00002.safetensors"}}, f)
    inputs = [sharded]
    for ext in ("safetensors", "gguf", "npy"):
        fifo = os.path.join(d, "pipe." + ext)
        os.mkfifo(fifo)
        inputs.append(fifo)
        device = os.path.join(d, "device." + ext)
        os.symlink("/dev/zero", device)
        inputs.append(device)
    sock_path = os.path.join(d, "socket.safetensors")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(sock_path)
    inputs.append(sock_path)
    out = os.path.join(tmp, "special_out")
    os.makedirs(out)
    for path in inputs:
        refused_by_every_reader(path, out)
    check(leftovers(out, []) == [], "refused conversions leave nothing")
    sock.close()
    run("generate", "--model", os.path.join(d, "pipe.gguf"), "--prompt", "hi",
        expect=3, code="E3001")
    # The side files of a model directory.
    for side in ("config.json", "tokenizer.json"):
        model = tiny_model(os.path.join(tmp, "fifo_" + side.split(".")[0]))
        os.remove(os.path.join(model, side))
        os.mkfifo(os.path.join(model, side))
        run("generate", "--model", model, "--prompt", "hi", "--max-tokens", "2",
            expect=3, code="E3001")


# ---- 2, 3: duplicates and invalid UTF-8 ------------------------------------

def duplicates_and_utf8(tmp):
    d = os.path.join(tmp, "dup")
    os.makedirs(d)
    out = os.path.join(tmp, "dup_out")
    os.makedirs(out)
    bad = {
        "dup_tensor.gguf": gguf_bytes([b"a", b"a"], [ARCH]),
        "dup_key.gguf": gguf_bytes([b"a"], [ARCH, (b"general.architecture", b"qwen2")]),
        "bad_name.gguf": gguf_bytes([b"\xffa"], [ARCH]),
        "bad_key.gguf": gguf_bytes([b"a"], [ARCH, (b"general.\xfe", b"x")]),
        "dup_tensor.safetensors": safetensors_bytes(
            '{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
            '"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', b"\0" * 4),
        "dup_meta.safetensors": safetensors_bytes(
            '{"__metadata__":{"k":"1","k":"2"},'
            '"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', b"\0" * 4),
    }
    for name, data in bad.items():
        path = os.path.join(d, name)
        with open(path, "wb") as f:
            f.write(data)
        refused_by_every_reader(path, out)
    check(leftovers(out, []) == [], "refused conversions leave nothing")

    # A string value that is not UTF-8: shown (U+FFFD), never a foreign
    # exception; a safetensors header cannot hold it.
    path = os.path.join(d, "bad_value.gguf")
    with open(path, "wb") as f:
        f.write(gguf_bytes([b"a"], [ARCH, (b"general.name", b"\xff\xfe")]))
    p = run("inspect", "--json", path, expect=0)
    if p is not None and p.returncode == 0:
        shown = json.loads(p.stdout)["metadata"]["general.name"]
        check("\ufffd" in shown, f"the invalid value shows as U+FFFD ({shown!r})")
    run("convert", path, os.path.join(out, "y.safetensors"), expect=3, code="E3001")
    run("convert", path, os.path.join(out, "y.gguf"), expect=0)

    # A model config with a key twice.
    model = tiny_model(os.path.join(tmp, "dup_config"))
    cfg = os.path.join(model, "config.json")
    with open(cfg) as f:
        text = f.read()
    with open(cfg, "w") as f:
        f.write(text[:-1] + ', "num_hidden_layers": 7}')
    run("generate", "--model", model, "--prompt", "hi", "--max-tokens", "2",
        expect=4, code="E4001")


# ---- 4: absurd configs, under a 4 GiB address space ------------------------

def absurd_configs(tmp):
    cases = {"layers": {"num_hidden_layers": 10**9},
             "heads": {"num_attention_heads": 2**30},
             "head_dim": {"head_dim": 2**30},
             "intermediate": {"intermediate_size": 2**30},
             "vocab": {"vocab_size": 2**31 - 1},
             "kv_heads": {"num_key_value_heads": 2**30},
             "negative": {"hidden_size": -5}}
    for name, override in cases.items():
        model = tiny_model(os.path.join(tmp, "config_" + name), override)
        run("generate", "--model", model, "--prompt", "hi", "--max-tokens", "2",
            expect=4, code="E4001", limit_as=AS_LIMIT)
    only = tiny_model(os.path.join(tmp, "config_only_type"))
    with open(os.path.join(only, "config.json"), "w") as f:
        json.dump({"model_type": "llama"}, f)
    run("generate", "--model", only, "--prompt", "hi", "--max-tokens", "2",
        expect=4, code="E4001", limit_as=AS_LIMIT)


# ---- 5: kill -9 -----------------------------------------------------------

def timed(args):
    start = time.monotonic()
    p = subprocess.run([TESSEL, *args], capture_output=True, timeout=HANG * 5)
    assert p.returncode == 0, p.stderr
    return time.monotonic() - start


def kill_during(args, duration, rng):
    """Starts tessel and sends SIGKILL at a random point of its run."""
    COUNTS["runs"] += 1
    COUNTS["kills"] += 1
    p = subprocess.Popen([TESSEL, *args], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    time.sleep(rng.uniform(0.0, duration * 1.1))
    p.kill()
    p.wait()


def kills(tmp, rng, rounds):
    data = np.random.default_rng(3)
    big = os.path.join(tmp, "big.safetensors")
    save_file({f"t{i}": data.standard_normal((512, 8192), np.float32)
               for i in range(12)}, big)  # 200 MB
    targets = {"x.safetensors": ["--dtype", "bf16"],
               "x.gguf": ["--tensors", "--arch", "llama", "--dtype", "f16"],
               "x": ["--to", "npy-dir", "--dtype", "f16"]}
    for name, extra in targets.items():
        out = os.path.join(tmp, "kill_" + name.replace(".", "_"))
        os.makedirs(out)
        dest = os.path.join(out, name)
        args = ["convert", big, dest, *extra]
        duration = timed(args)
        good = digest(dest)
        for _ in range(rounds):
            kill_during(args, duration, rng)
            extra_entries = [e for e in entries(out) if e != name]
            # O_TMPFILE: a killed file write leaves nothing; a staged
            # directory may stay until the next run removes it.
            if not name.startswith("x."):
                extra_entries = [e for e in extra_entries
                                 if ".tessel-staged-" not in e]
            COUNTS["leftovers"] += len(extra_entries)
            check(extra_entries == [], f"kill -9 of convert -> {name} leaves "
                  f"nothing beside it: {extra_entries}")
            check(digest(dest) == good, f"{name} is whole after kill -9")
        run(*args, expect=0)
        check(leftovers(out, [name]) == [], f"the next convert -> {name} "
              "removes what killed runs left")
        check(digest(dest) == good, f"{name} is right after the next run")

    # quantize and merge on a model of some size (120 MB f32).
    model = tiny_model(os.path.join(tmp, "mid"), hidden=512, inter=1536,
                       layers=4, vocab=32000)
    gguf = os.path.join(tmp, "mid.gguf")
    run("convert", model, gguf, expect=0)
    out = os.path.join(tmp, "kill_quantize")
    os.makedirs(out)
    dest = os.path.join(out, "q.gguf")
    args = ["quantize", gguf, dest, "--type", "Q8_0"]
    duration = timed(args)
    good = digest(dest)
    for _ in range(rounds):
        kill_during(args, duration, rng)
        check(leftovers(out, ["q.gguf"]) == [], "kill -9 of quantize leaves "
              "nothing beside its output")
        check(digest(dest) == good, "the quantized file is whole after kill -9")

    out = os.path.join(tmp, "kill_merge")
    os.makedirs(out)
    config = os.path.join(tmp, "merge.yml")
    with open(config, "w") as f:
        f.write(f"merge_method: linear\nmodels:\n  - model: {model}\n"
                f"    parameters:\n      weight: 0.5\n  - model: {gguf}\n"
                f"    parameters:\n      weight: 0.5\ndtype: float32\n")
    dest = os.path.join(out, "merged")
    args = ["merge", config, dest]
    duration = timed(args)
    good = digest(dest)
    for _ in range(rounds):
        kill_during(args, duration, rng)
        check(digest(dest) == good, "the merged directory is whole after kill -9")
    run(*args, expect=0)
    check(leftovers(out, ["merged"]) == [], "the next merge removes what "
          "killed merges left")

    # train, checkpointing every step.
    out = os.path.join(tmp, "kill_train")
    os.makedirs(out)
    ckpt = os.path.join(out, "run")
    small = ["--batch-size", "8", "--layers", "1", "--hidden", "32", "--heads",
             "2", "--kv-heads", "1", "--intermediate", "48", "--save-every", "1"]
    args = ["train", "--out", ckpt, "--steps", "30", *small]
    duration = timed(args)
    shutil.rmtree(ckpt)
    run("train", "--out", ckpt, "--steps", "30", "--stop-after", "2", *small,
        expect=0)
    for _ in range(rounds):
        kill_during(["train", "--resume", ckpt, "--stop-after", "10"], duration,
                    rng)
        p = run("train", "--resume", ckpt, "--stop-after", "1", expect=0)
        check(p is not None and p.returncode == 0,
              "the checkpoint left by a killed train resumes")
        check(leftovers(out, ["run"]) == [], "a resumed train removes the "
              "staging directories of killed ones")


# ---- 5b: a failing write ----------------------------------------------------

def failing_writes(tmp):
    src = os.path.join(tmp, "fsize.safetensors")
    save_file({f"t{i}": np.ones((256, 1024), np.float32) for i in range(8)}, src)
    out = os.path.join(tmp, "fsize_out")
    os.makedirs(out)
    old = os.path.join(out, "old.safetensors")
    run("convert", src, old, expect=0)
    before = digest(old)
    for name, extra in (("new.safetensors", []), ("new.gguf", ["--tensors", "--arch", "llama"]),
                        ("old.safetensors", []), ("new", ["--to", "npy-dir"])):
        # Writes past 1 MB fail with EFBIG, as they would with ENOSPC.
        run("convert", src, os.path.join(out, name), *extra, expect=3,
            code="E3002", limit_fsize=1 << 20)
    check(leftovers(out, ["old.safetensors"]) == [],
          "failed writes leave no output and no temporary")
    check(digest(old) == before, "a failed write over a file keeps the old one")


# ---- 6: truncated while read --------------------------------------------------

def truncated_while_read(tmp):
    rng = np.random.default_rng(1)
    tensors = {f"t{i}": rng.standard_normal((256, 8192), np.float32)
               for i in range(12)}
    sources = {}
    st = os.path.join(tmp, "cut.safetensors")
    save_file(tensors, st)
    sources["safetensors"] = st
    npy = os.path.join(tmp, "cut.npy")
    np.save(npy, rng.standard_normal((3072, 8192), np.float32))
    sources["npy"] = npy
    gguf = os.path.join(tmp, "cut.gguf")
    run("convert", st, gguf, "--tensors", "--arch", "llama", expect=0)
    sources["gguf"] = gguf
    out = os.path.join(tmp, "cut_out")
    os.makedirs(out)
    for kind, original in sources.items():
        for args in (["inspect", "--stats", "@"],
                     ["convert", "@", os.path.join(out, "o.safetensors"), "--dtype", "bf16"],
                     ["convert", "@", os.path.join(out, "o.gguf"), "--tensors",
                      "--arch", "llama"],
                     ["convert", "@", os.path.join(out, "o"), "--to", "npy-dir"]):
            victim = os.path.join(tmp, "victim_" + os.path.basename(original))
            shutil.copy(original, victim)
            argv = [TESSEL] + [victim if a == "@" else a for a in args]
            COUNTS["runs"] += 1
            p = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
            # Stop it once the file is mapped, cut the file, let it go on.
            while p.poll() is None:
                try:
                    with open(f"/proc/{p.pid}/maps") as f:
                        if victim in f.read():
                            os.kill(p.pid, signal.SIGSTOP)
                            break
                except FileNotFoundError:
                    break
                time.sleep(0.0005)
            os.truncate(victim, 4096)
            try:
                os.kill(p.pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
            try:
                _, err = p.communicate(timeout=HANG)
            except subprocess.TimeoutExpired:
                p.kill()
                check(False, f"{kind} {args[0]} hung after the cut")
                continue
            what = f"{' '.join(args[:2])} of {kind} cut while read"
            ok = check(p.returncode == 3 and "E3001" in err and "shrank" in err
                       and victim in err,
                       f"{what}: exit {p.returncode}, {err.strip()[-200:]}")
            if ok:
                COUNTS["refusals"] += 1
            check(leftovers(out, []) == [], f"{what}: no output")


# ---- 7: concurrency ---------------------------------------------------------

def concurrency(tmp):
    src = os.path.join(tmp, "shared.safetensors")
    rng = np.random.default_rng(2)
    save_file({f"t{i}": rng.standard_normal((256, 1024), np.float32)
               for i in range(16)}, src)
    readers = [subprocess.Popen([TESSEL, "inspect", "--stats", src],
                                stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True)
               for _ in range(8)]
    outs = [r.communicate(timeout=HANG)[0] for r in readers]
    COUNTS["runs"] += len(readers)
    check(all(r.returncode == 0 for r in readers) and len(set(outs)) == 1,
          "8 concurrent inspect --stats agree")
    out = os.path.join(tmp, "concurrent")
    os.makedirs(out)
    for dest in ("one.gguf", "one"):
        extra = ["--to", "npy-dir"] if dest == "one" else ["--tensors", "--arch",
                                                          "llama"]
        writers = [subprocess.Popen([TESSEL, "convert", src,
                                     os.path.join(out, dest), *extra],
                                    stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, text=True)
                   for _ in range(4)]
        errs = [w.communicate(timeout=HANG)[1] for w in writers]
        COUNTS["runs"] += len(writers)
        ok = all(w.returncode == 0 for w in writers)
        if not ok:  # npy-dir replaces a directory: a loser may say so
            ok = all(w.returncode == 0 or "E3002" in e
                     for w, e in zip(writers, errs))
        check(ok, f"4 concurrent converts into {dest}: {errs}")
        reference = os.path.join(tmp, "reference_" + dest)
        run("convert", src, reference, *extra, expect=0)
        check(digest(os.path.join(out, dest)) == digest(reference),
              f"4 concurrent converts into {dest} leave a whole output")
    check(leftovers(out, ["one", "one.gguf"]) == [],
          "concurrent converts leave nothing beside their output")


def main():
    global TESSEL, AS_LIMIT
    parser = argparse.ArgumentParser()
    parser.add_argument("tessel")
    parser.add_argument("--kill-rounds", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sanitized", action="store_true",
                        help="an ASan build: no address-space limit, 3 kills")
    a = parser.parse_args()
    if a.sanitized:
        AS_LIMIT = None
        a.kill_rounds = min(a.kill_rounds, 3)
    TESSEL = os.path.abspath(a.tessel)
    rng = random.Random(a.seed)
    with tempfile.TemporaryDirectory() as tmp:
        for part in (special_files, duplicates_and_utf8, absurd_configs,
                     failing_writes, truncated_while_read, concurrency):
            start = time.monotonic()
            part(tmp)
            print(f"{part.__name__}: {time.monotonic() - start:.1f} s")
        start = time.monotonic()
        kills(tmp, rng, a.kill_rounds)
        print(f"kills: {time.monotonic() - start:.1f} s")
    print(json.dumps(COUNTS))
    if FAILURES:
        print(f"{len(FAILURES)} failures")
        sys.exit(1)
    print("all reliability checks passed")


if __name__ == "__main__":
    main()
