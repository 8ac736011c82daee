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

Two configurations (one parameter at two values, repeated runs: the most common sweep) allow no
cross-validated order selection, since every fold would train on one value; they give the
order-1 line with its OLS statistics and a note saying so. One configuration gives no model and
a note; the model list is never empty without a note.

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


NO_CV_ORDER = ("no cross-validated order selection: a fold that leaves one configuration out "
               "keeps fewer than 2 distinct values of {name!r} to train on, which determines no "
               "slope; the order-1 line (what {k} distinct values determine) is reported with its "
               "OLS statistics and no CV error")


def polynomial_candidates(X: np.ndarray, y: np.ndarray, name: str, folds: Folds,
                          max_order: int) -> list[Candidate]:
    """Orders 1..N of one regressor, each scored by CV; N is capped so that every training
    fold still has order + 1 distinct values (a higher order is not identifiable there).

    When the cap leaves no order but the regressor takes at least 2 values (the common sweep
    of one parameter at two values with repeated runs), the order-1 line is still fitted: two
    values determine a straight line, and with replicates it has residuals, R^2 and standard
    errors. It cannot be cross-validated (a fold trains on one value), so its ``cv_mse`` is
    NaN and its ``extra["note"]`` says why."""
    x = X.reshape(-1, 1)
    distinct = len(np.unique(x))
    cap = distinct - 1
    for train, _ in folds:
        cap = min(cap, len(np.unique(x[train])) - 1)
    top = min(max_order, cap)
    if top < 1 <= distinct - 1:
        terms = dz.polynomial_terms(1)
        return [Candidate(model=f"poly[{name}]^1", kind="polynomial", x=[name],
                          fit=fit_terms(x, y, terms, [name]), cv_mse=float("nan"), order=1,
                          extra={"order_by_cv": None, "order_by_training_error": 1,
                                 "note": NO_CV_ORDER.format(name=name, k=distinct)})]
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
        every candidate, the best one (lowest CV MSE; with 2 configurations the order-1
        line, not cross-validated; None with fewer than 2 configurations) and notes on what
        was left out or could not be cross-validated (never an empty model list without a
        note).

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
    cands: list[Candidate] = []
    if len(Y) < 2:
        notes.append(f"{len(Y)} usable row(s): nothing fitted")
    elif n_conf < 2:
        notes.append(f"{n_conf} configuration: a model needs the effect at 2 or more "
                     "configurations (one determines a mean, not a slope); no model fitted")
    else:
        for j, col in enumerate(x):
            cands += polynomial_candidates(X[:, j], Y, col, folds, max_order)
        if len(x) > 1 and n_conf > 2:  # one regressor: the forms are the orders 1-2
            cands += form_candidates(X, Y, list(x), folds, forms)
        elif len(x) > 1:
            notes.append("2 configurations: the multivariate forms are not fitted (more "
                         "coefficients than configurations)")
        notes += [c.extra["note"] for c in cands if "note" in c.extra]
        constant = [col for j, col in enumerate(x) if len(np.unique(X[:, j])) < 2]
        if constant:
            notes.append(f"regressor(s) {constant} take a single value: no polynomial in them")
    best = _best(cands)
    if best is not None and not np.isfinite(best.cv_mse):
        notes.append(f"best model {best.model!r} by training MSE: no candidate could be "
                     "cross-validated")
    if not cands and not notes:  # never an empty model list without a reason
        notes.append("no candidate model could be fitted")
    return SpecResult(name=name, y=y, x=list(x), candidates=cands, best=best, n=len(Y),
                      n_configurations=n_conf, notes=notes)


def _best(cands: Sequence[Candidate]) -> Candidate | None:
    """The chosen candidate of lowest CV MSE; when none has a finite CV MSE (too few
    configurations to cross-validate), the chosen one of lowest training MSE; ties: the
    earlier, simpler candidate."""
    chosen = [c for c in cands if c.chosen]
    eligible = [c for c in chosen if np.isfinite(c.cv_mse)]
    if eligible:
        return min(eligible, key=lambda c: c.cv_mse)
    return min(chosen, key=lambda c: c.fit.metrics()["mse"]) if chosen else None


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

