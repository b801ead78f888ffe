#!/usr/bin/env bash
# Issue #3: the CMRS scan kernel's entries per lane E x passes loaded ahead U x strips per warp S, beside cuSPARSE.
#
# On the GPU machine, from the repository root, once the build is unpacked (e.g. tools/device-run.sh none) and with
# LD_LIBRARY_PATH set as tools/device-run.sh sets it:
#   tools/cmrs-lane-sweep.sh
# For each matrix (3-D 7-point 150^3, 2-D 5-point 2000^2, and real matrices of mean row length <= 32 from
# $PETSCGPUMAT_MATRICES replicated on the diagonal to about 6 M nonzeros): one bench_spmv run of aijcusparse, the
# default cmrscuda and the 32 scan variants E in {1,2,4} x U in {1,2,4} (not E = U = 4) x S in {1,2,4,8} (height 16, block 128), then
# one run of the fastest of them with block sizes 128 and 256 (cuSPARSE and the default again in that run).
# Median of REPS (default 100) products each. Writes $OUT/cmrs-lane-sweep.csv (bench_spmv's columns after "case,phase")
# and $OUT/cmrs-lane-sweep.txt (bench_spmv's tables and, per matrix, speed-ups over cuSPARSE as an E x (U, S) grid).
# About 2-3 minutes; no matrix is started after SWEEP_BUDGET seconds (default 200), so the whole fits in 4 minutes.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 1
out=${OUT:-$root/.device/out}
mkdir -p "$out"
M=${PETSCGPUMAT_MATRICES:-$root/../shared/matrices}
csv=$out/cmrs-lane-sweep.csv
log=$out/cmrs-lane-sweep.txt
reps=${REPS:-100}
budget=${SWEEP_BUDGET:-200}
bench=${BENCH:-build/examples/bench_spmv}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$csv"
: >"$log"
say() { echo "$@" | tee -a "$log"; }

[[ -x $bench ]] || { say "no $bench: unpack the build first (tools/device-run.sh none)"; exit 1; }
say "# cmrs-lane-sweep $(date -u '+%Y-%m-%d %H:%M UTC'), $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader 2>/dev/null | head -1)"

grid=""
for E in 1 2 4; do
  for U in 1 2 4; do
    ((E * U > 8)) && continue # E = 4, U = 4 spills to local memory
    for S in 1 2 4 8; do grid+="mat_cmrs_variant:scan+mat_cmrs_lane_entries:$E+mat_cmrs_unroll:$U+mat_cmrs_warp_strips:$S,"; done
  done
done
grid=${grid%,}

# label | bench_spmv arguments (real matrices: mu <= 32, replicated to about 6 M nonzeros as tools/bench_suite.py does)
cases=("lap3d7|-problem lap3d7 -n 150"
  "lap2d5|-problem lap2d5 -n 2000"
  "cage10|-f $M/cage10.mtx.gz -replicate 40"
  "pde900|-f $M/pde900.mtx.gz -replicate 1400"
  "4elt|-f $M/4elt.mtx.gz -replicate 65")

run() { # case, phase, timeout, bench_spmv arguments...
  local name=$1 phase=$2 t=$3 rc
  shift 3
  rm -f "$tmp/b.csv"
  timeout "$t" tests/mpienv.sh "$bench" "$@" -reps "$reps" -types aijcusparse,cmrscuda -csv "$tmp/b.csv" >"$tmp/b.txt" 2>&1
  rc=$?
  { echo "== $name ($phase): status $rc, $SECONDS s"; cat "$tmp/b.txt"; echo; } >>"$log"
  grep -q "WRONG RESULT" "$tmp/b.txt" && say "!! $name ($phase): a variant gave a WRONG RESULT (see the log)"
  [[ -s $tmp/b.csv ]] || { say "!! $name ($phase): no CSV (status $rc)"; return 1; }
  [[ -s $csv ]] || sed -n '1s/^/case,phase,/p' "$tmp/b.csv" >"$csv"
  sed -n "2,\$s|^|$name,$phase,|p" "$tmp/b.csv" >>"$csv"
}

for c in "${cases[@]}"; do
  name=${c%%|*} args=${c#*|}
  if ((SECONDS > budget)); then say "-- $name skipped: past the budget of $budget s"; continue; fi
  if [[ $args == *"-f "* ]]; then
    f=${args#*-f }
    f=${f%% *}
    [[ -r $f ]] || { say "-- $name skipped: $f not found"; continue; }
  fi
  # shellcheck disable=SC2086
  run "$name" grid 120 $args -variants "$grid" || continue
  # the fastest correct scan variant of the grid, then block sizes 128 and 256 for it
  best=$(awk -F, -v n="$name" '$1 == n && $2 == "grid" && $22 == "ok" && $21 ~ /lane_entries/ && $8 != "" { if (b == "" || $8 + 0 < t) { t = $8 + 0; b = $21 } } END { print b }' "$csv")
  if [[ -n $best ]] && ((SECONDS <= budget + 20)); then
    # shellcheck disable=SC2086
    run "$name" block 60 $args -variants "$best+mat_cmrs_block_size:128,$best+mat_cmrs_block_size:256"
  fi
  # the grid as speed-ups over the same run's aijcusparse
  awk -F, -v n="$name" '
    $1 == n && $2 == "grid" && $7 == "aijcusparse" { cus = $11 }
    $1 == n && $2 == "grid" && $7 == "cmrscuda" { def = $14 }
    $1 == n && $2 == "grid" && $21 ~ /lane_entries/ {
      match($21, /lane_entries:[0-9]+/); E = substr($21, RSTART + 13, RLENGTH - 13)
      match($21, /unroll:[0-9]+/); U = substr($21, RSTART + 7, RLENGTH - 7)
      match($21, /warp_strips:[0-9]+/); S = substr($21, RSTART + 12, RLENGTH - 12)
      v[E "," U "," S] = ($22 == "ok") ? sprintf("%.3f", $14) : $22
    }
    END {
      printf "%s: speed-up over aijcusparse (%s GFLOPS in this run; default cmrscuda %s), rows E, columns U/S\n", n, cus, def
      printf "  E  "; for (U = 1; U <= 4; U *= 2) for (S = 1; S <= 4; S *= 2) printf " %7s", "U" U "/S" S; printf "\n"
      for (E = 1; E <= 4; E *= 2) { printf "  %d  ", E; for (U = 1; U <= 4; U *= 2) for (S = 1; S <= 4; S *= 2) printf " %7s", v[E "," U "," S]; printf "\n" }
    }' "$csv" | tee -a "$log"
  awk -F, -v n="$name" '$1 == n && $2 == "block" && ($7 == "aijcusparse" || $21 != "") { printf "  block run: %-110s %7.1f GFLOPS %6.3fx\n", $7, $11, $14 }' "$csv" | tee -a "$log"
done
say "# done in $SECONDS s: $csv, $log"
