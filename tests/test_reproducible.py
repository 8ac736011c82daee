"""Reproducibility of the whole workflow: same config -> same bytes, whatever the
number of cores; nothing changed -> no job; one change -> only the jobs that depend on it rerun.

Two real runs of ``tests/configs/small.yaml`` (3 simulated benchmarks) in two temp dirs, one with
``--cores 2`` and one with ``--cores 1``, run side by side; the rerun checks are dry runs
(``snakemake -n``) against the finished ``--cores 2`` directory with a changed config.
"""

from __future__ import annotations

import copy
import subprocess
import warnings

import pytest
import yaml
from _workflow_util import (
    FIGURE_SUFFIXES,
    differing,
    load_config,
    planned_jobs,
    result_hashes,
    snakemake_cmd,
)

SMALL = load_config("small.yaml")
BENCHMARKS = SMALL["counters"]["benchmarks"]
AGGREGATE = {"trainset", "train", "evaluate", "counters_figure"}


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """The small config run in two fresh directories at once: ``--cores 2`` and ``--cores 1``."""
    runs = {}
    for cores in (2, 1):
        work = tmp_path_factory.mktemp(f"cores{cores}")
        cfg = work / "config.yaml"
        cfg.write_text(yaml.safe_dump(SMALL, sort_keys=False))
        proc = subprocess.Popen(snakemake_cmd(work, cfg, cores=cores), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        runs[cores] = (work, proc)
    for cores, (_, proc) in runs.items():
        out, _ = proc.communicate(timeout=900)
        assert proc.returncode == 0, f"--cores {cores} run failed:\n{out[-6000:]}"
    return {cores: work for cores, (work, _) in runs.items()}


def dry_run(work, config: dict) -> str:
    from conftest import run_snakemake

    proc = run_snakemake(work, config, ["all"], extra=["-n"])
    return proc.stdout + proc.stderr


def test_same_config_twice_gives_identical_tables(two_runs):
    """Two directories, --cores 2 and --cores 1: every table is byte-identical."""
    a, b = (result_hashes(two_runs[c]) for c in (2, 1))
    assert len(a) >= 4 * len(BENCHMARKS)  # raw, counters (2 gens), aligned per benchmark + model
    assert {"model/evaluation.parquet", "model/evaluation.csv", "train/trainset.parquet"} <= set(a)
    assert differing(a, b) == [], "tables differ between the two runs"


def test_figures_compared(two_runs):
    """Figures are compared too; a difference is reported (a warning), not a failure."""
    a, b = (result_hashes(two_runs[c], FIGURE_SUFFIXES) for c in (2, 1))
    assert set(a) == set(b) and len(a) >= len(BENCHMARKS) + 2
    diff = differing(a, b)
    if diff:
        warnings.warn(f"figures differ between identical runs: {diff}", stacklevel=1)


def test_nothing_changed_runs_no_job(two_runs):
    out = dry_run(two_runs[2], SMALL)
    assert "Nothing to be done" in out
    assert planned_jobs(out) == {}


def test_added_benchmark_reruns_only_its_jobs(two_runs):
    cfg = copy.deepcopy(SMALL)
    cfg["counters"]["benchmarks"] = [*BENCHMARKS, "exchange2"]
    jobs = planned_jobs(dry_run(two_runs[2], cfg))
    # per-benchmark jobs: only the new benchmark's
    assert jobs["collect"] == {f"results/raw/{g}/exchange2/group0.csv" for g in ("g2", "g3")}
    assert jobs["postprocess"] == {f"results/counters/{g}/exchange2.parquet" for g in ("g2", "g3")}
    assert jobs["align"] == {"results/aligned/exchange2.parquet, results/aligned/exchange2.png"}
    # and every aggregate over benchmarks
    assert AGGREGATE <= set(jobs)


def test_changed_new_generation_clock_reruns_only_new_generation(two_runs):
    """``clock_ghz.g3`` is a param of the g3 collect jobs only: no g2 job reruns."""
    cfg = copy.deepcopy(SMALL)
    cfg["counters"]["clock_ghz"]["g3"] = 2.7
    jobs = planned_jobs(dry_run(two_runs[2], cfg))
    assert jobs["collect"] == {f"results/raw/g3/{b}/group0.csv" for b in BENCHMARKS}
    assert jobs["postprocess"] == {f"results/counters/g3/{b}.parquet" for b in BENCHMARKS}
    assert len(jobs["align"]) == len(BENCHMARKS)  # each aligns a g3 trace
    assert AGGREGATE <= set(jobs)


def test_changed_model_parameter_reruns_only_model_jobs(two_runs):
    """``model.n_neighbors`` reaches train and evaluate (and what reads them), nothing upstream."""
    cfg = copy.deepcopy(SMALL)
    cfg["model"]["n_neighbors"] = [5]
    jobs = planned_jobs(dry_run(two_runs[2], cfg))
    assert {"train", "evaluate"} <= set(jobs)
    upstream = {"collect", "postprocess", "align", "trainset", "counters_figure"}
    assert not upstream & set(jobs), f"upstream jobs rerun: {sorted(upstream & set(jobs))}"
