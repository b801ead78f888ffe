#!/usr/bin/env bash
# Provide petsc4py built for the PETSc petscgpumat uses, and print the directory to put on PYTHONPATH.
#
#   config/petsc4py.sh [--if-built]   (PETSC_DIR/PETSC_ARCH from the environment, else config/petsc.sh's answer)
#
# --if-built: print the directory only if petsc4py was already built there (exit 1 otherwise, building nothing).
#
# petsc4py's version must equal PETSc's (its sdist compiles against that PETSc); pip builds it from PyPI
# with PETSC_DIR set, into $PETSCGPUMAT_CACHE/petsc4py/<version>-<hash of PETSC_DIR> (about 5 minutes on
# 2 cores, once). Nothing is installed into the system's Python.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
say() { echo "petsc4py.sh: $*" >&2; }
if [[ -z ${PETSC_DIR:-} ]]; then eval "$("$here/petsc.sh" --print=env)"; fi
export PETSC_DIR PETSC_ARCH=${PETSC_ARCH:-}
version=$("$here/petsc.sh" --print=version)
cache=${PETSCGPUMAT_CACHE:-$HOME/.cache/petscgpumat}
target=$cache/petsc4py/$version-$(echo "$PETSC_DIR/$PETSC_ARCH" | sha256sum | cut -c1-8)
if [[ -f $target/.complete ]]; then echo "$target"; exit 0; fi
[[ ${1:-} == --if-built ]] && exit 1
mkdir -p "$cache/logs"
log=$cache/logs/petsc4py-$version.log
say "building petsc4py $version for PETSc at $PETSC_DIR${PETSC_ARCH:+/$PETSC_ARCH} (log: $log; about 5 minutes)"
rm -rf "$target"
python3 -m pip install --no-cache-dir --target "$target" "petsc4py==$version" numpy >"$log" 2>&1 ||
  { tail -20 "$log" >&2; say "pip could not build petsc4py $version; see $log"; exit 1; }
touch "$target/.complete"
echo "$target"
