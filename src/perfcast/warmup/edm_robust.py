"""Robust change points: rank-based binary segmentation with a calibrated threshold.

What it fixes in Pilot's EDM_percent (see :mod:`perfcast.warmup.edm_pilot`):

* a change point needs evidence. Each candidate split of a segment is scored by the
  standardised Mann-Whitney (rank-sum) statistic
  ``Z_k = (R_k - k (m+1)/2) / sqrt(k (m-k) / (m-1) * var(ranks))`` (mid-ranks for ties), and
  ``max_k |Z_k|`` is compared with the level-``alpha`` critical value of that maximum under
  "no change". The statistic is distribution-free for i.i.d. readings, so the false-alarm rate
  on noise of any continuous distribution is about ``alpha`` whatever ``n``. The critical value
  comes from Siegmund's approximation for the maximum of a standardised two-sample process
  (James, James & Siegmund 1987, Biometrika 74:71-83), with its discrete-time correction:
  ``P(max |Z_k| > b) ~ b phi(b) * integral_{t0}^{t1} nu(b / sqrt(m t (1-t))) / (t (1-t)) dt``;
* locations are not biased: every change point found by binary segmentation is re-located
  between its neighbours, where the series has a single change and ``argmax |Z_k|`` is
  consistent;
* it is O(n log n): one sort, then each split costs O(m) (the sorted order of a segment is
  split stably in two, so mid-ranks of a child segment never need a new sort); re-location sorts
  segments that together cover the series at most twice.

``min_effect`` optionally drops change points whose two sides differ by less than that fraction
of the overall median (statistically real but practically irrelevant shifts, e.g. on 10^6
readings).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import integrate, optimize, stats

#: defaults of the robust mode
ROBUST_MIN_SIZE = 10
ROBUST_ALPHA = 0.01


def _nu(x: np.ndarray | float) -> np.ndarray | float:
    """Siegmund's overshoot correction nu(x) ~ (2/x)(Phi(x/2)-1/2) / ((x/2)Phi(x/2) + phi(x/2))."""
    x = np.asarray(x, dtype=float)
    h = x / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        val = (2 / x) * (stats.norm.cdf(h) - 0.5) / (h * stats.norm.cdf(h) + stats.norm.pdf(h))
    return np.where(x < 1e-8, 1.0, val)


def _tail_probability(b: float, m: int, min_size: int) -> float:
    """Approximate P(max_{min_size <= k <= m - min_size} |Z_k| > b) under no change."""
    t0 = min_size / m
    t1 = 1 - t0

    def integrand(t: float) -> float:
        return float(_nu(b / math.sqrt(m * t * (1 - t)))) / (t * (1 - t))

    val, _ = integrate.quad(integrand, t0, t1, limit=200, points=[0.5])
    return b * stats.norm.pdf(b) * val


@lru_cache(maxsize=4096)
def critical_value(m: int, min_size: int, alpha: float) -> float:
    """Level-``alpha`` critical value of ``max |Z_k|`` for a segment of ``m`` readings."""
    if m < 2 * min_size:
        return math.inf
    lo = stats.norm.isf(alpha / 2)  # a single test: the bound cannot be lower
    f = lambda b: _tail_probability(b, m, min_size) - alpha  # noqa: E731
    if f(lo) <= 0:
        return lo
    hi = lo + 1.0
    while f(hi) > 0:
        hi += 1.0
    return float(optimize.brentq(f, lo, hi, xtol=1e-6))


def _midranks(sorted_vals: np.ndarray) -> np.ndarray:
    """1-based ranks of an already sorted array, ties sharing their average rank."""
    m = sorted_vals.shape[0]
    ranks = np.arange(1, m + 1, dtype=float)
    if m > 1:
        new = np.empty(m, dtype=bool)
        new[0] = True
        np.not_equal(sorted_vals[1:], sorted_vals[:-1], out=new[1:])
        if not new.all():
            starts = np.flatnonzero(new)
            ends = np.append(starts[1:], m)
            avg = (starts + 1 + ends) / 2.0
            ranks = np.repeat(avg, ends - starts)
    return ranks


def rank_scan(
    x: np.ndarray, order: np.ndarray | None = None, min_size: int = ROBUST_MIN_SIZE
) -> tuple[int, float]:
    """Best split ``k`` (``x[:k]`` | ``x[k:]``) of ``x`` and its ``|Z_k|``.

    ``order`` is ``argsort(x)`` (stable) when the caller already has it. ``k`` is -1 when the
    series is too short or constant.
    """
    m = x.shape[0]
    if m < 2 * min_size:
        return -1, 0.0
    if order is None:
        order = np.argsort(x, kind="stable")
    r_sorted = _midranks(x[order])
    ranks = np.empty(m)
    ranks[order] = r_sorted
    mean = (m + 1) / 2.0
    var = float(np.mean((r_sorted - mean) ** 2))
    if var <= 0:
        return -1, 0.0
    k = np.arange(min_size, m - min_size + 1)
    csum = np.cumsum(ranks - mean)[k - 1]
    z = np.abs(csum) / np.sqrt(var * k * (m - k) / (m - 1))
    i = int(np.argmax(z))
    return int(k[i]), float(z[i])


def _segment_medians(x: np.ndarray, cps: list[int]) -> list[float]:
    bounds = [0, *cps, x.shape[0]]
    return [float(np.median(x[a:b])) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def edm_robust(
    x: np.ndarray,
    min_size: int = ROBUST_MIN_SIZE,
    alpha: float = ROBUST_ALPHA,
    min_effect: float = 0.0,
) -> list[int]:
    """Change points of ``x`` (sorted; a new segment starts at each index).

    ``alpha`` is the false-alarm probability on a series without change, ``min_size`` the
    shortest segment, ``min_effect`` the smallest relative median shift kept (0 keeps all).
    """
    x = np.ascontiguousarray(x, dtype=float)
    n = x.shape[0]
    if min_size < 2:
        raise ValueError("min_size must be at least 2")
    if not 0 < alpha < 1:
        raise ValueError("alpha must be in (0, 1)")
    if n < 2 * min_size:
        return []
    # binary segmentation; each stack entry carries its segment's indices in value order
    found: list[int] = []
    stack = [(0, n, np.argsort(x, kind="stable"))]
    while stack:
        a, b, idx = stack.pop()
        m = b - a
        if m < 2 * min_size:
            continue
        k, z = rank_scan(x[a:b], idx - a, min_size)
        if k < 0 or z <= critical_value(m, min_size, alpha):
            continue
        cut = a + k
        found.append(cut)
        left = idx < cut
        stack.append((a, cut, idx[left]))
        stack.append((cut, b, idx[~left]))
    cps = sorted(found)
    cps = _relocate(x, cps, min_size)
    if min_effect > 0 and cps:
        cps = _drop_small_effects(x, cps, min_effect, min_size)
    return cps


def _relocate(x: np.ndarray, cps: list[int], min_size: int) -> list[int]:
    """Re-locate each change point between its neighbours (one change there: no bias)."""
    out = list(cps)
    for i in range(len(out)):
        a = out[i - 1] if i > 0 else 0
        b = out[i + 1] if i + 1 < len(out) else x.shape[0]
        k, _ = rank_scan(x[a:b], None, min_size)
        if k >= 0:
            out[i] = a + k
    return sorted(set(out))


def _drop_small_effects(x: np.ndarray, cps: list[int], min_effect: float,
                        min_size: int) -> list[int]:
    scale = abs(float(np.median(x))) or 1.0
    cps = list(cps)
    while cps:
        med = _segment_medians(x, cps)
        effects = [abs(med[i + 1] - med[i]) / scale for i in range(len(cps))]
        i = int(np.argmin(effects))
        if effects[i] >= min_effect:
            break
        del cps[i]
        cps = _relocate(x, cps, min_size)
    return cps
