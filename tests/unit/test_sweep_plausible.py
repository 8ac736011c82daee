"""A sweep model of a positive effect is plausible by construction: no chosen model reaches 0
or turns over where the data do not (between the measured levels or up to a ``predict``
point), polynomials are held to the laws' preference for growth, a design of one run per
configuration gets a noise estimate, no polynomial is fitted through as many levels as it
has coefficients, the default campaign's models job never fails on noisy tables of a real
run, and a prediction beyond the measured range says so and widens its interval."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from perfcast.errors import InputError
from perfcast.settings import from_section, validate
from perfcast.sweep import campaign_parser as cpp
from perfcast.sweep import design as dz
from perfcast.sweep import selection
from perfcast.sweep.analysis import analyse
from perfcast.sweep.ols import fit_terms
from perfcast.sweep.settings import SweepSettings

FIT = from_section(SweepSettings, {}, "sweep").fit
REPO = Path(__file__).resolve().parents[2]
#: a real run of the default config's sweep stage (results/sweep/matmul/runs.parquet, columns
#: the campaign's models use), measured on a 2-core machine shared with other jobs
MATMUL_RUNS = REPO / "tests" / "data" / "sweep_matmul" / "runs.csv"


def values_along(c: selection.Candidate, X: np.ndarray) -> np.ndarray:
    """The candidate's value at raw regressor rows (its formula, evaluated)."""
    coef = np.array([r["coef"] for r in c.fit.coefficients()])
    return c.raw_design(X) @ coef


def test_a_polynomial_turning_beyond_the_data_does_not_beat_the_growth_law():
    """3 + 0.2 log2(p)^3, noise-free, one run at each of 2..64: the quadratic (peaking at
    p = 113, 56 at 128 for a true 71.6) won the cross-validation; now a law that keeps
    growing is chosen and predicts 128 within 5 % and 256 within 10 %."""
    p = 2.0 ** np.arange(1, 7)
    df = pd.DataFrame({"p": p, "t": 3 + 0.2 * np.log2(p) ** 3})
    res = selection.fit_effect(df, "t", "t", ["p"], fit=FIT)
    assert res.best.kind == "normal_form", res.best.model
    grid = np.geomspace(2, 256, 200).reshape(-1, 1)
    assert (np.diff(values_along(res.best, grid)) > 0).all()
    pred = selection.predict_frame(res, pd.DataFrame({"p": [128.0, 256.0]}), 0.05)
    truth = 3 + 0.2 * np.array([7.0, 8.0]) ** 3
    err = np.abs(pred["mean"].to_numpy() / truth - 1)
    assert err[0] < 0.05 and err[1] < 0.10, err


def test_one_run_per_configuration_gets_a_noise_estimate():
    """Without repetitions the noise floor was 0 (every extra term came free); it is now
    estimated from the simplest law's residuals and the notes say so."""
    rng = np.random.default_rng(0)
    p = 2.0 ** np.arange(0, 6)
    df = pd.DataFrame({"p": p, "t": 10 * (0.1 + 0.9 / p) * (1 + rng.normal(0, 0.05, 6))})
    res = selection.fit_effect(df, "t", "t", ["p"], fit=FIT)
    law = next(c for c in res.candidates if c.kind == "normal_form")
    assert law.extra["noise_floor_smape"] > 0.5
    assert any("one run per configuration: the noise floor" in n for n in res.notes)


def test_amdahl_with_one_run_per_configuration_is_predicted_sensibly():
    """Amdahl's law with a serial share of 0.1, 5 % noise, one run at each of 1..16, predicted
    at 32 and 64, over 12 draws: the chosen model stays positive and falling up to 64, and
    the mean error stays below 25 % (the noise's floor lets two-term laws that fall over the
    data or level off too low win no more: 38 % mean, 148 % worst before)."""
    law = lambda p: 100 * (0.1 + 0.9 / p)  # noqa: E731
    errs = []
    for seed in range(12):
        rng = np.random.default_rng(seed)
        p = np.array([1.0, 2, 4, 8, 16])
        df = pd.DataFrame({"p": p, "t": law(p) * (1 + rng.normal(0, 0.05, len(p)))})
        asked = pd.DataFrame({"p": [32.0, 64.0]})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = selection.fit_effect(df, "t", "t", ["p"], fit=FIT, asked=asked)
        f = values_along(res.best, np.geomspace(1, 64, 100).reshape(-1, 1))
        rise = (f - np.minimum.accumulate(f)) / f
        assert (f > 0).all() and rise.max() < 0.05, res.best.model
        pred = selection.predict_frame(res, asked, 0.05, positive=True)
        errs.append(np.mean(np.abs(pred["mean"] / law(asked["p"]) - 1)))
    assert np.mean(errs) < 0.25 and np.max(errs) < 0.5, errs


def test_no_polynomial_through_as_many_levels_as_coefficients():
    """max_rss of a matrix product (growing as size^2) at 4 sizes and 2 worker counts: the
    folds over the 8 configurations kept all 4 sizes, so a cubic in size was fitted and
    chosen; now orders stop at 2 and a note says why."""
    rng = np.random.default_rng(1)
    size = np.repeat([128.0, 256, 512, 1024], 4)
    workers = np.tile([1.0, 1, 2, 2], 4)
    df = pd.DataFrame({"size": size, "workers": workers,
                       "rss": 36000 + 0.016 * size ** 2 + rng.normal(0, 50, 16)})
    df["point"] = [f"s{a:g}w{b:g}" for a, b in zip(size, workers, strict=True)]
    fit = from_section(SweepSettings, {"fit": {"max_order": 3}}, "sweep").fit
    res = selection.fit_effect(df, "rss", "rss", ["size", "workers"], fit=fit,
                               groups=df["point"])
    assert "poly[size]^3" not in [c.model for c in res.candidates]
    assert ("poly[size]: orders above 2 not fitted: 4 distinct values of 'size' determine a "
            "polynomial of order 3 exactly, leaving no value to test it") in res.notes


def test_a_model_reaching_zero_inside_the_range_is_not_chosen():
    """A U of positive times (5 at both ends, 0.05 between): the order-4 polynomial that CV
    chose dips below 0 between two measured levels; it is taken out of the choice with a
    note saying where, inside the measured range, and the model chosen stays positive."""
    x = np.repeat([1.0, 2, 3, 4, 5, 6], 2)
    y = np.repeat([5, 0.05, 0.05, 0.05, 0.05, 5.0], 2) * np.tile([1.0, 1.1], 6)
    fit = from_section(SweepSettings, {"fit": {"normal_form": {"enabled": False}}},
                       "sweep").fit
    df = pd.DataFrame({"x": x, "t": y})
    res = selection.fit_effect(df, "t", "t", ["x"], fit=fit)
    grid = np.linspace(1, 6, 200).reshape(-1, 1)
    assert (values_along(res.best, grid) > 0).all(), res.best.model
    assert any(n.startswith("poly[x]^4 not chosen: it reaches -0.1629 at x=2.349, inside "
                            "the measured range (x 1 to 6)") for n in res.notes), res.notes


def test_a_refused_point_says_whether_it_lies_inside_or_outside_the_measured_range():
    """The refusal of a point where the model gives 0 or less names its position: a
    quadratic dipping below 0 between measured levels (inside) and a line falling below 0
    beyond them (outside, and by how far)."""
    x = np.array([1.0, 2, 3, 4, 5])
    y = 2 * (x - 3) ** 2 - 0.5
    terms = dz.polynomial_terms(2)
    c = selection.Candidate("poly[x]^2", "polynomial", ["x"],
                            fit_terms(x.reshape(-1, 1), y, terms, ["x"]), 0.0,
                            data=x.reshape(-1, 1))
    res = selection.SpecResult("t", "t", ["x"], [c], c, 5, 5, [])
    with pytest.raises(InputError, match=r"predicts -0.5 at x=3, inside the measured range"):
        selection.predict_frame(res, pd.DataFrame({"x": [3.0]}), 0.05, positive=True)
    with pytest.raises(InputError, match=r"at x=20, outside the measured range \(4x beyond "
                                         r"the largest measured x 5\)"):
        line = selection.Candidate("poly[x]^1", "polynomial", ["x"], fit_terms(
            x.reshape(-1, 1), 10 - x, dz.polynomial_terms(1), ["x"]), 0.0,
            data=x.reshape(-1, 1))
        selection.predict_frame(selection.SpecResult("t", "t", ["x"], [line], line, 5, 5, []),
                                pd.DataFrame({"x": [20.0]}), 0.05, positive=True)


def test_a_prediction_beyond_the_data_says_so_and_its_interval_widens(tmp_path,
                                                                      perfcast_cli):
    """t = 0.5 + 1e-9 size^3, 5 % noise, 3 runs at 128..2048, predicted at 4096 and 8192:
    each point is named an extrapolation and by how far (JSON, and a note on stderr), the
    intervals are at least the fit's own and wider relative to the value at 8192 than at
    4096, and over 20 draws they hold the true value at least as often as the fit's own."""
    law = lambda s: 0.5 + 1e-9 * s ** 3  # noqa: E731
    s = np.repeat([128.0, 256, 512, 1024, 2048], 3)
    asked = pd.DataFrame({"size": [4096.0, 8192.0]})
    held = own = 0
    for seed in range(20):
        rng = np.random.default_rng(seed)
        df = pd.DataFrame({"size": s, "t": law(s) * np.exp(rng.normal(0, 0.05, len(s)))})
        res = selection.fit_effect(df, "t", "t", ["size"], fit=FIT, asked=asked)
        pred = selection.predict_frame(res, asked, 0.05, positive=True)
        plain = res.best.fit.predict(asked.to_numpy(), alpha=0.05)
        assert (pred["obs_ci_upper"] >= plain["obs_ci_upper"] - 1e-12).all()
        truth = law(asked["size"].to_numpy())
        held += int(((pred["obs_ci_lower"] <= truth) & (truth <= pred["obs_ci_upper"])).sum())
        own += int(((plain["obs_ci_lower"] <= truth) & (truth <= plain["obs_ci_upper"])).sum())
    assert held >= own
    width = (pred["obs_ci_upper"] - pred["obs_ci_lower"]) / pred["mean"]
    assert width[1] > width[0]
    assert pred["extrapolation"].tolist() == ["2x beyond the largest measured size 2048",
                                              "4x beyond the largest measured size 2048"]
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    r = perfcast_cli("fit", str(path), "--y", "t", "--x", "size", "--predict", "size=4096",
                     "size=1000")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)["predictions"]
    assert [p["extrapolation"] for p in out] == ["2x beyond the largest measured size 2048", ""]
    assert ("perfcast fit: note: size=4096 is an extrapolation, 2x beyond the largest "
            "measured size 2048") in r.stderr
    assert "size=1000" not in r.stderr


def _matmul_models():
    cfg = validate(yaml.safe_load((REPO / "config" / "config.yaml").read_text()), "config")
    return cpp.parse_sweep(cfg["sweep"], cfg["programs"], seed=cfg["seed"]).models_settings(
        "matmul")


def _monotone_and_positive(c: selection.Candidate, asked: np.ndarray, noise: float) -> bool:
    """An independent check of a chosen model: positive, and not turning by more than
    ``noise`` along each regressor, from the smallest to the largest value measured or
    asked, at every measured combination of the others."""
    data = np.vstack([c.data, asked]) if len(asked) else c.data
    for j in range(c.data.shape[1]):
        xs = np.geomspace(data[:, j].min(), data[:, j].max(), 300)
        for other in np.unique(np.delete(c.data, j, axis=1), axis=0):
            X = np.column_stack([np.insert(other, j, 0.0)] * len(xs)).T
            X[:, j] = xs
            f = values_along(c, X)
            if not (f > 0).all():
                return False
            up, down = np.maximum.accumulate(f) - f, f - np.minimum.accumulate(f)
            if min(up.max(), down.max()) > noise:
                return False
    return True


@pytest.mark.parametrize("tables", [
    20, pytest.param(200, marks=pytest.mark.study)])
def test_the_default_campaign_never_fails_on_noisy_tables_of_a_real_run(tables):
    """The shipped matmul campaign's models on a real run's table, each run's times
    multiplied by lognormal noise of 2-20 % (one sigma per table): no table fails the
    models job, no chosen model is a polynomial of order 3 or more from 4 sizes, and every
    chosen model is positive and does not turn over (by more than the scatter of a
    configuration's mean) up to the config's predict point."""
    ms = _matmul_models()
    base = pd.read_csv(MATMUL_RUNS)
    for k in range(tables):
        rng = np.random.default_rng(k)
        df = base.copy()
        noise = np.exp(rng.normal(0, rng.uniform(0.02, 0.20), len(df)))
        for col in ("wall_s", "user_s", "sys_s", "cpu_s"):
            df[col] = df[col] * noise
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = analyse(df, campaign="matmul", parameters=list(ms.parameters),
                          analysis=ms.analysis, fit=ms.fit)
        for res in out["results"]:
            best = res.best
            assert not (best.kind == "polynomial" and best.order >= 3), (k, best.model)
            asked = pd.DataFrame([p["point"] for p in res.predictions])
            rows = asked[best.x].to_numpy(dtype=float) if len(asked) else np.empty((0, 1))
            y = df[res.y].to_numpy(dtype=float)
            groups = df.groupby("point")[res.y]
            scatter = float((groups.std() / np.sqrt(groups.count())).max())
            assert _monotone_and_positive(best, rows, 2 * scatter), (k, res.name, best.model)
            assert all(p["predictable"] for p in res.predictions), (k, res.predictions)
            assert np.isfinite(y).all()
