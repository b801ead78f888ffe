#!/usr/bin/env python3
"""Fit the rule by which the choosing type (autocuda, src/choose/) picks a format from a matrix's row statistics.

    format_rule.py CSV... [--csr TYPE] [--csr-variant VARIANT] [--measured TYPE] [--markdown]

Reads the suite rows of examples/bench_spmv (-csv; `status` ok, the default variant of each type) and, per matrix,
the features the base already has (src/base/gpumat_rowstats.c: rows, mean row length mu, its spread sigma, the
longest row, empty rows) and the SpMV times of the candidates: cuSPARSE CSR (--csr: `csrcuda` once a suite run has
it, `aijcusparse` as its stand-in before), CMRS and ELLPACK-R. It searches the rule

    cuSPARSE CSR   if sigma / mu > A  or  mu > B      (rows of very different lengths, or long rows)
    ELLPACK-R      else if sigma / mu <= C and no empty rows and longest row <= 4 mu   (regular: its padding guard passes)
    CMRS           else

over a grid of (A, B, C), minimizing the geometric mean of (time of the chosen format / time of the best candidate),
and prints the thresholds, what the rule gives against the best and against `aijcusparse`, and its worst choices;
--measured judges a type timed in the same run (autocuda itself) the same way. The thresholds the library applies
are in src/choose/chooseimpl.h.
"""
import argparse
import collections
import csv
import math

GRID_A = [0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 1e9]
GRID_B = [16, 24, 32, 48, 64, 96, 128, 1e9]
GRID_C = [-1, 0.0, 0.01, 0.05, 0.1, 0.2, 0.3]


def read(paths, csr, csr_variant=""):
    times, feats = collections.defaultdict(dict), {}
    for path in paths:
        for r in csv.DictReader(open(path)):
            if r.get("status") != "ok" or not r.get("median_ms"):
                continue
            base, variant = r.get("base_type") or r["type"], r.get("variant") or ""
            names = [n for n, t, v in (("csr", csr, csr_variant), ("cmrs", "cmrscuda", ""), ("ellr", "ellrcuda", ""), ("cusparse", "aijcusparse", "")) if t == base and v == variant]
            if not names:
                continue
            for name in names:
                times[r["matrix"]][name] = float(r["median_ms"])
            if r.get("mu") and r.get("rows"):
                feats[r["matrix"]] = dict(mu=float(r["mu"]), sigma=float(r["sigma"]), longest=float(r["max_row"]), empty=int(float(r["empty_rows"] or 0)))
    return {m: t for m, t in times.items() if m in feats and "csr" in t and "cmrs" in t}, feats


def choose(f, A, B, C):
    spread = f["sigma"] / f["mu"] if f["mu"] else 0.0
    if spread > A or f["mu"] > B:
        return "csr"
    if spread <= C and f["empty"] == 0 and f["longest"] <= 4 * f["mu"]:
        return "ellr"
    return "cmrs"


def judge(times, feats, rule):
    logs, worst = [], []
    for m, t in times.items():
        pick = choose(feats[m], *rule)
        got = t.get(pick, t["cmrs"])  # a refused ELLPACK-R (absent) falls back to CMRS, as the type would
        best = min(t[k] for k in ("csr", "cmrs", "ellr") if k in t)
        logs.append(math.log(got / best))
        worst.append((got / best, m, pick))
    return math.exp(sum(logs) / len(logs)), sorted(worst, reverse=True)


def measured(paths, label, times):
    """The type `label` (CSV column type, variant included) as timed: speed-up over aijcusparse, and time / best candidate"""
    got = {}
    for path in paths:
        for r in csv.DictReader(open(path)):
            if r.get("status") == "ok" and r.get("median_ms") and r["type"] == label:
                got[r["matrix"]] = float(r["median_ms"])
    both = [m for m in times if m in got and "cusparse" in times[m]]
    if not both:
        raise SystemExit(f"no matrix with {label} and aijcusparse timed")
    speed = {m: times[m]["cusparse"] / got[m] for m in both}
    best = {m: got[m] / min(times[m][k] for k in ("csr", "cmrs", "ellr") if k in times[m]) for m in both}
    low = sorted((v, m) for m, v in speed.items() if v < 0.95)
    print(f"{label} as measured on {len(both)} matrices: {math.exp(sum(map(math.log, speed.values())) / len(both)):.3f}x aijcusparse (geometric mean), "
          f"slowest {min(speed.values()):.3f}x, {len(low)} below 0.95x{' (' + ', '.join(f'{m} {v:.2f}' for v, m in low[:8]) + ')' if low else ''}; "
          f"within 5 % of the best candidate on {sum(v <= 1.05 for v in best.values())} of {len(both)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--csr", default="csrcuda", help="the cuSPARSE CSR candidate's type in the CSV (aijcusparse before a run with csrcuda)")
    ap.add_argument("--csr-variant", default="", help="the CSR candidate's variant in the CSV (e.g. mat_csr_spmv_alg:1)")
    ap.add_argument("--measured", default="", help="also judge a type timed in the same CSV (e.g. autocuda, or 'autocuda mat_auto_timed:1'): "
                    "against aijcusparse and against the best candidate, as measured")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    times, feats = read(a.csv, a.csr, a.csr_variant)
    if not times:
        raise SystemExit(f"no matrix with both {a.csr} and cmrscuda timed in {a.csv}")
    fits = sorted((judge(times, feats, (A, B, C))[0], A, B, C) for A in GRID_A for B in GRID_B for C in GRID_C)
    g, A, B, C = fits[0]
    _, worst = judge(times, feats, (A, B, C))
    picks = collections.Counter(choose(feats[m], A, B, C) for m in times)
    vs_cusparse = [times[m]["cusparse"] / times[m].get(choose(feats[m], A, B, C), times[m]["cmrs"]) for m in times if "cusparse" in times[m]]
    print(f"{len(times)} matrices; cuSPARSE CSR candidate: {a.csr}{' ' + a.csr_variant if a.csr_variant else ''}")
    print(f"rule: csr if sigma/mu > {A:g} or mu > {B:g}; ellr if sigma/mu <= {C:g}, no empty rows, longest <= 4 mu; else cmrs")
    print(f"chosen: {dict(picks)}; geometric mean of chosen/best {g:.3f}; of aijcusparse/chosen {math.exp(sum(map(math.log, vs_cusparse)) / len(vs_cusparse)):.3f} (speed-up)")
    print(f"always cmrs: {judge(times, feats, (1e9, 1e9, -1))[0]:.3f}; the next best rules: " + "; ".join(f"({a_:g}, {b_:g}, {c_:g}) {g_:.3f}" for g_, a_, b_, c_ in fits[1:4]))
    if a.measured:
        measured(a.csv, a.measured, times)
    fmt = "| {} | {} | {:.2f} |" if a.markdown else "  {:28s} {:5s} {:.2f}x the best"
    print("| matrix | chosen | chosen / best |\n| --- | --- | --- |" if a.markdown else "worst choices:")
    for r, m, pick in worst[:8]:
        print(fmt.format(m, pick, r))


if __name__ == "__main__":
    main()
