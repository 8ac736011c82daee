"""Analysis of a session's rounds: phases per round, stable throughput with its CI, WPS.

Per round: change points of the unit readings and the stable (dominant) segment; warm-up and
cool-down lengths in readings and in seconds; the setup phase, i.e. the time before the first
unit started (arrival of the first reading minus its duration). Rounds shorter than the lower
bound and rounds without a stable phase contribute no readings (as in Pilot).

Across rounds: the stable readings (seconds per unit) in round order give the mean unit
duration and its subsession CI; the stable throughput is its reciprocal (units/s, the harmonic
mean of the per-unit rates), with the CI mapped the same way. The WPS regression of round
duration on work gives a second, reading-free estimate.
"""

from __future__ import annotations

import math
import os
import platform
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from perfcast.warmup.ci import MeanCI, NotEnoughDataError, mean_ci
from perfcast.warmup.journal import host_metadata
from perfcast.warmup.runner import RoundRecord
from perfcast.warmup.season import Season, season, season_note
from perfcast.warmup.segments import Phases, detect_phases
from perfcast.warmup.settings import AnalysisSettings, SessionSettings
from perfcast.warmup.wps import WpsResult, wps_regression


@dataclass(frozen=True)
class RoundAnalysis:
    """One round analysed: its phases, setup time, and whether it is too short to use."""

    record: RoundRecord
    phases: Phases
    setup_s: float | None  # None when output lines did not arrive as the units finished
    short: bool

    @property
    def readings(self) -> np.ndarray:
        return np.asarray(self.record.readings, dtype=float)

    @property
    def used(self) -> bool:
        return not self.short and self.phases.has_stable and self.phases.stable_len > 0

    def phase_seconds(self) -> tuple[float | None, float | None, float]:
        """Seconds of warm-up, cool-down and stable phase (sum of their readings)."""
        x = self.readings
        if self.phases.stable is None:
            return None, None, 0.0
        a, b = self.phases.stable
        return float(x[:a].sum()), float(x[b:].sum()), float(x[a:b].sum())


def setup_seconds(readings: np.ndarray, times: np.ndarray) -> float | None:
    """Time from the round's start to the first unit's start: ``arrival_0 - reading_0``.

    Only trusted when lines arrived while the units ran (the arrival times span at least half
    of the later readings' total); a block-buffered command gives None.
    """
    if readings.shape[0] == 0:
        return None
    if readings.shape[0] > 1:
        span = float(times[-1] - times[0])
        if span < 0.5 * float(readings[1:].sum()):
            return None
    return max(0.0, float(times[0] - readings[0]))


def analyze_round(rec: RoundRecord, settings: AnalysisSettings) -> RoundAnalysis:
    """Phases of one round's readings (Pilot's dominant-segment rule,
    :func:`perfcast.warmup.segments.detect_phases`), its setup time, and whether it is shorter
    than ``settings.round_lower_bound_s``."""
    x = np.asarray(rec.readings, dtype=float)
    phases = detect_phases(x, settings.edm)
    return RoundAnalysis(
        record=rec, phases=phases,
        setup_s=setup_seconds(x, np.asarray(rec.reading_times, dtype=float)),
        short=rec.duration_s < settings.round_lower_bound_s,
    )


@dataclass
class SessionAnalysis:
    """The rounds of a session analysed and pooled (:func:`analyze_session`): the CI of the
    mean unit duration from the stable readings, and the WPS regression, each with the reason
    it is missing when it is."""

    rounds: list[RoundAnalysis]
    settings: AnalysisSettings
    unit_ci: MeanCI | None
    unit_ci_reason: str | None
    wps: WpsResult | None
    wps_reason: str | None

    @property
    def stable_parts(self) -> list[np.ndarray]:
        """The stable readings of each used round."""
        return [r.readings[r.phases.stable[0]:r.phases.stable[1]] for r in self.rounds if r.used]

    @property
    def stable_readings(self) -> np.ndarray:
        parts = self.stable_parts
        return np.concatenate(parts) if parts else np.empty(0)

    def season(self) -> Season | None:
        """The cycle of the stable readings (:func:`perfcast.warmup.season.season`), each
        round's about its own median: rounds differ a little in level, and their steps,
        repeating every round of a fixed length, would pass for a cycle."""
        parts = [p - np.median(p) for p in self.stable_parts if p.size]
        return season(np.concatenate(parts)) if parts else None

    def throughput(self) -> dict[str, Any] | None:
        """Stable throughput (units/s) = 1 / mean unit duration, CI mapped by the reciprocal.
        Where the unit duration's CI reaches 0 the throughput's has no upper bound:
        ``upper``, ``width`` and ``relative_width`` null, ``upper_unbounded`` true, and the
        summary's ``warnings`` say so (:meth:`throughput_warning`)."""
        ci = self.unit_ci
        if ci is None or ci.mean <= 0:
            return None
        value = 1.0 / ci.mean
        lower = 1.0 / ci.upper
        upper = 1.0 / ci.lower if ci.lower > 0 else math.inf
        return {"value": value, "lower": lower, "upper": _finite(upper),
                "width": _finite(upper - lower), "relative_width": _finite((upper - lower) / value),
                "upper_unbounded": math.isinf(upper),
                "confidence": ci.confidence, "unit": "units/s"}

    def throughput_warning(self) -> str | None:
        """Why the throughput's CI has no upper bound, and what narrows it; None when it has
        one."""
        tp = self.throughput()
        if tp is None or not tp["upper_unbounded"]:
            return None
        ci = self.unit_ci
        return (f"throughput: the {ci.confidence * 100:.4g} % CI has no upper bound (upper "
                f"null, upper_unbounded true): the unit duration's CI reaches 0 with "
                f"{ci.blocks} subsession means (q = {ci.q}); more stable readings narrow it")

    def criterion_met(self, criterion: str, target: float) -> bool:
        """Whether ``criterion`` is met: ``"readings"``, the stable readings reach the required
        sample size of their CI (Pilot's stop rule: ``q * max(ceil(var_q (t/e)^2),
        min_samples)``, :func:`perfcast.warmup.ci.required_sample_size`, for ``target``, the
        one the analysis settings give); ``"wps"``, the CI of the WPS speed is at most
        ``target`` of it wide."""
        if criterion == "readings":
            return self.unit_ci is not None and self.unit_ci.enough
        if criterion == "wps":
            return self.wps is not None and self.wps.relative_width <= target
        raise ValueError(criterion)

    # ----------------------------------------------------------------------------- tables
    def rounds_frame(self) -> pd.DataFrame:
        """One row per round (``rounds.parquet``): work, times, phase lengths, use."""
        used_wps = set(self.wps.rounds_used) if self.wps else set()
        short_wps = set(self.wps.rounds_short) if self.wps else set()
        below = set(self.wps.rounds_below_alpha) if self.wps else set()
        rows = []
        for i, r in enumerate(self.rounds):
            rec, ph = r.record, r.phases
            wu_s, cd_s, st_s = r.phase_seconds()
            st = r.readings[ph.stable[0]:ph.stable[1]] if ph.stable else np.empty(0)
            rows.append({
                "round": rec.round, "stage": rec.stage, "work": rec.work,
                "duration_s": rec.duration_s, "setup_s": r.setup_s,
                "user_s": rec.user_s, "sys_s": rec.sys_s, "max_rss_kb": rec.max_rss_kb,
                "readings": ph.n, "ignored_lines": rec.ignored_lines,
                "change_points": list(ph.change_points), "phase_rule": ph.rule,
                "has_stable": ph.has_stable,
                "warmup_readings": ph.warmup_len, "stable_readings": ph.stable_len,
                "cooldown_readings": ph.cooldown_len,
                "warmup_s": wu_s, "stable_s": st_s, "cooldown_s": cd_s,
                "stable_mean_s": float(st.mean()) if st.size else None,
                "short": r.short, "used_readings": r.used,
                "used_wps": i in used_wps,
                "wps_dropped": "short" if i in short_wps else ("below_alpha" if i in below
                                                                 else ""),
            })
        df = pd.DataFrame(rows)
        for col in ("warmup_readings", "cooldown_readings"):
            if col in df:
                df[col] = df[col].astype("Int64")
        return df

    def readings_frame(self) -> pd.DataFrame:
        """One row per unit reading (``readings.parquet``): its time and phase label."""
        frames = []
        for r in self.rounds:
            x = r.readings
            start = r.setup_s if r.setup_s is not None else 0.0
            frames.append(pd.DataFrame({
                "round": np.full(x.shape[0], r.record.round, dtype=np.int64),
                "index": np.arange(x.shape[0], dtype=np.int64),
                "reading_s": x,
                "time_s": start + np.cumsum(x),
                "phase": r.phases.labels().astype(str),
                "used": np.full(x.shape[0], r.used),
            }))
        if not frames:
            return pd.DataFrame({"round": pd.Series(dtype="int64"),
                                 "index": pd.Series(dtype="int64"),
                                 "reading_s": pd.Series(dtype=float),
                                 "time_s": pd.Series(dtype=float),
                                 "phase": pd.Series(dtype=str), "used": pd.Series(dtype=bool)})
        return pd.concat(frames, ignore_index=True)

    def summary(self, session: SessionSettings, stop_reason: str) -> dict[str, Any]:
        """The session's ``summary.json``: stable throughput with its CI, WPS, phase lengths,
        why it stopped, its settings and the host."""
        wu = [r.phases.warmup_len for r in self.rounds if r.used]
        cd = [r.phases.cooldown_len for r in self.rounds if r.used]
        secs = [r.phase_seconds() for r in self.rounds if r.used]
        setups = [r.setup_s for r in self.rounds if r.setup_s is not None]
        target = self.settings.ci.target_relative_width
        wps_warning = self.wps.warning if self.wps else None
        wps_stops = "wps" in session.limits.stop_on
        cycle = self.season()
        return {
            "workload": session.name,
            "command": session.program.command,
            "stop_reason": stop_reason,
            "target_relative_width": target,
            "target_met": {c: self.criterion_met(c, target) for c in session.limits.stop_on},
            "rounds": len(self.rounds),
            "rounds_short": sum(r.short for r in self.rounds),
            "rounds_with_stable_phase": sum(r.phases.has_stable for r in self.rounds),
            "rounds_used": sum(r.used for r in self.rounds),
            "total_round_time_s": float(sum(r.record.duration_s for r in self.rounds)),
            "readings": int(sum(r.phases.n for r in self.rounds)),
            "stable_readings": int(self.stable_readings.shape[0]),
            "required_readings": self.unit_ci.required_readings if self.unit_ci else None,
            "throughput": self.throughput(),
            "unit_duration_s": self.unit_ci.to_dict() if self.unit_ci else None,
            "unit_duration_reason": self.unit_ci_reason,
            "warmup": _lengths(wu, [s[0] for s in secs]),
            "cooldown": _lengths(cd, [s[1] for s in secs]),
            "setup_s": {"median": _median(setups), "max": max(setups) if setups else None},
            "wps": self.wps.to_dict() if self.wps else None,
            # a stop criterion the session did not meet is a warning here too, not only false
            # in target_met (the run summary lists every warning); a poor WPS fit is a warning
            # when WPS is a stop criterion, otherwise a note (the session's estimate does not
            # rest on it)
            "warnings": ([f"wps: {wps_warning}"] if wps_warning and wps_stops else [])
            + ([w] if (w := self.throughput_warning()) else [])
            + [f"stop criterion {c} not met (target {target:g} relative CI width); stopped: "
               f"{stop_reason}" for c in session.limits.stop_on
               if not self.criterion_met(c, target)],
            "season": cycle.to_dict() if cycle else None,
            "notes": ([f"wps (a cross-check, not a stop criterion): {wps_warning}"]
                      if wps_warning and not wps_stops else [])
            + ([f"stable readings: {season_note(cycle)}"] if cycle else []),
            "wps_reason": self.wps_reason,
            "settings": session.to_dict(),
            "host": {**host_metadata(), "cpus": os.cpu_count(),
                     "python": platform.python_version()},
        }


def _finite(v: float) -> float | None:
    return v if math.isfinite(v) else None


def _median(v: list) -> float | None:
    return float(np.median(v)) if v else None


def _lengths(readings: list, seconds: list) -> dict[str, Any]:
    return {"readings_median": _median(readings), "readings_max": max(readings, default=None),
            "seconds_median": _median(seconds), "seconds_max": max(seconds, default=None)}


def analyze_session(
    records: list[RoundRecord],
    settings: AnalysisSettings,
    cache: dict[int, RoundAnalysis] | None = None,
) -> SessionAnalysis:
    """Analyse every round and pool them (see the module docstring).

    Parameters
    ----------
    records : list of RoundRecord
        The session's rounds, in order.
    settings : AnalysisSettings
        Change-point detection, CI and the rounds' lower bound.
    cache : dict[int, RoundAnalysis] or None, default=None
        Round number -> its analysis, re-used and filled (a round's analysis does not
        change as later rounds come).

    Returns
    -------
    SessionAnalysis
        per-round phases, the unit-duration CI (or why there is none) and the WPS regression
        (or why there is none).

    References
    ----------
    Y. Li, Y. Gupta, E. L. Miller, D. D. E. Long, "Pilot: A Framework that Understands How to
    Do Performance Benchmarks the Right Way", Proc. 24th IEEE Int. Symp. on Modeling, Analysis,
    and Simulation of Computer and Telecommunication Systems (MASCOTS 2016), 2016,
    doi:10.1109/MASCOTS.2016.31.

    Examples
    --------
    Three rounds of 100, 200 and 400 unit readings, each with a warm-up of 10 slow readings
    (0.2 s of setup before the first):

    >>> import numpy as np
    >>> from perfcast.settings import validate
    >>> from perfcast.warmup.runner import RoundRecord
    >>> from perfcast.warmup.settings import session_settings
    >>> section = validate({"round_lower_bound_s": 0,
    ...                     "workloads": {"w": {"command": "w {work}", "work_max": 400}}}, "warmup")
    >>> settings = session_settings("w", section, {}, seed=0).analysis
    >>> rng = np.random.default_rng(5)
    >>> def round_of(i, work):
    ...     x = np.r_[np.full(10, 0.03), np.full(work - 10, 0.01)] + 1e-4 * rng.random(work)
    ...     return RoundRecord(i, work, "dyadic", 0.2 + x.sum(), 0, 0.0, 0.0, 0, x.tolist(),
    ...                        (0.2 + np.cumsum(x)).tolist())
    >>> an = analyze_session([round_of(i, w) for i, w in enumerate((100, 200, 400))], settings)
    >>> [(r.phases.stable, r.phases.warmup_len) for r in an.rounds]
    [((10, 100), 10), ((10, 200), 10), ((10, 400), 10)]
    >>> round(an.unit_ci.mean, 4), an.unit_ci.n, an.wps is None  # (WPS: too few rounds)
    (0.01, 670, True)
    """
    cache = {} if cache is None else cache
    rounds = []
    for rec in records:
        if rec.round not in cache:
            cache[rec.round] = analyze_round(rec, settings)
        rounds.append(cache[rec.round])
    an = SessionAnalysis(rounds, settings, None, None, None, None)
    stable = an.stable_readings
    try:
        an.unit_ci = mean_ci(stable, ac_limit=settings.ci.limit,
                             confidence=settings.ci.confidence,
                             target_relative_width=settings.ci.target_relative_width,
                             min_samples=settings.ci.samples_min)
    except NotEnoughDataError as exc:
        an.unit_ci_reason = str(exc)
    try:
        an.wps = wps_regression(
            np.array([r.work for r in records], dtype=float),
            np.array([r.duration_s for r in records], dtype=float),
            lower_bound_s=settings.round_lower_bound_s, ac_limit=settings.ci.limit,
            confidence=settings.ci.confidence,
            max_prediction_error=settings.wps_max_prediction_error)
    except NotEnoughDataError as exc:
        an.wps_reason = str(exc)
    return an
