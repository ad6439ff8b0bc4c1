# Reads a device-scheduler trace (`chanflow run ... --scheduler device --trace T.json`, optionally
# gzipped: argv[1]) and prints, per node and stack level, when its batches ran (µs from the launch),
# their CEs, count, and median and largest batch; then a recursion's critical path in three parts:
# the descent (the launch's start to the first batch of the deepest level), that level's span,
# and the ascent (from its last batch to the launch's end).
import collections
import gzip
import json
import statistics
import sys

path = sys.argv[1]
with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
    events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
launches = [e for e in events if e["name"] == "device scheduler"]
if not launches:
    sys.exit("no device scheduler launch in this trace (was it run with --scheduler device?)")
t0 = launches[0]["ts"]
end = max(e["ts"] + e["dur"] for e in launches) - t0
levels = collections.defaultdict(list)
for e in events:
    if "level" in e.get("args", {}):
        levels[(e["name"], e["args"]["level"])].append(e)
print(f"{'node':<24} {'level':>5} {'start':>9} {'end':>9} {'span':>8} {'CEs':>9} {'batches':>7} {'median':>7} {'largest':>7}")
for key in sorted(levels, key=lambda k: min(e["ts"] for e in levels[k])):
    batch = levels[key]
    start = min(e["ts"] for e in batch) - t0
    stop = max(e["ts"] + e["dur"] for e in batch) - t0
    durs = [e["dur"] for e in batch]
    print(f"{key[0]:<24} {key[1]:>5} {start:>9.1f} {stop:>9.1f} {stop - start:>8.1f} "
          f"{sum(e['args'].get('ces', 0) for e in batch):>9} {len(batch):>7} {statistics.median(durs):>7.1f} {max(durs):>7.1f}")
deepest = max(levels, key=lambda k: (k[1], min(e["ts"] for e in levels[k])))
first = min(e["ts"] for e in levels[deepest]) - t0
last = max(e["ts"] + e["dur"] for e in levels[deepest]) - t0
print(f"launch {end:.1f} us: descent to level {deepest[1]} {first:.1f} us ({first / max(deepest[1], 1):.1f} a level), "
      f"that level {last - first:.1f} us (its largest batch {max(e['dur'] for e in levels[deepest]):.1f}), "
      f"ascent {end - last:.1f} us")
