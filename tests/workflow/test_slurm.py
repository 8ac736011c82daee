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
WORKFLOW_PROFILE = REPO / "profiles" / "default"
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
# Real SLURM runs start Snakemake through tests/slurm/steady_poll.py: the plugin's status checks
# no longer back off by 10 s per round (its docstring says why and what stays real).
STEADY_POLL = (str(SLURM_DIR / "steady_poll.py"),)

# a single job is submitted under its job id, a group job under an id of letters and digits
SUBMITTED = re.compile(r"Job (\S+) has been submitted with SLURM jobid (\d+)")
# one job's block; the jobs of a group job are printed indented, under "Group job <name>"
JOB_BLOCK = re.compile(r"^( *)(local)?rule (\w+):\n((?:\1    .*\n)+)", re.MULTILINE)


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


def _lock_file():
    """The lock, opened read-only where it exists: another user's (root's, from an earlier
    session) cannot be opened for writing, and flock needs only a descriptor."""
    try:
        return open(LOCK)  # noqa: SIM115 - closed by the caller's with
    except FileNotFoundError:
        fd = os.open(LOCK, os.O_RDONLY | os.O_CREAT, 0o644)
        return os.fdopen(fd)


@pytest.fixture(scope="session")
def slurm_cluster():
    """A running single-node SLURM; yields its partition names."""
    with _lock_file() as lock:
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
    local_dir: Path | None
    results: str
    slurm_log: str
    local_log: str
    config: dict
    seconds: dict = field(default_factory=dict)
    # SLURM job id -> (state, partition, CPUs), read from squeue as soon as the SLURM run ended
    states: dict = field(default_factory=dict)


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


def _side_by_side(config: dict, slurm_dir: Path, local_dir: Path | None, snakemake_run,
                  timeout: float, slurm_extra: tuple[str, ...] = ()) -> Runs:
    """``config`` run through SLURM with profiles/slurm in ``slurm_dir`` and, at the same time,
    locally on one core in ``local_dir`` (None: no local run; the SLURM run mostly waits on the
    scheduler); the submitted jobs' states are read as soon as the SLURM run ends."""
    seconds: dict[str, float] = {}
    local: dict[str, object] = {}

    def run_local() -> None:
        t0 = time.monotonic()
        try:
            local["proc"] = snakemake_run(local_dir, config, cores=1, timeout=timeout)
        except BaseException as exc:  # re-raised in the test's thread below
            local["error"] = exc
        seconds["local"] = time.monotonic() - t0

    thread = threading.Thread(target=run_local)
    if local_dir is not None:
        thread.start()
    t0 = time.monotonic()
    try:
        # as a user starts it from the repository's root: no --cores (profiles/slurm's 1), and
        # profiles/default loaded beside the SLURM profile
        slurm = snakemake_run(slurm_dir, config, cores=None, timeout=timeout, entry=STEADY_POLL,
                              workflow_profile=str(WORKFLOW_PROFILE),
                              extra=["--executor", "slurm", "--profile", str(PROFILE),
                                     *SLURM_ARGS, *slurm_extra])
        seconds["slurm"] = time.monotonic() - t0
        states = _submitted_states(slurm.stdout + slurm.stderr)
    finally:
        if local_dir is not None:
            thread.join()
    if "error" in local:
        raise local["error"]
    return Runs(slurm_dir=slurm_dir, local_dir=local_dir,
                results=config.get("results_dir", "results"),
                slurm_log=slurm.stdout + slurm.stderr,
                local_log=(local["proc"].stdout + local["proc"].stderr) if local else "",
                config=config, seconds=seconds, states=states)


@pytest.fixture(scope="session")
def runs(slurm_cluster, tmp_path_factory, snakemake_run) -> Runs:
    """The tiny config run through SLURM and, at the same time, locally."""
    if not TINY.exists():
        pytest.fail(f"{TINY} is missing: the SLURM test runs the workflow on it")
    base = tmp_path_factory.mktemp("slurm_vs_local")
    return _side_by_side(_config(slurm_cluster), base / "slurm", base / "local", snakemake_run,
                         timeout=600)


def _pairs(text: str) -> dict[str, str]:
    return dict(kv.split("=", 1) for kv in text.split(", ") if "=" in kv)


def _job_blocks(log: str) -> dict[int, tuple[str, bool, dict[str, str], dict[str, str]]]:
    """Snakemake job id -> (rule, local?, wildcards, resources) from a run's log. Local: printed
    as "localrule", or a rule without output (like ``all``), which Snakemake never submits (a
    dry run prints it as "rule")."""
    jobs = {}
    for m in JOB_BLOCK.finditer(log):
        fields = dict(re.findall(r"^ *(\w+): (.*)$", m.group(4), re.MULTILINE))
        jobs[int(fields["jobid"])] = (m.group(3), bool(m.group(2)) or "output" not in fields,
                                      _pairs(fields.get("wildcards", "")),
                                      _pairs(fields.get("resources", "")))
    return jobs


def _grouped(log: str) -> set[int]:
    """The job ids a run's log prints inside a group job (indented)."""
    return {int(re.search(r"^ *jobid: (\d+)$", m.group(4), re.MULTILINE).group(1))
            for m in JOB_BLOCK.finditer(log) if m.group(1)}


def _jobs(log: str) -> dict[int, tuple[str, bool, dict[str, str]]]:
    """Snakemake job id -> (rule, local?, wildcards) from a run's log."""
    return {j: (rule, local, wc) for j, (rule, local, wc, _) in _job_blocks(log).items()}


def _squeue(ids: list[str]) -> dict[str, tuple[str, str, int]]:
    """SLURM job id -> (state, partition, CPUs), for jobs finished within MinJobAge (3600 s in
    tests/slurm/start.sh; a cluster not started by it may keep them for less)."""
    out = _sh(["squeue", "-h", "-t", "all", "-j", ",".join(ids), "-o", "%i|%T|%P|%C"], 30)
    assert out.returncode == 0, _tail(out)
    return {i: (state, part, int(cpus)) for i, state, part, cpus in
            (line.split("|") for line in out.stdout.split())}


def _submitted_states(log: str) -> dict[str, tuple[str, str, int]]:
    """(state, partition, CPUs) of every job a run's log says it submitted, read right after
    the run: later, the local run beside it may have outlasted the time SLURM lists finished
    jobs."""
    submitted = dict(SUBMITTED.findall(log))
    return _squeue(list(submitted.values())) if submitted else {}


def _hashes(root: Path) -> dict[str, str]:
    """sha256 of every result file, logs and benchmark timings left out (they hold times)."""
    skip = {"logs", "benchmarks"}
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*"))
            if p.is_file() and not skip & set(p.relative_to(root).parts[:1])}


@pytest.mark.slurm
def test_every_cluster_job_went_through_sbatch(runs: Runs):
    jobs = _jobs(runs.slurm_log)
    grouped = _grouped(runs.slurm_log)
    submitted = dict(SUBMITTED.findall(runs.slurm_log))
    singles = {j for j in submitted if j.isdigit()}
    remote = {str(j) for j, (_, is_local, _) in jobs.items() if not is_local and j not in grouped}
    assert remote, f"no cluster job in the SLURM run:\n{runs.slurm_log[-3000:]}"
    assert singles == remote, (
        f"jobs not submitted with sbatch: {sorted(remote - singles)}; "
        f"submitted but not run: {sorted(singles - remote)}"
    )
    # grouped jobs went through sbatch inside group jobs
    assert bool(grouped) == bool(set(submitted) - singles)
    # the same jobs, rule by rule, as the local run, with only the local rules left out of sbatch
    local_rules = Counter(rule for rule, _, _ in _jobs(runs.local_log).values())
    slurm_rules = Counter(jobs[int(j)][0] for j in singles) + Counter(jobs[j][0] for j in grouped)
    assert slurm_rules + Counter(r for r, is_local, _ in jobs.values() if is_local) == local_rules
    # SLURM itself ran them: each id is a COMPLETED job in squeue
    states = runs.states
    assert {states[s][0] for s in submitted.values()} == {"COMPLETED"}, states


@pytest.mark.slurm
def test_jobs_ran_on_the_profile_and_generation_partitions(runs: Runs):
    partitions = runs.config["counters"].get("partitions")
    if not partitions:
        pytest.skip("the running SLURM has no partitions oldnodes/newnodes (not started by "
                    "tests/slurm/start.sh): per-generation partitions not checked")
    jobs = _jobs(runs.slurm_log)
    submitted = dict(SUBMITTED.findall(runs.slurm_log))
    states = runs.states
    seen: Counter = Counter()
    for job, slurm_id in submitted.items():
        if not job.isdigit():  # a group job: small jobs, on the profile's partition
            assert states[slurm_id][1] == PROFILE_PARTITION, states[slurm_id]
            seen[PROFILE_PARTITION] += 1
            continue
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


# --- job groups: many small jobs in one sbatch job ------------------------------------------

#: profiles/slurm's job groups: rule -> group
PROFILE_GROUPS = yaml.safe_load((PROFILE / "config.yaml").read_text())["groups"]
#: the rules of group "small" (counters_collect joins by itself when its runs are simulated)
GROUPED_RULES = {"counters_collect"} | {r for r, g in PROFILE_GROUPS.items() if g == "small"}
#: the rules of group "aggregate": the counters and model stages' jobs over every benchmark
AGGREGATE_RULES = {r for r, g in PROFILE_GROUPS.items() if g == "aggregate"}
#: rules that run on the submit host, never through sbatch (localrule: True)
LOCAL_RULES = {"all", "run_summary"}
#: the grouped run: 3 benchmarks and the predict-only one (4 pieces of the DAG), 2 pieces per
#: group job (instead of the profile's 25): 2 group jobs; then one aggregate group job; the run's
#: summary runs locally. Inside a group job the SLURM plugin starts every job as a job step of
#: its own (srun and a Snakemake process, 2-4 s each), so each job counts; the dry runs below
#: check a partly filled group (51 pieces, 25 per group)
GROUPS_N = 3
GROUP_COMPONENTS = 2
#: the dry runs of the profile's own grouping (no cluster: cheap): 50 benchmarks, 25 per group
DRY_GROUPS_N = 50
#: the rules the grouped run's first stage runs to (--until): the small groups' jobs
SMALL_RULES = sorted(r for r, g in PROFILE_GROUPS.items() if g == "small")


def _any_jobs(log: str) -> dict[int, tuple[str, str]]:
    """Snakemake job id -> (rule, outputs) of every job a run's log lists, grouped or not."""
    return {int(fields["jobid"]): (m.group(3), fields.get("output", ""))
            for m in JOB_BLOCK.finditer(log)
            for fields in [dict(re.findall(r"^ *(\w+): (.*)$", m.group(4), re.MULTILINE))]
            if "jobid" in fields}


def _rules(log: str) -> Counter:
    """How many jobs of each rule a run's log lists, grouped or not."""
    return Counter(rule for rule, _ in _any_jobs(log).values())


def _group_components(group: str = "small") -> int:
    return yaml.safe_load((PROFILE / "config.yaml").read_text())["group-components"][group]


def _grouped_config(n: int = GROUPS_N) -> dict:
    """tests/configs/tiny.yaml with ``n`` benchmarks (the simulator takes any name), one counter
    group per run (all events at once: fewer jobs, the same grouping) and no per-generation
    partitions (a collect job with a partition of its own stays a single job)."""
    config = yaml.safe_load(TINY.read_text())
    counters = config["counters"]
    counters["benchmarks"] = [f"bench{i:02d}" for i in range(n)]
    counters["group_size"] = len(counters["events"])
    # the model's own cost is not what this tests: the constant ratio alone (the same jobs)
    config["model"] = {**config.get("model", {}), "families": ["constant"]}
    return config


#: the grouped runs' SLURM options: GROUP_COMPONENTS pieces per small group job, the profile's
#: value for the aggregate group
GROUPED_SLURM = ("--group-components", f"small={GROUP_COMPONENTS}",
                 f"aggregate={_group_components('aggregate')}")


@dataclass
class Grouped:
    """The grouped SLURM run in two stages in one directory, as a user resumes a run: ``small``
    runs to the small groups' rules (``--until``), ``rest`` runs the same command without it to
    the end (only the jobs over every benchmark and the run's summary are left). Each stage's
    log and squeue states are its own; the local run of the whole config runs beside the second
    stage (the first has two group jobs on the two CPUs, the second one), in ``rest``."""
    small: Runs
    rest: Runs


@pytest.fixture(scope="session")
def grouped_small(slurm_cluster, tmp_path_factory, snakemake_run) -> Runs:
    """GROUPS_N benchmarks through SLURM with the profile's groups, up to the small groups'
    rules."""
    base = tmp_path_factory.mktemp("slurm_groups")
    return _side_by_side(_grouped_config(), base / "slurm", None, snakemake_run, timeout=900,
                         slurm_extra=(*GROUPED_SLURM, "--until", *SMALL_RULES))


@pytest.fixture(scope="session")
def grouped_runs(grouped_small: Runs, snakemake_run) -> Grouped:
    """The first stage's directory run to the end through SLURM and, side by side, the whole
    config locally."""
    small = grouped_small
    rest = _side_by_side(small.config, small.slurm_dir, small.slurm_dir.parent / "local",
                         snakemake_run, timeout=900, slurm_extra=GROUPED_SLURM)
    return Grouped(small=small, rest=rest)


@pytest.mark.slurm
def test_small_groups_submit_one_job_per_group_components_pieces(grouped_small: Runs):
    """Each benchmark's small jobs (collect and post-process of both generations, align) are
    one connected piece, each predict-only benchmark's (collect and post-process of the old
    generation) another; one sbatch job takes group-components of them; --until stops there
    (nothing over every benchmark ran)."""
    config = grouped_small.config
    slurm_rules = _rules(grouped_small.slurm_log)
    predict_only = [b for b in config["predict"]["benchmarks"]
                    if b not in config["counters"]["benchmarks"]]
    pieces = GROUPS_N + len(predict_only)
    groups = -(-pieces // GROUP_COMPONENTS)
    assert groups == 2
    runs = 2 * GROUPS_N + len(predict_only)  # benchmark x generation
    assert slurm_rules == Counter({"counters_collect": runs, "counters_postprocess": runs,
                                   "model_align": GROUPS_N}), slurm_rules
    submitted = dict(SUBMITTED.findall(grouped_small.slurm_log))
    assert len(submitted) == groups, (
        f"{len(submitted)} sbatch jobs, expected {groups} small group jobs "
        f"(without groups: {sum(slurm_rules.values())})")
    assert grouped_small.slurm_log.count("Group job small") == groups
    assert "Group job aggregate" not in grouped_small.slurm_log
    states = grouped_small.states
    assert {states[s][0] for s in submitted.values()} == {"COMPLETED"}, states
    # one CPU per job: every job here is single-threaded, and a group job runs its jobs one
    # after another (its Snakemake gets --jobs 1), so more CPUs would stay idle; run as a user
    # runs it, a group job asked for 2 while profiles/default set cores: 2
    assert {states[s][2] for s in submitted.values()} == {1}, states


@pytest.mark.slurm
def test_jobs_over_every_benchmark_are_one_aggregate_group_job(grouped_runs: Grouped):
    """The jobs over every benchmark (figures, training set, model, predictions) are one
    aggregate group job; the other jobs are one sbatch job each; the run's summary runs
    locally; the second stage redid nothing of the first, and the two stages together ran every
    job of the local run."""
    rest = grouped_runs.rest
    local_rules = _rules(rest.local_log)
    slurm_rules = _rules(rest.slurm_log)
    aggregated = sum(n for rule, n in local_rules.items() if rule in AGGREGATE_RULES)
    singles = sum(n for rule, n in local_rules.items()
                  if rule not in GROUPED_RULES | AGGREGATE_RULES | LOCAL_RULES)
    submitted = dict(SUBMITTED.findall(rest.slurm_log))
    assert len(submitted) == 1 + singles, (
        f"{len(submitted)} sbatch jobs, expected 1 aggregate group job and {singles} single "
        f"jobs (without groups: {aggregated + singles})")
    assert "run_summary" in local_rules and "run_summary" in slurm_rules  # ran, locally
    assert not set(slurm_rules) & GROUPED_RULES, slurm_rules
    # the training set, training, evaluation and predictions, and the counters' figure
    assert {"model_trainset", "model_train", "model_evaluate", "model_predict",
            "counters_figure"} <= {r for r in local_rules if r in AGGREGATE_RULES}
    assert rest.slurm_log.count("Group job aggregate") == 1
    assert "Group job small" not in rest.slurm_log
    states = rest.states
    assert {states[s][0] for s in submitted.values()} == {"COMPLETED"}, states
    assert {states[s][2] for s in submitted.values()} == {1}, states
    # every job of the local run ran in the SLURM run too, grouped or not, once
    assert _rules(grouped_runs.small.slurm_log) + slurm_rules == local_rules


@pytest.mark.slurm
def test_grouped_results_equal_local_results(grouped_runs: Grouped):
    rest = grouped_runs.rest
    slurm = _hashes(rest.slurm_dir / rest.results)
    local = _hashes(rest.local_dir / rest.results)
    assert len(local) > 5 * GROUPS_N
    assert sorted(slurm) == sorted(local)
    differ = [path for path in local if slurm[path] != local[path]]
    assert not differ, f"result files differ between the grouped SLURM and the local run: {differ}"


def _write_imports(config: dict, root: Path) -> str:
    """Simulated perf CSVs of every run of ``config``, written where the import backend reads
    them; returns the import pattern."""
    from perfcast.counters.events import make_groups
    from perfcast.counters.rules import collect_group
    from perfcast.counters.settings import BaseEvents, collect_settings
    from perfcast.settings import build, validate

    counters = validate(config["counters"], "counters")
    groups = make_groups(counters["events"], counters["group_size"],
                         build(BaseEvents, counters["base_events"]))
    for gen in counters["generations"].values():
        for bench in counters["benchmarks"]:
            for k, events in enumerate(groups):
                settings = collect_settings(counters, generation=gen, benchmark=bench,
                                            events=events, programs={}, seed=config["seed"])
                out = root / gen / bench / f"group{k}.csv"
                out.parent.mkdir(parents=True, exist_ok=True)
                collect_group(settings, out, generation=gen, benchmark=bench, group=k)
    return str(root / "{gen}" / "{bench}" / "group{group}.csv")


def _outputs(log: str) -> set[str]:
    """The outputs of the jobs a run's log lists, grouped or not."""
    return {f.strip() for _, out in _any_jobs(log).values() for f in out.split(",") if out}


@dataclass
class FailedGroup:
    """The run with a corrupt imported CSV through SLURM's groups (``log``, ``returncode``), in
    ``work``; ``bad`` is the corrupt file, ``good`` its content before, ``kept`` the tables the
    run left."""
    config: dict
    slurm: list[str]
    work: Path
    bad: Path
    good: bytes
    log: str
    returncode: int
    kept: set[str]


@pytest.fixture(scope="module")
def failed_group(slurm_cluster, tmp_path_factory, snakemake_run) -> FailedGroup:
    """A corrupt imported CSV fails its collect job inside a group job, the first of the two
    runs of the failure's test (the rerun after the repair: ``repaired_rerun``)."""
    base = tmp_path_factory.mktemp("slurm_failed_group")
    config = yaml.safe_load(TINY.read_text())
    counters = config["counters"]
    counters["benchmarks"] = [f"b{i}" for i in range(2)]
    counters["group_size"] = len(counters["events"])
    config["predict"] = {"benchmarks": []}
    config["model"] = {**config.get("model", {}), "enabled": False}
    counters["import"] = {"pattern": _write_imports(config, base / "imports")}
    counters["backend"] = "import"
    bad = Path(counters["import"]["pattern"].format(gen=counters["generations"]["old"],
                                                   bench="b1", group=0))
    good = bad.read_bytes()
    bad.write_text("garbage,not,perf\n")
    slurm = ["--executor", "slurm", "--profile", str(PROFILE), *SLURM_ARGS,
             "--group-components", "small=2"]  # 4 pieces (benchmark x generation): 2 groups
    work = base / "slurm"
    first = snakemake_run(work, config, cores=1, timeout=900, extra=slurm, check=False,
                          entry=STEADY_POLL)
    res = work / "results"
    kept = {str(p.relative_to(work)) for p in res.rglob("*") if p.suffix in {".csv", ".parquet"}}
    return FailedGroup(config, slurm, work, bad, good, first.stdout + first.stderr,
                       first.returncode, kept)


@pytest.fixture(scope="module")
def repaired_rerun(failed_group: FailedGroup, snakemake_run) -> tuple[str, str, Path]:
    """After the file is repaired, the rerun through SLURM in the same folder and, beside it (it
    mostly waits on the scheduler), the local reference run: their logs and the local folder."""
    run = failed_group
    run.bad.write_bytes(run.good)
    local = run.work.parent / "local"
    with ThreadPoolExecutor(1) as pool:
        reference = pool.submit(snakemake_run, local, run.config, cores=1, timeout=900)
        second = snakemake_run(run.work, run.config, cores=1, timeout=900, extra=run.slurm,
                               entry=STEADY_POLL)
        ref = reference.result()
    return second.stdout + second.stderr, ref.stdout + ref.stderr, local


@pytest.mark.slurm
def test_a_failed_job_in_a_group_keeps_the_groups_other_outputs(failed_group: FailedGroup):
    """A corrupt imported CSV fails its collect job inside a group job: the group's other jobs'
    outputs stay, every other group completes."""
    log = failed_group.log
    assert failed_group.returncode != 0, log[-3000:]
    submitted = dict(SUBMITTED.findall(log))
    assert len(submitted) == 2, log[-3000:]  # 2 group jobs; figure and summary never started
    states = Counter(s for s, *_ in _squeue(list(submitted.values())).values())
    assert states == Counter({"COMPLETED": 1, "FAILED": 1}), states
    assert "Removing output files of failed job" not in log  # keep-incomplete: none removed
    res = failed_group.work / "results"
    assert not (res / "raw/g2/b1/group0.csv").exists()
    assert not (res / "counters/g2/b1.parquet").exists()
    # one full group: 2 pieces x (collect + postprocess)
    assert len(failed_group.kept) >= 1 * 2 * 2


@pytest.mark.slurm
def test_the_rerun_after_the_repair_resumes(failed_group: FailedGroup, repaired_rerun):
    """After the file is repaired, a rerun runs only what is missing and ends with the local
    run's results, byte for byte."""
    log, local_log, local = repaired_rerun
    rerun = _outputs(log)
    assert not rerun & failed_group.kept, \
        f"the rerun redid finished jobs: {sorted(rerun & failed_group.kept)}"
    assert "results/counters/g2/b1.parquet" in rerun
    # the failed group job again, and the single jobs that never started (those after the
    # collect jobs: the counters figure and summary; the run's summary runs locally)
    singles = sum(1 for rule, _ in _any_jobs(local_log).values()
                  if rule not in GROUPED_RULES | LOCAL_RULES)
    assert len(dict(SUBMITTED.findall(log))) <= 1 + singles

    a, b = _hashes(failed_group.work / "results"), _hashes(local / "results")
    assert a and sorted(a) == sorted(b)
    assert [p for p in a if a[p] != b[p]] == []


@pytest.mark.parametrize("partitions", [False, True])
def test_profile_groups_the_small_jobs_on_a_dry_run(tmp_path, snakemake_run, partitions):
    """No cluster needed: the profile's groups on a dry run of 50 benchmarks. Simulated collect
    runs join their benchmark's group; with a partition per generation they stay single jobs."""
    config = _grouped_config(DRY_GROUPS_N)
    config["counters"]["group_size"] = 4  # tiny.yaml's two counter groups per run
    if partitions:
        gens = config["counters"]["generations"]
        config["counters"]["partitions"] = {gens["old"]: GEN_PARTITIONS[0],
                                            gens["new"]: GEN_PARTITIONS[1]}
    proc = snakemake_run(tmp_path, config, cores=1, timeout=300,
                         extra=["-n", "--executor", "slurm", "--profile", str(PROFILE),
                                *SLURM_ARGS])
    log = proc.stdout + proc.stderr
    jobs = _job_blocks(log)
    grouped = _grouped(log)
    grouped_rules = {jobs[j][0] for j in grouped}
    want = GROUPED_RULES - {"warmup_counter_phases"} - ({"counters_collect"} if partitions
                                                         else set())
    ran = {rule for rule, *_ in jobs.values()}
    assert grouped_rules == want | (AGGREGATE_RULES & ran)
    assert not {rule for j, (rule, *_) in jobs.items() if j not in grouped} & want
    assert log.count("Group job small") == -(-(DRY_GROUPS_N + 1) // _group_components())  # + nab
    # the jobs over every benchmark: one group job, however many benchmarks
    assert {"model_trainset", "model_train", "model_predict"} <= AGGREGATE_RULES & ran
    assert log.count("Group job aggregate") == 1
    if partitions:
        for rule, _, wildcards, res in jobs.values():
            if rule == "counters_collect":
                assert res["slurm_partition"] == config["counters"]["partitions"][wildcards["gen"]]
