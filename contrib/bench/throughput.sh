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
bin=$PWD/build/bin
[[ -x $bin/tessera-noded && -x $bin/sbatch ]] || { echo "build first (cmake --build build)" >&2; exit 1; }

dir=$(mktemp -d /tmp/tessera-bench-XXXXXX)
chmod 755 "$dir"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

head -c 1024 /dev/urandom > "$dir/munge.key"
chmod 600 "$dir/munge.key"
/usr/sbin/munged --foreground --force --key-file="$dir/munge.key" --socket="$dir/munge.socket" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munged.seed" \
  2>"$dir/munged.err" &
pids+=($!)

{
  echo "ClusterName=bench"
  echo "CtldHost=127.0.0.1"
  echo "CtldPort=$(free_port)"
  echo "StateSaveLocation=$dir/state"
  echo "SpoolDir=$dir/spool"
  echo "AuthInfo=socket=$dir/munge.socket"
  echo "SlurmUser=$(id -u)"
  echo "NodedUser=$(id -u)"
  echo "PluginDir=$PWD/build/lib"
  echo "MinJobAge=3600"
  for i in 1 2 3 4; do
    echo "NodeName=n$i CPUs=4 RealMemory=4000 NodeAddr=127.0.0.1 Port=$(free_port)"
  done
  echo "PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=UNLIMITED"
} > "$dir/tessera.conf"
for _ in $(seq 100); do [[ -S $dir/munge.socket ]] && break; sleep 0.05; done
"$bin/tessera-ctld" -D -f "$dir/tessera.conf" 2>"$dir/ctld.log" &
pids+=($!)
export TESSERA_CONF=$dir/tessera.conf
for _ in $(seq 200); do "$bin/scontrol" ping >/dev/null 2>&1 && break; sleep 0.05; done
for i in 1 2 3 4; do
  "$bin/tessera-noded" -D -f "$dir/tessera.conf" -N "n$i" 2>"$dir/noded-n$i.log" &
  pids+=($!)
done
for _ in $(seq 200); do
  [[ $("$bin/sinfo" -h -o %t 2>/dev/null) == idle ]] && break
  sleep 0.05
done

mkdir -p "$dir/out"
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
