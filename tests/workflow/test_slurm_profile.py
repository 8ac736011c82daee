"""profiles/slurm's default-resources reach a job as written: ``runtime`` in minutes; and the
CPUs its jobs ask for, on a dry run of every stage as a user runs it.

Snakemake 9.16.3 to 9.19.x read a bare number given for ``runtime`` in a profile (or on the
command line) as seconds, so the profile's fallback of 60 minutes became a 1-minute SLURM time
limit; pyproject.toml's snakemake floor excludes those releases, and this test holds it. A dry
run of a one-rule workflow that declares no resources of its own, no cluster needed.
"""

from __future__ import annotations

import re
import subprocess
import sys

import yaml


def test_profile_default_resources_keep_their_units(tmp_path, repo):
    slurm_profile = repo / "profiles" / "slurm" / "config.yaml"
    defaults = yaml.safe_load(slurm_profile.read_text())["default-resources"]
    assert {"runtime", "mem_mb"} <= set(defaults)
    (tmp_path / "Snakefile").write_text(
        'rule a:\n    output: "a.txt"\n    shell: "touch {output}"\n')
    profile = tmp_path / "profile"
    profile.mkdir()
    (profile / "config.yaml").write_text(yaml.safe_dump({"default-resources": defaults}))
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1",
                           "--profile", str(profile)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.strip().startswith("resources:"))
    res = dict(re.findall(r"(\w+)=([^,\s]+)", line))
    assert res["runtime"] == str(defaults["runtime"]), line
    assert res["mem_mb"] == str(defaults["mem_mb"]), line
    assert res["slurm_partition"] == defaults["slurm_partition"], line


def _job_blocks(text: str) -> list[tuple[str, int, dict[str, str], dict[str, str]]]:
    """(rule, threads, resources, wildcards) of every job a dry run prints (threads 1 when not
    printed)."""
    jobs = []
    for block in re.split(r"\n(?=\s*rule \w+:)", text)[1:]:
        rule = re.match(r"\s*rule (\w+):", block).group(1)
        threads = re.search(r"^\s*threads: (\d+)", block, re.M)
        res = re.search(r"^\s*resources: (.*)$", block, re.M)
        wildcards = re.search(r"^\s*wildcards: (.*)$", block, re.M)
        jobs.append((rule, int(threads.group(1)) if threads else 1,
                     dict(re.findall(r"(\w+)=([^,\s]+)", res.group(1))) if res else {},
                     dict(re.findall(r"(\w+)=([^,\s]+)", wildcards.group(1)))
                     if wildcards else {}))
    return jobs


def test_slurm_profile_gives_measurements_one_thread_and_exclusive_nodes(tmp_path, repo):
    """As docs/cluster.md says: warmup_run and sensitivity_profile get 1 thread on a cluster,
    every timing job (warmup_run, sensitivity_profile, sweep_run) a node of its own, and each
    sweep run the CPUs of its configuration (``threads: "{workers}"``), also beyond the cluster
    run's ``cores: 1``, which caps every job's threads (profiles/default, loaded as the workflow
    profile beside profiles/slurm, sets no cores: it would win over the 1). A dry run of every
    stage with both profiles as a user runs them, with no --cores."""
    config = yaml.safe_load((repo / "tests" / "configs" / "stages.yaml").read_text())
    matmul = config["sweep"]["campaigns"]["matmul"]
    matmul["parameters"]["workers"] = [1, 4]
    matmul["threads"] = "{workers}"
    configfile = tmp_path / "config.yaml"
    configfile.write_text(yaml.safe_dump(config))
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "-s", str(repo / "workflow" / "Snakefile"),
         "--directory", str(tmp_path / "work"), "--executor", "slurm",
         "--profile", str(repo / "profiles" / "slurm"),
         "--configfile", str(configfile), "--replace-workflow-config"],
        cwd=repo, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "workflow specific profile profiles/default" in proc.stdout + proc.stderr
    jobs = _job_blocks(proc.stdout)
    seen = set()
    sweep_cpus = {}
    for rule, threads, res, wildcards in jobs:
        if rule in ("warmup_run", "sensitivity_profile"):
            assert threads == 1, (rule, threads)
        if rule in ("warmup_run", "sensitivity_profile", "sweep_run"):
            assert "--exclusive" in res.get("slurm_extra", ""), (rule, res)
            seen.add(rule)
        if rule == "sweep_run":
            # what the SLURM plugin asks sbatch and srun for: cpus_per_task, else threads
            workers = int(re.search(r"workers~(\d+)", wildcards["point"]).group(1))
            sweep_cpus[workers] = int(res.get("cpus_per_task", threads))
    assert seen == {"warmup_run", "sensitivity_profile", "sweep_run"}, seen
    assert sweep_cpus == {1: 1, 4: 4}, sweep_cpus
