# Settings, targets and input functions of the warmup stage (rules: ../warmup.smk). Other stages
# use its outputs through warmup_counter_phases_enabled() and get_warmup_counter_phases(); it
# uses the counters stage's traces through counters_runs(). Each job's settings are one frozen
# dataclass of perfcast.warmup.settings, passed as the rule's one `settings` param (its plain
# dict, perfcast.settings.as_params: a change reruns exactly the jobs it concerns).
import os
import sys

from snakemake.exceptions import WorkflowError

from perfcast.settings import as_params, build
from perfcast.warmup.settings import (
    PaperSettings,
    RunSettings,
    TraceSettings,
    WarmupSettings,
    session_settings,
)

WARMUP = section("warmup")
#: generation and benchmark names of a counter trace (any: a trace may come from elsewhere)
WARMUP_TRACE_NAME = r"[A-Za-z0-9_.\-]+"


def warmup_workloads():
    """Names of the configured workloads (none when the stage is off)."""
    return sorted(WARMUP["workloads"]) if is_activated("warmup") else []


def warmup_counter_phases_enabled():
    """Whether the warmup stage labels the phases of the counters stage's traces: both stages
    are activated (warmup.enabled and counters.enabled, their sections present)."""
    return is_activated("warmup") and is_activated("counters")


def warmup_counter_traces():
    """(gen, bench) of every counter trace whose phases are labelled: every trace the counters
    stage writes (counters_runs()), when warmup_counter_phases_enabled()."""
    return counters_runs() if warmup_counter_phases_enabled() else []


def warmup_counter_phases_path(gen, bench):
    """The phase labels of one counter trace (rule warmup_counter_phases; wildcard patterns
    such as "{bench}" pass through)."""
    return f"{RESULTS}/warmup/counters/{gen}/{bench}.parquet"


def get_warmup_counter_phases(gen, benchmarks):
    """The phase labels (a Parquet with interval, phase) of the counter traces of `benchmarks`
    on generation `gen`, in the order of `benchmarks`: what another stage reads them by.

    Raises WorkflowError when the labels are not computed (warmup_counter_phases_enabled() is
    false: ask it first) or when the counters stage writes no trace for one of the pairs.
    """
    if not warmup_counter_phases_enabled():
        raise WorkflowError(
            "phase labels of counter traces need both the warmup stage and the counters stage "
            "(warmup.enabled and counters.enabled, their sections present)"
        )
    traces = set(counters_runs())
    missing = [b for b in benchmarks if (gen, b) not in traces]
    if missing:
        raise WorkflowError(
            f"no counter trace (counters.benchmarks, predict.benchmarks) for generation {gen!r}"
            f" of {missing}, so the warmup stage labels no phases for them"
        )
    return [warmup_counter_phases_path(gen, b) for b in benchmarks]


def warmup_targets():
    if not is_activated("warmup"):
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
    if not is_activated("warmup"):
        return []
    out = []
    if warmup_workloads():
        out += [
            f"{RESULTS}/paper/warmup_phases.png",
            f"{RESULTS}/paper/warmup_throughput.csv",
        ]
    if warmup_counter_traces():
        out.append(f"{RESULTS}/paper/warmup_counters_stable_ipc.csv")
    return out


#: the validated warmup section as settings (when the stage runs)
WARMUP_SETTINGS = build(WarmupSettings, WARMUP, where="warmup") if is_activated("warmup") else None
#: workload -> the settings its measurement session depends on
#: (perfcast.warmup.settings.session_settings: the workload, the one program it names, the seed,
#: and warmup.edm, .ci, .round_lower_bound_s, .wps_max_prediction_error, .session). A change of
#: anything else (another workload or program, warmup.counters) reruns no session. Built here,
#: so that a bad workload (a program not under programs:, a command without {work}) is an error
#: before any job runs.
WARMUP_SESSIONS = {
    w: session_settings(w, WARMUP, config["programs"], config["seed"]) for w in warmup_workloads()
}

if is_activated("warmup") and not is_activated("counters"):
    # (visible, not an error: a counter trace written elsewhere may still be asked for by path)
    print(
        "perfcast: note: warmup is enabled but the counters stage is not (counters.enabled is "
        "false or there is no counters: section), so no counter trace gets its phases "
        "(warmup.counters, rule warmup_counter_phases) and results/paper/"
        "warmup_counters_stable_ipc.csv is not made",
        file=sys.stderr,
    )


def get_warmup_run_settings(wildcards):
    """The warmup_run job's settings (perfcast.warmup.settings.RunSettings): the workload's
    session (WARMUP_SESSIONS) and its durable journal, which is not an output, so that it
    survives a failed or killed job, which is how a run resumes."""
    journal = f"{RESULTS}/warmup/{wildcards.workload}/journal.jsonl"
    return as_params(RunSettings(WARMUP_SESSIONS[wildcards.workload], journal))


def get_warmup_counter_phases_settings(wildcards):
    """The warmup_counter_phases job's settings (perfcast.warmup.settings.TraceSettings):
    warmup.counters, the same for every trace, and the trace's generation and benchmark.
    """
    if WARMUP_SETTINGS is None:
        raise WorkflowError(
            "phase labels of a counter trace need the warmup stage "
            "(a warmup: section with warmup.enabled true)"
        )
    return as_params(TraceSettings(WARMUP_SETTINGS.counters, wildcards.gen, wildcards.bench))


def warmup_paper_settings():
    """The warmup_paper job's settings (perfcast.warmup.settings.PaperSettings): the workloads,
    in the order of its inputs."""
    return as_params(PaperSettings(tuple(warmup_workloads())))


def get_warmup_threads(wildcards):
    """Every local core, so that no other job of the run disturbs a measurement (capped at
    this host's CPUs; 2 where the total is not known)."""
    try:
        return max(1, min(workflow.cores, os.cpu_count() or 1))
    except WorkflowError:
        return 2


def get_warmup_runtime(wildcards):
    """Minutes: the session's time budget plus start-up and analysis."""
    return int(WARMUP_SESSIONS[wildcards.workload].limits.max_time_s / 60) + 10
