"""`tessel ops`: the full catalogue and --core-v1 as JSON and as a table."""
import json
import subprocess
import sys

tessel = sys.argv[1]


def run(*args):
    return subprocess.run([tessel, "ops", *args], check=True,
                          capture_output=True, text=True).stdout


every = json.loads(run("--json"))
core = json.loads(run("--core-v1", "--json"))
keys = {"name", "core_v1", "kind", "operands", "optional_operands",
        "variadic", "differentiable", "dtypes"}
for op in every:
    assert set(op) == keys, op
    assert op["dtypes"], op
assert len({op["name"] for op in every}) == len(every)

seed = ["relu", "add", "sub", "mul", "div", "sum", "mean", "reshape",
        "transpose", "expand_dims", "squeeze", "index", "slice", "gather",
        "matmul", "dot", "conv2d"]
assert [op["core_v1"] for op in core] == seed, core
# --core-v1 is the full catalogue's Core v1 rows, not a second list.
by_name = {op["name"]: op for op in every}
for op in core:
    assert by_name[op["name"]] == op, op
assert sorted(op["core_v1"] for op in every if op["core_v1"]) == sorted(seed)
assert by_name["conv2d"]["dtypes"] == ["f16", "bf16", "f32", "f64"]
assert by_name["concat"]["variadic"] is True

table = run("--core-v1")
assert "unsqueeze (expand_dims)" in table and "select (index)" in table, table
assert table.count("\n") == len(seed) + 3, table  # header, blank, summary
print("ok:", len(every), "ops")
