"""The runs of an effect as the sufficient statistics of their repetitions.

Every score and statistic the model choice computes from the runs
(:mod:`perfcast.sweep.selection`) depends on them only through, per distinct configuration
label and regressor values, the number of runs ``w``, their mean ``y`` and the sum ``ss`` of
their squared deviations from it, and, for the median aggregate, each configuration's median:

- a least-squares fit of the runs is the fit of the means weighted by ``w`` (the runs of a row
  share its design row), and its residual sum of squares over the runs is the weighted one of
  the means plus ``sum(ss)``;
- a pooled squared error over held-out runs is ``(sum w (y - pred)^2 + sum ss) / sum w``;
- a configuration's mean, standard deviation and count (the noise floor) follow from its rows'
  ``w``, ``y`` and ``ss``.

So the fit of 10^6 runs at 100 configurations costs what 100 rows cost, with the same chosen
model and coefficients (:func:`perfcast.sweep.selection.fit_effect` compresses the runs
first). Each run's row (``inverse``) and value are kept, to give fitted values and residuals
per run.

References: the decomposition of the residual sum of squares into lack of fit and pure error,
e.g. N. R. Draper and H. Smith, *Applied Regression Analysis*, 3rd ed., Wiley 1998, sec. 2.1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Repetitions:
    """Runs compressed to one row per distinct (configuration label, regressor values)."""

    X: np.ndarray  #: (m, d) the rows' regressor values
    y: np.ndarray  #: (m,) the mean of each row's runs
    w: np.ndarray  #: (m,) the number of each row's runs (float)
    ss: np.ndarray  #: (m,) the sum of squared deviations of each row's runs from its mean
    sd: np.ndarray  #: (m,) the sample standard deviation of each row's runs (NaN for one)
    med: np.ndarray  #: (m,) the median of each row's runs
    groups: list[Any]  #: (m,) each row's configuration label (the first run's)
    medians: dict[str, float]  #: str(label) -> the median of the configuration's runs
    inverse: np.ndarray  #: (N,) the row of each run
    runs: np.ndarray  #: (N,) the runs' values

    @property
    def n(self) -> int:
        """The number of runs."""
        return len(self.inverse)


def compress(X: np.ndarray, y: np.ndarray, groups: Sequence[Any] | None = None) -> Repetitions:
    """The sufficient statistics of runs ``(X, y)``, one row per distinct configuration label
    (``str`` of each of ``groups``, as :func:`perfcast.sweep.selection.make_folds` compares
    them) and regressor row, sorted by label then regressor values.

    Parameters
    ----------
    X : numpy.ndarray
        (N, d) the runs' regressor values, finite.
    y : numpy.ndarray
        (N,) the runs' values, finite.
    groups : sequence, optional, default=None
        One configuration label per run; None: each distinct regressor row is one, labelled
        by its tuple of values.

    Returns
    -------
    Repetitions
        The compressed runs.

    Examples
    --------
    >>> r = compress(np.array([[2.0], [1], [2], [1], [2]]), np.array([4.0, 1, 6, 3, 5]))
    >>> r.X.ravel().tolist(), r.y.tolist(), r.w.tolist(), r.ss.tolist()
    ([1.0, 2.0], [2.0, 5.0], [2.0, 3.0], [2.0, 2.0])
    >>> r.inverse.tolist(), r.medians[str(r.groups[1])]
    ([1, 0, 1, 0, 1], 5.0)
    """
    X = np.asarray(X, dtype=float)
    X = X.reshape(-1, 1) if X.ndim == 1 else X
    y = np.asarray(y, dtype=float)
    keys = pd.DataFrame(X)
    if groups is not None:
        codes, _ = pd.factorize(pd.Series([str(v) for v in groups], dtype=object), sort=True)
        keys.insert(0, "_g", codes)
    inverse = keys.groupby(list(keys.columns), sort=True).ngroup().to_numpy()
    m = int(inverse.max()) + 1 if len(inverse) else 0
    w = np.bincount(inverse, minlength=m).astype(float)
    # pandas' grouped mean and standard deviation, as the runs' own groupby gives them
    by = pd.Series(y).groupby(inverse, sort=True)
    mean, sd = by.mean().to_numpy(dtype=float), by.std().to_numpy(dtype=float)
    med = by.median().to_numpy(dtype=float)
    ss = np.bincount(inverse, weights=(y - mean[inverse]) ** 2, minlength=m)
    first = np.empty(m, dtype=int)
    first[inverse[::-1]] = np.arange(len(inverse))[::-1]
    Xu = X[first]
    given = None if groups is None else list(groups)
    labels = [tuple(r) for r in Xu] if given is None else [given[i] for i in first]
    codes, names = pd.factorize(pd.Series([str(v) for v in labels], dtype=object))
    medians = pd.Series(y).groupby(codes[inverse]).median()
    return Repetitions(X=Xu, y=mean, w=w, ss=ss, sd=sd, med=med, groups=labels,
                       medians={str(names[k]): float(v) for k, v in medians.items()},
                       inverse=inverse, runs=y)


def weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    """The median of ``values`` repeated ``weights`` times (the mean of the two middle ones
    for an even total, as :meth:`pandas.Series.median`).

    Examples
    --------
    >>> weighted_median(np.array([3.0, 1.0]), np.array([1.0, 3.0]))
    1.0
    >>> weighted_median(np.array([1.0, 3.0]), np.array([2.0, 2.0]))
    2.0
    """
    order = np.argsort(values, kind="mergesort")
    v, c = np.asarray(values, dtype=float)[order], np.cumsum(np.asarray(weights)[order])
    n = c[-1]
    lo = v[np.searchsorted(c, (n - 1) // 2, side="right")]
    hi = v[np.searchsorted(c, n // 2, side="right")]
    return float((lo + hi) / 2)


def configuration_stats(reps: Repetitions) -> pd.DataFrame:
    """Per configuration label (``str``, sorted): the mean, the sample standard deviation
    (NaN for one run) and the number of its runs, as ``groupby(label).agg(["mean", "std",
    "count"])`` of the runs gives them.

    Examples
    --------
    >>> reps = compress(np.array([[1.0], [1], [2]]), np.array([1.0, 3.0, 5.0]))
    >>> configuration_stats(reps).to_numpy().tolist()
    [[2.0, 1.4142135623730951, 2.0], [5.0, nan, 1.0]]
    """
    frame = pd.DataFrame({"g": [str(v) for v in reps.groups], "w": reps.w,
                          "wy": reps.w * reps.y, "ss": reps.ss})
    if not frame["g"].duplicated().any():  # a row per configuration: its own statistics
        out = pd.DataFrame({"mean": reps.y, "std": reps.sd, "count": reps.w},
                           index=pd.Index(frame["g"], name="g"))
        return out.sort_index()
    by = frame.groupby("g", sort=True)
    n = by["w"].sum()
    mean = by["wy"].sum() / n
    frame["dev"] = reps.w * (reps.y - mean.loc[frame["g"]].to_numpy()) ** 2
    ss = by["ss"].sum() + frame.groupby("g", sort=True)["dev"].sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        std = np.sqrt(ss / (n - 1)).where(n > 1)
    return pd.DataFrame({"mean": mean, "std": std, "count": n})


def configuration_values(reps: Repetitions, names: Sequence[str], how: str) -> pd.DataFrame:
    """One row per configuration: its regressors' means over its runs, the ``how`` (mean or
    median) of its runs in column ``_y`` and their number in ``n_runs``, sorted by the
    regressors (:func:`perfcast.sweep.normalform.aggregate` of the runs), with ``_g`` its
    label.

    Parameters
    ----------
    reps : Repetitions
        The compressed runs.
    names : sequence of str
        The regressors' names, in the order of ``reps.X``'s columns.
    how : str
        ``mean`` or ``median`` (``sweep.fit.normal_form.aggregate``).

    Returns
    -------
    pandas.DataFrame
        Columns ``names``, ``_y``, ``n_runs`` and ``_g``, one row per configuration.

    Examples
    --------
    >>> reps = compress(np.array([[2.0], [1], [2], [2]]), np.array([4.0, 1, 6, 9]))
    >>> configuration_values(reps, ["p"], "median")[["p", "_y", "n_runs"]].to_numpy().tolist()
    [[1.0, 1.0, 1.0], [2.0, 6.0, 3.0]]
    """
    labels = [str(v) for v in reps.groups]
    if len(set(labels)) == len(labels):  # a row per configuration: its own values
        out = pd.DataFrame(reps.X, columns=list(names))
        out["_y"] = reps.y if how == "mean" else [reps.medians[g] for g in labels]
        out["n_runs"], out["_g"] = reps.w, labels
        return out.sort_values(list(names)).reset_index(drop=True)
    frame = pd.DataFrame(reps.X * reps.w[:, None], columns=list(names))
    frame["_w"], frame["_wy"], frame["_g"] = reps.w, reps.w * reps.y, labels
    by = frame.groupby("_g", sort=True).sum()
    out = by[list(names)].div(by["_w"], axis=0)
    out["_y"] = by["_wy"] / by["_w"] if how == "mean" else \
        [reps.medians[g] for g in by.index]
    out["n_runs"] = by["_w"]
    out["_g"] = by.index
    return out.sort_values(list(names)).reset_index(drop=True)


def pooled_squared_error(reps: Repetitions, pred: np.ndarray) -> float:
    """The mean squared error of a prediction ``pred`` of each row over the runs of the rows
    where it is finite: ``(sum w (y - pred)^2 + sum ss) / sum w`` (NaN where none is).

    Examples
    --------
    >>> reps = compress(np.array([[1.0], [1], [2]]), np.array([1.0, 3.0, 5.0]))
    >>> pooled_squared_error(reps, np.array([2.0, 4.0]))  # ((1 + 1) + 1) / 3
    1.0
    """
    ok = np.isfinite(pred)
    if not ok.any():
        return float("nan")
    w = reps.w[ok]
    return float((w @ (reps.y[ok] - pred[ok]) ** 2 + reps.ss[ok].sum()) / w.sum())


def subset_medians(reps: Repetitions, rows: np.ndarray) -> dict[str, float]:
    """Per configuration label of the compressed ``rows``: the median of the runs of those
    rows (a configuration's runs at other rows, a forward fold's training part, left out).

    Examples
    --------
    >>> reps = compress(np.array([[1.0], [1], [2], [2]]), np.array([1.0, 2, 7, 9]),
    ...                 ["a", "a", "a", "a"])
    >>> subset_medians(reps, np.array([1])), subset_medians(reps, np.array([0, 1]))
    ({'a': 8.0}, {'a': 4.5})
    """
    rows = np.asarray(rows)
    labels = [str(reps.groups[i]) for i in rows]
    if len(set(labels)) == len(labels):
        return dict(zip(labels, reps.med[rows].tolist(), strict=True))
    mask = np.isin(reps.inverse, rows)
    text = np.asarray([str(v) for v in reps.groups], dtype=object)
    return {str(k): float(v) for k, v in
            pd.Series(reps.runs[mask]).groupby(text[reps.inverse[mask]]).median().items()}
