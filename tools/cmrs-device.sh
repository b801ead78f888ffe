#!/usr/bin/env bash
# CMRS experiments on the lent GPU machine (from the repository root, with the archives of tools/device-pack.sh
# carried): GPU tests of cmrscuda, the benchmark of every CMRS variant beside cuSPARSE and SELL, Nsight Compute
# on the kernels, the height x block size x variant sweep, and single precision. Results go to $OUT.
#   DEVICE_DIR=.device-cmrs SINGLE_DIR=.device-cmrs-single tools/cmrs-device.sh [tests] [bench] [ncu] [sweep] [single]
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
out=${OUT:-$root/.device/out}
mkdir -p "$out"
what=${*:-tests bench ncu}
unpack() { # archive folder, work folder
  rm -rf "$2" && mkdir -p "$2"
  xz -dc "$1/petscgpumat-device.tar.xz" | tar -C "$2" -xf - && tar -C / -xf "$2/petsc.tar"
}
work=/tmp/cmrs-device
unpack "${DEVICE_DIR:-.device-cmrs}" $work || { echo "cannot unpack"; exit 1; }
# what tests/mpienv.sh sets: OpenMPI as root, and -use_gpu_aware_mpi 0 (the machine's OpenMPI is not CUDA-aware)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export PETSC_OPTIONS="${PETSC_OPTIONS:-} -use_gpu_aware_mpi 0"
export LD_LIBRARY_PATH="$work/repo/lib:$work/syslibs:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
M=$work/matrices
B=$work/repo/build
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee "$out/device.txt"
bench() { # label, timeout, bench arguments...
  local label=$1 t=$2
  shift 2
  timeout "$t" "$BENCH" "$@" -csv $work/b.csv >$work/b.txt 2>&1
  echo "== $label (status $?)"
  grep -vE "^(matrix|speed-up)" $work/b.txt | grep -E "GFLOPS|cuda|rror" | cut -c1-110
  sed "s|^|$label,|" $work/b.csv >>"$out/${CSV:-bench}.csv"
}
BENCH=$B/examples/bench_spmv
S=mat_cmrs_variant:scan
if [[ $what == *bench* ]]; then
  for p in "lap3d7 -n 150" "lap2d5 -n 2000"; do
    bench "${p%% *}" 120 -problem $p -reps 100 -types aijcusparse,sellcuda,ellrcuda,cmrscuda -variants \
      mat_cmrs_variant:basic,mat_cmrs_variant:padded,$S+mat_cmrs_device_convert:0,$S+mat_cmrs_warp_strips:4,$S+mat_cmrs_warp_strips:1,$S+mat_cmrs_unroll:4,$S+mat_cmrs_unroll:1,$S+mat_cmrs_block_size:64,$S+mat_cmrs_block_size:256,$S+mat_cmrs_height:8,$S+mat_cmrs_height:4
  done 2>&1 | tee "$out/bench.txt"
  for f in "ego-twitter 8" "soc-Slashdot0902 22"; do
    set -- $f
    bench "$1" 100 -f "$M/$1.mtx.gz" -replicate $2 -reps 50 -types aijcusparse,sellcuda,cmrscuda -variants mat_cmrs_variant:basic,mat_cmrs_variant:padded,$S+mat_cmrs_warp_strips:1
  done 2>&1 | tee -a "$out/bench.txt"
fi
if [[ $what == *tests* ]]; then
  {
    timeout 200 $B/tests/gpu/test_gpu_products -types cmrscuda -matrices_dir $M \
      -matrices bcsstk02,cage5,Franz6_id1959_aug,rajat01,mbeacxc,lp_e226,power,494_bus,sherman1,pde900,impcol_a,ash219,gre_1107,olm1000,can_1072,Erdos971,cage10,bcsstk13 >$work/t1.txt 2>&1
    echo "gpu-products cmrscuda: status $?, $(grep -c ^PASS $work/t1.txt) passed, $(grep -c ^FAIL $work/t1.txt) failed"
    grep ^FAIL $work/t1.txt | head -20
    timeout 60 $B/tests/gpu/test_gpu_ksp -types cmrscuda >$work/t2.txt 2>&1
    echo "gpu-ksp cmrscuda: status $?, $(grep -c ^PASS $work/t2.txt) passed, $(grep -c ^FAIL $work/t2.txt) failed"
    grep ^FAIL $work/t2.txt | head
    tail -3 $work/t2.txt
  } 2>&1 | tee "$out/tests.txt"
fi
if [[ $what == *single* ]]; then
  sw=/tmp/cmrs-device-single
  unpack "${SINGLE_DIR:-.device-cmrs-single}" $sw || echo "cannot unpack single"
  CSV=single
  (
    export LD_LIBRARY_PATH="$sw/repo/lib:$work/syslibs:/usr/local/cuda/lib64"
    BENCH=$sw/repo/build/examples/bench_spmv
    for p in "lap3d7 -n 150" "lap2d5 -n 2000" "lap3d27 -n 100"; do
      v=mat_cmrs_variant:basic,mat_cmrs_variant:padded
      for h in 2 4 8 16; do v=$v,$S+mat_cmrs_height:$h,mat_cmrs_variant:basic+mat_cmrs_height:$h; done
      v=$v,$S+mat_cmrs_height:16+mat_cmrs_warp_strips:1,$S+mat_cmrs_height:16+mat_cmrs_warp_strips:4
      bench "single-${p%% *}" 120 -problem $p -reps 50 -types aijcusparse,sellcuda,cmrscuda -variants $v
    done
  ) 2>&1 | tee "$out/single.txt" | grep -E "==|aijcusparse|cmrscuda " | head -20
fi
if [[ $what == *sweep* ]]; then
  CSV=sweep
  for p in "lap3d7 -n 150" "lap2d5 -n 2000" "lap3d27 -n 100" "rows -mean 64 -n 70" "rows -mean 16 -n 110" "rows -mean 256 -n 45"; do
    v=mat_cmrs_variant:padded
    for h in 2 4 8; do v=$v,mat_cmrs_variant:basic+mat_cmrs_height:$h; done
    for h in 1 2 4 8 16; do v=$v,$S+mat_cmrs_height:$h; done
    for b in 64 256 512; do v=$v,$S+mat_cmrs_block_size:$b,$S+mat_cmrs_height:4+mat_cmrs_block_size:$b; done
    bench "${p// /_}" 100 -problem $p -reps 50 -types aijcusparse,cmrscuda -variants $v
  done >"$out/sweep.txt" 2>&1
  tail -5 "$out/sweep.txt"
fi
if [[ $what == *ncu* ]]; then
  ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
  for p in "lap3d7 -n 150"; do
    timeout 90 "$ncu" --launch-skip 5 --launch-count 1 --kernel-name regex:'cmrs_mult' --section SpeedOfLight --section Occupancy \
      --section MemoryWorkloadAnalysis --section LaunchStats --section WarpStateStats $BENCH -problem $p -reps 3 -types cmrscuda 2>&1
  done | tee "$out/ncu.txt" | grep -E "cmrs_mult_scan|Duration|DRAM Throughput|Memory Throughput|L1/TEX Hit|L2 Hit|Achieved Occupancy|Theoretical Occ|Registers Per|Stall|Warp Cycles Per Issued" | cut -c1-120 | head -50
fi
exit 0
