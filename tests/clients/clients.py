#!/usr/bin/env python3
"""The client harness: PETSc's own unmodified tutorial programs with our matrix types beside a baseline.

    clients.py --bin DIR --lib LIB [--gpu] [--types T,...] [--baseline T] [--only NAME,...] [--out DIR]

Each configuration of tests/clients/configs.tsv runs once per type and rank count. On the GPU (--gpu) the
baseline is aijcusparse and every run gets device vectors (-vec_type cuda, -dm_vec_type cuda) and -log_view
(--gpu-time adds -log_view_gpu_time, which times every GPU region with synchronizing events: on 2 ranks it made
GAMG's many small products of our MPI types look 3x slower than without it); on the CPU the baseline is aij and our types run on host vectors. Our types
are loaded into the unmodified programs with -dll_append LIB and named aij<format>cuda (DMDA keeps a
-dm_mat_type for its interpolation only when the name begins with aij).

Checks, each printed as a PASS/FAIL line (tests/run.sh counts them):
  - the program exits 0, prints no NaN/Inf residual, and every linear solve converges;
  - the linear iteration counts equal the baseline's, within the configuration's tolerance;
  - on the GPU, no product of our types ran on the host (the event GPUMatHostFallback stays at 0).
Writes clients.md (one table: program, ranks, type, iterations, PCSetUp, KSPSolve and SNESSolve seconds,
ratio of the baseline's time to this type's, fallbacks) and clients.csv to --out. The time compared is what
the user waits for: SNESSolve, or PCSetUp + the blocks' set-up + KSPSolve (device builds happen in them), read from
-log_view's CSV and flame graph views (more -log_view viewers, PETSc 3.26 on): on a GPU build without
-log_view_gpu_time the table prints n/a for every event's time but KSPSolve's and SNESSolve's, and only the flame
graph tells which set-ups of the blocks run outside KSPSolve (see total_time()).
"""
import argparse
import statistics
import csv
import os
import re
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ITS = re.compile(r"Linear (?:\S+ )?solve (converged|did not converge|diverged) due to (\S+) iterations (\d+)")
NONLIN = re.compile(r"Nonlinear (?:\S+ )?solve (?:converged|did not converge|diverged) due to (\S+) iterations (\d+)")
BAD = re.compile(r"\b(nan|inf)\b|NANORINF", re.IGNORECASE)


def configs(path, only):
    for line in open(path):
        if not line.strip() or line.startswith("#"):
            continue
        name, prog, ranks, tol, args, gpu_args = (line.rstrip("\n").split("\t") + [""] * 6)[:6]
        if only and name not in only:
            continue
        for r in ranks.split(","):
            yield dict(name=name, prog=prog, ranks=int(r), tol=int(tol), args=args, gpu_args=gpu_args)


def log_field(text, event, field):
    """A field of an event's line in -log_view's table: 1 = count, 3 = max time (s)."""
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] == event and len(parts) > field:
            try:
                return float(parts[field])
            except ValueError:
                return None
    return None


def csv_times(path):
    """Event times from -log_view's CSV view ({event: max over ranks of the sum over stages}): unlike the table,
    which without -log_view_gpu_time prints n/a for every event but KSPSolve and SNESSolve on a GPU build, it keeps
    the wall-clock times (the names cut to 16 characters, as PETSc writes them)."""
    per_rank = {}
    try:
        with open(path) as f:
            for row in csv.reader(f):
                if len(row) < 5 or row[1] in ("Event Name", "summary"):
                    continue
                try:
                    count, t = int(row[3]), float(row[4])
                except ValueError:
                    continue
                if count == 0:  # PETSc writes a row for every registered event
                    continue
                key = (row[1], row[2])
                per_rank[key] = per_rank.get(key, 0.0) + t
    except OSError:
        return {}
    times = {}
    for (event, _), t in per_rank.items():
        times[event] = max(times.get(event, 0.0), t)
    return times


def blocks_setup_time(path):
    """Seconds in PCSetUpOnBlocks outside PCSetUp and KSPSolve (KSPSolve() sets up the blocks' preconditioners,
    block Jacobi's and ASM's sub-factorizations, before its own event begins; a nested solver's, such as GAMG's
    coarse block Jacobi, is inside KSPSolve's time already), from -log_view's flame graph view: one line per call
    path ('Main Stage;PCSetUpOnBlocks;PCSetUp 38': self time in microseconds, the largest over ranks). None without
    the file (PETSc < 3.26)."""
    total, seen = 0, False
    try:
        with open(path) as f:
            for line in f:
                stack, _, us = line.rstrip("\n").rpartition(" ")
                if not stack or not us.isdigit():
                    continue
                seen = True
                outer = [e for e in stack.split(";") if e in ("KSPSolve", "PCSetUp", "PCSetUpOnBlocks")]
                if outer and outer[0] == "PCSetUpOnBlocks":
                    total += int(us)
    except OSError:
        return None
    return total * 1e-6 if seen else None


def csv_view_works(a):
    """Whether this PETSc takes a second -log_view viewer: 3.22 stops at the end of the program with 'The last
    PetscObject type of the main PetscLogStage should be PetscViewer with a single creation' (fixed by 3.26)."""
    for name in sorted(os.listdir(a.bin)):
        try:
            out = subprocess.run([os.path.join(a.bin, name), "-version"], capture_output=True, text=True, timeout=60).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        m = re.search(r"Release Version (\d+)\.(\d+)", out)
        if m:
            return (int(m.group(1)), int(m.group(2))) >= (3, 26)
    return False


def run_one(cfg, label_type, a):
    """One run; label_type is a matrix type, or T+variant: T with the options of --variant variant=... appended."""
    gpu = a.gpu
    mtype, _, variant = label_type.partition("+")
    args = cfg["args"] + (" " + cfg["gpu_args"] if gpu and cfg["gpu_args"] else "")
    args = args.replace("{matfile}", a.matfile).replace("{matfile_gpu}", a.matfile_gpu or a.matfile)
    cmd = ["mpiexec", "-n", str(cfg["ranks"])] if cfg["ranks"] > 1 or a.mpiexec_always else []
    cmd += [os.path.join(a.bin, os.path.basename(cfg["prog"]))] + shlex.split(args)
    timefile = os.path.join(a.out, "client-logs", f"times-{os.getpid()}.csv")
    flamefile = os.path.join(a.out, "client-logs", f"flame-{os.getpid()}.txt")
    for f in (timefile, flamefile):
        if os.path.exists(f):
            os.remove(f)
    logview = f"ascii,:{timefile}:ascii_csv,:{flamefile}:ascii_flamegraph" if a.csv_view else "ascii"
    cmd += ["-ksp_converged_reason", "-snes_converged_reason", "-log_view", logview, "-options_left", "0"]
    cmd += ["-log_threshold", "0"] if a.csv_view else []  # the flame graph keeps every path (below it, paths fold into their parent)
    cmd += ["-mat_type", mtype, "-dm_mat_type", mtype]
    vtype = "cuda" if gpu else "standard"
    cmd += ["-vec_type", vtype, "-dm_vec_type", vtype]
    if gpu:
        cmd += ["-use_gpu_aware_mpi", "0"] + (["-log_view_gpu_time"] if a.gpu_time else [])
    if mtype not in ("aij", "aijcusparse"):
        cmd += ["-dll_append", a.lib]
    if variant:
        cmd += shlex.split(a.variants[variant])
    if mtype == "aij":
        cmd += ["-mat_no_inode"]  # our types, like aijcusparse, do not use SeqAIJ's inode routines: same rounding
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
    wall = time.time() - t0
    out = p.stdout + p.stderr
    times = csv_times(timefile)
    onblocks = blocks_setup_time(flamefile)
    for f, what in ((timefile, "CSV (wall-clock times)"), (flamefile, "flame graph (call paths, self microseconds)")):
        if os.path.exists(f):  # kept in the run's log, below the table
            with open(f) as g:
                out += f"\n-log_view {what}:\n" + g.read()
            os.remove(f)
    lin = [int(m.group(3)) for m in ITS.finditer(out)]
    reasons = [m.group(2) for m in ITS.finditer(out)]
    nonlin = [int(m.group(2)) for m in NONLIN.finditer(out)]
    monitor_bad = [l for l in out.splitlines() if ("residual" in l.lower() or "Linear solve" in l) and BAD.search(l)]
    return dict(cmd=" ".join(shlex.quote(c) for c in cmd), rc=p.returncode, out=out, wall=wall, its=lin, reasons=reasons,
                newton=nonlin, nan=bool(monitor_bad) or "NANORINF" in out, ksp=times.get("KSPSolve", log_field(out, "KSPSolve", 3)),
                snes=times.get("SNESSolve", log_field(out, "SNESSolve", 3)), pcsetup=times.get("PCSetUp", log_field(out, "PCSetUp", 3)),
                onblocks=onblocks,
                fallback=log_field(out, "GPUMatHostFallback", 1) or 0.0,
                builds=log_field(out, "GPUMatBuild", 1) or 0.0)


def total_time(r):
    """What the user waits for: SNESSolve where the program has one (setup inside), else PCSetUp + the blocks'
    set-up + KSPSolve: KSPSolve() sets the KSP up (PCSetUp) and then the blocks' preconditioners (PCSetUpOnBlocks,
    blocks_setup_time(): block Jacobi's and ASM's sub-factorizations, device builds included) before its own event
    begins, so neither is inside KSPSolve's time. Until 2026-11-27 the blocks' set-up was left out."""
    if r["snes"] is not None:
        return r["snes"]
    if r["ksp"] is None:
        return None
    return r["ksp"] + (r["pcsetup"] or 0.0) + (r["onblocks"] or 0.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="folder of the built tutorial programs")
    ap.add_argument("--lib", required=True, help="libpetscgpumat.so")
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("--types", default="aijcmrscuda,aijellrcuda,aijrgcsrcuda,aijcsrcuda,aijautocuda")
    ap.add_argument("--baseline")
    ap.add_argument("--only", default="")
    ap.add_argument("--ranks", default="", help="only these rank counts (e.g. 1)")
    ap.add_argument("--out", default=".")
    ap.add_argument("--matfile", default="")
    ap.add_argument("--matfile-gpu", default="")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--mpiexec-always", action="store_true")
    ap.add_argument("--label", default="")
    ap.add_argument("--gpu-time", action="store_true", help="-log_view_gpu_time (GPU times per event; synchronizes at every event)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each configuration and type, interleaved; times are medians")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=OPTIONS",
                    help="options for the types written T+NAME in --types (e.g. --variant dense='-mat_gpumat_dense_factor_max 8192' --types aijcmrscuda,aijcmrscuda+dense)")
    a = ap.parse_args()
    a.variants = dict(v.split("=", 1) for v in a.variant)
    for t in a.types.split(","):
        if "+" in t and t.partition("+")[2] not in a.variants:
            ap.error(f"type {t}: no --variant {t.partition('+')[2]}=...")
    a.csv_view = csv_view_works(a)
    if not a.csv_view:
        print("# this PETSc takes one -log_view viewer: times from its table (on a GPU build without --gpu-time, n/a for all but KSPSolve and SNESSolve)")
    baseline = a.baseline or ("aijcusparse" if a.gpu else "aij")
    types = [baseline] + [t for t in a.types.split(",") if t and t != baseline]
    only = set(filter(None, a.only.split(",")))
    ranks = set(int(r) for r in filter(None, a.ranks.split(",")))
    os.makedirs(a.out, exist_ok=True)
    logdir = os.path.join(a.out, "client-logs")
    os.makedirs(logdir, exist_ok=True)
    rows, npass, nfail = [], 0, 0

    def check(ok, what):
        nonlocal npass, nfail
        print(("PASS: " if ok else "FAIL: ") + what, flush=True)
        npass += bool(ok)
        nfail += not ok

    def write():
        with open(os.path.join(a.out, "clients.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()) if rows else ["program"])
            w.writeheader()
            w.writerows(rows)
        with open(os.path.join(a.out, "clients.md"), "w") as f:
            f.write(f"{a.label}\n\nbaseline: {baseline}; ratio = baseline solve time / this type's (SNESSolve where the program "
                    "has one, else PCSetUp + PCSetUpOnBlocks outside KSPSolve (the blocks' factorizations) + KSPSolve: "
                    "'solve'; > 1 is faster than the baseline; device builds included); times are medians "
                    f"of {max(1, a.repeat)} run(s) per type, the types interleaved; 'all runs' lists every run's time\n\n")
            f.write("| config | program | ranks | type | linear its | Newton its | PCSetUp (s) | PCSetUpOnBlocks (s) | KSPSolve (s) | SNESSolve (s) | solve (s) | ratio | all runs (s) | host fallbacks | NaN |\n")
            f.write("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
            fmt = lambda v, p="%.4f": "-" if v is None else p % v
            for r in rows:
                f.write(f"| {r['config']} | {r['program']} | {r['ranks']} | {r['type']} | {r['its']} ({r['nlin']} solves) | "
                        f"{r['newton'] or '-'} | {fmt(r['pcsetup'])} | {fmt(r['onblocks'])} | {fmt(r['ksp'])} | {fmt(r['snes'])} | {fmt(r['total'])} | {fmt(r['ratio'], '%.2f')} | {r['spread']} | "
                        f"{r['fallback']} | {'yes' if r['nan'] else 'no'} |\n")

    for cfg in configs(os.path.join(HERE, "configs.tsv"), only):
        if ranks and cfg["ranks"] not in ranks:
            continue
        runs = {t: [] for t in types}
        for rep in range(max(1, a.repeat)):  # types interleaved, so that a slow spell of the machine hits all alike
            base = None
            for t in types:
                label = f"{cfg['name']} np{cfg['ranks']} {t}" + (f" (run {rep + 1})" if a.repeat > 1 else "")
                try:
                    r = run_one(cfg, t, a)
                except subprocess.TimeoutExpired:
                    check(False, f"{label}: timed out after {a.timeout} s")
                    continue
                with open(os.path.join(logdir, f"{cfg['name']}-np{cfg['ranks']}-{t}" + (f"-run{rep + 1}" if rep else "") + ".log"), "w") as f:
                    f.write(r["cmd"] + "\n\n" + r["out"])
                check(r["rc"] == 0 and bool(r["its"]), f"{label}: exit {r['rc']}, {len(r['its'])} linear solves")
                check(not r["nan"], f"{label}: no NaN or Inf")
                # a configuration whose solves do not converge compares nothing (snes-gamg ran 10000 GMRES iterations
                # with every type, aijcusparse included, until 2026-11-26)
                diverged = [x for x in r["reasons"] if not x.startswith("CONVERGED")]
                check(r["reasons"] and not diverged, f"{label}: every linear solve converged" + (f" (not: {diverged[0]})" if diverged else ""))
                if t == baseline:
                    base = r
                else:
                    if base and base["rc"] == 0:
                        same = len(r["its"]) == len(base["its"]) and all(abs(x - y) <= cfg["tol"] for x, y in zip(r["its"], base["its"]))
                        check(same, f"{label}: iterations {r['its'][:8]} vs {baseline} {base['its'][:8]} (tolerance {cfg['tol']})")
                    if a.gpu:
                        check(r["fallback"] == 0, f"{label}: {int(r['fallback'])} products on the host (GPUMatHostFallback)")
                runs[t].append(r)

        def med(rs, f):
            v = sorted(x for x in (f(r) for r in rs) if x is not None)
            return statistics.median(v) if v else None

        bsolve = med(runs[baseline], total_time)
        for t in types:
            rs = runs[t]
            if not rs:
                continue
            r, solve = rs[0], med(rs, total_time)
            rows.append(dict(program=cfg["prog"].split("/")[-1], config=cfg["name"], ranks=cfg["ranks"], type=t,
                             its="/".join(map(str, r["its"][:6])) + ("..." if len(r["its"]) > 6 else ""), nlin=len(r["its"]),
                             newton="/".join(map(str, r["newton"])), pcsetup=med(rs, lambda q: q["pcsetup"]), onblocks=med(rs, lambda q: q["onblocks"]), ksp=med(rs, lambda q: q["ksp"]),
                             snes=med(rs, lambda q: q["snes"]), total=solve, ratio=(bsolve / solve) if solve and bsolve else None,
                             runs=len(rs), spread="/".join("%.3f" % x for x in sorted(filter(None, (total_time(q) for q in rs)))),
                             fallback=int(max(q["fallback"] for q in rs)), builds=int(r["builds"]), nan=any(q["nan"] for q in rs),
                             rc=max(q["rc"] for q in rs)))
        write()  # after each configuration: a run stopped by its time limit keeps what it measured
    write()
    print(f"{npass} passed, {nfail} failed")
    return 0 if nfail == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
