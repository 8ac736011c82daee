"""The model stage's input tables: the post-processed counter tables of the counters stage and
the warmup stage's phase labels, read with their columns checked, and what one row of them is.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from perfcast.io import parquet_metadata, read_parquet, require_columns, require_numeric

#: the columns every post-processed counter table has (besides its ``*_pki`` features)
COUNTER_COLUMNS = ["interval", "time", "duration_s", "instructions", "cycles", "ipc",
                   "instructions_cumulative_sum"]


def read_counters(path: str | Path) -> pd.DataFrame:
    """A post-processed counter table (``results/counters/{gen}/{bench}.parquet``).

    Raises
    ------
    InputError
        naming the file: missing, not Parquet, or without a column of :data:`COUNTER_COLUMNS`
        or with one that does not hold numbers.
    """
    df = read_parquet(path)
    require_columns(df, COUNTER_COLUMNS, path)
    require_numeric(df, COUNTER_COLUMNS, path)
    return df


def stable_intervals(phase_file: str | Path) -> np.ndarray:
    """Intervals labelled ``stable`` by the warmup stage's phase analysis of a counter trace.

    Raises
    ------
    InputError
        naming the file: unreadable, or without ``interval`` and ``phase``.
    """
    ph = read_parquet(phase_file)
    require_columns(ph, ["interval", "phase"], phase_file)
    return ph.loc[ph["phase"] == "stable", "interval"].to_numpy()


#: what :func:`granularity` says when every table is a whole-run table (the model's candidates
#: depend on it: :meth:`perfcast.model.settings.KnnSettings.for_tables`)
WHOLE_RUN = "whole-run (one row per benchmark run)"


def granularity(tables: Sequence[str | Path]) -> str:
    """What one row of the counter tables is, from their metadata: ``whole-run (one row per
    benchmark run)`` for the whole-run importer's tables, ``intervals of N ms`` otherwise."""
    kinds = set()
    for path in tables:
        meta = parquet_metadata(path)
        if meta.get("granularity") == "whole-run":
            kinds.add(WHOLE_RUN)
        elif meta.get("interval_ms"):
            kinds.add(f"intervals of {meta['interval_ms']} ms")
        else:
            kinds.add("intervals")
    return "; ".join(sorted(kinds))
