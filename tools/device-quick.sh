#!/usr/bin/env bash
# A short GPU check for a nearly spent device budget: unpack (tools/device-run.sh), then the CMRS products of every
# variant, the two Laplacian benchmarks, the MPI types on 2 ranks sharing the GPU, compressed rows and KSP.
# Each step has its own timeout; results in $OUT/quick.txt.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
out=${OUT:-$root/.device/out}
tools/device-run.sh none >/dev/null 2>&1
export LD_LIBRARY_PATH="$root/lib:/tmp/petscgpumat-device/syslibs:/usr/local/cuda/lib64:/usr/local/cuda/lib"
m=/tmp/petscgpumat-device/matrices
step() { # name, timeout, command...
  local name=$1 t=$2
  shift 2
  echo "== $name"
  timeout "$t" tests/mpienv.sh "$@" >"/tmp/q-$name.log" 2>&1
  echo "exit status $?: $(grep -c '^PASS' "/tmp/q-$name.log") passed, $(grep -c '^FAIL' "/tmp/q-$name.log") failed"
  grep -E '^FAIL' "/tmp/q-$name.log" | head -5
}
{
  step cmrs-products 100 build/tests/gpu/test_gpu_products -types cmrscuda -matrices_dir $m -matrices bcsstk02,rajat01,lp_e226,power,cage10
  for p in "-problem lap3d7 -n 150" "-problem lap2d5 -n 2000"; do
    echo "== bench $p"
    timeout 60 tests/mpienv.sh build/examples/bench_spmv $p -reps 100 -types aijcusparse,sellcuda,cmrscuda,ellrcuda,rgcsrcuda \
      -variants mat_cmrs_variant:padded,mat_cmrs_variant:basic -csv /tmp/q-bench.csv 2>&1 | grep -vE '^\s*$'
    cat /tmp/q-bench.csv >>"$out/quick-bench.csv"
  done
  step mpi-np2 80 mpiexec -n 2 build/tests/gpu/test_gpu_mpi -types ellrcuda,rgcsrcuda,cmrscuda -matrices_dir $m -matrices sherman1,rajat01
  step compressed-rows 80 build/tests/gpu/test_gpu_products -types ellrcuda,rgcsrcuda,cmrscuda -quick -matrices_dir $m -matrices bcsstk02,rajat01 -mat_gpumat_compressed_rows
  step ksp 60 build/tests/gpu/test_gpu_ksp -types ellrcuda,rgcsrcuda,cmrscuda
} 2>&1 | tee "$out/quick.txt"
