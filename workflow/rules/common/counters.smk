# Settings and input functions of the counters stage (rules: ../counters.smk). Other stages use
# its outputs through counters_runs() and counters_table(), and ask for runs besides those of
# counters.benchmarks with request_counter_runs() (the model stage: its predict-only benchmarks);
# this stage reads no other stage's config section.
import functools
import string

from snakemake.exceptions import WorkflowError

from perfcast.counters.events import make_groups
from perfcast.counters.settings import (
    BaseEvents,
    CollectGroupsSettings,
    CountersFigureSettings,
    CountersSummarySettings,
    PostprocessRunSettings,
    PostprocessSettings,
    RunProvenance,
    WholerunSettings,
    collect_settings,
)
from perfcast.settings import as_params, build

COUNTERS = section("counters")
if COUNTERS:
    OLD, NEW = COUNTERS["generations"]["old"], COUNTERS["generations"]["new"]
    BASE_EVENTS = build(BaseEvents, COUNTERS["base_events"])
    # one perf run per group (PMU slots), each with the base events
    COUNTER_GROUPS = make_groups(COUNTERS["events"], COUNTERS["group_size"], BASE_EVENTS)
    TRAIN_BENCHMARKS = sorted(COUNTERS["benchmarks"])
else:
    OLD = NEW = BASE_EVENTS = None
    COUNTER_GROUPS, TRAIN_BENCHMARKS = [], []
SIMULATED = bool(COUNTERS) and COUNTERS["backend"] == "simulate"
COLLECT_PARTITIONS = COUNTERS["partitions"] if COUNTERS else {}
if COLLECT_PARTITIONS and set(COLLECT_PARTITIONS) != {OLD, NEW}:
    raise ValueError(
        f"counters.partitions must name a partition for both generations {OLD!r} and {NEW!r}, "
        f"not {sorted(COLLECT_PARTITIONS)}"
    )
#: the wildcards of a run's files (rule-level wildcard_constraints of the rules whose outputs
#: name a run; other stages' wildcards are their own)
RUN_WILDCARDS = {
    "gen": alternatives([g for g in (OLD, NEW) if g]),
    "bench": r"[A-Za-z0-9_.\-]+",
}
#: runs other stages asked for (request_counter_runs), besides every benchmark on both
_REQUESTED_RUNS = set()


def request_counter_runs(gen, benchmarks):
    """Another stage needs the tables of `benchmarks` on generation `gen` (the model stage: its
    predict-only benchmarks on the old generation): they are collected and post-processed like
    any other run, and are part of counters_runs(), so of the stage's figure and summary. Call
    it when the other stage's functions are included, before the rules."""
    if gen not in (OLD, NEW):
        raise WorkflowError(
            f"counter runs asked for on generation {gen!r}, which is not one of "
            f"counters.generations ({OLD!r}, {NEW!r})"
        )
    _REQUESTED_RUNS.update((gen, b) for b in benchmarks)


def counters_runs():
    """(gen, bench) pairs collected, sorted: every benchmark of counters.benchmarks on both
    generations, and the runs other stages asked for (request_counter_runs)."""
    runs = {(g, b) for b in TRAIN_BENCHMARKS for g in (OLD, NEW)} | _REQUESTED_RUNS
    return sorted(runs)


def counters_table(gen, bench):
    """The post-processed table of one run (wildcard patterns such as "{bench}" pass through)."""
    return f"{RESULTS}/counters/{gen}/{bench}.parquet"


def counters_targets():
    if not is_activated("counters"):
        return []
    return [counters_table(g, b) for g, b in counters_runs()] + [
        f"{RESULTS}/counters/ipc_over_time.png",
        f"{RESULTS}/counters/summary.csv",
    ]


def collect_outputs():
    """The group runs' CSVs of one benchmark on one generation, the reference run (group 0)
    first: outputs of its counters_collect job, inputs of its counters_postprocess job. Plain
    wildcard patterns, not an input function: Snakemake pays for every function once per job.
    (Without a counters section, one pattern keeps the unused rule well-formed.)"""
    groups = max(len(COUNTER_GROUPS), 1)
    return [f"{RESULTS}/raw/{{gen}}/{{bench}}/group{k}.csv" for k in range(groups)]


def collect_sources():
    """Backend import: the already-collected CSV of every group run (counters.import.pattern,
    whose {group} is filled in here and {gen} {bench} by Snakemake); no input otherwise.
    """
    if not COUNTERS or COUNTERS["backend"] != "import":
        return []
    pattern = COUNTERS["import"]["pattern"]
    try:
        sources = [
            pattern.format(gen="{gen}", bench="{bench}", group=k)
            for k in range(len(COUNTER_GROUPS))
        ]
    except (KeyError, IndexError, ValueError) as err:
        raise WorkflowError(
            f"counters.import.pattern {pattern!r}: {type(err).__name__} {err}; expected a path "
            "with the placeholders {gen}, {bench} and {group} only (write a literal brace as "
            "{{ or }})"
        ) from None
    # each group run of each benchmark on each generation is a perf file of its own: a pattern
    # without one of them would give every run of it the same file's counts
    missing = [f for f in ("gen", "bench", "group") if f not in _pattern_fields(pattern)]
    if missing:
        named = ", ".join(f"{{{f}}}" for f in missing)
        raise WorkflowError(
            f"counters.import.pattern {pattern!r} has no {named}: every run would import the "
            "same file; expected a path with {gen}, {bench} and {group} (one perf file per "
            "group run of each benchmark on each generation)"
        )
    return sources


def _pattern_fields(pattern):
    """The placeholders of a path pattern (a malformed one: none; str.format names it)."""
    try:
        return {f for _, f, _, _ in string.Formatter().parse(pattern) if f is not None}
    except ValueError:
        return set()


def wholerun_pattern_fields():
    """The placeholders of counters.wholerun.pattern among gen and bench: what a whole-run
    file's path identifies (perfcast.counters.wholerun.unnamed_by_path refuses a file that
    names neither in its path nor in a table's column)."""
    fields = _pattern_fields(COUNTERS["wholerun"]["pattern"])
    return tuple(f for f in ("gen", "bench") if f in fields)


def wholerun_source():
    """Backend wholerun: the run's whole-run file (counters.wholerun.pattern, {gen} and {bench}
    filled in by Snakemake)."""
    pattern = COUNTERS["wholerun"]["pattern"]
    try:
        return pattern.format(gen="{gen}", bench="{bench}")
    except (KeyError, IndexError, ValueError) as err:
        raise WorkflowError(
            f"counters.wholerun.pattern {pattern!r}: {type(err).__name__} {err}; expected a path "
            "with the placeholders {gen} and {bench} only"
        ) from None


def collect_job_group():
    """The job group of the counters_collect jobs on a cluster (None: one job each). A
    simulated or imported run takes a second and is grouped with its benchmark's other small
    jobs (profiles/slurm: groups, group-components); a perf run is a measurement, and a run
    with a partition of its own (counters.partitions) must land there: both stay single jobs.
    Local runs ignore groups."""
    if not COUNTERS or COUNTERS["backend"] == "perf" or COLLECT_PARTITIONS:
        return None
    return SMALL_JOBS_GROUP


def get_collect_settings(wildcards):
    """Rule counters_collect (perfcast.counters.settings.CollectGroupsSettings): the run, and
    what each of its group runs depends on and nothing else (collect_settings), so that a change
    reruns only the runs it concerns. The perf backend's command is rendered here
    (perfcast.program), so a bad placeholder fails before any job runs."""
    return as_params(
        CollectGroupsSettings(
            generation=wildcards.gen,
            benchmark=wildcards.bench,
            groups=_collect_groups(wildcards.gen, wildcards.bench),
        )
    )


def _collect_groups(gen, bench):
    # only the perf backend's settings name the benchmark: the others are built once per
    # generation, not once per job (thousands of benchmarks)
    return _collect_groups_of(gen, bench if COUNTERS["backend"] == "perf" else None)


@functools.cache
def _collect_groups_of(gen, bench):
    return tuple(
        collect_settings(
            COUNTERS,
            generation=gen,
            benchmark=bench,
            events=events,
            programs=config["programs"],
            seed=config["seed"],
        )
        for events in COUNTER_GROUPS
    )


def collect_runtime():
    """Minutes: the perf backend's timeout plus start-up, once per counter group (the group runs
    follow one another); 10 for the other backends (one value for every job, not a function:
    Snakemake evaluates a function once per job)."""
    if not COUNTERS or COUNTERS["backend"] != "perf":
        return 10
    return len(COUNTER_GROUPS) * (int(COUNTERS["perf"]["timeout_s"] / 60) + 5)


def get_collect_partition(wildcards):
    """The SLURM partition of this generation's machines (counters.partitions)."""
    return COLLECT_PARTITIONS[wildcards.gen]


@functools.cache
def _postprocess_section():
    """counters.events, .base_events, .join, .read and the tolerances
    (perfcast.counters.settings.PostprocessSettings): the same for every run, built once.
    """
    return build(PostprocessSettings, COUNTERS)


def get_postprocess_settings(wildcards):
    """Rule counters_postprocess (perfcast.counters.settings.PostprocessRunSettings): the
    section's post-processing keys and what the table's metadata says about its run."""
    return as_params(
        PostprocessRunSettings(
            postprocess=_postprocess_section(),
            provenance=RunProvenance(
                generation=wildcards.gen,
                benchmark=wildcards.bench,
                backend=COUNTERS["backend"],
                simulated=SIMULATED,
                interval_ms=COUNTERS["interval_ms"],
            ),
        )
    )


def get_wholerun_settings(wildcards):
    """Rule counters_wholerun (perfcast.counters.settings.WholerunSettings): the run, its
    generation's clock (counters.clock_ghz) and the counters."""
    return as_params(
        WholerunSettings(
            postprocess=_postprocess_section(),
            generation=wildcards.gen,
            benchmark=wildcards.bench,
            clock_ghz=COUNTERS["clock_ghz"].get(wildcards.gen),
            pattern_fields=wholerun_pattern_fields(),
        )
    )


def get_counters_figure_settings(wildcards):
    """Rule counters_figure (perfcast.counters.settings.CountersFigureSettings): the runs of its
    input tables, in that order (a function: every stage has asked for its runs by then).
    """
    return as_params(
        CountersFigureSettings(
            runs=tuple(counters_runs()), generations=(OLD, NEW), simulated=SIMULATED
        )
    )


def get_counters_summary_settings(wildcards):
    """Rule counters_summary (perfcast.counters.settings.CountersSummarySettings): the runs of
    its input tables, in that order."""
    return as_params(CountersSummarySettings(runs=tuple(counters_runs())))


def get_counter_tables(wildcards):
    """Every run's table, in counters_runs() order."""
    return [counters_table(g, b) for g, b in counters_runs()]
