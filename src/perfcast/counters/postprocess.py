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
did (truncated to the shortest run). Runs whose totals differ by more than the run tolerance are
refused: they did not run the same work (:func:`run_tolerance`: tight for hardware instruction
counts, wide where a software event stands in). A run cut short by less is caught by its cycle
trace (:func:`check_coverage`); where the trace cannot tell, a run short of the longest by more
than the coverage tolerance is joined and reported as unverified. See docs/methods/counters.md.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from perfcast.counters.events import pki_column, resolve_event, split_event
from perfcast.counters.perfstat import (
    origin,
    parse_perf_stat,
    pct_column,
    to_wide,
)
from perfcast.counters.settings import BaseEvents, PostprocessSettings, ReadSettings
from perfcast.errors import InputError

log = logging.getLogger(__name__)

#: perf's software events (``perf list sw``, and the tool's ``duration_time``...): counted by
#: the kernel, not the PMU; in the role of instructions they vary with the host's load
SOFTWARE_EVENTS = frozenset({
    "cpu-clock", "task-clock", "page-faults", "faults", "context-switches", "cs",
    "cpu-migrations", "migrations", "minor-faults", "major-faults", "alignment-faults",
    "emulation-faults", "dummy", "bpf-output", "cgroup-switches", "duration_time", "user_time",
    "system_time",
})


def read_group(path: str | Path, base: BaseEvents, events: tuple[str, ...],
               read: ReadSettings) -> pd.DataFrame:
    """One group run as a wide per-interval table, columns under their configured names, with
    its base events checked (a final interval without work is dropped; a missing or zero base
    event elsewhere is an :class:`~perfcast.errors.InputError`).

    Parameters
    ----------
    path : str or Path
        the group run's perf file (any form :mod:`perfcast.counters.perfstat` reads).
    base : BaseEvents
        the events playing instructions and cycles (required in every interval).
    events : tuple of str
        the counters wanted besides the base events.
    read : ReadSettings
        ``counters.read``: the separator and the aggregation ids whose rows are summed.
    """
    long = parse_perf_stat(path, read.separator, read.select)
    path = origin(path)  # an imported copy's errors name the user's file
    wide = to_wide(long, path, required=base.names, wanted=events)
    status = long.groupby("event")["status"].agg(lambda st: bool((st == "not supported").all()))
    for ev in sorted(status[status].index):
        log.warning("%s: event %r reads <not supported> in every interval: the PMU of the "
                    "host that collected it lacks it; its PKI is missing (percent-running 0)",
                    path, ev)
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
    require_counted(wide, long, events, path)
    return wide.reset_index(drop=True)


def require_counted(wide: pd.DataFrame, long: pd.DataFrame, events: tuple[str, ...],
                    path: str | Path) -> None:
    """Every counter of a group run that perf counted (it was not ``<not supported>``) has a
    count in at least one of its intervals.

    An event that perf reports ``<not counted>`` in every interval (it never got a counter: a
    group too large for the PMU, an event the kernel refused to schedule, or one of the
    program's privilege levels that was never entered) would become a feature without a single
    value. A counter that is never counted cannot be a feature: the model could only refuse it
    after every other stage had run, or a reader of the table take it for one that counted
    nothing, so the run is refused here, naming the event and the file. An event the PMU lacks
    (``<not supported>`` throughout) is flagged instead (its percent-running 0, and a warning):
    the host, not the run, is the cause, and the train rule names it.

    Parameters
    ----------
    wide : pandas.DataFrame
        the group run's per-interval table (:func:`perfcast.counters.perfstat.to_wide`).
    long : pandas.DataFrame
        its rows as read (:func:`perfcast.counters.perfstat.parse_perf_stat`), for the status
        perf gave each.
    events : tuple of str
        the configured counters besides the base events.
    path : str or Path
        the group run's file (for errors).

    Raises
    ------
    InputError
        naming the file and the first such event, with its intervals.
    """
    present = list(long["event"].unique())
    for ev in events:
        if ev not in wide.columns or np.isfinite(wide[ev].to_numpy(dtype=float)).any():
            continue
        status = long.loc[long["event"].isin(resolve_event(ev, present)), "status"]
        if len(status) and (status == "not supported").all():
            continue
        raise InputError(path, f"event {ev!r} was not counted in any of its {len(wide)} "
                               "intervals (perf's <not counted>): a counter without a count "
                               "cannot be a feature",
                         expected="a count in at least one interval; collect it in a smaller "
                                  "group (a group larger than the PMU's counters is never "
                                  "scheduled), or leave it out of the configured events")


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
    group_files : list of str or Path
        one perf ``-I`` file per group run (any form :mod:`.perfstat` reads); the
        first is the reference run.
    settings : PostprocessSettings
        events, base events, join, how files are read, the run tolerance and the
        multiplexing threshold (``counters_postprocess`` schema).

    Returns
    -------
    pandas.DataFrame
        the table of the module docstring, one row per interval of the reference run. A run
        whose coverage of the program neither its trace nor its totals confirm is joined with a
        warning in the log (:func:`join_runs` returns them).

    Raises
    ------
    InputError
        naming the file: unparseable, a base event missing or zero, an event counted by two
        groups or by none, runs whose total instructions differ beyond the run tolerance
        (:func:`run_tolerance`), a run covering less of the program than the longest
        (:func:`check_coverage`).
    HostCapabilityError
        a base event ``<not supported>`` throughout (no hardware PMU on the collecting host).
    ValueError
        an unknown ``join``.

    Examples
    --------
    Two group runs of one program, the second 10 % slower: its counts are placed on the
    reference run's cumulative-instruction axis.

    >>> import tempfile
    >>> from pathlib import Path
    >>> from perfcast.counters.perfstat import format_perf_csv
    >>> from perfcast.settings import from_section
    >>> settings = from_section(PostprocessSettings, {"events": ["a", "b"]},
    ...                         "counters_postprocess")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     g0, g1 = Path(tmp, "group0.csv"), Path(tmp, "group1.csv")
    ...     _ = g0.write_text(format_perf_csv([0.1, 0.2], {"instructions": [2e8, 2e8],
    ...                                                    "cycles": [1e8, 1e8], "a": [2e5, 4e5]}))
    ...     _ = g1.write_text(format_perf_csv([0.11, 0.22], {"instructions": [2e8, 2e8],
    ...                                                      "cycles": [1.1e8, 1.1e8],
    ...                                                      "b": [6e5, 6e5]}))
    ...     table = postprocess([g0, g1], settings)
    >>> table[["ipc", "a_pki", "b_pki"]].values.tolist()
    [[2.0, 1.0, 3.0], [2.0, 2.0, 3.0]]
    """
    table, unverified = join_runs(group_files, settings)
    for r in unverified:
        log.warning("%s", r.describe())
    return table


def join_runs(group_files: list[str | Path],
              settings: PostprocessSettings) -> tuple[pd.DataFrame, list[UnverifiedRun]]:
    """:func:`postprocess`'s table, and the group runs whose coverage of the program nothing
    verified (:func:`check_coverage`), for a caller that knows more about them (the workflow
    knows which runs it collected itself)."""
    base, join = settings.base_events, settings.join
    if join not in ("instructions", "row"):
        raise ValueError(f"join must be 'instructions' or 'row', not {join!r}")
    wanted = tuple(e for e in settings.events if e not in base.names)
    groups = [read_group(p, base, wanted, settings.read) for p in group_files]
    group_files = [origin(p) for p in group_files]  # imported copies: the user's files
    check_run_totals(group_files, groups, base, run_tolerance(settings))
    unverified = check_coverage(group_files, groups, base, settings.coverage_tolerance)
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
    return out, unverified


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
    to the smaller): a run cut short or doing other work cannot be joined onto the others.

    Parameters
    ----------
    files : list of str or Path
        the group runs' files (for errors).
    groups : list of pandas.DataFrame
        their wide tables, in the same order.
    base : BaseEvents
        the events playing instructions and cycles.
    tolerance : float
        the largest relative difference (:func:`run_tolerance`).
    """
    totals = [float(np.nansum(g[base.instructions].to_numpy(dtype=float))) for g in groups]
    lo, hi = int(np.argmin(totals)), int(np.argmax(totals))
    if totals[hi] > totals[lo] * (1.0 + tolerance):
        raise InputError(
            files[lo], f"this group run retired {totals[lo]:.6g} {base.instructions}, "
            f"{files[hi]} {totals[hi]:.6g} ({totals[hi] / totals[lo] - 1:.1%} more)",
            expected=f"group runs of one program within the run tolerance ({tolerance:g}: "
                     "counters.run_tolerance, or software_run_tolerance where a software event "
                     "stands in for instructions) of each other: a run stopped early or ran "
                     "other work",
        )


#: when :func:`check_coverage` acts: the whole-program hypothesis misfits (RMS of cumulative-cycle
#: fractions) by more than MIN_MISFIT and FIT_RATIO times the best part. Measured on the
#: simulator (14 benchmarks, both generations, two seeds, 25 to 50 intervals, run_variation
#: 0.03): complete runs misfit by at most 0.0084 with a ratio of at most 3.1 (no refusal in 224
#: pairs); runs cut at 90 % are refused in 57 % of the pairs, at 80 % in 80 %, and at 90 % in
#: every pair of 90 or more intervals tried (gcc, mcf, omnetpp); flat traces (software events,
#: constant IPC) misfit by 1e-4 or less and are never refused (the run tolerance decides)
MIN_MISFIT = 0.004
FIT_RATIO = 4.0


def is_software_event(name: str) -> bool:
    """``name`` (as configured or as perf prints it, with modifiers or ``software/.../``) is one
    of perf's software events."""
    pmu, body, _ = split_event(name)
    return body in SOFTWARE_EVENTS and pmu in ("", "software")


def run_tolerance(settings: PostprocessSettings) -> float:
    """The run tolerance that applies, logged with why: ``run_tolerance`` for a hardware
    instructions event; the larger of it and ``software_run_tolerance`` where a software event
    stands in for instructions (CPU time or faults vary with the host's load)."""
    event = settings.base_events.instructions
    if is_software_event(event):
        tol = max(settings.run_tolerance, settings.software_run_tolerance)
        log.info("run tolerance %g: the software event %r stands in for instructions "
                 "(counters.software_run_tolerance)", tol, event)
        return tol
    log.info("run tolerance %g: %r is a hardware instruction count (counters.run_tolerance)",
             settings.run_tolerance, event)
    return settings.run_tolerance


def _trace(g: pd.DataFrame, base: BaseEvents) -> tuple[np.ndarray, np.ndarray]:
    """A run's cumulative instructions and cycles, from 0."""
    x = np.concatenate(([0.0], np.cumsum(g[base.instructions].to_numpy(dtype=float))))
    y = np.concatenate(([0.0], np.cumsum(g[base.cycles].to_numpy(dtype=float))))
    return x, y


def _mismatch(ref: tuple[np.ndarray, np.ndarray], run: tuple[np.ndarray, np.ndarray],
              cover: float, at_end: bool) -> float:
    """RMS difference of the run's cumulative-cycle fraction from the reference's over the part
    of the program the run is supposed to cover: the fraction ``cover`` of the reference's
    instructions, from its start (or ending at its end, ``at_end``)."""
    x0, y0 = ref
    x, y = run
    span = cover * x0[-1]
    start = x0[-1] - span if at_end else 0.0
    xs = start + x / x[-1] * span
    yr = np.interp(xs, x0, y0) - np.interp(start, x0, y0)
    return float(np.sqrt(np.mean((y / y[-1] - yr / yr[-1]) ** 2)))


def coverage(ref: tuple[np.ndarray, np.ndarray],
             run: tuple[np.ndarray, np.ndarray]) -> tuple[float, bool, float, float]:
    """How much of the reference run's program ``run`` covers, from the shapes of their cycle
    traces (cumulative cycles against cumulative instructions, each group counts both).

    Each hypothesis "the run is the first (or last) fraction c of the program" maps the run's
    instructions onto that stretch of the reference's and compares the cumulative-cycle
    fractions; c = 1 is the whole program (the join's assumption). Returns ``(c, at_end, misfit
    of c, misfit of the whole)``, c the best of a grid of steps of 0.005 from 0.05 to 1. A
    program whose IPC never changes gives every c the same misfit: it cannot tell, and c = 1.
    """
    best = (_mismatch(ref, run, 1.0, False), 1.0, False)
    for c in np.arange(0.05, 1.0, 0.005):
        for at_end in (False, True):
            m = _mismatch(ref, run, float(c), at_end)
            if m < best[0]:
                best = (m, float(c), at_end)
    return best[1], best[2], best[0], _mismatch(ref, run, 1.0, False)


@dataclass(frozen=True)
class UnverifiedRun:
    """A group run that retired less than ``1 - coverage_tolerance`` of the longest run's
    instructions and whose cycle trace could not tell whether it covers the whole program (too
    flat: constant IPC, or software events in the base roles; or no part of the program fits it
    decisively better than the whole). It is joined, within the run tolerance; were it cut
    short, its counts would be stretched over the whole program.

    Attributes
    ----------
    file : Path
        the run's file (the user's, for an imported copy).
    share : float
        its total instructions over the longest run's.
    longest : Path
        the longest run's file.
    instructions, cycles : str
        the events in the two base roles (for the message).
    """

    file: Path
    share: float
    longest: Path
    instructions: str
    cycles: str

    def describe(self) -> str:
        """What is unverified, in one sentence for the log."""
        return (f"{self.file} retired {self.share:.1%} of the {self.instructions} of "
                f"{self.longest}, and its trace ({self.cycles} against {self.instructions}) "
                "cannot tell whether it covers the whole program")

    def as_dict(self) -> dict[str, object]:
        """JSON form (Parquet metadata)."""
        return {"file": str(self.file), "instructions_share": round(self.share, 6),
                "longest": str(self.longest)}


def check_coverage(files: list[str | Path], groups: list[pd.DataFrame], base: BaseEvents,
                   tolerance: float) -> list[UnverifiedRun]:
    """Refuse a group run that covers less of the program than the longest run (the one that
    retired the most instructions), whatever the run tolerance: its cycle trace matches a part
    of the program (:func:`coverage`) of at most ``1 - tolerance``, :data:`FIT_RATIO` times
    better than the whole program, which misfits by more than :data:`MIN_MISFIT`.

    A trace without that much shape (a program of constant IPC, software events in the base
    roles) cannot tell a run cut short from a whole one; nor can a trace whose best part is
    not decisively better than the whole. Such a run is left to the run tolerance, and returned
    when it retired less than ``1 - tolerance`` of the longest run's instructions: whether it
    covers the whole program is then unverified, which the caller reports.

    Parameters
    ----------
    files : list of str or Path
        the group runs' files (for errors).
    groups : list of pandas.DataFrame
        their wide tables, in the same order.
    base : BaseEvents
        the events playing instructions and cycles.
    tolerance : float
        ``counters.coverage_tolerance``.

    Returns
    -------
    list of UnverifiedRun
        the runs short of the longest by more than ``tolerance`` that the trace could not
        judge, in file order (empty when every run is judged whole or is within it).

    Raises
    ------
    InputError
        naming the run, the part of the program it covers and the longest run.
    """
    if len(groups) < 2:
        return []
    traces = [_trace(g, base) for g in groups]
    longest = int(np.argmax([t[0][-1] for t in traces]))
    unverified = []
    for k, tr in enumerate(traces):
        if k == longest:
            continue
        share = float(tr[0][-1] / traces[longest][0][-1])
        # fewer than two intervals: no trace to judge (c = 1, no shape)
        c, at_end, fit, whole = (coverage(traces[longest], tr) if len(tr[0]) >= 3
                                 else (1.0, False, 0.0, 0.0))
        if c <= 1.0 - tolerance and whole > max(FIT_RATIO * fit, MIN_MISFIT):
            part = "last" if at_end else "first"
            raise InputError(
                files[k], f"this group run covers only about the {part} {c:.1%} of the program: "
                f"its cycles against its instructions match that part of {files[longest]}'s trace "
                f"(misfit {fit:.2g}), not the whole (misfit {whole:.2g})",
                expected="group runs of the whole program (a run stopped early, or started "
                         f"late, is refused whatever counters.run_tolerance; "
                         f"counters.coverage_tolerance {tolerance:g})")
        judged_whole = c > 1.0 - tolerance and whole > MIN_MISFIT
        if share < 1.0 - tolerance and not judged_whole:
            unverified.append(UnverifiedRun(Path(files[k]), share, Path(files[longest]),
                                            base.instructions, base.cycles))
    return unverified
