"""``perfcast fit``'s answers hold up: the printed formula gives the printed predictions, a
positive quantity is never predicted at or below 0, a regressor's name cannot be read as
something else, rows left out by their status are counted, and a ``--predict`` point cannot
set what the model does not know."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest

from perfcast.settings import from_section
from perfcast.sweep.selection import fit_effect
from perfcast.sweep.settings import SweepSettings


def evaluate(formula: str, **values: float) -> float:
    """The value of a printed formula (``3 + 0.5 * p * log2(p)``, ``p^(-1/4)``)."""
    expr = formula.split("=", 1)[-1].replace("^", "**")
    return float(eval(expr, {"__builtins__": {}, "log2": math.log2}, values))  # noqa: S307


def _near_1000(tmp_path):
    p = np.repeat(np.arange(1000.0, 1011.0), 2)
    t = 1.2345 * (p - 1003.7) ** 2 + 50 + np.tile([-0.3, 0.3], 11)
    path = tmp_path / "d.csv"
    pd.DataFrame({"p": p, "t": t}).to_csv(path, index=False)
    return path, p, t


def test_every_candidates_formula_gives_its_values_where_coefficients_cancel(tmp_path):
    """A quadratic in p = 1000..1010 is 1.244e+06 - 2478 p + 1.235 p^2: printed with 4
    digits it gave 991 at p = 1005 where the model gives 52."""
    _, p, t = _near_1000(tmp_path)
    fit = from_section(SweepSettings, {}, "sweep").fit
    res = fit_effect(pd.DataFrame({"p": p, "t": t}), "t", "t", ["p"], fit=fit)
    for c in res.candidates:
        formula = c.formula("t")
        for x in (1000.0, 1005.0, 1010.0):
            model = float(c.fit.predict(np.array([[x]]), alpha=0.05)["mean"].iloc[0])
            assert evaluate(formula, p=x) == pytest.approx(model, rel=1e-3), (c.model, formula)
    q = np.repeat([1.0, 2, 4, 8, 16], 2)
    plain = fit_effect(pd.DataFrame({"p": q, "t": 1 / 3 + q / 7 + np.tile([0, 1e-3], 5)}),
                       "t", "t", ["p"], fit=fit)
    assert plain.best.formula_digits() == 4  # nothing cancels: the short form stays
    assert plain.best.formula("t") == "t = 0.3338 + 0.1429 * p"


def test_the_cli_formula_gives_the_cli_prediction(tmp_path, perfcast_cli):
    path, _, _ = _near_1000(tmp_path)
    for extra in ((), ("--no-normal-form",)):
        r = perfcast_cli("fit", str(path), "--y", "t", "--x", "p", "--predict", "p=1005", *extra)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        mean = out["predictions"][0]["mean"]
        assert mean == pytest.approx(52.09, abs=0.05)
        assert evaluate(out["formula"], p=1005.0) == pytest.approx(mean, rel=1e-3)


@pytest.mark.parametrize("name", ["const", "p^2", "n-threads", "wall time", "a,b", "x=1"])
def test_a_regressor_name_that_reads_as_something_else_is_refused(tmp_path, perfcast_cli,
                                                                  name):
    p = np.repeat([1.0, 2, 4, 8, 16, 32], 3)
    path = tmp_path / "c.csv"
    pd.DataFrame({name: p, "t": 5 + 2 * p}).to_csv(path, index=False)
    r = perfcast_cli("fit", str(path), "--y", "t", "--x", name)
    assert r.returncode == 2
    assert f"{path}: regressor {name!r}" in r.stderr and "cannot stand in a formula" in r.stderr


def test_a_positive_quantity_predicted_at_or_below_zero_is_refused(repo, perfcast_cli,
                                                                   tmp_path):
    """Extra-P's two_parameter_5 (2 + 0.884 s log2 p, measured at p >= 2): at p = 0.5 the
    law gives -6.84 (the interval was printed as [0, -6.84]); asked for there, the law is
    not chosen, saying why, and the model chosen stays positive. Where no model can (a line
    through two values, asked at p = -3) the point is refused, saying that it lies outside
    the measured range."""
    r = perfcast_cli("fit", str(repo / "tests/data/extrap/two_parameter_5.txt"),
                     "--predict", "p=0.5,s=10")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    # the refused law of lowest CV error named (log2(p) * s, or a law as close as rounding
    # makes it where the BLAS kernel differs)
    assert re.search(r"pmnf:\S.* not chosen: it reaches -[0-9.]+ at p=0.5, "
                     r"s=10, outside the measured range \(p 2 to 32, s 10 to 50\)",
                     " ".join(out["notes"]))
    assert out["predictions"][0]["mean"] > 0
    line = tmp_path / "a.csv"
    line.write_text("p,t\n1,2\n1,2.2\n4,5\n4,5.3\n")
    r = perfcast_cli("fit", str(line), "--y", "t", "--x", "p", "--predict", "p=-3")
    assert r.returncode == 2 and "predicts -1.967 at p=-3, outside the measured range " \
        "(4 below the smallest measured p 1)" in r.stderr
    r = perfcast_cli("fit", str(line), "--y", "t", "--x", "p", "--predict", "p=2")
    assert r.returncode == 0, r.stderr
    pred = json.loads(r.stdout)["predictions"][0]
    assert pred["obs_ci_lower"] <= pred["mean"] <= pred["obs_ci_upper"]


def test_a_missing_value_does_not_turn_off_the_clip_at_zero(tmp_path, perfcast_cli):
    rng = np.random.default_rng(3)
    p = np.repeat(np.arange(1.0, 9.0), 3)
    t = np.abs(1 + rng.normal(0, 0.6, len(p))) + 0.01
    lows = []
    for with_gap in (False, True):
        df = pd.DataFrame({"p": p, "t": t})
        if with_gap:
            df.loc[len(df)] = [4.0, np.nan]
        path = tmp_path / f"flat{int(with_gap)}.csv"
        df.to_csv(path, index=False)
        r = perfcast_cli("fit", str(path), "--y", "t", "--x", "p", "--predict", "p=9")
        assert r.returncode == 0, r.stderr
        lows.append(json.loads(r.stdout)["predictions"][0]["obs_ci_lower"])
    assert lows == [0.0, 0.0]


def test_rows_left_out_by_their_status_are_counted(tmp_path, perfcast_cli):
    some = tmp_path / "st.csv"
    some.write_text("p,t,status\n1,2,done\n2,4,done\n4,8,ok\n8,16,done\n16,32,ok\n32,64,ok\n")
    r = perfcast_cli("fit", str(some), "--y", "t", "--x", "p")
    assert r.returncode == 0, r.stderr
    note = "3 row(s) left out by their status, only status 'ok' is modelled: 'done' 3"
    assert note in json.loads(r.stdout)["notes"] and note in r.stderr
    none = tmp_path / "none.csv"
    none.write_text("p,t,status\n1,2,OK\n2,4,OK\n4,8,OK\n")
    r = perfcast_cli("fit", str(none), "--y", "t", "--x", "p")
    assert r.returncode == 2
    assert re.search(r"none\.csv, line 1: no row has status 'ok' \('OK' 3\)", r.stderr)


def test_a_point_cannot_set_an_unknown_or_unvaried_regressor(tmp_path, perfcast_cli):
    p = np.repeat([1.0, 2, 4, 8, 16], 3)
    path = tmp_path / "n.csv"
    pd.DataFrame({"p": p, "n": 10.0, "t": 3 + 2 * p}).to_csv(path, index=False)
    base = ("fit", str(path), "--y", "t", "--x", "p", "n", "--predict")
    r = perfcast_cli(*base, "p=8,n=20")
    assert r.returncode == 2 and "n was measured at 10 only" in r.stderr
    r = perfcast_cli(*base, "p=8,typo=1")
    assert r.returncode == 2 and "'typo' is not a regressor" in r.stderr
    r = perfcast_cli(*base, "p=8,n=10")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["predictions"][0]["mean"] == pytest.approx(19.0)


def test_the_workflows_predict_point_below_zero_is_not_predicted_and_the_run_completes(
        tmp_path):
    """The workflow's models job (``analyse``) holds the config's ``predict`` points to the
    same rule, but a point it cannot predict does not fail the job: a falling time
    extrapolated below 0 is reported as not predictable, naming the point, the value and
    that it lies outside the measured range, in the predictions table, the models summary
    and the run summary's warnings."""
    from perfcast.summary import sweep_section
    from perfcast.sweep.analysis import analyse
    from perfcast.sweep.campaign import Analysis, ModelSpec
    from perfcast.sweep.runner import json_safe

    fit = from_section(SweepSettings, {"fit": {"normal_form": {"enabled": False}}}, "sweep").fit
    n = [1, 1, 2, 2, 4, 4, 8, 8]
    df = pd.DataFrame({"point": [f"n~{v}" for v in n], "n": n, "status": "ok",
                       "wall_s": [20.0 - 2 * v + d for v, d in zip(n, [0, 0.1] * 4, strict=True)]})

    def run(point):
        return analyse(df, campaign="demo", parameters=["n"], fit=fit,
                       analysis=Analysis({}, (ModelSpec("t", "wall_s", ("n",)),), (point,)))

    ok = run({"n": 9})["predictions"]
    assert float(ok.loc[ok["source"] == "predict", "mean"].iloc[0]) == pytest.approx(2.05)
    out = run({"n": 20})
    pred = out["predictions"]
    row = pred[pred["source"] == "predict"].iloc[0]
    assert not row["predictable"] and np.isnan(row["mean"])
    assert re.search(r"not predictable: effect 't': .* predicts -19.95 at n=20, outside the "
                     r"measured range \(2.5x beyond the largest measured n 8\)", row["note"])
    assert any("no plausible model" in n for n in out["summary"]["effects"][0]["notes"])
    path = tmp_path / "demo.json"
    path.write_text(json.dumps(json_safe(out["summary"])))
    warnings = sweep_section([path]).warnings
    assert any("t at n=20 not predictable (effect 't'" in w and "-19.95" in w
               for w in warnings)
