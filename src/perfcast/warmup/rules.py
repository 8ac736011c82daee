"""The warm-up stage's rules, one function each (``workflow/rules/warmup.smk``; each script of
``scripts/warmup_*.py`` builds the job's settings from the rule's one ``settings`` param,
:func:`perfcast.rulekit.rule_settings`, and makes one call). The paper rules' functions are in
:mod:`perfcast.warmup.artifacts`.

* ``warmup_run``: :func:`run_workload`;
* ``warmup_figure``: :func:`write_phase_figure`;
* ``warmup_counter_phases``: :func:`run_counter_phases`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from perfcast.io import parquet_metadata, read_parquet, write_json, write_parquet
from perfcast.warmup.settings import RunSettings, TraceSettings


def run_workload(settings: RunSettings, *, rounds: str | Path, readings: str | Path,
                 summary: str | Path) -> dict[str, Any]:
    """Rule ``warmup_run``: run (or resume) a workload's session and write its outputs.

    Parameters
    ----------
    settings : RunSettings
        The session (:func:`perfcast.warmup.settings.session_settings`) and its journal, the
        durable record of finished rounds (not an output, so that it survives a failed or
        killed job, which then resumes from it).
    rounds, readings : str or Path
        Parquet outputs: one row per round, one row per unit reading, with phase labels
        (:class:`perfcast.warmup.analysis.SessionAnalysis`).
    summary : str or Path
        JSON output: stable throughput with its CI, WPS, phase lengths, settings.

    Returns
    -------
    dict
        The summary written.

    Raises
    ------
    RoundFailedError
        A round's command failed.

    Examples
    --------
    A command that prints one unit reading (seconds) per unit of work, run for three rounds:

    >>> import tempfile
    >>> from pathlib import Path
    >>> from perfcast.settings import validate
    >>> from perfcast.warmup.settings import RunSettings, session_settings
    >>> command = "{python} -c 'print(*[0.001] * {work}, sep=chr(10))'"
    >>> section = validate({"session": {"max_rounds": 3, "min_rounds": 3},
    ...                     "workloads": {"w": {"command": command, "work_max": 64}}}, "warmup")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     out = Path(tmp)
    ...     run = RunSettings(session_settings("w", section, {}, seed=0),
    ...                       journal=str(out / "journal.jsonl"))
    ...     result = run_workload(run, rounds=out / "rounds.parquet",
    ...                           readings=out / "readings.parquet", summary=out / "summary.json")
    >>> result["rounds"], result["stop_reason"], result["readings"]
    (3, 'max_rounds', 7)
    """
    from perfcast.warmup.session import run_session

    session = settings.session
    records, analysis, reason = run_session(session, settings.journal)
    meta = {"workload": session.name, "measured": True, "command": session.program.command}
    write_parquet(analysis.rounds_frame(), rounds, metadata=meta)
    write_parquet(analysis.readings_frame(), readings, metadata=meta)
    result = analysis.summary(session, reason)
    write_json(result, summary)
    return result


def write_phase_figure(*, rounds: str | Path, readings: str | Path, summary: str | Path,
                       figure: str | Path) -> None:
    """Rule ``warmup_figure``: the Fig. 2-like phases figure of one workload.

    Parameters
    ----------
    rounds, readings, summary : str or Path
        The workload's ``warmup_run`` outputs (:func:`run_workload`).
    figure : str or Path
        The PNG written (:func:`perfcast.warmup.figures.phase_figure`).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from perfcast.settings import validate
    >>> from perfcast.warmup.settings import RunSettings, session_settings
    >>> command = "{python} -c 'print(*[0.001] * {work}, sep=chr(10))'"
    >>> section = validate({"session": {"max_rounds": 1, "min_rounds": 1},
    ...                     "workloads": {"w": {"command": command, "work_max": 64}}}, "warmup")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     out = Path(tmp)
    ...     run = RunSettings(session_settings("w", section, {}, seed=0),
    ...                       journal=str(out / "journal.jsonl"))
    ...     paths = {k: out / f"{k}.{ext}" for k, ext in
    ...              (("rounds", "parquet"), ("readings", "parquet"), ("summary", "json"))}
    ...     _ = run_workload(run, **paths)
    ...     write_phase_figure(**paths, figure=out / "phases.png")
    ...     (out / "phases.png").read_bytes()[1:4]
    b'PNG'
    """
    from perfcast.warmup.figures import phase_figure

    phase_figure(read_parquet(rounds), read_parquet(readings),
                 json.loads(Path(summary).read_text()), figure)


def run_counter_phases(settings: TraceSettings, *, counters: str | Path, phases: str | Path,
                       summary: str | Path) -> dict[str, Any]:
    """Rule ``warmup_counter_phases``: phases and stable IPC of one counter trace.

    Parameters
    ----------
    settings : TraceSettings
        ``warmup.counters``, and the trace's generation and benchmark (recorded in the outputs).
    counters : str or Path
        The counters stage's Parquet of that generation and benchmark.
    phases : str or Path
        Parquet output, a phase label per interval (what the model stage reads for
        ``model.stable_only``).
    summary : str or Path
        JSON output (:func:`perfcast.warmup.counter_phases.counter_phases`), with
        ``generation`` and ``benchmark``.

    Returns
    -------
    dict
        The summary written.

    Raises
    ------
    InputError
        A trace the analysis cannot use (missing column, no intervals, bad counts).

    Examples
    --------
    A trace at a steady 2 instructions per cycle:

    >>> import tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from perfcast.warmup.settings import TraceSettings, warmup_settings
    >>> n = 100
    >>> trace = pd.DataFrame({"interval": range(n), "time": [0.1 * i for i in range(n)],
    ...                       "duration_s": [0.1] * n, "instructions": [2e8] * n,
    ...                       "cycles": [1e8] * n, "ipc": [2.0] * n})
    >>> job = TraceSettings(warmup_settings({}).counters, generation="g", benchmark="b")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     trace.to_parquet(Path(tmp) / "trace.parquet")
    ...     result = run_counter_phases(job, counters=Path(tmp) / "trace.parquet",
    ...                                 phases=Path(tmp) / "phases.parquet",
    ...                                 summary=Path(tmp) / "summary.json")
    >>> result["benchmark"], result["stable"]["intervals"], result["stable_ipc"]["mean"]
    ('b', 100, 2.0)
    """
    from perfcast.warmup.counter_phases import counter_phases

    gen, bench = settings.generation, settings.benchmark
    labels, result = counter_phases(read_parquet(counters), settings.phases, counters)
    result = {"generation": gen, "benchmark": bench, **result}
    # simulated counters give simulated phases: said as the counters table says it
    simulated = bool(parquet_metadata(counters).get("simulated", False))
    write_parquet(labels, phases, metadata={"generation": gen, "benchmark": bench,
                                            "simulated": simulated})
    write_json({**result, "simulated": simulated}, summary)
    return result
