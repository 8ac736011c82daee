"""Performance metrics and the sensitivity of Eq. (1).

Wang et al. 2017, Eq. (1): ``S = P(restricted) / P(unrestricted)``. For a metric where lower is
better (runtime, latency) performance is its inverse, so ``S = T(unrestricted) / T(restricted)``.
A failed run (killed by the memory limit, timed out, crashed) has no performance: ``S = 0``.

Reference: L. Wang, D. Qian, Z. Luan, G. Wei, R. Wang, H. Yang, "Speeding up profiling program's
runtime characteristics for workload consolidation", PLoS ONE 12(4): e0175861, 2017.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from perfcast.errors import InputError
from perfcast.process import RunResult


class MetricNotFound(ValueError):
    """The run's output does not carry the metric."""


@dataclass(frozen=True)
class Metric:
    """How a run's performance is read (``sensitivity.programs.<name>.metric``).

    ``source="wall_time"``: the run's wall-clock seconds (lower is better).
    ``source="stdout"``: the first group of ``pattern`` on the last stdout line that matches it.
    ``higher_is_better``: throughput-like (Eq. 1, ``S = P / P0``) or runtime-like
    (``S = P0 / P``). The schema gives the defaults (``runtime_s``, ``wall_time``, no pattern,
    lower is better).

    Raises
    ------
    InputError
        ``source="stdout"`` with a ``pattern`` that is missing or has no capture group.
    """

    name: str
    source: Literal["wall_time", "stdout"]
    pattern: str | None
    higher_is_better: bool

    def __post_init__(self) -> None:
        # the schema requires a pattern with source stdout; that it has a group it cannot check
        if self.source == "stdout" and (not self.pattern or re.compile(self.pattern).groups < 1):
            raise InputError(None, f"metric {self.name}: source stdout needs a pattern with a "
                             f"capture group, got {self.pattern!r}",
                             expected="a regular expression with one group, e.g. rate=([0-9.]+)")

    def extract(self, run: RunResult) -> float:
        """The performance value of one finished run.

        Raises
        ------
        MetricNotFound
            ``source="stdout"`` and no line of the run's output matches ``pattern``.
        """
        if self.source == "wall_time":
            return float(run.wall_s)
        rx = re.compile(self.pattern or "")
        for line in reversed(run.stdout.splitlines()):
            m = rx.search(line)
            if m:
                return float(m.group(1))
        raise MetricNotFound(f"metric {self.name}: no stdout line matches {self.pattern!r}")


def sensitivity(performance: float | None, baseline: float, higher_is_better: bool) -> float:
    """Eq. (1) of Wang et al. (2017) for one run.

    Parameters
    ----------
    performance : float or None
        The restricted run's performance; None, NaN or non-positive: a failed run.
    baseline : float
        The unrestricted performance ``P0``.
    higher_is_better : bool
        ``S = P / P0`` (throughput-like) or ``S = P0 / P`` (runtime-like).

    Returns
    -------
    float
        the sensitivity; 0 for a failed run.

    Raises
    ------
    ValueError
        ``baseline`` is not positive and finite.

    Examples
    --------
    >>> sensitivity(50.0, 200.0, higher_is_better=True)  # a quarter of the throughput
    0.25
    >>> sensitivity(4.0, 2.0, higher_is_better=False)  # twice the runtime
    0.5
    >>> sensitivity(None, 2.0, higher_is_better=False)  # a failed run
    0.0
    """
    if performance is None or not math.isfinite(performance) or performance <= 0:
        return 0.0
    if not (math.isfinite(baseline) and baseline > 0):
        raise ValueError(f"unrestricted performance must be positive and finite, got {baseline}")
    return performance / baseline if higher_is_better else baseline / performance


def sensitivity_array(performance: np.ndarray, baseline: float, higher_is_better: bool
                      ) -> np.ndarray:
    """Vectorised :func:`sensitivity`: NaN or non-positive cells are failed runs (0).

    Parameters
    ----------
    performance : numpy.ndarray
        The restricted runs' performances.
    baseline : float
        The unrestricted performance ``P0``.
    higher_is_better : bool
        ``S = P / P0`` (throughput-like) or ``S = P0 / P`` (runtime-like).

    Returns
    -------
    numpy.ndarray
        The sensitivities, ``performance``'s shape.

    Raises
    ------
    ValueError
        ``baseline`` is not positive and finite.
    """
    p = np.asarray(performance, dtype=float)
    if not (math.isfinite(baseline) and baseline > 0):
        raise ValueError(f"unrestricted performance must be positive and finite, got {baseline}")
    ok = np.isfinite(p) & (p > 0)
    out = np.zeros_like(p)
    out[ok] = p[ok] / baseline if higher_is_better else baseline / p[ok]
    return out


def repeat_ci(values: Sequence[float], confidence: float) -> tuple[float, float, float]:
    """Mean of a point's repeated runs and its two-sided confidence interval.

    Separate runs are independent, so this is the Student-t interval of the mean,
    ``mean +- t(1 - (1 - confidence) / 2, n - 1) * sd / sqrt(n)``, with the warm-up stage's
    quantile (:func:`perfcast.warmup.ci.t_quantile`; the subsession analysis there, with one
    run per block, reduces to it). One run: no interval (NaN bounds); equal runs: zero width.

    Raises
    ------
    ValueError
        no values, or a non-finite one.
    """
    from perfcast.warmup.ci import t_quantile

    x = np.asarray(values, dtype=float)
    if x.size == 0 or not np.all(np.isfinite(x)):
        raise ValueError(f"repeats must be finite numbers, got {list(x)}")
    m = float(x.mean())
    if x.size < 2:
        return m, math.nan, math.nan
    half = t_quantile(confidence, x.size - 1) * float(x.std(ddof=1)) / math.sqrt(x.size)
    return m, m - half, m + half


def sensitivity_interval(low: float, high: float, baseline: float, higher_is_better: bool
                         ) -> tuple[float, float]:
    """The interval of S that a performance interval ``[low, high]`` maps to (Eq. 1 is
    monotone in P, the unrestricted performance held fixed); NaN bounds stay NaN.

    Parameters
    ----------
    low, high : float
        The performance interval.
    baseline : float
        The unrestricted performance ``P0``.
    higher_is_better : bool
        As :func:`sensitivity`.

    Returns
    -------
    tuple of float
        ``(lowest S, highest S)``.
    """
    if not (math.isfinite(low) and math.isfinite(high)):
        return math.nan, math.nan
    a = sensitivity(low, baseline, higher_is_better)
    b = sensitivity(high, baseline, higher_is_better)
    return min(a, b), max(a, b)
