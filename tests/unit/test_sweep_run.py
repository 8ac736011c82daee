"""Real runs and their sensors: os.wait4 through the shim, perf software events, custom
sensors, heartbeats, before/after commands, failures, timeouts, fail-fast, ARPE import."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from perfcast.errors import HostCapabilityError, InputError
from perfcast.process import run_measured
from perfcast.settings import as_params, build
from perfcast.sweep import arpe, runner, sensors
from perfcast.sweep.campaign import Sensors
from perfcast.sweep.job_settings import RunSettings
from perfcast.sweep.table import runs_frame

PY = sys.executable
HAS_PERF = shutil.which("perf") is not None
needs_perf = pytest.mark.skipif(not HAS_PERF, reason="perf is not installed")


def sensor_set(**given):
    """A run's sensors: none but those ``given``."""
    return build(Sensors, {"perf_events": [], "rapl": False, "custom": {}, "heartbeat": None,
                           **given})


def params(command, sensors_=None, **kw):
    """The settings of one run (rule sweep_run's), built as the workflow builds them."""
    p = {"campaign": "t", "point": "x~1", "iteration": 1, "parameters": {"x": 1},
         "command": command, "before": "", "after": "", "env": {}, "cwd": None,
         "timeout_s": 30,
         "fail_fast": False, "sensors": as_params(sensor_set(**(sensors_ or {}))),
         "stop_marker": "/nonexistent/STOPPED.json", "failed_record": "/nonexistent/f.json"}
    p.update(kw)
    return build(RunSettings, p)


def matmul(size, workers=1, units=4):
    return f"{PY} -m perfcast.workloads.matmul --size {size} --workers {workers} --units {units}"


@needs_perf
def test_workload_run_records_every_sensor():
    rec = runner.run_point(params(matmul(256, units=5), {
        "perf_events": ["task-clock", "page-faults", "context-switches"],
        "heartbeat": r"^heartbeat (?P<value>\d+)"}))
    assert rec["status"] == "ok" and rec["returncode"] == 0
    assert rec["wall_s"] > 0 and rec["user_s"] > 0 and rec["cpu_s"] == pytest.approx(
        rec["user_s"] + rec["sys_s"])
    assert rec["cpu_util"] == pytest.approx(rec["cpu_s"] / rec["wall_s"])
    hb = rec["heartbeat"]
    assert hb["hb_count"] == 5 and len(hb["times"]) == 5
    assert hb["times"] == sorted(hb["times"]) and hb["times"][-1] <= rec["wall_s"] + 1.0
    assert hb["hb_value_mean"] == pytest.approx(2.0)  # units 0..4
    perf = rec["perf"]
    assert perf["perf_page_faults"] > 100
    # task-clock (ms of CPU) and wait4's user+sys see the same process tree
    assert perf["perf_task_clock"] / 1000 == pytest.approx(rec["cpu_s"], rel=0.5)


def test_max_rss_is_the_programs_not_the_parents():
    """A child forked from a big process inherits its peak RSS in ru_maxrss; the shim does not."""
    ballast = np.ones(40_000_000)  # ~305 MiB in this (parent) process
    ballast[::512] = 2.0
    assert run_measured("true", own_rusage=False).max_rss_kb > 250_000  # what the shim avoids
    assert run_measured("true").max_rss_kb < 50_000  # the shared default measures the program
    small = runner.run_point(params("true"))["max_rss_kb"]
    assert small < 50_000
    big = runner.run_point(params(f"{PY} -c 'import numpy as n; a = n.ones(12_500_000); "
                                  f"a[::512] = 2'"))["max_rss_kb"]
    assert 100_000 < big < 250_000  # ~98 MiB array + interpreter
    del ballast


def test_failure_timeout_and_signal_are_records():
    failed = runner.run_point(params("echo oops >&2; exit 3"))
    assert failed["status"] == "failed" and failed["returncode"] == 3
    assert "oops" in failed["stderr_tail"]
    slow = runner.run_point(params("sleep 60", timeout_s=0.5))
    # ended by the timeout, long before the command would have ended by itself
    assert slow["status"] == "timeout" and slow["timed_out"] and 0.5 <= slow["wall_s"] < 60
    killed = runner.run_point(params("kill -TERM $$"))
    assert killed["status"] == "failed" and killed["signal"] == 15


@needs_perf
def test_perf_does_not_hide_the_exit_status():
    """perf stat itself returns 0 for `exit 5` now and then (measured: 16 of 200 runs here)
    and always for a child killed by a signal; the record has the command's own status."""
    codes = {runner.run_point(params("exit 5", {"perf_events": ["task-clock"]}))["returncode"]
             for _ in range(25)}
    assert codes == {5}
    rec = runner.run_point(params("sh -c 'kill -SEGV $$'", {"perf_events": ["task-clock"]}))
    assert rec["status"] == "failed" and rec["returncode"] == 128 + 11


def test_before_after_env_and_custom_sensors(tmp_path):
    counter = tmp_path / "counter"
    counter.write_text("")
    p = params(f"test -f {tmp_path}/ready && printf 'a\\nb\\nc\\n' >> {counter} "
               f"&& test $PERFCAST_PARAM_X = 1 && test $MYVAR = hello",
               {"custom": {"lines": {"command": f"wc -l < {counter}", "mode": "delta"},
                           "answer": {"command": "echo 'note'; echo '42 units'",
                                      "mode": "after"}}},
               before=f"touch {tmp_path}/ready", after=f"rm {tmp_path}/ready",
               env={"MYVAR": "hello"})
    rec = runner.run_point(p)
    assert rec["status"] == "ok", rec["errors"]
    assert rec["custom"] == {"lines": 3.0, "answer": 42.0}
    assert not (tmp_path / "ready").exists()  # after ran
    assert rec["before"]["returncode"] == 0 and rec["after"]["returncode"] == 0


def test_before_or_after_failure_marks_the_run(tmp_path):
    rec = runner.run_point(params(f"touch {tmp_path}/ran", before="exit 1"))
    assert rec["status"] == "before_failed" and not (tmp_path / "ran").exists()
    rec = runner.run_point(params("true", after="exit 2"))
    assert rec["status"] == "after_failed" and rec["returncode"] == 0
    rec = runner.run_point(params("true", {"custom": {"bad": {"command": "echo nan-ish",
                                                              "mode": "after"}}}))
    assert rec["status"] == "sensor_failed" and "not a number" in rec["errors"][0]


def test_fail_fast_stops_only_this_invocation(tmp_path):
    marker, failed = tmp_path / "STOPPED.json", tmp_path / "failed" / "x~1" / "iter1.json"
    out = tmp_path / "runs" / "x~1" / "iter1.json"
    with pytest.raises(runner.RunFailed, match="exit status 7"):
        runner.run_and_record(params("exit 7", fail_fast=True, stop_marker=str(marker),
                                     failed_record=str(failed)), out, session="s1")
    assert not out.exists() and json.loads(failed.read_text())["returncode"] == 7
    with pytest.raises(runner.CampaignStopped, match="stopped \\(fail_fast\\)"):
        runner.run_and_record(params("true", point="x~2", stop_marker=str(marker),
                                     failed_record=str(tmp_path / "f2.json")),
                              tmp_path / "o2.json", session="s1")
    rec = runner.run_and_record(params("true", stop_marker=str(marker),
                                       failed_record=str(tmp_path / "f3.json")),
                                tmp_path / "o3.json", session="s2")
    assert rec["status"] == "ok"
    rec = runner.run_and_record(params("exit 7", stop_marker=str(tmp_path / "none.json"),
                                       failed_record=str(failed)), out, session="s3")
    assert json.loads(out.read_text())["status"] == "failed"  # recorded, campaign goes on


# --- sensor checks ----------------------------------------------------------------------------


@needs_perf
def test_perf_probe_accepts_software_and_refuses_unknown_events():
    assert sensors.probe_perf_events(["task-clock", "page-faults"]) == {
        "task-clock": "supported", "page-faults": "supported"}
    with pytest.raises(HostCapabilityError, match="no-such-event"):
        sensors.probe_perf_events(["no-such-event"])


@needs_perf
def test_perf_probe_agrees_with_perf_on_hardware_events(tmp_path):
    """On a host without PMU (this VM) `cycles` reads <not supported> and is refused."""
    out = tmp_path / "p.csv"
    subprocess.run(["perf", "stat", "-x", ",", "-o", str(out), "-e", "cycles", "--", "true"],
                   check=False)
    supported = "<not supported>" not in out.read_text()
    if supported:
        assert sensors.probe_perf_events(["cycles"]) == {"cycles": "supported"}
    else:
        with pytest.raises(HostCapabilityError, match="cycles reads <not supported>"):
            sensors.probe_perf_events(["cycles"])


def test_check_sensors_refuses_every_unavailable_sensor_at_once():
    with pytest.raises(HostCapabilityError) as exc:
        sensors.check_sensors(sensor_set(perf_events=["no-such-event"], rapl=True,
                                         custom={"meter": {"command": "exit 1",
                                                           "mode": "after"}}),
                              powercap_root="/nonexistent/powercap")
    msg = str(exc.value)
    assert "campaign not started" in msg and "no-such-event" in msg
    assert "/nonexistent/powercap does not exist" in msg and "custom sensor 'meter'" in msg


def test_rapl_on_this_host_matches_what_is_readable():
    root = Path(sensors.POWERCAP_ROOT)
    readable = root.is_dir() and any(
        (d / "energy_uj").exists() and _readable(d / "energy_uj") for d in root.iterdir())
    if readable:
        assert sensors.check_sensors(sensor_set(rapl=True))["rapl_zones"]
    else:
        with pytest.raises(HostCapabilityError, match="RAPL"):
            sensors.check_sensors(sensor_set(rapl=True))


def _readable(path):
    try:
        path.read_text()
        return True
    except OSError:
        return False


def fake_powercap(root: Path, pkg_uj: int, dram_uj: int, max_uj: int = 2**32) -> None:
    """A powercap tree in the kernel's layout. A fake: this VM has no RAPL (see the test
    above, which checks the real /sys/class/powercap)."""
    for d, name, e in (("intel-rapl:0", "package-0", pkg_uj),
                       ("intel-rapl:0:0", "dram", dram_uj)):
        (root / d).mkdir(parents=True, exist_ok=True)
        (root / d / "name").write_text(name + "\n")
        (root / d / "energy_uj").write_text(f"{e}\n")
        (root / d / "max_energy_range_uj").write_text(f"{max_uj}\n")


def test_rapl_energy_unwraps_the_counter(tmp_path):
    fake_powercap(tmp_path, pkg_uj=2**32 - 1_000_000, dram_uj=5_000_000)
    zones = sensors.rapl_zones(tmp_path)
    assert sorted(zones) == ["package-0", "package-0-dram"]
    before = sensors.read_rapl(zones)
    fake_powercap(tmp_path, pkg_uj=2_000_000, dram_uj=6_500_000)
    energy = sensors.rapl_energy(before, sensors.read_rapl(zones))
    assert energy == {"package-0": pytest.approx(3.0), "package-0-dram": pytest.approx(1.5)}
    cols = sensors.rapl_columns(energy, 2.0, sensors.top_zones(zones))
    assert cols["energy_j"] == pytest.approx(3.0)  # the package; its dram sub-zone is inside
    assert cols["power_w"] == pytest.approx(1.5)
    assert cols["energy_package_0_dram_j"] == pytest.approx(1.5)


def test_heartbeat_summary_rate():
    lines = [(0.5, "starting"), (1.0, "heartbeat 0"), (1.5, "heartbeat 1"), (2.0, "noise"),
             (2.0, "heartbeat 2"), (3.0, "heartbeat 3")]
    hb = sensors.heartbeat_summary(lines, r"^heartbeat")
    assert hb["hb_count"] == 4 and hb["hb_first_s"] == 1.0
    assert hb["hb_rate"] == pytest.approx(3 / 2.0)
    gaps = np.array([0.5, 0.5, 1.0])
    assert hb["hb_interval_cv"] == pytest.approx(gaps.std() / gaps.mean())


@needs_perf
def test_parse_real_perf_csv(tmp_path):
    out = tmp_path / "p.csv"
    subprocess.run(["perf", "stat", "-x", ",", "-o", str(out), "-e",
                    "task-clock,page-faults,cycles", "--", "true"], check=True)
    values = sensors.parse_perf_csv(out.read_text(), ["task-clock", "page-faults", "cycles"])
    assert values["task-clock"] > 0 and values["page-faults"] > 0
    if "<not supported>" in out.read_text():
        assert values["cycles"] is None  # never a zero for an event the host cannot count


# --- ARPE import ------------------------------------------------------------------------------


def arpe_campaign(root: Path, values, iterations=2) -> None:
    """A results tree made the way ARPE's execute.bash and after.bash make it: bash's
    `time -p` through `awk '{print $2 $4 $6}'`, then `echo $REAL $USER $SYSTEM $PAR_SPACED`."""
    for combo in values:
        par_spaced = " ".join(str(v) for v in combo)
        cfg = root / "-".join(str(v) for v in combo)
        for i in range(1, iterations + 1):
            d = cfg / str(i)
            d.mkdir(parents=True)
            seconds = 0.01 * combo[0]
            script = (f"(time -p sleep {seconds} >/dev/null 2>/dev/null) 2>&1 "
                      "| awk '{print $2 $4 $6}' > timed\n"
                      "REAL=`head -n1 timed`; USER=`head -n2 timed | tail -n1`; "
                      "SYSTEM=`tail -n1 timed`\n"
                      f"echo $REAL $USER $SYSTEM {par_spaced} > APRE_timed.txt; rm timed\n")
            subprocess.run(["bash", "-c", script], cwd=d, check=True)


@pytest.mark.skipif(shutil.which("bash") is None, reason="ARPE's scripts need bash")
def test_import_of_an_arpe_campaign(tmp_path):
    values = [(t, s) for t in (1, 5, 10) for s in (2, 4)]
    arpe_campaign(tmp_path, values)
    (tmp_path / "10-4" / "3").mkdir()  # a run whose after-phase never wrote anything
    df = arpe.import_arpe(tmp_path, ["threads", "size"], "old")
    assert len(df) == 13
    ok = df[df["status"] == "ok"]
    assert len(ok) == 12 and (df["status"] == "missing").sum() == 1
    assert ok[["threads", "size"]].drop_duplicates().shape[0] == 6
    assert ok["point"].iloc[0] == "threads~1_size~2"
    # time -p has 2 decimals; sleep 0.1 s takes 0.10 s of real time (plus scheduling)
    slow = ok[ok["threads"] == 10]["wall_s"]
    assert ((slow >= 0.1) & (slow < 1.0)).all()
    assert (ok["user_s"] >= 0).all() and set(ok["iteration"]) == {1, 2}


def test_arpe_import_refuses_mismatched_names(tmp_path):
    d = tmp_path / "1-2" / "1"
    d.mkdir(parents=True)
    (d / arpe.TIMED).write_text("0.50 0.40 0.01 1 2\n")
    with pytest.raises(InputError, match="2 parameter values"):
        arpe.import_arpe(tmp_path, ["threads"], "x")
    (d / arpe.TIMED).write_text("0.50 0.40 0.01 1 3\n")
    with pytest.raises(InputError, match="disagree with directory"):
        arpe.import_arpe(tmp_path, ["a", "b"], "x")
    (d / arpe.TIMED).write_text("0.50 0.40 0.01 1 2\n")
    df = arpe.import_arpe(tmp_path, ["a", "b"], "x")
    assert df.loc[0, "cpu_util"] == pytest.approx(0.82)


def test_arpe_import_compares_values_with_the_directory_as_numbers(tmp_path):
    """ARPE writes each value twice, in APRE_timed.txt and in the directory name, as the config
    spelled it: ``2.50`` in both read as 2.5, which the old check, comparing text, took for a
    disagreement with the directory '2.50'."""
    for v in ("1.25", "2.50", "5.00", "10"):
        for i in (1, 2):
            d = tmp_path / v / str(i)
            d.mkdir(parents=True)
            (d / arpe.TIMED).write_text(f"2 1 0.1 {v}\n")
    df = arpe.import_arpe(tmp_path, ["x"], "x")
    assert sorted(df["x"].unique().tolist()) == [1.25, 2.5, 5.0, 10]
    assert len(df) == 8 and (df["status"] == "ok").all()
    root = tmp_path / "three"
    d = root / "4-2,5-a.y4m" / "1"  # a decimal comma and a level in the name
    d.mkdir(parents=True)
    (d / arpe.TIMED).write_text("2 1 0.1 4.0 2.50 a.y4m\n")
    df = arpe.import_arpe(root, ["p", "q", "r"], "x")
    assert df[["p", "q", "r"]].values.tolist() == [[4.0, 2.5, "a.y4m"]]
    for other in ("4.0 2.49 a.y4m", "4.0 2.50 b.y4m"):  # a different number or level
        (d / arpe.TIMED).write_text(f"2 1 0.1 {other}\n")
        with pytest.raises(InputError, match="disagree with directory '4-2,5-a.y4m'"):
            arpe.import_arpe(root, ["p", "q", "r"], "x")


def test_parse_time_p_and_pidstat():
    assert arpe.parse_time_p("real 1.50\nuser 1.00\nsys 0.25\n", Path("t")) == (1.5, 1.0, 0.25)
    assert arpe.parse_time_p("1.50\n1.00\n0.25\n", Path("t")) == (1.5, 1.0, 0.25)
    # pidstat 12.x layout (sysstat documentation): the Average line closes the report
    text = ("Linux 5.15.0 (host) \t01/02/2024 \t_x86_64_\t(8 CPU)\n\n"
            "10:00:01 AM   UID       PID    %usr %system  %guest   %wait    %CPU   CPU  Command\n"
            "10:00:02 AM     0      4242  150.00   10.00    0.00    0.00  160.00     3  java\n"
            "Average:        0      4242  150.00   10.00    0.00    0.00  160.00     -  java\n")
    assert arpe.parse_pidstat(text) == pytest.approx(1.6)


def test_cli_sweep_import(tmp_path):
    arpe_campaign(tmp_path / "results", [(1, 2), (2, 2)], iterations=1)
    exe = Path(sys.executable).parent / "perfcast"
    out = tmp_path / "runs.parquet"
    proc = subprocess.run([str(exe), "sweep-import", str(tmp_path / "results"),
                           "--parameters", "threads", "size", "-o", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["n_runs"] == 2
    assert pd.read_parquet(out)["threads"].tolist() == [1, 2]


def test_cli_sweep_import_writes_what_the_rule_writes(tmp_path, capsys):
    """perfcast sweep-import and rule sweep_import: the same settings (built through the
    schema and the campaign parser, passed as the rule's params), the same function, the same
    table and metadata."""
    from perfcast.cli import main
    from perfcast.io import parquet_metadata
    from perfcast.settings import validate
    from perfcast.sweep.campaign_parser import parse_sweep
    from perfcast.sweep.job_settings import ImportTableSettings
    from perfcast.sweep.rules import import_table

    arpe_campaign(tmp_path / "results", [(1, 2), (2, 2), (4, 8)], iterations=2)
    section = {"imports": {"old": {"path": str(tmp_path / "results"),
                                   "parameters": ["threads", "size"]}}}
    params = as_params(parse_sweep(validate(section, "sweep"), seed=1).import_settings("old"))
    rule_out = tmp_path / "rule.parquet"
    import_table(build(ImportTableSettings, params), out=rule_out)
    cli_out = tmp_path / "cli.parquet"
    assert main(["sweep-import", str(tmp_path / "results"), "--parameters", "threads", "size",
                 "--campaign", "old", "-o", str(cli_out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    meta = parquet_metadata(rule_out)
    assert parquet_metadata(cli_out) == meta
    assert meta["source"] == f"ARPE results at {tmp_path / 'results'}"
    assert meta["parameters"] == ["threads", "size"] and meta["n_runs"] == 6
    assert printed == {"out": str(cli_out), **{k: meta[k] for k in
                                               ("n_runs", "status", "n_configurations",
                                                "wall_s_total")}}
    pd.testing.assert_frame_equal(pd.read_parquet(cli_out), pd.read_parquet(rule_out))


def test_cli_sweep_import_checks_names_as_the_workflow(tmp_path, capsys):
    """The flags go through the sweep schema and the import check, as a config's imports."""
    from perfcast.cli import main

    arpe_campaign(tmp_path / "results", [(1, 2)], iterations=1)
    for args, words in ((["--parameters", "1x", "size"], "'1x' does not match"),
                        (["--parameters", "wall_s", "size"], "are columns of the run table"),
                        (["--parameters", "a", "b", "--campaign", "a/b"], "'a/b' does not match")):
        code = main(["sweep-import", str(tmp_path / "results"), *args,
                     "-o", str(tmp_path / "o.parquet")])
        err = capsys.readouterr().err
        assert code == 2 and words in err, err
    assert not (tmp_path / "o.parquet").exists()


def test_runs_frame_sorts_and_flattens():
    recs = [{"campaign": "c", "point": f"n~{n}", "iteration": i, "parameters": {"n": n},
             "status": "ok", "returncode": 0, "wall_s": n + i, "perf": {"perf_x": 1.0},
             "custom": {"m": None}, "heartbeat": {"hb_count": 2, "times": [0.1, 0.2]}}
            for n in (10, 2) for i in (2, 1)]
    df = runs_frame(recs, ["n"])
    assert df["n"].tolist() == [2, 2, 10, 10] and df["iteration"].tolist() == [1, 2, 1, 2]
    assert "times" not in df.columns and df["m"].isna().all() and df["perf_x"].eq(1).all()
