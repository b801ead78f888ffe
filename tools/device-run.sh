#!/usr/bin/env bash
# On the lent GPU machine, from the repository root (with .device carried): unpack what
# tools/device-pack.sh packed, run the whole test suite (GPU tests included) and the SpMV benchmark,
# and leave the logs in $OUT (at most 8 files).
#   tools/device-run.sh [tests] [bench] [demo]    (default: all three)
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
out=${OUT:-$root/.device/out}
mkdir -p "$out"
what=${*:-tests bench demo}
work=/tmp/petscgpumat-device
rm -rf "$work" && mkdir -p "$work"
xz -dc .device/petscgpumat-device.tar.xz | tar -C "$work" -xf - || { echo "cannot unpack .device/petscgpumat-device.tar.xz"; exit 1; }
tar -C / -xf "$work/petsc.tar"
cp -a "$work/repo/lib" "$work/repo/build" "$root/"
export LD_LIBRARY_PATH="$root/lib:$work/syslibs:/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PETSCGPUMAT_MATRICES=$work/matrices
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv; date -u; uname -r; } >"$out/device.txt" 2>&1
cat "$out/device.txt"
status=0
if [[ $what == *tests* ]]; then
  timeout 330 tests/run.sh 2>&1 | tee "$out/tests.txt"
  status=${PIPESTATUS[0]}
  tar -C build -czf "$out/test-logs.tar.gz" test-logs
fi
if [[ $what == *bench* ]]; then
  {
    for p in "-problem lap3d7 -n 150" "-problem lap2d5 -n 2000"; do
      timeout 100 tests/mpienv.sh build/examples/bench_spmv $p -reps 100 -types aijcusparse,sellcuda,ellrcuda \
        -variants "-mat_ellr_threads_per_row 1,-mat_ellr_threads_per_row 2,-mat_ellr_threads_per_row 4" -csv "$work/b.csv"
      cat "$work/b.csv" >>"$out/bench.csv"
      echo
    done
  } 2>&1 | tee "$out/bench.txt"
fi
if [[ $what == *demo* ]]; then
  timeout 60 tests/mpienv.sh build/examples/solve -types aijcusparse,sellcuda,ellrcuda,aij -n 100 2>&1 | tee "$out/demo.txt"
fi
exit $status
