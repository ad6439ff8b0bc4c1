# Reads a device-scheduler trace (`chanflow run ... --trace T.json` or `chanflow bench chain
# --trace PREFIX`, optionally gzipped: argv[1]) and prints how its batches ran: their durations, the
# spacing of their starts on the whole device, how many ran at once (time-weighted), the gap from a
# work-group's batch to its next, and the batches started in each 5 µs from argv[2] to argv[3] µs
# (default: the first 400), which shows a serial step's rhythm (bursts of batches, then none); then
# per node its batches, CEs a batch and µs a batch, and in a profiled build
# (CHANFLOW_BUILD_OPTIONS=-DCHANFLOW_SCHED_PHASES) the mean µs of each part: the poll or kept
# batch's take before it (from the group's last batch), the body, the flush's reservations, writes
# and publishing, the join and the free.
import collections
import gzip
import json
import statistics
import sys

path = sys.argv[1]
with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
    events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
batches = sorted((e for e in events if "ces" in e.get("args", {})), key=lambda e: e["ts"])
if not batches:
    sys.exit("no batches in this trace (was it run with --scheduler device, on a device with a clock?)")
t0 = batches[0]["ts"]


def spread(values):
    s = sorted(values)
    return f"median {statistics.median(s):.2f}, p10 {s[len(s) // 10]:.2f}, p90 {s[9 * len(s) // 10]:.2f}, max {s[-1]:.2f}"


print(f"{len(batches)} batches, {sum(e['args']['ces'] for e in batches)} CEs")
print(f"batch µs: {spread([e['dur'] for e in batches])}")
starts = [e["ts"] for e in batches]
if len(starts) > 1:
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    print(f"µs between starts on the device: mean {statistics.mean(gaps):.3f}, {spread(gaps)}")
edges = sorted([(e["ts"], 1) for e in batches] + [(e["ts"] + e["dur"], -1) for e in batches])
running, last, weighted = 0, edges[0][0], 0.0
for t, step in edges:
    weighted += running * (t - last)
    running, last = running + step, t
print(f"span {last - t0:.1f} µs, batches running at once (time-weighted mean) {weighted / (last - t0):.2f}")
rows = collections.defaultdict(list)
for e in batches:
    rows[e["tid"]].append(e)
after = [b["ts"] - (a["ts"] + a["dur"]) for row in rows.values() for a, b in zip(row, row[1:])]
if after:
    print(f"{len(rows)} work-groups ran batches; µs from a group's batch to its next: {spread(after)}")
lo = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
hi = float(sys.argv[3]) if len(sys.argv) > 3 else 400.0
bins = collections.Counter(int((t - t0 - lo) // 5) for t in starts if lo <= t - t0 < hi)
print(f"batches started per 5 µs from {lo:.0f} to {hi:.0f} µs (empty bins left out):")
for k in sorted(bins):
    print(f"  {lo + 5 * k:8.1f}  {bins[k]}")
parts = ("body_ns", "reserve_ns", "write_ns", "publish_ns", "join_ns", "free_ns")
before = {}
for row in rows.values():
    for a, b in zip(row, row[1:]):
        before[id(b)] = b["ts"] - (a["ts"] + a["dur"])
print("per node: batches, CEs a batch, µs a batch (mean), and where a profiled build's parts are known,")
print("µs before it (the group's poll or take since its last batch), body, the flush's reserve, write and")
print("publish, join, free (means):")
by_node = collections.defaultdict(list)
for e in batches:
    by_node[e["name"]].append(e)
for name, es in sorted(by_node.items(), key=lambda kv: -len(kv[1])):
    line = (f"  {name}: {len(es)} batches, {statistics.mean(e['args']['ces'] for e in es):.1f} CEs, "
            f"{statistics.mean(e['dur'] for e in es):.2f} µs")
    profiled = [e for e in es if "body_ns" in e["args"]]
    if profiled:
        gaps = [before[id(e)] for e in profiled if id(e) in before]
        means = [statistics.mean(e["args"][k] for e in profiled) / 1e3 for k in parts]
        line += (f"; before {statistics.mean(gaps) if gaps else 0.0:.2f}, "
                 + ", ".join(f"{k[:-3]} {m:.2f}" for k, m in zip(parts, means)))
    print(line)
