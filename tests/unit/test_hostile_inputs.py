"""What a hostile or unlucky user gives: names that would become paths outside their folder,
numbers beyond what a counter can hold, repeated columns, truncated runs, program templates with
shell metacharacters, huge configs. Each is refused with one line naming the file, line or key,
or gives the right result; none runs code, loses data or writes a wrong number."""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from perfcast.cli import main
from perfcast.counters.collect import collect_simulated
from perfcast.counters.events import BaseEvents, make_groups
from perfcast.counters.perfstat import format_perf_csv
from perfcast.counters.postprocess import join_runs, postprocess
from perfcast.counters.rules import postprocess_files, summary_file
from perfcast.counters.settings import (
    CollectSettings,
    CountersSummarySettings,
    PostprocessRunSettings,
    PostprocessSettings,
    RunProvenance,
    SimulatedRun,
    SimulateSettings,
)
from perfcast.errors import InputError
from perfcast.io import parquet_metadata, read_parquet
from perfcast.settings import from_section, validate
from perfcast.summary import build_summary

COUNTERS = {"generations": {"old": "g2", "new": "g3"}, "events": ["x"], "benchmarks": ["mcf"]}


def _counters(**changes) -> dict:
    return {"counters": COUNTERS | changes}


# ------------------------------------------------------------- names that become paths are safe


UNSAFE = [".", "..", ".hidden", "a/b", "../up", "-rf", "a\\b", ""]


@pytest.mark.parametrize("name", UNSAFE)
@pytest.mark.parametrize("cfg, key", [
    (lambda n: _counters(benchmarks=["mcf", n]), "counters.benchmarks.1"),
    (lambda n: _counters(generations={"old": n, "new": "g3"}), "counters.generations.old"),
    (lambda n: _counters(generations={"old": "g2", "new": n}), "counters.generations.new"),
    (lambda n: {"predict": {"benchmarks": [n]}}, "predict.benchmarks.0"),
    (lambda n: {"warmup": {"workloads": {n: {"command": "true {work}",
                                                      "work_max": 10}}}}, "warmup.workloads"),
    (lambda n: {"sensitivity": {"programs": {n: {"command": "true"}}}},
     "sensitivity.programs"),
    (lambda n: {"sensitivity": {"cgroup": {"prefix": n}}}, "sensitivity.cgroup.prefix"),
    (lambda n: {"sweep": {"campaigns": {n: {"command": "true {n}",
                                            "parameters": {"n": [1, 2]}}}}}, "sweep.campaigns"),
])
def test_a_name_that_becomes_a_path_is_a_safe_name(cfg, key, name):
    with pytest.raises(InputError, match=rf"config: {re.escape(key)}: .*does not match"):
        validate(cfg(name), "config")
    validate(cfg("a.b-c1"), "config")  # the same place takes an ordinary name


@pytest.mark.parametrize("parent", ["..", "../x", "a/../b", "/abs", "a//b", ".hidden/a"])
def test_the_cgroup_parent_is_a_relative_path_of_safe_names(parent):
    with pytest.raises(InputError, match=r"config: sensitivity\.cgroup\.parent: .*does not match"):
        validate({"sensitivity": {"cgroup": {"parent": parent}}}, "config")
    validate({"sensitivity": {"cgroup": {"parent": "perfcast/jobs"}}}, "config")


def test_the_refusal_says_why_a_name_must_be_safe():
    with pytest.raises(InputError, match=r"'\.\.' does not match .*never '\.', '\.\.', hidden"):
        validate(_counters(benchmarks=[".."]), "config")


# ------------------------------------------------------- a truncated group run is caught, always

BASE = BaseEvents("instructions", "cycles")
SIM_EVENTS_USED = ["l1d_cache_refill", "br_mis_pred", "stall_backend", "l2d_cache"]


def _groups(tmp_path: Path, bench: str = "gcc") -> list[Path]:
    files = []
    for k, g in enumerate(make_groups(SIM_EVENTS_USED, 2, BASE)):
        f = tmp_path / f"{bench}.group{k}.csv"
        settings = CollectSettings(
            backend="simulate", interval_ms=100, base_events=BASE, events=tuple(g), perf=None,
            simulated=SimulatedRun(role="old", clock_ghz=None, seed=11,
                                   simulate=SimulateSettings(scale=0.2, noise=0.05, jitter=0.02,
                                                             run_variation=0.03)))
        collect_simulated(settings, f, benchmark=bench, group=k)
        files.append(f)
    return files


def _cut(path: Path, keep: float, *, at_end: bool = False) -> Path:
    """The group file with only its first (or last) ``keep`` of intervals, as a run killed
    (or attached late) writes it."""
    lines = path.read_text().splitlines()
    data = [ln for ln in lines if ln and not ln.startswith("#")]
    times = sorted({ln.split(",")[0] for ln in data}, key=float)
    n = int(round(len(times) * keep))
    kept = set(times[-n:] if at_end else times[:n])
    out = path.with_name(f"cut.{path.name}")
    out.write_text("\n".join(ln for ln in data if ln.split(",")[0] in kept) + "\n")
    return out


def _pp(files: list[Path], **over) -> object:
    return postprocess(files, from_section(PostprocessSettings,
                                           {"events": SIM_EVENTS_USED, **over},
                                           "counters_postprocess"))


@pytest.mark.parametrize("bench", ["gcc", "mcf", "omnetpp"])
@pytest.mark.parametrize("keep, at_end, cut_group", [(0.9, False, 1), (0.95, False, 1),
                                                     (0.9, False, 0), (0.9, True, 1)])
def test_a_truncated_group_run_fails_naming_it_whatever_the_tolerance(tmp_path, bench, keep,
                                                                      at_end, cut_group):
    files = _groups(tmp_path, bench)
    assert len(_pp(files)) > 20  # the whole runs join, with the default tolerance
    files[cut_group] = _cut(files[cut_group], keep, at_end=at_end)
    part = "last" if at_end else "first"
    with pytest.raises(InputError, match=rf"{re.escape(str(files[cut_group]))}: this group run "
                                         rf"covers only about the {part} [89]\d\.\d% of the "
                                         "program"):
        _pp(files, run_tolerance=1.0)  # a tolerance that would admit it: the trace refuses it


def test_the_default_tolerance_is_tight_for_instructions_and_wide_for_software(tmp_path,
                                                                              caplog):
    from perfcast.counters.postprocess import run_tolerance

    hw = from_section(PostprocessSettings, {"events": ["a"]}, "counters_postprocess")
    sw = from_section(PostprocessSettings, {"events": ["a"], "base_events": {
        "instructions": "task-clock", "cycles": "cpu-clock"}}, "counters_postprocess")
    with caplog.at_level(logging.INFO, logger="perfcast.counters.postprocess"):
        assert run_tolerance(hw) == 0.05
        assert run_tolerance(sw) == 1.0
    assert "0.05: 'instructions' is a hardware instruction count" in caplog.text
    assert "1: the software event 'task-clock' stands in for instructions" in caplog.text
    # the probe: a group run stopped at 90 % of the program fails by its totals by default
    files = _groups(tmp_path)
    files[1] = _cut(files[1], 0.9)
    with pytest.raises(InputError, match=r"\(expected group runs of one program within the run "
                                         r"tolerance \(0\.05"):
        _pp(files)


SOFTWARE = {"instructions": "task-clock", "cycles": "cpu-clock"}


def _flat(path: Path, n: int, *, keep: int | None = None, event: str = "a",
          base: dict[str, str] | None = None) -> Path:
    """A group run of a program of constant IPC (``n`` intervals; only the first ``keep``),
    with hardware base events or ``base``."""
    k = n if keep is None else keep
    names = base or {"instructions": "instructions", "cycles": "cycles"}
    path.write_text(format_perf_csv(np.arange(1, k + 1) / 10, {
        names["instructions"]: np.full(k, 1e8), names["cycles"]: np.full(k, 2e8),
        event: np.full(k, 5e5)}))
    return path


def _run_settings(backend: str | None, **over) -> PostprocessRunSettings:
    pp = from_section(PostprocessSettings, {"events": ["a", "b"], **over},
                      "counters_postprocess")
    return PostprocessRunSettings(pp, None if backend is None else RunProvenance(
        generation="g2", benchmark="mcf", backend=backend, simulated=False, interval_ms=100))


def test_a_flat_run_short_of_the_others_is_joined_and_named_unless_collected(tmp_path,
                                                                            caplog, capsys):
    """A constant-IPC program's trace cannot tell a run cut at 90 % from a whole one: within the
    run tolerance it is joined, and named as unverified wherever it came from a file this
    workflow did not collect: in the log, the table's metadata, the counters summary, the run
    summary and the command's output. A run the workflow collected (its program's exit status
    checked) is joined and not named."""
    whole = _flat(tmp_path / "g0.csv", 20)
    cut = _flat(tmp_path / "g1.csv", 20, keep=18, event="b")
    settings = _run_settings(None, run_tolerance=0.2)
    table, runs = join_runs([whole, cut], settings.postprocess)
    assert len(table) == 20 and [(r.file, r.longest) for r in runs] == [(cut, whole)]
    assert runs[0].share == pytest.approx(0.9)
    # whole runs, or a run short by less than the coverage tolerance: nothing unverified
    assert join_runs([whole, _flat(tmp_path / "w.csv", 20, event="b")],
                     settings.postprocess)[1] == []
    assert join_runs([_flat(tmp_path / "l.csv", 50), _flat(tmp_path / "s.csv", 50, keep=49,
                                                           event="b")],
                     settings.postprocess)[1] == []
    with caplog.at_level(logging.INFO, logger="perfcast.counters"):
        for backend in (None, "import", "perf", "simulate"):
            caplog.clear()
            out = tmp_path / f"{backend}.parquet"
            postprocess_files(_run_settings(backend, run_tolerance=0.2), [whole, cut], out)
            listed = parquet_metadata(out)["unverified_runs"]
            warned = [r for r in caplog.records if r.levelno == logging.WARNING]
            if backend in (None, "import"):
                assert listed == [{"file": str(cut), "instructions_share": 0.9,
                                   "longest": str(whole)}]
                assert len(warned) == 1 and f"{cut} retired 90.0% of the instructions of " \
                    f"{whole}" in warned[0].getMessage()
                assert "cannot tell whether it covers the whole" in warned[0].getMessage()
            else:
                assert listed == [] and warned == []
                assert "it was collected here, and its program finished" in caplog.text
        caplog.clear()
        csv = tmp_path / "summary.csv"
        runs_table = summary_file(CountersSummarySettings(runs=(("g2", "mcf"), ("g3", "mcf"))),
                                  [tmp_path / "import.parquet", tmp_path / "perf.parquet"], csv)
    assert runs_table["unverified_group_runs"].tolist() == [1, 0]
    assert f"g2/mcf: group run {cut} retired 90.0 %" in caplog.text
    warnings = build_summary(counters=csv)["warnings"]
    assert len(warnings) == 1 and "g2/mcf: a group run retired fewer instructions" in warnings[0]
    # the command line reads the user's files (here with software events in the base roles)
    sw_whole = _flat(tmp_path / "s0.csv", 20, base=SOFTWARE)
    sw_cut = _flat(tmp_path / "s1.csv", 20, keep=18, event="b", base=SOFTWARE)
    code, out, err = _cli(capsys, "postprocess", sw_whole, sw_cut, "--events", "a,b",
                          "--instructions-event", "task-clock", "--cycles-event", "cpu-clock",
                          "-o", tmp_path / "cli.parquet")
    assert code == 0 and json.loads(out)["unverified_runs"] == [
        {"file": str(sw_cut), "instructions_share": 0.9, "longest": str(sw_whole)}]


@pytest.mark.live
def test_a_real_perf_run_killed_half_way_is_reported_unverified(tmp_path):
    """Real ``perf stat -I`` of a CPU-time loop with software events in the base roles (this
    host has no hardware PMU; events a user without root counts too), the second group's
    program killed part-way (``timeout -s
    KILL``): task-clock against cpu-clock is flat, so only the totals show the cut, and the
    run is joined with the file named as unverified."""
    if shutil.which("perf") is None:
        pytest.skip("perf is not installed on this host")
    loop = "import time\nc = time.process_time()\nwhile time.process_time() - c < 0.8: pass"
    files = []
    for k, (event, cmd) in enumerate([("page-faults", []),
                                      ("minor-faults", ["timeout", "-s", "KILL", "0.4"])]):
        files.append(tmp_path / f"g{k}.csv")
        subprocess.run(["perf", "stat", "-I", "100", "-x,", "-e", f"task-clock,cpu-clock,{event}",
                        "-o", str(files[-1]), "--", *cmd, sys.executable, "-c", loop],
                       check=False, capture_output=True)
    pp = from_section(PostprocessSettings, {
        "events": ["page-faults", "minor-faults"],
        "base_events": {"instructions": "task-clock", "cycles": "cpu-clock"},
        "software_run_tolerance": 10.0}, "counters_postprocess")
    table, runs = join_runs(files, pp)
    assert len(table) >= 5 and [r.file for r in runs] == [files[1]]
    assert 0.05 < runs[0].share < 0.9  # 0.4 s of a 0.8 s loop, whatever the host's load


# ---------------------------------------------- counts a counter cannot hold, refused at the line


def _perf_file(path: Path, n: int = 8, bad: tuple[int, str, str] | None = None,
               form: str = "csv") -> Path:
    """A perf -I file of ``n`` intervals of instructions, cycles and a; ``bad`` = (interval,
    event, text) replaces that count's text."""
    counts = {"instructions": np.full(n, 1e8), "cycles": np.full(n, 2e8),
              "a": np.full(n, 5e5)}
    text = format_perf_csv(np.arange(1, n + 1) / 10, counts)
    if bad is not None:
        k, ev, value = bad
        lines = text.splitlines()
        i = [j for j, ln in enumerate(lines) if f",{ev}," in ln][k]
        f = lines[i].split(",")
        f[1] = value
        lines[i] = ",".join(f)
        text = "\n".join(lines) + "\n"
    if form == "json":
        rows = []
        for ln in text.splitlines():
            if ln and not ln.startswith("#"):
                f = ln.split(",")
                rows.append(f'{{"interval": {float(f[0])}, "counter-value": "{f[1]}", '
                            f'"unit": "", "event": "{f[3]}", "event-runtime": {f[4]}, '
                            f'"pcnt-running": {f[5]}}}')
        text = "\n".join(rows) + "\n"
    path.write_text(text)
    return path


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if needle in ln)


def _cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _one_line_error(code: int, err: str, *needles: str) -> str:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


@pytest.mark.parametrize("form", ["csv", "json"])
@pytest.mark.parametrize("value, why", [
    ("1e308", "more than a 64-bit counter holds"),
    (str(2**64), "more than a 64-bit counter holds"),
    (str(2**64 - 1000), "a counter that wrapped"),
    (str(2**63), "a counter that wrapped"),
    ("inf", "is not a finite number"),
    ("nan", "is not a finite number"),
    ("-5", "is negative"),
])
def test_a_count_no_counter_holds_is_refused_naming_the_line(tmp_path, capsys, value, why,
                                                             form):
    f = _perf_file(tmp_path / "g0.csv", bad=(4, "instructions", value), form=form)
    out = tmp_path / "t.parquet"
    code, _, err = _cli(capsys, "postprocess", f, "--events", "a", "-o", out)
    line = _line_of(f, value)
    _one_line_error(code, err, f"{f}, line {line}: count '{value}'", why)
    assert not out.exists()
    # the largest honest count still reads (2^63 - 1 in one interval is absurd but representable)
    ok = _perf_file(tmp_path / "ok.csv", form=form)
    assert _cli(capsys, "postprocess", ok, "--events", "a", "-o", out)[0] == 0
    assert read_parquet(out)["a_pki"].eq(5.0).all()


@pytest.mark.parametrize("field, value", [(4, "inf"), (5, "250"), (5, "-1"), (5, "nan"),
                                          (0, "inf"), (0, "nan")])
def test_perf_bookkeeping_fields_beyond_their_range_are_refused(tmp_path, capsys, field, value):
    f = _perf_file(tmp_path / "g0.csv")
    lines = f.read_text().splitlines()
    k = [j for j, ln in enumerate(lines) if ",a," in ln][3]
    parts = lines[k].split(",")
    parts[field] = value
    lines[k] = ",".join(parts)
    f.write_text("\n".join(lines) + "\n")
    code, _, err = _cli(capsys, "postprocess", f, "--events", "a", "-o", tmp_path / "t.parquet")
    _one_line_error(code, err, f"{f}, line {k + 1}:")


# ------------------------------------------------------ a column named twice is never half-read


def _fit_table(path: Path, header: str) -> Path:
    """A fit table: wall_s = 2 * size + 5 (30 rows); ``header`` names its three columns."""
    rng = np.random.default_rng(1)
    size = rng.uniform(100, 1000, 30)
    rows = [f"{s:.3f},{rng.uniform(0, 9):.3f},{2 * s + 5:.3f}" for s in size]
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    return path


def test_wps_refuses_a_column_named_twice(tmp_path, capsys):
    f = tmp_path / "rounds.csv"
    f.write_text("work,work,duration_s\n" + "".join(f"{w},7,{w / 1000 + 0.5}\n"
                                                   for w in range(100, 3100, 100)))
    code, out, err = _cli(capsys, "wps", f)
    _one_line_error(code, err, f"{f}, line 1: column 'work' appears 2 times in the header")
    assert out == ""
    f.write_text("work,other,duration_s\n" + "".join(f"{w},7,{w / 1000 + 0.5}\n"
                                                     for w in range(100, 3100, 100)))
    code, out, _ = _cli(capsys, "wps", f)
    assert code == 0 and json.loads(out)["v"] == pytest.approx(1000, rel=1e-6)


@pytest.mark.parametrize("header", ["size,size,wall_s", "size,wall_s,size", " size,size ,wall_s"])
def test_fit_refuses_a_column_named_twice(tmp_path, capsys, header):
    f = _fit_table(tmp_path / "t.csv", header)
    code, out, err = _cli(capsys, "fit", f, "--y", "wall_s", "--x", "size")
    _one_line_error(code, err, f"{f}, line 1: column 'size' appears 2 times in the header")
    assert out == ""


def test_fit_refuses_a_parquet_table_with_a_column_named_twice(tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    f = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_arrays([pa.array([1.0, 2.0, 3.0]), pa.array([4.0, 5.0, 6.0]),
                                         pa.array([7.0, 9.0, 11.0])],
                                        names=["size", "size", "wall_s"]), f)
    code, _, err = _cli(capsys, "fit", f, "--y", "wall_s", "--x", "size")
    _one_line_error(code, err, f"{f}: ", "duplicate")


def test_sensitivity_eval_refuses_a_column_named_twice(tmp_path, capsys):
    f = tmp_path / "grid.csv"
    f.write_text("program,cpu_cores,cpu_cores,mem_gb,net_code,io_mbps,metric,value\n"
                 "p,1,2,1,1,1,t,2\n")
    code, _, err = _cli(capsys, "sensitivity-eval", "--data", f, "--program", "p",
                        "--epsilon", "0.3")
    _one_line_error(code, err, f"{f}, line 1: column 'cpu_cores' appears 2 times")


def test_sweep_import_refuses_a_parameter_named_twice(tmp_path, capsys):
    run = tmp_path / "arpe" / "1-2" / "1"
    run.mkdir(parents=True)
    (run / "APRE_timed.txt").write_text("1.5 0.5 0.1 1 2\n")
    code, out, err = _cli(capsys, "sweep-import", tmp_path / "arpe", "--parameters", "size",
                          "size", "-o", tmp_path / "t.csv")
    _one_line_error(code, err, "imports.arpe.parameters", "non-unique")
    assert out == "" and not (tmp_path / "t.csv").exists()
    with pytest.raises(InputError, match=r"sweep\.imports\.a\.parameters: .*non-unique"):
        validate({"sweep": {"imports": {"a": {"path": "x", "parameters": ["n", "n"]}}}}, "config")


@pytest.mark.parametrize("argv, needle", [
    (["--y", "wall_s", "--x", "wall_s"], "--y 'wall_s' is also a regressor"),
    (["--y", "wall_s", "--x", "size", "size"], "--x names 'size' twice"),
])
def test_fit_refuses_a_response_among_its_regressors(tmp_path, capsys, argv, needle):
    f = _fit_table(tmp_path / "t.csv", "size,other,wall_s")
    code, out, err = _cli(capsys, "fit", f, *argv)
    _one_line_error(code, err, needle)


# ------------------------------------------------------- watch checks every reading, fast or not


@pytest.mark.parametrize("bad, why", [("1e308", "is too large to compute with"),
                                      ("1e-308", "is too small to compute with"),
                                      ("inf", "is not a finite number"),
                                      ("nan", "is not a finite number"),
                                      ("-1", "negative reading")])
@pytest.mark.parametrize("where", [5, 25])  # before watch can stop (30 readings)
def test_watch_refuses_a_reading_it_cannot_compute_with_naming_the_line(tmp_path, capsys, bad,
                                                                        why, where):
    rng = np.random.default_rng(2)
    lines = [f"{v:.6f}" for v in 1.0 + 0.01 * rng.standard_normal(200)]
    lines[where - 1] = bad
    f = tmp_path / "readings.txt"
    f.write_text("\n".join(lines) + "\n")
    code, out, err = _cli(capsys, "watch", f)
    _one_line_error(code, err, f"{f}, line {where}:", why)
    assert all(json.loads(ln)["mean"] is not None or json.loads(ln)["phase"] != "stable"
               for ln in out.splitlines())


# --------------------------------------------- derived regressors: finite, bounded, never a hang


def test_a_derived_value_that_is_not_finite_is_missing_naming_the_rows(tmp_path, capsys):
    f = tmp_path / "t.csv"
    sizes = [128 * (1 + k % 5) for k in range(30)]  # 6 of 30 rows at size 128: log(0)
    f.write_text("size,wall_s\n" + "".join(f"{s},{0.01 * s + 1}\n" for s in sizes))
    code, out, err = _cli(capsys, "fit", f, "--y", "wall_s", "--x", "e",
                          "--derived", "e=log(size-128)")
    # the 6 rows are left out, named; the rest is fitted (not a constant from a NaN column)
    res = json.loads(out)
    assert code == 0 and res["n"] == 24
    assert any("non-finite value(s) at row(s) 0, 5, 10, 15, 20, 25" in n for n in res["notes"])
    assert res["best"] != "constant"
    # nothing finite at all: an error naming the expression and its first row
    code, out, err = _cli(capsys, "fit", f, "--y", "wall_s", "--x", "e",
                          "--derived", "e=log(size-size)")
    _one_line_error(code, err, f"{f}: derived 'e': 'log(size-size)' is -inf in 30 of 30 rows "
                               "(first row 1: size=128)")
    assert out == ""
    code, out, _ = _cli(capsys, "fit", f, "--y", "wall_s", "--x", "e",
                        "--derived", "e=log(size-64)")  # finite everywhere: fitted
    assert code == 0 and json.loads(out)["derived"] == {"e": "log(size-64)"}


@pytest.mark.parametrize("expr, needle", [
    ("size+9**9**9", "is inf in 30 of 30 rows"),
    ("size*10**400", "is inf in 30 of 30 rows"),
    ("size+" + "9" * 900, "constant of 900 digits"),
    ("size+" + "9" * 5000, "an expression of 5005 characters"),
    ("size" + "+size" * 400, "an expression of 2004 characters"),
    ("(" * 300 + "size" + ")" * 300, "cannot parse"),
])
def test_a_derived_expression_is_bounded(tmp_path, capsys, expr, needle):
    f = _fit_table(tmp_path / "t.csv", "size,other,wall_s")
    code, _, err = _cli(capsys, "fit", f, "--y", "wall_s", "--x", "e", "--derived", f"e={expr}")
    line = _one_line_error(code, err, needle)
    assert len(line) < 800  # the message quotes the expression, not the expression's value


def test_config_derived_expressions_are_bounded_too():
    from perfcast.sweep.expressions import evaluate

    with pytest.raises(InputError, match=r"derived 'e': 'n\+9\*\*9\*\*9' is inf in 2 of 2 rows"):
        evaluate("n+9**9**9", {"n": np.array([1.0, 2.0])}, where="derived 'e'")
    assert evaluate("2**n", {"n": np.array([1.0, 10.0])}).tolist() == [2.0, 1024.0]


# ----------------------------------------------------- configs: bounded before they are expanded

#: 341 bytes that name 9^9 (387 million) strings through nine levels of aliases (436 million
#: values with the lists that hold them)
LAUGHS = "\n".join(["a: &a [" + ",".join(['"lol"'] * 9) + "]"]
                   + [f"{c}: &{c} [" + ",".join([f"*{p}"] * 9) + "]"
                      for p, c in zip("abcdefgh", "bcdefghi", strict=True)])


@pytest.mark.parametrize("where", ["programs", "sweep"])
def test_a_billion_laughs_config_is_refused_before_it_is_expanded(where):
    bomb = yaml.safe_load(LAUGHS)
    cfg = {"programs": {"p": {"command": "true", "env": {"X": bomb["i"]}}}} \
        if where == "programs" else \
        {"sweep": {"campaigns": {"c": {"command": "true {n}", "parameters": {"n": bomb["i"]}}}}}
    with pytest.raises(InputError) as err:
        validate(cfg, "config", where="big.yaml")
    msg = str(err.value)
    assert msg.startswith(f"big.yaml: config: {where}: expands to 4.36e+08 values")
    assert len(msg) < 400
    # aliases within the bound are YAML as usual
    ok = yaml.safe_load("x: &n [1, 2]\nsweep:\n  campaigns:\n    c:\n      command: true {n}\n"
                        "      parameters: {n: *n}\n")
    assert validate({"sweep": ok["sweep"]}, "config")["sweep"]["campaigns"]["c"][
        "parameters"]["n"] == [1, 2]


def test_a_config_error_message_is_bounded():
    with pytest.raises(InputError) as err:
        validate({"seed": list(range(200_000))}, "config")
    msg = str(err.value)
    assert msg.startswith("<input>: config: seed: [0, 1, 2") and len(msg) < 800
    assert "characters)" in msg
    with pytest.raises(InputError) as err:
        validate(_counters(benchmarks=["x" * 100_000 + "/"]), "config")
    assert len(str(err.value)) < 800


# ------------------------------------------- program templates: a value is never read as code

HOSTILE = ["$(touch M1)", "`touch M2`", "; touch M3", "' ; touch M4 '", '" ; touch M5 "',
           "\\$(touch M6)", "a b", "it's", "$HOME", "x\\", "*"]
#: (template, what printf prints for a value v)
FORMS = [("printf '%s|' {v}", "{}|"), ("printf '%s|' '{v}'", "{}|"),
         ("printf '%s|' \"{v}\"", "{}|"), ("printf '%s|' \"a {v} b\"", "a {} b|"),
         ("printf '%s|' 'a {v} b'", "a {} b|"), ("printf '%s|' $(printf %s {v}) x", None),
         ("printf '%s|' \"$HOME\"{v}", "{}|"), ("printf '%s|' \\'{v}", "'{}|")]


def _sweep_render(template: str, value: str) -> str:
    from perfcast.sweep.campaign_parser import parse_campaign
    from perfcast.sweep.settings import SweepSettings

    s = from_section(SweepSettings, {"campaigns": {"c": {"command": template,
                                                         "parameters": {"v": [1, 2]}}}},
                     "sweep")
    c = parse_campaign("c", s.campaigns["c"], seed=1)
    return c.render(c.command, {"v": value}, 1)


def _program_render(template: str, value: str) -> str:
    from perfcast.program import Program

    # counters (perf backend), warm-up and sensitivity render through Program
    return Program.from_config("p", {"command": template}, stage="counters.perf").render(v=value)


@pytest.mark.parametrize("renderer", [_program_render, _sweep_render])
@pytest.mark.parametrize("template, shown", FORMS)
def test_a_value_with_shell_metacharacters_is_one_literal_word(tmp_path, renderer, template,
                                                              shown):
    import subprocess

    for value in HOSTILE:
        command = renderer(template, value)
        out = subprocess.run(["/bin/sh", "-c", command], cwd=tmp_path, capture_output=True,
                             text=True, env={"HOME": "/home/x", "PATH": "/usr/bin:/bin"})
        assert sorted(p.name for p in tmp_path.iterdir()) == [], (template, value, command)
        if shown is not None:
            expected = shown.replace("{}", value).replace("$HOME\"", "")
            if template.endswith('"$HOME"{v}'):
                expected = "/home/x" + expected
            assert out.stdout == expected, (template, value, command, out.stderr)


@pytest.mark.parametrize("template, why", [
    ("echo 'unterminated {v}", "unterminated ' quote"),
    ('echo "unterminated {v}', 'unterminated " quote'),
    ("echo $'\\t{v}'", "inside $'...' quotes"),
    ('echo "$(printf %s {v})"', "command substitution inside double quotes"),
    ('echo "`printf %s {v}`"', "command substitution inside double quotes"),
    # a here-document's body is not subject to quote removal: a quoted value's $( ) runs, and
    # a value's line equal to the delimiter ends it, quoted delimiter or not
    ("cat <<EOF\nx {v}\nEOF", "placeholder {v} inside a here-document (line 2)"),
    ("cat <<'EOF'\n{v}\nEOF", "placeholder {v} inside a here-document (line 2)"),
    ('cat <<"EOF"\n{v}\nEOF', "placeholder {v} inside a here-document (line 2)"),
    ("true\ncat <<-EOF\n\t{v}\n\tEOF", "placeholder {v} inside a here-document (line 3)"),
    ("cat << E\n$(printf %s {v})\nE", "placeholder {v} inside a here-document (line 2)"),
    ("cat <<E{v}\nx\nE", "placeholder {v} in a here-document delimiter (line 1)"),
    ("cat <<EOF\nx\n", "here-document from line 1 has no line 'EOF' that ends it"),
    ("echo `printf %s {v}`", "placeholder {v} inside backticks (line 1)"),
    ('echo "${HOME:-{v}}"', "placeholder {v} inside a ${...} parameter expansion"),
    ("echo ${HOME:+{v}}", "placeholder {v} inside a ${...} parameter expansion"),
    ("echo $(( {v} + 1 ))", "placeholder {v} inside arithmetic $((...)) or ((...))"),
    ("(( {v} > 1 )) && echo big", "placeholder {v} inside arithmetic $((...)) or ((...))"),
    ("echo $[{v}]", "placeholder {v} inside arithmetic $[...]"),
])
def test_a_template_whose_quoting_cannot_be_told_is_refused_when_loaded(template, why):
    from perfcast.program import Program

    with pytest.raises(InputError, match=re.escape(why)):
        Program.from_config("p", {"command": template}, stage="warmup")
    with pytest.raises(InputError, match=re.escape(why)):  # the sweep, when it parses its
        _sweep_render(template, "1")                      # campaigns


#: values that try to run ``touch`` (M1..M9, relative to the run's directory) in any context
CODE_VALUES = [*HOSTILE, "a[$(touch M7)]", "x\nEOF\ntouch M8\nEOF", "`; touch M9; `",
               "x\nE\ntouch M8\nE", "'\ntouch M8\n'"]
#: every template form tried: each is refused when loaded or its value stays data
CODE_FORMS = [
    "cat <<EOF\n{v}\nEOF", "cat <<'EOF'\n{v}\nEOF", "cat <<-EOF\n\t{v}\n\tEOF",
    "cat <<-'E'\n\t{v}\n\tE", "cat <<E\n$(printf %s {v})\nE", "cat <<E{v}\nx\nE",
    "cat <<EOF\nbody\nEOF\nprintf %s {v}", "cat <<'EOF'\nit's\nEOF\nprintf %s {v}",
    "cat <<EOF; printf %s {v}\nbody\nEOF", "a=$(cat <<EOF\nbody\nEOF\n); printf %s {v}",
    "cat <<< {v}", "cat <<<{v}", "cat <<< \"{v}\"", "echo `printf %s {v}`",
    "echo \"`printf %s {v}`\"", "printf %s \"a {v} b\"", "printf %s \"$HOME{v}\"",
    "echo $'a' {v}", "echo $'{v}'", "echo $(( {v} ))", "echo \"$(( {v} ))\"",
    "echo $((1 << 2)) {v}", "(( {v} )) && echo y", "echo $[{v}]", "echo \"${NOPE:-{v}}\"",
    "echo ${NOPE:-{v}}", "echo \"${NOPE:-'{v}'}\"", "echo ${HOME:+\"{v}\"}",
    "echo \"${HOME:+{v}}\"",
    "printf %s $(printf %s {v})", "printf %s \"$(printf %s {v})\"", "x={v}; printf %s \"$x\"",
]


@pytest.mark.parametrize("template", CODE_FORMS)
def test_no_value_runs_as_code_whatever_the_template_form(tmp_path, template):
    """Each form is refused when loaded (an InputError naming the placeholder) or runs with
    its value as data, under /bin/sh and bash: no value's ``touch`` ever creates a file."""
    import shutil
    import subprocess

    from perfcast.program import Program

    try:
        program = Program.from_config("p", {"command": template}, stage="warmup")
    except InputError as exc:
        assert "{v}" in str(exc) or "here-document" in str(exc), exc
        return
    shells = ["/bin/sh"] + ([shutil.which("bash")] if shutil.which("bash") else [])
    for value in CODE_VALUES:
        command = program.render(v=value)
        for sh in shells:
            subprocess.run([sh, "-c", command], cwd=tmp_path, capture_output=True, timeout=30,
                           env={"HOME": "/home/x", "PATH": "/usr/bin:/bin"})
            assert list(tmp_path.iterdir()) == [], (template, value, command, sh)


def test_a_here_document_without_placeholders_keeps_its_quotes_and_braces():
    """A here-document is skipped whole: its quote does not unbalance the template, its
    ``{{x}}`` stays literal, and placeholders after it are quoted as usual."""
    import subprocess

    from perfcast.program import Program

    template = "cat <<'EOF'\nit's {{x}}\nEOF\nprintf '%s|' {v} \"{v}\""
    command = Program.from_config("p", {"command": template}, stage="warmup").render(v="a b")
    out = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True)
    assert out.stdout == "it's {x}\na b|a b|"


# ------------------------------------------------------- outputs: one line for a place unwritable


def _postprocess_argv(tmp_path: Path, out: Path | str) -> list:
    return ["postprocess", _perf_file(tmp_path / "g0.csv"), "--events", "a", "-o", out]


@pytest.mark.parametrize("out, why", [
    (lambda d: d, "is a directory"),
    (lambda d: d / "a.file" / "t.parquet", "cannot be written: "),
    (lambda d: d / ("x" * 300 + ".parquet"), "cannot be written: File name too long"),
    (lambda d: Path("/proc/perfcast-cannot/t.parquet"), "cannot be written: "),
])
def test_an_output_that_cannot_be_written_is_one_line(tmp_path, capsys, out, why):
    (tmp_path / "a.file").write_text("x")
    target = out(tmp_path)
    code, _, err = _cli(capsys, *_postprocess_argv(tmp_path, target))
    _one_line_error(code, err, f"{target}: {why}")
    assert not list(tmp_path.glob(".*.parquet*"))  # no temporary file left


def test_an_output_name_up_to_the_limit_is_written(tmp_path, capsys):
    target = tmp_path / ("x" * 247 + ".parquet")  # 255 bytes: the temporary name stays short
    code, _, err = _cli(capsys, *_postprocess_argv(tmp_path, target))
    assert code == 0 and target.exists(), err


def test_stdout_on_a_full_disk_is_one_line(tmp_path):
    import subprocess
    import sys

    f = tmp_path / "r.txt"
    rng = np.random.default_rng(0)  # i.i.d. readings: no warning (a cycle would print one)
    f.write_text("\n".join(str(1 + 0.01 * v) for v in rng.normal(size=100)) + "\n")
    # stdout buffered, as Python has it unless told otherwise: the output is written at the
    # last flush
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "perfcast", "ci", str(f)], stdout=full,
                           stderr=subprocess.PIPE, text=True, env=env)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip() == "perfcast ci: error: cannot write its output: No space left on " \
                               "device"


@pytest.mark.parametrize("command", ["wps", "ci", "watch"])
def test_binary_bytes_on_stdin_are_one_line(command):
    import os
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "perfcast", command, "-"],
                       input=bytes(range(128, 256)) * 4, capture_output=True,
                       env=os.environ | {"PYTHONIOENCODING": "utf-8:strict"})
    err = r.stderr.decode()
    assert r.returncode == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "<stdin>" in err and "not" in err and "text" in err, err


def test_an_output_that_is_an_input_is_refused(tmp_path, capsys):
    g0 = _perf_file(tmp_path / "g0.csv")
    before = g0.read_text()
    code, _, err = _cli(capsys, "postprocess", g0, "--events", "a", "-o", tmp_path / "." / "g0.csv")
    _one_line_error(code, err, "is the input", "would overwrite")
    assert g0.read_text() == before
    t = tmp_path / "t.parquet"
    assert _cli(capsys, "postprocess", g0, "--events", "a", "-o", t)[0] == 0
    code, _, err = _cli(capsys, "align", t, t, "-o", t)
    _one_line_error(code, err, "is the input")
    code, _, err = _cli(capsys, "predict", t, "--model", tmp_path / "m", "-o", t)
    _one_line_error(code, err, "is the input")
    code, _, err = _cli(capsys, "predict", t, "--model", tmp_path / "m.json", "-o",
                        tmp_path / "m.parquet")
    _one_line_error(code, err, "the summary (-o with .json) of -o", "m.json")


@pytest.mark.parametrize("out", ["s.txt", "s", "s.json"])
def test_sweep_import_writes_only_the_formats_its_suffix_says(tmp_path, capsys, out):
    run = tmp_path / "arpe" / "1-2" / "1"
    run.mkdir(parents=True)
    (run / "APRE_timed.txt").write_text("1.5 0.5 0.1 1 2\n")
    code, _, err = _cli(capsys, "sweep-import", tmp_path / "arpe", "--parameters", "a", "b",
                        "-o", tmp_path / out)
    _one_line_error(code, err, f"-o '{tmp_path / out}'", "expected .parquet or .csv")
    assert not (tmp_path / out).exists()


# ------------------------------------------------------------ counters that are what they say

UNCORE = "cha/event=0x34,umask=0x1fe001/"


def test_events_on_the_command_line_keep_an_uncore_name_with_commas(tmp_path, capsys):
    from perfcast.counters.events import split_event_list

    assert split_event_list(f"a,{UNCORE},cycles:u,,cpu_core/instructions/u") == \
        ["a", UNCORE, "cycles:u", "cpu_core/instructions/u"]
    f = _perf_file(tmp_path / "g0.csv")
    f.write_text(f.read_text().replace(",a,", f",{UNCORE},"))
    out = tmp_path / "t.parquet"
    code, _, err = _cli(capsys, "postprocess", f, "--events", f"{UNCORE}", "-o", out)
    assert code == 0, err
    assert read_parquet(out)[f"{UNCORE}_pki"].eq(5.0).all()


def test_a_counter_not_supported_is_flagged_in_the_table_and_the_log(tmp_path, caplog):
    f = _perf_file(tmp_path / "g0.csv")
    f.write_text(re.sub(r"^( *[0-9.]+),[0-9]+,,a,[0-9]+,", r"\1,<not supported>,,a,0,",
                        f.read_text(), flags=re.M))
    assert ",<not supported>,,a,0,100.00," in f.read_text()  # as perf writes it
    with caplog.at_level(logging.WARNING):
        t = postprocess([f], from_section(PostprocessSettings, {"events": ["a"]},
                                          "counters_postprocess"))
    assert t["a_pki"].isna().all()
    assert (t["a_pct_running"] == 0).all() and t["multiplexed"].all()
    assert f"{f}: event 'a' reads <not supported> in every interval" in caplog.text


@pytest.mark.parametrize("cli", [False, True])
def test_a_counter_not_counted_in_any_interval_is_refused_naming_it(capsys, tmp_path, cli):
    # perf never scheduled it (a group larger than the PMU's counters): exit 0 and an all-NaN
    # feature column before, with only the multiplexed intervals hinting at it
    f = _perf_file(tmp_path / "g0.csv")
    f.write_text(re.sub(r"^( *[0-9.]+),[0-9]+,,a,[0-9]+,[0-9.]+,", r"\1,<not counted>,,a,0,0.00,",
                        f.read_text(), flags=re.M))
    assert ",<not counted>,,a,0,0.00," in f.read_text()
    want = f"{f}: event 'a' was not counted in any of its 8 intervals"
    if cli:
        code, _, err = _cli(capsys, "postprocess", f, "--events", "a", "-o", tmp_path / "t.pq")
        _one_line_error(code, err, want)
        assert not (tmp_path / "t.pq").exists()
    else:
        with pytest.raises(InputError, match=re.escape(want)):
            postprocess([f], from_section(PostprocessSettings, {"events": ["a"]},
                                          "counters_postprocess"))


def test_a_counter_counted_in_some_intervals_keeps_them(tmp_path):
    f = _perf_file(tmp_path / "g0.csv")
    f.write_text(re.sub(r"^( *0\.[1-7]0*),[0-9]+,,a,[0-9]+,[0-9.]+,",
                        r"\1,<not counted>,,a,0,0.00,", f.read_text(), flags=re.M))
    t = postprocess([f], from_section(PostprocessSettings, {"events": ["a"]},
                                      "counters_postprocess"))
    assert t["a_pki"].isna().sum() == len(t) - 1 and t["a_pki"].iloc[-1] == 5.0


def test_a_selection_that_keeps_a_whole_uncore_count_says_so(tmp_path, caplog):
    from perfcast.counters.perfstat import parse_perf_stat

    data = Path(__file__).parents[1] / "data" / "perf" / "no_aggr.csv"
    with caplog.at_level(logging.WARNING):
        parse_perf_stat(data, select=["CPU1"])
    assert caplog.text == ""  # every event has CPU1 rows: nothing kept whole
    lines = []
    for ln in data.read_text().splitlines():
        lines.append(ln)
        if ",CPU0," in ln and ",task-clock," in ln:
            lines.append(f"{ln.split(',')[0]},CPU0,1234,,uncore_imc/cas_count_read/,100,100.00,,")
    f = tmp_path / "uncore.csv"
    f.write_text("\n".join(lines) + "\n")
    with caplog.at_level(logging.WARNING):
        parse_perf_stat(f, select=["CPU1"])
    assert "event 'uncore_imc/cas_count_read/' is reported on none of the selected ids " \
           "['CPU1'] (on ['CPU0'])" in caplog.text


def test_errors_about_an_imported_file_name_the_users_file_and_line(tmp_path):
    from perfcast.counters.collect import import_perf_csv

    files = _groups(tmp_path)
    mine = tmp_path / "mine"
    mine.mkdir()
    copies = []
    for k, f in enumerate(files):
        src = mine / f"g{k}.csv"
        src.write_text((_cut(f, 0.8) if k == 1 else f).read_text())
        copies.append(tmp_path / "results" / "raw" / f"group{k}.csv")
        import_perf_csv(src, copies[-1], [])
    with pytest.raises(InputError, match=rf"^{re.escape(str(mine / 'g1.csv'))}: this group run "
                                         r"retired"):
        _pp(copies)
    # a line-level error in the copy names the user's line, not the copy's
    text = copies[0].read_text().splitlines()  # line k + 1 of the copy is line k of mine
    k = next(i for i, ln in enumerate(text) if ",cycles," in ln and i > 5)
    text[k] = text[k].split(",")[0] + ",twelve,,cycles,1,100.00,,"
    copies[0].write_text("\n".join(text) + "\n")
    with pytest.raises(InputError, match=rf"^{re.escape(str(mine / 'g0.csv'))}, line {k}: "
                                         r"count 'twelve' is not a number"):
        _pp(copies)
