"""No silent wrong numbers, no tracebacks: damaged and unusual inputs end in a one-line error
naming the file (and line or key), through the real readers, stages and command line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from perfcast.checks import MAX_MAGNITUDE, require_values
from perfcast.cli import main
from perfcast.counters.collect import collect_simulated
from perfcast.counters.events import BaseEvents, make_groups
from perfcast.counters.rules import postprocess_files
from perfcast.counters.settings import (
    CollectSettings,
    PostprocessRunSettings,
    PostprocessSettings,
    SimulatedRun,
    SimulateSettings,
)
from perfcast.errors import InputError
from perfcast.io import read_parquet, write_parquet
from perfcast.model.rules import (
    align_files,
    evaluate_files,
    predict_files,
    train_files,
    trainset_files,
)
from perfcast.model.settings import (
    AlignRunSettings,
    AlignSettings,
    EvaluateSettings,
    KnnSettings,
    PredictRunSettings,
    PredictSettings,
    TrainsetSettings,
    TrainSettings,
)
from perfcast.settings import SCHEMA_DIR, check_value, from_section, validate

BASE = BaseEvents("instructions", "cycles")
EVENTS = ["l1d_cache_refill", "br_mis_pred", "stall_backend"]
BENCHMARKS = ["gcc", "mcf", "omnetpp"]
CLOCK = {"g2": 2.5, "g3": 2.6}


def _simulated(events, role: str, *, seed: int, scale: float, clock_ghz: float | None,
               noise: float = 0.05, jitter: float = 0.02,
               run_variation: float = 0.0) -> CollectSettings:
    """The collect settings of one simulated group run (as collect_settings builds them)."""
    return CollectSettings(
        backend="simulate", interval_ms=100, base_events=BASE, events=tuple(events), perf=None,
        simulated=SimulatedRun(role=role, clock_ghz=clock_ghz, seed=seed,
                               simulate=SimulateSettings(scale, noise, jitter, run_variation)))


def _run(gen: str, bench: str, root: Path, *, unsupported: str | None = None) -> Path:
    """One simulated run in perf's CSV format, post-processed by the real stage; with
    ``unsupported``, that counter reads ``<not supported>`` in every interval (as perf writes
    it for an event the PMU lacks)."""
    files = []
    for k, g in enumerate(make_groups(EVENTS, 2, BASE)):
        f = root / "raw" / gen / bench / f"group{k}.csv"
        collect_simulated(_simulated(g, "old" if gen == "g2" else "new", seed=7, scale=0.08,
                                     clock_ghz=CLOCK[gen]), f, benchmark=bench, group=k)
        if unsupported:
            f.write_text(re.sub(rf"^( *[0-9.]+),[0-9]+,,{unsupported},[0-9]+,[0-9.]+",
                                rf"\1,<not supported>,,{unsupported},0,100.00",
                                f.read_text(), flags=re.M))
        files.append(f)
    out = root / "counters" / gen / f"{bench}.parquet"
    settings = from_section(PostprocessSettings, {"events": EVENTS}, "counters_postprocess")
    postprocess_files(PostprocessRunSettings(settings, None), files, out)
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """Every benchmark on both generations, aligned, a training set and a model."""
    root = tmp_path_factory.mktemp("runs")
    for b in BENCHMARKS:
        for g in CLOCK:
            _run(g, b, root)
        align_files(AlignRunSettings(from_section(AlignSettings, {}, "align"), b, ("g2", "g3")),
                    str(root / "counters/g2" / f"{b}.parquet"),
                    str(root / "counters/g3" / f"{b}.parquet"),
                    str(root / "aligned" / f"{b}.parquet"), None)
    _trainset(root, root / "train.parquet")
    train_files(TrainSettings(_knn(), tuple(BENCHMARKS), CLOCK["g3"]),
                str(root / "train.parquet"),
                [str(root / "counters/g2" / f"{b}.parquet") for b in BENCHMARKS],
                [str(root / "counters/g3" / f"{b}.parquet") for b in BENCHMARKS],
                str(root / "model.parquet"), str(root / "model.json"))
    return root


def _knn() -> KnnSettings:
    return from_section(KnnSettings, {"n_neighbors": [3, 9], "weights": ["uniform"],
                                      "cv_folds": 2}, "model")


def _evaluate() -> EvaluateSettings:
    return EvaluateSettings(_knn(), tuple(BENCHMARKS), clock_new_ghz=2.6, simulated=True,
                            stable_not_run=None)


def _trainset(root: Path, out: Path, old: dict[str, Path] | None = None) -> None:
    olds = [str((old or {}).get(b, root / "counters/g2" / f"{b}.parquet")) for b in BENCHMARKS]
    trainset_files(TrainsetSettings(tuple(BENCHMARKS)),
                   [str(root / "aligned" / f"{b}.parquet") for b in BENCHMARKS], olds,
                   str(out), str(out.with_suffix(".png")), phases=None)


# ------------------------------------------------------------- a benchmark never silently leaves


def test_a_counter_never_counted_fails_the_training_set_naming_file_and_counter(runs, tmp_path):
    bad = _run("g2", "mcf", tmp_path, unsupported="br_mis_pred")
    assert read_parquet(bad)["br_mis_pred_pki"].isna().all()  # what post-processing gives
    with pytest.raises(InputError, match=rf"{re.escape(str(bad))}: counter 'br_mis_pred' "
                                         r"\(br_mis_pred_pki\) has no reading in any of its "
                                         r"\d+ intervals \(perf's <not supported>"):
        _trainset(runs, tmp_path / "train.parquet", {"mcf": bad})
    assert not (tmp_path / "train.parquet").exists()
    _trainset(runs, tmp_path / "ok.parquet")  # the intact runs: every benchmark has its rows
    assert sorted(read_parquet(tmp_path / "ok.parquet")["benchmark"].unique()) == BENCHMARKS


def test_the_evaluation_refuses_a_training_set_without_a_benchmark(runs, tmp_path):
    train = read_parquet(runs / "train.parquet")
    partial = tmp_path / "train.parquet"
    write_parquet(train[train["benchmark"] != "mcf"], partial)
    out = {k: str(tmp_path / f"ev.{k}") for k in ("parquet", "csv", "md", "png")}
    with pytest.raises(InputError, match=r"no training row of benchmark\(s\) \['mcf'\]"):
        evaluate_files(_evaluate(), str(partial), [str(runs / "counters/g2" / f"{b}.parquet")
                                                   for b in BENCHMARKS],
                       [str(runs / "counters/g3" / f"{b}.parquet") for b in BENCHMARKS],
                       out["parquet"], out["csv"], out["md"], out["png"], phases=None)
    assert not any(Path(p).exists() for p in out.values())


# ------------------------------------------------------------------------- predict's invariants


def _predict(runs: Path, counters: Path, out: Path, clock: float | None = 2.6,
             ipc_range: list[float] | None = None) -> dict:
    settings = from_section(PredictSettings, {} if ipc_range is None else
                            {"ipc_range": ipc_range}, "predict")
    return predict_files(PredictRunSettings(settings, "mcf", clock),
                         str(runs / "model.parquet"), str(counters), str(out),
                         str(out.with_suffix(".json")))


def test_prediction_is_finite_positive_and_plausible(runs, tmp_path):
    info = _predict(runs, runs / "counters/g2/mcf.parquet", tmp_path / "p.parquet")
    pred = read_parquet(tmp_path / "p.parquet")
    for c in ("ipc_new_pred", "cycles_new_pred", "runtime_new_pred_s"):
        assert np.isfinite(pred[c]).all() and (pred[c] > 0).all()
    # the runtime is the predicted cycles at the new clock, and near the measured new run's
    new = read_parquet(runs / "counters/g3/mcf.parquet")
    assert info["predicted_new_runtime_s"] == pytest.approx(pred["cycles_new_pred"].sum() / 2.6e9)
    assert info["predicted_new_runtime_s"] == pytest.approx(new["duration_s"].sum(), rel=0.15)
    assert info["ipc_range"] == [0.001, 16]


def test_predict_refuses_a_counter_without_readings_instead_of_runtime_zero(runs, tmp_path):
    bad = _run("g2", "mcf", tmp_path, unsupported="stall_backend")
    with pytest.raises(InputError, match=rf"{re.escape(str(bad))}: counter 'stall_backend'"):
        _predict(runs, bad, tmp_path / "p.parquet")
    assert not (tmp_path / "p.parquet").exists() and not (tmp_path / "p.json").exists()


def test_an_implausible_ipc_fails_naming_file_interval_and_value(runs, tmp_path):
    counters = runs / "counters/g2/mcf.parquet"
    with pytest.raises(InputError, match=rf"{re.escape(str(counters))}: predicted "
                                         r"new-generation IPC [0-9.]+ in interval \d+ .*"
                                         r"expected a finite 0.001 <= .* <= 0.1\)"):
        _predict(runs, counters, tmp_path / "p.parquet", ipc_range=[0.001, 0.1])
    with pytest.raises(InputError, match=r"ipc_range: \[2, 1\] is empty"):
        from_section(PredictSettings, {"ipc_range": [2, 1]}, "predict")
    with pytest.raises(InputError, match=r"predict\.ipc_range\.0: 0 is less than or equal"):
        validate({"predict": {"ipc_range": [0, 4]}}, "config")


# ----------------------------------------------------------- the command line, as the schema


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _one_line_error(code: int, err: str, *needles: str) -> None:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in lines[0], (n, lines[0])


@pytest.mark.parametrize("clock", ["-1", "0", "nan", "inf", "2400"])
def test_predict_clock_is_checked_by_the_counters_schema(runs, tmp_path, capsys, clock):
    """A clock of 0 or below or not finite, or one in MHz (2400 for 2.4 GHz: every runtime
    1,000 times too short), is refused by the schema's rule for the config's clock, and the
    whole-run tables refuse the same bound (their own test)."""
    code, out, err = _cli(capsys, "predict", runs / "counters/g2/mcf.parquet", "--model",
                          runs / "model.parquet", f"--clock-ghz={clock}", "-o",
                          tmp_path / "p.parquet")
    _one_line_error(code, err, "--clock-ghz", "counters.clock_ghz")
    assert out == "" and not (tmp_path / "p.parquet").exists()
    # the config refuses the same values with the same rule
    with pytest.raises(InputError, match=r"counters\.clock_ghz\.g3"):
        validate({"counters": {"generations": {"old": "g2", "new": "g3"}, "benchmarks": ["a"],
                               "events": ["x"], "clock_ghz": {"g3": float(clock)}}}, "config")


def test_the_whole_run_tables_clock_bound_is_the_schemas():
    import yaml

    from perfcast.counters.wholerun import CLOCK_MAX_GHZ
    from perfcast.settings import schema_path

    schema = yaml.safe_load(schema_path("counters").read_text())
    assert schema["properties"]["clock_ghz"]["additionalProperties"]["maximum"] == CLOCK_MAX_GHZ


@pytest.mark.parametrize("radius", ["-5", "0"])
def test_align_radius_is_checked_by_the_align_schema(runs, tmp_path, capsys, radius):
    code, _, err = _cli(capsys, "align", runs / "counters/g2/mcf.parquet",
                        runs / "counters/g3/mcf.parquet", "--method", "dtw", "--radius", radius,
                        "-o", tmp_path / "a.parquet")
    _one_line_error(code, err, "sakoe_chiba_radius", f"{radius} is less than the minimum of 1")


@pytest.mark.parametrize("method", [[], ["--method", "exact"]])
def test_align_refuses_a_radius_the_exact_method_would_ignore(runs, tmp_path, capsys, method):
    """--radius 3 with the exact method (the default) was ignored, yet the pairs' metadata
    recorded sakoe_chiba_radius 3: the combination is refused, naming both flags."""
    out = tmp_path / "a.parquet"
    code, stdout, err = _cli(capsys, "align", runs / "counters/g2/mcf.parquet",
                             runs / "counters/g3/mcf.parquet", *method, "--radius", "3",
                             "-o", out)
    _one_line_error(code, err, "--radius 3", "--method dtw", "--method is exact")
    assert stdout == "" and not out.exists()


def test_align_records_the_radius_dtw_used_and_none_for_exact(runs, tmp_path, capsys):
    from perfcast.io import parquet_metadata

    old, new = runs / "counters/g2/mcf.parquet", runs / "counters/g3/mcf.parquet"
    assert _cli(capsys, "align", old, new, "--method", "dtw", "--radius", "3", "-o",
                tmp_path / "dtw.parquet")[0] == 0
    assert parquet_metadata(tmp_path / "dtw.parquet")["sakoe_chiba_radius"] == 3
    # built without the schema (the Python API), exact with a radius records none
    align_files(AlignRunSettings(AlignSettings("exact", 3, 0.1), "mcf", ("g2", "g3")),
                str(old), str(new), str(tmp_path / "exact.parquet"), None)
    assert parquet_metadata(tmp_path / "exact.parquet")["sakoe_chiba_radius"] is None


@pytest.mark.parametrize("name, section, keys", [
    ("align", {"method": "exact", "sakoe_chiba_radius": 3},
     ("align: sakoe_chiba_radius: 3", "method dtw")),
    ("align", {"sakoe_chiba_radius": 3}, ("align: sakoe_chiba_radius: 3", "method dtw")),
    ("config", {"align": {"sakoe_chiba_radius": 3}},
     ("config: align.sakoe_chiba_radius: 3", "align.method dtw")),
])
def test_a_config_with_a_radius_for_the_exact_method_is_refused(name, section, keys):
    with pytest.raises(InputError) as err:
        validate(section, name, where="config.yaml")
    for k in keys:
        assert k in str(err.value), (k, str(err.value))
    assert validate({"method": "dtw", "sakoe_chiba_radius": 3}, "align")["sakoe_chiba_radius"] \
        == 3


def test_postprocess_refuses_an_empty_event_list(runs, capsys, tmp_path):
    group = runs / "raw/g2/mcf/group0.csv"
    code, _, err = _cli(capsys, "postprocess", group, "--events", "", "-o", tmp_path / "x.pq")
    _one_line_error(code, err, "events", "should be non-empty")


@pytest.mark.parametrize("wall", ["nan", "inf", "-3", "1e300"])
def test_sweep_import_refuses_a_wall_time_that_is_no_duration(tmp_path, capsys, wall):
    run = tmp_path / "arpe" / "1-2" / "1"
    run.mkdir(parents=True)
    (run / "APRE_timed.txt").write_text(f"{wall} 0.5 0.1 1 2\n")
    code, out, err = _cli(capsys, "sweep-import", tmp_path / "arpe", "--parameters", "a", "b",
                          "-o", tmp_path / "t.csv")
    _one_line_error(code, err, str(run / "APRE_timed.txt"), "in field real")
    assert out == "" and not (tmp_path / "t.csv").exists()
    (run / "APRE_timed.txt").write_text("1.5 0.5 0.1 1 2\n")  # a real duration is imported
    code, out, err = _cli(capsys, "sweep-import", tmp_path / "arpe", "--parameters", "a", "b",
                          "-o", tmp_path / "t.csv")
    assert code == 0 and json.loads(out)["wall_s_total"] == 1.5


def test_sweep_import_of_a_binary_timing_file_is_one_line(tmp_path, capsys):
    run = tmp_path / "arpe" / "1-2" / "1"
    run.mkdir(parents=True)
    (run / "APRE_timed.txt").write_bytes(bytes(range(128, 256)) * 3)
    code, _, err = _cli(capsys, "sweep-import", tmp_path / "arpe", "--parameters", "a", "b",
                        "-o", tmp_path / "t.csv")
    _one_line_error(code, err, str(run / "APRE_timed.txt"), "not a text file")


@pytest.mark.parametrize("bad", ["inf", "-inf", "1e308"])
def test_fit_refuses_a_non_finite_value_naming_its_line(tmp_path, capsys, bad):
    f = tmp_path / "t.csv"
    f.write_text("x,y\n" + "".join(f"{i},{2 * i if i != 3 else bad}\n" for i in range(1, 9)))
    code, out, err = _cli(capsys, "fit", f, "--y", "y", "--x", "x")
    _one_line_error(code, err, f"{f}, line 4", "column 'y' value")
    assert out == ""


def _grid(tmp_path: Path, value: str = "2") -> Path:
    f = tmp_path / "grid.csv"
    f.write_text("program,cpu_cores,metric,value\n" + "".join(
        f"p,{c},runtime_s,{10 / c if c != 3 else value}\n" for c in range(1, 7)))
    return f


@pytest.mark.parametrize("value", ["-2", "inf", "-inf"])
def test_sensitivity_eval_refuses_negative_or_infinite_table_values(tmp_path, capsys, value):
    f = _grid(tmp_path, value)
    code, _, err = _cli(capsys, "sensitivity-eval", "--data", f, "--program", "p",
                        "--epsilon", "0.3")
    _one_line_error(code, err, f"{f}, line 4", "value")


@pytest.mark.parametrize("repeats", ["0", "-2"])
def test_sensitivity_eval_lhs_repeats_is_checked_by_the_schema(tmp_path, capsys, repeats):
    """Named as the flag the user typed, as perfcast fit's flags are, with the config key."""
    code, _, err = _cli(capsys, "sensitivity-eval", "--data", _grid(tmp_path), "--program", "p",
                        "--epsilon", "0.3", "--sampling", "lhs", "--lhs-repeats", repeats)
    _one_line_error(code, err, f"--lhs-repeats {repeats} is less than the minimum of 1 "
                               "(sensitivity.replay.lhs_repeats)")


@pytest.mark.parametrize("budget", ["0", "-3"])
def test_sensitivity_eval_budget_is_checked_by_the_schema(tmp_path, capsys, budget):
    code, _, err = _cli(capsys, "sensitivity-eval", "--data", _grid(tmp_path), "--program", "p",
                        "--epsilon", "0.3", "--sampling", "adaptive", "--budget", budget)
    _one_line_error(code, err, f"--budget {budget} is less than the minimum of 1 "
                               "(sensitivity.budget)")


def test_a_negative_seed_is_refused_as_the_flag_not_a_traceback(tmp_path, capsys):
    """numpy's seed sequences take no negative number: --seed -1 ended in a ValueError trace;
    the config's seed has the same bound."""
    code, _, err = _cli(capsys, "sensitivity-eval", "--data", _grid(tmp_path), "--program", "p",
                        "--epsilon", "0.3", "--seed", "-1")
    _one_line_error(code, err, "--seed -1 is less than the minimum of 0 (config.seed)")
    with pytest.raises(InputError, match="seed: -1 is less than the minimum of 0"):
        validate({"seed": -1}, "config")


def test_sensitivity_eval_ceiling_is_named_as_the_flag(tmp_path, capsys):
    code, _, err = _cli(capsys, "sensitivity-eval", "--data", _grid(tmp_path), "--program", "p",
                        "--epsilon", "0.3", "--ceiling", "table5")
    _one_line_error(code, err, "--ceiling 'table5' is not one of ['table4', 'none'] "
                               "(sensitivity.replay.ceiling)")


def test_sensitivity_eval_on_an_empty_csv_is_one_line(tmp_path, capsys):
    f = tmp_path / "empty.csv"
    f.write_text("")
    code, _, err = _cli(capsys, "sensitivity-eval", "--data", f, "--program", "p",
                        "--epsilon", "0.3")
    _one_line_error(code, err, str(f), "empty file")
    code, out, _ = _cli(capsys, "sensitivity-eval", "--data", _grid(tmp_path), "--program",
                        "p", "--epsilon", "0.3")
    assert code == 0 and json.loads(out)["steps"]["runs_total"] >= 1


def test_a_directory_where_a_file_is_expected_is_one_line(runs, tmp_path, capsys):
    d = tmp_path / "adir"
    d.mkdir()
    old = runs / "counters/g2/mcf.parquet"
    for argv in (["postprocess", d, "--events", "a", "-o", tmp_path / "x.parquet"],
                 ["align", d, old, "-o", tmp_path / "a.parquet"],
                 ["align", old, d, "-o", tmp_path / "a.parquet"],
                 ["predict", d, "--model", runs / "model.parquet", "-o", tmp_path / "p.parquet"],
                 ["fit", d, "--y", "y", "--x", "x"],
                 ["sensitivity-eval", "--data", d, "--program", "p", "--epsilon", "0.3"],
                 ["ci", d], ["edm", d], ["wps", d]):
        code, _, err = _cli(capsys, *argv)
        _one_line_error(code, err, f"{d}: is a directory")


# ---------------------------------------------------------------- readings near the float limit


@pytest.mark.parametrize("command", ["ci", "edm"])
def test_readings_too_large_to_compute_with_are_named_not_misreported(tmp_path, capsys,
                                                                      command):
    f = tmp_path / "r.txt"
    rng = np.random.default_rng(0)
    f.write_text("\n".join(str(v) for v in 1e308 * rng.uniform(0.5, 1, 100)))
    code, out, err = _cli(capsys, command, f)
    _one_line_error(code, err, f"{f}, line 1", "too large to compute with")
    assert "more readings" not in err
    # the largest accepted magnitude still gives a finite, correct estimate
    x = MAX_MAGNITUDE * rng.uniform(0.5, 1, 100)
    f.write_text("\n".join(repr(float(v)) for v in x))
    code, out, err = _cli(capsys, "ci", f)
    assert code == 0, err
    assert json.loads(out)["mean"] == pytest.approx(x.mean(), rel=1e-12)


def test_rounds_too_large_to_compute_with_are_named(tmp_path, capsys):
    f = tmp_path / "rounds.csv"
    f.write_text("work,duration_s\n" + "".join(f"{w},{1.7e308 / 50 * w}\n" for w in range(1, 40)))
    code, _, err = _cli(capsys, "wps", f)
    _one_line_error(code, err, f"{f}, line 2", "too large to compute with")
    assert "does not grow" not in err


# ------------------------------------------------------------------------- config and schemas


@pytest.mark.parametrize("cfg, key", [
    ({"counters": {"generations": {"old": "g2", "new": "g3"}, "events": ["x"],
                   "benchmarks": ["mcf\n"]}}, "counters.benchmarks.0"),
    ({"predict": {"benchmarks": ["mcf\n"]}}, "predict.benchmarks.0"),
    ({"sweep": {"campaigns": {"c": {"command": "true {n}", "parameters": {"n": ["1\n"]}}}}},
     "sweep.campaigns.c.parameters.n"),
])
def test_a_trailing_newline_is_refused_naming_the_key(cfg, key):
    with pytest.raises(InputError, match=rf"config: {re.escape(key)}[.:]? .*(does not match|"
                                         r"is not valid under any)"):
        validate(cfg, "config")
    ok = json.loads(json.dumps(cfg).replace("\\n", ""))
    validate(ok, "config")


def test_every_schema_pattern_refuses_a_trailing_newline():
    """Each ``pattern`` ending in ``$`` of every schema, on a string it accepts plus "\\n"."""
    samples = {"^[0-9]+:[0-9]+$": "8:0", "^[0-9a-fA-F]{64}$": "a" * 64}
    found = 0

    def walk(node):
        nonlocal found
        if isinstance(node, dict):
            p = node.get("pattern")
            if isinstance(p, str) and p.endswith("$") and not p.endswith(r"\s*$"):
                found += 1
                good = samples.get(p, "a1")
                check = {"type": "string", "pattern": p}
                yield check, good
            for v in node.values():
                yield from walk(v)
        elif isinstance(node, list):
            for v in node:
                yield from walk(v)

    from perfcast.settings import _check

    for path in sorted(SCHEMA_DIR.glob("*.schema.yaml")):
        for check, good in walk(yaml.safe_load(path.read_text())):
            schema = {"type": "object", "properties": {"v": check}}
            _check("t", {"v": good}, None, schema=schema)
            with pytest.raises(InputError, match=r"t: v: .* does not match"):
                _check("t", {"v": good + "\n"}, None, schema=schema)
    assert found >= 10


def test_a_yaml_nan_or_inf_is_no_number():
    for v in (float("nan"), float("inf")):
        with pytest.raises(InputError, match=r"sensitivity\.epsilon: (nan|inf) is not a finite"):
            validate({"sensitivity": {"epsilon": v}}, "config")


def test_two_generations_of_the_same_name_are_refused():
    with pytest.raises(InputError, match=r"counters\.generations: old and new are both 'g2'"):
        validate({"counters": {"generations": {"old": "g2", "new": "g2"}, "events": ["x"],
                               "benchmarks": ["a"]}}, "config")
    validate({"counters": {"generations": {"old": "g2", "new": "g3"}, "events": ["x"],
                           "benchmarks": ["a"]}}, "config")


def test_one_event_for_instructions_and_cycles_is_refused():
    """Read from one event, every IPC is 1 and every IPC ratio too, whatever the data."""
    body = {"generations": {"old": "g2", "new": "g3"}, "events": ["x"], "benchmarks": ["a"],
            "base_events": {"instructions": "cycles", "cycles": "cycles"}}
    with pytest.raises(InputError, match=r"counters\.base_events: instructions and cycles "
                                         r"are both 'cycles'"):
        validate({"counters": body}, "config")
    with pytest.raises(InputError, match=r"counters: base_events: instructions and cycles"):
        validate(body, "counters")


def test_a_clock_under_a_generations_name_in_another_case_is_refused():
    """``G3`` for ``g3`` is never looked up: g3's runtime would have no clock. A key of no
    generation at all stays allowed (a config merged over the default keeps its clocks)."""
    body = {"generations": {"old": "g2", "new": "g3"}, "events": ["x"], "benchmarks": ["a"]}
    with pytest.raises(InputError, match=r"counters\.clock_ghz: 'G3' is not the generation "
                                         r"'g3'"):
        validate({"counters": body | {"clock_ghz": {"g2": 2.5, "G3": 2.6}}}, "config")
    merged = validate({"counters": body | {"clock_ghz": {"gen-a": 2.5, "g3": 2.6}}}, "config")
    assert merged["counters"]["clock_ghz"] == {"gen-a": 2.5, "g3": 2.6}


@pytest.mark.parametrize("section, body", [
    ("counters", {"generations": {"old": "a", "new": "b"}, "events": ["x"],
                  "benchmarks": ["m"]}),
    ("model", {}), ("warmup", {}), ("sensitivity", {}), ("sweep", {}), ("paper", {}),
])
def test_a_typo_in_a_disabled_section_is_refused(section, body):
    with pytest.raises(InputError, match=rf"config: {section}: .*'enabledd' was unexpected"):
        validate({section: {**body, "enabled": False, "enabledd": True}}, "config")
    validate({section: {**body, "enabled": False}}, "config")


def test_check_value_is_the_config_keys_rule():
    assert check_value(3, "align", "/properties/sakoe_chiba_radius", flag="--radius",
                       key="align.sakoe_chiba_radius") == 3
    with pytest.raises(InputError, match=r"--radius -5: -5 is less than the minimum of 1 "
                                         r"\(expected what the config's align\.sakoe_chiba"):
        check_value(-5, "align", "/properties/sakoe_chiba_radius", flag="--radius",
                    key="align.sakoe_chiba_radius")


def test_require_values_names_the_first_offender():
    require_values([1.0, 2.0], "f", "x", low=0)
    with pytest.raises(InputError, match=r"^f, line 3: x -1\.0 \(2 of 3 values\) "
                                         r"\(expected a finite 0 < x\)$"):
        require_values([1.0, -1.0, np.nan], "f", "x", low=0, lines=[2, 3, 4])


def test_the_console_script_prints_one_line_not_a_traceback(tmp_path):
    d = tmp_path / "adir"
    d.mkdir()
    proc = subprocess.run([sys.executable, "-m", "perfcast.cli", "fit", str(d), "--y", "y",
                           "--x", "x"], capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr


def test_readings_too_small_to_compute_with_are_named(tmp_path, capsys):
    f = tmp_path / "r.txt"
    f.write_text("0\n" * 29 + "1e-320\n")
    code, _, err = _cli(capsys, "ci", f)
    _one_line_error(code, err, f"{f}, line 30", "'1e-320' is too small to compute with")


def test_predict_refuses_a_run_where_no_interval_has_every_counter(runs, tmp_path):
    t = read_parquet(runs / "counters/g2/mcf.parquet")
    feats = [c for c in t.columns if c.endswith("_pki")]
    for k, f in enumerate(feats):  # each counter has readings, never all in one interval
        t.loc[t.index % len(feats) != k, f] = np.nan
    bad = tmp_path / "holes.parquet"
    write_parquet(t, bad)
    with pytest.raises(InputError, match=rf"{re.escape(str(bad))}: none of its {len(t)} "
                                         "intervals has a reading of every counter"):
        _predict(runs, bad, tmp_path / "p.parquet")


@pytest.mark.parametrize("epsilon", ["nan", "inf", "-1", "1e308", "1.5"])
def test_sensitivity_eval_epsilon_is_checked_by_the_schema(tmp_path, capsys, epsilon):
    """Named as the flag, not as the config's list item (replay.epsilons.0)."""
    code, _, err = _cli(capsys, "sensitivity-eval", "--data", _grid(tmp_path), "--program", "p",
                        f"--epsilon={epsilon}")
    _one_line_error(code, err, f"error: <input>: --epsilon {float(epsilon)!r} ",
                    "(sensitivity.replay.epsilons)")
    assert "epsilons.0" not in err


def test_the_evaluation_refuses_a_prediction_that_is_not_finite_and_positive(runs, tmp_path):
    old = {b: runs / "counters/g2" / f"{b}.parquet" for b in BENCHMARKS}
    t = read_parquet(old["mcf"])
    t["ipc"] = np.nan  # every predicted interval undefined: its total would read 0 cycles
    old["mcf"] = tmp_path / "mcf.parquet"
    write_parquet(t, old["mcf"])
    out = {k: str(tmp_path / f"ev.{k}") for k in ("parquet", "csv", "md", "png")}
    with pytest.raises(InputError, match=r"leave-one-out predicted_cycles 0\.0 in benchmark "
                                         r"mcf \(1 of 3 values\)"):
        evaluate_files(_evaluate(), str(runs / "train.parquet"),
                       [str(old[b]) for b in BENCHMARKS],
                       [str(runs / "counters/g3" / f"{b}.parquet") for b in BENCHMARKS],
                       out["parquet"], out["csv"], out["md"], out["png"], phases=None)
    assert not any(Path(p).exists() for p in out.values())


def test_training_refuses_a_benchmark_that_cannot_calibrate_the_intervals(runs, tmp_path):
    """A benchmark whose old table gives no finite prediction cannot give a conformity score:
    the model job fails naming it, instead of calibrating on the others silently."""
    old = {b: runs / "counters/g2" / f"{b}.parquet" for b in BENCHMARKS}
    t = read_parquet(old["mcf"])
    t["ipc"] = np.nan
    old["mcf"] = tmp_path / "mcf.parquet"
    write_parquet(t, old["mcf"])
    with pytest.raises(InputError, match=r"mcf\.parquet: benchmark mcf: its total cycles "
                                         r"predicted without it are not finite"):
        train_files(TrainSettings(_knn(), tuple(BENCHMARKS), 2.6), str(runs / "train.parquet"),
                    [str(old[b]) for b in BENCHMARKS],
                    [str(runs / "counters/g3" / f"{b}.parquet") for b in BENCHMARKS],
                    str(tmp_path / "model.parquet"), str(tmp_path / "model.json"))
    assert not (tmp_path / "model.parquet").exists()


# ------------------------------------------------------------ a model file is data, never code


class _Evil:
    """Unpickling it creates ``marker`` (any code could run there instead)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


@pytest.mark.parametrize("writer", ["pickle", "joblib"])
def test_a_crafted_model_file_runs_no_code(runs, tmp_path, capsys, writer):
    import pickle

    import joblib

    marker, evil = tmp_path / "ran", tmp_path / "evil.joblib"
    bundle = {"model": _Evil(marker), "features": ["x_pki"]}
    if writer == "pickle":
        evil.write_bytes(pickle.dumps(bundle))
    else:
        joblib.dump(bundle, evil)
    code, out, err = _cli(capsys, "predict", runs / "counters/g2/mcf.parquet", "--model", evil,
                          "-o", tmp_path / "p.parquet")
    _one_line_error(code, err, f"{evil}: not a perfcast model file", "never loaded")
    assert not marker.exists() and out == "" and not (tmp_path / "p.parquet").exists()


def test_the_model_file_is_parquet_rows_refitted_to_the_same_predictions(runs, tmp_path):
    from perfcast.io import parquet_metadata
    from perfcast.model.families import FAMILIES, fit_family
    from perfcast.model.knn import thin
    from perfcast.model.modelfile import MODEL_FORMAT, load_model

    meta = parquet_metadata(runs / "model.parquet")
    assert meta["format"] == MODEL_FORMAT and meta["log1p"] is _knn().log1p
    rows = read_parquet(runs / "model.parquet")
    train = read_parquet(runs / "train.parquet")
    assert len(rows) == len(thin(train, _knn().max_rows_per_benchmark))
    # the refitted model predicts what the chosen family fitted on the training set predicts,
    # anywhere
    fitted = fit_family(meta["family"], train, meta["features"], _knn())
    loaded = load_model(runs / "model.parquet")
    assert loaded["family"] == meta["family"] in FAMILIES
    x = np.random.default_rng(3).uniform(0, 2, (200, len(meta["features"]))) \
        * train[meta["features"]].to_numpy().max(axis=0)
    np.testing.assert_allclose(loaded["model"].predict(x), fitted.model.predict(x), rtol=1e-12)
    assert loaded["calibration"] == meta["calibration"]


@pytest.mark.parametrize("damage", ["params", "hyper", "family", "nan", "format", "version",
                                    "column"])
def test_a_damaged_model_file_is_refused_naming_it(runs, tmp_path, capsys, damage):
    from perfcast.io import parquet_metadata

    meta = parquet_metadata(runs / "model.parquet")
    rows = read_parquet(runs / "model.parquet")
    if damage == "params":
        meta["params"] = {"knn__metric": "no-such-metric"} | meta["params"]
        meta["family"] = "knn"
    elif damage == "hyper":  # a value out of the chosen family's range
        meta["params"] = {"knn": {"knn__n_neighbors": len(rows) + 1},
                          "ridge": {"ridge__regressor__alpha": -1.0},
                          "constant": {"ratio": -1.0}}[meta["family"]]
    elif damage == "family":
        meta["family"] = "forest"
    elif damage == "nan":
        rows.loc[3, meta["features"][0]] = np.nan
    elif damage == "format":
        meta["format"] = "other"
    elif damage == "version":
        meta["format_version"] = 99
    else:
        rows = rows.drop(columns=meta["features"][-1])
    bad = tmp_path / "bad.model"
    write_parquet(rows, bad, metadata=meta)
    code, out, err = _cli(capsys, "predict", runs / "counters/g2/mcf.parquet", "--model", bad,
                          "-o", tmp_path / "p.parquet")
    _one_line_error(code, err, f"{bad}: ")
    assert out == "" and not (tmp_path / "p.parquet").exists()


@pytest.mark.parametrize("damage, needle", [
    ("extra key", "calibration has an unknown key 'note'"),
    ("no coverage", "calibration lacks the key 'coverage'"),
    ("empty", "calibration.cycles holds no benchmark"),
    ("all NaN", "calibration.cycles['gcc'] nan"),
    ("huge", "calibration.cycles['gcc'] 1e+308"),
    ("string score", "calibration.cycles['gcc'] '0.1'"),
    ("coverage 2", "calibration.coverage 2"),
    ("coverage true", "calibration.coverage True"),
    ("runtime of others", "calibration.runtime names the benchmarks ['x']"),
    ("not an object", "calibration [0.1]"),
    ("unknown top key", "model metadata has an unknown key 'extra'"),
])
def test_a_damaged_calibration_is_refused_naming_the_file_and_key(runs, tmp_path, capsys,
                                                                    damage, needle):
    """The calibration stored in a model file is checked when the model is loaded: a key too
    many or too few, a score that is not a finite number of plausible size (1e308 overflowed
    exp in the interval's bounds), no score at all, or a coverage outside (0, 1) is refused
    naming the file and the key, never a TypeError, ValueError or OverflowError."""
    from perfcast.io import parquet_metadata

    meta = parquet_metadata(runs / "model.parquet")
    cal = meta["calibration"]
    if damage == "extra key":
        cal["note"] = "x"
    elif damage == "no coverage":
        del cal["coverage"]
    elif damage == "empty":
        cal["cycles"], cal["runtime"] = {}, {}
    elif damage == "all NaN":
        cal["cycles"] = dict.fromkeys(cal["cycles"], float("nan"))
    elif damage == "huge":
        cal["cycles"] = dict.fromkeys(cal["cycles"], 1e308)
    elif damage == "string score":
        cal["cycles"]["gcc"] = "0.1"
    elif damage == "coverage 2":
        cal["coverage"] = 2
    elif damage == "coverage true":
        cal["coverage"] = True
    elif damage == "runtime of others":
        cal["runtime"] = {"x": 0.1}
    elif damage == "not an object":
        meta["calibration"] = [0.1]
    else:
        meta["extra"] = 1
    bad = tmp_path / "bad.model"
    write_parquet(read_parquet(runs / "model.parquet"), bad, metadata=meta)
    code, out, err = _cli(capsys, "predict", runs / "counters/g2/mcf.parquet", "--model", bad,
                          "--clock-ghz", "2.6", "-o", tmp_path / "p.parquet")
    _one_line_error(code, err, f"{bad}: ", needle)
    assert out == "" and not (tmp_path / "p.parquet").exists()


def test_a_model_whose_metadata_is_not_an_object_is_refused(runs, tmp_path, capsys):
    import pyarrow.parquet as pq

    table = pq.read_table(runs / "model.parquet")
    bad = tmp_path / "bad.model"
    pq.write_table(table.replace_schema_metadata({**table.schema.metadata,
                                                  b"perfcast": b"[1, 2]"}), bad)
    code, out, err = _cli(capsys, "predict", runs / "counters/g2/mcf.parquet", "--model", bad,
                          "-o", tmp_path / "p.parquet")
    _one_line_error(code, err, f"{bad}: not a perfcast model file")


# ----------------------------------------------------- each value blamed on its own file and row


def test_predict_refuses_an_ipc_column_of_strings(runs, tmp_path, capsys):
    t = read_parquet(runs / "counters/g2/mcf.parquet")
    bad = tmp_path / "mcf.parquet"
    write_parquet(t.assign(ipc=t["ipc"].map(lambda v: f"{v:.3f}")), bad)
    code, out, err = _cli(capsys, "predict", bad, "--model", runs / "model.parquet", "-o",
                          tmp_path / "p.parquet")
    _one_line_error(code, err, f"{bad}: column 'ipc' is of type object")
    assert out == ""


@pytest.mark.parametrize("value", [1e308, float("inf"), -1.0])
def test_predict_refuses_a_pki_beyond_reason_as_it_refuses_inf(runs, tmp_path, capsys, value):
    t = read_parquet(runs / "counters/g2/mcf.parquet")
    t.loc[4, "br_mis_pred_pki"] = value
    bad = tmp_path / "mcf.parquet"
    write_parquet(t, bad)
    code, _, err = _cli(capsys, "predict", bad, "--model", runs / "model.parquet", "-o",
                        tmp_path / "p.parquet")
    _one_line_error(code, err,
                    f"{bad}: br_mis_pred_pki {value!r} in interval {t.loc[4, 'interval']}")
    t.loc[4, "br_mis_pred_pki"] = np.nan  # a missing reading is imputed, as before
    write_parquet(t, bad)
    assert _cli(capsys, "predict", bad, "--model", runs / "model.parquet", "-o",
                tmp_path / "p.parquet")[0] == 0


@pytest.mark.parametrize("which", ["old", "new"])
def test_align_blames_a_negative_instruction_count_on_its_own_file(runs, tmp_path, capsys,
                                                                   which):
    paths = {"old": runs / "counters/g2/mcf.parquet", "new": runs / "counters/g3/mcf.parquet"}
    t = read_parquet(paths[which])
    t.loc[2, "instructions"] = -t.loc[2, "instructions"]
    bad = tmp_path / f"{which}.parquet"
    write_parquet(t, bad)
    paths[which] = bad
    code, _, err = _cli(capsys, "align", paths["old"], paths["new"], "-o", tmp_path / "a.parquet")
    _one_line_error(code, err, f"{bad}: instructions -")


def test_a_zero_unrestricted_run_is_named_not_called_missing(tmp_path, capsys):
    f = _grid(tmp_path)
    f.write_text(f.read_text().replace("p,6,runtime_s,1.6666666666666667", "p,6,runtime_s,0"))
    assert "p,6,runtime_s,0\n" in f.read_text()
    code, _, err = _cli(capsys, "sensitivity-eval", "--data", f, "--program", "p",
                        "--epsilon", "0.3")
    _one_line_error(code, err, f"{f}, line 7: program 'p': the unrestricted run "
                               "{'cpu_cores': 6} measured 0")
