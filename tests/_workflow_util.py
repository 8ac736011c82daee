"""Helpers shared by the reproducibility, fault and scale tests of the whole workflow."""

from __future__ import annotations

import hashlib
import re
import sys
from collections import defaultdict
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "tests" / "configs"
TABLE_SUFFIXES = {".parquet", ".csv", ".json", ".md"}
FIGURE_SUFFIXES = {".png"}
SKIP_DIRS = {"logs", "benchmarks"}


def load_config(name: str) -> dict:
    return yaml.safe_load((CONFIGS / name).read_text())


def snakemake_cmd(workdir: Path, configfile: Path, targets=("all",), cores: int = 2) -> list[str]:
    """The command ``conftest.run_snakemake`` runs, for tests that need a Popen of their own."""
    return [sys.executable, "-m", "snakemake", *targets, "-s", str(REPO / "Snakefile"),
            "--directory", str(workdir), "--cores", str(cores), "--workflow-profile", "none",
            "--configfile", str(configfile)]


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


_RULE = re.compile(r"^(?:local)?rule (\w+):\s*$")
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
