"""Tests that run Snakemake (the workflow, dry runs included): all marked ``slow`` here, and the
harness of ``harness.py`` as fixtures."""

from __future__ import annotations

import subprocess
from pathlib import Path

import harness
import pytest
import yaml

HERE = Path(__file__).resolve().parent


#: test modules that share a session fixture run on one xdist worker (one copy of the fixture)
SHARED_FIXTURE_GROUPS = {"test_reproducible": "small_runs", "test_faults": "small_runs"}


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test collected under ``tests/workflow`` runs Snakemake: mark it ``slow``. Under
    pytest-xdist (``-n N --dist loadgroup``, as ``make test`` runs) each module's tests stay on
    one worker, so that its module- and session-scoped runs of the workflow happen once."""
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.slow)
            if item.get_closest_marker("xdist_group") is None:  # a test's own group wins
                group = SHARED_FIXTURE_GROUPS.get(item.path.stem, item.path.stem)
                item.add_marker(pytest.mark.xdist_group(group))


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
    (the two must agree byte for byte) and the fault tests (the uninterrupted reference)."""
    small = harness.load_config("small.yaml")
    runs = {}
    for cores in (2, 1):
        work = tmp_path_factory.mktemp(f"small_cores{cores}")
        cfg = work / "config.yaml"
        cfg.write_text(yaml.safe_dump(small, sort_keys=False))
        proc = subprocess.Popen(harness.snakemake_cmd(work, cfg, cores=cores),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        runs[cores] = (work, proc)
    for cores, (_, proc) in runs.items():
        out, _ = proc.communicate(timeout=900)
        assert proc.returncode == 0, f"--cores {cores} run failed:\n{out[-6000:]}"
    return {cores: work for cores, (work, _) in runs.items()}
