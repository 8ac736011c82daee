"""The grid shipped with perfcast (perfcast.sensitivity.shipped) and the sensitivity result it
gives a user who cannot restrict a run: the grid is complete and says where it comes from; a
profile run as an unprivileged user (``nobody`` when the tests run as root) is done on it, with
the live profiling marked skipped and the reason."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from perfcast.sensitivity import shipped
from perfcast.sensitivity.replay import read_measurements

REPO = Path(__file__).resolve().parents[2]
UNPRIVILEGED = "nobody"


def _default_sensitivity() -> dict:
    return yaml.safe_load((REPO / "config" / "config.yaml").read_text())["sensitivity"]


def test_shipped_grid_is_complete_and_says_where_it_comes_from():
    table = read_measurements(shipped.shipped_files()[0])
    meta = shipped.provenance()
    default = _default_sensitivity()
    # every program of the default config has its grid, every level of both dimensions a row
    assert sorted(meta["programs"]) == sorted(default["programs"]) == sorted(
        set(table["program"]))
    for name, prog in meta["programs"].items():
        rows = table[table["program"] == name]
        assert sorted(set(rows["cpu_cores"])) == prog["cpu_quota"]
        assert sorted(set(rows["mem_gb"] * 1024)) == pytest.approx(prog["memory_mb"])
        assert len(rows) == len(prog["cpu_quota"]) * len(prog["memory_mb"])
        assert int(rows["value"].isna().sum()) == prog["failed_cells"]
        assert set(rows["metric"]) == {"throughput" if prog["higher_is_better"] else "runtime_s"}
        assert (rows["value"].dropna() > 0).all()
        # a real measurement: a run killed by the memory limit is killed at every lower limit
        # too (the failed cells of each CPU level are the lowest memory levels)
        for _, at_cpu in rows.groupby("cpu_cores"):
            failed = at_cpu.sort_values("mem_gb")["value"].isna().to_numpy()
            assert not (failed[1:] & ~failed[:-1]).any(), at_cpu
    assert meta["host"]["cpu_model"] and meta["measured"].endswith("Z")


def test_shipped_grid_was_measured_on_a_quiet_host():
    """A grid measured beside other work shows that work, not the program: the provenance
    records the host's load averages, which stayed under one per CPU, and the CPU-bound
    workload (cpuhash, two threads) gains throughput at every step of its CPU quota (the
    median over the memory levels, which do not limit it); on the grid measured at load
    average 8-10 that this one replaced, its median fell from 0.75 to 1.5 cores (1,161 to 949
    MB/s)."""
    meta = shipped.provenance()
    cpus = meta["host"]["cpus"]
    for when in ("before", "after"):
        assert len(meta["load_average"][when]) == 3 and meta["load_average"][when][0] < cpus
    table = read_measurements(shipped.shipped_files()[0])
    cpu = table[table["program"] == "cpuhash"].groupby("cpu_cores")["value"].median()
    assert list(cpu.index) == meta["programs"]["cpuhash"]["cpu_quota"]
    steps = cpu.to_numpy()[1:] / cpu.to_numpy()[:-1]
    assert (steps > 1.0).all(), cpu
    # up to the two CPUs its two threads can use: the last step adds little
    assert cpu.iloc[-1] / cpu.iloc[0] > 3.0


PROFILE = """
import json, sys
from perfcast.sensitivity.rules import profile_program
from perfcast.sensitivity.settings import profile_settings
from perfcast.settings import validate
section, out = json.loads(sys.argv[1]), sys.argv[2]
settings = profile_settings(validate(section, "sensitivity"), "cpuhash", {}, seed=1)
profile_program(settings, data=None, grid=f"{out}/g.parquet", runs=f"{out}/r.parquet",
                summary=f"{out}/s.json")
"""


def _as_unprivileged(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """Run ``cmd`` as ``nobody`` (root running the tests) or as ourselves; skips when that user
    cannot run this Python."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "MPLCONFIGDIR": str(cwd)}
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("setpriv (util-linux) is needed to drop root for this test")
        try:
            user = pwd.getpwnam(UNPRIVILEGED)
        except KeyError:
            pytest.skip(f"no user {UNPRIVILEGED!r} on this host to run as")
        os.chown(cwd, user.pw_uid, user.pw_gid)
        prefix = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}",
                  "--clear-groups"]
        probe = subprocess.run([*prefix, sys.executable, "-c", "import perfcast"], env=env,
                               capture_output=True)
        if probe.returncode != 0:
            pytest.skip(f"user {UNPRIVILEGED!r} cannot run this Python ({sys.executable})")
    return subprocess.run([*prefix, *cmd], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.live
def test_unprivileged_user_gets_the_shipped_grids_result_with_live_profiling_skipped():
    section = _default_sensitivity()
    assert section["cgroup"]["if_unavailable"] == "shipped"  # the default config's choice
    section["replay"] = {"enabled": False}
    out = Path(tempfile.mkdtemp(prefix="perfcast-shipped-"))
    out.chmod(0o755)
    try:
        proc = _as_unprivileged([sys.executable, "-c", PROFILE, json.dumps(section), str(out)],
                                out)
        assert proc.returncode == 0, proc.stderr[-3000:]
        summary = json.loads((out / "s.json").read_text())
        if summary["status"] == "profiled":
            pytest.skip("this user may restrict a run here (a delegated cgroup subtree): "
                        "nothing to fall back from")
        assert summary["status"] == "shipped" and summary["backend"] == "shipped"
        assert "/sys/fs/cgroup" in summary["skipped"]["reason"]
        assert "root" in summary["skipped"]["requires"]
        assert summary["shipped"] == shipped.provenance()
        # the campaign ran on the shipped grid: scored against the whole grid it replays
        assert summary["steps"]["product_points"] >= 1 and summary["score"]["mae"] >= 0
        assert "live profiling skipped" in proc.stderr
    finally:
        shutil.rmtree(out, ignore_errors=True)


@pytest.mark.live
def test_report_mode_still_reports_not_run():
    """``if_unavailable: report`` keeps the old behaviour: no shipped grid, a program not run."""
    section = _default_sensitivity()
    section["cgroup"]["if_unavailable"] = "report"
    section["replay"] = {"enabled": False}
    out = Path(tempfile.mkdtemp(prefix="perfcast-shipped-"))
    out.chmod(0o755)
    try:
        proc = _as_unprivileged([sys.executable, "-c", PROFILE, json.dumps(section), str(out)],
                                out)
        assert proc.returncode == 0, proc.stderr[-3000:]
        summary = json.loads((out / "s.json").read_text())
        if summary["status"] == "profiled":
            pytest.skip("this user may restrict a run here (a delegated cgroup subtree)")
        assert summary["status"] == "not_run" and "shipped" not in summary
    finally:
        shutil.rmtree(out, ignore_errors=True)
