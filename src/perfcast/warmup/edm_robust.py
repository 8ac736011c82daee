"""Robust change points: rank-based binary segmentation with a calibrated threshold.

What it fixes in Pilot's EDM_percent (see :mod:`perfcast.warmup.edm_pilot`):

* a cycle in the readings (a periodic background task, a buffer that fills and flushes) is
  taken out before the search when it is the same in both halves of the series
  (:func:`perfcast.warmup.season.deseasonalised`), so that a change smaller than its swing is
  judged against the noise, not read as dependence that raises the threshold;
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
* changes of spread are seen as well as changes of level: a second statistic scans rank-based
  spread scores (:func:`spread_scores`), each statistic at its share of ``alpha``
  (Bonferroni); a change of both at one place is one split, located with both, and splits that
  are not significant between their final neighbours are pruned (:func:`best_split`);
* readings of real systems are autocorrelated (interference comes in bursts): each
  statistic's threshold is scaled by the long-run variance of its scores around the candidate
  split, each side's trend taken out (:func:`dependence_factor`: neither the change under test
  nor a trend passes for dependence). The factor is never below 1, so the i.i.d. false-alarm
  rate stays at most alpha;
* a series that wanders like a random walk or drifts (:func:`integrated`: Lo & MacKinlay's
  variance ratio over 20 readings) has no level to return to, and a level test calibrated for
  stationary readings splits its wander: its increments are searched instead, and each change
  of their level (a new drift) is a change point of the series;
* it is O(n log n): one sort, then each split costs O(m) (the sorted order of a segment is
  split stably in two, so mid-ranks of a child segment never need a new sort); pruning and
  re-location test each change point between its neighbours, taking a long segment's order
  from the global sort and sorting only short ones.

``min_effect`` optionally drops change points whose two sides differ in median and in spread by
less than that fraction of the overall median (statistically real but practically irrelevant
shifts, e.g. on 10^6 readings).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import special

from perfcast.warmup.season import deseasonalised
from perfcast.warmup.subsession import block_means, subsession_size

#: defaults of the robust mode
ROBUST_MIN_SIZE = 10
ROBUST_ALPHA = 0.01
#: the AR(1) dependence factor is capped at (1 + RHO_MAX) / (1 - RHO_MAX) = 79
RHO_MAX = 0.975
#: subsession analysis of the residual scores looks at this many readings at most (its cost is
#: O(prefix * q))
BATCH_PREFIX = 20_000
#: the readings (or scores) one dependence estimate looks at: 10^5 are plenty for one number
ESTIMATE_HEAD = BATCH_PREFIX * 5
#: the dependence factor around a split is capped at this multiple of the one seen by
#: differences (which steps do not inflate)
CAP = 3.0
#: the dependence factor is also estimated around four pieces (:func:`dependence_factor`) in
#: segments of at least this many readings: in shorter ones the pieces' means soak up the slow
#: wander of strongly dependent readings (AR(1), phi 0.9, 60 readings: 4.2 % of series
#: without change got a change point with four pieces from 40 readings on, 2.0 % without)
FOUR_PIECES_MIN = 100
#: a series is taken for integrated (a random walk or a drift) when its variance ratio over
#: ``VR_LAG`` readings (at most a tenth of the series) is at least ``VR_MIN``
#: (:func:`variance_ratio`): a random walk gives 1, a drift more, an AR(1) with phi 0.9 0.44
#: and with phi 0.95 0.64 at lag 20
VR_LAG = 20
VR_MIN = 0.8
#: share of the squared differences the variance ratio keeps (the smallest)
VR_KEEP = 0.75
#: the share of alpha spent on changes of level; the rest goes to changes of spread, whose
#: scores' dependence is harder to estimate (Bonferroni: together at most alpha)
LEVEL_SHARE = 0.75


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
    """Level-``alpha`` critical value of ``max |Z_k|`` for a segment of ``m`` readings.

    Solves ``P(max_k |Z_k| > b) = alpha`` by bisection with Siegmund's approximation of the
    tail of a standardised two-sample process (James, James & Siegmund 1987, with its
    discrete-time overshoot correction; see the module docstring); never below the
    single-test value ``Phi^-1(1 - alpha / 2)``.

    Parameters
    ----------
    m : int
        readings in the segment.
    min_size : int
        shortest side of a split (``min_size <= k <= m - min_size``).
    alpha : float
        false-alarm probability of the scan under "no change".

    Returns
    -------
    float
        the critical value ``b``; infinite when ``m < 2 * min_size`` (no split possible).

    Examples
    --------
    >>> round(critical_value(200, 10, 0.01), 3)  # more candidate splits: a higher bar
    3.551
    >>> round(critical_value(2000, 10, 0.01), 3)
    3.772
    >>> critical_value(15, 10, 0.01)
    inf
    """
    if m < 2 * min_size:
        return math.inf
    lo = float(-special.ndtri(alpha / 2))  # a single test: the bound cannot be lower
    f = lambda b: _tail_probability(b, m, min_size) - alpha  # noqa: E731
    if f(lo) <= 0:
        return lo
    hi = lo + 1.0
    while f(hi) > 0:
        hi += 1.0
    # bisection (f decreases in b): scipy.optimize would cost more to import than this runs
    while hi - lo > 1e-6:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
    return (lo + hi) / 2


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


def ranks_of(x: np.ndarray, order: np.ndarray | None = None) -> np.ndarray:
    """Mid-ranks (1-based) of ``x`` in its own order; ``order`` is ``argsort(x)`` if known.

    Parameters
    ----------
    x : numpy.ndarray
        the readings.
    order : numpy.ndarray or None, default=None
        ``argsort(x, kind="stable")`` when the caller has it (saves the sort).

    Returns
    -------
    numpy.ndarray
        the rank of each reading, ties sharing their average rank.

    Examples
    --------
    >>> import numpy as np
    >>> ranks_of(np.array([3.0, 1.0, 2.0, 2.0]))
    array([4. , 1. , 2.5, 2.5])
    """
    if order is None:
        order = np.argsort(x, kind="stable")
    ranks = np.empty(x.shape[0])
    ranks[order] = _midranks(x[order])
    return ranks


def normal_scores(x: np.ndarray, order: np.ndarray | None = None,
                  ranks: np.ndarray | None = None) -> np.ndarray:
    """Van der Waerden scores ``Phi^-1(rank / (m + 1))`` of ``x`` (mid-ranks for ties).

    A fixed set of values whatever the distribution of ``x``: tests built on them are
    distribution-free, and unlike plain ranks they keep a large shift large.

    Parameters
    ----------
    x : numpy.ndarray
        the readings.
    order : numpy.ndarray or None, default=None
        ``argsort(x, kind="stable")`` when known.
    ranks : numpy.ndarray or None, default=None
        :func:`ranks_of` ``x`` when known (then ``order`` is not used).

    Returns
    -------
    numpy.ndarray
        one score per reading, in the readings' order.

    Examples
    --------
    >>> import numpy as np
    >>> normal_scores(np.array([3.0, 1.0, 2.0, 2.0])).round(3)  # Phi^-1(rank / 5)
    array([ 0.842, -0.842,  0.   ,  0.   ])
    """
    ranks = ranks_of(x, order) if ranks is None else ranks
    return special.ndtri(ranks / (x.shape[0] + 1))


def _inverse_sd(m: int, min_size: int) -> np.ndarray:
    """``1 / sqrt(k (m - k) / (m - 1))`` for ``k = min_size .. m - min_size``."""
    k = np.arange(min_size, m - min_size + 1, dtype=float)
    return 1.0 / np.sqrt(k * (m - k) / (m - 1))


def _profile(scores: np.ndarray, min_size: int,
             inverse_sd: np.ndarray | None = None) -> np.ndarray | None:
    """``|Z_k|`` for ``k = min_size .. m - min_size``: the permutation-standardised partial sums
    of the centred scores (None for constant scores); ``inverse_sd`` is
    :func:`_inverse_sd` when the caller has it."""
    m = scores.shape[0]
    centred = scores - scores.mean()
    var = float(np.dot(centred, centred)) / m
    if var <= 1e-300:
        return None
    if inverse_sd is None:
        inverse_sd = _inverse_sd(m, min_size)
    z = np.cumsum(centred)[min_size - 1: m - min_size]
    np.abs(z, out=z)
    z *= inverse_sd
    z /= math.sqrt(var)
    return z


def _scan(scores: np.ndarray, min_size: int) -> tuple[int, float]:
    """Best split ``k`` of a score series and its ``|Z_k|`` (-1, 0 for constant scores)."""
    z = _profile(scores, min_size)
    if z is None:
        return -1, 0.0
    i = int(np.argmax(z))
    return min_size + i, float(z[i])


def rank_scan(
    x: np.ndarray, order: np.ndarray | None = None, min_size: int = ROBUST_MIN_SIZE
) -> tuple[int, float]:
    """Best split ``k`` (``x[:k]`` | ``x[k:]``) of ``x`` for a change of level, and its ``|Z_k|``.

    ``Z_k`` is the standardised sum of the first ``k`` normal scores: under "no change" every
    arrangement of the scores is equally likely, so ``Var = k (m - k) / (m - 1) * var(scores)``.
    ``order`` is ``argsort(x)`` (stable) when the caller already has it. ``k`` is -1 when the
    series is too short or constant.

    Parameters
    ----------
    x : numpy.ndarray
        the readings, in order.
    order : numpy.ndarray or None, default=None
        ``argsort(x, kind="stable")`` when known.
    min_size : int, default=ROBUST_MIN_SIZE
        shortest side of a split.

    Returns
    -------
    tuple of (int, float)
        the split and its ``|Z_k|`` (compare with :func:`critical_value`).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> k, z = rank_scan(np.r_[rng.normal(size=100), rng.normal(size=100) + 2])
    >>> k, z > critical_value(200, 10, 0.01)
    (100, True)
    """
    if x.shape[0] < 2 * min_size:
        return -1, 0.0
    return _scan(normal_scores(x, order), min_size)


def spread_scores(x: np.ndarray, order: np.ndarray | None = None,
                  ranks: np.ndarray | None = None) -> np.ndarray:
    """Normal scores of the readings' distance from the middle, in ranks: the rank ``r_i`` of
    each reading gives ``d_i = |2 r_i - (m + 1)|`` (0 for the median, ``m - 1`` for the extremes,
    as in Ansari & Bradley's dispersion test), and the scores are ``Phi^-1(rank(d_i) / (m + 1))``
    (mid-ranks for the ties ``d`` always has). A change of spread at the same level shifts
    their mean. A function of the ranks only, so as distribution-free as the level scores, and
    symmetric (squared scores, Klotz's, are skewed: their partial sums over a few readings
    cross a normal threshold far more often than alpha says). O(m): ``d`` is an integer below
    ``m``, counted, not sorted.

    Parameters
    ----------
    x : numpy.ndarray
        the readings.
    order : numpy.ndarray or None, default=None
        ``argsort(x, kind="stable")`` when known.
    ranks : numpy.ndarray or None, default=None
        :func:`ranks_of` ``x`` when known.

    Returns
    -------
    numpy.ndarray
        one score per reading, in the readings' order: high far from the middle.

    References
    ----------
    A. R. Ansari, R. A. Bradley, "Rank-sum tests for dispersions", Annals of Mathematical
    Statistics 31(4):1174-1189, 1960, doi:10.1214/aoms/1177705688.

    Examples
    --------
    >>> import numpy as np
    >>> spread_scores(np.array([1.0, 2.0, 3.0, 4.0, 5.0])).round(3)  # symmetric about the middle
    array([ 0.674, -0.21 , -0.967, -0.21 ,  0.674])
    """
    m = x.shape[0]
    ranks = ranks_of(x, order) if ranks is None else ranks
    d = np.abs(2 * ranks - (m + 1)).astype(np.int64)  # 2 r is an integer even for mid-ranks
    counts = np.bincount(d)
    below = np.cumsum(counts) - counts
    table = special.ndtri((below + (counts + 1) / 2) / (m + 1))  # one score per distance
    return table[d]


def _trimmed_square_difference(x: np.ndarray, lag: int, keep: float) -> float:
    """Mean of the squared lag-``lag`` differences of ``x`` at or below their ``keep``
    quantile."""
    d = x[lag:] - x[:-lag]
    d2 = d * d
    j = int(keep * (d2.shape[0] - 1))
    return float(d2[d2 <= np.partition(d2, j)[j]].mean())


def _half_mean_square_difference(scores: np.ndarray, lag: int) -> float:
    """``V_h = gamma(0) - gamma(h)`` estimated as half the mean of the squared lag-``h``
    differences below their 90th percentile, rescaled for normal differences (the mean of a
    chi-square(1) below its 90th percentile is 0.6230 of the untrimmed one). A step between
    segments spoils only ``h`` differences, which the trimming drops: the changes to be
    detected are not taken for dependence."""
    head = scores[:ESTIMATE_HEAD]
    return _trimmed_square_difference(head, lag, 0.9) / 0.62302 / 2


def _difference_rho(scores: np.ndarray) -> float:
    """AR(1) coefficient from differences only: ``V_2 / V_1 - 1`` with
    ``V_h = gamma(0) - gamma(h)`` (:func:`_half_mean_square_difference`), since
    ``V_2 / V_1 = (1 - rho^2) / (1 - rho) = 1 + rho``; steps between segments do not count.
    A random walk gives 1 (its ``V_h`` grows as ``h``: the variance ratio of Lo & MacKinlay,
    ``V_2 / (2 V_1)``, is 1); 0 for constant scores."""
    v1, v2 = (_half_mean_square_difference(scores, h) for h in (1, 2))
    return 0.0 if v1 <= 1e-300 else v2 / v1 - 1


def _difference_factor(scores: np.ndarray) -> float:
    """AR(1) long-run variance factor ``(1 + rho) / (1 - rho)`` of :func:`_difference_rho`
    (``rho`` at most ``RHO_MAX``)."""
    rho = min(RHO_MAX, _difference_rho(scores))
    return (1 + rho) / (1 - rho)


def variance_ratio(x: np.ndarray, q: int) -> float:
    """Lo & MacKinlay's variance ratio ``V_q / (q V_1)`` of the readings' lag-``q`` and lag-1
    differences: 1 for a random walk at every lag, more for a drift (which adds ``(q mu)^2``
    to ``V_q``), ``(1 - phi^q) / (q (1 - phi))`` for a stationary AR(1), ``1/q`` for i.i.d.
    readings; 0 for constant readings. Each mean square leaves out the differences above its
    ``VR_KEEP`` quantile (the same share of a normal difference's distribution at both lags,
    so the ratio needs no correction): a step spoils ``q`` lag-``q`` differences, and several
    steps are not taken for a wander.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> e = rng.normal(size=2000)
    >>> round(variance_ratio(np.cumsum(e), 20), 1), round(variance_ratio(e, 20), 2)
    (1.0, 0.05)
    """
    head = x[:ESTIMATE_HEAD]
    return _ratio(head, q, _trimmed_square_difference(head, 1, VR_KEEP))


def _ratio(head: np.ndarray, q: int, v1: float) -> float:
    """:func:`variance_ratio` given the lag-1 mean square ``v1``."""
    return 0.0 if v1 <= 1e-300 else _trimmed_square_difference(head, q, VR_KEEP) / (q * v1)


def integrated(x: np.ndarray) -> bool:
    """Does a series wander like a random walk, or drift (an integrated series: its level has
    no mean to return to)? True when its :func:`variance_ratio` over ``VR_LAG`` readings (at
    most a tenth of the series) reaches ``VR_MIN`` and the series never comes back: at no lag
    from 2 up to that ratio's are its readings closer to the earlier ones than at lag 1
    (trimmed mean squares ``V_h >= V_1``, as in :func:`variance_ratio`). A change of level can
    then no longer be told from the wander, and what changes is the drift: :func:`edm_robust`
    segments the increments instead of the readings.

    The ratio over many readings, not over two: a stationary AR(1) with ``phi`` 0.95 gives
    0.975 at lag 2, within the estimate's noise of a random walk's 1 on a thousand readings,
    and 0.64 at lag 20, where a random walk still gives 1 (the estimate's standard deviation,
    ``sqrt(2 (2q - 1)(q - 1) / (3 q n))``, is 0.16 on 1,000 readings). The return test tells
    a cycle from a wander: a walk's ``V_h`` grows as ``h`` (``V_2`` is twice ``V_1``) and a
    drift's as ``h^2``, but a periodic series with little noise comes back to its level after
    each period ``P``, where ``V_P`` holds the noise alone, while its trimmed ``V_1`` holds the
    steady climb within a period (the trimming drops the falls). A sawtooth with period 12
    has a variance ratio above 1 at lag 20, and was taken for a drift.

    References
    ----------
    A. W. Lo, A. C. MacKinlay, "Stock market prices do not follow random walks: evidence from a
    simple specification test", Review of Financial Studies 1(1):41-66, 1988,
    doi:10.1093/rfs/1.1.41 (the variance ratio and its standard deviation).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> e = rng.normal(size=1000)
    >>> integrated(np.cumsum(e + 0.5)), integrated(np.cumsum(e)), integrated(e)
    (True, True, False)
    >>> integrated(0.01 * (np.arange(600) % 12) + 0.002 * e[:600])  # a sawtooth
    False
    """
    n = x.shape[0]
    if n < 16:
        return False
    q = max(2, min(VR_LAG, n // 10))
    head = x[:ESTIMATE_HEAD]
    v1 = _trimmed_square_difference(head, 1, VR_KEEP)
    if _ratio(head, q, v1) < VR_MIN:
        return False
    return all(_trimmed_square_difference(head, h, VR_KEEP) >= v1 for h in range(2, q))


def _residuals(scores: np.ndarray, cuts: list[int]) -> np.ndarray:
    """``scores`` minus the least-squares line of each piece between ``cuts`` (0 < cut < m,
    sorted): a trend within a piece is a level that moves, not dependence, so it is taken out
    before the autocorrelations are estimated (two coefficients per piece, see
    :func:`_long_run_factor`)."""
    resid = np.empty(scores.shape[0])
    bounds = [0, *cuts, scores.shape[0]]
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        piece = scores[a:b] - scores[a:b].mean()
        t = np.arange(b - a) - (b - a - 1) / 2
        tt = float(np.dot(t, t))
        resid[a:b] = piece - (float(np.dot(t, piece)) / tt) * t if tt > 0 else piece
    return resid


def _side_cuts(scores: np.ndarray, k: int, min_size: int) -> list[int]:
    """``k`` and, in each side long enough, its own best split for a change of level (the
    arg-max of its standardised partial sums, no threshold)."""
    cuts = [k]
    for a, b in ((0, k), (k, scores.shape[0])):
        if b - a >= 2 * min_size:
            j, _ = _scan(scores[a:b], min_size)
            if j > 0:
                cuts.append(a + j)
    return sorted(cuts)


def _long_run_factor(resid: np.ndarray, pieces: int, limit: float) -> float:
    """Long-run variance over variance of residuals around ``pieces`` piece lines (see
    :func:`dependence_factor`); each ``r_h`` corrected for the estimator's bias with
    ``p = 2 pieces`` estimated coefficients (``(m r + p) / (m - 3 p)``)."""
    m = resid.shape[0]
    den = float(np.dot(resid, resid))
    if den <= 1e-300:
        return 1.0
    p = 2.0 * pieces
    r1, r2 = ((m * float(np.dot(resid[:-h], resid[h:])) / den + p) / (m - 3.0 * p)
              for h in (1, 2))
    r1 = min(RHO_MAX, r1)
    factor = (1 + r1) / (1 - r1)
    if r1 > 0 and r2 > 0:
        factor = max(factor, 1 + 2 * r1 / (1 - min(RHO_MAX, r2 / r1)))
    if m >= 200:
        head = resid[:BATCH_PREFIX]
        q, _ = subsession_size(head, limit, q_max=max(1, head.shape[0] // 60))
        if q is not None and q > 1:
            q = min(3 * q, m // 20)
            factor = max(factor, q * float(block_means(resid, q).var()) / (den / m))
    return factor


def dependence_factor(scores: np.ndarray, k: int, limit: float = 0.2,
                      min_size: int = ROBUST_MIN_SIZE) -> float:
    """Long-run variance of ``scores`` relative to their variance (>= 1), estimated around the
    candidate split ``k``, so that the change being tested is not taken for dependence.

    For residuals (scores minus each piece's least-squares line: a trend is not taken for
    dependence either, which on trending series made the factor swallow every change) the
    largest of three estimates: the AR(1) factor
    ``(1 + r1) / (1 - r1)`` of their lag-1 autocorrelation ``r1``; the ARMA(1,1) factor
    ``1 + 2 r1 / (1 - r2/r1)``, whose autocorrelations decay at the rate ``r2 / r1`` seen from
    lag 1 to 2 (slower than AR(1)'s for scores that are non-linear functions of the readings);
    and, on 200 or more readings, the batch-means factor ``q var(batch means) / var`` with
    ``q`` three times the subsession size (lag-1 autocorrelation of batch means within
    ``limit``), which also sees longer-range dependence. Each ``r_h`` is first corrected for
    the bias of the estimator (``E r ~ rho - (1 + 3 rho) / m`` with one estimated mean, Kendall
    1954; ``p`` times that with ``p`` estimated coefficients, two per piece).

    A second change inside the segment would pass for strong dependence and hide both (two
    changes in 200 readings, +1.5 sd then -1 sd: found together in 44 % of series). So the
    factor is the smaller of the estimates around two pieces (``k``) and, from
    ``FOUR_PIECES_MIN`` readings on, around four (``k`` and each side's own best split,
    :func:`_side_cuts`), and at most ``CAP`` times
    :func:`_difference_factor`, which differences make blind to steps. Never below 1, so on
    i.i.d. readings the false-alarm rate stays at most ``alpha``.

    Parameters
    ----------
    scores : numpy.ndarray
        the scores of a segment (normal or spread scores), in order.
    k : int
        the candidate split, ``scores[:k] | scores[k:]``.
    limit : float, default=0.2
        the batch means' lag-1 autocorrelation limit of the batch-means estimate.
    min_size : int, default=ROBUST_MIN_SIZE
        shortest piece for a side's own split.

    Returns
    -------
    float
        the factor the variance of the partial sums is multiplied by (>= 1).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> e = rng.normal(size=2000)
    >>> ar = np.empty(2000); ar[0] = e[0]
    >>> for i in range(1, 2000): ar[i] = 0.8 * ar[i - 1] + e[i]
    >>> 5 < dependence_factor(ar, 1000) < 13  # AR(1), phi 0.8: (1 + 0.8) / (1 - 0.8) = 9
    True
    >>> two = e[:600].copy(); two[200:] += 1.5; two[400:] -= 1.0  # i.i.d., two changes
    >>> round(dependence_factor(two, 200), 2)  # the second is not taken for dependence (9.3)
    1.0
    """
    m = scores.shape[0]
    if m < 16:
        return 1.0
    factor = _long_run_factor(_residuals(scores, [k]), 2, limit)
    if factor > 1.0 and m >= FOUR_PIECES_MIN:
        factor = min(factor, _long_run_factor(
            _residuals(scores, _side_cuts(scores, k, min_size)), 4, limit))
    return max(1.0, min(factor, CAP * _difference_factor(scores)))


@dataclass(frozen=True)
class Split:
    """The best split of a segment: where, by which statistic, and by how much it exceeds the
    level-``alpha`` threshold (``ratio > 1``: a change point)."""

    k: int
    ratio: float
    kind: str  # "level", "spread" or "level+spread": the statistics behind it


def best_split(x: np.ndarray, order: np.ndarray | None, min_size: int, alpha: float,
               dependence: bool = True) -> Split | None:
    """Test a segment for one change of level and/or spread; None when it is too short or
    constant.

    The level statistic scans the normal scores (:func:`normal_scores`), the spread statistic
    the spread scores (:func:`spread_scores`); each ``max |Z_k|`` is compared with its critical
    value (level ``LEVEL_SHARE * alpha`` and ``(1 - LEVEL_SHARE) * alpha``: by Bonferroni the
    two together keep the false-alarm rate at most ``alpha``) scaled by the square root of its
    :func:`dependence_factor`. ``ratio`` is the larger of the two maxima over their thresholds.
    The split is where the sum of ``(Z_k / threshold)^2`` over the significant statistics
    peaks, so a change of level and spread at one place is located with both and reported
    once.

    Parameters
    ----------
    x : numpy.ndarray
        the segment's readings, in order.
    order : numpy.ndarray or None
        ``argsort(x, kind="stable")`` when known, else None.
    min_size : int
        shortest side of a split.
    alpha : float
        false-alarm probability of the two statistics together.
    dependence : bool, default=True
        scale each threshold by the square root of its :func:`dependence_factor`.

    Returns
    -------
    Split or None
        where, how strongly (``ratio > 1``: significant) and by which statistics.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> best_split(np.r_[rng.normal(size=100), rng.normal(size=100) + 2], None, 10, 0.01)
    Split(k=100, ratio=1.48..., kind='level')
    >>> best_split(np.ones(5), None, 10, 0.01) is None  # too short
    True
    """
    m = x.shape[0]
    if m < 2 * min_size:
        return None
    ranks = ranks_of(x, order)
    inverse_sd = _inverse_sd(m, min_size)
    parts = []
    for kind, scores, share in (("level", normal_scores(x, ranks=ranks), LEVEL_SHARE),
                                ("spread", spread_scores(x, ranks=ranks), 1 - LEVEL_SHARE)):
        z = _profile(scores, min_size, inverse_sd)
        if z is None:
            continue
        i = int(np.argmax(z))
        factor = dependence_factor(scores, min_size + i, min_size=min_size) if dependence else 1.0
        threshold = critical_value(m, min_size, share * alpha) * math.sqrt(factor)
        parts.append((float(z[i]) / threshold, kind, z / threshold))
    if not parts:
        return None
    ratio = max(p[0] for p in parts)
    significant = [p for p in parts if p[0] > 1.0] or [max(parts)]
    combined = sum(p[2] ** 2 for p in significant)
    return Split(min_size + int(np.argmax(combined)), ratio,
                 "+".join(p[1] for p in significant))


def _binary_segmentation(x: np.ndarray, min_size: int, alpha: float,
                         dependence: bool, order: np.ndarray) -> list[int]:
    n = x.shape[0]
    found: list[int] = []
    # each stack entry carries its segment's indices in value order (no re-sorting)
    stack = [(0, n, order)]
    while stack:
        a, b, idx = stack.pop()
        split = best_split(x[a:b], idx - a, min_size, alpha, dependence)
        if split is None or split.ratio <= 1.0:
            continue
        cut = a + split.k
        found.append(cut)
        left = idx < cut
        stack.append((a, cut, idx[left]))
        stack.append((cut, b, idx[~left]))
    return sorted(found)


def edm_robust(
    x: np.ndarray,
    min_size: int = ROBUST_MIN_SIZE,
    alpha: float = ROBUST_ALPHA,
    min_effect: float = 0.0,
    dependence: bool = True,
    cycles: bool = True,
) -> list[int]:
    """Change points of ``x`` (sorted; a new segment starts at each index).

    Parameters
    ----------
    x : numpy.ndarray
        the readings, in order.
    min_size : int, default=ROBUST_MIN_SIZE
        shortest segment.
    alpha : float, default=ROBUST_ALPHA
        false-alarm probability on a series without change.
    min_effect : float, default=0.0
        smallest change of the median or the spread, as a fraction of the overall median,
        kept as a change point (0 keeps all; :func:`change_effects`). ``perfcast edm`` and the
        workflow pass their schema's value (0.05).
    dependence : bool, default=True
        scale each statistic's threshold by the square root of its
        :func:`dependence_factor`, for autocorrelated readings.
    cycles : bool, default=True
        take a cycle of the readings out before the search
        (:func:`perfcast.warmup.season.deseasonalised`: when the readings repeat, the same way
        in both halves); the changes are then judged against the noise, not the cycle's swing.

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

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> x = rng.normal(size=200)
    >>> x[67:] += 1.5
    >>> x[134:] -= 1.0
    >>> edm_robust(x)  # both changes, each at its first reading after it
    [67, 134]
    >>> edm_robust(rng.normal(size=200))  # no change: none (a false alarm in 1 % of series)
    []
    """
    x = np.ascontiguousarray(x, dtype=float)
    n = x.shape[0]
    if min_size < 2:
        raise ValueError("min_size must be at least 2")
    if not 0 < alpha < 1:
        raise ValueError("alpha must be in (0, 1)")
    if n < 2 * min_size:
        return []
    if cycles:
        x = np.ascontiguousarray(deseasonalised(x)[0])
    if dependence and n > 2 * min_size and integrated(x):
        cps = _drift_changes(_changes(np.diff(x), min_size, alpha, True), n, min_size)
    else:
        cps = _changes(x, min_size, alpha, dependence, np.argsort(x, kind="stable"))
    if min_effect > 0 and cps:
        cps = _drop_small_effects(x, cps, min_effect)
    return cps


def _changes(x: np.ndarray, min_size: int, alpha: float, dependence: bool,
             order: np.ndarray | None = None) -> list[int]:
    """Binary segmentation, pruning and re-location of ``x`` (steps 4-6 of the module's
    method): the change points before the practical-size filter."""
    order = np.argsort(x, kind="stable") if order is None else order
    cps = _binary_segmentation(x, min_size, alpha, dependence, order)
    cps = _prune(x, cps, min_size, alpha, dependence, order)
    return _relocate(x, cps, min_size, order)


def _drift_changes(increment_cps: list[int], n: int, min_size: int) -> list[int]:
    """The changes of an integrated series' drift: a change point ``c`` of the increments
    ``x[1:] - x[:-1]`` starts a new drift at reading ``c + 1``; kept where it lies at least
    ``min_size`` readings from both ends."""
    return [c + 1 for c in increment_cps if min_size <= c + 1 <= n - min_size]


def _segment_order(order: np.ndarray, a: int, b: int) -> np.ndarray | None:
    """``argsort(x[a:b])`` (stable) from ``order = argsort(x)``: the indices in ``[a, b)`` kept in
    value order, O(n) instead of O(m log m); worth it for segments longer than ``n / log n``."""
    if (b - a) * math.log2(max(b - a, 2)) < order.shape[0]:
        return None  # sorting the segment is cheaper
    return order[(order >= a) & (order < b)] - a


def _prune(x: np.ndarray, cps: list[int], min_size: int, alpha: float,
           dependence: bool, order: np.ndarray) -> list[int]:
    """Drop, weakest first, change points that are not significant between their neighbours.

    Binary segmentation may place the first split of a change a few readings off (when level
    and spread change together, the two statistics pull apart); the short piece it leaves is
    then split off again, and one change would be reported twice. Tested between its final
    neighbours, the second split has nothing left to detect. Each removal re-tests only the
    two change points beside it.
    """
    cps = list(cps)
    n = x.shape[0]

    def ratio(i: int) -> float:
        a = cps[i - 1] if i > 0 else 0
        b = cps[i + 1] if i + 1 < len(cps) else n
        split = best_split(x[a:b], _segment_order(order, a, b), min_size, alpha, dependence)
        return 0.0 if split is None else split.ratio

    ratios = [ratio(i) for i in range(len(cps))]
    while cps:
        i = int(np.argmin(ratios))
        if ratios[i] > 1.0:
            break
        del cps[i], ratios[i]
        for j in (i - 1, i):
            if 0 <= j < len(cps):
                ratios[j] = ratio(j)
    return cps


def _relocate(x: np.ndarray, cps: list[int], min_size: int, order: np.ndarray) -> list[int]:
    """Re-locate each change point between its neighbours (one change there: no bias), by the
    statistic (level or spread) that stands out most there."""
    out = list(cps)
    for i in range(len(out)):
        a = out[i - 1] if i > 0 else 0
        b = out[i + 1] if i + 1 < len(out) else x.shape[0]
        split = best_split(x[a:b], _segment_order(order, a, b), min_size, ROBUST_ALPHA,
                           dependence=False)
        if split is not None:
            # (a change of spread alone leaves the medians, and the L1 cost, flat)
            out[i] = a + (_refine(x[a:b], split.k, min_size) if "level" in split.kind
                          else split.k)
    return sorted(set(out))


def _refine(x: np.ndarray, k: int, min_size: int) -> int:
    """The split within ``min_size`` readings of ``k`` that minimises the two sides' summed
    absolute deviations from their own medians (a robust least-squares fit of one step).

    A rank statistic's peak can miss a clean step by a reading or two: once the two sides are
    separated, moving a high reading to the low side lowers the partial sum of the scores by
    less than the standardisation grows, so the arg-max drifts. The L1 cost has its minimum
    exactly at the step, and near a noisy one it is as consistent as the rank statistic.
    """
    m = x.shape[0]
    lo, hi = max(min_size, k - min_size), min(m - min_size, k + min_size)
    best, cost = k, math.inf
    for j in range(lo, hi + 1):
        left, right = x[:j], x[j:]
        c = float(np.abs(left - np.median(left)).sum() + np.abs(right - np.median(right)).sum())
        if c < cost:
            best, cost = j, c
    return best


def _robust_spread(x: np.ndarray) -> float:
    """Normal-consistent median absolute deviation (1.4826 MAD): the standard deviation of
    normal readings, robust to outliers."""
    return 1.4826 * float(np.median(np.abs(x - np.median(x))))


def change_effects(x: np.ndarray, cps: list[int]) -> list[float]:
    """Size of each change point: the larger change of the median or of the robust spread
    (1.4826 MAD) between its two neighbouring segments, as a fraction of the overall median.

    Parameters
    ----------
    x : numpy.ndarray
        the readings, in order.
    cps : list of int
        sorted change points of ``x`` (a new segment starts at each).

    Returns
    -------
    list of float
        one effect per change point.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.r_[np.full(50, 10.0), np.full(50, 11.0)]
    >>> change_effects(x, [50])  # the median moves by 1, the overall median is 10.5
    [0.09523809523809523]
    """
    scale = abs(float(np.median(x))) or 1.0
    bounds = [0, *cps, x.shape[0]]
    seg = [x[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    med = [float(np.median(s)) for s in seg]
    spr = [_robust_spread(s) for s in seg]
    return [max(abs(med[i + 1] - med[i]), abs(spr[i + 1] - spr[i])) / scale
            for i in range(len(cps))]


def _drop_small_effects(x: np.ndarray, cps: list[int], min_effect: float) -> list[int]:
    """Drop, smallest first, change points whose neighbouring segments differ in median and in
    spread by less than ``min_effect`` times the overall median."""
    cps = list(cps)
    while cps:
        effects = change_effects(x, cps)
        i = int(np.argmin(effects))
        if effects[i] >= min_effect:
            break
        del cps[i]  # (no re-location: the merged segment still holds the small change)
    return cps
