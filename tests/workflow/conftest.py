"""Tests that run Snakemake (the workflow, dry runs included): all marked ``slow`` here, and the
harness of ``harness.py`` as fixtures."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import harness
import pytest
import yaml

HERE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test collected under ``tests/workflow`` runs Snakemake: mark it ``slow``."""
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def snakemake_run():
    """``snakemake_run(workdir, config, targets, *, cores, extra, check, timeout)``: run the
    workflow in ``workdir`` on ``config`` (a dict); raises with the output when it fails."""
    return harness.run_snakemake


@pytest.fixture(scope="session")
def snakemake_cmd():
    """``snakemake_cmd(workdir, configfile, targets, cores)``: the command line, for a Popen."""
    return harness.snakemake_cmd


@pytest.fixture(scope="session")
def load_config():
    """``load_config(name)``: a config of ``tests/configs`` (``tiny.yaml``, ``small.yaml``)."""
    return harness.load_config


@pytest.fixture(scope="session")
def result_hashes():
    """``result_hashes(workdir, suffixes)``: SHA-256 of the result files by relative path."""
    return harness.result_hashes


@pytest.fixture(scope="session")
def differing():
    """``differing(a, b)``: the paths whose hashes differ between two ``result_hashes``."""
    return harness.differing


@pytest.fixture(scope="session")
def planned_jobs():
    """``planned_jobs(dry_run_output)``: rule -> outputs of the jobs a dry run plans."""
    return harness.planned_jobs


@pytest.fixture(scope="session")
def job_stats():
    """``job_stats(dry_run_output)``: the ``Job stats:`` table of a dry run."""
    return harness.job_stats


@pytest.fixture(scope="session")
def small_runs(tmp_path_factory) -> dict[int, Path]:
    """``tests/configs/small.yaml`` run to the end in two fresh directories at once, with
    ``--cores 2`` and ``--cores 1``: cores -> directory. Shared by the reproducibility tests
    (the two must agree byte for byte) and the fault tests (the uninterrupted reference), once
    per test session: under pytest-xdist the first worker that needs them runs them, under a
    file lock in the session's shared temporary folder, and the others reuse its directories."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the folder every worker's base temp is in
    dirs = {cores: shared / f"small_runs_cores{cores}" for cores in (2, 1)}
    with (shared / "small_runs.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = shared / "small_runs.done"
        if not done.exists():
            small = harness.load_config("small.yaml")
            procs = {}
            for cores, work in dirs.items():
                shutil.rmtree(work, ignore_errors=True)
                work.mkdir()
                cfg = work / "config.yaml"
                cfg.write_text(yaml.safe_dump(small, sort_keys=False))
                procs[cores] = subprocess.Popen(harness.snakemake_cmd(work, cfg, cores=cores),
                                                stdout=subprocess.PIPE,
                                                stderr=subprocess.STDOUT, text=True)
            for cores, proc in procs.items():
                out, _ = proc.communicate(timeout=900)
                assert proc.returncode == 0, f"--cores {cores} run failed:\n{out[-6000:]}"
            done.touch()
    return dirs
