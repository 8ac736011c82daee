"""Whole-run counter tables: CSV tables and real perf stat -x / -j files without -I."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from perfcast.counters.settings import BaseEvents, PostprocessSettings, WholerunSettings
from perfcast.counters.wholerun import read_wholerun, wholerun_file
from perfcast.errors import InputError
from perfcast.io import parquet_metadata
from perfcast.settings import from_section

DATA = Path(__file__).parents[1] / "data" / "wholerun"
SOFT = BaseEvents("task-clock", "cpu-clock")  # no hardware PMU on the host that made the files


def _perf_x(path: Path) -> dict[str, float]:
    """Independent reading of a perf -x, file: event -> count."""
    out = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            f = line.split(",")
            out[f[2]] = float(f[0])
    return out


@pytest.mark.parametrize("suffix", ["csv", "json"])
def test_real_perf_whole_run_files(suffix):
    """Every count as perf printed it: PKI = 1000 count / task-clock, IPC = task / cpu clock,
    the wall time from duration_time."""
    path = DATA / "here" / f"alloc.{suffix}"
    t, info = read_wholerun(path, benchmark="alloc", machine="here", base=SOFT,
                            events=["page-faults", "context-switches"], clock_ghz=None)
    if suffix == "csv":
        want = _perf_x(path)
    else:
        want = {o["event"]: float(o["counter-value"]) for o in
                map(json.loads, path.read_text().splitlines()[2:]) if "event" in o}
    assert info == {"format": "perf" if suffix == "csv" else "json",
                    "time_source": "duration_time event"}
    assert len(t) == 1 and t["interval"].tolist() == [0]
    assert t["instructions"][0] == want["task-clock"] and t["cycles"][0] == want["cpu-clock"]
    assert t["page-faults_pki"][0] == pytest.approx(1000 * want["page-faults"]
                                                    / want["task-clock"])
    assert t["duration_s"][0] == pytest.approx(want["duration_time"] / 1e9)
    assert t["instructions_cumulative_sum"][0] == t["instructions"][0]


def test_csv_table_rows_time_and_clock(tmp_path):
    f = tmp_path / "runs.csv"
    f.write_text("# two machines, one row each\n"
                 "benchmark,machine,instructions,cycles,branch-misses,time_s,clock_ghz\n"
                 "mcf,old,3e11,6e11,3e9,,2.0\n"
                 "mcf,new,3e11,3e11,2e9,100,\n"
                 "lbm,old,1e11,1e11,1e8,50,\n")
    base = BaseEvents("instructions", "cycles")
    old, info = read_wholerun(f, benchmark="mcf", machine="old", base=base,
                              events=["branch-misses"], clock_ghz=None)
    assert info["time_source"] == "cycles / clock"
    assert old["duration_s"][0] == pytest.approx(300.0)  # 6e11 cycles at 2 GHz
    assert old["ipc"][0] == 0.5 and old["branch-misses_pki"][0] == pytest.approx(10.0)
    new, info = read_wholerun(f, benchmark="mcf", machine="new", base=base,
                              events=["branch-misses"], clock_ghz=None)
    assert new["duration_s"][0] == 100 and info["time_source"] == "time_s column"
    with pytest.raises(InputError, match="0 rows of benchmark 'lbm' on machine 'new'"):
        read_wholerun(f, benchmark="lbm", machine="new", base=base, events=[], clock_ghz=None)
    with pytest.raises(InputError, match="no column 'stall_backend'"):
        read_wholerun(f, benchmark="mcf", machine="new", base=base, events=["stall_backend"],
                      clock_ghz=None)


def test_refusals_name_the_file(tmp_path):
    base = BaseEvents("instructions", "cycles")
    f = tmp_path / "a.csv"
    f.write_text("instructions,cycles\n1e9,0\n")
    with pytest.raises(InputError, match=r"a\.csv.*cycles = 0\.0"):
        read_wholerun(f, benchmark="x", machine="m", base=base, events=[], clock_ghz=2.0)
    f.write_text("instructions,cycles\n1e9,2e9\n")
    with pytest.raises(InputError, match="no wall time and no clock"):
        read_wholerun(f, benchmark="x", machine="m", base=base, events=[], clock_ghz=None)
    t, _ = read_wholerun(f, benchmark="x", machine="m", base=base, events=[], clock_ghz=2.0)
    assert t["duration_s"][0] == 1.0
    f.write_text("instructions,cycles\n1e9,lots\n")
    with pytest.raises(InputError, match="cycles = 'lots'"):
        read_wholerun(f, benchmark="x", machine="m", base=base, events=[], clock_ghz=2.0)
    # interval output is not a whole run
    interval = Path(__file__).parents[1] / "data" / "perf" / "aggregated.json"
    with pytest.raises(InputError, match="-I output in a whole-run file"):
        read_wholerun(interval, benchmark="x", machine="m", base=SOFT, events=[], clock_ghz=1)


@pytest.mark.parametrize("row, why", [
    ("mcf,m,3e11,3.6e11,-2e9,122.9,", r"branch-misses = -2e\+09 of benchmark 'mcf' on machine "
                                      r"'m' \(expected a finite count >= 0"),
    ("mcf,m,3e11,3.6e11,inf,122.9,", r"branch-misses = inf .*\(expected a finite count >= 0"),
    ("mcf,m,3e11,3.6e11,2e9,0,", r"time_s = 0 .*\(expected a positive wall time"),
    ("mcf,m,3e11,3.6e11,2e9,-5,3", r"time_s = -5 .*\(expected a positive wall time"),
    ("mcf,m,3e11,3.6e11,2e9,,0", r"clock_ghz = 0 .*\(expected a positive clock in GHz"),
    ("mcf,m,3e11,3.6e11,2e9,,inf", r"clock_ghz = inf .*\(expected a positive clock in GHz"),
    ("mcf,m,3e11,3.6e11,2e9,,1e400", r"clock_ghz = '1e400' .* is not a number"),
    ("mcf,m,3e11,3.6e11,2e9,,2400", r"clock_ghz = 2400 .*\(expected a positive clock in GHz, "
                                    r"at most 20"),
])
def test_a_wrong_count_time_or_clock_in_a_table_is_refused_naming_its_row(tmp_path, row, why):
    """A negative or infinite count gave a negative or infinite PKI; a time_s or clock_ghz of 0
    or below was replaced silently by cycles / clock or the config's clock. Only an empty cell
    falls back (not counted; the other source of the time)."""
    f = tmp_path / "runs.csv"
    f.write_text("# one row per benchmark and machine\n\n"
                 "benchmark,machine,instructions,cycles,branch-misses,time_s,clock_ghz\n"
                 f"lbm,m,1e11,1e11,1e8,50,\n# the next row is wrong\n{row}\n")
    with pytest.raises(InputError, match=rf"runs\.csv, line 6: {why}"):
        read_wholerun(f, benchmark="mcf", machine="m", base=BaseEvents("instructions", "cycles"),
                      events=["branch-misses"], clock_ghz=2.5)


def test_wholerun_file_metadata(tmp_path):
    out = tmp_path / "t.parquet"
    pp = from_section(PostprocessSettings, {"events": ["page-faults"],
                                            "base_events": dataclasses.asdict(SOFT)},
                      "counters_postprocess")
    t = wholerun_file(WholerunSettings(pp, generation="again", benchmark="spin", clock_ghz=None,
                                       pattern_fields=("gen", "bench")),
                      DATA / "again" / "spin.json", out)
    meta = parquet_metadata(out)
    assert meta["granularity"] == "whole-run" and meta["format"] == "json"
    assert meta["backend"] == "wholerun" and meta["benchmark"] == "spin"
    assert np.isfinite(t.drop(columns="multiplexed").to_numpy(dtype=float)).all()


ONE = ("4000000000,,instructions,1000000000,100.00,2.00,insn per cycle\n"
       "2000000000,,cycles,1000000000,100.00,,\n"
       "1000000,,branch-misses,1000000000,100.00,,\n"
       "1000000000,ns,duration_time,1000000000,100.00,,\n")
ONE_JSON = ('{"counter-value" : "4000000000.000000", "unit" : "", "event" : "instructions", '
            '"event-runtime" : 1000, "pcnt-running" : 100.00}\n'
            '{"counter-value" : "2000000000.000000", "unit" : "", "event" : "cycles", '
            '"event-runtime" : 1000, "pcnt-running" : 100.00}\n')
HW = BaseEvents("instructions", "cycles")


def _read(path: Path, events=("branch-misses",), base=HW, **kw):
    return read_wholerun(path, benchmark="b", machine="m", base=base, events=list(events),
                         clock_ghz=2.0, **kw)


def test_the_known_answer_of_one_perf_run(tmp_path):
    f = tmp_path / "one.csv"
    f.write_text(ONE)
    t, info = _read(f)
    assert info["time_source"] == "duration_time event" and t["duration_s"][0] == 1.0
    assert t["ipc"][0] == 2.0 and t["branch-misses_pki"][0] == pytest.approx(0.25)


@pytest.mark.parametrize("text, events, line, why", [
    # perf stat --append: a second run after the first (was duration 2.0, instructions 8e9)
    ("# started on A\n\n" + ONE + "# started on B\n\n" + ONE, ("branch-misses",), 7,
     "a second '# started on' header"),
    ("# started on A\n" + ONE_JSON + "# started on B\n" + ONE_JSON, (), 4,
     "a second '# started on' header"),
    # an event listed twice in -e (was IPC 4.0)
    (ONE.splitlines(keepends=True)[0] + ONE, ("branch-misses",), 2,
     "a second row of event 'instructions'"),
    (ONE_JSON + ONE_JSON.splitlines(keepends=True)[0], (), 3,
     "a second row of event 'instructions'"),
    # perf stat -e task-clock,cpu-clock,page-faults,task-clock prints task-clock twice
    ("1.00,msec,task-clock,1000,100.00,0.5,CPUs utilized\n1.00,msec,cpu-clock,1000,100.00,,\n"
     "50,,page-faults,1000,100.00,,\n1.00,msec,task-clock,1000,100.00,,\n", ("page-faults",), 4,
     "a second row of event 'task-clock'"),
])
def test_a_second_run_or_a_repeated_row_is_refused_naming_its_line(tmp_path, text, events,
                                                                     line, why):
    f = tmp_path / "run.txt"
    f.write_text(text)
    base = SOFT if "task-clock" in text else HW
    with pytest.raises(InputError, match=rf"run\.txt, line {line}: {why}"):
        _read(f, events, base)


def test_a_run_neither_the_path_nor_the_file_names_is_refused(tmp_path):
    """``counters.wholerun.pattern: wr/{bench}.csv`` with a perf file per benchmark gave both
    generations the same counts (every IPC ratio 1); a table without a machine column matched
    any machine."""
    perf = tmp_path / "mcf.csv"
    perf.write_text(ONE)
    with pytest.raises(InputError, match=r"mcf\.csv: counters\.wholerun\.pattern has no \{gen\}"
                                         r" and a perf stat file holds one run"):
        _read(perf, pattern_fields=("bench",))
    with pytest.raises(InputError, match=r"has no \{bench\} and a perf stat file"):
        _read(perf, pattern_fields=("gen",))
    assert _read(perf, pattern_fields=("gen", "bench"))[0]["ipc"][0] == 2.0
    table = tmp_path / "runs.csv"
    table.write_text("benchmark,instructions,cycles,branch-misses\nb,4e9,2e9,1e6\n")
    with pytest.raises(InputError, match=r"runs\.csv: counters\.wholerun\.pattern has no "
                                         r"\{gen\} and a CSV table without a 'machine' column"):
        _read(table, pattern_fields=())
    assert _read(table, pattern_fields=("gen",))[0]["ipc"][0] == 2.0
    table.write_text("machine,benchmark,instructions,cycles,branch-misses\nm,b,4e9,2e9,1e6\n")
    assert _read(table, pattern_fields=())[0]["ipc"][0] == 2.0


def test_event_names_get_exactly_their_rows(tmp_path):
    """instructions:D and instructions:p are one count printed twice: read for instructions
    their sum gave IPC 4.0 (true 2.0); branch-misses and branch-misses:D both took the one
    branch-misses row (a feature twice). A base event among the counters gave a constant
    instructions_pki of 1000: it is left out, as in interval files."""
    f = tmp_path / "run.csv"
    f.write_text(ONE.replace(",instructions,", ",instructions:D,")
                 + ONE.splitlines(keepends=True)[0].replace(",instructions,", ",instructions:p,"))
    with pytest.raises(InputError, match=r"run\.csv: event 'instructions' stands for "
                                         r"\['instructions:D', 'instructions:p'\]"):
        _read(f)
    f.write_text(ONE)
    with pytest.raises(InputError, match="events 'branch-misses' and 'branch-misses:D' both "
                                         "stand for"):
        _read(f, ("branch-misses", "branch-misses:D"))
    t, _ = _read(f, ("branch-misses", "instructions"))
    assert "instructions_pki" not in t and t["branch-misses_pki"][0] == pytest.approx(0.25)
    f.write_text(ONE.replace(",instructions,", ",instructions:D,"))
    assert _read(f)[0]["ipc"][0] == 2.0  # one copy: it plays instructions


@pytest.mark.parametrize("header, row, why", [
    # pandas renamed the second instructions column instructions.1 and ignored its 8e9
    ("benchmark,machine,instructions,cycles,instructions", "b,m,4e9,2e9,8e9",
     r"line 2: column 'instructions' appears 2 times in the header"),
    ("benchmark,machine,instructions,cycles", "b,m,True,2e9",
     r"line 3: instructions = True .* is not a number \(expected a number \(or empty\)"),
    ("benchmark,machine,instructions,cycles,branch-misses", "b,m,4e9,2e9,False",
     r"line 3: branch-misses = False .* is not a number"),
    # IPC 5e20
    ("benchmark,machine,instructions,cycles", "b,m,1e30,2e9",
     r"line 3: instructions = 1e\+30 .*\(expected a finite count >= 0, at most what a 64-bit"),
])
def test_a_table_column_twice_a_boolean_or_a_count_beyond_64_bits_is_refused(tmp_path, header,
                                                                             row, why):
    f = tmp_path / "runs.csv"
    f.write_text(f"# runs\n{header}\n{row}\n")
    with pytest.raises(InputError, match=rf"runs\.csv, {why}"):
        _read(f, ("branch-misses",) if "branch-misses" in header else ())


@pytest.mark.parametrize("text", [
    # a metric continuation line, as perf writes for stalled-cycles metrics
    (ONE.splitlines(keepends=True)[0] + ",,,,,0.13,stalled cycles per insn\n"
     + "".join(ONE.splitlines(keepends=True)[1:])),
    # -A with -x; : one row per CPU, and a continuation after the id
    ("CPU0;2000000000;;instructions;1000;100.00;;\nCPU1;2000000000;;instructions;1000;100.00;;\n"
     "CPU0;;;;;;0.5;insn per cycle\nCPU0;1000000000;;cycles;1000;100.00;;\n"
     "CPU1;1000000000;;cycles;1000;100.00;;\nCPU0;500000;;branch-misses;1000;100.00;;\n"
     "CPU1;500000;;branch-misses;1000;100.00;;\n"),
    # --per-socket: the socket and its CPU count
    ("S0,2,4000000000,,instructions,1000,100.00,,\nS0,2,2000000000,,cycles,1000,100.00,,\n"
     "S0,2,1000000,,branch-misses,1000,100.00,,\n"),
])
def test_perf_metric_lines_and_aggregation_ids_are_read(tmp_path, text):
    """Refused before: the continuation as a malformed line, -A and --per-socket files taken
    for a CSV table."""
    f = tmp_path / "run.txt"
    f.write_text(text)
    t, info = _read(f)
    assert info["format"] == "perf"
    assert t["ipc"][0] == 2.0 and t["branch-misses_pki"][0] == pytest.approx(0.25)


def test_a_repeated_row_of_one_cpu_is_refused(tmp_path):
    f = tmp_path / "run.txt"
    f.write_text("CPU0,2000000000,,instructions,1000,100.00,,\n"
                 "CPU0,1000000000,,cycles,1000,100.00,,\n"
                 "CPU0,2000000000,,instructions,1000,100.00,,\n")
    with pytest.raises(InputError, match=r"line 3: a second row of event 'instructions' on CPU0"):
        _read(f, ())


def test_an_aggregation_mode_file_cut_short_is_refused(tmp_path):
    """-A cut after CPU0's branch-misses row: summed as if complete, branch-misses PKI 0.125
    (true 0.25). Uncore counts on one CPU and duration_time once are whole."""
    rows = ["CPU0,2000000000,,instructions,1000,100.00,,", "CPU1,2000000000,,instructions,1000,"
            "100.00,,", "CPU0,1000000000,,cycles,1000,100.00,,",
            "CPU1,1000000000,,cycles,1000,100.00,,", "CPU0,500000,,branch-misses,1000,100.00,,"]
    f = tmp_path / "run.txt"
    f.write_text("\n".join(rows) + "\n")
    with pytest.raises(InputError, match=r"run\.txt, line 5: event 'branch-misses' has no row for "
                                         r"CPU1, which 'instructions' of the same PMU"):
        _read(f)
    f.write_text("\n".join([*rows[:4], "CPU0,777,,uncore_imc/cas_count_read/,1000,100.00,,",
                            "CPU0,1000000000,ns,duration_time,1000,100.00,,"]) + "\n")
    t, info = _read(f, ("uncore_imc/cas_count_read/",))
    assert t["ipc"][0] == 2.0 and info["time_source"] == "duration_time event"
