# A private cluster for benchmarks, sourced by contrib/bench/*.sh: munged, tessera-ctld and
# four tessera-noded (4 CPUs each) from build/ in a temporary folder, stopped and removed
# when the sourcing script exits. After bench_cluster_start: $bin (the commands), $dir
# (the folder), TESSERA_CONF exported, the nodes idle. A function bench_before_ctld, when
# the script defines one, runs after the configuration is written and before the
# controller starts.

bin=$PWD/build/bin
[[ -x $bin/tessera-noded && -x $bin/sbatch ]] || { echo "build first (cmake --build build)" >&2; exit 1; }

bench_pids=()
bench_cleanup() {
  for p in "${bench_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}

bench_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

bench_cluster_start() {
  dir=$(mktemp -d /tmp/tessera-bench-XXXXXX)
  chmod 755 "$dir"
  trap bench_cleanup EXIT
  head -c 1024 /dev/urandom > "$dir/munge.key"
  chmod 600 "$dir/munge.key"
  /usr/sbin/munged --foreground --force --key-file="$dir/munge.key" --socket="$dir/munge.socket" \
    --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munged.seed" \
    2>"$dir/munged.err" &
  bench_pids+=($!)
  {
    echo "ClusterName=bench"
    echo "CtldHost=127.0.0.1"
    echo "CtldPort=$(bench_free_port)"
    echo "StateSaveLocation=$dir/state"
    echo "SpoolDir=$dir/spool"
    echo "AuthInfo=socket=$dir/munge.socket"
    echo "SlurmUser=$(id -u)"
    echo "NodedUser=$(id -u)"
    echo "PluginDir=$PWD/build/lib"
    echo "MinJobAge=3600"
    for i in 1 2 3 4; do
      echo "NodeName=n$i CPUs=4 RealMemory=4000 NodeAddr=127.0.0.1 Port=$(bench_free_port)"
    done
    echo "PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=UNLIMITED"
  } > "$dir/tessera.conf"
  for _ in $(seq 100); do [[ -S $dir/munge.socket ]] && break; sleep 0.05; done
  # a sourcing script may prepare the state folder first
  if declare -F bench_before_ctld >/dev/null; then bench_before_ctld; fi
  "$bin/tessera-ctld" -D -f "$dir/tessera.conf" 2>"$dir/ctld.log" &
  bench_pids+=($!)
  export TESSERA_CONF=$dir/tessera.conf
  for _ in $(seq 200); do "$bin/scontrol" ping >/dev/null 2>&1 && break; sleep 0.05; done
  for i in 1 2 3 4; do
    "$bin/tessera-noded" -D -f "$dir/tessera.conf" -N "n$i" 2>"$dir/noded-n$i.log" &
    bench_pids+=($!)
  done
  for _ in $(seq 200); do
    [[ $("$bin/sinfo" -h -o %t 2>/dev/null) == idle ]] && break
    sleep 0.05
  done
  mkdir -p "$dir/out"
}
