"""Pilot-compatible E-Divisive with Medians, percent-penalised ("EDM_percent").

This is an independent implementation of the method that Pilot (ascar-io/pilot-bench) calls for
change-point detection: James, Kejariwal & Matteson, "Leveraging Cloud Data to Mitigate User
Experience from 'Breaking Bad'" (arXiv:1411.7955), variant "percent" of Twitter's
BreakoutDetection. It is written from the published algorithm (no code copied) and reproduces
its output exactly, quirks included, so results can be compared with Pilot's:

* dynamic programme over the end ``s`` of the data and the last change ``t``:
  ``F[s] = max_t F[t] + (t - p)(s - t) / (s - p)^2 * (median(Z[p:t]) - median(Z[t:s]))^2``
  with ``p = prev[t]`` (the optimal change before ``t``), segments at least ``min_size`` long;
* ties keep the earliest ``t`` (a strict ``>`` comparison);
* a new change point is kept only if it raises the statistic by ``percent * G(k)`` of the
  previous value, ``G`` = 0 / 1 / 2k+1 for ``degree`` 0 / 1 / 2. The first change point is
  compared against ``F = 0`` and therefore never penalised, which is why i.i.d. noise of 60+
  readings almost always gets one.

Cost is O(n^2 log n) time (medians kept in two Fenwick trees over value ranks) and O(n) memory.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Pilot's constants for EDM_percent (pilot_find_dominant_segment defaults)
PILOT_MIN_SIZE = 30
PILOT_PERCENT = 0.25
PILOT_DEGREE = 1


@njit(cache=True)
def _fen_add(tree: np.ndarray, pos: int, delta: int) -> None:
    i = pos + 1
    n = tree.shape[0] - 1
    while i <= n:
        tree[i] += delta
        i += i & (-i)


@njit(cache=True)
def _fen_kth(tree: np.ndarray, k: int, top: int) -> int:
    """0-based position of the k-th (1-based) element present in the Fenwick tree."""
    pos = 0
    step = top
    n = tree.shape[0] - 1
    while step > 0:
        nxt = pos + step
        if nxt <= n and tree[nxt] < k:
            pos = nxt
            k -= tree[nxt]
        step >>= 1
    return pos


@njit(cache=True)
def _median(tree: np.ndarray, count: int, top: int, sorted_vals: np.ndarray) -> float:
    if count % 2 == 1:
        return sorted_vals[_fen_kth(tree, count // 2 + 1, top)]
    lo = sorted_vals[_fen_kth(tree, count // 2, top)]
    hi = sorted_vals[_fen_kth(tree, count // 2 + 1, top)]
    return (lo + hi) / 2


@njit(cache=True)
def _edm_percent(z: np.ndarray, rank: np.ndarray, sorted_vals: np.ndarray, min_size: int,
                 percent: float, degree: int) -> np.ndarray:
    n = z.shape[0]
    prev = np.zeros(n + 1, dtype=np.int64)
    number = np.zeros(n + 1, dtype=np.int64)
    f = np.zeros(n + 1, dtype=np.float64)
    left = np.zeros(n + 1, dtype=np.int64)
    right = np.zeros(n + 1, dtype=np.int64)
    top = 1
    while top * 2 <= n:
        top *= 2
    for s in range(2 * min_size, n + 1):
        left[:] = 0
        right[:] = 0
        nl = 0
        nr = 0
        for i in range(prev[min_size - 1], min_size - 1):
            _fen_add(left, rank[i], 1)
            nl += 1
        for i in range(min_size - 1, s):
            _fen_add(right, rank[i], 1)
            nr += 1
        for t in range(min_size, s - min_size + 1):
            _fen_add(left, rank[t - 1], 1)
            nl += 1
            _fen_add(right, rank[t - 1], -1)
            nr -= 1
            if prev[t] > prev[t - 1]:
                for i in range(prev[t - 1], prev[t]):
                    _fen_add(left, rank[i], -1)
                    nl -= 1
            elif prev[t] < prev[t - 1]:
                for i in range(prev[t], prev[t - 1]):
                    _fen_add(left, rank[i], 1)
                    nl += 1
            lm = _median(left, nl, top, sorted_vals)
            rm = _median(right, nr, top, sorted_vals)
            p = prev[t]
            normalize = float((t - p) * (s - t)) / float((s - p) * (s - p))
            d = lm - rm
            tmp = f[t] + normalize * (d * d)
            if tmp > f[s]:
                number[s] = number[t] + 1
                f[s] = tmp
                prev[s] = t
        if prev[s] != 0:
            k = number[prev[s]]
            if degree == 1:
                g = 1.0
            elif degree == 2:
                g = 2.0 * k + 1.0
            else:
                g = 0.0
            if f[s] - f[prev[s]] < percent * g * f[prev[s]]:
                number[s] = number[prev[s]]
                f[s] = f[prev[s]]
                prev[s] = prev[prev[s]]
    out = []
    at = n
    while at != 0:
        if prev[at] != 0:
            out.append(prev[at])
        at = prev[at]
    res = np.empty(len(out), dtype=np.int64)
    for i in range(len(out)):
        res[i] = out[len(out) - 1 - i]
    return np.sort(res)


def edm_percent(
    x: np.ndarray,
    min_size: int = PILOT_MIN_SIZE,
    percent: float = PILOT_PERCENT,
    degree: int = PILOT_DEGREE,
) -> list[int]:
    """Change points of ``x`` by EDM_percent (Pilot's settings by default).

    Parameters
    ----------
    x : numpy.ndarray
        The readings, in order.
    min_size : int, default=PILOT_MIN_SIZE
        Shortest segment (Pilot: 30).
    percent : float, default=PILOT_PERCENT
        A new change point must raise the statistic by this fraction (Pilot: 0.25) ...
    degree : int, default=PILOT_DEGREE
        ... times ``G`` = 0, 1 or ``2k + 1`` for degree 0, 1, 2 (Pilot: 1).

    Returns
    -------
    list of int
        sorted indices ``c``: a new segment starts at ``x[c]``. Series shorter than
        ``2 * min_size`` have none.

    Raises
    ------
    ValueError
        ``min_size < 1`` or a degree other than 0, 1, 2.

    References
    ----------
    N. A. James, A. Kejariwal, D. S. Matteson, "Leveraging Cloud Data to Mitigate User
    Experience from 'Breaking Bad'", arXiv:1411.7955, 2014 (EDM; Twitter's BreakoutDetection).
    D. S. Matteson, N. A. James, "A Nonparametric Approach for Multiple Change Point Analysis
    of Multivariate Data", Journal of the American Statistical Association 109(505):334-345,
    2014, doi:10.1080/01621459.2013.849605 (E-divisive).
    Y. Li, Y. Gupta, E. L. Miller, D. D. E. Long, "Pilot: A Framework that Understands How to
    Do Performance Benchmarks the Right Way", Proc. 24th IEEE Int. Symp. on Modeling, Analysis,
    and Simulation of Computer and Telecommunication Systems (MASCOTS 2016), 2016,
    doi:10.1109/MASCOTS.2016.31.
    """
    z = np.ascontiguousarray(x, dtype=np.float64)
    if min_size < 1:
        raise ValueError("min_size must be at least 1")
    if degree not in (0, 1, 2):
        raise ValueError("degree must be 0, 1 or 2")
    if z.shape[0] < 2 * min_size:
        return []
    order = np.argsort(z, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.shape[0])
    return [int(c) for c in _edm_percent(z, rank, z[order], int(min_size), float(percent),
                                         int(degree))]
