"""Training set: old-generation PKI counters (X) -> IPC ratio new/old (y), benchmark as group.

One row per mapped pair of the alignment (as in Patkar's method, docs/methods/model.md): the old
row's snapshot of the system and the ratio of the IPCs at the same point of the instruction
stream.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfcast.errors import InputError

TARGET = "ipc_ratio"
GROUP = "benchmark"


def feature_columns(counters: pd.DataFrame) -> list[str]:
    """The PKI columns of a post-processed counter table, in table order."""
    return [c for c in counters.columns if c.endswith("_pki")]


def benchmark_rows(
    benchmark: str,
    old: pd.DataFrame,
    pairs: pd.DataFrame,
    stable_intervals: np.ndarray | None = None,
) -> pd.DataFrame:
    """Training rows of one benchmark: one per aligned pair.

    Parameters
    ----------
    benchmark : str
        the benchmark's name (the group of its rows).
    old : pandas.DataFrame
        the old run's counter table (``interval`` and the ``*_pki`` features).
    pairs : pandas.DataFrame
        the aligned pairs (``old_interval``, ``new_interval``, ``ipc_ratio``).
    stable_intervals : numpy.ndarray or None, default=None
        keep only pairs whose old interval is one of these (None: every pair).

    Returns
    -------
    pandas.DataFrame
        ``benchmark``, ``old_interval``, ``new_interval``, ``ipc_ratio``, then the features;
        rows with a non-finite feature or target dropped.
    """
    feats = feature_columns(old)
    x = old.set_index("interval")[feats]
    rows = pairs[["old_interval", "new_interval", TARGET]].copy()
    if stable_intervals is not None:
        rows = rows[rows["old_interval"].isin(stable_intervals)]
    rows = rows.join(x, on="old_interval")
    rows.insert(0, GROUP, benchmark)
    rows = rows.replace([np.inf, -np.inf], np.nan).dropna(subset=[*feats, TARGET])
    return rows.reset_index(drop=True)


def build_trainset(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate benchmarks (same feature columns required), sorted for determinism.

    Raises
    ------
    ValueError
        no benchmark.
    InputError
        a benchmark with other feature columns than the first.
    """
    if not parts:
        raise ValueError("no benchmarks to build a training set from")
    cols = list(parts[0].columns)
    for p in parts[1:]:
        if list(p.columns) != cols:
            raise InputError(None, f"benchmark {p[GROUP].iloc[0] if len(p) else '?'} has "
                                   "different counter columns", expected=str(cols))
    out = pd.concat(parts, ignore_index=True)
    return out.sort_values([GROUP, "old_interval", "new_interval"], kind="stable").reset_index(
        drop=True)


def keep_intervals(train: pd.DataFrame, keep: dict[str, np.ndarray]) -> pd.DataFrame:
    """Rows whose old interval is in ``keep[benchmark]`` (e.g. the stable phase)."""
    allowed = pd.DataFrame(
        [(b, int(i)) for b, ivs in keep.items() for i in ivs], columns=[GROUP, "old_interval"]
    )
    out = train.merge(allowed.astype({"old_interval": train["old_interval"].dtype}),
                      on=[GROUP, "old_interval"], how="inner")
    return out.reset_index(drop=True)
