#!/usr/bin/env python3
"""CMRS sweep: GFLOPS per strip height on each matrix, beside cuSPARSE (like Fig. 2 of the 2014 paper).

usage: tools/plot_cmrs_sweep.py sweep.csv out.png   (sweep.csv from `tools/device-run.sh sweep`)
"""
import csv, sys
from collections import OrderedDict

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

src, png = sys.argv[1:3]
runs = OrderedDict()
for r in csv.reader(open(src)):
    if r[1] != "matrix":
        runs.setdefault(r[0], []).append(r)
hs = [1, 2, 3, 4, 6, 8, 12, 16]
fig, ax = plt.subplots(figsize=(9, 5))
for key, rs in runs.items():
    by = {}
    for r in rs:
        by.setdefault(r[5], r)
    if "cmrscuda mat_cmrs_height:1" not in by:
        continue
    mean = float(rs[0][4]) / float(rs[0][2])
    name = key.replace("-problem_", "").split("_-")[0]
    name = "random rows" if name == "rows" else name
    g = [float(by[f"cmrscuda mat_cmrs_height:{h}"][9]) / float(by["aijcusparse"][9]) for h in hs]
    ax.plot(hs, g, marker="o", label=f"{name}, μ={mean:.1f}")
ax.axhline(1.0, color="gray", ls="--", lw=1)
ax.set_xscale("log", base=2)
ax.set_xticks(hs, [str(h) for h in hs])
ax.set_xlabel("strip height h (basic variant, block 128)")
ax.set_ylabel("speed-up over cuSPARSE CSR (median of 50)")
ax.set_title("CMRS on an H100 (double): the best height falls as rows get longer (~256 entries per strip)")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(png, dpi=110)
