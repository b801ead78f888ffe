#!/usr/bin/env python3
"""RgCSR sweep: GFLOPS and filling per group size, without and with row sorting (like Table 4 of the paper).

usage: tools/plot_rgcsr_sweep.py sweep.csv out.png out.md   (sweep.csv from `tools/device-run.sh sweep`)
"""
import csv, sys
from collections import OrderedDict

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

src, png, md = sys.argv[1:4]
runs = OrderedDict()
for r in csv.reader(open(src)):
    if r[1] != "matrix":
        runs.setdefault(r[0], []).append(r)
Gs, Ws = [32, 64, 128, 256, 512, 1024], [(0, "no sort"), (1000000000, "global sort")]
fig, axes = plt.subplots(2, 4, figsize=(14, 6.5), sharex=True)
lines = ["| matrix | μ | rows | " + " | ".join(f"G={g}" for g in Gs) + " |", "|" + " --- |" * (3 + len(Gs))]
for ax, (key, rs) in zip(axes.flat, runs.items()):
    by = {r[5]: r for r in rs}
    mean = float(rs[0][4]) / float(rs[0][2])
    cs = float(by["aijcusparse"][9])
    name = key.replace("-problem_", "").split("_-")[0]
    name = "random rows" if name == "rows" else name
    for W, lab in Ws:
        g, cells = [], []
        for G in Gs:
            r = by[f"rgcsrcuda mat_rgcsr_group_size:{G}+mat_rgcsr_sort_window:{W}+mat_rgcsr_max_fill:0"]
            g.append(float(r[9]))
            cells.append(f"{float(r[9]):.0f} ({float(r[9]) / cs:.2f}×, fill {100 * (float(r[13]) - 1):.0f}%)")
        ax.plot(range(len(Gs)), g, marker="o", label=lab)
        lines.append(f"| {name} μ={mean:.0f} | | {lab} | " + " | ".join(cells) + " |")
    ax.axhline(cs, color="gray", ls="--", label="aijcusparse")
    ax.set_title(f"{name}, μ={mean:.1f}", fontsize=9)
    ax.set_xticks(range(len(Gs)), [str(G) for G in Gs], fontsize=7)
    ax.set_ylim(0, 450)
axes.flat[0].legend(fontsize=7)
fig.supxlabel("group size G")
fig.supylabel("GFLOPS (median of 50)")
fig.suptitle("Row-grouped CSR on an H100 (double): group size and row sorting; cells in the table: GFLOPS (vs cuSPARSE, fill)")
fig.tight_layout()
fig.savefig(png, dpi=110)
open(md, "w").write("\n".join(lines) + "\n")
