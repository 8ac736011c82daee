"""Tests that run Snakemake (the workflow, dry runs included): all marked ``slow`` here, and the
harness of ``harness.py`` as fixtures."""

from __future__ import annotations

from pathlib import Path

import harness
import pytest

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
