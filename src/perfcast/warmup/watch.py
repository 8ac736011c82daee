"""Live warm-up analysis of a running benchmark's readings (``perfcast watch``).

Readings arrive one at a time. Re-analysing all ``n`` of them after each one would cost
``O(n^2 log n)`` in all; instead the analysis (:func:`assess`: change points, the stable
segment, the CI of its mean with the required sample size) runs at checkpoints only: the next
one is ``growth`` times further on (geometric), or sooner, where the last analysis predicts the
stop, but never less than ``MIN_STEP`` of the readings so far later. The checkpoints' sizes
then grow at least geometrically, so all analyses together cost ``O(n log n)``: amortised
``O(log n)`` per reading.

The stop rule is run-length control in the presence of an initial transient (Heidelberger &
Welch 1983): a precision target met only by readings that passed a test of stationarity.

1. The change points give the candidate stable (dominant) segment (Pilot's rule); it must run
   to the last reading (a dominant segment that has ended is, live, a warm-up followed by a
   new level still going on: phase ``cooldown``, no stop).
2. MSER-5 truncation (White 1997) drops what a smooth warm-up left at its start; a minimum at
   its half-way bound means the warm-up has not visibly ended (phase ``warmup``).
3. Heidelberger & Welch's stationarity test (Schruben's cumulative sum, Cramer-von Mises at
   5 %) on the truncated segment, dropping 10 % .. 50 % of its start until the rest passes;
   none passes: phase ``warmup``.
4. Evidence, then precision. The stable segment must hold ``EVIDENCE`` (1.75) times its
   required sample size (Pilot's), that size taken at an upper confidence bound: the
   variance of the subsession means times ``1 + UCB_Z sqrt(2 / (h - 1))`` (``UCB_Z`` = 1
   standard error of a variance from ``h`` means, a chi-square's). The CI is of the
   segment's last ``1 / EVIDENCE`` (``used``): its mean from those readings, its variance
   from the whole segment (which passed the stationarity test; more readings, a steadier
   estimate), and it must be within the target. A warm-up at a constant level looks stable
   until it ends; the first part is the evidence that the level seen is not such a warm-up:
   one that ends before the stop is seen, and the stop then waits for the stable segment
   after it. This protects warm-ups up to about ``EVIDENCE`` times the bound's factor times
   the required sample size of the warm-up's own level (minus the readings the detector
   needs to see the change). A stop rule on an estimate stops early where the estimate
   happens to be low; the bound grows where the estimate is noisy, i.e. on the short
   segments a warm-up leaves (at 230 readings it adds 9 %, at 4,500 2 %), so it protects
   more than a larger ``EVIDENCE`` for the same cost on a series without warm-up, which is
   about twice the readings of an offline analysis (``EVIDENCE``, the bound, the
   truncations). A smooth warm-up's remainder, too small for any test to see, sits in the
   first part, out of the estimate. The CI's variance is corrected for the remaining
   autocorrelation of the subsession means
   (:func:`perfcast.warmup.ci.mean_ci`'s ``residual_correction``).

References
----------
Y. Li, Y. Gupta, E. L. Miller, D. D. E. Long, "Pilot: A Framework that Understands How to Do
Performance Benchmarks the Right Way", Proc. 24th IEEE MASCOTS, 2016,
doi:10.1109/MASCOTS.2016.31 (the required sample size and the dominant stable segment).

P. Heidelberger, P. D. Welch, "Simulation run length control in the presence of an initial
transient", Operations Research 31(6):1109-1144, 1983, doi:10.1287/opre.31.6.1109.

K. P. White Jr., "An effective truncation heuristic for bias reduction in simulation output",
Simulation 69(6):323-334, 1997, doi:10.1177/003754979706900601 (MSER).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from perfcast.warmup.ci import MeanCI, NotEnoughDataError, mean_ci, tail_ci
from perfcast.warmup.cli_settings import WatchSettings
from perfcast.warmup.segments import detect_phases
from perfcast.warmup.truncation import settle, without_cycle

#: a checkpoint is at least this fraction of the readings so far after the previous one
MIN_STEP = 0.02
#: the stable segment must hold this many times the readings its CI needs; the CI is of its
#: last 1 / EVIDENCE (step 4 above)
EVIDENCE = 1.75
#: the required sample size behind the evidence is taken at the variance's estimate plus this
#: many of its standard errors (step 4 above)
UCB_Z = 1.0
#: every phase an update can name (documented in docs/methods/warmup.md)
PHASES = ("collecting", "unstable", "warmup", "stable", "cooldown")
#: what a session that has not stopped waits for
WAITING = ("min_readings", "stable_phase", "warmup_end", "sample_size")


@dataclass(frozen=True)
class Update:
    """One analysis of the first ``n`` readings.

    ``phase`` is one of :data:`PHASES`: ``collecting`` (fewer than ``min_readings``),
    ``unstable`` (no segment dominates), ``warmup`` (a candidate stable segment whose start is
    still transient: MSER's bound, or no stationarity), ``stable`` (the stable segment runs to
    the last reading) or ``cooldown`` (it has ended; live, what follows is a new level that is
    going on, so there is no stop until a segment that runs to the last reading dominates).
    ``stable`` is ``(begin, end)`` of the stable readings, ``used`` the last ``1 / EVIDENCE`` of
    them, which the CI is of; ``truncated`` the readings
    MSER and the stationarity test dropped from the detector's segment; ``stationarity`` the
    last Cramer-von Mises statistic of that test
    (:func:`perfcast.warmup.truncation.stationarity_test`); ``waiting_for`` one of
    :data:`WAITING`, None once ``stop``; ``evidence_readings`` the readings the stable segment
    must hold before a stop (:func:`evidence_readings`).
    """

    n: int
    phase: str
    stable: tuple[int, int] | None
    used: tuple[int, int] | None
    truncated: int
    stationarity: float | None
    ci: MeanCI | None
    stop: bool
    waiting_for: str | None
    evidence_readings: int | None = None

    @property
    def stable_begin(self) -> int | None:
        return None if self.stable is None else self.stable[0]

    @property
    def stable_end(self) -> int | None:
        return None if self.stable is None else self.stable[1]

    def to_dict(self) -> dict[str, Any]:
        ci = self.ci
        d: dict[str, Any] = {
            "n": self.n, "phase": self.phase,
            "stable": None if self.stable is None else {"begin": self.stable[0],
                                                        "end": self.stable[1]},
            "used": None if self.used is None else {"begin": self.used[0], "end": self.used[1]},
            "truncated": self.truncated, "stationarity": self.stationarity,
            "mean": ci.mean if ci else None, "lower": ci.lower if ci else None,
            "upper": ci.upper if ci else None, "q": ci.q if ci else None,
            "relative_width": ci.relative_width if ci else None,
            "required_readings": ci.required_readings if ci else None,
            "target_undefined": ci.target_undefined if ci else None,
            "evidence_readings": self.evidence_readings,
            "stop": self.stop, "waiting_for": self.waiting_for,
        }
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                for k, v in d.items()}


def assess(x: np.ndarray, settings: WatchSettings) -> Update:
    """The stop rule on the readings ``x`` so far (steps 1-4 of the module docstring).

    Parameters
    ----------
    x : numpy.ndarray
        the readings so far, in order.
    settings : WatchSettings
        the target, CI and change-point settings (``perfcast watch``'s flags).

    Returns
    -------
    Update
        the phase, the stable readings, their CI, and whether to stop.

    Examples
    --------
    >>> import numpy as np
    >>> from perfcast.warmup.cli_settings import command_settings
    >>> rng = np.random.default_rng(0)
    >>> x = 1.0 + 0.05 * rng.normal(size=2000)
    >>> x[:200] += 0.1  # a step warm-up of 200 readings (+2 sd)
    >>> settings = command_settings("watch", {"target_relative_width": 0.01})
    >>> up = assess(x[:190], settings)  # inside it: it looks stable, but is too short
    >>> up.phase, up.stop, up.waiting_for, up.ci.required_readings > 190 / 2
    ('stable', False, 'sample_size', True)
    >>> up = assess(x, settings)
    >>> up.stop, up.n, 200 <= up.stable[0] < 300  # MSER may drop a few more readings
    (True, 2000, True)
    """
    s = settings
    x = np.asarray(x, dtype=float)
    n = int(x.shape[0])
    if n < s.min_readings:
        return Update(n, "collecting", None, None, 0, None, None, False, "min_readings")
    z, edm = without_cycle(x, s.edm)
    ph = detect_phases(z, edm, min_readings=s.min_readings)
    if ph.stable is None:
        return Update(n, "unstable", None, None, 0, None, None, False, "stable_phase")
    begin, end = ph.stable
    st = settle(z, begin, end, s.limit)
    begin, dropped, statistic = st.begin, st.dropped, st.statistic
    used = estimate_part(begin, end)
    ci = stable_ci(x, (begin, end), used, s)
    if ci is not None:  # the readings the mean is of: the newest whole subsessions
        used = (end - ci[0].n_used, end)
    needed = None if ci is None or ci[1].target_undefined else evidence_readings(ci[1])
    settled = st.settled
    phase = "warmup" if not settled else ("stable" if end == n else "cooldown")
    if not settled:
        waiting = "warmup_end"
    elif phase == "cooldown":  # live, the readings after it are a new level going on
        waiting = "stable_phase"
    elif (ci is None or needed is None or end - begin < needed or not ci[0].enough
          or ci[0].relative_width > s.target_relative_width):
        waiting = "sample_size"
    else:
        waiting = None
    return Update(n, phase, (begin, end), used, dropped, statistic,
                  None if ci is None else ci[0], waiting is None, waiting, needed)


def evidence_readings(whole: MeanCI) -> int:
    """The readings a stable segment must hold before a stop (step 4 of the module docstring):
    ``EVIDENCE`` times the required sample size of ``whole`` (the CI of the whole segment), its
    variance taken at ``1 + UCB_Z sqrt(2 / (h - 1))`` times the estimate, ``h`` its subsession
    means.

    Parameters
    ----------
    whole : MeanCI
        the CI of the whole stable segment (:func:`perfcast.warmup.ci.mean_ci`).

    Returns
    -------
    int
        the readings the stable segment must hold; the required sample size scales with the
        variance, so the bound scales it by the same factor.

    Examples
    --------
    >>> import numpy as np
    >>> from perfcast.warmup.ci import mean_ci
    >>> rng = np.random.default_rng(0)
    >>> whole = mean_ci(1 + 0.1 * rng.normal(size=401), ac_limit=0.2, confidence=0.95,
    ...                 target_relative_width=0.05)
    >>> whole.blocks, whole.required_readings  # i.i.d.: one reading per subsession mean
    (401, 62)
    >>> evidence_readings(whole)  # ceil(1.75 * 62 * (1 + sqrt(2 / 400)))
    117
    """
    bound = 1.0 + UCB_Z * math.sqrt(2.0 / max(whole.blocks - 1, 1))
    return math.ceil(EVIDENCE * whole.required_readings * bound)


def estimate_part(begin: int, end: int) -> tuple[int, int]:
    """The readings an estimate of the stable segment ``[begin, end)`` is of: its last
    ``1 / EVIDENCE`` (step 4 above), what ``watch`` and ``perfcast stable`` report.

    >>> estimate_part(200, 1950)  # 1,750 stable readings: the last 1,000
    (950, 1950)
    """
    return end - int((end - begin) / EVIDENCE), end


def stable_ci(x: np.ndarray, stable: tuple[int, int], used: tuple[int, int],
              settings: WatchSettings) -> tuple[MeanCI, MeanCI] | None:
    """The CI of the ``used`` readings' mean, with the variance of the whole ``stable`` segment.

    The segment passed the stationarity test, so the variance of its subsession means
    (:func:`perfcast.warmup.ci.mean_ci`, corrected for their remaining autocorrelation) is
    the steadier estimate of the one of the ``used`` readings (its last part): the interval is
    ``mean(used) +- t sqrt(var / h)`` with ``h`` the used readings' subsession means and ``t``
    of the segment's degrees of freedom; the required sample size is the segment's.

    Parameters
    ----------
    x : numpy.ndarray
        all readings so far.
    stable : tuple of int
        ``(begin, end)`` of the stable segment.
    used : tuple of int
        ``(begin, end)`` of the readings the estimate is of, inside ``stable``.
    settings : WatchSettings
        the target, the confidence level and the subsession analysis' settings.

    Returns
    -------
    tuple of MeanCI, or None
        the CI of the used readings and the one of the whole segment; None when the segment
        cannot support one (fewer than :data:`perfcast.warmup.ci.MIN_READINGS` readings, as
        ``perfcast ci`` and ``perfcast stable`` require, or autocorrelation above the limit at
        every subsession size).

    Examples
    --------
    >>> import numpy as np
    >>> from perfcast.warmup.cli_settings import command_settings
    >>> x = np.r_[np.full(50, 9.0), np.tile([0.9, 1.1], 200)]
    >>> used, whole = stable_ci(x, (50, 450), (250, 450), command_settings("watch"))
    >>> used.n, round(used.mean, 6), whole.n, used.variance == whole.variance
    (200, 1.0, 400, True)
    """
    s = settings
    begin, end = stable
    try:
        whole = mean_ci(x[begin:end], ac_limit=s.limit, confidence=s.confidence,
                        target_relative_width=s.target_relative_width,
                        min_samples=s.samples_min, residual_correction=True)
    except NotEnoughDataError:
        return None
    ci = tail_ci(whole, x[used[0]:used[1]], s.target_relative_width)
    return None if ci is None else (ci, whole)


class Watcher:
    """Readings in (:meth:`add`), an :class:`Update` out at each checkpoint.

    Parameters
    ----------
    settings : WatchSettings
        the stop rule's settings (:func:`assess`); ``growth`` and ``min_readings`` set the
        checkpoints (the module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> from perfcast.warmup.cli_settings import command_settings
    >>> w = Watcher(command_settings("watch"))
    >>> rng = np.random.default_rng(0)
    >>> ups = [u for v in 1.0 + 0.05 * rng.normal(size=300) if (u := w.add(float(v)))]
    >>> [u.n for u in ups][:3], ups[0].phase  # the first analysis at min_readings
    ([30, 45, 68], 'stable')
    >>> w.analyses == len(ups)
    True
    """

    def __init__(self, settings: WatchSettings) -> None:
        self.settings = settings
        self._buf = array("d")  # amortised O(1) appends, copied to numpy at checkpoints
        self.n = 0
        self.analyses = 0
        self._next = max(settings.min_readings, 2)

    @property
    def readings(self) -> np.ndarray:
        """A copy of the readings so far."""
        return np.array(self._buf, dtype=float)

    def add(self, value: float) -> Update | None:
        """Append one reading; the analysis when this reading is a checkpoint, else None.

        Parameters
        ----------
        value : float
            the next reading.

        Returns
        -------
        Update or None
            :meth:`analyse`'s result at a checkpoint.
        """
        self._buf.append(value)
        self.n += 1
        if self.n < self._next:
            return None
        return self.analyse()

    def analyse(self) -> Update:
        """Analyse all readings so far (:func:`assess`) and set the next checkpoint: ``growth``
        times the readings so far, or sooner where the analysis predicts the stop (the stable
        segment's start plus its :func:`evidence_readings`), never less than ``MIN_STEP``
        further.

        Returns
        -------
        Update
            the analysis of every reading so far.
        """
        s = self.settings
        n = self.n
        self.analyses += 1
        up = assess(self.readings, s)
        if up.phase == "collecting":
            self._next = s.min_readings
            return up
        predicted = None
        if up.evidence_readings is not None and up.stable is not None:
            predicted = up.stable[0] + up.evidence_readings
        step_min = n + max(1, math.ceil(MIN_STEP * n))
        geometric = max(step_min, math.ceil(s.growth * n))
        self._next = geometric if predicted is None else min(geometric,
                                                             max(step_min, predicted))
        return up


def watch(values: Iterable[float], settings: WatchSettings) -> Iterator[Update]:
    """Updates for a stream of readings, ending with the one that says stop (if any) or, when
    the stream ends first, with an analysis of everything read (``stop`` false unless met).

    Parameters
    ----------
    values : iterable of float
        the readings, as they arrive (a generator may be endless: it is read only up to the
        stop).
    settings : WatchSettings
        the stop rule's settings (``perfcast watch``'s flags, :func:`assess`).

    Yields
    ------
    Update
        one per checkpoint (:class:`Watcher`).

    Examples
    --------
    >>> import numpy as np
    >>> from perfcast.warmup.cli_settings import command_settings
    >>> rng = np.random.default_rng(0)
    >>> x = 1.0 + 0.05 * rng.normal(size=5000)
    >>> x[:100] += 0.5  # a warm-up of 100 readings, 10 sd high
    >>> last = list(watch(iter(x), command_settings("watch")))[-1]
    >>> last.stop, last.stable[0], last.ci.lower <= 1.0 <= last.ci.upper
    (True, 100, True)
    """
    w = Watcher(settings)
    last: Update | None = None
    for v in values:
        up = w.add(v)
        if up is not None:
            last = up
            yield up
            if up.stop:
                return
    if w.n and (last is None or last.n != w.n):
        yield w.analyse()
