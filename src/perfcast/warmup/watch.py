"""Live warm-up analysis of a running benchmark's readings (``perfcast watch``).

Readings arrive one at a time. Re-analysing all ``n`` of them after each one would cost
``O(n^2 log n)`` in all; instead the analysis (change points, the stable segment, the CI of its
mean with the required sample size) runs at checkpoints only: the next one is ``growth`` times
further on (geometric), or sooner, where the last analysis predicts the stable segment reaches its
required sample size, but never less than ``MIN_STEP`` of the readings so far later. The
checkpoints' sizes then grow at least geometrically, so all analyses together cost
``O(n log n)``: amortised ``O(log n)`` per reading.

The stop rule is the one of a measurement session (:func:`perfcast.warmup.session.stop_reason`):
a stable (dominant) segment exists, and its readings reach the required sample size of their CI
(Pilot's per-preset minimum number of subsession means), the CI no wider than the target.

References
----------
Y. Li, Y. Gupta, E. L. Miller, D. D. E. Long, "Pilot: A Framework that Understands How to Do
Performance Benchmarks the Right Way", Proc. 24th IEEE MASCOTS, 2016,
doi:10.1109/MASCOTS.2016.31 (the stop rule and the dominant stable segment).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from perfcast.warmup.ci import MeanCI, NotEnoughDataError, mean_ci
from perfcast.warmup.segments import detect_phases
from perfcast.warmup.settings import WatchSettings

#: a checkpoint is at least this fraction of the readings so far after the previous one
MIN_STEP = 0.05


@dataclass(frozen=True)
class Update:
    """One analysis of the first ``n`` readings."""

    n: int
    phase: str  # collecting | warmup | stable | cooldown | unstable
    stable_begin: int | None
    stable_end: int | None
    ci: MeanCI | None
    stop: bool

    def to_dict(self) -> dict[str, Any]:
        ci = self.ci
        d: dict[str, Any] = {
            "n": self.n, "phase": self.phase, "stable_begin": self.stable_begin,
            "stable_end": self.stable_end,
            "mean": ci.mean if ci else None, "lower": ci.lower if ci else None,
            "upper": ci.upper if ci else None, "q": ci.q if ci else None,
            "relative_width": ci.relative_width if ci else None,
            "required_readings": ci.required_readings if ci else None,
            "stop": self.stop,
        }
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                for k, v in d.items()}


class Watcher:
    """Readings in (:meth:`add`), an :class:`Update` out at each checkpoint."""

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
        """Append one reading; the analysis when this reading is a checkpoint, else None."""
        self._buf.append(value)
        self.n += 1
        if self.n < self._next:
            return None
        return self.analyse()

    def analyse(self) -> Update:
        """Analyse all readings so far and set the next checkpoint."""
        s = self.settings
        x = self.readings
        n = self.n
        self.analyses += 1
        if n < s.min_readings:
            self._next = s.min_readings
            return Update(n, "collecting", None, None, None, False)
        ph = detect_phases(x, s.edm, min_readings=s.min_readings)
        ci: MeanCI | None = None
        stop = False
        if ph.stable is None:
            phase, begin, end = "unstable", None, None
            predicted = None
        else:
            begin, end = ph.stable
            phase = "stable" if end == n else "cooldown"
            try:
                ci = mean_ci(x[begin:end], ac_limit=s.limit, confidence=s.confidence,
                             target_relative_width=s.target_relative_width,
                             min_readings=min(s.min_readings, end - begin),
                             min_samples=s.samples_min)
            except NotEnoughDataError:
                ci = None
            stop = ci is not None and ci.enough and ci.relative_width <= s.target_relative_width
            predicted = None if ci is None else begin + ci.required_readings
        step_min = n + max(1, math.ceil(MIN_STEP * n))
        geometric = max(step_min, math.ceil(s.growth * n))
        self._next = geometric if predicted is None else min(geometric,
                                                             max(step_min, predicted))
        return Update(n, phase, begin, end, ci, stop)


def watch(values: Iterable[float], settings: WatchSettings) -> Iterator[Update]:
    """Updates for a stream of readings, ending with the one that says stop (if any) or, when
    the stream ends first, with an analysis of everything read (``stop`` false unless met)."""
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
