"""Read and write ``perf stat -I <ms> -x,`` output.

perf writes a ``# started on`` line and a blank line, then one line per event and interval::

    time,value,unit,event,run_ns,pct_running,metric_value,metric_unit

``value`` is the count in that interval (a delta), or ``<not counted>`` / ``<not supported>``.
The last interval is partial (the command ended). Event names with commas (raw PMU syntax such as
``cpu/event=0x3c,umask=0x0/``) make the line longer; the fixed fields are taken from both ends.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from perfcast.errors import HostCapabilityError, InputError

if TYPE_CHECKING:
    import pandas as pd

FIELDS = "time,value,unit,event,run_ns,pct_running,metric_value,metric_unit"
NOT_COUNTED = "<not counted>"
NOT_SUPPORTED = "<not supported>"


def parse_perf_csv(path: str | Path) -> pd.DataFrame:
    """Parse one perf ``-I -x,`` file into long form.

    Returns columns ``time`` (s), ``event``, ``value`` (float, NaN when not counted),
    ``status`` (``ok`` / ``not counted`` / ``not supported``), ``run_ns``, ``pct_running``.
    A malformed line raises :class:`InputError` naming the file and line.
    """
    import pandas as pd

    path = Path(path)
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError as exc:
        raise InputError(path, "file not found") from exc
    except UnicodeDecodeError as exc:
        raise InputError(path, "not a text file") from exc
    rows: list[tuple[float, str, float, str, float, float]] = []
    for lineno, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split(",")
        if len(fields) == 6:
            fields += ["", ""]
        if len(fields) < 8:
            raise InputError(path, f"malformed perf line {raw!r}", row=lineno, expected=FIELDS)
        time_s, value_s, _unit = fields[0], fields[1], fields[2]
        event = ",".join(fields[3:-4])
        run_s, pct_s = fields[-4], fields[-3]
        try:
            t = float(time_s)
        except ValueError as exc:
            raise InputError(
                path, f"interval time {time_s!r} is not a number", row=lineno,
                expected="perf stat -I output (first column: seconds since start)",
            ) from exc
        if not event:
            raise InputError(path, "empty event name", row=lineno, expected=FIELDS)
        status = "ok"
        if value_s == NOT_COUNTED:
            value, status = math.nan, "not counted"
        elif value_s == NOT_SUPPORTED:
            value, status = math.nan, "not supported"
        else:
            try:
                value = float(value_s)
            except ValueError as exc:
                raise InputError(
                    path, f"count {value_s!r} is not a number", row=lineno,
                    expected="a count, <not counted> or <not supported>",
                ) from exc
            if not math.isfinite(value) or value < 0:
                raise InputError(path, f"count {value_s!r} is negative or not finite",
                                 row=lineno, expected="a non-negative count")
        try:
            run_ns = float(run_s) if run_s else math.nan
            pct = float(pct_s) if pct_s else math.nan
        except ValueError as exc:
            raise InputError(path, "run time or percent-running is not a number", row=lineno,
                             expected=FIELDS) from exc
        rows.append((t, event, value, status, run_ns, pct))
    if not rows:
        raise InputError(path, "no counter lines", expected="perf stat -I -x, output")
    df = pd.DataFrame(rows, columns=["time", "event", "value", "status", "run_ns", "pct_running"])
    for ev, sub in df.groupby("event", sort=False):
        if (np.diff(sub["time"].to_numpy()) <= 0).any():
            raise InputError(path, f"interval times of event {ev!r} do not increase",
                             expected="one line per event per interval, in time order")
    return df


def to_wide(long: pd.DataFrame, path: str | Path, required: Iterable[str] = ()) -> pd.DataFrame:
    """One row per interval: ``time``, ``duration_s``, a column per event, ``pct_running_min``.

    Every event must appear in every interval. A ``required`` event that is ``<not supported>``
    throughout raises :class:`HostCapabilityError` (a host without a hardware PMU): never zeros.
    """
    for ev in required:
        sub = long[long["event"] == ev]
        if sub.empty:
            raise InputError(path, f"event {ev!r} is missing", expected=f"{ev} in every group run")
        if (sub["status"] == "not supported").all():
            raise HostCapabilityError(
                f"{path}: event {ev!r} reads <not supported> in every interval: the host that "
                "collected this file exposes no hardware PMU for it (common in VMs); collect on a "
                "host with PMU access or import files collected there"
            )
    wide = long.pivot_table(index="time", columns="event", values="value", aggfunc="first",
                            dropna=False, sort=True)
    counts = long.groupby("time").size()
    n_events = long["event"].nunique()
    bad = counts[counts != n_events]
    if len(bad):
        raise InputError(path, f"interval at t={bad.index[0]:.9f}s has {int(bad.iloc[0])} of "
                               f"{n_events} events", expected="every event in every interval")
    pct = long.groupby("time")["pct_running"].min()
    wide = wide[list(long["event"].unique())]  # perf's event order
    wide.columns.name = None
    out = wide.reset_index()
    t = out["time"].to_numpy()
    out.insert(1, "duration_s", np.diff(t, prepend=0.0))
    out["pct_running_min"] = pct.to_numpy()
    return out


def format_perf_csv(
    times: np.ndarray,
    counts: dict[str, np.ndarray],
    units: dict[str, str] | None = None,
    header: str = "",
) -> str:
    """Write counts in exactly perf's ``-I -x,`` layout (used by the simulator and tests)."""
    units = units or {}
    out = [f"# started on {header}".rstrip(), ""]
    prev = 0.0
    for k, t in enumerate(times):
        run_ns = int(round((t - prev) * 1e9))
        prev = t
        for ev, arr in counts.items():
            v = arr[k]
            if isinstance(v, str):
                value = v
            elif units.get(ev) == "msec":
                value = f"{v:.2f}"
            else:
                value = str(int(round(v)))
            out.append(f"{t:16.9f},{value},{units.get(ev, '')},{ev},{run_ns},100.00,,")
    return "\n".join(out) + "\n"
