"""A group left behind by a SIGKILLed profiling job: the next profile removes it and says so.

For real (root, real cgroup hierarchies): a job makes its group, starts a program in it and is
SIGKILLed; its group and program outlive it. The next run's probe removes exactly the groups of
its prefix whose owner pid is dead, kills the program left in them, and logs each.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import psutil
import pytest

from perfcast.sensitivity.backends import CgroupBackend
from perfcast.sensitivity.cgroups import (
    Limits,
    fresh_cgroup,
    own_cgroup,
    remove_stale,
    v1_mounts,
    v2_mount,
)
from perfcast.sensitivity.settings import profile_settings
from perfcast.settings import schema_default, validate

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="cgroup limits need root")

#: where test groups go: the schema's sensitivity.cgroup.version and .parent
PLACE = {"version": schema_default("sensitivity", "cgroup.version"),
         "parent": schema_default("sensitivity", "cgroup.parent")}
LIMITS = Limits(cpu_quota_cores=0.5, memory_bytes=256 * 1024 * 1024)

JOB = textwrap.dedent("""
    import subprocess, sys, time
    from perfcast.sensitivity.cgroups import Limits, fresh_cgroup
    with fresh_cgroup(Limits(cpu_quota_cores=0.5, memory_bytes=256 * 1024 * 1024),
                      prefix=sys.argv[1], version=sys.argv[2], parent=sys.argv[3]) as cg:
        child = subprocess.Popen(["sleep", "300"], preexec_fn=cg.attach_self)
        print(child.pid, *cg.procs_files, flush=True)
        time.sleep(300)
""")


def _groups(prefix: str) -> list[Path]:
    found = []
    for ctrl, mnt in v1_mounts().items():
        found += list((Path(mnt) / own_cgroup(ctrl).lstrip("/")).glob(f"{prefix}-*"))
    if v2_mount():
        found += list(Path(v2_mount()).glob(f"**/{prefix}-*"))
    return sorted(set(found))


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _killed_job(prefix: str) -> tuple[int, int, list[Path]]:
    """(job pid, its program's pid, the group dirs) of a job SIGKILLed inside its group."""
    job = subprocess.Popen([sys.executable, "-c", JOB, prefix, PLACE["version"],
                            PLACE["parent"]], stdout=subprocess.PIPE, text=True)
    first = job.stdout.readline().split()
    program = int(first[0])
    job.send_signal(signal.SIGKILL)
    job.wait()
    job.stdout.close()
    return job.pid, program, [Path(f).parent for f in first[1:]]


def _backend(prefix: str) -> CgroupBackend:
    dims = {"cpu_quota": {"lower": 0.5, "upper": 1.0, "step": 0.5},
            "memory_mb": {"lower": 32, "upper": 64, "step": 32}}
    sens = validate({
        "dimensions": dims, "cgroup": {"prefix": prefix},
        "programs": {"tiny": {"command": f"{sys.executable} -c pass",
                              "metric": {"name": "wall_s", "source": "wall_time",
                                         "higher_is_better": False}}}}, "sensitivity")
    return CgroupBackend(profile_settings(sens, "tiny", {}, seed=0))


def test_the_next_probe_removes_a_killed_jobs_group_and_logs_it(caplog):
    prefix = f"pcstale-{uuid.uuid4().hex[:8]}"
    job_pid, program, dirs = _killed_job(prefix)
    try:
        assert dirs and all(d.is_dir() for d in dirs)  # the kill left the group ...
        assert not _gone(program)  # ... and the program running in it
        with caplog.at_level(logging.WARNING, logger="perfcast.sensitivity.backends"):
            _backend(prefix).probe()
        assert not _groups(prefix)
        deadline = time.monotonic() + 5
        while not _gone(program) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _gone(program)
        logged = [r.getMessage() for r in caplog.records if prefix in r.getMessage()]
        assert logged == [f"removed cgroup {dirs[0].name} left by a killed earlier run (owner "
                          f"pid {job_pid} is dead; 1 leftover process(es) killed): "
                          + ", ".join(map(str, sorted(dirs)))]
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(program, signal.SIGKILL)
        remove_stale(prefix, PLACE["parent"])


def test_a_live_owners_group_is_left_alone():
    prefix = f"pcstale-{uuid.uuid4().hex[:8]}"
    with fresh_cgroup(LIMITS, prefix=prefix, **PLACE) as cg:
        assert remove_stale(prefix, PLACE["parent"]) == []  # its owner (this process) lives
        assert all(f.parent.is_dir() for f in cg.procs_files)
    assert not _groups(prefix)
