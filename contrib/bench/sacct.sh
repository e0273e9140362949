#!/usr/bin/env bash
# How fast sacct answers over a large accounting history.
#
#   contrib/bench/sacct.sh [N]    N stored jobs (default 1,000,000)
#
# Writes N synthetic jobs (ended evenly over the past 365 days, each with its batch step,
# every fourth with an srun step; contrib/bench/acct_fill.c) into a private cluster's
# state folder (contrib/bench/cluster.sh), starts the controller on it, and times with the
# real sacct, each five times (best and median of the wall time, which includes the
# command's start-up and its MUNGE credential):
#   sacct -j ID                       one job by id (the id index)
#   sacct -a -X -S D -E D+1day        a one-day window half a year back (the end index)
#   sacct -a -X                       today's jobs (the default window)
# and the controller's start-up time on that state. A benchmark prints figures; it checks
# nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-1000000}
cmake --build build -j"$(nproc 2>/dev/null || echo 2)" --target tessera-bench-acct-fill sacct \
  tessera-ctld-bin tessera-noded tessera-stepd >/dev/null
source contrib/bench/cluster.sh

bench_before_ctld() {
  "$PWD/build/bench/bin/tessera-bench-acct-fill" --state "$dir/state" --jobs "$n" --days 365 \
    --uid "$(id -u)" --gid "$(id -g)"
  du -sh "$dir/state" | awk '{print "state folder: " $1}'
  ctld_started=$(date +%s.%N)
}
bench_cluster_start
python3 -c "import sys; print(f'controller up (ping answered) {float(sys.argv[2]) - float(sys.argv[1]):.2f} s after start')" \
  "$ctld_started" "$(date +%s.%N)"

time_it() { # label command...
  local label=$1; shift
  local times=() lines
  for _ in 1 2 3 4 5; do
    local s e
    s=$(date +%s%N)
    lines=$("$@" | wc -l)
    e=$(date +%s%N)
    times+=($(( (e - s) / 1000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk -v label="$label" -v lines="$lines" '
    { t[NR] = $1 } END { printf "%-34s best %8.1f ms  median %8.1f ms  (%d lines)\n",
                         label, t[1] / 1000, t[3] / 1000, lines }'
}

day=$(( $(date +%s) - 182 * 86400 ))
from=$(date -d "@$day" +%Y-%m-%dT%H:%M:%S)
to=$(date -d "@$(( day + 86400 ))" +%Y-%m-%dT%H:%M:%S)
time_it "sacct -j $(( n / 2 ))" "$bin/sacct" -j "$(( n / 2 ))"
time_it "sacct -j $(( n / 2 )) -X" "$bin/sacct" -j "$(( n / 2 ))" -X
time_it "sacct -a -X -S -E (one day)" "$bin/sacct" -a -X -S "$from" -E "$to"
time_it "sacct -a -S -E (one day, steps)" "$bin/sacct" -a -S "$from" -E "$to"
time_it "sacct -a -X (today)" "$bin/sacct" -a -X
