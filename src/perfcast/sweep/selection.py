"""Fit every ARPE model of one effect and choose among them by cross-validated error.

ARPE (``analyzedata.m``) picks a polynomial's order by the lowest *training* error up to order
50, which always rewards the highest order it can fit. Here every candidate is scored by the
squared error on held-out *configurations*: folds group the runs of one configuration, so the
repetitions of a configuration are never on both sides of a split (else a polynomial through
the configuration means would look perfect). With at most ``cv_folds`` configurations this is
leave-one-configuration-out, otherwise configurations dealt into ``cv_folds`` folds. The same
folds score every candidate of an effect, so univariate polynomials (order chosen by CV), the
four multivariate forms and any model over derived regressors compete on one number; the best
model is the lowest CV MSE (ties: the earlier, simpler candidate).

References: ARPE, M. Maggio et al., https://github.com/martinamaggio/arpe (``analyzedata.m``);
the OLS fits and their statistics are statsmodels'
(https://www.statsmodels.org/stable/generated/statsmodels.regression.linear_model.OLS.html).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from perfcast.errors import InputError
from perfcast.sweep import design as dz
from perfcast.sweep.ols import LinearFit, fit_terms

Folds = list[tuple[np.ndarray, np.ndarray]]


def make_folds(groups: Sequence[Any], n_folds: int) -> Folds:
    """(train, test) index pairs, each test set whole groups (configurations): one group per
    fold when there are at most ``n_folds`` groups (leave-one-configuration-out), else the
    sorted groups dealt round-robin into ``n_folds`` folds (deterministic)."""
    codes, uniques = pd.factorize(pd.Series(list(groups)).astype(str), sort=True)
    if len(uniques) < 2:
        return []
    fold_of_group = np.arange(len(uniques)) % min(n_folds, len(uniques))
    fold = fold_of_group[codes]
    idx = np.arange(len(codes))
    return [(idx[fold != f], idx[fold == f]) for f in range(int(fold.max()) + 1)]


def cv_mse(X: np.ndarray, y: np.ndarray, terms: Sequence[dz.Term], folds: Folds) -> float:
    """Pooled mean squared error of held-out predictions over ``folds`` (NaN without folds)."""
    if not folds:
        return float("nan")
    err = np.empty(len(y))
    for train, test in folds:
        err[test] = y[test] - dz.lstsq_predict(X[train], y[train], X[test], terms)
    return float(np.mean(err**2))


@dataclass
class Candidate:
    """One fitted model with its scores."""

    model: str  # id: "poly[size]^3", "ols:interaction"
    kind: str  # polynomial | ols
    x: list[str]
    fit: LinearFit
    cv_mse: float
    order: int | None = None
    form: str | None = None
    chosen: bool = True  # polynomial rows: the order CV chose
    extra: dict[str, Any] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        m = self.fit.metrics()
        return {"model": self.model, "kind": self.kind, "x": ",".join(self.x),
                "order": self.order, "form": self.form, **m, "cv_mse": self.cv_mse,
                "cv_rmse": float(np.sqrt(self.cv_mse)) if np.isfinite(self.cv_mse) else np.nan,
                "chosen": self.chosen,
                "order_by_training_error": self.extra.get("order_by_training_error"),
                "dropped_terms": ",".join(dz.term_name(t, self.x) for t in self.fit.dropped)}

    def summary(self) -> dict[str, Any]:
        d = self.row()
        d["x"] = list(self.x)
        d["coefficients"] = self.fit.coefficients()
        d["dropped_terms"] = [dz.term_name(t, self.x) for t in self.fit.dropped]
        d.update(self.extra)
        if self.kind != "polynomial":
            d.pop("order_by_training_error")
        return d


def polynomial_candidates(X: np.ndarray, y: np.ndarray, name: str, folds: Folds,
                          max_order: int) -> list[Candidate]:
    """Orders 1..N of one regressor, each scored by CV; N is capped so that every training
    fold still has order + 1 distinct values (a higher order is not identifiable there)."""
    x = X.reshape(-1, 1)
    distinct = len(np.unique(x))
    cap = distinct - 1
    for train, _ in folds:
        cap = min(cap, len(np.unique(x[train])) - 1)
    top = min(max_order, cap)
    cands = []
    for order in range(1, top + 1):
        terms = dz.polynomial_terms(order)
        cands.append(Candidate(model=f"poly[{name}]^{order}", kind="polynomial", x=[name],
                               fit=fit_terms(x, y, terms, [name]),
                               cv_mse=cv_mse(x, y, terms, folds), order=order, chosen=False))
    if cands:
        scores = [c.cv_mse if np.isfinite(c.cv_mse) else np.inf for c in cands]
        best = int(np.argmin(scores)) if np.isfinite(min(scores)) else 0
        cands[best].chosen = True
        by_training = int(np.argmin([c.fit.metrics()["mse"] for c in cands]))
        for c in cands:
            c.extra = {"order_by_cv": cands[best].order,
                       "order_by_training_error": cands[by_training].order}
    return cands


def form_candidates(X: np.ndarray, y: np.ndarray, names: Sequence[str], folds: Folds,
                    forms: Sequence[str]) -> list[Candidate]:
    """ARPE's four multivariate OLS forms (a form whose terms repeat an earlier one's, as with
    a single regressor, is skipped)."""
    seen: set[tuple[dz.Term, ...]] = set()
    cands = []
    for form in forms:
        terms = dz.form_terms(form, len(names))
        key = tuple(sorted(terms))
        if key in seen:
            continue
        seen.add(key)
        cands.append(Candidate(model=f"ols:{form}", kind="ols", x=list(names),
                               fit=fit_terms(X, y, terms, names),
                               cv_mse=cv_mse(X, y, terms, folds), form=form))
    return cands


@dataclass
class SpecResult:
    """Every candidate of one effect, the best one, its residuals and predictions."""

    name: str
    y: str
    x: list[str]
    candidates: list[Candidate]
    best: Candidate | None
    n: int
    n_configurations: int
    notes: list[str]


def fit_effect(df: pd.DataFrame, name: str, y: str, x: Sequence[str], *,
               groups: Sequence[Any] | None = None, max_order: int = 4, cv_folds: int = 10,
               forms: Sequence[str] = dz.FORMS) -> SpecResult:
    """All candidates for ``y`` over regressors ``x`` on the rows of ``df`` (see the module
    docstring).

    Parameters
    ----------
    df : the data; rows with a missing or non-numeric ``y`` or ``x`` are left out (noted).
    name : the effect's name in the outputs.
    y : the effect's column.
    x : the regressors' columns.
    groups : one configuration label per row of ``df``, for the CV folds (default: the
        distinct ``x`` tuples).
    max_order : highest univariate polynomial order tried (capped per fold, see
        :func:`polynomial_candidates`).
    cv_folds : folds over configurations (:func:`make_folds`).
    forms : the multivariate forms (:data:`perfcast.sweep.design.FORMS`), fitted when ``x``
        has more than one column.

    Returns
    -------
    SpecResult
        every candidate, the best one (lowest CV MSE; None with fewer than 2 configurations)
        and notes on what was left out.

    Raises
    ------
    InputError
        a column of ``y`` or ``x`` that ``df`` lacks.
    """
    missing = [c for c in (y, *x) if c not in df.columns]
    if missing:
        raise InputError(None, f"model {name!r}: no column(s) {missing}",
                         expected=f"some of {list(df.columns)}")
    data = df[[y, *x]].apply(pd.to_numeric, errors="coerce")
    keep = data.notna().all(axis=1).to_numpy()
    notes = []
    if (~keep).any():
        notes.append(f"{int((~keep).sum())} row(s) with a missing value left out")
    data = data[keep]
    Y = data[y].to_numpy(dtype=float)
    X = data[list(x)].to_numpy(dtype=float)
    if groups is None:
        g = [tuple(r) for r in X]
    else:
        g = list(np.asarray(groups, dtype=object)[keep])
    n_conf = len(set(map(str, g)))
    folds = make_folds(g, cv_folds)
    if not folds:
        notes.append("fewer than 2 configurations: no cross-validation, no best model")
    cands: list[Candidate] = []
    if len(Y) >= 2:
        for j, col in enumerate(x):
            cands += polynomial_candidates(X[:, j], Y, col, folds, max_order)
        if len(x) > 1:  # with one regressor the forms are the polynomials of order 1-2
            cands += form_candidates(X, Y, list(x), folds, forms)
    else:
        notes.append(f"{len(Y)} usable row(s): nothing fitted")
    eligible = [c for c in cands if c.chosen and np.isfinite(c.cv_mse)]
    best = min(eligible, key=lambda c: c.cv_mse) if eligible else None
    return SpecResult(name=name, y=y, x=list(x), candidates=cands, best=best, n=len(Y),
                      n_configurations=n_conf, notes=notes)


def fitted_frame(result: SpecResult, df: pd.DataFrame, id_columns: Sequence[str]) -> pd.DataFrame:
    """y, fitted and residual of every candidate on every row it was fitted on.

    Returns
    -------
    DataFrame
        columns ``effect``, ``model``, ``id_columns``, ``y``, ``fitted``, ``residual`` and
        ``best`` (the candidate is the effect's best).
    """
    data = df[[result.y, *result.x]].apply(pd.to_numeric, errors="coerce")
    rows = df[data.notna().all(axis=1)]
    frames = []
    for c in result.candidates:
        f = rows[list(id_columns)].copy() if id_columns else pd.DataFrame(index=rows.index)
        f.insert(0, "model", c.model)
        f.insert(0, "effect", result.name)
        f["y"] = rows[result.y].to_numpy(dtype=float)
        f["fitted"] = c.fit.fitted
        f["residual"] = c.fit.residuals
        f["best"] = result.best is c
        frames.append(f.reset_index(drop=True))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def predict_frame(result: SpecResult, points: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """The best model's prediction at each row of ``points`` (which must hold the model's
    regressors).

    Returns
    -------
    DataFrame
        ``effect``, ``model``, the columns of ``points``, then statsmodels'
        ``get_prediction(...).summary_frame(alpha)`` columns: ``mean``, ``mean_se``,
        ``mean_ci_lower``/``upper`` (confidence interval of the mean) and
        ``obs_ci_lower``/``upper`` (prediction interval of a new run), at level 1 - ``alpha``.
        Empty without a best model.
    """
    if result.best is None or points.empty:
        return pd.DataFrame()
    c = result.best
    frame = c.fit.predict(points[c.x].to_numpy(dtype=float), alpha=alpha)
    out = points.reset_index(drop=True).copy()
    out.insert(0, "model", c.model)
    out.insert(0, "effect", result.name)
    return pd.concat([out, frame], axis=1)


def result_summary(result: SpecResult) -> dict[str, Any]:
    """One effect as plain data (the models JSON): its candidates with their statistics and
    coefficients (:meth:`Candidate.summary`), the best one's id and the notes."""
    return {
        "effect": result.name, "y": result.y, "x": result.x, "n": result.n,
        "n_configurations": result.n_configurations, "notes": result.notes,
        "best": None if result.best is None else result.best.model,
        "models": [c.summary() for c in result.candidates],
    }


def models_frame(results: Sequence[SpecResult]) -> pd.DataFrame:
    """One row per candidate of every effect: its statistics (:meth:`Candidate.row`) and
    ``best``."""
    rows = []
    for r in results:
        for c in r.candidates:
            rows.append({"effect": r.name, "y": r.y, **c.row(), "best": r.best is c})
    return pd.DataFrame(rows)


def coefficients_frame(results: Sequence[SpecResult]) -> pd.DataFrame:
    """One row per coefficient of every candidate: term, coef, se, t, p in raw units
    (:meth:`perfcast.sweep.ols.LinearFit.coefficients`)."""
    rows = []
    for r in results:
        for c in r.candidates:
            for coef in c.fit.coefficients():
                rows.append({"effect": r.name, "model": c.model, **coef})
    return pd.DataFrame(rows)

