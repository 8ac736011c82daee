"""Sensitivity stage, the real cgroup backend: real processes in real control groups (root).

Limits are checked by what the kernel makes the process see or do (its CPU affinity, CPU time
per wall second, bytes per second through the throttled disk or shaped link, the OOM kill), so
the assertions hold on a machine busy with other work. The network test builds its own veth pair
into a private network namespace and removes it afterwards.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
import psutil
import pytest

from perfcast.errors import HostCapabilityError, InputError
from perfcast.process import run_measured
from perfcast.sensitivity import netshape
from perfcast.sensitivity.backends import CgroupBackend
from perfcast.sensitivity.cgroups import (
    Limits,
    fresh_cgroup,
    make_cgroup,
    own_cgroup,
    v1_mounts,
    v2_mount,
)
from perfcast.sensitivity.devices import block_device
from perfcast.sensitivity.monitor import UsageMonitor
from perfcast.sensitivity.profile import profile
from perfcast.sensitivity.settings import ProfileSettings, profile_settings
from perfcast.settings import schema_default, validate

pytestmark = [pytest.mark.skipif(os.geteuid() != 0, reason="cgroup limits need root"),
              pytest.mark.live]

PY = sys.executable
MIB = 1024 * 1024
#: where test groups go: the schema's sensitivity.cgroup.version and .parent
PLACE = {"version": schema_default("sensitivity", "cgroup.version"),
         "parent": schema_default("sensitivity", "cgroup.parent")}


def _settings(name: str, command: str, dims: dict, *, metric: dict | None = None,
              **section) -> ProfileSettings:
    """Program ``name``'s profile settings through the schema, as the workflow builds them."""
    entry = {"command": command} | ({"metric": metric} if metric else {})
    sens = validate({"dimensions": dims, "programs": {name: entry}, **section}, "sensitivity")
    return profile_settings(sens, name, {}, seed=0)


def _prefix() -> str:
    return f"pctest-{uuid.uuid4().hex[:8]}"


def _leftovers(prefix: str) -> list[Path]:
    """Groups named ``prefix*`` still present in any hierarchy."""
    found = []
    for ctrl, mnt in v1_mounts().items():
        base = Path(mnt) / own_cgroup(ctrl).lstrip("/")
        found += list(base.glob(f"{prefix}*"))
    m2 = v2_mount()
    if m2:
        found += list(Path(m2).glob(f"**/{prefix}*"))
    return found


def _v1_ready(*ctrls: str) -> bool:
    return all(c in v1_mounts() for c in ctrls)


# --------------------------------------------------------------------------- limits, for real


def test_oom_killed_run_is_a_failed_run_not_a_crash():
    prefix = _prefix()
    be = CgroupBackend(_settings("memstream",
                                 "{python} -m perfcast.workloads.memstream --mb 64 --passes 2",
                                 {"memory_mb": {"lower": 48, "upper": 192, "step": 144}},
                                 cgroup={"prefix": prefix}, timeout_s=60))
    low = be.run({"memory_mb": 48.0})
    assert not low.ok
    assert low.reason.startswith("killed by the memory limit (48 MiB; oom_kill=")
    assert low.returncode in (-9, 137)  # SIGKILL, directly or as the shell reports it
    high = be.run({"memory_mb": 192.0})
    assert high.ok and high.performance > 0
    assert high.memory_peak_bytes is None or high.memory_peak_bytes <= 192 * MIB
    assert _leftovers(prefix) == []


def test_cpuset_pins_the_program_to_the_chosen_cpus():
    cpus = sorted(os.sched_getaffinity(0))
    prefix = _prefix()
    with fresh_cgroup(Limits(cpus=(cpus[-1],)), prefix=prefix, **PLACE) as cg:
        r = run_measured([PY, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"],
                         preexec_fn=cg.attach_self)
    assert r.ok and r.stdout.strip() == f"[{cpus[-1]}]"
    assert _leftovers(prefix) == []


def test_cpu_quota_caps_cpu_time_per_wall_second():
    prefix = _prefix()
    with fresh_cgroup(Limits(cpu_quota_cores=0.25), prefix=prefix, **PLACE) as cg:
        r = run_measured([PY, "-m", "perfcast.workloads.cpuhash", "--mb", "128", "--threads",
                          "2"], preexec_fn=cg.attach_self)
        d = cg.dirs["cpu"] if cg.version == "v1" else cg.dir
        stat = dict(line.split() for line in (d / "cpu.stat").read_text().splitlines())
    assert r.ok
    assert r.cpu_utilisation <= 0.25 * 1.25 + 0.03  # two busy threads held to a quarter core
    assert int(stat.get("nr_throttled", 0)) > 0
    assert _leftovers(prefix) == []


@pytest.mark.parametrize("direction", ["read", "write"])
def test_disk_throttle_on_the_device_holding_the_path(tmp_path, direction):
    dev = block_device(tmp_path)
    blob = tmp_path / "blob"
    blob.write_bytes(os.urandom(2 * MIB))
    os.sync()
    if direction == "read":
        cmd = ["dd", f"if={blob}", "of=/dev/null", "bs=256k", "iflag=direct"]
        lim = Limits(read_bps=2_000_000, device=dev)
    else:
        cmd = ["dd", "if=/dev/zero", f"of={tmp_path / 'out'}", "bs=256k", "count=8",
               "oflag=direct"]
        lim = Limits(write_bps=2_000_000, device=dev)
    free = run_measured(cmd)
    if not free.ok:
        pytest.skip(f"direct I/O not supported under {tmp_path}: {free.stderr.strip()}")
    with fresh_cgroup(lim, prefix=_prefix(), **PLACE) as cg:
        r = run_measured(cmd, preexec_fn=cg.attach_self)
    assert r.ok
    assert 2 * MIB / r.wall_s <= 2_000_000 * 1.3  # the throttle holds
    # and it is what slowed it down: the same copy, unthrottled, in the same test (a relation
    # between two runs, not a rate against a bound the host's load could break)
    assert r.wall_s > 3 * free.wall_s


def test_block_device_of_a_path():
    dev = block_device("/")
    major, minor = dev.split(":")
    assert int(major) > 0
    node = Path("/sys/dev/block") / dev
    assert node.exists() and not (node / "partition").exists()  # the whole disk
    with pytest.raises(InputError, match="does not exist"):
        block_device("/nonexistent/path/for/sure")


# --------------------------------------------------------------------------- cleanup


def test_group_removed_after_a_failed_run_and_escaped_processes_killed():
    prefix = _prefix()
    marker = f"{37 + uuid.uuid4().int % 1000 / 1000:.3f}"
    stray = f"{38 + uuid.uuid4().int % 1000 / 1000:.3f}"
    try:
        with fresh_cgroup(Limits(memory_bytes=256 * MIB), prefix=prefix, **PLACE) as cg:
            dirs = [f.parent for f in cg.procs_files]
            # the sleeper leaves the run's session: the run's shim (its subreaper) kills it
            # and the run names it
            r = run_measured(f"setsid sleep {marker} </dev/null >/dev/null 2>&1 & sleep 0.3; "
                             "exit 3", preexec_fn=cg.attach_self)
            assert r.returncode == 3 and marker in r.leftover_error
            # a process put in the group outside any run: the group's removal kills it
            subprocess.Popen(["setsid", "sleep", stray], preexec_fn=cg.attach_self,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
            time.sleep(0.1)
            assert cg.procs_files[0].read_text().split()
        assert not any(d.exists() for d in dirs)
        sleepers = [p for p in psutil.process_iter(["cmdline", "status"])
                    if p.info["cmdline"] in (["sleep", marker], ["sleep", stray])
                    and p.info["status"] != psutil.STATUS_ZOMBIE]
        assert sleepers == []
    finally:
        for p in psutil.process_iter(["cmdline"]):
            if p.info["cmdline"] in (["sleep", marker], ["sleep", stray]):
                p.kill()


def test_group_removed_when_the_caller_raises():
    prefix = _prefix()
    with pytest.raises(RuntimeError, match="boom"):
        with fresh_cgroup(Limits(cpu_quota_cores=1.0), prefix=prefix, **PLACE):
            assert _leftovers(prefix)
            raise RuntimeError("boom")
    assert _leftovers(prefix) == []


# --------------------------------------------------------------------------- clear refusals


def _as_nobody(fn) -> str:
    """Run ``fn()`` in a forked child that dropped root (uid/gid nobody); its error or "ok"."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        msg = "ok"
        try:
            os.setgid(65534)
            os.setuid(65534)
            fn()
        except BaseException as exc:  # noqa: BLE001 - report anything to the parent
            msg = f"{type(exc).__name__}: {exc}"
        finally:
            os.write(w, msg.encode()[:4096])
            os._exit(0)
    os.close(w)
    msg = os.read(r, 4096).decode()
    os.waitpid(pid, 0)
    return msg


def test_not_root_names_the_control_file():
    """A real unprivileged process (forked, setuid nobody) asks for a memory limit."""
    msg = _as_nobody(lambda: make_cgroup(Limits(memory_bytes=64 * MIB), prefix="pctest", **PLACE))
    assert msg.startswith("HostCapabilityError") and "restricting a program needs root" in msg
    assert "memory.limit_in_bytes" in msg or "memory.max" in msg


TINY_COMMAND = f"{PY} -c pass"
TINY_METRIC = {"name": "wall_s", "source": "wall_time", "higher_is_better": False}


TINY_DIMS = {"cpu_quota": {"lower": 0.5, "upper": 1.0, "step": 0.5},
             "memory_mb": {"lower": 32, "upper": 64, "step": 32}}


def test_probe_without_root_names_the_control_file():
    """The probe a profile starts with, in a process that dropped root: no run is made."""
    be = CgroupBackend(_settings("tiny", TINY_COMMAND, TINY_DIMS, metric=TINY_METRIC,
                                 cgroup={"prefix": _prefix()}))
    msg = _as_nobody(be.probe)
    assert msg.startswith("HostCapabilityError") and "needs root" in msg, msg
    assert "cpu.cfs_quota_us" in msg or "cpu.max" in msg or "memory" in msg
    be.probe()  # as root it passes (and leaves nothing behind)
    assert not _leftovers(be.settings.cgroup.prefix)


def test_a_run_that_daemonizes_fails_naming_the_process_it_left():
    """A profiled program that leaves a daemon behind measured something else: the level
    fails naming it, and the daemon is gone (it would load every later run)."""
    marker = f"{39 + uuid.uuid4().int % 1000 / 1000:.3f}"
    be = CgroupBackend(_settings("d", f"setsid sleep {marker} >/dev/null 2>&1 & {TINY_COMMAND}",
                                 TINY_DIMS, metric=TINY_METRIC, cgroup={"prefix": _prefix()}))
    try:
        out = be.run({"cpu_quota": 1.0, "memory_mb": 64.0})
        assert not out.ok and out.reason.startswith("left 1 process(es) running after it ended")
        assert marker in out.reason
        assert [p for p in psutil.process_iter(["cmdline", "status"])
                if p.info["cmdline"] == ["sleep", marker]
                and p.info["status"] != psutil.STATUS_ZOMBIE] == []
    finally:
        for p in psutil.process_iter(["cmdline"]):
            if p.info["cmdline"] == ["sleep", marker]:
                p.kill()


@pytest.mark.parametrize("if_unavailable", ["report", "fail"])
def test_host_without_the_controllers_is_reported_as_not_run(tmp_path, if_unavailable):
    """Asking for cgroup v2 where its hierarchy lacks the controllers: the program is written
    as not profiled with the reason (``report``, the default), or the job fails (``fail``)."""
    import json

    from perfcast.io import read_parquet
    from perfcast.sensitivity.rules import profile_program, summarize

    mnt = v2_mount()
    if mnt is not None and "cpu" in (Path(mnt) / "cgroup.controllers").read_text().split():
        pytest.skip("cgroup v2 with the cpu controller is mounted: nothing missing to ask for")
    missing = "no cgroup v2 mounted" if mnt is None else "the cpu controller is not available"
    settings = _settings("tiny", TINY_COMMAND, TINY_DIMS, metric=TINY_METRIC, epsilon=0.3,
                         cgroup={"version": "v2", "if_unavailable": if_unavailable})
    out = [tmp_path / "g.parquet", tmp_path / "r.parquet", tmp_path / "s.json"]
    files = dict(zip(["grid", "runs", "summary"], out, strict=True))
    if if_unavailable == "fail":
        with pytest.raises(HostCapabilityError, match=missing):
            profile_program(settings, data=None, **files)
        assert not any(p.exists() for p in out)
        return
    profile_program(settings, data=None, **files)
    summary = json.loads(out[2].read_text())
    assert summary["status"] == "not_run" and missing in summary["reason"]
    assert "cpu" in summary["requires"] and "memory" in summary["requires"]
    assert len(read_parquet(out[0])) == 0 and len(read_parquet(out[1])) == 0
    table = summarize(summaries=[out[2]], table=tmp_path / "t.parquet",
                      csv=tmp_path / "t.csv")
    assert table.loc[0, "status"] == "not_run" and table.loc[0, "reason"] == summary["reason"]


def test_missing_v1_controller_names_the_control_file():
    if "net_cls" in v1_mounts():
        pytest.skip("net_cls is mounted on this host")
    with pytest.raises(HostCapabilityError,
                       match=r"net_cls/net_cls\.classid: the net_cls controller is not mounted"):
        make_cgroup(Limits(net_classid=0x10001), version="v1", parent="perfcast", prefix="pctest")


def test_cgroup_v2_limits_or_a_clear_error():
    mnt = v2_mount()
    if mnt is None:
        pytest.skip("no cgroup v2 hierarchy mounted")
    available = (Path(mnt) / "cgroup.controllers").read_text().split()
    prefix = _prefix()
    parent = f"{prefix}-parent"
    if {"memory", "cpu"} <= set(available):  # a real v2 host: the OOM path end to end
        be = CgroupBackend(_settings("m", "{python} -m perfcast.workloads.memstream --mb 64",
                                     {"memory_mb": {"lower": 48, "upper": 48, "step": 1}},
                                     cgroup={"version": "v2", "parent": parent,
                                             "prefix": prefix}))
        out = be.run({"memory_mb": 48.0})
        assert not out.ok and "killed by the memory limit" in out.reason
    else:  # this host: controllers bound to v1, the unified tree has none of them
        with pytest.raises(HostCapabilityError, match=r"memory\.max: the memory controller is "
                           r"not available \(cgroup v2: .*cgroup\.controllers lists"):
            with fresh_cgroup(Limits(memory_bytes=64 * MIB), version="v2", parent=parent,
                              prefix=prefix):
                pass
    assert not (Path(mnt) / parent).exists()


# --------------------------------------------------------------------------- network (tc)


@pytest.fixture
def veth(tmp_path):
    """A veth pair: one end here, the other in a private namespace with a TCP sink."""
    if shutil.which("ip") is None or shutil.which("tc") is None:
        pytest.skip("iproute2 (ip, tc) not installed")
    tag = uuid.uuid4().hex[:6]
    ns, a, b = f"pcs{tag}", f"pcs{tag}a", f"pcs{tag}b"
    octet = 16 + uuid.uuid4().int % 200
    host_ip, ns_ip = f"10.231.{octet}.1", f"10.231.{octet}.2"

    def ip(*args, check=True):
        return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)

    try:
        ip("netns", "add", ns)
        ip("link", "add", a, "type", "veth", "peer", "name", b)
    except subprocess.CalledProcessError as exc:
        ip("netns", "del", ns, check=False)
        pytest.skip(f"cannot create a veth pair / namespace here: {exc.stderr.strip()}")
    server = None
    try:
        ip("link", "set", b, "netns", ns)
        ip("addr", "add", f"{host_ip}/30", "dev", a)
        ip("link", "set", a, "up")
        ip("netns", "exec", ns, "ip", "addr", "add", f"{ns_ip}/30", "dev", b)
        ip("netns", "exec", ns, "ip", "link", "set", b, "up")
        sink = tmp_path / "sink.py"
        sink.write_text(
            "import socket\n"
            f"s = socket.create_server(('{ns_ip}', 5201))\n"
            "while True:\n"
            "    c, _ = s.accept()\n"
            "    while c.recv(1 << 16):\n"
            "        pass\n"
            "    c.sendall(b'ok')\n"
            "    c.close()\n")
        server = subprocess.Popen(["ip", "netns", "exec", ns, PY, str(sink)])
        for _ in range(100):
            try:
                socket.create_connection((ns_ip, 5201), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        yield a, ns_ip
    finally:
        if server is not None:
            server.kill()
            server.wait()
        ip("link", "del", a, check=False)
        ip("netns", "del", ns, check=False)
        (Path(tempfile.gettempdir()) / f"perfcast-tc-{a}.lock").unlink(missing_ok=True)


SENDER = (
    "import socket, sys, time\n"
    "n = int(sys.argv[2])\n"
    "c = socket.create_connection((sys.argv[1], 5201))\n"
    "t = time.perf_counter()\n"
    "c.sendall(b'x' * n)\n"
    "c.shutdown(socket.SHUT_WR)\n"
    "c.recv(2)\n"
    "print(f'rate_mbit={n * 8 / (time.perf_counter() - t) / 1e6:.4f}')\n"
)


def test_network_limit_with_tc_on_the_interface(veth, tmp_path):
    iface, dest = veth
    sender = tmp_path / "send.py"
    sender.write_text(SENDER)
    be = CgroupBackend(_settings(
        "send", f"{{python}} {sender} {dest} 1000000",
        {"network_mbit": {"lower": 8, "upper": 16, "step": 8}},
        metric={"name": "rate_mbit", "source": "stdout", "pattern": r"rate_mbit=([0-9.]+)",
                "higher_is_better": True},
        network={"interface": iface}, cgroup={"prefix": _prefix()}, timeout_s=30))
    free = be.unrestricted()
    assert free.ok and free.performance > 3 * 8
    assert free.usage.net_bps * 8 / 1e6 > 1  # the monitor saw the bytes on the interface
    slow = be.run({"network_mbit": 8.0})
    assert slow.ok and slow.performance <= 8 * 1.3
    assert netshape.root_qdisc(iface).get("kind") != "htb"  # shaping removed afterwards
    subprocess.run(["tc", "qdisc", "add", "dev", iface, "root", "handle", "7:", "htb"],
                   check=True)
    try:
        with pytest.raises(HostCapabilityError, match="already has a configured root qdisc"):
            with netshape.shaped(iface, 8_000_000, "interface"):
                pass
    finally:
        subprocess.run(["tc", "qdisc", "del", "dev", iface, "root"], check=False)


# --------------------------------------------------------------------------- monitor, campaign


def test_monitor_sees_rss_cpu_and_writes(tmp_path):
    code = (
        "import os\n"
        "b = bytearray(80 << 20)\n"
        "for i in range(0, len(b), 4096): b[i] = 1\n"
        f"fd = os.open({str(tmp_path / 'w')!r}, os.O_WRONLY | os.O_CREAT)\n"
        "for _ in range(4): os.write(fd, os.urandom(2 << 20)); os.fsync(fd)\n"
        "x = 0\n"
        "for i in range(3_000_000): x += i\n"
    )
    mon = UsageMonitor(0.02)
    r = run_measured([PY, "-c", code], on_start=mon.start)
    u = mon.stop(r)
    assert r.ok and u.samples > 0
    assert u.rss_bytes >= 80 * MIB
    assert u.write_bps > 0
    assert u.cpu_cores > 0 and u.cpu_runnable >= 1
    assert u.peak_for("memory") == pytest.approx(u.rss_bytes / MIB)


@pytest.mark.skipif(not _v1_ready("memory", "cpuset") and v2_mount() is None,
                    reason="no memory/cpuset controller")
def test_profile_campaign_on_the_cgroup_backend():
    """Ceiling from the monitored run, binary search, product, PCHIP - all for real."""
    prefix = _prefix()
    be = CgroupBackend(_settings(
        "memstream", "{python} -m perfcast.workloads.memstream --mb 24 --passes 30",
        {"cpu_quota": {"lower": 0.5, "upper": 1.5, "step": 0.5},
         "memory_mb": {"lower": 32, "upper": 160, "step": 32}},
        metric={"name": "triad_s", "source": "stdout", "pattern": r"wall_s=([0-9.]+)",
                "higher_is_better": False},
        cgroup={"prefix": prefix}, timeout_s=60, monitor_interval_s=0.01))
    res = profile(be, epsilon=0.3, sampling="binary", spare_cores=1, program="memstream")
    cpu, mem = res.ranges
    peak_mib = res.baseline.usage.rss_bytes / MIB
    assert peak_mib > 24  # the working set was seen (VmHWM: no peak slips between samples)
    assert cpu.effective and mem.effective
    assert cpu.dim.levels[cpu.ceiling] == 1.5  # one thread + one spare core, capped
    c = mem.ceiling  # first level at or above the peak resident set
    assert mem.dim.levels[c] >= peak_mib and (c == 0 or mem.dim.levels[c - 1] < peak_mib)
    assert np.isfinite(res.grid).all()
    for m in res.measurements:
        if m.outcome.ok:
            assert m.sensitivity > 0 and res.grid[m.idx] == m.sensitivity
        else:
            assert m.sensitivity == 0 and "memory limit" in m.outcome.reason
    assert res.steps["runs_total"] == len(res.measurements) + 1
    runs = res.runs_frame()
    assert runs["phase"].iloc[0] == "unrestricted" and len(runs) == res.steps["runs_total"]
    assert _leftovers(prefix) == []


def test_repeated_runs_give_a_mean_and_its_confidence_interval():
    """Each grid point's repeats: their mean, with the Student-t interval of the mean."""
    prefix = _prefix()
    be = CgroupBackend(_settings(
        "memstream", "{python} -m perfcast.workloads.memstream --mb 8 --passes 5",
        {"cpu_quota": {"lower": 0.5, "upper": 1.0, "step": 0.5}},
        metric={"name": "triad_s", "source": "stdout", "pattern": r"wall_s=([0-9.]+)",
                "higher_is_better": False},
        cgroup={"prefix": prefix}, timeout_s=60, repeats=4, confidence=0.9))
    out = be.run({"cpu_quota": 1.0})
    assert out.ok and out.repeats == 4
    assert out.ci_low < out.performance < out.ci_high
    assert _leftovers(prefix) == []


# --------------------------------------------------------------------------- ended by a signal

#: a profiling job as the workflow's script runs it (rule_logging around the real backend), its
#: program a sleeper with a unique duration; argv: prefix, duration
_JOB = """
import sys, types
from perfcast.rulekit import rule_logging
from perfcast.sensitivity.backends import CgroupBackend
from perfcast.sensitivity.settings import profile_settings
from perfcast.settings import validate

prefix, duration = sys.argv[1:]
sens = validate({
    "dimensions": {"memory_mb": {"lower": 64, "upper": 128, "step": 64}},
    "programs": {"sleeper": {"command": "sleep " + duration}},
    "cgroup": {"prefix": prefix}, "timeout_s": 600}, "sensitivity")
with rule_logging(types.SimpleNamespace(log=[], rule="sensitivity_profile")):
    CgroupBackend(profile_settings(sens, "sleeper", {}, seed=0)).run({"memory_mb": 64.0})
"""


def _sleepers(duration: str) -> list[psutil.Process]:
    return [p for p in psutil.process_iter(["cmdline"])
            if p.info["cmdline"] == ["sleep", duration]]


def _restricted_sleeper(popen, tmp: Path, prefix: str, duration: str) -> subprocess.Popen:
    """The profiling job of ``_JOB`` started, once its workload sleeps in its group."""
    if not v1_mounts() and not v2_mount():
        pytest.skip("no cgroup hierarchy mounted on this host")
    tmp.mkdir()
    job = popen([PY, "-c", _JOB, prefix, duration], env=os.environ | {"TMPDIR": str(tmp)},
                stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not _sleepers(duration) and job.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _sleepers(duration) and _leftovers(prefix), job.stderr.read() if job.poll() else ""
    assert list(tmp.glob("perfcast-rusage-*"))
    return job


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_ends_a_restricted_run_with_its_workload_groups_and_temp_files(
        tmp_path, signum, popen_to_signal):
    prefix, duration = _prefix(), f"{500 + uuid.uuid4().int % 1000 / 1000:.3f}"
    tmp = tmp_path / "tmp"
    job = _restricted_sleeper(popen_to_signal, tmp, prefix, duration)
    job.send_signal(signum)
    _, err = job.communicate(timeout=60)
    # the job ends by the signal (what SLURM or the shell expects), with one line saying so
    assert job.returncode == (-signum if signum != signal.SIGINT else 1) or \
        (signum == signal.SIGINT and job.returncode in (-signal.SIGINT, 130)), err
    assert "Traceback" not in err or signum == signal.SIGINT
    if signum != signal.SIGINT:
        assert f"terminated by {signal.Signals(signum).name}" in err
    time.sleep(0.1)
    assert _sleepers(duration) == []
    assert _leftovers(prefix) == []
    assert list(tmp.glob("perfcast-rusage-*")) == []


def test_a_hangup_the_caller_ignores_lets_the_restricted_run_finish(tmp_path):
    """Under ``nohup`` (SIGHUP ignored, a disposition that passes through ``exec``) a closed
    terminal does not end a profiling job: the run goes on, ends by itself, and still leaves no
    group or temporary file behind."""

    def ignore_hangup() -> None:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    def popen(*args, **kw):
        return subprocess.Popen(*args, preexec_fn=ignore_hangup, **kw)

    # long enough to be seen running and signalled on a loaded host, short enough to wait for
    prefix, duration = _prefix(), f"{4 + uuid.uuid4().int % 1000 / 1000:.3f}"
    tmp = tmp_path / "tmp"
    job = _restricted_sleeper(popen, tmp, prefix, duration)
    job.send_signal(signal.SIGHUP)
    _, err = job.communicate(timeout=60)
    assert job.returncode == 0, err
    assert "terminated by" not in err
    assert _sleepers(duration) == [] and _leftovers(prefix) == []
    assert list(tmp.glob("perfcast-rusage-*")) == []
