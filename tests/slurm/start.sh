#!/usr/bin/env bash
# Start a single-node SLURM cluster on localhost: munged, slurmctld and slurmd as root; partitions
# "batch" (the default), "debug", "oldnodes" and "newnodes", each holding this machine (CPUs from nproc,
# memory from free); no accounting database, no cgroups. Idempotent: when sinfo already answers,
# it only waits for the node to be idle and returns 0. Run tests/slurm/install.sh first; stop
# with tests/slurm/stop.sh.
#
#   PERFCAST_SLURM_CONF   where to write slurm.conf (default /etc/slurm/slurm.conf)
#   PERFCAST_SLURM_WAIT   seconds to wait for the node to become idle (default 60)
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"

CONF=${PERFCAST_SLURM_CONF:-/etc/slurm/slurm.conf}
WAIT=${PERFCAST_SLURM_WAIT:-60}
MARK="# written by perfcast tests/slurm/start.sh"
STATE=/var/lib/slurm
LOGDIR=/var/log/slurm
RUN=/run/slurm

log() { echo "start.sh: $*"; }
die() { echo "start.sh: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root (munged, slurmctld and slurmd are started here)"
for prog in munged slurmctld slurmd sinfo; do
    command -v "$prog" >/dev/null 2>&1 || die "$prog not found: run tests/slurm/install.sh"
done

alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

wait_idle() {
    local state=""
    for _ in $(seq $((WAIT * 5))); do
        state=$(sinfo -h -N -n localhost -o %T 2>/dev/null | head -n1 || true)
        case "$state" in
            idle|mixed|allocated|completing) log "node localhost is $state"; return 0 ;;
            down*|drain*|fail*)  # e.g. left down by an unclean stop: hand it back
                scontrol update NodeName=localhost State=RESUME >/dev/null 2>&1 || true ;;
        esac
        sleep 0.2
    done
    echo "start.sh: node not idle after ${WAIT}s (state '${state}'); last log lines:" >&2
    tail -n 20 "$LOGDIR/slurmctld.log" "$LOGDIR/slurmd.log" >&2 2>/dev/null || true
    exit 1
}

# Already up (ours or a real site's): nothing to write or start.
# (scontrol ping first: it answers at once, sinfo retries for ~9 s when no controller runs)
if scontrol ping 2>/dev/null | grep -q UP && sinfo -h >/dev/null 2>&1; then
    log "slurmctld already answers"
    wait_idle
    exit 0
fi

# --- slurm.conf --------------------------------------------------------------------------
if [ -e "$CONF" ] && ! grep -qF "$MARK" "$CONF"; then
    die "$CONF exists and was not written by this script; refusing to overwrite it"
fi
cpus=$(nproc)
mem_total=$(free -m | awk '/^Mem:/ {print $2}')
mem=$(( mem_total > 2048 ? mem_total - 1024 : mem_total * 3 / 4 ))  # slurmd drains a node that has less than RealMemory
mkdir -p "$(dirname "$CONF")" "$STATE/slurmctld" "$STATE/slurmd" "$LOGDIR" "$RUN"
cat > "$CONF" <<CONF
$MARK: a single-node test cluster on localhost.
ClusterName=perfcast-test
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
ReturnToService=2
MinJobAge=3600
SlurmctldTimeout=30
SlurmdTimeout=30
StateSaveLocation=$STATE/slurmctld
SlurmdSpoolDir=$STATE/slurmd
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd.pid
SlurmctldLogFile=$LOGDIR/slurmctld.log
SlurmdLogFile=$LOGDIR/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
# "batch" is the cluster's default; "debug" is the one profiles/slurm names, so a job that lands
# there got its partition from the profile. "oldnodes"/"newnodes" stand in for the machines of an
# old and a new CPU generation (counters.partitions sends each generation's collect jobs to one).
PartitionName=batch Nodes=localhost Default=YES MaxTime=INFINITE State=UP
PartitionName=debug Nodes=localhost MaxTime=INFINITE State=UP
PartitionName=oldnodes Nodes=localhost MaxTime=INFINITE State=UP
PartitionName=newnodes Nodes=localhost MaxTime=INFINITE State=UP
CONF
log "wrote $CONF (CPUs=$cpus RealMemory=${mem}MB)"

# --- munge ---------------------------------------------------------------------------------
KEY=/etc/munge/munge.key
if [ ! -s "$KEY" ]; then
    mkdir -p /etc/munge
    if command -v mungekey >/dev/null 2>&1; then
        mungekey --create --keyfile="$KEY" --force
    else
        dd if=/dev/urandom of="$KEY" bs=1 count=1024 status=none
    fi
    log "made $KEY"
fi
chown munge:munge /etc/munge "$KEY"
chmod 700 /etc/munge
chmod 400 "$KEY"
mkdir -p /run/munge /var/lib/munge /var/log/munge
chown munge:munge /run/munge /var/lib/munge /var/log/munge
chmod 755 /run/munge
if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    log "munged already running"
else
    runuser -u munge -- munged
    for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
    munge -n | unmunge >/dev/null || die "munged does not answer"
    log "started munged"
fi

# --- slurmctld, slurmd ------------------------------------------------------------------------
# -c: start from a clean job state (this is a throw-away test cluster).
if alive "$RUN/slurmctld.pid"; then log "slurmctld already running"; else slurmctld -c; log "started slurmctld"; fi
for _ in $(seq 50); do scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.1; done
if alive "$RUN/slurmd.pid"; then log "slurmd already running"; else slurmd -c -N localhost; log "started slurmd"; fi
wait_idle
