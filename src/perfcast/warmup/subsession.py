"""Subsession analysis: merge adjacent correlated readings into fewer, less correlated ones.

Readings of a performance test are rarely independent (caches, queues, background work), and a
confidence interval computed as if they were is too narrow. Pilot's remedy (after Ferrari 1978):
cut the series into ``h = n // q`` blocks of ``q`` adjacent readings and use the block means as
the samples; ``q`` is the first of ``1 .. n // 3`` whose block means have a lag-1
autocorrelation within ``+-limit`` (at least 3 blocks remain). Pilot's presets for the limit:
quick 0.8, normal 0.2, strict 0.1.
"""

from __future__ import annotations

import numpy as np

PRESETS: dict[str, float] = {"quick": 0.8, "normal": 0.2, "strict": 0.1}
DEFAULT_PRESET = "normal"


def resolve_limit(ac_limit: float | None = None, preset: str | None = None) -> float:
    """The autocorrelation limit: ``ac_limit`` if given, else the preset's (default normal)."""
    if ac_limit is not None:
        if not 0 <= ac_limit <= 1:
            raise ValueError(f"autocorrelation limit must be in [0, 1], got {ac_limit}")
        return float(ac_limit)
    name = preset or DEFAULT_PRESET
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r} (expected one of {sorted(PRESETS)})")
    return PRESETS[name]


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


def subsession_size(x: np.ndarray, limit: float) -> tuple[int | None, float]:
    """First ``q`` whose block means have ``|lag-1 autocorrelation| <= limit``, and that value.

    Returns ``(None, r)`` with the last ``r`` tried when no ``q`` up to ``n // 3`` qualifies.
    """
    x = np.asarray(x, dtype=float)
    n = x.shape[0]
    r = float("nan")
    for q in range(1, n // 3 + 1):
        r = lag1_autocorrelation(block_means(x, q))
        if abs(r) <= limit:
            return q, r
    return None, r
