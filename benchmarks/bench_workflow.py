"""Workflow scale and overhead, as ratios measured in one run.

(a) DAG build: ``snakemake -n`` of a synthetic config with 500 benchmarks (tests/configs/tiny.yaml
    with bench000..bench499; target < 30 s), against the same dry run at 50 benchmarks.
(b) Per-job overhead: the tiny config run for real with ``--cores 2``; the work of each job is
    its Snakemake benchmark file (``results/benchmarks/**/*.tsv``, column ``s``: the job's wall
    time, script start-up included); overhead per job = (wall * cores - sum(s)) / jobs, i.e. the
    core-seconds Snakemake itself spends around each job. Reference: the start-up of one job's
    interpreter (``python -c "import pandas, pyarrow.parquet, perfcast.io"``), which is inside
    every job's ``s``. Plus a second run with nothing changed.
(c) ``--full``: the default main job (config/config.yaml, every stage) end to end with
    ``--cores 2``, and a second run with nothing changed. It runs in a fresh directory beside
    the repository (``/work/.bench_workflow_*``), so paths a config gives relative to the checkout
    (``../...``) resolve as they do there.

    .venv/bin/python benchmarks/bench_workflow.py [--full] [--keep]

Writes benchmarks/out/workflow.json and prints a table.
"""

from __future__ import annotations

import argparse
import copy
import csv
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent))
from _util import save  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TINY = yaml.safe_load((REPO / "tests" / "configs" / "tiny.yaml").read_text())
DAG_TARGET_S = 30.0
LAST_CPU_S = 0.0


def snakemake(workdir: Path, configfile: Path | None, *extra: str, cores: int = 2) -> float:
    """Run the workflow in ``workdir``; returns the wall time in seconds (raises on failure).

    The CPU seconds of the run (user + sys of Snakemake and its jobs) go to ``LAST_CPU_S``: on
    a shared machine the wall time includes waiting for a core, the CPU time does not."""
    global LAST_CPU_S
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cmd = [sys.executable, "-m", "snakemake", "all", "-s", str(REPO / "workflow" / "Snakefile"),
           "--directory", str(workdir), "--cores", str(cores), "--workflow-profile", "none"]
    if configfile is not None:
        cmd += ["--configfile", str(configfile)]
    cmd += list(extra)
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    LAST_CPU_S = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}")
    return wall


def write_config(workdir: Path, cfg: dict) -> Path:
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / "config.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def synthetic(n: int) -> dict:
    cfg = copy.deepcopy(TINY)
    cfg["counters"]["benchmarks"] = [f"bench{i:03d}" for i in range(n)]
    return cfg


def bench_dag(tmp: Path) -> dict:
    out = {}
    for n in (50, 500):
        work = tmp / f"dag{n}"
        out[f"dry_run_{n}_s"] = snakemake(work, write_config(work, synthetic(n)), "-n",
                                          "--quiet", "rules")
        out[f"dry_run_{n}_cpu_s"] = LAST_CPU_S
    out["load_average_1min"] = os.getloadavg()[0]
    out["dry_run_500_over_target"] = out["dry_run_500_s"] / DAG_TARGET_S
    out["dry_run_500_over_50"] = out["dry_run_500_s"] / out["dry_run_50_s"]
    return out


def job_seconds(results: Path) -> list[float]:
    """Column ``s`` of every Snakemake benchmark file under ``results/benchmarks``."""
    secs = []
    for tsv in sorted((results / "benchmarks").rglob("*.tsv")):
        rows = list(csv.DictReader(tsv.open(), delimiter="\t"))
        secs += [float(r["s"]) for r in rows]
    return secs


def startup_s() -> float:
    """Interpreter start-up plus the imports every job's script pays (best of 3)."""
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import pandas, pyarrow.parquet, perfcast.io"],
                       check=True)
        best = min(best, time.perf_counter() - t)
    return best


def bench_overhead(tmp: Path, cores: int = 2) -> dict:
    work = tmp / "tiny"
    cfg = write_config(work, TINY)
    wall = snakemake(work, cfg, cores=cores)
    secs = job_seconds(work / "results")
    jobs = len(secs)
    overhead = (wall * cores - sum(secs)) / jobs
    start = startup_s()
    rerun = snakemake(work, cfg, cores=cores)
    return {
        "tiny_jobs": jobs, "tiny_cores": cores, "tiny_wall_s": wall,
        "tiny_job_s_sum": sum(secs), "tiny_job_s_mean": sum(secs) / jobs,
        "overhead_per_job_s": overhead,
        "overhead_over_job_s": overhead / (sum(secs) / jobs),
        "job_startup_s": start, "job_startup_over_job_s": start / (sum(secs) / jobs),
        "tiny_nothing_changed_s": rerun, "tiny_nothing_changed_over_run": rerun / wall,
    }


def bench_full(cores: int = 2) -> dict:
    # beside the repository, so that paths relative to the checkout (../...) resolve as there
    work = Path(tempfile.mkdtemp(prefix=".bench_workflow_", dir=REPO.parent))
    try:
        cfg = REPO / "config" / "config.yaml"
        wall = snakemake(work, cfg, cores=cores)
        secs = job_seconds(work / "results")
        rerun = snakemake(work, cfg, cores=cores)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"full_wall_s": wall, "full_jobs": len(secs), "full_job_s_sum": sum(secs),
            "full_overhead_per_job_s": (wall * cores - sum(secs)) / len(secs),
            "full_nothing_changed_s": rerun, "full_nothing_changed_over_run": rerun / wall}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="also run the default config end to end")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directories")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bench_workflow_"))
    try:
        result = {**bench_dag(tmp), **bench_overhead(tmp)}
        if args.full:
            result.update(bench_full())
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    save("workflow", result)
    rows = [
        ("dry run, 50 benchmarks", f"{result['dry_run_50_s']:.1f} s",
         f"CPU {result['dry_run_50_cpu_s']:.1f} s"),
        ("dry run, 500 benchmarks", f"{result['dry_run_500_s']:.1f} s",
         f"{result['dry_run_500_over_target']:.2f} x target (30 s), "
         f"{result['dry_run_500_over_50']:.1f} x the 50-benchmark run, "
         f"CPU {result['dry_run_500_cpu_s']:.1f} s (load {result['load_average_1min']:.1f})"),
        (f"tiny run, {result['tiny_jobs']} jobs, --cores 2", f"{result['tiny_wall_s']:.1f} s",
         f"mean job {result['tiny_job_s_mean']:.2f} s"),
        ("overhead per job", f"{result['overhead_per_job_s']:.2f} core-s",
         f"{result['overhead_over_job_s']:.2f} x mean job"),
        ("job interpreter start-up", f"{result['job_startup_s']:.2f} s",
         f"{result['job_startup_over_job_s']:.2f} x mean job"),
        ("tiny rerun, nothing changed", f"{result['tiny_nothing_changed_s']:.1f} s",
         f"{result['tiny_nothing_changed_over_run']:.3f} x the run"),
    ]
    if args.full:
        rows += [
            (f"default config, {result['full_jobs']} jobs", f"{result['full_wall_s']:.1f} s",
             f"overhead {result['full_overhead_per_job_s']:.2f} core-s per job"),
            ("default rerun, nothing changed", f"{result['full_nothing_changed_s']:.1f} s",
             f"{result['full_nothing_changed_over_run']:.3f} x the run"),
        ]
    width = max(len(r[0]) for r in rows)
    for name, value, ratio in rows:
        print(f"{name:<{width}}  {value:>12}  {ratio}")
    return result


if __name__ == "__main__":
    main()
