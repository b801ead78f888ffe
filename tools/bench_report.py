#!/usr/bin/env python3
"""Markdown summary and PNG plots of one benchmark suite CSV (tools/bench_suite.py).

usage: tools/bench_report.py suite.csv OUTDIR/summary.md [--png-prefix docs/suite-<date>-<gpu>] [--title "..."]

Writes the summary (geometric-mean speed-ups of each format over aijcusparse and sellcuda, the main matrices'
table with GFLOPS, eta+ and ratios, variants, build times, KSP solves, every real matrix, where each format
wins and loses with mu and sigma) and four plots: speed-up over cuSPARSE vs mean row length per format (as in
the 2014 CMRS paper's Fig. 4/6/7), eta+ per format, the best format per matrix, geometric means.
"""
import argparse, csv, math, os, sys
from collections import OrderedDict, defaultdict

# the formats compared (type, variant) -> short name; the first entry of each type is its default configuration
SORT = "mat_rgcsr_sort_window:1000000000"
FORMATS = OrderedDict([
    (("sellcuda", ""), "sellcuda"),
    (("ellrcuda", ""), "ellrcuda"),
    (("cmrscuda", ""), "cmrscuda"),
    (("cmrscuda", "mat_cmrs_variant:padded"), "cmrscuda padded"),
    (("cmrscuda", "mat_cmrs_variant:basic"), "cmrscuda basic"),
    (("rgcsrcuda", ""), "rgcsrcuda"),
    (("rgcsrcuda", SORT), "rgcsrcuda reordered"),
    (("csrcuda", ""), "csrcuda"),
    (("autocuda", ""), "autocuda"),
    (("autocuda", "mat_auto_timed:1"), "autocuda timed"),
])
COLORS = {"sellcuda": "tab:orange", "ellrcuda": "tab:blue", "cmrscuda": "tab:green", "cmrscuda padded": "tab:olive", "cmrscuda basic": "tab:cyan",
          "rgcsrcuda": "tab:red", "rgcsrcuda reordered": "tab:purple", "aijcusparse": "tab:gray", "csrcuda": "tab:brown",
          "autocuda": "black", "autocuda timed": "tab:pink"}
MARKERS = {"sellcuda": "s", "ellrcuda": "o", "cmrscuda": "^", "cmrscuda padded": "v", "cmrscuda basic": "<", "rgcsrcuda": "D",
           "rgcsrcuda reordered": "d", "csrcuda": "x", "autocuda": "*", "autocuda timed": "P"}


def fnum(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def gmean(v):
    v = [x for x in v if x and x > 0]
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else None


def fmt(x, d=2, none="–"):
    return none if x is None else f"{x:.{d}f}"


def short_variant(v):
    return (v.replace("mat_ellr_threads_per_row:", "T=").replace("mat_cmrs_variant:", "").replace("mat_cmrs_height:", "h=")
             .replace(SORT, "reordered").replace("mat_cmrs_", "").replace("mat_rgcsr_", "").replace("mat_ellr_", ""))


def load(path):
    mats = OrderedDict()  # name -> dict(info, rows by (type, variant), status rows)
    for r in csv.DictReader(open(path)):
        m = mats.setdefault(r["matrix"], dict(name=r["matrix"], set=r["set"], runs=OrderedDict(), notes=[]))
        if r["type"] == "(all)":
            msg = r["message"]
            m["notes"].append(msg if msg.startswith(r["status"]) else f"{r['status']}: {msg}")
            continue
        for k in ("rows", "nnz", "mu", "sigma", "max_row", "replicate", "src_rows", "src_nnz", "empty_rows"):
            if r.get(k):
                m[k] = fnum(r[k])
        m["set"] = r["set"] or m["set"]
        m["runs"][(r["base_type"], r["variant"])] = r
    return mats


def ok(r):
    return r is not None and r["status"] == "ok" and fnum(r["median_ms"])


def time_of(m, key):
    r = m["runs"].get(key)
    return fnum(r["median_ms"]) if ok(r) else None


def speedup(m, key, base=("aijcusparse", "")):
    t, b = time_of(m, key), time_of(m, base)
    return b / t if t and b else None


def why(m, name, s):
    """A one-line reason from the matrix's structure"""
    mu, sigma, mx = m.get("mu") or 0, m.get("sigma") or 0, m.get("max_row") or 0
    cv = sigma / mu if mu else 0
    parts = [f"μ {mu:.1f}, σ {sigma:.1f}, max {mx:.0f}"]
    if s is None:
        parts.append("refused (padding guard)" if "ellr" in name or "rgcsr" in name else "did not run")
    elif mx > 20 * max(mu, 1):
        parts.append("a few very long rows")
    elif cv > 0.5:
        parts.append("irregular rows")
    elif mu <= 8:
        parts.append("short regular rows")
    elif mu >= 64:
        parts.append("long rows")
    return "; ".join(parts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("md")
    ap.add_argument("--png-prefix", default=None, help="plots: PREFIX-speedup-mu.png, -eta.png, -best.png, -gmean.png")
    ap.add_argument("--title", default="Benchmark suite")
    ap.add_argument("--png-link-prefix", default=None, help="how the Markdown refers to the plots (default: relative to the .md)")
    a = ap.parse_args()
    mats = load(a.csv)
    for key in [k for k in FORMATS if not any(k in m["runs"] for m in mats.values())]:
        del FORMATS[key]  # a format this run did not measure gets no column
    ran = [m for m in mats.values() if ok(m["runs"].get(("aijcusparse", "")))]
    gen = [m for m in ran if m["set"] == "generated"]
    real = [m for m in ran if m["set"] == "real"]
    L = [f"## {a.title}", ""]
    nall = len(mats)
    notes = [(m["name"], n) for m in mats.values() for n in m["notes"]]
    L.append(f"{len(ran)} matrices measured on the GPU ({len(gen)} generated, {len(real)} real); {nall - len(ran)} not "
             f"(listed at the end). Speed-up = median time of `aijcusparse` / median time of the format, on the same "
             f"matrix in the same process; η+ against the copy bandwidth measured in that process.")
    L.append("")

    # geometric means
    L += ["### Geometric-mean speed-ups", "",
          "Over the matrices where both ran (a refused matrix counts in neither mean; refusals are counted). "
          "\"best variant\": the fastest of the type's variants on each matrix.", "",
          "| format | vs aijcusparse, all | generated | real | vs sellcuda, all | wins / losses vs aijcusparse | refused |",
          "| --- | --- | --- | --- | --- | --- | --- |"]
    gm_plot = []
    for key, name in FORMATS.items():
        s_all = [speedup(m, key) for m in ran]
        s_gen = [speedup(m, key) for m in gen]
        s_real = [speedup(m, key) for m in real]
        s_sell = [speedup(m, key, ("sellcuda", "")) for m in ran]
        wins = sum(1 for s in s_all if s and s > 1.0)
        losses = sum(1 for s in s_all if s and s <= 1.0)
        refused = sum(1 for m in ran if m["runs"].get(key) and m["runs"][key]["status"] == "refused")
        row = [gmean(s_all), gmean(s_gen), gmean(s_real), gmean(s_sell) if name != "sellcuda" else 1.0]
        gm_plot.append((name, row[0], row[3]))
        L.append(f"| `{name}` | {fmt(row[0])}× | {fmt(row[1])}× | {fmt(row[2])}× | {fmt(row[3])}× | {wins} / {losses} | {refused} |")
    for t in ("ellrcuda", "cmrscuda", "rgcsrcuda"):
        best = []
        best_sell = []
        for m in ran:
            ts = [time_of(m, k) for k in m["runs"] if k[0] == t]
            ts = [x for x in ts if x]
            b, sl = time_of(m, ("aijcusparse", "")), time_of(m, ("sellcuda", ""))
            if ts and b:
                best.append(b / min(ts))
            if ts and sl:
                best_sell.append(sl / min(ts))
        L.append(f"| `{t}` best variant | {fmt(gmean(best))}× | | | {fmt(gmean(best_sell))}× | {sum(1 for s in best if s > 1)} / {sum(1 for s in best if s <= 1)} | |")
    L.append("")

    # main (generated) matrices
    L += ["### Generated matrices (GPU-filling sizes)", "",
          "GFLOPS (speed-up over `aijcusparse`; η+). `aij`: one CPU core, wall clock.", "",
          "| matrix | rows | nnz | μ | σ | max | aijcusparse | " + " | ".join(FORMATS.values()) + " | aij (CPU) |",
          "| --- " * (8 + len(FORMATS)) + "|"]
    for m in [m for m in mats.values() if m["set"] == "generated"]:
        cells = []
        for key in [("aijcusparse", "")] + list(FORMATS):
            r = m["runs"].get(key)
            if ok(r):
                s = speedup(m, key)
                cells.append(f"{fnum(r['gflops']):.0f}" + ("" if key[0] == "aijcusparse" else f" ({fmt(s)}×)") + f"; {fnum(r['eta_plus']):.2f}")
            elif r is not None:
                cells.append(r["status"])
            else:
                cells.append("–")
        r = m["runs"].get(("aij", ""))
        cells.append(f"{fnum(r['gflops']):.1f}" if ok(r) else "–")
        L.append(f"| {m['name']} | {m.get('rows', 0):.0f} | {m.get('nnz', 0):.0f} | {fmt(m.get('mu'), 1)} | {fmt(m.get('sigma'), 1)} | "
                 f"{m.get('max_row', 0):.0f} | " + " | ".join(cells) + " |")
    L.append("")

    # variants on the generated set
    vkeys = []
    for m in gen:
        for k in m["runs"]:
            if k[1] and k not in vkeys:
                vkeys.append(k)
    if vkeys:
        L += ["### Variants (generated matrices): GFLOPS", "",
              "| matrix | " + " | ".join(f"{k[0]} {short_variant(k[1])}" for k in vkeys) + " |", "| --- " * (1 + len(vkeys)) + "|"]
        for m in gen:
            cells = []
            for k in vkeys:
                r = m["runs"].get(k)
                cells.append(f"{fnum(r['gflops']):.0f}" if ok(r) else (r["status"] if r else "–"))
            L.append(f"| {m['name']} | " + " | ".join(cells) + " |")
        L.append("")

    # build times
    L += ["### Conversion (device build) times", "",
          "Build = `MatSetType` from AIJ + the first product (which builds the device copy) − one product; in ms and in "
          "products (SpMV units). Median over the matrices where the type ran; the main matrices one by one.", "",
          "| type | median build ms (generated) | median in SpMVs (generated) | median build ms (real) | median in SpMVs (real) |",
          "| --- | --- | --- | --- | --- |"]
    for key, name in [(("aijcusparse", ""), "aijcusparse")] + list(FORMATS.items()):
        def med(ms, col):
            v = sorted(fnum(m["runs"][key][col]) for m in ms if ok(m["runs"].get(key)) and fnum(m["runs"][key][col]) is not None)
            return v[len(v) // 2] if v else None
        L.append(f"| `{name}` | {fmt(med(gen, 'build_ms'), 1)} | {fmt(med(gen, 'build_spmv'), 0)} | {fmt(med(real, 'build_ms'), 1)} | {fmt(med(real, 'build_spmv'), 0)} |")
    L.append("")
    L += ["| matrix | " + " | ".join(["aijcusparse"] + list(FORMATS.values())) + " |", "| --- " * (2 + len(FORMATS)) + "|"]
    for m in gen:
        cells = []
        for key in [("aijcusparse", "")] + list(FORMATS):
            r = m["runs"].get(key)
            cells.append(f"{fnum(r['build_ms']):.0f} ms = {fnum(r['build_spmv']):.0f}" if ok(r) else "–")
        L.append(f"| {m['name']} | " + " | ".join(cells) + " |")
    L.append("")

    # KSP
    kmats = [m for m in mats.values() if any(r.get("ksp") for r in m["runs"].values())]
    if kmats:
        L += ["### KSP solves", "",
              "Same system (b = A·1, x0 = 0), Jacobi, rtol 1e-8, at most 2000 iterations; CG for symmetric matrices with a "
              "positive diagonal, GMRES(30) otherwise. One timed solve after a 3-iteration warm-up. Cells: iterations, "
              "solve time, speed-up over `aijcusparse` (reason < 0: not converged).", "",
              "| matrix | KSP | " + " | ".join(["aijcusparse"] + list(FORMATS.values()) + ["aij (CPU)"]) + " |",
              "| --- " * (3 + len(FORMATS) + 1) + "|"]
        for m in kmats:
            cells, kt = [], ""
            for key in [("aijcusparse", "")] + list(FORMATS) + [("aij", "")]:
                r = m["runs"].get(key)
                if ok(r) and r.get("ksp"):
                    kt = r["ksp"]
                    its, reason = int(fnum(r["ksp_its"])), int(fnum(r["ksp_reason"]))
                    sp = fnum(r["ksp_speedup_vs_first"])
                    cells.append(f"{its}{'' if reason > 0 else ' (not conv.)'}, {fnum(r['ksp_s']) * 1e3:.1f} ms" +
                                 ("" if key[0] == "aijcusparse" else f", {fmt(sp)}×"))
                else:
                    cells.append("–")
            L.append(f"| {m['name']} | {kt} | " + " | ".join(cells) + " |")
        L.append("")

    # real matrices
    rm = [m for m in mats.values() if m["set"] == "real"]
    if rm:
        L += ["### Real matrices (`../shared/matrices`, replicated on the block diagonal)", "",
              "μ, σ, max: of the original matrix (replication keeps them); copies: block-diagonal copies to reach about "
              "6 M nonzeros. Cells: speed-up over `aijcusparse` (`ref.`: refused by the padding guard).", "",
              "| matrix | rows × copies | nnz (replicated) | μ | σ | max | aijcusparse GFLOPS | " + " | ".join(FORMATS.values()) + " | best |",
              "| --- " * (8 + len(FORMATS)) + "|"]
        for m in sorted(rm, key=lambda m: m.get("mu") or 0):
            if not ok(m["runs"].get(("aijcusparse", ""))):
                continue
            cells, best, bs = [], "aijcusparse", 1.0
            for key, name in FORMATS.items():
                r = m["runs"].get(key)
                s = speedup(m, key)
                if s is not None and s > bs:
                    best, bs = name, s
                cells.append(fmt(s) if s is not None else ("ref." if r is not None and r["status"] == "refused" else "–"))
            base = m["runs"][("aijcusparse", "")]
            src_rows = m.get("src_rows") or 0
            L.append(f"| {m['name']} | {src_rows:.0f} × {m.get('replicate', 1):.0f} | {m.get('nnz', 0):.0f} | {fmt(m.get('mu'), 1)} | "
                     f"{fmt(m.get('sigma'), 1)} | {m.get('max_row', 0):.0f} | {fnum(base['gflops']):.0f} | " + " | ".join(cells) + f" | {best} ({bs:.2f}×) |")
        L.append("")

    # wins and losses
    L += ["### Where each format wins and loses (speed-up over `aijcusparse`)", ""]
    for key, name in FORMATS.items():
        ss = [(speedup(m, key), m) for m in ran]
        good = sorted([x for x in ss if x[0]], key=lambda x: -x[0])
        refused = [m for m in ran if m["runs"].get(key) and m["runs"][key]["status"] == "refused"]
        if not good and not refused:
            continue
        L.append(f"- **`{name}`**: wins on {sum(1 for s, _ in good if s > 1)} of {len(good)} matrices it ran; " +
                 "best: " + ", ".join(f"{m['name']} {s:.2f}× ({why(m, name, s)})" for s, m in good[:4]) + "; " +
                 "worst: " + ", ".join(f"{m['name']} {s:.2f}× ({why(m, name, s)})" for s, m in good[-4:][::-1]) +
                 (f"; refused {len(refused)} (e.g. " + ", ".join(f"{m['name']}: μ {m.get('mu', 0):.1f}, max {m.get('max_row', 0):.0f}" for m in refused[:3]) + ")" if refused else "") + ".")
    L.append("")

    if notes:
        L += ["### Not measured", ""]
        for n, t in notes:
            L.append(f"- {n}: {t}")
        L.append("")

    # plots
    if a.png_prefix and not ran:
        L.append("No GPU results in this CSV (GPU types skipped): no plots.")
    if a.png_prefix and ran:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        link = a.png_link_prefix if a.png_link_prefix is not None else os.path.relpath(a.png_prefix, os.path.dirname(os.path.abspath(a.md)))
        # 1. speed-up vs mu
        fig, ax = plt.subplots(figsize=(10, 6))
        for key, name in FORMATS.items():
            xs, ys = [], []
            for m in ran:
                s = speedup(m, key)
                if s and m.get("mu"):
                    xs.append(m["mu"]), ys.append(s)
            ax.scatter(xs, ys, s=22, alpha=0.75, label=name, color=COLORS[name], marker=MARKERS[name])
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("mean nonzeros per row μ")
        ax.set_ylabel("speed-up over aijcusparse (cuSPARSE CSR)")
        ax.set_title("SpMV speed-up over cuSPARSE vs mean row length (each point a matrix)")
        ax.legend(fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        fig.savefig(a.png_prefix + "-speedup-mu.png", dpi=110)
        plt.close(fig)
        # 2. eta+ per format
        fig, ax = plt.subplots(figsize=(10, 5))
        names = ["aijcusparse"] + list(FORMATS.values())
        keys = [("aijcusparse", "")] + list(FORMATS)
        data = [[fnum(m["runs"][k]["eta_plus"]) for m in ran if ok(m["runs"].get(k))] for k in keys]
        ax.boxplot([d if d else [0] for d in data], showfliers=False)
        for i, d in enumerate(data):
            ax.scatter([i + 1 + 0.08 * ((j % 5) - 2) for j in range(len(d))], d, s=8, alpha=0.5, color=COLORS[names[i]])
        ax.set_xticks(range(1, len(names) + 1), names, rotation=15, fontsize=8)
        ax.set_ylabel("η+ = β+ / τ / B")
        ax.set_title("Fraction of the copy bandwidth (η+) per format, all matrices")
        ax.grid(True, axis="y", alpha=0.3)
        fig.tight_layout()
        fig.savefig(a.png_prefix + "-eta.png", dpi=110)
        plt.close(fig)
        # 3. best format per matrix (sorted by mu)
        ms = sorted(ran, key=lambda m: m.get("mu") or 0)
        fig, ax = plt.subplots(figsize=(10, max(5, 0.16 * len(ms) + 1)))
        for i, m in enumerate(ms):
            best, bs = "aijcusparse", 1.0
            for key, name in FORMATS.items():
                s = speedup(m, key)
                if s and s > bs:
                    best, bs = name, s
            ax.barh(i, bs, color=COLORS[best])
        ax.set_yticks(range(len(ms)), [f"{m['name']} (μ {m.get('mu', 0):.1f})" for m in ms], fontsize=6)
        ax.axvline(1.0, color="k", lw=0.8)
        ax.set_xlabel("best speed-up over aijcusparse (1 = cuSPARSE is best)")
        ax.set_title("Best format per matrix (sorted by μ)")
        from matplotlib.patches import Patch
        ax.legend(handles=[Patch(color=COLORS[n], label=n) for n in ["aijcusparse"] + list(FORMATS.values())], fontsize=7, loc="lower right")
        fig.tight_layout()
        fig.savefig(a.png_prefix + "-best.png", dpi=110)
        plt.close(fig)
        # 4. geometric means
        fig, ax = plt.subplots(figsize=(8, 4))
        x = range(len(gm_plot))
        ax.bar([i - 0.2 for i in x], [g[1] or 0 for g in gm_plot], width=0.4, label="over aijcusparse", color="tab:gray")
        ax.bar([i + 0.2 for i in x], [g[2] or 0 for g in gm_plot], width=0.4, label="over sellcuda", color="tab:orange")
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xticks(list(x), [g[0] for g in gm_plot], rotation=15, fontsize=8)
        ax.set_ylabel("geometric-mean speed-up")
        ax.set_title(f"Geometric-mean SpMV speed-up over {len(ran)} matrices")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(a.png_prefix + "-gmean.png", dpi=110)
        plt.close(fig)
        L[2:2] = [f"![speed-up vs μ]({link}-speedup-mu.png)", "", f"![best format per matrix]({link}-best.png)", "",
                  f"![η+ per format]({link}-eta.png)", "", f"![geometric means]({link}-gmean.png)", ""]
    open(a.md, "w").write("\n".join(L) + "\n")
    print(f"bench_report: {a.md}" + (f", {a.png_prefix}-*.png" if a.png_prefix else ""))


if __name__ == "__main__":
    sys.exit(main())
