#!/usr/bin/env bash
# The quick start from start to stop, as the README shows it: it comes up, runs a job whose
# child daemonises itself, and `contrib/quickstart.sh stop` leaves nothing running.
# Run by contrib/test.sh after the build; uses its own folder and port.
set -euo pipefail
cd "$(dirname "$0")/.."
export TESSERA_QS_DIR=${TESSERA_QS_DIR:-$PWD/build/quickstart-check}
export TESSERA_QS_PORT=${TESSERA_QS_PORT:-16917}
rm -rf "$TESSERA_QS_DIR"
trap 'contrib/quickstart.sh stop >/dev/null 2>&1 || true; rm -rf "$TESSERA_QS_DIR"' EXIT

contrib/quickstart.sh >"$TESSERA_QS_DIR.log" 2>&1 || { cat "$TESSERA_QS_DIR.log"; exit 1; }
export TESSERA_CONF=$TESSERA_QS_DIR/tessera.conf
# a unique duration names this run's processes
nap="299.$$"
build/bin/sbatch -D "$TESSERA_QS_DIR/out" -o /dev/null -t 48:00:00 \
  --wrap="setsid sleep $nap & sleep $nap" >/dev/null
for _ in $(seq 100); do
  [[ $(build/bin/squeue -h -o %T) == RUNNING ]] && break
  sleep 0.1
done
[[ $(build/bin/squeue -h -o %T) == RUNNING ]] || { echo "the job did not start" >&2; exit 1; }
contrib/quickstart.sh stop
left=$(pgrep -f "$TESSERA_QS_DIR|sleep $nap" || true)
if [[ -n $left ]]; then
  echo "left running after stop:" >&2
  ps -o pid,stat,args -p $left >&2 || true
  exit 1
fi
echo "quick start: started, ran a job, stopped with nothing left running"
