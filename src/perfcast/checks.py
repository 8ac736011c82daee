"""Checks every stage shares: an input is a readable file, a result is a finite, plausible number.

Each failure is an :class:`~perfcast.errors.InputError` naming the file (and the line or row) and
what was expected, so a bad input ends in one line, never in a traceback or a silent NaN.
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from perfcast.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

#: the largest magnitude a reading may have: sums and squares of a few million of them stay
#: finite in double precision (1.8e308), so an estimate never fails for an overflow it hides
MAX_MAGNITUDE = 1e150


def input_file(path: str | Path) -> Path:
    """``path`` as a Path, when it names an existing file (not a directory).

    Raises
    ------
    InputError
        the path does not exist or is a directory.
    """
    p = Path(path)
    if p.is_dir():
        raise InputError(p, "is a directory", expected="a file")
    if not p.exists():
        raise InputError(p, "file not found")
    return p


def read_text(path: str | Path) -> str:
    """The text of a file (UTF-8), read once within bounds (:func:`perfcast.io.read_text`).

    Raises
    ------
    InputError
        missing, a directory, unreadable, not text (a byte that is not UTF-8, a NUL byte:
        naming its line and column), a line or the whole too long.
    """
    from perfcast.io import read_text as read

    return read(path)


def read_csv(path: str | Path) -> pd.DataFrame:
    """A CSV table, its text read once within bounds (:func:`read_text`), its header naming each
    column once (:func:`require_unique_columns`).

    Parameters
    ----------
    path : str or Path
        the table (a file, FIFO or ``/dev/fd/N``).

    Returns
    -------
    pandas.DataFrame
        the table as pandas reads it (types inferred per column).

    Raises
    ------
    InputError
        naming the file: as :func:`read_text`, empty, a header naming a column twice (its
        line), or rows pandas cannot parse (its message).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = Path(tmp, "t.csv").write_text("p,t\\n2,1.5\\n")
    ...     read_csv(Path(tmp, "t.csv")).to_dict("list")
    {'p': [2], 't': [1.5]}
    """
    import io

    import pandas as pd

    text = read_text(path)
    for lineno, line in enumerate(io.StringIO(text), start=1):  # (lazily: a large table)
        if line.strip():
            try:
                require_unique_columns(next(csv.reader([line])), path, row=lineno)
            except csv.Error as exc:
                raise InputError(path, f"not a readable CSV header: {exc}", row=lineno,
                                 expected="a CSV table with a header row") from None
            break
    try:
        return pd.read_csv(io.StringIO(text))
    except pd.errors.EmptyDataError:
        raise InputError(path, "empty file", expected="a CSV table with a header row") from None
    except (pd.errors.ParserError, csv.Error) as exc:
        why = " ".join(str(exc).split())
        raise InputError(path, f"not a readable CSV table: {why}",
                         expected="a CSV table with a header row") from None


def require_values(values: Sequence[float] | np.ndarray, path: str | Path | None, what: str, *,
                   low: float | None = None, high: float | None = None,
                   low_inclusive: bool = False, labels: Sequence[object] | None = None,
                   label: str = "interval", lines: Sequence[int] | None = None) -> None:
    """Every value finite and within ``(low, high]`` (``[low, high]`` with ``low_inclusive``).

    Parameters
    ----------
    values : sequence of float or numpy.ndarray
        the numbers to check.
    path : str or Path or None
        the file they come from (or belong to).
    what : str
        their name in the message (``"predicted cycles"``).
    low, high : float or None, default=None
        the plausible range (None: unbounded on that side).
    low_inclusive : bool, default=False
        ``low`` itself is plausible (``[low, high]`` instead of ``(low, high]``).
    labels : sequence or None, default=None
        per value, its name in the message (e.g. the interval number); None: its position.
    label : str, default="interval"
        what a label is (``"interval"``, ``"row"``).
    lines : sequence of int or None, default=None
        per value, its line in ``path`` (1-based), named in the error instead of a label.

    Raises
    ------
    InputError
        naming the file, the first offending value and where it is.

    Examples
    --------
    >>> require_values([1.0, 2.5], "ipc.csv", "IPC", low=0, high=10)
    >>> require_values([1.0, float("nan")], "ipc.csv", "IPC", low=0, labels=["a", "b"],
    ...                label="benchmark")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    perfcast.errors.InputError: ipc.csv: IPC nan in benchmark b (1 of 2 values) (expected ...)
    """
    x = np.asarray(values, dtype=float)
    ok = np.isfinite(x) & (np.abs(x) <= MAX_MAGNITUDE)
    if low is not None:
        ok &= (x >= low) if low_inclusive else (x > low)
    if high is not None:
        ok &= x <= high
    if ok.all():
        return
    i = int(np.flatnonzero(~ok)[0])
    where = "" if lines is not None else \
        f" in {label} {labels[i] if labels is not None else i}"
    lo = "" if low is None else (f"{low:g} <= " if low_inclusive else f"{low:g} < ")
    hi = "" if high is None else f" <= {high:g}"
    bad = f"{int((~ok).sum())} of {len(x)} values"
    size = f", of magnitude at most {MAX_MAGNITUDE:g}" if abs(x[i]) > MAX_MAGNITUDE else ""
    raise InputError(path, f"{what} {float(x[i])!r}{where} ({bad})",
                     row=None if lines is None else int(lines[i]),
                     expected=f"a finite {lo}{what}{hi}{size}")


def require_magnitude(value: float, path: str | Path, text: str, row: int | None) -> None:
    """A number read from ``path`` (line ``row``) is 0 or of a magnitude within
    ``[1 / MAX_MAGNITUDE, MAX_MAGNITUDE]``: beyond it the sums, squares and reciprocals of an
    estimate overflow or underflow, and the estimate would fail for a wrong reason. A literal
    that is not zero but reads as 0 (``1e-400``: below the smallest double, 5e-324, it
    underflows) is as small as any below the bound and refused the same way: taken for 0 it
    would be a silently wrong reading.

    Parameters
    ----------
    value : float
        the number read.
    path : str or Path
        the file it was read from.
    text : str
        the text it was read from (the number's literal), quoted in the message.
    row : int or None
        its line in ``path`` (1-based; None: not named).

    Raises
    ------
    InputError
        naming the file, the line and the text read.

    Examples
    --------
    >>> require_magnitude(0.0, "t.txt", "0.000", 3)
    >>> require_magnitude(0.0, "t.txt", "1e-400", 4)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    perfcast.errors.InputError: t.txt, line 4: '1e-400' is too small to compute with (expected ...)
    """
    if (abs(value) > MAX_MAGNITUDE or 0 < abs(value) < 1 / MAX_MAGNITUDE
            or (value == 0 and _nonzero_literal(text))):
        size = "large" if abs(value) > 1 else "small"
        raise InputError(path, f"{text!r} is too {size} to compute with", row=row,
                         expected=f"0 or a magnitude between {1 / MAX_MAGNITUDE:g} and "
                                  f"{MAX_MAGNITUDE:g}")


_LITERAL = re.compile(r"\s*[+-]?(\d*\.?\d*)(?:[eE][+-]?\d+)?\s*")


def _nonzero_literal(text: str) -> bool:
    """Whether ``text`` is a decimal literal with a digit other than 0 in its mantissa (a
    number that is not zero, whatever double it reads as)."""
    m = _LITERAL.fullmatch(text)
    return m is not None and any(c in "123456789" for c in m.group(1))


def require_unique_columns(columns: Sequence[object], path: str | Path,
                           row: int | None = 1) -> None:
    """Each column name of a table's header once: a reader takes the first of two equal names
    (pandas renames the second ``name.1``), so the other column's values would be silently
    ignored or taken for another.

    Parameters
    ----------
    columns : sequence
        the header's column names (compared as stripped strings).
    path : str or Path
        the file the header belongs to.
    row : int or None, default=1
        the header's line in ``path``.

    Raises
    ------
    InputError
        naming the file, the header line and the repeated name.

    Examples
    --------
    >>> require_unique_columns(["benchmark", "ipc"], "runs.csv")
    >>> require_unique_columns(["benchmark", "ipc", " ipc"], "runs.csv")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    perfcast.errors.InputError: runs.csv, line 1: column 'ipc' appears 2 times in the header ...
    """
    counts = Counter(str(c).strip() for c in columns)
    dup = [c for c in dict.fromkeys(str(c).strip() for c in columns) if counts[c] > 1]
    if dup:
        raise InputError(path, f"column {dup[0]!r} appears {counts[dup[0]]} times in the header",
                         row=row, expected="each column named once")
