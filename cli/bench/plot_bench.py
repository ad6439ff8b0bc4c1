# Draws `chanflow bench` JSON (argv[1]) into a PNG (argv[2]), one panel per workload, log time
# axis: a line per implementation against size, or, where a workload has one or two sizes, a bar
# per implementation with its speed against tbb-cutoff. Run by `chanflow bench --plot`, or as
# `python3 plot_bench.py bench.json bench.png` on a JSON from another machine.
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

with open(sys.argv[1]) as f:
    bench = json.load(f)
rows = [r for r in bench["results"] if r["correct"] and r["median_ms"] is not None]
for r in rows:  # a run across devices (chanflow bench --devices) is an implementation of its own
    if r.get("devices") is not None:
        r["impl"] = f'{r["impl"]} ×{r["devices"]} dev'
workloads = list(dict.fromkeys(r["workload"] for r in rows))
if not workloads:
    sys.exit("no correct results to plot")
cols = min(3, len(workloads))
grid_rows = (len(workloads) + cols - 1) // cols
fig, axes = plt.subplots(grid_rows, cols, figsize=(4.5 * cols, 4 * grid_rows), squeeze=False)
for ax in axes.flat[len(workloads):]:
    ax.set_visible(False)
def draw_bars(ax, mine, sizes):
    """One or two sizes: a bar per implementation (grouped by size), its ratio to tbb-cutoff above it."""
    impls = list(dict.fromkeys(r["impl"] for r in mine))
    width = 0.8 / len(impls)
    for k, impl in enumerate(impls):
        for g, size in enumerate(sizes):
            row = next((r for r in mine if r["impl"] == impl and r["size"] == size), None)
            if row is None:
                continue
            x = g + (k - (len(impls) - 1) / 2) * width
            ax.bar(x, row["median_ms"], width, color=f"C{k}", label=impl if g == 0 else None)
            base = next((r for r in mine if r["impl"] == "tbb-cutoff" and r["size"] == size), None)
            if base and impl != "tbb-cutoff" and base["median_ms"] > 0:
                ratio = row["median_ms"] / base["median_ms"]
                text = f"{1 / ratio:.1f}x faster" if ratio < 1 else f"{ratio:.1f}x slower"
                ax.annotate(text, (x, row["median_ms"]), ha="center", va="bottom", fontsize=6, rotation=90,
                            xytext=(0, 2), textcoords="offset points")
    ax.set_xticks(range(len(sizes)))
    ax.set_xticklabels([f"{mine[0].get('size_name', 'size')} = {s}" for s in sizes])
    times = [r["median_ms"] for r in mine]
    ax.set_ylim(min(times) / 2, max(times) * 30)  # room above the bars for the ratios and the legend


for ax, workload in zip(axes.flat, workloads):
    mine = [r for r in rows if r["workload"] == workload]
    sizes = sorted({r["size"] for r in mine})
    if len(sizes) <= 2:  # single points make a poor line chart: bars, with ratios to tbb-cutoff
        draw_bars(ax, mine, sizes)
    else:
        for impl in dict.fromkeys(r["impl"] for r in mine):
            points = sorted((r["size"], r["median_ms"]) for r in mine if r["impl"] == impl)
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=impl)
        if sizes[-1] >= 8 * sizes[0]:  # data sizes (keys, matrix order): log axis
            ax.set_xscale("log", base=2)
        else:  # a recursion's argument (fib's n, queens' board): cost is exponential in it already
            ax.set_xticks(sizes)
        ax.set_xlabel(mine[0].get("size_name", "size"))
    ax.set_yscale("log")
    ax.set_title(workload)
    ax.set_ylabel("median ms")
    ax.grid(True, which="both", axis="y", alpha=0.3)
    ax.legend(fontsize="x-small", ncol=2, loc="upper left")
fig.suptitle(f"chanflow bench on {bench['device']}")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
