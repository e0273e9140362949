#!/usr/bin/env bash
# How many trivial jobs (--wrap=true) per second a private cluster completes.
#
#   contrib/bench/throughput.sh [N]    N plain jobs, then N/2 two-component het jobs
#                                      (default N=200)
#
# Starts munged, tessera-ctld and four tessera-noded (4 CPUs each) from build/ in a
# temporary folder, submits the jobs as fast as sbatch returns, waits until squeue shows
# none left, prints the rates, and stops everything. A benchmark prints figures; it
# checks nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-200}
source contrib/bench/cluster.sh
bench_cluster_start
cd "$dir/out"

# Submit, then wait until nothing is pending or running; print the rate.
measure() {
  local label=$1 count=$2
  shift 2
  local start end
  start=$(date +%s.%N)
  for _ in $(seq "$count"); do "$bin/sbatch" "$@" >/dev/null; done
  while [[ -n $("$bin/squeue" -h -o %i 2>/dev/null | head -1) ]]; do sleep 0.05; done
  end=$(date +%s.%N)
  python3 - "$label" "$count" "$start" "$end" <<'PY'
import sys
label, n, start, end = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
secs = end - start
print(f"{label}: {n} jobs submitted and completed in {secs:.2f} s = {n / secs:.1f} jobs per second")
PY
}

measure "plain jobs (--wrap=true)" "$n" --wrap=true
measure "het jobs (-n1 : -n1 --wrap=true)" "$((n / 2))" -n1 : -n1 --wrap=true
failed=$("$bin/squeue" -h -t all -o %T | grep -vc COMPLETED || true)
echo "jobs not COMPLETED: $failed"
