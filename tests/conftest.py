"""Shared fixtures: real Snakemake runs of the workflow in a temporary directory."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
ARCP_CSV = SHARED / "data" / "arcp" / "arcp_measurements.csv"


def run_snakemake(
    workdir: Path,
    config: dict | None,
    targets: Sequence[str] = (),
    *,
    cores: int = 2,
    extra: Sequence[str] = (),
    check: bool = True,
    timeout: float = 900,
) -> subprocess.CompletedProcess:
    """Run the real workflow (``python -m snakemake``) in ``workdir`` on ``config``.

    ``config`` is written to ``workdir/config.yaml`` and passed with ``--configfile``; the
    embedded default is not merged in (it lives in the repository, not in ``workdir``).
    """
    workdir.mkdir(parents=True, exist_ok=True)
    # targets first: --configfile takes several values and would swallow them
    cmd = [sys.executable, "-m", "snakemake", *targets, "-s", str(REPO / "Snakefile"),
           "--directory", str(workdir), "--cores", str(cores), "--workflow-profile", "none"]
    if config is not None:
        cfg = workdir / "config.yaml"
        cfg.write_text(yaml.safe_dump(config, sort_keys=False))
        cmd += ["--configfile", str(cfg)]
    cmd += [*extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"snakemake failed ({proc.returncode}):\n{' '.join(cmd)}\n"
            f"--- stdout ---\n{proc.stdout[-6000:]}\n--- stderr ---\n{proc.stderr[-8000:]}"
        )
    return proc


@pytest.fixture
def snakemake_run():
    return run_snakemake


@pytest.fixture(scope="session")
def arcp_csv() -> Path:
    if not ARCP_CSV.exists():
        pytest.skip(f"reference data not found at {ARCP_CSV} (shared/ must sit beside the repo)")
    return ARCP_CSV
