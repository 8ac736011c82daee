"""Replaying a profiling campaign from a grid measured earlier.

A tidy measurement table (one measured cell a row, such as the paper's
``arcp_measurements.csv``: ``program, cpu_cores, mem_gb, net_code, io_mbps, metric, value``)
becomes one :class:`MeasuredGrid` per program: the columns the program varies are its axes, their
levels the values seen (plus levels the layout declares, e.g. the NPB runs that failed at low
memory), a cell without a value is a failed run (a runtime or latency of 0 is refused, not
read as one). :class:`ReplayBackend` then answers the profiler's runs from that grid, and the
grid's own sensitivities are the dense truth the interpolated result is scored against.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from perfcast.checks import input_file, read_csv, require_values
from perfcast.errors import InputError
from perfcast.sensitivity.backends import RunOutcome
from perfcast.sensitivity.metrics import sensitivity_array
from perfcast.sensitivity.resources import Dimension, ResourceModel
from perfcast.sensitivity.settings import GridLayout

#: measurement column -> (resource kind, unit)
AXIS_COLUMNS: dict[str, tuple[str, str]] = {
    "cpu_cores": ("cpu_cores", "cores"),
    "mem_gb": ("memory", "GiB"),  # docker's -m 2g and the shipped grid's memory_mb / 1024
    "net_code": ("network", "code"),
    "io_mbps": ("disk_read", "MB/s"),
}

#: metric name -> higher is better (the data has no units; docs/methods/sensitivity.md)
METRIC_DIRECTION: dict[str, bool] = {
    "throughput": True,
    "achieved_mbps": True,
    "runtime_s": False,
    "latency": False,
}

REQUIRED = ["program", "metric", "value"]


#: the layout of a program that needs none: the table's rows as they are
AS_MEASURED = GridLayout(levels={}, exclude={}, reverse=(), kinds={}, higher_is_better=None)


def read_measurements(path: str | Path) -> pd.DataFrame:
    """Read and check a measurement table.

    Parameters
    ----------
    path : str or Path
        A CSV with columns ``program``, ``metric``, ``value`` and axis columns among
        :data:`AXIS_COLUMNS` (empty cell: the axis is not varied for that program).

    Returns
    -------
    pandas.DataFrame
        numeric axes and values; ``attrs["path"]`` names the file.

    Raises
    ------
    InputError
        the file is missing or unreadable, a column is missing, or a cell is not a number
        (naming the file and line).
    """
    path = input_file(path)
    df = read_csv(path)
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise InputError(path, f"missing column(s) {missing}",
                         expected=f"columns {REQUIRED} and axis columns {list(AXIS_COLUMNS)}")
    if not any(c in df.columns for c in AXIS_COLUMNS):
        raise InputError(path, "no axis column", expected=f"one of {list(AXIS_COLUMNS)}")
    for col in [c for c in AXIS_COLUMNS if c in df.columns] + ["value"]:
        num = pd.to_numeric(df[col], errors="coerce")
        bad = num.isna() & df[col].notna()
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(path, f"column {col!r} holds {df[col].iloc[i]!r}", row=i + 2,
                             expected="a number or an empty cell")
        # a level or a measurement is a finite number >= 0 (an empty cell: a failed run)
        given = num.notna().to_numpy()
        require_values(num.to_numpy()[given], path, col, low=0,
                       low_inclusive=True, lines=np.flatnonzero(given) + 2)
        df[col] = num
    df["program"] = df["program"].astype(str)
    df.attrs["path"] = str(path)
    return df


@dataclass(frozen=True)
class MeasuredGrid:
    """One program's measured performance on a grid (NaN = failed run)."""

    program: str
    metric: str
    higher_is_better: bool
    model: ResourceModel
    values: np.ndarray

    @property
    def baseline(self) -> float:
        """Performance with the most of every resource (the unrestricted run)."""
        return float(self.values[tuple(len(d) - 1 for d in self.model.dims)])

    def failed_points(self) -> list[dict[str, float]]:
        """The cells without a measurement (a failed run, or a level of one axis never measured
        with some level of another), in grid order: they count as failed runs, sensitivity 0.

        >>> table = pd.DataFrame({"program": "p", "cpu_cores": [1.0, 2.0, 2.0],
        ...                       "mem_gb": [1.0, 1.0, 2.0], "metric": "runtime_s",
        ...                       "value": [4.0, 2.0, 1.0]})
        >>> MeasuredGrid.from_frame(table, "p", AS_MEASURED).failed_points()
        [{'cpu_cores': 1.0, 'mem_gb': 2.0}]
        """
        return [self.model.point(list(idx)) for idx in zip(*np.nonzero(np.isnan(self.values)),
                                                            strict=True)]

    def index(self, point: Mapping[str, float]) -> tuple[int, ...]:
        """The grid index of ``point`` (level per axis name)."""
        return tuple(d.index(point[d.name]) for d in self.model.dims)

    def truth(self) -> np.ndarray:
        """Sensitivity of every cell (Eq. 1; a failed cell is 0)."""
        return sensitivity_array(self.values, self.baseline, self.higher_is_better)

    @classmethod
    def from_frame(cls, df: pd.DataFrame, program: str, layout: GridLayout) -> MeasuredGrid:
        """Program ``program``'s grid from a table of :func:`read_measurements`.

        The axes are the columns the program varies (in interpolation order), their levels the
        values seen plus ``layout.levels``; a cell without a row is a failed run (NaN).

        Parameters
        ----------
        df : pandas.DataFrame
            The table (:func:`read_measurements`; ``attrs["path"]`` names it in errors).
        program : str
            The program whose rows form the grid.
        layout : GridLayout
            How they form it (:data:`AS_MEASURED`: as they are).

        Returns
        -------
        MeasuredGrid

        Raises
        ------
        InputError
            no rows for ``program``, several metrics, a direction unknown, a row leaving an
            axis empty, a cell measured twice, no unrestricted measurement (the most of
            every resource), or a runtime-like (lower is better) value of 0: a failed run is a
            cell without a value, and a measured 0 would score as one without being counted.

        Examples
        --------
        >>> table = pd.DataFrame({"program": "p", "cpu_cores": [1.0, 2.0, 1.0, 2.0],
        ...                       "mem_gb": [1.0, 1.0, 2.0, 2.0], "metric": "runtime_s",
        ...                       "value": [4.0, 2.0, 3.0, 1.0]})
        >>> grid = MeasuredGrid.from_frame(table, "p", AS_MEASURED)
        >>> grid.model.names, grid.baseline
        (('cpu_cores', 'mem_gb'), 1.0)
        >>> grid.truth().round(2).tolist()  # runtime-like: S = P0 / P
        [[0.25, 0.33], [0.5, 1.0]]
        """
        path = df.attrs.get("path")
        rows = df[df["program"] == program]
        if rows.empty:
            raise InputError(path, f"no rows for program {program!r}",
                             expected=f"one of {sorted(df['program'].unique())}")
        metrics = sorted(rows["metric"].astype(str).unique())
        if len(metrics) != 1:
            raise InputError(path, f"program {program!r} has several metrics {metrics}")
        metric = metrics[0]
        hib = layout.higher_is_better
        if hib is None:
            if metric not in METRIC_DIRECTION:
                raise InputError(path, f"metric {metric!r} of {program!r}: direction unknown",
                                 expected="higher_is_better set for this program")
            hib = METRIC_DIRECTION[metric]
        axes = [c for c in AXIS_COLUMNS if c in rows.columns and rows[c].notna().any()]
        if not axes:
            raise InputError(path, f"program {program!r} varies no axis column")
        for col, vals in layout.exclude.items():
            if col in axes:
                rows = rows[~rows[col].isin(list(vals))]
        dims = []
        for col in axes:
            kind = layout.kinds.get(col, AXIS_COLUMNS[col][0])
            seen = set(rows[col].dropna().tolist()) | set(layout.levels.get(col, []))
            seen -= set(layout.exclude.get(col, []))
            rev = col in layout.reverse
            lv = tuple(sorted(seen, reverse=rev))
            dims.append(Dimension(col, kind, lv, AXIS_COLUMNS[col][1], reverse=rev))
        model = ResourceModel.ordered(dims)  # interpolation order: CPU, memory, network, disk
        values = np.full(model.shape, np.nan)
        names = list(model.names)
        zero: tuple[int, dict, float] | None = None  # the first runtime-like cell <= 0
        for i, r in rows.iterrows():
            if any(pd.isna(r[c]) for c in names):
                raise InputError(path, f"program {program!r}: a row leaves an axis empty",
                                 row=int(i) + 2, expected=f"values in {names}")
            idx = tuple(d.index(r[d.name]) for d in model.dims)
            if not math.isnan(values[idx]):
                cell = {n: r[n] for n in names}
                raise InputError(path, f"program {program!r}: cell {cell} measured twice",
                                 row=int(i) + 2)
            values[idx] = r["value"]
            if not hib and zero is None and r["value"] <= 0:
                zero = (int(i) + 2, {n: r[n] for n in names}, float(r["value"]))
        grid = cls(program, metric, bool(hib), model, values)
        top = model.point([len(d) - 1 for d in model.dims])
        if np.isnan(grid.baseline):
            raise InputError(path, f"program {program!r}: no measurement with the most of every "
                             "resource (the unrestricted run)", expected=f"a row at {top}")
        if not (np.isfinite(grid.baseline) and grid.baseline > 0):
            # every sensitivity is relative to it: 0 would make them all 0 or infinite
            line = next((int(i) + 2 for i, r in rows.iterrows()
                         if all(r[n] == top[n] for n in names)), None)
            raise InputError(path, f"program {program!r}: the unrestricted run {top} measured "
                             f"{grid.baseline:g}", row=line,
                             expected=f"a positive {metric} of the unrestricted run: every "
                                      "sensitivity is relative to it")
        if zero is not None:
            # a run takes some time; Eq. 1 (S = P0 / P) would read 0 as a failed run (S = 0)
            # without its being counted among the failed cells, which are left out instead
            raise InputError(path, f"program {program!r}: {metric} {zero[2]:g} at {zero[1]}",
                             row=zero[0],
                             expected=f"a positive {metric} (lower is better: no run takes 0), "
                                      "or no row or an empty value for a failed run")
        return grid


class ReplayBackend:
    """Answer runs from a :class:`MeasuredGrid`; ``peaks`` stand in for the monitored run.

    Parameters
    ----------
    grid : MeasuredGrid
        The measured grid.
    peaks : Mapping or None, default=None
        Peak usage per axis name (the resource ceiling); None or a missing axis: the whole
        axis is profiled.

    Raises
    ------
    InputError
        a peak for a name that is not an axis of ``grid``.
    """

    name = "replay"

    def __init__(self, grid: MeasuredGrid, peaks: Mapping[str, float] | None = None) -> None:
        self.grid = grid
        self.model = grid.model
        self.higher_is_better = grid.higher_is_better
        unknown = set(peaks or {}) - set(self.model.names)
        if unknown:
            raise InputError(None, f"peaks for {sorted(unknown)}: not axes of {grid.program}",
                             expected=f"names among {list(self.model.names)}")
        self._peaks = dict(peaks or {})

    def unrestricted(self) -> RunOutcome:
        """The grid's cell with the most of every resource."""
        return RunOutcome(performance=self.grid.baseline, ok=True)

    def peaks(self, unrestricted: RunOutcome) -> dict[str, float | None]:
        """The given peaks, per axis name (None where not given)."""
        return {n: self._peaks.get(n) for n in self.model.names}

    def run(self, point: Mapping[str, float]) -> RunOutcome:
        """The measured cell at ``point``; a cell without a measurement is a failed run."""
        v = float(self.grid.values[self.grid.index(point)])
        if not math.isfinite(v):
            return RunOutcome.failed("no measurement at this point (the run failed or was not "
                                     "recorded in the source)")
        return RunOutcome(performance=v, ok=True)
