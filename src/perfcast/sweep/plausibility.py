"""Whether a fitted model of a positive effect is plausible where it is used.

A time, an energy or a memory size that is positive in every measurement is not modelled by a
curve that reaches zero, or that turns over (rises, then falls, or the reverse), where the data
show no such turn: between the measured levels such a curve fits the noise of a few levels,
and beyond them it answers wrongly (a cubic in ``flop`` fitted to four sizes fell below zero
between two of them; a quadratic through ``3 + 0.2 log2(p)^3`` peaked at ``p = 113``, just
beyond the data, and predicted 76 % too low at 128). Each model is evaluated on lines through
the checked range (the measured levels of each regressor, stretched to the points a
prediction asks for): along each regressor, at each measured combination of the others.

* **Zero**: a model that gives 0 or less anywhere on the lines is implausible.
* **A turn**: a model whose values along a line go up and down by more than the noise of a
  configuration's value is implausible, unless the configuration values along that line turn
  by more than twice that noise too (a real optimum, e.g. of a thread count), and then only
  within the measured range; beyond it a turn is never taken from the data.
* **A turn ahead** (:func:`turns_beyond`): a model that rises (or falls) at the largest level
  measured and turns beyond it, the polynomial counterpart of a law rising through a negative
  exponent (:meth:`perfcast.sweep.normalform.Hypothesis.rises_by_a_negative_exponent`): the
  selection prefers growth to it unless it fits better by more than the noise.

References: the same preference for monotone growth in performance models: A. Calotoiu et
al., "Using automated performance modeling to find scalability bugs in complex codes", SC
2013 (non-negative exponents only in the normal form).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from perfcast.sweep.selection import Candidate

#: points of a checked line between the smallest and the largest value
LINE_POINTS = 64
#: combinations of the other regressors checked per regressor (the measured ones, sorted)
MAX_LINES = 32
#: the configuration values along a line must turn by this many times the noise of a
#: configuration's value for a model's turn within the measured range to be taken from them
DATA_TURN_FACTOR = 2.0
#: a turn by less than this fraction of the value is not counted, whatever the noise: on
#: noise-free levels a law's dip of a few parts in a thousand near the smallest level is
#: rounding of its shape, not a turn that changes an answer (a timing is not read to it)
MIN_TURN = 0.01
#: values of a line within this fraction of its largest absolute value of its minimum are
#: the same minimum (:func:`lowest`)
TIE_VALUE = 1e-9
#: a polynomial turns "ahead" when its slope at the largest level and at this many spans of
#: the data beyond it differ in sign (for a polynomial: the leading coefficient's sign)
AHEAD_SPANS = 100.0


def grid(lo: float, hi: float, levels: np.ndarray, n: int = LINE_POINTS) -> np.ndarray:
    """``n`` values from ``lo`` to ``hi`` (geometric when both are positive and ``hi / lo``
    is at least 8, else linear) and the measured ``levels``, sorted and distinct.

    Parameters
    ----------
    lo, hi : float
        The range's ends.
    levels : numpy.ndarray
        The measured values, kept exactly.
    n : int, default=LINE_POINTS
        Points of the grid besides them.

    Returns
    -------
    numpy.ndarray
        The sorted values.

    Examples
    --------
    >>> grid(2.0, 64.0, np.array([2.0, 64.0]), n=6).round(9).tolist()
    [2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
    """
    if lo > 0 and hi / lo >= 8:
        xs = np.geomspace(lo, hi, n)
    else:
        xs = np.linspace(lo, hi, n)
    return np.unique(np.concatenate([xs, np.asarray(levels, dtype=float)]))


def excursion(values: np.ndarray) -> float:
    """How far ``values`` (in order along a line) go against their overall direction: half
    the total variation minus the net change; 0 for a monotone sequence.

    Examples
    --------
    >>> excursion(np.array([1.0, 2, 3])), excursion(np.array([1.0, 3, 2]))
    (0.0, 1.0)
    """
    v = np.asarray(values, dtype=float)
    if len(v) < 3:
        return 0.0
    return float((np.abs(np.diff(v)).sum() - abs(v[-1] - v[0])) / 2)


def _value(c: Candidate, X: np.ndarray) -> np.ndarray:
    coef = np.array([row["coef"] for row in c.fit.coefficients()], dtype=float)
    with np.errstate(all="ignore"):
        return c.raw_design(X) @ coef


def _lines(data: np.ndarray, j: int,
           asked: np.ndarray | None) -> list[tuple[np.ndarray, float, float]]:
    """The checked lines along regressor ``j``: (a row of ``data``'s width with column ``j``
    unset, the line's smallest and largest value of ``j``). Through each measured
    combination of the other regressors (at most ``MAX_LINES``), from the smallest to the
    largest value of ``j`` measured with it (a design along a diagonal has no line of 2
    values: its measured points are not joined by lines through unmeasured corners), reaching
    the asked points on that line; through each asked point, over the whole measured range of
    ``j`` and the point."""
    others = np.delete(data, j, axis=1)
    out = []
    for o in (np.unique(others, axis=0)[:MAX_LINES] if others.shape[1] else np.zeros((1, 0))):
        on = (others == o).all(axis=1)
        vals = data[on, j]
        if asked is not None and len(asked):
            vals = np.concatenate([vals, asked[(np.delete(asked, j, axis=1) == o).all(axis=1), j]])
        out.append((np.insert(o, j, np.nan), float(vals.min()), float(vals.max())))
    for a in (asked if asked is not None else np.empty((0, data.shape[1]))):
        out.append((np.insert(np.delete(a, j), j, np.nan), float(min(data[:, j].min(), a[j])),
                    float(max(data[:, j].max(), a[j]))))
    return out


def lowest(f: np.ndarray) -> int:
    """The first index of the smallest of the values ``f`` along a line, values within
    ``TIE_VALUE`` times the largest absolute value of it being equal: a model with two equal
    minima (symmetric about the middle of the range) is reported at the first, not at
    whichever the rounding of its coefficients makes lower (the fit of every run and of its
    compressed repetitions agree to about 1e-15, not exactly).

    Examples
    --------
    >>> lowest(np.array([3.0, -1.0, 2.0, -1.0 - 1e-15, 3.0]))
    1
    >>> lowest(np.array([3.0, -1.0, 2.0, -1.5, 3.0]))
    3
    """
    f = np.asarray(f, dtype=float)
    tie = TIE_VALUE * float(np.max(np.abs(f)))
    return int(np.flatnonzero(f <= f.min() + tie)[0])


def where(names: Sequence[str], X: np.ndarray) -> str:
    """``p=113`` or ``size=512, workers=2``: a point named by its regressors."""
    return ", ".join(f"{n}={v:.4g}" for n, v in zip(names, np.atleast_1d(X), strict=True))


def implausible(c: Candidate, noise: float, asked: np.ndarray | None = None,
                groups: Mapping[tuple[float, ...], float] | None = None) -> str | None:
    """Why the model ``c`` of a positive effect is implausible on its checked range, or None
    (:func:`implausible_values` of its value at its ``data``).

    Parameters
    ----------
    c : Candidate
        A fitted candidate (its ``data``: the regressor rows it was fitted on).
    noise : float
        The relative noise of a configuration's value (:func:`implausible_values`).
    asked : numpy.ndarray, optional, default=None
        Rows (``c.x`` order) of the points a prediction asks for.
    groups : mapping, optional, default=None
        The configuration values keyed by the regressor row.

    Returns
    -------
    str or None
        Why, or None when plausible.

    Examples
    --------
    >>> import numpy as np
    >>> from perfcast.sweep import design as dz
    >>> from perfcast.sweep.ols import fit_terms
    >>> from perfcast.sweep.selection import Candidate
    >>> p = np.array([2.0, 4, 8, 16, 32, 64])
    >>> y = 0.9758 + 0.9846 * p - 0.004344 * p ** 2  # peaks at p = 113
    >>> fit = fit_terms(p.reshape(-1, 1), y, dz.polynomial_terms(2), ["p"])
    >>> c = Candidate("poly[p]^2", "polynomial", ["p"], fit, 0.0, data=p.reshape(-1, 1))
    >>> print(implausible(c, 0.0))
    None
    >>> implausible(c, 0.0, asked=np.array([[128.0]]))
    'turns over at p=112.2, beyond the measured range (p 2 to 64)'
    """
    if c.data is None or not len(c.data):
        return None
    return implausible_values(lambda X: _value(c, X), np.asarray(c.data, dtype=float), c.x,
                              noise, asked, groups)


def implausible_values(value: Callable[[np.ndarray], np.ndarray], data: np.ndarray,
                       names: Sequence[str], noise: float, asked: np.ndarray | None = None,
                       groups: Mapping[tuple[float, ...], float] | None = None) -> str | None:
    """Why a model of a positive effect is implausible on its checked range, or None.

    Parameters
    ----------
    value : callable
        The model's value at regressor rows (m, d).
    data : numpy.ndarray
        (n, d) the regressor rows it was fitted on.
    names : sequence of str
        The d regressors' names.
    noise : float
        The relative noise of a configuration's value (its standard deviation over its
        value, :func:`relative_noise`): a turn by a smaller fraction of the value is not
        counted (turns are measured on the logarithm of the values).
    asked : numpy.ndarray, optional, default=None
        Rows (``c.x`` order) of the points a prediction asks for: the checked range reaches
        them.
    groups : mapping, optional, default=None
        The configuration values (the effect aggregated per configuration), keyed by the
        regressor row: a turn they show beyond ``DATA_TURN_FACTOR`` times ``noise`` lets the
        model turn within the measured range.

    Returns
    -------
    str or None
        ``"reaches 0 (-3.2) at flop=2.17e10, inside the measured range"``, ``"turns over at
        p=113, beyond the measured range"``, or None when plausible.

    Examples
    --------
    >>> p = np.array([[1.0], [2], [4], [8]])
    >>> implausible_values(lambda X: 9 - X[:, 0], p, ["p"], 0.0, asked=np.array([[16.0]]))
    'reaches -7 at p=16, outside the measured range (p 1 to 8)'
    """
    data = np.asarray(data, dtype=float)
    asked = None if asked is None or not len(asked) else np.asarray(asked, dtype=float)
    lo_m, hi_m = data.min(axis=0), data.max(axis=0)
    measured = ", ".join(f"{n} {a:.4g} to {b:.4g}" for n, a, b in zip(names, lo_m, hi_m,
                                                                       strict=True))
    for j in range(data.shape[1]):
        levels = np.unique(data[:, j])
        for base, a, b in _lines(data, j, asked):
            if a == b:
                continue
            xs = grid(a, b, levels[(levels >= a) & (levels <= b)])
            X = np.tile(base, (len(xs), 1))
            X[:, j] = xs
            with np.errstate(all="ignore"):
                f = np.asarray(value(X), dtype=float)
            if not np.isfinite(f).all():
                continue  # not defined there: the prediction says so, naming the point
            low = lowest(f)
            if f[low] <= 0:
                inside = lo_m[j] <= xs[low] <= hi_m[j]
                return (f"reaches {f[low]:.4g} at {where(names, X[low])}, "
                        f"{'inside' if inside else 'outside'} the measured range ({measured})")
            f = np.log(f)
            # the whole line; where the data turn, only the stretches beyond them
            segments = [np.ones(len(xs), dtype=bool)]
            if _data_turn(data, j, base, groups) > DATA_TURN_FACTOR * max(noise, MIN_TURN):
                segments = [xs <= lo_m[j], xs >= hi_m[j]]
            for seg in segments:
                if seg.sum() >= 3 and excursion(f[seg]) > max(noise, MIN_TURN):
                    k = _turning_point(f[seg])
                    at = X[seg][k]
                    inside = lo_m[j] <= at[j] <= hi_m[j]
                    return (f"turns over at {where(names, at)}, "
                            f"{'inside' if inside else 'beyond'} the measured range "
                            f"({measured})")
    return None


def _turning_point(f: np.ndarray) -> int:
    """The index where ``f`` first changes direction (its last without a change)."""
    steps = np.sign(np.diff(f))
    start = next((v for v in steps if v != 0), 0)
    return next((i for i, v in enumerate(steps) if v != 0 and v != start), len(f) - 1)


def _data_turn(data: np.ndarray, j: int, base: np.ndarray,
               groups: Mapping[tuple[float, ...], float] | None) -> float:
    """The excursion of the logarithm of the configuration values along the line of
    regressor ``j`` through ``base`` (0 without them)."""
    if not groups:
        return 0.0
    others = [k for k in range(len(base)) if k != j]
    pts = sorted((key[j], v) for key, v in groups.items()
                 if all(key[k] == base[k] for k in others))
    values = np.array([v for _, v in pts])
    return excursion(np.log(values)) if len(pts) >= 3 and (values > 0).all() else 0.0


def turns_beyond(c: Candidate) -> bool:
    """Whether a polynomial or an OLS form rises (or falls) at the largest measured value of
    a regressor and turns beyond it: its slope there and ``AHEAD_SPANS`` spans of the data
    further differ in sign, at some measured combination of the others (a polynomial's
    leading coefficient against its slope at the data's end). The laws' counterpart is
    :meth:`perfcast.sweep.normalform.Hypothesis.rises_by_a_negative_exponent`.

    Examples
    --------
    >>> import numpy as np
    >>> from perfcast.sweep import design as dz
    >>> from perfcast.sweep.ols import fit_terms
    >>> from perfcast.sweep.selection import Candidate
    >>> p = np.array([2.0, 4, 8, 16, 32, 64])
    >>> fit = fit_terms(p.reshape(-1, 1), 1 + p - 0.004 * p ** 2, dz.polynomial_terms(2), ["p"])
    >>> turns_beyond(Candidate("poly[p]^2", "polynomial", ["p"], fit, 0.0,
    ...                        data=p.reshape(-1, 1)))
    True
    """
    if c.data is None or not len(c.data) or c.kind == "normal_form":
        return False
    data = np.asarray(c.data, dtype=float)
    for j in range(data.shape[1]):
        lo, hi = float(data[:, j].min()), float(data[:, j].max())
        if hi == lo:
            continue
        h = (hi - lo) * 1e-3
        far = hi + AHEAD_SPANS * (hi - lo)
        for base, _, _ in _lines(data, j, None):
            X = np.tile(base, (4, 1))
            X[:, j] = [hi - h, hi, far - h * AHEAD_SPANS, far]
            f = _value(c, X)
            near, ahead = f[1] - f[0], f[3] - f[2]
            if np.isfinite([near, ahead]).all() and near * ahead < 0:
                return True
    return False


def relative_noise(floor_smape: float) -> float:
    """The relative noise of a configuration's value (standard deviation over value) from
    the noise floor, the expected relative error 100 sqrt(2 / pi) s / |value| in percent
    (:func:`perfcast.sweep.normalform.noise_floor`).

    Examples
    --------
    >>> round(relative_noise(100 * (2 / np.pi) ** 0.5 * 0.05), 6)
    0.05
    """
    if not np.isfinite(floor_smape):
        return 0.0
    return float(floor_smape / (100 * np.sqrt(2 / np.pi)))
