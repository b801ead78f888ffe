#!/usr/bin/env python3
"""The benchmark suite: every matrix set x every type, one CSV.

usage: tools/bench_suite.py [--quick] [--out suite.csv] [--log suite.txt] [--bench build/examples/bench_spmv]
                            [--matrices ../shared/matrices] [--budget 450] [--target-nnz 6000000]

Runs examples/bench_spmv once per matrix (each run under its own `timeout`, so one slow case cannot eat the
device call) and concatenates their CSVs into one file (one row per matrix x type x variant; refusals,
skipped GPU types, timeouts and cases left out for the time budget are rows too, with a status and a reason).

  full (default, on the GPU machine): the main set (generated, GPU-filling: Laplacians, random rows, a random
      permutation (p7), a dense 10000 x 10000, power-law rows, a few dense rows) with every type and variant,
      and KSP solves on some; then every real matrix of --matrices (Matrix Market, MANIFEST.tsv), replicated on
      the block diagonal to about --target-nnz nonzeros, with the core types. Cases are started while the
      elapsed time is under --budget seconds, the real matrices largest first.
  --quick (make bench, any machine): small matrices, all types; where no GPU answers, bench_spmv says the GPU
      types are skipped and times aij only.

Stdlib only (the GPU machine's python3 has no matplotlib need here); plots: tools/bench_report.py.
"""
import argparse, csv, io, os, shlex, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

HEADER = ("matrix,rows,cols,nnz,type,median_ms,min_ms,max_ms,gflops,eta_plus,eta_minus,speedup_vs_first,stored_over_nnz,"
          "convert_s,copy_bw_GBs,rel_err,set,base_type,variant,status,mu,sigma,max_row,empty_rows,heavy_share,replicate,src_rows,"
          "src_nnz,settype_ms,first_ms,build_ms,build_spmv,refresh_ms,refresh_spmv,device_MB,gpu,ksp,ksp_its,ksp_reason,ksp_s,"
          "ksp_speedup_vs_first,ksp_rnorm,ksp_with_build_s,ksp_it_us,ksp_bound_us,message").split(",")

GPU_TYPES = "aijcusparse,sellcuda,ellrcuda,cmrscuda,rgcsrcuda,csrcuda,autocuda"
SORT = "mat_rgcsr_sort_window:1000000000"  # reordering on (global window; the type's 2 % rule still applies)
# the main set: every variant the issue names
MAIN_VARIANTS = ",".join([
    "mat_ellr_threads_per_row:1", "mat_ellr_threads_per_row:4", "mat_ellr_threads_per_row:16",
    "mat_cmrs_variant:padded", "mat_cmrs_variant:basic",
    "mat_cmrs_variant:basic+mat_cmrs_height:2", "mat_cmrs_variant:basic+mat_cmrs_height:8",
    "mat_cmrs_lane_entries:1+mat_cmrs_unroll:2",  # the scan kernel as it was before 4 entries per lane
    SORT,
])
# the real matrices: the core types only (time budget)
CORE_VARIANTS = ",".join(["mat_cmrs_variant:padded", SORT])


def case(name, set_, args, types=GPU_TYPES, variants=MAIN_VARIANTS, ksp="none", timeout=60, reps=100):
    return dict(name=name, set=set_, args=args, types=types, variants=variants, ksp=ksp, timeout=timeout, reps=reps)


def main_set(quick):
    if quick:
        t = GPU_TYPES + ",aij"
        return [
            case("lap3d7-n30", "generated", "-problem lap3d7 -n 30", t, ksp="auto", reps=20),
            case("lap2d5-n100", "generated", "-problem lap2d5 -n 100", t, reps=20),
            case("lap3d27-n20", "generated", "-problem lap3d27 -n 20", t, reps=20),
            case("rows16-n30", "generated", "-problem rows -mean 16 -n 30", t, ksp="auto", reps=20),
            case("perm-n100000", "generated", "-problem perm -n 100000", t, reps=20),
            case("dense-n300", "generated", "-problem dense -n 300", t, reps=20),
            case("powerlaw-n20000", "generated", "-problem powerlaw -n 20000 -mean 16", t, ksp="auto", reps=20),
            case("denserows-n50000", "generated", "-problem denserows -n 50000", t, reps=20),
            case("arrow-n50000", "generated", "-problem arrow -n 50000", t, reps=20),
        ]
    t = GPU_TYPES + ",aij"
    return [
        # a small case where aij (one CPU core) also solves: the CPU reference
        case("lap3d7-n50", "generated", "-problem lap3d7 -n 50", t, variants="", ksp="auto", timeout=60),
        case("lap3d7-n150", "generated", "-problem lap3d7 -n 150", t, ksp="auto", timeout=90),
        case("lap2d5-n2000", "generated", "-problem lap2d5 -n 2000", t, timeout=90),
        case("lap3d27-n100", "generated", "-problem lap3d27 -n 100", t, ksp="auto", timeout=90),
        case("rows16-n110", "generated", "-problem rows -mean 16 -n 110", t, ksp="auto", timeout=90),
        case("rows64-n70", "generated", "-problem rows -mean 64 -n 70", t, timeout=90),
        case("perm-n16M", "generated", "-problem perm -n 16000000", t, timeout=90),
        case("powerlaw-n1500000", "generated", "-problem powerlaw -n 1500000 -mean 16", t, ksp="auto", timeout=90),
        case("denserows-n3000000", "generated", "-problem denserows -n 3000000 -dense_rows 8", t, ksp="auto", timeout=90),
        # long rows (issue #15): heavier and lighter power-law tails, and an arrow (one row as long as the matrix)
        case("powerlaw-a1.5-n1500000", "generated", "-problem powerlaw -n 1500000 -mean 16 -alpha 1.5", t, timeout=90),
        case("powerlaw-a3-n1500000", "generated", "-problem powerlaw -n 1500000 -mean 16 -alpha 3", t, timeout=90),
        case("arrow-n2000000", "generated", "-problem arrow -n 2000000", t, timeout=90),
        case("dense-n10000", "generated", "-problem dense -n 10000", GPU_TYPES + ",aij", variants=CORE_VARIANTS,
             timeout=120, reps=50),
    ]


def real_set(matrices, target, quick):
    """Every real matrix of MANIFEST.tsv, replicated to about `target` nonzeros, largest first"""
    manifest = os.path.join(matrices, "MANIFEST.tsv")
    if not os.path.exists(manifest):
        print(f"bench_suite: no {manifest}: the real matrices are left out", flush=True)
        return [], []
    rows = list(csv.DictReader(open(manifest), delimiter="\t"))
    rows.sort(key=lambda r: -int(r["nnz_expanded"]))
    cases, skipped = [], []
    if quick:
        rows = [r for r in rows if r["name"] in ("bcsstk13", "cage10", "rajat01")]
    for r in rows:
        path = os.path.join(matrices, r["name"] + ".mtx.gz")
        if r["field"] == "complex":
            skipped.append((r["name"], "skipped: complex field (this PETSc build has real scalars)"))
            continue
        if not os.path.exists(path):
            skipped.append((r["name"], f"skipped: {path} not found"))
            continue
        nnz = int(r["nnz_expanded"])
        k = 1 if quick else max(1, round(target / nnz))
        ksp = "auto" if r["name"] in ("cage10", "bcsstk16", "bcsstk13") else "none"
        types = GPU_TYPES + ",aij" if quick else GPU_TYPES
        cases.append(case(r["name"], "real", f"-f {shlex.quote(path)} -replicate {k}", types,
                          CORE_VARIANTS, ksp=ksp, timeout=45, reps=20 if quick else 50))
    return cases, skipped


def status_row(c, status, message):
    row = dict.fromkeys(HEADER, "")
    row.update(matrix=c["name"], set=c["set"], type="(all)", status=status, message=message.replace(",", ";"))
    return [row[h] for h in HEADER]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench-suite.csv"))
    ap.add_argument("--log", default=None, help="the programs' output (default: OUT with .txt)")
    ap.add_argument("--bench", default=os.path.join(ROOT, "build", "examples", "bench_spmv"))
    ap.add_argument("--matrices", default=os.environ.get("PETSCGPUMAT_MATRICES", os.path.join(ROOT, "..", "shared", "matrices")))
    ap.add_argument("--budget", type=float, default=450.0, help="start no case after this many seconds")
    ap.add_argument("--target-nnz", type=float, default=6e6, help="replicate real matrices to about this many nonzeros")
    ap.add_argument("--only", default="", help="comma-separated matrix names (a subset, for trials)")
    ap.add_argument("--add-aij", action="store_true", help="aij (CPU) in every case (trials without a GPU)")
    ap.add_argument("--sets", default="generated,real", help="which sets to run: generated, real or both")
    ap.add_argument("--types", default="", help="the types of every case instead of the suite's own (e.g. a refit of the choosing type's rule)")
    ap.add_argument("--variants", default=None, help="the variants of every case instead of the suite's own ('' for none)")
    a = ap.parse_args()
    log_path = a.log or os.path.splitext(a.out)[0] + ".txt"
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    sets = a.sets.split(",")
    cases = main_set(a.quick) if "generated" in sets else []
    real, skipped = real_set(a.matrices, a.target_nnz, a.quick) if "real" in sets else ([], [])
    cases += real
    if a.only:
        keep = set(a.only.split(","))
        cases = [c for c in cases if c["name"] in keep]
        skipped = [s for s in skipped if s[0] in keep]
    for c in cases:
        if a.types:
            c["types"] = a.types
        if a.variants is not None:
            c["variants"] = a.variants
    if a.add_aij:
        for c in cases:
            if "aij," not in c["types"] + ",":
                c["types"] += ",aij"
    env = dict(os.environ)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    mpienv = os.path.join(ROOT, "tests", "mpienv.sh")
    tmp = os.path.abspath(a.out) + ".part"
    t_start = time.time()
    n_ok = n_fail = n_budget = 0
    with open(a.out, "w", newline="") as out, open(log_path, "w") as log:
        w = csv.writer(out, lineterminator="\n")
        w.writerow(HEADER)
        for name, why in skipped:
            w.writerow(status_row(dict(name=name, set="real"), "skipped", why))
        for i, c in enumerate(cases):
            elapsed = time.time() - t_start
            if elapsed > a.budget:
                w.writerow(status_row(c, "budget", f"not run: the suite's time budget of {a.budget:.0f} s was spent"))
                n_budget += 1
                continue
            timeout = min(c["timeout"], max(10, a.budget + 60 - elapsed))
            cmd = [mpienv, a.bench] + shlex.split(c["args"]) + [
                "-name", c["name"], "-set", c["set"], "-types", c["types"], "-reps", str(c["reps"]), "-csv", tmp,
                "-ksp", c["ksp"], "-ksp_max_it", "2000"]
            if c["variants"]:
                cmd += ["-variants", c["variants"]]
            if os.path.exists(tmp):
                os.remove(tmp)
            t0 = time.time()
            try:
                p = subprocess.run(["timeout", "-k", "5", str(int(timeout))] + cmd, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, env=env, text=True, errors="replace")
                rc, text = p.returncode, p.stdout
            except OSError as e:
                rc, text = -1, str(e)
            dt = time.time() - t0
            log.write(f"==== [{i + 1}/{len(cases)}] {c['name']} ({c['set']}): rc {rc}, {dt:.1f} s\n$ {' '.join(shlex.quote(x) for x in cmd)}\n{text}\n")
            log.flush()
            print(f"[{i + 1}/{len(cases)}] {c['name']:<28} rc {rc:3d} {dt:6.1f} s (elapsed {time.time() - t_start:5.0f} s)", flush=True)
            if rc == 0 and os.path.exists(tmp):
                rows = list(csv.reader(open(tmp)))
                if rows and rows[0] != HEADER:
                    print(f"bench_suite: {c['name']}: bench_spmv's CSV header differs from the suite's", file=sys.stderr)
                for r in rows[1:]:
                    w.writerow(r)
                n_ok += 1
            else:
                status = "timeout" if rc in (124, 137) else "error"
                tail = " | ".join(l.strip() for l in text.strip().splitlines()[-3:])[-300:]
                w.writerow(status_row(c, status, f"rc {rc} after {dt:.0f} s: {tail}"))
                n_fail += 1
            out.flush()
    if os.path.exists(tmp):
        os.remove(tmp)
    print(f"bench_suite: {n_ok} matrices ran, {n_fail} failed or timed out, {n_budget} left out for the budget, "
          f"{len(skipped)} skipped; {time.time() - t_start:.0f} s; CSV {a.out}, log {log_path}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
