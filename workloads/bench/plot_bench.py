# Draws `chanflow bench` JSON (argv[1]) as time against size, one panel per workload and a line
# per implementation, log time axis, into a PNG (argv[2]). Run by `chanflow bench --plot`.
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

with open(sys.argv[1]) as f:
    bench = json.load(f)
rows = [r for r in bench["results"] if r["correct"] and r["median_ms"] is not None]
workloads = list(dict.fromkeys(r["workload"] for r in rows))
if not workloads:
    sys.exit("no correct results to plot")
cols = min(3, len(workloads))
grid_rows = (len(workloads) + cols - 1) // cols
fig, axes = plt.subplots(grid_rows, cols, figsize=(4.5 * cols, 4 * grid_rows), squeeze=False)
for ax in axes.flat[len(workloads):]:
    ax.set_visible(False)
for ax, workload in zip(axes.flat, workloads):
    mine = [r for r in rows if r["workload"] == workload]
    for impl in dict.fromkeys(r["impl"] for r in mine):
        points = sorted((r["size"], r["median_ms"]) for r in mine if r["impl"] == impl)
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=impl)
    sizes = sorted({r["size"] for r in mine})
    if sizes[-1] >= 8 * sizes[0]:  # data sizes (keys, matrix order): log axis
        ax.set_xscale("log", base=2)
    else:  # a recursion's argument (fib's n, queens' board): cost is exponential in it already
        ax.set_xticks(sizes)
    ax.set_yscale("log")
    ax.set_title(workload)
    ax.set_xlabel(mine[0].get("size_name", "size"))
    ax.set_ylabel("median ms")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
fig.suptitle(f"chanflow bench on {bench['device']}")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
