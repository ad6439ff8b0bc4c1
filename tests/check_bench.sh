#!/usr/bin/env bash
# `chanflow bench` end to end (ctest cli_bench_workloads): one repetition of the default sizes, the
# host's baselines and chanflow's graphs hand-built and compiled (each further implementation is
# another PoCL build, most of this test's time); the JSON must carry every field for every row,
# each row correct, and --plot must write a PNG.
set -euo pipefail
chanflow=$1
out=$2
mkdir -p "$out"
rm -f "$out/bench.json" "$out/bench.png"
"$chanflow" bench --reps 1 --seed 7 --impls serial,tbb-fine,tbb-cutoff,chanflow,chanflow-compiled --json "$out/bench.json" --plot "$out/bench.png"
/usr/bin/python3 - "$out/bench.json" <<'PY'
import json, sys
bench = json.load(open(sys.argv[1]))
for key in ("machine", "device", "results"):
    assert key in bench, f"missing top-level field {key}"
fields = ("workload", "size", "impl", "threads", "reps", "median_ms", "min_ms", "max_ms", "correct", "tasks",
          "dispatches", "yields", "peak_live_bytes", "device_idle_on_aggregator")
rows = bench["results"]
assert rows, "no results"
for r in rows:
    missing = [f for f in fields if f not in r]
    assert not missing, f"{r.get('workload')} {r.get('impl')}: missing {missing}"
    assert r["correct"], f"{r['workload']} {r['impl']} was wrong"
    assert r["median_ms"] is not None and r["min_ms"] <= r["median_ms"] <= r["max_ms"]
    chanflow = r["impl"].startswith("chanflow")
    on_device = chanflow or r["impl"] in ("clblast-gemm", "compute-sort")  # the GPU's peers, where built
    assert (r["tasks"] is not None) == chanflow, f"{r['impl']}: tasks only for chanflow"
    assert (r["threads"] is None) == on_device, f"{r['impl']}: threads only for host implementations"
impls = {(r["workload"], r["impl"]) for r in rows}
for w in ("fib", "queens", "sort", "sort-u64", "strassen", "strassen-f64"):
    for impl in ("serial", "tbb-fine", "tbb-cutoff", "chanflow"):
        assert (w, impl) in impls, f"{w} {impl} missing"
print(f"bench JSON: {len(rows)} rows, every field present")
PY
head -c 8 "$out/bench.png" | od -An -tx1 | grep -q "89 50 4e 47 0d 0a 1a 0a" || { echo "not a PNG: $out/bench.png"; exit 1; }
echo "bench chart: $out/bench.png is a PNG"
