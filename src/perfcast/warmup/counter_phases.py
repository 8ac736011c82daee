"""Phases of a counter trace (the counters stage's per-interval Parquet).

The per-interval instruction rate ``instructions / duration_s`` plays the role of Pilot's unit
readings. Phases, in order:

* **setup**: leading intervals whose rate is below ``setup_fraction`` of the trace's median
  rate (the process is loading, not yet running its work);
* **warm-up** / **stable** / **cool-down**: change points of the rate over the remaining
  intervals and the dominant-segment rule (:mod:`perfcast.warmup.segments`). Whole programs
  often have several genuine phases and no segment dominates; ``fallback="edges"`` (the
  schema's default for traces, ``warmup.counters.fallback``) then takes warm-up and cool-down
  from the first and last ``edge_fraction`` of the trace only, and the program's phases
  between them as stable.

The summary gives the stable IPC: the mean of the per-interval IPC over the stable intervals
with its subsession CI (and the aggregate ``sum(instructions) / sum(cycles)`` beside it).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from perfcast.errors import InputError
from perfcast.io import require_columns
from perfcast.warmup.ci import NotEnoughDataError, mean_ci
from perfcast.warmup.season import season
from perfcast.warmup.segments import MIN_READINGS, detect_phases
from perfcast.warmup.settings import CounterPhaseSettings

COLUMNS = ["interval", "time", "duration_s", "instructions", "cycles", "ipc"]

def _check(df: pd.DataFrame, path: str | Path) -> pd.DataFrame:
    require_columns(df, COLUMNS, path)
    if df.empty:
        raise InputError(path, "no intervals", expected="one row per counter interval")
    df = df.sort_values("interval", kind="stable").reset_index(drop=True)
    for col in ("duration_s", "instructions", "cycles"):
        v = df[col].to_numpy(dtype=float)
        bad = np.flatnonzero(~np.isfinite(v) | (v < 0))
        if bad.size:
            raise InputError(path, f"{col} = {v[bad[0]]} in interval {df['interval'][bad[0]]}",
                             row=int(bad[0]) + 1, expected=f"{col} finite and >= 0")
    if (df["duration_s"] <= 0).any():
        i = int(np.flatnonzero(df["duration_s"].to_numpy() <= 0)[0])
        raise InputError(path, f"interval {df['interval'][i]} has duration_s <= 0",
                         row=i + 1, expected="duration_s > 0")
    return df


def counter_phases(df: pd.DataFrame, settings: CounterPhaseSettings,
                   path: str | Path = "<counters>") -> tuple[pd.DataFrame, dict[str, Any]]:
    """Phase label per interval, and the per-trace summary (see the module docstring).

    Parameters
    ----------
    df : pandas.DataFrame
        One counter trace: columns :data:`COLUMNS`, a row per interval.
    settings : CounterPhaseSettings
        ``warmup.counters``.
    path : str or Path, default='<counters>'
        Names the trace in error messages.

    Returns
    -------
    phases : DataFrame
        ``interval`` and ``phase`` (setup, warmup, stable, cooldown or unstable).
    summary : dict
        intervals and seconds per phase, change points (as interval numbers), the rule that
        decided the stable phase, the settings, and the stable IPC with its CI
        (``stable_ipc``, or None with ``stable_ipc_reason``).

    Raises
    ------
    InputError
        a missing column, no intervals, a negative or non-finite count, a duration <= 0.

    Examples
    --------
    A trace whose first 20 intervals load the program (a tenth of the instruction rate), then
    warm up from 1 to 2 instructions per cycle, then run steadily:

    >>> import numpy as np
    >>> import pandas as pd
    >>> from perfcast.warmup.settings import warmup_settings
    >>> ipc = np.r_[np.full(20, 0.1), np.linspace(1.0, 2.0, 40), np.full(340, 2.0)]
    >>> ipc = ipc + 0.01 * np.random.default_rng(4).standard_normal(400)
    >>> trace = pd.DataFrame({"interval": np.arange(400), "time": 0.1 * np.arange(400),
    ...                       "duration_s": 0.1, "instructions": ipc * 1e8, "cycles": 1e8,
    ...                       "ipc": ipc})
    >>> labels, summary = counter_phases(trace, warmup_settings({}).counters)
    >>> [summary[p]["intervals"] for p in ("setup", "warmup", "stable", "cooldown")]
    [20, 29, 351, 0]
    >>> summary["phase_rule"], round(summary["stable_ipc"]["mean"], 2), len(labels)
    ('dominant', 2.0, 400)
    """
    df = _check(df, path)
    n = len(df)
    rate = (df["instructions"] / df["duration_s"]).to_numpy(dtype=float)
    med = float(np.median(rate))
    low = rate < settings.setup_fraction * med
    setup = int(np.argmin(low)) if not low.all() else n  # leading low-rate intervals
    rest = rate[setup:]
    ph = detect_phases(rest, settings.edm, min_readings=MIN_READINGS, fallback=settings.fallback,
                       edge_fraction=settings.edge_fraction)
    labels = np.full(n, "setup", dtype=object)
    labels[setup:] = ph.labels()
    phases = pd.DataFrame({"interval": df["interval"].to_numpy(dtype=np.int64),
                           "phase": labels.astype(str)})
    stable = labels == "stable"
    dur = df["duration_s"].to_numpy(dtype=float)
    ipc = df["ipc"].to_numpy(dtype=float)

    def span(label: str) -> dict[str, Any]:
        sel = labels == label
        return {"intervals": int(sel.sum()), "seconds": float(dur[sel].sum())}

    summary: dict[str, Any] = {
        "intervals": n,
        "setup": span("setup"), "warmup": span("warmup"), "stable": span("stable"),
        "cooldown": span("cooldown"), "unstable": span("unstable"),
        "change_points": [int(df["interval"][setup + c]) for c in ph.change_points],
        "phase_rule": ph.rule,
        "edm": settings.edm.to_dict(),
        "setup_fraction": settings.setup_fraction,
        "fallback": settings.fallback,
        "edge_fraction": settings.edge_fraction,
        "stable_ipc": None,
        "stable_ipc_reason": None,
        "season": cycle.to_dict() if (cycle := season(rest)) else None,
    }
    if stable.any():
        inst = df["instructions"].to_numpy(dtype=float)[stable]
        cyc = df["cycles"].to_numpy(dtype=float)[stable]
        agg = float(inst.sum() / cyc.sum()) if cyc.sum() > 0 else None
        summary["stable_ipc_aggregate"] = agg
        summary["stable_instruction_rate"] = float(inst.sum() / dur[stable].sum())
        finite = ipc[stable][np.isfinite(ipc[stable])]
        try:
            ci = mean_ci(finite, ac_limit=settings.ac_limit, confidence=settings.confidence,
                         target_relative_width=settings.target_relative_width)
            summary["stable_ipc"] = ci.to_dict()
        except NotEnoughDataError as exc:
            summary["stable_ipc_reason"] = str(exc)
    else:
        summary["stable_ipc_reason"] = "no stable phase"
    return phases, _clean(summary)


def _clean(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj
