"""A measurement session: run rounds until the stable throughput is known well enough.

Loop: analyse the rounds so far; stop when every criterion in ``stop_on`` has a CI no wider
than the target (relative to the estimate) and at least ``min_rounds`` ran, or when the round
or time budget is spent (the next round's predicted duration included); otherwise run the work
amount the planner asks for and append the round to the journal. Outputs are written at the
end: rounds and unit readings (Parquet, with phase labels) and a JSON summary.
"""

from __future__ import annotations

import logging
from pathlib import Path

from perfcast.io import write_json, write_parquet
from perfcast.warmup.analysis import RoundAnalysis, SessionAnalysis, analyze_session
from perfcast.warmup.journal import Journal
from perfcast.warmup.planner import PlannedRound, next_round
from perfcast.warmup.runner import RoundRecord, run_round
from perfcast.warmup.settings import SessionSettings, session_settings

log = logging.getLogger(__name__)


def _predict_duration(records: list[RoundRecord], an: SessionAnalysis, work: int) -> float:
    if an.wps is not None:
        return an.wps.alpha + work / an.wps.v
    last = records[-1]
    return last.duration_s * work / max(last.work, 1)


def stop_reason(records: list[RoundRecord], an: SessionAnalysis,
                settings: SessionSettings) -> str | None:
    target = settings.analysis.target_relative_width
    # a command that prints no unit readings is judged by the WPS regression alone
    criteria = [c for c in settings.stop_on
                if c != "readings" or any(r.readings for r in records)] or ["wps"]
    if len(records) >= settings.min_rounds and all(an.criterion_met(c, target)
                                                   for c in criteria):
        return "target"
    if len(records) >= settings.max_rounds:
        return "max_rounds"
    if sum(r.duration_s for r in records) >= settings.max_time_s:
        return "max_time"
    return None


def run_session(settings: SessionSettings, journal_path: str | Path
                ) -> tuple[list[RoundRecord], SessionAnalysis, str]:
    """Run (or resume) the session; returns the rounds, their analysis and why it stopped."""
    journal = Journal(journal_path, settings.measurement_key())
    records = journal.load()
    cache: dict[int, RoundAnalysis] = {}
    while True:
        an = analyze_session(records, settings.analysis, cache)
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
        if records and len(records) >= settings.min_rounds and \
                spent + _predict_duration(records, an, planned.work) > settings.max_time_s:
            reason = "max_time"
            break
        rec = run_round(settings.workload, planned, len(records))
        journal.append(rec)
        records.append(rec)
        log.info("round %d: %s work=%d %.3f s, %d readings", rec.round, rec.stage, rec.work,
                 rec.duration_s, len(rec.readings))
    log.info("stopped (%s) after %d rounds", reason, len(records))
    return records, an, reason


def run_workload(
    name: str,
    workload: dict,
    stage: dict,
    programs: dict | None,
    *,
    journal: str | Path,
    rounds_out: str | Path,
    readings_out: str | Path,
    summary_out: str | Path,
    seed: int = 0,
) -> dict:
    """The ``warmup`` rule: run/resume workload ``name`` and write its three outputs."""
    settings = session_settings(name, workload, stage, programs, seed)
    records, an, reason = run_session(settings, journal)
    meta = {"workload": name, "measured": True, "command": settings.workload.command}
    write_parquet(an.rounds_frame(), rounds_out, metadata=meta)
    write_parquet(an.readings_frame(), readings_out, metadata=meta)
    summary = an.summary(settings, reason)
    write_json(summary, summary_out)
    return summary
