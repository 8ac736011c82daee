"""Post-process group runs into one per-interval table: PKI per counter, IPC, instructions.

Output schema (one row per interval of the reference run, group 0):

==============================  ==========================================================
``interval``                    0-based interval index
``time``                        seconds since start at the end of the interval
``duration_s``                  interval length (the last one is partial)
``instructions``, ``cycles``    counts in the interval (reference run)
``ipc``                         instructions / cycles
``instructions_cumulative_sum`` running total of instructions
``<event>_pki``                 events per kilo-instruction: count / instructions * 1000, both
                                of the run that counted the event
``<event>_pct_running``         perf's percent-running of the counter (100: not multiplexed)
``pct_running_min``             the lowest of the interval over every counter of every run
``multiplexed``                 ``pct_running_min`` below ``min_pct_running``
==============================  ==========================================================

Joining group runs (separate executions): ``instructions`` (default) resamples every run onto the
reference run's cumulative-instruction axis, as fractions of the program (cumulative counts are
interpolated at the reference interval boundaries and differenced, so totals are conserved and
runs that drift in time or differ in length line up), and divides each run's counts by that
run's own instructions over the same stretch; ``row`` joins by interval index as Patkar's method
did (truncated to the shortest run). Runs whose totals differ by more than ``run_tolerance`` are
refused: they did not run the same work. See docs/methods/counters.md.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from perfcast.counters.events import pki_column
from perfcast.counters.perfstat import parse_perf_stat, pct_column, to_wide
from perfcast.counters.settings import BaseEvents, PostprocessSettings, ReadSettings
from perfcast.errors import InputError

ALL_ROWS = ReadSettings(separator="auto", select=())


def read_group(path: str | Path, base: BaseEvents, events: tuple[str, ...] = (),
               read: ReadSettings = ALL_ROWS) -> pd.DataFrame:
    """One group run as a wide per-interval table, columns under their configured names, with
    its base events checked (a final interval without work is dropped; a missing or zero base
    event elsewhere is an :class:`~perfcast.errors.InputError`)."""
    long = parse_perf_stat(path, read.separator, read.select)
    wide = to_wide(long, path, required=base.names, wanted=events)
    for ev in base.names:
        col = wide[ev].to_numpy()
        bad = np.flatnonzero(~np.isfinite(col) | (col <= 0))
        # a final interval with no work (the program ended on a boundary) carries no rate
        if len(bad) and not (len(bad) == 1 and bad[0] == len(col) - 1 and len(col) > 1):
            raise InputError(
                path, f"{ev} is missing or zero in interval {int(bad[0])} "
                f"(t={wide['time'].iloc[bad[0]]:.3f}s)",
                expected=f"a positive {ev} count in every interval (it is the PKI base)",
            )
    last = wide[list(base.names)].iloc[-1]
    if len(wide) > 1 and (~np.isfinite(last.to_numpy()) | (last.to_numpy() <= 0)).any():
        wide = wide.iloc[:-1]
    return wide.reset_index(drop=True)


def _resample(cum_src: np.ndarray, counts: np.ndarray, cum_ref: np.ndarray) -> np.ndarray:
    """Counts per reference interval from a run's counts on its own cumulative axis.

    Interpolates the cumulative count C(cum instructions) at the reference boundaries and takes
    differences; an interval touching a not-counted source interval gets NaN.
    """
    x = np.concatenate(([0.0], cum_src))
    nan = ~np.isfinite(counts)
    c = np.concatenate(([0.0], np.cumsum(np.where(nan, 0.0, counts))))
    m = np.concatenate(([0.0], np.cumsum(nan.astype(float))))
    xr = np.concatenate(([0.0], cum_ref))
    out = np.diff(np.interp(xr, x, c))
    touched = np.diff(np.interp(xr, x, m))
    # an interval that overlaps a NaN source interval picks up part of its indicator
    out[touched > 1e-9] = np.nan
    return out


def postprocess(group_files: list[str | Path], settings: PostprocessSettings) -> pd.DataFrame:
    """Join the group runs of one benchmark on one generation into the per-interval table.

    Parameters
    ----------
    group_files : one perf ``-I`` file per group run (any form :mod:`.perfstat` reads); the
        first is the reference run.
    settings : events, base events, join, how files are read, the run tolerance and the
        multiplexing threshold (``counters_postprocess`` schema).

    Returns
    -------
    pandas.DataFrame
        the table of the module docstring, one row per interval of the reference run.

    Raises
    ------
    InputError
        naming the file: unparseable, a base event missing or zero, an event counted by two
        groups or by none, runs whose total instructions differ beyond ``run_tolerance``.
    HostCapabilityError
        a base event ``<not supported>`` throughout (no hardware PMU on the collecting host).
    ValueError
        an unknown ``join``.
    """
    base, join = settings.base_events, settings.join
    if join not in ("instructions", "row"):
        raise ValueError(f"join must be 'instructions' or 'row', not {join!r}")
    wanted = tuple(e for e in settings.events if e not in base.names)
    groups = [read_group(p, base, wanted, settings.read) for p in group_files]
    check_run_totals(group_files, groups, base, settings.run_tolerance)
    ref = groups[0]
    if join == "row":
        n = min(len(g) for g in groups)
        ref = ref.iloc[:n]
    instr = ref[base.instructions].to_numpy(dtype=float)
    cycles = ref[base.cycles].to_numpy(dtype=float)
    cum_ref = np.cumsum(instr)
    out = pd.DataFrame({
        "interval": np.arange(len(ref), dtype=np.int64),
        "time": ref["time"].to_numpy(),
        "duration_s": ref["duration_s"].to_numpy(),
        "instructions": instr,
        "cycles": cycles,
        "ipc": instr / cycles,
        "instructions_cumulative_sum": cum_ref,
    })
    pct = ref["pct_running_min"].to_numpy()
    found: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for path, g in zip(group_files, groups, strict=True):
        g_instr = g[base.instructions].to_numpy(dtype=float)
        g_cum = np.cumsum(g_instr)
        # runs of one program differ a little in what they retire: map this run's progress onto
        # the reference run's (the same fraction of the program), and divide its counts by ITS
        # OWN instructions over that stretch, which are the reference's times own/reference total
        own_per_ref = g_cum[-1] / cum_ref[-1]
        g_cum_scaled = g_cum / own_per_ref if join == "instructions" else g_cum
        for ev in wanted:
            if ev not in g.columns:
                continue
            if ev in found:
                raise InputError(path, f"event {ev!r} is counted by two group runs",
                                 expected="each event in exactly one group")
            counts = g[ev].to_numpy(dtype=float)
            ev_pct = g[pct_column(ev)].to_numpy(dtype=float)
            if join == "row":
                found[ev] = (counts[: len(ref)] / g_instr[: len(ref)] * 1000.0,
                             ev_pct[: len(ref)])
            else:
                found[ev] = (_resample(g_cum_scaled, counts, cum_ref)
                             / (instr * own_per_ref) * 1000.0,
                             _lowest_over(g_cum_scaled, ev_pct, cum_ref))
        g_pct = g["pct_running_min"].to_numpy()
        pct = np.fmin(pct, g_pct[: len(ref)] if join == "row"
                      else _lowest_over(g_cum_scaled, g_pct, cum_ref))
    missing = [e for e in wanted if e not in found]
    if missing:
        raise InputError(group_files[0], f"no group run counted {missing}",
                         expected="every configured event in some group")
    for ev in wanted:
        out[pki_column(ev)] = found[ev][0]
    for ev in wanted:
        out[f"{ev}_pct_running"] = found[ev][1]
    out["pct_running_min"] = pct
    out["multiplexed"] = pct < settings.min_pct_running
    return out


def _lowest_over(cum_src: np.ndarray, values: np.ndarray, cum_ref: np.ndarray) -> np.ndarray:
    """For each reference interval, the lowest value of the source intervals it overlaps."""
    start = np.concatenate(([0.0], cum_ref[:-1]))
    first = np.searchsorted(cum_src, start, side="right")
    last = np.minimum(np.searchsorted(cum_src, cum_ref, side="left"), len(values) - 1)
    first = np.minimum(first, last)
    return np.array([np.nanmin(values[a : b + 1]) if np.isfinite(values[a : b + 1]).any()
                     else np.nan for a, b in zip(first, last, strict=True)])


def check_run_totals(files: list[str | Path], groups: list[pd.DataFrame], base: BaseEvents,
                     tolerance: float) -> None:
    """Refuse group runs whose total instructions differ by more than ``tolerance`` (relative
    to the smaller): a run cut short or doing other work cannot be joined onto the others."""
    totals = [float(np.nansum(g[base.instructions].to_numpy(dtype=float))) for g in groups]
    lo, hi = int(np.argmin(totals)), int(np.argmax(totals))
    if totals[hi] > totals[lo] * (1.0 + tolerance):
        raise InputError(
            files[lo], f"this group run retired {totals[lo]:.6g} {base.instructions}, "
            f"{files[hi]} {totals[hi]:.6g} ({totals[hi] / totals[lo] - 1:.1%} more)",
            expected=f"group runs of one program within counters.run_tolerance "
                     f"({tolerance:g}) of each other: a run stopped early or ran other work",
        )
