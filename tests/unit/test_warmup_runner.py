"""Rounds of real commands: output parsing, the durable journal, kill-and-resume, the workload."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from perfcast.errors import InputError
from perfcast.process import run_measured
from perfcast.settings import validate
from perfcast.warmup.analysis import analyze_session, setup_seconds
from perfcast.warmup.cli_settings import command_settings
from perfcast.warmup.journal import Journal
from perfcast.warmup.planner import PlannedRound
from perfcast.warmup.readings import ReadingParser
from perfcast.warmup.runner import RoundFailedError, RoundRecord, round_command, run_round
from perfcast.warmup.segments import detect_phases
from perfcast.warmup.session import run_session
from perfcast.warmup.settings import SessionSettings, session_settings
from perfcast.workloads.kvstore import shares

# a real command that does `work` units of 2 ms each and reports each one as it finishes
UNITS = ("{python} -c \"import sys, time\n"
         "for _ in range(int(sys.argv[1])):\n"
         "    t = time.perf_counter(); time.sleep(0.002)\n"
         "    print(time.perf_counter() - t, flush=True)\" {work}")


def session(workload, programs=None, seed=0, name="w", **section) -> SessionSettings:
    """The settings of workload ``name``'s session; the schema's defaults for the rest."""
    sec = validate({**section, "workloads": {name: {"work_max": 1000, **workload}}}, "warmup")
    return session_settings(name, sec, programs or {}, seed)


def test_round_command_renders_the_workload_or_its_program():
    cmd, env = round_command(session({"command": "awk '{print $1}' f{work}.txt && {python} -V"}),
                             12)
    assert cmd == f"awk '{{print $1}}' f12.txt && {shlex.quote(sys.executable)} -V" and env == {}
    assert round_command(session({"command": "w {work} --seed {seed}"}, seed=7), 3)[0] == \
        "w 3 --seed 7"
    # a program of the top-level map; the workload's env over the program's
    programs = {"p": {"command": "run --n {work}", "env": {"A": 1, "B": "b"}}}
    s = session({"program": "p", "env": {"B": "w"}}, programs)
    assert round_command(s, 5) == ("run --n 5", {"A": "1", "B": "w"})
    # a command must have {work}, and no placeholder nobody supplies
    with pytest.raises(InputError, match="work"):
        session({"command": "echo hello"})
    with pytest.raises(InputError, match="work"):
        session({"program": "p"}, {"p": {"command": "echo"}})
    with pytest.raises(InputError, match="sise"):
        session({"command": "echo {work} {sise}"})
    with pytest.raises(InputError, match="not in the top-level programs"):
        session({"program": "q"}, programs)
    with pytest.raises(InputError, match="work_min"):
        session({"command": "echo {work}", "work_min": 20, "work_max": 10})


def test_reading_parser():
    lines = [(0.1, "0.5"), (0.2, "# progress 10%"), (0.3, " 1e-3 "), (0.4, "")]
    x, t, ignored = ReadingParser(None, 1.0).parse(lines)
    assert x.tolist() == [0.5, 0.001] and t.tolist() == [0.1, 0.3] and ignored == 2
    p = ReadingParser(regex=r"latency=(?P<value>\S+) ms", scale=1e-3)
    x, _, ignored = p.parse([(0, "req 1 latency=2.5 ms"), (0, "done"), (0, "latency=4 ms")])
    assert x.tolist() == pytest.approx([0.0025, 0.004]) and ignored == 1
    with pytest.raises(InputError, match="line 2.*not a duration"):
        ReadingParser(None, 1.0).parse([(0, "1"), (0, "-3")], source="out")
    with pytest.raises(InputError, match="line 1"):
        ReadingParser(None, 1.0).parse([(0, "nan")])
    with pytest.raises(InputError, match="not a number"):
        ReadingParser(regex=r"t=(\S+)", scale=1.0).parse([(0, "t=fast")])
    with pytest.raises(ValueError, match="group"):
        ReadingParser(regex=r"t=\S+", scale=1.0)


def test_run_round_measures_a_real_command():
    rec = run_round(session({"command": UNITS}), PlannedRound(20, "calibrate"), 0)
    assert len(rec.readings) == 20 and all(0.002 <= r < 0.2 for r in rec.readings)
    assert rec.duration_s >= sum(rec.readings) and rec.returncode == 0
    assert rec.reading_times == sorted(rec.reading_times)
    setup = setup_seconds(np.array(rec.readings), np.array(rec.reading_times))
    # the interpreter's start-up, before the first unit (arrival of the first line less its
    # reading: on a busy host the line may be read after the process ended, so no bound by
    # the round's duration)
    assert setup is not None and 0 < setup < rec.reading_times[0]
    with pytest.raises(RoundFailedError, match="exited with 3"):
        run_round(session({"command": "echo {work}; exit 3"}), PlannedRound(1, "x"), 0)
    with pytest.raises(RoundFailedError, match="timed out"):
        run_round(session({"command": "sleep 5 # {work}", "timeout_s": 0.3}),
                  PlannedRound(1, "x"), 0)


def test_setup_is_unknown_for_block_buffered_output():
    # all lines arrived at once at the end: their times say nothing about when units ran
    assert setup_seconds(np.full(50, 0.01), np.full(50, 2.0)) is None
    assert setup_seconds(np.full(50, 0.01), 1.0 + 0.01 * np.arange(1, 51)) == pytest.approx(1.0)


def _record(i, work=10):
    return RoundRecord(round=i, work=work, stage="dyadic", duration_s=1.0 + i, returncode=0,
                       user_s=0.1, sys_s=0.0, max_rss_kb=1, readings=[0.1] * 3,
                       reading_times=[0.1, 0.2, 0.3])


def test_journal_appends_durably_and_survives_a_torn_line(tmp_path):
    path = tmp_path / "j.jsonl"
    j = Journal(path, "k1", allow_other_host=False)
    assert j.load() == []
    j.append(_record(0))
    j.append(_record(1))
    with open(path, "a") as fh:
        fh.write('{"kind": "round", "round": 2, "wo')  # killed in the middle of a write
    recs = Journal(path, "k1", allow_other_host=False).load()
    assert [r.round for r in recs] == [0, 1] and recs[1] == _record(1)
    assert path.read_text().endswith("\n")  # the torn line is gone
    Journal(path, "k1", allow_other_host=False).append(_record(2))
    assert [r.round for r in Journal(path, "k1", allow_other_host=False).load()] == [0, 1, 2]
    # another command or planner: the old journal is set aside, a new one started
    assert Journal(path, "k2", allow_other_host=False).load() == []
    assert (tmp_path / "j.jsonl.stale").exists()


def _section(max_rounds):
    return {"round_lower_bound_s": 0.02, "ci": {"target_relative_width": 1e-6},
            "session": {"max_rounds": max_rounds, "min_rounds": 2, "max_time_s": 60,
                        "first_estimate_s": 0.5, "first_estimate_rounds": 4},
            "workloads": {"units": {"command": UNITS, "work_min": 10, "work_max": 80}}}


def _settings(max_rounds):
    """Rounds of UNITS until max_rounds (the CI target is unreachable)."""
    return session_settings("units", validate(_section(max_rounds), "warmup"), {}, 0)


@pytest.mark.parametrize("preset,blocks", [("quick", 30), ("normal", 50), ("strict", 200)])
def test_the_session_stops_on_the_required_sample_size(preset, blocks):
    from perfcast.warmup.analysis import analyze_session
    from perfcast.warmup.session import stop_reason

    settings = session({"command": "w {work}"}, round_lower_bound_s=0.0,
                       ci={"preset": preset, "target_relative_width": 0.1},
                       session={"min_rounds": 1, "stop_on": ["readings"]})
    rng = np.random.default_rng(blocks)

    def rounds(k, per_round=10):  # i.i.d. readings, 1 % spread: the CI is narrow at once
        out = []
        for i in range(k):
            x = 1.0 + 0.01 * rng.normal(size=per_round)
            out.append(RoundRecord(round=i, work=per_round, stage="dyadic",
                                   duration_s=float(x.sum()), returncode=0, user_s=0.0,
                                   sys_s=0.0, max_rss_kb=1, readings=list(x),
                                   reading_times=list(np.cumsum(x))))
        return out

    if blocks > 30:  # (quick: 30 readings are the least a CI takes, and already enough)
        few = rounds(blocks // 10 - 1)  # 40 or 190 readings
        an = analyze_session(few, settings.analysis)
        assert an.throughput()["relative_width"] < 0.01  # far within the 10 % target ...
        ci = an.unit_ci
        assert ci.required_readings == ci.q * blocks and ci.min_samples == blocks
        assert ci.n < ci.required_readings  # ... yet below Pilot's minimum: no stop
        assert stop_reason(few, an, settings) is None
    enough = rounds(blocks // 10 + 2)
    an = analyze_session(enough, settings.analysis)
    assert an.unit_ci.enough and stop_reason(enough, an, settings) == "target"
    assert an.summary(settings, "target")["required_readings"] == an.unit_ci.required_readings


def test_the_session_summary_reports_a_cycle_of_the_stable_readings():
    """Readings that repeat (period 12.5 readings) get ``season`` in the summary and a note the
    run summary lists; the same session without the cycle gets ``season: null``."""
    settings = session({"command": "w {work}"}, round_lower_bound_s=0.0,
                       session={"min_rounds": 1})
    rng = np.random.default_rng(3)

    def rounds(swing):
        out, t = [], 0
        for i in range(4):
            x = 1.0 + swing * np.sin(2 * np.pi * (t + np.arange(150)) / 12.5) \
                + 0.01 * rng.normal(size=150)
            t += 150
            out.append(RoundRecord(round=i, work=150, stage="dyadic", duration_s=float(x.sum()),
                                   returncode=0, user_s=0.0, sys_s=0.0, max_rss_kb=1,
                                   readings=list(x), reading_times=list(np.cumsum(x))))
        return out

    cyclic = analyze_session(rounds(0.02), settings.analysis).summary(settings, "target")
    assert cyclic["season"]["period"] == pytest.approx(12.5, rel=0.01)
    assert cyclic["season"]["amplitude"] == pytest.approx(0.02, rel=0.15)
    assert any("repeat every 12.5 readings" in n for n in cyclic["notes"])
    plain = analyze_session(rounds(0.0), settings.analysis).summary(settings, "target")
    assert plain["season"] is None and not any("repeat" in n for n in plain["notes"])
    # rounds of one length at slightly different levels: their steps repeat every round, but
    # each round is taken about its own median, so no cycle (of the readings as they are,
    # 1 to 2 in 40 such sessions are called cyclic)
    for _ in range(40):
        recs = [RoundRecord(round=i, work=50, stage="dyadic", duration_s=1.0, returncode=0,
                            user_s=0.0, sys_s=0.0, max_rss_kb=1, readings=list(x),
                            reading_times=list(np.cumsum(x)))
                for i, x in enumerate(rng.normal(1 + rng.normal(0, 0.05), 0.01, 50)
                                      for _ in range(20))]
        assert analyze_session(recs, settings.analysis).season() is None


def test_journal_records_the_host_and_refuses_rounds_of_another(tmp_path):
    from perfcast.warmup.journal import HostMismatchError, host_metadata

    path = tmp_path / "j.jsonl"
    here = host_metadata()
    j = Journal(path, "k1", allow_other_host=False)
    j.load()
    j.append(_record(0))
    header = json.loads(path.read_text().splitlines()[0])
    assert header["host"] == here and header["host"]["cpu_model"]
    other = {**here, "hostname": here["hostname"] + "-other"}
    with pytest.raises(HostMismatchError) as err:
        Journal(path, "k1", host=other, allow_other_host=False).load()
    msg = str(err.value)
    assert str(path) in msg and repr(here["hostname"]) in msg and "allow_other_host" in msg
    assert "\n" not in msg
    # the same name on another CPU model is another machine too
    with pytest.raises(HostMismatchError, match="cpu_model"):
        Journal(path, "k1", host={**here, "cpu_model": "Other CPU 9000"},
                allow_other_host=False).load()
    # allowed: resumed, and the switch is recorded before the new rounds
    allowed = Journal(path, "k1", host=other, allow_other_host=True)
    assert [r.round for r in allowed.load()] == [0]
    allowed.append(_record(1))
    assert [h["hostname"] for h in allowed.hosts] == [here["hostname"], other["hostname"]]
    kinds = [json.loads(line)["kind"] for line in path.read_text().splitlines()]
    assert kinds == ["header", "round", "host", "round"]
    # back on the first host, the last recorded host (the other one) no longer matches
    with pytest.raises(HostMismatchError):
        Journal(path, "k1", allow_other_host=False).load()
    back = Journal(path, "k1", host=other, allow_other_host=False)
    assert [r.round for r in back.load()] == [0, 1]
    from perfcast.warmup.settings import warmup_settings

    assert warmup_settings({}).session.allow_other_host is False  # refused unless allowed
    # a journal that records no host cannot say which machine measured it: set aside
    old = tmp_path / "old.jsonl"
    old.write_text(json.dumps({"kind": "header", "key": "k1", "version": 1}) + "\n" +
                   json.dumps({"kind": "round", **_record(0).to_json()}) + "\n")
    assert Journal(old, "k1", allow_other_host=False).load() == []
    assert (tmp_path / "old.jsonl.stale").exists()


def test_cpu_model_from_cpuinfo(tmp_path):
    from perfcast.warmup.journal import cpu_model

    x86 = tmp_path / "x86"
    x86.write_text("processor\t: 0\nvendor_id\t: GenuineIntel\n"
                   "model name\t: Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz\n\n"
                   "processor\t: 1\nmodel name\t: Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz\n")
    assert cpu_model(x86) == "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz"
    arm = tmp_path / "arm"
    arm.write_text("processor\t: 0\nBogoMIPS\t: 243.75\nCPU implementer\t: 0x41\n"
                   "CPU part\t: 0xd0c\n")
    assert cpu_model(arm) == "implementer 0x41 part 0xd0c"
    assert cpu_model(tmp_path / "missing")  # falls back to platform.processor() or "unknown"


@pytest.mark.live
def test_a_killed_session_resumes_from_its_journal(tmp_path):
    journal = tmp_path / "units.jsonl"
    code = ("from perfcast.settings import validate\n"
            "from perfcast.warmup.settings import session_settings\n"
            "from perfcast.warmup.session import run_session\n"
            f"section = validate({_section(12)!r}, 'warmup')\n"
            "settings = session_settings('units', section, {}, 0)\n"
            f"run_session(settings, {str(journal)!r})\n")
    proc = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if journal.exists() and journal.read_text().count('"kind": "round"') >= 3:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    assert 3 <= len(before) < 12
    records, an, reason = run_session(_settings(12), journal)
    # 12 rounds, unless the planner ran out of work amounts first: on a busy host the
    # interpreter's start-up makes the WPS intercept worth more than work_max units, and the
    # dyadic rounds stay above it (Pilot's rule), leaving work_max alone
    assert [r.round for r in records] == list(range(len(records)))
    assert (reason, len(records)) == ("max_rounds", 12) or (
        reason == "work_max" and len(before) <= len(records) < 12), (reason, len(records))
    # the rounds measured before the kill are kept as they were, not measured again
    assert [r.to_json() for r in records[: len(before)]] == \
        [{k: v for k, v in b.items() if k != "kind"} for b in before]
    # the planner replays to the same work amounts: no work amount is run twice
    assert len({r.work for r in records}) == len(records)
    # a finished session re-run does no new round
    again, _, _ = run_session(_settings(12), journal)
    assert [r.to_json() for r in again] == [r.to_json() for r in records]
    assert an.throughput() is not None


def test_kvstore_shares():
    assert shares(1000, 1, 0.3) == [1000]
    s = shares(1000, 2, 0.3)
    assert sum(s) == 1000 and s[0] > s[1] and s[0] / s[1] == pytest.approx(1.3, rel=0.01)
    assert sum(shares(7, 4, 0.5)) == 7


def _kvstore(units: int, *flags: str) -> np.ndarray:
    res = run_measured([sys.executable, "-m", "perfcast.workloads.kvstore", str(units), *flags],
                       timeout_s=300)
    assert res.ok
    x = np.array([float(v) for _, v in res.stdout_lines])
    assert x.shape[0] == units and (x >= 0).all()
    assert x.sum() <= res.wall_s  # readings tile the serving time; setup comes before
    return x


@pytest.mark.live
def test_kvstore_warms_up_for_real():
    """Lazy initialisation: the first requests build the values they look up. A miss costs CPU
    work (zlib) several times a hit's (SHA-256), on an idle host as on a busy one, where both
    stretch alike."""
    x = _kvstore(4000, "--threads", "2", "--keys", "512", "--lookups", "8")
    middle = np.median(x[2000:3000])
    assert x[:100].mean() > 3 * middle
    # the first change point closes the warm-up (later ones may be other processes' doing)
    ph = detect_phases(x, command_settings("edm", {"min_effect": 0.05}))
    first = ph.change_points[0]
    assert first <= 1000 and np.median(x[:first]) > 2 * np.median(x[first:])


@pytest.mark.live
def test_kvstore_cools_down_for_real():
    """Uneven shares (imbalance 0.5: 1,800 and 1,200 requests): once the lighter worker is done
    (near request 2,400, both serving at one rate), one thread serves the last ~600 at half the
    rate of two. Each request waits 2 ms on a backend (a sleep), which the two workers overlap
    however busy the host is, so the cool-down is there on any host and the detector must find
    it where the lighter worker ended."""
    units, light = 3000, 1200
    x = _kvstore(units, "--threads", "2", "--keys", "64", "--lookups", "1",
                 "--imbalance", "0.5", "--latency-ms", "2")
    # one worker alone: about twice the time per request (medians: not the odd pause)
    assert np.median(x[-300:]) > 1.5 * np.median(x[500:2000])
    # the detector places a change where the lighter worker ended (other change points may be
    # the host's doing: a busy host shifts the level for a while), and after it one worker serves
    ph = detect_phases(x, command_settings("edm", {"min_effect": 0.05}))
    end = min(ph.change_points, key=lambda c: abs(c - 2 * light))
    assert abs(end - 2 * light) <= 150, ph.change_points
    assert np.median(x[end:]) > 1.5 * np.median(x[end - 300:end])


def test_session_analysis_of_recorded_rounds():
    rng = np.random.default_rng(0)
    recs = []
    for i, work in enumerate(rng.integers(300, 1500, size=24)):
        x = np.full(work, 0.001) + rng.normal(0, 1e-5, size=work)
        x[:50] += 0.01  # 50 slow units: 0.5 s of warm-up
        setup = 0.2 + rng.normal(0, 0.005)
        recs.append(RoundRecord(i, int(work), "dyadic", setup + x.sum(), 0, 0, 0, 0, x.tolist(),
                                (setup + np.cumsum(x)).tolist()))
    an = analyze_session(recs, _settings(5).analysis)
    assert all(abs(r.phases.warmup_len - 50) <= 2 for r in an.rounds)
    assert all(r.setup_s == pytest.approx(r.record.duration_s - sum(r.record.readings))
               for r in an.rounds)
    tp = an.throughput()
    assert tp["lower"] <= 1000 <= tp["upper"] and tp["value"] == pytest.approx(1000, rel=0.01)
    # WPS: t = alpha + w / v with v = 1000 units/s, alpha = 0.2 + 50 * (0.011 - 0.001) = 0.7
    assert an.wps is not None
    assert an.wps.v_lower <= 1000 <= an.wps.v_upper
    assert an.wps.alpha == pytest.approx(0.7, abs=0.05)
    df = an.readings_frame()
    assert len(df) == sum(r.work for r in recs)
    assert set(df["phase"]) <= {"warmup", "stable", "cooldown"}
    assert df.groupby("round")["time_s"].max().tolist() == pytest.approx(
        [r.duration_s for r in recs], rel=1e-6)
    rounds = an.rounds_frame()
    assert rounds["used_readings"].all() and (rounds["warmup_s"] > 0.45).all()


def test_a_command_without_unit_readings_is_judged_by_wps(tmp_path):
    # a real process whose duration is 0.05 s + work / 1000 units per second: two sleeps, whose
    # lengths do not depend on the host's load (sleep starts in a millisecond, where an
    # interpreter's start-up would add a load-dependent term to every round); the preset quick,
    # as 14 rounds are few for the normal preset's autocorrelation limit
    cmd = "sleep 0.05 && sleep {work}e-3"
    settings = session(
        {"command": cmd, "work_min": 50, "work_max": 600}, name="sleep",
        round_lower_bound_s=0.0, ci={"target_relative_width": 0.25, "preset": "quick"},
        session={"max_rounds": 14, "min_rounds": 6, "max_time_s": 60,
                 "first_estimate_s": 1, "first_estimate_rounds": 4})
    records, an, reason = run_session(settings, tmp_path / "j.jsonl")
    assert all(not r.readings for r in records) and an.throughput() is None
    assert reason in {"target", "max_rounds"}
    assert an.wps is not None and 700 < an.wps.v < 1300
    assert an.wps.v_lower <= an.wps.v <= an.wps.v_upper
    if reason == "target":
        assert an.wps.relative_width <= 0.25 and len(records) >= 6
    assert an.readings_frame().empty and len(an.rounds_frame()) == len(records)
