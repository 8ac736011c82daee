"""The workflow on a real SLURM cluster: single-node slurmctld + slurmd on localhost.

A session fixture installs SLURM and munge from Debian (tests/slurm/install.sh), starts the
cluster (tests/slurm/start.sh) and stops it again afterwards (tests/slurm/stop.sh) unless it was
already running. A cut-down tests/configs/tiny.yaml then runs twice, side by side in two
temporary directories: once with ``--executor slurm --profile profiles/slurm`` and once locally.
The ``slurm`` tests check that every non-local job went through sbatch (snakemake's "submitted
with SLURM jobid" lines, and the same job ids COMPLETED in squeue), that jobs landed on the
partition the profile names and the collect jobs on their generation's partition, and that both
runs wrote the same result files, byte for byte (content hashes). Two more tests need no
cluster: on dry runs they check how the profile's resources combine with the rules' own.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from harness import CONFIGS, REPO

SLURM_DIR = REPO / "tests" / "slurm"
PROFILE = REPO / "profiles" / "slurm"
TINY = CONFIGS / "tiny.yaml"
LOCK = Path("/tmp/perfcast-slurm-test.lock")
SBIN_PATH = f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin"
# The partition profiles/slurm gives every job without one of its own (the test cluster's
# default partition is "batch", so a job on "debug" got it from the profile).
PROFILE_PARTITION = yaml.safe_load((PROFILE / "config.yaml").read_text())["default-resources"][
    "slurm_partition"
]
# Test-cluster partitions (tests/slurm/start.sh) standing in for two CPU generations' machines.
GEN_PARTITIONS = ("oldnodes", "newnodes")
# Overrides of the profile for a quick test: poll squeue after 2 s instead of 10, and submit
# without an account (the test cluster has no accounting; guessing one only prints warnings).
SLURM_ARGS = ("--slurm-init-seconds-before-status-checks", "2", "--slurm-no-account")

SUBMITTED = re.compile(r"Job (\d+) has been submitted with SLURM jobid (\d+)")
JOB_BLOCK = re.compile(r"^(local)?rule (\w+):\n((?:    .*\n)+)", re.MULTILINE)


def _sh(cmd: list[str], timeout: float) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": SBIN_PATH, "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                          stdin=subprocess.DEVNULL)


def _script(name: str, timeout: float) -> subprocess.CompletedProcess:
    return _sh(["bash", str(SLURM_DIR / name)], timeout)


def _cluster_up() -> bool:
    if shutil.which("sinfo", path=SBIN_PATH) is None:
        return False
    try:
        ping = _sh(["scontrol", "ping"], 20)
        return "UP" in ping.stdout and _sh(["sinfo", "-h"], 20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _tail(proc: subprocess.CompletedProcess, n: int = 3000) -> str:
    return f"--- stdout ---\n{proc.stdout[-n:]}\n--- stderr ---\n{proc.stderr[-n:]}"


@pytest.fixture(scope="session")
def slurm_cluster():
    """A running single-node SLURM; yields its partition names."""
    with LOCK.open("w") as lock:
        # one test session at a time uses (and stops) the cluster
        fcntl.flock(lock, fcntl.LOCK_EX)
        already = _cluster_up()
        if not already:
            if os.geteuid() != 0:
                pytest.skip("no SLURM running and not root: tests/slurm/start.sh starts munged, "
                            "slurmctld and slurmd as root")
            inst = _script("install.sh", 900)
            if inst.returncode == 75:  # apt could not fetch/install (no network, no mirror)
                pytest.skip(f"cannot install SLURM and munge from Debian:\n{_tail(inst, 800)}")
            assert inst.returncode == 0, f"tests/slurm/install.sh failed\n{_tail(inst)}"
            start = _script("start.sh", 180)
            if start.returncode != 0:
                _script("stop.sh", 60)
                pytest.fail(f"tests/slurm/start.sh failed\n{_tail(start)}")
        try:
            sinfo = _sh(["sinfo", "-h", "-o", "%R"], 20)
            yield set(sinfo.stdout.split())
        finally:
            if not already:
                stop = _script("stop.sh", 120)
                assert stop.returncode == 0, f"tests/slurm/stop.sh failed\n{_tail(stop)}"


@dataclass
class Runs:
    slurm_dir: Path
    local_dir: Path
    results: str
    slurm_log: str
    local_log: str
    config: dict
    seconds: dict = field(default_factory=dict)


def _config(partitions: set[str], cut: bool = True) -> dict:
    """tests/configs/tiny.yaml with counters.partitions when the cluster has the generation
    partitions. ``cut``: fit a real SLURM run on 2 busy cores (every job pays ~5-15 s of
    Snakemake start-up in sbatch and srun): two benchmarks, all events in one counter group, the
    counters stage only: 9 sbatch jobs (collect, postprocess, figure) over 3 levels."""
    config = yaml.safe_load(TINY.read_text())
    counters = config["counters"]
    if cut:
        counters["benchmarks"] = sorted(counters["benchmarks"])[:2]
        counters["group_size"] = len(counters["events"])
        config["predict"] = {"benchmarks": []}
        config["model"] = {**config.get("model", {}), "enabled": False}
    if set(GEN_PARTITIONS) <= partitions:
        gens = counters["generations"]
        counters["partitions"] = {gens["old"]: GEN_PARTITIONS[0], gens["new"]: GEN_PARTITIONS[1]}
    return config


@pytest.fixture(scope="session")
def runs(slurm_cluster, tmp_path_factory, snakemake_run) -> Runs:
    """The tiny config run through SLURM and, at the same time, locally."""
    if not TINY.exists():
        pytest.fail(f"{TINY} is missing: the SLURM test runs the workflow on it")
    config = _config(slurm_cluster)
    base = tmp_path_factory.mktemp("slurm_vs_local")
    slurm_dir, local_dir = base / "slurm", base / "local"
    seconds: dict[str, float] = {}
    local: dict[str, object] = {}

    def run_local() -> None:
        t0 = time.monotonic()
        try:
            local["proc"] = snakemake_run(local_dir, config, cores=1, timeout=600)
        except BaseException as exc:  # re-raised in the test's thread below
            local["error"] = exc
        seconds["local"] = time.monotonic() - t0

    # the SLURM run mostly waits on the scheduler: the local one runs beside it on one core
    thread = threading.Thread(target=run_local)
    thread.start()
    t0 = time.monotonic()
    try:
        slurm = snakemake_run(slurm_dir, config, cores=1, timeout=600,
                              extra=["--executor", "slurm", "--profile", str(PROFILE),
                                     *SLURM_ARGS])
    finally:
        seconds["slurm"] = time.monotonic() - t0
        thread.join()
    if "error" in local:
        raise local["error"]
    return Runs(slurm_dir=slurm_dir, local_dir=local_dir,
                results=config.get("results_dir", "results"),
                slurm_log=slurm.stdout + slurm.stderr,
                local_log=local["proc"].stdout + local["proc"].stderr,
                config=config, seconds=seconds)


def _pairs(text: str) -> dict[str, str]:
    return dict(kv.split("=", 1) for kv in text.split(", ") if "=" in kv)


def _job_blocks(log: str) -> dict[int, tuple[str, bool, dict[str, str], dict[str, str]]]:
    """Snakemake job id -> (rule, local?, wildcards, resources) from a run's log. Local: printed
    as "localrule", or a rule without output (like ``all``), which Snakemake never submits (a
    dry run prints it as "rule")."""
    jobs = {}
    for m in JOB_BLOCK.finditer(log):
        fields = dict(re.findall(r"^    (\w+): (.*)$", m.group(3), re.MULTILINE))
        jobs[int(fields["jobid"])] = (m.group(2), bool(m.group(1)) or "output" not in fields,
                                      _pairs(fields.get("wildcards", "")),
                                      _pairs(fields.get("resources", "")))
    return jobs


def _jobs(log: str) -> dict[int, tuple[str, bool, dict[str, str]]]:
    """Snakemake job id -> (rule, local?, wildcards) from a run's log."""
    return {j: (rule, local, wc) for j, (rule, local, wc, _) in _job_blocks(log).items()}


def _squeue(ids: list[str]) -> dict[str, tuple[str, str]]:
    """SLURM job id -> (state, partition), for jobs finished within MinJobAge (300 s)."""
    out = _sh(["squeue", "-h", "-t", "all", "-j", ",".join(ids), "-o", "%i|%T|%P"], 30)
    assert out.returncode == 0, _tail(out)
    return {i: (state, part) for i, state, part in
            (line.split("|") for line in out.stdout.split())}


def _hashes(root: Path) -> dict[str, str]:
    """sha256 of every result file, logs and benchmark timings left out (they hold times)."""
    skip = {"logs", "benchmarks"}
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*"))
            if p.is_file() and not skip & set(p.relative_to(root).parts[:1])}


@pytest.mark.slurm
def test_every_cluster_job_went_through_sbatch(runs: Runs):
    jobs = _jobs(runs.slurm_log)
    submitted = dict(SUBMITTED.findall(runs.slurm_log))
    remote = {str(j) for j, (_, is_local, _) in jobs.items() if not is_local}
    assert remote, f"no cluster job in the SLURM run:\n{runs.slurm_log[-3000:]}"
    assert set(submitted) == remote, (
        f"jobs not submitted with sbatch: {sorted(remote - set(submitted))}; "
        f"submitted but not run: {sorted(set(submitted) - remote)}"
    )
    # the same jobs, rule by rule, as the local run, with only the local rules left out of sbatch
    local_rules = Counter(rule for rule, _, _ in _jobs(runs.local_log).values())
    slurm_rules = Counter(jobs[int(j)][0] for j in submitted)
    assert slurm_rules + Counter(r for r, is_local, _ in jobs.values() if is_local) == local_rules
    # SLURM itself ran them: each id is a COMPLETED job in squeue
    states = _squeue(list(submitted.values()))
    assert {states[s][0] for s in submitted.values()} == {"COMPLETED"}, states


@pytest.mark.slurm
def test_jobs_ran_on_the_profile_and_generation_partitions(runs: Runs):
    partitions = runs.config["counters"].get("partitions")
    if not partitions:
        pytest.skip("the running SLURM has no partitions oldnodes/newnodes (not started by "
                    "tests/slurm/start.sh): per-generation partitions not checked")
    jobs = _jobs(runs.slurm_log)
    submitted = dict(SUBMITTED.findall(runs.slurm_log))
    states = _squeue(list(submitted.values()))
    seen: Counter = Counter()
    for job, slurm_id in submitted.items():
        rule, _, wildcards = jobs[int(job)]
        want = partitions[wildcards["gen"]] if rule == "counters_collect" else PROFILE_PARTITION
        got = states[slurm_id][1]
        assert got == want, f"{rule} {wildcards} ran on partition {got}, expected {want}"
        seen[got] += 1
    assert all(seen[p] > 0 for p in GEN_PARTITIONS), f"collect jobs per partition: {seen}"
    assert seen[PROFILE_PARTITION] > 0


@pytest.mark.slurm
def test_slurm_results_equal_local_results(runs: Runs):
    slurm = _hashes(runs.slurm_dir / runs.results)
    local = _hashes(runs.local_dir / runs.results)
    assert local, f"the local run wrote no results under {runs.local_dir / runs.results}"
    assert sorted(slurm) == sorted(local)
    differ = [path for path in local if slurm[path] != local[path]]
    assert not differ, f"result files differ between the SLURM and the local run: {differ}"
    print(f"\nSLURM run {runs.seconds['slurm']:.1f} s, local run {runs.seconds['local']:.1f} s "
          f"(side by side), {len(local)} result files identical")


# --- the profile's resources, checked on a dry run (no cluster needed) -----------------------


@pytest.fixture(scope="module")
def dry_runs(tmp_path_factory, snakemake_run):
    """Dry runs of the whole tiny config: locally, and with the SLURM profile with and without
    per-generation partitions in config. Snakemake prints every job's resources."""
    if not TINY.exists():
        pytest.fail(f"{TINY} is missing: the SLURM tests run the workflow on it")
    base = tmp_path_factory.mktemp("slurm_dry")
    with_parts = _config(set(GEN_PARTITIONS), cut=False)
    without = _config(set(), cut=False)
    slurm = ["-n", "--executor", "slurm", "--profile", str(PROFILE), *SLURM_ARGS]
    variants = {"local": (without, ["-n"]), "slurm": (without, slurm),
                "slurm_partitions": (with_parts, slurm)}
    with ThreadPoolExecutor(len(variants)) as pool:  # three DAG builds side by side
        procs = {name: pool.submit(snakemake_run, base / name, config, extra=extra, timeout=300)
                 for name, (config, extra) in variants.items()}
        return {name: (variants[name][0], _job_blocks(p.result().stdout + p.result().stderr))
                for name, p in procs.items()}


def test_profile_keeps_every_rules_own_resources(dry_runs):
    """default-resources only fill gaps: mem_mb, runtime and threads come from the rules."""
    _, local = dry_runs["local"]
    _, slurm = dry_runs["slurm"]
    assert local and sorted(local) == sorted(slurm)
    for job, (rule, is_local, wildcards, res) in slurm.items():
        if is_local:
            continue
        for key in ("mem_mb", "runtime"):
            assert res.get(key) == local[job][3].get(key), (rule, wildcards, key)
        assert "slurm_partition" in res, f"{rule} {wildcards} has no partition"


@pytest.mark.parametrize("variant", ["slurm", "slurm_partitions"])
def test_collect_partition_comes_from_config_else_from_the_profile(dry_runs, variant):
    config, jobs = dry_runs[variant]
    partitions = config["counters"].get("partitions", {})
    rules = Counter()
    for rule, is_local, wildcards, res in jobs.values():
        if is_local:
            continue
        want = (partitions.get(wildcards["gen"], PROFILE_PARTITION) if rule == "counters_collect"
                else PROFILE_PARTITION)
        assert res.get("slurm_partition") == want, f"{rule} {wildcards}: {res}"
        rules[rule] += 1
    assert rules["counters_collect"] > 0 and len(rules) > 1, rules
