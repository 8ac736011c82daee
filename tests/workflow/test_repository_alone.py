"""The repository alone is the product: an export of it, with no sibling folder, plans and runs
the default configuration, and a user without root gets a complete run that says what it left out.

These tests copy the working tree's files (what ``git ls-files`` lists: tracked and untracked but
not ignored, i.e. what a commit of it would hold: the ``tracked_files`` fixture) into a fresh
temporary folder, so a path outside the repository, a file that is only ignored, or a result left
over from earlier runs cannot make them pass. (That no product file points outside the
repository: ``tests/unit/test_repository_files.py``.)
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

UNPRIVILEGED = "nobody"


def export_repository(dest: Path, files: list[str], repo: Path) -> Path:
    """Copy the repository's own files (as a commit would hold them) to ``dest/repo``."""
    root = dest / "repo"
    for rel in files:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / rel, target)
    return root


@pytest.fixture
def alone(tracked_files, repo) -> Iterator[Path]:
    """A fresh folder under /tmp, readable by every user (pytest's tmp_path is private to root),
    holding the exported repository with no sibling."""
    top = Path(tempfile.mkdtemp(prefix="perfcast-alone-"))
    top.chmod(0o755)
    try:
        yield export_repository(top, tracked_files, repo)
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_export_plans_the_default_dag_offline_and_paper_with_the_download(alone):
    snake = [sys.executable, "-m", "snakemake", "--cores", "2", "-n"]
    plan = subprocess.run(snake, cwd=alone, capture_output=True, text=True, timeout=300)
    assert plan.returncode == 0, plan.stdout[-3000:] + plan.stderr[-3000:]
    # the default target needs no download; `paper` adds it
    assert "sensitivity_arcp_fetch" not in plan.stdout
    for rule in ("sensitivity_profile", "warmup_run", "sweep_run", "model_evaluate"):
        assert re.search(rf"^{rule}\s+\d+", plan.stdout, re.M), f"{rule} not planned"
    paper = subprocess.run([*snake, "paper"], cwd=alone, capture_output=True, text=True,
                           timeout=300)
    assert paper.returncode == 0, paper.stdout[-3000:] + paper.stderr[-3000:]
    assert "sensitivity_arcp_fetch" in paper.stdout
    assert "sensitivity_replay_eval" in paper.stdout


def _unprivileged_python() -> str:
    """A Python >= 3.11 with venv that an unprivileged user can execute (not one under /root)."""
    for cand in ("/usr/bin/python3", "/usr/local/bin/python3"):
        probe = subprocess.run(
            ["setpriv", f"--reuid={pwd.getpwnam(UNPRIVILEGED).pw_uid}",
             f"--regid={pwd.getpwnam(UNPRIVILEGED).pw_gid}", "--clear-groups", cand, "-c",
             "import sys, venv, ensurepip; assert sys.version_info >= (3, 11)"],
            capture_output=True)
        if probe.returncode == 0:
            return cand
    pytest.skip(f"no Python >= 3.11 with venv/ensurepip that user {UNPRIVILEGED!r} can run "
                "(install python3-venv)")


#: uv's package cache of the user the export runs as (by uid), kept between test sessions (as
#: a user's own ~/.cache/uv would be): the venv is built from PyPI once per machine and user,
#: from the cache after
UV_CACHE = "/var/tmp/perfcast-test-uv-cache-{uid}"


@dataclass
class User:
    """An export of the repository owned by an unprivileged user, and how to run as that user."""

    root: Path
    prefix: list[str]
    python: str
    env: dict[str, str]

    def make(self, *args: str, timeout: float) -> subprocess.CompletedProcess:
        return subprocess.run([*self.prefix, "make", *args, f"PY={self.python}"], cwd=self.root,
                              env=self.env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def unprivileged(tmp_path_factory, repo) -> Iterator[User]:
    """A fresh export (no sibling folder) owned by a user without root (``nobody`` when the tests
    run as root, else ourselves)."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=repo,
                           capture_output=True, text=True)
    if files.returncode != 0:
        pytest.skip("needs a git checkout of the repository (git ls-files) to export it")
    tracked = sorted(f for f in files.stdout.split("\0") if f and (repo / f).is_file())
    top = Path(tempfile.mkdtemp(prefix="perfcast-alone-"))
    top.chmod(0o755)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "LANG": "C.UTF-8",
           "HOME": str(top)}
    try:
        root = export_repository(top, tracked, repo)
        if os.geteuid() == 0:
            if shutil.which("setpriv") is None:
                pytest.skip("setpriv (util-linux) is needed to drop root for this test")
            try:
                user = pwd.getpwnam(UNPRIVILEGED)
            except KeyError:
                pytest.skip(f"no user {UNPRIVILEGED!r} on this host to run as")
            python = _unprivileged_python()
            cache = Path(UV_CACHE.format(uid=user.pw_uid))
            cache.mkdir(mode=0o700, exist_ok=True)
            for path in [top, *top.rglob("*"), cache]:
                os.lchown(path, user.pw_uid, user.pw_gid)
            prefix = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}",
                      "--clear-groups"]
        else:  # already unprivileged: run as ourselves
            python, prefix = sys.executable, []
            cache = Path(UV_CACHE.format(uid=os.geteuid()))
        env["UV_CACHE_DIR"] = str(cache)
        yield User(root, prefix, python, env)
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_make_builds_the_venv_as_an_unprivileged_user(unprivileged):
    """`make venv` in a fresh export, as a user without root: the venv comes from PyPI (uv's
    cache after the first time) and holds the workflow's command line tools."""
    proc = unprivileged.make("venv", timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-6000:]
    venv = unprivileged.root / ".venv"
    for tool in ("snakemake", "perfcast", "python"):
        assert (venv / "bin" / tool).exists(), tool
    if os.geteuid() == 0:
        assert (venv / "bin" / "perfcast").stat().st_uid == pwd.getpwnam(UNPRIVILEGED).pw_uid


#: what the first of the two `make run` invocations asks for: the counters -> model chain's
#: evaluation and the sweep's models (alone on this 2-core machine: 18 s of the two's 40 s)
FIRST_TARGETS = ("results/model/evaluation.parquet", "results/sweep/matmul/models.json")


def _make_run(user: User, *targets: str) -> subprocess.CompletedProcess:
    config = user.root / "tests" / "configs" / "stages.yaml"
    proc = user.make(
        "run", f"ARGS=--configfile {config} --replace-workflow-config {' '.join(targets)}",
        timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-6000:]
    return proc


@pytest.fixture(scope="module")
def first_make_run(unprivileged) -> User:
    """`make run` on tests/configs/stages.yaml (every stage, smallest sizes) as a user without
    root, in two invocations, as a user who resumes a run: first a part of it, ..."""
    _make_run(unprivileged, *FIRST_TARGETS)
    return unprivileged


@pytest.fixture(scope="module")
def make_run(first_make_run) -> User:
    """... then the rest (``all``, the default target)."""
    _make_run(first_make_run)
    return first_make_run


def test_make_run_as_an_unprivileged_user_makes_a_part(first_make_run):
    res = first_make_run.root / "results"
    for target in FIRST_TARGETS:
        assert (first_make_run.root / target).exists(), target
    assert not (res / "sensitivity").exists() and not (res / "summary.json").exists()


def test_make_run_as_an_unprivileged_user_completes_and_says_what_needs_root(make_run):
    """`make run` as a user without root: the DAG completes, and cgroup profiling is reported as
    not run, with the reason. (That the default config plans offline: the first test of this
    file.)"""
    unprivileged = make_run
    res = unprivileged.root / "results"
    summary = pd.read_parquet(res / "sensitivity/summary.parquet")
    assert list(summary["program"]) == ["cpuhash", "memstream"]
    assert set(summary["status"]) == {"not_run"}
    for reason in summary["reason"]:
        assert "root" in reason and "/sys/fs/cgroup" in reason, reason
    assert (res / "sensitivity/summary.csv").read_text().count("not_run") == 2
    for prog in ("cpuhash", "memstream"):
        assert (res / f"sensitivity/figures/{prog}.png").stat().st_size > 5000
    # every other stage ran in full
    evaluation = pd.read_parquet(res / "model/evaluation.parquet")
    assert len(evaluation) > 0 and evaluation.select_dtypes("number").notna().all().all()
    assert (res / "warmup/kvstore/summary.json").exists()
    assert (res / "sweep/matmul/models.json").exists()
    assert (res / "paper/ipc_prediction.md").exists()
    # nothing was fetched: `all` needs no network
    assert not (res / "data").exists()
