"""`mpirun -np 2 tessel train`: data-parallel training over MPI against the
one-process run with the same global batch and seed — per-step losses
within 1e-6 relative for 50 steps, the same held-out evaluation, weights
within float rounding — plus --resume across world sizes, disagreeing
ranks and different data files (E4001 on every rank, no hang), an
indivisible batch, and a rank
that dies mid-run (the job ends, no partial checkpoint)."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from safetensors.numpy import load_file

FAILURES = []
TESSEL = sys.argv[1]
MPIRUN = sys.argv[2]
# yield_when_idle: ranks waiting in a collective give the core up (this
# test shares two cores with other tests under ctest -j2).
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_MCA_mpi_yield_when_idle="1",
           OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def train(ranks, *args, threads=None, timeout=300):
    """Runs tessel train on `ranks` processes (1: no mpirun)."""
    env = dict(ENV, TESSEL_NUM_THREADS=str(threads or (2 if ranks == 1 else 1)))
    cmd = [TESSEL, "train", *args]
    if ranks > 1:
        cmd = [MPIRUN, "-np", str(ranks), "--oversubscribe",
               "-x", "TESSEL_NUM_THREADS", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, env=env,
                          timeout=timeout)


def losses(path):
    with open(os.path.join(path, "trainer_state.json")) as f:
        return json.load(f)["losses"]


def relative(a, b):
    return max(abs(x - y) / abs(x) for x, y in zip(a, b))


RUN = ["--steps", "50", "--batch-size", "32", "--save-every", "0", "--json"]

with tempfile.TemporaryDirectory() as tmp:
    one, two = os.path.join(tmp, "one"), os.path.join(tmp, "two")
    p1 = train(1, *RUN, "--out", one)
    p2 = train(2, *RUN, "--out", two)
    check(p1.returncode == 0 and p2.returncode == 0,
          f"both runs succeed ({p1.stderr[-300:]} {p2.stderr[-300:]})")
    if p1.returncode == 0 and p2.returncode == 0:
        s1, s2 = json.loads(p1.stdout), json.loads(p2.stdout)
        l1, l2 = losses(one), losses(two)
        check(len(l1) == len(l2) == 50, "50 losses each")
        err = relative(l1, l2)
        check(err <= 1e-6, f"per-step losses within 1e-6 relative ({err:.2e})")
        check(s1["evaluation"] == s2["evaluation"],
              f"same held-out evaluation ({s1['evaluation']} / "
              f"{s2['evaluation']})")
        check(s2["ranks"] == 2 and s2["allreduce_seconds_per_step"] > 0,
              "the 2-rank run reports its ranks and all-reduce time")
        w1 = load_file(os.path.join(one, "model.safetensors"))
        w2 = load_file(os.path.join(two, "model.safetensors"))
        worst = max(float(np.max(np.abs(w1[k] - w2[k]))) for k in w1)
        check(worst < 1e-4, f"the same weights after 50 steps ({worst:.1e})")
        # Only rank 0 prints and writes: one JSON line, one checkpoint.
        check(p2.stdout.count('"ranks": 2') == 1, "one summary line")

    # --resume works with any world size: 25 steps on 2 ranks, 25 more on
    # 1 (and the other way) reproduce the uninterrupted run's losses.
    for first, second in ((2, 1), (1, 2)):
        out = os.path.join(tmp, f"resume{first}{second}")
        a = train(first, *RUN, "--out", out, "--stop-after", "25")
        b = train(second, "--resume", out, "--json")
        check(a.returncode == 0 and b.returncode == 0,
              f"resume {first} -> {second} ranks runs ({b.stderr[-300:]})")
        if a.returncode == 0 and b.returncode == 0 and p1.returncode == 0:
            err = relative(losses(one), losses(out))
            check(err <= 1e-6,
                  f"resume {first} -> {second} ranks matches ({err:.2e})")

    # Ranks that disagree (here on the seed) stop at the start, every one
    # with E4001, instead of training different models or hanging.
    bad = subprocess.run(
        [MPIRUN, "-np", "2", "--oversubscribe", "sh", "-c",
         f'exec "{TESSEL}" train --steps 5 --batch-size 8 --save-every 0 '
         f'--out {tmp}/bad --seed "$OMPI_COMM_WORLD_RANK"'],
        capture_output=True, text=True, env=ENV, timeout=120)
    check(bad.returncode != 0, "disagreeing ranks fail")
    check(bad.stderr.count("E4001") == 2 and "differs between the ranks"
          in bad.stderr, f"E4001 on both ranks ({bad.stderr[-400:]})")
    check(not os.path.exists(f"{tmp}/bad"), "no checkpoint from them")

    # ... and on the data: two files of one size but different bytes.
    for r, text in enumerate(("abcdefgh" * 400, "abcdefgX" * 400)):
        with open(f"{tmp}/text{r}.txt", "w") as f:
            f.write(text)
    other = subprocess.run(
        [MPIRUN, "-np", "2", "--oversubscribe", "sh", "-c",
         f'exec "{TESSEL}" train --steps 5 --batch-size 8 --save-every 0 '
         f'--seq-len 16 --out {tmp}/other '
         f'--data {tmp}/text"$OMPI_COMM_WORLD_RANK".txt'],
        capture_output=True, text=True, env=ENV, timeout=120)
    check(other.returncode != 0 and other.stderr.count("E4001") == 2,
          f"different data files are E4001 on both ranks "
          f"({other.stderr[-300:]})")

    odd = train(2, "--steps", "5", "--batch-size", "7", "--out", f"{tmp}/odd")
    check(odd.returncode != 0 and "does not split into 2" in odd.stderr,
          "a batch that does not split is E4001")

    # A rank killed mid-run ends the job (mpirun notices and stops the
    # others) within the timeout, and no partial checkpoint appears.
    dead = subprocess.run(
        [MPIRUN, "-np", "2", "--oversubscribe", "sh", "-c",
         f'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then '
         f'("{TESSEL}" train --steps 100000 --batch-size 8 --save-every 0 '
         f'--out {tmp}/dead & pid=$!; sleep 2; kill -9 $pid; wait $pid); '
         f'else exec "{TESSEL}" train --steps 100000 --batch-size 8 '
         f'--save-every 0 --out {tmp}/dead; fi'],
        capture_output=True, text=True, env=ENV, timeout=120)
    check(dead.returncode != 0, "a dead rank fails the job")
    check(not os.path.exists(f"{tmp}/dead"),
          "no checkpoint after a rank died")

print(f"{len(FAILURES)} failures")
sys.exit(1 if FAILURES else 0)
