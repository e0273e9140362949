#!/usr/bin/env bash
# How long one backfill cycle takes on a large cluster: the real sched/backfill plugin,
# placing through the real select/consumable plugin, both loaded from build/lib.
#
#   contrib/bench/backfill.sh [SECONDS]     cut any cycle at SECONDS (default 300)
#   BUILD=dir contrib/bench/backfill.sh     another build folder (default build)
#
# Builds tessera-bench-backfill (contrib/bench/bf_cycle.c) when needed, then runs it for
# 10,000 pending jobs on 1,000 nodes and 100,000 on 10,000 nodes (32 CPUs and 128 GB
# each, mostly busy), each with three SchedulerParameters:
#   (default)                  bf_max_job_test=1000: the first 1000 units are planned
#   bf_mode=whole              every unit is planned
#   bf_reserve_depth=1000000   every planned unit that waits holds a reservation
#                              (conservative backfill)
# and prints, per cycle (a backfill cycle, a second one on the same view, an event-driven
# cycle): wall time, units examined, started, reserved, with an expected start, calls
# into the select plugin, and the process's peak RSS. A cycle that reaches SECONDS is cut
# short and its rate printed; the cycles after it are skipped. A benchmark prints
# figures; it checks nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
limit=${1:-300}
build=${BUILD:-build}

if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" -j"$(nproc 2>/dev/null || echo 2)" --target tessera-bench-backfill >/dev/null
type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
echo "build: $build ($type), $(nproc) CPUs: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"

rows=$(mktemp /tmp/tessera-bench-XXXXXX)
trap 'rm -f "$rows" "$rows.one"' EXIT

# One configuration; its rows go to $rows, and the view it ran on is shown once per size.
run() { # nodes jobs params
  local label="$2/$1 ${3:-(default)}"
  echo "running: $2 jobs on $1 nodes, SchedulerParameters \"$3\""
  "$build/bench/bin/tessera-bench-backfill" --nodes "$1" --jobs "$2" --params "$3" \
    --time-limit "$limit" --tsv "$label" --plugin-dir "$build/lib" >"$rows.one"
  grep -v '^#' "$rows.one" >>"$rows" || true
  if [[ -z $3 ]]; then
    sed -n 's/^# /  /p' "$rows.one" | grep -v -e '^  create' -e '^  view built' || true
  fi
}

for size in "1000 10000" "10000 100000"; do
  read -r nodes jobs <<<"$size"
  for params in "" "bf_mode=whole" "bf_reserve_depth=1000000"; do
    run "$nodes" "$jobs" "$params"
  done
done

echo
awk -F'\t' '
  BEGIN {
    printf "%-38s %-10s %10s %8s %7s %8s %8s %10s %5s  %s\n", "jobs/nodes SchedulerParameters",
           "cycle", "wall ms", "examined", "started", "reserved", "expected", "placements",
           "RSS", "note"
  }
  {
    label = ($1 == last) ? "" : $1
    last = $1
    printf "%-38s %-10s %10s %8s %7s %8s %8s %10s %5s  %s\n", label, $2, $3, $4, $5, $6,
           $7, $9, $10 == "-" ? "-" : $10 "M", $11
  }' "$rows"
