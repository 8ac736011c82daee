"""Choosing which levels of a dimension to measure.

* :func:`binary_recursive_search` — Wang et al. 2017, Fig. 6: measure both ends; while the
  sensitivity at the two ends of a segment differs by more than ``epsilon``, measure the level at
  the segment's midpoint and recurse on both halves. The difference is taken in absolute value
  (ARCPTool's ``nodemax->value - nodemin->value > gap`` is signed and never bisects a falling
  curve); the midpoint is the first level at or above the coordinate midpoint, as ARCPTool's
  ``nodemin + step * i >= fbisection``.
* :func:`lhs_levels` — the paper's comparison: the two boundary levels plus the same number of
  interior levels drawn by Latin hypercube sampling (one level per equal-width stratum).
* :func:`adaptive_product` — ours: a budgeted refinement of a Cartesian product of levels over
  all dimensions jointly. Binary search bisects each axis along one line (the others held at
  their ceiling) and so misses variation elsewhere in the grid, and it spends runs in whole
  product layers whatever they buy. Here every segment of every axis is scored by the mean
  ``|S(high) - S(low)|`` over *all* measured lines crossing it, divided by the runs that
  bisecting it costs (the product of the other axes' level counts); the best-scoring segment is
  bisected, until the run budget or ``epsilon`` (no segment varies by more) stops it. The result
  is still a product, so the paper's sequential PCHIP fills the grid unchanged. This is the
  paper's own bisection criterion (Fig. 6) taken jointly over the grid and priced in runs, in
  the spirit of greedy adaptive sampling for surrogate models (e.g. S. S. Garud, I. A. Karimi,
  M. Kraft, "Design of computer experiments: A review", Computers & Chemical Engineering 106:
  71-95, 2017).

References
----------
L. Wang, D. Qian, Z. Luan, G. Wei, R. Wang, H. Yang, "Speeding up profiling program's runtime
characteristics for workload consolidation", PLoS ONE 12(4): e0175861, 2017.
W.-L. Loh, "On Latin hypercube sampling", The Annals of Statistics 24(5): 2058-2080, 1996
(:class:`scipy.stats.qmc.LatinHypercube`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np


def midpoint_index(coords: Sequence[float], i: int, j: int) -> int:
    """The interior level of segment ``(i, j)`` at or above its coordinate midpoint.

    Parameters
    ----------
    coords : sequence of float
        The levels' coordinates, increasing.
    i, j : int
        The segment's end indices.

    Returns
    -------
    int
        the first interior index whose coordinate is at or above ``(coords[i] + coords[j]) / 2``;
        on an irregular axis where none reaches it, the highest interior index (the nearest).

    Raises
    ------
    ValueError
        ``j - i < 2``: the segment has no interior level.

    Examples
    --------
    >>> midpoint_index([1, 2, 3, 4, 5], 0, 4)  # midpoint 3: the first level at or above
    2
    >>> midpoint_index([1, 2, 3, 4, 8], 0, 4)  # midpoint 4.5: none, the highest interior
    3
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
    same: Callable[[int, int], bool] | None = None,
) -> list[int]:
    """Level indices chosen by binary recursive search (Wang et al. 2017, Fig. 6), sorted.

    Parameters
    ----------
    coords : sequence of float
        The levels' coordinates, increasing.
    probe : callable
        ``probe(k)`` measures the sensitivity at level ``k``; called once per chosen level,
        ends first, then midpoints depth-first, left before right.
    epsilon : float
        A segment is bisected while ``|S(j) - S(i)| > epsilon``.
    splits : list or None, default=None
        If given, receives ``(i, j, |S(j) - S(i)|)`` for every segment bisected.
    same : callable or None, default=None
        ``same(i, j)`` is True when the measurements at levels ``i`` and ``j`` do not differ
        beyond their confidence intervals: such a segment is not bisected, whatever its
        ``|dS|`` (None: every difference counts).

    Returns
    -------
    list of int
        the indices measured.

    Raises
    ------
    ValueError
        no levels, or ``epsilon < 0``.

    Examples
    --------
    A sensitivity that saturates at level 2 of 0..8: the flat upper half is never bisected.

    >>> s = [0.2, 0.6, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    >>> splits = []
    >>> binary_recursive_search(range(9), lambda k: s[k], 0.1, splits)
    [0, 1, 2, 4, 8]
    >>> [(i, j) for i, j, _ in splits]
    [(0, 8), (0, 4), (0, 2)]
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
        if same is not None and same(i, j):
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
    n_levels : int
        The number of levels (indices ``0 .. n_levels - 1``).
    k : int
        The number wanted (at most ``n_levels`` are returned).
    rng : numpy.random.Generator
        The generator the Latin hypercube draws from.

    Returns
    -------
    list of int
        sorted indices: both ends plus ``k - 2`` interior levels, one per equal-width stratum of
        the interior (a collision moves to the nearest free level), no repeats.

    Raises
    ------
    ValueError
        ``n_levels < 1``.

    Examples
    --------
    >>> picks = lhs_levels(9, 4, np.random.default_rng(0))
    >>> len(picks), picks[0], picks[-1], picks == sorted(set(picks))
    (4, 0, 8, True)
    >>> lhs_levels(9, 2, np.random.default_rng(0))  # the ends only
    [0, 8]
    """
    if n_levels < 1:
        raise ValueError("no levels")
    if n_levels == 1:
        return [0]
    ends = [0, n_levels - 1]
    m, interior = min(k, n_levels) - 2, n_levels - 2
    if m <= 0:
        return ends
    from scipy.stats import qmc  # here: scipy.stats takes 1.3 s to import, most jobs need none

    u = qmc.LatinHypercube(d=1, rng=rng).random(m)[:, 0]
    picks = sorted(1 + np.minimum((u * interior).astype(int), interior - 1))
    chosen: list[int] = []
    free = set(range(1, n_levels - 1))
    for p in picks:  # a collision moves to the nearest free interior level
        q = min(free, key=lambda f: (abs(f - p), f))
        free.discard(q)
        chosen.append(int(q))
    return sorted(ends + chosen)


Index = tuple[int, ...]


def adaptive_product(
    coords: Sequence[Sequence[float]], probe: Callable[[Index], float], *,
    budget: int | None, epsilon: float = 0.0,
    same: Callable[[Index, Index], bool] | None = None,
    trace: list[tuple[tuple[int, ...], ...]] | None = None,
) -> tuple[tuple[int, ...], ...]:
    """Levels per dimension chosen by budgeted joint refinement (module docstring), sorted.

    Start: both ends of every axis with more than one level, their product measured (the
    corners; measured even when they exceed ``budget``, the grid cannot be filled without
    them). Step: for every axis ``a`` and every pair ``(i, j)`` of adjacent chosen levels with
    an unchosen level between them, ``score = mean over the measured lines along a of
    |S(.., j, ..) - S(.., i, ..)|`` (a difference the points' confidence intervals cannot tell
    from zero, ``same(p, q)``, counts as 0); the segment with the largest ``score / cost``
    (cost: the new runs, the product of the other axes' counts) whose cost fits in the budget
    and whose score exceeds ``epsilon`` gets its middle level by index, ``(i + j) // 2`` (the
    lower of two), which halves the segment's unmeasured levels (the error is averaged over grid
    cells, and the paper's axes are irregular), measured on every line. Ties: the lower axis,
    the lower segment.

    Parameters
    ----------
    coords : sequence of sequence of float
        Per axis, the levels' coordinates (increasing).
    probe : callable
        ``probe(idx)`` measures the sensitivity at grid index ``idx``; called once per point,
        in product order.
    budget : int or None
        The most points measured (None: until ``epsilon`` stops it).
    epsilon : float, default=0.0
        A segment whose score is at or below it is not bisected.
    same : callable or None, default=None
        ``same(p, q)`` is True when the measurements at ``p`` and ``q`` do not differ beyond
        their confidence intervals (None: every difference counts).
    trace : list or None, default=None
        If given, receives the chosen levels after every step (corners first).

    Returns
    -------
    tuple of tuple of int
        the chosen level indices per axis; their product is what was measured.

    Raises
    ------
    ValueError
        an axis without levels, a negative epsilon, or a budget below 1.

    Examples
    --------
    Two axes of 5 levels; the sensitivity varies along the first only, so the refinement
    spends its runs there:

    >>> s = lambda idx: [0.0, 0.5, 0.8, 0.9, 1.0][idx[0]]
    >>> trace = []
    >>> adaptive_product([range(5), range(5)], s, budget=8, trace=trace)
    ((0, 1, 2, 4), (0, 4))
    >>> trace[:2]  # the corners, then the middle of the first axis
    [((0, 4), (0, 4)), ((0, 2, 4), (0, 4))]
    """
    if any(len(c) == 0 for c in coords):
        raise ValueError("an axis has no levels")
    if epsilon < 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon}")
    if budget is not None and budget < 1:
        raise ValueError(f"budget must be >= 1, got {budget}")
    nd = len(coords)
    chosen = [[0, len(c) - 1] if len(c) > 1 else [0] for c in coords]
    values: dict[Index, float] = {}

    def measure_product() -> None:
        for idx in itertools.product(*chosen):
            if idx not in values:
                values[idx] = float(probe(idx))

    measure_product()
    if trace is not None:
        trace.append(tuple(tuple(c) for c in chosen))
    while True:
        best: tuple[float, int, int] | None = None  # (score per run, axis, new level)
        for a in range(nd):
            others = [chosen[b] if b != a else [0] for b in range(nd)]
            cost = int(np.prod([len(chosen[b]) for b in range(nd) if b != a]))
            if budget is not None and len(values) + cost > budget:
                continue
            for i, j in itertools.pairwise(chosen[a]):
                if j - i < 2:
                    continue
                diffs = []
                for line in itertools.product(*others):
                    lo = line[:a] + (i,) + line[a + 1:]
                    hi = line[:a] + (j,) + line[a + 1:]
                    if same is not None and same(lo, hi):
                        diffs.append(0.0)
                    else:
                        diffs.append(abs(values[hi] - values[lo]))
                score = float(np.mean(diffs))
                if score <= epsilon:
                    continue
                if best is None or score / cost > best[0]:
                    best = (score / cost, a, (i + j) // 2)
        if best is None:
            break
        _, a, m = best
        chosen[a] = sorted([*chosen[a], m])
        measure_product()
        if trace is not None:
            trace.append(tuple(tuple(c) for c in chosen))
    return tuple(tuple(c) for c in chosen)
