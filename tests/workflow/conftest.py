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


def _small_run_dirs(tmp_path_factory) -> tuple[Path, dict[int, Path]]:
    """The session's shared temporary folder and the directories of the small config's runs,
    by ``--cores``. Under pytest-xdist every worker sees the same folder (the one every
    worker's base temp is in)."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    return shared, {cores: shared / f"small_runs_cores{cores}" for cores in (2, 1)}


def _small_runs(tmp_path_factory, wanted: tuple[int, ...]) -> dict[int, Path]:
    """``tests/configs/small.yaml`` run to the end with each of ``wanted`` ``--cores``: cores ->
    directory. Each run happens once per test session, under a file lock of its own in the
    session's shared temporary folder: the first worker that needs it runs it, the others
    reuse its directory. The runs nobody has made yet are started together (side by side); a
    run that another worker is making is waited for once this worker's own have ended (each
    lock is released as soon as its run ends, so two workers never wait on each other)."""
    shared, dirs = _small_run_dirs(tmp_path_factory)
    done = {cores: shared / f"small_runs_cores{cores}.done" for cores in wanted}
    small = harness.load_config("small.yaml")
    mine: dict[int, tuple[object, subprocess.Popen]] = {}
    others = []
    try:
        for cores in wanted:
            lock = (shared / f"small_runs_cores{cores}.lock").open("w")
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # another worker is making it
                lock.close()
                others.append(cores)
                continue
            if done[cores].exists():
                lock.close()
                continue
            work = dirs[cores]
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir()
            cfg = work / "config.yaml"
            cfg.write_text(yaml.safe_dump(small, sort_keys=False))
            mine[cores] = (lock, subprocess.Popen(
                harness.snakemake_cmd(work, cfg, cores=cores), stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, text=True))
        for cores, (lock, proc) in mine.items():
            out, _ = proc.communicate(timeout=900)
            assert proc.returncode == 0, f"--cores {cores} run failed:\n{out[-6000:]}"
            done[cores].touch()
            lock.close()
        for cores in others:
            with (shared / f"small_runs_cores{cores}.lock").open("w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)  # the other worker's run has ended
            assert done[cores].exists(), (
                f"the shared --cores {cores} run of small.yaml failed in another worker")
    finally:
        for lock, proc in mine.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            lock.close()
    return {cores: dirs[cores] for cores in wanted}


@pytest.fixture(scope="session")
def small_run(tmp_path_factory) -> Path:
    """``tests/configs/small.yaml`` run to the end with ``--cores 2``, once per test session
    (:func:`_small_runs`): the uninterrupted reference of the fault tests, and the direct run
    the installed package and the module are compared with."""
    return _small_runs(tmp_path_factory, (2,))[2]


@pytest.fixture(scope="session")
def small_runs(tmp_path_factory) -> dict[int, Path]:
    """The small config run with ``--cores 2`` and with ``--cores 1`` (the same runs as
    ``small_run``'s, started side by side when neither exists yet): cores -> directory. The
    reproducibility tests compare them byte for byte."""
    return _small_runs(tmp_path_factory, (2, 1))
