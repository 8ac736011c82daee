"""Our paper's warm-up artifacts (``results/paper/warmup_*``), one function per paper rule of
``workflow/rules/warmup.smk``."""

from __future__ import annotations

import json
from pathlib import Path

from perfcast.io import read_parquet, write_csv
from perfcast.warmup.figures import counters_table, paper_figure, throughput_table


def _json(path: str | Path) -> dict:
    return json.loads(Path(path).read_text())


def write_paper(names: list[str], summaries: list[str], rounds: list[str], readings: list[str],
                figure_out: str | Path, table_out: str | Path) -> None:
    """Rule ``warmup_paper``: the phases figure (one panel per workload) and the stable
    throughput table (:func:`perfcast.warmup.figures.throughput_table`).

    Parameters
    ----------
    names : the workloads, in the order of the other lists.
    summaries, rounds, readings : each workload's ``warmup_run`` outputs.
    figure_out, table_out : the PNG and CSV written.
    """
    sums = [_json(p) for p in summaries]
    paper_figure([(n, read_parquet(r), read_parquet(d), s)
                  for n, r, d, s in zip(names, rounds, readings, sums, strict=True)], figure_out)
    write_csv(throughput_table(dict(zip(names, sums, strict=True))), table_out)


def write_counters_paper(summaries: list[str], out: str | Path) -> None:
    """Rule ``warmup_paper_counters``: stable IPC with its CI and phase lengths per counter
    trace (the ``warmup_counter_phases`` summaries in, a CSV out;
    :func:`perfcast.warmup.figures.counters_table`)."""
    write_csv(counters_table([_json(p) for p in summaries]), out)
