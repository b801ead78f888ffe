#!/usr/bin/env python3
"""The project's figures, one subcommand each (matplotlib, Agg backend):

    tools/plots.py cmrs-sweep     sweep.csv out.png            CMRS GFLOPS per strip height beside cuSPARSE (tools/device-run.sh sweep)
    tools/plots.py cmrs-variants  sweep.csv out.png            CMRS final kernels per variant and height (tools/cmrs-device.sh sweep)
    tools/plots.py ellr-sweep     sweep.csv out.png out.md     ELLR-T threads per row, with the Markdown table
    tools/plots.py rgcsr-sweep    sweep.csv out.png out.md     RgCSR group size and sorting, with the Markdown table
    tools/plots.py mpi-scaling    mpiscale.csv out.png [title] weak and strong scaling (examples/bench_mpi), prints the table
    tools/plots.py trisolve       trisolve.csv out.png [a0,a1,a2,b1,b2]   device-or-host rule against bench_trisolve data
    tools/plots.py choice         suite.csv out.png [what]     speed-up over cuSPARSE vs longest row / mean: autocuda, CMRS, CSR
                                                               (what: the run in the title, e.g. "H200, 20 M nonzeros")

The suite's figures are drawn by tools/bench_report.py, the triangular-solve rule's table by tools/trisolve_rule.py.
"""
import csv
import sys
from collections import OrderedDict, defaultdict

plt = None  # matplotlib.pyplot, imported by main() (the usage needs no matplotlib)


def finish_height_axes(fig, ax, hs, xlabel, title, png):
    """The CMRS figures' axes: strip heights on a log2 axis, speed-up over cuSPARSE."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(hs, [str(h) for h in hs])
    ax.set_xlabel(xlabel)
    ax.set_ylabel("speed-up over cuSPARSE CSR (median of 50)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def cmrs_sweep(src, png):
    """Like Fig. 2 of the 2014 paper: speed-up over cuSPARSE per strip height, per matrix."""
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
    finish_height_axes(fig, ax, hs, "strip height h (basic variant, block 128)",
                       "CMRS on an H100 (double): the best height falls as rows get longer (~256 entries per strip)", png)


def cmrs_variants(src, png):
    """Solid: the scan variant (block 128); dashed: the basic variant (Algorithm 1); a star: the padded variant (height 16)."""
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
    finish_height_axes(fig, ax, hs, "strip height h (block 128)", "CMRS on an H100 (double): scan variant (solid), basic (dashed), padded (star)", png)


def ellr_sweep(src, png, md):
    """GFLOPS per threads-per-row T on each matrix, beside aijcusparse and sellcuda."""
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


def rgcsr_sweep(src, png, md):
    """Like Table 4 of the paper: GFLOPS and filling per group size, without and with row sorting."""
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


MPI_COLS = "mode,ranks,type,rows,nnz,median_ms,min_ms,max_ms,gflops,cg_ms_per_it,cg_its,max_abs_diff".split(",")


def mpi_scaling(path, png, title="MPI scaling, 3-D 7-point Laplacian"):
    """Weak-scaling efficiency of p ranks: t(1)/t(p) (the work per GPU is fixed); strong: t(1)/(p t(p)).
    CSV columns: mode,ranks,type,rows,nnz,median_ms,min_ms,max_ms,gflops,cg_ms_per_it,cg_its,max_abs_diff"""
    rows = [dict(zip(MPI_COLS, r)) for r in csv.reader(open(path)) if r and r[0] in ("weak", "strong")]
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


def trisolve(src, png, coefficients="13,1.54,3.2e-5,8.3e-3,7.9e-4"):
    """Device speed-up of ILU(0) solves (examples/bench_trisolve CSV) against the rule's prediction of it
    (src/base/gpumat_trisolve.c): points on the diagonal are predicted well, the shaded quadrants are wrong choices."""
    a0, a1, a2, b1, b2 = (float(c) for c in coefficients.split(","))
    fig, ax = plt.subplots(figsize=(7, 6))
    for r in csv.DictReader(open(src)):
        if r["factor"] != "ILU":
            continue
        n, nnz = float(r["rows"]), float(r["nnz"])
        lev = float(r["levels_lower"]) + float(r["levels_upper"])
        predicted = (b1 * n + b2 * nnz) / (a0 + a1 * lev + a2 * nnz)
        measured = float(r["host_solve_us"]) / float(r["device_solve_us"])
        real = ".mtx" in r["matrix"]
        ax.scatter(predicted, measured, s=18, marker="s" if real else "o", color="C1" if real else "C0")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.axhline(1.0, color="gray", lw=0.8)
    ax.axvline(1.0, color="gray", lw=0.8)
    ax.fill_between([1e-3, 1.0], 1.0, 1e3, color="red", alpha=0.06)
    ax.fill_between([1.0, 1e3], 1e-3, 1.0, color="red", alpha=0.06)
    ax.set_xlim(1e-2, 1e2)
    ax.set_ylim(1e-2, 1e2)
    ax.set_xlabel("predicted host time / device time")
    ax.set_ylabel("measured host time / device time (device vectors)")
    ax.set_title("ILU(0) triangular solves: the rule against measurements\n(circles: Laplacians it was fitted on; squares: real matrices)")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def choice(src, png, what=""):
    """Speed-up over aijcusparse against the longest row / the mean row length (a suite run with autocuda,
    tools/bench_suite.py): where CMRS collapses (a warp per long row), the choosing type follows cuSPARSE CSR."""
    t, feat = defaultdict(dict), {}
    for r in csv.DictReader(open(src)):
        if r["status"] == "ok" and r["median_ms"]:
            t[r["matrix"]][r["type"]] = float(r["median_ms"])
            feat[r["matrix"]] = float(r["max_row"]) / max(float(r["mu"]), 1e-9)
    series = [("cmrscuda", "CMRS", "C1", "^"), ("csrcuda", "cuSPARSE CSR in our pipeline (csrcuda)", "C7", "s"),
              ("autocuda", "autocuda (rule)", "C0", "o"), ("autocuda mat_auto_timed:1", "autocuda (timed)", "C2", "x")]
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for key, label, color, marker in series:
        pts = sorted((feat[m], d["aijcusparse"] / d[key]) for m, d in t.items() if key in d and "aijcusparse" in d)
        if pts:
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=16, color=color, marker=marker, label=label, alpha=0.8)
    ax.set_xscale("log")
    ax.axhline(1.0, color="gray", lw=0.8)
    ax.axhline(0.95, color="red", lw=0.6, ls=":")
    ax.set_xlabel("longest row / mean row length")
    ax.set_ylabel("speed-up over aijcusparse (median of 50-100 SpMV)")
    n = sum(1 for d in t.values() if "aijcusparse" in d and "autocuda" in d)
    ax.set_title(f"The choosing type against CMRS and cuSPARSE CSR: {n} matrices{', ' + what if what else ''}, double")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


COMMANDS = {"choice": (choice, 2), "cmrs-sweep": (cmrs_sweep, 2), "cmrs-variants": (cmrs_variants, 2), "ellr-sweep": (ellr_sweep, 3),
            "rgcsr-sweep": (rgcsr_sweep, 3), "mpi-scaling": (mpi_scaling, 2), "trisolve": (trisolve, 2)}


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS or len(sys.argv) - 2 < COMMANDS[sys.argv[1]][1]:
        sys.exit(__doc__)
    global plt
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot

    plt = matplotlib.pyplot
    fn, _ = COMMANDS[sys.argv[1]]
    fn(*sys.argv[2:])


if __name__ == "__main__":
    main()
