#!/usr/bin/env bash
# On the lent GPU machine, from the repository root (with .device carried): unpack what
# tools/device-pack.sh packed, run the whole test suite (GPU tests included) and the SpMV benchmark,
# and leave the logs in $OUT (at most 8 files).
#   tools/device-run.sh [tests|gputests] [bench] [cgfused] [ab] [sweep] [profile] [sanitize] [suite] [mpitests] [mpiscale] [clients] [script] [demo] [none]
#   (default: tests bench demo; gputests: only the tests that need the GPU (gpu-*, matproduct*), which CI cannot run and
#   which fit one call where the whole set no longer does; none: only unpack; NO_UNPACK=1 reuses what an earlier call on the same machine unpacked;
#   script: runs the bash script DEVICE_SCRIPT (a one-off diagnosis, carried as an untracked file) in this environment,
#   with WORK, OUT and the compute-sanitizer path CS exported)
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
out=${OUT:-$root/.device/out}
mkdir -p "$out"
what=${*:-tests bench demo}
has() { [[ " $what " == *" $1 "* ]]; } # a phase named on the command line
work=/tmp/petscgpumat-device
devdir=${DEVICE_DIR:-.device}
if [[ ${NO_UNPACK:-0} == 1 && -d $work/repo && -d $root/build ]]; then
  echo "NO_UNPACK: using the build unpacked by an earlier call"
else
  rm -rf "$work" && mkdir -p "$work"
  xz -dc "$devdir/petscgpumat-device.tar.xz" | tar -C "$work" -xf - || { echo "cannot unpack $devdir/petscgpumat-device.tar.xz"; exit 1; }
  tar -C / -xf "$work/petsc.tar"
  cp -a "$work/repo/lib" "$work/repo/build" "$root/"
fi
export LD_LIBRARY_PATH="$root/lib:$work/syslibs:/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# a pack made with PACK_MATRICES=0 reads the matrices an earlier call unpacked (kept in /tmp/petscgpumat-matrices)
if [[ -n $(ls "$work/matrices" 2>/dev/null) ]]; then rm -rf /tmp/petscgpumat-matrices && cp -a "$work/matrices" /tmp/petscgpumat-matrices; fi
export PETSCGPUMAT_MATRICES=/tmp/petscgpumat-matrices
export PETSCGPUMAT_PETSC_VERSION=$(cat "$work/PETSC_VERSION" 2>/dev/null)
export PETSCGPUMAT_LIBRARY_COMMIT=$(cat "$work/LIBRARY_COMMIT" 2>/dev/null || echo "?")
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv; date -u; uname -r; echo "library: $PETSCGPUMAT_LIBRARY_COMMIT"; } >"$out/device.txt" 2>&1
cat "$out/device.txt"
status=0
if has tests || has gputests; then
  has gputests && export TEST_FILTER=${TEST_FILTER:-gpu-|matproduct}
  timeout 540 tests/run.sh 2>&1 | tee "$out/tests.txt"
  status=${PIPESTATUS[0]}
  # the whole set has outgrown one call: say so instead of ending without a total (TEST_FILTER runs the rest)
  [[ $status == 124 ]] && echo "tests: STOPPED by the 540 s limit of one call after the last line above: no total; run the rest with TEST_FILTER" | tee -a "$out/tests.txt"
  tar -C build -czf "$out/test-logs.tar.gz" test-logs
fi
if has bench; then
  {
    for p in "-problem lap3d7 -n 150" "-problem lap2d5 -n 2000"; do
      timeout 100 tests/mpienv.sh build/examples/bench_spmv $p -reps 100 -types aijcusparse,sellcuda,cmrscuda,ellrcuda,rgcsrcuda \
        -variants mat_rgcsr_sort_window:1000000000,mat_cmrs_sort:1,mat_cmrs_variant:padded,mat_cmrs_variant:padded+mat_cmrs_buffer_columns:4,mat_cmrs_variant:padded+mat_cmrs_height:8,mat_cmrs_variant:padded+mat_cmrs_block_size:256 -csv "$work/b.csv"
      cat "$work/b.csv" >>"$out/bench.csv"
      echo
    done
    # the hard cases: a few very long rows (power-law graphs, a circuit, an LP), replicated on the diagonal to ~20 M nonzeros
    for f in "ego-twitter 8" "soc-Slashdot0902 22" "rajat01 500" "vsp_sctap1-2b_and_seymourl 71"; do
      set -- $f
      timeout 100 tests/mpienv.sh build/examples/bench_spmv -f "$PETSCGPUMAT_MATRICES/$1.mtx.gz" -replicate $2 -reps 50 \
        -types aijcusparse,sellcuda,cmrscuda,ellrcuda,rgcsrcuda \
        -variants mat_ellr_max_fill:0,mat_rgcsr_max_fill:0,mat_rgcsr_max_fill:0+mat_rgcsr_sort_window:1000000000+mat_rgcsr_sort_min_saving:0,mat_cmrs_variant:padded,mat_cmrs_split_entries:0,mat_cmrs_split_entries:4096,mat_cmrs_variant:basic \
        -csv "$work/b.csv"
      cat "$work/b.csv" >>"$out/bench.csv"
      echo
    done
    # generated long rows: an arrow (one row as long as the matrix), a heavy power-law tail, 8 rows of n/20; CMRS's split off and on
    for p in "-problem arrow -n 2000000" "-problem powerlaw -n 1500000 -mean 16 -alpha 1.5" "-problem denserows -n 3000000 -dense_rows 8"; do
      timeout 100 tests/mpienv.sh build/examples/bench_spmv $p -reps 50 -types aijcusparse,cmrscuda,csrcuda,autocuda \
        -variants mat_cmrs_split_entries:0,mat_cmrs_split_entries:4096 -csv "$work/b.csv"
      cat "$work/b.csv" >>"$out/bench.csv"
      echo
    done
  } 2>&1 | tee "$out/bench.txt"
fi
if has cgfused; then
  # KSPCGFUSED against KSPCG (issue #16): CG + Jacobi on the Laplacians, each KSP type with aijcusparse and ours, one run;
  # on a machine of several GPUs also 2 ranks, one per GPU (CGFUSED_MPI_ONLY=1: only that)
  {
    [[ ${CGFUSED_MPI_ONLY:-0} == 1 ]] && problems=() || problems=("-problem lap3d7 -n 150" "-problem lap2d5 -n 2000")
    for p in "${problems[@]}"; do
      for k in cg cgfused; do
        timeout 150 tests/mpienv.sh build/examples/bench_spmv $p -reps 20 -types aijcusparse,sellcuda,cmrscuda,ellrcuda,rgcsrcuda -ksp $k -ksp_max_it 5000 -csv "$work/b.csv"
        cat "$work/b.csv" >>"$out/cgfused.csv"
        echo
      done
      # the main job's table: whole solves, first solve with setup, each type with PETSc's CG and with cgfused
      timeout 200 tests/mpienv.sh build/examples/solve $p -types aijcusparse,aijcusparse:cgfused,cmrscuda,cmrscuda:cgfused,ellrcuda:cgfused,rgcsrcuda:cgfused -repeat 3 -check
      echo
    done
    if (($(nvidia-smi -L | wc -l) >= 2)); then
      # the 2-rank target: a 3-D Laplacian of 16 M rows, mpiaijcusparse + KSPCG the baseline
      timeout 300 tests/mpienv.sh mpiexec -n 2 build/examples/solve -problem lap3d7 -n 252 -types aijcusparse,aijcusparse:cgfused,cmrscuda,cmrscuda:cgfused,ellrcuda,ellrcuda:cgfused,rgcsrcuda:cgfused -repeat 3 -check
    fi
  } 2>&1 | tee "$out/cgfused.txt"
fi
if has ab; then
  # the library packed against a baseline (make device-base, .device/base) in the same call: examples/solve with each,
  # alternating, AB_ROUNDS rounds; AB_PROBLEMS (;-separated), AB_TYPES and AB_ARGS choose what runs. Ends with each
  # type's best solve time with either library and the gain (base / new - 1)
  base=$work/base
  mkdir -p "$base"
  if ! xz -dc "$devdir/base/libpetscgpumat.so.xz" >"$base/libpetscgpumat.so" 2>/dev/null; then
    echo "ab: no baseline library in $devdir/base (make device-base at the baseline revision, then make device-pack)" | tee "$out/ab.txt"
  else
    IFS=';' read -r -a problems <<<"${AB_PROBLEMS:--problem lap3d7 -n 150;-problem lap2d5 -n 2000}"
    types=${AB_TYPES:-aijcusparse,aijcusparse:cgfused,cmrscuda:cgfused,ellrcuda:cgfused,rgcsrcuda:cgfused}
    {
      echo "ab: new = library $PETSCGPUMAT_LIBRARY_COMMIT, base = library $(cat "$devdir/base/COMMIT" 2>/dev/null)"
      for p in "${problems[@]}"; do
        for round in $(seq 1 "${AB_ROUNDS:-2}"); do
          for lib in new base; do
            echo "== $lib, round $round: $p ${AB_ARGS:-}"
            L=$LD_LIBRARY_PATH
            [[ $lib == base ]] && L=$base:$LD_LIBRARY_PATH
            LD_LIBRARY_PATH=$L timeout 150 tests/mpienv.sh build/examples/solve $p -types "$types" -repeat 3 -check ${AB_ARGS:-} 2>&1 |
              grep -E "^(type|[a-z]+cuda|aijcusparse)[a-z:]* *\|"
          done
        done
      done
    } 2>&1 | tee "$out/ab.txt"
    # examples/solve's rows: type | its | reason | rel. residual | error | solve (s) | ...
    awk -F'|' '/^== /{lib=$0; sub(/^== /, "", lib); sub(/,.*/, "", lib); prob=$0; sub(/^[^:]*: /, "", prob)}
      /[|]/ && $1 !~ /^type/ {t=$1; gsub(/ /, "", t); k=prob SUBSEP t; v=$6 + 0; b=lib SUBSEP k; if (!(b in best) || v < best[b]) best[b] = v; if (!(k in seen)) {seen[k]; order[++n] = k}}
      END {printf "\n%-48s %-22s %12s %12s %8s\n", "problem", "type", "new (s)", "base (s)", "gain"
           for (i = 1; i <= n; i++) {k = order[i]; split(k, a, SUBSEP); printf "%-48s %-22s %12.5g %12.5g %7.1f%%\n", a[1], a[2], best["new" SUBSEP k], best["base" SUBSEP k], 100 * (best["base" SUBSEP k] / best["new" SUBSEP k] - 1)}}' "$out/ab.txt" | tee -a "$out/ab.txt"
  fi
fi
if has sweep; then
  # ELLR-T: threads per row on matrices of growing mean row length (chooses the automatic default)
  T=mat_ellr_threads_per_row F=mat_ellr_max_fill:0
  {
    for p in "-problem lap2d5 -n 2000" "-problem lap3d7 -n 150" "-problem lap3d27 -n 100" "-problem rows -mean 16 -n 110" \
             "-problem rows -mean 32 -n 88" "-problem rows -mean 64 -n 70" "-problem rows -mean 128 -n 56" "-problem rows -mean 256 -n 45"; do
      timeout 60 tests/mpienv.sh build/examples/bench_spmv $p -reps 50 -types aijcusparse,sellcuda,ellrcuda \
        -variants $T:1+$F,$T:2+$F,$T:4+$F,$T:8+$F,$T:16+$F,$T:32+$F -csv "$work/s.csv"
      sed "s|^|${p// /_},|" "$work/s.csv" >>"$out/sweep.csv"
      # CMRS: height x block size (and sorting at the default height)
      timeout 80 tests/mpienv.sh build/examples/bench_spmv $p -reps 50 -types aijcusparse,cmrscuda -variants \
        $(for h in 1 2 3 4 6 8 12 16; do printf 'mat_cmrs_height:%s,' $h; done)$(for b in 64 256 512; do printf 'mat_cmrs_block_size:%s,' $b; done)mat_cmrs_sort:1 \
        -csv "$work/s.csv"
      sed "s|^|${p// /_},|" "$work/s.csv" >>"$out/sweep.csv"
      # RgCSR: group size x sort window (0 / global), padding guard off to see every fill
      timeout 60 tests/mpienv.sh build/examples/bench_spmv $p -reps 50 -types aijcusparse,rgcsrcuda -variants \
        $(for G in 32 64 128 256 512 1024; do for W in 0 1000000000; do printf 'mat_rgcsr_group_size:%s+mat_rgcsr_sort_window:%s+mat_rgcsr_max_fill:0,' $G $W; done; done) \
        -csv "$work/s.csv"
      sed "s|^|${p// /_},|" "$work/s.csv" >>"$out/sweep.csv"
    done
  } 2>&1 | tee "$out/sweep.txt"
fi
if has profile; then
  # Nsight Compute on the products of the formats (3-D 7-point Laplacian 150^3), for docs/performance.md
  ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  for t in cmrscuda ellrcuda rgcsrcuda aijcusparse; do
    timeout 100 tests/mpienv.sh "$ncu" --launch-skip 8 --launch-count 1 --kernel-name regex:'cmrs_mult|ellr_mult|rgcsr_mult|csrmv|spmv|SpMV' \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy \
      build/examples/bench_spmv -problem lap3d7 -n 150 -reps 4 -types $t 2>&1
  done | tee "$out/profile.txt" | grep -E "^  [a-z_]+.*\(|Duration|DRAM Throughput|Memory Throughput|L1/TEX Hit|L2 Hit|Achieved Occupancy|Registers Per|Block Size|Mem Busy|Max Bandwidth" | head -80
fi
if has sanitize; then
  # compute-sanitizer over the GPU products of the three formats (generated matrices, every variant; racecheck on
  # the kernels that use shared memory: CMRS's) and over the MPI types on 2 ranks (CUDA IPC halo exchange).
  # SAN_TOOLS picks the tools (default: all four), SAN_TARGETS the programs ("products mpi" by default).
  cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer /opt/nvidia/*/compute-sanitizer 2>/dev/null | head -1)
  san() { # label, timeout, tool, program and arguments (an mpiexec command line runs the sanitizer on each rank)
    local label=$1 t=$2 tool=$3 log
    shift 3
    log=$work/cs-$label-$tool.log
    echo "== compute-sanitizer --tool $tool: $label"
    if [[ $1 == mpiexec ]]; then
      timeout "$t" tests/mpienv.sh mpiexec -n 2 "$cs" --tool "$tool" --error-exitcode 9 --print-limit 20 "${@:4}" >"$log" 2>&1
    else
      timeout "$t" tests/mpienv.sh "$cs" --tool "$tool" --error-exitcode 9 --print-limit 20 "$@" >"$log" 2>&1
    fi
    echo "exit status $? ($tool); $(grep -c '^PASS' "$log") checks passed, $(grep -c '^FAIL' "$log") failed"
    grep -E '^FAIL' "$log" | head -5
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|========= (Invalid|Race|Uninitialized|Barrier|Program hit|Error)" "$log" | sort | uniq -c | head -12
  }
  for tool in ${SAN_TOOLS:-memcheck racecheck initcheck synccheck}; do
    targets=" ${SAN_TARGETS:-products mpi} "
    if [[ $tool == racecheck ]]; then
      [[ $targets == *" products "* ]] && san products 200 racecheck build/tests/gpu/test_gpu_products -types cmrscuda -quick
    else
      [[ $targets == *" products "* ]] && san products 150 $tool build/tests/gpu/test_gpu_products -types ellrcuda,rgcsrcuda,cmrscuda -quick
      [[ $targets == *" mpi "* && $tool != synccheck ]] && san mpi-np2 200 $tool mpiexec -n 2 build/tests/gpu/test_gpu_mpi -types ellrcuda,rgcsrcuda,cmrscuda -expect_ipc -quick
    fi
  done 2>&1 | tee "$out/sanitize.txt"
  tar -C "$work" -czf "$out/sanitize-logs.tar.gz" $(cd "$work" && ls cs-*.log)
fi
if has suite; then
  # the benchmark suite (tools/bench_suite.py): generated and real matrices x every type, one CSV; each matrix
  # under its own timeout, no case started after SUITE_BUDGET seconds (default 470: the whole call fits in 10 minutes).
  # Each set about fills a call on its own: SUITE_SETS=generated, then SUITE_SETS=real, one call each. SUITE_TARGET_NNZ
  # sets the real matrices' size; SUITE_TYPES and SUITE_VARIANTS (set, even empty) replace the suite's own types and variants;
  # SUITE_ONLY (comma-separated names) runs those matrices alone, e.g. the ones a first call left out for its budget
  PYTHONUNBUFFERED=1 timeout 575 python3 tools/bench_suite.py --bench build/examples/bench_spmv --matrices "$PETSCGPUMAT_MATRICES" \
    --sets "${SUITE_SETS:-generated,real}" --out "$out/suite.csv" --log "$out/suite-log.txt" --budget "${SUITE_BUDGET:-470}" ${SUITE_ONLY:+--only "$SUITE_ONLY"} \
    --target-nnz "${SUITE_TARGET_NNZ:-5e6}" ${SUITE_TYPES:+--types "$SUITE_TYPES"} ${SUITE_VARIANTS+--variants "$SUITE_VARIANTS"} 2>&1 | tee "$out/suite.txt"
fi
if has mpitests; then
  # the MPI types with one rank per GPU (2 and all GPUs of the machine), then 2 ranks sharing each GPU
  ngpu=$(nvidia-smi -L | wc -l)
  for np in $(printf "%s\n" 2 $ngpu $((2 * ngpu)) | sort -nu); do
    echo "== test_gpu_mpi on $np ranks, $ngpu GPU(s)"
    timeout 150 tests/mpienv.sh mpiexec --oversubscribe -n $np build/tests/gpu/test_gpu_mpi -types ellrcuda,rgcsrcuda,cmrscuda -expect_ipc \
      -matrices_dir "$PETSCGPUMAT_MATRICES" -matrices sherman1,rajat01,lp_e226,power,cage10 >"$work/mpi-$np.log" 2>&1
    echo "exit status $?: $(grep -c '^PASS' "$work/mpi-$np.log") passed, $(grep -c '^FAIL' "$work/mpi-$np.log") failed"
    grep -E '^(FAIL|# rank|# [a-z]+cuda: halo)|KSP' "$work/mpi-$np.log" | head -24
  done 2>&1 | tee "$out/mpitests.txt"
fi
if has mpiscale; then
  # MatMult and CG scaling over the GPUs of the machine, one rank per GPU (examples/bench_mpi): weak (200^3 = 8 M
  # rows per GPU) and strong (320^3 = 32.8 M rows); MPISCALE_TYPES picks the types
  ngpu=$(nvidia-smi -L | wc -l)
  types=${MPISCALE_TYPES:-aijcusparse,ellrcuda,ellrcuda+staged,ellrcuda+vecscatter,rgcsrcuda,cmrscuda}
  for np in $(seq 1 $ngpu); do
    [[ $np == 1 || $np == 2 || $np == 4 || $np == 8 || $np == $ngpu ]] || continue
    timeout 150 tests/mpienv.sh mpiexec -n $np build/examples/bench_mpi -types $types -grid 200,200,200 -weak -reps 50 -cg_its 200 -csv "$out/mpiscale.csv"
    timeout 240 tests/mpienv.sh mpiexec -n $np build/examples/bench_mpi -types $types -grid 320,320,320 -reps 50 -cg_its 200 -csv "$out/mpiscale.csv"
  done 2>&1 | tee "$out/mpiscale.txt"
fi
if has clients; then
  # PETSc's own tutorials with aijcusparse and our types on the GPU, 1 and 2 ranks (tests/clients/clients.py);
  # CLIENTS_ONLY / CLIENTS_RANKS / CLIENTS_TYPES select configurations, rank counts and our types; CLIENTS_REPEAT: runs
  # per type (medians); CLIENTS_VARIANT=name=options: the options of the types written T+name in CLIENTS_TYPES
  # (several separated by ';', e.g. "h8=-mat_gpumat_host_threads 8;t1=-mat_gpumat_upload_threads 1")
  mat=$work/clients-matrix.bin
  variants=()
  IFS=';' read -ra vs <<<"${CLIENTS_VARIANT:-}"
  for v in "${vs[@]}"; do [[ -n $v ]] && variants+=(--variant "$v"); done
  tests/mpienv.sh build/clients/ex2 -m 1000 -n 1000 -ksp_max_it 1 -ksp_view_mat "binary:$mat" -ksp_view_rhs "binary:$mat::append" >/dev/null 2>&1
  PYTHONUNBUFFERED=1 timeout ${CLIENTS_TIMEOUT:-500} tests/mpienv.sh python3 tests/clients/clients.py --gpu --bin build/clients --lib lib/libpetscgpumat.so \
    --out "$work/clients" --matfile "$mat" --only "${CLIENTS_ONLY:-}" --ranks "${CLIENTS_RANKS:-}" --repeat "${CLIENTS_REPEAT:-1}" --timeout 120 \
    ${CLIENTS_TYPES:+--types "$CLIENTS_TYPES"} "${variants[@]}" \
    --label "$(head -2 "$out/device.txt" | tail -1 | cut -d, -f1), $(date -u +%F), PETSc $(cat "$work/PETSC_VERSION" 2>/dev/null), library $PETSCGPUMAT_LIBRARY_COMMIT" 2>&1 | tee "$out/clients.txt"
  cp "$work/clients/clients.md" "$work/clients/clients.csv" "$out/" 2>/dev/null
  tar -C "$work/clients" -czf "$out/client-logs.tar.gz" client-logs
fi
if has script; then
  cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
  WORK=$work OUT=$out CS=$cs timeout ${SCRIPT_TIMEOUT:-540} bash "${DEVICE_SCRIPT:?DEVICE_SCRIPT names the script}" 2>&1 | tee "$out/script.txt"
fi
if has demo; then
  timeout 90 tests/mpienv.sh build/examples/solve -types aijcusparse,sellcuda,cmrscuda,ellrcuda,rgcsrcuda,aij -n 100 -log_view_gpu_time 2>&1 | tee "$out/demo.txt"
fi
exit $status
