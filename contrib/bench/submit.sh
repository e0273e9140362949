#!/usr/bin/env bash
# Sequential sbatch submissions per second against a private controller.
#
#   contrib/bench/submit.sh [N]        N submissions (default 1000)
#
# Starts its own munged and tessera-ctld in a temporary folder (from build/), submits N
# held one-line jobs one after another with the real sbatch, prints the rate, and stops
# everything it started. A benchmark prints figures; it checks nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-1000}
bin=$PWD/build/bin
[[ -x $bin/sbatch && -x $bin/tessera-ctld ]] || { echo "build first (cmake --build build)" >&2; exit 1; }

dir=$(mktemp -d /tmp/tessera-bench-XXXXXX)
chmod 755 "$dir"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

head -c 1024 /dev/urandom > "$dir/munge.key"
chmod 600 "$dir/munge.key"
/usr/sbin/munged --foreground --force --key-file="$dir/munge.key" --socket="$dir/munge.socket" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munged.seed" \
  2>"$dir/munged.err" &
pids+=($!)

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$dir/tessera.conf" <<CONF
ClusterName=bench
CtldHost=127.0.0.1
CtldPort=$port
StateSaveLocation=$dir/state
AuthInfo=socket=$dir/munge.socket
SlurmUser=$(id -u)
PluginDir=$PWD/build/lib
NodeName=n[1-4] CPUs=4 RealMemory=4000 NodeAddr=127.0.0.1 Port=17201-17204
PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=60
CONF
for _ in $(seq 100); do [[ -S $dir/munge.socket ]] && break; sleep 0.05; done
"$bin/tessera-ctld" -D -f "$dir/tessera.conf" 2>"$dir/ctld.log" &
pids+=($!)
export TESSERA_CONF=$dir/tessera.conf
for _ in $(seq 200); do "$bin/scontrol" ping >/dev/null 2>&1 && break; sleep 0.05; done

cd "$dir"
start=$(date +%s.%N)
for _ in $(seq "$n"); do
  "$bin/sbatch" -H --wrap=true >/dev/null
done
end=$(date +%s.%N)
python3 - "$n" "$start" "$end" <<'PY'
import sys
n, start, end = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
secs = end - start
print(f"sequential sbatch: {n} submissions in {secs:.2f} s = {n / secs:.0f} per second "
      f"({secs / n * 1000:.2f} ms each, every one durable before its reply)")
PY
