"""`tessel info --json` prints one JSON object with every field filled."""
import json
import subprocess
import sys

out = subprocess.run([sys.argv[1], "info", "--json"], check=True,
                     capture_output=True, text=True).stdout
info = json.loads(out)
expected = {"version", "build_type", "compiler", "sanitizers", "simd",
            "threads", "devices", "gemm"}
missing = expected - info.keys()
assert not missing, f"missing keys: {missing}"
assert info["threads"] >= 1, info
assert "cpu" in info["devices"], info
assert info["simd"]["dispatched"] in info["simd"]["supported"], info
print("ok:", info)
