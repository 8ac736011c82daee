"""Candidate families of the IPC-ratio model and the choice among them by leave-one-benchmark-out
cross-validation (docs/methods/model.md, "Choosing the model").

A regression from counters to the IPC ratio is only worth its complexity when the counters
carry information about the ratio; on ordinary whole-run counters of real machines they often
do not, and a KNN then loses to the constant ratio printed beside it. So three families compete
on every data set of intervals, simplest first (on whole runs, one row per benchmark, the KNN
is left out: :meth:`perfcast.model.settings.KnnSettings.for_tables`):

* ``constant``: every interval scaled by one ratio, the median over the training benchmarks of
  each benchmark's mean IPC ratio (one benchmark, one vote, whatever its length).
* ``ridge``: ridge regression [1]_ of ``log(ratio)`` on ``log(1 + PKI)``, standardised, its
  penalty ``alpha`` tuned on ``model.ridge_alphas`` by ``GroupKFold`` on benchmark (as the KNN's
  grid, :func:`perfcast.model.knn.fit`); the log target makes the effect of a counter
  multiplicative and keeps the predicted ratio positive.
* ``knn``: the KNN of :mod:`perfcast.model.knn` with its grid.

The choice (:func:`select`) is a leave-one-benchmark-out cross-validation on the training set:
every family is fitted on all training benchmarks (its hyperparameters tuned), then each
training benchmark ``c`` is predicted by the family refitted without ``c`` (the same
hyperparameters) and scores ``|log(predicted / measured)|`` of its total new-generation cycles.
The *one-standard-error rule* [3]_ picks the family: the simplest whose mean score is within
one standard error (standard deviation over benchmarks / sqrt(n)) of the smallest mean. A
regression must beat the constant ratio by more than the noise of its own cross-validation to
be used; where the counters carry no information about the ratio, that is the constant. The
gain must also be consistent (:func:`choose`): a family is kept only if it predicts at least
three in five benchmarks better than each simpler one, else the simpler is used, so that the
choice does not turn on the few benchmarks a regression happens to fit. Those scores of the
chosen family are also its split-conformal calibration
(:mod:`perfcast.model.conformal`). Run inside the evaluation's own leave-one-benchmark-out
loop, the choice is nested: the held-out benchmark takes no part in choosing the family that
predicts it.

References
----------
.. [1] A. E. Hoerl, R. W. Kennard, "Ridge regression: biased estimation for nonorthogonal
   problems", Technometrics 12(1):55-67, 1970, doi:10.1080/00401706.1970.10488634.
.. [2] M. Stone, "Cross-validatory choice and assessment of statistical predictions", Journal
   of the Royal Statistical Society B 36(2):111-147, 1974 (choosing a model inside the
   cross-validation that assesses it).
.. [3] L. Breiman, J. H. Friedman, R. A. Olshen, C. J. Stone, *Classification and Regression
   Trees*, Wadsworth, 1984, section 3.4.3; T. Hastie, R. Tibshirani, J. Friedman, *The Elements
   of Statistical Learning*, 2nd ed., Springer, 2009, section 7.10 (the one-standard-error
   rule).
"""

from __future__ import annotations

import dataclasses
import math
import platform
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from perfcast.model.conformal import Calibration, log_errors
from perfcast.model.settings import KnnSettings
from perfcast.model.trainset import GROUP, TARGET

#: the candidate families, simplest first (:func:`choose` prefers the earlier)
FAMILIES = ("constant", "ridge", "knn")


class ConstantRatio:
    """The constant-ratio model: ``predict`` gives ``ratio`` for every row."""

    def __init__(self, ratio: float):
        self.ratio = float(ratio)

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.full(len(x), self.ratio)

    def __repr__(self) -> str:
        return f"ConstantRatio({self.ratio!r})"


def constant_ratio(train: pd.DataFrame) -> float:
    """The median over benchmarks of each benchmark's mean IPC ratio.

    Examples
    --------
    >>> t = pd.DataFrame({"benchmark": ["a", "a", "b", "c"], "ipc_ratio": [1.0, 3.0, 1.5, 9.0]})
    >>> constant_ratio(t)
    2.0
    """
    return float(train.groupby(GROUP)[TARGET].mean().median())


def ridge_pipeline(alpha: float = 1.0):
    """``log1p -> StandardScaler -> Ridge(alpha)`` on ``log(ratio)`` (scikit-learn); built with
    its ``alpha`` rather than ``set_params`` afterwards (the leave-one-benchmark-out refits build
    n^2 of them, and ``set_params`` inspects every step's signature)."""
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import FunctionTransformer, StandardScaler

    from perfcast.model.knn import _log1p_clip

    return Pipeline([
        ("log1p", FunctionTransformer(_log1p_clip, feature_names_out="one-to-one")),
        ("scale", StandardScaler()),
        ("ridge", TransformedTargetRegressor(regressor=Ridge(alpha=alpha), func=np.log,
                                             inverse_func=np.exp, check_inverse=False)),
    ])


@dataclass(frozen=True)
class Fitted:
    """One family fitted on a training set: its model (``predict(x)`` gives the ratio), its
    hyperparameters and, for the searched families, the search (its ``cv_results_``)."""

    family: str
    model: Any
    params: Mapping[str, Any]
    search: Any = None


def fit_family(family: str, train: pd.DataFrame, features: list[str],
               settings: KnnSettings) -> Fitted:
    """Fit ``family`` on ``train``, tuning its hyperparameters (none for ``constant``).

    Parameters
    ----------
    family : str
        ``constant``, ``ridge`` or ``knn``.
    train : pandas.DataFrame
        the training set.
    features : list of str
        the feature columns.
    settings : KnnSettings
        the ``model`` section (grids, folds, thinning).

    Raises
    ------
    ValueError
        an unknown family, or a searched family with fewer than two benchmarks.
    """
    if family == "constant":
        ratio = constant_ratio(train)
        return Fitted(family, ConstantRatio(ratio), {"ratio": ratio})
    if family == "knn":
        from perfcast.model.knn import best_params, fit

        search = fit(train, features, settings)
        return Fitted(family, search.best_estimator_, best_params(search), search)
    if family == "ridge":
        from sklearn.model_selection import GridSearchCV, GroupKFold

        from perfcast.model.knn import thin

        data = thin(train, settings.max_rows_per_benchmark)
        groups = data[GROUP].to_numpy()
        n_groups = len(np.unique(groups))
        if n_groups < 2:
            raise ValueError("training needs at least two benchmarks (GroupKFold on benchmark)")
        search = GridSearchCV(ridge_pipeline(),
                              {"ridge__regressor__alpha": list(settings.ridge_alphas)},
                              cv=GroupKFold(n_splits=min(settings.cv_folds, n_groups)),
                              scoring="neg_mean_absolute_error", n_jobs=1, refit=True)
        search.fit(data[features].to_numpy(), data[TARGET].to_numpy(), groups=groups)
        alpha = float(search.best_params_["ridge__regressor__alpha"])
        return Fitted(family, search.best_estimator_, {"alpha": alpha}, search)
    raise ValueError(f"unknown model family {family!r}; expected one of {FAMILIES}")


def refit(fitted: Fitted, train: pd.DataFrame, features: list[str], settings: KnnSettings):
    """``fitted``'s family with its hyperparameters fixed, fitted on ``train`` (no search): the
    refits of the leave-one-benchmark-out choice and calibration.

    Parameters
    ----------
    fitted : Fitted
        a family fitted by :func:`fit_family` (its chosen hyperparameters).
    train : pandas.DataFrame
        the rows to fit on.
    features : list of str
        the feature columns.
    settings : KnnSettings
        the ``model`` section.
    """
    if fitted.family == "constant":
        return ConstantRatio(constant_ratio(train))
    if fitted.family == "knn":
        from perfcast.model.knn import fit_fixed

        return fit_fixed(train, features, settings, fitted.params)
    if fitted.family == "ridge":
        from perfcast.model.knn import thin

        data = thin(train, settings.max_rows_per_benchmark)
        pipe = ridge_pipeline(fitted.params["alpha"])
        return pipe.fit(data[features].to_numpy(), data[TARGET].to_numpy())
    raise ValueError(f"unknown model family {fitted.family!r}; expected one of {FAMILIES}")


@dataclass(frozen=True)
class Selection:
    """The families fitted on a training set, each one's leave-one-benchmark-out log errors
    (a :class:`~perfcast.model.conformal.Calibration` per family) and the chosen family."""

    chosen: str
    fitted: Mapping[str, Fitted]
    scores: Mapping[str, Calibration]

    @property
    def model(self):
        """The chosen family's model fitted on every training benchmark."""
        return self.fitted[self.chosen].model

    @property
    def calibration(self) -> Calibration:
        """The chosen family's leave-one-benchmark-out log errors (its conformal scores)."""
        return self.scores[self.chosen]

    def score(self, family: str) -> float:
        """Mean ``|log(predicted / measured)|`` of total cycles over the training benchmarks,
        each predicted without itself (inf when one is not finite)."""
        return mean_abs_log_error(self.scores[family])


def mean_abs_log_error(cal: Calibration) -> float:
    """Mean absolute cycles log error of a calibration; inf when a benchmark's is not finite."""
    e = np.abs(np.asarray(list(cal.cycles.values()), dtype=float))
    return float(e.mean()) if len(e) and np.isfinite(e).all() else math.inf


def select(train: pd.DataFrame, counters_old: Mapping[str, pd.DataFrame],
           counters_new: Mapping[str, pd.DataFrame], features: list[str],
           settings: KnnSettings, clock_ghz: float | None) -> Selection:
    """Fit every family of ``settings.families`` on ``train`` and choose one by
    leave-one-benchmark-out error of total cycles (see the module's docstring).

    Parameters
    ----------
    train : pandas.DataFrame
        the training set (at least two benchmarks).
    counters_old, counters_new : mapping of str to pandas.DataFrame
        each training benchmark's old and new run tables (the
        measured totals the errors compare with).
    features : list of str
        the feature columns.
    settings : KnnSettings
        the ``model`` section (families, grids, folds, thinning, coverage).
    clock_ghz : float or None
        the new generation's clock (runtime errors too; None: cycles only).

    Returns
    -------
    Selection
        the chosen family (:func:`choose`), every family's fit on all of ``train`` and its
        scores.

    Examples
    --------
    Three benchmarks whose new generation is 1.2, 1.25 and 1.3 times as fast per cycle:

    >>> import pandas as pd
    >>> from perfcast.model.settings import KnnSettings
    >>> from perfcast.model.trainset import build_trainset
    >>> from perfcast.settings import from_section
    >>> def run(ipc):  # three intervals of 1e9 instructions
    ...     return pd.DataFrame({"interval": [0, 1, 2], "time": [0.1, 0.2, 0.3],
    ...         "duration_s": 0.1, "instructions": 1e9, "cycles": 1e9 / ipc, "ipc": ipc,
    ...         "instructions_cumulative_sum": [1e9, 2e9, 3e9], "x_pki": 2.0})
    >>> ratios = {"a": 1.2, "b": 1.25, "c": 1.3}
    >>> old = {b: run(1.0) for b in ratios}
    >>> new = {b: run(r) for b, r in ratios.items()}
    >>> train = build_trainset([pd.DataFrame({"benchmark": b, "old_interval": [0, 1, 2],
    ...     "new_interval": [0, 1, 2], "ipc_ratio": r, "x_pki": 2.0}) for b, r in ratios.items()])
    >>> settings = from_section(KnnSettings, {"families": ["constant"]}, "model")
    >>> sel = select(train, old, new, ["x_pki"], settings, None)
    >>> sel.chosen, round(sel.score(sel.chosen), 4)  # mean |log error| of total cycles
    ('constant', 0.04)
    """
    import sklearn

    families = [f for f in FAMILIES if f in settings.families]
    # the estimators' parameters are the schema-validated settings: scikit-learn's check of
    # them at each of the n^2 refits (it inspects every signature) is skipped
    with sklearn.config_context(skip_parameter_validation=True):
        fitted = {f: fit_family(f, train, features, settings) for f in families}
        benches = sorted(train[GROUP].unique())
        scores = {}
        for f in families:
            cycles, runtime = {}, {}
            for c in benches:
                model = refit(fitted[f], train[train[GROUP] != c], features, settings)
                cycles[c], runtime[c] = log_errors(model, counters_old[c], counters_new[c],
                                                   features, clock_ghz)
            scores[f] = Calibration(cycles, runtime, settings.coverage)
    return Selection(choose({f: scores[f] for f in families}), fitted, scores)


def choose(scores: Mapping[str, Calibration]) -> str:
    """The family of ``scores`` (families in order of simplicity) the model uses: the
    one-standard-error rule [3]_, then the consistency rule.

    1. *One standard error*: the first family whose mean ``|log|`` error is at most the
       smallest mean plus the standard error of the family with the smallest mean (sample
       standard deviation over benchmarks / sqrt(n)).
    2. *Consistency*: that family is kept only if it has the smaller ``|log|`` error than each
       simpler family (of finite scores) on at least :data:`CONSISTENT_SHARE` (three in five) of
       the benchmarks, each predicted without itself (:func:`wins`); otherwise the first simpler
       family it does not beat so consistently is taken and step 2 repeated from there.

    A lower mean made by a few benchmarks, while the simpler family predicts most of them
    better, is not a consistent gain: it turns on which benchmarks happen to be trained on, so
    the choice would flip between folds of the evaluation.

    Examples
    --------
    >>> cal = lambda *e: Calibration(dict(enumerate(e)), {}, 0.9)
    >>> choose({"constant": cal(0.10, 0.12, 0.08), "knn": cal(0.01, 0.02, 0.03)})
    'knn'
    >>> choose({"constant": cal(0.10, 0.12, 0.08), "knn": cal(0.02, 0.18, 0.09)})
    'constant'

    Six benchmarks where the ridge halves the mean error by predicting two of them far better,
    and the other four worse: within one standard error it wins, but not consistently:

    >>> constant = cal(0.10, 0.10, 0.02, 0.02, 0.02, 0.02)
    >>> choose({"constant": constant, "ridge": cal(0.001, 0.001, 0.03, 0.03, 0.03, 0.03)})
    'constant'
    """
    means = {f: mean_abs_log_error(c) for f, c in scores.items()}
    best = min(scores, key=lambda f: means[f])
    e = np.abs(np.asarray(list(scores[best].cycles.values()), dtype=float))
    se = float(e.std(ddof=1) / np.sqrt(len(e))) if len(e) > 1 and np.isfinite(e).all() else 0.0
    chosen = next(f for f in scores if means[f] <= means[best] + se)
    order = list(scores)
    while True:
        simpler = [f for f in order[:order.index(chosen)] if math.isfinite(means[f])]
        fallback = next((f for f in simpler
                         if wins(scores[chosen], scores[f]) < CONSISTENT_SHARE), None)
        if fallback is None:
            return chosen
        chosen = fallback


#: the share of benchmarks on which a family must predict better than a simpler one to be
#: chosen over it (:func:`choose`)
CONSISTENT_SHARE = 3 / 5
#: :func:`choose` in one line (the training log and the model card say how the family was chosen)
CHOICE_RULE = ("the simplest family within one standard error of the smallest mean |log error| "
               "of total cycles, leave one benchmark out, a more complex one only if it "
               "predicts at least 3 in 5 benchmarks better than each simpler one")


def wins(complex_: Calibration, simple: Calibration) -> float:
    """The share of the benchmarks of ``simple`` on which ``complex_`` has the strictly smaller
    ``|log|`` error of total cycles (a non-finite error loses to a finite one; a tie is no
    win).

    Examples
    --------
    >>> cal = lambda *e: Calibration(dict(enumerate(e)), {}, 0.9)
    >>> wins(cal(0.01, 0.2, float("nan"), 0.3), cal(0.02, 0.1, 0.5, 0.3))
    0.25
    """
    a = np.abs(np.asarray([complex_.cycles.get(b, np.nan) for b in simple.cycles], dtype=float))
    b = np.abs(np.asarray(list(simple.cycles.values()), dtype=float))
    if not len(b):
        return 0.0
    a = np.where(np.isfinite(a), a, np.inf)
    b = np.where(np.isfinite(b), b, np.inf)
    return float(np.mean(a < b))


def model_card(sel: Selection, features: list[str], train: pd.DataFrame,
               settings: KnnSettings) -> dict:
    """What a saved model needs to be trusted and reused: features, choice, versions.

    Returns a JSON-able dict: ``features``, ``target``, the chosen ``family`` and its
    ``best_params``; per candidate its hyperparameters, its leave-one-benchmark-out score
    (mean ``|log|`` error of total cycles, the choice's criterion) and, for the searched
    families, every grid point's cross-validated MAE of the ratio (``cv_results``); the
    training ``benchmarks`` and ``rows``, the ``settings`` and the library ``versions``.

    Parameters
    ----------
    sel : Selection
        the fitted families and the chosen one (:func:`select`).
    features : list of str
        the feature columns.
    train : pandas.DataFrame
        the training set.
    settings : KnnSettings
        the ``model`` section.
    """
    import sklearn

    candidates = {}
    for family, fitted in sel.fitted.items():
        entry = {"params": dict(fitted.params), "lobo_mean_abs_log_error": sel.score(family),
                 "lobo_log_errors": dict(sel.scores[family].cycles)}
        if fitted.search is not None:
            cv = pd.DataFrame(fitted.search.cv_results_)
            entry["cv_mae"] = float(-fitted.search.best_score_)
            entry["cv_results"] = [
                {**{k.removeprefix("param_").split("__")[-1]: _plain(r[k])
                    for k in cv.columns if k.startswith("param_")},
                 "mae": float(-r["mean_test_score"]), "mae_std": float(r["std_test_score"])}
                for _, r in cv.iterrows()
            ]
        candidates[family] = entry
    return {
        "features": features,
        "target": TARGET,
        "family": sel.chosen,
        "best_params": dict(sel.fitted[sel.chosen].params),
        "candidates": candidates,
        "benchmarks": sorted(train[GROUP].unique().tolist()),
        "rows": int(len(train)),
        "settings": dataclasses.asdict(settings),
        "versions": {
            "python": platform.python_version(),
            "scikit-learn": sklearn.__version__,
            "numpy": np.__version__,
            "pandas": pd.__version__,
        },
    }


def _plain(v: Any) -> Any:
    """A grid value as JSON has it (numpy scalars to Python)."""
    return v.item() if isinstance(v, np.generic) else v
