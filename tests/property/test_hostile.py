"""Generated hostile inputs whose answer is known: a result must be the right one, not merely
finite.

Where :mod:`test_inputs` asks "a finite result or one line naming the file", these ask more: a
header that names a column twice is refused naming its line, and one that does not gives the
known answer; a perf count beyond what a counter holds, or wrapped, is refused naming its line,
and counts within give PKIs that conserve every count; a signal at any moment of a restricted
run leaves no workload, group or temporary file behind.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import pytest
from hypothesis import event, example, given, settings
from hypothesis import strategies as st

from perfcast.cli import main
from perfcast.counters.perfstat import format_perf_csv
from perfcast.io import read_parquet


def _run(capsys, argv: list[object]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    event(f"{argv[0]} exit {code}")
    assert code in (0, 2), (code, err)
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return code, out, err


# ------------------------------------------------------------------- headers naming a column twice

#: a header: the columns a command reads, each possibly repeated, and others, in any order
HEADER = st.lists(st.sampled_from(["work", "duration_s", "other"]), min_size=2, max_size=5)


@example(header=["work", "work", "duration_s"])
@example(header=["work", "duration_s"])
@given(header=HEADER)
def test_wps_uses_the_columns_its_header_names_or_refuses_a_repeated_one(capsys, tmp_path_factory,
                                                                          header):
    workdir = tmp_path_factory.mktemp("example")
    f = workdir / "rounds.csv"
    works = np.arange(100, 3100, 100, dtype=float)
    # the first column of each name holds the truth (duration = 0.5 + work / 1000); any other
    # holds something else, so a reader taking a wrong one gets a wrong speed
    lines = []
    for w in works:
        seen: set[str] = set()
        cells = []
        for name in header:
            first = name not in seen
            seen.add(name)
            cells.append(str(w) if name == "work" and first else
                         repr(float(0.5 + w / 1000)) if name == "duration_s" and first else "7")
        lines.append(",".join(cells))
    f.write_text(",".join(header) + "\n" + "\n".join(lines) + "\n")
    code, out, err = _run(capsys, ["wps", f])
    repeated = [c for c in dict.fromkeys(header) if header.count(c) > 1]
    if repeated:
        assert code == 2 and f"{f}, line 1: column {repeated[0]!r} appears" in err, err
    elif {"work", "duration_s"} <= set(header):
        assert code == 0, err
        assert json.loads(out)["v"] == pytest.approx(1000, rel=1e-6)
    else:
        assert code == 2 and "missing column" in err


@example(header=["size", "size", "wall_s"])
@given(header=st.lists(st.sampled_from(["size", "wall_s", "other"]), min_size=2, max_size=5))
def test_fit_uses_the_columns_its_header_names_or_refuses_a_repeated_one(capsys, tmp_path_factory,
                                                                          header):
    workdir = tmp_path_factory.mktemp("example")
    f = workdir / "t.csv"
    sizes = np.linspace(100, 1000, 20)
    lines = []
    for s in sizes:
        seen: set[str] = set()
        cells = []
        for name in header:
            first = name not in seen
            seen.add(name)
            cells.append(repr(float(s)) if name == "size" and first else
                         repr(float(3 * s + 5)) if name == "wall_s" and first else "7")
        lines.append(",".join(cells))
    f.write_text(",".join(header) + "\n" + "\n".join(lines) + "\n")
    code, out, err = _run(capsys, ["fit", f, "--y", "wall_s", "--x", "size"])
    repeated = [c for c in dict.fromkeys(header) if header.count(c) > 1]
    if repeated:
        assert code == 2 and f"{f}, line 1: column {repeated[0]!r} appears" in err, err
    elif {"size", "wall_s"} <= set(header):
        assert code == 0, err
        fitted = json.loads(out)
        best = next(m for m in fitted["models"] if m["model"] == fitted["best"])
        coef = {c["term"]: c["coef"] for c in best["coefficients"]}
        assert coef["size"] == pytest.approx(3) and coef["const"] == pytest.approx(5)
    else:
        assert code == 2


# -------------------------------------------------------------- counts beyond, near and at 2^64

#: the largest count a 64-bit counter holds; a count of one interval from 2^63 on is a wrap
COUNTER_MAX, WRAPPED = 2**64 - 1, 2**63

#: a count: ordinary, near the limits a 64-bit counter or a wrap gives, or beyond them
COUNT = st.one_of(
    st.integers(1, 10**9),
    st.integers(WRAPPED - 10**6, WRAPPED + 10**6),
    st.integers(COUNTER_MAX - 10**6, COUNTER_MAX + 10**6),
    st.sampled_from([2**62, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 10**19, 10**30]),
    st.sampled_from(["1e308", "1.7976931348623157e308", "inf", "nan", "-1", "1e19"]),
)


@example(counts=[(0, 2, str(2**64 - 1000))])  # a wrapped count: refused
@example(counts=[(3, 0, "1e308")])  # instructions beyond a counter: refused
@given(counts=st.lists(st.tuples(st.integers(0, 7), st.integers(0, 2), COUNT), max_size=4))
def test_a_count_is_conserved_or_refused_naming_its_line(capsys, tmp_path_factory, counts):
    workdir = tmp_path_factory.mktemp("example")
    n, events = 8, ["instructions", "cycles", "a"]
    table = {"instructions": [10**8] * n, "cycles": [2 * 10**8] * n, "a": [5 * 10**5] * n}
    for k, e, v in counts:
        table[events[e]][k] = v
    text = format_perf_csv(np.arange(1, n + 1) / 10,
                           {e: np.array([str(v) for v in table[e]], dtype=object)
                            for e in events})
    f = workdir / "g0.csv"
    f.write_text(text)
    out = workdir / "t.parquet"
    code, _, err = _run(capsys, ["postprocess", f, "--events", "a", "-o", out])

    def ok(v: object) -> bool:
        try:
            x = int(v) if isinstance(v, int) or re.fullmatch(r"\d+", str(v)) else float(v)
        except (TypeError, ValueError):
            return False
        return 0 < x < WRAPPED  # positive: the base events must be; a is positive here too

    if all(ok(v) for e in events for v in table[e]):
        assert code == 0, err
        t = read_parquet(out)
        instr = np.array([float(v) for v in table["instructions"]])
        # every count is conserved: PKI x instructions / 1000 gives it back, interval by
        # interval (no running total swamps the rest)
        a = np.array([float(v) for v in table["a"]])
        np.testing.assert_allclose(t["a_pki"] * t["instructions"] / 1000, a, rtol=1e-9)
        np.testing.assert_allclose(t["instructions"], instr, rtol=1e-12)
        assert np.isfinite(t["ipc"]).all() and (t["ipc"] < 1e9).all()
    else:
        assert code == 2, (table, err)
        lines = f.read_text().splitlines()
        m = re.search(r", line (\d+): ", err)
        if m is not None:  # a count refused at its line: the line holds a count refused
            line = lines[int(m.group(1)) - 1]
            assert not ok(line.split(",")[1]), (line, err)
        else:  # a base event that is zero is named by interval
            assert "missing or zero" in err, err


# ----------------------------------------------------------- a signal at any moment of a run

#: a job as a workflow script runs it: rule_logging around a restricted run of a sleeper
_JOB = """
import sys, types
from perfcast.process import run_measured
from perfcast.rulekit import rule_logging
from perfcast.sensitivity.cgroups import Limits, fresh_cgroup
from perfcast.settings import schema_default

# where the group goes: the schema's sensitivity.cgroup.version and .parent
PLACE = {"version": schema_default("sensitivity", "cgroup.version"),
         "parent": schema_default("sensitivity", "cgroup.parent")}

prefix, duration = sys.argv[1:]
with rule_logging(types.SimpleNamespace(log=[], rule="sensitivity_profile")):
    with fresh_cgroup(Limits(memory_bytes=256 * 2**20), prefix=prefix, **PLACE) as cg:
        run_measured(f"sleep {duration}", preexec_fn=cg.attach_self)
"""


def _cgroup_ready() -> bool:
    if os.geteuid() != 0:
        return False
    from perfcast.sensitivity.cgroups import v1_mounts, v2_mount

    return "memory" in v1_mounts() or v2_mount() is not None


@pytest.mark.skipif(not _cgroup_ready(), reason="a restricted run needs root and cgroups")
@pytest.mark.live
# each example is a real restricted run of up to 1.5 s: a quarter of the profile's examples
@settings(max_examples=max(4, settings.default.max_examples // 4))
@example(signum=signal.SIGTERM, delay=1.5)  # inside the run: what SLURM's time limit does
@example(signum=signal.SIGHUP, delay=1.5)
@given(signum=st.sampled_from([signal.SIGTERM, signal.SIGHUP, signal.SIGINT]),
       delay=st.floats(0.0, 1.5))
def test_a_signal_at_any_moment_leaves_nothing_behind(tmp_path_factory, popen_to_signal,
                                                       signum, delay):
    import psutil

    from perfcast.sensitivity.cgroups import own_cgroup, v1_mounts, v2_mount

    tmp = tmp_path_factory.mktemp("example")
    prefix, duration = f"pcprop-{uuid.uuid4().hex[:8]}", f"{700 + uuid.uuid4().int % 997 / 1000}"
    job = popen_to_signal([sys.executable, "-c", _JOB, prefix, duration],
                          env=os.environ | {"TMPDIR": str(tmp)}, stderr=subprocess.PIPE)
    time.sleep(delay)  # from before perfcast is imported to well inside the run
    job.send_signal(signum)
    job.communicate(timeout=60)
    event(f"signal {signum} after {delay:.1f} s: exit {job.returncode}")
    time.sleep(0.1)
    sleepers = [p for p in psutil.process_iter(["cmdline"])
                if p.info["cmdline"] == ["sleep", duration]]
    groups = [d for c, m in v1_mounts().items()
              for d in (Path(m) / own_cgroup(c).lstrip("/")).glob(f"{prefix}*")]
    if v2_mount():
        groups += list(Path(v2_mount()).glob(f"**/{prefix}*"))
    assert sleepers == [] and groups == [] and list(tmp.iterdir()) == []
    assert job.returncode == -signum  # the job ends by the signal, as without perfcast


# ------------------------------------------------------------------- commands that daemonize

#: ways a command leaves ``{s}`` (a ``sleep``) running after it ends; each is a shell fragment
DETACH = {
    "background": "{s} </dev/null >/dev/null 2>&1 &",
    "setsid": "setsid {s} </dev/null >/dev/null 2>&1 &",
    "nohup": "nohup {s} >/dev/null 2>&1 &",
    "double_fork": "({s} </dev/null >/dev/null 2>&1 &)",
    "setsid_double_fork": "(setsid sh -c '{s} & exit 0' >/dev/null 2>&1 &)",
    "bash_disown": "bash -c '{s} >/dev/null 2>&1 & disown'",
    "python_daemon": (f"{sys.executable} -c \"import os, sys\nif os.fork() == 0:\n"
                      "    os.setsid()\n    if os.fork() == 0:\n"
                      "        os.execvp('sleep', sys.argv[1:])\n\" {s}"),
}
#: a piece that ends before the command does: a short sleep it backgrounds and waits for
WAITED = "{s} & wait $!"
PIECE = st.tuples(st.sampled_from([*DETACH, "waited", "foreground"]), st.booleans())


@settings(max_examples=max(6, settings.default.max_examples // 2))
@example(pieces=[("setsid", False)], status=0)
@example(pieces=[("double_fork", True), ("nohup", False)], status=3)
@example(pieces=[("waited", False), ("foreground", False)], status=0)
@given(pieces=st.lists(PIECE, max_size=3), status=st.sampled_from([0, 3]))
def test_a_command_that_daemonizes_fails_naming_what_it_left_and_leaves_nothing(pieces, status):
    """Any mix of detaching, backgrounded, waited and foreground pieces, each nested in
    ``setsid`` or not: when the run ends no process of it is alive; a run whose command left a
    process running is not ok and names it, one that did not is clean."""
    import psutil

    from perfcast.process import run_measured

    marks, detached, parts = [], False, []
    for kind, in_setsid in pieces:
        long = kind in DETACH
        mark = f"{(30 if long else 0) + uuid.uuid4().int % 10**6 / 10**8:.8f}"
        marks.append(mark)
        sleep = f"sleep {mark}"
        part = (DETACH[kind] if long else WAITED if kind == "waited" else "{s}").format(s=sleep)
        if in_setsid:  # the piece in a session of its own, the run waiting for it
            part = f"setsid -w sh -c {shlex.quote(part)}"
        detached |= long
        parts.append(part)
    command = "\n".join([*parts, f"exit {status}"])

    def alive() -> list:
        return [p for p in psutil.process_iter(["cmdline", "status"])
                if p.info["cmdline"] and p.info["cmdline"][0] == "sleep"
                and p.info["cmdline"][1:] and p.info["cmdline"][1] in marks
                and p.info["status"] != psutil.STATUS_ZOMBIE]

    try:
        res = run_measured(command, timeout_s=20)
        assert alive() == []
        event(f"{len(res.leftovers)} leftover(s)")
        assert not res.timed_out and res.returncode == status
        if detached:
            assert not res.ok and res.leftovers
            assert res.leftover_error.startswith(f"left {len(res.leftovers)} process(es)")
            assert all(f"pid {x.pid} (" in res.leftover_error for x in res.leftovers)
        else:
            assert res.leftovers == () and res.leftover_error is None
            assert res.ok == (status == 0)
        assert [c for c in psutil.Process().children()
                if c.status() == psutil.STATUS_ZOMBIE] == []
    finally:
        for p in alive():
            p.kill()
