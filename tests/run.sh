#!/usr/bin/env bash
# Run every test of petscgpumat and end with "N passed, N failed, N skipped".
#
# Test programs print one line per check: "PASS: ...", "FAIL: ...", "SKIP: ...: reason"; a program that
# exits non-zero without printing a FAIL counts as one failure (a crash is never a pass). GPU tests skip
# themselves, with the reason, where no CUDA device answers. Logs: $BUILD/test-logs/.
#
# Environment: BUILD (default build), PETSCGPUMAT_MATRICES (default ../shared/matrices beside the checkout),
# TEST_FILTER (run only tests whose name contains it, or one of its |-separated parts), VALGRIND=1 (CPU tests under valgrind memcheck instead of
# natively), PETSCGPUMAT_MEMCHECK=1 (also a valgrind pass over the CPU test programs; on by default when CI is set).
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD:-build}
[[ $build == /* ]] || build=$root/$build
matrices=${PETSCGPUMAT_MATRICES:-$root/../shared/matrices}
logs=$build/test-logs
mkdir -p "$logs"
run="$root/tests/mpienv.sh"
lib=${LIBDIR:-$root/lib}/libpetscgpumat.so
passed=0 failed=0 skipped=0
failures=$logs/failures.txt # every FAIL line, repeated before the summary (a CI that shows only its log's tail shows them)
: >"$failures"

# real matrices for the GPU tests: real or integer or pattern fields, various shapes (see MANIFEST.tsv)
real_matrices=bcsstk02,cage5,Franz6_id1959_aug,rajat01,mbeacxc,lp_e226,power,494_bus,sherman1,pde900,impcol_a,ash219,gre_1107,olm1000,can_1072,Erdos971,cage10,bcsstk13

count() { # name, exit code, log file
  local name=$1 rc=$2 log=$3 p f s
  p=$(grep -c '^PASS:' "$log")
  f=$(grep -c '^FAIL:' "$log")
  s=$(grep -c '^SKIP:' "$log")
  grep -E '^(FAIL|SKIP):' "$log" | sed "s|^|  [$name] |"
  if [[ $rc != 0 && $f == 0 ]]; then
    f=1
    echo "  [$name] FAIL: exited with status $rc (see $log):"
    tail -5 "$log" | sed 's/^/      /'
    echo "  [$name] FAIL: exited with status $rc (see $log)" >>"$failures"
  fi
  grep -E '^FAIL:' "$log" | sed "s|^|  [$name] |" >>"$failures"
  passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
  printf '%-34s %5d passed %3d failed %3d skipped\n' "$name" "$p" "$f" "$s"
}

selected() { # TEST_FILTER: substrings separated by |
  local f
  [[ -z ${TEST_FILTER:-} ]] && return 0
  IFS='|' read -ra filters <<<"$TEST_FILTER"
  for f in "${filters[@]}"; do [[ $1 == *"$f"* ]] && return 0; done
  return 1
}

# A test program: name, then the command line
prog() {
  local name=$1 log=$logs/$1.log rc
  shift
  selected "$name" || return 0
  "$run" "$@" >"$log" 2>&1
  rc=$?
  count "$name" $rc "$log"
}

# A check made here from a command's output: name, expected-pattern, command line
expect() {
  local name=$1 pattern=$2 log=$logs/$1.log rc
  shift 2
  selected "$name" || return 0
  "$run" "$@" >"$log" 2>&1
  rc=$?
  if [[ $rc == 0 ]] && grep -qE -- "$pattern" "$log"; then echo "PASS: $name" >>"$log"; else echo "FAIL: $name: expected /$pattern/ and status 0, got status $rc; last line: $(tail -1 "$log" | cut -c1-300)" >>"$log"; fi
  count "$name" 0 "$log"
}

# Two runs whose outputs must agree: name, command A (a string), command B (a string), and how they are compared
# (a command given the two output files: by default identical text)
same_output() {
  local name=$1 log=$logs/$1.log compare=${4:-"diff -q"}
  selected "$name" || return 0
  bash -c "$run $2" >"$log.a" 2>&1 && bash -c "$run $3" >"$log.b" 2>&1
  local rc=$?
  { echo "A: $2"; echo "B: $3"; diff "$log.a" "$log.b"; } >"$log"
  if [[ $rc == 0 ]] && $compare "$log.a" "$log.b" >/dev/null; then echo "PASS: $name" >>"$log"; else
    echo "FAIL: $name: outputs differ ($compare) or a run failed (status $rc); first difference: $(diff "$log.a" "$log.b" | grep -E '^[<>]' | head -2 | tr '\n' ' ' | cut -c1-300)" >>"$log"
  fi
  count "$name" 0 "$log"
}

# The same, numbers compared to a relative 1e-8 (two GPU types' products round differently in the last digits PETSc prints)
same_numbers() { same_output "$1" "$2" "$3" "python3 $root/tests/same_numbers.py"; }

vg=()
if [[ ${VALGRIND:-0} == 1 ]]; then
  vg=(valgrind -q --num-callers=50 --error-exitcode=3 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite --suppressions="$root/tests/valgrind.supp")
fi

device_info=$("$run" "$build/tests/cpu/test_gpumat_host" -device_only 2>/dev/null)
gpu_reason=$(sed -n 's/^# device: //p' <<<"$device_info" | head -1)
precision=$(sed -n 's/^# precision: //p' <<<"$device_info" | head -1)
petsc_version=${PETSCGPUMAT_PETSC_VERSION:-$(PETSC_DIR=${PETSC_DIR:-} "$root/config/petsc.sh" --print=version 2>/dev/null)}
echo "petscgpumat tests (PETSc ${petsc_version:-unknown}, device: ${gpu_reason:-unknown})"

# ---- CPU tests (CI) ----
prog cpu-ellr-layout "${vg[@]}" "$build/tests/cpu/test_ellr_layout"
prog cpu-gpumat-host "${vg[@]}" "$build/tests/cpu/test_gpumat_host"
# the value operations of a matrix of 2^20 entries or more on host threads, against AIJ's bit for bit (no valgrind: its size)
prog cpu-host-threads "$build/tests/cpu/test_gpumat_host" -large_rows 180000 -mat_gpumat_host_threads 4 -malloc_dump -checkfunctionlist
prog cpu-rgcsr-layout "${vg[@]}" "$build/tests/cpu/test_rgcsr_layout"
prog cpu-cmrs-layout "${vg[@]}" "$build/tests/cpu/test_cmrs_layout"
prog cpu-choose-rule "${vg[@]}" "$build/tests/cpu/test_choose_rule" -malloc_dump -checkfunctionlist
# KSPCGFUSED on host vectors: PETSc's own CG, bit for bit; its wrapper of KSPCG leaves nothing behind
prog cpu-cgfused-host "${vg[@]}" "$build/tests/gpu/test_gpu_cgfused" -host -malloc_dump -checkfunctionlist
prog cpu-bench-metrics "$build/tests/cpu/test_metrics"
# bench_spmv's KSP mode: the time per iteration in its CSV, under the header the suite's driver expects
expect cpu-bench-ksp-csv 'same header ksp_it_us [0-9]' bash -c "'$build/examples/bench_spmv' -problem lap2d5 -n 20 -types aij -ksp cg -csv '$logs/bench-ksp.csv' >/dev/null &&
  python3 -c 'import csv, sys; sys.path.insert(0, \"$root/tools\"); import bench_suite; r = list(csv.reader(open(\"$logs/bench-ksp.csv\"))); d = dict(zip(r[0], r[1])); print((\"same header\" if r[0] == bench_suite.HEADER else \"header differs\"), \"ksp_it_us\", d[\"ksp_it_us\"] if float(d[\"ksp_it_us\"]) > 0 else \"none\")'"
prog cpu-matrixmarket "${vg[@]}" "$build/tests/cpu/test_matrixmarket" -matrices_dir "$matrices"
prog cpu-matrixmarket-np2 mpiexec -n 2 "$build/tests/cpu/test_matrixmarket" -matrices_dir "$matrices"
# the MPI types on 1, 2 and 3 ranks (creation paths, blocks, options, host products)
for np in 1 2 3; do
  prog cpu-mpi-types-np$np mpiexec --oversubscribe -n $np "$build/tests/cpu/test_mpi_host" -matrices_dir "$matrices"
done
# the fuzzer's seed corpus and every input it ever crashed on (tests/fuzz/regressions/), through the normal build
prog cpu-fuzz-corpus "${vg[@]}" "$build/tests/fuzz/test_fuzz_corpus" -root "$root" ${vg:+-malloc_debug 0}
# -help lists every option of each format (distinct option names in the help text of MatSetFromOptions with -mat_type)
helpcount() { # type, option pattern
  echo "'$build/tests/cpu/test_options_help' -help -mat_type $1 | grep -E '^ +-mat_' | grep -oE -- '$2' | sort -u | wc -l"
}
# the library's layers (docs/architecture.md): the base names no format, a format no other one, registration on top
if selected cpu-architecture-layers; then
  python3 "$root/tests/check_layers.py" "$root" >"$logs/cpu-architecture-layers.log" 2>&1
  count cpu-architecture-layers $? "$logs/cpu-architecture-layers.log"
fi
# tools/kernel_equivalence.py (kernel refactors checked without a GPU) on a file as committed: every kernel the same.
# It compiles with the build's nvcc and flags (make print-CUDAC), which a machine that only runs a carried build (the
# lent GPU's) cannot configure.
if selected cpu-kernel-equivalence-tool && ! make -s -C "$root" print-CUDAC >/dev/null 2>&1; then
  echo "  [cpu-kernel-equivalence-tool] SKIP: the build cannot be configured here (make print-CUDAC failed: a carried build)"
  skipped=$((skipped + 1))
else
  expect cpu-kernel-equivalence-tool '^all kernels the same$' python3 "$root/tools/kernel_equivalence.py" HEAD src/ellr/ellr_kernels.cu
fi
# the README's options table: one table, every option -help lists (seq types and the MPI type), with its default
if selected cpu-readme-options-match-help; then
  # stdout only: a message on stderr (mpiexec's, or a rank's) can land inside a help line and hide its option
  for t in ellrcuda cmrscuda rgcsrcuda csrcuda autocuda; do "$run" "$build/tests/cpu/test_options_help" -help -mat_type $t >"$logs/help-$t.txt" 2>"$logs/help-$t.err"; done
  "$run" mpiexec -n 2 "$build/tests/cpu/test_options_help" -help -mat_type ellrcuda >"$logs/help-mpi.txt" 2>"$logs/help-mpi.err"
  python3 "$root/tests/check_readme_options.py" "$root/README.md" "$logs"/help-{ellrcuda,cmrscuda,rgcsrcuda,csrcuda,autocuda,mpi}.txt >"$logs/cpu-readme-options-match-help.log" 2>&1
  count cpu-readme-options-match-help $? "$logs/cpu-readme-options-match-help.log"
fi
expect cpu-help-lists-ellr-options '^4$' bash -c "$(helpcount ellrcuda '-mat_(ellr_(threads_per_row|max_fill)|gpumat_(compressed_rows|host_fallback_error))')"
expect cpu-help-lists-rgcsr-options '^5$' \
  bash -c "$(helpcount rgcsrcuda '-mat_rgcsr_(group_size|sort_window|sort_min_saving|threads_per_row|max_fill)')"
expect cpu-help-lists-cmrs-options '^9$' \
  bash -c "$(helpcount cmrscuda '-mat_cmrs_(height|block_size|sort|variant|buffer_columns|warp_strips|unroll|lane_entries|device_convert)')"
expect cpu-help-lists-csr-options '^1$' bash -c "$(helpcount csrcuda '-mat_csr_spmv_alg')"
# the choosing type lists its own option and every candidate's
expect cpu-help-lists-auto-options '^5$' bash -c "$(helpcount autocuda '-mat_(auto_timed|cmrs_height|ellr_max_fill|rgcsr_group_size|csr_spmv_alg)')"
expect cpu-help-lists-mpi-options '^5$' \
  bash -c "mpiexec -n 2 $(helpcount ellrcuda '-mat_(ellr_(threads_per_row|max_fill)|gpumat_(halo_(vecscatter|ipc)|host_fallback_error))')"
# every public setter has its getter (the README promises them)
expect cpu-every-setter-has-a-getter '^0 setters without a getter$' bash -c "h='$root/include/petscgpumat.h';
  n=0; for f in \$(grep -oE 'Mat[A-Za-z]+Set[A-Za-z]+\\(' \"\$h\" | tr -d '(' | sort -u); do g=\${f/Set/Get};
  grep -q \"\$g(\" \"\$h\" || { echo \"missing \$g\"; n=\$((n + 1)); }; done; echo \"\$n setters without a getter\""
# the reader is chosen by content, not by the name: an upper-case .MTX (plain) and a gzip file without .gz
if selected cpu-solve-reads-mtx-by-content && [[ -f $matrices/cage5.mtx.gz ]]; then
  gzip -dc "$matrices/cage5.mtx.gz" >"$logs/CAGE5.MTX" && cp "$matrices/cage5.mtx.gz" "$logs/cage5-gzip-without-extension"
fi
if [[ -f $matrices/cage5.mtx.gz ]]; then
  expect cpu-solve-reads-mtx-by-content 'aij +\| +16 \| CONVERGED' bash -c "'$build/examples/solve' -types aij -f '$logs/CAGE5.MTX' -ksp_type gmres &&
    '$build/examples/solve' -types aij -f '$logs/cage5-gzip-without-extension' -ksp_type gmres"
elif selected cpu-solve-reads-mtx-by-content; then
  echo "  [cpu-solve-reads-mtx-by-content] SKIP: $matrices/cage5.mtx.gz not found (set PETSCGPUMAT_MATRICES)"
  skipped=$((skipped + 1))
fi
expect cpu-solve-aij 'aij ' "$build/examples/solve" -types aij -n 12 -check
expect cpu-solve-aij-np2 'aij ' mpiexec -n 2 "$build/examples/solve" -types aij -n 12 -check
# a KSP type per entry: KSPCGFUSED on host vectors is PETSc's CG (the same iteration count)
expect cpu-solve-ksp-per-type 'aij:cgfused +\| +30 \|' "$build/examples/solve" -types aij,aij:cgfused -n 12 -check
# an unmodified PETSc tutorial with -ksp_type cgfused through -dll_append: on host vectors it is PETSc's CG, the same
# output to the character, with PETSc's own leak and composed-function checks
ex2cg="-m 40 -n 40 -ksp_monitor_short -pc_type jacobi -vec_type standard -malloc_dump -checkfunctionlist"
same_output cpu-petsc-ex2-ksp-cgfused "'$build/tests/petsc_ex2' $ex2cg -ksp_type cg" "'$build/tests/petsc_ex2' $ex2cg -dll_append '$lib' -ksp_type cgfused"
# -help lists KSPCGFUSED's own options in an unmodified program (both, each once)
expect cpu-help-lists-cgfused-options '^2$' bash -c "'$build/tests/petsc_ex2' -m 8 -n 8 -dll_append '$lib' -ksp_type cgfused -help | grep -oE -- '^ +-ksp_cgfused_(fast|lookahead):' | sort -u | wc -l"
# -dm_mat_type under a root name of ours is read as its aij name: DMDA's interpolation matrix is then ours too, not
# host AIJ (PCMG with the transfers on the host otherwise), in an unmodified PETSc tutorial
if [[ -x $build/clients/ex45 ]]; then
  expect cpu-ex45-dm-mat-type-root-name '^all ours$' bash -c "set -o pipefail; '$build/clients/ex45' -da_grid_x 9 -da_grid_y 9 -da_grid_z 9 -pc_type mg -pc_mg_levels 2 \
    -dll_append '$lib' -dm_mat_type cmrscuda -mat_view ::ascii_info -malloc_dump -checkfunctionlist |
    awk '/type: seqaijcmrscuda\$/ {o++} /type: seqaij\$/ {h++} END {print (o >= 3 && !h) ? \"all ours\" : \"host AIJ: \" h + 0 \", ours: \" o + 0}'"
fi
if [[ $gpu_reason != available ]]; then
  expect cpu-solve-says-gpu-skipped 'GPU types skipped' "$build/examples/solve" -n 8
  expect cpu-solve-says-why-no-speed-up "speed-ups are relative to aijcusparse, which was skipped" "$build/examples/solve" -types aijcusparse,aij,cmrscuda -n 8
  expect cpu-solve-host-check-says-refused 'Host check of ellrcuda: .*the GPU build would refuse this layout \(fill above -mat_ellr_max_fill 1.1\)' \
    "$build/examples/solve" -types aij,ellrcuda -n 8 -mat_ellr_max_fill 1.1
  expect cpu-solve-host-check 'Host check of ellrcuda: .* keeps every entry: yes' "$build/examples/solve" -types aij,ellrcuda -n 8
  expect cpu-bench-says-gpu-skipped 'GPU types skipped' "$build/examples/bench_spmv"
  # unmodified PETSc tutorial through -dll_append: ellrcuda with host vectors gives aij's output
  # no usable device: products of our types run on the host, counted in -log_view's GPUMatHostFallback, an error on request
  expect cpu-host-fallback-event 'GPUMatHostFallback +[1-9]' "$build/tests/petsc_ex2" -m 20 -n 20 -dll_append "$lib" -mat_type ellrcuda -log_view
  expect cpu-host-fallback-error 'MatMult runs on the host: no usable CUDA device' \
    bash -c "'$build/tests/petsc_ex2' -m 20 -n 20 -dll_append '$lib' -mat_type cmrscuda -mat_gpumat_host_fallback_error 2>&1 || true"
  same_output cpu-petsc-ex2-dll-append "'$build/tests/petsc_ex2' -m 40 -n 40 -ksp_monitor_short -mat_type aij" \
    "'$build/tests/petsc_ex2' -m 40 -n 40 -ksp_monitor_short -dll_append '$lib' -mat_type ellrcuda -vec_type standard"
fi
# PETSc's preconditioners that extract, factor and destroy sub-matrices of our types (PCASM, PCGASM, GAMG, block
# Jacobi), on 2 ranks with host vectors, with the checks PETSc's own test harness adds (-malloc_dump: no leak;
# -checkfunctionlist: no composed function left on a destroyed object): the same output as MATAIJ
# (regressions: PCASM + LU crashed in the destroy of its sub-matrices; GAMG and PCGASM leaked them)
checks="-malloc_debug -malloc_dump -checkfunctionlist"
# where a device is usable the sub-solves factor on it (cuSPARSE), so the last printed digit may differ from MATAIJ's
compare_ex2=$([[ $gpu_reason == available ]] && echo "python3 $root/tests/same_numbers.py" || echo "diff -q")
for pc in "asm -sub_pc_type lu" "asm -pc_asm_blocks 4 -pc_asm_type basic -sub_pc_type lu" "gasm" "gamg" "bjacobi -sub_pc_type ilu"; do
  name=cpu-petsc-ex2-np2-${pc%% *}$([[ $pc == *blocks* ]] && echo 4)
  for t in ellrcuda cmrscuda rgcsrcuda csrcuda autocuda; do
    same_output "$name-$t" "mpiexec -n 2 '$build/tests/petsc_ex2' -m 24 -n 24 -ksp_monitor_short -pc_type $pc -mat_type aij $checks" \
      "mpiexec -n 2 '$build/tests/petsc_ex2' -m 24 -n 24 -ksp_monitor_short -pc_type $pc -dll_append '$lib' -mat_type $t -vec_type standard $checks" "$compare_ex2"
  done
done

# PETSc's own tutorials (tests/clients/configs.tsv: PCMG, GAMG, block Jacobi/ASM + ILU, SNES with coloring, MatLoad,
# re-assembly; 1 and 2 ranks): our types on host vectors give MATAIJ's iterations, no NaN (the GPU run, with
# aijcusparse as the baseline, is tools/device-run.sh clients)
if selected cpu-clients && [[ $gpu_reason == available ]]; then
  # MatCreateVecs() gives device vectors where a device is usable, so the host-vector half is not what runs here
  echo "  [cpu-clients] SKIP: a usable GPU: the client harness runs its GPU half here (tools/device-run.sh clients)"
  skipped=$((skipped + 1))
elif selected cpu-clients; then
  "$run" "$build/clients/ex2" -m 100 -n 100 -ksp_max_it 1 -ksp_view_mat "binary:$logs/clients-matrix.bin" \
    -ksp_view_rhs "binary:$logs/clients-matrix.bin::append" >/dev/null 2>&1
  "$run" python3 "$root/tests/clients/clients.py" --bin "$build/clients" --lib "$lib" --out "$logs/clients" \
    --matfile "$logs/clients-matrix.bin" --label "CPU run: our types on host vectors against MATAIJ" >"$logs/cpu-clients.log" 2>&1
  count cpu-clients $? "$logs/cpu-clients.log"
fi

# petsc4py (examples/solve_petsc4py.py): the plugin loaded through PETSc's options from Python, -mat_type cmrscuda,
# the same CG iterations as MATAIJ; needs petsc4py built for this PETSc (config/petsc4py.sh; .ci/run builds it)
if selected cpu-petsc4py; then
  if p4p=$(PETSC_DIR=${PETSC_DIR:-} "$root/config/petsc4py.sh" --if-built 2>/dev/null); then
    expect cpu-petsc4py 'same iterations as MATAIJ: yes' env PYTHONPATH="$p4p${PYTHONPATH:+:$PYTHONPATH}" python3 "$root/examples/solve_petsc4py.py" -lib "$lib" -mat_type cmrscuda -n 12
  else
    echo "  [cpu-petsc4py] SKIP: no petsc4py built for PETSc ${petsc_version:-?} (config/petsc4py.sh builds it)"
    skipped=$((skipped + 1))
  fi
fi

# ---- memcheck of the CPU test programs (valgrind; on by default in CI, PETSCGPUMAT_MEMCHECK=1 elsewhere) ----
if [[ ${PETSCGPUMAT_MEMCHECK:-${CI:-0}} != 0 && ${PETSCGPUMAT_MEMCHECK:-1} != 0 && ${VALGRIND:-0} != 1 ]]; then
  if command -v valgrind >/dev/null; then
    mc=(valgrind -q --num-callers=50 --error-exitcode=3 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite --suppressions="$root/tests/valgrind.supp")
    prog memcheck-ellr-layout "${mc[@]}" "$build/tests/cpu/test_ellr_layout"
    prog memcheck-gpumat-host "${mc[@]}" "$build/tests/cpu/test_gpumat_host"
    prog memcheck-rgcsr-layout "${mc[@]}" "$build/tests/cpu/test_rgcsr_layout"
    prog memcheck-cmrs-layout "${mc[@]}" "$build/tests/cpu/test_cmrs_layout"
    prog memcheck-matrixmarket "${mc[@]}" "$build/tests/cpu/test_matrixmarket" -matrices_dir "$matrices"
    prog memcheck-mpi-types-np2 mpiexec -n 2 "${mc[@]}" "$build/tests/cpu/test_mpi_host" -matrices_dir "$matrices"
    prog memcheck-fuzz-corpus "${mc[@]}" "$build/tests/fuzz/test_fuzz_corpus" -root "$root" -malloc_debug 0
  else
    echo "  [memcheck] SKIP: valgrind is not installed"
    skipped=$((skipped + 1))
  fi
fi

# ---- bounded fuzzing of the Matrix Market reader (libFuzzer + ASan/UBSan; FUZZ_SECONDS, default 60; 0 skips it) ----
if selected fuzz-matrixmarket; then
  if [[ ${FUZZ_SECONDS:-60} == 0 ]]; then
    echo "  [fuzz-matrixmarket] SKIP: FUZZ_SECONDS=0"
    skipped=$((skipped + 1))
  else
    BUILD="$build" "$root/tests/fuzz/fuzz.sh" run "${FUZZ_SECONDS:-60}" >"$logs/fuzz-matrixmarket.log" 2>&1
    count fuzz-matrixmarket $? "$logs/fuzz-matrixmarket.log"
  fi
fi

# MatProduct of our types (every product type, sparse and dense operands) against SeqAIJ's: on the device where
# one is usable (cuSPARSE through aijcusparse shadows), else the host path; no leak, nothing left composed
prog matproduct "$build/tests/gpu/test_gpu_matproduct" -types ellrcuda,rgcsrcuda,cmrscuda,csrcuda,autocuda -mat_ellr_max_fill 0 -mat_rgcsr_max_fill 0 -malloc_dump -checkfunctionlist
# the same with cuSPARSE SpMM (through the aijcusparse shadow) instead of the formats' block kernels for dense blocks
prog matproduct-spmm "$build/tests/gpu/test_gpu_matproduct" -types ellrcuda,rgcsrcuda,cmrscuda,csrcuda,autocuda -mat_ellr_max_fill 0 -mat_rgcsr_max_fill 0 -mat_gpumat_block_kernel 0 -malloc_dump -checkfunctionlist
# sparse results that are cuSPARSE's own MATSEQAIJCUSPARSE instead of the operand's type over it
prog matproduct-cusparse-result "$build/tests/gpu/test_gpu_matproduct" -types ellrcuda,rgcsrcuda,cmrscuda,csrcuda,autocuda -mat_ellr_max_fill 0 -mat_rgcsr_max_fill 0 -mat_gpumat_product_same_type 0 -malloc_dump -checkfunctionlist

# ---- GPU tests (the lent GPU machine) ----
prog gpu-products "$build/tests/gpu/test_gpu_products" -types ellrcuda,rgcsrcuda,cmrscuda,csrcuda,autocuda -matrices_dir "$matrices" -matrices "$real_matrices"
prog gpu-ksp "$build/tests/gpu/test_gpu_ksp" -types ellrcuda,rgcsrcuda,cmrscuda,csrcuda,autocuda -checkfunctionlist
# the dense LU's warm-up thread not started when turned off, or where no dense LU can be taken (gpu-ksp checks it runs)
prog gpu-ksp-dense-lu-warmup-off "$build/tests/gpu/test_gpu_ksp" -types cmrscuda -warmup_only -mat_gpumat_dense_lu_warmup 0 -malloc_dump -checkfunctionlist
prog gpu-ksp-dense-lu-warmup-no-dense "$build/tests/gpu/test_gpu_ksp" -types ellrcuda -warmup_only -mat_gpumat_dense_lu_max 0 -malloc_dump -checkfunctionlist
# the same checks in two processes that may use every CPU, one per GPU (each stages its uploads with host threads on its
# own device: src/base/gpumat_staged_copy.c); not on one shared GPU, whose memory the out-of-memory checks fill
if [[ $gpu_reason == available && $(nvidia-smi -L 2>/dev/null | grep -c '^GPU') -lt 2 ]]; then
  selected gpu-ksp-staged-np2 && { echo "  [gpu-ksp-staged-np2] SKIP: needs two GPUs (one per process: its out-of-memory checks fill a GPU's memory)"; skipped=$((skipped + 1)); }
else
  prog gpu-ksp-staged-np2 mpiexec -n 2 --bind-to none "$build/tests/gpu/test_gpu_ksp" -types cmrscuda,ellrcuda
fi
# KSPCGFUSED's fused iterations against KSPCG (iterations, reasons, solutions; the same bits run to run)
prog gpu-cgfused "$build/tests/gpu/test_gpu_cgfused" -types cmrscuda,ellrcuda,rgcsrcuda,autocuda,aijcusparse -malloc_dump -checkfunctionlist
# the same on 2 ranks: the parallel types, p'w and the sums reduced over the ranks
prog gpu-cgfused-np2 mpiexec -n 2 "$build/tests/gpu/test_gpu_cgfused" -types cmrscuda,ellrcuda,rgcsrcuda,aijcusparse -malloc_dump -checkfunctionlist
# compressed rows (what the MPI types' off-diagonal blocks use) on every format and variant
prog gpu-products-compressed-rows "$build/tests/gpu/test_gpu_products" -types ellrcuda,rgcsrcuda,cmrscuda,csrcuda,autocuda -quick -matrices_dir "$matrices" -matrices bcsstk02,rajat01,lp_e226,power,impcol_a -mat_gpumat_compressed_rows
# CMRS with heavy rows everywhere (rows longer than 16 entries summed by warps of their own), empty rows compressed or not:
# every product of the program against the float64 reference
prog gpu-products-cmrs-heavy-rows "$build/tests/gpu/test_gpu_products" -types cmrscuda -quick -matrices_dir "$matrices" -matrices bcsstk02,rajat01,lp_e226,power,impcol_a -mat_cmrs_heavy_rows on -mat_cmrs_heavy_length 16
prog gpu-products-cmrs-heavy-rows-compressed "$build/tests/gpu/test_gpu_products" -types cmrscuda -quick -matrices_dir "$matrices" -matrices bcsstk02,rajat01,lp_e226,power,impcol_a -mat_cmrs_heavy_rows on -mat_cmrs_heavy_length 16 -mat_gpumat_compressed_rows
# the MPI types: 2 ranks sharing the GPU (one GPU per rank where the machine has several)
prog gpu-mpi-np2 mpiexec -n 2 "$build/tests/gpu/test_gpu_mpi" -types ellrcuda,rgcsrcuda,cmrscuda,csrcuda,autocuda -matrices_dir "$matrices" -matrices sherman1,rajat01,lp_e226,power,cage10
if [[ $gpu_reason == available ]]; then
  expect gpu-solve-check 'ellrcuda' "$build/examples/solve" -types aijcusparse,ellrcuda,rgcsrcuda,cmrscuda,sellcuda,aij -n 32 -check
  expect gpu-solve-check-np2 'cmrscuda +\|' mpiexec -n 2 "$build/examples/solve" -types aijcusparse,ellrcuda,rgcsrcuda,cmrscuda -n 32 -check
  expect gpu-log-view-events 'GPUMatBuild +1 ' "$build/examples/solve" -types ellrcuda -n 16 -log_view
  expect gpu-log-view-choose-event 'GPUMatChoose +1 ' "$build/examples/solve" -types autocuda -mat_auto_timed -n 16 -log_view
  expect gpu-log-view-halo-event 'GPUMatHaloSetUp +1 ' mpiexec -n 2 "$build/examples/solve" -types cmrscuda -n 16 -log_view
  expect gpu-mat-view-info 'device copy up to date' "$build/examples/solve" -types ellrcuda -n 16 -ksp_view_mat ::ascii_info
  # how large uploads go, and why (src/base/gpumat_staged_copy.c): a process that may use several CPUs stages them with host
  # threads; a rank bound to one core (Open MPI's default for 1-2 ranks) keeps CUDA's copy
  expect gpu-mat-view-upload-staged 'uploads and downloads of 16 MB or more: staged through pinned buffers by [0-9]+ host threads' "$build/examples/solve" -types cmrscuda -n 16 -ksp_view_mat ::ascii_info
  expect gpu-mat-view-upload-bound "uploads and downloads: CUDA's pageable copy \\(automatic: 1 CPU" mpiexec -n 1 --bind-to core "$build/examples/solve" -types cmrscuda -n 16 -ksp_view_mat ::ascii_info
  # GAMG on 2 ranks (SNES ex19): no NaN in 9 runs (issue #13: a receiver's IPC buffer was poisoned after its sender
  # wrote, 4 NaN in 12 runs before the fix); every product checked against the host once (-mat_gpumat_check_products)
  gamg="-da_refine 5 -pc_type gamg -snes_max_it 1 -ksp_max_it 10 -ksp_converged_reason -dm_vec_type cuda -dll_append $lib"
  expect gpu-ex19-gamg-np2-no-nan '^0 NaN in 9 runs$' bash -c "n=0; for t in aijellrcuda aijcmrscuda aijrgcsrcuda; do for i in 1 2 3; do
    mpiexec -n 2 '$build/clients/ex19' $gamg -dm_mat_type \$t 2>&1 | grep -q NANORINF && n=\$((n + 1)); done; done; echo \"\$n NaN in 9 runs\""
  # KSPMatSolve with PCMG (Galerkin) on 7 right-hand sides in blocks of 4 (PETSc's KSP test ex26 matcycles; products with
  # MATDENSECUDA blocks): the same residuals as aijcusparse on 2 ranks (on 1 rank aijcusparse itself stops: PETSc has
  # no product of a MATSEQDENSECUDA and a MATSEQAIJCUSPARSE)
  for np in 2; do
    mc="-ksp_view_final_residual -ksp_type preonly -pc_type mg -mx 5 -my 5 -pc_mg_levels 3 -pc_mg_galerkin -ksp_monitor -mg_levels_ksp_type richardson -mg_levels_pc_type jacobi -nrhs 7 -ksp_matsolve_batch_size 4 -dm_vec_type cuda -mat_type densecuda -malloc_dump -checkfunctionlist"
    same_numbers gpu-ex26-matcycles-np$np "mpiexec -n $np '$build/clients/ex26' $mc -dm_mat_type aijcusparse" "mpiexec -n $np '$build/clients/ex26' $mc -dm_mat_type aijcmrscuda -dll_append '$lib'"
  done
  expect gpu-ex19-gamg-np2-check-products 'DIVERGED_ITS iterations 10' mpiexec -n 2 "$build/clients/ex19" $gamg -dm_mat_type aijcmrscuda -mat_gpumat_check_products
  # SNES ex58 (PETSc's suite test ex58_1): a VI whose reduced-space DMs make host vectors, with Galerkin PCMG: converges
  # with our types (Galerkin operators of our type, whose products check their vectors; as MATSEQAIJCUSPARSE results,
  # -mat_gpumat_product_same_type 0, they misread host vectors: docs/petsc-test-suite.md). aijcusparse itself fails
  # here, so no comparison.
  for t in aijellrcuda aijcmrscuda; do
    expect gpu-ex58-vi-galerkin-$t 'Nonlinear solve converged' "$build/clients/ex58" -snes_type vinewtonrsls -pc_type mg -pc_mg_galerkin pmat -pc_mg_type full -da_refine 5 -snes_max_it 100 -snes_converged_reason -dll_append "$lib" -mat_type ${t#aij} -dm_mat_type $t -vec_type cuda -dm_vec_type cuda
  done
  if [[ $precision != single ]]; then
    same_numbers gpu-petsc-ex2-dll-append "'$build/tests/petsc_ex2' -m 60 -n 60 -ksp_monitor_short -mat_type aijcusparse -vec_type cuda" \
      "'$build/tests/petsc_ex2' -m 60 -n 60 -ksp_monitor_short -dll_append '$lib' -mat_type ellrcuda -vec_type cuda"
    same_numbers gpu-petsc-ex2-dll-append-cmrs "'$build/tests/petsc_ex2' -m 60 -n 60 -ksp_monitor_short -mat_type aijcusparse -vec_type cuda" \
      "'$build/tests/petsc_ex2' -m 60 -n 60 -ksp_monitor_short -dll_append '$lib' -mat_type cmrscuda -vec_type cuda"
    same_numbers gpu-petsc-ex2-dll-append-rgcsr "'$build/tests/petsc_ex2' -m 60 -n 60 -ksp_monitor_short -mat_type aijcusparse -vec_type cuda" \
      "'$build/tests/petsc_ex2' -m 60 -n 60 -ksp_monitor_short -dll_append '$lib' -mat_type rgcsrcuda -mat_rgcsr_sort_window 3600 -vec_type cuda"
    # the fused path in an unmodified tutorial: PETSc's CG's residual history to PETSc's short-format digits
    ex2cg="-m 60 -n 60 -ksp_monitor_short -pc_type jacobi -mat_type aijcusparse -vec_type cuda -malloc_dump -checkfunctionlist"
    same_numbers gpu-petsc-ex2-ksp-cgfused "'$build/tests/petsc_ex2' $ex2cg -ksp_type cg" "'$build/tests/petsc_ex2' $ex2cg -dll_append '$lib' -ksp_type cgfused"
  else # single precision: the residual histories differ in their last digits between formats; the solve must converge
    for t in ellrcuda cmrscuda rgcsrcuda; do
      expect gpu-petsc-ex2-dll-append-$t 'Norm of error [0-9.e+-]+,? [Ii]terations [0-9]+' "$build/tests/petsc_ex2" -m 60 -n 60 -dll_append "$lib" -mat_type $t -vec_type cuda
    done
  fi
else
  for t in gpu-solve-check gpu-solve-check-np2 gpu-log-view-events gpu-log-view-choose-event gpu-log-view-halo-event gpu-mat-view-info gpu-mat-view-upload-staged gpu-mat-view-upload-bound gpu-ex19-gamg-np2-no-nan gpu-ex26-matcycles-np2 gpu-ex19-gamg-np2-check-products gpu-petsc-ex2-dll-append gpu-petsc-ex2-dll-append-rgcsr gpu-petsc-ex2-dll-append-cmrs gpu-petsc-ex2-ksp-cgfused gpu-ex58-vi-galerkin-aijellrcuda gpu-ex58-vi-galerkin-aijcmrscuda; do
    selected $t && { echo "  [$t] SKIP: $gpu_reason"; skipped=$((skipped + 1)); }
  done
fi

# one report from the reports of a suite's shards (the GPU half runs in calls of under 10 minutes): made-up shards
expect cpu-petsc-suite-merge '^\| \*\*total\*\* \| 3 \| 3 \|$' python3 "$root/tests/petsc_suite/petsc_suite.py" --merge "$root/tests/petsc_suite/fixtures/shard1" "$root/tests/petsc_suite/fixtures/shard2" --out "$build/petsc-suite-merge"
prog cpu-petsc-suite python3 "$root/tests/petsc_suite/petsc_suite.py" --ci --report-lines --lib "$lib" --build "$build/petsc-suite" --out "$build/petsc-suite-out" # PETSc's own KSP/SNES tests, ours vs MATAIJ (docs/petsc-test-suite.md)
if [[ -s $failures ]]; then
  echo "Failures (repeated from above; logs in $logs):"
  cat "$failures"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[[ $failed == 0 ]]
