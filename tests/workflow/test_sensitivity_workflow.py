"""Sensitivity stage through Snakemake: real cgroup profiling of two tiny programs (one of them
declared in the top-level programs map) plus the replay evaluation on the paper's data."""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest

from perfcast.io import read_parquet


def _config(arcp_csv) -> dict:
    return {
        "seed": 7,
        "programs": {
            "napper": {"command": '{python} -c "import time; time.sleep({work})"', "work": 0.05,
                       "description": "sleeps: uses next to nothing"},
        },
        "sensitivity": {
            "backend": "cgroup",
            "epsilon": 0.3,
            "compare": ["lhs", "brute"],
            "timeout_s": 60,
            "dimensions": {
                "cpu_quota": {"lower": 0.5, "upper": 1.0, "step": 0.5},
                "memory_mb": {"lower": 32, "upper": 96, "step": 32},
            },
            "programs": {
                "memstream": {
                    "command": "{python} -m perfcast.workloads.memstream --mb {work} --passes 5",
                    "work": 24,
                    "metric": {"name": "triad_s", "source": "stdout",
                               "pattern": "wall_s=([0-9.]+)", "higher_is_better": False},
                },
                "napper": {"metric": {"source": "wall_time"}},  # the top-level definition
            },
            "replay": {"source": {"table": str(arcp_csv)}, "epsilons": [0.3, 0.5],
                       "programs": ["Data Serving", "fileiord", "mg.c.4"], "lhs_repeats": 3,
                       "surfaces": ["Data Serving", "mg.c.4"]},
        },
    }


@pytest.mark.skipif(os.geteuid() != 0, reason="the cgroup backend needs root")
def test_sensitivity_stage_end_to_end(tmp_path, snakemake_run, arcp_csv):
    snakemake_run(tmp_path, _config(arcp_csv), targets=["all"])
    res = tmp_path / "results"
    for prog in ["memstream", "napper"]:
        grid = read_parquet(res / f"sensitivity/{prog}.parquet")
        runs = read_parquet(res / f"sensitivity/{prog}.runs.parquet")
        summary = json.loads((res / f"sensitivity/{prog}.json").read_text())
        assert len(grid) == 2 * 3 and grid["sensitivity"].notna().all()
        assert runs["phase"].iloc[0] == "unrestricted"
        assert len(runs) == len(set(map(tuple, runs[["cpu_quota", "memory_mb"]].dropna()
                                        .to_numpy().tolist()))) + 1  # each point ran once
        assert summary["steps"]["product_points"] == int(grid["measured"].sum())
        assert "lhs" in summary["compare"] and "brute" in summary["compare"]
        assert (res / f"sensitivity/figures/{prog}.png").stat().st_size > 10_000
    napper = json.loads((res / "sensitivity/napper.json").read_text())
    assert not napper["dimensions"]["memory_mb"]["effective"]  # a sleeper needs < 32 MiB
    assert napper["command"].endswith("time.sleep(0.05)\"")
    table = read_parquet(res / "sensitivity/summary.parquet")
    assert sorted(table["program"]) == ["memstream", "napper"]

    paper = res / "paper"
    t = pd.read_csv(paper / "sensitivity_table.csv")
    assert len(t) == 3 * 2 and set(t["verdict"]) <= {"meets", "misses", "no paper figure"}
    # the headline is the whole-grid error; the in-box one and the no-ceiling replay beside it
    assert (t["mae_binary"] >= t["mae_binary_box"] - 1e-12).all()
    assert t["ceiling_source"].str.len().gt(0).all() and t["mae_binary_no_ceiling"].notna().all()
    ds = t[t["program"] == "Data Serving"]
    assert (ds["adaptive_paper_runs"] <= 10).all() and (ds["mae_adaptive_paper"] <= 0.0257).all()
    assert pd.read_csv(paper / "sensitivity_summary.csv")["epsilon"].tolist() == [0.3, 0.5]
    for fig in ["error_vs_epsilon", "binary_vs_lhs", "steps", "surfaces", "error_vs_runs"]:
        assert (paper / f"sensitivity_{fig}.png").stat().st_size > 10_000
    again = snakemake_run(tmp_path, _config(arcp_csv), targets=["all"], extra=["-n"])
    assert "Nothing to be done" in again.stdout + again.stderr


def test_schema_rejects_unknown_dimension(tmp_path, snakemake_run, arcp_csv):
    cfg = _config(arcp_csv)
    cfg["sensitivity"]["dimensions"]["gpu_count"] = {"lower": 1, "upper": 2, "step": 1}
    out = snakemake_run(tmp_path, cfg, targets=["all"], extra=["-n"], check=False)
    assert out.returncode != 0 and "gpu_count" in out.stdout + out.stderr


def _replay_config(arcp_csv, work_b: float) -> dict:
    """Backend replay (no root needed): two programs answered from the paper's data, one of
    them declared in the top-level programs map."""
    return {
        "seed": 7,
        "programs": {"b": {"command": "true {work}", "work": work_b}},
        "sensitivity": {
            "backend": "replay",
            "programs": {"a": {"command": "true", "replay_program": "fileiord"},
                         "b": {"replay_program": "Data Serving"}},
            "replay": {"source": {"table": str(arcp_csv)}, "enabled": False},
        },
    }


def test_a_change_to_one_program_reruns_only_its_profile(tmp_path, snakemake_run, arcp_csv,
                                                          planned_jobs):
    targets = ["results/sensitivity/a.json", "results/sensitivity/b.json"]
    snakemake_run(tmp_path, _replay_config(arcp_csv, 1), targets=targets)
    summary = json.loads((tmp_path / "results/sensitivity/a.json").read_text())
    assert summary["status"] == "profiled" and summary["backend"] == "replay"
    again = snakemake_run(tmp_path, _replay_config(arcp_csv, 2), targets=targets, extra=["-n"])
    jobs = planned_jobs(again.stdout + again.stderr)
    assert set(jobs) == {"sensitivity_profile"}
    assert [o.split(",")[0] for o in jobs["sensitivity_profile"]] == [
        "results/sensitivity/b.parquet"]


def _python_for(prefix: list[str], work) -> str:
    """A Python that the user of ``prefix`` can execute and that sees this environment's
    packages: this one where it can, else a venv of the system's Python of the same minor
    version whose site directory adds ours (this one may live where that user cannot go, e.g.
    under /root); skips when there is none."""
    import subprocess
    import sys
    import sysconfig

    def runs(python: str) -> bool:
        probe = [*prefix, "/bin/sh", "-c", f'"{python}" -c "import perfcast, snakemake"']
        return subprocess.run(probe, capture_output=True).returncode == 0

    if runs(sys.executable):
        return sys.executable
    system = "/usr/bin/python3"
    version = subprocess.run([system, "-c", "import sys; print(sys.version_info[:2])"],
                             capture_output=True, text=True).stdout.strip()
    if version != str(sys.version_info[:2]):
        pytest.skip(f"user nobody cannot run {sys.executable}, and {system} is not Python "
                    f"{sys.version_info[0]}.{sys.version_info[1]}")
    venv = work / "venv"
    subprocess.run([system, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    (site / "perfcast-dev.pth").write_text(
        f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    python = str(venv / "bin" / "python")
    if not runs(python):
        pytest.skip("no Python that user nobody can execute sees this environment's packages")
    return python


def test_default_sensitivity_as_an_unprivileged_user_gives_the_shipped_grids_result(tmp_path):
    """The default config's sensitivity stage run by a user without root (``nobody`` when the
    tests run as root): each program is profiled on the grid shipped with perfcast, its figure
    and the run summary say so, and the summary lists the live profiling as skipped, naming the
    control file that refused, without a warning for it."""
    import pwd
    import shutil
    import subprocess
    import tempfile
    from pathlib import Path

    import harness
    import yaml

    section = yaml.safe_load((harness.REPO / "config" / "config.yaml").read_text())["sensitivity"]
    section["replay"] = {"enabled": False}
    work = Path(tempfile.mkdtemp(prefix="perfcast-shipped-wf-"))
    work.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(work), "MPLCONFIGDIR": str(work)}
    prefix: list[str] = []
    try:
        cfg = work / "config.yaml"
        cfg.write_text(yaml.safe_dump({"seed": 7, "sensitivity": section}))
        if os.geteuid() == 0:
            if shutil.which("setpriv") is None:
                pytest.skip("setpriv (util-linux) is needed to drop root for this test")
            user = pwd.getpwnam("nobody")
            for path in [work, cfg]:
                os.chown(path, user.pw_uid, user.pw_gid)
            prefix = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}",
                      "--clear-groups"]
        cmd = [*prefix, *harness.snakemake_cmd(work, cfg, ["all"], 2)]
        if prefix:  # the jobs run sys.executable, which must be one that user can execute
            cmd[len(prefix)] = _python_for(prefix, work)
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
        res = work / "results"
        programs = sorted(section["programs"])
        summaries = {p: json.loads((res / "sensitivity" / f"{p}.json").read_text())
                     for p in programs}
        if any(s["status"] == "profiled" for s in summaries.values()):
            pytest.skip("this user may restrict a run here (a delegated cgroup subtree)")
        run = json.loads((res / "summary.json").read_text())
        sens = next(s for s in run["sections"] if s["stage"] == "sensitivity")
        # skipped live profiling with a result is no warning (runs the memory limit killed
        # still are: "failed runs", as in a live profile)
        assert not [w for w in run["warnings"] if "not profiled" in w or "skipped" in w]
        md = (res / "summary.md").read_text()
        for p in programs:
            assert summaries[p]["status"] == "shipped"
            assert sens["numbers"][p]["status"] == "shipped"
            assert f"- Not run: {p}: live profiling skipped: " in md
            assert f"{p}: profiled on the grid shipped with perfcast" in md
            assert (res / "sensitivity" / "figures" / f"{p}.png").stat().st_size > 5000
        assert "/sys/fs/cgroup" in md
        table = pd.read_parquet(res / "sensitivity" / "summary.parquet")
        assert set(table["status"]) == {"shipped"} and table["reason"].str.len().min() > 0
        # on the console too: the run's last words
        assert "live profiling skipped" in proc.stdout[proc.stdout.rindex("# perfcast run"):]
    finally:
        shutil.rmtree(work, ignore_errors=True)
