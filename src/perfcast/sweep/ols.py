"""One fitted linear-in-coefficients model (statsmodels OLS) and the statistics ARPE reports.

ARPE's paper reports for each model the coefficients, the residuals r, the mean squared error
and R^2; ``analyzedata.m`` asks MATLAB's ``regstats`` for beta, mse, r, rsquare. Here:

- ``mse`` = SSE / n, ARPE's eq. 2 (mean of squared errors over the m experiments);
- ``mse_resid`` = SSE / (n - k), regstats' ``mse`` (unbiased residual variance);
- ``r2`` and ``adj_r2`` = 1 - (1 - R^2)(n - 1)/(n - k), statsmodels' definitions;
- coefficients with standard errors, t and p values in raw units (see :mod:`design`);
- predictions with confidence intervals of the mean and prediction intervals of a new run.

References: ARPE, https://github.com/martinamaggio/arpe; statsmodels OLS and its results
(https://www.statsmodels.org/stable/generated/statsmodels.regression.linear_model.OLS.html,
``RegressionResults.get_prediction``); MATLAB ``regstats``
(https://www.mathworks.com/help/stats/regstats.html).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from perfcast.sweep import design as dz
from perfcast.sweep.repetitions import Repetitions


@dataclass
class LinearFit:
    """A fit of ``terms`` over regressors ``names`` (see :func:`fit_terms`)."""

    names: list[str]
    terms: list[dz.Term]
    dropped: list[dz.Term]
    standardiser: dz.Standardiser
    result: Any  # statsmodels RegressionResults on the standardised design
    coef: np.ndarray = field(default_factory=lambda: np.empty(0))
    cov: np.ndarray = field(default_factory=lambda: np.empty((0, 0)))

    @property
    def n(self) -> int:
        return int(self.result.nobs)

    @property
    def k(self) -> int:
        return len(self.terms)

    @property
    def residuals(self) -> np.ndarray:
        return np.asarray(self.result.resid)

    @property
    def fitted(self) -> np.ndarray:
        return np.asarray(self.result.fittedvalues)

    def metrics(self) -> dict[str, float]:
        """``n``, ``n_terms``, ``mse`` (SSE / n), ``mse_resid`` (SSE / (n - k)), ``r2``,
        ``adj_r2``, and statsmodels' ``aic`` and ``bic`` (see the module docstring); NaN where
        a statistic needs residual degrees of freedom the fit lacks."""
        sse = float(self.result.ssr)
        df_resid = self.n - self.k
        sst = float(self.result.centered_tss)
        r2 = 1 - sse / sst if sst > 0 else float("nan")
        adj = 1 - (1 - r2) * (self.n - 1) / df_resid if df_resid > 0 else float("nan")
        return {
            "n": self.n,
            "n_terms": self.k,
            "mse": sse / self.n,
            "mse_resid": sse / df_resid if df_resid > 0 else float("nan"),
            "r2": r2,
            "adj_r2": adj,
            "aic": float(self.result.aic),
            "bic": float(self.result.bic),
        }

    def coefficients(self) -> list[dict[str, Any]]:
        """Raw-unit coefficients: term, coef, se, t, p (NaN where the fit has no residual
        degrees of freedom)."""
        df_resid = self.n - self.k
        se = np.sqrt(np.clip(np.diag(self.cov), 0, None)) if df_resid > 0 else \
            np.full(self.k, np.nan)
        out = []
        for term, b, s in zip(self.terms, self.coef, se, strict=True):
            t = b / s if s > 0 else float("nan")
            p = _two_sided_p(t, df_resid)
            out.append({"term": dz.term_name(term, self.names), "coef": float(b),
                        "se": float(s), "t": float(t), "p": p})
        return out

    def predict(self, X: np.ndarray, alpha: float) -> pd.DataFrame:
        """Predictions at the rows of ``X`` (raw regressors, in ``names`` order).

        Parameters
        ----------
        X : numpy.ndarray
            One row per point, one column per regressor.
        alpha : float
            Intervals at level 1 - ``alpha`` (``sweep.fit.alpha``).

        Returns
        -------
        DataFrame
            ``mean``, ``mean_se``, ``mean_ci_lower``/``upper`` and ``obs_ci_lower``/``upper``
            at level 1 - ``alpha`` (statsmodels ``get_prediction(...).summary_frame``).
        """
        D = dz.design(self.standardiser(np.atleast_2d(np.asarray(X, dtype=float))), self.terms)
        frame = self.result.get_prediction(D).summary_frame(alpha=alpha)
        return frame.reset_index(drop=True)


def _ols(y: np.ndarray, D: np.ndarray) -> Any:
    """statsmodels' ``OLS(y, D)``, imported on the first fit: statsmodels, with the scipy.stats
    it loads, takes about a second to import, which the jobs that only read or draw fitted
    models (figures, paper tables) need not pay."""
    from statsmodels.regression.linear_model import OLS as _OLS

    return _OLS(y, D)


def _fit(y: np.ndarray, D: np.ndarray, reps: Repetitions | None) -> Any:
    """statsmodels' OLS fit of (D, y), or :class:`RunsOLS` where the rows are compressed
    repetitions ``reps``."""
    if reps is None:
        return _ols(y, D).fit()
    return RunsOLS(D, reps)


class _Prediction:
    """What :meth:`RunsOLS.get_prediction` returns: ``summary_frame(alpha)``."""

    def __init__(self, mean: np.ndarray, var_mean: np.ndarray, scale: float, df: float):
        self.mean, self.var_mean, self.scale, self.df = mean, var_mean, scale, df

    def summary_frame(self, alpha: float = 0.05) -> pd.DataFrame:
        q = float(special.stdtrit(self.df, 1 - alpha / 2)) if self.df > 0 else float("nan")
        se = np.sqrt(self.var_mean)
        obs = np.sqrt(self.var_mean + self.scale)
        return pd.DataFrame({"mean": self.mean, "mean_se": se,
                             "mean_ci_lower": self.mean - q * se,
                             "mean_ci_upper": self.mean + q * se,
                             "obs_ci_lower": self.mean - q * obs,
                             "obs_ci_upper": self.mean + q * obs})


class RunsOLS:
    """The OLS fit of runs given as compressed repetitions
    (:class:`perfcast.sweep.repetitions.Repetitions`): the fit of the rows' means weighted by
    their number of runs, with the statistics of the runs, as statsmodels' ``OLS`` of the runs
    gives them: ``params`` (its ``pinv`` solution), ``nobs`` (the runs), ``df_resid``,
    ``ssr`` (the weighted residuals of the means plus the runs' deviations from their means),
    ``centered_tss``, ``scale``, ``cov_params()``, ``aic``/``bic`` (Gaussian log-likelihood,
    ``2 rank`` and ``log(nobs) rank`` penalties), ``get_prediction(D).summary_frame(alpha)``
    (Student t intervals of the mean and of one new run), and ``resid``/``fittedvalues`` per
    run.

    Parameters
    ----------
    D : numpy.ndarray
        (m, k) the design at the compressed rows.
    reps : Repetitions
        The rows' means, counts and sums of squared deviations, and each run's row.

    Examples
    --------
    >>> from perfcast.sweep.repetitions import compress
    >>> x = np.array([1.0, 1, 2, 2, 3, 3]); y = np.array([1.0, 1.2, 2.1, 1.9, 3.2, 2.8])
    >>> reps = compress(x.reshape(-1, 1), y)
    >>> r = RunsOLS(np.column_stack([np.ones(3), reps.X[:, 0]]), reps)
    >>> ref = _ols(y, np.column_stack([np.ones(6), x])).fit()
    >>> bool(np.allclose(r.params, ref.params) and np.isclose(r.bic, ref.bic))
    True
    """

    def __init__(self, D: np.ndarray, reps: Repetitions) -> None:
        sw = np.sqrt(reps.w)
        wD = D * sw[:, None]
        pinv = np.linalg.pinv(wD, rcond=1e-15)
        self.params = pinv @ (reps.y * sw)
        self.normalized_cov_params = pinv @ pinv.T
        self.rank = int(np.linalg.matrix_rank(wD))
        self.nobs = float(reps.n)
        self.df_resid = self.nobs - self.rank
        self._D, self._reps = D, reps
        pure = float(np.sum(reps.ss))
        resid = reps.y - D @ self.params
        self.ssr = float(reps.w @ resid**2) + pure
        mean = float(reps.w @ reps.y) / self.nobs
        self.centered_tss = float(reps.w @ (reps.y - mean) ** 2) + pure
        with np.errstate(divide="ignore", invalid="ignore"):
            self.scale = self.ssr / self.df_resid if self.df_resid > 0 else float("nan")
            llf = -self.nobs / 2 * (np.log(2 * np.pi) + np.log(self.ssr / self.nobs) + 1)
        self.aic = float(-2 * llf + 2 * self.rank)
        self.bic = float(-2 * llf + np.log(self.nobs) * self.rank)
        self.model = type("Model", (), {"exog": D})

    def cov_params(self) -> np.ndarray:
        """The coefficients' covariance, ``scale`` times ``(D' W D)^+``."""
        return self.scale * self.normalized_cov_params

    @property
    def fittedvalues(self) -> np.ndarray:
        """The fitted value of each run."""
        return (self._D @ self.params)[self._reps.inverse]

    @property
    def resid(self) -> np.ndarray:
        """The residual of each run."""
        return self._reps.runs - self.fittedvalues

    def get_prediction(self, D: np.ndarray) -> _Prediction:
        """The prediction at design rows ``D`` (``summary_frame(alpha)``)."""
        D = np.atleast_2d(D)
        var = np.einsum("ij,jk,ik->i", D, self.cov_params(), D)
        return _Prediction(D @ self.params, var, self.scale, self.df_resid)


def _two_sided_p(t: float, df: int) -> float:
    """``2 P(T > |t|)`` for Student's t with ``df`` degrees of freedom (``scipy.stats.t.sf``'s
    own formula, ``special.stdtr(df, -|t|)``, without importing scipy.stats); NaN for a
    non-finite t."""
    return float(2 * special.stdtr(df, -abs(t))) if np.isfinite(t) else float("nan")


def fit_terms(X: np.ndarray, y: np.ndarray, terms: Sequence[dz.Term],
              names: Sequence[str], reps: Repetitions | None = None) -> LinearFit:
    """OLS of y on ``terms`` of the columns of X (statsmodels ``OLS(y, D).fit()``).

    The design is built on standardised regressors and terms linearly dependent on earlier
    ones are dropped (:func:`perfcast.sweep.design.independent_terms`); coefficients and
    their covariance are mapped back to raw units (:func:`perfcast.sweep.design.raw_transform`).

    Parameters
    ----------
    X : numpy.ndarray
        Regressors, one column per name (n rows).
    y : numpy.ndarray
        The effect (n values).
    terms : sequence of Term
        Exponent tuples (:mod:`perfcast.sweep.design`).
    names : sequence of str
        The regressors' names (for term names).
    reps : Repetitions, optional, default=None
        The rows are compressed runs (:func:`perfcast.sweep.repetitions.compress`, X its
        regressor rows, y its means): the fit and its statistics are those of the runs
        (:class:`RunsOLS`).

    Returns
    -------
    LinearFit
    """
    X = np.asarray(X, dtype=float).reshape(len(y), -1)
    y = np.asarray(y, dtype=float)
    w = None if reps is None else reps.w
    std = dz.Standardiser(X, w)
    D = dz.design(std(X), terms)
    keep, drop = dz.independent_terms(D if w is None else D * np.sqrt(w)[:, None], terms)
    kept = [terms[i] for i in keep]
    result = _fit(y, D[:, keep], reps)
    T = dz.raw_transform(kept, std.center, std.scale)
    cov_scaled = np.asarray(result.cov_params()) if result.df_resid > 0 else \
        np.zeros((len(kept), len(kept)))
    return LinearFit(names=list(names), terms=kept, dropped=[terms[i] for i in drop],
                     standardiser=std, result=result, coef=T @ np.asarray(result.params),
                     cov=T @ cov_scaled @ T.T)


@dataclass
class DesignFit:
    """OLS of y on given columns (a normal-form hypothesis' terms, see
    :mod:`perfcast.sweep.normalform`), with the interface of :class:`LinearFit`.

    ``design(X)`` gives the columns (the intercept first) at raw regressors X. The fit is on
    ``(X_fit, y_fit)`` (the runs, or one aggregate per configuration); ``X_rows``/``y_rows``
    are the runs whose fitted values and residuals are reported. Columns are scaled to unit
    maximum before the fit (p^3 beside p^-3) and the coefficients scaled back.
    """

    names: list[str]
    term_names: list[str]
    design: Any  # Callable[[np.ndarray], np.ndarray]
    result: Any
    scale: np.ndarray
    X_rows: np.ndarray
    y_rows: np.ndarray
    dropped: list = field(default_factory=list)
    #: each run's row of ``X_rows`` where the rows are compressed repetitions (``y_rows``
    #: then the runs' values)
    inverse: np.ndarray | None = None

    @classmethod
    def fit(cls, names: Sequence[str], term_names: Sequence[str], design: Any,
            X_fit: np.ndarray, y_fit: np.ndarray, X_rows: np.ndarray,
            y_rows: np.ndarray, reps: Repetitions | None = None,
            fit_reps: bool = False) -> DesignFit:
        """OLS of ``y_fit`` on ``design(X_fit)``, each column scaled by its largest magnitude
        (conditioning; the coefficients are reported unscaled).

        Parameters
        ----------
        names : sequence of str
            The regressors' names.
        term_names : sequence of str
            The design's columns, in order.
        design : callable
            ``X -> D``, the design matrix of regressor rows.
        X_fit, y_fit : ndarray
            The rows the model is fitted on.
        X_rows, y_rows : ndarray
            Every row of the effect (fitted values and residuals are reported for them).
        reps : Repetitions, optional, default=None
            ``X_rows`` are compressed runs (:func:`perfcast.sweep.repetitions.compress`):
            fitted values and residuals are reported per run.
        fit_reps : bool, default=False
            ``(X_fit, y_fit)`` are ``reps``' rows and means: fitted as the runs
            (:class:`RunsOLS`).
        """
        D = design(X_fit)
        scale = np.max(np.abs(D), axis=0)
        scale = np.where(scale > 0, scale, 1.0)
        result = _fit(np.asarray(y_fit, dtype=float), D / scale, reps if fit_reps else None)
        if reps is not None:
            return cls(list(names), list(term_names), design, result, scale,
                       np.asarray(X_rows, dtype=float), reps.runs, inverse=reps.inverse)
        return cls(list(names), list(term_names), design, result, scale,
                   np.asarray(X_rows, dtype=float), np.asarray(y_rows, dtype=float))

    @property
    def n(self) -> int:
        return int(self.result.nobs)

    @property
    def k(self) -> int:
        return len(self.term_names)

    @property
    def coef(self) -> np.ndarray:
        return np.asarray(self.result.params) / self.scale

    @property
    def fitted(self) -> np.ndarray:
        values = self.design(self.X_rows) @ self.coef
        return values if self.inverse is None else values[self.inverse]

    @property
    def residuals(self) -> np.ndarray:
        return self.y_rows - self.fitted

    def metrics(self) -> dict[str, float]:
        """As :meth:`LinearFit.metrics`, over the data the coefficients were fitted on."""
        sse = float(self.result.ssr)
        df_resid = self.n - self.k
        sst = float(self.result.centered_tss)
        r2 = 1 - sse / sst if sst > 0 else float("nan")
        adj = 1 - (1 - r2) * (self.n - 1) / df_resid if df_resid > 0 else float("nan")
        return {"n": self.n, "n_terms": self.k, "mse": sse / self.n,
                "mse_resid": sse / df_resid if df_resid > 0 else float("nan"), "r2": r2,
                "adj_r2": adj, "aic": float(self.result.aic), "bic": float(self.result.bic)}

    def coefficients(self) -> list[dict[str, Any]]:
        """term, coef, se, t, p per column (NaN without residual degrees of freedom)."""
        df_resid = self.n - self.k
        if df_resid > 0:
            se = np.sqrt(np.clip(np.diag(np.asarray(self.result.cov_params())), 0, None))
            se = se / self.scale
        else:
            se = np.full(self.k, np.nan)
        out = []
        for name, b, s in zip(self.term_names, self.coef, se, strict=True):
            t = b / s if s > 0 else float("nan")
            p = _two_sided_p(t, df_resid)
            out.append({"term": name, "coef": float(b), "se": float(s), "t": float(t), "p": p})
        return out

    def predict(self, X: np.ndarray, alpha: float) -> pd.DataFrame:
        """As :meth:`LinearFit.predict` (statsmodels ``get_prediction(...).summary_frame``)."""
        D = self.design(np.atleast_2d(np.asarray(X, dtype=float))) / self.scale
        if self.n - self.k <= 0:  # no residual variance: the mean without intervals
            mean = D @ np.asarray(self.result.params)
            nan = np.full(len(mean), np.nan)
            return pd.DataFrame({"mean": mean, "mean_se": nan, "mean_ci_lower": nan,
                                 "mean_ci_upper": nan, "obs_ci_lower": nan, "obs_ci_upper": nan})
        return self.result.get_prediction(D).summary_frame(alpha=alpha).reset_index(drop=True)
