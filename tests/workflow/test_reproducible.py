"""Reproducibility of the whole workflow: same config -> same bytes, whatever the
number of cores; nothing changed -> no job; one change -> only the jobs that depend on it rerun.

Two real runs of ``tests/configs/small.yaml`` (3 simulated benchmarks) in two temp dirs, one with
``--cores 2`` and one with ``--cores 1``, run side by side; the rerun checks are dry runs
(``snakemake -n``) against the finished ``--cores 2`` directory with a changed config.
"""

from __future__ import annotations

import copy
import warnings

import pytest
from harness import FIGURE_SUFFIXES, load_config

SMALL = load_config("small.yaml")
BENCHMARKS = SMALL["counters"]["benchmarks"]
AGGREGATE = {"model_trainset", "model_train", "model_evaluate", "counters_figure"}


@pytest.fixture(scope="module")
def two_runs(small_runs):
    """The small config run in two fresh directories at once: ``--cores 2`` and ``--cores 1``
    (the session's shared runs)."""
    return small_runs


@pytest.fixture
def dry_run(snakemake_run):
    """``dry_run(work, config)``: the output of ``snakemake -n all`` in ``work`` on ``config``."""

    def run(work, config: dict) -> str:
        proc = snakemake_run(work, config, ["all"], extra=["-n"])
        return proc.stdout + proc.stderr

    return run


def test_same_config_twice_gives_identical_tables(two_runs, result_hashes, differing):
    """Two directories, --cores 2 and --cores 1: every table is byte-identical."""
    a, b = (result_hashes(two_runs[c]) for c in (2, 1))
    assert len(a) >= 4 * len(BENCHMARKS)  # raw, counters (2 gens), aligned per benchmark + model
    assert {"model/evaluation.parquet", "model/evaluation.csv", "train/trainset.parquet"} <= set(a)
    assert differing(a, b) == [], "tables differ between the two runs"


def test_figures_compared(two_runs, result_hashes, differing):
    """Figures are compared too; a difference is reported (a warning), not a failure."""
    a, b = (result_hashes(two_runs[c], FIGURE_SUFFIXES) for c in (2, 1))
    assert set(a) == set(b) and len(a) >= len(BENCHMARKS) + 2
    diff = differing(a, b)
    if diff:
        warnings.warn(f"figures differ between identical runs: {diff}", stacklevel=1)


def test_nothing_changed_runs_no_job(two_runs, dry_run, planned_jobs):
    out = dry_run(two_runs[2], SMALL)
    assert "Nothing to be done" in out
    assert planned_jobs(out) == {}


def test_added_benchmark_reruns_only_its_jobs(two_runs, dry_run, planned_jobs):
    cfg = copy.deepcopy(SMALL)
    cfg["counters"]["benchmarks"] = [*BENCHMARKS, "exchange2"]
    jobs = planned_jobs(dry_run(two_runs[2], cfg))
    # per-benchmark jobs: only the new benchmark's
    gens = ("g2", "g3")
    assert jobs["counters_collect"] == {f"results/raw/{g}/exchange2/group0.csv" for g in gens}
    assert jobs["counters_postprocess"] == {f"results/counters/{g}/exchange2.parquet"
                                            for g in gens}
    assert jobs["model_align"] == {"results/aligned/exchange2.parquet, "
                                   "results/aligned/exchange2.png"}
    # and every aggregate over benchmarks
    assert AGGREGATE <= set(jobs)


def test_changed_new_generation_clock_reruns_only_new_generation(two_runs, dry_run, planned_jobs):
    """``clock_ghz.g3`` is a param of the g3 collect jobs only: no g2 job reruns."""
    cfg = copy.deepcopy(SMALL)
    cfg["counters"]["clock_ghz"]["g3"] = 2.7
    jobs = planned_jobs(dry_run(two_runs[2], cfg))
    assert jobs["counters_collect"] == {f"results/raw/g3/{b}/group0.csv" for b in BENCHMARKS}
    assert jobs["counters_postprocess"] == {f"results/counters/g3/{b}.parquet" for b in BENCHMARKS}
    assert len(jobs["model_align"]) == len(BENCHMARKS)  # each aligns a g3 trace
    assert AGGREGATE <= set(jobs)


def test_changed_model_parameter_reruns_only_model_jobs(two_runs, dry_run, planned_jobs):
    """``model.n_neighbors`` reaches train and evaluate (and what reads them), nothing upstream."""
    cfg = copy.deepcopy(SMALL)
    cfg["model"]["n_neighbors"] = [5]
    jobs = planned_jobs(dry_run(two_runs[2], cfg))
    assert {"model_train", "model_evaluate"} <= set(jobs)
    upstream = {"counters_collect", "counters_postprocess", "model_align", "model_trainset",
                "counters_figure"}
    assert not upstream & set(jobs), f"upstream jobs rerun: {sorted(upstream & set(jobs))}"
