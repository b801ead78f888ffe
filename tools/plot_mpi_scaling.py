#!/usr/bin/env python3
"""MPI scaling of MatMult and CG (examples/bench_mpi CSV, tools/device-run.sh mpiscale) -> Markdown table + PNG.

CSV columns: mode,ranks,type,rows,nnz,median_ms,min_ms,max_ms,gflops,cg_ms_per_it,cg_its,max_abs_diff
Weak-scaling efficiency of p ranks: t(1)/t(p) (the work per GPU is fixed); strong: t(1)/(p t(p)).
usage: plot_mpi_scaling.py mpiscale.csv out.png [title]   (prints the Markdown table)
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLS = "mode,ranks,type,rows,nnz,median_ms,min_ms,max_ms,gflops,cg_ms_per_it,cg_its,max_abs_diff".split(",")


def main():
    path, png = sys.argv[1], sys.argv[2]
    title = sys.argv[3] if len(sys.argv) > 3 else "MPI scaling, 3-D 7-point Laplacian"
    rows = [dict(zip(COLS, r)) for r in csv.reader(open(path)) if r and r[0] in ("weak", "strong")]
    data = defaultdict(dict)  # (mode, type) -> ranks -> row
    for r in rows:
        data[(r["mode"], r["type"])][int(r["ranks"])] = r
    print("| scaling | type | GPUs | rows | MatMult ms | GFLOPS | MatMult efficiency | CG ms/it | CG efficiency |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for (mode, typ), byp in sorted(data.items()):
        if 1 not in byp:
            continue
        t1, c1 = float(byp[1]["median_ms"]), float(byp[1]["cg_ms_per_it"])
        ps, eff = [], []
        for p in sorted(byp):
            r = byp[p]
            t, c = float(r["median_ms"]), float(r["cg_ms_per_it"])
            e = t1 / t if mode == "weak" else t1 / (p * t)
            ce = c1 / c if mode == "weak" else c1 / (p * c)
            ps.append(p)
            eff.append(e)
            print(f"| {mode} | {typ} | {p} | {int(r['rows']) / 1e6:.1f} M | {t:.3f} | {float(r['gflops']):.0f} | {e:.2f} | {c:.3f} | {ce:.2f} |")
        ax = axes[0 if mode == "weak" else 1]
        ax.plot(ps, eff, marker="o", label=typ)
    for ax, mode in zip(axes, ("weak (8 M rows per GPU)", "strong (32.8 M rows)")):
        ax.set_title(f"MatMult {mode}")
        ax.set_xlabel("GPUs (one rank each)")
        ax.set_ylabel("parallel efficiency")
        ax.set_ylim(0, 1.15)
        ax.axhline(0.9, color="grey", lw=0.8, ls="--")
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(png, dpi=120)


if __name__ == "__main__":
    main()
