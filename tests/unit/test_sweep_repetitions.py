"""The model choice on runs compressed to the sufficient statistics of their repetitions
(:mod:`perfcast.sweep.repetitions`): the same chosen model, coefficients, statistics and
scores as the fit of every run, with data per configuration only."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from perfcast.settings import from_section
from perfcast.sweep import design as dz
from perfcast.sweep import normalform as nf
from perfcast.sweep import repetitions as rp
from perfcast.sweep import selection
from perfcast.sweep.ols import fit_terms
from perfcast.sweep.settings import SweepSettings


def fit_of(**fit):
    return from_section(SweepSettings, {"fit": fit}, "sweep").fit


def table() -> pd.DataFrame:
    """a x b at 20 configurations, 2 to 5 repetitions each, rows shuffled."""
    rng = np.random.default_rng(7)
    a, b = np.meshgrid([1.0, 2, 4, 8, 16], [1.0, 2, 3, 4], indexing="ij")
    reps = 2 + (np.arange(a.size) % 4)
    a, b = np.repeat(a.ravel(), reps), np.repeat(b.ravel(), reps)
    y = 2 + 0.5 * a * np.log2(a) * b + rng.normal(0, 0.4, a.size)
    order = rng.permutation(a.size)
    return pd.DataFrame({"a": a[order], "b": b[order], "y": y[order]})


#: the best model and its coefficients on table(), as the fit of every run gave them before
#: the runs were compressed (perfcast at f8f2fee; "arpe" with the plausibility rule of
#: 335e107, on every run: ols:quadratic reaches -0.49 at a=1, b=4, so poly[a]^2 is chosen)
BEFORE = {
    "default": ("pmnf:a * log2(a) * b", [1.8841273538614258, 0.500566032347607]),
    "median": ("pmnf:a * log2(a) * b", [1.9068737850961979, 0.5004278728021923]),
    "arpe": ("poly[a]^2", [-2.59689322978709, 3.5658159755770993, 0.1525609874858726]),
}
SETTINGS = {"default": {}, "median": {"normal_form": {"aggregate": "median"}},
            "arpe": {"normal_form": {"enabled": False}}}


@pytest.mark.parametrize("name", list(BEFORE))
def test_compressed_fit_gives_the_model_and_coefficients_of_every_run(name):
    res = selection.fit_effect(table(), "y", "y", ["a", "b"], fit=fit_of(**SETTINGS[name]))
    model, coef = BEFORE[name]
    assert res.best.model == model
    got = [c["coef"] for c in res.best.fit.coefficients()]
    np.testing.assert_allclose(got, coef, rtol=1e-10)
    assert res.n == 70 and res.n_configurations == 20


def test_fits_keep_one_row_per_configuration():
    """The memory of a fit does not grow with the repetitions: each candidate's design has
    a row per configuration, while its fitted values and residuals are still per run."""
    df = table()
    res = selection.fit_effect(df, "y", "y", ["a", "b"], fit=fit_of())
    for c in res.candidates:
        rows = c.fit.result.model.exog.shape[0]
        assert rows == res.n_configurations, c.model
        assert len(c.fit.fitted) == len(c.fit.residuals) == len(df)
        np.testing.assert_allclose(c.fit.fitted + c.fit.residuals, df["y"], rtol=1e-12)


def test_runs_ols_is_statsmodels_ols_of_the_runs():
    df = table()
    X, y = df[["a", "b"]].to_numpy(), df["y"].to_numpy()
    reps = rp.compress(X, y)
    terms = dz.form_terms("interaction", 2)
    fit = fit_terms(reps.X, reps.y, terms, ["a", "b"], reps)
    ref = fit_terms(X, y, terms, ["a", "b"])
    assert fit.n == ref.n == len(df)
    for key, value in ref.metrics().items():
        assert fit.metrics()[key] == pytest.approx(value, rel=1e-10), key
    for got, want in zip(fit.coefficients(), ref.coefficients(), strict=True):
        for key in ("coef", "se", "t", "p"):
            assert got[key] == pytest.approx(want[key], rel=1e-9), key
    points = np.array([[3.0, 2.5], [20.0, 5.0]])
    np.testing.assert_allclose(fit.predict(points, 0.1).to_numpy(),
                               ref.predict(points, 0.1).to_numpy(), rtol=1e-10)
    direct = sm.OLS(y, sm.add_constant(X)).fit()  # the linear form, from the runs
    lin = fit_terms(reps.X, reps.y, dz.form_terms("linear", 2), ["a", "b"], reps)
    np.testing.assert_allclose([c["coef"] for c in lin.coefficients()], direct.params,
                               rtol=1e-10)
    assert lin.metrics()["bic"] == pytest.approx(direct.bic, rel=1e-12)


@pytest.mark.parametrize("how", ["mean", "median"])
def test_scores_of_compressed_runs_are_the_scores_of_the_runs(how):
    """Labels (points) whose runs differ in a regressor: the configuration's values are
    weighted over its rows, its median taken over its runs."""
    rng = np.random.default_rng(3)
    p = np.repeat([1.0, 2, 3, 4, 5, 6], 4)
    p[::4] += 0.5  # one run of each point at another value
    groups = [f"p{int(v)}" for v in p]
    y = 1 + 2 * p + rng.normal(0, 0.3, p.size)
    X = p.reshape(-1, 1)
    reps = rp.compress(X, y, groups)
    terms = dz.polynomial_terms(1)
    folds, cfolds = selection.make_folds(groups, 10), selection.make_folds(reps.groups, 10)
    assert selection.cv_mse(reps.X, reps.y, terms, cfolds, reps) == pytest.approx(
        selection.cv_mse(X, y, terms, folds), rel=1e-12)
    pred = selection.cv_predictions(X, y, terms, folds)
    cpred = selection.cv_predictions(reps.X, reps.y, terms, cfolds, reps.w)
    np.testing.assert_allclose(cpred[reps.inverse], pred, rtol=1e-12)
    assert selection.configuration_smape(cpred, reps.y, reps.groups, how, reps.w,
                                         reps.medians) == pytest.approx(
        selection.configuration_smape(pred, y, groups, how), rel=1e-12)
    assert selection.forward_smapes(reps.X, reps.y, terms, reps.groups, 3, how, reps) == \
        pytest.approx(selection.forward_smapes(X, y, terms, groups, 3, how), rel=1e-12)
    assert nf.noise_floor(None, None, stats=rp.configuration_stats(reps)) == pytest.approx(
        nf.noise_floor(y, groups), rel=1e-12)
    frame = pd.DataFrame({"p": p, "_y": y})
    want = nf.aggregate(frame, "_y", ["p"], groups, how)
    got = rp.configuration_values(reps, ["p"], how)
    np.testing.assert_allclose(got[["p", "_y", "n_runs"]].to_numpy(),
                               want[["p", "_y", "n_runs"]].to_numpy(), rtol=1e-12)


def test_candidates_of_compressed_runs_are_those_of_the_runs():
    df = table()
    X, y = df[["a", "b"]].to_numpy(), df["y"].to_numpy()
    groups = [tuple(r) for r in X]
    reps = rp.compress(X, y)
    folds, cfolds = selection.make_folds(groups, 10), selection.make_folds(reps.groups, 10)
    runs = selection.polynomial_candidates(X[:, 0], y, "a", folds, 4)
    comp = selection.polynomial_candidates(reps.X[:, 0], reps.y, "a", cfolds, 4, reps)
    assert [c.chosen for c in comp] == [c.chosen for c in runs]
    np.testing.assert_allclose([c.cv_mse for c in comp], [c.cv_mse for c in runs], rtol=1e-10)
    runs, _ = selection.form_candidates(X, y, ["a", "b"], folds, list(dz.FORMS))
    comp, _ = selection.form_candidates(reps.X, reps.y, ["a", "b"], cfolds, list(dz.FORMS),
                                        reps)
    assert [c.model for c in comp] == [c.model for c in runs]
    np.testing.assert_allclose([c.cv_mse for c in comp], [c.cv_mse for c in runs], rtol=1e-10)
    settings = fit_of().normal_form
    runs, _ = selection.normal_form_candidates(X, y, ["a", "b"], groups, 10, settings)
    comp, _ = selection.normal_form_candidates(reps.X, reps.y, ["a", "b"], reps.groups, 10,
                                               settings, reps)
    assert [(c.model, c.chosen) for c in comp] == [(c.model, c.chosen) for c in runs]
    np.testing.assert_allclose([c.cv_mse for c in comp], [c.cv_mse for c in runs], rtol=1e-10)
    for a, b in zip(comp, runs, strict=True):
        np.testing.assert_allclose(a.fit.fitted, b.fit.fitted, rtol=1e-10)
        assert a.fit.metrics()["aic"] == pytest.approx(b.fit.metrics()["aic"], rel=1e-10)


@pytest.mark.parametrize("rows", [0, 1])
def test_too_few_runs_compress_to_a_note(rows):
    df = pd.DataFrame({"p": [2.0] * rows, "t": [1.0] * rows})
    res = selection.fit_effect(df, "t", "t", ["p"], fit=fit_of())
    assert res.best is None and res.candidates == [] and res.n == rows
    assert res.notes == [f"{rows} usable row(s): nothing fitted"]


def _labelled_runs(seed: int, offsets: list[float]) -> tuple[np.ndarray, np.ndarray,
                                                              list[str]]:
    """Six configurations p1..p6, a run at p plus each of ``offsets``: with [0, 0.25] every
    compressed row holds one run and every configuration two."""
    rng = np.random.default_rng(seed)
    p = np.repeat([1.0, 2, 3, 4, 5, 6], len(offsets)) + np.tile(offsets, 6)
    groups = [f"p{int(v)}" for v in p]
    y = 1 + 2 * p ** 1.5 + rng.normal(0, 0.3, p.size)
    return p.reshape(-1, 1), y, groups


@pytest.mark.parametrize(("repeated", "offsets"), [(True, [0.0, 0.25]),
                                                   (True, [0.0, 0.0, 0.25]),
                                                   (False, [0.0, 0.25])])
def test_the_noise_floor_of_compressed_runs_is_that_of_the_runs(repeated, offsets):
    """The floor of the plausibility rules and the choice: of the repetitions where a
    configuration has more than one run (even where no compressed row has: its runs differ
    in a regressor), else estimated from residuals; the same, with the same notes and
    choice, from the runs and from their compressed repetitions (of which a row's scatter is
    in ``ss``, not in the means)."""
    X, y, groups = _labelled_runs(5, offsets)
    if not repeated:
        groups = [f"{g}.{i}" for i, g in enumerate(groups)]
    reps = rp.compress(X, y, groups)
    settings = fit_of().normal_form
    runs, runs_notes = selection.normal_form_candidates(X, y, ["p"], groups, 10, settings)
    comp, comp_notes = selection.normal_form_candidates(reps.X, reps.y, ["p"], reps.groups,
                                                        10, settings, reps)
    floor = comp[0].extra["noise_floor_smape"]
    assert floor == pytest.approx(runs[0].extra["noise_floor_smape"], rel=1e-10)
    if repeated:
        assert floor == pytest.approx(nf.noise_floor(y, groups), rel=1e-12) and floor > 0
    else:
        assert any("one run per configuration" in n for n in comp_notes)
    assert comp_notes == runs_notes
    assert [(c.model, c.chosen) for c in comp] == [(c.model, c.chosen) for c in runs]
    res = selection.fit_effect(pd.DataFrame({"p": X[:, 0], "t": y}), "t", "t", ["p"],
                               fit=fit_of(), groups=groups)
    law = next(c for c in res.candidates if c.kind == "normal_form")
    assert law.extra["noise_floor_smape"] == pytest.approx(floor, rel=1e-10)


def _u_table(low_run: float) -> pd.DataFrame:
    """A U of times (5 at both ends, about 0.05 between) whose order-4 polynomial dips below
    0 between two levels; at x=3 one run is ``low_run``, the other 0.1 - ``low_run``."""
    x = np.repeat([1.0, 2, 3, 4, 5, 6], 2)
    y = np.repeat([5, 0.05, 0.05, 0.05, 0.05, 5.0], 2) * np.tile([1.0, 1.1], 6)
    y[4:6] = [low_run, 0.1 - low_run]
    return pd.DataFrame({"x": x, "t": y})


def test_plausibility_holds_for_an_effect_positive_in_every_run_not_every_mean():
    """Compressed to one row per configuration, every mean of the U is positive even with a
    run at -0.02: an effect not positive in every run is not held to the positive rules
    (no candidate taken out), one that is still is."""
    fit = fit_of(normal_form={"enabled": False})
    res = selection.fit_effect(_u_table(0.03), "t", "t", ["x"], fit=fit)
    assert any(n.startswith("poly[x]^4 not chosen: it reaches") for n in res.notes)
    res = selection.fit_effect(_u_table(-0.02), "t", "t", ["x"], fit=fit)
    assert not any("not chosen" in n for n in res.notes), res.notes
    assert not any("implausible" in c.extra for c in res.candidates)
    X = _u_table(-0.02)[["x"]].to_numpy()
    y = _u_table(-0.02)["t"].to_numpy()
    groups = [(v,) for v in X[:, 0]]
    reps = rp.compress(X, y)
    settings = fit_of().normal_form
    _, runs_notes = selection.normal_form_candidates(X, y, ["x"], groups, 10, settings)
    _, comp_notes = selection.normal_form_candidates(reps.X, reps.y, ["x"], reps.groups, 10,
                                                     settings, reps)
    assert comp_notes == runs_notes
    assert not any("not chosen" in n for n in comp_notes)


def test_a_configuration_value_checked_for_a_turn_is_the_mean_of_its_runs():
    """keep_plausible on compressed rows weights each row's mean by its runs: at a=3 the
    runs' mean (2.985) keeps the values along a rising (1, 2, 2.985, 4, 5), so a cubic that
    turns between the levels is implausible, as on the runs; the unweighted mean of the two
    rows there (1.755) would show a turn in the data and let it pass."""
    a = np.concatenate([[1.0, 2], [3.0] * 99, [3.0], [4.0, 5]])
    b = np.concatenate([[1.0, 1], [1.0] * 99, [2.0], [1.0, 1]])
    y = np.concatenate([[1.0, 2], [3.01] * 99, [0.5], [4.0, 5]])
    reps = rp.compress(np.column_stack([a, b]), y)
    fit = fit_terms(np.array([[1.0], [2], [3], [4], [5]]), np.array([1.0, 3.5, 2, 3, 5]),
                    dz.polynomial_terms(3), ["a"])

    def cubic(data: np.ndarray) -> selection.Candidate:
        return selection.Candidate("poly[a]^3", "polynomial", ["a"], fit, 0.0, chosen=True,
                                   order=3, data=data)

    on_runs = cubic(a.reshape(-1, 1))
    selection.keep_plausible([on_runs], y, 0.0)
    assert on_runs.extra["implausible"].startswith("turns over at a=")
    compressed = cubic(reps.X[:, [0]])
    selection.keep_plausible([compressed], reps.y, 0.0, None, reps.w)
    assert compressed.extra.get("implausible") == on_runs.extra["implausible"]
