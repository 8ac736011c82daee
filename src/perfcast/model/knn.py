"""KNN model of the new generation's IPC ratio from old-generation counters (docs/methods/model.md).

The method is Patkar's [1]_: a regression from the old generation's counters per
kilo-instruction to the ratio of the new generation's IPC to the old one's. Here scikit-learn's
[2]_ ``KNeighborsRegressor`` in a ``Pipeline`` (optional log1p, standard scaling) so the scaler is
fit on training folds only; ``n_neighbors`` and ``weights`` tuned by a grid search with
``GroupKFold`` on benchmark (:class:`NeighbourSearch`: ``GridSearchCV``'s results from one
neighbour query per fold). Honest evaluation is leave-one-benchmark-out: for the held-out
benchmark the predicted new-gen cycles per interval are ``instructions / (IPC_old * ratio_pred)``
and the error is that of the total (runtime at the new generation's clock = cycles / f).

References
----------
.. [1] S. Patkar, "Server Performance Prediction using ML Models - Part 1" and "- Part 2"
   (WhileOne blog), https://whileone.in/post/server-performance-prediction-using-ml-models-part-1,
   https://whileone.in/post/server-performance-prediction-using-ml-models-part-2.
.. [2] F. Pedregosa et al., "Scikit-learn: Machine Learning in Python", Journal of Machine
   Learning Research 12:2825-2830, 2011.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from perfcast.model.settings import KnnSettings
from perfcast.model.trainset import GROUP, TARGET

if TYPE_CHECKING:  # scikit-learn takes a second to import: only where a model is fitted
    from sklearn.pipeline import Pipeline


def make_pipeline(log1p: bool, n_neighbors: int = 5, weights: str = "uniform") -> Pipeline:
    """``[log1p ->] StandardScaler -> KNeighborsRegressor(n_neighbors, weights)`` (scikit-learn
    [2]_).

    The neighbours are given here rather than by ``set_params`` afterwards: the
    leave-one-benchmark-out refits build n^2 pipelines, and ``set_params`` inspects every
    step's signature.

    Parameters
    ----------
    log1p : bool
        transform every feature by log(1 + max(x, 0)) first (``model.log1p``).
    n_neighbors : int, default=5
        k.
    weights : str, default="uniform"
        ``uniform`` or ``distance`` (scikit-learn's meaning).
    """
    from sklearn.neighbors import KNeighborsRegressor
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import FunctionTransformer, StandardScaler

    steps = []
    if log1p:
        # PKI spans orders of magnitude (DRAM refills vs L1 accesses); clip guards tiny negatives
        steps.append(("log1p", FunctionTransformer(_log1p_clip, feature_names_out="one-to-one")))
    steps += [("scale", StandardScaler()),
              ("knn", KNeighborsRegressor(n_neighbors=n_neighbors, weights=weights))]
    return Pipeline(steps)


def _log1p_clip(x):
    return np.log1p(np.clip(x, 0.0, None))


def thin(train: pd.DataFrame, max_rows: int | None) -> pd.DataFrame:
    """At most ``max_rows`` evenly spaced rows per benchmark (keeps phase proportions), the
    benchmarks in name order; None or 0: every row as it is.

    One ``take`` for all benchmarks: the leave-one-benchmark-out calibration thins n (n - 1)
    training sets.
    """
    if not max_rows:
        return train
    codes, _ = pd.factorize(train[GROUP], sort=True)
    order = np.argsort(codes, kind="stable")  # row positions, grouped by benchmark, in order
    order = order[codes[order] >= 0]  # a row without a benchmark belongs to none (as groupby)
    counts = np.bincount(codes[codes >= 0])
    starts = np.cumsum(counts) - counts
    keep = [start + np.unique(np.linspace(0, n - 1, min(max_rows, n)).round().astype(int))
            for start, n in zip(starts, counts, strict=True) if n]
    positions = order[np.concatenate(keep)] if keep else order[:0]
    return train.iloc[positions].reset_index(drop=True)


def fit(train: pd.DataFrame, features: list[str], settings: KnnSettings) -> NeighbourSearch:
    """Tune k and weights by GroupKFold on benchmark, refit on all rows.

    Parameters
    ----------
    train : pandas.DataFrame
        the training set (:mod:`perfcast.model.trainset`): ``benchmark``, the target
        ``ipc_ratio`` and the feature columns.
    features : list of str
        the feature columns, in the model's order.
    settings : KnnSettings
        the grid, folds, transform and thinning (``model`` section).

    Returns
    -------
    NeighbourSearch
        fitted (the attributes of scikit-learn's ``GridSearchCV``); ``best_estimator_`` is the
        pipeline refitted on every (thinned) row. k above the rows of a training fold is
        clipped to it (the train and evaluate rules refuse such a k first:
        :func:`neighbour_limit`); folds are ``min(cv_folds, benchmarks)``.

    Raises
    ------
    ValueError
        fewer than two benchmarks.
    """
    from sklearn.model_selection import GroupKFold

    data = thin(train, settings.max_rows_per_benchmark)
    groups = data[GROUP].to_numpy()
    n_groups = len(np.unique(groups))
    if n_groups < 2:
        raise ValueError("training needs at least two benchmarks (GroupKFold on benchmark)")
    cv = GroupKFold(n_splits=min(settings.cv_folds, n_groups))
    # k may not exceed the smallest training fold (folds of unequal benchmarks differ in size)
    max_k = min(len(tr) for tr, _ in cv.split(data, groups=groups))
    grid = {
        "knn__n_neighbors": sorted({min(k, max_k) for k in settings.n_neighbors}),
        "knn__weights": list(settings.weights),
    }
    search = NeighbourSearch(settings.log1p, grid["knn__n_neighbors"], grid["knn__weights"], cv)
    return search.fit(data[features].to_numpy(), data[TARGET].to_numpy(), groups=groups)


def neighbour_limit(train: pd.DataFrame, settings: KnnSettings, *, nested: bool = False
                    ) -> int | None:
    """The largest ``k`` every fit of the KNN's search can take: the rows of the smallest
    training fold of :func:`fit`'s ``GroupKFold`` on the thinned ``train``; with ``nested``,
    the smallest over the training sets of the leave-one-benchmark-out evaluation (``train``
    without each benchmark in turn). The leave-one-benchmark-out refits
    (:func:`fit_fixed`) have at least as many rows: each benchmark is in some fold's test part.

    Parameters
    ----------
    train : pandas.DataFrame
        the training set (``benchmark`` and its rows).
    settings : KnnSettings
        the ``model`` section (``cv_folds``, thinning).
    nested : bool, default=False
        the limit of the evaluation's inner searches rather than of the training's.

    Returns
    -------
    int or None
        the limit; None where a search has fewer than two benchmarks (:func:`fit` refuses it).

    Examples
    --------
    Four benchmarks of 3, 3, 3 and 30 rows in two folds: the fold that tests the large one
    trains on the 9 rows of the others; in the evaluation, without the large one, a fold of
    the three small ones trains on one of them, 3 rows:

    >>> from perfcast.settings import from_section
    >>> t = pd.DataFrame({"benchmark": ["a"] * 3 + ["b"] * 3 + ["c"] * 3 + ["d"] * 30})
    >>> s = from_section(KnnSettings, {"cv_folds": 2}, "model")
    >>> neighbour_limit(t, s), neighbour_limit(t, s, nested=True)
    (9, 3)
    """
    from sklearn.model_selection import GroupKFold

    sets = ([train[train[GROUP] != b] for b in train[GROUP].unique()] if nested else [train])
    limit = None
    for part in sets:
        data = thin(part, settings.max_rows_per_benchmark)
        groups = data[GROUP].to_numpy()
        n_groups = len(np.unique(groups))
        if n_groups < 2:
            return None
        cv = GroupKFold(n_splits=min(settings.cv_folds, n_groups))
        smallest = min(len(tr) for tr, _ in cv.split(data, groups=groups))
        limit = smallest if limit is None else min(limit, smallest)
    return limit


class NeighbourSearch:
    """``GridSearchCV`` over ``n_neighbors`` x ``weights`` of :func:`make_pipeline` scored by
    mean absolute error, with one neighbour query per fold for the whole grid.

    A grid search fits and queries a neighbour index once per grid point and fold (12 x 4 with
    the defaults). The ``k`` nearest neighbours are the first ``k`` of the ``max(k)`` nearest,
    so one ``kneighbors`` query per fold gives every point of the grid: the uniform prediction
    is the mean of the first ``k`` targets, the distance-weighted one their ``1/d``-weighted mean
    (a neighbour at distance 0 takes all the weight, as in scikit-learn). The scores, the chosen
    point (the first with the best mean score, in ``ParameterGrid`` order) and the refitted
    ``best_estimator_`` are those of ``GridSearchCV`` with the same folds, up to the order of
    neighbours at exactly equal distances. The attributes the model card reads are
    ``GridSearchCV``'s: ``cv_results_``, ``best_params_``, ``best_score_``, ``best_index_``,
    ``best_estimator_``.
    """

    def __init__(self, log1p: bool, n_neighbors: list[int], weights: list[str], cv) -> None:
        self.log1p = log1p
        self.params = [{"knn__n_neighbors": int(k), "knn__weights": w}
                       for k in n_neighbors for w in weights]  # ParameterGrid's order
        self.cv = cv

    def fit(self, x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> NeighbourSearch:
        """Score every grid point on the folds of ``cv``, then refit the best on all rows.

        Parameters
        ----------
        x : numpy.ndarray
            the features, one row per snapshot.
        y : numpy.ndarray
            the target (IPC ratio) of each row.
        groups : numpy.ndarray
            each row's benchmark, for the ``GroupKFold`` split.

        Returns
        -------
        NeighbourSearch
            this search, fitted.
        """
        from sklearn.neighbors import NearestNeighbors
        from sklearn.pipeline import Pipeline

        scores = np.empty((len(self.params), self.cv.get_n_splits()))
        k_max = max(p["knn__n_neighbors"] for p in self.params)
        for j, (tr, te) in enumerate(self.cv.split(x, y, groups=groups)):
            prep = Pipeline(make_pipeline(self.log1p).steps[:-1])  # log1p and scaling only
            index = NearestNeighbors(n_neighbors=k_max).fit(prep.fit_transform(x[tr]))
            dist, ind = index.kneighbors(prep.transform(x[te]))
            near = y[tr][ind]
            for i, p in enumerate(self.params):
                k = p["knn__n_neighbors"]
                pred = (near[:, :k].mean(axis=1) if p["knn__weights"] == "uniform"
                        else _distance_weighted(near[:, :k], dist[:, :k]))
                scores[i, j] = -np.mean(np.abs(y[te] - pred))
        mean = scores.mean(axis=1)
        self.best_index_ = int(np.argmax(mean))  # the first of equal means, as GridSearchCV
        self.best_score_ = float(mean[self.best_index_])
        self.best_params_ = dict(self.params[self.best_index_])
        self.cv_results_ = {
            "params": self.params,
            "param_knn__n_neighbors": [p["knn__n_neighbors"] for p in self.params],
            "param_knn__weights": [p["knn__weights"] for p in self.params],
            "mean_test_score": mean,
            "std_test_score": scores.std(axis=1),
            "rank_test_score": (mean[None, :] > mean[:, None]).sum(axis=1) + 1,
        }
        best = self.best_params_
        self.best_estimator_ = make_pipeline(self.log1p, best["knn__n_neighbors"],
                                             best["knn__weights"]).fit(x, y)
        return self


def _distance_weighted(near: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """scikit-learn's ``weights="distance"`` mean: weights ``1/d``; in a row with a neighbour at
    distance 0, weight 1 for those at 0 and 0 for the others."""
    with np.errstate(divide="ignore"):
        w = 1.0 / dist
    inf = np.isinf(w)
    rows = inf.any(axis=1)
    w[rows] = inf[rows]
    return (near * w).sum(axis=1) / w.sum(axis=1)


def fit_fixed(train: pd.DataFrame, features: list[str], settings: KnnSettings,
              params: dict) -> Pipeline:
    """The pipeline with fixed ``params`` (``n_neighbors``, ``weights``; k clipped to the rows)
    fitted on ``train`` (thinned as by :func:`fit`), without a search: the refits of the
    leave-one-benchmark-out calibration (:mod:`perfcast.model.conformal`).

    Parameters
    ----------
    train : pandas.DataFrame
        the rows to fit on.
    features : list of str
        the feature columns.
    settings : KnnSettings
        the ``model`` section (``log1p``, thinning).
    params : dict
        ``n_neighbors`` and ``weights``.
    """
    data = thin(train, settings.max_rows_per_benchmark)
    k = min(int(params["n_neighbors"]), len(data))
    pipe = make_pipeline(settings.log1p, k, params["weights"])
    return pipe.fit(data[features].to_numpy(), data[TARGET].to_numpy())


def best_params(search: NeighbourSearch) -> dict:
    """``{"n_neighbors", "weights"}`` chosen by the search."""
    return {k.removeprefix("knn__"): v for k, v in search.best_params_.items()}


def predicted_ratio(model, counters: pd.DataFrame, features: list[str]
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Per interval of an old-generation run, the predicted IPC ratio, and whether the interval
    had every feature (one without borrows the run's median ratio rather than vanishing).

    Parameters
    ----------
    model : object
        a fitted regressor of the IPC ratio (``predict(x)``).
    counters : pandas.DataFrame
        the old run's table (the features).
    features : list of str
        the model's feature columns.

    Raises
    ------
    ValueError
        ``counters`` lacks a feature.
    """
    missing = [f for f in features if f not in counters.columns]
    if missing:
        raise ValueError(f"counter table lacks the model's features {missing}")
    x = counters[features].to_numpy(dtype=float)
    ok = np.isfinite(x).all(axis=1)
    ratio = np.full(len(counters), np.nan)
    if ok.any():
        ratio[ok] = model.predict(x[ok])
    ratio[~ok] = np.nanmedian(ratio) if ok.any() else np.nan
    return ratio, ok


def predict_run(model: Pipeline, counters: pd.DataFrame, features: list[str],
                clock_ghz: float | None) -> pd.DataFrame:
    """Per interval of an old-generation run: predicted IPC ratio, new-gen IPC and cycles.

    Parameters
    ----------
    model : Pipeline
        a fitted regressor of the IPC ratio (``predict(x)``).
    counters : pandas.DataFrame
        the old run's table (``interval``, ``time``, ``instructions``, ``ipc``, features).
    features : list of str
        the model's feature columns.
    clock_ghz : float or None
        the new generation's clock; adds ``runtime_new_pred_s`` (None: no runtime).

    Returns
    -------
    pandas.DataFrame
        ``interval``, ``time``, ``instructions``, ``ipc_old``, ``ipc_ratio_pred``,
        ``ipc_new_pred``, ``cycles_new_pred`` (instructions / predicted IPC), ``imputed`` (an
        interval with a missing counter takes the run's median predicted ratio) and, with a
        clock, ``runtime_new_pred_s``.

    Raises
    ------
    ValueError
        ``counters`` lacks a feature.

    Examples
    --------
    A model predicting a ratio of 1.25 everywhere; the second interval lacks its counter and
    borrows the run's median ratio:

    >>> from perfcast.model.families import ConstantRatio
    >>> old = pd.DataFrame({"interval": [0, 1], "time": [0.1, 0.2], "instructions": [2e8, 2e8],
    ...                     "ipc": [1.0, 2.0], "x_pki": [3.0, float("nan")]})
    >>> pred = predict_run(ConstantRatio(1.25), old, ["x_pki"], clock_ghz=2.0)
    >>> pred[["ipc_new_pred", "cycles_new_pred", "runtime_new_pred_s", "imputed"]].values.tolist()
    [[1.25, 160000000.0, 0.08, False], [2.5, 80000000.0, 0.04, True]]
    """
    ratio, ok = predicted_ratio(model, counters, features)
    ipc_new = counters["ipc"].to_numpy() * ratio
    cycles_new = counters["instructions"].to_numpy() / ipc_new
    out = pd.DataFrame({
        "interval": counters["interval"].to_numpy(),
        "time": counters["time"].to_numpy(),
        "instructions": counters["instructions"].to_numpy(),
        "ipc_old": counters["ipc"].to_numpy(),
        "ipc_ratio_pred": ratio,
        "ipc_new_pred": ipc_new,
        "cycles_new_pred": cycles_new,
        "imputed": ~ok,
    })
    if clock_ghz:
        out["runtime_new_pred_s"] = cycles_new / (clock_ghz * 1e9)
    return out
