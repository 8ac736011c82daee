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


def block_means(x: np.ndarray, q: int) -> np.ndarray:
    """Means of the ``n // q`` consecutive blocks of ``q`` readings (a tail shorter than q is
    left out)."""
    x = np.asarray(x, dtype=float)
    h = x.shape[0] // q
    return x[: h * q].reshape(h, q).mean(axis=1)


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

    Parameters
    ----------
    x : the readings, in order.
    limit : the autocorrelation limit (Pilot's presets, :data:`PRESETS`).
    q_max : try no ``q`` above this (default ``n // 3``).

    Returns
    -------
    q : int or None
        the subsession size; None when no ``q`` up to ``n // 3`` qualifies.
    r : float
        the lag-1 autocorrelation of the block means of that ``q`` (of the last tried when
        none qualifies).
    """
    x = np.asarray(x, dtype=float)
    n = x.shape[0]
    r = float("nan")
    top = n // 3 if q_max is None else min(q_max, n // 3)
    for q in range(1, top + 1):
        r = lag1_autocorrelation(block_means(x, q))
        if abs(r) <= limit:
            return q, r
    return None, r
