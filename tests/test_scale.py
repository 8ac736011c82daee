"""Scale: a synthetic config with 500 benchmarks builds its DAG (``snakemake -n``).

Only the job counts are asserted here; the time the DAG takes (target < 30 s) is measured by
``benchmarks/bench_workflow.py`` (no timed assertion in tests).
"""

from __future__ import annotations

import copy

from _workflow_util import job_stats, load_config

from perfcast.counters.events import BaseEvents, make_groups

TINY = load_config("tiny.yaml")
N = 500


def synthetic_config(n: int = N) -> dict:
    """The tiny config with ``n`` synthetic benchmarks (the simulator accepts any name)."""
    cfg = copy.deepcopy(TINY)
    cfg["counters"]["benchmarks"] = [f"bench{i:03d}" for i in range(n)]
    return cfg


def test_500_benchmarks_dry_run_lists_every_job(tmp_path):
    from conftest import run_snakemake

    cfg = synthetic_config()
    c = cfg["counters"]
    groups = len(make_groups(c["events"], c["group_size"], BaseEvents(**c.get("base_events", {}))))
    predict_only = [b for b in cfg["predict"]["benchmarks"] if b not in c["benchmarks"]]
    proc = run_snakemake(tmp_path, cfg, ["all"], extra=["-n", "--quiet", "rules"])
    stats = job_stats(proc.stdout + proc.stderr)
    assert groups == 2
    # each training benchmark on both generations, predict-only ones on the old generation
    assert stats["collect"] == (2 * N + len(predict_only)) * groups
    assert stats["postprocess"] == 2 * N + len(predict_only)
    assert stats["align"] == N
    assert stats["predict"] == len(cfg["predict"]["benchmarks"])
    for rule in ("trainset", "train", "evaluate", "counters_figure", "all"):
        assert stats[rule] == 1
    assert stats["total"] == sum(v for k, v in stats.items() if k != "total")
    assert not (tmp_path / "results").exists()  # a dry run writes nothing
