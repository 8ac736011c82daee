"""Robust change points: rank-based binary segmentation with a calibrated threshold.

What it fixes in Pilot's EDM_percent (see :mod:`perfcast.warmup.edm_pilot`):

* a change point needs evidence. Each candidate split of a segment is scored by the
  standardised two-sample van der Waerden (normal-scores rank) statistic
  ``Z_k = S_k / sqrt(k (m-k) / (m-1) * var(a))``, ``S_k`` the centred sum of the first ``k``
  scores ``a_i = Phi^-1(rank_i / (m+1))`` (mid-ranks for ties), and
  ``max_k |Z_k|`` is compared with the level-``alpha`` critical value of that maximum under
  "no change". The statistic is distribution-free for i.i.d. readings, so the false-alarm
  rate on i.i.d. noise of any continuous distribution is about ``alpha`` whatever ``n``. The
  critical value comes from Siegmund's approximation for the maximum of a standardised
  two-sample process (James, James & Siegmund 1987, Biometrika 74:71-83), with its discrete-time
  correction:
  ``P(max |Z_k| > b) ~ b phi(b) * integral_{t0}^{t1} nu(b / sqrt(m t (1-t))) / (t (1-t)) dt``;
* locations are not biased: every change point found by binary segmentation is re-located
  between its neighbours, where the series has a single change and ``argmax |Z_k|`` is
  consistent;
* readings of real systems are autocorrelated (interference comes in bursts): the variance of
  the statistic is scaled by the long-run variance of the scores around their running mean
  (batch means, as in subsession analysis). The factor is never below 1, so the i.i.d.
  false-alarm rate stays at most alpha;
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
from scipy import optimize, special, stats
from scipy.ndimage import uniform_filter1d

from perfcast.warmup.subsession import block_means, subsession_size

#: defaults of the robust mode
ROBUST_MIN_SIZE = 10
ROBUST_ALPHA = 0.01


# Gauss-Legendre nodes for the threshold integral (the integrand is smooth and bounded in u)
_GL_X, _GL_W = np.polynomial.legendre.leggauss(96)


def _nu(x: np.ndarray) -> np.ndarray:
    """Siegmund's overshoot correction nu(x) ~ (2/x)(Phi(x/2)-1/2) / ((x/2)Phi(x/2) + phi(x/2))."""
    h = np.maximum(x, 1e-12) / 2
    cdf = special.ndtr(h)
    pdf = np.exp(-h * h / 2) / math.sqrt(2 * math.pi)
    return (cdf - 0.5) / h / (h * cdf + pdf)


def _tail_probability(b: float, m: int, min_size: int) -> float:
    """Approximate P(max_{min_size <= k <= m - min_size} |Z_k| > b) under no change.

    With ``u = log(t / (1 - t))`` the integral becomes ``int nu(b / sqrt(m t(1-t))) du``.
    """
    t0 = min_size / m
    u1 = math.log((1 - t0) / t0)
    u = u1 * _GL_X  # symmetric interval [-u1, u1]
    tt = np.exp(-np.logaddexp(0.0, -u)) * np.exp(-np.logaddexp(0.0, u))  # t (1 - t)
    val = u1 * float(np.dot(_GL_W, _nu(b / np.sqrt(m * tt))))
    return b * math.exp(-b * b / 2) / math.sqrt(2 * math.pi) * val


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


def normal_scores(x: np.ndarray, order: np.ndarray | None = None) -> np.ndarray:
    """Van der Waerden scores ``Phi^-1(rank / (m + 1))`` of ``x`` (mid-ranks for ties).

    A fixed set of values whatever the distribution of ``x``: tests built on them are
    distribution-free, and unlike plain ranks they keep a large shift large.
    """
    m = x.shape[0]
    if order is None:
        order = np.argsort(x, kind="stable")
    scores = np.empty(m)
    scores[order] = special.ndtri(_midranks(x[order]) / (m + 1))
    return scores


def rank_scan(
    x: np.ndarray, order: np.ndarray | None = None, min_size: int = ROBUST_MIN_SIZE
) -> tuple[int, float]:
    """Best split ``k`` (``x[:k]`` | ``x[k:]``) of ``x`` and its ``|Z_k|``.

    ``Z_k`` is the standardised sum of the first ``k`` normal scores: under "no change" every
    arrangement of the scores is equally likely, so ``Var = k (m - k) / (m - 1) * var(scores)``.
    ``order`` is ``argsort(x)`` (stable) when the caller already has it. ``k`` is -1 when the
    series is too short or constant.
    """
    m = x.shape[0]
    if m < 2 * min_size:
        return -1, 0.0
    scores = normal_scores(x, order)
    centred = scores - scores.mean()
    var = float(np.mean(centred**2))
    if var <= 1e-300:
        return -1, 0.0
    k = np.arange(min_size, m - min_size + 1)
    csum = np.cumsum(centred)[k - 1]
    z = np.abs(csum) / np.sqrt(var * k * (m - k) / (m - 1))
    i = int(np.argmax(z))
    return int(k[i]), float(z[i])


def _segment_medians(x: np.ndarray, cps: list[int]) -> list[float]:
    bounds = [0, *cps, x.shape[0]]
    return [float(np.median(x[a:b])) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _binary_segmentation(x: np.ndarray, min_size: int, alpha: float,
                         inflation: float) -> list[int]:
    n = x.shape[0]
    found: list[int] = []
    scale = math.sqrt(inflation)
    # each stack entry carries its segment's indices in value order (no re-sorting)
    stack = [(0, n, np.argsort(x, kind="stable"))]
    while stack:
        a, b, idx = stack.pop()
        m = b - a
        if m < 2 * min_size:
            continue
        k, z = rank_scan(x[a:b], idx - a, min_size)
        if k < 0 or z <= scale * critical_value(m, min_size, alpha):
            continue
        cut = a + k
        found.append(cut)
        left = idx < cut
        stack.append((a, cut, idx[left]))
        stack.append((cut, b, idx[~left]))
    return sorted(found)


def variance_inflation(scores: np.ndarray, window: int, limit: float = 0.2) -> float:
    """How much positive autocorrelation inflates the variance of sums of ``scores`` (>= 1).

    The scores minus their centred running mean over ``window`` readings (which takes out
    steps, trends and warm-up curves, the things to be detected) are cut into batches of
    ``q`` readings, ``q`` from subsession analysis (lag-1 autocorrelation of the batch means
    within ``limit``); the factor is ``q * var(batch means) / var``, or the AR(1) factor
    ``(1 + r) / (1 - r)`` of their lag-1 autocorrelation ``r`` if larger. Readings of real systems
    are autocorrelated (interference comes in bursts) and a test that assumed independence
    would see changes everywhere. Never below 1, so on i.i.d. readings the false-alarm rate
    stays at most ``alpha``.
    """
    if scores.shape[0] < 3 * window:
        return 1.0
    resid = scores - uniform_filter1d(scores, size=window, mode="nearest")
    var = float(resid.var())
    if var <= 0:
        return 1.0
    q, _ = subsession_size(resid[: 200 * window], limit)
    q = min(q or window // 2, window // 2)
    batch = q * float(block_means(resid, q).var()) / var
    rho = min(0.95, float(np.dot(resid[:-1], resid[1:]) / np.dot(resid, resid)))
    ar1 = (1 + rho) / (1 - rho)
    return max(1.0, batch, ar1)


def edm_robust(
    x: np.ndarray,
    min_size: int = ROBUST_MIN_SIZE,
    alpha: float = ROBUST_ALPHA,
    min_effect: float = 0.0,
    dependence: bool = True,
) -> list[int]:
    """Change points of ``x`` (sorted; a new segment starts at each index).

    Parameters
    ----------
    x : the readings, in order.
    min_size : shortest segment.
    alpha : false-alarm probability on a series without change.
    min_effect : smallest shift of the median, as a fraction of the overall median, kept as a
        change point (0 keeps all).
    dependence : scale the statistic's variance by :func:`variance_inflation` (window
        ``4 * min_size``) for autocorrelated readings.

    Returns
    -------
    list of int
        sorted indices; none for a series shorter than ``2 * min_size``.

    Raises
    ------
    ValueError
        ``min_size < 2`` or ``alpha`` not in (0, 1).

    References
    ----------
    N. A. James, B. James, D. Siegmund, Biometrika 74:71-83, 1987 (the approximation of the
    maximum of a standardised two-sample process behind :func:`critical_value`).
    D. S. Matteson, N. A. James, "A Nonparametric Approach for Multiple Change Point Analysis
    of Multivariate Data", Journal of the American Statistical Association 109(505):334-345,
    2014, doi:10.1080/01621459.2013.849605 (the E-divisive family whose binary segmentation
    this follows, with a rank statistic and a calibrated threshold instead of permutations).
    """
    x = np.ascontiguousarray(x, dtype=float)
    n = x.shape[0]
    if min_size < 2:
        raise ValueError("min_size must be at least 2")
    if not 0 < alpha < 1:
        raise ValueError("alpha must be in (0, 1)")
    if n < 2 * min_size:
        return []
    inflation = variance_inflation(normal_scores(x), 4 * min_size) if dependence else 1.0
    cps = _binary_segmentation(x, min_size, alpha, inflation)
    cps = _relocate(x, cps, min_size)
    if min_effect > 0 and cps:
        cps = _drop_small_effects(x, cps, min_effect)
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


def _drop_small_effects(x: np.ndarray, cps: list[int], min_effect: float) -> list[int]:
    """Drop, smallest first, change points whose segment medians differ by less than
    ``min_effect`` times the overall median."""
    scale = abs(float(np.median(x))) or 1.0
    cps = list(cps)
    while cps:
        med = _segment_medians(x, cps)
        effects = [abs(med[i + 1] - med[i]) / scale for i in range(len(cps))]
        i = int(np.argmin(effects))
        if effects[i] >= min_effect:
            break
        del cps[i]  # (no re-location: the merged segment still holds the small change)
    return cps
