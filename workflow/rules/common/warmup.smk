# Settings and input functions of the warmup stage (rules: ../warmup.smk).
import os

from snakemake.exceptions import WorkflowError

WARMUP = stage_config("warmup") or {}
WARMUP_NAME = r"[A-Za-z0-9_.\-]+"
# the settings a measurement session depends on (not `counters`, not the workload list)
WARMUP_SESSION_KEYS = ("edm", "ci", "round_lower_bound_s", "session")


def warmup_workloads():
    """Names of the configured workloads (none when the stage is off)."""
    return sorted(WARMUP.get("workloads") or {}) if stage_enabled("warmup") else []


def warmup_counter_traces():
    """(gen, bench) of every trace the counters stage writes (predict-only: old gen only)."""
    if not stage_enabled("counters"):
        return []
    c = config["counters"]
    old, new = c["generations"]["old"], c["generations"]["new"]
    runs = {(g, b) for b in c["benchmarks"] for g in (old, new)}
    runs |= {(old, b) for b in (config.get("predict") or {}).get("benchmarks", [])}
    return sorted(runs)


def warmup_targets():
    if not stage_enabled("warmup"):
        return []
    out = [
        f"{RESULTS}/warmup/{w}/{name}"
        for w in warmup_workloads()
        for name in ("rounds.parquet", "readings.parquet", "summary.json", "phases.png")
    ]
    out += [
        f"{RESULTS}/warmup/counters/{g}/{b}.{ext}"
        for g, b in warmup_counter_traces()
        for ext in ("parquet", "json")
    ]
    return out


def warmup_paper_targets():
    """results/paper/warmup_*: the phases figure, stable throughput (and IPC) tables."""
    if not stage_enabled("warmup"):
        return []
    out = []
    if warmup_workloads():
        out += [f"{RESULTS}/paper/warmup_phases.png", f"{RESULTS}/paper/warmup_throughput.csv"]
    if warmup_counter_traces():
        out.append(f"{RESULTS}/paper/warmup_counters_stable_ipc.csv")
    return out


def warmup_session_settings():
    return {k: WARMUP[k] for k in WARMUP_SESSION_KEYS if k in WARMUP}


def warmup_workload(wildcards):
    return WARMUP["workloads"][wildcards.workload]


def warmup_programs(wildcards):
    """Only the program the workload names (a change elsewhere must not rerun it)."""
    name = warmup_workload(wildcards).get("program")
    programs = config.get("programs") or {}
    return {name: programs[name]} if name in programs else {}


def warmup_threads(wildcards):
    """Every local core, so that no other job of the run disturbs a measurement (capped at
    this host's CPUs; 2 where the total is not known)."""
    try:
        return max(1, min(workflow.cores, os.cpu_count() or 1))
    except WorkflowError:
        return 2


def warmup_runtime(wildcards):
    """Minutes: the session's time budget plus start-up and analysis."""
    session = {**WARMUP.get("session", {}), **warmup_workload(wildcards).get("session", {})}
    return int(session.get("max_time_s", 600) / 60) + 10
