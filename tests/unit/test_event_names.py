"""perf event names as configured and as perf prints them (perfcast.counters.events), and the
user-mode restriction perf gives a user without CAP_PERFMON (perf_event_paranoid >= 2): perf
appends ``:u`` to every event, and the scheduler's events then print 0, which is no count."""

from __future__ import annotations

import json
import math
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from perfcast.counters.collect import check_perf_events
from perfcast.counters.events import claim_events, resolve_event, split_event, user_mode_blind
from perfcast.counters.perfstat import parse_perf_stat, to_wide
from perfcast.counters.settings import BaseEvents
from perfcast.counters.wholerun import read_wholerun
from perfcast.errors import HostCapabilityError, InputError
from perfcast.summary import build_summary
from perfcast.sweep import sensors
from perfcast.sweep.campaign import Sensors

DATA = Path(__file__).parents[1] / "data"

#: ``perf stat -x, -e task-clock,context-switches,cpu-migrations,page-faults`` as a user perf
#: restricts to user mode (perf 6.1, perf_event_paranoid 2), around a command that slept ten
#: times: the scheduler's events print 0, the same command as root counted 39 to 47 switches
NONROOT_CSV = """\
27.35,msec,task-clock:u,27350412,100.00,0.019,CPUs utilized
0,,context-switches:u,27350412,100.00,0.000,/sec
0,,cpu-migrations:u,27350412,100.00,0.000,/sec
847,,page-faults:u,27350412,100.00,38.891,K/sec
"""
EVENTS = ["task-clock", "context-switches", "cpu-migrations", "page-faults"]


# --- names ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("printed, parts", [
    ("task-clock:u", ("", "task-clock", "u")),
    ("task-clock:Du", ("", "task-clock", "u")),  # perf appends u after the asked modifiers
    ("page-faults:pppu", ("", "page-faults", "u")),
    ("cycles:uk", ("", "cycles", "ku")),
    ("instructions:D", ("", "instructions", "")),
    ("cpu_core/instructions/u", ("cpu_core", "instructions", "u")),
    ("cha/event=0x34,umask=0x1fe001/", ("", "cha/event=0x34,umask=0x1fe001/", "")),
])
def test_split_event_keeps_the_modifiers_that_change_the_count(printed, parts):
    assert split_event(printed) == parts


def test_a_name_stands_for_perfs_user_mode_copy_only_when_nothing_else_matches():
    assert resolve_event("task-clock", ["task-clock:u", "page-faults:u"]) == ["task-clock:u"]
    assert resolve_event("task-clock", ["task-clock:Du"]) == ["task-clock:Du"]
    assert resolve_event("instructions", ["cpu_core/instructions/u",
                                          "cpu_atom/instructions/u"]) == [
        "cpu_core/instructions/u", "cpu_atom/instructions/u"]
    # the unrestricted count wins where both are printed
    assert resolve_event("cycles", ["cycles:u", "cycles"]) == ["cycles"]
    assert resolve_event("cycles", ["cycles:u", "cycles:D"]) == ["cycles:D"]
    # a kernel-only or user+kernel count never stands in; an asked :u never takes the full one
    assert resolve_event("cycles", ["cycles:k"]) == []
    assert resolve_event("cycles", ["cycles:uk"]) == []
    assert resolve_event("cycles:u", ["cycles"]) == []
    assert resolve_event("cycles:k", ["cycles:u"]) == []


def test_instructions_u_and_instructions_d_stay_distinct():
    both = ["instructions:u", "instructions:D"]
    assert resolve_event("instructions:u", both) == ["instructions:u"]
    assert resolve_event("instructions:D", both) == ["instructions:D"]
    assert resolve_event("instructions", both) == ["instructions:D"]
    assert claim_events(["instructions:u", "instructions:D"], both, "f.csv") == {
        "instructions:u": ["instructions:u"], "instructions:D": ["instructions:D"]}
    # where perf restricted both to user mode they are one count: configured twice, refused
    with pytest.raises(InputError, match="one event configured twice"):
        claim_events(["instructions", "instructions:u"], ["instructions:u"], "f.csv")


@pytest.mark.parametrize("printed, blind", [
    ("context-switches:u", True), ("cs:u", True), ("cpu-migrations:u", True),
    ("migrations:Du", True), ("software/context-switches/u", True),
    ("context-switches", False), ("context-switches:uk", False), ("context-switches:k", False),
    ("page-faults:u", False), ("task-clock:u", False), ("instructions:u", False),
])
def test_the_scheduler_events_in_user_mode_are_told_apart(printed, blind):
    assert (user_mode_blind(printed) is not None) == blind


# --- the readers ---------------------------------------------------------------------------------


def _as_nonroot(text: str) -> str:
    """A perf file as perf writes it for a user restricted to user mode: every event ``:u``, the
    scheduler's events 0."""
    out = []
    for line in text.splitlines():
        for ev in ("task-clock", "cpu-clock", "page-faults", "duration_time"):
            line = line.replace(f",{ev},", f",{ev}:u,")
        if ",context-switches," in line:
            f = line.split(",")
            f[1 if line.startswith(" ") else 0] = "0"  # the interval form starts with the time
            line = ",".join(f).replace(",context-switches,", ",context-switches:u,")
        out.append(line)
    return "\n".join(out) + "\n"


def test_interval_reader_matches_user_mode_names_and_never_reads_zero_switches(tmp_path):
    src = DATA / "perf" / "aggregated.csv"
    f = tmp_path / "nonroot.csv"
    f.write_text(_as_nonroot(src.read_text()))
    assert ",task-clock:u," in f.read_text() and ",0,,context-switches:u," in f.read_text()
    want = to_wide(parse_perf_stat(src), src, required=["task-clock"],
                   wanted=["page-faults", "context-switches"])
    wide = to_wide(parse_perf_stat(f), f, required=["task-clock"],
                   wanted=["page-faults", "context-switches"])
    np.testing.assert_array_equal(wide["task-clock"], want["task-clock"])
    np.testing.assert_array_equal(wide["page-faults"], want["page-faults"])
    assert wide["context-switches"].isna().all()  # not counted, never 0
    assert (wide["context-switches__pct"] == 0).all()


def test_whole_run_reader_matches_user_mode_names_and_never_reads_zero_switches(tmp_path):
    src = DATA / "wholerun" / "here" / "alloc.csv"
    f = tmp_path / "alloc.csv"
    f.write_text(_as_nonroot(src.read_text()))
    base = BaseEvents("task-clock", "cpu-clock")
    kw = {"benchmark": "alloc", "machine": "here", "base": base,
          "events": ["page-faults", "context-switches"], "clock_ghz": None}
    want, _ = read_wholerun(src, **kw)
    t, info = read_wholerun(f, **kw)
    assert info["time_source"] == "duration_time event"
    for col in ("instructions", "cycles", "duration_s", "page-faults_pki"):
        assert t[col][0] == want[col][0], col
    assert want["context-switches_pki"][0] > 0
    assert math.isnan(t["context-switches_pki"][0])


def _fake_perf(tmp_path: Path, stderr: str) -> str:
    perf = tmp_path / "perf"
    perf.write_text(f"#!/bin/sh\ncat >&2 <<'EOF'\n{stderr}EOF\n")
    perf.chmod(perf.stat().st_mode | stat.S_IXUSR)
    return str(perf)


def test_collection_refuses_the_scheduler_events_in_user_mode(tmp_path):
    perf = _fake_perf(tmp_path, NONROOT_CSV)
    with pytest.raises(HostCapabilityError, match=r"context-switches:u counts nothing.*"
                                                  r"perf_event_paranoid"):
        check_perf_events(EVENTS, perf)
    counted = "".join(ln + "\n" for ln in NONROOT_CSV.splitlines() if "faults" in ln
                      or "clock" in ln)
    check_perf_events(["task-clock", "page-faults"], _fake_perf(tmp_path, counted))


# --- the sweep's perf sensor ---------------------------------------------------------------------


def test_sweep_sensor_reads_user_mode_names_and_reports_the_switches_not_counted():
    values = sensors.parse_perf_csv(NONROOT_CSV, EVENTS)
    assert values == {"task-clock": 27.35, "context-switches": None, "cpu-migrations": None,
                      "page-faults": 847.0}
    status = sensors.perf_support(NONROOT_CSV, EVENTS)
    assert status["task-clock"] == status["page-faults"] == "supported"
    assert status["context-switches"].startswith("unsupported: context-switches:u counts")
    assert status["cpu-migrations"].startswith("unsupported: cpu-migrations:u counts")
    # the position no longer decides where a name matches: perf's order need not be ours
    assert sensors.parse_perf_csv(NONROOT_CSV, EVENTS[::-1])["task-clock"] == 27.35


def test_summary_warns_of_a_sweep_event_not_counted(tmp_path):
    models = tmp_path / "mm" / "models.json"
    models.parent.mkdir()
    models.write_text('{"campaign": "mm", "n_runs": 2, "n_ok": 2, "effects": []}')
    report = tmp_path / "mm" / "sensors.json"
    status = sensors.perf_support(NONROOT_CSV, EVENTS)
    report.write_text(json.dumps({"perf_events": status}))
    s = build_summary(sweep=[models], sweep_sensors=[report])
    assert len(s["warnings"]) == 2
    assert s["warnings"][0].startswith("Parameter sweeps: mm: perf event context-switches not "
                                       "counted (context-switches:u counts nothing")


def _unprivileged() -> tuple[list[str], str]:
    """How to run as a user perf restricts to user mode: ``(argv prefix, why not)``."""
    paranoid = Path("/proc/sys/kernel/perf_event_paranoid")
    level = int(paranoid.read_text()) if paranoid.exists() else -1
    if shutil.which("perf") is None:
        return [], "perf is not installed"
    if level < 2:
        return [], f"perf_event_paranoid is {level}: perf restricts no user to user mode"
    if os.geteuid() != 0:
        return [], ""  # already such a user
    if shutil.which("setpriv") is None:
        return [], "setpriv (util-linux) is needed to drop root for this test"
    user = pwd.getpwnam("nobody")
    return ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}",
            "--clear-groups"], ""


@pytest.mark.live
def test_sweep_sensor_as_an_unprivileged_user_reports_switches_not_counted(tmp_path):
    """The sweep's sensor check and a run's reading with the real perf as a user it restricts
    to user mode (``nobody`` when the tests run as root): context-switches is reported not
    counted (None, ``unsupported`` with the reason), never 0; task-clock is read."""
    prefix, why = _unprivileged()
    if why:
        pytest.skip(why)
    # perf as that user writing where it can (pytest's tmp_path is private to root); its file
    # copied where the sensor asked
    shared = Path(tempfile.mkdtemp(prefix="perfcast-nonroot-"))
    shared.chmod(0o777)
    try:
        _sensor_as_unprivileged(tmp_path, shared, prefix)
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def _sensor_as_unprivileged(tmp_path: Path, shared: Path, prefix: list[str]) -> None:
    wrapper = tmp_path / "perf-unprivileged"
    wrapper.write_text(f"""#!{sys.executable}
import shutil, subprocess, sys
argv = sys.argv[1:]
i = argv.index("-o")
dest, argv[i + 1] = argv[i + 1], {str(shared / "out.csv")!r}
rc = subprocess.call({prefix!r} + ["perf", *argv])
shutil.copyfile(argv[i + 1], dest)
sys.exit(rc)
""")
    wrapper.chmod(0o755)
    events = ["task-clock", "context-switches"]
    report = sensors.check_sensors(Sensors(tuple(events), False, {}, None),
                                   perf_binary=str(wrapper))
    assert report["perf_events"]["task-clock"] == "supported"
    assert report["perf_events"]["context-switches"].startswith(
        "unsupported: context-switches:u counts nothing")
    # a command that sleeps ten times switches out at least ten times; perf prints 0
    out = shared / "run.csv"
    cmd = [*prefix, "perf", "stat", "-x", ",", "-o", str(out), "-e", ",".join(events), "--",
           "sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.01; done"]
    subprocess.run(cmd, check=True, timeout=60)
    text = out.read_text()
    assert ",context-switches:u," in text
    values = sensors.parse_perf_csv(text, events)
    assert values["context-switches"] is None and values["task-clock"] > 0
