"""Our paper's warm-up artifacts (``results/paper/warmup_*``), one function per paper rule of
``workflow/rules/warmup.smk``."""

from __future__ import annotations

import json
from pathlib import Path

from perfcast.io import read_parquet, write_csv
from perfcast.warmup.figures import counters_table, paper_figure, throughput_table
from perfcast.warmup.settings import PaperSettings


def _json(path: str | Path) -> dict:
    return json.loads(Path(path).read_text())


def write_paper(settings: PaperSettings, *, summaries: list[str], rounds: list[str],
                readings: list[str], figure: str | Path, table: str | Path) -> None:
    """Rule ``warmup_paper``: the phases figure (one panel per workload) and the stable
    throughput table (:func:`perfcast.warmup.figures.throughput_table`).

    Parameters
    ----------
    settings : PaperSettings
        The workloads, in the order of the other lists.
    summaries, rounds, readings : list of str
        Each workload's ``warmup_run`` outputs (:func:`perfcast.warmup.rules.run_workload`).
    figure, table : str or Path
        The PNG and CSV written.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from perfcast.settings import validate
    >>> from perfcast.warmup.rules import run_workload
    >>> from perfcast.warmup.settings import PaperSettings, RunSettings, session_settings
    >>> command = "{python} -c 'print(*[0.001] * {work}, sep=chr(10))'"
    >>> section = validate({"session": {"max_rounds": 1, "min_rounds": 1},
    ...                     "workloads": {"w": {"command": command, "work_max": 64}}}, "warmup")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     out = Path(tmp)
    ...     paths = {k: out / f"{k}.{ext}" for k, ext in
    ...              (("rounds", "parquet"), ("readings", "parquet"), ("summary", "json"))}
    ...     _ = run_workload(RunSettings(session_settings("w", section, {}, seed=0),
    ...                                  journal=str(out / "journal.jsonl")), **paths)
    ...     write_paper(PaperSettings(("w",)), summaries=[paths["summary"]],
    ...                 rounds=[paths["rounds"]], readings=[paths["readings"]],
    ...                 figure=out / "phases.png", table=out / "throughput.csv")
    ...     list(pd.read_csv(out / "throughput.csv")["workload"])
    ['w']
    """
    names = list(settings.workloads)
    sums = [_json(p) for p in summaries]
    paper_figure([(n, read_parquet(r), read_parquet(d), s)
                  for n, r, d, s in zip(names, rounds, readings, sums, strict=True)], figure)
    write_csv(throughput_table(dict(zip(names, sums, strict=True))), table)


def write_counters_paper(*, summaries: list[str], table: str | Path) -> None:
    """Rule ``warmup_paper_counters``: stable IPC with its CI and phase lengths per counter
    trace (:func:`perfcast.warmup.figures.counters_table`).

    Parameters
    ----------
    summaries : list of str
        The ``warmup_counter_phases`` summaries (:func:`perfcast.warmup.rules.run_counter_phases`).
    table : str or Path
        The CSV written.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from perfcast.io import write_json
    >>> summary = {"generation": "g", "benchmark": "b", "intervals": 100,
    ...            "setup": {"intervals": 0, "seconds": 0.0},
    ...            "warmup": {"intervals": 10, "seconds": 1.0},
    ...            "stable": {"intervals": 90, "seconds": 9.0},
    ...            "cooldown": {"intervals": 0, "seconds": 0.0},
    ...            "phase_rule": "dominant",
    ...            "stable_ipc": {"mean": 1.95, "lower": 1.9, "upper": 2.0}}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     write_json(summary, Path(tmp) / "b.json")
    ...     write_counters_paper(summaries=[Path(tmp) / "b.json"], table=Path(tmp) / "t.csv")
    ...     pd.read_csv(Path(tmp) / "t.csv")["stable_ipc"].tolist()
    [1.95]
    """
    write_csv(counters_table([_json(p) for p in summaries]), table)
