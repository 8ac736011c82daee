"""Scale: a synthetic config with 500 benchmarks builds its DAG (``snakemake -n``).

Only the job counts are asserted here; the time the DAG takes (target < 30 s) is measured by
``benchmarks/bench_workflow.py`` and, against the benchmark count (100, 500, 5,000) with and
without job groups, ``benchmarks/bench_dag.py`` (no timed assertion in tests).
"""

from __future__ import annotations

import copy

import pytest
from harness import load_config

from perfcast.counters.events import BaseEvents, make_groups
from perfcast.settings import build, validate

#: the whole workflow's DAG: the Snakemake floor's check in ``make test-lowest``
pytestmark = pytest.mark.floors

TINY = load_config("tiny.yaml")
N = 500


def synthetic_config(n: int = N) -> dict:
    """The tiny config with ``n`` synthetic benchmarks (the simulator accepts any name)."""
    cfg = copy.deepcopy(TINY)
    cfg["counters"]["benchmarks"] = [f"bench{i:03d}" for i in range(n)]
    return cfg


def test_500_benchmarks_dry_run_lists_every_job(tmp_path, snakemake_run, job_stats):
    cfg = synthetic_config()
    c = cfg["counters"]
    base = build(BaseEvents, validate(c, "counters")["base_events"])
    groups = len(make_groups(c["events"], c["group_size"], base))
    predict_only = [b for b in cfg["predict"]["benchmarks"] if b not in c["benchmarks"]]
    proc = snakemake_run(tmp_path, cfg, ["all"], extra=["-n", "--quiet", "rules"])
    stats = job_stats(proc.stdout + proc.stderr)
    assert groups == 2
    # each training benchmark on both generations, predict-only ones on the old generation;
    # one collect job per run runs all its counter groups
    assert stats["counters_collect"] == 2 * N + len(predict_only)
    assert stats["counters_postprocess"] == 2 * N + len(predict_only)
    assert stats["model_align"] == N
    assert stats["model_predict"] == len(cfg["predict"]["benchmarks"])
    for rule in ("model_trainset", "model_train", "model_evaluate", "counters_figure", "all"):
        assert stats[rule] == 1
    assert stats["total"] == sum(v for k, v in stats.items() if k != "total")
    assert not (tmp_path / "results").exists()  # a dry run writes nothing
