"""perf -I -x, parsing: genuine perf output, edge cases, and errors that name file and line."""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from perfcast.counters.perfstat import format_perf_csv, parse_perf_stat, to_wide
from perfcast.errors import HostCapabilityError, InputError

SAMPLE = """# started on Sun Nov 22 02:28:30 2026

     0.100126193,96.22,msec,task-clock,96215950,100.00,0.962,CPUs utilized
     0.100126193,9303,,page-faults,96224496,100.00,96.689,K/sec
     0.200348055,100.20,msec,task-clock,100203271,100.00,1.002,CPUs utilized
     0.200348055,<not counted>,,page-faults,0,0.00,,
     0.245655036,44.15,msec,task-clock,44148410,100.00,0.441,CPUs utilized
     0.245655036,4,,page-faults,44141988,87.50,90.604,/sec
"""


def test_parse_sample_statuses_and_partial_interval(tmp_path):
    f = tmp_path / "g.csv"
    f.write_text(SAMPLE)
    long = parse_perf_stat(f)
    assert list(long["event"].unique()) == ["task-clock", "page-faults"]
    pf = long[long["event"] == "page-faults"]
    assert pf["status"].tolist() == ["ok", "not counted", "ok"]
    assert np.isnan(pf["value"].iloc[1]) and pf["value"].iloc[0] == 9303
    wide = to_wide(long, f)
    assert wide["duration_s"].round(6).tolist() == [0.100126, 0.100222, 0.045307]
    assert wide["pct_running_min"].tolist() == [100.0, 0.0, 87.5]


def test_event_names_with_commas(tmp_path):
    f = tmp_path / "raw.csv"
    f.write_text("     1.000,12,,cpu/event=0x3c,umask=0x0/,1000,100.00,,\n")
    long = parse_perf_stat(f)
    assert long["event"].tolist() == ["cpu/event=0x3c,umask=0x0/"]


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("     0.1,12", "malformed perf line"),
        ("     abc,12,,instructions,1,100.00,,", "interval time"),
        ("     0.1,12x,,instructions,1,100.00,,", "count '12x' is not a number"),
        ("     0.1,-5,,instructions,1,100.00,,", "negative"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path, line, needle):
    f = tmp_path / "bad.csv"
    f.write_text("# started on x\n\n     0.05,1,,instructions,1,100.00,,\n" + line + "\n")
    with pytest.raises(InputError) as err:
        parse_perf_stat(f)
    assert str(f) in str(err.value) and "line 4" in str(err.value) and needle in str(err.value)


def test_not_supported_base_event_is_a_host_error(tmp_path):
    f = tmp_path / "vm.csv"
    f.write_text("     0.1,<not supported>,,instructions,0,100.00,,\n"
                 "     0.1,3,,page-faults,100,100.00,,\n")
    with pytest.raises(HostCapabilityError, match="no hardware PMU"):
        to_wide(parse_perf_stat(f), f, required=["instructions"])


def test_format_roundtrip(tmp_path):
    times = np.array([0.1001, 0.2003, 0.2507])
    counts = {"instructions": np.array([1e8, 2e8, 5e7]), "cycles": np.array([2e8, 2e8, 1e8])}
    f = tmp_path / "rt.csv"
    f.write_text(format_perf_csv(times, counts, header="test"))
    wide = to_wide(parse_perf_stat(f), f)
    np.testing.assert_allclose(wide["time"], times)
    np.testing.assert_allclose(wide["instructions"], counts["instructions"])


def test_genuine_perf_output_parses(tmp_path):
    """Real ``perf stat -I`` on a real command, software events (this VM has no hardware PMU)."""
    out = tmp_path / "perf.csv"
    cmd = ["perf", "stat", "-I", "100", "-x,", "-e", "task-clock,page-faults,context-switches",
           "-o", str(out), "--", sys.executable, "-c", BUSY]
    subprocess.run(cmd, check=True, capture_output=True)
    wide = to_wide(parse_perf_stat(out), out, required=["task-clock"])
    assert len(wide) >= 5 and wide["time"].iloc[-1] >= 0.45
    # task-clock can't exceed the interval for a single-threaded program
    full = wide.iloc[:-1]
    assert (full["task-clock"] <= full["duration_s"] * 1000 * 1.05).all()
    assert full["task-clock"].iloc[-3:].sum() > 0  # the busy loop ran
    # the intervals tile the run (how long the partial last one is depends on when perf got the
    # CPU after the program ended: tests/data/perf has a recorded known answer)
    assert wide["duration_s"].sum() == pytest.approx(wide["time"].iloc[-1])
    assert (wide["duration_s"] > 0).all()


# --- every form perf writes: one recording, reported in each form (tests/data/perf/make.sh) ------

DATA = Path(__file__).parent.parent / "data" / "perf"
EVENTS = ["task-clock", "page-faults", "context-switches", "cpu-clock"]


def _wide(path, **kw):
    return to_wide(parse_perf_stat(path, **kw), path, wanted=EVENTS)


@pytest.fixture(scope="module")
def aggregated():
    """perf's own aggregation of the recording: the known answer of every other form."""
    return _wide(DATA / "aggregated.csv")


@pytest.mark.parametrize("name", ["no_aggr.csv", "no_aggr_pipe.csv", "no_aggr_tab.csv",
                                  "per_core_semicolon.csv", "per_socket.csv", "per_die.csv",
                                  "per_node.csv", "aggregated.json", "no_aggr.json",
                                  "per_core.json"])
def test_every_form_of_one_recording_sums_to_perfs_own_aggregate(name, aggregated):
    wide = _wide(DATA / name)
    np.testing.assert_allclose(wide["time"], aggregated["time"], rtol=0, atol=1e-9)
    for ev in ("page-faults", "context-switches"):
        np.testing.assert_array_equal(wide[ev], aggregated[ev])
    for ev in ("task-clock", "cpu-clock"):  # msec, printed with 2 decimals per row
        np.testing.assert_allclose(wide[ev], aggregated[ev], rtol=0, atol=0.011 * 2)
    assert (wide["pct_running_min"] == 100).all()
    assert wide["page-faults"].sum() > 1000  # the recording is not empty


def test_a_chosen_subset_of_cpus_equals_perfs_per_core_rows():
    """-A rows of CPU0 alone are what --per-core reports for core S0-D0-C0 (one thread per core
    on the recording host)."""
    cpu0 = _wide(DATA / "no_aggr.csv", select=["CPU0"])
    core0 = _wide(DATA / "per_core.json", select=["S0-D0-C0"])
    both = _wide(DATA / "no_aggr.csv", select=["CPU[0-1]"])
    np.testing.assert_allclose(cpu0[EVENTS], core0[EVENTS], atol=0.011)
    agg = _wide(DATA / "aggregated.csv")
    np.testing.assert_array_equal(both["page-faults"], agg["page-faults"])
    assert (cpu0["page-faults"] < both["page-faults"]).any()
    with pytest.raises(InputError, match=r"select \['CPU7'\] matches none.*CPU0"):
        parse_perf_stat(DATA / "no_aggr.csv", select=["CPU7"])


def test_uncore_events_on_one_cpu_keep_their_rows(tmp_path):
    """An uncore counter perf reads on the first CPU of a socket is counted once per socket: a
    selection of other CPUs keeps it whole instead of dropping it."""
    lines = (DATA / "no_aggr.csv").read_text().splitlines()
    out = []
    for ln in lines:
        out.append(ln)
        if ",CPU0," in ln and ",task-clock," in ln:
            t = ln.split(",")[0]
            out.append(f"{t},CPU0,1234,,uncore_imc/cas_count_read/,100,100.00,,")
    f = tmp_path / "uncore.csv"
    f.write_text("\n".join(out) + "\n")
    wide = to_wide(parse_perf_stat(f, select=["CPU1"]), f,
                   wanted=[*EVENTS, "uncore_imc/cas_count_read/"])
    assert (wide["uncore_imc/cas_count_read/"] == 1234).all()
    cpu1 = _wide(DATA / "no_aggr.csv", select=["CPU1"])
    np.testing.assert_array_equal(wide["page-faults"], cpu1["page-faults"])


def test_event_names_containing_the_separator_and_modifiers(tmp_path, aggregated):
    text = (DATA / "aggregated.csv").read_text()
    f = tmp_path / "raw.csv"
    f.write_text(text.replace(",page-faults,", ",cha/event=0x34,umask=0x1fe001/,")
                 .replace(",task-clock,", ",task-clock:D,"))
    wide = to_wide(parse_perf_stat(f), f, required=["task-clock"],
                   wanted=["cha/event=0x34,umask=0x1fe001/"])
    np.testing.assert_array_equal(wide["cha/event=0x34,umask=0x1fe001/"],
                                  aggregated["page-faults"])
    # :D (pinned) does not change what is counted: it plays the configured task-clock's role
    np.testing.assert_array_equal(wide["task-clock"], aggregated["task-clock"])
    # :k does: a kernel-only count never stands in for the configured one
    f.write_text(text.replace(",task-clock,", ",task-clock:k,"))
    with pytest.raises(InputError, match="event 'task-clock' is missing"):
        to_wide(parse_perf_stat(f), f, required=["task-clock"])


def test_hybrid_pmu_copies_are_summed_into_the_configured_role(tmp_path, aggregated):
    """On a hybrid CPU perf reports cpu_core/instructions/ and cpu_atom/instructions/; the
    program's count is their sum, and a copy <not counted> (it never ran on that core type in
    the interval) counts zero."""
    out = []
    for k, ln in enumerate((DATA / "aggregated.csv").read_text().splitlines()):
        f = ln.split(",")
        if len(f) > 3 and f[3] == "page-faults":
            v = int(f[1])
            atom = "<not counted>" if k < 6 else str(v // 3)
            core = v if k < 6 else v - v // 3
            out.append(",".join([f[0], str(core), "", "cpu_core/instructions/u", *f[4:]]))
            out.append(",".join([f[0], atom, "", "cpu_atom/instructions/u", *f[4:]]))
        else:
            out.append(ln)
    p = tmp_path / "hybrid.csv"
    p.write_text("\n".join(out) + "\n")
    wide = to_wide(parse_perf_stat(p), p, required=["instructions:u"])
    np.testing.assert_array_equal(wide["instructions:u"], aggregated["page-faults"])


@pytest.mark.parametrize(("edit", "needle"), [
    (lambda t: (DATA / "human.txt").read_text(), "human-readable perf stat output"),
    (lambda t: t.replace(",", ";").replace(".", ","), "decimal comma"),
    (lambda t: "\n".join(ln.split(",", 1)[1] for ln in t.splitlines() if ln) + "\n",
     "perf stat without -I"),
    (lambda t: t.replace(",9319,", ",9.319.000,"), "locale-formatted"),
])
def test_forms_we_do_not_read_name_the_form_and_the_flag(tmp_path, edit, needle):
    f = tmp_path / "x.csv"
    f.write_text(edit((DATA / "aggregated.csv").read_text()))
    with pytest.raises(InputError) as err:
        parse_perf_stat(f)
    msg = str(err.value)
    assert needle in msg and str(f) in msg and "line " in msg
    assert "-x," in msg and "-I" in msg


def test_a_configured_separator_must_match_the_file():
    with pytest.raises(InputError, match="separator is '|'"):
        parse_perf_stat(DATA / "no_aggr_pipe.csv", separator=",")
    assert len(parse_perf_stat(DATA / "no_aggr_pipe.csv", separator="|")) > 0


# --- this machine's own perf, live (software events) --------------------------------------------

#: a program that runs at least 0.45 s of wall time and 0.2 s of CPU time, however busy the host:
#: a wall-clock loop alone gets little CPU time on a loaded host, a CPU-time loop alone may end
#: within few intervals on an idle one
BUSY = ("import time\nt, c = time.time(), time.process_time()\n"
        "while time.time() - t < 0.45 or time.process_time() - c < 0.2: pass")


def _perf(args, tmp_path, **run):
    if shutil.which("perf") is None:
        pytest.skip("perf is not installed on this host")
    return subprocess.run(["perf", "stat", "-I", "100", *args], check=True,
                          capture_output=True, text=True, cwd=tmp_path, **run)


@pytest.mark.parametrize("sep", ["|", "\t", ";", ":"])
def test_live_perf_with_any_separator_and_duration_time(tmp_path, sep):
    """perf -x SEP -o FILE, with duration_time rows: the separator is detected, duration_time
    (ns) equals the interval lengths, and the last interval is the partial one."""
    out = tmp_path / "o.txt"
    _perf([f"-x{sep}", "-e", "task-clock,page-faults,duration_time", "-o", str(out), "--",
           sys.executable, "-c", BUSY], tmp_path)
    wide = to_wide(parse_perf_stat(out), out, required=["task-clock", "duration_time"])
    assert len(wide) >= 5
    np.testing.assert_allclose(wide["duration_time"] / 1e9, wide["duration_s"], rtol=0.05,
                               atol=2e-3)
    # the intervals tile the run (their lengths move with the host's load: perf reads when it
    # gets the CPU; the recorded files of tests/data/perf hold known lengths)
    assert wide["duration_s"].sum() == pytest.approx(wide["time"].iloc[-1])
    assert (wide["duration_s"] > 0).all()


def test_live_perf_log_fd_without_header_and_json(tmp_path):
    """--log-fd (no header) and -j: task-clock and cpu-clock both count the program's time on a
    CPU, so they agree in every interval whatever the load of the host."""
    fd_file = tmp_path / "fd.csv"
    events = "task-clock,cpu-clock,page-faults"
    with fd_file.open("w") as fh:
        _perf(["-x,", "-e", events, "--log-fd", str(fh.fileno()), "--",
               sys.executable, "-c", BUSY], tmp_path, pass_fds=(fh.fileno(),))
    assert not fd_file.read_text().startswith("#")
    csv = to_wide(parse_perf_stat(fd_file), fd_file, required=["task-clock", "cpu-clock"])
    res = _perf(["-j", "-e", events, "--", sys.executable, "-c", BUSY], tmp_path)
    js = tmp_path / "j.json"
    js.write_text(res.stderr)
    jw = to_wide(parse_perf_stat(js), js, required=["task-clock", "cpu-clock"])
    for wide in (csv, jw):
        assert len(wide) >= 5 and wide["task-clock"].sum() > 50
        np.testing.assert_allclose(wide["task-clock"], wide["cpu-clock"], rtol=0.05, atol=0.5)


def test_live_perf_per_thread(tmp_path):
    """--per-thread rows (comm-pid) of a running program, summed per interval; a selection by
    pattern keeps the same rows."""
    if shutil.which("perf") is None:
        pytest.skip("perf is not installed on this host")
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3)\n" + BUSY])
    perf = subprocess.Popen(["perf", "stat", "-I", "100", "--per-thread", "-p", str(proc.pid),
                             "-x,", "-e", "task-clock,cpu-clock"], stderr=subprocess.PIPE,
                            text=True)
    proc.wait()  # reaped: perf sees the process end
    _, err = perf.communicate(timeout=30)
    f = tmp_path / "t.csv"
    f.write_text(err)
    assert f"-{proc.pid}," in err  # perf wrote comm-pid ids
    wide = to_wide(parse_perf_stat(f), f, required=["task-clock", "cpu-clock"])
    assert len(wide) >= 3 and wide["task-clock"].sum() > 50
    np.testing.assert_allclose(wide["task-clock"], wide["cpu-clock"], rtol=0.05, atol=0.5)
    sel = to_wide(parse_perf_stat(f, select=[f"*-{proc.pid}"]), f, required=["task-clock"])
    np.testing.assert_array_equal(sel["task-clock"], wide["task-clock"])


@pytest.mark.parametrize("sep", [",", "|", "\t", ";", ":"])
def test_an_interval_where_the_program_did_not_run_is_not_counted(tmp_path, sep):
    """perf prints ``<not counted>`` for a software event in an interval where the program got no
    CPU (seen on a saturated host): the row is an interval like any other, its count missing."""
    rows = [("0.100", "50.0"), ("0.200", "<not counted>"), ("0.300", "20.0")]
    f = tmp_path / "o.txt"
    f.write_text("# started on Mon Nov 23 10:00:00 2026\n\n" + "".join(
        sep.join([t, v, "msec", "task-clock", "0" if v.startswith("<") else "100000000",
                  "100.00", "", ""]) + "\n" for t, v in rows))
    long = parse_perf_stat(f)
    assert long["time"].tolist() == [0.1, 0.2, 0.3]
    got = long["value"].tolist()
    assert got[0] == 50.0 and got[2] == 20.0 and math.isnan(got[1])


# --- aggregation modes: one row per id of each event in every interval ---------------------------


def _lines(name):
    return (DATA / name).read_text().splitlines()


def _per_cpu(rows, cpus=("CPU0", "CPU1"), intervals=4):
    """A perf -A file: instructions 1e9, a 1e6, cycles 5e8 per CPU in each interval."""
    return [f"{0.1 * (k + 1):16.9f},{c},{v},,{e},100000000,100.00,,"
            for k in range(intervals)
            for e, v in (("instructions", 10**9), ("a", 10**6), ("cycles", 5 * 10**8))
            for c in cpus][: rows]


def _repeat(lines, needle):
    """Every line holding ``needle`` written twice (perf -e a,a -A)."""
    return [x for ln in lines for x in ([ln, ln] if needle in ln else [ln])]


@pytest.mark.parametrize(("name", "make", "line", "needle"), [
    # perf killed while writing: the last interval has one CPU of two for its last event
    ("cut.csv", lambda: _per_cpu(23), 23,
     "event 'cycles' has no row for CPU1 in the interval at t=0.400000000s (lines 19-23): 1 of "
     "the 2 ids it is reported on (CPU1 first at line 6)"),
    ("no_aggr.csv", lambda: _lines("no_aggr.csv")[:-1], 55,
     "event 'cpu-clock' has no row for CPU1 in the interval at t=0.728097534s (lines 49-55)"),
    ("per_core.json", lambda: _lines("per_core.json")[:-1], 55,
     "event 'cpu-clock' has no row for S0-D0-C1 in the interval at t=0.728097534s"),
    # a CPU's row lost in the middle of the run
    ("gap.csv", lambda: [ln for k, ln in enumerate(_lines("no_aggr.csv")) if k != 18], 23,
     "event 'page-faults' has no row for CPU0 in the interval at t=0.303238712s"),
    # perf -e a,a -A: the event twice per CPU
    ("twice_a.csv", lambda: _repeat(_per_cpu(24), ",a,"), 4,
     "a second row of event 'a' on CPU0 at t=0.100000000s (the first is line 3)"),
    ("twice_pf.csv", lambda: _repeat(_lines("no_aggr.csv"), ",page-faults,"), 4,
     "a second row of event 'page-faults' on CPU0"),
    # a second run appended without a header (--log-fd, --append)
    ("again.json", lambda: _lines("no_aggr.json") * 2, 57,
     "a second row of event 'task-clock' on CPU0 at t=0.100185101s (the first is line 1)"),
])
def test_a_per_id_file_missing_or_repeating_a_row_is_refused_naming_the_line(tmp_path, name,
                                                                             make, line,
                                                                             needle):
    """Summing whatever rows an interval has took a missing CPU as zero and a repeated row
    twice: the cut file gave its last interval an IPC of 4.0 (cycles of one CPU of two), a
    file with ``-e a,a`` an a_pki of 2.0 for 1.0. The aggregated form of the same damage was
    already refused; now every form is, naming the line."""
    f = tmp_path / name
    f.write_text("\n".join(make()) + "\n")
    with pytest.raises(InputError) as err:
        parse_perf_stat(f)
    msg = str(err.value)
    assert msg.startswith(f"{f}, line {line}: ")
    assert needle in msg
    assert "one row per interval, event and id" in msg or "a row for each of an event's ids" \
        in msg


@pytest.mark.parametrize("name", ["no_aggr.csv", "aggregated.csv", "per_core.json"])
def test_a_second_run_appended_to_the_file_is_refused_at_its_header(tmp_path, name):
    """perf stat --append writes a second ``# started on`` header and a second run whose
    intervals start again at zero: summed with the first, every count doubled."""
    body = _lines(name)
    f = tmp_path / name
    f.write_text("\n".join(["# started on Mon Nov 23 10:00:00 2026", "", *body,
                            "# started on Mon Nov 23 10:01:00 2026", "", *body]) + "\n")
    with pytest.raises(InputError, match=rf"line {len(body) + 3}: a second '# started on' "
                                         r"header after counter lines: .*perf stat --append"):
        parse_perf_stat(f)


def test_the_aggregated_forms_damage_names_the_line_too(tmp_path):
    """Cut short or with a line repeated, perf's aggregated output was refused without a line."""
    body = _lines("aggregated.csv")
    f = tmp_path / "cut.csv"
    f.write_text("\n".join(body[:-1]) + "\n")
    with pytest.raises(InputError, match=r"line 27: interval at t=0.728097534s, ending at this "
                                         r"line, has 3 of 4 events"):
        to_wide(parse_perf_stat(f), f)
    f.write_text("\n".join(_repeat(body, ",context-switches,")) + "\n")
    with pytest.raises(InputError, match=r"line 4: interval times of event 'context-switches' "
                                         "do not increase"):
        parse_perf_stat(f)


def test_each_event_keeps_its_own_ids_and_threads_may_come_and_go(tmp_path):
    """The ids are checked per event (a hybrid PMU's event is reported on its own CPUs only);
    thread ids only for repeats (a thread starts or ends during the run; system-wide
    --per-thread leaves out a thread that counted nothing in an interval)."""
    rows = [f"{0.1 * (k + 1):.9f},CPU{c},{v},,{e},100000000,100.00,,"
            for k in range(3)
            for e, v, cpus in (("cpu_core/instructions/", 100, (0, 1)),
                               ("cpu_atom/instructions/", 10, (2, 3, 4)))
            for c in cpus]
    f = tmp_path / "hybrid.csv"
    f.write_text("\n".join(rows) + "\n")
    wide = to_wide(parse_perf_stat(f), f, required=["instructions"])
    assert wide["instructions"].tolist() == [230.0] * 3
    threads = ["0.1,python3-10,5,msec,task-clock,5000000,100.00,,",
               "0.1,python3-11,7,msec,task-clock,7000000,100.00,,",
               "0.2,python3-10,5,msec,task-clock,5000000,100.00,,"]
    f.write_text("\n".join(threads) + "\n")
    assert parse_perf_stat(f)["value"].tolist() == [12.0, 5.0]
    f.write_text("\n".join([*threads, threads[-1]]) + "\n")
    with pytest.raises(InputError, match="line 4: a second row of event 'task-clock' on "
                                         "python3-10 at t=0.200000000s"):
        parse_perf_stat(f)


def test_an_interval_no_hybrid_copy_counted_is_missing_and_flagged(tmp_path):
    """Hybrid copies all <not counted> in an interval: the sum is missing, and the interval's
    percent-running 0 as for any count perf did not make (it was left out of the lowest)."""
    nc = "<not counted>"
    f = tmp_path / "h.csv"
    f.write_text(format_perf_csv(np.array([0.1, 0.2, 0.3]), {
        "cpu_core/instructions/": np.array([6e8, nc, 6e8], dtype=object),
        "cpu_atom/instructions/": np.array([4e8, nc, nc], dtype=object),
        "task-clock": np.array([100.0, 100.0, 100.0])}, units={"task-clock": "msec"}))
    wide = to_wide(parse_perf_stat(f), f, wanted=["instructions"])
    assert wide["instructions"].iloc[[0, 2]].tolist() == [1e9, 6e8]
    assert math.isnan(wide["instructions"].iloc[1])
    assert wide["instructions__pct"].tolist() == [100.0, 0.0, 100.0]
    assert wide["pct_running_min"].tolist() == [100.0, 0.0, 100.0]
    assert list(wide.columns[2:4]) == ["instructions", "task-clock"]
