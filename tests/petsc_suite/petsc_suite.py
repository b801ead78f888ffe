#!/usr/bin/env python3
"""petsc_suite.py: PETSc's own test suite, run differentially with our matrix types beside a baseline.

    petsc_suite.py [--mode cpu|gpu] [--sets ksp-tutorials,ksp-tests,snes-tutorials] [--ci] [--only REGEX]
                   [--start N] [--count M] [--list] [--build DIR] [--no-build] [--build-only] [--out DIR]
                   [--jobs N] [--gpus N] [--timeout S] [--types T,...] [--lib LIB] [--report-lines] [--fatal CLASSES]

Test commands: the /*TEST ... TEST*/ blocks of the examples PETSc installs in $PETSC_DIR/share/petsc/examples,
parsed by PETSc's own config/testparse.py; whether this PETSc meets a test's `requires:` is decided by PETSc's own
config/gmakegentest.py (generateExamples._isRun, from petscconf.h and petscvariables). Each `test:` sub-block and
each combination of a test's {{...}} loops is a command of its own; at most --max-ranks (2) ranks. Left out, with
the reason: commands whose own -mat_type/-dm_mat_type is not AIJ (baij, sbaij, is, ...: overriding it changes what
the test tests, keeping it never exercises our types), custom `command:` tests, and in --mode cpu those needing
cuda. Only the programs of the selected commands are compiled, out of tree in --build (default build/petsc-suite),
with PETSc's makefile variables (PCC, PCC_FLAGS, CCPPFLAGS, CLINKER, PETSC_WITH_EXTERNAL_LIB, as `make` expands
them from lib/petsc/conf/variables), --jobs at a time; one that does not compile is reported and left out.

Each command runs as PETSc's harness runs it (-petsc_ci; PETSC_OPTIONS="-check_pointer_intensity 0
-error_output_stdout -malloc_dump $PETSC_TEST_OPTIONS", which holds -checkfunctionlist; mpiexec -n N for N > 1;
--timeout seconds times its timeoutfactor) once per variant, the variant's options after the test's own (the last
one wins):

  --mode cpu  baseline  -mat_type aij -dm_mat_type aij -mat_no_inode -vec_type standard -dm_vec_type standard
              ours      -dll_append LIB -mat_type T -dm_mat_type aijT -vec_type standard -dm_vec_type standard
  --mode gpu  baseline  -mat_type aijcusparse -dm_mat_type aijcusparse -vec_type cuda -dm_vec_type cuda
                        -use_gpu_aware_mpi 0
              ours      -dll_append LIB -mat_type T -dm_mat_type aijT, the baseline's vector options

for T in cmrscuda, ellrcuda, rgcsrcuda, csrcuda, autocuda (DMDA gives its interpolation matrices a -dm_mat_type only when its name
begins with aij). -mat_no_inode: our types, like aijcusparse, do not use SeqAIJ's inode routines (same rounding).
Ours also get -log_view into a file: a run "exercised our type" when an event GPUMat* counted something.

Classes of each command and type (first match; docs/petsc-test-suite.md has the details):
  both-fail, ours-fails, baseline-fails-ours-runs   exit status, crash, PETSc error message or timeout (a test of
                            an error message, `filter: Error:` or -petsc_ci_portable_error_output, fails only by
                            a crash or a timeout)
  leak, functionlist        -malloc_dump / -checkfunctionlist lines of ours that the baseline does not print
  nan                       more NaN/Inf in ours than in the baseline
  same                      equal after the test's filter (numbers within --rtol 1e-6 or --atol 1e-12), once the
                            report of unused options has lost the options the runner added
  same-after-normalisation  equal once our type names read as the baseline's (seqaijcmrscuda -> seqaij, or
                            seqaijcusparse in GPU mode), our ASCII info views ("<format> GPU storage:" and the block
                            under it, "device copy ...", "halo exchange ...") dropped, I-node lines and timing lines
                            dropped, 0x addresses masked
  host-submatrices          equal once the baseline's GPU names read as host ones (seqaijcusparse -> seqaij,
                            factorization package cusparse -> petsc): host sub-matrices or factors (GPU mode)
  differs                   anything else; its detail says whether PETSc's own petscdiff (numbers masked) accepts it
Each run is also compared with PETSc's reference output (output/<name>.out or an _alt file, the petscdiff rule, the
test's filter and filter_output); summary.md counts the commands where ours matches it and the baseline does not.

Outputs in --out (default build/petsc-suite-out): summary.md (counts per class and type, date, machine, PETSc
version, mode), failures.md (each disagreement: the command and its first differing or error lines), results.csv
(every comparison), logs/ (both outputs of each disagreement). Exit status 1 when a comparison is in a fatal class
(--fatal; default in --mode cpu: ours-fails, leak, functionlist, nan). --report-lines prints "PASS: <test> <type>",
"FAIL: <test> <type>: <class>: <first line>" (fatal) or "SKIP: <test> <type>: <class> (not fatal)" per comparison
for tests/run.sh, and a SKIP where nothing can run (no PETSc examples, no compiler).

--ci runs CI_TESTS below (PCASM, PCGASM, GAMG, ILU, block Jacobi, MG, fieldsplit, SNES with coloring; 1 and 2 ranks).
The GPU machine cannot compile: --mode gpu --build-only writes the programs, manifest-gpu.json (the commands), the
reference outputs and data files into --build; carried there, --no-build runs them (tests/petsc_suite/gpu-half.sh).
See docs/petsc-test-suite.md.
"""
import argparse
import concurrent.futures
import csv
import datetime
import difflib
import itertools
import json
import logging
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # PETSc's config/ scripts are imported from the PETSc install: leave it untouched

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

SETS = {
    "ksp-tutorials": "ksp/ksp/tutorials",
    "ksp-tests": "ksp/ksp/tests",
    "snes-tutorials": "snes/tutorials",
    "mat-tests": "mat/tests",  # only the commands that choose an AIJ -mat_type themselves
}
DEFAULT_SETS = "ksp-tutorials,ksp-tests,snes-tutorials"
TYPES = ("cmrscuda", "ellrcuda", "rgcsrcuda", "csrcuda", "autocuda")
CLASSES = ("same", "same-after-normalisation", "host-submatrices", "differs", "ours-fails", "leak", "functionlist",
           "nan", "baseline-fails-ours-runs", "both-fail")
AGREE = {"same", "same-after-normalisation", "host-submatrices"}
CPU_FATAL = "ours-fails,leak,functionlist,nan"
AIJ_FAMILY = {"aij", "seqaij", "mpiaij", "aijcusparse", "seqaijcusparse", "mpiaijcusparse"}

# The --ci subset (labels as --list prints them): 1 and 2 ranks, each a PETSc path that extracts, factors, converts or
# re-creates matrices of the operator's type. About 2-3 minutes on 2 cores (build included) with the four types.
CI_TESTS = [
    # KSP ex2 (2-D Laplacian, MatSetFromOptions): GMRES + ILU, block Jacobi + ILU on 2 ranks, SOR, Eisenstat, block
    # Jacobi + ICC, PCREDUNDANT
    "ksp_ksp_tutorials-ex2_1", "ksp_ksp_tutorials-ex2_2", "ksp_ksp_tutorials-ex2_3", "ksp_ksp_tutorials-ex2_4",
    "ksp_ksp_tutorials-ex2_fbcgs", "ksp_ksp_tutorials-ex2_symmetric_pc", "ksp_ksp_tutorials-ex2_redundant",
    # KSP ex5 (a second solve, same pattern), ex6 (LU re-factored), ex7 (block Jacobi, a different sub-solver per
    # block, 2 ranks), ex9 (several systems), ex23 (tridiagonal, 1 and 2 ranks)
    "ksp_ksp_tutorials-ex5_1", "ksp_ksp_tutorials-ex5_2", "ksp_ksp_tutorials-ex6_1", "ksp_ksp_tutorials-ex7_1",
    "ksp_ksp_tutorials-ex7_2", "ksp_ksp_tutorials-ex9_1", "ksp_ksp_tutorials-ex23_1", "ksp_ksp_tutorials-ex23_3",
    # PCASM: user subdomains (ex8, 1 rank), 4 blocks on 2 ranks, the transpose solve (ex79)
    "ksp_ksp_tutorials-ex8_1", "ksp_ksp_tutorials-ex8_weighted+pc_asm_type-basic", "ksp_ksp_tutorials-ex79_2_transpose",
    "ksp_ksp_tutorials-ex79_1_transpose+pc_type-ilu",
    # PCGASM with user subdomains, 1 and 2 ranks (ex62)
    "ksp_ksp_tutorials-ex62_2D_1", "ksp_ksp_tutorials-ex62_2D_2",
    # PCMG on DMDAs: rediscretised and Galerkin, full cycles, 1 and 2 ranks
    "ksp_ksp_tutorials-ex25_2", "ksp_ksp_tutorials-ex29_1", "ksp_ksp_tutorials-ex32_2", "ksp_ksp_tutorials-ex34_2",
    "ksp_ksp_tutorials-ex50_1", "ksp_ksp_tutorials-ex50_3", "ksp_ksp_tests-ex26_cycles_pc_mg_type-multiplicative+nsize-2",
    # GAMG: smoothed aggregation (ex56, elasticity), classical (ex54), inside PCHMG on 2 ranks (ex4)
    "ksp_ksp_tutorials-ex56_1", "ksp_ksp_tutorials-ex54_Classical", "ksp_ksp_tutorials-ex4_gamg",
    # PCFIELDSPLIT (MatCreateSubMatrix of the operator): Stokes (ex42), additive and Schur (KSP tests ex9)
    "ksp_ksp_tutorials-ex42_3", "ksp_ksp_tests-ex9_1+pc_fieldsplit_diag_use_amat-0_pc_fieldsplit_type-additive",
    "ksp_ksp_tests-ex9_schur+pc_fieldsplit_diag_use_amat-0_pc_fieldsplit_schur_fact_type-full",
    # SNES: Bratu (ex5) with PCMG, grid sequencing, -snes_mf_operator on 2 ranks, PCASM/multiplicative Schwarz on
    # 1 and 2 ranks, GAMG; driven cavity (ex19) with PCMG on 2 ranks and the Jacobian by finite-difference coloring
    # (wp, ds, greedy coloring on 2 ranks); ex3 (1-D, 1 and 2 ranks), ex2, ex1, ex15 (Picard, 2 ranks), ex42 (ghosts)
    "snes_tutorials-ex5_1", "snes_tutorials-ex5_2", "snes_tutorials-ex5_3", "snes_tutorials-ex5_asm_0",
    "snes_tutorials-ex5_asm_4", "snes_tutorials-ex5_msm_4", "snes_tutorials-ex5_7_ksp_view_pre", "snes_tutorials-ex19_1",
    "snes_tutorials-ex19_fdcoloring_wp", "snes_tutorials-ex19_fdcoloring_ds", "snes_tutorials-ex19_greedy_coloring",
    "snes_tutorials-ex3_1", "snes_tutorials-ex3_3", "snes_tutorials-ex2_1", "snes_tutorials-ex1_1", "snes_tutorials-ex15_1",
    "snes_tutorials-ex42_ghosts+nsize-2_snes_type-newtonls_nghost-1",
    # Mat tests: in-place LU (ex129) and in-place LU and Cholesky of the duplicate of a transpose (ex267)
    "mat_tests-ex129_2", "mat_tests-ex267_1+inplace-1_mat_type-aij",
]

# The lines of our types' ASCII info views (src/base/gpumat.c, gpumat_mpi.c, and each format's view in src/<format>/):
# a header "<format> GPU storage..." with an indented block under it; the phrases catch lines outside such a block
OUR_VIEW_HEAD = re.compile(r"^(\s*)\S.* GPU storage( of the local blocks.*)?:$")
OUR_VIEW_PHRASES = re.compile(r"GPU storage|device copy|halo exchange|no usable CUDA device|bound to the CPU \(host ops"
                              r"|GPUMatHostFallback|ELLPACK-R|\bCMRS\b|RgCSR|Row-grouped CSR|threads per row T =|RowInStrip|cuSPARSE CSR|cusparseSpMV with"
                              r"|rank 0, diagonal block:|rank 0, off-diagonal block|\(ghost columns\)|format chosen at the first product|^\s*chose ")
INODE = re.compile(r"I-node")
ADDED_OPTIONS = ("mat_type", "dm_mat_type", "vec_type", "dm_vec_type", "mat_no_inode", "use_gpu_aware_mpi", "dll_append",
                 "log_view", "checkfunctionlist", "malloc_dump", "error_output_stdout", "check_pointer_intensity",
                 "nox_warning", "petsc_ci")
OPTION_LEFT = re.compile(r"Option left: name:-(%s) " % "|".join(ADDED_OPTIONS))
# PETSc's error report lists the options and the unused ones: the runner's among them
ERROR_OPTION = re.compile(r"PETSC ERROR: +(Option left: name:)?-(%s)( |$)" % "|".join(ADDED_OPTIONS))
UNUSED_COUNT = re.compile(r"There (are \d+|is one) unused database option")
TIMING = re.compile(r"(?i)(elapsed|wall ?clock|cpu time|\btime\b[^0-9]*[0-9.eE+-]+\s*(s|sec|secs|seconds)\b)")
ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
NUMBER = re.compile(r"([-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)")
NANINF = re.compile(r"(?i)(?<![A-Za-z_])[-+]?(nan|inf|infinity)(?![A-Za-z_])|NANORINF")
ERROR = re.compile(r"PETSC ERROR|Caught signal|Segmentation fault|Bus error|MPI_ABORT|mpiexec noticed|Aborted \(core"
                   r"|--------------------- Error Message")
# a test that redirects its own output to a file (SNES ex19 greedy_coloring: "> ex19_greedy_coloring.tmp 2>&1"):
# in PETSc's harness that file is the one it compares, here it is read after the run
REDIRECT = re.compile(r"(?<![0-9&<>])>\s*([^\s&|;<>]+)")
MPI_START = re.compile(r"orte_init failed|Unable to start a daemon|prte_init failed|A call to mkdir was unable to create")
LEAK = re.compile(r"^\s*\[\s*\d+\]\s*\d+ bytes (\S+) at (\S+)$|^\[\s*\d+\]Total space allocated")
NUMBERS_ONLY = "numbers only: PETSc's own rule (petscdiff, floating-point numbers masked) accepts it"
FUNCLIST = re.compile(r"^\[\d+\] function name: (\S+)")


def say(*a):
    print(*a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- PETSc: configuration, examples, harness scripts
class Petsc:
    def __init__(self, petsc_dir):
        self.dir = petsc_dir
        self.examples = os.path.join(petsc_dir, "share", "petsc", "examples")
        self.have_examples = os.path.isfile(os.path.join(self.examples, "config", "testparse.py"))
        vh = os.path.join(petsc_dir, "include", "petscversion.h")
        v = dict(re.findall(r"#define PETSC_VERSION_(MAJOR|MINOR|SUBMINOR)\s+(\d+)", open(vh).read())) if os.path.isfile(vh) else {}
        self.version = "%s.%s.%s" % (v["MAJOR"], v["MINOR"], v["SUBMINOR"]) if v else "unknown"
        self.gen = self.testparse = None
        self.conf = {}
        if self.have_examples:
            cfg = os.path.join(self.examples, "config")
            sys.path.insert(0, cfg)
            # gmakegen logs to the PETSc install's conf/gmake.log unless logging is configured already
            logging.basicConfig(handlers=[logging.NullHandler()])
            import testparse
            import gmakegentest
            self.testparse = testparse
            self.gen = gmakegentest.generateExamples(petsc_dir=petsc_dir, petsc_arch="", testdir=tempfile.gettempdir())
            self.conf = self.gen.conf
        self._make = None

    def make_vars(self, names):
        """The values of PETSc makefile variables, as make expands them from lib/petsc/conf/variables."""
        if self._make is None:
            text = "include %s/lib/petsc/conf/variables\n" % self.dir
            text += "".join("$(info %s=$(%s))\n" % (n, n) for n in names) + "all: ;\n"
            p = subprocess.run(["make", "-s", "--no-print-directory", "-f", "-", "PETSC_DIR=" + self.dir, "PETSC_ARCH="],
                               input=text, capture_output=True, text=True)
            if p.returncode:
                sys.exit("petsc_suite: cannot read PETSc's makefile variables:\n" + p.stderr)
            self._make = dict(line.split("=", 1) for line in p.stdout.splitlines() if "=" in line)
        return self._make


def petsc_dir_default(lib):
    """PETSC_DIR (and PETSC_ARCH), else the PETSc our library links to, else config/petsc.sh's (which may build one)."""
    if os.environ.get("PETSC_DIR"):
        return os.path.normpath(os.path.join(os.environ["PETSC_DIR"], os.environ.get("PETSC_ARCH", "")))
    if os.path.isfile(lib):
        p = subprocess.run(["ldd", lib], capture_output=True, text=True)
        m = re.search(r"libpetsc\.so\S* => (\S+)/lib/libpetsc\.so", p.stdout)
        if m:
            return os.path.normpath(m.group(1))
    p = subprocess.run([os.path.join(ROOT, "config", "petsc.sh"), "--print=dir"], capture_output=True, text=True)
    if p.returncode or not p.stdout.strip():
        sys.exit("petsc_suite: no PETSC_DIR and config/petsc.sh --print=dir gave none:\n" + p.stderr)
    return p.stdout.strip()


def language(fname):
    fname = os.path.basename(fname)
    ext = fname[fname.find("."):] if "." in fname else ""
    return {".c": "c", ".cxx": "cxx", ".cpp": "cxx", ".cu": "cu"}.get(ext)


def loop_product(args, nsize):
    """The commands of one harness test: PETSc's scripts run the product of the shared loops ({{a b}} in args or
    nsize) in bash for-loops, the loop arguments after the others; here each combination is a command of its own."""
    fixed, loops = [], []
    for part in re.split(r" (?=-[a-zA-Z])", " " + args.strip()):
        if not part.strip():
            continue
        if "{{" in part:
            key = part.split("{{")[0].strip().lstrip("-")
            vals = part.split("{{")[1].split("}")[0].split()
            loops.append((key, vals))
        else:
            fixed.append(part.strip())
    nvals = [nsize]
    if "{{" in nsize:
        nvals = nsize.split("{{")[1].split("}")[0].split()
    keys = list(dict.fromkeys(k for k, _ in loops))  # a key looped twice is one bash variable: the inner loop's value
    values = [[v for k2, v in loops if k2 == k][-1] for k in keys]
    for n in nvals:
        for combo in itertools.product(*values):
            val = dict(zip(keys, combo))
            extra = " ".join("-%s %s" % (k, val[k]) for k, _ in loops)
            suffix = "_".join("%s-%s" % (k, val[k]) for k in keys)
            if len(nvals) > 1:
                suffix = "nsize-%s" % n + ("_" + suffix if suffix else "")
            yield int(n), " ".join(fixed + ([extra] if extra else [])), suffix


def own_mat_types(args):
    try:
        toks = shlex.split(args)
    except ValueError:
        toks = args.split()
    return [toks[i + 1] for i, t in enumerate(toks[:-1]) if t in ("-mat_type", "-dm_mat_type")]


def enumerate_tests(petsc, sets, mode, max_ranks):
    """The ordered test commands of the sets (dicts), and the skipped ones as (label, reason)."""
    units, skipped, seen = [], [], {}
    tp = petsc.testparse
    for setname in sets:
        rpath = SETS[setname]
        srcdir = os.path.join(petsc.examples, "src", rpath)
        for fname in sorted(os.listdir(srcdir)):
            lang = language(fname)
            if not lang or fname.startswith((".", "#")):
                continue
            try:
                parsed = tp.parseTestFile(os.path.join(srcdir, fname), 0).get(fname, {})
            except Exception as e:  # a TEST block PETSc's parser rejects
                skipped.append((rpath + "/" + fname, "testparse: %s" % str(e).strip().splitlines()[-1]))
                continue
            if not any(k not in tp.buildkeys for k in parsed):
                continue
            built = petsc.gen._isBuilt(fname, parsed)
            deps = parsed.get("depends", "").split()
            program = fname.split(".")[0]
            prefix = rpath.replace("/", "_") + "-"
            for test, tdict in parsed.items():
                if test in tp.buildkeys or test == "SKIP":
                    continue
                label = prefix + (test[3:] if test.startswith("run") else test)
                if not built:
                    skipped.append((label, "not built here: " + ", ".join(parsed.get("SKIP") or ["build requires"])))
                    continue
                if "TODO" in tdict:
                    skipped.append((label, "TODO: " + tdict["TODO"]))
                    continue
                if not petsc.gen._isRun(tdict):
                    skipped.append((label, "; ".join(tdict["SKIP"])))
                    continue
                runs = [("", tdict)]
                if tdict.get("subtests"):  # sub-blocks without suffix: one script, several commands (+a, +b, ...)
                    runs = []
                    for k, st in enumerate(tdict["subtests"]):
                        sub = {key: val for key, val in tdict.items() if key != "subtests" and key not in tdict["subtests"]}
                        sub.update(tdict[st])
                        sub["args"] = (tdict.get("args", "") + " " + tdict[st].get("args", "")).strip()
                        runs.append(("+" + "abcdefghijklmnopqrstuvwxyz"[k], sub))
                for sublabel, d in runs:
                    if d.get("command"):
                        skipped.append((label + sublabel, "custom command: (not reproduced)"))
                        continue
                    reqs = d.get("requires", "").split()
                    filt = d.get("filter", "")
                    for n, args, loopsuffix in loop_product(d.get("args", ""), d.get("nsize", "1")):
                        full = label + sublabel + ("+" + loopsuffix if loopsuffix else "")
                        seen[full] = seen.get(full, 0) + 1
                        if seen[full] > 1:  # a loop that lists a value twice (snes ex2_5: ms)
                            full += "#%d" % seen[full]
                        for var in ("PETSC_INDEX_SIZE", "PETSC_SCALAR_SIZE"):
                            args = args.replace("@%s@" % var, str(petsc.conf.get(var, "")))
                        if n > max_ranks:
                            skipped.append((full, "nsize %d > %d" % (n, max_ranks)))
                            continue
                        if mode == "cpu" and ("cuda" in reqs or re.search(r"cuda|cusparse|viennacl|kokkos|\bhip", args)):
                            skipped.append((full, "needs a GPU (runs in --mode gpu)"))
                            continue
                        own = own_mat_types(args)
                        foreign = [t for t in own if t not in AIJ_FAMILY]
                        if foreign:
                            skipped.append((full, "own -mat_type %s (not AIJ)" % foreign[0]))
                            continue
                        if setname == "mat-tests" and not own:
                            skipped.append((full, "mat-tests: no -mat_type of its own"))
                            continue
                        out = d.get("output_file") or "output/%s.out" % tp.getDefaultOutputFileRoot(test)
                        units.append(dict(
                            label=full, set=setname, rpath=rpath, program=program, sources=[fname] + deps, lang=lang,
                            nsize=n, args=args, env=d.get("env", ""), error=filt.startswith("Error:"),
                            # a test of an error message: PETSc's harness compares its output, whatever the exit status
                            expects_error=filt.startswith("Error:") or "-petsc_ci_portable_error_output" in args,
                            filter=filt[len("Error:"):].strip() if filt.startswith("Error:") else filt,
                            filter_output=d.get("filter_output", ""), diff_args=d.get("diff_args", ""),
                            output_file=out, localrunfiles=d.get("localrunfiles", "").split(),
                            timeoutfactor=float(d.get("timeoutfactor", "1") or 1)))
    return units, skipped


# ---------------------------------------------------------------- build
def build_programs(petsc, units, build, jobs):
    """Compile the programs of the units (in parallel); returns {(rpath, program): error text or None}."""
    mv = petsc.make_vars(["PCC", "PCC_FLAGS", "CFLAGS", "CCPPFLAGS", "CXX", "CXX_FLAGS", "CXXFLAGS", "CXXCPPFLAGS",
                          "CUDAC", "CUDAC_FLAGS", "CUDAFLAGS", "CUDACPPFLAGS", "MPICXX_INCLUDES", "CLINKER", "CXXLINKER",
                          "PETSC_WITH_EXTERNAL_LIB"])
    progs = {}
    for u in units:
        progs.setdefault((u["rpath"], u["program"]), u)

    def one(key):
        rpath, program = key
        u = progs[key]
        src = os.path.join(petsc.examples, "src", rpath)
        odir = os.path.join(build, rpath)
        os.makedirs(odir, exist_ok=True)
        exe = os.path.join(odir, program)
        sources = [os.path.join(src, s) for s in u["sources"]]
        if os.path.isfile(exe) and all(os.path.getmtime(exe) >= os.path.getmtime(s) for s in sources if os.path.exists(s)):
            return key, None
        objs, cmds, cxx = [], [], False
        for s in sources:
            lang = language(s)
            obj = os.path.join(odir, "%s-%s.o" % (program, os.path.basename(s).split(".")[0]))  # programs may share a source
            inc = "-I" + src
            if lang == "c":
                cmds.append("%s -c %s %s %s %s %s -o %s" % (mv["PCC"], mv["PCC_FLAGS"], mv["CFLAGS"], mv["CCPPFLAGS"], inc, s, obj))
            elif lang == "cxx":
                cxx = True
                cmds.append("%s -c %s %s %s %s %s -o %s" % (mv["CXX"], mv["CXX_FLAGS"], mv["CXXFLAGS"], mv["CXXCPPFLAGS"], inc, s, obj))
            elif lang == "cu":
                cxx = True
                cmds.append("%s -c %s %s %s %s --compiler-options=%s %s %s -o %s" % (
                    mv["CUDAC"], mv["MPICXX_INCLUDES"], mv["CUDAC_FLAGS"], mv["CUDAFLAGS"], mv["CUDACPPFLAGS"],
                    shlex.quote(mv["CXXCPPFLAGS"]), inc, s, obj))
            else:
                return key, "%s: language not built here" % os.path.basename(s)
            objs.append(obj)
        cmds.append("%s -o %s %s %s" % (mv["CXXLINKER"] if cxx else mv["CLINKER"], exe, " ".join(objs), mv["PETSC_WITH_EXTERNAL_LIB"]))
        for c in cmds:
            p = subprocess.run(c, shell=True, capture_output=True, text=True, cwd=odir)
            if p.returncode:
                err = [l for l in (p.stderr + p.stdout).splitlines() if "error" in l.lower()] or (p.stderr + p.stdout).splitlines()
                return key, "\n".join(err[:5])
        for o in objs:
            os.remove(o)
        return key, None

    results = {}
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        for key, err in ex.map(one, sorted(progs)):
            results[key] = err
            if err:
                say("petsc_suite: %s/%s does not compile (its commands are left out):\n    %s" % (key[0], key[1], err.replace("\n", "\n    ")))
    say("petsc_suite: %d programs ready in %s, %d do not compile (%.0f s)" % (
        sum(1 for e in results.values() if not e), build, sum(1 for e in results.values() if e), time.time() - t0))
    return results


def stage_data(petsc, units, build):
    """Copy what the runs read from the PETSc install (reference outputs, local run files, datafiles) into the build
    folder, for the GPU machine, which has no PETSc examples."""
    for u in units:
        src = os.path.join(petsc.examples, "src", u["rpath"])
        ref = os.path.join(src, u["output_file"])
        for f in [ref] + [ref[:-4] + "_alt" + ("_%d" % i if i > 1 else "") + ".out" for i in range(1, 9)] + \
                 [os.path.join(src, f) for f in u["localrunfiles"]]:
            dst = os.path.join(build, "data", u["rpath"], os.path.relpath(f, src))
            if os.path.isfile(f) and not os.path.exists(dst):
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copyfile(f, dst)
            elif os.path.isdir(f) and not os.path.exists(dst):
                shutil.copytree(f, dst)
    df = os.path.join(petsc.dir, "share", "petsc", "datafiles")
    dst = os.path.join(build, "petsc-share", "share", "petsc", "datafiles")
    if os.path.isdir(df) and not os.path.isdir(dst):
        shutil.copytree(df, dst)


# ---------------------------------------------------------------- run
class Slots:
    """At most `n` ranks at once: a 2-rank command takes 2 of the --jobs slots."""

    def __init__(self, n):
        self.n, self.free, self.cv = n, n, threading.Condition()

    def take(self, k):
        k = min(k, self.n)
        with self.cv:
            self.cv.wait_for(lambda: self.free >= k)
            self.free -= k
        return k

    def give(self, k):
        with self.cv:
            self.free += k
            self.cv.notify_all()


def variant_options(variant, mode, lib, logfile, inode=False):
    vec = "cuda" if mode == "gpu" else "standard"
    opts = ["-vec_type", vec, "-dm_vec_type", vec]
    if mode == "gpu":
        opts += ["-use_gpu_aware_mpi", "0"]
    if variant == "baseline":
        base = "aijcusparse" if mode == "gpu" else "aij"
        return ["-mat_type", base, "-dm_mat_type", base] + (["-mat_no_inode"] if mode == "cpu" and not inode else []) + opts
    dm = variant if variant.startswith("aij") else "aij" + variant
    return ["-dll_append", lib, "-mat_type", variant, "-dm_mat_type", dm] + opts + (["-log_view", "ascii:" + logfile] if logfile else [])


def run_one(u, variant, a, ctx):
    """Run one command with one variant, in a folder of its own (tests write files): a dict of rc, out, err,
    seconds, timed_out, used (whether our type's GPUMat events counted anything), cmd."""
    rundir = os.path.join(a.build, "run", u["label"].replace("/", "_"), variant)
    shutil.rmtree(rundir, ignore_errors=True)
    os.makedirs(rundir)
    for f in u["localrunfiles"]:
        s = ctx["find"](u["rpath"], f)
        if s and os.path.isdir(s):
            shutil.copytree(s, os.path.join(rundir, f))
        elif s:
            os.makedirs(os.path.dirname(os.path.join(rundir, f)), exist_ok=True)
            shutil.copyfile(s, os.path.join(rundir, f))
    log_ok = variant != "baseline" and "-log_view" not in u["args"]
    logfile = os.path.join(rundir, "petsc-suite-log_view.txt") if log_ok else None
    exe = os.path.join(a.build, u["rpath"], u["program"])
    mpi = ""
    if u["nsize"] > 1:
        mpi = "%s %s-n %d " % (ctx["mpiexec"], ctx["mpiexec_flags"], u["nsize"])
    cmd = "%s%s -petsc_ci %s %s" % (mpi, shlex.quote(exe), u["args"],
                                   " ".join(shlex.quote(o) for o in variant_options(variant, a.mode, a.lib, logfile, a.baseline_inode)))
    env = dict(ctx["env"])
    for kv in shlex.split(u["env"]):
        k, _, v = kv.partition("=")
        env[k] = v
    env["PETSC_OPTIONS"] = (env.get("PETSC_OPTIONS", "") + " " + ctx["harness_options"]).strip()
    if ctx["gpus"] > 1:  # all ranks of a run on one GPU, as on a one-GPU machine; the runs spread round robin
        with ctx["lock"]:
            env["CUDA_VISIBLE_DEVICES"] = str(ctx["next_gpu"] % ctx["gpus"])
            ctx["next_gpu"] += 1
    k = ctx["slots"].take(u["nsize"])
    t0 = time.time()
    try:
        for attempt in range(3):
            timed_out = False
            p = subprocess.Popen(["bash", "-c", cmd + (" 2>&1" if u["error"] else "")], cwd=rundir, env=env, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, errors="replace")
            try:
                out, err = p.communicate(timeout=a.timeout * u["timeoutfactor"])
            except subprocess.TimeoutExpired:
                timed_out = True
                os.killpg(p.pid, signal.SIGKILL)
                out, err = p.communicate()
            rc = p.returncode
            # MPI that did not start (Open MPI's singletons race for their session folder): again, as PETSc's
            # harness retries a run that failed for want of resources
            if timed_out or not MPI_START.search(out + err):
                break
            time.sleep(1 + attempt)
    finally:
        ctx["slots"].give(k)
    redirect = REDIRECT.search(u["args"])
    if redirect and os.path.isfile(os.path.join(rundir, redirect.group(1))):
        out = open(os.path.join(rundir, redirect.group(1)), errors="replace").read() + out
    used = None
    if logfile:
        used = False
        if os.path.isfile(logfile):
            for line in open(logfile, errors="replace"):
                f = line.split()
                if len(f) > 1 and f[0].startswith("GPUMat") and f[1].isdigit() and int(f[1]) > 0:
                    used = True
    if not (a.keep_rundirs):
        shutil.rmtree(rundir, ignore_errors=True)
    return dict(rc=rc, out=out, err=err, seconds=time.time() - t0, timed_out=timed_out, used=used, cmd=cmd)


def apply_filter(text, filt, cwd=None):
    if not filt:
        return text
    p = subprocess.run(["bash", "-c", filt], input=text, capture_output=True, text=True, cwd=cwd, errors="replace")
    return p.stdout


# ---------------------------------------------------------------- normalise, compare, classify
def our_names(mode):
    """Our type names -> the baseline's equivalents (longest names first)."""
    host = mode == "cpu"
    m = []
    for t in TYPES:
        m += [("seqaij" + t, "seqaij" if host else "seqaijcusparse"), ("mpiaij" + t, "mpiaij" if host else "mpiaijcusparse"),
              ("aij" + t, "aij" if host else "aijcusparse"), (t, "aij" if host else "aijcusparse")]
    m.append(("petscgpumat", "petsc"))  # MATSOLVERPETSCGPUMAT: the host factorizations of our types
    return [(re.compile(r"\b%s\b" % a), b) for a, b in m]


def drop_our_views(lines):
    out, depth = [], None
    for line in lines:
        indent = len(line) - len(line.lstrip())
        if depth is not None:
            if line.strip() and indent > depth:
                continue
            depth = None
        m = OUR_VIEW_HEAD.match(line)
        if m:
            depth = len(m.group(1))
            continue
        if OUR_VIEW_PHRASES.search(line):
            continue
        out.append(line)
    return out


def strip_runner(lines):
    """Drop what the runner's own options add: -malloc_dump's lines (classed as leaks apart), their lines in PETSc's report of unused options (-dm_mat_type in a
    program without a DM, ...), and the report's header when nothing else is in it (its count line made neutral)."""
    out, i = [], 0
    lines = [l for l in lines if not ERROR_OPTION.search(l) and not LEAK.match(l)]  # -malloc_dump: the leak class
    while i < len(lines):
        if not lines[i].startswith("WARNING! There are options you set that were not used"):
            out.append(lines[i])
            i += 1
            continue
        j, head = i + 1, [lines[i]]
        while j < len(lines) and (lines[j].startswith("WARNING! could be spelling") or UNUSED_COUNT.match(lines[j])):
            head.append("There are unused database options:" if UNUSED_COUNT.match(lines[j]) else lines[j])
            j += 1
        left = []
        while j < len(lines) and lines[j].startswith("Option left:"):
            if not OPTION_LEFT.search(lines[j]):
                left.append(lines[j])
            j += 1
        if left:
            out += head + left
        i = j
    return out


def normalise(text, mode, ours):
    lines = strip_runner(text.splitlines())
    if ours:
        lines = drop_our_views(lines)
        names = our_names(mode)
        fixed = []
        for line in lines:
            for rx, b in names:
                line = rx.sub(b, line)
            fixed.append(line)
        lines = fixed
    return [ADDRESS.sub("0xADDR", l) for l in lines if not INODE.search(l) and not TIMING.search(l)]


def close(a_lines, b_lines, rtol, atol):
    """Equal line by line, whitespace runs ignored, numbers within rtol (relative) or atol (absolute)."""
    if len(a_lines) != len(b_lines):
        return False
    for la, lb in zip(a_lines, b_lines):
        la, lb = " ".join(la.split()), " ".join(lb.split())
        if la == lb:
            continue
        pa, pb = NUMBER.split(la), NUMBER.split(lb)
        if len(pa) != len(pb):
            return False
        for i, (x, y) in enumerate(zip(pa, pb)):
            if i % 2 == 0:
                if x != y:
                    return False
            elif x != y:
                fx, fy = float(x), float(y)
                if abs(fx - fy) > max(atol, rtol * max(abs(fx), abs(fy))):
                    return False
    return True


def petscdiff_equal(ref_lines, out_lines, exact):
    """PETSc's petscdiff: floating-point numbers replaced by XXX (unless diff_args has -j/-J), then `diff -w`."""
    def mask(lines):
        res = []
        for l in lines:
            if not exact:
                l = l.replace("E+000", "")
                l = re.sub(r"[-+ ]*[-]*[ 0-9][0-9]*\.*[0-9]*[eE][-+][0-9][0-9]*", "XXX", l)
                l = re.sub(r"[-+ ]*[-]*[ 0-9][0-9]*\.[0-9]*", "XXX", l)
                l = l.replace(" ********* ", "XXX")
            res.append("".join(l.split()))
        return res
    return mask(ref_lines) == mask(out_lines)


def matches_reference(u, out_lines, ctx, mode):
    """'yes', 'no' or 'missing' (no reference output here)."""
    ref = ctx["find"](u["rpath"], u["output_file"])
    if not ref:
        return "missing"
    alts = [ref] + [p for p in (ctx["find"](u["rpath"], u["output_file"][:-4] + "_alt" + ("_%d" % i if i > 1 else "") + ".out")
                                for i in range(1, 9)) if p]
    exact = bool(re.search(r"(^|\s)-[jJ]\b", u["diff_args"]))
    for r in alts:
        text = apply_filter(open(r, errors="replace").read(), u["filter_output"])
        if petscdiff_equal(normalise(text, mode, False), out_lines, exact):
            return "yes"
    return "no"


def failed(r, error_test):
    if r["timed_out"]:
        return "timeout"
    text = r["out"] + r["err"]
    if error_test:  # a test of an error message: only a crash or a timeout is a failure
        return "crash" if re.search(r"Caught signal|Segmentation fault|Bus error", text) else None
    if r["rc"] != 0:
        return "exit status %d" % r["rc"]
    if ERROR.search(text):
        return "error message"
    return None


def first_lines(text, rx=ERROR, n=8):
    lines = text.splitlines()
    idx = [i for i, l in enumerate(lines) if rx.search(l)]
    start = idx[0] if idx else max(0, len(lines) - n)
    return lines[start:start + n]


def headline(detail):
    """One line for a FAIL: the first detail line and, after an exit status, PETSc's error message."""
    msgs = [m.group(1) for m in (re.search(r"PETSC ERROR: (\w.*)", l) for l in detail[1:]) if m]
    msgs = [x for x in msgs if not x.startswith(("WARNING! There are unused", "See https", "Option left"))][:2]
    return "; ".join([detail[0]] + msgs) if detail else ""


def as_host(line):
    """A baseline (aijcusparse) line as it reads with host sub-matrices and factors."""
    line = re.sub(r"\b(seq|mpi)?aijcusparse\b", lambda m: (m.group(1) or "") + "aij", line)
    return line.replace("factorization: cusparse", "factorization: petsc")


def classify(u, base, ours, a):
    """(class, detail lines) of one command and type."""
    bf, of = failed(base, u["expects_error"]), failed(ours, u["expects_error"])
    if bf and of:
        return "both-fail", ["baseline: " + bf, "ours: " + of] + first_lines(ours["out"] + ours["err"])
    if of:
        return "ours-fails", [of + (" (after %.0f s)" % ours["seconds"] if ours["timed_out"] else "")] + first_lines(ours["out"] + ours["err"])
    if bf:
        return "baseline-fails-ours-runs", [bf] + first_lines(base["out"] + base["err"])
    bt, ot = base["out"] + base["err"], ours["out"] + ours["err"]
    bl = {m.groups() for m in (LEAK.match(l) for l in bt.splitlines()) if m}
    ol = [l for l in ot.splitlines() if LEAK.match(l) and LEAK.match(l).groups() not in bl]
    if ol:
        return "leak", ["%d unfreed block(s) that -malloc_dump lists" % len(ol)] + ol[:8]
    bfn = [m.group(1) for m in (FUNCLIST.match(l) for l in bt.splitlines()) if m]
    ofn = [l for l in ot.splitlines() if FUNCLIST.match(l)]
    for l in list(ofn):
        if FUNCLIST.match(l).group(1) in bfn:
            bfn.remove(FUNCLIST.match(l).group(1))
            ofn.remove(l)
    if ofn:
        return "functionlist", ["%d composed function(s) left on destroyed objects (-checkfunctionlist)" % len(ofn)] + ofn[:8]
    bo = apply_filter(base["out"], u["filter"])
    oo = apply_filter(ours["out"], u["filter"])
    bn, on = normalise(bo, a.mode, False), normalise(oo, a.mode, True)
    if len(NANINF.findall("\n".join(on))) > len(NANINF.findall("\n".join(bn))):
        return "nan", [l for l in on if NANINF.search(l)][:8]
    if close(strip_runner(bo.splitlines()), strip_runner(oo.splitlines()), a.rtol, a.atol):
        return "same", []
    if close(bn, on, a.rtol, a.atol):
        return "same-after-normalisation", []
    if a.mode == "gpu" and len(bn) == len(on) and all(close([b], [o], a.rtol, a.atol) or close([as_host(b)], [o], a.rtol, a.atol)
                                                      for b, o in zip(bn, on)):
        return "host-submatrices", []
    diff = list(difflib.unified_diff(bn, on, "baseline", "ours", n=1, lineterm=""))
    rule = NUMBERS_ONLY if petscdiff_equal(bn, on, False) else "text differs"
    return "differs", [rule] + diff[2:16]


# ---------------------------------------------------------------- reports
def machine_name():
    gpu = ""
    try:
        p = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True, timeout=20)
        names = [n for n in p.stdout.split("\n") if n] if p.returncode == 0 else []
        gpu = ", ".join(("%d x %s" % (names.count(n), n)) if names.count(n) > 1 else n for n in sorted(set(names)))
    except (OSError, subprocess.TimeoutExpired):
        pass
    return "%d-core CPU, %s" % (os.cpu_count(), gpu or "no GPU")


def library_commit():
    """The commit our library was built from: PETSCGPUMAT_LIBRARY_COMMIT (tools/device-run.sh sets it from the device
    pack), else git's description of this checkout, else '?'."""
    if os.environ.get("PETSCGPUMAT_LIBRARY_COMMIT"):
        return os.environ["PETSCGPUMAT_LIBRARY_COMMIT"]
    try:
        p = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "describe", "--always", "--dirty", "--abbrev=10"],
                           capture_output=True, text=True, timeout=20)
        return p.stdout.strip() if p.returncode == 0 and p.stdout.strip() else "?"
    except (OSError, subprocess.TimeoutExpired):
        return "?"


def gpu_count():
    """The GPUs nvidia-smi lists (1 where it cannot say)."""
    try:
        p = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20)
        return max(1, len([l for l in p.stdout.splitlines() if l.startswith("GPU ")])) if p.returncode == 0 else 1
    except (OSError, subprocess.TimeoutExpired):
        return 1


def skip_kind(why):
    """A skip reason, grouped: the first requirement that is not met names it."""
    if why.startswith("nsize"):
        return "more ranks than --max-ranks"
    if "DATAFILESPATH" in why:
        return "needs DATAFILESPATH (PETSc's data files repository)"
    m = re.search(r"PETSC_HAVE_(\w+) requirement not met|Required: defined\((\w+)\)", why)
    if m:
        return "needs %s, not configured here" % (m.group(1) or m.group(2))
    if why.startswith("own -mat_type"):
        return "own -mat_type not AIJ (baij, sbaij, is, lmvm..., ...)"
    return re.split(r"[:;]", why)[0]


def write_reports(results, skipped, notbuilt, a, petsc, wall):
    os.makedirs(a.out, exist_ok=True)
    types = a.types
    count = {(c, t): 0 for c in CLASSES for t in types}
    used = {t: 0 for t in types}
    ref_only, ref_lost = [], []
    for r in results:
        count[(r["class"], r["type"])] += 1
        used[r["type"]] += bool(r["used"])
        if r["ours_ref"] == "yes" and r["baseline_ref"] == "no":
            ref_only.append("%s %s" % (r["label"], r["type"]))
        if r["ours_ref"] == "no" and r["baseline_ref"] == "yes":
            ref_lost.append("%s %s" % (r["label"], r["type"]))
    ncmd = len({r["label"] for r in results})
    head = ["| class | " + " | ".join(types) + " |", "|---|" + "---:|" * len(types)]
    rows = ["| %s | %s |" % (c, " | ".join(str(count[(c, t)]) for t in types)) for c in CLASSES if any(count[(c, t)] for t in types)]
    rows.append("| **total** | %s |" % " | ".join(str(sum(count[(c, t)] for c in CLASSES)) for t in types))
    numbers = {t: sum(1 for r in results if r["type"] == t and r["class"] == "differs" and r["detail"][:1] == [NUMBERS_ONLY])
               for t in types}
    if any(numbers.values()):
        at = next((i + 1 for i, r in enumerate(rows) if r.startswith("| differs |")), len(rows) - 1)
        rows.insert(at, "| (differs in numbers only: PETSc's petscdiff accepts) | %s |" % " | ".join(str(numbers[t]) for t in types))
    if a.mode == "cpu" or any(used.values()):
        rows.append("| exercised our type (GPUMat events > 0) | %s |" % " | ".join(str(used[t]) for t in types))
    table = head + rows
    md = ["# PETSc test suite, differential run (%s mode)" % a.mode, "",
          "- date: %s" % a.date, "- machine: %s" % a.machine, "- library: %s" % a.library, "- PETSc %s (%s)" % (petsc.version, petsc.dir),
          "- mode: %s; baseline %s; types %s" % (a.mode, "aijcusparse" if a.mode == "gpu" else "aij" if a.baseline_inode else "aij (-mat_no_inode)", ", ".join(types)),
          "- selection: %s; %d test commands compared, %d runs%s" % (
              a.selection, ncmd, ncmd * (1 + len(types)), ", %.0f s wall with %d jobs" % (wall, a.jobs) if wall is not None else ""),
          "- baseline matches PETSc's reference output: %d of %d commands; ours matches it where the baseline does not: %d "
          "comparisons (command and type), ours does not where the baseline does: %d" % (
              len({r["label"] for r in results if r["baseline_ref"] == "yes"}), ncmd, len(ref_only), len(ref_lost)),
          "", *table, ""]
    bad = {}
    for r in results:
        if r["class"] not in AGREE:
            bad.setdefault(r["label"], []).append((r["type"], r["class"], headline(r["detail"])))
    if bad:
        md += ["Commands that do not agree (%d; details in failures.md):" % len(bad), ""]
        for label, v in bad.items():
            if len(v) == len(types) and len({c for _, c, _ in v}) == 1:
                md.append("- %s: %s, all types (%s: %s)" % (label, v[0][1], v[0][0], v[0][2]))
            else:
                md.append("- %s: %s" % (label, "; ".join("%s %s (%s)" % x for x in v)))
        md.append("")
    if ref_only:
        md += ["Ours matches the reference output where the baseline does not:", ""] + ["- " + x for x in ref_only] + [""]
    if ref_lost:
        md += ["Ours does not match the reference output where the baseline does:", ""] + ["- " + x for x in ref_lost] + [""]
    if notbuilt:
        md += ["Programs that do not compile here (their commands are left out):", ""]
        md += ["- %s/%s: %s" % (k[0], k[1], (e or "").splitlines()[0] if e else "") for k, e in sorted(notbuilt.items())] + [""]
    reasons = {}
    for _, why in skipped:
        key = skip_kind(why)
        reasons[key] = reasons.get(key, 0) + 1
    top = sorted(reasons.items(), key=lambda x: (not x[0].startswith("not reached"), -x[1]))  # a shard cut short: first
    md += ["Test commands of these sets not run here (%d), by reason:" % len(skipped), ""]
    md += ["- %d: %s" % (n, why) for why, n in top[:15]]
    md += ["- %d: other reasons" % sum(n for _, n in top[15:])] if top[15:] else []
    md += [""]
    open(os.path.join(a.out, "summary.md"), "w").write("\n".join(md))
    with open(os.path.join(a.out, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["test", "set", "program", "nsize", "type", "class", "baseline_ref", "ours_ref", "used", "baseline_s", "ours_s", "detail", "command"])
        for r in results:
            w.writerow([r["label"], r["set"], r["program"], r["nsize"], r["type"], r["class"], r["baseline_ref"], r["ours_ref"],
                        "" if r["used"] is None else int(r["used"]), "%.2f" % r["baseline_s"], "%.2f" % r["ours_s"],
                        " / ".join(r["detail"][:2]), r["command"]])
    fl = ["# Commands and types that do not agree (%s mode, %s)" % (a.mode, a.date), ""]
    for r in results:
        if r["class"] in AGREE:
            continue
        fl += ["## %s %s: %s" % (r["label"], r["type"], r["class"]), "", "    " + r["command"], "", "```"] + r["detail"] + ["```", ""]
    open(os.path.join(a.out, "failures.md"), "w").write("\n".join(fl))
    return table


def merge_reports(a):
    """One report from the reports of several shards (the GPU half runs a selection in calls of under 10 minutes):
    their results.csv rows and failures.md sections, in order; the head lines from the first shard's summary.md"""
    results, failures, head, libraries = [], ["# Commands and types that do not agree (merged from %d shards)" % len(a.merge), ""], {}, []
    for d in a.merge:
        with open(os.path.join(d, "results.csv"), newline="") as f:
            for r in csv.DictReader(f):
                results.append(dict(r, label=r["test"], used=(r["used"] == "1") if r["used"] else None, baseline_s=float(r["baseline_s"]),
                                    ours_s=float(r["ours_s"]), detail=r["detail"].split(" / ") if r["detail"] else []))
        fl = open(os.path.join(d, "failures.md")).read().split("\n")
        failures += fl[2:]
        for line in open(os.path.join(d, "summary.md")):
            k = re.split(r"[: ]", line[2:], maxsplit=1)[0] if line.startswith("- ") else None
            if k in ("date", "machine", "PETSc", "mode") and k not in head:
                head[k] = line.rstrip("\n")
            if k == "library":
                libraries.append(line.rstrip("\n")[11:])
    labels = {r["label"] for r in results}
    if len(labels) * len({r["type"] for r in results}) != len(results):
        sys.exit("petsc_suite --merge: the shards overlap or differ in their types")
    a.types = list(dict.fromkeys(r["type"] for r in results))
    a.mode = "gpu" if "gpu" in head.get("mode", "") else "cpu"
    a.date = head.get("date", "- date: ?")[8:]
    a.machine = head.get("machine", "- machine: ?")[11:]
    a.library = ", ".join(dict.fromkeys(libraries)) or "?"  # each shard's, once: shards of one library give one
    a.selection, a.baseline_inode = "%d shards merged (%s)" % (len(a.merge), ", ".join(a.merge)), False
    m = re.match(r"- PETSc (\S+) \((.*)\)", head.get("PETSc", ""))
    petsc = argparse.Namespace(version=m.group(1) if m else "?", dir=m.group(2) if m else "?")
    table = write_reports(results, [], {}, a, petsc, None)
    open(os.path.join(a.out, "failures.md"), "w").write("\n".join(failures))
    print("\n".join(table))
    return 0


# ---------------------------------------------------------------- main
def unavailable(a, why):
    """Nothing can run here (a machine without PETSc's examples or a compiler): a SKIP for tests/run.sh, else an error."""
    if a.report_lines:
        print("SKIP: petsc-suite: " + why)
        return 0
    say("petsc_suite: " + why)
    return 2


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="See the module docstring and docs/petsc-test-suite.md.")
    ap.add_argument("--mode", choices=("cpu", "gpu"), default="cpu")
    ap.add_argument("--sets", default=DEFAULT_SETS, help="comma-separated: " + ", ".join(SETS))
    ap.add_argument("--deadline", type=float, default=0, help="start no run after this many seconds (0: none); reports cover what ran")
    ap.add_argument("--ci", action="store_true", help="the fixed CI subset (CI_TESTS), whatever --sets says")
    ap.add_argument("--only", help="a regular expression on the test labels")
    ap.add_argument("--start", type=int, default=0, help="first command (index in --list's order)")
    ap.add_argument("--count", type=int, default=0, help="number of commands from --start (0: all)")
    ap.add_argument("--list", action="store_true", help="print the test commands and exit")
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "petsc-suite"))
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "petsc-suite-out"))
    ap.add_argument("--no-build", action="store_true", help="use the programs already in --build (the GPU machine)")
    ap.add_argument("--build-only", action="store_true", help="compile and stage the data of the selection, then exit")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="ranks running at once (default: cores)")
    ap.add_argument("--gpus", type=int, default=0,
                    help="GPUs the runs are spread over, round robin by CUDA_VISIBLE_DEVICES (0: the machine's, in gpu mode)")
    ap.add_argument("--timeout", type=float, default=60, help="seconds per run (times the test's timeoutfactor)")
    ap.add_argument("--types", default=",".join(TYPES))
    ap.add_argument("--lib", default=os.path.join(os.environ.get("LIBDIR", os.path.join(ROOT, "lib")), "libpetscgpumat.so"))
    ap.add_argument("--petsc-dir", default=None)
    ap.add_argument("--max-ranks", type=int, default=2)
    ap.add_argument("--rtol", type=float, default=1e-6)
    ap.add_argument("--atol", type=float, default=1e-12, help="numbers closer than this are equal (residuals near round-off)")
    ap.add_argument("--report-lines", action="store_true", help="print PASS:/FAIL:/SKIP: lines (tests/run.sh's count)")
    ap.add_argument("--fatal", default=None, help="classes that make the exit status 1 (default: %s in cpu mode)" % CPU_FATAL)
    ap.add_argument("--baseline-inode", action="store_true", help="no -mat_no_inode in the CPU baseline (as PETSc's reference outputs)")
    ap.add_argument("--keep-rundirs", action="store_true")
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    ap.add_argument("--machine", default=None)
    ap.add_argument("--merge", nargs="+", metavar="DIR", help="write one report (summary.md, results.csv, failures.md in --out) "
                    "from the reports of shards of one selection, in the order given (run nothing)")
    a = ap.parse_args()
    if a.merge:
        return merge_reports(a)
    a.types = [t for t in a.types.split(",") if t]
    a.build, a.out, a.lib = os.path.abspath(a.build), os.path.abspath(a.out), os.path.abspath(a.lib)
    fatal = set((a.fatal if a.fatal is not None else (CPU_FATAL if a.mode == "cpu" else "")).split(",")) - {""}
    sets = [s for s in a.sets.split(",") if s]
    for s in sets:
        if s not in SETS:
            sys.exit("petsc_suite: unknown set %s (known: %s)" % (s, ", ".join(SETS)))

    manifest = os.path.join(a.build, "manifest-%s.json" % a.mode)
    m = json.load(open(manifest)) if a.no_build and os.path.isfile(manifest) else None
    petsc_dir = a.petsc_dir or (m["petsc_dir"] if m and not os.environ.get("PETSC_DIR") else None) or petsc_dir_default(a.lib)
    petsc = Petsc(petsc_dir)
    if petsc.have_examples:
        units, skipped = enumerate_tests(petsc, sorted({s for s in SETS if s in sets or a.ci},
                                                       key=list(SETS).index), a.mode, a.max_ranks)
    elif m:  # the GPU machine: the commands --build-only chose on the build machine
        units, skipped, petsc.version, petsc.conf = m["units"], [tuple(x) for x in m["skipped"]], m["petsc_version"], m["conf"]
        units = [u for u in units if u["set"] in sets or a.ci]
    else:
        return unavailable(a, "no PETSc examples in %s (and no %s from --build-only)" % (petsc.examples, manifest))
    if a.ci:
        known = {u["label"] for u in units}
        for lab in CI_TESTS:
            if lab not in known:  # an older PETSc release: the test is newer, or renamed
                msg = "--ci test %s is not among this PETSc's commands" % lab
                if a.report_lines and not a.list:
                    print("SKIP: " + msg)
                else:
                    say("petsc_suite: " + msg)
        units = [u for u in units if u["label"] in set(CI_TESTS)]
    if a.only:
        units = [u for u in units if re.search(a.only, u["label"])]
    numbered = list(enumerate(units))
    numbered = numbered[a.start:a.start + a.count] if a.count else numbered[a.start:]
    a.selection = "--ci" if a.ci else "sets " + ",".join(sets)
    a.selection += (" --only %s" % a.only if a.only else "") + (" commands %d..%d" % (a.start, a.start + len(numbered) - 1) if a.start or a.count else "")

    if a.list:
        for i, u in numbered:
            print("%5d  %-60s np=%d  %s %s" % (i, u["label"], u["nsize"], u["program"], u["args"]))
        byset = {}
        for _, u in numbered:
            byset[u["set"]] = byset.get(u["set"], 0) + 1
        print("# %d test commands (%s); %d not run here (requires, nsize, own matrix type, ...) in these sets" % (
            len(numbered), ", ".join("%s %d" % kv for kv in byset.items()), len(skipped)))
        return 0

    units = [u for _, u in numbered]
    os.makedirs(a.build, exist_ok=True)
    notbuilt = {}
    if not a.no_build:
        res = build_programs(petsc, units, a.build, a.jobs)
        notbuilt = {k: e for k, e in res.items() if e}
        stage_data(petsc, units, a.build)
        ok = [u for u in units if (u["rpath"], u["program"]) not in notbuilt]
        json.dump(dict(petsc_dir=petsc.dir, petsc_version=petsc.version, conf={k: petsc.conf.get(k, "") for k in ("MPIEXEC", "PETSC_TEST_OPTIONS")},
                       units=ok, skipped=skipped), open(manifest, "w"), indent=0)
    else:
        for u in units:
            if not os.path.isfile(os.path.join(a.build, u["rpath"], u["program"])):
                notbuilt[(u["rpath"], u["program"])] = "not in %s (--no-build)" % a.build
    units = [u for u in units if (u["rpath"], u["program"]) not in notbuilt]
    if not units and notbuilt:
        return unavailable(a, "none of the %d programs could be built (see above)" % len(notbuilt))
    if a.build_only:
        say("petsc_suite: built and staged %d commands into %s (%s)" % (len(units), a.build, manifest))
        return 0
    if a.types and not os.path.isfile(a.lib):
        return unavailable(a, "no library %s (make lib, or --lib)" % a.lib)

    share_root = petsc.dir if os.path.isdir(os.path.join(petsc.dir, "share", "petsc", "datafiles")) else os.path.join(a.build, "petsc-share")

    def find(rpath, rel):
        for base in (os.path.join(petsc.examples, "src", rpath), os.path.join(a.build, "data", rpath)):
            p = os.path.join(base, rel)
            if os.path.exists(p):
                return p
        return None

    mpiexec = petsc.conf.get("MPIEXEC", "mpiexec")
    v = subprocess.run(mpiexec + " --version", shell=True, capture_output=True, text=True)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", wPETSC_DIR=share_root,
               PETSC_DIR=petsc.dir, PETSC_ARCH="", OMPI_MCA_btl_vader_single_copy_mechanism=os.environ.get(
                   "OMPI_MCA_btl_vader_single_copy_mechanism", "none"))
    env.pop("DATAFILESPATH", None)
    harness = "-check_pointer_intensity 0 -error_output_stdout -malloc_dump " + petsc.conf.get("PETSC_TEST_OPTIONS", "-checkfunctionlist")
    if "-checkfunctionlist" not in harness:
        harness += " -checkfunctionlist"
    gpus = a.gpus or (gpu_count() if a.mode == "gpu" and "CUDA_VISIBLE_DEVICES" not in os.environ else 1)
    ctx = dict(find=find, env=env, harness_options=harness, slots=Slots(max(1, a.jobs)), mpiexec=mpiexec,
               gpus=gpus, next_gpu=0, lock=threading.Lock(),
               # Open MPI: concurrent jobs must not be pinned to the same cores, and 2 ranks may exceed free slots
               mpiexec_flags="--oversubscribe --bind-to none " if re.search(r"Open ?MPI|OpenRTE", v.stdout + v.stderr) else "")
    a.machine = a.machine or machine_name()
    a.library = library_commit()

    variants = ["baseline"] + a.types
    t0 = time.time()
    results, runs = [], {}
    say("petsc_suite: %d test commands x %d runs (%s mode), %d jobs%s, timeout %.0f s" % (
        len(units), len(variants), a.mode, a.jobs, ", %d GPUs" % gpus if gpus > 1 else "", a.timeout))
    shutil.rmtree(os.path.join(a.out, "logs"), ignore_errors=True)  # the logs of this run only
    os.makedirs(os.path.join(a.out, "logs"))
    fatal_seen = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        def run_in_time(u, v):  # None: not started, --deadline passed
            return None if a.deadline and time.time() - t0 > a.deadline else run_one(u, v, a, ctx)

        futs = [(u, v, ex.submit(run_in_time, u, v)) for u in units for v in variants]
        done = late = 0
        first_late = None
        for u, v, f in futs:
            runs[(u["label"], v)] = f.result()
            if v != variants[-1]:
                continue
            if any(runs[(u["label"], w)] is None for w in variants):
                for w in variants:
                    runs.pop((u["label"], w))
                skipped.append((u["label"], "not reached before --deadline (resume with --start)"))
                first_late = done if first_late is None else first_late
                late += 1
                done += 1
                continue
            base = runs.pop((u["label"], "baseline"))
            base_norm = normalise(apply_filter(base["out"], u["filter"]), a.mode, False)
            base_ref = matches_reference(u, base_norm, ctx, a.mode) if not failed(base, u["expects_error"]) else "no"
            for t in a.types:
                ours = runs.pop((u["label"], t))
                cls, detail = classify(u, base, ours, a)
                ours_ref = "no"
                if not failed(ours, u["expects_error"]):
                    ours_ref = matches_reference(u, normalise(apply_filter(ours["out"], u["filter"]), a.mode, True), ctx, a.mode)
                results.append({"label": u["label"], "set": u["set"], "program": u["program"], "nsize": u["nsize"], "type": t,
                                "class": cls, "detail": detail, "baseline_ref": base_ref, "ours_ref": ours_ref,
                                "used": ours["used"], "baseline_s": base["seconds"], "ours_s": ours["seconds"],
                                "command": ours["cmd"]})
                if cls not in AGREE:
                    d = os.path.join(a.out, "logs", u["label"])
                    os.makedirs(d, exist_ok=True)
                    for name, rr in (("baseline", base), (t, ours)):
                        open(os.path.join(d, name + ".txt"), "w").write("$ %s\n# exit status %s%s\n%s\n# stderr:\n%s" % (
                            rr["cmd"], rr["rc"], " (timed out)" if rr["timed_out"] else "", rr["out"], rr["err"]))
                if cls in fatal:
                    fatal_seen += 1
                if a.report_lines:
                    if cls in AGREE:
                        print("PASS: %s %s" % (u["label"], t), flush=True)
                    elif cls in fatal:
                        print("FAIL: %s %s: %s: %s" % (u["label"], t, cls, headline(detail)), flush=True)
                    else:
                        print("SKIP: %s %s: %s (not fatal)" % (u["label"], t, cls), flush=True)
            done += 1
            if not a.report_lines and (done % 25 == 0 or done == len(units)):
                say("petsc_suite: %d/%d commands done (%.0f s)" % (done, len(units), time.time() - t0))
    if late:
        say("petsc_suite: --deadline %.0f s passed: %d of %d commands not run, the first of them is number %d (--start)" % (
            a.deadline, late, len(units), a.start + first_late))
    table = write_reports(results, skipped, notbuilt, a, petsc, time.time() - t0)
    print("\n".join(table))
    print("petsc_suite: %d commands in %.0f s; summary, failures and results.csv in %s" % (len(units), time.time() - t0, a.out))
    if fatal_seen:
        print("petsc_suite: %d comparisons in fatal classes (%s): see %s/failures.md" % (fatal_seen, ",".join(sorted(fatal)), a.out))
    return 1 if fatal_seen else 0


if __name__ == "__main__":
    sys.exit(main())
