#!/usr/bin/env python3
"""ELLR-T sweep: GFLOPS per threads-per-row T on each matrix, beside aijcusparse and sellcuda.

usage: tools/plot_ellr_sweep.py sweep.csv out.png out.md
sweep.csv is what `tools/device-run.sh sweep` writes (one bench_spmv CSV per matrix, prefixed by the run's options).
"""
import csv, sys
from collections import OrderedDict

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

src, png, md = sys.argv[1:4]
runs = OrderedDict()
for row in csv.reader(open(src)):
    if row[1] == "matrix":
        continue
    key = row[0].replace("-problem_", "").replace("_-", " -").replace("_", " ")
    r = dict(zip(["run", "matrix", "rows", "cols", "nnz", "type", "median_ms", "min_ms", "max_ms", "gflops", "eta_plus",
                  "eta_minus", "speedup", "stored", "convert_s", "bw", "relerr"], row))
    runs.setdefault(key, []).append(r)

Ts = [1, 2, 4, 8, 16, 32]
fig, ax = plt.subplots(figsize=(10, 5.5))
lines = ["| matrix | rows | mean nnz/row | aijcusparse | sellcuda | ellrcuda (auto T) | " +
         " | ".join(f"T={t}" for t in Ts) + " | best T |", "|" + " --- |" * (6 + len(Ts) + 1)]
for i, (key, rs) in enumerate(runs.items()):
    by = {r["type"]: r for r in rs}
    mean = float(rs[0]["nnz"]) / float(rs[0]["rows"])
    g = [float(by[f"ellrcuda mat_ellr_threads_per_row:{t}+mat_ellr_max_fill:0"]["gflops"]) for t in Ts]
    x = [j + i * (len(Ts) + 2) for j in range(len(Ts))]
    ax.bar(x, g, color="tab:blue", alpha=0.75, label="ellrcuda, T = 1..32" if i == 0 else None)
    base = x[0] - 1
    ax.bar([base - 0.6], [float(by["aijcusparse"]["gflops"])], width=0.5, color="tab:gray", label="aijcusparse" if i == 0 else None)
    ax.bar([base - 0.1], [float(by["sellcuda"]["gflops"])], width=0.5, color="tab:orange", label="sellcuda" if i == 0 else None)
    ax.plot([x[0] - 0.4, x[-1] + 0.4], [float(by["ellrcuda"]["gflops"])] * 2, color="tab:red", lw=2, label="ellrcuda automatic T" if i == 0 else None)
    label = key.split()[0] if not key.startswith("rows") else "random rows"
    ax.text((x[0] + x[-1]) / 2, -15, f"{label}\nμ={mean:.1f}", ha="center", va="top", fontsize=8)
    best = Ts[max(range(len(Ts)), key=lambda j: g[j])]
    lines.append(f"| {key} | {int(rs[0]['rows'])} | {mean:.1f} | {float(by['aijcusparse']['gflops']):.0f} | {float(by['sellcuda']['gflops']):.0f} | "
                 f"{float(by['ellrcuda']['gflops']):.0f} | " + " | ".join(f"{v:.0f}" for v in g) + f" | {best} |")
ax.set_xticks([])
ax.set_ylabel("GFLOPS = (2 nnz - rows) / median time")
ax.set_ylim(bottom=0)
ax.set_title("ELLR-T threads per row on an H100 (double), each group: T = 1, 2, 4, 8, 16, 32")
ax.legend(loc="upper left", fontsize=8)
fig.subplots_adjust(bottom=0.2)
fig.savefig(png, dpi=120)
open(md, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
