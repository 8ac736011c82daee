"""Surviving faults: a run killed with SIGKILL mid-way and started again ends with the
same results as an uninterrupted run, and the kill leaves no partial output that Snakemake
would take as done. (A corrupt input failing only its own job under ``--keep-going`` is tested in
``test_workflow_counters.py::test_import_backend_and_corrupt_file``.)
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from harness import load_config

SMALL = load_config("small.yaml")
N_RAW = 2 * len(SMALL["counters"]["benchmarks"])  # one counter group, two generations


def _raw_csvs(work):
    return sorted(p for p in (work / "results" / "raw").rglob("*.csv")
                  if not p.name.startswith("."))


def _live_members(pgid: int) -> list[int]:
    """Pids of the process group that are still running (zombies left out: PID 1 of this
    machine does not always reap orphans)."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            pids.append(int(stat.parent.name))
    return pids


def _start(snakemake_cmd, work, cores=2):
    cfg = work / "config.yaml"
    cfg.write_text(yaml.safe_dump(SMALL, sort_keys=False))
    # own session: the kill reaches snakemake and every job process it started
    return subprocess.Popen(snakemake_cmd(work, cfg, cores=cores), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)


@pytest.fixture(scope="module")
def killed_and_reference(tmp_path_factory, snakemake_cmd, small_run):
    """A run SIGKILLed (whole process group) once some, but not all, raw counter files exist,
    and the uninterrupted run of the same config (the session's ``--cores 2`` run of the small
    config). Returns (reference dir, killed dir, files seen at the kill)."""
    killed_dir = tmp_path_factory.mktemp("killed")
    killed = _start(snakemake_cmd, killed_dir)
    deadline = time.monotonic() + 600
    try:
        while not _raw_csvs(killed_dir):
            assert killed.poll() is None, "the run ended before any raw file existed"
            assert time.monotonic() < deadline, "no raw file after 600 s"
            time.sleep(0.05)
    finally:
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait()
    time.sleep(0.5)
    assert _live_members(killed.pid) == []  # nothing of the killed run is left running
    at_kill = {p: p.read_bytes() for p in (killed_dir / "results").rglob("*") if p.is_file()}
    return small_run, killed_dir, at_kill


def test_kill_happened_mid_run(killed_and_reference):
    _, killed_dir, at_kill = killed_and_reference
    raw = [p for p in at_kill if p.parent.parent.parent.name == "raw" and p.suffix == ".csv"
           and not p.name.startswith(".")]
    assert 1 <= len(raw) < N_RAW
    assert not (killed_dir / "results" / "model" / "evaluation.parquet").exists()


def test_no_partial_output_after_kill(killed_and_reference):
    """Every output present right after the kill is complete: byte-identical to the
    uninterrupted run's. Temporaries of interrupted writes are hidden ``.name.XXXX`` files that
    match no output pattern."""
    ref_dir, killed_dir, at_kill = killed_and_reference
    res = killed_dir / "results"
    for path, data in at_kill.items():
        rel = path.relative_to(res)
        if rel.parts[0] in {"logs", "benchmarks"}:
            continue
        if path.name.startswith("."):
            continue  # an interrupted atomic write: Snakemake never reads it as an output
        assert data == (ref_dir / "results" / rel).read_bytes(), f"partial output {rel}"


def test_restart_completes_with_same_results(killed_and_reference, snakemake_run, result_hashes,
                                             differing):
    ref_dir, killed_dir, _ = killed_and_reference
    cfg = yaml.safe_load((killed_dir / "config.yaml").read_text())
    # the SIGKILL left Snakemake's lock behind: release it, then rerun what was incomplete
    snakemake_run(killed_dir, cfg, ["all"], extra=["--unlock"])
    proc = snakemake_run(killed_dir, cfg, ["all"], extra=["--rerun-incomplete"])
    assert "steps (100%) done" in proc.stdout + proc.stderr
    ref, restarted = result_hashes(ref_dir), result_hashes(killed_dir)
    assert "model/evaluation.parquet" in ref
    assert differing(ref, restarted) == []
    # and the restarted directory is complete: nothing left to do
    again = snakemake_run(killed_dir, cfg, ["all"], extra=["-n"])
    assert "Nothing to be done" in again.stdout + again.stderr
