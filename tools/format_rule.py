#!/usr/bin/env python3
"""Fit the rule by which the choosing type (autocuda, src/choose/) picks a format from a matrix's row statistics.

    format_rule.py CSV... [--csr TYPE] [--csr-variant VARIANT] [--measured TYPE] [--rule A,B,C,D[,E,F]]
                   [--matrices-dir DIR] [--markdown]

(each CSV one run: the rule is fitted on all of them together)

Reads the suite rows of examples/bench_spmv (-csv; `status` ok, the default variant of each type) and, per matrix,
the features the base already has (src/base/gpumat_rowstats.c: rows, mean row length mu, its spread sigma, the
longest row, empty rows, the share of the entries in heavy rows: longer than 4 mu) and the SpMV times of the
candidates: cuSPARSE CSR (--csr: `csrcuda` once a suite run has it, `aijcusparse` as its stand-in before), CMRS and
ELLPACK-R. The heavy share is the CSV's column `heavy_share` (bench_spmv writes it since 2026-11-28); for the CSVs
before, --matrices-dir counts it from the real matrices' files (replication on the diagonal keeps it); where it is
unknown (generated matrices of an older CSV) the CMRS clause below does not apply. It searches the rule

    CMRS           if (sigma / mu > A or longest row > D mu) and mu <= B and nnz >= E and heavy share < F
                   (rows of very different lengths whose long rows hold few of the entries of a large matrix)
    cuSPARSE CSR   else if sigma / mu > A  or  mu > B  or  longest row > D mu   (rows of very different lengths, long rows, one outlier)
                   or nnz >= E and mu > G and sigma / mu > C   (a large matrix of medium rows that are not regular)
    ELLPACK-R      else if sigma / mu <= C and no empty rows and longest row <= 4 mu   (regular: its padding guard passes)
    CMRS           else

over a grid of (A, B, C, D, E, F, G), minimizing first the number of matrices where the choice is below 0.95x aijcusparse
(issue #15's floor), then the geometric mean of (time of the chosen format / time of the best candidate),
and prints the thresholds, what the rule gives against the best and against `aijcusparse` (beside the ceiling of any
rule: every matrix given its best candidate), and its worst choices;
--measured judges a type timed in the same run (autocuda itself) the same way. The thresholds the library applies
are in src/choose/chooseimpl.h.
"""
import argparse
import collections
import csv
import gzip
import math
import os

GRID_A = [0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 1e9]
GRID_B = [16, 24, 32, 48, 64, 96, 128, 1e9]
GRID_C = [-1, 0.0, 0.01, 0.05, 0.1, 0.2, 0.3]
GRID_D = [8, 12, 16, 24, 32, 1e9]
GRID_EF = [(1e18, 0.0)] + [(1e7, F) for F in (0.05, 0.1, 0.15, 0.2, 0.3)]
GRID_G = [1e18, 12, 16, 24, 32]
HEAVY_ROW_MEANS = 4  # MATGPUMAT_HEAVY_ROW_MEANS (include/petscgpumat/private/gpumatimpl.h)


def heavy_share_of_file(path):
    """The share of the entries in rows longer than HEAVY_ROW_MEANS x the mean, counted from a MatrixMarket file as
    src/io/matrixmarket.c loads it (symmetric storage mirrored, duplicates merged, explicit zeros kept)"""
    with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as f:
        banner = f.readline().lower().split()
        line = f.readline()
        while line.startswith("%") or not line.strip():
            line = f.readline()
        dims = [int(v) for v in line.split()]
        if banner[2] == "array":
            return 0.0  # dense: every row equally long
        m, n = dims[0], dims[1]
        mirror = banner[4] != "general"
        seen = set()
        for line in f:
            t = line.split()
            if len(t) < 2 or t[0].startswith("%"):
                continue
            i, j = int(t[0]) - 1, int(t[1]) - 1
            seen.add(i * n + j)
            if mirror and i != j:
                seen.add(j * n + i)
    lens = collections.Counter(k // n for k in seen)
    nnz = len(seen)
    light = HEAVY_ROW_MEANS * nnz // m if m else 0
    return sum(v for v in lens.values() if v > light) / nnz if nnz else 0.0


def read(paths, csr, csr_variant="", matrices_dir="", shares={}):
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
                heavy = float(r["heavy_share"]) if r.get("heavy_share") else None
                if heavy is None and matrices_dir and r.get("set") == "real":
                    f = os.path.join(matrices_dir, r["matrix"] + ".mtx.gz")
                    if r["matrix"] not in shares and os.path.exists(f):
                        shares[r["matrix"]] = heavy_share_of_file(f)
                    heavy = shares.get(r["matrix"])
                feats[r["matrix"]] = dict(mu=float(r["mu"]), sigma=float(r["sigma"]), longest=float(r["max_row"]), empty=int(float(r["empty_rows"] or 0)),
                                          nnz=float(r["nnz"]), heavy=heavy)
    return {m: t for m, t in times.items() if m in feats and "csr" in t and "cmrs" in t}, feats


def choose(f, A, B, C, D, E=1e18, F=0.0, G=1e18):
    spread = f["sigma"] / f["mu"] if f["mu"] else 0.0
    uneven = spread > A or f["longest"] > D * f["mu"]
    large = f["nnz"] >= E
    if uneven and f["mu"] <= B and large and f["heavy"] is not None and f["heavy"] < F:
        return "cmrs"
    if uneven or f["mu"] > B or (large and f["mu"] > G and spread > C):
        return "csr"
    if spread <= C and f["empty"] == 0 and f["longest"] <= 4 * f["mu"]:
        return "ellr"
    return "cmrs"


def below(times, feats, rule):
    """Matrices where the rule's choice is below 0.95x aijcusparse"""
    return sum(t["cusparse"] / t.get(choose(feats[m], *rule), t["cmrs"]) < 0.95 for m, t in times.items() if "cusparse" in t)


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
    ap.add_argument("--rule", default="", help="A,B,C,D[,E,F[,G]]: report this rule (e.g. the shipped one, src/choose/chooseimpl.h: 2,48,0.1,16,1e7,0.15,16) "
                    "by the candidates' times instead of the fitted one, which is still printed")
    ap.add_argument("--matrices-dir", default="", help="count the heavy share of the real matrices from their files here (../shared/matrices) "
                    "where the CSV has no heavy_share column")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    # each CSV is one run (one GPU, one day): the rule is fitted on all of them at once
    runs = [(path,) + read([path], a.csr, a.csr_variant, a.matrices_dir) for path in a.csv]
    for path, times, _ in runs:
        if not times:
            raise SystemExit(f"no matrix with both {a.csr} and cmrscuda timed in {path}")

    def score(rule):  # issue #15's order: first no matrix below 0.95x aijcusparse, then the geometric mean over the runs
        return (sum(below(t, f, rule) for _, t, f in runs), math.exp(sum(math.log(judge(t, f, rule)[0]) for _, t, f in runs) / len(runs)))

    fits = sorted(score((A, B, C, D, E, F, G)) + (A, B, C, D, E, F, G)
                  for A in GRID_A for B in GRID_B for C in GRID_C for D in GRID_D for E, F in GRID_EF for G in GRID_G)
    nbelow, g, A, B, C, D, E, F, G = fits[0]
    rule = (A, B, C, D, E, F, G)
    unknown = sorted({m for _, t, f in runs for m in t if f[m]["heavy"] is None})
    print(f"{len(runs)} run(s); cuSPARSE CSR candidate: {a.csr}{' ' + a.csr_variant if a.csr_variant else ''}; heavy share unknown for {len(unknown)} matrices")
    print(f"fitted rule: cmrs if (sigma/mu > {A:g} or longest > {D:g} mu) and mu <= {B:g} and nnz >= {E:g} and heavy share < {F:g}; "
          f"else csr if sigma/mu > {A:g} or mu > {B:g} or longest > {D:g} mu or (nnz >= {E:g} and mu > {G:g} and sigma/mu > {C:g}); "
          f"ellr if sigma/mu <= {C:g}, no empty rows, longest <= 4 mu; else cmrs")
    print(f"matrices where its choice is below 0.95x aijcusparse: {nbelow}; geometric mean of chosen/best over the runs {g:.3f}")
    print("the next best rules: " + "; ".join(f"({', '.join(f'{v:g}' for v in r[2:])}) {r[1]:.3f}, {r[0]} below 0.95x" for r in fits[1:4]))
    if a.rule:
        rule = tuple(float(v) for v in a.rule.split(","))
        nbelow, g = score(rule)
        print(f"reported below: the rule ({a.rule}): {nbelow} matrices below 0.95x aijcusparse; geometric mean of chosen/best over the runs {g:.3f}")
    for path, times, feats in runs:
        gr, worst = judge(times, feats, rule)
        picks = collections.Counter(choose(feats[m], *rule) for m in times)
        vs_cusparse = [times[m]["cusparse"] / times[m].get(choose(feats[m], *rule), times[m]["cmrs"]) for m in times if "cusparse" in times[m]]
        near = sum(r <= 1.05 for r, _, _ in worst)
        # the ceiling of any rule: each matrix given its best candidate
        ceiling = [t["cusparse"] / min(t[k] for k in ("csr", "cmrs", "ellr") if k in t) for t in times.values() if "cusparse" in t]
        print(f"{path}: {len(times)} matrices; chosen {dict(picks)}; chosen/best {gr:.3f}, within 5 % of the best on {near} (always cmrs {judge(times, feats, (1e9, 1e9, -1, 1e9))[0]:.3f}); "
              f"aijcusparse/chosen {math.exp(sum(map(math.log, vs_cusparse)) / len(vs_cusparse)):.3f} (geometric mean), slowest {min(vs_cusparse):.3f}; "
              f"ceiling (each matrix's best candidate) {math.exp(sum(map(math.log, ceiling)) / len(ceiling)):.3f}")
        if a.measured:
            measured([path], a.measured, times)
        fmt = "| {} | {} | {:.2f} |" if a.markdown else "  {:28s} {:5s} {:.2f}x the best"
        print("| matrix | chosen | chosen / best |\n| --- | --- | --- |" if a.markdown else "worst choices:")
        for r, m, pick in worst[:5]:
            print(fmt.format(m, pick, r))
        taken = [(m, feats[m]) for m in times if choose(feats[m], *rule) == "cmrs" and choose(feats[m], *rule[:4]) == "csr"]
        if taken:
            print("taken by the heavy-share clause (csr otherwise): " + ", ".join(
                f"{m} (heavy {f['heavy']:.2f}, cmrs {times[m]['cmrs'] / min(times[m][k] for k in ('csr', 'cmrs', 'ellr') if k in times[m]):.2f}x the best"
                + (f", {times[m]['cusparse'] / times[m]['cmrs']:.2f}x aijcusparse)" if "cusparse" in times[m] else ")") for m, f in sorted(taken)))
        given = [m for m in times if choose(feats[m], *rule) == "csr" and choose(feats[m], *rule[:6]) != "csr"]
        if given:
            print("given to csr by the large matrices' mean clause: " + ", ".join(
                f"{m} (csr {times[m]['csr'] / min(times[m][k] for k in ('csr', 'cmrs', 'ellr') if k in times[m]):.2f}x the best"
                + (f", {times[m]['cusparse'] / times[m]['csr']:.2f}x aijcusparse, cmrs {times[m]['cusparse'] / times[m]['cmrs']:.2f}x)" if "cusparse" in times[m] else ")")
                for m in sorted(given)))


if __name__ == "__main__":
    main()
