#!/usr/bin/env bash
# Pack what the lent GPU machine needs into .device/petscgpumat-device.tar.xz (git-ignored; name `.device`
# in the device tool's `carry`): the PETSc shared library (at its absolute path), our library, test and
# example programs, Debian's BLAS/LAPACK and their Fortran runtime, and the real test matrices.
# Then, on the GPU machine, from the repository root: tools/device-run.sh (see README, "GPU tests").
# Environment: BUILD (the build to pack, default build), PACK_MATRICES (0: no matrices), DEVICE_DIR (where the archive goes, default .device;
# two builds packed side by side go to two folders, e.g. .device-single, carried and run with the same DEVICE_DIR).
# --base: only keep the library as built now as the baseline of an A/B run (.device/base: the library, xz-compressed,
# and its commit; `tools/device-run.sh ab` times examples/solve with it and with the packed one, alternating):
# build the baseline revision, `make device-base`, then the new one, `make device-pack`, and carry .device.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
if [[ ${1:-} == --base ]]; then
  base=${DEVICE_DIR:-.device}/base
  lib=$([[ ${BUILD:-build} == build ]] && echo lib || echo "${BUILD}/lib")/libpetscgpumat.so
  mkdir -p "$base"
  xz -T0 -6 -c "$lib" >"$base/libpetscgpumat.so.xz"
  git -C "$root" describe --always --dirty --abbrev=10 >"$base/COMMIT" 2>/dev/null || echo "?" >"$base/COMMIT"
  echo "baseline library of $(cat "$base/COMMIT") in $base ($(du -k "$base/libpetscgpumat.so.xz" | cut -f1) KiB)"
  exit 0
fi
petsc=${PETSC_DIR:-$(config/petsc.sh --print=dir)}
petsc=$petsc${PETSC_ARCH:+/$PETSC_ARCH}
matrices=${PETSCGPUMAT_MATRICES:-$root/../shared/matrices}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
build=${BUILD:-build}
devdir=${DEVICE_DIR:-.device}
libdir=$([[ $build == build ]] && echo lib || echo "$build/lib")
mkdir -p "$stage/syslibs" "$stage/matrices" "$stage/repo" "$devdir"

# PETSc at the same absolute path (the programs' rpaths point there)
(cd / && tar -cf "$stage/petsc.tar" "${petsc#/}"/lib/libpetsc.so* "${petsc#/}/include/petscconf.h")
echo "$petsc" >"$stage/PETSC_DIR"
# the commit the library was built from, for the reports made on the GPU machine (which has no git history)
git -C "$root" describe --always --dirty --abbrev=10 >"$stage/LIBRARY_COMMIT" 2>/dev/null || echo "?" >"$stage/LIBRARY_COMMIT"
config/petsc.sh --print=version >"$stage/PETSC_VERSION"
# Debian's BLAS/LAPACK and the Fortran runtime they need (the GPU machine runs Ubuntu with OpenMPI 4.1)
for l in liblapack.so.3 libblas.so.3 libgfortran.so.5 libquadmath.so.0; do
  cp -L "$(ldconfig -p | awk -v l=$l '$1 == l {print $NF; exit}')" "$stage/syslibs/$l"
done
# our build: library and programs, not objects
mkdir -p "$stage/repo/build"
cp -a "$libdir" "$stage/repo/lib"
for d in tests examples clients; do [[ -d $build/$d ]] && cp -a "$build/$d" "$stage/repo/build/"; done
# the real matrices the tests and benchmarks read
# (PACK_MATRICES=0 leaves them out: a second pack carried beside a first that has them, see device-run.sh)
if [[ -d $matrices && ${PACK_MATRICES:-1} != 0 ]]; then cp "$matrices"/*.mtx.gz "$matrices"/MANIFEST.tsv "$stage/matrices/" 2>/dev/null || true; fi
tar -C "$stage" -cf - PETSC_DIR PETSC_VERSION LIBRARY_COMMIT petsc.tar syslibs matrices repo | xz -T0 -6 >"$devdir/petscgpumat-device.tar.xz"
ls -l "$devdir/petscgpumat-device.tar.xz" | awk -v d="$devdir" '{printf "packed %s/petscgpumat-device.tar.xz: %.1f MiB\n", d, $5/1048576}'
