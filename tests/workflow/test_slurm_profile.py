"""profiles/slurm's default-resources reach a job as written: ``runtime`` in minutes.

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
