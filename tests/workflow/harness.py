"""The one harness for real Snakemake runs of the workflow (tests under ``tests/workflow``).

Tests reach these through the fixtures of ``tests/workflow/conftest.py`` (``snakemake_run``,
``snakemake_cmd``, ``result_hashes``, ``differing``, ``planned_jobs``, ``job_stats``,
``load_config``); a module-level constant may import from here directly (``from harness import
load_config``: pytest puts ``tests/workflow`` on ``sys.path`` for its conftest).
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
SNAKEFILE = REPO / "workflow" / "Snakefile"
CONFIGS = REPO / "tests" / "configs"
TABLE_SUFFIXES = {".parquet", ".csv", ".json", ".md"}
FIGURE_SUFFIXES = {".png"}
SKIP_DIRS = {"logs", "benchmarks"}


# --- configs and commands ------------------------------------------------------------------------


def load_config(name: str) -> dict:
    """A test config of ``tests/configs`` (``tiny.yaml``, ``small.yaml``) as a dict."""
    return yaml.safe_load((CONFIGS / name).read_text())


def snakemake_cmd(workdir: Path, configfile: Path | None = None, targets: Sequence[str] = ("all",),
                  cores: int | None = 2, extra: Sequence[str] = (),
                  entry: Sequence[str] = ("-m", "snakemake"),
                  workflow_profile: str = "none") -> list[str]:
    """The command ``run_snakemake`` runs, for tests that need a Popen of their own.

    Targets come first: ``--configfile`` takes several values and would swallow them. The
    embedded default config is not merged in (it lives in the repository, not in ``workdir``).
    ``entry``: how Python starts Snakemake (``tests/slurm/steady_poll.py`` for the SLURM runs).
    ``cores`` None: no --cores (a profile's value counts); ``workflow_profile``: none, or the
    path of profiles/default for a run as a user starts it from the repository's root.
    """
    cmd = [sys.executable, *entry, *targets, "-s", str(SNAKEFILE),
           "--directory", str(workdir), "--workflow-profile", workflow_profile]
    if cores is not None:
        cmd += ["--cores", str(cores)]
    if configfile is not None:
        cmd += ["--configfile", str(configfile)]
    return [*cmd, *extra]


def run_snakemake(
    workdir: Path,
    config: dict | None,
    targets: Sequence[str] = (),
    *,
    cores: int | None = 2,
    extra: Sequence[str] = (),
    check: bool = True,
    timeout: float = 900,
    entry: Sequence[str] = ("-m", "snakemake"),
    workflow_profile: str = "none",
) -> subprocess.CompletedProcess:
    """Run the real workflow (``python -m snakemake``) in ``workdir`` on ``config``.

    ``config`` is written to ``workdir/config.yaml`` and passed with ``--configfile``; the other
    arguments as :func:`snakemake_cmd`'s.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    cfg = None
    if config is not None:
        cfg = workdir / "config.yaml"
        cfg.write_text(yaml.safe_dump(config, sort_keys=False))
    cmd = snakemake_cmd(workdir, cfg, targets, cores, extra, entry, workflow_profile)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"snakemake failed ({proc.returncode}):\n{' '.join(cmd)}\n"
            f"--- stdout ---\n{proc.stdout[-6000:]}\n--- stderr ---\n{proc.stderr[-8000:]}"
        )
    return proc


# --- results -------------------------------------------------------------------------------------


def result_hashes(workdir: Path, suffixes: set[str] = TABLE_SUFFIXES) -> dict[str, str]:
    """SHA-256 of every result file with one of ``suffixes``, by path relative to ``results/``.

    Logs and Snakemake benchmark files (timings) are left out: they differ by design. Hidden
    files (``.name.XXXX.ext``, the temporaries of ``perfcast.io.atomic_path``) are left out too.
    """
    res = workdir / "results"
    out = {}
    for path in sorted(res.rglob("*")):
        rel = path.relative_to(res)
        if not path.is_file() or rel.parts[0] in SKIP_DIRS or path.name.startswith("."):
            continue
        if path.suffix in suffixes:
            out[rel.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def differing(a: dict[str, str], b: dict[str, str]) -> list[str]:
    """Paths whose hash differs or that exist on one side only (sorted)."""
    return sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))


# --- dry runs ------------------------------------------------------------------------------------

_RULE = re.compile(r"^\s*(?:local)?rule (\w+):\s*$")  # indented: inside a group job
_OUTPUT = re.compile(r"^\s+output: (.+)$")
_STATS_ROW = re.compile(r"^(\w+)\s+(\d+)\s*$")


def planned_jobs(dry_run_output: str) -> dict[str, set[str]]:
    """Rule -> set of outputs (comma-joined per job) of the jobs a ``snakemake -n`` would run.

    Snakemake 9 prints, per planned job, a ``rule NAME:`` line followed by indented
    ``input:/output:/log:/...`` lines; a job without outputs (``all``) maps to ``""``.
    """
    jobs: dict[str, set[str]] = defaultdict(set)
    rule = None
    outputs = ""
    for line in dry_run_output.splitlines():
        m = _RULE.match(line)
        if m:
            if rule is not None:
                jobs[rule].add(outputs)
            rule, outputs = m.group(1), ""
            continue
        m = _OUTPUT.match(line)
        if m and rule is not None:
            outputs = m.group(1).strip()
    if rule is not None:
        jobs[rule].add(outputs)
    return dict(jobs)


def job_stats(dry_run_output: str) -> dict[str, int]:
    """The ``Job stats:`` table of a dry run (rule -> count, plus ``total``)."""
    lines = dry_run_output.splitlines()
    try:
        start = lines.index("Job stats:")
    except ValueError:
        return {}
    stats = {}
    for line in lines[start + 3:]:
        m = _STATS_ROW.match(line)
        if not m:
            break
        stats[m.group(1)] = int(m.group(2))
    return stats
