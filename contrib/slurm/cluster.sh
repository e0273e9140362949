#!/usr/bin/env bash
# Debian's Slurm 22.05 as a private four-node cluster on this machine, to compare Tessera's
# behaviour with Slurm's (docs/slurm-differences.md): slurmctld and four `slurmd -N nX` on
# loopback ports below the ephemeral range, a private munged, everything in one folder.
#
#   contrib/slurm/cluster.sh start [DIR]   installs Slurm if missing, starts it, prints the
#                                          line to source: export SLURM_CONF=DIR/slurm.conf
#   contrib/slurm/cluster.sh stop [DIR]    stops it and removes the folder
#
# DIR defaults to /tmp/slurm-ref. The commands (sbatch, squeue, ...) are Slurm's own from
# /usr/bin; with SLURM_CONF set they talk to this cluster.
set -euo pipefail

dir=${2:-/tmp/slurm-ref}
ctld_port=${SLURM_REF_PORT:-16817}

install_slurm() {
  command -v slurmctld >/dev/null && command -v slurmd >/dev/null && return
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurmctld slurmd slurm-client munge </dev/null
}

write_conf() {
  local host; host=$(hostname)
  {
    echo "ClusterName=ref"
    echo "SlurmctldHost=$host"
    echo "SlurmctldPort=$ctld_port"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "AuthType=auth/munge"
    echo "AuthInfo=socket=$dir/munge.socket"
    echo "CredType=cred/munge"
    echo "StateSaveLocation=$dir/ctld"
    echo "SlurmdSpoolDir=$dir/spool-%n"
    echo "SlurmctldPidFile=$dir/slurmctld.pid"
    echo "SlurmdPidFile=$dir/slurmd-%n.pid"
    echo "SlurmctldLogFile=$dir/slurmctld.log"
    echo "SlurmdLogFile=$dir/slurmd-%n.log"
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_Core_Memory"
    echo "MpiDefault=none"
    echo "ReturnToService=2"
    echo "SlurmdParameters=config_overrides" # nodes declare more CPUs than this machine has
    echo "MailProg=/bin/true"
    echo "JobCompType=jobcomp/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "SchedulerType=sched/backfill"
    echo "MinJobAge=300"
    for i in 1 2 3 4; do
      echo "NodeName=n$i NodeHostname=$host NodeAddr=127.0.0.1 Port=$((ctld_port + i)) CPUs=4 RealMemory=2000 State=UNKNOWN"
    done
    echo "PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=INFINITE State=UP"
  } > "$dir/slurm.conf"
}

start() {
  install_slurm
  [[ -e $dir ]] && { echo "$dir exists: stop it first" >&2; exit 1; }
  mkdir -p "$dir/ctld" "$dir/out"
  chmod 755 "$dir"; chmod 1777 "$dir/out"
  head -c 1024 /dev/urandom > "$dir/munge.key"; chmod 600 "$dir/munge.key"
  /usr/sbin/munged --force --key-file="$dir/munge.key" --socket="$dir/munge.socket" \
    --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munged.seed"
  write_conf
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -f "$SLURM_CONF" -c
  for i in 1 2 3 4; do mkdir -p "$dir/spool-n$i"; slurmd -f "$SLURM_CONF" -N "n$i"; done
  for _ in $(seq 200); do
    [[ $(sinfo -h -o %t 2>/dev/null) == idle ]] && break
    sleep 0.1
  done
  sinfo
  echo "export SLURM_CONF=$dir/slurm.conf"
}

stop() {
  [[ -d $dir ]] || return 0
  for f in "$dir"/slurmd-n*.pid "$dir/slurmctld.pid" "$dir/munged.pid"; do
    [[ -f $f ]] && kill "$(cat "$f")" 2>/dev/null || true
  done
  for _ in $(seq 100); do
    pgrep -f "$dir/slurm.conf" >/dev/null || break
    sleep 0.1
  done
  pkill -9 -f "$dir/slurm.conf" 2>/dev/null || true
  rm -rf "$dir"
}

case ${1:-} in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop [DIR]" >&2; exit 2 ;;
esac
