"""Prediction intervals for a benchmark's new-generation cycles and runtime: split-conformal
calibration on leave-one-benchmark-out errors (computed by
:func:`perfcast.model.families.select`, which chooses the model family on the same errors).

A benchmark's prediction is one number (its total cycles), and the intervals of one run are not
independent, so the unit of calibration is the benchmark: each training benchmark ``c`` is
predicted by the model refitted without it (same hyperparameters), and its conformity score is
the absolute log ratio ``|log(predicted / measured)|`` of its total cycles (and, with a clock, of
its runtime). With ``n`` scores, the interval at coverage ``1 - alpha`` is

    predicted * exp(-q), predicted * exp(q),  q = the ceil((n + 1)(1 - alpha))-th smallest score,

which covers a new exchangeable benchmark with probability at least ``1 - alpha`` (Vovk,
Gammerman and Shafer, *Algorithmic Learning in a Random World*, Springer 2005; Lei, G'Sell,
Rinaldo, Tibshirani and Wasserman, "Distribution-free predictive inference for regression",
JASA 113(523):1094-1111, 2018). With too few benchmarks for the nominal coverage
(``n < (1 - alpha) / alpha``) the largest attainable one, ``n / (n + 1)``, is used and reported.
Log ratios make the interval multiplicative (a 10 % error means the same for a short and a long
benchmark) and keep its lower end positive.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from perfcast.model.knn import predicted_ratio


@dataclass(frozen=True)
class Calibration:
    """Per training benchmark, ``log(predicted / measured)`` of total cycles and runtime (NaN
    runtime without a clock), and the coverage asked for."""

    cycles: Mapping[str, float]
    runtime: Mapping[str, float]
    coverage: float

    def quantile(self, kind: str = "cycles") -> tuple[float, float]:
        """``(q, coverage used)`` for ``kind`` (``cycles`` or ``runtime``)."""
        scores = np.abs([v for v in getattr(self, kind).values() if math.isfinite(v)])
        return conformal_quantile(scores, self.coverage)

    def as_dict(self) -> dict:
        return {"cycles": dict(self.cycles), "runtime": dict(self.runtime),
                "coverage": self.coverage}


def conformal_quantile(scores: np.ndarray, coverage: float) -> tuple[float, float]:
    """The split-conformal quantile of ``scores`` at ``coverage``: ``(q, coverage used)``.

    ``q`` is the ``ceil((n + 1) coverage)``-th smallest score; when that rank exceeds ``n`` the
    largest score is used, which guarantees ``n / (n + 1)``.
    """
    s = np.sort(np.asarray(scores, dtype=float))
    n = len(s)
    if n == 0:
        raise ValueError("no calibration scores: conformal intervals need at least one "
                         "benchmark predicted without itself")
    rank = math.ceil((n + 1) * coverage)
    if rank > n:
        return float(s[-1]), n / (n + 1)
    return float(s[rank - 1]), coverage


def bounds(value: float, q: float) -> tuple[float, float]:
    """``(value e^-q, value e^q)``."""
    return value * math.exp(-q), value * math.exp(q)


def log_errors(model, old: pd.DataFrame, new: pd.DataFrame, features: list[str],
               clock_ghz: float | None) -> tuple[float, float]:
    """``log(predicted / measured)`` of one benchmark's total new-generation cycles and of its
    runtime (NaN without a clock, and where a total is not finite and positive: the callers'
    checks name the benchmark).

    Parameters
    ----------
    model : object
        a fitted regressor of the IPC ratio (``predict(x)``).
    old, new : pandas.DataFrame
        the benchmark's old and new run tables.
    features : list of str
        the model's feature columns.
    clock_ghz : float or None
        the new generation's clock (None: no runtime error).
    """
    ratio, _ = predicted_ratio(model, old, features)  # the cycles predict_run gives, summed
    cycles = float((old["instructions"].to_numpy() / (old["ipc"].to_numpy() * ratio)).sum())

    def log_ratio(a: float, b: float) -> float:
        return math.log(a / b) if a > 0 and b > 0 and math.isfinite(a / b) else math.nan

    e_cycles = log_ratio(cycles, float(new["cycles"].sum()))
    e_rt = (log_ratio(cycles / (clock_ghz * 1e9), float(new["duration_s"].sum()))
            if clock_ghz else math.nan)
    return e_cycles, e_rt
