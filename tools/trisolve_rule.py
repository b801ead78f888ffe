#!/usr/bin/env python3
"""Fit the rule by which our factors choose device or host triangular solves (-mat_gpumat_trisolve auto).

    trisolve_rule.py CSV... [--factor ILU] [--markdown] [--coefficients a0,a1,a2,b1,b2]

Reads the rows of examples/bench_trisolve (-csv; a leading `run` column is allowed) and fits, in microseconds per
forward and backward solve with device vectors,
    device = a0 + a1 * levels + a2 * nnz      (levels = lower + upper level sets of the matrix's triangles)
    host   = b1 * rows + b2 * nnz             (fitted where 2e4 <= nnz <= 8e6: where the choice is close)
by least squares on relative errors, then prints each matrix's measured speed-up of the device, the rule's choice
and what it costs against the better side. src/base/gpumat_trisolve.c holds the coefficients (rounded).
"""
import argparse
import csv


def lstsq(X, y):
    """Least squares by the normal equations (a handful of unknowns)."""
    n = len(X[0])
    A = [[sum(r[i] * r[j] for r in X) for j in range(n)] for i in range(n)]
    b = [sum(r[i] * v for r, v in zip(X, y)) for i in range(n)]
    for i in range(n):
        p = max(range(i, n), key=lambda k: abs(A[k][i]))
        A[i], A[p], b[i], b[p] = A[p], A[i], b[p], b[i]
        for k in range(i + 1, n):
            f = A[k][i] / A[i][i]
            A[k] = [x - f * y for x, y in zip(A[k], A[i])]
            b[k] -= f * b[i]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (b[i] - sum(A[i][j] * x[j] for j in range(i + 1, n))) / A[i][i]
    return x


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--factor", default="ILU")
    ap.add_argument("--markdown", action="store_true", help="print the per-matrix table in Markdown")
    ap.add_argument("--coefficients", help="a0,a1,a2,b1,b2: judge these (src/base/gpumat_trisolve.c's) instead of the fit")
    a = ap.parse_args()
    rows = []
    for path in a.csv:
        with open(path) as f:
            for r in csv.DictReader(f):
                if r["factor"] != a.factor:
                    continue
                rows.append(dict(name=r["matrix"], run=r.get("run", ""), n=float(r["rows"]), nnz=float(r["nnz"]),
                                 lev=float(r["levels_lower"]) + float(r["levels_upper"]), host=float(r["host_solve_us"]),
                                 dev=float(r["device_solve_us"])))
    dev = lstsq([[1 / r["dev"], r["lev"] / r["dev"], r["nnz"] / r["dev"]] for r in rows], [1.0] * len(rows))
    mid = [r for r in rows if 2e4 <= r["nnz"] <= 8e6]
    host = lstsq([[r["n"] / r["host"], r["nnz"] / r["host"]] for r in mid], [1.0] * len(mid))
    if a.coefficients:
        c = [float(x) for x in a.coefficients.split(",")]
        dev, host = c[:3], c[3:]
    print(f"{a.factor}(0), {len(rows)} measurements{', the coefficients given' if a.coefficients else ''}:")
    print(f"  device us = {dev[0]:.3g} + {dev[1]:.3g} * levels + {dev[2]:.3g} * nnz")
    print(f"  host us   = {host[0]:.3g} * rows + {host[1]:.3g} * nnz   ({len(mid)} measurements with 2e4 <= nnz <= 8e6)")
    sep = " | " if a.markdown else "  "
    head = ["matrix", "run", "rows", "nnz", "levels", "host us", "device us", "device x", "choice", "vs best"]
    if a.markdown:
        print("\n| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    else:
        print(sep.join(f"{h:>10}" for h in head))
    misses, loss = 0, 0.0
    for r in rows:
        pdev = dev[0] + dev[1] * r["lev"] + dev[2] * r["nnz"]
        phost = host[0] * r["n"] + host[1] * r["nnz"]
        device = pdev <= phost
        best = min(r["host"], r["dev"])
        got = r["dev"] if device else r["host"]
        misses += got > best
        loss += got / best
        cells = [r["name"], r["run"], f"{r['n']:.0f}", f"{r['nnz']:.0f}", f"{r['lev']:.0f}", f"{r['host']:.1f}", f"{r['dev']:.1f}",
                 f"{r['host'] / r['dev']:.2f}", "device" if device else "host", f"{got / best:.2f}"]
        print(("| " + " | ".join(cells) + " |") if a.markdown else sep.join(f"{c:>10}" for c in cells))
    print(f"\nthe rule picks the slower side for {misses} of {len(rows)}; mean time / best {loss / len(rows):.3f}")


if __name__ == "__main__":
    main()
