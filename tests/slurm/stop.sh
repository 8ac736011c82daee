#!/usr/bin/env bash
# Stop the single-node SLURM started by tests/slurm/start.sh: slurmd, slurmctld, munged, each
# by its pid file (never by name). Idempotent: a daemon that is not running is skipped.
#   PERFCAST_SLURM_KEEP_MUNGE=1   leave munged running
#   PERFCAST_SLURM_CONF           the slurm.conf start.sh wrote (default /etc/slurm/slurm.conf)
#
# The slurm.conf that start.sh wrote (it carries its mark) is removed once the daemons are down:
# with a configuration naming a controller that no longer runs, every SLURM client call waits
# about 9 s for it, and snakemake-executor-plugin-slurm asks `scontrol show config` whenever
# Snakemake starts, even for a local run. Without the file a client fails at once, as before
# start.sh ran.
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"
RUN=/run/slurm
CONF=${PERFCAST_SLURM_CONF:-/etc/slurm/slurm.conf}
MARK="# written by perfcast tests/slurm/start.sh"

term() {  # term NAME PIDFILE: send SIGTERM, print the pid (empty when not running)
    local name=$1 file=$2 pid
    if [ ! -s "$file" ]; then echo "stop.sh: $name not running (no $file)" >&2; return 0; fi
    pid=$(cat "$file")
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "stop.sh: $name not running (stale $file)" >&2; rm -f "$file"; return 0
    fi
    kill -TERM "$pid" 2>/dev/null || true
    echo "$pid"
}

await() {  # await NAME PIDFILE PID: wait up to 10 s for PID to exit, then SIGKILL it
    local name=$1 file=$2 pid=$3
    [ -n "$pid" ] || return 0
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
        echo "stop.sh: $name ($pid) ignored SIGTERM for 10 s; sending SIGKILL" >&2
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$file"
    echo "stop.sh: stopped $name ($pid)"
}

# Cancel what is still queued or running (a test cluster: every job on it is a test's), so that no
# job step outlives slurmd.
ctld=$(cat "$RUN/slurmctld.pid" 2>/dev/null || true)
if [ -n "$ctld" ] && kill -0 "$ctld" 2>/dev/null && squeue -h >/dev/null 2>&1; then
    jobs=$(squeue -h -t PENDING,RUNNING,CONFIGURING,COMPLETING -o %i | tr '\n' ' ')
    if [ -n "${jobs// }" ]; then
        echo "stop.sh: cancelling jobs $jobs"
        # shellcheck disable=SC2086
        scancel $jobs || true
        for _ in $(seq 100); do
            [ -z "$(squeue -h -t PENDING,RUNNING,CONFIGURING,COMPLETING -o %i)" ] && break
            sleep 0.1
        done
    fi
fi
# slurmd and slurmctld side by side (each takes ~2 s to save its state), munged after them
d=$(term slurmd "$RUN/slurmd.pid")
c=$(term slurmctld "$RUN/slurmctld.pid")
await slurmd "$RUN/slurmd.pid" "$d"
await slurmctld "$RUN/slurmctld.pid" "$c"
if [ "${PERFCAST_SLURM_KEEP_MUNGE:-0}" != 1 ]; then
    m=$(term munged /run/munge/munged.pid)
    await munged /run/munge/munged.pid "$m"
fi
if [ -e "$CONF" ] && grep -qF "$MARK" "$CONF"; then
    rm -f "$CONF"
    echo "stop.sh: removed $CONF"
fi
