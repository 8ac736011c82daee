"""Choosing which levels of a dimension to measure.

* :func:`binary_recursive_search` — Wang et al. 2017, Fig. 6: measure both ends; while the
  sensitivity at the two ends of a segment differs by more than ``epsilon``, measure the level at
  the segment's midpoint and recurse on both halves. The difference is taken in absolute value
  (ARCPTool's ``nodemax->value - nodemin->value > gap`` is signed and never bisects a falling
  curve); the midpoint is the first level at or above the coordinate midpoint, as ARCPTool's
  ``nodemin + step * i >= fbisection``.
* :func:`lhs_levels` — the paper's comparison: the two boundary levels plus the same number of
  interior levels drawn by Latin hypercube sampling (one level per equal-width stratum).

References
----------
L. Wang, D. Qian, Z. Luan, G. Wei, R. Wang, H. Yang, "Speeding up profiling program's runtime
characteristics for workload consolidation", PLoS ONE 12(4): e0175861, 2017.
W.-L. Loh, "On Latin hypercube sampling", The Annals of Statistics 24(5): 2058-2080, 1996
(:class:`scipy.stats.qmc.LatinHypercube`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy.stats import qmc


def midpoint_index(coords: Sequence[float], i: int, j: int) -> int:
    """The interior level of segment ``(i, j)`` at or above its coordinate midpoint.

    Parameters
    ----------
    coords : the levels' coordinates, increasing.
    i, j : the segment's end indices.

    Returns
    -------
    int
        the first interior index whose coordinate is at or above ``(coords[i] + coords[j]) / 2``;
        on an irregular axis where none reaches it, the highest interior index (the nearest).

    Raises
    ------
    ValueError
        ``j - i < 2``: the segment has no interior level.
    """
    if j - i < 2:
        raise ValueError(f"segment ({i}, {j}) has no interior level")
    mid = (coords[i] + coords[j]) / 2.0
    for k in range(i + 1, j):
        if coords[k] >= mid - 1e-12:
            return k
    return j - 1


def binary_recursive_search(
    coords: Sequence[float], probe: Callable[[int], float], epsilon: float,
    splits: list[tuple[int, int, float]] | None = None,
) -> list[int]:
    """Level indices chosen by binary recursive search (Wang et al. 2017, Fig. 6), sorted.

    Parameters
    ----------
    coords : the levels' coordinates, increasing.
    probe : ``probe(k)`` measures the sensitivity at level ``k``; called once per chosen level,
        ends first, then midpoints depth-first, left before right.
    epsilon : a segment is bisected while ``|S(j) - S(i)| > epsilon``.
    splits : if given, receives ``(i, j, |S(j) - S(i)|)`` for every segment bisected.

    Returns
    -------
    list of int
        the indices measured.

    Raises
    ------
    ValueError
        no levels, or ``epsilon < 0``.
    """
    n = len(coords)
    if n == 0:
        raise ValueError("no levels to search")
    if epsilon < 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon}")
    values: dict[int, float] = {0: probe(0)}
    if n == 1:
        return [0]
    values[n - 1] = probe(n - 1)

    stack = [(0, n - 1)]
    while stack:  # explicit stack, same order as the recursive pseudo-code
        i, j = stack.pop()
        if j - i < 2 or abs(values[j] - values[i]) <= epsilon:
            continue
        if splits is not None:
            splits.append((i, j, abs(values[j] - values[i])))
        m = midpoint_index(coords, i, j)
        values[m] = probe(m)
        stack.append((m, j))
        stack.append((i, m))
    return sorted(values)


def lhs_levels(n_levels: int, k: int, rng: np.random.Generator) -> list[int]:
    """Levels by Latin hypercube sampling at a given count (the paper's comparison).

    Parameters
    ----------
    n_levels : the number of levels (indices ``0 .. n_levels - 1``).
    k : the number wanted (at most ``n_levels`` are returned).
    rng : the generator the Latin hypercube draws from.

    Returns
    -------
    list of int
        sorted indices: both ends plus ``k - 2`` interior levels, one per equal-width stratum of
        the interior (a collision moves to the nearest free level), no repeats.

    Raises
    ------
    ValueError
        ``n_levels < 1``.
    """
    if n_levels < 1:
        raise ValueError("no levels")
    if n_levels == 1:
        return [0]
    ends = [0, n_levels - 1]
    m, interior = min(k, n_levels) - 2, n_levels - 2
    if m <= 0:
        return ends
    u = qmc.LatinHypercube(d=1, rng=rng).random(m)[:, 0]
    picks = sorted(1 + np.minimum((u * interior).astype(int), interior - 1))
    chosen: list[int] = []
    free = set(range(1, n_levels - 1))
    for p in picks:  # a collision moves to the nearest free interior level
        q = min(free, key=lambda f: (abs(f - p), f))
        free.discard(q)
        chosen.append(int(q))
    return sorted(ends + chosen)
