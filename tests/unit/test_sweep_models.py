"""ARPE's models: polynomial designs, OLS statistics against statsmodels, CV order selection,
the best model, predictions, and the ``perfcast fit`` command."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

from perfcast.errors import InputError
from perfcast.settings import as_params, build, from_section
from perfcast.sweep import design as dz
from perfcast.sweep import selection
from perfcast.sweep.analysis import add_derived, analyse
from perfcast.sweep.campaign import Analysis
from perfcast.sweep.ols import fit_terms
from perfcast.sweep.settings import FitSettings, SweepSettings


def fit_of(**fit):
    """``sweep.fit`` as the schema completes it."""
    return from_section(SweepSettings, {"fit": fit}, "sweep").fit


#: the schema's fit settings, with the normal-form search
FIT = fit_of()
#: ARPE's candidates alone, chosen by CV MSE
ARPE_FIT = fit_of(normal_form={"enabled": False})
#: its ``normal_form`` section as a plain mapping, for the tests that build FitSettings whole
ARPE_ONLY = as_params(ARPE_FIT.normal_form)


def grid(seed=0, noise=0.05):
    """Two parameters, 3 repetitions per configuration; y = 1 + 2a + 3b + 4ab + noise."""
    rng = np.random.default_rng(seed)
    a, b = np.meshgrid([1.0, 2, 3, 4, 5, 6], [1.0, 2, 4], indexing="ij")
    a, b = np.repeat(a.ravel(), 3), np.repeat(b.ravel(), 3)
    y = 1 + 2 * a + 3 * b + 4 * a * b + rng.normal(0, noise, a.size)
    point = [f"a~{x:g}_b~{z:g}" for x, z in zip(a, b, strict=True)]
    return pd.DataFrame({"a": a, "b": b, "y": y, "point": point})


def test_form_terms_are_matlab_x2fx_forms():
    names = ["a", "b", "c"]
    got = {f: [dz.term_name(t, names) for t in dz.form_terms(f, 3)] for f in dz.FORMS}
    assert got["linear"] == ["const", "a", "b", "c"]
    assert got["interaction"] == ["const", "a", "b", "c", "a*b", "a*c", "b*c"]
    assert got["quadratic"] == got["interaction"] + ["a^2", "b^2", "c^2"]
    assert got["purequadratic"] == ["const", "a", "b", "c", "a^2", "b^2", "c^2"]


@pytest.mark.parametrize("form, formula", [
    ("linear", "y ~ a + b"),
    ("interaction", "y ~ a + b + a:b"),
    ("quadratic", "y ~ a + b + a:b + I(a**2) + I(b**2)"),
    ("purequadratic", "y ~ a + b + I(a**2) + I(b**2)"),
])
def test_forms_match_statsmodels_formulas(form, formula):
    """Standardised fitting, mapped back to raw units, equals a raw statsmodels fit."""
    df = grid()
    fit = fit_terms(df[["a", "b"]].to_numpy(), df["y"].to_numpy(), dz.form_terms(form, 2),
                    ["a", "b"])
    ref = smf.ols(formula, df).fit()
    coefs = fit.coefficients()
    assert np.allclose([c["coef"] for c in coefs], ref.params.to_numpy(), rtol=1e-7, atol=1e-9)
    assert np.allclose([c["se"] for c in coefs], ref.bse.to_numpy(), rtol=1e-6)
    assert np.allclose([c["p"] for c in coefs], ref.pvalues.to_numpy(), rtol=1e-5, atol=1e-300)
    m = fit.metrics()
    assert m["r2"] == pytest.approx(ref.rsquared, rel=1e-10)
    assert m["adj_r2"] == pytest.approx(ref.rsquared_adj, rel=1e-10)
    assert m["mse_resid"] == pytest.approx(ref.mse_resid, rel=1e-10)  # regstats' mse
    assert m["mse"] == pytest.approx(np.mean(ref.resid**2), rel=1e-10)  # ARPE's eq. 2
    assert np.allclose(fit.residuals, ref.resid.to_numpy())


def test_high_order_polynomial_is_well_conditioned():
    """p^6 at p ~ 1000 (1e18) would wreck a raw design; standardising keeps np.polyfit's
    answer (which also scales internally)."""
    rng = np.random.default_rng(3)
    x = np.linspace(100, 1000, 40)
    y = 5 + 1e-8 * x**3 + rng.normal(0, 0.1, x.size)
    fit = fit_terms(x.reshape(-1, 1), y, dz.polynomial_terms(6), ["x"])
    assert fit.dropped == []
    assert np.allclose([c["coef"] for c in fit.coefficients()], np.polyfit(x, y, 6)[::-1],
                       rtol=1e-5)
    assert np.allclose(fit.fitted, np.polyval(np.polyfit(x, y, 6), x), atol=1e-8)


def test_dependent_terms_are_dropped_and_reported():
    """The square of a two-level parameter is a linear combination of 1 and the parameter."""
    df = grid()
    df["b"] = np.where(df["b"] > 1, 2.0, 1.0)
    fit = fit_terms(df[["a", "b"]].to_numpy(), df["y"].to_numpy(), dz.form_terms("quadratic", 2),
                    ["a", "b"])
    assert [dz.term_name(t, ["a", "b"]) for t in fit.dropped] == ["b^2"]
    assert "b^2" not in [c["term"] for c in fit.coefficients()]


def test_raw_transform_inverts_standardisation():
    terms = dz.form_terms("quadratic", 2)
    center, scale = np.array([3.0, -2.0]), np.array([2.0, 0.5])
    beta = np.arange(1.0, len(terms) + 1)
    X = np.random.default_rng(0).normal(size=(7, 2))
    z = (X - center) / scale
    raw = dz.raw_transform(terms, center, scale) @ beta
    assert np.allclose(dz.design(z, terms) @ beta, dz.design(X, terms) @ raw)


def test_cv_chooses_the_true_order_where_training_error_overfits():
    rng = np.random.default_rng(7)
    x = np.repeat(np.linspace(1, 10, 8), 3)
    y = 2 + 0.5 * x - 0.3 * x**2 + rng.normal(0, 0.3, x.size)
    cands = selection.polynomial_candidates(x, y, "x", selection.make_folds(x, 10), max_order=6)
    chosen = [c for c in cands if c.chosen]
    assert [c.order for c in cands] == [1, 2, 3, 4, 5, 6]
    assert chosen[0].order == 2
    assert chosen[0].extra["order_by_training_error"] == 6  # ARPE's rule picks the highest
    train = [c.fit.metrics()["mse"] for c in cands]
    assert all(b <= a + 1e-12 for a, b in zip(train, train[1:], strict=False))


def test_polynomial_order_is_capped_by_distinct_values_per_fold():
    x = np.repeat([1.0, 2.0, 3.0], 2)
    y = x**2
    cands = selection.polynomial_candidates(x, y, "x", selection.make_folds(x, 10), 8)
    # leave-one-value-out leaves 2 distinct values: only order 1 is identifiable in every fold
    assert [c.order for c in cands] == [1]


def test_folds_keep_configurations_whole():
    groups = ["c"] * 3 + ["a"] * 2 + ["b"] * 4 + ["d"]
    folds = selection.make_folds(groups, 10)
    assert len(folds) == 4
    for train, test in folds:
        assert len({groups[i] for i in test}) == 1
        assert not {groups[i] for i in test} & {groups[i] for i in train}
    assert sorted(np.concatenate([te for _, te in folds]).tolist()) == list(range(10))
    folds3 = selection.make_folds([f"g{i}" for i in range(12)], 3)
    assert len(folds3) == 3 and all(len(te) == 4 for _, te in folds3)


def test_best_model_is_the_true_form_by_cv():
    df = grid(seed=1)
    res = selection.fit_effect(df, "y", "y", ["a", "b"], groups=df["point"],
                               fit=fit_of(max_order=3, normal_form={"enabled": False}))
    assert res.best is not None and res.best.model == "ols:interaction"
    table = selection.models_frame([res])
    assert table["best"].sum() == 1
    chosen = table[table["chosen"]]
    assert chosen.loc[chosen["cv_mse"].idxmin(), "model"] == "ols:interaction"
    # the richer quadratic form fits the training data at least as well but is not chosen
    train = table.set_index("model")["mse"]
    assert train["ols:quadratic"] <= train["ols:interaction"]


def test_prediction_intervals_cover_new_runs():
    """95 % prediction intervals of the true model contain about 95 % of fresh runs."""
    df = grid(seed=2, noise=0.5)
    res = selection.fit_effect(df, "y", "y", ["a", "b"], groups=df["point"], fit=ARPE_FIT)
    fresh = grid(seed=99, noise=0.5)
    pred = selection.predict_frame(res, fresh[["a", "b"]], alpha=0.05)
    inside = (fresh["y"] >= pred["obs_ci_lower"]) & (fresh["y"] <= pred["obs_ci_upper"])
    assert 0.85 <= inside.mean() <= 1.0
    assert (pred["mean_ci_upper"] - pred["mean_ci_lower"]
            < pred["obs_ci_upper"] - pred["obs_ci_lower"]).all()


def test_derived_regressor_recovers_arpes_energy_model():
    """energy = idle * t + c * t * power: a linear model in the derived t*power (ARPE's case)."""
    rng = np.random.default_rng(5)
    threads = np.repeat([1, 2, 3, 4, 6, 8], 4).astype(float)
    t = 20 / np.minimum(threads, 6) + rng.normal(0, 0.2, threads.size)
    power = 60 + 12 * np.minimum(threads, 6) + rng.normal(0, 1, threads.size)
    df = pd.DataFrame({"threads": threads, "wall_s": t, "power_w": power,
                       "point": [f"threads~{x:g}" for x in threads], "status": "ok"})
    df["energy_j"] = t * power + rng.normal(0, 2, threads.size)
    out = analyse(df, campaign="energy", parameters=["threads"], fit=build(FitSettings, {
        "max_order": 3, "cv_folds": 10, "alpha": 0.05, "forms": list(dz.FORMS),
        "normal_form": ARPE_ONLY}),
        analysis=build(Analysis, {
            "derived": {"tp": "wall_s * power_w"},
            "models": [{"name": "e~tp", "y": "energy_j", "x": ["tp"]},
                       {"name": "e~threads", "y": "energy_j", "x": ["threads"]}],
            "predict": []}))
    eff = {e["effect"]: e for e in out["summary"]["effects"]}
    best = next(m for m in eff["e~tp"]["models"] if m["model"] == eff["e~tp"]["best"])
    assert best["order"] == 1
    assert best["coefficients"][1]["coef"] == pytest.approx(1.0, abs=0.02)
    assert best["r2"] > 0.999
    e_threads = min(m["cv_mse"] for m in eff["e~threads"]["models"])
    assert best["cv_mse"] < e_threads


def test_analyse_leaves_failed_runs_out_and_predicts_new_points():
    df = grid()
    df["status"] = "ok"
    df.loc[0, "status"] = "timeout"
    df.loc[0, "y"] = np.nan
    df["iteration"] = 1
    fit = build(FitSettings, {"max_order": 2, "cv_folds": 10, "alpha": 0.1,
                              "forms": ["linear", "interaction"],
                              "normal_form": ARPE_ONLY})
    analysis = build(Analysis, {"derived": {"ab": "a*b"},
                                "models": [{"name": "y", "y": "y", "x": ["a", "b"]},
                                           {"name": "y~ab", "y": "y", "x": ["ab"]}],
                                "predict": [{"a": 7, "b": 3}]})
    out = analyse(df, campaign="g", parameters=["a", "b"], fit=fit, analysis=analysis)
    s = out["summary"]
    assert s["n_runs"] == len(df) and s["n_ok"] == len(df) - 1
    assert s["fit"] == {"max_order": 2, "cv_folds": 10, "alpha": 0.1,
                        "forms": ["linear", "interaction"],
                              "normal_form": ARPE_ONLY}
    assert s["status"] == {"ok": len(df) - 1, "timeout": 1}
    p = out["predictions"]
    new = p[(p["source"] == "predict") & (p["effect"] == "y")]
    assert new["mean"].iloc[0] == pytest.approx(1 + 14 + 9 + 84, rel=0.01)
    assert len(p[(p["source"] == "measured") & (p["effect"] == "y")]) == 18
    new_ab = p[(p["source"] == "predict") & (p["effect"] == "y~ab")]
    assert new_ab["ab"].iloc[0] == 21  # the derived regressor computed at the new point
    fitted = out["fitted"]
    assert set(fitted.columns) >= {"effect", "model", "point", "y", "fitted", "residual"}
    assert np.allclose(fitted["y"] - fitted["fitted"], fitted["residual"])


def test_add_derived_chains():
    df = pd.DataFrame({"a": [1.0, 2.0]})
    assert add_derived(df, {"b": "a * 2", "c": "b + 1"})["c"].tolist() == [3.0, 5.0]
    with pytest.raises(InputError):
        add_derived(df, {"b": "zz"})


def test_same_model_means_the_same_design_not_the_same_fitted_values():
    """A law is "the same model" as an ARPE candidate only when their designs span the same
    space on the data: a constant y is fitted exactly by every candidate, which makes none of
    them the same as another; on an exact line the law p is poly[p]^1, and only it."""
    p = np.array([1.0, 2, 4, 8, 16, 32])
    for y, same in ((np.full(6, 5.0), []), (3 + 2 * p, ["pmnf:p is the same model as "
                                                        "poly[p]^1 (another family's name for "
                                                        "it)"])):
        df = pd.DataFrame({"p": np.repeat(p, 2), "t": np.repeat(y, 2)})
        res = selection.fit_effect(df, "t", "t", ["p"], fit=FIT,
                                   groups=[f"{v:g}" for v in df["p"]])
        assert [n for n in res.notes if "same model" in n] == same
    assert selection.same_span(np.c_[np.ones(4), [1.0, 2, 3, 4]],
                               np.c_[np.ones(4), [2.0, 4, 6, 8]])
    assert not selection.same_span(np.c_[np.ones(4), [1.0, 2, 3, 4]],
                                   np.c_[np.ones(4), [1.0, 4, 9, 16]])


# --- perfcast fit -----------------------------------------------------------------------------


def test_cli_fit_prints_every_model_and_the_best(perfcast_cli, tmp_path):
    df = grid(seed=4)
    df["status"] = "ok"
    df.loc[len(df)] = {"a": 1.0, "b": 1.0, "y": np.nan, "point": "a~1_b~1", "status": "failed"}
    csv = tmp_path / "runs.csv"
    df.to_csv(csv, index=False)
    proc = perfcast_cli("fit", str(csv), "--y", "y", "--x", "a", "b", "--max-order", "3",
                   "--derived", "ab=a*b")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    # the normal form's a + b + a*b is ARPE's interaction form; the law wins the tie
    assert out["best"] == "pmnf:a + b + a * b" and out["n"] == 54
    assert out["best_family"] == "performance model normal form"
    assert out["selected_by"] == "cv_smape" and out["formula"].startswith("y = 1.0")
    models = {m["model"]: m for m in out["models"]}
    assert models["pmnf:a + b + a * b"]["same_as"] == "ols:interaction"
    assert "pmnf:a + b + a * b is the same model as ols:interaction (another family's name " \
        "for it)" in out["notes"]
    assert models["ols:interaction"]["cv_smape"] == pytest.approx(
        models["pmnf:a + b + a * b"]["cv_smape"], rel=1e-6)
    assert set(models) >= {"poly[a]^1", "poly[b]^1", "ols:linear", "ols:interaction",
                           "ols:quadratic", "ols:purequadratic"}
    inter = models["ols:interaction"]
    assert inter["form"] == "interaction"
    assert [c["term"] for c in inter["coefficients"]] == ["const", "a", "b", "a*b"]
    assert inter["coefficients"][3]["coef"] == pytest.approx(4, abs=0.05)
    assert {"mse", "r2", "adj_r2", "cv_mse", "order_by_training_error"} <= set(
        models["poly[a]^1"])
    assert models["poly[a]^1"]["order"] == 1


def test_cli_fit_refuses_bad_input_clearly(tmp_path, capsys):
    from perfcast.cli import main

    csv = tmp_path / "t.csv"
    csv.write_text("a,y\n1,2\n2,x3\n3,4\n")
    cases = [
        ([str(csv), "--y", "y", "--x", "a"], ["line 3", "'y'", "not a number"]),
        ([str(csv), "--y", "nope", "--x", "a"], ["no column(s) ['nope']"]),
        ([str(tmp_path / "missing.csv"), "--y", "y", "--x", "a"], ["file not found"]),
        ([str(csv), "--y", "y", "--x", "a", "--derived", "q=os.system"], ["not allowed"]),
        # the flags are checked by the schema of sweep.fit, as the workflow's settings
        ([str(csv), "--y", "y", "--x", "a", "--max-order", "0"], ["fit.max_order", "minimum"]),
        ([str(csv), "--y", "y", "--x", "a", "--max-order", "20"], ["--max-order 20 is greater"]),
        ([str(csv), "--y", "y", "--x", "a", "--max-terms", "3"], ["--max-terms 3"]),
        ([str(csv), "--y", "y", "--x", "a", "--predict", "a:3"], ["--predict 'a:3'"]),
        ([str(csv), "--y", "y"], ["--y and --x are required"]),
        ([str(csv), "--y", "y", "--x", "a", "--cv-folds", "1"], ["fit.cv_folds"]),
    ]
    for args, words in cases:
        assert main(["fit", *args]) == 2
        err = capsys.readouterr().err
        assert err.startswith("perfcast fit: error:") and len(err.splitlines()) == 1
        for w in words:
            assert w in err


# --- two configurations, one configuration --------------------------------------------------


def swaptions_like(seed=11, values=(1.0, 4.0), runs=10):
    """One parameter at two values, ten runs each (e.g. swaptions' runtime at 1 and 4 threads):
    runtime = 20 - 3 * threads + noise (sd 0.2)."""
    rng = np.random.default_rng(seed)
    t = np.repeat(np.asarray(values, dtype=float), runs)
    real = 20 - 3 * t + rng.normal(0, 0.2, t.size)
    return pd.DataFrame({"param": t, "real": real, "iteration": np.tile(np.arange(runs),
                                                                         len(values))})


def test_two_configurations_give_the_order_1_line_with_its_statistics():
    df = swaptions_like()
    res = selection.fit_effect(df, "real", "real", ["param"], fit=ARPE_FIT)
    assert [c.model for c in res.candidates] == ["poly[param]^1"]
    best = res.best
    assert best is not None and best.model == "poly[param]^1" and best.order == 1
    # the least-squares line through two groups joins the two group means
    means = df.groupby("param")["real"].mean()
    slope = (means[4.0] - means[1.0]) / 3.0
    ref = smf.ols("real ~ param", data=df).fit()
    coef = {c["term"]: c for c in best.fit.coefficients()}
    assert coef["param"]["coef"] == pytest.approx(slope, rel=1e-9)
    assert coef["param"]["coef"] == pytest.approx(-3, abs=0.2)
    assert coef["param"]["se"] == pytest.approx(ref.bse["param"], rel=1e-9)
    m = best.fit.metrics()
    assert m["r2"] == pytest.approx(ref.rsquared, rel=1e-9) and 0.99 < m["r2"] < 1
    assert m["n"] == 20 and m["mse"] > 0  # replicates leave residuals
    assert np.isnan(best.cv_mse)
    assert any("no cross-validated order selection" in n and "'param'" in n
               for n in res.notes)


def test_one_configuration_gives_no_model_and_says_so():
    df = swaptions_like(values=(2.0,))
    res = selection.fit_effect(df, "real", "real", ["param"], fit=ARPE_FIT)
    assert res.candidates == [] and res.best is None
    assert any("1 configuration" in n and "no model" in n for n in res.notes)


def test_model_list_is_never_empty_without_a_note():
    cases = [swaptions_like(values=(2.0,)), swaptions_like(values=(1.0, 2.0)),
             swaptions_like(values=(1.0, 2.0, 3.0)), swaptions_like(runs=1).head(1)]
    for df in cases:
        for x in (["param"], ["param", "iteration"]):
            res = selection.fit_effect(df, "real", "real", x, groups=df["param"].tolist(),
                                       fit=ARPE_FIT)
            assert res.candidates or res.notes, (len(df), x)


def test_three_configurations_still_cross_validate():
    res = selection.fit_effect(swaptions_like(values=(1.0, 2.0, 4.0)), "real", "real",
                               ["param"], fit=ARPE_FIT)
    assert res.best is not None and np.isfinite(res.best.cv_mse)
    assert not any("no cross-validated" in n for n in res.notes)


def test_cli_fit_on_two_configurations_prints_the_line_and_the_note(perfcast_cli, tmp_path):
    csv = tmp_path / "sw.csv"
    swaptions_like().to_csv(csv, index=False)
    proc = perfcast_cli("fit", str(csv), "--y", "real", "--x", "param")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["best"] == "poly[param]^1" and out["n_configurations"] == 2
    (model,) = out["models"]
    assert model["cv_mse"] is None and 0.99 < model["r2"] < 1
    assert [c["term"] for c in model["coefficients"]] == ["const", "param"]
    assert any("no cross-validated order selection" in n for n in out["notes"])
    one = tmp_path / "one.csv"
    swaptions_like(values=(2.0,)).to_csv(one, index=False)
    out1 = json.loads(perfcast_cli("fit", str(one), "--y", "real", "--x", "param").stdout)
    assert out1["models"] == [] and out1["best"] is None and out1["notes"]


def test_campaign_with_two_configurations_predicts_from_the_line():
    df = swaptions_like()
    df["point"] = [f"param~{v:g}" for v in df["param"]]
    df["status"] = "ok"
    fit = build(FitSettings, {"max_order": 4, "cv_folds": 10, "alpha": 0.05,
                              "forms": ["linear"], "normal_form": ARPE_ONLY})
    analysis = build(Analysis, {"derived": {}, "predict": [{"param": 2}],
                                "models": [{"name": "real", "y": "real", "x": ["param"]}]})
    out = analyse(df, campaign="swaptions", parameters=["param"], fit=fit, analysis=analysis)
    (eff,) = out["summary"]["effects"]
    assert eff["best"] == "poly[param]^1" and eff["notes"]
    p = out["predictions"]
    means = df.groupby("param")["real"].mean()
    assert p.loc[p["source"] == "predict", "mean"].iloc[0] == pytest.approx(
        means[1.0] + (means[4.0] - means[1.0]) / 3, rel=1e-9)
    assert len(p[p["source"] == "measured"]) == 2


# --- the normal form beside ARPE's candidates ------------------------------------------------


def plogp(noise=0.0, reps=1, seed=0, levels=range(1, 7)):
    """t = 3 + 0.5 p log2 p at p = 2 ... 64 (the issue's FFT-like law)."""
    rng = np.random.default_rng(seed)
    p = np.repeat(2.0 ** np.asarray(list(levels)), reps)
    t = (3 + 0.5 * p * np.log2(p)) * (1 + rng.normal(0, noise, p.size))
    return pd.DataFrame({"p": p, "t": t})


def test_normal_form_finds_p_log_p_where_polynomials_extrapolate_badly():
    df = plogp()
    res = selection.fit_effect(df, "t", "t", ["p"], fit=FIT)
    assert res.best.kind == "normal_form" and res.best.formula("t") == "t = 3 + 0.5 * p * log2(p)"
    pred = selection.predict_frame(res, pd.DataFrame({"p": [128.0, 256.0]}), 0.05)
    assert np.allclose(pred["mean"], [3 + 0.5 * 128 * 7, 3 + 0.5 * 256 * 8], rtol=1e-9)
    # ARPE's candidates alone: a polynomial
    arpe = selection.fit_effect(df, "t", "t", ["p"], fit=ARPE_FIT)
    assert arpe.best.kind == "polynomial"
    summary = selection.result_summary(res)
    assert summary["best_family"] == "performance model normal form"
    assert [m["model"] for m in summary["models"]].count(summary["best"]) == 1


def test_normal_form_with_noise_and_repetitions_predicts_within_the_noise():
    df = plogp(noise=0.1, reps=5, seed=3)
    df["point"] = df["p"].map(lambda v: f"p~{v:g}")
    res = selection.fit_effect(df, "t", "t", ["p"], groups=df["point"],
                               fit=FIT)
    pred = selection.predict_frame(res, pd.DataFrame({"p": [128.0, 256.0]}), 0.05)
    truth = np.array([3 + 0.5 * 128 * 7, 3 + 0.5 * 256 * 8])
    assert (np.abs(pred["mean"] / truth - 1) < 0.1).all()
    assert ((pred["obs_ci_lower"] < truth) & (truth < pred["obs_ci_upper"])).all()


def test_median_aggregation_resists_an_outlier_run():
    df = plogp(reps=3)
    df.loc[df.index[-1], "t"] *= 10  # one run of the largest configuration went wrong
    res = selection.fit_effect(df, "t", "t", ["p"],
                               fit=fit_of(normal_form={"aggregate": "median"}))
    assert res.best.formula("t") == "t = 3 + 0.5 * p * log2(p)"
    assert res.best.extra["aggregate"] == "median"


def test_sparse_cross_design_lists_collinear_forms_once():
    pts = [(32.0, n) for n in (5000.0, 6000, 7000, 8000, 9000)] + \
          [(p, 5000.0) for p in (64.0, 128, 256, 512)]
    df = pd.DataFrame(pts * 2, columns=["p", "n"])
    df["t"] = 10 + 50 * np.log2(df["p"]) + 0.1 * df["n"]
    res = selection.fit_effect(df, "t", "t", ["p", "n"], fit=FIT)
    models = [c.model for c in res.candidates]
    assert len(models) == len(set(models))
    assert "ols:interaction" not in models and "ols:purequadratic" not in models
    assert "ols:linear" in models and "ols:quadratic" in models
    assert "ols:interaction fits the same terms as ols:linear once the collinear term(s) p*n " \
        "are dropped; listed once, as ols:linear" in res.notes
    assert any(n.startswith("ols:purequadratic fits the same terms as ols:quadratic")
               for n in res.notes)
    assert res.best.kind == "normal_form"
    assert res.best.formula("t") == "t = 10 + 50 * log2(p) + 0.1 * n"


def test_non_finite_derived_values_are_missing_with_a_note_naming_the_rows():
    df = pd.DataFrame({"p": [0.0, 1, 2, 4, 8, 16], "t": [1.0, 2, 3, 4, 5, 6]})
    df = add_derived(df, {"lp": "log2(p)"})
    res = selection.fit_effect(df, "t", "t", ["lp"], fit=FIT)
    assert any("column 'lp': non-finite value(s) at row(s) 0 (0-based)" in n for n in res.notes)
    assert res.n == 5 and res.best.formula("t") == "t = 2 + 1 * lp"


def test_no_prediction_is_written_where_the_model_is_not_finite():
    """A config point where the law is undefined (log2 at p = 0) or overflows is reported as
    not predictable, naming the point, the model and where it lies, and the run completes; a
    measured configuration whose derived regressor is not finite (a missing value of the
    fit, noted) is not predicted: no NaN leaves as an answer."""
    p = np.repeat([1.0, 2, 4, 8, 16, 32], 3)
    df = pd.DataFrame({"p": p, "t": 3 + 0.5 * p * np.log2(p) + np.tile([0.0, 0.1, -0.1], 6),
                       "status": "ok", "point": [f"p~{v:g}" for v in p]})
    models = [{"name": "t", "y": "t", "x": ["p"]}]
    for point, shown in (({"p": 0}, "0"), ({"p": -4}, "-4"), ({"p": 1e300}, "1e+300")):
        out = analyse(df, campaign="c", parameters=["p"], fit=FIT, analysis=build(
            Analysis, {"derived": {}, "models": models, "predict": [point]}))
        asked, = out["summary"]["effects"][0]["predictions"]
        assert not asked["predictable"] and asked["mean"] is None
        assert ("not predictable: effect 't': the model t = 3 + 0.5 * p * log2(p) has no "
                f"finite prediction at p={shown}, outside the measured range") in asked["note"]
        assert asked["note"] in out["summary"]["effects"][0]["notes"]
        pred = out["predictions"]
        row = pred[pred["source"] == "predict"]
        assert not row["predictable"].any() and row["mean"].isna().all()
        shown_ok = pred[pred["source"] != "predict"]
        assert np.isfinite(shown_ok[["mean", "obs_ci_lower", "obs_ci_upper"]].to_numpy()).all()
    zero = pd.concat([df, df.iloc[:3].assign(p=0.0, t=3.0, point="p~0")], ignore_index=True)
    out = analyse(zero, campaign="c", parameters=["p"], fit=FIT, analysis=build(Analysis, {
        "derived": {"lp": "log2(p)"}, "models": [{"name": "t~lp", "y": "t", "x": ["lp"]}],
        "predict": [{"p": 64}]}))
    pred = out["predictions"]
    assert np.isfinite(pred[["mean", "obs_ci_lower", "obs_ci_upper"]].to_numpy()).all()
    assert 0.0 not in pred["p"].tolist() and 64.0 in pred["p"].tolist()
    assert any("column 'lp': non-finite value(s)" in n
               for n in out["summary"]["effects"][0]["notes"])


def test_a_line_through_two_runs_predicts_without_intervals_and_says_so():
    """Two runs and two coefficients leave no residual degree of freedom: the prediction is the
    line's, its standard error and intervals do not exist (NaN), and a note says why; a point
    where even the line is not finite still fails."""
    df = pd.DataFrame({"x": [1.0, 3.0], "t": [5.0, 9.0], "status": "ok",
                       "point": ["x~1", "x~3"]})
    out = analyse(df, campaign="two", parameters=["x"], fit=FIT, analysis=build(Analysis, {
        "derived": {}, "models": [{"name": "t", "y": "t", "x": ["x"]}],
        "predict": [{"x": 2}]}))
    pred = out["predictions"].set_index("x")
    assert pred.loc[2.0, "mean"] == pytest.approx(7.0)
    assert pred[["mean_se", "obs_ci_lower", "obs_ci_upper"]].isna().all().all()
    notes = out["summary"]["effects"][0]["notes"]
    assert [n for n in notes if "no residual degree of freedom" in n] == [
        f"{out['summary']['effects'][0]['best']}: fitted on 2 observations for 2 coefficients, "
        "no residual degree of freedom: its predictions have no standard error and no "
        "intervals"]
    out = analyse(df, campaign="two", parameters=["x"], fit=FIT, analysis=build(Analysis, {
        "derived": {}, "models": [{"name": "t", "y": "t", "x": ["x"]}],
        "predict": [{"x": 1e308}, {"x": -1e308}]}))
    asked = out["summary"]["effects"][0]["predictions"]
    assert [a["predictable"] for a in asked] == [False, False]
    assert "no finite prediction at x=1e+308" in asked[0]["note"]


@pytest.mark.parametrize("point, why", [
    ("p=0", "has no finite prediction at p=0"), ("p=1e300", "no finite prediction at p=1e+300"),
    ("p=nan", "each number finite"), ("p=inf", "each number finite"),
    ("p=128,p=256", "each name once")])
def test_cli_fit_refuses_a_point_it_cannot_predict(perfcast_cli, tmp_path, point, why):
    p = np.repeat([2.0, 4, 8, 16, 32, 64], 2)
    csv = tmp_path / "t.csv"
    pd.DataFrame({"p": p, "t": 3 + 0.5 * p * np.log2(p)}).to_csv(csv, index=False)
    proc = perfcast_cli("fit", str(csv), "--y", "t", "--x", "p", "--predict", point)
    assert proc.returncode == 2 and why in proc.stderr and "--predict" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not proc.stdout


def test_cli_fit_predicts_with_intervals_draws_the_model_and_reads_extrap_text(perfcast_cli,
                                                                               tmp_path):
    lines = ["PARAMETER p", "POINTS " + " ".join(f"( {2 ** k} )" for k in range(1, 7)),
             "REGION main", "METRIC time"]
    rng = np.random.default_rng(5)
    for k in range(1, 7):
        p = 2.0 ** k
        reps = (3 + 0.5 * p * np.log2(p)) * (1 + rng.normal(0, 0.02, 4))
        lines.append("DATA " + " ".join(f"{v:.6f}" for v in reps))
    txt = tmp_path / "fft.txt"
    txt.write_text("\n".join(lines) + "\n")
    png = tmp_path / "model.png"
    proc = perfcast_cli("fit", str(txt), "--predict", "p=128", "p=256", "--plot", str(png))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["best_family"] == "performance model normal form"
    assert "p * log2(p)" in out["formula"]
    pred = {row["p"]: row for row in out["predictions"]}
    for p in (128.0, 256.0):
        truth = 3 + 0.5 * p * np.log2(p)
        assert pred[p]["obs_ci_lower"] <= truth <= pred[p]["obs_ci_upper"]
        assert pred[p]["obs_ci_lower"] >= 0
    assert png.stat().st_size > 10_000


def test_prediction_bands_of_a_positive_quantity_never_go_below_zero(tmp_path):
    """Few noisy points and a wide band: the drawn band is clipped at zero."""
    import matplotlib

    matplotlib.use("Agg")
    from perfcast.sweep import figures

    df = pd.DataFrame({"p": np.repeat([1.0, 2, 4, 8], 2),
                       "t": [1.0, 3, 0.5, 2.5, 1.5, 0.2, 2.0, 3.5]})
    res = selection.fit_effect(df, "t", "t", ["p"], fit=FIT)
    fig, ax = figures.new_figure(1, 1)
    figures.model_curves(ax, res.best, df, "t", "p", 0.05)
    bands = [c for c in ax.collections if type(c).__name__ == "FillBetweenPolyCollection"
             or type(c).__name__ == "PolyCollection"]
    assert bands and min(v[:, 1].min() for b in bands for v in
                         [p.vertices for p in b.get_paths()]) >= 0
    assert figures.log_spaced(np.array([2.0, 4, 8, 16])) and \
        not figures.log_spaced(np.array([1.0, 2, 3, 4, 5]))


def test_categorical_parameter_of_an_arpe_import_gives_one_model_per_level(tmp_path):
    """ARPE's x264 campaign sweeps the input video: a file name, not a number."""
    from perfcast.sweep import arpe
    from perfcast.sweep.campaign_parser import parse_import

    base = {"blue_sky_1080p25.y4m": 40.0, "pedestrian_area_1080p25.y4m": 20.0}
    for video, work in base.items():
        for threads in (1, 2, 4, 8):
            for it in (1, 2):
                d = tmp_path / f"{video}-{threads}" / str(it)
                d.mkdir(parents=True)
                real = 0.5 + work / threads + 0.01 * it
                (d / arpe.TIMED).write_text(f"{real:.2f} {real:.2f} 0.00 {video} {threads}\n")
    df = arpe.import_arpe(tmp_path, ["video", "threads"], "x264")
    assert set(df["video"]) == set(base) and df["threads"].dtype.kind == "i"
    settings = from_section(SweepSettings, {"imports": {"x264": {
        "path": str(tmp_path), "parameters": ["video", "threads"],
        "models": [{"y": "wall_s"}]}}}, "sweep")
    spec = parse_import("x264", settings.imports["x264"])
    out = analyse(df, campaign="x264", parameters=list(spec.parameters),
                  analysis=spec.analysis, fit=settings.fit)
    effects = {e["effect"]: e for e in out["summary"]["effects"]}
    assert sorted(effects) == [f"wall_s~video+threads [video={v}]" for v in sorted(base)]
    assert any("categorical parameter(s) ['video']" in n for n in out["summary"]["notes"])
    for video, work in base.items():
        e = effects[f"wall_s~video+threads [video={video}]"]
        assert e["x"] == ["threads"] and e["n"] == 8
        res = next(r for r in out["results"] if r.name == e["effect"])
        pred = res.best.fit.predict(np.array([[16.0]]), alpha=0.05)["mean"][0]
        assert pred == pytest.approx(0.515 + work / 16, rel=0.02)  # the law, not a polynomial


def test_cli_fit_reads_an_arpe_results_folder_one_level_at_a_time(perfcast_cli, tmp_path):
    from perfcast.sweep import arpe

    for video in ("a.y4m", "b.y4m"):
        for threads in (1, 2, 4, 8, 16):
            d = tmp_path / "results" / f"{video}-{threads}" / "1"
            d.mkdir(parents=True)
            real = 1 + (60 if video == "a.y4m" else 30) / threads
            (d / arpe.TIMED).write_text(f"{real:.3f} {real:.3f} 0.00 {video} {threads}\n")
    res = str(tmp_path / "results")
    proc = perfcast_cli("fit", res, "--parameters", "video", "threads")
    assert proc.returncode == 2
    assert "--level video=VALUE" in proc.stderr and "['a.y4m', 'b.y4m']" in proc.stderr
    proc = perfcast_cli("fit", res, "--parameters", "video", "threads", "--level", "video=b.y4m",
                   "--predict", "threads=32")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["x"] == ["threads"] and out["n"] == 5
    assert out["predictions"][0]["mean"] == pytest.approx(1 + 30 / 32, rel=0.01)
    proc = perfcast_cli("fit", res, "--parameters", "video", "threads", "--level", "video=c")
    assert proc.returncode == 2 and "no row has video = 'c'" in proc.stderr


def test_cli_fit_of_a_table_names_a_text_column_it_pools(perfcast_cli, tmp_path):
    """A table whose text column (an input file) takes two values at every configuration: the
    fit pools them as repetitions and finds the law of their mix (1 + 45 / p of 1 + 60 / p and
    1 + 30 / p): it says so, naming the column, its values and --level, in the notes and on
    stderr. A run id (a value per row) and a numeric column are not named, and with --level
    the law of the one input is found without the note."""
    rows = ["input,run,p,t,user_s"]
    for video, work in (("a.y4m", 60), ("b.y4m", 30)):
        for p in (1, 2, 4, 8, 16):
            rows.append(f"{video},{video}-{p},{p},{1 + work / p},{work / p}")
    table = tmp_path / "runs.csv"
    table.write_text("\n".join(rows) + "\n")
    proc = perfcast_cli("fit", str(table), "--y", "t", "--x", "p", "--predict", "p=32")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["predictions"][0]["mean"] == pytest.approx(1 + 45 / 32, rel=0.01)
    named = [n for n in out["notes"] if n.startswith("column ")]
    assert len(named) == 1 and "'input'" in named[0] and "'a.y4m', 'b.y4m'" in named[0]
    assert "--level input=VALUE" in named[0] and named[0] in proc.stderr
    proc = perfcast_cli("fit", str(table), "--y", "t", "--x", "p", "--level", "input=b.y4m",
                        "--predict", "p=32")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["predictions"][0]["mean"] == pytest.approx(1 + 30 / 32, rel=0.01)
    assert not [n for n in out["notes"] if n.startswith("column ")] and "warning" not in proc.stderr


def test_matmul_sweep_over_two_worker_counts_finds_size_cubed_over_workers():
    """The workflow's own campaign: time ~ size^3 / workers at workers 1 and 2."""
    rng = np.random.default_rng(0)
    rows = [(s, w) for s in (128.0, 256, 512, 1024) for w in (1.0, 2) for _ in range(2)]
    df = pd.DataFrame(rows, columns=["size", "workers"])
    df["wall_s"] = (0.05 + 2e-9 * df["size"] ** 3 / df["workers"]) * \
        (1 + rng.normal(0, 0.03, len(df)))
    df["point"] = [f"size~{a:g}_workers~{b:g}" for a, b in zip(df["size"], df["workers"],
                                                                strict=True)]
    res = selection.fit_effect(df, "wall_s", "wall_s", ["size", "workers"], groups=df["point"],
                               fit=fit_of(max_order=3))
    assert res.best.model == "pmnf:size^3 * workers^(-1)"
    assert any("'workers' takes 2 values" in n for n in res.notes)
    pred = selection.predict_frame(res, pd.DataFrame({"size": [2048.0], "workers": [2.0]}), 0.05)
    assert pred["mean"][0] == pytest.approx(0.05 + 2e-9 * 2048 ** 3 / 2, rel=0.06)


def test_paper_figure_draws_the_model_as_a_smooth_curve_over_a_dense_grid():
    """Six log-spaced levels of t = 3 + 0.5 p log2 p, predicted at p = 128: the paper
    figure's line runs over the dense grid up to the new point (many more points than levels,
    each on the true law), on a log x axis, its band never below zero."""
    import matplotlib

    matplotlib.use("Agg")
    from perfcast.sweep import artifacts

    p = np.repeat([2.0, 4, 8, 16, 32, 64], 2)
    rng = np.random.default_rng(3)
    t = (3 + 0.5 * p * np.log2(p)) * (1 + rng.normal(0, 0.02, p.size))
    runs = pd.DataFrame({"point": [f"p~{v:g}" for v in p], "iteration": 1, "p": p,
                         "wall_s": t, "status": "ok"})
    out = analyse(runs, campaign="nlogn", parameters=["p"], fit=FIT, analysis=build(
        Analysis, {"derived": {}, "models": [{"name": "t", "y": "wall_s", "x": ["p"]}],
                   "predict": [{"p": 128}]}))
    preds = out["predictions"]
    curve = preds[preds["source"] == "curve"]
    assert curve["p"].min() == 2 and curve["p"].max() == 128
    fig = artifacts.predictions_figure({"nlogn": (out["models"], preds, runs, ["p"])})
    ax = fig.axes[0]
    line = ax.get_lines()[0]
    xs, ys = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
    assert len(xs) >= 10 * 6 and np.all(np.diff(xs) > 0)
    assert ax.get_xscale() == "log"
    truth = 3 + 0.5 * xs * np.log2(xs)
    assert np.max(np.abs(ys / truth - 1)) < 0.05
    bands = [c for c in ax.collections if "PolyCollection" in type(c).__name__]
    assert bands and min(pp.vertices[:, 1].min() for b in bands for pp in b.get_paths()) >= 0


def test_no_curve_where_a_regressor_depends_on_measurements():
    """A derived regressor such as time * power is unknown between the measured levels: the
    curve rows are left out (the figure then joins the measured configurations)."""
    from perfcast.sweep.analysis import curve_points

    df = pd.DataFrame({"threads": [1.0, 2, 4], "wall_s": [3.0, 2, 1], "power_w": 10.0})
    df = add_derived(df, {"tp": "wall_s * power_w", "t2": "threads * 2"})
    derived = {"tp": "wall_s * power_w", "t2": "threads * 2"}
    assert curve_points(df, ["threads"], ["tp"], derived, []).empty
    pts = curve_points(df, ["threads"], ["t2"], derived, [])
    assert np.allclose(pts["t2"], 2 * pts["threads"]) and len(pts) > 10 * 3


def test_fit_refuses_a_table_swallowed_by_a_flag_of_several_values(tmp_path, capsys):
    """``--x a b runs.csv``: argparse gives the table to --x; the error names the flag, the
    value and the two ways to write it, and both ways then work."""
    from perfcast.cli import main

    csv = tmp_path / "runs.csv"
    csv.write_text("a,b,y\n" + "".join(f"{a},{b},{1 + 2 * a + 3 * b}\n"
                                       for a in (1, 2, 3, 4) for b in (1, 2, 3)))
    for flag, values in (("--x", ["a", "b"]), ("--predict", ["a=5,b=1"])):
        extra = ["--x", "a", "b"] if flag == "--predict" else []
        assert main(["fit", "--y", "y", *extra, flag, *values, str(csv)]) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1
        assert f"no TABLE: {flag} took {str(csv)!r}" in err and "the TABLE first" in err
    assert main(["fit", "--y", "y"]) == 2
    assert "no TABLE" in capsys.readouterr().err
    for argv in (["fit", str(csv), "--y", "y", "--x", "a", "b"],
                 ["fit", "--y", "y", "--x", "a", "b", "--", str(csv)]):
        assert main(argv) == 0
        assert json.loads(capsys.readouterr().out)["x"] == ["a", "b"]


def test_curve_rows_are_capped_at_one_line_per_colour():
    """Ten values of a second parameter: curves for the first eight only (sorted), each on
    the dense grid of the first parameter."""
    from perfcast.sweep.analysis import CURVE_LINES, CURVE_POINTS, curve_points

    df = pd.DataFrame([{"p": p, "n": n} for p in (1.0, 2, 3) for n in range(10, 0, -1)])
    pts = curve_points(df, ["p", "n"], ["p", "n"], {}, [])
    assert sorted(pts["n"].unique()) == list(range(1, CURVE_LINES + 1))
    assert len(pts) == CURVE_LINES * CURVE_POINTS


@pytest.mark.study
def test_an_exact_line_keeps_order_one_whatever_the_rounding():
    """On a noise-free straight line every order fits exactly and their CV MSEs differ by
    rounding alone (about 1e-29): the earlier, simpler order must win. Over 300 lines with
    random levels and coefficients, choosing by the raw lowest CV MSE gave order 2 or more to
    5 of them; ties within ``TIE_MSE`` of the effect's mean square give order 1 to all."""
    rng = np.random.default_rng(0)
    orders = []
    for _ in range(300):
        x = np.sort(rng.choice(np.arange(1, 200), size=8, replace=False)).astype(float)
        a, b = rng.uniform(-5, 5, 2)
        folds = selection.make_folds([(v,) for v in x], 10)
        cands = selection.polynomial_candidates(x, a + b * x, "x", folds, 5)
        orders.append(next(c.order for c in cands if c.chosen))
    assert set(orders) == {1}
    # a real difference is no tie: a parabola keeps order 2
    x = np.arange(1.0, 9.0)
    cands = selection.polynomial_candidates(x, 1 + x + 0.5 * x**2, "x",
                                            selection.make_folds([(v,) for v in x], 10), 5)
    assert next(c.order for c in cands if c.chosen) == 2


def test_a_campaign_without_an_ok_run_gives_notes_not_a_crash():
    """Every run failed: the derived columns are evaluated on no row (an IndexError before)
    and each model says why it has none."""
    df = pd.DataFrame({"point": ["n~1", "n~2"], "n": [1, 2], "status": "failed",
                       "wall_s": [np.nan, np.nan]})
    out = analyse(df, campaign="c", parameters=["n"], fit=FIT, analysis=build(Analysis, {
        "derived": {"d": "n * 2"}, "models": [{"name": "u", "y": "wall_s", "x": ["d"]}],
        "predict": [{"n": 4}]}))
    effect, = out["summary"]["effects"]
    assert effect["best"] is None and effect["notes"] == ["0 usable row(s): nothing fitted"]
