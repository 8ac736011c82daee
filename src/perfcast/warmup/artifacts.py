"""File-level entry points of the stage's Snakemake scripts (each script makes one call)."""

from __future__ import annotations

import json
from pathlib import Path

from perfcast.io import read_parquet, write_csv
from perfcast.warmup.figures import counters_table, paper_figure, phase_figure, throughput_table


def _json(path: str | Path) -> dict:
    return json.loads(Path(path).read_text())


def write_phase_figure(rounds: str | Path, readings: str | Path, summary: str | Path,
                       out: str | Path) -> None:
    """``warmup_figure``: the Fig. 2-like figure of one workload."""
    phase_figure(read_parquet(rounds), read_parquet(readings), _json(summary), out)


def write_paper(names: list[str], summaries: list[str], rounds: list[str], readings: list[str],
                figure_out: str | Path, table_out: str | Path) -> None:
    """``warmup_paper``: phases figure (one panel per workload) and the throughput table."""
    sums = [_json(p) for p in summaries]
    paper_figure([(n, read_parquet(r), read_parquet(d), s)
                  for n, r, d, s in zip(names, rounds, readings, sums, strict=True)], figure_out)
    write_csv(throughput_table(dict(zip(names, sums, strict=True))), table_out)


def write_counters_paper(summaries: list[str], out: str | Path) -> None:
    """``warmup_paper_counters``: stable IPC with CI per counter trace."""
    write_csv(counters_table([_json(p) for p in summaries]), out)
