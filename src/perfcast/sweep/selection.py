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

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from perfcast.errors import InputError
from perfcast.sweep import design as dz
from perfcast.sweep import normalform as nf
from perfcast.sweep import plausibility as pl
from perfcast.sweep import repetitions as rp
from perfcast.sweep.ols import DesignFit, LinearFit, fit_terms
from perfcast.sweep.repetitions import Repetitions

if TYPE_CHECKING:
    from perfcast.sweep.settings import FitSettings

Folds = list[tuple[np.ndarray, np.ndarray]]
#: the family of each candidate kind, as the outputs name it
FAMILY = {"polynomial": "ARPE polynomial", "ols": "ARPE OLS form",
          "normal_form": "performance model normal form"}
#: CV MSEs closer than this fraction of the effect's mean square are equal: an exact fit scores
#: about 1e-30 of it, and which of two exact fits rounds lower depends on the BLAS, not on the
#: data; a real difference is many orders of magnitude larger
TIE_MSE = 1e-20
#: a printed formula reproduces the model's value at each fitted configuration within this
#: relative error (:meth:`Candidate.formula_digits`): 4 significant digits round each
#: coefficient by at most 5e-4 of itself, so a formula whose terms do not cancel always
#: meets it with 4; where they cancel, more digits are printed
FORMULA_RTOL = 1e-3
#: what a regressor's name may be (:func:`check_regressor_names`)
REGRESSOR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
RESERVED_NAMES = frozenset({"const"})


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


def cv_predictions(X: np.ndarray, y: np.ndarray, terms: Sequence[dz.Term],
                   folds: Folds, w: np.ndarray | None = None) -> np.ndarray:
    """The held-out prediction of every row over ``folds`` (NaN without folds).

    Parameters
    ----------
    X, y : numpy.ndarray
        The regressors (n, d) and the effect (n,).
    terms : sequence of Term
        The model's exponent tuples.
    folds : Folds
        (training rows, held-out rows) of each fold (:func:`make_folds`).
    w : numpy.ndarray, optional, default=None
        The runs each row stands for (compressed repetitions, ``y`` their means).

    Returns
    -------
    numpy.ndarray
        (n,) held-out predictions.
    """
    pred = np.full(len(y), np.nan)
    for train, test in folds:
        pred[test] = dz.lstsq_predict(X[train], y[train], X[test], terms,
                                      None if w is None else w[train])
    return pred


def cv_mse(X: np.ndarray, y: np.ndarray, terms: Sequence[dz.Term], folds: Folds,
           reps: Repetitions | None = None) -> float:
    """Pooled mean squared error of held-out predictions over ``folds`` (NaN without folds).

    Parameters
    ----------
    X, y : numpy.ndarray
        The regressors (n, d) and the effect (n,).
    terms : sequence of Term
        The model's exponent tuples.
    folds : Folds
        (training rows, held-out rows) of each fold (:func:`make_folds`).
    reps : Repetitions, optional, default=None
        The rows are these compressed runs: the error is pooled over the runs
        (:func:`perfcast.sweep.repetitions.pooled_squared_error`).
    """
    if not folds:
        return float("nan")
    if reps is not None:
        return rp.pooled_squared_error(reps, cv_predictions(X, y, terms, folds, reps.w))
    return float(np.mean((y - cv_predictions(X, y, terms, folds)) ** 2))


def forward_smapes(X: np.ndarray, y: np.ndarray, terms: Sequence[dz.Term],
                   groups: Sequence[Any], min_train: int, how: str,
                   reps: Repetitions | None = None) -> list[float]:
    """The configuration SMAPE of each forward fold
    (:func:`perfcast.sweep.normalform.forward_folds`: fitted below a regressor's largest
    value, predicting the runs at it), the extrapolating half of the normal form's selection
    score, so that ARPE's candidates and the laws are compared on the same criterion.

    Parameters
    ----------
    X, y : numpy.ndarray
        The regressors (n, d) and the effect (n,), one row per run.
    terms : sequence of Term
        The model's exponent tuples.
    groups : sequence
        One configuration label per run.
    min_train : int
        The fewest training configurations of a fold (the model's coefficients + 1).
    how : str
        ``mean`` or ``median``: the runs of a configuration aggregated.
    reps : Repetitions, optional, default=None
        The rows are these compressed runs.

    Returns
    -------
    list of float
        One SMAPE per forward fold (none when too few configurations lie below a largest
        value).

    Examples
    --------
    >>> p = np.array([[1.0], [2], [4], [8]])
    >>> y = 3 + 2 * p[:, 0]
    >>> forward_smapes(p, y, dz.polynomial_terms(1), ["1", "2", "4", "8"], 3, "mean")
    [0.0]
    """
    g = np.asarray([str(v) for v in groups])
    out = []
    w = None if reps is None else reps.w
    for train, test in nf.forward_folds(X, min_train):
        pred = dz.lstsq_predict(X[train], y[train], X[test], terms,
                                None if w is None else w[train])
        if np.isfinite(pred).all():
            out.append(configuration_smape(
                pred, y[test], g[test], how, None if w is None else w[test],
                None if reps is None else rp.subset_medians(reps, test)))
    return out


def configuration_smape(pred: np.ndarray, y: np.ndarray, groups: Sequence[Any],
                        how: str, w: np.ndarray | None = None,
                        medians: dict[str, float] | None = None) -> float:
    """CV SMAPE over configurations: the held-out predictions and the runs of each
    configuration aggregated by ``how`` (mean or median), then
    :func:`perfcast.sweep.normalform.smape` averaged over configurations.

    Parameters
    ----------
    pred, y : numpy.ndarray
        The held-out predictions and the measured effect, one per run.
    groups : sequence
        One configuration label per run.
    how : str
        ``mean`` or ``median`` (``sweep.fit.normal_form.aggregate``).
    w : numpy.ndarray, optional, default=None
        The runs each row stands for (compressed repetitions, ``y`` their means).
    medians : dict of str to float, optional, default=None
        With ``w`` and the median: each configuration's median run.
    """
    frame = pd.DataFrame({"g": [str(v) for v in groups], "p": pred, "y": y})
    if w is not None:
        frame["w"], frame["wp"], frame["wy"] = w, w * frame["p"], w * frame["y"]
        sums = frame.groupby("g")[["w", "wp", "wy"]].sum()
        if how == "mean":
            p_agg, y_agg = sums["wp"] / sums["w"], sums["wy"] / sums["w"]
        else:
            p_agg = frame.groupby("g").apply(lambda f: rp.weighted_median(
                f["p"].to_numpy(), f["w"].to_numpy()), include_groups=False) \
                if frame["g"].duplicated().any() else frame.set_index("g")["p"]
            p_agg = p_agg.loc[sums.index]
            y_agg = pd.Series([medians[g] for g in sums.index], index=sums.index)
        return float(nf.smape(p_agg.to_numpy(), y_agg.to_numpy()).mean())
    agg = frame.groupby("g").agg(how)
    return float(nf.smape(agg["p"].to_numpy(), agg["y"].to_numpy()).mean())


@dataclass
class Candidate:
    """One fitted model with its scores."""

    model: str  # id: "poly[size]^3", "ols:interaction", "pmnf:p * log2(p)"
    kind: str  # polynomial | ols | normal_form
    x: list[str]
    fit: LinearFit | DesignFit
    cv_mse: float
    order: int | None = None
    form: str | None = None
    chosen: bool = True  # polynomial rows: the order CV chose; normal form: the search's pick
    extra: dict[str, Any] = field(default_factory=dict)
    cv_smape: float = float("nan")  # % over configurations (with the normal-form search)
    #: the regressor rows (columns in ``x`` order) the model was fitted on; the formula's
    #: printed digits are checked against them (:meth:`formula_digits`)
    data: np.ndarray | None = field(default=None, repr=False)
    #: a law's nearest rivals of the normal-form search, best first (not listed as
    #: candidates): their spread beyond the data widens the intervals (:func:`model_spread`)
    rivals: list[nf.Hypothesis] = field(default_factory=list, repr=False)

    def raw_design(self, X: np.ndarray) -> np.ndarray:
        """The model's columns at raw regressor rows ``X`` (``x`` order), the intercept's
        included: ``raw_design(X) @ coef`` is the model's value, ``coef`` as
        :meth:`LinearFit.coefficients` lists them."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        if isinstance(self.fit, DesignFit):
            return self.fit.design(X)
        return dz.design(X, self.fit.terms)

    def _is_constant(self) -> list[bool]:
        """Which coefficient is the intercept (by its term, not its name: a regressor may
        be called ``const``)."""
        if isinstance(self.fit, DesignFit):
            return [i == 0 for i in range(self.fit.k)]
        return [not any(t) for t in self.fit.terms]

    def formula_digits(self, lowest: int = 4, rtol: float = FORMULA_RTOL) -> int:
        """The fewest significant digits (at least ``lowest``) with which the formula,
        evaluated as printed, reproduces the model at every configuration it was fitted on
        within ``rtol`` of the value there: coefficients that nearly cancel (a quadratic in
        p = 1000..1010, ``1.244e+06 - 2478 p + 1.235 p^2``) need more than 4 digits, or the
        printed formula gives 991 where the model gives 52."""
        if self.data is None or not len(self.data):
            return lowest
        with np.errstate(all="ignore"):
            D = self.raw_design(self.data)
            coef = np.array([c["coef"] for c in self.fit.coefficients()], dtype=float)
            exact = D @ coef
            tol = rtol * np.maximum(np.abs(exact), 1e-6 * np.max(np.abs(exact), initial=0.0))
            for d in range(lowest, 18):
                rounded = np.array([float(f"{c:.{d}g}") for c in coef])
                if np.all(np.abs(D @ rounded - exact) <= tol):
                    return d
        return 17

    def formula(self, y: str = "", digits: int | None = None) -> str:
        """The fitted model as one line, ``y = 3 + 0.5 * p * log2(p)``.

        Parameters
        ----------
        y : str, default=""
            The effect's name (``y = `` before the formula when given).
        digits : int, optional, default=None
            Significant digits of the coefficients; None: :meth:`formula_digits`, at
            least 4, as many as the formula needs to give the model's values.
        """
        d = self.formula_digits() if digits is None else digits
        parts = []
        for c, const in zip(self.fit.coefficients(), self._is_constant(), strict=True):
            if const:
                parts.append(f"{c['coef']:.{d}g}")
            else:
                sign = "-" if c["coef"] < 0 else "+"
                parts.append(f"{sign} {abs(c['coef']):.{d}g} * {c['term']}")
        text = " ".join(parts).lstrip("+ ") or "0"
        return f"{y} = {text}" if y else text

    def row(self) -> dict[str, Any]:
        m = self.fit.metrics()
        return {"model": self.model, "kind": self.kind, "x": ",".join(self.x),
                "order": self.order, "form": self.form, **m, "cv_mse": self.cv_mse,
                "cv_rmse": float(np.sqrt(self.cv_mse)) if np.isfinite(self.cv_mse) else np.nan,
                "cv_smape": self.cv_smape, "chosen": self.chosen,
                "order_by_training_error": self.extra.get("order_by_training_error"),
                "dropped_terms": ",".join(dz.term_name(t, self.x) for t in self.fit.dropped)}

    def summary(self) -> dict[str, Any]:
        d = self.row()
        d["x"] = list(self.x)
        d["coefficients"] = self.fit.coefficients()
        d["dropped_terms"] = [dz.term_name(t, self.x) for t in self.fit.dropped]
        d["formula"] = self.formula()
        d.update(self.extra)
        if self.kind != "polynomial":
            d.pop("order_by_training_error")
        return d


NO_CV_ORDER = ("no cross-validated order selection: a fold that leaves one configuration out "
               "keeps fewer than 2 distinct values of {name!r} to train on, which determines no "
               "slope; the order-1 line (what {k} distinct values determine) is reported with its "
               "OLS statistics and no CV error")


def polynomial_candidates(X: np.ndarray, y: np.ndarray, name: str, folds: Folds,
                          max_order: int, reps: Repetitions | None = None) -> list[Candidate]:
    """Orders 1..N of one regressor, each scored by CV; N is capped so that every training
    fold still has order + 1 distinct values (a higher order is not identifiable there), and
    at the number of distinct values - 2 (at least 1): a polynomial of order m - 1 passes
    through the means at m values whatever they are, so no value is left to test it (a cubic
    from 4 sizes, where folds over finer configurations keep all 4); a note says so.

    When the cap leaves no order but the regressor takes at least 2 values (the common sweep
    of one parameter at two values with repeated runs), the order-1 line is still fitted: two
    values determine a straight line, and with replicates it has residuals, R^2 and standard
    errors. It cannot be cross-validated (a fold trains on one value), so its ``cv_mse`` is
    NaN and its ``extra["note"]`` says why.

    Parameters
    ----------
    X, y : numpy.ndarray
        One regressor's values (n,) and the effect (n,).
    name : str
        The regressor's name.
    folds : Folds
        (training rows, held-out rows) of each fold (:func:`make_folds`).
    max_order : int
        The highest order tried (``sweep.fit.max_order``).
    reps : Repetitions, optional, default=None
        The rows are these compressed runs (``y`` their means): fits and errors of the runs.

    Returns
    -------
    list of Candidate
        One per order, the CV choice marked ``chosen``.
    """
    x = X.reshape(-1, 1)
    distinct = len(np.unique(x))
    cap = distinct - 1
    for train, _ in folds:
        cap = min(cap, len(np.unique(x[train])) - 1)
    top = min(max_order, cap)
    by_levels = max(distinct - 2, 1)  # one level left over to test the curve
    level_note = None
    if top > by_levels:
        level_note = (f"poly[{name}]: orders above {by_levels} not fitted: {distinct} "
                      f"distinct values of {name!r} determine a polynomial of order "
                      f"{distinct - 1} exactly, leaving no value to test it")
        top = by_levels
    if top < 1 <= distinct - 1:
        terms = dz.polynomial_terms(1)
        return [Candidate(model=f"poly[{name}]^1", kind="polynomial", x=[name],
                          fit=fit_terms(x, y, terms, [name], reps), cv_mse=float("nan"),
                          order=1,
                          extra={"order_by_cv": None, "order_by_training_error": 1,
                                 "note": NO_CV_ORDER.format(name=name, k=distinct)})]
    cands = []
    for order in range(1, top + 1):
        terms = dz.polynomial_terms(order)
        cands.append(Candidate(model=f"poly[{name}]^{order}", kind="polynomial", x=[name],
                               fit=fit_terms(x, y, terms, [name], reps),
                               cv_mse=cv_mse(x, y, terms, folds, reps), order=order,
                               chosen=False))
    if cands:
        best = nf.first_lowest([c.cv_mse for c in cands], TIE_MSE * float(np.mean(y ** 2)))
        cands[0 if best is None else best].chosen = True
        by_training = int(np.argmin([c.fit.metrics()["mse"] for c in cands]))
        for c in cands:
            c.extra = {"order_by_cv": cands[best].order,
                       "order_by_training_error": cands[by_training].order}
        if level_note:
            cands[0].extra["note"] = level_note
    return cands


def form_candidates(X: np.ndarray, y: np.ndarray, names: Sequence[str], folds: Folds,
                    forms: Sequence[str],
                    reps: Repetitions | None = None) -> tuple[list[Candidate], list[str]]:
    """ARPE's four multivariate OLS forms, each listed once: a form whose terms repeat an
    earlier one's (as with a single regressor) is skipped, and so is a form whose fit equals an
    earlier one's once collinear terms are dropped (in a sparse cross design the interaction
    is collinear, so ``interaction`` fits ``linear``); a note names the merged forms.

    Parameters
    ----------
    X, y : numpy.ndarray
        The regressors (n, d) and the effect (n,).
    names : sequence of str
        The regressors' names.
    folds : Folds
        (training rows, held-out rows) of each fold (:func:`make_folds`).
    forms : sequence of str
        The forms fitted (``sweep.fit.forms``).
    reps : Repetitions, optional, default=None
        The rows are these compressed runs (``y`` their means): fits and errors of the runs.

    Returns
    -------
    tuple of list of Candidate and list of str
        The candidates and the notes.
    """
    seen: set[tuple[dz.Term, ...]] = set()
    fitted: dict[tuple[dz.Term, ...], Candidate] = {}
    cands, notes = [], []
    for form in forms:
        terms = dz.form_terms(form, len(names))
        key = tuple(sorted(terms))
        if key in seen:
            continue
        seen.add(key)
        fit = fit_terms(X, y, terms, names, reps)
        kept = tuple(sorted(fit.terms))
        if kept in fitted:
            same = fitted[kept]
            dropped = ", ".join(dict.fromkeys(dz.term_name(t, list(names))
                                              for t in [*same.fit.dropped, *fit.dropped]))
            notes.append(f"ols:{form} fits the same terms as {same.model} once the collinear "
                         f"term(s) {dropped} are dropped; listed once, as {same.model}")
            same.extra.setdefault("same_as", []).append(f"ols:{form}")
            continue
        c = Candidate(model=f"ols:{form}", kind="ols", x=list(names), fit=fit,
                      cv_mse=cv_mse(X, y, terms, folds, reps), form=form)
        fitted[kept] = c
        cands.append(c)
    return cands, notes


def normal_form_candidates(X: np.ndarray, y: np.ndarray, names: Sequence[str],
                           groups: Sequence[Any], cv_folds: int, settings: Any,
                           reps: Repetitions | None = None,
                           asked: np.ndarray | None = None
                           ) -> tuple[list[Candidate], list[str]]:
    """The normal-form search (:func:`perfcast.sweep.normalform.search`) on the
    configuration aggregates, its listed hypotheses as candidates (the search's pick
    ``chosen``), each refitted by OLS for statistics and intervals: on the runs when
    repetitions are aggregated by their mean (the same coefficients on a balanced design), on
    the configuration medians otherwise (intervals then for a configuration's median).

    Parameters
    ----------
    X, y : numpy.ndarray
        The varying regressors (n, d) and the effect (n,).
    names : sequence of str
        The regressors' names.
    groups : sequence
        One configuration label per run.
    cv_folds : int
        Folds over configurations (``sweep.fit.cv_folds``).
    settings : NormalFormSettings
        ``sweep.fit.normal_form``.
    reps : Repetitions, optional, default=None
        The rows are these compressed runs (``y`` their means, ``groups`` their labels):
        aggregates, noise floor, fits and errors of the runs.
    asked : numpy.ndarray, optional, default=None
        Rows (``names`` order) of the points predictions are asked for. For an effect
        positive in every run the search chooses only a law that neither reaches 0 nor turns
        over where the data do not, up to these points
        (:func:`perfcast.sweep.plausibility.implausible_values`).

    Returns
    -------
    tuple of list of Candidate and list of str
        The candidates and the notes.
    """
    if reps is None:
        frame = pd.DataFrame(X, columns=list(names))
        frame["_y"] = y
        agg = nf.aggregate(frame, "_y", list(names), groups, settings.aggregate)
    else:
        agg = rp.configuration_values(reps, list(names), settings.aggregate)
    Xc, yc = agg[list(names)].to_numpy(dtype=float), agg["_y"].to_numpy(dtype=float)
    space = nf.Space.from_settings(settings)
    # a configuration's runs, counted either way: without any repeated, the search estimates
    # the floor from residuals (None)
    floor: float | None = None
    if bool((agg["n_runs"] > 1).any()):
        floor = nf.noise_floor(y, groups) if reps is None else \
            nf.noise_floor(None, None, stats=rp.configuration_stats(reps))
    plausible = None
    refused: list[tuple[nf.Hypothesis, str]] = []
    runs = y if reps is None else reps.runs  # positive in every run, not only every mean
    if len(yc) and bool((np.asarray(runs, dtype=float) > 0).all()):
        values = {tuple(r): float(v) for r, v in zip(Xc, yc, strict=True)}

        def plausible(h: nf.Hypothesis, used: float) -> bool:
            why = pl.implausible_values(h.predict, Xc, names, pl.relative_noise(used),
                                        asked, values)
            if why:
                refused.append((h, why))
            return why is None
    found = nf.search(Xc, yc, list(names), space, lambda g: make_folds(g, cv_folds), floor,
                      plausible)
    passed = [(h, why) for h, why in refused if found.best is None
              or h.cv_smape < found.best.cv_smape]
    notes = list(found.notes)
    if passed:
        h, why = min(passed, key=lambda t: t[0].cv_smape)
        label = " + ".join(nf.term_name(t, names) for t in h.terms) or "const"
        chosen = " + ".join(nf.term_name(t, names) for t in found.best.terms) or "const" \
            if found.best is not None else None
        notes.append(f"pmnf:{label} not chosen: it {why}, for an effect positive in every "
                     "measurement" + (f"; pmnf:{chosen} instead" if chosen else ""))
    floor = found.floor
    conf = [tuple(r) for r in Xc]
    if reps is None:
        row_conf = [tuple(r) for r in pd.DataFrame(X).groupby(
            [str(v) for v in groups], sort=False).transform("mean").to_numpy()]
    else:  # each row's configuration, as it stands in agg
        at = dict(zip(agg["_g"], conf, strict=True))
        row_conf = [at[str(v)] for v in groups]
    cfolds = make_folds(conf, cv_folds)
    cands = []
    for h in found.listed:
        labels = ["const", *(nf.term_name(t, names) for t in h.terms)]
        X_fit, y_fit = (X, y) if settings.aggregate == "mean" else (Xc, yc)
        fit = DesignFit.fit(names, labels, h.design, X_fit, y_fit, X, y, reps=reps,
                            fit_reps=settings.aggregate == "mean")
        held = np.full(len(yc), np.nan)  # held-out configuration predictions -> run CV MSE
        D = h.design(Xc)
        for train, test in cfolds:
            coef, *_ = np.linalg.lstsq(D[train], yc[train], rcond=None)
            held[test] = D[test] @ coef
        by_conf = dict(zip(conf, held, strict=True))
        run_pred = np.array([by_conf.get(c, np.nan) for c in row_conf])
        if reps is not None:
            mse = rp.pooled_squared_error(reps, run_pred)
        else:
            mse = float(np.nanmean((y - run_pred) ** 2)) if np.isfinite(run_pred).any() \
                else float("nan")
        model = "pmnf:" + (" + ".join(labels[1:]) if h.terms else "const")
        cands.append(Candidate(model=model, kind="normal_form", x=list(names), fit=fit,
                               rivals=[r for r in found.ranked if r.key() != h.key()],
                               cv_mse=mse, cv_smape=h.cv_smape, chosen=h is found.best,
                               extra={"combination": h.kind, "n_terms_searched": len(h.terms),
                                      "hypotheses_searched": found.n_searched,
                                      "aggregate": settings.aggregate,
                                      "noise_floor_smape": floor,
                                      "configurations": len(yc),
                                      "per_parameter": found.per_parameter}))
    return cands, notes


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
    #: the points asked for with their predictions, or why they could not be predicted
    #: (:func:`perfcast.sweep.analysis.asked_predictions`)
    predictions: list[dict[str, Any]] = field(default_factory=list)


def keep_plausible(cands: Sequence[Candidate], y: np.ndarray, floor: float,
                   asked: pd.DataFrame | None = None,
                   w: np.ndarray | None = None) -> list[str]:
    """Take the candidates of a positive effect that are implausible on their checked range
    (:func:`perfcast.sweep.plausibility.implausible`: reaching 0, or turning over where the
    data do not) out of the choice: an implausible polynomial order gives way to the
    plausible order of lowest CV MSE, an implausible law to the plausible listed law of
    lowest CV SMAPE, an OLS form is dropped. Each candidate's reason is kept in
    ``extra["implausible"]``. When no candidate is plausible, the choice is left as it was
    and a note says so (the points where the best model is not positive are then reported
    as not predictable, :func:`predict_frame`).

    Parameters
    ----------
    cands : sequence of Candidate
        The effect's candidates, ``data`` set; their ``chosen`` flags are updated.
    y : numpy.ndarray
        The effect, one value per row of the candidates' ``data``.
    floor : float
        The noise floor (:func:`perfcast.sweep.normalform.noise_floor`, or its residual
        estimate without repetitions): turns within the noise are not counted.
    asked : pandas.DataFrame, optional, default=None
        The points a prediction asks for (a column per regressor): the checked range
        reaches them.
    w : numpy.ndarray, optional, default=None
        The number of runs of each row (``y`` then the mean of its runs, of compressed
        runs: :class:`perfcast.sweep.repetitions.Repetitions`); None: one each. A
        configuration's value is the mean of its runs either way.

    Returns
    -------
    list of str
        One note per candidate taken out of the choice (and the replacement).
    """
    before = [c.chosen for c in cands]
    for c in cands:
        if c.data is None:
            continue
        frame = pd.DataFrame(c.data)
        frame["_w"] = 1.0 if w is None else w
        frame["_wy"] = frame["_w"] * y
        by = frame.groupby(list(range(c.data.shape[1])))[["_wy", "_w"]].sum()
        values = by["_wy"] / by["_w"]  # the mean of the runs at each row, however compressed
        by_row = {tuple(np.atleast_1d(np.asarray(k, dtype=float))): float(v)
                  for k, v in values.items()}
        rows = None if asked is None or asked.empty or any(v not in asked for v in c.x) \
            else asked[c.x].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
        rows = None if rows is None else rows[np.isfinite(rows).all(axis=1)]
        reason = pl.implausible(c, pl.relative_noise(floor), rows, by_row)
        if reason:
            c.extra["implausible"] = reason
    notes = []
    families: dict[tuple[str, str], list[Candidate]] = {}
    for c in cands:
        families.setdefault((c.kind, ",".join(c.x) if c.kind == "polynomial" else ""),
                            []).append(c)
    for (kind, _), group in families.items():
        for c in [c for c in group if c.chosen and "implausible" in c.extra]:
            c.chosen = False
            score = "cv_smape" if kind == "normal_form" else "cv_mse"
            others = [o for o in group if "implausible" not in o.extra
                      and np.isfinite(getattr(o, score))] if kind != "ols" else []
            alt = min(others, key=lambda o: getattr(o, score), default=None)
            if alt is not None:
                alt.chosen = True
            notes.append(f"{c.model} not chosen: it {c.extra['implausible']}, for an effect "
                         "positive in every measurement"
                         + (f"; {alt.model} instead" if alt is not None else ""))
    if not any(c.chosen for c in cands):
        for c, flag in zip(cands, before, strict=True):
            c.chosen = flag
        notes.append("no plausible model: every candidate reaches 0 or turns over on the "
                     "checked range; the best one is used, and a point where it is not "
                     "positive is not predicted")
    return notes


def fit_effect(df: pd.DataFrame, name: str, y: str, x: Sequence[str], *, fit: FitSettings,
               groups: Sequence[Any] | None = None,
               asked: pd.DataFrame | None = None) -> SpecResult:
    """All candidates for ``y`` over regressors ``x`` on the rows of ``df`` (see the module
    docstring).

    Parameters
    ----------
    df : pandas.DataFrame
        The data; rows with a missing or non-numeric ``y`` or ``x`` are left out (noted).
    name : str
        The effect's name in the outputs.
    y : str
        The effect's column.
    x : sequence of str
        The regressors' columns.
    fit : FitSettings
        ``sweep.fit``: ``max_order``, the highest univariate polynomial order tried (capped
        per fold, see :func:`polynomial_candidates`); ``cv_folds``, folds over
        configurations (:func:`make_folds`); ``forms``, the multivariate forms
        (:data:`perfcast.sweep.design.FORMS`), fitted when ``x`` has more than one column;
        ``normal_form``, the normal-form search (:func:`normal_form_candidates`) when
        enabled: every candidate is then also scored by CV SMAPE over configurations, and
        the best model is the one of lowest CV SMAPE whatever its family.
    groups : sequence, optional, default=None
        One configuration label per row of ``df``, for the CV folds; None: the distinct
        ``x`` tuples.
    asked : pandas.DataFrame, optional, default=None
        The points predictions will be asked for (a column per regressor): for an effect
        positive in every measurement, no model that reaches 0 or turns over between the
        measured levels and these points is chosen (:func:`keep_plausible`).

    Returns
    -------
    SpecResult
        every candidate, the best one (lowest CV SMAPE with the normal-form search, else
        lowest CV MSE; with 2 configurations the order-1 line, not cross-validated; None with
        fewer than 2 configurations) and notes on what was left out or could not be
        cross-validated (never an empty model list without a note).

    Raises
    ------
    InputError
        a column of ``y`` or ``x`` that ``df`` lacks.

    Notes
    -----
    The usable runs are compressed first to one row per configuration (label and regressor
    values) with the number, mean, squared deviations and median of its runs
    (:func:`perfcast.sweep.repetitions.compress`): every fit, CV error, SMAPE and statistic
    is computed from these as the runs give it, so 10^6 runs of 100 configurations cost
    what 100 rows cost; fitted values and residuals stay per run.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from perfcast.settings import from_section
    >>> from perfcast.sweep.settings import SweepSettings
    >>> fit = from_section(SweepSettings, {"fit": {"max_order": 2, "normal_form": {
    ...     "terms": ["1:0", "1:1", "2:0"], "max_terms": 1}}}, "sweep").fit
    >>> p = np.repeat([2.0, 4, 8, 16, 32, 64], 2)
    >>> df = pd.DataFrame({"p": p, "t": 3.0 + 0.5 * p * np.log2(p) + 0.01 * np.tile([-1, 1], 6)})
    >>> res = fit_effect(df, "t", "t", ["p"], fit=fit)
    >>> res.n_configurations, FAMILY[res.best.kind]
    (6, 'performance model normal form')
    >>> res.best.formula("t", digits=3)
    't = 3 + 0.5 * p * log2(p)'
    >>> pred = predict_frame(res, pd.DataFrame({"p": [128.0]}), alpha=0.05)
    >>> round(float(pred["mean"].iloc[0]))
    451
    >>> result_summary(res)["best"] == res.best.model
    True
    """
    max_order, cv_folds, forms = fit.max_order, fit.cv_folds, list(fit.forms)
    normal_form = fit.normal_form
    missing = [c for c in (y, *x) if c not in df.columns]
    if missing:
        raise InputError(None, f"model {name!r}: no column(s) {missing}",
                         expected=f"some of {list(df.columns)}")
    check_regressor_names(x, name)
    data = df[[y, *x]].apply(pd.to_numeric, errors="coerce")
    notes = []
    for col in dict.fromkeys((y, *x)):
        inf = np.isinf(data[col].to_numpy(dtype=float))
        if inf.any():
            rows = [int(i) for i in np.flatnonzero(inf)]
            notes.append(f"column {col!r}: non-finite value(s) at row(s) "
                         f"{_rows_text(rows)} (0-based) taken as missing")
    keep = usable_rows(df, y, x)
    if (~keep).any():
        notes.append(f"{int((~keep).sum())} row(s) with a missing value left out")
    data = data[keep]
    Y = data[y].to_numpy(dtype=float)
    X = data[list(x)].to_numpy(dtype=float)
    n_runs, scale = len(Y), float(np.mean(Y ** 2)) if len(Y) else 0.0
    positive = bool(n_runs) and bool((Y > 0).all())  # every run, not every mean
    # every score below needs the runs' sufficient statistics only: one row per configuration
    reps = rp.compress(X, Y, None if groups is None
                       else list(np.asarray(groups, dtype=object)[keep]))
    X, Y, g = reps.X, reps.y, reps.groups
    n_conf = len(set(map(str, g)))
    folds = make_folds(g, cv_folds)
    cands: list[Candidate] = []
    if n_runs < 2:
        notes.append(f"{n_runs} usable row(s): nothing fitted")
    elif n_conf < 2:
        notes.append(f"{n_conf} configuration: a model needs the effect at 2 or more "
                     "configurations (one determines a mean, not a slope); no model fitted")
    else:
        for j, col in enumerate(x):
            cands += polynomial_candidates(X[:, j], Y, col, folds, max_order, reps)
        if len(x) > 1 and n_conf > 2:  # one regressor: the forms are the orders 1-2
            form_cands, form_notes = form_candidates(X, Y, list(x), folds, forms, reps)
            cands += form_cands
            notes += form_notes
        elif len(x) > 1:
            notes.append("2 configurations: the multivariate forms are not fitted (more "
                         "coefficients than configurations)")
        notes += [c.extra["note"] for c in cands if "note" in c.extra]
        constant = [col for j, col in enumerate(x) if len(np.unique(X[:, j])) < 2]
        if constant:
            notes.append(f"regressor(s) {constant} take a single value: no polynomial in them")
        if normal_form.enabled:
            if n_conf >= 3:
                for c in cands:
                    idx = [list(x).index(v) for v in c.x]
                    pred = cv_predictions(X[:, idx], Y, c.fit.terms, folds, reps.w)
                    if np.isfinite(pred).all():
                        c.cv_smape = float(nf.with_forward(
                            configuration_smape(pred, Y, g, normal_form.aggregate, reps.w,
                                                reps.medians),
                            forward_smapes(X[:, idx], Y, c.fit.terms, g, c.fit.k + 1,
                                           normal_form.aggregate, reps)))
                varying = [j for j in range(len(x)) if len(np.unique(X[:, j])) > 1]
                names = [x[j] for j in varying]
                rows = None
                if asked is not None and not asked.empty and all(n in asked for n in names):
                    rows = asked[names].apply(pd.to_numeric, errors="coerce").to_numpy(
                        dtype=float)
                    rows = rows[np.isfinite(rows).all(axis=1)]
                nf_cands, nf_notes = normal_form_candidates(
                    X[:, varying], Y, names, g, cv_folds, normal_form,
                    replace(reps, X=X[:, varying]), rows)
                notes += nf_notes + _same_models(cands, nf_cands)
                cands += nf_cands
            else:
                notes.append(f"{n_conf} configurations: no normal-form search (a law with a "
                             "constant and one term needs 3 to be cross-validated)")
    for c in cands:
        c.data = X[:, [list(x).index(v) for v in c.x]]
    floor = next((c.extra["noise_floor_smape"] for c in cands if c.kind == "normal_form"),
                 nf.noise_floor(None, None, stats=rp.configuration_stats(reps))
                 if n_runs else 0.0)
    if cands and positive:
        notes += keep_plausible(cands, Y, floor, asked, reps.w)
    best = _best(cands, by_smape=normal_form.enabled, scale=scale)
    if best is not None and not np.isfinite(best.cv_mse):
        notes.append(f"best model {best.model!r} by training MSE: no candidate could be "
                     "cross-validated")
    if best is not None and not has_intervals(best):
        notes.append(f"{best.model}: fitted on {best.fit.n} observations for {best.fit.k} "
                     "coefficients, no residual degree of freedom: its predictions have no "
                     "standard error and no intervals")
    if not cands and not notes:  # never an empty model list without a reason
        notes.append("no candidate model could be fitted")
    return SpecResult(name=name, y=y, x=list(x), candidates=cands, best=best, n=n_runs,
                      n_configurations=n_conf, notes=notes)


def check_regressor_names(x: Sequence[str], name: str = "") -> None:
    """Refuse a regressor whose name cannot stand in a formula: the models' ids and formulas
    (``pmnf:p * log2(p)``, ``3 + 2 * p^2``) and ``--predict p=128,n=5`` write the names
    as they are, so a name with an operator, a space, ``=`` or ``,`` reads as something
    else, and ``const`` is the intercept's name.

    Raises
    ------
    InputError
        naming the first such regressor and what a name may hold.

    Examples
    --------
    >>> check_regressor_names(["p", "n_ranks", "size.kb"])
    >>> check_regressor_names(["p^2"])
    Traceback (most recent call last):
    ...
    perfcast.errors.InputError: <input>: regressor 'p^2' ...
    """
    for col in x:
        if not REGRESSOR_NAME.fullmatch(str(col)) or str(col) in RESERVED_NAMES:
            where = f" (model {name!r})" if name else ""
            raise InputError(None, f"regressor {col!r}{where} cannot stand in a formula",
                             expected="a name of letters, digits, '_' and '.', starting with "
                                      "a letter or '_', and not 'const': rename the column")


def _best(cands: Sequence[Candidate], by_smape: bool = False,
          scale: float = 0.0) -> Candidate | None:
    """The chosen candidate of lowest CV MSE; when none has a finite CV error (too few
    configurations to cross-validate), the chosen one of lowest training MSE; ties (within
    ``TIE_MSE`` of ``scale``, the effect's mean square; of CV SMAPE within
    :data:`perfcast.sweep.normalform.TIE_SMAPE`): the earlier, simpler candidate.

    ``by_smape`` (with the normal-form search): the normal form's law, unless an ARPE
    candidate generalises clearly better: the law's CV SMAPE above
    :data:`perfcast.sweep.normalform.NOISE_FACTOR` times the noise floor of the repetitions,
    and the rival's lower by more than :data:`perfcast.sweep.normalform.REL_GAIN` of it and
    by more than :data:`perfcast.sweep.normalform.ABS_GAIN` points (the normal form contains
    the straight line and sums of powers already; a polynomial of higher order wins only with
    that evidence), the rule the search applies between laws of different sizes. A rival
    competes only when each leave-one-configuration-out fit keeps a residual degree of
    freedom (coefficients <= configurations - 2): an interpolating polynomial's CV error
    says little about the next level. A rival that turns beyond the data
    (:func:`perfcast.sweep.plausibility.turns_beyond`: a quadratic rising at the largest
    level with a negative leading coefficient) must also beat the law by more than
    :data:`perfcast.sweep.normalform.RISE_MARGIN` times the noise floor, the preference for
    growth over a turn that the search applies to laws rising by a negative exponent."""
    chosen = [c for c in cands if c.chosen]
    if by_smape:
        scored = [c for c in chosen if np.isfinite(c.cv_smape)]
        law = [c for c in scored if c.kind == "normal_form"]
        if law:
            n_conf = law[0].extra.get("configurations", 0)
            rival = min((c for c in scored if c.kind != "normal_form"
                         and c.fit.k <= n_conf - 2), key=lambda c: c.cv_smape, default=None)
            floor = law[0].extra.get("noise_floor_smape", 0.0)
            if rival is not None and law[0].cv_smape > nf.NOISE_FACTOR * floor \
                    and rival.cv_smape < law[0].cv_smape * (1 - nf.REL_GAIN) \
                    and law[0].cv_smape - rival.cv_smape > nf.ABS_GAIN \
                    and not (pl.turns_beyond(rival) and law[0].cv_smape - rival.cv_smape
                             <= nf.RISE_MARGIN * floor):
                return rival
            return law[0]
        if scored:
            return scored[nf.first_lowest([c.cv_smape for c in scored], nf.TIE_SMAPE)]
    eligible = [c for c in chosen if np.isfinite(c.cv_mse)]
    if eligible:
        return eligible[nf.first_lowest([c.cv_mse for c in eligible], TIE_MSE * scale)]
    return min(chosen, key=lambda c: c.fit.metrics()["mse"]) if chosen else None


def same_span(a: np.ndarray, b: np.ndarray) -> bool:
    """Two design matrices of the same rows span the same column space: every model of one is
    a model of the other, whatever ``y`` (rank of each equals the rank of both side by side,
    columns scaled to unit length so that the rank's tolerance treats them alike)."""
    if a.shape[0] != b.shape[0]:
        return False

    def unit(m: np.ndarray) -> np.ndarray:
        norm = np.linalg.norm(m, axis=0)
        return m[:, norm > 0] / norm[norm > 0]

    a, b = unit(np.asarray(a, dtype=float)), unit(np.asarray(b, dtype=float))
    ra, rb = np.linalg.matrix_rank(a), np.linalg.matrix_rank(b)
    return ra == rb == np.linalg.matrix_rank(np.hstack([a, b]))


def _same_models(arpe: Sequence[Candidate], laws: Sequence[Candidate]) -> list[str]:
    """Notes on normal-form laws that are an ARPE candidate under another name (the same
    number of coefficients and designs that span the same space on the data: ``a + b + a * b``
    is the interaction form); both stay listed, each in its family, with its statistics. Equal
    fitted values alone do not make two models the same: on data that one law fits exactly
    (a constant, a straight line) many do."""
    notes = []
    for law in laws:
        for c in arpe:
            if c.fit.k == law.fit.k and c.fit.n == law.fit.n and same_span(
                    c.fit.result.model.exog, law.fit.result.model.exog):
                law.extra["same_as"] = c.model
                notes.append(f"{law.model} is the same model as {c.model} (another family's "
                             "name for it)")
                break
    return notes


def usable_rows(df: pd.DataFrame, y: str, x: Sequence[str]) -> np.ndarray:
    """Rows whose ``y`` and ``x`` are finite numbers (missing, text and infinite values are
    left out).

    Parameters
    ----------
    df : pandas.DataFrame
        The data.
    y : str
        The effect's column.
    x : sequence of str
        The regressors' columns.

    Returns
    -------
    numpy.ndarray
        A boolean mask, one entry per row.
    """
    data = df[[y, *x]].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
    return np.isfinite(data).all(axis=1)


def _rows_text(rows: Sequence[int], limit: int = 10) -> str:
    shown = ", ".join(map(str, rows[:limit]))
    return shown + (f" and {len(rows) - limit} more" if len(rows) > limit else "")


def fitted_frame(result: SpecResult, df: pd.DataFrame, id_columns: Sequence[str]) -> pd.DataFrame:
    """y, fitted and residual of every candidate on every row it was fitted on.

    Parameters
    ----------
    result : SpecResult
        The effect's candidates.
    df : pandas.DataFrame
        The rows the effect was fitted on.
    id_columns : sequence of str
        Columns of ``df`` naming each row (``point``, ``iteration``).

    Returns
    -------
    DataFrame
        columns ``effect``, ``model``, ``id_columns``, ``y``, ``fitted``, ``residual`` and
        ``best`` (the candidate is the effect's best).
    """
    rows = df[usable_rows(df, result.y, result.x)]
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


def has_intervals(c: Candidate) -> bool:
    """The model keeps a residual degree of freedom to estimate its scatter from (more
    observations, runs or configuration medians, than coefficients): its predictions have a
    standard error and intervals."""
    return c.fit.n > c.fit.k


def positive_effect(df: pd.DataFrame, y: str, x: Sequence[str]) -> bool:
    """Every value of ``y`` on the rows a model of ``y`` on ``x`` is fitted on
    (:func:`usable_rows`) is positive: a time, an energy, a rate. Its predictions must then
    be positive and their intervals never reach below zero (:func:`predict_frame`); a
    missing value elsewhere in the column does not change that.

    Parameters
    ----------
    df : pandas.DataFrame
        The data.
    y : str
        The effect's column.
    x : sequence of str
        The regressors' columns.

    Returns
    -------
    bool
        Whether every usable value of ``y`` is above 0 (False without a usable row).
    """
    rows = usable_rows(df, y, x)
    values = pd.to_numeric(df.loc[rows, y], errors="coerce").to_numpy(dtype=float)
    return bool(len(values)) and bool((values > 0).all())


#: a candidate is competitive at a point beyond the data when its CV score is at most this
#: many times the best one's (plus :data:`perfcast.sweep.normalform.ABS_GAIN` points of
#: SMAPE): the data do not tell it from the best model (:func:`model_spread`)
COMPETITIVE = 2.0


def measured_range(c: Candidate) -> tuple[np.ndarray, np.ndarray]:
    """The smallest and largest measured value of each of the model's regressors."""
    if c.data is None or not len(c.data):
        n = len(c.x)
        return np.full(n, -np.inf), np.full(n, np.inf)
    return np.min(c.data, axis=0), np.max(c.data, axis=0)


def extrapolation(c: Candidate, row: Sequence[float]) -> str:
    """How far a point lies beyond the measured range of the model ``c``, per regressor
    outside it; ``""`` inside.

    Examples
    --------
    >>> from perfcast.sweep import design as dz
    >>> x = np.array([128.0, 256, 512, 1024, 2048])
    >>> c = Candidate("poly[size]^1", "polynomial", ["size"],
    ...               fit_terms(x.reshape(-1, 1), 2 * x, dz.polynomial_terms(1), ["size"]),
    ...               0.0, data=x.reshape(-1, 1))
    >>> extrapolation(c, [4096.0])
    '2x beyond the largest measured size 2048'
    >>> extrapolation(c, [64.0]), extrapolation(c, [300.0])
    ('2x below the smallest measured size 128', '')
    """
    lo, hi = measured_range(c)
    parts = []
    for name, v, a, b in zip(c.x, row, lo, hi, strict=True):
        if v > b:
            how = f"{v / b:.3g}x" if b > 0 else f"{v - b:.4g}"
            parts.append(f"{how} beyond the largest measured {name} {b:g}")
        elif v < a:
            how = f"{a / v:.3g}x" if v > 0 and a > 0 else f"{a - v:.4g}"
            parts.append(f"{how} below the smallest measured {name} {a:g}")
    return "; ".join(parts)


def model_spread(result: SpecResult, X: np.ndarray) -> tuple[np.ndarray, int]:
    """At rows ``X`` (the best model's regressors), the largest distance between the best
    model's value and that of a competitive candidate, and how many there are.

    A candidate, or a rival law of the search (``Candidate.rivals``), is competitive when
    it is plausible (not taken out by :func:`keep_plausible`), has a finite value at the
    rows, and its CV score (SMAPE with the normal-form search, else MSE) is at most
    ``COMPETITIVE`` times the best model's plus ``NOISE_FACTOR`` times the noise floor (at
    least ``ABS_GAIN`` points of SMAPE): scores closer than the noise do not tell laws
    apart.

    Parameters
    ----------
    result : SpecResult
        The effect and its candidates.
    X : numpy.ndarray
        (m, k) rows in the order of ``result.best.x``.

    Returns
    -------
    tuple of numpy.ndarray and int
        (m,) the spread (0 without a competitor) and the number of competitors.
    """
    best = result.best
    spread = np.zeros(len(X))
    if best is None:
        return spread, 0
    by_smape = np.isfinite(best.cv_smape)
    top = best.cv_smape if by_smape else best.cv_mse
    if not np.isfinite(top):
        return spread, 0
    floor = best.extra.get("noise_floor_smape", 0.0) or 0.0
    limit = COMPETITIVE * top + (max(nf.ABS_GAIN, nf.NOISE_FACTOR * floor) if by_smape
                                 else 0.0)
    frame = pd.DataFrame(X, columns=best.x)
    with np.errstate(all="ignore"):
        own = best.raw_design(X) @ np.array([r["coef"] for r in best.fit.coefficients()])
        n = 0
        for h in best.rivals:
            other = h.predict(X)
            if h.cv_smape <= limit and np.isfinite(other).all():
                spread = np.maximum(spread, np.abs(other - own))
                n += 1
        for c in result.candidates:
            score = c.cv_smape if by_smape else c.cv_mse
            if c is best or "implausible" in c.extra or not np.isfinite(score) \
                    or score > limit or any(v not in frame for v in c.x):
                continue
            other = c.raw_design(frame[c.x].to_numpy(dtype=float)) @ np.array(
                [r["coef"] for r in c.fit.coefficients()])
            if np.isfinite(other).all():
                spread = np.maximum(spread, np.abs(other - own))
                n += 1
    return spread, n


def predict_frame(result: SpecResult, points: pd.DataFrame, alpha: float,
                  source: str | None = None, positive: bool = False,
                  refuse: bool = True) -> pd.DataFrame:
    """The best model's prediction at each row of ``points`` (which must hold the model's
    regressors).

    Parameters
    ----------
    result : SpecResult
        The effect.
    points : pandas.DataFrame
        Where to predict.
    alpha : float
        Intervals at level 1 - ``alpha`` (``sweep.fit.alpha``).
    source : str, default=None
        Where the points come from, named in an error (``--predict``, a config key).
    positive : bool, default=False
        The effect is a positive quantity (:func:`positive_effect`): a point asked for
        (``points`` without a ``source`` column, or its rows of source ``predict``) where
        the model gives 0 or less is refused, and the lower bounds of the intervals of every
        positive prediction are clipped at 0.
    refuse : bool, default=True
        A point asked for that cannot be predicted (no finite value, or 0 or less for a
        positive effect) raises; False: its row is kept with ``predictable`` False, the
        reason in ``note`` and no values (the workflow's ``predict`` points: the run
        completes and says which point could not be predicted and why), and a ``curve``
        row (a drawn model, ``source`` ``curve``) that cannot be predicted is left out.

    Returns
    -------
    DataFrame
        ``effect``, ``model``, the columns of ``points``, then statsmodels'
        ``get_prediction(...).summary_frame(alpha)`` columns: ``mean``, ``mean_se``,
        ``mean_ci_lower``/``upper`` (confidence interval of the mean) and
        ``obs_ci_lower``/``upper`` (prediction interval of a new run), at level 1 - ``alpha``;
        then ``extrapolation`` (how far the point lies beyond the measured range, ``""``
        inside, :func:`extrapolation`), ``model_spread`` (:func:`model_spread`, 0 inside),
        ``predictable`` and ``note``. Empty without a best model.

    Raises
    ------
    InputError
        naming the first point where the prediction or an interval bound is not a finite
        number: a term undefined there (a logarithm, a fractional or a negative power at or
        below 0) or a value beyond floating point. No prediction is written as NaN without
        ``predictable`` False; a model without a residual degree of freedom
        (:func:`has_intervals`) has no standard error and no intervals (NaN), which the
        effect's notes say (:func:`fit_effect`). With ``positive``, naming the first point
        asked for where the model gives 0 or less, whether it lies inside or outside the
        measured range, and the range each regressor was measured over. With ``refuse``
        False only for points not asked for (measured configurations, curve rows).

    Notes
    -----
    Beyond the measured range the coefficients' standard errors describe the chosen model's
    uncertainty only, not the uncertainty of the choice: models the cross-validation cannot
    tell apart agree between the measured levels and part beyond them (a law of size^3 and
    one of size^3 log2(size) fitted on 128-2048 differ by 9 % at 4096). Each interval of a
    point beyond the data is widened by the largest distance ``u`` between the chosen
    model's value and that of a competitive candidate (:func:`model_spread`): half-widths
    ``sqrt(h^2 + u^2)``, as the unconditional variance of a model-averaged estimate adds the
    spread of the models' estimates to each one's own (Burnham and Anderson, Model
    Selection and Multimodel Inference, 2nd ed., 2002, section 4.3.2). Inside the measured
    range intervals are the fit's own. The spread grows with the distance from the data as
    the models diverge, and the ``extrapolation`` column says by how far.
    """
    if result.best is None or points.empty:
        return pd.DataFrame()
    c = result.best
    X = points[c.x].to_numpy(dtype=float)
    with np.errstate(all="ignore"):  # found below, naming the point
        frame = c.fit.predict(X, alpha=alpha)
    intervals = has_intervals(c)
    if not intervals:
        frame.loc[:, frame.columns != "mean"] = np.nan  # not inf here and NaN there
    asked = (points["source"].to_numpy() == "predict") if "source" in points.columns \
        else np.ones(len(points), dtype=bool)
    curve = (points["source"].to_numpy() == "curve") if "source" in points.columns \
        else np.zeros(len(points), dtype=bool)
    lo, hi = measured_range(c)
    measured = ", ".join(f"{n} {a:g} to {b:g}" for n, a, b in zip(c.x, lo, hi, strict=True)) \
        if c.data is not None and len(c.data) else "unknown"
    reasons: list[str] = [""] * len(points)
    errors: list[tuple[str, str]] = [("", "")] * len(points)
    checked = frame if intervals else frame[["mean"]]
    finite = np.isfinite(checked.to_numpy(dtype=float)).all(axis=1)
    means = frame["mean"].to_numpy(dtype=float)
    for k in range(len(points)):
        where = ", ".join(f"{n}={v:g}" for n, v in zip(c.x, X[k], strict=True))
        beyond = extrapolation(c, X[k])
        position = f"outside the measured range ({beyond})" if beyond \
            else "inside the measured range"
        if not finite[k]:
            errors[k] = (f"effect {result.name!r}: the model {c.formula(result.y)} has no "
                         f"finite prediction at {where}, {position}",
                         "points where every term of the model is defined (a logarithm, a "
                         "fractional or a negative power needs values > 0) and its value and "
                         "intervals are finite")
        elif positive and asked[k] and means[k] <= 0:
            errors[k] = (f"effect {result.name!r}: the model {c.formula(result.y)} predicts "
                         f"{means[k]:.4g} at {where}, {position}, where every measured "
                         f"{result.y} is positive",
                         f"points where the model stays positive (measured: {measured}); "
                         + ("far outside the measured range a law fitted to it does not "
                            "hold" if beyond else "inside the measured range the model "
                            "reaches 0 where the measurements do not: it fits their noise"))
        if errors[k][0] and (refuse or not (asked[k] or curve[k])):
            raise InputError(source, errors[k][0], expected=errors[k][1])
        reasons[k] = errors[k][0] and f"not predictable: {errors[k][0]}"
    beyond = np.array([bool(extrapolation(c, row)) for row in X])
    spread = np.zeros(len(points))
    if beyond.any():
        spread[beyond], _ = model_spread(result, X[beyond])
        for lower, upper in (("mean_ci_lower", "mean_ci_upper"),
                             ("obs_ci_lower", "obs_ci_upper")):
            for col, sign in ((lower, -1), (upper, 1)):
                h = np.abs(frame[col].to_numpy(dtype=float) - means)
                wide = means + sign * np.sqrt(h ** 2 + spread ** 2)
                frame[col] = np.where(beyond & np.isfinite(h), wide, frame[col])
    bad = np.array([bool(r) for r in reasons])
    frame.loc[bad, :] = np.nan
    if positive:
        up = means > 0
        for col in ("mean_ci_lower", "obs_ci_lower"):
            frame.loc[up & ~bad, col] = frame.loc[up & ~bad, col].clip(lower=0)
    frame["extrapolation"] = [extrapolation(c, row) for row in X]
    frame["model_spread"] = spread
    frame["predictable"] = ~bad
    frame["note"] = reasons
    out = points.reset_index(drop=True).copy()
    out.insert(0, "model", c.model)
    out.insert(0, "effect", result.name)
    out = pd.concat([out, frame], axis=1)
    return out[~(bad & curve)].reset_index(drop=True)  # a drawn curve stops where it must


def selection_criterion(result: SpecResult) -> str | None:
    """The score :func:`_best` chose the effect's best model by: ``cv_smape`` where a chosen
    candidate has a CV SMAPE (the normal-form search ran), else ``cv_mse`` where one has a CV
    MSE, else ``training_mse`` (too few configurations to cross-validate); None without a
    best model. The outputs and the figures name it from here.

    Examples
    --------
    >>> selection_criterion(SpecResult("t", "t", ["p"], [], None, 0, 0, []))
    """
    if result.best is None:
        return None
    chosen = [c for c in result.candidates if c.chosen]
    if any(np.isfinite(c.cv_smape) for c in chosen):
        return "cv_smape"
    if any(np.isfinite(c.cv_mse) for c in chosen):
        return "cv_mse"
    return "training_mse"


def result_summary(result: SpecResult) -> dict[str, Any]:
    """One effect as plain data (the models JSON): its candidates with their statistics and
    coefficients (:meth:`Candidate.summary`), the best one's id and the notes."""
    return {
        "effect": result.name, "y": result.y, "x": result.x, "n": result.n,
        "n_configurations": result.n_configurations, "notes": result.notes,
        "best": None if result.best is None else result.best.model,
        "best_family": None if result.best is None else FAMILY[result.best.kind],
        "formula": None if result.best is None else result.best.formula(result.y),
        "selected_by": selection_criterion(result),
        "predictions": result.predictions,
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

