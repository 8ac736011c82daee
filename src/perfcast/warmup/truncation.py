"""Has the warm-up ended? MSER-5 truncation and a stationarity test of the stable readings.

A change-point detector cuts a warm-up where its remainder falls under the noise; a smooth
(e.g. exponential) warm-up then leaves part of itself in the stable segment, biasing its mean
by more than the width of its confidence interval. Two tools of the simulation-output
literature, made for exactly this, check the candidate stable segment:

* **MSER-5** (White 1997; batches of 5 as in White, Cobb & Spratt 2000): with ``Z_1 .. Z_k`` the
  means of consecutive batches of 5 readings, truncate the first ``d*`` batches, ``d*``
  minimising the marginal standard error
  ``MSER(d) = sum_{j > d} (Z_j - mean(Z_{d+1..k}))^2 / (k - d)^2`` over ``d <= k / 2``. It
  drops readings while the bias they add outweighs the precision they bring. A minimum at the
  half-way bound means the readings seen are still mostly transient: the warm-up has not
  visibly ended (the rule's own validity condition: the truncation point must lie in the first
  half of the data).
* **Heidelberger & Welch's stationarity test** on the truncated segment: Schruben's
  standardised cumulative sum of the readings (long-run variance from the subsession means) is
  a Brownian bridge under stationarity; its Cramer-von Mises statistic above the 95 % point
  rejects, and the first 10 %, 20 %, ... 50 % are dropped in turn until the rest passes. A
  residual decay MSER left (it under-truncates transients small against the noise) pushes
  the bridge to one side; a stable phase does not.

References
----------
K. P. White Jr., "An effective truncation heuristic for bias reduction in simulation output",
Simulation 69(6):323-334, 1997, doi:10.1177/003754979706900601.

K. P. White Jr., M. J. Cobb, S. C. Spratt, "A comparison of five steady-state truncation
heuristics for simulation", Proc. 2000 Winter Simulation Conference, pp. 755-760,
doi:10.1109/WSC.2000.899870 (MSER-5).

P. Heidelberger, P. D. Welch, "Simulation run length control in the presence of an initial
transient", Operations Research 31(6):1109-1144, 1983, doi:10.1287/opre.31.6.1109 (run-length
control: a precision target met only on data that passed a stationarity test; the test with
truncation of 10 % .. 50 %).

L. Schruben, "Detecting initialization bias in simulation output", Operations Research
30(3):569-590, 1982, doi:10.1287/opre.30.3.569 (the standardised cumulative sum).

T. W. Anderson, D. A. Darling, "Asymptotic theory of certain 'goodness of fit' criteria based on
stochastic processes", Annals of Mathematical Statistics 23(2):193-212, 1952,
doi:10.1214/aoms/1177729437 (the Cramer-von Mises statistic's distribution).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from perfcast.warmup.changepoint import EdmSettings
from perfcast.warmup.season import deseasonalised
from perfcast.warmup.subsession import rounding_sd, subsession_size

#: readings per MSER batch (MSER-5)
MSER_BATCH = 5
#: MSER needs at least this many batches to say anything
MSER_MIN_BATCHES = 10


@dataclass(frozen=True)
class Truncation:
    """MSER's truncation of a series: drop its first ``readings``; ``settled`` is False when
    the minimum lies at the half-way bound (the transient may go on)."""

    readings: int
    settled: bool


def mser_truncation(x: np.ndarray, batch: int = MSER_BATCH) -> Truncation:
    """MSER-``batch`` truncation point of ``x`` (see the module docstring).

    Parameters
    ----------
    x : numpy.ndarray
        the readings, in order.
    batch : int, default=MSER_BATCH
        readings per batch (MSER-5).

    Returns
    -------
    Truncation
        ``readings = batch * d*`` to drop; ``settled`` False when ``d*`` is the last allowed
        (``k // 2``). Fewer than :data:`MSER_MIN_BATCHES` batches, or batch means equal but
        for rounding (:func:`perfcast.warmup.subsession.rounding_sd`): nothing dropped,
        settled.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.r_[np.full(50, 3.0), np.zeros(450)] + np.tile([0.1, -0.1], 250)
    >>> mser_truncation(x)
    Truncation(readings=50, settled=True)
    """
    x = np.asarray(x, dtype=float)
    k = x.shape[0] // batch
    if k < MSER_MIN_BATCHES:
        return Truncation(0, True)
    z = x[: k * batch].reshape(k, batch).mean(axis=1)
    z = z - z.mean()  # (shift-invariant; keeps the sums of squares accurate)
    if float(np.max(np.abs(z))) <= rounding_sd(x):
        return Truncation(0, True)  # constant but for rounding: nothing to truncate
    s1 = np.cumsum(z[::-1])[::-1]  # sum_{j >= d} z_j
    s2 = np.cumsum((z * z)[::-1])[::-1]
    m = np.arange(k, 0, -1, dtype=float)  # k - d
    half = k // 2
    sse = s2[: half + 1] - s1[: half + 1] ** 2 / m[: half + 1]
    mser = np.maximum(sse, 0.0) / m[: half + 1] ** 2
    d = int(np.argmin(mser))
    return Truncation(batch * d, d < half)


#: Heidelberger & Welch's drops of the candidate segment's start, tried in turn
HW_DROPS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)
#: the 95 % point of the Cramer-von Mises statistic of a Brownian bridge, int_0^1 B(t)^2 dt
#: (Anderson & Darling 1952): the stationarity test's critical value at level 0.05
CVM_95 = 0.461


def bridge_statistic(y: np.ndarray, q: int) -> float:
    """Schruben's standardised cumulative sum of ``y`` as a Cramer-von Mises statistic:
    ``B(k/m) = sum_{i<=k} (y_i - mean y) / sqrt(m * s2)``, ``(1/m) sum_k B(k/m)^2``, with ``s2``
    the long-run variance ``q var(block means of q)`` (subsession analysis: ``q`` makes the
    block means about independent). Under stationarity ``B`` tends to a Brownian bridge; an
    initial transient pushes it to one side.

    Block means whose spread is rounding error (a standard deviation at most
    :func:`perfcast.warmup.subsession.rounding_sd` of the readings: a constant series, whose
    computed variance is about ``(eps |mean|)^2``, not 0) give 0: a constant is stationary, and
    a path of rounding errors over their own spread would be a statistic of any size (17.2 on
    3,000 readings of 0.1, where 5 gave 0)."""
    y = np.asarray(y, dtype=float)
    m = y.shape[0]
    h = m // q
    if h < 3:
        return 0.0
    b = y[: h * q].reshape(h, q).mean(axis=1)
    var_b = float(b.var(ddof=1))
    if not var_b > rounding_sd(y) ** 2:
        return 0.0
    s2 = q * var_b
    path = np.cumsum(y - y.mean()) / math.sqrt(m * s2)
    return float(np.dot(path, path)) / m


@dataclass(frozen=True)
class Stationarity:
    """Heidelberger & Welch's test: the readings to drop from the start (``dropped``) for the
    rest to pass, or ``passed`` False when dropping half does not make it pass."""

    dropped: int
    passed: bool
    statistic: float


def stationarity_test(y: np.ndarray, q: int) -> Stationarity:
    """Heidelberger & Welch's stationarity test with truncation: test ``y`` (the
    :func:`bridge_statistic` against :data:`CVM_95`); if it fails, drop the first 10 %, 20 %,
    ... 50 % of ``y`` and test the rest, each with ``q`` readings per block.

    Parameters
    ----------
    y : numpy.ndarray
        the candidate stable readings, in order.
    q : int
        the subsession size of ``y`` (:func:`perfcast.warmup.subsession.subsession_size`).

    Returns
    -------
    Stationarity
        what to drop, whether the rest passed, and the last statistic computed.

    Examples
    --------
    >>> import numpy as np
    >>> y = np.tile([0.1, -0.1], 500)
    >>> stationarity_test(y, 1).passed
    True
    >>> stationarity_test(y + 1.0 * np.exp(-np.arange(1000) / 50), 1)
    Stationarity(dropped=200, passed=True, statistic=0.0...)
    """
    y = np.asarray(y, dtype=float)
    m = y.shape[0]
    stat = 0.0
    for drop in HW_DROPS:
        d = int(drop * m)
        stat = bridge_statistic(y[d:], q)
        if stat <= CVM_95:
            return Stationarity(d, True, stat)
    return Stationarity(int(HW_DROPS[-1] * m), False, stat)


@dataclass(frozen=True)
class Settled:
    """A candidate stable segment after MSER-5 and the stationarity test: ``begin`` (of the
    whole series), the readings ``dropped`` from the candidate's start, whether the warm-up
    has visibly ended (``settled``), and the stationarity test's last statistic (None when no
    subsession size makes the readings about independent)."""

    begin: int
    dropped: int
    settled: bool
    statistic: float | None


def settle(x: np.ndarray, begin: int, end: int, limit: float) -> Settled:
    """MSER-5 truncation, then Heidelberger & Welch's stationarity test, of ``x[begin:end]``.

    Parameters
    ----------
    x : numpy.ndarray
        all readings, in order.
    begin, end : int
        the candidate stable segment ``[begin, end)`` (a change-point detector's).
    limit : float
        the autocorrelation limit of the subsession analysis that gives the test's ``q``.

    Returns
    -------
    Settled
        ``settled`` is False when MSER's minimum lies at its half-way bound or no drop of up
        to half passes the test.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> x = rng.normal(size=1000) + 2.0 * np.exp(-np.arange(1000) / 60)
    >>> s = settle(x, 0, 1000, 0.2)
    >>> s.settled, s.dropped >= 100
    (True, True)
    """

    cut = mser_truncation(x[begin:end])
    begin += cut.readings
    dropped = cut.readings
    q, _ = subsession_size(x[begin:end], limit)
    if q is None:
        return Settled(begin, dropped, cut.settled, None)
    hw = stationarity_test(x[begin:end], q)
    return Settled(begin + hw.dropped, dropped + hw.dropped, cut.settled and hw.passed,
                   hw.statistic)


def without_cycle(x: np.ndarray, edm: EdmSettings) -> tuple[np.ndarray, EdmSettings]:
    """The readings the change-point detector and :func:`settle` are to judge, and the
    detector's settings for them: with ``edm.cycles`` (robust mode), ``x`` without its cycle
    and ``cycles`` False (the detector would take the same cycle out; one search for it
    serves both), else ``x`` and ``edm``.

    A cycle the same in both halves of the readings
    (:func:`perfcast.warmup.season.deseasonalised`) is no transient, but it is not noise to
    Schruben's cumulative sum either: its partial sums swing by up to
    ``A / (2 sin(pi / P))`` (amplitude ``A``, period ``P``) while the bridge is scaled by
    ``sqrt(m sigma^2)``, the noise's, which the subsession means (``q`` a multiple of ``P``)
    estimate without the cycle. Their ratio falls as ``1 / sqrt(m)`` only: on
    ``1 + 0.5 sin(2 pi t / 7)`` with noise of sd 0.01 the statistic was 13 to 20 on 500 readings
    against the bound 0.461 (30 of 30 seeds "not settled", half of the readings dropped),
    and ``perfcast watch`` waited for about 4,900 readings. With the cycle taken out MSER-5 and
    the test see the noise: the same truncation and verdict as on the noise alone. With
    ``cycles`` false (``--keep-cycles``) the cycle is judged as noise throughout, as asked. The
    estimates stay of the readings themselves.

    Parameters
    ----------
    x : numpy.ndarray
        the readings, in order.
    edm : EdmSettings
        the change-point detector's settings.

    Returns
    -------
    readings : numpy.ndarray
        what the detector and :func:`settle` are to judge.
    detector : EdmSettings
        the detector's settings for them.

    Examples
    --------
    >>> import numpy as np
    >>> from perfcast.warmup.cli_settings import command_settings
    >>> t = np.arange(500)
    >>> x = 1 + 0.5 * np.sin(2 * np.pi * t / 7) + 0.01 * np.random.default_rng(0).normal(size=500)
    >>> z, edm = without_cycle(x, command_settings("stable").edm)
    >>> round(float(np.std(z)), 3), edm.cycles
    (0.01, False)
    >>> settle(x, 0, 500, 0.2).settled, settle(z, 0, 500, 0.2).settled
    (False, True)
    """
    if edm.mode == "robust" and edm.cycles and x.shape[0]:
        return deseasonalised(x)[0], dataclasses.replace(edm, cycles=False)
    return x, edm
