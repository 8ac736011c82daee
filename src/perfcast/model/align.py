"""Align an old- and a new-generation run of one benchmark on cumulative instructions.

Both runs retire the same instruction stream, so row i of the old run and row j of the new run
describe the same part of the program when their cumulative instruction counts match. Patkar's
method maps rows with dynamic time warping (DTW) on ``instructions_cumulative_sum``
(docs/methods/model.md):

* ``dtw``: tslearn's ``dtw_path`` (O(n*m) time and memory; ~1 GB at 10^4 points, out of memory
  near 10^5; an optional Sakoe-Chiba band).
* ``exact`` (default): the same DTW objective, sum of (a_i - b_j)^2 over the path, in
  O(n + m). For two increasing series the optimal path follows the nearest-neighbour staircase:
  row i is matched to the b_j lying between a_{i-1} and a_{i+1} (found with ``searchsorted``).
  DTW runs inside that band plus a margin; if the best path touches the band's edge the band is
  widened and DTW repeated, so the answer is the unconstrained optimum, not an approximation.
  ``tests/unit/test_align.py`` checks it against tslearn's cost on thousands of series,
  adversarial ones included.

The cost reported is tslearn's: sqrt of the summed squared differences along the path.

References
----------
.. [1] S. Patkar, "Server Performance Prediction using ML Models - Part 1" and "- Part 2"
   (WhileOne blog), https://whileone.in/post/server-performance-prediction-using-ml-models-part-1,
   https://whileone.in/post/server-performance-prediction-using-ml-models-part-2.
.. [2] H. Sakoe, S. Chiba, "Dynamic programming algorithm optimization for spoken word
   recognition", IEEE Transactions on Acoustics, Speech, and Signal Processing 26(1):43-49,
   1978, doi:10.1109/TASSP.1978.1163055.
.. [3] R. Tavenard et al., "Tslearn, A Machine Learning Toolkit for Time Series Data", Journal
   of Machine Learning Research 21(118):1-6, 2020, http://jmlr.org/papers/v21/20-091.html.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from perfcast.errors import InputError
from perfcast.model.settings import AlignSettings

#: the memory tslearn's DTW may allocate before we refuse it (:func:`dtw_bytes`)
DTW_MAX_BYTES = 3.2e9
#: bands of fewer cells are filled by the interpreter (about 3 us a cell here: 0.3 s at this
#: size), larger ones by the numba-compiled loop (1 us per 1,000 cells, but importing numba and
#: loading the compiled code cost about a second of CPU per process, and compiling it first 3 s)
COMPILED_FROM_CELLS = 100_000


def _banded_dtw(a, b, lo, hi):
    """DTW of ``a`` and ``b`` inside the band ``lo[i] <= j <= hi[i]``: ``(path i, path j,
    summed squared differences)``; run as it is or compiled by numba
    (:func:`_compiled_banded_dtw`), the same operations in the same order."""
    n = a.shape[0]
    width = hi - lo + 1
    offs = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        offs[i + 1] = offs[i] + width[i]
    acc = np.empty(offs[n], dtype=np.float64)
    move = np.empty(offs[n], dtype=np.int8)  # 0 diagonal, 1 from row above, 2 from the left
    inf = np.inf
    for i in range(n):
        for j in range(lo[i], hi[i] + 1):
            d = a[i] - b[j]
            c = d * d
            best = inf
            mv = -1
            if i == 0 and j == 0:
                best = 0.0
                mv = 0
            else:
                if i > 0 and j > 0 and lo[i - 1] <= j - 1 <= hi[i - 1]:
                    v = acc[offs[i - 1] + j - 1 - lo[i - 1]]
                    if v < best:
                        best = v
                        mv = 0
                if i > 0 and lo[i - 1] <= j <= hi[i - 1]:
                    v = acc[offs[i - 1] + j - lo[i - 1]]
                    if v < best:
                        best = v
                        mv = 1
                if j > lo[i]:
                    v = acc[offs[i] + j - 1 - lo[i]]
                    if v < best:
                        best = v
                        mv = 2
            acc[offs[i] + j - lo[i]] = best + c
            move[offs[i] + j - lo[i]] = mv
    total = acc[offs[n - 1] + b.shape[0] - 1 - lo[n - 1]]
    # backtrack from (n-1, m-1)
    pi = np.empty(n + b.shape[0], dtype=np.int64)
    pj = np.empty(n + b.shape[0], dtype=np.int64)
    i = n - 1
    j = b.shape[0] - 1
    k = 0
    while True:
        pi[k] = i
        pj[k] = j
        k += 1
        if i == 0 and j == 0:
            break
        mv = move[offs[i] + j - lo[i]]
        if mv == 0:
            i -= 1
            j -= 1
        elif mv == 1:
            i -= 1
        else:
            j -= 1
    return pi[:k][::-1].copy(), pj[:k][::-1].copy(), total


@functools.cache
def _compiled_banded_dtw():
    """:func:`_banded_dtw` compiled by numba (cached on disk, beside the module's bytecode)."""
    import numba

    return numba.njit(cache=True)(_banded_dtw)


def _band(a: np.ndarray, b: np.ndarray, margin: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row i, the columns j with b_j between a_{i-1} and a_{i+1}, widened by ``margin``."""
    m = len(b)
    prev = np.concatenate(([a[0]], a[:-1]))
    nxt = np.concatenate((a[1:], [a[-1]]))
    lo = np.searchsorted(b, prev, side="left") - 1 - margin
    hi = np.searchsorted(b, nxt, side="right") + margin
    lo = np.clip(lo, 0, m - 1)
    hi = np.clip(hi, 0, m - 1)
    lo[0] = 0
    hi[-1] = m - 1
    return lo.astype(np.int64), hi.astype(np.int64)


def _check_series(x: np.ndarray, name: str) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1 or len(x) == 0:
        raise ValueError(f"{name}: expected a non-empty 1-D series")
    if not np.isfinite(x).all():
        raise ValueError(f"{name}: contains NaN or infinite values")
    if (np.diff(x) <= 0).any():
        raise ValueError(f"{name}: cumulative instructions must increase strictly")
    return x


def exact_path(
    a: np.ndarray, b: np.ndarray, margin: int = 2
) -> tuple[np.ndarray, np.ndarray, float]:
    """Optimal DTW path and cost of two strictly increasing series in O(n + m).

    DTW runs inside the nearest-neighbour staircase band; wherever the best path in the band runs
    along the band's edge, a cheaper path might lie outside, so the band is widened (margin
    doubled) and DTW repeated until the path stays strictly inside (or the band is the whole
    matrix). Real runs of one program on two generations finish in the first pass.

    Parameters
    ----------
    a, b : numpy.ndarray
        the old and the new run's cumulative instructions (strictly increasing).
    margin : int, default=2
        the first band's widening in rows (an implementation detail: the result is the
        same optimum for any margin).

    Returns
    -------
    i, j : numpy.ndarray
        the path's row indices into ``a`` and ``b``, from (0, 0) to (n - 1, m - 1).
    cost : float
        sqrt of the summed squared differences along the path (tslearn's DTW score [3]_).

    Raises
    ------
    ValueError
        a series that is empty, not finite or not strictly increasing.
    """
    a = _check_series(a, "old series")
    b = _check_series(b, "new series")
    m = len(b)
    while True:
        lo, hi = _band(a, b, margin)
        cells = int((hi - lo + 1).sum())
        dtw = _banded_dtw if cells < COMPILED_FROM_CELLS else _compiled_banded_dtw()
        i, j, total = dtw(a, b, lo, hi)
        on_edge = ((j == lo[i]) & (lo[i] > 0)) | ((j == hi[i]) & (hi[i] < m - 1))
        if not on_edge.any() or (lo.max() == 0 and hi.min() == m - 1):
            return i, j, float(np.sqrt(total))
        margin *= 2


def dtw_bytes(n: int, m: int, radius: int | None) -> int:
    """The memory tslearn's ``dtw_path`` allocates for series of ``n`` and ``m`` points: its
    accumulated-cost matrix of ``(n + 1) x (m + 1)`` float64 and, with a Sakoe-Chiba band, a
    mask of ``n x m`` float64 too. A band does not shrink either: tslearn fills the whole
    matrix and masks it (measured: 69 MB at 3000 x 3000 points without a band, 138 MB with).

    Parameters
    ----------
    n, m : int
        the old and the new run's intervals.
    radius : int or None
        the Sakoe-Chiba radius (None: full DTW).

    Returns
    -------
    int
        bytes.

    Examples
    --------
    >>> [round(dtw_bytes(10_000, 10_000, radius) / 1e9, 3) for radius in (None, 5)]  # GB
    [0.8, 1.6]
    """
    cells = (n + 1) * (m + 1)
    return 8 * cells + (8 * n * m if radius is not None else 0)


def dtw_too_large(n: int, m: int, radius: int | None) -> str | None:
    """Why a tslearn DTW of ``n`` x ``m`` points is refused (it needs more than
    :data:`DTW_MAX_BYTES`: :func:`dtw_bytes`), or None when it is not.

    Parameters
    ----------
    n, m : int
        the old and the new run's intervals.
    radius : int or None
        the Sakoe-Chiba radius (None: full DTW).

    Returns
    -------
    str or None
        the sizes and the memory needed, or None.

    Examples
    --------
    >>> print(dtw_too_large(950_000, 950_000, 50))  # doctest: +NORMALIZE_WHITESPACE
    DTW of 950000 x 950000 intervals needs ~14440.0 GB (tslearn fills the whole matrix,
    band or not), more than the 3.2 GB allowed
    >>> dtw_too_large(1000, 1000, None) is None
    True
    """
    need = dtw_bytes(n, m, radius)
    if need <= DTW_MAX_BYTES:
        return None
    return (f"DTW of {n} x {m} intervals needs ~{need / 1e9:.1f} GB (tslearn fills the whole "
            f"matrix, band or not), more than the {DTW_MAX_BYTES / 1e9:.1f} GB allowed")


def dtw_path(a: np.ndarray, b: np.ndarray, radius: int | None = None) -> tuple[np.ndarray,
                                                                               np.ndarray, float]:
    """tslearn's ``dtw_path`` [3]_: full DTW, or inside a Sakoe-Chiba band [2]_ of ``radius``.

    Returns ``(i, j, cost)`` as :func:`exact_path` does.

    Parameters
    ----------
    a, b : numpy.ndarray
        the old and the new run's cumulative instructions (strictly increasing).
    radius : int or None, default=None
        the Sakoe-Chiba band radius in intervals (None: full DTW).

    Raises
    ------
    ValueError
        a series that is empty, not finite or not strictly increasing.
    MemoryError
        the DTW would allocate more than :data:`DTW_MAX_BYTES` (:func:`dtw_too_large`;
        checked before anything is allocated).
    """
    from tslearn.metrics import dtw_path as _tslearn_dtw_path

    a = _check_series(a, "old series")
    b = _check_series(b, "new series")
    why = dtw_too_large(len(a), len(b), radius)
    if why:
        raise MemoryError(f"{why}; use method 'exact' (the same optimal cost in O(n + m))")
    kwargs = {}
    if radius is not None:
        kwargs = {"global_constraint": "sakoe_chiba", "sakoe_chiba_radius": int(radius)}
    path, cost = _tslearn_dtw_path(a.reshape(-1, 1), b.reshape(-1, 1), **kwargs)
    p = np.asarray(path, dtype=np.int64)
    return p[:, 0], p[:, 1], float(cost)


def path_cost(a: np.ndarray, b: np.ndarray, i: np.ndarray, j: np.ndarray) -> float:
    """sqrt(sum (a_i - b_j)^2) along a path (tslearn's DTW score).

    Parameters
    ----------
    a, b : numpy.ndarray
        the two series.
    i, j : numpy.ndarray
        the path's indices into ``a`` and ``b``.
    """
    return float(np.sqrt(np.sum((np.asarray(a)[i] - np.asarray(b)[j]) ** 2)))


def align_runs(old: pd.DataFrame, new: pd.DataFrame,
               settings: AlignSettings) -> tuple[pd.DataFrame, float]:
    """Map old-generation rows to new-generation rows on cumulative instructions (DTW, as in
    Patkar's method [1]_); IPC ratio = IPC_new[j] / IPC_old[i].

    Parameters
    ----------
    old, new : pandas.DataFrame
        the two runs' counter tables (``interval``, ``ipc``,
        ``instructions_cumulative_sum``).
    settings : AlignSettings
        the ``align`` section: :func:`exact_path` or :func:`dtw_path` (with its radius).

    Returns
    -------
    pairs : pandas.DataFrame
        one row per pair of the path: ``old_interval``, ``new_interval``, both cumulative sums,
        ``ipc_old``, ``ipc_new``, ``ipc_ratio``.
    cost : float
        the path's DTW cost.

    Raises
    ------
    ValueError
        a cumulative series that is not strictly increasing, or an unknown method.
    MemoryError
        full DTW too large (method ``dtw``).
    """
    a = old["instructions_cumulative_sum"].to_numpy(dtype=float)
    b = new["instructions_cumulative_sum"].to_numpy(dtype=float)
    if settings.method == "exact":
        i, j, cost = exact_path(a, b)
    elif settings.method == "dtw":
        i, j, cost = dtw_path(a, b, settings.sakoe_chiba_radius)
    else:
        raise ValueError(f"method must be 'exact' or 'dtw', not {settings.method!r}")
    ipc_old = old["ipc"].to_numpy(dtype=float)[i]
    ipc_new = new["ipc"].to_numpy(dtype=float)[j]
    pairs = pd.DataFrame({
        "old_interval": old["interval"].to_numpy()[i],
        "new_interval": new["interval"].to_numpy()[j],
        "old_instructions_cumulative_sum": a[i],
        "new_instructions_cumulative_sum": b[j],
        "ipc_old": ipc_old,
        "ipc_new": ipc_new,
        "ipc_ratio": ipc_new / ipc_old,
    })
    return pairs, cost


def check_same_work(old: pd.DataFrame, new: pd.DataFrame, tolerance: float, *,
                    old_path: object, new_path: object) -> None:
    """Refuse two runs whose total instructions differ by more than ``tolerance`` (relative to
    the smaller): aligning on cumulative instructions assumes both ran the same program on the
    same input; more apart, they did not (another binary, input or a run cut short).

    Parameters
    ----------
    old, new : pandas.DataFrame
        the two runs' counter tables.
    tolerance : float
        ``align.instruction_tolerance``.
    old_path, new_path : object
        the tables' files (for the error).
    """
    a = float(old["instructions"].sum())
    b = float(new["instructions"].sum())
    lo, hi = min(a, b), max(a, b)
    for total, path in ((a, old_path), (b, new_path)):
        if not total > 0:  # the run at fault, not the other one
            raise InputError(path, f"retired {total:.6g} instructions in all",
                             expected="a positive total of instructions")
    if not (lo > 0 and hi <= lo * (1.0 + tolerance)):
        raise InputError(
            new_path, f"retired {b:.6g} instructions, the old generation's run {old_path} "
            f"{a:.6g} ({hi / lo - 1 if lo > 0 else float('inf'):.1%} apart)",
            expected=f"runs of the same work within align.instruction_tolerance ({tolerance:g})")
