#!/usr/bin/env bash
# Bring up a private Tessera cluster on this machine, from this checkout:
#
#   contrib/quickstart.sh         install packages, build, start MUNGE and the controller
#   contrib/quickstart.sh stop    stop exactly what the quick start started
#
# Everything lives in .quickstart/ in the checkout: configuration, MUNGE key and socket,
# controller state, logs and pid files. The configuration names four nodes; node daemons
# are not built yet, so jobs are accepted and stay pending (see README).
set -euo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
qs="$top/.quickstart"
port=${TESSERA_QS_PORT:-6917}

stop_pidfile() { # stop the process in pid file $1, if it is still the one we started
  local f=$1 pid
  [[ -f $f ]] || return 0
  pid=$(cat "$f")
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
  fi
  rm -f "$f"
}

if [[ ${1:-} == stop ]]; then
  stop_pidfile "$qs/ctld.pid"
  stop_pidfile "$qs/munged.pid"
  echo "Stopped. State is kept in $qs (remove the folder to start afresh)."
  exit 0
fi
if [[ -n ${1:-} ]]; then
  echo "usage: $0 [stop]" >&2
  exit 2
fi

source contrib/deps.sh
tessera_install_deps
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
echo "Built in $top/build."

mkdir -p "$qs/state" "$qs/spool" "$qs/log"
chmod 755 "$qs"

# A private MUNGE daemon with a throw-away key (munged refuses to run as root without
# --force, and wants its key readable by its user only).
if ! [[ -f $qs/munged.pid ]] || ! kill -0 "$(cat "$qs/munged.pid")" 2>/dev/null; then
  [[ -f $qs/munge.key ]] || /usr/sbin/mungekey --create --keyfile="$qs/munge.key"
  /usr/sbin/munged --force --key-file="$qs/munge.key" --socket="$qs/munge.socket" \
    --pid-file="$qs/munged.pid" --log-file="$qs/log/munged.log" --seed-file="$qs/munged.seed"
fi

cat > "$qs/tessera.conf" <<CONF
# Written by contrib/quickstart.sh
ClusterName=quickstart
CtldHost=127.0.0.1
CtldPort=$port
StateSaveLocation=$qs/state
SpoolDir=$qs/spool
AuthInfo=socket=$qs/munge.socket
SlurmUser=$(id -un)
CtldLogFile=$qs/log/ctld.log
CtldPidFile=$qs/ctld.pid
PluginDir=$top/build/lib
NodeName=n[1-4] CPUs=4 RealMemory=4000 NodeAddr=127.0.0.1 Port=$((port + 10))-$((port + 13))
PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=60 DefaultTime=10
CONF

if [[ -f $qs/ctld.pid ]] && kill -0 "$(cat "$qs/ctld.pid")" 2>/dev/null; then
  echo "The controller is already running (pid $(cat "$qs/ctld.pid"))."
else
  # Without -D the controller goes to the background once it serves, or says why not.
  build/bin/tessera-ctld -f "$qs/tessera.conf"
fi

export TESSERA_CONF="$qs/tessera.conf"
build/bin/scontrol ping
echo
echo "A heterogeneous job of two components (4 tasks of 2 CPUs, then 1 task):"
echo "  sbatch -J quickstart -n4 -c2 : -n1 --wrap=hostname"
(cd "$qs" && "$top/build/bin/sbatch" -J quickstart -n4 -c2 : -n1 --wrap=hostname)
build/bin/squeue

cat <<EOT

Tessera is running. In your shell:

  export TESSERA_CONF=$qs/tessera.conf PATH=$top/build/bin:\$PATH
  scontrol ping
  sbatch -n2 : -n1 --wrap=hostname     # a het job of two components
  squeue                               # components show as <id>+<offset>
  scontrol show job <id>
  scancel <id>

Logs are in $qs/log. Stop everything with: contrib/quickstart.sh stop
EOT
