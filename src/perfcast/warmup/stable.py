"""The stable throughput of a series of readings, in one analysis (``perfcast stable``).

``perfcast edm`` gives the stable segment's bounds and ``perfcast ci`` the CI of the mean of
every reading; a series that still holds its warm-up needs both, on the same readings. This
module runs them together:

1. the stable segment of the robust change points (Pilot's rule: the one holding more than
   half of the readings; where none does and ``phases.fallback`` is ``final``, the last one if
   it is long enough, :func:`perfcast.warmup.segments.detect_phases`), then MSER-5
   truncation and Heidelberger & Welch's stationarity test of it
   (:func:`perfcast.warmup.truncation.settle`): what a smooth warm-up left at its start goes;
2. the estimates are of the segment's last ``1 / EVIDENCE`` (1.75;
   :func:`perfcast.warmup.watch.estimate_part`, the part ``perfcast watch`` reports), less its
   oldest readings that do not fill a subsession of ``q`` (fewer than ``q``; ``used`` names
   exactly the readings the mean and the median are of): a
   smooth warm-up's remainder too small for MSER or the stationarity test to see stays in the
   first part. The mean of those readings gets the subsession-analysis CI
   (:func:`perfcast.warmup.ci.mean_ci`, variance corrected for the subsession means' remaining
   autocorrelation) with the variance of the whole segment, which passed the stationarity test
   and estimates it more steadily (:func:`perfcast.warmup.ci.tail_ci`). On exponential
   warm-ups of 5-25 % of 1,000 and 10,000 readings this CI covers the plateau in 93.0-97.5 %
   of series where the mean of the whole segment covered it in 80.5-97.5 %, at the price of
   an interval about 1.32 (sqrt 1.75) times wider (``docs/methods/warmup.md``);
3. the median with a distribution-free CI from order statistics: for ``m`` independent
   readings the number below the median is Binomial(m, 1/2), so the order statistics of
   ranks ``m/2 -+ z sqrt(m)/2`` bound it with probability about ``CL`` whatever the
   distribution (Hahn & Meeker 1991, section 5.2). Correlated readings carry less
   information: ``m`` is replaced by the number of subsession means ``h = n / q`` and the ranks
   are scaled by ``n / h``. Heavy-tailed timings (preemption spikes) move the mean and its CI;
   they move the median and its CI little;
4. for rates (``rates``: e.g. operations per second), the harmonic mean (the mean of rates
   over equal work), its CI by the reciprocal of the CI of ``mean(1 / x)``.

References
----------
Y. Li, Y. Gupta, E. L. Miller, D. D. E. Long, "Pilot: A Framework that Understands How to Do
Performance Benchmarks the Right Way", Proc. 24th IEEE MASCOTS, 2016,
doi:10.1109/MASCOTS.2016.31 (stable segment, subsession analysis, harmonic mean of rates).

G. J. Hahn, W. Q. Meeker, "Statistical Intervals: A Guide for Practitioners", Wiley, 1991,
doi:10.1002/9780470316771 (distribution-free intervals for a quantile).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from perfcast.warmup.ci import MIN_READINGS, MeanCI, NotEnoughDataError, mean_ci, tail_ci
from perfcast.warmup.cli_settings import PhasesSettings, StableSettings
from perfcast.warmup.segments import FINAL_SHARE
from perfcast.warmup.truncation import settle, without_cycle
from perfcast.warmup.watch import estimate_part


@dataclass(frozen=True)
class MedianCI:
    """A median with its distribution-free CI (order statistics ``lower_rank``/``upper_rank``,
    1-based, of the ``n`` readings; ``effective`` independent readings). Without an interval
    (``median_ci(..., interval=False)``) the bounds and ranks are None."""

    median: float
    lower: float | None
    upper: float | None
    confidence: float
    n: int
    effective: int
    lower_rank: int | None
    upper_rank: int | None


def median_ci(x: np.ndarray, confidence: float, q: int = 1, *, interval: bool = True
              ) -> MedianCI:
    """Median of ``x`` and its order-statistic CI (see the module docstring, step 3).

    Parameters
    ----------
    x : numpy.ndarray
        the readings.
    confidence : float
        the confidence level.
    q : int, default=1
        the subsession size: ``x`` holds about ``len(x) // q`` independent readings.
    interval : bool, default=True
        False: the median alone (bounds and ranks None), where no subsession size is known
        (the readings are too few or too correlated for one) and ranks from ``q = 1`` would
        give an interval narrower than its level.

    Returns
    -------
    MedianCI
        ranks ``floor(n/2 - z sqrt(h) n / (2h))`` and ``ceil(n/2 + z sqrt(h) n / (2h)) + 1``,
        clipped to ``1 .. n``.

    Raises
    ------
    NotEnoughDataError
        no readings.

    Examples
    --------
    >>> import numpy as np
    >>> ci = median_ci(np.arange(1.0, 101.0), 0.95)  # ranks 40 and 61 of 100
    >>> ci.median, ci.lower, ci.upper
    (50.5, 40.0, 61.0)
    """
    x = np.sort(np.asarray(x, dtype=float))
    n = int(x.shape[0])
    if n == 0:
        raise NotEnoughDataError("no readings")
    h = max(1, n // max(1, q))
    if not interval:
        return MedianCI(float(np.median(x)), None, None, confidence, n, h, None, None)
    z = float(special.ndtri(1 - (1 - confidence) / 2))
    half = z * math.sqrt(h) / 2 * (n / h)
    lo = max(1, math.floor(n / 2 - half))
    hi = min(n, math.ceil(n / 2 + half) + 1)
    return MedianCI(float(np.median(x)), float(x[lo - 1]), float(x[hi - 1]), confidence, n, h,
                    lo, hi)


@dataclass(frozen=True)
class StableThroughput:
    """What :func:`stable_throughput` found (``stable`` None: no stable phase)."""

    n: int
    change_points: tuple[int, ...]
    rule: str
    detector_stable: tuple[int, int] | None
    stable: tuple[int, int] | None
    used: tuple[int, int] | None
    truncated: int
    settled: bool
    mean: MeanCI | None
    median: MedianCI | None
    harmonic: MeanCI | None
    note: str | None

    def to_dict(self) -> dict[str, Any]:
        def seg(s: tuple[int, int] | None) -> dict[str, int] | None:
            return None if s is None else {"begin": s[0], "end": s[1], "readings": s[1] - s[0]}

        return {
            "n": self.n, "change_points": list(self.change_points), "rule": self.rule,
            "stable": seg(self.stable), "used": seg(self.used),
            "detector_stable": seg(self.detector_stable),
            "truncated": self.truncated, "settled": self.settled,
            "mean": None if self.mean is None else self.mean.to_dict(),
            "median": None if self.median is None else {
                "median": self.median.median, "lower": self.median.lower,
                "upper": self.median.upper, "confidence": self.median.confidence,
                "effective_readings": self.median.effective,
                "lower_rank": self.median.lower_rank, "upper_rank": self.median.upper_rank},
            "harmonic_mean": None if self.harmonic is None else self.harmonic.to_dict() | {
                "used": seg((self.used[1] - self.harmonic.n_used, self.used[1]))},
            "note": self.note,
        }


def stable_throughput(x: np.ndarray, settings: StableSettings,
                      phases: PhasesSettings | None = None) -> StableThroughput:
    """The stable segment of ``x``, and the mean and CI, median and CI, and
    (``settings.rates``) harmonic mean and CI of its last part, all of the same readings
    (``used``; see the module docstring).

    Parameters
    ----------
    x : numpy.ndarray
        the readings, in order.
    settings : StableSettings
        the change-point detector, the CI settings, and whether the readings are rates.
    phases : PhasesSettings or None, default=None
        the stable phase where no segment dominates (``perfcast stable --fallback``); None:
        Pilot's rule, no stable phase.

    Returns
    -------
    StableThroughput
        ``stable`` names the stable segment, ``used`` the readings the mean and the median
        are of (``mean.n`` of them, the newest whole subsessions of the segment's last part;
        the harmonic mean, of its own subsession size, is of the newest ``harmonic.n`` of
        them); ``note`` says why an estimate is missing. A stable segment (after truncation)
        of fewer than :data:`perfcast.warmup.ci.MIN_READINGS` readings, or one whose
        autocorrelation no subsession size removes, gets no interval: ``mean`` (and
        ``harmonic``) None, and the median without its interval (its ranks need the
        subsession size ``q`` and enough independent readings for the binomial bound to hold).

    Raises
    ------
    NotEnoughDataError
        fewer than :data:`perfcast.warmup.ci.MIN_READINGS` readings in all: no interval can be
        had (the central limit theorem behind the mean's, enough independent readings for the
        median's binomial ranks), as ``perfcast ci`` refuses them.

    Examples
    --------
    >>> import numpy as np
    >>> from perfcast.warmup.cli_settings import command_settings
    >>> rng = np.random.default_rng(0)
    >>> x = 1.0 + 0.05 * rng.normal(size=1000)
    >>> x[:200] += 0.3  # a warm-up of 200 readings
    >>> r = stable_throughput(x, command_settings("stable"))
    >>> r.detector_stable, r.stable[0] >= 200
    ((200, 1000), True)

    A 95 % interval misses the true value (here 1.0) in about one draw of twenty; this draw is
    one of them, its last 431 readings happen to lie low:

    >>> round(r.mean.lower, 4), round(r.mean.upper, 4), round(r.median.upper, 4)
    (0.9905, 0.9996, 0.9991)
    >>> part = estimate_part(*r.stable)  # the last 1 / 1.75, less a part-filled subsession
    >>> r.used[1] == part[1], 0 <= r.used[0] - part[0] < r.mean.q
    (True, True)
    >>> r.mean.n == r.median.n == r.used[1] - r.used[0], r.mean.mean == float(x[r.used[0]:].mean())
    (True, True)
    """
    x = np.asarray(x, dtype=float)
    n = int(x.shape[0])
    if n < MIN_READINGS:
        raise NotEnoughDataError(f"{n} readings; a confidence interval needs at least "
                                 f"{MIN_READINGS}")
    phases = PhasesSettings("none", FINAL_SHARE) if phases is None else phases
    z, edm = without_cycle(x, settings.edm)
    ph = phases.detect(z, edm)
    if ph.stable is None:
        return StableThroughput(n, ph.change_points, ph.rule, None, None, None, 0, False, None,
                                None, None, phases.no_stable_note)
    a, b = ph.stable
    st = settle(z, a, b, settings.limit)
    y = x[st.begin:b]
    used = estimate_part(st.begin, b)
    last = x[used[0]:used[1]]
    note = None if st.settled else ("the warm-up has not visibly ended (MSER's bound or no "
                                    "stationarity): more readings are needed")
    mean = harmonic = None
    q = 1
    for harm in (False, True) if settings.rates else (False,):
        try:
            whole = mean_ci(y, ac_limit=settings.limit, confidence=settings.confidence,
                            target_relative_width=settings.target_relative_width,
                            min_samples=settings.samples_min, residual_correction=True,
                            harmonic=harm)
        except NotEnoughDataError as exc:
            note = f"no confidence interval from the stable readings {st.begin}..{b - 1}: {exc}"
            break
        est = tail_ci(whole, last, settings.target_relative_width)
        if est is None:
            note = (f"no confidence interval: the last {last.shape[0]} readings hold fewer than "
                    f"two subsessions of {whole.q}; more readings are needed")
            break
        if harm:
            harmonic = est
            if est.warning:
                note = est.warning if note is None else f"{note}; {est.warning}"
        else:
            mean, q = est, whole.q
            if est.target_undefined:
                note = est.warning if note is None else f"{note}; {est.warning}"
    if mean is not None:  # the readings the mean is of: the newest whole subsessions
        used = (used[1] - mean.n_used, used[1])
        last = x[used[0]:used[1]]
    median = median_ci(last, settings.confidence, q, interval=mean is not None)
    return StableThroughput(n, ph.change_points, ph.rule, (a, b), (st.begin, b), used,
                            st.dropped, st.settled, mean, median, harmonic, note)
