#!/usr/bin/env python3
"""Whether a change left GPU kernels the same, on a machine without a GPU.

    python3 tools/kernel_equivalence.py REV src/ellr/ellr_kernels.cu [more .cu files] [-D NAME=VALUE ...]

Compiles each file as it is at REV (git worktree) and as it is in the work tree to PTX with the makefile's nvcc and
flags, renames the per-file symbol hashes nvcc puts in internal names, and compares each kernel's body:
  same          identical PTX: the same instructions in the same order, so the same bits;
  renamed       the differing lines are the same instructions once virtual register names are dropped (a
                reordering of independent loads or a renaming): read the diff (--diff) to confirm;
  DIFFERENT     anything else: only the GPU tests can say whether the results changed.
Then ptxas's registers, stack and spills for each kernel on both sides. For refactors of kernels (shared device
functions, templates): the GPU tests still run at the next device call; this says what to expect of them.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HASH = re.compile(r"_INTERNAL_[0-9a-f]{8}_\d+_(\w+?)_cu_[0-9a-f]{8}|GLOBAL__N__[0-9a-f]{8}_\d+_(\w+?)_cu_[0-9a-f]{8}")
REG = re.compile(r"%(rd|r|fd|f|p|rs|hh|h)\d+")


def make_var(name):
    out = subprocess.run(["make", "-s", "-C", ROOT, f"print-{name}"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"kernel_equivalence: make print-{name} failed: {out.stderr.strip()}")
    return out.stdout.strip()


def ptx(tree, src, nvcc, flags, out):
    cmd = [nvcc] + flags + ["-I" + os.path.join(tree, "include"), "-ptx", os.path.join(tree, src), "-o", out]
    subprocess.run(cmd, check=True, cwd=tree)
    with open(out) as f:
        text = HASH.sub(lambda m: "_HASH_" + (m.group(1) or m.group(2)), f.read())
    return re.sub(r"\$L__BB\d+_", "$L__BB_", text)  # labels carry the function's index in the file


def kernels(text):
    """entry name -> its body's lines"""
    found, name, body = {}, None, []
    for line in text.splitlines():
        m = re.match(r"\s*(?:\.visible\s+)?\.entry\s+(\S+?)\(", line)
        if m:
            if name:
                found[name] = body
            name, body = m.group(1), []
        elif name:
            body.append(line)
    if name:
        found[name] = body
    return found


def readable(name):
    """rgcsr_mult<1> from the mangled name of an internal kernel (template)"""
    m = re.search(r"_HASH_[A-Za-z_]+?\d+([A-Za-z_][A-Za-z0-9_]*?)(I|E)(.*)", name)
    if not m:
        return name
    vals = [a or b for a, b in re.findall(r"Li(\d+)E|Lb([01])E", m.group(2) + m.group(3))]
    return m.group(1) + (f"<{', '.join(vals)}>" if vals else "")


def resources(ptxfile, nvcc):
    ptxas = os.path.join(os.path.dirname(nvcc), "ptxas")
    arch = re.search(r"\.target\s+(sm_\d+)", open(ptxfile).read()).group(1)
    p = subprocess.run([ptxas, "-arch=" + arch, "-O3", "-v", ptxfile, "-o", os.devnull], capture_output=True, text=True)
    res, name = {}, None
    for line in p.stderr.splitlines():
        m = re.search(r"Function properties for (\S+)", line) or re.search(r"Compiling entry function '(\S+)'", line)
        if m:
            name = HASH.sub(lambda m: "_HASH_" + (m.group(1) or m.group(2)), m.group(1))
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores", line)
        if m and name:
            res.setdefault(name, {})["stack"], res[name]["spill"] = int(m.group(1)), int(m.group(2))
        m = re.search(r"Used (\d+) registers", line)
        if m and name:
            res.setdefault(name, {})["regs"] = int(m.group(1))
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rev")
    ap.add_argument("files", nargs="+")
    ap.add_argument("--diff", action="store_true", help="print the differing lines of each kernel that is not the same")
    ap.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE",
                    help="a macro for both sides, as the makefile passes one (cmrs_scan_instances.cu: CMRS_SCAN_U, CMRS_SCAN_E)")
    a = ap.parse_args()
    nvcc = make_var("CUDAC")
    flags = [f for f in make_var("NVFLAGS").split() if not f.startswith("-I" + os.path.join(ROOT, "include"))]
    flags = [f for f in flags if f not in ("-Xcompiler", "-Wall", "-fPIC", "-fvisibility=hidden")] + ["-D" + d for d in a.defines]
    worst = 0
    with tempfile.TemporaryDirectory() as tmp:
        old = os.path.join(tmp, "old")
        subprocess.run(["git", "-C", ROOT, "worktree", "add", "-q", "--detach", old, a.rev], check=True)
        try:
            for src in a.files:
                po, pn = os.path.join(tmp, "old.ptx"), os.path.join(tmp, "new.ptx")
                ko, kn = kernels(ptx(old, src, nvcc, flags, po)), kernels(ptx(ROOT, src, nvcc, flags, pn))
                ro, rn = resources(po, nvcc), resources(pn, nvcc)
                print(f"{src}: {len(kn)} kernels ({len(ko)} at {a.rev})")
                for name in sorted(set(ko) | set(kn)):
                    lines = []
                    if name not in ko or name not in kn:
                        verdict = "new" if name not in ko else "gone"
                    elif ko[name] == kn[name]:
                        verdict = "same"
                    else:
                        do = sorted(REG.sub("%R", l) for l in ko[name] if l not in kn[name])
                        dn = sorted(REG.sub("%R", l) for l in kn[name] if l not in ko[name])
                        verdict = "renamed" if do == dn and len(ko[name]) == len(kn[name]) else "DIFFERENT"
                        worst = max(worst, 1 if verdict == "renamed" else 2)
                        if a.diff:
                            lines = ["    - " + l.strip() for l in ko[name] if l not in kn[name]]
                            lines += ["    + " + l.strip() for l in kn[name] if l not in ko[name]]
                    fmt = lambda r: f"{r.get('regs', '?')} regs, {r.get('spill', '?')} B spilled" if r else "-"
                    short = readable(name)
                    print(f"  {verdict:9s} {short[:60]:60s} {fmt(ro.get(name))} -> {fmt(rn.get(name))}")
                    for l in lines:
                        print(l)
        finally:
            subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", old], check=False)
    print({0: "all kernels the same", 1: "some kernels renamed (read them with --diff)", 2: "some kernels DIFFERENT"}[worst])
    return 0


if __name__ == "__main__":
    sys.exit(main())
