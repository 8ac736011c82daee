"""Filling the sensitivity grid from the measured points: sequential 1-D PCHIP.

Wang et al. 2017, Fig. 7 and ARCPTool: for one axis after another (CPU, then memory, network,
disk write, disk read), every 1-D line of the grid along that axis that holds known values gets a
piecewise cubic Hermite interpolant (MATLAB ``interp1(..., 'pchip')`` = scipy
:class:`~scipy.interpolate.PchipInterpolator`) through them; the values it predicts become known
for the next axis. On a Cartesian product of measured levels this fills every cell.

Outside the known levels of a line the value is held constant: above the resource ceiling more
resource does not help, and a non-effective dimension (one known level) has the same value at
every level.

References
----------
L. Wang, D. Qian, Z. Luan, G. Wei, R. Wang, H. Yang, "Speeding up profiling program's runtime
characteristics for workload consolidation", PLoS ONE 12(4): e0175861, 2017.
F. N. Fritsch, R. E. Carlson, "Monotone Piecewise Cubic Interpolation", SIAM Journal on
Numerical Analysis 17(2): 238-246, 1980.
F. N. Fritsch, J. Butland, "A Method for Constructing Local Monotone Piecewise Cubic
Interpolants", SIAM Journal on Scientific and Statistical Computing 5(2): 300-304, 1984 (the
slopes of :class:`scipy.interpolate.PchipInterpolator`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.interpolate import PchipInterpolator


def pchip_line(x: np.ndarray, y: np.ndarray, known: np.ndarray) -> np.ndarray:
    """Fill one line: PCHIP through the ``known`` points, constant beyond them.

    Parameters
    ----------
    x : numpy.ndarray
        (n,) strictly increasing coordinates of the line's points.
    y : numpy.ndarray
        (n,) values, or (lines, n) when every line shares the same ``known`` mask.
    known : numpy.ndarray
        (n,) boolean mask of the points whose value is known (at least one).

    Returns
    -------
    numpy.ndarray
        ``y``'s shape: the known values unchanged, PCHIP (Fritsch & Carlson 1980; Fritsch &
        Butland 1984) between them, the nearest known value beyond them.

    Examples
    --------
    >>> x = np.array([1.0, 2.0, 3.0, 4.0])
    >>> pchip_line(x, np.array([1.0, np.nan, 3.0, np.nan]), np.array([True, False, True, False]))
    array([1., 2., 3., 3.])
    """
    y = np.asarray(y, dtype=float)
    xk = x[known]
    yk = y[..., known]
    out = np.empty_like(y)
    if xk.size == 1:
        out[...] = yk[..., :1]
        return out
    inside = (x >= xk[0]) & (x <= xk[-1])
    out[..., inside] = PchipInterpolator(xk, yk, axis=-1, extrapolate=False)(x[inside])
    out[..., x < xk[0]] = yk[..., :1]
    out[..., x > xk[-1]] = yk[..., -1:]
    out[..., known] = yk  # measured values stay exactly as measured
    return out


def fill_axis(values: np.ndarray, x: np.ndarray, axis: int) -> np.ndarray:
    """One pass of the sequential interpolation along ``axis``.

    Parameters
    ----------
    values : numpy.ndarray
        The grid, NaN where unknown.
    x : numpy.ndarray
        The coordinates of ``axis`` (strictly increasing).
    axis : int
        The axis the lines run along.

    Returns
    -------
    numpy.ndarray
        a copy of ``values`` where every line along ``axis`` that holds a known (finite) value
        is filled by :func:`pchip_line`; lines with none stay NaN. Lines sharing a known-mask
        are interpolated together.
    """
    v = np.moveaxis(np.asarray(values, dtype=float), axis, -1)
    shape = v.shape
    flat = v.reshape(-1, shape[-1]).copy()
    known = np.isfinite(flat)
    has = known.any(axis=1)
    if has.any():
        patterns, inverse = np.unique(known[has], axis=0, return_inverse=True)
        rows = np.flatnonzero(has)
        for p_idx, mask in enumerate(patterns):
            sel = rows[inverse.ravel() == p_idx]
            flat[sel] = pchip_line(np.asarray(x, dtype=float), flat[sel], mask)
    return np.moveaxis(flat.reshape(shape), -1, axis)


def sequential_pchip(
    values: np.ndarray, coords: Sequence[np.ndarray], order: Sequence[int] | None = None
) -> np.ndarray:
    """Fill the NaN cells of ``values`` by 1-D PCHIP along each axis in turn (Wang et al.
    2017, Fig. 7).

    Parameters
    ----------
    values : numpy.ndarray
        The grid, NaN where not measured.
    coords : sequence of numpy.ndarray
        ``coords[a]``, the strictly increasing coordinates of axis ``a``.
    order : sequence of int or None, default=None
        The axes in the order they are filled (None: 0, 1, ...).

    Returns
    -------
    numpy.ndarray
        the filled grid; measured cells keep their values.

    Raises
    ------
    ValueError
        ``coords`` does not match the shape of ``values``, or a cell is still unknown at the
        end (the known cells did not span the grid).

    Examples
    --------
    The corners of a 3 x 3 grid of ``c + m`` measured, the rest interpolated (exact here, as
    the function is linear along each axis):

    >>> values = np.full((3, 3), np.nan)
    >>> for i in (0, 2):
    ...     for j in (0, 2):
    ...         values[i, j] = i + j
    >>> sequential_pchip(values, [np.arange(3.0), np.arange(3.0)])
    array([[0., 1., 2.],
           [1., 2., 3.],
           [2., 3., 4.]])
    """
    out = np.asarray(values, dtype=float)
    if out.ndim != len(coords):
        raise ValueError(f"{out.ndim}-D values but {len(coords)} coordinate arrays")
    for a, c in enumerate(coords):
        if len(c) != out.shape[a]:
            raise ValueError(f"axis {a}: {out.shape[a]} cells but {len(c)} coordinates")
    for a in order if order is not None else range(out.ndim):
        out = fill_axis(out, np.asarray(coords[a], dtype=float), a)
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{int((~np.isfinite(out)).sum())} cells not reachable from the known "
                         "ones by axis-wise interpolation")
    return out
