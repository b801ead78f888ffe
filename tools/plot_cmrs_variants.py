#!/usr/bin/env python3
"""CMRS sweep of the final kernels: speed-up over cuSPARSE per strip height, per variant (like Fig. 2 of the 2014 paper).

usage: tools/plot_cmrs_variants.py sweep.csv out.png   (sweep.csv from `tools/cmrs-device.sh sweep`)
Solid: the scan variant (block 128); dashed: the basic variant (Algorithm 1); a star: the padded variant (height 16).
"""
import csv, sys
from collections import OrderedDict

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

src, png = sys.argv[1:3]
runs = OrderedDict()
for r in csv.reader(open(src)):
    if len(r) > 9 and r[1] != "matrix":
        runs.setdefault(r[0], {})[r[5]] = r
S = "cmrscuda mat_cmrs_variant:scan"
hs = [1, 2, 4, 8, 16]
fig, ax = plt.subplots(figsize=(9, 5.5))
for i, (key, by) in enumerate(runs.items()):
    if "aijcusparse" not in by:
        continue
    base = float(by["aijcusparse"][9])
    any_row = next(iter(by.values()))
    mean = float(any_row[4]) / float(any_row[2])
    name = key.replace("_-n_", " ").replace("_-mean_", " μ=").replace("rows", "random rows")
    color = f"C{i}"
    pts = [(h, float(by[f"{S}+mat_cmrs_height:{h}"][9]) / base) for h in hs if f"{S}+mat_cmrs_height:{h}" in by]
    if pts:
        ax.plot(*zip(*pts), marker="o", color=color, label=f"{name.split()[0]}, μ={mean:.1f}")
    pts = [(h, float(by[f"cmrscuda mat_cmrs_variant:basic+mat_cmrs_height:{h}"][9]) / base) for h in hs if f"cmrscuda mat_cmrs_variant:basic+mat_cmrs_height:{h}" in by]
    if pts:
        ax.plot(*zip(*pts), marker="s", ls="--", color=color, alpha=0.6)
    if "cmrscuda mat_cmrs_variant:padded" in by:
        ax.plot([16], [float(by["cmrscuda mat_cmrs_variant:padded"][9]) / base], marker="*", ms=12, color=color, ls="none")
ax.axhline(1.0, color="gray", ls=":", lw=1)
ax.axhline(1.25, color="red", ls=":", lw=1)
ax.set_xscale("log", base=2)
ax.set_xticks(hs, [str(h) for h in hs])
ax.set_xlabel("strip height h (block 128)")
ax.set_ylabel("speed-up over cuSPARSE CSR (median of 50)")
ax.set_title("CMRS on an H100 (double): scan variant (solid), basic (dashed), padded (star)")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(png, dpi=110)
