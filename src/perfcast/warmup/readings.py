"""Unit readings in: from a command's output lines, from a user's files.

A command gives unit readings one per output line: either the whole line is a number (the
default), or a regular expression picks it out (group ``value`` or the first group). Lines that
do not match are ignored (and counted), so a workload may also print other information. Every
reading must be a finite number >= 0 (a duration); ``scale`` converts it to seconds (e.g.
0.001 for milliseconds).
"""

from __future__ import annotations

import csv
import math
import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from perfcast.checks import require_magnitude, require_unique_columns
from perfcast.errors import InputError
from perfcast.io import MAX_TEXT_BYTES, input_name, text_lines

_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def _parse_float(text: str) -> float | None:
    text = text.strip()
    if _NUMBER.fullmatch(text):
        return float(text)
    if text.lower() in {"nan", "+nan", "-nan", "inf", "+inf", "-inf", "infinity", "-infinity"}:
        return float(text)
    return None


@dataclass(frozen=True)
class ReadingParser:
    """Picks unit readings out of output lines (see the module docstring).

    Attributes
    ----------
    regex : str or None
        A workload's ``readings_regex``: picks the reading out of a line (group ``value``,
        else the first group); None: a line that is a number is a reading.
    scale : float
        A workload's ``readings_scale`` (> 0): multiplies each reading into seconds.

    Raises
    ------
    ValueError
        (when made) ``regex`` is not a regular expression, or has no group.
    """

    regex: str | None
    scale: float

    def __post_init__(self) -> None:
        if self.regex is not None:
            try:
                pat = re.compile(self.regex)
            except re.error as exc:
                raise ValueError(f"bad readings regex {self.regex!r}: {exc}") from exc
            if pat.groups < 1:
                raise ValueError(f"readings regex {self.regex!r} needs a group around the number")

    def parse(
        self, lines: list[tuple[float, str]], source: str = "<output>"
    ) -> tuple[np.ndarray, np.ndarray, int]:
        """``(readings_s, arrival_times_s, ignored_lines)`` from ``(time, line)`` pairs."""
        pat = re.compile(self.regex) if self.regex else None
        values: list[float] = []
        times: list[float] = []
        ignored = 0
        for lineno, (t, line) in enumerate(lines, start=1):
            text = line.strip()
            if pat is None:
                v = _parse_float(line)
            else:
                m = pat.search(line)
                if m is None:
                    v = None
                else:
                    text = m.group("value") if "value" in pat.groupindex else m.group(1)
                    v = _parse_float(text)
                    if v is None:
                        raise InputError(source, f"regex matched {text!r}, not a number",
                                         row=lineno, expected="a duration")
            if v is None:
                ignored += 1
                continue
            if not math.isfinite(v) or v < 0:
                raise InputError(source, f"unit reading {line.strip()!r} is not a duration",
                                 row=lineno, expected="a finite number >= 0")
            require_magnitude(v, source, text.strip(), lineno)
            values.append(v * self.scale)
            times.append(t)
        return np.asarray(values, dtype=float), np.asarray(times, dtype=float), ignored


def parse_reading(line: str, name: str, lineno: int, *, allow_negative: bool
                  ) -> float | None:
    """The reading on one line of a readings file or stream: None for a blank line or a ``#``
    comment; otherwise a finite number (>= 0 unless ``allow_negative``).

    Parameters
    ----------
    line : str
        the line read (surrounding white space ignored).
    name : str
        the file or stream it was read from, named in the error.
    lineno : int
        its line number (1-based), named in the error.
    allow_negative : bool
        a negative reading is accepted (centred or differenced readings).

    Raises
    ------
    InputError
        naming ``name``, ``lineno`` and the text, when the line is not such a number.

    Examples
    --------
    >>> parse_reading(" 0.25\\n", "times.txt", 3, allow_negative=False)
    0.25
    >>> parse_reading("# warm-up", "times.txt", 1, allow_negative=False) is None
    True
    >>> parse_reading("-1", "times.txt", 4, allow_negative=False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    perfcast.errors.InputError: times.txt, line 4: negative reading -1 (expected ...)
    """
    s = line.strip()
    if not s or s.startswith("#"):
        return None
    v = _parse_float(s)
    if v is None:
        raise InputError(name, f"{_short(s)!r} is not a number", row=lineno,
                         expected="one number per line")
    if not math.isfinite(v):
        raise InputError(name, f"{s!r} is not a finite number", row=lineno,
                         expected="a finite number")
    if v < 0 and not allow_negative:
        raise InputError(name, f"negative reading {s}", row=lineno,
                         expected="a duration or rate >= 0 (--allow-negative accepts centred "
                                  "or differenced readings)")
    require_magnitude(v, name, s, lineno)
    return v


#: a header: one column name (a letter or _ first), as ``perfcast wps``'s CSV has
_HEADER = re.compile(r"[A-Za-z_][A-Za-z0-9_.()/% -]*")


def is_header(line: str) -> bool:
    """Whether ``line`` (the first that is not blank or a comment) is a column name, e.g.
    ``duration_s``; NaN and infinities are not (they are numbers, and refused as readings)."""
    s = line.strip()
    return bool(_HEADER.fullmatch(s)) and _parse_float(s) is None


def read_readings(path: str | Path, *, allow_negative: bool,
                  positive_for: str | None = None) -> np.ndarray:
    """One reading per line (blank lines and ``#`` comments skipped, a first line that is one
    column name is a header, :func:`is_header`); every other line must be a finite number
    (>= 0 unless ``allow_negative``; :func:`parse_reading`).

    Parameters
    ----------
    path : str or Path
        The file, or ``-`` for stdin.
    allow_negative : bool
        Accept readings below 0 (``perfcast``'s ``--allow-negative``).
    positive_for : str or None, default=None
        What needs every reading above 0 (a harmonic mean): a reading of 0 or below is then
        refused, naming its line and this.

    Returns
    -------
    numpy.ndarray
        The readings, in file order.

    Raises
    ------
    InputError
        No readings, or a line that is not a reading (naming the file and line).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "r.txt").write_text("duration_s\\n0.5\\n# a comment\\n\\n0.25\\n")
    ...     read_readings(Path(tmp) / "r.txt", allow_negative=False).tolist()
    [0.5, 0.25]
    """
    name = input_name(path)
    values = array("d")
    first = True
    for lineno, line in text_lines(path, max_bytes=MAX_TEXT_BYTES):
        if first and line.strip() and not line.lstrip().startswith("#"):
            first = False
            if is_header(line):
                continue
        v = parse_reading(line, name, lineno, allow_negative=allow_negative)
        if v is not None and positive_for is not None and not v > 0:
            raise InputError(name, f"reading {line.strip()} is not positive", row=lineno,
                             expected=f"positive readings for {positive_for}")
        if v is not None:
            values.append(v)
    if not values:
        raise InputError(name, "no readings (the file is empty)", expected="one number per line")
    return np.asarray(values, dtype=float)


def read_rounds(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """``(work, duration_s)`` from a CSV with a header naming ``work`` and ``duration_s``.

    Parameters
    ----------
    path : str or Path
        The CSV (other columns are ignored), or ``-`` for stdin.

    Returns
    -------
    work, duration_s : numpy.ndarray
        One value per round, in file order.

    Raises
    ------
    InputError
        No rounds, a missing column, or a value that is not a positive number (naming the
        file and row).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "rounds.csv").write_text("work,duration_s\\n100,0.6\\n200,0.7\\n")
    ...     read_rounds(Path(tmp) / "rounds.csv")
    (array([100., 200.]), array([0.6, 0.7]))
    """
    name = input_name(path)
    rows = [(i, r) for i, r in _csv_rows(name, path) if any(c.strip() for c in r)]
    if not rows:
        raise InputError(name, "no rounds (the file is empty)",
                         expected="a CSV with columns work,duration_s")
    header_line, header = rows[0]
    cols = [c.strip() for c in header]
    require_unique_columns(cols, name, row=header_line)
    missing = [c for c in ("work", "duration_s") if c not in cols]
    if missing:
        raise InputError(name, f"missing column(s) {missing} in header {cols}", row=header_line,
                         expected="columns work,duration_s")
    iw, it = cols.index("work"), cols.index("duration_s")
    work: list[float] = []
    dur: list[float] = []
    for lineno, r in rows[1:]:
        if len(r) <= max(iw, it):
            raise InputError(name, f"{len(r)} fields", row=lineno,
                             expected=f"{len(cols)} fields like the header")
        w, t = _parse_float(r[iw]), _parse_float(r[it])
        if w is not None and math.isfinite(w):
            require_magnitude(w, name, r[iw].strip(), lineno)  # (1e-400: too small, not 0)
        if w is None or not math.isfinite(w) or w <= 0:
            raise InputError(name, f"work {r[iw].strip()!r} is not a positive number",
                             row=lineno, expected="work > 0")
        if t is not None and math.isfinite(t):
            require_magnitude(t, name, r[it].strip(), lineno)
        if t is None or not math.isfinite(t) or t <= 0:
            raise InputError(name, f"duration_s {r[it].strip()!r} is not a positive duration",
                             row=lineno, expected="duration_s > 0 seconds")
        work.append(w)
        dur.append(t)
    if not work:
        raise InputError(name, "a header but no rounds", expected="one row per round")
    return np.asarray(work), np.asarray(dur)


def _csv_rows(name: str, path: str | Path) -> Iterator[tuple[int, list[str]]]:
    """Each line of a CSV input, split into its fields, with its line number (a field spans
    one line: a rounds table's cells are numbers)."""
    for lineno, line in text_lines(path, max_bytes=MAX_TEXT_BYTES):
        try:
            yield lineno, next(csv.reader([line]), [])
        except csv.Error as exc:
            raise InputError(name, f"not a CSV row: {exc}", row=lineno,
                             expected="a CSV with columns work,duration_s") from None


def _short(s: str, n: int = 40) -> str:
    return s if len(s) <= n else s[: n - 3] + "..."
