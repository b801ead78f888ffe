#!/usr/bin/env bash
# The GPU half of the differential PETSc test suite, on the lent GPU machine, which cannot compile: run by
#   PETSC_SUITE_ARGS="--start 0 --count 250" DEVICE_SCRIPT=tests/petsc_suite/gpu-half.sh tools/device-run.sh script
# with `.device` (make device-pack) and `build/petsc-suite` carried; the latter is built on the CPU machine by
#   python3 tests/petsc_suite/petsc_suite.py --mode gpu --build-only
# (programs, manifest-gpu.json, reference outputs and data files). PETSC_SUITE_ARGS picks a shard (--start/--count,
# --sets, --only, --ci; SUITE_DEADLINE, default 400 s: no run starts later, the reports say where to resume); summary.md, failures.md, results.csv and the logs of the disagreeing runs go to $OUT.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
res=${WORK:-/tmp}/petsc-suite-out
PYTHONUNBUFFERED=1 tests/mpienv.sh python3 tests/petsc_suite/petsc_suite.py --mode gpu --no-build --lib lib/libpetscgpumat.so \
  --petsc-dir "$(cat "${WORK:-/tmp}/PETSC_DIR" 2>/dev/null || echo "${PETSC_DIR:-}")" --out "$res" --timeout 120 \
  --deadline "${SUITE_DEADLINE:-400}" ${PETSC_SUITE_ARGS:-}
rc=$?
cp "$res/summary.md" "$res/failures.md" "$res/results.csv" "${OUT:-.}/" 2>/dev/null
tar -C "$res" -czf "${OUT:-.}/petsc-suite-logs.tar.gz" logs 2>/dev/null
exit $rc
