"""The warm-up stage's rules, one function each (``workflow/rules/warmup.smk``; each script of
``scripts/warmup_*.py`` rebuilds its settings from the rule's ``params`` and makes one call).
The paper rules' functions are in :mod:`perfcast.warmup.artifacts`.

* ``warmup_run``: :func:`run_workload`;
* ``warmup_figure``: :func:`write_phase_figure`;
* ``warmup_counter_phases``: :func:`run_counter_phases`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from perfcast.io import read_parquet, write_json, write_parquet
from perfcast.warmup.settings import CounterPhaseSettings, SessionSettings


def run_workload(settings: SessionSettings, *, journal: str | Path, rounds: str | Path,
                 readings: str | Path, summary: str | Path) -> dict[str, Any]:
    """Rule ``warmup_run``: run (or resume) a workload's session and write its outputs.

    Parameters
    ----------
    settings : the session (:func:`perfcast.warmup.settings.session_params`).
    journal : the durable journal of finished rounds; not an output, so that it survives a
        failed or killed job, which then resumes from it.
    rounds, readings : Parquet outputs: one row per round, one row per unit reading, with phase
        labels (:class:`perfcast.warmup.analysis.SessionAnalysis`).
    summary : JSON output: stable throughput with its CI, WPS, phase lengths, settings.

    Returns
    -------
    dict
        the summary written.

    Raises
    ------
    RoundFailedError
        a round's command failed.
    """
    from perfcast.warmup.session import run_session

    records, analysis, reason = run_session(settings, journal)
    meta = {"workload": settings.name, "measured": True, "command": settings.program.command}
    write_parquet(analysis.rounds_frame(), rounds, metadata=meta)
    write_parquet(analysis.readings_frame(), readings, metadata=meta)
    result = analysis.summary(settings, reason)
    write_json(result, summary)
    return result


def write_phase_figure(rounds: str | Path, readings: str | Path, summary: str | Path,
                       out: str | Path) -> None:
    """Rule ``warmup_figure``: the Fig. 2-like phases figure of one workload (the outputs of
    ``warmup_run`` in, a PNG out)."""
    from perfcast.warmup.figures import phase_figure

    phase_figure(read_parquet(rounds), read_parquet(readings),
                 json.loads(Path(summary).read_text()), out)


def run_counter_phases(counters: str | Path, settings: CounterPhaseSettings, *, gen: str,
                       bench: str, phases: str | Path, summary: str | Path) -> dict[str, Any]:
    """Rule ``warmup_counter_phases``: phases and stable IPC of one counter trace.

    Parameters
    ----------
    counters : the counters stage's Parquet of generation ``gen``, benchmark ``bench``.
    settings : ``warmup.counters``.
    phases : Parquet output, a phase label per interval (what the model stage reads for
        ``model.stable_only``).
    summary : JSON output (:func:`perfcast.warmup.counters.counter_phases`), with ``generation``
        and ``benchmark``.

    Returns
    -------
    dict
        the summary written.

    Raises
    ------
    InputError
        a trace the analysis cannot use (missing column, no intervals, bad counts).
    """
    from perfcast.warmup.counters import counter_phases

    labels, result = counter_phases(read_parquet(counters), settings, counters)
    result = {"generation": gen, "benchmark": bench, **result}
    write_parquet(labels, phases, metadata={"generation": gen, "benchmark": bench})
    write_json(result, summary)
    return result
