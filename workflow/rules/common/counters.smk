# Settings and input functions of the counters stage (rules: ../counters.smk).
import re

from perfcast.counters.events import BaseEvents, make_groups

C = config.get("counters") or {}
OLD, NEW = C.get("generations", {}).get("old"), C.get("generations", {}).get("new")
BASE = BaseEvents(**C.get("base_events", {}))
GROUPS = make_groups(C["events"], C["group_size"], BASE) if C else []
TRAIN_BENCHMARKS = sorted(C.get("benchmarks", []))
PREDICT_BENCHMARKS = sorted(config.get("predict", {}).get("benchmarks", []))
SIMULATED = C.get("backend") == "simulate"
PARTITIONS = C.get("partitions", {})
PERF = C.get("perf", {})
if PARTITIONS and set(PARTITIONS) != {OLD, NEW}:
    raise ValueError(
        f"counters.partitions must name a partition for both generations {OLD!r} and {NEW!r}, "
        f"not {sorted(PARTITIONS)}"
    )

def counters_runs():
    """(gen, bench) pairs collected: every benchmark on both, predict-only ones on the old one."""
    runs = [(g, b) for b in TRAIN_BENCHMARKS for g in (OLD, NEW)]
    runs += [(OLD, b) for b in PREDICT_BENCHMARKS if b not in TRAIN_BENCHMARKS]
    return sorted(runs)


def counters_targets():
    if not stage_enabled("counters"):
        return []
    return [f"{RESULTS}/counters/{g}/{b}.parquet" for g, b in counters_runs()] + [
        f"{RESULTS}/counters/ipc_over_time.png"
    ]


def _program(bench):
    name = PERF["programs"].get(bench, bench)
    prog = config["programs"].get(name)
    if prog is None:
        raise ValueError(
            f"counters.backend perf: benchmark {bench!r} needs a program {name!r} under programs:"
        )
    return prog


def _collect_command(wildcards):
    if C.get("backend") != "perf":
        return None
    prog = _program(wildcards.bench)
    return prog["command"].replace("{work}", str(prog.get("work", 1)))


def _collect_env(wildcards):
    return _program(wildcards.bench).get("env", {}) if C.get("backend") == "perf" else {}


def _import_source(wildcards):
    if C.get("backend") != "import":
        return []
    return C["import"]["pattern"].format(
        gen=wildcards.gen, bench=wildcards.bench, group=wildcards.group
    )

