"""Do the readings repeat? A test for a cycle (a season) in a series of readings.

A cycle in timings (a periodic background task, a buffer that fills and flushes, a garbage
collector on a schedule) is neither noise nor a change: the change-point detector's dependence
factor takes it for dependence and raises its threshold, so that a change smaller than the
cycle's swing goes unseen. This module finds such a cycle (:func:`season`), so that it is
reported, and takes it out (:func:`component`, :func:`deseasonalised`) when it is the same
throughout, so that the detector judges changes against the noise rather than the cycle.

The test works on the differences of the readings, ``d_t = x_{t+1} - x_t``: a trend becomes a
constant and a change of level a single spike, set to the median (:func:`_cleaned`), while a
cycle of period ``P`` stays a cycle. With ``I_k = |sum_t d_t exp(-2 pi i k t / m)|^2 / m`` the
periodogram of the ``m`` differences, each ordinate divided by the spectrum around it (the
running median of ``SPECTRUM_WINDOW`` ordinates over ``ln 2``, the median of an exponential
variable of mean 1) is about exponential with mean 1 wherever the spectrum is smooth (white,
AR(1), a random walk's differences), and a cycle is the largest ratio beyond
``FACTOR * ln(M / alpha)`` over the ``M`` ordinates looked at (frequencies of at least
``MIN_CYCLES`` cycles in the series). The classical bound ``ln(M / alpha)`` (the maximum of
``M`` exponential ratios) does not hold with an estimated spectrum: the running median's own
scatter inflates the ratios, and ``FACTOR`` = 1.8 brings the share of series without a cycle
called cyclic to at most 0.7 % of 150 i.i.d. normal, lognormal, t(3), AR(1) (``phi`` 0.5 and
0.9) series and random walks each of 100 to 5,000 readings (1.3 % in another draw: 2 of the
150 t(3) series of 100 readings; 0.3 % of 1,000 normal and AR(1) 0.5 series of 100 and 200
readings, where 1.6 gave 1-2 %; unit test ``test_season_false_detections``: at most 2 % of 100
of each, 100 to 3,000 readings).

A cycle that is not a sine (a sawtooth: a slow climb and a fall) has its power spread over its
harmonics, and the largest ordinate may be a harmonic: the cycle is the lowest frequency
``f / h`` (``h`` up to ``MAX_HARMONIC``) whose ordinate is itself significant among
``MAX_HARMONIC`` tries, searched again below each one found (a sawtooth's harmonics are all as
strong, and its largest ordinate may be its tenth, or its seventh, which no smaller harmonic
divides). The period is then refined between the
neighbouring ordinates (the largest ``|sum_t d_t exp(-2 pi i f t)|`` on a grid of 81
frequencies), so that periods that are not a whole number of readings are found, and the
cycle's first-harmonic amplitude (in reading units) is fitted by least squares on the
differences.

References
----------
R. A. Fisher, "Tests of significance in harmonic analysis", Proc. R. Soc. Lond. A 125:54-59,
1929, doi:10.1098/rspa.1929.0151 (the largest periodogram ordinate as a test for a periodic
component).

M. B. Priestley, *Spectral Analysis and Time Series*, Academic Press, 1981 (the periodogram's
ordinates over the spectrum as independent exponential variables, and tests for a periodic
component against a smooth spectrum).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

#: ordinates in the running median that estimates the spectrum around each ordinate
SPECTRUM_WINDOW = 41
#: the largest ratio must exceed this multiple of ln(M / alpha) (see the module docstring)
FACTOR = 1.8
#: a cycle must repeat at least this many times in the series
MIN_CYCLES = 4
#: shorter series are not tested (the spectrum around an ordinate needs
#: ``SPECTRUM_WINDOW`` others)
MIN_READINGS = 100
#: harmonics looked at below the largest ordinate's frequency for the cycle's own
MAX_HARMONIC = 12
#: the test looks at the first readings only (enough for any period it can report)
HEAD = 20_000
#: differences beyond this many robust standard deviations are steps or spikes, not the cycle
STEP_SD = 5.0
#: frequencies tried between the largest ordinate's neighbours
REFINE_STEPS = 81
#: golden-section steps of the frequency's refinement before a cycle is taken out (the bracket
#: shrinks 0.618 times each)
REFINE_GOLDEN = 30
#: a cycle is taken out (:func:`deseasonalised`) only when the halves of the series do not
#: differ in it at this level (an F test of its harmonics' coefficients, half against half)
SAME_CYCLE_ALPHA = 0.01
#: harmonics fitted for the cycle's shape: at most one coefficient (two per harmonic) per this
#: many differences
DIFFERENCES_PER_HARMONIC = 20
#: a harmonic's column of the design smaller than this fraction of the largest is set to 0
#: (:func:`_difference_design`)
NYQUIST_TOL = 1e-6


@dataclass(frozen=True)
class Season:
    """A cycle found in the readings.

    Attributes
    ----------
    period : float
        Readings per cycle (not necessarily a whole number).
    amplitude : float
        Amplitude of the cycle's first harmonic, in the readings' unit.
    strength : float
        The largest periodogram ratio over the detection threshold (> 1).
    """

    period: float
    amplitude: float
    strength: float

    def to_dict(self) -> dict:
        return {"period": self.period, "amplitude": self.amplitude, "strength": self.strength}


def season_note(cycle: Season, taken_out: bool | None = None) -> str:
    """What a found cycle means for the change points, in one sentence for a warning:
    ``taken_out`` says whether the detector took it out of these readings (None: not known
    here, both cases are said)."""
    found = (f"the readings repeat every {cycle.period:.3g} readings (amplitude "
             f"{cycle.amplitude:.3g})")
    kept = "judged as if it were noise, so that a change smaller than its swing is not found"
    if taken_out is None:
        return (f"{found}; the change points are searched with the cycle taken out when both "
                f"halves of the readings show the same one, and otherwise {kept}")
    if taken_out:
        return (f"{found}; the cycle, the same in both halves of the readings, was taken out "
                "before the change points were searched")
    return (f"{found}; the cycle was kept in (it differs between the halves of the readings, "
            f"or cycles is false) and the change points {kept}")


def _cleaned(d: np.ndarray) -> np.ndarray:
    """The differences about their median, with a step's set to it.

    A step of the readings is one large difference. Its power spreads over every frequency,
    raises the spectrum a cycle is compared with and, added to the cycle's own ordinate with
    some phase, can cancel part of it: a cycle of half the noise's sd beside a step of 40 sd was
    found in 0 % of 200 series of 600 readings (97.5 % without the step). Differences beyond
    ``STEP_SD`` robust standard deviations (1.4826 MAD) are taken for steps or spikes and set to
    the median (found then in 96.5 %; clipped at the bound instead, in 44 %) when there are
    fewer than ``MIN_CYCLES`` of them: more may be the cycle's own swing (a sawtooth's falls) or
    heavy tails, and are kept.
    """
    d = d - np.median(d)
    bound = STEP_SD * 1.4826 * float(np.median(np.abs(d)))
    beyond = np.abs(d) > bound
    return np.where(beyond, 0.0, d) if 0 < beyond.sum() < MIN_CYCLES else d


def _running_median(v: np.ndarray, window: int) -> np.ndarray:
    half = min(window // 2, v.shape[0] - 1)
    padded = np.pad(v, half, mode="reflect")
    return np.median(np.lib.stride_tricks.sliding_window_view(padded, 2 * half + 1), axis=1)


def season(x: np.ndarray, alpha: float = 0.01) -> Season | None:
    """The cycle of ``x`` (module docstring), or None when the readings show none at level
    ``alpha`` or are fewer than ``MIN_READINGS``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> t = np.arange(600)
    >>> s = season(2 * np.sin(2 * np.pi * t / 12.5) + rng.normal(size=600))
    >>> round(s.period, 1), round(s.amplitude, 1)
    (12.5, 2.0)
    >>> season(rng.normal(size=600)) is None, season(np.cumsum(rng.normal(size=600))) is None
    (True, True)
    """
    x = np.asarray(x, dtype=float)[:HEAD]
    n = x.shape[0]
    if n < MIN_READINGS or not np.isfinite(x).all():
        return None
    d = _cleaned(np.diff(x))
    m = d.shape[0]
    ordinates = np.abs(np.fft.rfft(d)[1:(m + 1) // 2]) ** 2 / m  # k = 1 .. below m / 2
    base = _running_median(ordinates, SPECTRUM_WINDOW) / math.log(2)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(base > 0, ordinates / base, 0.0)
    first = max(2, math.ceil(MIN_CYCLES * m / n))  # k: periods of at most n / MIN_CYCLES
    if first > ratio.shape[0]:
        return None
    ratio[:first - 1] = 0.0
    j = int(np.argmax(ratio))
    threshold = FACTOR * math.log(ratio.shape[0] / alpha)
    if not ratio[j] > threshold:
        return None
    k = j + 1
    fundamental = FACTOR * math.log(MAX_HARMONIC / alpha)
    lower = True
    while lower:  # the lowest significant subharmonic is the cycle, searched again from each
        lower = False  # one found (a sawtooth's largest ordinate may be its 10th harmonic)
        for h in range(MAX_HARMONIC, 1, -1):
            near = [c for c in range(round(k / h) - 1, round(k / h) + 2) if first <= c < k]
            if near and max(ratio[c - 1] for c in near) > fundamental:
                k, lower = max(near, key=lambda c: ratio[c - 1]), True
                break
    freqs = np.linspace((k - 1) / m, (k + 1) / m, REFINE_STEPS)
    freqs = freqs[(freqs > 0) & (freqs < 0.5)]
    f = float(freqs[int(np.argmax([_power(d, fr, 1) for fr in freqs]))])
    # x_t = a cos(2 pi f t) + b sin(2 pi f t) + level: its differences, with a constant for the
    # drift, fitted by least squares
    coef, _, _ = _fit(d, f, 1)
    return Season(period=1 / f, amplitude=float(math.hypot(coef[1], coef[2])),
                  strength=float(ratio[j] / threshold))


def _harmonics(period: float, m: int) -> int:
    """Harmonics of a cycle of ``period`` readings fitted on ``m`` differences: up to the
    Nyquist frequency (half a cycle per reading: a cycle of an even number of readings has a
    component there), at most ``MAX_HARMONIC``, and a coefficient per
    ``DIFFERENCES_PER_HARMONIC`` differences."""
    return max(1, min(MAX_HARMONIC, math.floor(period / 2), m // (2 * DIFFERENCES_PER_HARMONIC)))


def _difference_design(f: float, n: int, harmonics: int) -> np.ndarray:
    """The differences of ``cos(2 pi h f t)`` and ``sin(2 pi h f t)``, ``h = 1..harmonics``,
    over ``t = 0..n-1``: one column each."""
    # exp(i h phase_(t+1)) - exp(i h phase_t) = exp(i h phase_t) (exp(2 pi i h f) - 1)
    z = np.exp(2j * np.pi * f * np.arange(n - 1))
    zh = np.empty((harmonics, n - 1), dtype=complex)
    zh[0] = z
    for h in range(1, harmonics):
        np.multiply(zh[h - 1], z, out=zh[h])
    zh *= (np.exp(2j * np.pi * f * np.arange(1, harmonics + 1)) - 1)[:, None]
    design = np.empty((n - 1, 2 * harmonics))
    design[:, 0::2], design[:, 1::2] = zh.real.T, zh.imag.T
    # a harmonic at (or within rounding of) the Nyquist frequency, half a cycle per reading
    # (a cycle of 2 readings), has a sine that is 0 at every reading: its column is rounding
    # error, which a least-squares fit would scale up into a coefficient of noise
    norms = np.abs(design).max(axis=0)
    design[:, norms <= NYQUIST_TOL * max(float(norms.max()), 1e-300)] = 0.0
    return design


def _fit(d: np.ndarray, f: float, harmonics: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Least squares of the differences ``d`` on a constant and the harmonics of ``f``:
    (coefficients, the harmonics' design, residual sum of squares)."""
    trig = _difference_design(f, d.shape[0] + 1, harmonics)
    design = np.column_stack([np.ones(d.shape[0]), trig])
    coef, *_ = np.linalg.lstsq(design, d, rcond=None)
    return coef, trig, float(np.sum((d - design @ coef) ** 2))


def _power(d: np.ndarray, f: float, harmonics: int) -> float:
    """The periodogram of the differences summed over the harmonics of ``f``:
    ``sum_h |sum_t d_t exp(-2 pi i h f t)|^2``."""
    z = np.exp(-2j * np.pi * f * np.arange(d.shape[0]))
    zh = np.ones_like(z)
    total = 0.0
    for _ in range(harmonics):
        zh *= z
        total += abs(np.dot(d, zh)) ** 2
    return total


def _refined(d: np.ndarray, f: float, harmonics: int) -> float:
    """The frequency near ``f`` whose harmonics, fitted by least squares, leave the least
    residual in the differences (the least-squares frequency estimate).

    :func:`season` places it within ``1 / (80 m)`` on its grid, enough to name the period but
    not to take a cycle out: with little noise beside it, what is left drifts out of phase
    over the series. A golden-section search of :func:`_fit`'s residual sum of squares over
    that bracket narrows it to ``0.618^REFINE_GOLDEN`` of it (about 1e-6). The periodogram's
    maximum (:func:`_power`) is not the place: a real cycle's mirror image at ``-f`` leaks into
    it, and on 300 noise-free readings of a cycle of 3 it lay 3e-6 off, enough to leave a
    residual cycle that the test of the halves (:func:`component`) took for a change of the
    cycle; the least-squares fit accounts for the image.

    References
    ----------
    D. C. Rife and R. R. Boorstyn, "Single-tone parameter estimation from discrete-time
    observations", IEEE Transactions on Information Theory 20(5):591-598, 1974,
    doi:10.1109/TIT.1974.1055282.
    """
    m = d.shape[0]
    lo, hi = f - 1.0 / (80 * m), f + 1.0 / (80 * m)
    if f + 1.0 / (40 * m) >= 0.5 / harmonics:
        # the top harmonic within a step of the grid (which stops short of it) of the Nyquist
        # frequency: a cycle of 2 readings (of 4 with its second harmonic, ...) alternates;
        # near there the sine is a slowly growing alternation, nearly zero, that a fit would
        # give any coefficient
        return 0.5 / harmonics
    if not 0 < lo:
        return f

    dc = d - d.mean()
    dd = float(dc @ dc)

    def rss(fr: float) -> float:  # by the normal equations: 2 h columns (centred), m >> 2 h
        design = _difference_design(fr, m + 1, harmonics)
        design -= design.mean(axis=0)  # the constant, by centring
        b = design.T @ dc
        coef = np.linalg.lstsq(design.T @ design, b, rcond=None)[0]
        return dd - float(b @ coef)

    ratio = (math.sqrt(5) - 1) / 2
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    ra, rb = rss(a), rss(b)
    for _ in range(REFINE_GOLDEN):
        if ra <= rb:
            hi, b, rb = b, a, ra
            a = hi - ratio * (hi - lo)
            ra = rss(a)
        else:
            lo, a, ra = a, b, rb
            b = lo + ratio * (hi - lo)
            rb = rss(b)
    return (lo + hi) / 2


def component(x: np.ndarray, cycle: Season) -> np.ndarray | None:
    """The cycle's part of every reading of ``x`` (mean 0), or None when the two halves of the
    series differ in it.

    Its shape is a sum of harmonics of the cycle's frequency ``f`` (:func:`_harmonics`;
    ``f`` refined by :func:`_refined`), fitted by least squares on the differences (with a
    constant for a trend, and a step's difference set aside as :func:`season` does), so that
    steps and trends leave the fit alone. The same fit with separate coefficients for each
    half of the differences tests whether the cycle stays the same (a Chow test:
    ``F = ((RSS - RSS_halves) / q) / (RSS_halves / (m - p))`` with ``q`` the harmonics'
    coefficients; differing at level ``SAME_CYCLE_ALPHA``: None). A cycle that grows with the
    level, or that begins or ends with a change, taken out of the whole series, would leave a
    cycle of its own where it differs and hide the change. The fit and the test use the first
    ``HEAD`` readings, as :func:`season` does; the component is extended to every reading.

    References
    ----------
    G. C. Chow, "Tests of equality between sets of coefficients in two linear regressions",
    Econometrica 28(3):591-605, 1960, doi:10.2307/1910133.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> t = np.arange(600)
    >>> x = 2 * np.sin(2 * np.pi * t / 12.5) + rng.normal(size=600)
    >>> c = component(x, season(x))
    >>> round(float(np.std(x - c)), 1)  # the noise's sd of 1 is left
    1.0
    """
    x = np.asarray(x, dtype=float)
    d = _cleaned(np.diff(x[:HEAD]))
    m = d.shape[0]
    harmonics = _harmonics(cycle.period, m)
    f = _refined(d, 1.0 / cycle.period, harmonics)
    coef, trig, rss = _fit(d, f, harmonics)
    first = (np.arange(m) < m // 2)[:, None]
    halves = np.column_stack([np.ones(m), trig * first, trig * ~first])
    q = int(np.count_nonzero(np.abs(trig).max(axis=0)))  # the sine at Nyquist is no column
    dof = m - 1 - 2 * q
    if dof > 0 and q > 0:
        fitted, *_ = np.linalg.lstsq(halves, d, rcond=None)
        rss_halves = float(np.sum((d - halves @ fitted) ** 2))
        # an exact fit (a noise-free cycle) is the same cycle in both halves; a test of
        # rounding errors against each other would say anything
        if rss > 1e-12 * float(np.sum(d ** 2)) and rss_halves > 1e-12 * max(rss, 1e-300):
            stat = ((rss - rss_halves) / q) / (rss_halves / dof)
            if special.fdtrc(q, dof, max(stat, 0.0)) < SAME_CYCLE_ALPHA:
                return None
    z = np.exp(2j * np.pi * f * np.arange(x.shape[0]))
    zh = np.ones_like(z)
    out = np.zeros(x.shape[0])
    for h in range(1, harmonics + 1):
        zh *= z  # cos(h phase) + i sin(h phase)
        out += coef[2 * h - 1] * zh.real + coef[2 * h] * zh.imag
    return out - out.mean()


def deseasonalised(x: np.ndarray, alpha: float = 0.01) -> tuple[np.ndarray, Season | None]:
    """``x`` with its cycle taken out (:func:`season`, :func:`component`) and the cycle; ``x``
    itself and None when it shows none, or one that differs between its halves."""
    x = np.asarray(x, dtype=float)
    cycle = season(x, alpha)
    if cycle is None:
        return x, None
    part = component(x, cycle)
    return (x, None) if part is None else (x - part, cycle)
