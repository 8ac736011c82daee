"""A campaign's run table: one row per configuration x iteration, every sensor a column."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from perfcast.checks import (
    input_file,
    read_csv,
    require_unique_columns,
    require_values,
)
from perfcast.errors import InputError
from perfcast.sweep import campaign
from perfcast.sweep.space import is_numeric

ID_COLUMNS = ["campaign", "point", "iteration"]
STATUS_COLUMNS = ["status", "returncode", "signal", "timed_out"]
TIME_COLUMNS = list(campaign.TIME_COLUMNS)


def record_row(record: Mapping[str, Any]) -> dict[str, Any]:
    """Flatten one run record (see :mod:`perfcast.sweep.runner`) into a table row."""
    row: dict[str, Any] = {k: record.get(k) for k in ID_COLUMNS}
    row.update(record.get("parameters") or {})
    for k in STATUS_COLUMNS + TIME_COLUMNS:
        row[k] = record.get(k)
    row.update(record.get("perf") or {})
    row.update(record.get("energy") or {})
    row.update(record.get("custom") or {})
    hb = record.get("heartbeat") or {}
    row.update({k: v for k, v in hb.items() if k != "times"})
    row["n_errors"] = len(record.get("errors") or [])
    if "source" in record:
        row["source"] = record["source"]
    return row


def runs_frame(records: Iterable[Mapping[str, Any]], parameters: Sequence[str]) -> pd.DataFrame:
    """Rows sorted by parameter values then iteration (the same records give the same bytes).

    None in a sensor column (a failed reading, a failed run) becomes NaN.

    Parameters
    ----------
    records : iterable of mapping
        Run records (:func:`perfcast.sweep.runner.run_point`), in any order.
    parameters : sequence of str
        The campaign's parameter names, in order (the sort keys).

    Returns
    -------
    pandas.DataFrame
        One row per record: ids, parameters, status and time columns first, then every
        sensor column sorted by name.

    Raises
    ------
    InputError
        a record without one of the parameters.

    Examples
    --------
    >>> recs = [{"campaign": "c", "point": f"n~{n}", "iteration": 1, "parameters": {"n": n},
    ...          "status": "ok", "wall_s": 0.1 * n, "perf": {"perf_page_faults": 9}}
    ...         for n in (8, 2)]
    >>> df = runs_frame(recs, ["n"])
    >>> df[["point", "n", "wall_s", "perf_page_faults"]].values.tolist()
    [['n~2', 2, 0.2, 9], ['n~8', 8, 0.8, 9]]
    """
    df = pd.DataFrame([record_row(r) for r in records])
    if df.empty:
        return pd.DataFrame(columns=[*ID_COLUMNS, *parameters, *STATUS_COLUMNS, *TIME_COLUMNS])
    for p in parameters:
        if p not in df.columns:
            raise InputError(None, f"run records lack parameter {p!r}")
        if not is_numeric(df[p].tolist()):
            df[p] = df[p].astype(str)
    skip = set(ID_COLUMNS) | set(parameters) | {"status", "source"}
    for c in df.columns:
        if c not in skip and df[c].dtype == object:
            converted = pd.to_numeric(df[c], errors="coerce")
            if converted.notna().sum() == df[c].notna().sum():
                df[c] = converted.astype(float)
    df["timed_out"] = df["timed_out"].eq(True)
    df["iteration"] = df["iteration"].astype(int)
    df = df.sort_values([*parameters, "iteration"], kind="mergesort").reset_index(drop=True)
    lead = [*ID_COLUMNS, *parameters, *STATUS_COLUMNS, *TIME_COLUMNS]
    rest = sorted(c for c in df.columns if c not in lead)
    return df[[c for c in lead if c in df.columns] + rest]


def read_records(paths: Iterable[str | Path]) -> list[dict[str, Any]]:
    out = []
    for p in paths:
        try:
            out.append(json.loads(Path(p).read_text()))
        except (OSError, ValueError) as exc:
            raise InputError(p, f"not a readable run record: {exc}") from exc
    return out


def ok_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Runs that completed (status ok); a table without ``status`` (a CSV) is taken whole."""
    if "status" not in df.columns:
        return df
    return df[df["status"] == "ok"]


def summary(df: pd.DataFrame, parameters: Sequence[str]) -> dict[str, Any]:
    """Counts per status and the number of configurations, for the table's metadata; the runs'
    total wall-clock time where any run measured it (an Extra-P import measured none: no
    total, rather than 0 s)."""
    counts = df["status"].value_counts().sort_index() if "status" in df else pd.Series()
    out = {
        "n_runs": int(len(df)),
        "status": {str(k): int(v) for k, v in counts.items()},
        "n_configurations": int(df[list(parameters)].drop_duplicates().shape[0]) if len(df) else 0,
    }
    if "wall_s" in df and df["wall_s"].notna().any():
        out["wall_s_total"] = float(np.nansum(df["wall_s"]))
    return out


def not_ok_counts(df: pd.DataFrame) -> dict[str, int]:
    """Rows per ``status`` other than ok (the runs :func:`ok_rows` leaves out), sorted; empty
    without a ``status`` column.

    >>> not_ok_counts(pd.DataFrame({"status": ["ok", "failed", "timeout", "failed"]}))
    {'failed': 2, 'timeout': 1}
    """
    if "status" not in df.columns:
        return {}
    other = df.loc[df["status"] != "ok", "status"].astype(str)
    return {str(k): int(v) for k, v in other.value_counts().sort_index().items()}


def load_table(path: str | Path, columns: Sequence[str]) -> tuple[pd.DataFrame, str | None]:
    """A CSV (or Parquet) table to fit: the named columns must exist and hold numbers; rows of
    a run table whose ``status`` is not ok are left out (failed runs have no timings), which
    :func:`not_ok_counts` of the table counts.

    Parameters
    ----------
    path : str or Path
        The table (``.parquet``, else read as CSV with a header row).
    columns : sequence of str
        The columns the fit uses.

    Returns
    -------
    tuple of pandas.DataFrame and str or None
        The ok rows, ``columns`` as numbers, and the note counting the rows left out by
        their status (:func:`status_note`; None when none was).

    Raises
    ------
    InputError
        an unreadable table, a column named twice or missing, a cell that is not a finite
        number (file, row and column named), or a ``status`` column without an ok run.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = Path(d, "t.csv").write_text("p,t,status\\n2,1.5,ok\\n4,9,failed\\n8,3.5,ok\\n")
    ...     df, note = load_table(Path(d, "t.csv"), ["p", "t"])
    >>> df[["p", "t"]].values.tolist()
    [[2.0, 1.5], [8.0, 3.5]]
    >>> note
    "1 row(s) left out by their status, only status 'ok' is modelled: 'failed' 1"
    """
    path = input_file(path)
    if path.suffix == ".parquet":
        from perfcast.io import read_parquet

        df = read_parquet(path)
    else:
        df = read_csv(path)
    require_unique_columns(df.columns, path, row=None)
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(path, f"no column(s) {missing}", row=1,
                         expected=f"a header with {list(columns)}; it has {list(df.columns)}")
    for c in columns:
        values = pd.to_numeric(df[c], errors="coerce")
        bad = values.isna() & df[c].notna()
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(path, f"column {c!r} holds {df[c].iloc[i]!r}, not a number",
                             row=i + 2, expected="numbers (or an empty cell)")
        given = values.notna().to_numpy()
        require_values(values.to_numpy()[given], path, f"column {c!r} value",
                       lines=np.flatnonzero(given) + 2)
        df[c] = values
    ok = ok_rows(df)
    if "status" in df.columns and ok.empty and len(df):
        raise InputError(path, f"no row has status 'ok' ({_counts_text(not_ok_counts(df))})",
                         row=1, expected="a run table's status column, whose rows of status "
                                         "ok are modelled, or no column named status")
    return ok.reset_index(drop=True), status_note(df)


def _counts_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{k!r} {v}" for k, v in counts.items())


def status_note(df: pd.DataFrame) -> str | None:
    """The note saying how many runs of a run table ``df`` are not modelled, per status;
    None when all are ok."""
    counts = not_ok_counts(df)
    if not counts:
        return None
    return (f"{sum(counts.values())} row(s) left out by their status, only status 'ok' is "
            f"modelled: {_counts_text(counts)}")
