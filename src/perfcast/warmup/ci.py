"""Confidence interval of a mean from correlated readings, and the sample size a target needs.

After subsession analysis (block size ``q``, ``h = n // q`` block means with variance
``var_q``) the interval of the arithmetic mean is

    mean +- t(1 - (1 - CL)/2, h - 1) * sqrt(var_q / h)        (width = 2 x that)

The blocks end at the newest reading, and ``mean`` is the mean of the ``h q`` readings in
them (``n_used``, the newest): the readings the interval is of. The ``n - h q < q`` left over
are the oldest, nearest a warm-up; leaving out the newest instead (blocks from the first
reading) put the estimate on older readings than those the output names (on AR(1) readings
with phi 0.95, 0.17 of their mean's distance from the mean of all 1,000 readings).

and the number of readings for a target width ``w`` (default 10% of the mean) is
``q * max(ceil(var_q * (t / e)^2), min_samples)`` with ``e = w / 2`` (Pilot's formula;
``min_samples`` is Pilot's per-preset minimum number of subsession means: quick 30, normal 50,
strict 200).

The harmonic mean ``H = 1 / mean(1 / x)`` (the right mean of rates, e.g. throughputs) gets its
interval by the same analysis of ``1 / x``: the interval ``[L, U]`` of ``mean(1/x)`` maps to
``[1/U, 1/L]`` for ``H``. The map is monotone, so the coverage is exactly that of the
``1/x`` interval (Pilot instead applies the symmetric formula to block harmonic means).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from scipy import special

from perfcast.warmup.subsession import block_means, rounding_sd, subsession_size

#: a CI needs at least this many readings (central limit theorem; Pilot's minimum)
MIN_READINGS = 30


class NotEnoughDataError(ValueError):
    """The data cannot support the requested estimate (too few, too correlated, degenerate)."""


def t_quantile(confidence: float, df: int) -> float:
    """Two-sided Student t quantile ``t(1 - (1 - confidence) / 2, df)``.

    Raises
    ------
    ValueError
        ``confidence`` outside ``(0, 1)``, or so close to 1 that the quantile is infinite
        (``1 - 1e-16`` in double precision; the settings allow at most 0.9999).
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence level must be in (0, 1), got {confidence}")
    t = float(special.stdtrit(df, 1 - (1 - confidence) / 2))
    if not math.isfinite(t):
        raise ValueError(f"confidence level {confidence!r} is too close to 1: its t quantile "
                         f"({df} degrees of freedom) is infinite")
    return t


@dataclass(frozen=True)
class MeanCI:
    """A mean with its confidence interval and what it took."""

    mean: float
    lower: float
    upper: float
    width: float
    confidence: float
    harmonic: bool
    n: int
    n_used: int
    q: int
    blocks: int
    variance: float  # variance of the block means (of 1/x for the harmonic mean)
    autocorrelation: float  # lag-1 autocorrelation of the block means
    ac_limit: float
    t: float
    target_width: float
    required_readings: int | None
    min_samples: int

    @property
    def target_undefined(self) -> bool:
        """The mean is 0 (to rounding: centred readings), so a width relative to it cannot be
        met by any number of readings: ``required_readings`` is None (null in JSON) and
        :attr:`enough` False."""
        return self.required_readings is None

    @property
    def enough(self) -> bool:
        """Whether the readings reach the required sample size (Pilot's stop rule); False where
        there is none (:attr:`target_undefined`)."""
        return self.required_readings is not None and self.n >= self.required_readings

    @property
    def relative_width(self) -> float:
        return self.width / abs(self.mean) if self.mean else math.inf

    @property
    def upper_unbounded(self) -> bool:
        """The harmonic mean's interval has no upper bound: the interval ``[L, U]`` of
        ``mean(1 / x)`` reaches 0 (``L <= 0``), so its reciprocal ``[1/U, 1/L]`` does not end
        and no rate is too high for these readings. ``upper``, ``width`` and
        ``relative_width`` are then infinite, written as null in JSON beside this flag
        (as :attr:`perfcast.warmup.wps.WpsResult.v_upper_unbounded`)."""
        return math.isinf(self.upper)

    @property
    def warning(self) -> str | None:
        """Why the interval or the required sample size cannot be used as they stand
        (:attr:`upper_unbounded`, :attr:`target_undefined`), and what to do; None when they
        can."""
        reasons = []
        if self.target_undefined:
            reasons.append(
                "the mean the required sample size is taken at is 0 (centred readings?), so "
                "a CI width relative to it (the target) cannot be met by any number of "
                "readings: required_readings is null (target_undefined true) and enough "
                "false; a relative target needs readings whose mean is not 0, and the "
                "interval itself stands")
        if self.upper_unbounded:
            reasons.append(self._unbounded_warning())
        return "; ".join(reasons) or None

    def _unbounded_warning(self) -> str:
        return (f"the harmonic mean's {self.confidence * 100:.4g} % CI has no upper bound "
                f"(upper null, upper_unbounded true): the CI of the mean of 1/x reaches 0 "
                f"with {self.blocks} subsession means (q = {self.q}), the reciprocals of the "
                "smallest readings spreading it wider than its mean; more readings narrow it, "
                "but where a few rates near 0 (stalls?) dominate, the harmonic mean is "
                "theirs: check them, or take the median of perfcast stable")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["relative_width"] = self.relative_width
        d["upper_unbounded"] = self.upper_unbounded
        d["target_undefined"] = self.target_undefined
        d["enough"] = self.enough
        for k, v in d.items():
            if isinstance(v, float) and not math.isfinite(v):
                d[k] = None
        return d


def required_sample_size(variance: float, q: int, t: float, target_width: float,
                         min_samples: int = MIN_READINGS) -> int:
    """Readings needed for a CI of ``target_width``: ``q * max(ceil(var (t/e)^2), min)``.

    Parameters
    ----------
    variance : float
        Variance of the subsession (block) means.
    q : int
        Subsession size (readings per block).
    t : float
        The Student t quantile of the interval.
    target_width : float
        The interval's full width wanted (``e = target_width / 2``).
    min_samples : int, default=MIN_READINGS
        Never fewer blocks than this (central limit theorem).

    Raises
    ------
    ValueError
        ``target_width <= 0``, or a target so narrow (or a ``t`` so large) that the count is
        not a finite number (the settings' bounds, a target of at least 1e-6 of the mean and a
        confidence level of at most 0.9999, keep the commands' far from it).

    References
    ----------
    Y. Li, Y. Gupta, E. L. Miller, D. D. E. Long, "Pilot: A Framework that Understands How to
    Do Performance Benchmarks the Right Way", Proc. 24th IEEE Int. Symp. on Modeling, Analysis,
    and Simulation of Computer and Telecommunication Systems (MASCOTS 2016), 2016,
    doi:10.1109/MASCOTS.2016.31.
    T. Chen, Y. Chen, Q. Guo, O. Temam, Y. Wu, W. Hu, "Statistical performance comparisons of
    computers", Proc. 18th Int. Symp. on High-Performance Computer Architecture (HPCA-18),
    IEEE, 2012.

    Examples
    --------
    >>> required_sample_size(4.0, 2, 2.0, 1.0)  # 2 * ceil(4 * (2 / 0.5)^2) readings
    128
    >>> required_sample_size(0.01, 1, 2.0, 0.1)  # never fewer than 30 blocks
    30
    """
    if target_width <= 0:
        raise ValueError("target width must be positive")
    e = target_width / 2
    ratio = t / e
    blocks = variance * ratio * ratio  # (a product overflows to inf; ** raises OverflowError)
    if not math.isfinite(blocks):
        raise ValueError(f"a target width of {target_width:g} with t {t:g} needs more readings "
                         "than a number can count")
    return int(q * max(math.ceil(blocks), min_samples))


def mean_ci(
    x: np.ndarray,
    *,
    ac_limit: float,
    confidence: float,
    target_relative_width: float,
    harmonic: bool = False,
    min_readings: int = MIN_READINGS,
    min_samples: int = MIN_READINGS,
    residual_correction: bool = False,
) -> MeanCI:
    """Mean of ``x`` (arithmetic, or harmonic) with its subsession-analysis CI.

    Parameters
    ----------
    x : numpy.ndarray
        The readings, in the order they were taken (the autocorrelation is of that order).
    ac_limit : float
        Largest ``|lag-1 autocorrelation|`` of the subsession means
        (:func:`perfcast.warmup.subsession.subsession_size`).
    confidence : float
        Confidence level of the interval.
    harmonic : bool, default=False
        The harmonic mean (of rates), its interval mapped from that of ``mean(1 / x)``.
    target_relative_width : float
        The width, relative to the mean, that ``required_readings`` is for.
    min_readings : int, default=MIN_READINGS
        Fewer readings are refused.
    min_samples : int, default=MIN_READINGS
        The required sample size asks for at least this many subsession means
        (Pilot's per-preset minimum, :data:`perfcast.warmup.subsession.PRESET_MIN_SAMPLES`).
    residual_correction : bool, default=False
        Multiply the variance of the subsession means by the AR(1) factor
        ``(1 + r) / (1 - r)`` of their remaining lag-1 autocorrelation ``r > 0`` (at most the
        limit): the first ``q`` whose means pass the limit still leaves them correlated (AR(1)
        readings with phi 0.5: ``q = 4`` leaves 0.21, and ``q var`` is then 0.69 of the
        long-run variance), so the interval is too narrow by up to ``sqrt((1 + limit) /
        (1 - limit))``. ``perfcast watch`` uses it (its CI decides a stop).

    Returns
    -------
    MeanCI
        the mean, its interval, ``q``, the block variance and autocorrelation, and the
        readings a CI of the target width needs. ``n`` counts the readings given, ``n_used``
        those the mean and the blocks are of: the newest ``h q`` (``x[n - n_used:]``).

    Raises
    ------
    NotEnoughDataError
        fewer than ``min_readings`` readings, or no subsession size brings the
        autocorrelation within ``ac_limit``.
    ValueError
        ``harmonic`` with a reading <= 0.

    References
    ----------
    Y. Li, Y. Gupta, E. L. Miller, D. D. E. Long, "Pilot: A Framework that Understands How to
    Do Performance Benchmarks the Right Way", Proc. 24th IEEE Int. Symp. on Modeling, Analysis,
    and Simulation of Computer and Telecommunication Systems (MASCOTS 2016), 2016,
    doi:10.1109/MASCOTS.2016.31.
    D. Ferrari, 1978: subsession (batch-means) analysis (cited by author and year only).

    Examples
    --------
    Independent readings: one reading per block (``q = 1``), the t interval; a CI 1 % of the
    mean wide needs about 1,500 of them:

    >>> import numpy as np
    >>> x = 1.0 + 0.1 * np.random.default_rng(0).standard_normal(400)
    >>> ci = mean_ci(x, ac_limit=0.2, confidence=0.95, target_relative_width=0.01)
    >>> round(ci.mean, 3), round(ci.lower, 3), round(ci.upper, 3), ci.q, ci.required_readings
    (0.996, 0.987, 1.006, 1, 1546)
    """
    x = np.asarray(x, dtype=float)
    n = int(x.shape[0])
    if n < min_readings:
        raise NotEnoughDataError(f"{n} readings; a confidence interval needs at least "
                                 f"{min_readings}")
    if not np.all(np.isfinite(x)):
        raise ValueError("readings must be finite numbers")
    if harmonic and np.any(x <= 0):
        raise ValueError("the harmonic mean needs positive readings")
    y = 1.0 / x if harmonic else x
    # blocks that end at the newest reading: those of the reversed readings, from the first
    # (a lag-1 autocorrelation is the same either way round)
    q, r = subsession_size(y[::-1], ac_limit)
    if q is None:
        raise NotEnoughDataError(
            f"|lag-1 autocorrelation| stays above {ac_limit} for every subsession size up to "
            f"{n // 3} (last |r| {abs(r):.3f}, r {r:.3f}); more readings are needed")
    b = block_means(y, q, newest=True)
    h = b.shape[0]
    m = float(y[n - h * q:].mean())  # (the mean of the block means, summed once)
    var_q = float(b.var(ddof=1))
    if residual_correction and r > 0:
        var_q *= (1 + r) / (1 - r)
    t = t_quantile(confidence, h - 1)
    half = t * math.sqrt(var_q / h)
    # a mean of 0 (to rounding: centred readings) leaves a relative target no width: no
    # number of readings meets it (MeanCI.target_undefined)
    required = (required_sample_size(var_q, q, t, target_relative_width * abs(m), min_samples)
                if abs(m) > rounding_sd(y) else None)
    est, lower, upper, width = _estimate(m, half, harmonic)
    return MeanCI(
        mean=est, lower=lower, upper=upper, width=width, confidence=confidence,
        harmonic=harmonic, n=n, n_used=h * q, q=q, blocks=h, variance=var_q, autocorrelation=r,
        ac_limit=ac_limit, t=t, target_width=target_relative_width * abs(est),
        required_readings=required, min_samples=min_samples,
    )


def _estimate(m: float, half: float, harmonic: bool) -> tuple[float, float, float, float]:
    """Estimate, lower, upper and width from the block means' mean ``m`` and half-width: as is,
    or (harmonic) the interval of ``mean(1 / x)`` mapped by the reciprocal."""
    if not harmonic:
        return m, m - half, m + half, 2 * half
    lower, upper = 1.0 / (m + half), (1.0 / (m - half) if m - half > 0 else math.inf)
    return 1.0 / m, lower, upper, upper - lower


def tail_ci(whole: MeanCI, x: np.ndarray, target_relative_width: float) -> MeanCI | None:
    """The CI of the mean of ``x``, the last readings of the segment ``whole`` is of, with
    ``whole``'s subsession size ``q``, variance and t quantile:

        mean(x) +- t sqrt(var_q / h)        (h subsession means of x)

    of the newest ``h q`` readings of ``x`` (``n`` and ``n_used`` both count them; the oldest
    ``len(x) - h q < q``, nearest the segment's start, are left out, as in :func:`mean_ci`).

    (harmonic: the interval of ``mean(1 / x)``, mapped by the reciprocal). A segment that passed
    a stationarity test has one variance throughout, which all of it estimates more steadily
    than its last part; the mean of the last part leaves out what a smooth warm-up left at the
    segment's start, too small for any test to see. ``required_readings`` stays the segment's.

    Parameters
    ----------
    whole : MeanCI
        :func:`mean_ci` of the whole segment.
    x : numpy.ndarray
        the segment's last readings.
    target_relative_width : float
        the target, relative to the mean of ``x``.

    Returns
    -------
    MeanCI or None
        None when ``x`` holds fewer than two subsessions of ``whole.q`` readings.

    Examples
    --------
    >>> import numpy as np
    >>> x = 1.0 + 0.1 * np.random.default_rng(0).standard_normal(400)
    >>> whole = mean_ci(x, ac_limit=0.2, confidence=0.95, target_relative_width=0.1)
    >>> last = tail_ci(whole, x[-100:], 0.1)  # a quarter of the subsessions: twice as wide
    >>> last.n, bool(last.mean == x[-100:].mean()), round(last.width / whole.width, 6)
    (100, True, 2.0)
    """
    x = np.asarray(x, dtype=float)
    y = 1.0 / x if whole.harmonic else x
    h = int(y.shape[0]) // whole.q
    if h < 2:
        return None
    used = y[y.shape[0] - h * whole.q:]
    m = float(used.mean())
    half = whole.t * math.sqrt(whole.variance / h)
    est, lower, upper, width = _estimate(m, half, whole.harmonic)
    return MeanCI(
        mean=est, lower=lower, upper=upper, width=width, confidence=whole.confidence,
        harmonic=whole.harmonic, n=h * whole.q, n_used=h * whole.q, q=whole.q, blocks=h,
        variance=whole.variance, autocorrelation=whole.autocorrelation, ac_limit=whole.ac_limit,
        t=whole.t, target_width=target_relative_width * abs(est),
        required_readings=whole.required_readings, min_samples=whole.min_samples,
    )
