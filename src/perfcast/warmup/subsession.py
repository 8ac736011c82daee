"""Subsession analysis: merge adjacent correlated readings into fewer, less correlated ones.

Readings of a performance test are rarely independent (caches, queues, background work), and a
confidence interval computed as if they were is too narrow. Pilot's remedy (after Ferrari 1978):
cut the series into ``h = n // q`` blocks of ``q`` adjacent readings and use the block means as
the samples; ``q`` is the first of ``1 .. n // 3`` whose block means have a lag-1
autocorrelation within ``+-limit`` (at least 3 blocks remain). Pilot's presets for the limit:
quick 0.8, normal 0.2, strict 0.1.

References
----------
Y. Li, Y. Gupta, E. L. Miller, D. D. E. Long, "Pilot: A Framework that Understands How to Do
Performance Benchmarks the Right Way", Proc. 24th IEEE MASCOTS, 2016,
doi:10.1109/MASCOTS.2016.31.

D. Ferrari, 1978: subsession (batch-means) analysis (cited by author and year only).
"""

from __future__ import annotations

import numpy as np

#: Pilot's autocorrelation limits of subsession means by preset (``warmup.ci.preset``; an
#: explicit ``ac_limit`` overrides them: :func:`perfcast.warmup.settings.resolve_limit`)
PRESETS: dict[str, float] = {"quick": 0.8, "normal": 0.2, "strict": 0.1}
#: Pilot's smallest number of subsession means a required sample size asks for, by preset
#: (pilot-bench's ``bench`` tool: quick 30, normal 50, strict 200; ``warmup.ci.min_samples``
#: overrides them)
PRESET_MIN_SAMPLES: dict[str, int] = {"quick": 30, "normal": 50, "strict": 200}


#: a spread of readings at most this fraction of their magnitude is rounding, not variation
#: (:func:`rounding_sd`)
ROUNDING = 1e-12


def rounding_sd(x: np.ndarray) -> float:
    """The largest standard deviation of ``x`` (or of means of its readings) that is rounding
    error alone: ``ROUNDING * max |x|``.

    A constant series has no variance, but its computed variance is not zero: the mean is
    rounded (a mean of 0.1s is 0.09999999999999998), so every deviation from it is about
    ``eps |x|`` (``eps`` = 2.2e-16) and their variance about ``(eps |x|)^2`` (measured: at most
    4.8e-16 of the value for constants of 3e-7 to 2e5 and 30 to 10^5 readings), and block
    means add the rounding of their sums (pairwise summation: about ``log2(q) eps``).
    ``ROUNDING`` (1e-12, 4,500 ``eps``) lies far above all of it and far below any real
    spread: a clock that resolves 1 ns of a 1 s reading resolves 1e-9 of it, and readings
    printed with 6 significant digits differ by 1e-6 of their value. A test statistic divided
    by a spread below this bound measures rounding error against itself.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.full(100, 0.1)
    >>> float(x.std()) > 0, float(x.std()) <= rounding_sd(x)
    (True, True)
    """
    x = np.asarray(x, dtype=float)
    return ROUNDING * float(np.max(np.abs(x))) if x.shape[0] else 0.0


def block_means(x: np.ndarray, q: int, *, newest: bool = False) -> np.ndarray:
    """Means of the ``n // q`` consecutive blocks of ``q`` readings: the first ``h q``
    readings (a tail shorter than ``q`` is left out), or with ``newest`` the last ``h q``
    (the blocks end at the last reading; the oldest ``n % q`` are left out).

    Parameters
    ----------
    x : numpy.ndarray
        the readings, in order.
    q : int
        readings per block.
    newest : bool, default=False
        the blocks end at the newest reading (:func:`perfcast.warmup.ci.mean_ci`'s), not start
        at the first.

    Returns
    -------
    numpy.ndarray
        the ``h = n // q`` block means, oldest first.

    Examples
    --------
    >>> block_means(np.arange(7.0), 3), block_means(np.arange(7.0), 3, newest=True)
    (array([1., 4.]), array([2., 5.]))
    """
    x = np.asarray(x, dtype=float)
    h = x.shape[0] // q
    part = x[x.shape[0] - h * q:] if newest else x[: h * q]
    return part.reshape(h, q).mean(axis=1)


def lag1_autocorrelation(x: np.ndarray) -> float:
    """``sum (x_i - m)(x_{i+1} - m) / sum (x_i - m)^2``; 0 for a constant series (nothing to
    correlate)."""
    x = np.asarray(x, dtype=float)
    d = x - x.mean()
    den = float(np.dot(d, d))
    if den <= 0 or x.shape[0] < 2:
        return 0.0
    return float(np.dot(d[:-1], d[1:]) / den)


def subsession_size(x: np.ndarray, limit: float, q_max: int | None = None
                    ) -> tuple[int | None, float]:
    """First ``q`` whose block means have ``|lag-1 autocorrelation| <= limit``, and that value.

    The block means of every ``q`` come from one prefix sum of the centred readings (block
    ``j`` of size ``q`` sums to ``c[(j+1) q] - c[j q]``), so trying ``q`` costs ``O(n / q)`` and
    trying ``q = 1 .. Q`` costs ``O(n log Q)`` (a harmonic sum) instead of ``O(n Q)``. The ``q``
    are tried in vectorised batches of geometrically growing ranges (``[2^k, 2^{k+1})``), each
    holding about ``n ln 2`` block means, and the first that qualifies is returned: the same
    ``q`` as trying them one by one.

    Parameters
    ----------
    x : numpy.ndarray
        the readings, in order.
    limit : float
        the autocorrelation limit (Pilot's presets, :data:`PRESETS`).
    q_max : int or None, default=None
        try no ``q`` above this (None: ``n // 3``).

    Returns
    -------
    q : int or None
        the subsession size; None when no ``q`` up to ``n // 3`` qualifies.
    r : float
        the lag-1 autocorrelation of the block means of that ``q`` (of the last tried when
        none qualifies).

    Examples
    --------
    >>> import numpy as np
    >>> subsession_size(np.array([1.0, -1.0] * 50), 0.2)  # alternating: pairs are constant
    (2, 0.0)
    """
    x = np.asarray(x, dtype=float)
    n = x.shape[0]
    r = float("nan")
    top = n // 3 if q_max is None else min(q_max, n // 3)
    if top < 1:
        return None, r
    d = x - x.mean()
    c = np.concatenate(([0.0], np.cumsum(d)))
    lo = 1
    while lo <= top:
        hi = min(top, 2 * lo - 1)
        qs = np.arange(lo, hi + 1)
        hs = n // qs  # blocks of each q (>= 3)
        starts = np.concatenate(([0], np.cumsum(hs)[:-1]))
        total = int(hs.sum())
        # index of each block within its q, and that q, for all q of the batch at once
        which = np.repeat(np.arange(qs.shape[0]), hs)
        j = np.arange(total) - starts[which]
        qq = qs[which]
        b = (c[(j + 1) * qq] - c[j * qq]) / qq
        means = np.add.reduceat(b, starts) / hs
        dev = b - means[which]
        den = np.add.reduceat(dev * dev, starts)
        prod = np.concatenate((dev[:-1] * dev[1:], [0.0]))
        prod[starts[1:] - 1] = 0.0  # no product across two q's blocks
        num = np.add.reduceat(prod, starts)
        with np.errstate(invalid="ignore", divide="ignore"):
            rs = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
        ok = np.flatnonzero(np.abs(rs) <= limit)
        if ok.shape[0]:
            i = int(ok[0])
            return int(qs[i]), float(rs[i])
        r = float(rs[-1])
        lo = hi + 1
    return None, r
