"""Whole-run counter tables: one row per benchmark run instead of one per interval.

Much real data has no time series: ``perf stat`` without ``-I`` prints one count per event for
the whole run, and published result sets keep exactly that. Such a run is one interval of the
per-interval table (docs/methods/counters.md): interval 0, its instructions, cycles, IPC and
the configured counters per kilo-instruction, so alignment (a single pair), training,
evaluation and prediction run on it unchanged; the table's metadata says
``granularity: whole-run`` and the model stage reports it.

Three forms are read, told apart by the first data line:

- a CSV table with a header, one row per benchmark and machine: ``benchmark`` and ``machine``
  (either may be left out when the file holds one benchmark or one machine: the path pattern
  names it), the base events (``counters.base_events``, by default ``instructions`` and
  ``cycles``), the configured counters, optionally ``time_s`` (wall time) and ``clock_ghz``;
- ``perf stat -x SEP`` without ``-I``: ``value,unit,event,run_ns,pct_running[,metric,unit]``;
- ``perf stat -j`` without ``-I``: one JSON object per event.

perf's lines are parsed by :mod:`perfcast.counters.perfstat` (as one interval at time 0), so
``<not counted>``, hybrid PMUs (``cpu_core/instructions/`` + ``cpu_atom/instructions/`` for a
configured ``instructions``) and aggregation ids are handled as for interval files. The run's
wall time is perf's ``duration_time`` event (ns) when counted. Without a time, the duration is
cycles / clock (the row's ``clock_ghz`` or ``counters.clock_ghz``); with neither, the file is
refused, since runtimes could not be evaluated or predicted.
"""

from __future__ import annotations

import csv
import io
import logging
import math
import re
from collections.abc import Collection, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from perfcast.checks import read_text, require_unique_columns
from perfcast.counters.events import pki_column
from perfcast.counters.settings import BaseEvents, WholerunSettings
from perfcast.errors import InputError

log = logging.getLogger(__name__)

#: the highest core clock taken for one, in GHz (the schema's ``counters.clock_ghz`` maximum):
#: the fastest shipped cores run below 7 GHz and overclocking records below 10; a clock given
#: in MHz (2400 for 2.4) would make every runtime 1,000 times too short
CLOCK_MAX_GHZ = 20.0
#: the CSV table's optional columns besides the events
TABLE_KEYS = ("benchmark", "machine", "time_s", "clock_ghz")
#: a table's column where given: (0 allowed, the highest value, what is expected and what an
#: empty cell means); an event's count takes ``COUNT_LIMITS``
LIMITS = {
    "time_s": (False, math.inf, "a positive wall time in seconds (or empty: cycles / clock)"),
    "clock_ghz": (False, CLOCK_MAX_GHZ, f"a positive clock in GHz, at most {CLOCK_MAX_GHZ:g} "
                                        "(or empty: counters.clock_ghz)"),
}
COUNT_LIMITS = (True, float(2**64 - 1), "a finite count >= 0, at most what a 64-bit counter "
                                         "holds, 2^64 - 1 (or empty: not counted)")
_PERF_VALUE = re.compile(r"\s*(<not counted>|<not supported>|[0-9][0-9.eE+-]*)(?P<sep>.)")
#: an aggregation mode's id before the value (``-A``: ``CPU3``; ``--per-socket``: ``S0`` and its
#: CPU count; ``--per-thread``: ``comm-pid``), as :mod:`perfcast.counters.perfstat` reads them
_PERF_ID = (r"\s*(?:CPU\d+|S\d+(?:-D\d+)?(?:-(?:C|CL|L\d+-ID)\d+)?|N\d+|\S+?-\d+)"
            r"(?P<idsep>[^\w\s])")
_PERF_ID_VALUE = re.compile(_PERF_ID + r"(?:\d+(?P=idsep))?"
                            r"(?:<not counted>|<not supported>|[0-9][0-9.eE+-]*)(?P<sep>.)")


def _perf_sep(line: str) -> str | None:
    """The ``-x`` separator of a whole-run perf count line (``value,unit,event,...``, after an
    aggregation id in ``-A``, ``--per-socket`` and the like), else None."""
    m = _PERF_VALUE.match(line)
    if m:
        return m.group("sep")
    m = _PERF_ID_VALUE.match(line)
    return m.group("sep") if m and m.group("sep") == m.group("idsep") else None


def detect_format(path: str | Path, text: str) -> str:
    """``"json"`` (perf stat -j), ``"perf"`` (perf stat -x) or ``"table"`` (a CSV with a
    header), from the first line that is neither empty nor a ``#`` comment."""
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.lstrip().startswith("{"):
            return "json"
        return "perf" if _perf_sep(line) else "table"
    raise InputError(path, "no data line", expected="a whole-run CSV table, or perf stat -x / "
                     "-j output without -I")


def perf_counts(path: str | Path, text: str, form: str) -> tuple[dict[str, float], float]:
    """``({event: count}, lowest percent running)`` of a whole-run perf file (``-x`` or ``-j``;
    rows of one event on several ids or PMUs summed later by name).

    One row per event (and id) is read: a row repeated (``-e a,a``) or a second ``# started
    on`` header after counter lines (``perf stat --append``: a second run) is refused naming
    its line, never summed (:func:`perfcast.counters.perfstat.check_ids`).

    Parameters
    ----------
    path : str or Path
        the file (for errors).
    text : str
        its text.
    form : str
        ``json`` or the ``-x`` separator (:func:`detect_format`).
    """
    from perfcast.counters.perfstat import (
        LONG_COLUMNS,
        STARTED,
        _parse_json,
        _parse_sv,
        aggregate,
        check_ids,
    )

    rows = []
    sep = None
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if rows and raw.lstrip().startswith(STARTED):
            raise InputError(path, f"a second {STARTED!r} header after counter lines: another "
                                   "perf run was appended to this file (perf stat --append)",
                             row=lineno, expected="one perf run per file (its counts would be "
                                                  "summed with the first run's)")
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        if form == "json":
            obj_line = raw.strip()
            if '"interval"' in obj_line:
                raise InputError(path, "perf stat -I output in a whole-run file", row=lineno,
                                 expected="perf stat -j without -I (the interval backends "
                                          "read -I output)")
            row = _parse_json(obj_line[:-1] + ', "interval": 0}' if obj_line.endswith("}")
                              else obj_line, path, lineno)
        else:
            line_sep = _perf_sep(raw)
            if sep is None:
                sep = line_sep or ","
            # a line that only continues a metric (,,,,,0.13,stalled cycles per insn; after
            # an id in -A) has no value: the interval reader's parser skips it
            continues = line_sep is None and re.match(
                rf"(?:{_PERF_ID})?\s*{re.escape(sep)}{{4}}", raw) is not None
            if not continues and line_sep != sep:
                raise InputError(path, f"malformed perf stat line {raw.strip()!r}", row=lineno,
                                 expected=f"perf stat -x{sep} without -I: value{sep}unit{sep}"
                                          f"event{sep}run_ns{sep}pct_running")
            row = _parse_sv(f"0{sep}{raw}", sep, path, lineno)
        if row is not None:
            rows.append(row)
    if not rows:
        raise InputError(path, "no counter lines", expected="perf stat -x or -j output")
    long = pd.DataFrame(rows, columns=LONG_COLUMNS)
    # one run is one interval: a row repeated (an event listed twice in perf's -e) is refused
    # here with or without ids, not summed
    check_ids(long, path)
    check_cut(long, path)
    long = aggregate(long, path)
    counts: dict[str, float] = {}
    for ev, g in long.groupby("event", sort=False):
        counts[str(ev)] = float(g["value"].sum(min_count=1))
    pct = float(np.nanmin(long["pct_running"])) if long["pct_running"].notna().any() else 100.0
    return counts, pct


#: perf's tool events, counted once whatever the aggregation mode (one row, not one per CPU)
TOOL_EVENTS = frozenset({"duration_time", "user_time", "system_time"})


def check_cut(long: pd.DataFrame, path: str | Path) -> None:
    """Refuse a whole run whose file was cut short in an aggregation mode (``-A``,
    ``--per-socket``): an event reported on the first ids only of those another event of its
    family has (perf prints each event's ids in order, so a file cut at a line boundary leaves
    its last event with the first of them). A family is the events of one PMU (the prefix of
    ``pmu/event/``; none for the core and software events) with one kind of id (CPUs, sockets,
    dies, cores, nodes); an uncore event on the first CPU of each socket has a PMU of its own
    and lacks ids in the middle, not at the end, so it is not compared with the core's. Tool
    events (``duration_time``) are counted once; thread ids are not compared (threads end).

    Parameters
    ----------
    long : pandas.DataFrame
        the rows (:data:`perfcast.counters.perfstat.LONG_COLUMNS`).
    path : str or Path
        the file (for errors).
    """
    from perfcast.counters.events import split_event
    from perfcast.counters.perfstat import _THREAD_ID

    tool = long["event"].map(lambda ev: split_event(str(ev))[1] in TOOL_EVENTS).astype(bool)
    with_ids = long[(long["id"] != "") & ~tool]
    if with_ids.empty:
        return
    families: dict[tuple[str, str], dict[str, list[str]]] = {}
    for ev, g in with_ids.groupby("event", sort=False):
        ids = list(g["id"])
        kind = re.sub(r"\d+", "", ids[0])
        if _THREAD_ID.fullmatch(ids[0]) and not ids[0].startswith(("CPU", "S", "N")):
            continue
        families.setdefault((split_event(str(ev))[0], kind), {})[str(ev)] = ids
    for (pmu, _), events in families.items():
        for ev, ids in events.items():
            longer = [(o, oids) for o, oids in events.items()
                      if len(oids) > len(ids) and oids[:len(ids)] == ids]
            if not longer:
                continue
            other, oids = longer[0]
            rows = with_ids[with_ids["event"] == ev]
            raise InputError(
                path, f"event {ev!r} has no row for {', '.join(oids[len(ids):][:8])}, which "
                      f"{other!r} of the same PMU ({pmu or 'core'}) is reported on: "
                      f"{len(ids)} of {len(oids)} ids (a file cut short)",
                row=int(rows["line"].max()),
                expected="a row for each id of an event's PMU; perf killed while writing "
                         "leaves its last event with part of its ids: collect again")


def _resolve(counts: dict[str, float], claims: dict[str, list[str]], wanted: str,
             path: str | Path) -> float:
    """The count of a configured event name: the events
    :func:`~perfcast.counters.events.claim_events` gave it (hybrid PMU copies summed, as for
    interval files)."""
    names = claims.get(wanted, [])
    values = [counts[n] for n in names if math.isfinite(counts[n])]
    if not names:
        raise InputError(path, f"no count of event {wanted!r}",
                         expected=f"one of the events in the file: {sorted(counts)[:20]}")
    return float(sum(values)) if values else math.nan


#: the placeholders of ``counters.wholerun.pattern`` and the table columns that name the same
PATTERN_COLUMNS = {"gen": "machine", "bench": "benchmark"}


def unnamed_by_path(path: str | Path, form: str, pattern_fields: Collection[str],
                    columns: Collection[str] = ()) -> None:
    """Refuse a file whose run neither its path nor its content names: a placeholder of
    ``counters.wholerun.pattern`` left out (``{gen}``, ``{bench}``) means every run of that
    generation or benchmark reads this one file, which only a CSV table with the column of
    that placeholder (``machine``, ``benchmark``) tells apart.

    Parameters
    ----------
    path : str or Path
        the file.
    form : str
        its form (:func:`detect_format`).
    pattern_fields : collection of str
        the placeholders the path pattern has among ``gen`` and ``bench``.
    columns : collection of str, default=()
        a table's columns.
    """
    for field, column in PATTERN_COLUMNS.items():
        if field in pattern_fields or (form == "table" and column in columns):
            continue
        what = ("a perf stat file holds one run" if form != "table"
                else f"a CSV table without a {column!r} column")
        raise InputError(path, f"counters.wholerun.pattern has no {{{field}}} and {what}: every "
                               f"{column} would read the same counts",
                         expected=f"{{{field}}} in counters.wholerun.pattern (a file per "
                                  f"{column}), or a CSV table with a {column!r} column")


def table_counts(path: str | Path, text: str, *, benchmark: str, machine: str,
                 pattern_fields: Collection[str] = ("gen", "bench")) -> dict[str, float]:
    """The one row of a CSV table for ``benchmark`` on ``machine`` (a column left out matches
    any value, when the path names it: ``pattern_fields``, :func:`unnamed_by_path`), as
    ``{column: value}``.

    Parameters
    ----------
    path : str or Path
        the file (for errors).
    text : str
        its text.
    benchmark : str
        the row's benchmark.
    machine : str
        the row's machine (the generation).
    pattern_fields : collection of str, default=("gen", "bench")
        what the file's path identifies (placeholders of the path pattern).
    """
    try:
        df = pd.read_csv(io.StringIO(text), comment="#", skipinitialspace=True)
    except (ValueError, pd.errors.ParserError) as exc:
        raise InputError(path, f"not a CSV table: {exc}",
                         expected="a header row, then one row per benchmark and machine") from exc
    # the line of each row pandas reads: it skips blank and comment lines without counting them
    read = [i for i, ln in enumerate(text.splitlines(), 1) if ln.split("#", 1)[0].strip()]
    if read:  # pandas renames a second column of one name (instructions.1): its values ignored
        header = text.splitlines()[read[0] - 1].split("#", 1)[0]
        require_unique_columns(next(csv.reader([header])), path, row=read[0])
    df.columns = [str(c).strip() for c in df.columns]
    unnamed_by_path(path, "table", pattern_fields, df.columns)
    sel = pd.Series(True, index=df.index)
    for key, value in (("benchmark", benchmark), ("machine", machine)):
        if key in df:
            sel &= df[key].astype(str).str.strip() == value
    rows = df[sel]
    where = f"benchmark {benchmark!r} on machine {machine!r}"
    if len(rows) != 1:
        raise InputError(path, f"{len(rows)} rows of {where}",
                         expected="exactly one row per benchmark and machine (columns benchmark "
                                  "and machine, or a path that names them)")
    line = read[int(rows.index[0]) + 1] if int(rows.index[0]) + 1 < len(read) else None
    out = {}
    for col in rows.columns:
        if col in ("benchmark", "machine"):
            continue
        raw = rows[col].iloc[0]
        # True / False are read as booleans, which are numbers to pandas (1 and 0)
        boolean = isinstance(raw, bool | np.bool_) or (
            isinstance(raw, str) and raw.strip().lower() in ("true", "false"))
        value = (math.nan if boolean
                 else pd.to_numeric(pd.Series([raw]), errors="coerce").iloc[0])
        if pd.isna(value) and (boolean or not pd.isna(raw)):
            shown = str(bool(raw)) if isinstance(raw, bool | np.bool_) else repr(raw)
            raise InputError(path, f"{col} = {shown} of {where} is not a number",
                             row=line, expected="a number (or empty)")
        zero_ok, highest, expected = LIMITS.get(col, COUNT_LIMITS)
        if not pd.isna(value) and not (math.isfinite(value) and value <= highest
                                       and (value >= 0 if zero_ok else value > 0)):
            shown = raw if isinstance(raw, str) else f"{float(raw):g}"
            raise InputError(path, f"{col} = {shown} of {where}", row=line, expected=expected)
        out[col] = float(value)
    return out


def read_wholerun(path: str | Path, *, benchmark: str, machine: str, base: BaseEvents,
                  events: Sequence[str], clock_ghz: float | None,
                  pattern_fields: Collection[str] = ("gen", "bench"),
                  ) -> tuple[pd.DataFrame, dict]:
    """One run's counter table (one row) from a whole-run file.

    Parameters
    ----------
    path : str or Path
        a CSV table, or a perf stat -x / -j file of this run.
    benchmark, machine : str
        the run (the rows of a table to take; the generation's name).
    base : BaseEvents
        the events that play instructions and cycles.
    events : sequence of str
        the configured counters (each becomes ``<event>_pki``).
    clock_ghz : float or None
        the machine's clock (``counters.clock_ghz``; None: unknown): the duration when
        the file has no time.
    pattern_fields : collection of str, default=("gen", "bench")
        what the file's path identifies: the placeholders of ``counters.wholerun.pattern``
        among ``gen`` and ``bench``. One left out needs a CSV table with its column
        (:func:`unnamed_by_path`).

    Returns
    -------
    table : pandas.DataFrame
        ``interval`` (0), ``time`` and ``duration_s`` (the wall time), ``instructions``,
        ``cycles``, ``ipc``, ``instructions_cumulative_sum``, ``pct_running_min``,
        ``multiplexed`` (false: a whole run's counts are not compared with a threshold here)
        and ``<event>_pki``.
    info : dict
        ``format`` and where the time came from (``time_source``).

    Raises
    ------
    InputError
        naming the file: an unknown form, a missing row or event, instructions or cycles not
        positive, no time and no clock, a run its path does not name in a file that does not
        name it either (:func:`unnamed_by_path`); in a table, naming the row: a count that is
        negative or not finite, a ``time_s`` or ``clock_ghz`` that is given but not positive
        (an empty one falls back as documented; a wrong one is never replaced silently).

    Examples
    --------
    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "runs.csv")
    >>> _ = open(f, "w").write("benchmark,machine,instructions,cycles,branch-misses,time_s\\n"
    ...                        "mcf,m1,3e11,3.6e11,2e9,122.9\\n")
    >>> t, info = read_wholerun(f, benchmark="mcf", machine="m1", base=BaseEvents(
    ...     "instructions", "cycles"), events=["branch-misses"], clock_ghz=None)
    >>> round(float(t["branch-misses_pki"][0]), 3), info["format"]
    (6.667, 'table')
    """
    from perfcast.counters.events import claim_events, resolve_event, user_mode_blind

    # a base event listed among the counters is not a counter of its own (its PKI would be
    # 1000 or constant): left out, as the interval path does
    events = [e for e in dict.fromkeys(events) if e not in base.names]
    text = read_text(path)
    form = detect_format(path, text)
    pct = 100.0
    if form == "table":
        counts = table_counts(path, text, benchmark=benchmark, machine=machine,
                              pattern_fields=pattern_fields)
        for ev in (*base.names, *events):
            if ev not in counts:
                raise InputError(path, f"no column {ev!r}",
                                 expected=f"columns {[*base.names, *events]} (and optionally "
                                          f"{list(TABLE_KEYS)})")
        value = counts.__getitem__
        wall = counts.get("time_s", math.nan)
        clock = counts.get("clock_ghz", math.nan)
        time_source = "time_s column"
    else:
        unnamed_by_path(path, form, pattern_fields)
        counts, pct = perf_counts(path, text, form)
        # the scheduler's events restricted to user mode print 0 that is no count: not counted
        for ev in list(counts):
            if (why := user_mode_blind(ev)) is not None:
                log.warning("%s: %s; read as not counted", path, why)
                counts[ev] = math.nan
        # each name exactly its rows: two names for one count, or one name for two copies of
        # one count (instructions:D and instructions:p), refused as in interval files
        claims = claim_events([*base.names, *events], list(counts), path)

        def value(ev):
            return _resolve(counts, claims, ev, path)

        # duration_time:u where perf restricted the events to user mode (the same wall time)
        duration = resolve_event("duration_time", counts)
        wall = counts[duration[0]] / 1e9 if len(duration) == 1 else math.nan
        clock = math.nan
        time_source = "duration_time event"
    instructions, cycles = value(base.instructions), value(base.cycles)
    for name, v in ((base.instructions, instructions), (base.cycles, cycles)):
        if not (math.isfinite(v) and v > 0):
            raise InputError(path, f"{name} = {v!r} for {benchmark!r} on {machine!r}",
                             expected="a positive count")
    if not (math.isfinite(clock) and clock > 0):
        clock = clock_ghz or math.nan
    if not (math.isfinite(wall) and wall > 0):
        if not math.isfinite(clock):
            raise InputError(path, f"no wall time and no clock for {benchmark!r} on "
                             f"{machine!r}", expected="a time_s column or a duration_time "
                             "event (perf stat -e duration_time), or counters.clock_ghz")
        wall, time_source = cycles / (clock * 1e9), "cycles / clock"
    table = pd.DataFrame({
        "interval": np.array([0], dtype=np.int64), "time": [wall], "duration_s": [wall],
        "instructions": [instructions], "cycles": [cycles], "ipc": [instructions / cycles],
        "instructions_cumulative_sum": [instructions], "pct_running_min": [pct],
        "multiplexed": [False],
    })
    for ev in events:
        table[pki_column(ev)] = [1000.0 * value(ev) / instructions]
    return table, {"format": form, "time_source": time_source}


def wholerun_file(settings: WholerunSettings, source: str | Path,
                  out: str | Path) -> pd.DataFrame:
    """Rule ``counters_wholerun``: one run's whole-run counts as its counter table (Parquet;
    metadata: ``backend: wholerun``, the run, ``granularity: whole-run``, the source, its form
    and where the time came from).

    Parameters
    ----------
    settings : WholerunSettings
        the run (generation, benchmark), its generation's clock and the counters
        (``settings.postprocess``: events and base events).
    source : str or Path
        the run's whole-run file (:func:`read_wholerun`).
    out : str or Path
        the Parquet file to write.

    Returns
    -------
    pandas.DataFrame
        the table written (one row).

    Raises
    ------
    InputError
        naming the file: see :func:`read_wholerun`.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from perfcast.counters.settings import WholerunSettings, PostprocessSettings
    >>> from perfcast.settings import from_section
    >>> pp = from_section(PostprocessSettings, {"events": ["branch-misses"]},
    ...                   "counters_postprocess")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     src = Path(tmp, "run.csv")
    ...     _ = src.write_text("instructions,cycles,branch-misses\\n4e9,2e9,1e6\\n")
    ...     table = wholerun_file(WholerunSettings(pp, "g3", "mcf", 2.0, ("gen", "bench")), src,
    ...                           Path(tmp, "run.parquet"))
    >>> [float(table[c][0]) for c in ("ipc", "duration_s", "branch-misses_pki")]
    [2.0, 1.0, 0.25]
    """
    from perfcast.io import write_parquet

    generation, benchmark = settings.generation, settings.benchmark
    table, info = read_wholerun(source, benchmark=benchmark, machine=generation,
                                base=settings.postprocess.base_events,
                                events=settings.postprocess.events, clock_ghz=settings.clock_ghz,
                                pattern_fields=settings.pattern_fields)
    log.info("%s/%s: whole run from %s (%s): %.6g instructions, IPC %.4f, %.4g s (%s)",
             generation, benchmark, source, info["format"], table["instructions"][0],
             table["ipc"][0], table["duration_s"][0], info["time_source"])
    write_parquet(table, out, metadata={"backend": "wholerun", "simulated": False,
                                        "generation": generation, "benchmark": benchmark,
                                        "granularity": "whole-run", "source": str(source),
                                        **info})
    return table
