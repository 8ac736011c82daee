"""Extra-P input files as sweep imports (``sweep.imports.<name>.format: extrap``), on Extra-P's
own test inputs (tests/data/extrap, with their provenance): the run table, the law recovered,
the checks, and the command line calling the rule's function."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from perfcast.errors import InputError
from perfcast.io import parquet_metadata, read_parquet
from perfcast.settings import validate
from perfcast.sweep.campaign_parser import parse_sweep
from perfcast.sweep.rules import campaign_models, import_table

DATA = Path(__file__).resolve().parents[1] / "data" / "extrap"
TWO = DATA / "two_parameter_5.txt"  # 2 + 0.884 * s * log2(p), noise-free, 25 points
STRONG = DATA / "strong_scaling_one_parameter_1.txt"  # 5 points x 6 repetitions


def _sweep(**imports) -> object:
    return parse_sweep(validate({"imports": imports}, "sweep"), seed=1)


def test_extra_p_file_becomes_a_run_table_and_its_law_is_recovered(tmp_path):
    sweep = _sweep(ep={"format": "extrap", "path": str(TWO), "parameters": ["p", "s"]})
    runs = tmp_path / "runs.parquet"
    meta = import_table(sweep.import_settings("ep"), out=runs)
    assert meta["n_runs"] == 25 and meta["n_configurations"] == 25
    assert meta["source"] == f"Extra-P input {TWO} (main/)" and "wall_s_total" not in meta
    df = read_parquet(runs)
    assert (df["status"] == "ok").all() and (df["iteration"] == 1).all()
    row = df[(df["p"] == 32) & (df["s"] == 50)].iloc[0]
    assert row["value"] == 223.0 and row["point"] == "p~32_s~50"
    # the default model: the file's value on every parameter
    assert [m.name for m in sweep.imports["ep"].analysis.models] == ["value~p+s"]
    out = tmp_path / "m"
    campaign_models(sweep.models_settings("ep"), runs=runs, out_json=tmp_path / "ep.json",
                    out_models=out.with_suffix(".1"), out_coefficients=out.with_suffix(".2"),
                    out_fitted=out.with_suffix(".3"), out_predictions=out.with_suffix(".4"),
                    fig_fits=tmp_path / "fits.png", fig_residuals=tmp_path / "res.png")
    (effect,) = json.loads((tmp_path / "ep.json").read_text())["effects"]
    assert effect["formula"] == "value = 2 + 0.884 * log2(p) * s"
    assert effect["best_family"] == "performance model normal form"


def test_repetitions_are_iterations_and_the_series_is_chosen_by_name(tmp_path):
    sweep = _sweep(strong={"format": "extrap", "path": str(STRONG), "parameters": ["x"],
                           "region": "compute", "metric": "time"})
    runs = tmp_path / "runs.parquet"
    import_table(sweep.import_settings("strong"), out=runs)
    df = read_parquet(runs)
    assert len(df) == 30 and df.groupby("x")["iteration"].apply(list).tolist() == [
        [1, 2, 3, 4, 5, 6]] * 5
    assert df.loc[(df["x"] == 60) & (df["iteration"] == 4), "value"].item() == pytest.approx(
        80.76019835580321)
    assert (df["source"] == "compute/time").all()
    wrong = _sweep(strong={"format": "extrap", "path": str(STRONG), "parameters": ["x"],
                           "region": "io"})
    with pytest.raises(InputError, match=r"'io'.*compute"):
        import_table(wrong.import_settings("strong"), out=tmp_path / "w.parquet")
    assert not (tmp_path / "w.parquet").exists()


def test_parameters_other_than_the_files_are_refused(tmp_path):
    sweep = _sweep(ep={"format": "extrap", "path": str(TWO), "parameters": ["s", "p"]})
    with pytest.raises(InputError, match=r"declares the parameters \['p', 's'\], the import "
                                         r"names \['s', 'p'\]"):
        import_table(sweep.import_settings("ep"), out=tmp_path / "runs.parquet")
    assert not (tmp_path / "runs.parquet").exists()


@pytest.mark.parametrize(("entry", "needle"), [
    ({"format": "extrap", "parameters": ["value"]}, "parameter name(s) ['value'] are columns"),
    ({"format": "extrap", "parameters": ["p"], "models": [{"y": "wall_s"}]},
     "unknown column 'wall_s'"),
    ({"parameters": ["p"], "region": "main"}, "['region'] are keys of an Extra-P import"),
    ({"format": "extrap", "parameters": ["p"], "region": 3}, "region: 3 is not of type"),
])
def test_the_config_is_checked_before_anything_is_read(entry, needle):
    with pytest.raises(InputError) as exc:
        _sweep(ep={"path": str(TWO), **entry})
    assert needle in str(exc.value)


def test_the_command_line_calls_the_rules_function(perfcast_cli, tmp_path):
    sweep = _sweep(strong={"format": "extrap", "path": str(STRONG), "parameters": ["x"]})
    rule_out = tmp_path / "rule.parquet"
    import_table(sweep.import_settings("strong"), out=rule_out)
    cli_out = tmp_path / "cli.parquet"
    proc = perfcast_cli("sweep-import", str(STRONG), "--format", "extrap", "--parameters", "x",
                        "--campaign", "strong", "-o", str(cli_out))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"out": str(cli_out), "n_runs": 30, "n_configurations": 5,
                                       "status": {"ok": 30}}
    assert parquet_metadata(cli_out) == parquet_metadata(rule_out)
    pd.testing.assert_frame_equal(read_parquet(cli_out), read_parquet(rule_out))
    bad = perfcast_cli("sweep-import", str(STRONG), "--format", "extrap", "--parameters", "x",
                       "--metric", "energy", "-o", str(tmp_path / "bad.parquet"))
    assert bad.returncode == 2 and "'energy'" in bad.stderr and "time" in bad.stderr


def test_a_file_parameter_named_like_a_reader_column_is_refused(perfcast_cli, tmp_path):
    """``PARAMETER p repetition``: the reader's repetition column overwrote the parameter, so
    the file seemed to declare only ``p`` and ``--parameters p`` imported 5 configurations of
    25 (the repetition index taken for the second coordinate)."""
    ps, ns = (2, 4, 8), (1, 2)
    f = tmp_path / "rep.txt"
    f.write_text("PARAMETER p repetition\nPOINTS "
                 + " ".join(f"( {p} {n} )" for n in ns for p in ps)
                 + "\nREGION main\nMETRIC time\n"
                 + "".join(f"DATA {p * n} {p * n}\n" for n in ns for p in ps))
    for params in (["p"], ["p", "repetition"]):
        proc = perfcast_cli("sweep-import", str(f), "--format", "extrap", "--parameters",
                            *params, "-o", str(tmp_path / "out.parquet"))
        assert proc.returncode == 2
        assert f"{f}, line 1: parameter name 'repetition' is reserved" in proc.stderr
    assert not (tmp_path / "out.parquet").exists()


def test_a_point_without_values_is_refused_not_dropped(perfcast_cli, tmp_path):
    """``"values": []`` at p = 4: the import wrote 3 configurations of 4 with rc 0."""
    f = tmp_path / "ev.json"
    f.write_text(json.dumps({"parameters": ["p"], "measurements": {"m": {"t": [
        {"point": [p], "values": [] if p == 4 else [p + 1]} for p in (2, 4, 8, 16)]}}}))
    proc = perfcast_cli("sweep-import", str(f), "--format", "extrap", "--parameters", "p",
                        "-o", str(tmp_path / "ev.csv"))
    assert proc.returncode == 2 and not (tmp_path / "ev.csv").exists()
    assert "measurements['m']['t'][1].values is empty: point (p=4)" in proc.stderr
