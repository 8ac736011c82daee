"""The model stage's domain checks: a run that can be aligned, counters with readings, a
prediction that is finite and plausible. Each failure is an InputError naming the file, the
interval or counter and the value.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from perfcast.checks import require_values
from perfcast.errors import InputError
from perfcast.model.settings import PredictSettings

#: how far (relative) a table's IPC may be from its instructions / cycles: a column written with
#: four significant digits is within 0.05 %; one further off is another quantity, or another
#: interval's, and would scale every ratio and prediction made from it
IPC_TOLERANCE = 1e-3


def check_alignable(table: pd.DataFrame, path: str | Path) -> None:
    """A run's table can be aligned or predicted: each interval labelled once, its instructions,
    cycles and IPC finite and positive in every interval, its IPC that of its instructions and
    cycles (within :data:`IPC_TOLERANCE`), its cumulative instructions finite and strictly
    growing.

    A table of two runs written one after the other repeats its labels and restarts its count:
    aligned, its pairs would name one interval for two; predicted, its totals would be those of
    both runs.

    Raises
    ------
    InputError
        naming the file, the interval (or the rows of a repeated one) and the value.
    """
    labels = table["interval"].tolist()
    if table.empty:
        raise InputError(path, "no intervals", expected="a run of at least one interval")
    require_values(table["interval"], path, "interval label", label="row",
                   labels=range(1, len(table) + 1))
    repeated = table["interval"].duplicated().to_numpy()
    if repeated.any():  # the first row repeating a label, and that label's first row
        again = int(np.flatnonzero(repeated)[0])
        first = labels.index(labels[again])
        raise InputError(path, f"interval {labels[again]} appears in rows {first + 1} and "
                         f"{again + 1} of {len(table)}",
                         expected="each interval once: one run per table")
    for col in ("instructions", "cycles"):  # this run's own counts, named as its own
        require_values(table[col], path, col, low=0, labels=labels)
    require_values(table["ipc"], path, "IPC", low=0, labels=labels)
    ipc = table["ipc"].to_numpy(dtype=float)
    counted = table["instructions"].to_numpy(dtype=float) / table["cycles"].to_numpy(dtype=float)
    off = np.abs(ipc - counted) > IPC_TOLERANCE * counted
    if off.any():  # the IPC column is what the ratio multiplies: it must be the counts' IPC
        k = int(np.flatnonzero(off)[0])
        raise InputError(path, f"IPC {float(ipc[k])!r} in interval {labels[k]} (row {k + 1}) is "
                         f"not instructions / cycles = {float(counted[k])!r}",
                         expected=f"the IPC of the interval's counts, within "
                                  f"{IPC_TOLERANCE:.1%} (four significant digits)")
    cum = table["instructions_cumulative_sum"].to_numpy(dtype=float)
    require_values(cum, path, "cumulative instructions", low=0, labels=labels)
    step = np.diff(cum)
    if (step <= 0).any():
        k = int(np.flatnonzero(step <= 0)[0]) + 1
        raise InputError(path, f"cumulative instructions {float(cum[k])!r} in interval "
                         f"{labels[k]} do not exceed the previous interval's "
                         f"{float(cum[k - 1])!r}",
                         expected="strictly growing cumulative instructions")


def require_readings(table: pd.DataFrame, features: Sequence[str], path: str | Path) -> None:
    """Every counter column holds at least one reading.

    A counter that perf reported as ``<not supported>`` or ``<not counted>`` in every interval
    is all NaN after post-processing: the model's input is then undefined, so the run fails
    rather than leave the benchmark out or predict from nothing.

    Parameters
    ----------
    table : pandas.DataFrame
        a counter table.
    features : sequence of str
        the ``*_pki`` columns to check.
    path : str or Path
        the table's file (for errors).

    Raises
    ------
    InputError
        naming the file and the counter.
    """
    for f in features:
        if not np.isfinite(table[f].to_numpy(dtype=float)).any():
            raise InputError(path, f"counter {f.removesuffix('_pki')!r} ({f}) has no reading in "
                             f"any of its {len(table)} intervals (perf's <not supported> or "
                             "<not counted>)", expected="a counter the PMU counts on this run")


def check_prediction(pred: pd.DataFrame, path: str | Path, settings: PredictSettings) -> None:
    """A prediction's invariants: new-generation cycles and runtime finite and positive, IPC
    within ``settings.ipc_range``.

    Parameters
    ----------
    pred : pandas.DataFrame
        the prediction (:func:`perfcast.model.knn.predict_run`).
    path : str or Path
        the counter table it was made from (for errors).
    settings : PredictSettings
        the ``predict`` section (``ipc_range``).

    Raises
    ------
    InputError
        naming the counter file, the interval and the value.
    """
    low, high = settings.ipc_range
    labels = pred["interval"].tolist()
    require_values(pred["ipc_new_pred"], path, "predicted new-generation IPC", low=low,
                   high=high, low_inclusive=True, labels=labels)
    require_values(pred["cycles_new_pred"], path, "predicted new-generation cycles", low=0,
                   labels=labels)
    if "runtime_new_pred_s" in pred:
        require_values(pred["runtime_new_pred_s"], path, "predicted runtime (s)", low=0,
                       labels=labels)
