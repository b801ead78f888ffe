#!/usr/bin/env bash
# Fuzzing of the Matrix Market reader (src/io/matrixmarket.c) with libFuzzer.
#
#   tests/fuzz/fuzz.sh build          build $BUILD/fuzz/fuzz_matrixmarket (clang, -fsanitize=fuzzer,address,undefined)
#   tests/fuzz/fuzz.sh run [SECONDS]  build, then fuzz for SECONDS (default $FUZZ_SECONDS or 60), prints one
#                                     "PASS: ..." / "FAIL: ..." / "SKIP: ...: reason" line (the test-suite format)
#   tests/fuzz/fuzz.sh repro FILE...  run the harness once on each file (a crash input, a regression input)
#
# The reader is compiled into the harness with the sanitizers; PETSc (PETSC_DIR, else config/petsc.sh) is linked
# as built. A clean PETSc error is a pass; crashes, ASan/UBSan reports, leaks, timeouts (-timeout), memory beyond
# -rss_limit_mb/-malloc_limit_mb and undocumented error codes are failures: the input is saved in
# $BUILD/fuzz/artifacts/ (and printed in base64 in the FAIL line, for a CI machine's findings) -- copy it to
# tests/fuzz/regressions/ and fix the reader. The corpus grows in $BUILD/fuzz/corpus/ (seeded from
# tests/fuzz/seeds/, kept between runs).
#
# Environment: BUILD (default build), PETSC_DIR/PETSC_ARCH, FUZZ_SECONDS, FUZZ_JOBS (parallel fuzzers, default 1),
# FUZZ_INSTALL=1 (apt-get install clang and libclang-rt-dev when missing; the default where CI is set), CLANG.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD:-build}
[[ $build == /* ]] || build=$root/$build
out=$build/fuzz
bin=$out/fuzz_matrixmarket
cmd=${1:-run}
shift || true

skip() { echo "SKIP: fuzz-matrixmarket: $*"; exit 0; }

find_clang() {
  local c
  for c in ${CLANG:-} clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14; do
    command -v "$c" >/dev/null 2>&1 && { echo "$c"; return 0; }
  done
  return 1
}

# clang with a libFuzzer runtime, or a reason on stdout and status 1
have_libfuzzer() {
  local cc=$1 t
  t=$(mktemp -d)
  printf '#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' >"$t/t.c"
  if "$cc" -fsanitize=fuzzer,address,undefined "$t/t.c" -o "$t/t" >"$t/log" 2>&1; then rm -rf "$t"; return 0; fi
  echo "$cc cannot link a libFuzzer program ($(head -c 200 "$t/log" | tr '\n' ' '))"
  rm -rf "$t"
  return 1
}

install_clang() {
  local sudo_cmd="" need=() p
  [[ $(id -u) == 0 ]] || sudo_cmd=sudo
  for p in clang libclang-rt-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
  done
  ((${#need[@]})) || return 0
  command -v apt-get >/dev/null || return 1
  [[ -z $sudo_cmd ]] || sudo -n true 2>/dev/null || return 1
  mkdir -p "$out"
  echo "fuzz.sh: installing Debian packages: ${need[*]}" >&2
  $sudo_cmd apt-get update -q >"$out/apt-update.log" 2>&1 &&
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q --no-install-recommends "${need[@]}" >"$out/apt-install.log" 2>&1
}

do_build() {
  local cc why vars pcc mpiinc mpilib
  if ! cc=$(find_clang) || ! why=$(have_libfuzzer "$cc"); then
    if [[ ${FUZZ_INSTALL:-${CI:-0}} != 0 && ${FUZZ_INSTALL:-1} != 0 ]] && install_clang; then
      cc=$(find_clang) || { echo "clang is not installed (apt-get install clang libclang-rt-dev)"; return 1; }
      why=$(have_libfuzzer "$cc") || { echo "$why"; return 1; }
    else
      [[ -n ${cc:-} ]] || why="clang is not installed (apt-get install clang libclang-rt-dev, or FUZZ_INSTALL=1)"
      echo "$why"
      return 1
    fi
  fi
  if [[ -z ${PETSC_DIR:-} ]]; then
    PETSC_DIR=$("$root/config/petsc.sh" --print=dir) || { echo "no PETSc (config/petsc.sh failed)"; return 1; }
    PETSC_ARCH=
  fi
  vars=$PETSC_DIR/${PETSC_ARCH:-}/lib/petsc/conf/petscvariables
  [[ -f $vars ]] || { echo "no $vars"; return 1; }
  getvar() { sed -n "s|^$1 = ||p" "$vars" | head -1; }
  pcc=$(getvar PCC)
  mpiinc=$("$pcc" -showme:compile 2>/dev/null || "$pcc" -compile_info 2>/dev/null | tr ' ' '\n' | grep '^-I' | tr '\n' ' ')
  mpilib=$("$pcc" -showme:link 2>/dev/null || "$pcc" -link_info 2>/dev/null | tr ' ' '\n' | grep -E '^-(L|l|Wl)' | tr '\n' ' ')
  mkdir -p "$out"
  # shellcheck disable=SC2046,SC2086
  if ! "$cc" -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
      -I"$root/include" -I"$root/tests/fuzz" $(getvar PETSC_CC_INCLUDES) $mpiinc \
      "$root/tests/fuzz/fuzz_matrixmarket.c" "$root/src/io/matrixmarket.c" -o "$bin.tmp" \
      -Wl,--as-needed $(getvar PETSC_WITH_EXTERNAL_LIB) $mpilib -lz >"$out/build.log" 2>&1; then
    echo "the harness did not build (see $out/build.log)"
    return 1
  fi
  mv "$bin.tmp" "$bin"
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# leaks are checked per input (libFuzzer -detect_leaks); the check at exit would only see the MPI runtime's
# allocations of modules it unloaded at MPI_Finalize (no library name left to suppress them by)
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/tests/fuzz/lsan.supp:print_suppressions=0:leak_check_at_exit=0}
export OMPI_MCA_btl=${OMPI_MCA_btl:-self} OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
limits=(-max_len="${FUZZ_MAX_LEN:-2048}" -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10)

case $cmd in
  build)
    why=$(do_build) || { echo "fuzz.sh: $why" >&2; exit 1; }
    echo "built $bin"
    ;;
  repro)
    [[ -x $bin ]] || { why=$(do_build) || { echo "fuzz.sh: $why" >&2; exit 1; }; }
    "$bin" "${limits[@]}" -runs=1 "$@"
    ;;
  run)
    secs=${1:-${FUZZ_SECONDS:-60}}
    why=$(do_build) || skip "$why"
    mkdir -p "$out/corpus" "$out/artifacts"
    log=$out/fuzz.log
    t0=$(date +%s)
    jobs=${FUZZ_JOBS:-1}
    par=()
    ((jobs > 1)) && par=(-fork="$jobs" -ignore_crashes=0)
    (cd "$out" && "$bin" "${limits[@]}" "${par[@]}" -max_total_time="$secs" -print_final_stats=1 \
      -dict="$root/tests/fuzz/matrixmarket.dict" -artifact_prefix="$out/artifacts/" \
      "$out/corpus" "$root/tests/fuzz/seeds" "$root/tests/fuzz/regressions") >"$log" 2>&1
    rc=$?
    t1=$(date +%s)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | awk '{s += $1} END {print s + 0}')
    [[ $execs == 0 ]] && execs=$(grep -oE '#[0-9]+' "$log" | tail -1 | tr -d '#')
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1)
    ncorp=$(find "$out/corpus" -type f | wc -l)
    crashes=$(grep -oE "Test unit written to [^ ]+" "$log" | sed 's/Test unit written to //' | tr '\n' ' ')
    if [[ $rc == 0 ]]; then
      echo "PASS: fuzz-matrixmarket: ${execs:-?} inputs in $((t1 - t0)) s (${cov:-cov: ?}, corpus $ncorp files), no crash, sanitizer report, leak or timeout"
    else
      # the inputs themselves in the FAIL line (at most -max_len bytes each), so that a finding of a CI machine, whose
      # files are gone, can be rebuilt from its log: echo DATA | base64 -d > tests/fuzz/regressions/NAME
      inputs=""
      for c in $crashes; do [[ -f $c ]] && inputs+=" base64 of $(basename "$c"): $(base64 -w0 "$c");"; done
      echo "FAIL: fuzz-matrixmarket: status $rc after ${execs:-?} inputs in $((t1 - t0)) s; input(s): ${crashes:-none saved} (log $log; copy the input to tests/fuzz/regressions/ and fix the reader);$inputs"
      grep -E '^(==[0-9]+==ERROR|FINDING|SUMMARY|.*runtime error)' "$log" | head -5 | sed 's/^/      /'
      exit 1
    fi
    ;;
  *)
    sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
