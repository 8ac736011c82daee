"""DAG build time and memory against the number of benchmarks, with and without job groups; the
per-job overhead against the work done, with and without groups, on a real SLURM.

(a) ``snakemake -n`` of tests/configs/tiny.yaml with N synthetic benchmarks (bench0000...; the
    simulator accepts any name), N in 100, 500, 5000 (target: 5,000 in under 30 s and 1 GB):
    wall and CPU seconds and the peak RSS of the Snakemake process, locally (no groups) and with
    profiles/slurm (``--executor slurm``: its job groups are formed, nothing is submitted). The
    fixed part is measured on its own: ``import snakemake.cli`` (Snakemake loads every executor
    plugin at start-up; the SLURM plugin runs ``scontrol show config`` then, which answers at
    once where a controller runs or no SLURM client is installed, and waits about 9 s for a
    controller that does not answer), plus the time of that ``scontrol`` call. The reference in
    the same run ("floor"): a bare Snakefile of the same jobs per benchmark (collect and
    post-process per generation, align per benchmark) with the directives perfcast's rules
    have; ``CPU/floor`` is perfcast's DAG CPU time over Snakemake's own for those jobs.
(b) ``--slurm``: tests/configs/tiny.yaml with ``--slurm-n`` benchmarks run through a SLURM (the
    local one of tests/slurm/ when it runs) with profiles/slurm, once with its groups and once
    without (``--group-components small=1 --groups`` of nothing: every job its own sbatch job).
    Work = the sum of the jobs' Snakemake benchmark files (column ``s``); overhead per job =
    (wall x cores - work) / jobs, with the cores of the SLURM node; plus the number of sbatch
    jobs.

    .venv/bin/python benchmarks/bench_dag.py [--n 100 500 5000] [--slurm] [--slurm-n 8]

Writes benchmarks/out/dag.json and prints a table.
"""

from __future__ import annotations

import argparse
import copy
import csv
import os
import re
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
PROFILE = REPO / "profiles" / "slurm"
DAG_TARGET_S = 30.0
DAG_TARGET_MB = 1024.0
SBIN_PATH = f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin"
SLURM_ARGS = ["--executor", "slurm", "--profile", str(PROFILE), "--slurm-no-account",
              "--slurm-init-seconds-before-status-checks", "2"]


def measured(cmd: list[str], cwd: Path | None = None, env: dict | None = None) -> dict:
    """Run ``cmd``; its wall and CPU seconds and peak RSS (MB), from the child's own rusage."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{out[-5000:]}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
            "peak_rss_mb": usage.ru_maxrss / 1024, "output": out}


def synthetic(n: int) -> dict:
    cfg = copy.deepcopy(TINY)
    cfg["counters"]["benchmarks"] = [f"bench{i:04d}" for i in range(n)]
    return cfg


def snakemake_cmd(work: Path, *extra: str, cores: int = 2) -> list[str]:
    return [sys.executable, "-m", "snakemake", "all", "-s", str(REPO / "workflow" / "Snakefile"),
            "--directory", str(work), "--cores", str(cores), "--workflow-profile", "none",
            "--configfile", str(work / "config.yaml"), *extra]


def write_config(work: Path, cfg: dict) -> None:
    work.mkdir(parents=True, exist_ok=True)
    (work / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))


def fixed_cost() -> dict:
    env = {**os.environ, "PATH": SBIN_PATH}
    imp = measured([sys.executable, "-c", "import snakemake.cli"], env=env)
    out = {"import_snakemake_cli_s": imp["wall_s"]}
    if shutil.which("scontrol", path=SBIN_PATH):
        t = time.perf_counter()
        subprocess.run(["scontrol", "show", "config"], capture_output=True, env=env, timeout=60)
        out["scontrol_show_config_s"] = time.perf_counter() - t
    return out


#: Snakemake's own floor: a workflow of the same shape per benchmark as tiny.yaml's (collect and
#: post-process per generation, align per benchmark), each rule with the directives perfcast's
#: rules have (script, log, benchmark, resources) and nothing else: no config, no schema, no
#: input functions, no params. Its DAG time is what Snakemake needs for that many jobs.
FLOOR_SNAKEFILE = """
B = [f"bench{i:04d}" for i in range(int(config["benchmarks"]))]
rule all:
    input: expand("r/aligned/{b}.parquet", b=B)
rule collect:
    output: "r/raw/{g}/{b}/group0.csv"
    log: "r/logs/collect/{g}/{b}.log"
    benchmark: "r/benchmarks/collect/{g}/{b}.tsv"
    resources: mem_mb=500, runtime=10
    script: "noop.py"
rule postprocess:
    input: "r/raw/{g}/{b}/group0.csv"
    output: "r/counters/{g}/{b}.parquet"
    log: "r/logs/postprocess/{g}/{b}.log"
    benchmark: "r/benchmarks/postprocess/{g}/{b}.tsv"
    resources: mem_mb=2000, runtime=10
    script: "noop.py"
rule align:
    input: old="r/counters/old/{b}.parquet", new="r/counters/new/{b}.parquet"
    output: "r/aligned/{b}.parquet"
    log: "r/logs/align/{b}.log"
    benchmark: "r/benchmarks/align/{b}.tsv"
    resources: mem_mb=2000, runtime=30
    script: "noop.py"
"""


def snakemake_floor(tmp: Path, n: int, env: dict) -> dict:
    """DAG time of the floor workflow (FLOOR_SNAKEFILE) for ``n`` benchmarks."""
    work = tmp / f"floor{n}"
    work.mkdir(parents=True, exist_ok=True)
    (work / "Snakefile").write_text(FLOOR_SNAKEFILE)
    (work / "noop.py").write_text("")
    r = measured([sys.executable, "-m", "snakemake", "all", "--directory", str(work), "--cores",
                  "2", "--workflow-profile", "none", "--config", f"benchmarks={n}", "-n", "--quiet",
                  "rules"], cwd=work, env=env)
    jobs = re.search(r"^total\s+(\d+)", r["output"], re.MULTILINE)
    return {"wall_s": r["wall_s"], "cpu_s": r["cpu_s"], "peak_rss_mb": r["peak_rss_mb"],
            "jobs": int(jobs.group(1)) if jobs else None}


def bench_dag(tmp: Path, sizes: list[int]) -> dict:
    out: dict = {}
    env = {**os.environ, "PATH": SBIN_PATH}
    for n in sizes:
        out[f"dag_{n}_floor"] = snakemake_floor(tmp, n, env)
        work = tmp / f"dag{n}"
        write_config(work, synthetic(n))
        for variant, extra in (("local", []), ("groups", SLURM_ARGS)):
            r = measured(snakemake_cmd(work, "-n", "--quiet", "rules", *extra), env=env)
            jobs = re.search(r"^total\s+(\d+)", r["output"], re.MULTILINE)
            key = f"dag_{n}_{variant}"
            out[key] = {"wall_s": r["wall_s"], "cpu_s": r["cpu_s"],
                        "peak_rss_mb": r["peak_rss_mb"],
                        "jobs": int(jobs.group(1)) if jobs else None}
    out["load_average_1min"] = os.getloadavg()[0]
    return out


def job_seconds(results: Path) -> list[float]:
    secs = []
    for tsv in sorted((results / "benchmarks").rglob("*.tsv")):
        secs += [float(r["s"]) for r in csv.DictReader(tsv.open(), delimiter="\t")]
    return secs


def slurm_cpus() -> int:
    out = subprocess.run(["sinfo", "-h", "-o", "%c"], capture_output=True, text=True,
                         env={**os.environ, "PATH": SBIN_PATH})
    return int(out.stdout.split()[0])


def bench_slurm(tmp: Path, n: int) -> dict:
    env = {**os.environ, "PATH": SBIN_PATH}
    ping = subprocess.run(["scontrol", "ping"], capture_output=True, text=True, env=env)
    if "UP" not in ping.stdout:
        raise SystemExit("--slurm: no SLURM controller answers (bash tests/slurm/start.sh)")
    cores = slurm_cpus()
    out: dict = {"slurm_benchmarks": n, "slurm_node_cpus": cores}
    cfg = synthetic(n)
    cfg["counters"]["group_size"] = len(cfg["counters"]["events"])
    for variant, extra in (("groups", []), ("no_groups", ["--group-components", "small=1",
                                                          "--groups", "none=none"])):
        work = tmp / f"slurm_{variant}"
        write_config(work, cfg)
        r = measured(snakemake_cmd(work, *SLURM_ARGS, *extra, cores=1), env=env)
        secs = job_seconds(work / "results")
        submitted = len(re.findall(r"submitted with SLURM jobid", r["output"]))
        out[f"slurm_{variant}"] = {
            "wall_s": r["wall_s"], "jobs": len(secs), "sbatch_jobs": submitted,
            "work_s": sum(secs), "overhead_per_job_s": (r["wall_s"] * cores - sum(secs))
            / len(secs), "overhead_over_work": (r["wall_s"] * cores - sum(secs)) / sum(secs)}
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[100, 500, 5000])
    ap.add_argument("--slurm", action="store_true", help="also run on a SLURM, groups or not")
    ap.add_argument("--slurm-n", type=int, default=8, help="benchmarks of the SLURM runs")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bench_dag_"))
    try:
        result = {**fixed_cost(), **bench_dag(tmp, args.n)}
        if args.slurm:
            result.update(bench_slurm(tmp, args.slurm_n))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"start-up (import snakemake.cli): {result['import_snakemake_cli_s']:.1f} s"
          + (f", of which scontrol show config {result['scontrol_show_config_s']:.1f} s"
             if "scontrol_show_config_s" in result else ""))
    print(f"{'benchmarks':>10} {'variant':>8} {'jobs':>7} {'wall s':>7} {'CPU s':>7} "
          f"{'CPU ms/job':>10} {'peak MB':>8} {'wall/target':>11} {'CPU/floor':>10}")
    for n in args.n:
        floor = result[f"dag_{n}_floor"]
        for variant in ("floor", "local", "groups"):
            r = result[f"dag_{n}_{variant}"]
            r["cpu_over_floor"] = r["cpu_s"] / floor["cpu_s"]
            print(f"{n:>10} {variant:>8} {r['jobs'] or 0:>7} {r['wall_s']:>7.1f} "
                  f"{r['cpu_s']:>7.1f} {1000 * r['cpu_s'] / max(r['jobs'] or 1, 1):>10.2f} "
                  f"{r['peak_rss_mb']:>8.0f} {r['wall_s'] / DAG_TARGET_S:>11.2f} "
                  f"{r['cpu_over_floor']:>10.2f}")
    print(f"(load average {result['load_average_1min']:.1f}; targets {DAG_TARGET_S:.0f} s, "
          f"{DAG_TARGET_MB:.0f} MB at 5,000; floor: Snakemake alone, the same jobs without "
          "perfcast's config, schema and functions)")
    if args.slurm:
        print(f"SLURM, {args.slurm_n} benchmarks, node of {result['slurm_node_cpus']} CPUs:")
        for variant in ("groups", "no_groups"):
            r = result[f"slurm_{variant}"]
            print(f"  {variant:>9}: {r['jobs']} jobs in {r['sbatch_jobs']} sbatch jobs, "
                  f"wall {r['wall_s']:.0f} s, work {r['work_s']:.0f} s, overhead "
                  f"{r['overhead_per_job_s']:.2f} core-s per job "
                  f"({r['overhead_over_work']:.2f} x the work)")
    save("dag", result)
    return result


if __name__ == "__main__":
    main()
