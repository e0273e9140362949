#!/usr/bin/env bash
# How fast steps launch: steps per second and the launch latency of a 16-task step over
# two components (heterogeneous steps, docs/04-steps.md).
#
#   contrib/bench/steps.sh [N]    N steps of each kind (default 50)
#
# On a private cluster (contrib/bench/cluster.sh), inside one allocation of two
# components of 8 tasks (salloc -n8 : -n8), runs N times in a row
#   srun --het-group=0,1 true     (16 tasks, 2 components, all four nodes)
#   srun -n1 true                 (1 task)
# and prints steps per second; then N times a 16-task step whose tasks print when they
# started, and prints the launch latency (srun started -> last task running): median and
# worst. A benchmark prints figures; it checks nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-50}
source contrib/bench/cluster.sh
bench_cluster_start
cd "$dir/out"
export PATH=$bin:$PATH

"$bin/salloc" -Q -n8 : -n8 bash -c '
n=$1
rate() { # label command...
  local label=$1; shift
  local start end
  start=$(date +%s.%N)
  for _ in $(seq "$n"); do "$@" >/dev/null; done
  end=$(date +%s.%N)
  python3 -c "import sys; n, s, e = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]); print(f\"{sys.argv[4]}: {n} steps in {e - s:.2f} s = {n / (e - s):.1f} steps per second\")" "$n" "$start" "$end" "$label"
}
rate "16 tasks over 2 components (srun --het-group=0,1 true)" srun --het-group=0,1 true
rate "1 task (srun -n1 true)" srun -n1 true
for _ in $(seq "$n"); do
  start=$(date +%s%N)
  last=$(srun --het-group=0,1 date +%s%N | sort -n | tail -1)
  echo $(( (last - start) / 1000 ))
done | python3 -c "
import sys, statistics
v = sorted(int(x) for x in sys.stdin.read().split())
print(f\"launch latency of a 16-task, 2-component step: median {statistics.median(v) / 1000:.1f} ms, worst {v[-1] / 1000:.1f} ms ({len(v)} steps)\")
"
' bench "$n"
