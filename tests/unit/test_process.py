"""process.run_measured: every process a run starts is gone when it ends.

A program that detaches a process (``setsid``, a double fork, ``nohup ... &``) leaves it
re-parented to the run's shim (the child subreaper of the program's tree): the shim kills it and
the run fails naming it. Each test's sleepers carry a unique duration, so they are told apart
from any other ``sleep`` on the host, and every test kills what it finds in ``finally``.
"""

from __future__ import annotations

import shlex
import shutil
import signal
import subprocess
import sys
import threading
import uuid

import psutil
import pytest

from perfcast.counters.collect import collect_perf
from perfcast.counters.settings import BaseEvents, CollectSettings, PerfRun
from perfcast.process import read_report, run_measured
from perfcast.sweep import runner, sensors
from perfcast.sweep.job_settings import RunSettings
from perfcast.warmup.planner import PlannedRound
from perfcast.warmup.runner import RoundFailedError, run_round

PY = sys.executable


def marker() -> str:
    """A sleep duration no other process on the host uses: ``sleep <marker>`` names ours."""
    return f"{30 + uuid.uuid4().int % 10**6 / 10**7:.7f}"


def sleepers(mark: str) -> list[psutil.Process]:
    """The live (not zombie) processes running ``sleep <mark>``."""
    found = []
    for p in psutil.process_iter(["cmdline", "status"]):
        if p.info["cmdline"] == ["sleep", mark] and p.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(p)
    return found


def kill_sleepers(*marks: str) -> None:
    """Kill whatever a test (or the code under test, before it was fixed) left running."""
    for mark in marks:
        for p in sleepers(mark):
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass


#: ways of leaving ``sleep {m}`` running after the command ends, each run by /bin/sh
DETACHING = {
    "setsid": "setsid sleep {m} </dev/null >/dev/null 2>&1 &",
    "double_fork": "(sleep {m} </dev/null >/dev/null 2>&1 &); echo parent gone",
    "nohup": "nohup sleep {m} >/dev/null 2>&1 &",
    "setsid_double_fork": "(setsid sh -c 'sleep {m} & exit 0' >/dev/null 2>&1 &)",
    "bash_disown": "bash -c 'sleep {m} >/dev/null 2>&1 & disown; exit 0'",
    "python_daemon": (f"{PY} -c \"import os, sys\nif os.fork() == 0:\n    os.setsid()\n"
                      "    if os.fork() == 0:\n        os.execvp('sleep', ['sleep', sys.argv[1]])"
                      "\n\" {m}"),
}


@pytest.mark.parametrize("own_rusage", [True, False])
@pytest.mark.parametrize("form", sorted(DETACHING))
def test_a_detached_process_is_killed_and_named(form, own_rusage):
    m = marker()
    command = DETACHING[form].format(m=m)
    try:
        res = run_measured(command, own_rusage=own_rusage)
        assert sleepers(m) == []  # gone when the run ended
        assert res.returncode == 0 and not res.timed_out
        assert not res.ok  # a run that left a process behind failed
        # named as the shim found it: the sleeper, or the process about to become it
        assert res.leftovers and all(m in x.command for x in res.leftovers)
        assert res.leftover_error == (
            f"left {len(res.leftovers)} process(es) running after it ended (killed): "
            + ", ".join(f"pid {x.pid} ({x.command})" for x in res.leftovers))
    finally:
        kill_sleepers(m)


def test_an_argv_command_and_several_leftovers_are_all_named():
    m1, m2 = marker(), marker()
    script = f"setsid sleep {m1} >/dev/null 2>&1 & nohup sleep {m2} >/dev/null 2>&1 &"
    try:
        res = run_measured(["/bin/sh", "-c", script])
        assert sleepers(m1) == [] and sleepers(m2) == []
        assert res.command == shlex.join(["/bin/sh", "-c", script])
        assert any(m1 in x.command for x in res.leftovers)
        assert any(m2 in x.command for x in res.leftovers)
    finally:
        kill_sleepers(m1, m2)


def test_a_clean_run_has_no_leftovers_and_reaps_its_zombies():
    # the double fork's middle process dies at once: a zombie of the shim, reaped, not named
    res = run_measured("(true &); sleep 0.2; echo done")
    assert res.ok and res.leftovers == () and res.leftover_error is None
    assert res.stdout == "done\n"
    me = psutil.Process()
    assert [c for c in me.children() if c.status() == psutil.STATUS_ZOMBIE] == []


def test_a_timeout_kills_the_detached_processes_too():
    m = marker()
    try:
        res = run_measured(f"setsid sleep {m} >/dev/null 2>&1 & sleep {marker()}",
                           timeout_s=0.5)
        assert res.timed_out and not res.ok
        assert sleepers(m) == []
    finally:
        kill_sleepers(m)


def test_an_interrupted_run_kills_the_detached_processes():
    """An exception in the waiting thread (SIGINT, SIGTERM's Terminated) kills the tree."""
    m, m_main = marker(), marker()

    class Boom(Exception):
        pass

    def alarm(signum, frame):
        raise Boom

    previous = signal.signal(signal.SIGALRM, alarm)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.5)
        with pytest.raises(Boom):
            run_measured(f"setsid sleep {m} >/dev/null 2>&1 & sleep {m_main}")
        assert sleepers(m) == [] and sleepers(m_main) == []
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        kill_sleepers(m, m_main)


def test_runs_in_threads_name_only_their_own_leftovers_and_spare_our_children():
    """Each run's shim is its own subreaper: two concurrent runs each name their own daemon,
    and a child this process started itself (as perf or a monitor would be) is left alone."""
    own, m1, m2 = marker(), marker(), marker()
    helper = subprocess.Popen(["sleep", own])
    results: dict[str, object] = {}

    def go(mark: str) -> None:
        results[mark] = run_measured(f"setsid sleep {mark} >/dev/null 2>&1 & sleep 0.3")

    try:
        threads = [threading.Thread(target=go, args=(m,)) for m in (m1, m2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        one, two = results[m1].leftover_error, results[m2].leftover_error
        assert m1 in one and m2 not in one and own not in one
        assert m2 in two and m1 not in two and own not in two
        assert helper.poll() is None and sleepers(m1) == [] and sleepers(m2) == []
    finally:
        helper.kill()
        helper.wait()
        kill_sleepers(m1, m2)


def test_read_report_refuses_a_malformed_leftover_line(tmp_path):
    report = tmp_path / "r"
    report.write_text('0 1.0 0.5 0.1 100\n[12, "sleep 30"]\n')
    assert [str(x) for x in read_report(report).leftovers] == ["pid 12 (sleep 30)"]
    report.write_text("0 1.0 0.5 0.1 100\nnot json\n")
    assert read_report(report) is None


# --------------------------------------------------------------------------- each stage fails


def _sweep(command: str, **kw) -> RunSettings:
    from perfcast.settings import as_params, build
    from perfcast.sweep.campaign import Sensors
    sens = build(Sensors, {"perf_events": [], "rapl": False, "custom": {}, "heartbeat": None})
    p = {"campaign": "t", "point": "x~1", "iteration": 1, "parameters": {"x": 1},
         "command": command, "before": "", "after": "", "env": {}, "cwd": None,
         "timeout_s": 30, "fail_fast": False, "sensors": as_params(sens),
         "stop_marker": "/nonexistent/STOPPED.json", "failed_record": "/nonexistent/f.json"}
    p.update(kw)
    return build(RunSettings, p)


@pytest.mark.parametrize("phase", ["command", "before", "after"])
def test_a_sweep_run_that_daemonizes_is_a_failed_record_naming_it(phase):
    m = marker()
    daemon = f"setsid sleep {m} >/dev/null 2>&1 &"
    given = {"command": "true", phase: daemon}
    try:
        rec = runner.run_point(_sweep(**given))
        assert sleepers(m) == []
        status = {"command": "failed", "before": "before_failed", "after": "after_failed"}
        assert rec["status"] == status[phase]
        assert any(m in e and "left 1 process(es) running" in e for e in rec["errors"])
    finally:
        kill_sleepers(m)


def test_a_sensor_command_that_daemonizes_fails_naming_it():
    m = marker()
    try:
        with pytest.raises(ValueError,
                           match=rf"^sensor command .* left 1 process\(es\) running .*{m}"):
            sensors.read_custom(f"setsid sleep {m} >/dev/null 2>&1 & echo 42")
        assert sleepers(m) == []
    finally:
        kill_sleepers(m)


def test_a_warmup_round_that_daemonizes_fails_naming_it():
    from perfcast.settings import validate
    from perfcast.warmup.settings import session_settings
    m = marker()
    section = validate({"workloads": {"d": {
        "command": f"setsid sleep {m} >/dev/null 2>&1 & echo {{work}}", "work_max": 1000}}},
        "warmup")
    settings = session_settings("d", section, {}, 0)
    try:
        with pytest.raises(RoundFailedError,
                           match=rf"round 0 \(work 1\) left 1 process\(es\) .*{m}"):
            run_round(settings, PlannedRound(1, "calibrate"), 0)
        assert sleepers(m) == []
    finally:
        kill_sleepers(m)


@pytest.mark.skipif(shutil.which("perf") is None, reason="perf is not installed")
def test_a_perf_collect_run_that_daemonizes_fails_naming_it_and_spares_perf(tmp_path):
    """perf is the shim's own child, the program's daemon a leftover: only the daemon is named,
    and no CSV is written."""
    m = marker()
    run = PerfRun(binary="perf", timeout_s=60, command=f"setsid sleep {m} >/dev/null 2>&1 &",
                  env={}, cwd=None)
    out = tmp_path / "group0.csv"
    try:
        with pytest.raises(RuntimeError, match=rf"under perf failed \(left 1 process\(es\) .*{m}"):
            collect_perf(CollectSettings(backend="perf", interval_ms=100,
                                         base_events=BaseEvents("task-clock", "cpu-clock"),
                                         events=("task-clock", "cpu-clock"), simulated=None,
                                         perf=run), out)
        assert sleepers(m) == [] and list(tmp_path.iterdir()) == []
    finally:
        kill_sleepers(m)
