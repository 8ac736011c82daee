"""A campaign's models: derived regressors, every effect's candidates, predictions, tables.

Input: the run table (ok runs are modelled; failed, timed-out and sensor-failed runs are counted
and left out). Output: one summary dict (models JSON) and four tables: models (one row per
candidate), coefficients (term, coef, se, t, p), fitted (y, fitted, residual per run) and
predictions (the best model at every configuration, at the config's ``predict`` points and
on a dense grid of the first numeric parameter for the smooth curves of the figures, with
confidence and prediction intervals).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from perfcast.errors import InputError
from perfcast.settings import as_params
from perfcast.sweep import expressions, selection
from perfcast.sweep.table import ok_rows

if TYPE_CHECKING:
    from perfcast.sweep.campaign import Analysis
    from perfcast.sweep.settings import FitSettings

ID_COLUMNS = ["point", "iteration"]
CURVE_POINTS = 200  # points of a drawn model curve: smooth at any figure size
CURVE_LINES = 8  # curves per model (combinations of the other parameters): one per colour


def log_spaced(values: np.ndarray) -> bool:
    """Positive levels at a near-constant ratio spanning at least a factor 8 (2, 4, 8, ...):
    drawn on a log axis, and a model curve's grid is then geometric.

    Examples
    --------
    >>> log_spaced(np.array([2.0, 4, 8, 16])), log_spaced(np.array([1.0, 2, 3, 4, 5]))
    (True, False)
    """
    v = np.unique(np.asarray(values, dtype=float))
    if len(v) < 3 or (v <= 0).any() or v[-1] / v[0] < 8:
        return False
    steps = np.diff(np.log(v))
    return bool(steps.std() < 0.25 * steps.mean())


def dense_grid(levels: np.ndarray, hi: float | None = None,
               n: int = CURVE_POINTS) -> np.ndarray:
    """``n`` points from the smallest level to ``hi`` (the largest level when None),
    geometric when the levels are log-spaced (:func:`log_spaced`), else linear: where a model
    is drawn as a smooth curve instead of straight segments through the measured levels.

    Parameters
    ----------
    levels : ndarray
        The measured levels of the parameter drawn along the axis.
    hi : float, default=None
        The grid's last point (a prediction beyond the measured levels).
    n : int, default=CURVE_POINTS
        Points in the grid.

    Examples
    --------
    >>> dense_grid(np.array([2.0, 4, 8, 16]), n=4).round(6).tolist()
    [2.0, 4.0, 8.0, 16.0]
    >>> dense_grid(np.array([1.0, 2, 3]), hi=5, n=5).tolist()
    [1.0, 2.0, 3.0, 4.0, 5.0]
    """
    xs = np.asarray(levels, dtype=float)
    top = float(xs.max()) if hi is None else max(float(xs.max()), float(hi))
    if log_spaced(xs):
        return np.geomspace(xs.min(), top, n)
    return np.linspace(xs.min(), top, n)


def add_derived(df: pd.DataFrame, derived: Mapping[str, str]) -> pd.DataFrame:
    """``df`` with one column per derived expression, in order (a later one may use an
    earlier one).

    Parameters
    ----------
    df : pandas.DataFrame
        The runs.
    derived : mapping of str to str
        New column -> expression (:func:`perfcast.sweep.expressions.evaluate`).

    Returns
    -------
    pandas.DataFrame
        A copy of ``df`` with the new columns (floats).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"size": [1, 2], "workers": [1, 2]})
    >>> add_derived(df, {"flop": "2 * size**3", "per_worker": "flop / workers"}).values.tolist()
    [[1.0, 1.0, 2.0, 2.0], [2.0, 2.0, 16.0, 8.0]]
    """
    out = df.copy()
    for name, expr in derived.items():
        cols = {c: out[c] for c in out.columns if c in expressions.expression_names(expr)}
        value = expressions.evaluate(expr, cols, where=f"derived {name!r}")
        out[name] = np.broadcast_to(np.asarray(value, dtype=float), (len(out),)).copy()
    return out


def prediction_points(df: pd.DataFrame, parameters: Sequence[str], x: Sequence[str],
                      derived: Mapping[str, str],
                      extra: Sequence[Mapping[str, Any]]) -> tuple[pd.DataFrame, list[str]]:
    """Where to predict: every measured configuration (a measured regressor, such as a derived
    time * power, averaged over the configuration's runs) and each ``extra`` point whose
    regressors follow from its parameter values alone.

    Parameters
    ----------
    df : pandas.DataFrame
        The ok runs, derived columns added (:func:`add_derived`).
    parameters : sequence of str
        The numeric parameters (one grid row per measured combination).
    x : sequence of str
        The model's regressors.
    derived : mapping of str to str
        The derived columns, name -> expression (computed on ``extra`` when its parameters
        suffice).
    extra : sequence of mapping
        The config's ``predict`` points.

    Returns
    -------
    tuple of pandas.DataFrame and list of str
        The points (``source`` is ``measured`` or ``predict``) and notes (the extra points
        skipped when a regressor depends on measurements). A measured configuration whose
        regressor is not finite (a missing value of the fit, with its note) is left out.
    """
    measured = [c for c in dict.fromkeys(x) if c not in parameters]
    grid = df.groupby(list(parameters), sort=True)[measured].mean().reset_index() if measured \
        else df[list(parameters)].drop_duplicates().sort_values(list(parameters))
    grid = _finite_regressors(grid, x).reset_index(drop=True)
    grid.insert(0, "source", "measured")
    if not extra:
        return grid, []
    pts = pd.DataFrame([dict(p) for p in extra])
    for name, expr in derived.items():
        if expressions.expression_names(expr) <= set(pts.columns):
            pts = add_derived(pts, {name: expr})
    missing = sorted(set(x) - set(pts.columns))
    if missing:
        return grid, [f"predict points skipped: regressor(s) {missing} depend on measurements"]
    pts.insert(0, "source", "predict")
    cols = ["source", *[c for c in (*parameters, *measured) if c in pts.columns]]
    return pd.concat([grid, pts[cols]], ignore_index=True), []


def _finite_regressors(points: pd.DataFrame, x: Sequence[str]) -> pd.DataFrame:
    """The rows of ``points`` whose regressors are all finite: where a derived one is not
    (log2 of 0) the fit had a missing value, with its note, and there is nothing to predict."""
    return points[np.isfinite(points[list(x)].to_numpy(dtype=float)).all(axis=1)]


def curve_points(df: pd.DataFrame, parameters: Sequence[str], x: Sequence[str],
                 derived: Mapping[str, str],
                 extra: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """A dense grid (:func:`dense_grid`) of the first numeric parameter, from its smallest
    level to its largest or the largest ``predict`` point, at each of the first
    ``CURVE_LINES`` measured combinations of the other parameters (sorted; ``source`` =
    ``curve``): where the figures draw the model as a smooth curve, one colour per
    combination, without a table that grows with the product of the levels. Empty when a
    regressor depends on measurements (it is then unknown between the measured levels) or
    there is no parameter; points where a derived regressor is not finite (log2 of 0) are
    left out.

    Parameters
    ----------
    df : pandas.DataFrame
        The ok runs, derived columns added (:func:`add_derived`).
    parameters : sequence of str
        The numeric parameters; the first one is the curve's x axis.
    x : sequence of str
        The model's regressors.
    derived : mapping of str to str
        The derived columns, computed on the grid.
    extra : sequence of mapping
        The config's ``predict`` points (the grid reaches the largest).

    Returns
    -------
    pandas.DataFrame
        ``source``, the parameters and the derived regressors.

    Examples
    --------
    >>> df = pd.DataFrame({"p": [2, 4, 8, 16], "n": 1})
    >>> pts = curve_points(df, ["p", "n"], ["p"], {}, [{"p": 64, "n": 1}])
    >>> len(pts), pts["p"].iloc[[0, -1]].tolist(), sorted(pts["source"].unique())
    (200, [2.0, 64.0], ['curve'])
    """
    if not parameters:
        return pd.DataFrame()
    first, others = parameters[0], list(parameters[1:])
    tops = [float(p[first]) for p in extra if first in p]
    grid = dense_grid(df[first].to_numpy(dtype=float), max(tops) if tops else None)
    combos = (df[others].drop_duplicates().sort_values(others).head(CURVE_LINES)
              .reset_index(drop=True) if others else pd.DataFrame(index=[0]))
    pts = combos.loc[combos.index.repeat(len(grid))].reset_index(drop=True)
    pts.insert(0, first, np.tile(grid, len(combos)))
    for name, expr in derived.items():  # those that follow from the parameters alone
        if expressions.expression_names(expr) <= set(pts.columns):
            pts = add_derived(pts, {name: expr})
    if any(c not in pts.columns for c in x):
        return pd.DataFrame()
    pts = _finite_regressors(pts, x)
    pts.insert(0, "source", "curve")
    return pts[["source", *parameters, *[c for c in dict.fromkeys(x) if c not in parameters]]]


def analyse(df: pd.DataFrame, *, campaign: str, parameters: Sequence[str],
            analysis: Analysis, fit: FitSettings) -> dict[str, Any]:
    """Fit every model of ``analysis`` on the ok rows of ``df`` (docs/methods/sweep.md).

    Each model's candidates are the univariate polynomials of each regressor (order chosen
    by cross-validated error over configurations), the multivariate OLS forms of
    ``fit.forms`` and the normal-form search of ``fit.normal_form``
    (:func:`perfcast.sweep.selection.fit_effect`; OLS statistics as statsmodels computes
    them: https://www.statsmodels.org/stable/regression.html).

    Parameters
    ----------
    df : pandas.DataFrame
        The run table (:func:`perfcast.sweep.table.runs_frame`); its ``point`` column names
        the configuration of each run (the cross-validation groups).
    campaign : str
        The campaign's name (for messages and the summary).
    parameters : sequence of str
        The campaign's parameter names (prediction grid).
    analysis : Analysis
        Derived columns, models and extra prediction points
        (:class:`perfcast.sweep.campaign.Analysis`).
    fit : FitSettings
        The stage's fit settings (``sweep.fit``, :class:`perfcast.sweep.settings.FitSettings`).

    Returns
    -------
    dict
        ``summary`` (the models JSON), ``results`` (one
        :class:`perfcast.sweep.selection.SpecResult` per model), and the tables ``models``,
        ``coefficients``, ``fitted`` and ``predictions`` (intervals at level 1 - ``fit.alpha``).

    Raises
    ------
    InputError
        a model over a column the run table lacks.

    Examples
    --------
    >>> import pandas as pd
    >>> from perfcast.settings import from_section
    >>> from perfcast.sweep.campaign import Analysis, ModelSpec
    >>> from perfcast.sweep.settings import SweepSettings
    >>> fit = from_section(SweepSettings, {"fit": {"max_order": 2, "normal_form": {
    ...     "enabled": False}}}, "sweep").fit
    >>> n = [1, 1, 2, 2, 4, 4, 8, 8]
    >>> df = pd.DataFrame({"point": [f"n~{v}" for v in n], "n": n, "status": "ok",
    ...                    "wall_s": [0.5 + v + d for v, d in zip(n, [0, 0.1] * 4)]})
    >>> out = analyse(df, campaign="demo", parameters=["n"], fit=fit, analysis=Analysis(
    ...     {}, (ModelSpec("t", "wall_s", ("n",)),), ({"n": 16},)))
    >>> effect = out["summary"]["effects"][0]
    >>> effect["best"], effect["formula"]
    ('poly[n]^1', 'wall_s = 0.55 + 1 * n')
    >>> p = out["predictions"]
    >>> p.loc[p["source"] == "predict", ["n", "mean"]].round(2).values.tolist()
    [[16.0, 16.55]]
    >>> int((p["source"] == "curve").sum()), float(p.loc[p["source"] == "curve", "n"].max())
    (200, 16.0)
    """
    ok = ok_rows(df).reset_index(drop=True)
    derived = dict(analysis.derived)
    data = add_derived(ok, derived)
    categorical = categorical_parameters(data, parameters)
    results, fitted, preds, notes = [], [], [], []
    if categorical:
        notes.append(f"categorical parameter(s) {categorical}: one model per level "
                     "(combination), over the numeric regressors")
    for spec in analysis.models:
        missing = [c for c in (spec.y, *spec.x) if c not in data.columns]
        if missing:
            raise InputError(None, f"campaign {campaign!r}, model {spec.name!r}: "
                                   f"no column(s) {missing} in the run table",
                             expected=f"some of {sorted(data.columns)}")
        x = [c for c in spec.x if c not in categorical]
        for name, sub in _levels(data, spec.name, categorical):
            groups = sub["point"].tolist() if "point" in sub.columns else None
            numeric = [p for p in parameters if p not in categorical]
            points, pnotes = prediction_points(sub, numeric, x, derived, analysis.predict)
            asked = points.loc[points["source"] == "predict", list(x)]
            res = selection.fit_effect(sub, name, spec.y, x, fit=fit, groups=groups,
                                       asked=asked)
            results.append(res)
            fitted.append(selection.fitted_frame(res, sub, [c for c in ID_COLUMNS
                                                             if c in sub.columns]))
            if res.best is not None:
                res.notes.extend(pnotes)
                curve = curve_points(sub, numeric, x, derived, analysis.predict)
                points = pd.concat([points, curve], ignore_index=True) if len(curve) \
                    else points
                pred = selection.predict_frame(
                    res, points, fit.alpha, source=f"campaign {campaign!r}, predict",
                    positive=selection.positive_effect(sub, spec.y, x), refuse=False)
                res.notes.extend(pred.loc[~pred["predictable"].astype(bool), "note"])
                res.predictions = asked_predictions(pred, x)
                preds.append(pred)
    status = df["status"].value_counts().sort_index().to_dict() if "status" in df else {}
    summary = {
        "campaign": campaign, "parameters": list(parameters), "n_runs": int(len(df)),
        "n_ok": int(len(ok)), "status": {str(k): int(v) for k, v in status.items()},
        "fit": as_params(fit), "derived": derived, "notes": notes,
        "effects": [selection.result_summary(r) for r in results],
    }
    return {
        "summary": summary,
        "results": results,
        "models": _frame(selection.models_frame(results)),
        "coefficients": _frame(selection.coefficients_frame(results)),
        "fitted": _frame(pd.concat(fitted, ignore_index=True) if fitted else pd.DataFrame()),
        "predictions": _frame(pd.concat(preds, ignore_index=True) if preds else pd.DataFrame()),
    }


def asked_predictions(pred: pd.DataFrame, x: Sequence[str]) -> list[dict[str, Any]]:
    """The ``predict`` points of a predictions frame (:func:`perfcast.sweep.selection.
    predict_frame`) as plain records for the models JSON and the run summary: the point,
    ``mean`` and its intervals, ``extrapolation`` (how far beyond the measured range),
    ``predictable`` and ``note`` (why not).

    Examples
    --------
    >>> pred = pd.DataFrame({"source": ["measured", "predict"], "p": [2.0, 8.0],
    ...                      "mean": [1.0, 4.0], "obs_ci_lower": [0.9, 3.0],
    ...                      "obs_ci_upper": [1.1, 5.0], "extrapolation": ["", "2x beyond"],
    ...                      "predictable": [True, True], "note": ["", ""]})
    >>> asked_predictions(pred, ["p"])[0]["point"], asked_predictions(pred, ["p"])[0]["mean"]
    ({'p': 8.0}, 4.0)
    """
    if pred.empty or "source" not in pred.columns:
        return []
    out = []
    for _, r in pred[pred["source"] == "predict"].iterrows():
        out.append({"point": {c: float(r[c]) for c in x},
                    **{k: (float(r[k]) if pd.notna(r[k]) else None)
                       for k in ("mean", "obs_ci_lower", "obs_ci_upper") if k in r},
                    "extrapolation": str(r["extrapolation"]),
                    "predictable": bool(r["predictable"]), "note": str(r["note"])})
    return out


def categorical_parameters(data: pd.DataFrame, parameters: Sequence[str]) -> list[str]:
    """The parameters whose values are not all numbers (an input file's name, a scheduler
    policy): ARPE's x264 campaign sweeps the input video.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"video": ["a.y4m", "b.y4m"], "threads": [1, 2]})
    >>> categorical_parameters(df, ["video", "threads"])
    ['video']
    """
    return [p for p in parameters if p in data.columns
            and not pd.api.types.is_numeric_dtype(data[p])]


def _levels(data: pd.DataFrame, name: str, categorical: Sequence[str]):
    """(model name, rows) per level combination of the categorical parameters, sorted; the
    whole table under ``name`` without them."""
    if not categorical:
        yield name, data
        return
    for level, sub in data.groupby(list(categorical), sort=True):
        level = level if isinstance(level, tuple) else (level,)
        tag = ", ".join(f"{c}={v}" for c, v in zip(categorical, level, strict=True))
        yield f"{name} [{tag}]", sub.reset_index(drop=True)


def _frame(df: pd.DataFrame) -> pd.DataFrame:
    """Object columns holding None/NaN and numbers become floats (Parquet needs one type)."""
    for c in df.columns:
        if df[c].dtype == object:
            nums = pd.to_numeric(df[c], errors="coerce")
            if nums.notna().sum() == df[c].notna().sum() and df[c].notna().any():
                df[c] = nums
    return df.reset_index(drop=True)
