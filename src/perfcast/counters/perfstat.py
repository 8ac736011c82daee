"""Read what ``perf stat -I <ms>`` writes, in every machine-readable form.

Two forms are read (both as perf writes them to stderr, ``-o FILE`` or ``--log-fd``, with or
without the ``# started on`` header):

- ``-x SEP`` (any one-character separator, detected from the first line or given): one line per
  event and interval, ``time[,id[,n]],value,unit,event,run_ns,pct_running[,metric,metric_unit]``.
  ``id`` is present in the aggregation modes: ``CPU3`` (``-A``/``--no-aggr``), ``comm-pid``
  (``--per-thread``), and with the count ``n`` of CPUs it covers: ``S0`` (``--per-socket``),
  ``S0-D0`` (``--per-die``), ``S0-D0-C1`` (``--per-core``), ``N0`` (``--per-node``), cache and
  cluster ids. Event names may contain the separator (``cha/event=0x34,umask=0x1fe001/``): the
  fixed fields are taken from both ends. Lines that only continue a metric are skipped.
- ``-j`` JSON lines: ``{"interval": ..., "counter-value": "...", "event": ..., "event-runtime":
  ..., "pcnt-running": ..., ["cpu"|"core"|"socket"|"die"|"node"|"thread"...: id]}``.

``value`` is the count in that interval (a delta) or ``<not counted>`` / ``<not supported>``.
Rows of one interval and event in an aggregation mode are summed (optionally over a chosen subset
of ids, :func:`aggregate`) once each event is known to have one row per id in every interval
(:func:`check_ids`: a row missing, as in a file cut short, or repeated, as with ``-e a,a`` or a
second run appended, would be summed into a wrong count); perf's counts are already scaled when
the counter was multiplexed, so ``pct_running`` is kept (the lowest over the summed rows) and
flagged downstream. A second ``# started on`` header after counter lines (``--append``) is
refused: two runs in one file.

Forms that are not read get an error naming the form and the flag to use instead: the
human-readable table (no ``-x``), output without ``-I``, and locale-formatted numbers.
"""

from __future__ import annotations

import fnmatch
import json
import logging
import math
import os
import re
import stat
import warnings
from array import array
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from perfcast.checks import input_file
from perfcast.counters.events import claim_events, user_mode_blind
from perfcast.errors import HostCapabilityError, InputError
from perfcast.io import text_lines

if TYPE_CHECKING:
    import pandas as pd

FIELDS = "time[,id[,n]],value,unit,event,run_ns,pct_running,metric_value,metric_unit"
NOT_COUNTED = "<not counted>"
NOT_SUPPORTED = "<not supported>"
LONG_COLUMNS = ["time", "event", "value", "status", "run_ns", "pct_running", "id", "line"]
#: the columns of :func:`aggregate`'s table: one row per interval and event, no id; ``line`` is
#: the file line of the row (the last of the rows summed), for errors
AGG_COLUMNS = ["time", "event", "value", "status", "run_ns", "pct_running", "line"]
#: the first line perf writes to a file (``-o``, and ``--append`` again before each run it adds)
STARTED = "# started on"
#: the largest count a 64-bit hardware or kernel counter holds
COUNTER_MAX = 2**64 - 1
#: a count of one interval this large is a counter that wrapped: perf prints the difference of
#: two readings as unsigned, so a reading below the previous one (a counter reset or wrapped)
#: becomes nearly 2^64; no event counts 2^63 (9.2e18) in one interval (a thousand cores at
#: 5 GHz retiring 10 instructions a cycle need six days)
WRAPPED = 2**63

# ids of the aggregation modes that carry a count of CPUs after them
_AGG_WITH_COUNT = re.compile(r"S\d+(-D\d+)?(-(C|CL|L\d+-ID)\d+)?|N\d+")
_CPU_ID = re.compile(r"CPU\d+")
_THREAD_ID = re.compile(r".+-\d+")
_JSON_IDS = ("cpu", "core", "die", "socket", "node", "thread", "cache", "cluster")
_LOCALE_NUMBER = re.compile(r"\d{1,3}([.,'\u202f\u00a0]\d{3})+([.,]\d+)?|\d+,\d+")
_TIME = re.compile(r"\s*\d+\.\d+")  # perf prints the interval end as %.9f
log = logging.getLogger(__name__)

_HINT = "collect with `perf stat -I <ms> -x,` (or -j), in the C locale (LC_ALL=C)"


class Row(NamedTuple):
    time: float
    event: str
    value: float
    status: str
    run_ns: float
    pct_running: float
    id: str
    line: int = 0


def _number(s: str) -> float | None:
    try:
        return float(s)
    except ValueError:
        return None


def _count(value_s: str, path: Path, lineno: int) -> tuple[float, str]:
    """A count field: ``(value, status)``; NaN for not counted / not supported."""
    value_s = value_s.strip()
    if value_s == NOT_COUNTED:
        return math.nan, "not counted"
    if value_s == NOT_SUPPORTED:
        return math.nan, "not supported"
    value = _number(value_s)
    if value is None:
        if _LOCALE_NUMBER.fullmatch(value_s):
            raise InputError(path, f"count {value_s!r} is a locale-formatted number",
                             row=lineno, expected=f"plain numbers: {_HINT}")
        raise InputError(path, f"count {value_s!r} is not a number", row=lineno,
                         expected="a count, <not counted> or <not supported>")
    if not math.isfinite(value):
        raise InputError(path, f"count {value_s!r} is not a finite number", row=lineno,
                         expected="a count, <not counted> or <not supported>")
    if value < 0:
        raise InputError(path, f"count {value_s!r} is negative", row=lineno,
                         expected="a non-negative count")
    exact = int(value_s) if value_s.isdigit() else value  # 2^64 - 1000 is 2^64 as a float
    if exact > COUNTER_MAX:
        raise InputError(path, f"count {value_s!r} is more than a 64-bit counter holds",
                         row=lineno, expected=f"a count of at most 2^64 - 1 = {COUNTER_MAX}")
    if exact >= WRAPPED:
        raise InputError(path, f"count {value_s!r} in one interval is 2^63 or more: a counter "
                               "that wrapped (a negative difference read as unsigned)",
                         row=lineno, expected="the count of one interval, below 2^63")
    return value, "ok"


def detect_form(line: str, path: Path, lineno: int) -> str:
    """``"json"`` or the ``-x`` separator, from the first data line.

    perf prints the interval time first, so the separator is the character right after it; a
    space there is perf's human-readable table, which is refused (it is aligned for reading, and
    its numbers follow the locale).

    Parameters
    ----------
    line : str
        the file's first data line.
    path : Path
        the file (for errors).
    lineno : int
        the line's number (for errors).
    """
    s = line.lstrip()
    if s.startswith("{"):
        return "json"
    m = _TIME.match(line)
    if not m and re.match(r"\s*\d+,\d+", line):
        raise InputError(path, "the interval time has a decimal comma (a locale-formatted "
                               "number)", row=lineno, expected=_HINT)
    if not m or m.end() >= len(line):
        raise InputError(path, f"no interval time at the start of {line.strip()!r}",
                         row=lineno, expected=f"perf stat -I output: {_HINT}")
    sep = line[m.end()]
    if sep.isdigit() or sep in ".":
        raise InputError(path, f"cannot tell the separator of {line.strip()!r}", row=lineno,
                         expected=f"perf stat -I output: {_HINT}")
    if sep == " ":
        raise InputError(path, "human-readable perf stat output (no -x separator)", row=lineno,
                         expected=_HINT)
    return sep


def _split_ids(fields: list[str], path: Path, lineno: int) -> tuple[str, list[str]]:
    """``(id, rest)``: the aggregation id (``""`` aggregated) and the fields from ``value`` on."""
    second = fields[1].strip()
    if second in ("", NOT_COUNTED, NOT_SUPPORTED) or _number(second) is not None:
        return "", fields[1:]
    if _AGG_WITH_COUNT.fullmatch(second):
        if len(fields) < 3 or _number(fields[2].strip()) is None:
            raise InputError(path, f"aggregation id {second!r} is not followed by its CPU count",
                             row=lineno, expected=FIELDS)
        return second, fields[3:]
    if _CPU_ID.fullmatch(second) or _THREAD_ID.fullmatch(second):
        return second, fields[2:]
    if _LOCALE_NUMBER.fullmatch(second):
        raise InputError(path, f"count {second!r} is a locale-formatted number", row=lineno,
                         expected=f"plain numbers: {_HINT}")
    raise InputError(path, f"count {second!r} is not a number", row=lineno,
                     expected="a count, <not counted>, <not supported>, or an aggregation id "
                              "(CPU3, S0-D0-C1, S0, N0, comm-pid)")


def _parse_sv(line: str, sep: str, path: Path, lineno: int) -> Row | None:
    fields = line.split(sep)
    time_s = fields[0].strip()
    t = _number(time_s)
    if t is None or not math.isfinite(t) or t < 0:
        raise InputError(path, f"interval time {time_s!r} is not a number", row=lineno,
                         expected=f"perf stat -I output (first column: seconds since start; "
                                  f"separator {sep!r})")
    if len(fields) < 2:
        raise InputError(path, f"malformed perf line {line.strip()!r}", row=lineno,
                         expected=FIELDS)
    second, third = fields[1].strip(), fields[2].strip() if len(fields) > 2 else ""
    if (_number(second) is None and second not in (NOT_COUNTED, NOT_SUPPORTED)
            and not _AGG_WITH_COUNT.fullmatch(second)
            and not _CPU_ID.fullmatch(second) and not _THREAD_ID.fullmatch(second)
            and third and _number(third) is None and third not in (NOT_COUNTED, NOT_SUPPORTED)):
        raise InputError(path, f"no interval time: {line.strip()!r} reads as value,unit,event "
                               "(perf stat without -I)", row=lineno, expected=_HINT)
    agg, rest = _split_ids(fields, path, lineno)
    # rest: value, unit, event..., run_ns, pct_running[, metric_value, metric_unit]
    if len(rest) >= 3 and rest[0].strip() == "" and all(f.strip() == "" for f in rest[1:-2]):
        return None  # a line that only continues the previous event's metric
    short = (len(rest) >= 5 and _number(rest[-1].strip()) is not None
             and _number(rest[-2].strip()) is not None)  # perf without metric columns
    if short:
        event_f, run_s, pct_s = rest[2:-2], rest[-2], rest[-1]
    elif len(rest) >= 7:
        event_f, run_s, pct_s = rest[2:-4], rest[-4], rest[-3]
    else:
        raise InputError(path, f"malformed perf line {line.strip()!r}", row=lineno,
                         expected=FIELDS)
    event = sep.join(event_f).strip()
    if not event:
        raise InputError(path, "empty event name", row=lineno, expected=FIELDS)
    value, status = _count(rest[0], path, lineno)
    run_ns = _number(run_s.strip()) if run_s.strip() else math.nan
    pct = _number(pct_s.strip()) if pct_s.strip() else math.nan
    if run_ns is None or pct is None:
        raise InputError(path, "run time or percent-running is not a number", row=lineno,
                         expected=FIELDS)
    _check_running(run_ns, pct, path, lineno, given=(bool(run_s.strip()), bool(pct_s.strip())))
    return Row(t, event, value, status, run_ns, pct, agg, lineno)


def _check_running(run_ns: float, pct: float, path: Path, lineno: int,
                   given: tuple[bool, bool] = (True, True)) -> None:
    """perf's run time (ns) is finite and non-negative and its percent-running within [0, 100]
    where given (``given``: each field was written; an empty or absent one is NaN)."""
    if (given[0] or not math.isnan(run_ns)) and \
            not (math.isfinite(run_ns) and 0 <= run_ns <= COUNTER_MAX):
        raise InputError(path, f"run time {run_ns!r} ns is not a finite non-negative number",
                         row=lineno, expected=FIELDS)
    if (given[1] or not math.isnan(pct)) and not 0 <= pct <= 100:
        raise InputError(path, f"percent-running {pct!r} is not within 0 to 100", row=lineno,
                         expected=FIELDS)


def _parse_json(line: str, path: Path, lineno: int) -> Row | None:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"malformed JSON line ({exc.msg})", row=lineno,
                         expected="perf stat -j output, one JSON object per line") from exc
    if not isinstance(obj, dict):
        raise InputError(path, "a JSON line that is not an object", row=lineno,
                         expected="perf stat -j output, one JSON object per line")
    if "event" not in obj and "counter-value" not in obj:
        return None  # a metric-only object
    if "interval" not in obj:
        raise InputError(path, "no \"interval\" key: perf stat ran without -I", row=lineno,
                         expected="perf stat -I <ms> -j output")
    t = obj["interval"]
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t):
        raise InputError(path, f"interval time {t!r} is not a number", row=lineno,
                         expected="perf stat -I <ms> -j output")
    event = str(obj.get("event", "")).strip()
    if not event:
        raise InputError(path, "empty event name", row=lineno, expected="an \"event\" key")
    value, status = _count(str(obj.get("counter-value", "")), path, lineno)
    agg = next((str(obj[k]) for k in _JSON_IDS if k in obj), "")
    if "cpu" in obj and agg == str(obj["cpu"]):
        agg = f"CPU{agg}"
    try:
        run_ns = float(obj.get("event-runtime", math.nan))
        pct = float(obj.get("pcnt-running", math.nan))
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(path, "event-runtime or pcnt-running is not a number", row=lineno,
                         expected="perf stat -j output") from exc
    _check_running(run_ns, pct, path, lineno, given=("event-runtime" in obj,
                                                     "pcnt-running" in obj))
    return Row(float(t), event, value, status, run_ns, pct, agg, lineno)


#: the first line of a perf file the import backend copied (:func:`origin`)
IMPORT_HEADER = "# perfcast: imported from "


def origin(path: str | Path) -> Path:
    """The file errors about ``path`` name: the user's file it was imported from (its first
    line :data:`IMPORT_HEADER`, written by the import backend), else ``path`` itself. Only a
    regular file is looked into (the backend writes one): a FIFO or a ``<(...)`` pipe is left to
    its one reader, which would otherwise find the data this look consumed gone."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return Path(path)
        with open(path, errors="replace") as fh:
            first = fh.readline(4096)
    except OSError:
        return Path(path)
    if first.startswith(IMPORT_HEADER):
        return Path(first[len(IMPORT_HEADER):].rstrip("\n"))
    return Path(path)


def iter_rows(path: str | Path, separator: str = "auto") -> Iterator[Row]:
    """Every event line of a perf ``-I`` file, in file order, read line by line (``separator``:
    ``auto`` or the ``-x`` character; JSON is always detected). A copy made by the import
    backend is reported as the user's file, with its line numbers (:func:`origin`).

    Raises
    ------
    InputError
        naming the file and line: missing, a directory, not text, a line perf does not write,
        or a second ``# started on`` header after counter lines (``perf stat --append`` added a
        second run, whose intervals start again from zero: read as one run, each interval of
        both would be summed).
    """
    path = input_file(path)
    shown = origin(path)
    offset = int(shown != path)  # the import header is the copy's one extra line
    form: str | None = None
    found = False
    for lineno, raw in text_lines(path, name=shown, first=1 - offset):
        if found and raw.lstrip().startswith(STARTED):
            raise InputError(shown, f"a second {STARTED!r} header after counter lines: "
                                    "another perf run was appended to this file "
                                    "(perf stat --append)", row=lineno,
                             expected="one perf run per file (its intervals would be "
                                      "summed with the first run's)")
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        if form is None:
            form = detect_form(raw, shown, lineno)
            if separator != "auto" and form not in ("json", separator):
                raise InputError(shown, f"the separator is {form!r}, not the configured "
                                        f"{separator!r}", row=lineno,
                                 expected="counters.read.separator: auto, or perf's -x")
        row = (_parse_json(raw, shown, lineno) if form == "json"
               else _parse_sv(raw, form, shown, lineno))
        if row is not None:
            found = True
            yield row
    if not found:
        raise InputError(shown, "no counter lines", expected=f"perf stat -I output: {_HINT}")


def read_rows(path: str | Path, separator: str = "auto") -> list[Row]:
    """Every event line of a perf ``-I`` file as a list (:func:`iter_rows`)."""
    return list(iter_rows(path, separator))


def read_long(path: str | Path, separator: str = "auto") -> pd.DataFrame:
    """The event lines of a perf ``-I`` file as a table of :data:`LONG_COLUMNS`, streamed: each
    line is parsed and stored in typed columns at once (8 bytes a number, a shared string per
    event, status and id, 4 bytes a line number), so memory grows by about 55 bytes a line, not
    by the file's text and a Python object per field (a 181 MB file: 2.1 GB before, see
    docs/methods/counters.md); ``line`` is each row's line in the file, for errors."""
    import pandas as pd

    nums = {k: array("d") for k in ("time", "value", "run_ns", "pct_running")}
    codes: dict[str, array] = {k: array("i") for k in ("event", "status", "id")}
    names: dict[str, dict[str, int]] = {k: {} for k in codes}
    lines = array("i")
    for row in iter_rows(path, separator):
        nums["time"].append(row.time)
        nums["value"].append(row.value)
        nums["run_ns"].append(row.run_ns)
        nums["pct_running"].append(row.pct_running)
        lines.append(row.line)
        for k, text in (("event", row.event), ("status", row.status), ("id", row.id)):
            code = names[k].setdefault(text, len(names[k]))
            codes[k].append(code)
    cols: dict[str, np.ndarray] = {k: np.frombuffer(v, dtype=float) for k, v in nums.items()}
    for k, table in names.items():
        strings = np.array(list(table), dtype=object)
        cols[k] = strings[np.frombuffer(codes[k], dtype=np.int32)]
    cols["line"] = np.frombuffer(lines, dtype=np.int32)
    return pd.DataFrame({c: cols[c] for c in LONG_COLUMNS}, copy=False)


def _shown(ids: Sequence[str], most: int = 8) -> str:
    """Ids for a message: the first ``most``, and how many more."""
    more = f" and {len(ids) - most} more" if len(ids) > most else ""
    return ", ".join(ids[:most]) + more


def check_ids(df: pd.DataFrame, path: str | Path) -> None:
    """Refuse rows of an aggregation mode that cannot be summed into one count per interval and
    event: the same (interval, event, id) twice, or an interval where an event lacks one of the
    ids it is reported on in other intervals.

    Summing whatever rows an interval has would take a repeated row twice (perf run with an
    event listed twice, ``-e a,a -A``, prints it twice per CPU; a second run appended with
    ``--append`` repeats every interval) and a missing one as zero (perf killed while writing
    its last interval leaves it with part of its CPUs): wrong counts, where the aggregated form
    of the same damage is refused (:func:`parse_perf_stat`). The ids of each event are checked
    on their own (an uncore event is reported on one CPU per socket, a hybrid PMU's event on
    its own CPUs only). Thread ids (``--per-thread``, ``comm-pid``) are checked for repeats
    only: threads start and end during a run, and system-wide (``-a``) perf leaves out the
    threads that counted nothing in an interval.

    Parameters
    ----------
    df : pandas.DataFrame
        the rows, :data:`LONG_COLUMNS` (``line``: each row's line in the file).
    path : str or Path
        the file (for errors).

    Raises
    ------
    InputError
        naming the file, the line and the interval, event and id(s).
    """
    import pandas as pd

    t_codes, times = pd.factorize(df["time"])
    e_codes, events = pd.factorize(df["event"])
    i_codes, ids = pd.factorize(df["id"])
    lines = df["line"].to_numpy()
    ne, ni = len(events), len(ids)
    cell = (t_codes.astype(np.int64) * ne + e_codes) * ni + i_codes
    again = pd.Series(cell).duplicated().to_numpy()
    if again.any():
        k = int(np.argmax(again))
        first = int(np.argmax(cell == cell[k]))
        on = f" on {ids[i_codes[k]]}" if ids[i_codes[k]] else ""
        raise InputError(
            path, f"a second row of event {events[e_codes[k]]!r}{on} at "
                  f"t={times[t_codes[k]]:.9f}s (the first is line {lines[first]})",
            row=int(lines[k]),
            expected="one row per interval, event and id; an event listed twice in perf's -e, "
                     "or a second run appended to the file, would be summed twice")
    threads = [bool(_THREAD_ID.fullmatch(i)) and not _CPU_ID.fullmatch(i)
               and not _AGG_WITH_COUNT.fullmatch(i) for i in ids]
    if all(threads):
        return
    pairs = np.unique(e_codes.astype(np.int64) * ni + i_codes)
    n_ids = np.bincount(pairs // ni, minlength=ne)  # the ids each event is reported on
    g_codes, groups = pd.factorize(t_codes.astype(np.int64) * ne + e_codes)  # in file order
    short = np.flatnonzero(np.bincount(g_codes) < n_ids[groups % ne])
    if not len(short):
        return
    g = int(short[0])
    rows = np.flatnonzero(g_codes == g)
    e = int(e_codes[rows[0]])
    have = set(i_codes[rows].tolist())
    missing = [int(i) for i in pairs[pairs // ni == e] % ni if int(i) not in have]
    seen = int(lines[np.argmax((e_codes == e) & (i_codes == missing[0]))])
    n = len(have) + len(missing)
    span = lines[t_codes == t_codes[rows[0]]]  # the interval's lines
    raise InputError(
        path, f"event {events[e]!r} has no row for {_shown([ids[i] for i in missing])} in the "
              f"interval at t={times[t_codes[rows[0]]]:.9f}s (lines {span.min()}-{span.max()}): "
              f"{len(have)} of the {n} ids it is reported on ({ids[missing[0]]} first at line "
              f"{seen})",
        row=int(span.max()),
        expected="a row for each of an event's ids in every interval; perf killed while "
                 "writing leaves its last interval partial: collect again, or cut the file "
                 "after the last whole interval")


def aggregate(rows: Sequence[Row] | pd.DataFrame, path: str | Path,
              select: Sequence[str] = ()) -> pd.DataFrame:
    """Long form with one row per interval and event: rows of the aggregation modes summed,
    after :func:`check_ids` (one row per id of each event in every interval, over the whole
    file whatever ``select`` keeps).

    ``select`` keeps only the ids matching one of its shell patterns (``CPU[0-3]``,
    ``S0-*``, ``python3-*``) for events perf reports on those ids; an event that perf reports on
    none of them (an uncore PMU read on one CPU per socket) keeps all its rows, since its count
    belongs to the socket, not to a CPU (a warning names it). A row ``<not counted>`` or ``<not
    supported>`` is left out of the sum and sets the interval's ``pct_running`` to 0, so the
    gap is flagged, never hidden (perf prints 100 beside a ``<not supported>`` count).

    Parameters
    ----------
    rows : sequence of Row or pandas.DataFrame
        the parsed rows (:func:`parse_perf_stat`'s long form, before aggregation).
    path : str or Path
        the file (for errors and warnings).
    select : sequence of str, default=()
        shell patterns of the ids whose rows are summed (empty: all).
    """
    import pandas as pd

    df = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows, columns=LONG_COLUMNS)
    ids = sorted(set(df["id"]) - {""})
    if ids:
        check_ids(df, path)
    if select:
        unknown = [p for p in select if not any(fnmatch.fnmatchcase(i, p) for i in ids)]
        if unknown:
            raise InputError(path, f"counters.read.select {unknown} matches none of the ids in "
                                   f"the file", expected=f"ids among {ids[:12]}" if ids
                             else "an aggregation mode (-A, --per-core, ...) for select")
        keep = df["id"].map(lambda i: any(fnmatch.fnmatchcase(i, p) for p in select))
        whole = sorted(set(df["event"]) - set(df.loc[keep, "event"]))
        for ev in whole:  # an uncore count belongs to a socket: kept whole, and said
            log.warning("%s: event %r is reported on none of the selected ids %s (on %s): "
                        "all its rows are summed, the whole of what it counts, not the "
                        "selected CPUs' share", path, ev, list(select),
                        sorted(set(df.loc[df["event"] == ev, "id"]))[:8])
        df = df[keep | df["event"].isin(whole)]
    if not ids:
        # a count perf did not make ran none of the time, whatever perf prints beside it
        pct = np.where(df["status"].to_numpy() == "ok", df["pct_running"].to_numpy(), 0.0)
        return pd.DataFrame({c: pct if c == "pct_running" else df[c].to_numpy()
                             for c in AGG_COLUMNS}, copy=False)
    df = df.assign(ok=df["status"] == "ok")
    df["pct_eff"] = np.where(df["ok"], df["pct_running"], 0.0)
    df["value0"] = df["value"].where(df["ok"], 0.0)
    g = df.groupby(["time", "event"], sort=False)
    out = pd.DataFrame({
        "value": g["value0"].sum(),
        "n_ok": g["ok"].sum(),
        "any_ns": g["status"].agg(lambda s: bool((s == "not supported").all())),
        "run_ns": g["run_ns"].sum(min_count=1),
        "pct_running": g["pct_eff"].min(),
        "line": g["line"].max(),
    }).reset_index()
    out["status"] = np.where(out["n_ok"] > 0, "ok",
                             np.where(out["any_ns"], "not supported", "not counted"))
    out.loc[out["n_ok"] == 0, "value"] = math.nan
    return out[AGG_COLUMNS].reset_index(drop=True)


def parse_perf_stat(path: str | Path, separator: str = "auto",
                    select: Sequence[str] = ()) -> pd.DataFrame:
    """Parse one perf ``-I`` file (``-x`` or ``-j``) into long form, one row per interval and
    event: ``time`` (s), ``event``, ``value`` (float, NaN when not counted), ``status``
    (``ok`` / ``not counted`` / ``not supported``), ``run_ns``, ``pct_running``, ``line``
    (the row's line in the file; of rows summed, the last).

    Raises :class:`~perfcast.errors.InputError` naming the file and line for anything else,
    among it an event whose interval times do not increase (a line repeated, or a second run
    appended) and, in an aggregation mode, an interval missing one of an event's ids
    (:func:`check_ids`).

    Parameters
    ----------
    path : str or Path
        the perf file.
    separator : str, default='auto'
        the ``-x`` separator perf was given (``auto``: detected from the first data line).
    select : sequence of str, default=()
        the aggregation ids whose rows are summed (:func:`aggregate`; empty: all).
    """
    shown = origin(path)
    df = aggregate(read_long(path, separator), shown, select)
    for ev, sub in df.groupby("event", sort=False):
        back = np.flatnonzero(np.diff(sub["time"].to_numpy()) <= 0)
        if len(back):
            raise InputError(shown, f"interval times of event {ev!r} do not increase",
                             row=int(sub["line"].iloc[back[0] + 1]),
                             expected="one line per event (and id) per interval, in time order")
    return df


def to_wide(long: pd.DataFrame, path: str | Path, required: Iterable[str] = (),
            wanted: Iterable[str] = ()) -> pd.DataFrame:
    """One row per interval: ``time``, ``duration_s``, a column per event, ``pct_running_min``
    and ``<event>__pct`` (percent-running per event).

    ``required`` and ``wanted`` are configured names, each resolved on its own by
    :func:`claim_events`: its column takes the configured name and the rows it names (hybrid
    copies summed, a copy <not counted> in an interval counting zero there; no copy counted:
    missing, percent-running 0), whatever other names are configured, so ``a`` is the sum over
    PMUs beside ``cpu_core/a/``. An event no name stands for keeps its own column. Every event
    must appear in every interval. A ``required`` event that is ``<not supported>`` throughout
    raises :class:`HostCapabilityError` (a host without a hardware PMU): never zeros. The
    scheduler's events restricted to user mode (``context-switches:u``,
    :func:`~perfcast.counters.events.user_mode_blind`), which perf prints as 0, are not counted
    (missing, percent-running 0).

    Parameters
    ----------
    long : pandas.DataFrame
        :func:`parse_perf_stat`'s long form.
    path : str or Path
        the file (for errors).
    required : iterable of str, default=()
        events every interval must count (the base events).
    wanted : iterable of str, default=()
        the other events to keep.
    """
    import pandas as pd

    present = list(long["event"].unique())
    blind = long["event"].map({ev: user_mode_blind(ev) for ev in present})
    if blind.notna().any():
        # the scheduler's events restricted to user mode print 0 that is no count
        for why in blind.dropna().unique():
            log.warning("%s: %s; read as not counted", path, why)
        long = long.copy()
        long.loc[blind.notna(), ["value", "pct_running"]] = [math.nan, 0.0]
        long.loc[blind.notna(), "status"] = "not counted"
    required = list(required)
    claims = claim_events([*required, *wanted], present, path, required)
    for ev in required:
        sub = long[long["event"].isin(claims[ev])]
        if len(sub) and (sub["status"] == "not supported").all():
            raise HostCapabilityError(
                f"{path}: event {ev!r} reads <not supported> in every interval: the host that "
                "collected this file exposes no hardware PMU for it (common in VMs); collect on a "
                "host with PMU access or import files collected there"
            )
    counts = long.groupby("time").size()
    n_events = len(present)
    bad = counts[counts != n_events]
    if len(bad):
        at = long["time"] == bad.index[0]
        last = int(long.loc[at, "line"].max()) if "line" in long.columns else None
        ends = "" if last is None else ", ending at this line,"
        raise InputError(path, f"interval at t={bad.index[0]:.9f}s{ends} has "
                               f"{int(bad.iloc[0])} of {n_events} events", row=last,
                         expected="every event in every interval; perf killed while writing "
                                  "leaves its last interval partial")
    # one cell per interval and event of the file (the first line of each, as perf writes one),
    # placed by codes: a pivot table of millions of lines took gigabytes
    t_codes, times = pd.factorize(long["time"], sort=True)
    e_codes = pd.Categorical(long["event"], categories=present).codes

    def cells(column: np.ndarray) -> np.ndarray:
        grid = np.full((len(times), len(present)), np.nan)
        # assigned from the last line to the first: the first line of a cell wins
        grid[t_codes[::-1], e_codes[::-1]] = column[::-1]
        return grid

    values = cells(long["value"].to_numpy(dtype=float))
    pct = cells(long["pct_running"].to_numpy(dtype=float))
    ok = cells((long["status"] == "ok").to_numpy(dtype=float)) == 1.0
    where = {ev: k for k, ev in enumerate(present)}
    columns: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for ev in present:  # in the file's order; an event no name claims kept as is
        names = [n for n, found in claims.items() if ev in found] or [ev]
        for name in names:
            if name in columns:
                continue
            idx = [where[e] for e in claims.get(name, [ev])]
            if len(idx) == 1:
                columns[name] = values[:, idx[0]], pct[:, idx[0]]
                continue
            # hybrid copies: a copy not counted in an interval ran no instructions there
            copies_ok = ok[:, idx]
            total = np.where(copies_ok, values[:, idx], 0.0).sum(axis=1)
            n_ok = copies_ok.sum(axis=1)
            low = np.where(copies_ok, pct[:, idx], np.inf).min(axis=1)
            columns[name] = (np.where(n_ok > 0, total, np.nan), np.where(n_ok > 0, low, 0.0))
    t = np.asarray(times, dtype=float)
    cols: dict[str, np.ndarray] = {"time": t, "duration_s": np.diff(t, prepend=0.0)}
    cols |= {name: v for name, (v, _) in columns.items()}
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an interval without any percentage
        low = (np.nanmin(np.column_stack([p for _, p in columns.values()]), axis=1)
               if columns else np.zeros(len(t)))
    cols["pct_running_min"] = np.nan_to_num(low, nan=0.0)
    cols |= {pct_column(name): p for name, (_, p) in columns.items()}
    return pd.DataFrame(cols)


def pct_column(event: str) -> str:
    """The wide table's percent-running column of ``event``."""
    return f"{event}__pct"


def format_perf_csv(
    times: np.ndarray,
    counts: dict[str, np.ndarray],
    units: dict[str, str] | None = None,
    header: str = "",
) -> str:
    """Write counts in exactly perf's ``-I -x,`` layout (used by the simulator and tests).

    Parameters
    ----------
    times : numpy.ndarray
        the intervals' end times (s).
    counts : dict of str to numpy.ndarray
        per event, its count in each interval (a string is written as is, e.g. ``<not counted>``).
    units : dict of str to str or None, default=None
        per event, its unit (``msec`` for the clock events; none: a count).
    header : str, default=''
        the rest of the ``# started on`` first line.
    """
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
