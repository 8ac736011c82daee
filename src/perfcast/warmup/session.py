"""A measurement session: run rounds until the stable throughput is known well enough.

Loop: analyse the rounds so far; stop when every criterion in ``stop_on`` has a CI no wider
than the target (relative to the estimate) and at least ``min_rounds`` ran, or when the round
or time budget is spent (the next round's predicted duration included); otherwise run the work
amount the planner asks for and append the round to the journal. The ``warmup_run`` rule
writes the outputs at the end (:func:`perfcast.warmup.rules.run_workload`).
"""

from __future__ import annotations

import logging
from pathlib import Path

from perfcast.warmup.analysis import RoundAnalysis, SessionAnalysis, analyze_session
from perfcast.warmup.journal import Journal
from perfcast.warmup.planner import PlannedRound, next_round
from perfcast.warmup.runner import RoundRecord, run_round
from perfcast.warmup.settings import SessionSettings

log = logging.getLogger(__name__)


def _predict_duration(records: list[RoundRecord], an: SessionAnalysis, work: int) -> float:
    if an.wps is not None:
        return an.wps.alpha + work / an.wps.v
    last = records[-1]
    return last.duration_s * work / max(last.work, 1)


def stop_reason(records: list[RoundRecord], an: SessionAnalysis,
                settings: SessionSettings) -> str | None:
    """Why the session stops now, or None to run another round.

    Parameters
    ----------
    records : list of RoundRecord
        the rounds run so far, in order.
    an : SessionAnalysis
        their analysis (the CI of the stable readings and the WPS regression).
    settings : SessionSettings
        the session's settings (``limits`` and ``ci.target_relative_width``).

    Returns
    -------
    str or None
        ``"target"`` (at least ``min_rounds`` and every criterion of ``stop_on`` met: the stable
        unit readings reach the required sample size of their CI, with Pilot's per-preset
        minimum number of subsession means, and the WPS speed's CI is no wider than
        ``ci.target_relative_width``; a command that prints no unit readings is judged by the
        WPS regression alone), ``"max_rounds"``, ``"max_time"``, or None.
    """
    limits = settings.limits
    target = settings.ci.target_relative_width
    criteria = [c for c in limits.stop_on
                if c != "readings" or any(r.readings for r in records)] or ["wps"]
    if len(records) >= limits.min_rounds and all(an.criterion_met(c, target)
                                                 for c in criteria):
        return "target"
    if len(records) >= limits.max_rounds:
        return "max_rounds"
    if sum(r.duration_s for r in records) >= limits.max_time_s:
        return "max_time"
    return None


def run_session(settings: SessionSettings, journal_path: str | Path
                ) -> tuple[list[RoundRecord], SessionAnalysis, str]:
    """Run (or resume) a workload's session, round after round (Pilot's method).

    Parameters
    ----------
    settings : SessionSettings
        The session's settings.
    journal_path : str or Path
        The durable journal (:class:`perfcast.warmup.journal.Journal`): rounds found
        there under the same :meth:`~perfcast.warmup.settings.SessionSettings.measurement_key`
        are kept, not measured again; each new round is appended as it finishes.

    Returns
    -------
    records : list of RoundRecord
        every round, the resumed ones first.
    analysis : SessionAnalysis
        their analysis (phases, stable throughput with its CI, WPS).
    reason : str
        why it stopped: ``target``, ``max_rounds``, ``max_time`` or ``work_max`` (no further
        work amount can help).

    Raises
    ------
    RoundFailedError
        a round's command failed (the rounds before it stay in the journal).
    HostMismatchError
        the journal's rounds were measured on another host or CPU model, and
        ``session.allow_other_host`` is false.

    References
    ----------
    Y. Li, Y. Gupta, E. L. Miller, D. D. E. Long, "Pilot: A Framework that Understands How to
    Do Performance Benchmarks the Right Way", Proc. 24th IEEE MASCOTS, 2016,
    doi:10.1109/MASCOTS.2016.31.
    """
    limits = settings.limits
    journal = Journal(journal_path, settings.measurement_key(),
                      allow_other_host=limits.allow_other_host)
    records = journal.load()
    cache: dict[int, RoundAnalysis] = {}
    while True:
        an = analyze_session(records, settings.analysis, cache)
        if an.unit_ci is not None:
            log.info("%d stable readings of the %s required (q %d, at least %d blocks)",
                     an.unit_ci.n, an.unit_ci.required_readings, an.unit_ci.q,
                     an.unit_ci.min_samples)  # (None: a mean of 0, no relative target)
        reason = stop_reason(records, an, settings)
        if reason:
            break
        planned: PlannedRound | None = next_round(
            [(r.work, r.duration_s) for r in records], settings.planner,
            alpha_work=an.wps.alpha_work if an.wps else 0.0)
        if planned is None:
            reason = "work_max"
            break
        spent = sum(r.duration_s for r in records)
        if records and len(records) >= limits.min_rounds and \
                spent + _predict_duration(records, an, planned.work) > limits.max_time_s:
            reason = "max_time"
            break
        rec = run_round(settings, planned, len(records))
        journal.append(rec)
        records.append(rec)
        log.info("round %d: %s work=%d %.3f s, %d readings", rec.round, rec.stage, rec.work,
                 rec.duration_s, len(rec.readings))
    log.info("stopped (%s) after %d rounds", reason, len(records))
    return records, an, reason
