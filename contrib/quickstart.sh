#!/usr/bin/env bash
# Bring up a private Tessera cluster on this machine, from this checkout:
#
#   contrib/quickstart.sh         install packages, build, start MUNGE and the controller
#   contrib/quickstart.sh stop    stop exactly what the quick start started
#
# Everything lives in .quickstart/ in the checkout (TESSERA_QS_DIR elsewhere; TESSERA_QS_PORT
# moves the ports): configuration, MUNGE key and socket,
# controller state, node spools, logs and pid files. Four node daemons (n1..n4, 4 CPUs
# each) run on loopback ports, and a heterogeneous batch job and a heterogeneous step run
# end to end.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
qs=${TESSERA_QS_DIR:-$top/.quickstart}
port=${TESSERA_QS_PORT:-6917}

# Whether pid is a live process: a zombie waiting for its parent (the daemons run in the
# background, so that is whatever reaps orphans here, maybe seconds later) has stopped.
alive() {
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n $state && $state != Z ]]
}

stop_pidfile() { # stop the process in pid file $1, if it is still the one we started
  local f=$1 pid
  [[ -f $f ]] || return 0
  pid=$(cat "$f")
  if [[ -n $pid ]] && alive "$pid"; then
    kill "$pid"
    for _ in $(seq 50); do alive "$pid" || break; sleep 0.1; done
    alive "$pid" && kill -9 "$pid"
  fi
  rm -f "$f"
}

# Every process below pid (children first found, then theirs).
descendants() {
  local kids k
  kids=$(ps -o pid= --ppid "$1" 2>/dev/null) || return 0
  for k in $kids; do echo "$k"; descendants "$k"; done
}

stop_all() {
  export TESSERA_CONF="$qs/tessera.conf"
  # Jobs first, while the daemons can end them: then nothing they started is left over.
  if build/bin/scontrol ping >/dev/null 2>&1; then
    local ids; ids=$(build/bin/squeue -h -o %A | sort -u)
    [[ -n $ids ]] && { build/bin/scancel $ids 2>/dev/null || true; }
    for _ in $(seq 100); do
      [[ -z $(build/bin/squeue -h -o %A) ]] && break
      sleep 0.1
    done
  fi
  # What a job left behind (a daemonised child) was re-parented to its node daemon.
  local left=() i
  for i in 1 2 3 4; do
    [[ -f $qs/noded-n$i.pid ]] && left+=($(descendants "$(cat "$qs/noded-n$i.pid")"))
  done
  for i in 1 2 3 4; do stop_pidfile "$qs/noded-n$i.pid"; done
  ((${#left[@]})) && { kill -9 "${left[@]}" 2>/dev/null || true; }
  # The node daemons' cgroup folders (docs/containment.md), empty once their jobs are gone.
  local dir
  for dir in $(awk '$3 == "cgroup" || $3 == "cgroup2" {print $2}' /proc/self/mounts); do
    for i in 1 2 3 4; do rmdir "$dir/tessera/quickstart/n$i" 2>/dev/null || true; done
    rmdir "$dir/tessera/quickstart" "$dir/tessera" 2>/dev/null || true
  done
  stop_pidfile "$qs/ctld.pid"
  stop_pidfile "$qs/munged.pid"
  echo "Stopped. State is kept in $qs (remove the folder to start afresh)."
}

if [[ ${1:-} == stop ]]; then
  stop_all
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

# Jobs are contained in cgroups (docs/containment.md) when the daemons run as root on a
# machine with a cgroup filesystem: a job gets the memory and CPUs it asked for, and
# nothing it starts outlives it.
containment=""
if [[ $(id -u) == 0 ]] && grep -q ' cgroup2\? ' /proc/self/mounts; then
  containment="ProctrackType=proctrack/cgroup
ConstrainRAMSpace=yes
ConstrainCores=yes"
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
NodedUser=$(id -un)
CtldLogFile=$qs/log/ctld.log
CtldPidFile=$qs/ctld.pid
NodedLogFile=$qs/log/noded-%n.log
NodedPidFile=$qs/noded-%n.pid
PluginDir=$top/build/lib
$containment
NodeName=n[1-4] CPUs=4 RealMemory=4000 NodeAddr=127.0.0.1 Port=$((port + 10))-$((port + 13))
PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=UNLIMITED DefaultTime=60
CONF

if [[ -f $qs/ctld.pid ]] && kill -0 "$(cat "$qs/ctld.pid")" 2>/dev/null; then
  echo "The controller is already running (pid $(cat "$qs/ctld.pid"))."
else
  # Without -D the controller goes to the background once it serves, or says why not.
  build/bin/tessera-ctld -f "$qs/tessera.conf"
fi

for i in 1 2 3 4; do
  if ! { [[ -f $qs/noded-n$i.pid ]] && kill -0 "$(cat "$qs/noded-n$i.pid")" 2>/dev/null; }; then
    build/bin/tessera-noded -f "$qs/tessera.conf" -N "n$i"
  fi
done

export TESSERA_CONF="$qs/tessera.conf"
build/bin/scontrol ping
for _ in $(seq 100); do
  [[ $(build/bin/sinfo -h -o %t) == idle ]] && break
  sleep 0.1
done
build/bin/sinfo
if [[ -n $containment ]]; then
  echo "Jobs run in cgroups (ProctrackType=proctrack/cgroup):"
  grep -h 'jobs contained\|cannot contain' "$qs"/log/noded-n1.log | tail -1
fi

echo
echo "A heterogeneous job of two components (4 tasks of 2 CPUs, then 2 tasks on 2 nodes):"
echo "  sbatch -J quickstart -n4 -c2 : -N2 -n2 --wrap='hostname; env | grep HET_GROUP | sort'"
mkdir -p "$qs/out"
id=$(cd "$qs/out" && "$top/build/bin/sbatch" --parsable -J quickstart -n4 -c2 : -N2 -n2 \
       --wrap='hostname; env | grep HET_GROUP | sort')
for _ in $(seq 100); do
  [[ -z $(build/bin/squeue -h -j "$id" -o %i) ]] && break
  sleep 0.1
done
build/bin/squeue -t all -j "$id"
echo "--- $qs/out/slurm-$id.out:"
cat "$qs/out/slurm-$id.out"

echo
echo "A heterogeneous step, one MPI-style world over two components:"
echo "  srun --label -n2 : -n1 sh -c 'echo rank \$SLURM_PROCID of \$SLURM_NTASKS on \$SLURMD_NODENAME'"
(cd "$qs/out" && "$top/build/bin/srun" --label -n2 : -n1 \
   sh -c 'echo rank $SLURM_PROCID of $SLURM_NTASKS on $SLURMD_NODENAME' | sort)

cat <<EOT

Tessera is running. In your shell:

  export TESSERA_CONF=$qs/tessera.conf PATH=$top/build/bin:\$PATH
  cd $qs/out                           # jobs write their output where they are submitted
  scontrol ping
  sbatch -n2 : -n1 --wrap=hostname     # a het job of two components
  salloc -N1 : -N2                     # an allocation of two components, a shell in it
  srun --het-group=0,1 --label hostname   # (in it) one step over both components
  squeue                               # components show as <id>+<offset>
  squeue -s                            # steps
  scontrol show job <id>
  scancel <id>

Logs are in $qs/log. Stop everything with: contrib/quickstart.sh stop
EOT
