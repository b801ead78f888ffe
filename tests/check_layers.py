#!/usr/bin/env python3
"""The library's layers, checked on its code (comments and manual pages set aside): docs/architecture.md.

    check_layers.py ROOT

- the base (src/base/) and the shared private headers name no format: no format's symbols, types or headers;
- a format (src/<format>/) names no other format and includes no other format's private header, and writes none
  of the base's state (Mat_GPUMat: it gets what it needs as arguments);
- the choosing type (src/choose/) names the formats only by their public type names (MATSEQ...CUDA, through the
  base's registry), never their tables, data or private headers, and writes none of the base's state either;
- only the registration (src/petscgpumatregis.c) calls a format's registration, and nothing below calls it.
Prints a PASS/FAIL line per rule and file (tests/run.sh counts them); exits 1 on a failure.
"""
import os
import re
import sys

FORMATS = {  # folder: what names it in code
    "ellr": r"ELLR|ellr",
    "cmrs": r"CMRS|cmrs",
    "rgcsr": r"RGCSR|RgCSR|rgcsr",
    "csr": r"CSRCUDA|SeqCSR|MatCSR|_CSR\b|ComposeCSR|csrimpl",
}
BASE_OWN = re.compile(r"^MatGPUMatCSR")  # the base's device CSR (MatGPUMatCSR, MatGPUMatCSRHold), which every format reads
BASE_WRITE = re.compile(r"\bg->(\w+)(?:\[[^\]]*\])?\s*(?:=(?!=)|\+=|-=|\+\+|--)")  # g: the base's Mat_GPUMat
SHARED_HEADERS = ["gpumatimpl.h", "gpumatcuda.h", "petsccompat.h", "rowgroupcuda.h", "rowgroupimpl.h"]


def code_of(path):
    """The file without comments and string literals (manual pages and messages may name anything)."""
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', text)


def names(fmt, code):
    """A format's identifiers and private header in code"""
    ident = re.compile(r"\b\w*(?:%s)\w*\b" % FORMATS[fmt])
    return sorted(set(m.group(0) for m in ident.finditer(code) if not BASE_OWN.match(m.group(0))))


def main():
    root = sys.argv[1]
    failed = 0

    def check(ok, what):
        nonlocal failed
        print(("PASS: " if ok else "FAIL: ") + what)
        failed += not ok

    base = [os.path.join(root, "src", "base", f) for f in sorted(os.listdir(os.path.join(root, "src", "base")))]
    shared = [os.path.join(root, "include", "petscgpumat", "private", h) for h in SHARED_HEADERS]
    for path in base + shared:
        code = code_of(path)
        found = [n for f in FORMATS for n in names(f, code)]
        check(not found, f"{os.path.relpath(path, root)} names no format" + (f" (names {', '.join(found[:6])})" if found else ""))
    for fmt in FORMATS:
        folder = os.path.join(root, "src", fmt)
        for f in sorted(os.listdir(folder)):
            code = code_of(os.path.join(folder, f))
            others = [n for g in FORMATS if g != fmt for n in names(g, code)]
            # the CSR format's own names contain "CSR", which RgCSR's pattern does not match, and RgCSR's contain
            # "CSR" too: what counts as another format's name is what that format's pattern alone matches
            if fmt == "rgcsr":
                others = [n for n in others if not re.search(FORMATS["rgcsr"], n)]
            check(not others, f"src/{fmt}/{f} names no other format" + (f" (names {', '.join(others[:6])})" if others else ""))
            writes = BASE_WRITE.findall(code)
            check(not writes, f"src/{fmt}/{f} writes none of the base's state" + (f" (writes g->{', g->'.join(writes[:6])})" if writes else ""))
    public_type = re.compile(r"^(MATSEQ[A-Z]+CUDA|MATAUTO_\w+)$")  # a format's public type name (or the chooser's own names of its candidates)
    folder = os.path.join(root, "src", "choose")
    for f in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        code = code_of(os.path.join(folder, f))
        private = [n for g in FORMATS for n in names(g, code) if not public_type.match(n)]
        private = sorted(set(private))  # RgCSR's and CSR's patterns overlap: a name both match counts once
        check(not private, f"src/choose/{f} names the formats only by their public type names" + (f" (names {', '.join(private[:6])})" if private else ""))
        writes = BASE_WRITE.findall(code)
        check(not writes, f"src/choose/{f} writes none of the base's state" + (f" (writes g->{', g->'.join(writes[:6])})" if writes else ""))
    registrations = re.compile(r"\bMatGPUMatRegister(?!Format\b|Factors\b)\w+_Private\s*\(\s*\)\s*\)")
    for dirpath, _, files in os.walk(os.path.join(root, "src")):
        for f in sorted(files):
            path = os.path.join(dirpath, f)
            if path.endswith("petscgpumatregis.c"):
                continue
            code = code_of(path)
            calls = registrations.findall(code)
            check(not calls, f"{os.path.relpath(path, root)} calls no format's registration")
            # the registration sits on top: nothing below it calls up into it (a type is created only once registered)
            up = re.findall(r"\bPetscGPUMatInitializePackage\s*\(\s*\)\s*\)", code)
            check(not up, f"{os.path.relpath(path, root)} does not call up into the registration (PetscGPUMatInitializePackage)")
    print(f"# {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
