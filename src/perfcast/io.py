"""Files in and out: text inputs read once within bounds; outputs that appear whole or not at all.

Every text a user gives (perf files, readings, tables, stdin) is read by :func:`text_lines`: it
opens the input once (a FIFO or a ``<(...)`` pipe is read once, as a file is), reads it line by
line with a bound on a line's length (``/dev/zero``, a file without newlines, is refused after
:data:`MAX_LINE_BYTES`, not held whole), and decodes each line as UTF-8 on its own, so a byte
that is not UTF-8, a NUL byte or UTF-16 is reported at its line and column.

Every writer goes to a temporary file in the target's directory and is renamed into place
(``os.replace`` is atomic on POSIX), so an interrupted job never leaves a partial output that a
later run could take as done.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from perfcast.errors import InputError

if TYPE_CHECKING:
    import pandas as pd


#: the longest line a text input may have, in bytes: a perf line is some hundred bytes, a table's
#: row some thousand; a longer one is a damaged or binary input, refused before it fills memory
MAX_LINE_BYTES = 1 << 20

#: the most bytes a reader that holds an input whole (:func:`read_text`) takes; readers that
#: stream (perf interval files, ``watch``) keep what they parse only, and have no such bound
MAX_TEXT_BYTES = 256 << 20

#: the most bytes :func:`text_lines` reads at once
_BLOCK = 1 << 16

#: what every text input is expected to be, in errors
_TEXT = "UTF-8 text"

_UTF8_BOM = b"\xef\xbb\xbf"


def input_name(path: str | Path) -> str:
    """The name errors give an input: ``<stdin>`` for ``-``, else the path as given."""
    return "<stdin>" if str(path) == "-" else str(path)


def open_input(path: str | Path) -> BinaryIO:
    """``path`` opened once for reading bytes (``-``: stdin): a file, a FIFO, a ``/dev/fd/N``
    pipe or a character device (read within :func:`text_lines`' bounds); not a directory.

    Parameters
    ----------
    path : str or Path
        the input, or ``-`` for stdin.

    Returns
    -------
    BinaryIO
        the open input (the caller closes it; stdin is the process's own).

    Raises
    ------
    InputError
        naming ``path``: missing, a directory, a socket, or unreadable (permissions).
    """
    if str(path) == "-":
        return sys.stdin.buffer
    try:
        fh = open(path, "rb")  # noqa: SIM115 (the caller closes it)
    except FileNotFoundError:
        raise InputError(path, "file not found") from None
    except IsADirectoryError:
        raise InputError(path, "is a directory", expected="a file") from None
    except OSError as exc:
        raise InputError(path, f"cannot be read: {exc.strerror or exc}") from None
    mode = os.fstat(fh.fileno()).st_mode
    if stat.S_ISDIR(mode) or stat.S_ISSOCK(mode):
        fh.close()
        raise InputError(path, "is a directory" if stat.S_ISDIR(mode) else "is a socket",
                         expected="a file")
    return fh


def text_lines(path: str | Path, *, max_line_bytes: int = MAX_LINE_BYTES,
               max_bytes: int | None = None, name: str | Path | None = None,
               first: int = 1) -> Iterator[tuple[int, str]]:
    """The lines of a text input, read once and as they arrive, each checked where it is.

    Parameters
    ----------
    path : str or Path
        a file, FIFO, ``/dev/fd/N`` or device, or ``-`` for stdin (:func:`open_input`).
    max_line_bytes : int, default=MAX_LINE_BYTES
        the longest line accepted (its end of line not counted).
    max_bytes : int or None, default=None
        the most bytes read in all (None: no bound; a stream is read until it ends).
    name : str or Path or None, default=None
        the input's name in errors (None: :func:`input_name`).
    first : int, default=1
        the number of the input's first line (0 for a copy with a line of its own on top).

    Returns
    -------
    Iterator of (int, str)
        ``(line number, text)`` per line, 1-based, the end of line (``\\n`` or ``\\r\\n``)
        removed; a UTF-8 byte-order mark at the start is dropped.

    Raises
    ------
    InputError
        naming the input and the line: missing, a directory, unreadable; a line longer than
        ``max_line_bytes`` (its start quoted); a byte that is not UTF-8 or a NUL byte (its
        column and its offset in the input; UTF-16 named as such); more than ``max_bytes``.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     f = Path(tmp, "r.txt")
    ...     _ = f.write_bytes(b"0.5\\r\\n0.25\\n")
    ...     print(list(text_lines(f)))
    ...     _ = f.write_bytes(b"0.5\\r\\n0.25\\n0.75\\xe9\\n")
    ...     try:
    ...         list(text_lines(f))
    ...     except InputError as exc:
    ...         print(str(exc).replace(tmp, "TMP"))  # doctest: +ELLIPSIS
    [(1, '0.5'), (2, '0.25')]
    TMP/r.txt, line 3: not a text file: byte 0xe9 at column 5 (byte 15 of the input) is ...

    Notes
    -----
    The input is opened here and closed when the lines are exhausted or the iterator is
    closed; nothing else opens it, so a pipe's data is read once. It is read in blocks of what
    has arrived (at most :data:`_BLOCK` bytes: a live stream's lines come as they are written),
    cut after the last newline; each such run of whole lines is decoded at once, and a bad byte
    placed by counting the newlines before it, so its line is exact whatever the block (a text
    decoder reading ahead by blocks named the line it had reached instead).
    """
    name = input_name(path) if name is None else str(name)
    fh = open_input(path)
    block = max(1, min(_BLOCK, max_line_bytes))  # a line inside one block is within bounds
    start, lineno, rest = 0, first - 1, b""  # the offset of `rest` in the input; lines read
    try:
        while True:
            try:
                data = fh.read1(block)
            except OSError as exc:
                raise InputError(name, f"cannot be read: {exc.strerror or exc}",
                                 row=lineno + 1) from None
            buf = rest + data
            if not buf:
                return
            end = buf.rfind(b"\n") + 1 if data else len(buf)  # at the end: the last line too
            whole, rest = buf[:end], buf[end:]
            # only the first line of `whole` (it continues `rest`) and `rest` may be too long
            _require_short(whole[:whole.find(b"\n") + 1 or len(whole)], name, lineno + 1,
                           max_line_bytes)
            _require_short(rest, name, lineno + whole.count(b"\n") + 1, max_line_bytes)
            if not whole:
                continue
            skip = len(_UTF8_BOM) if start == 0 and whole.startswith(_UTF8_BOM) else 0
            text = _decode(whole, skip, name, lineno, start)
            if max_bytes is not None and start + end > max_bytes:
                raise InputError(name, f"more than {max_bytes} bytes", row=lineno + 1,
                                 expected=f"{_TEXT} of at most {max_bytes} bytes")
            if "\r" in text:
                text = text.replace("\r\n", "\n")
            lines = text.split("\n")
            if text.endswith("\n"):
                lines.pop()
            for line in lines:
                lineno += 1
                yield lineno, line
            start += end
    finally:
        if fh is not sys.stdin.buffer:
            fh.close()


def _require_short(line: bytes, name: str, lineno: int, most: int) -> None:
    """``line`` (its end of line not counted, nor a CR that may start one) is at most ``most``
    bytes long."""
    body = line.removesuffix(b"\n").removesuffix(b"\r")
    if len(body) > most:
        begin = body[:32].decode("utf-8", "replace")
        raise InputError(name, f"line longer than {most} bytes (it starts {begin!r})",
                         row=lineno, expected=f"{_TEXT}, lines of at most {most} bytes")


def _decode(whole: bytes, skip: int, name: str, lineno: int, start: int) -> str:
    """The text of whole lines (from byte ``skip`` on: past a byte-order mark), or the
    InputError placing the first byte that is not UTF-8 or is NUL on its line and column
    (``lineno``: the lines before; ``start``: the offset of ``whole`` in the input)."""
    nul = whole.find(b"\x00")
    try:
        text = whole[skip:].decode("utf-8") if skip else whole.decode("utf-8")
    except UnicodeDecodeError as exc:
        at, reason = exc.start + skip, exc.reason
    else:
        if nul < 0:
            return text
        at, reason = nul, ""
    at = nul if 0 <= nul < at else at
    row = lineno + whole.count(b"\n", 0, at) + 1
    column = at - whole.rfind(b"\n", 0, at)
    if start == 0 and row == lineno + 1 and whole[:2] in (b"\xff\xfe", b"\xfe\xff"):
        why = "UTF-16 (it starts with a UTF-16 byte-order mark)"
    elif at == nul:
        why = (f"a NUL byte at column {column} (byte {start + at + 1} of the input): binary "
               "data or UTF-16")
    else:
        why = (f"byte 0x{whole[at]:02x} at column {column} (byte {start + at + 1} of the input) "
               f"is not UTF-8 ({reason})")
    raise InputError(name, f"not a text file: {why}", row=row, expected=_TEXT)


def read_text(path: str | Path, *, max_bytes: int = MAX_TEXT_BYTES) -> str:
    """The whole text of an input (:func:`text_lines`' checks and bounds), lines joined by
    ``\\n``, ending with one when the input had lines.

    Parameters
    ----------
    path : str or Path
        a file, FIFO, ``/dev/fd/N`` or device, or ``-`` for stdin.
    max_bytes : int, default=MAX_TEXT_BYTES
        the most bytes read.

    Returns
    -------
    str
        the text.

    Raises
    ------
    InputError
        as :func:`text_lines`.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = Path(tmp, "t.csv").write_bytes(b"\\xef\\xbb\\xbfwork,duration_s\\r\\n1,2")
    ...     read_text(Path(tmp, "t.csv"))
    'work,duration_s\\n1,2\\n'
    """
    return "".join(f"{line}\n" for _, line in text_lines(path, max_bytes=max_bytes))


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: str | Path, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` on success only.

    Raises
    ------
    InputError
        naming ``path``: a directory, a place that cannot be written (permissions, a missing
        parent that cannot be made, a name too long, a full disk), never a traceback.

    Examples
    --------
    A writer that fails leaves nothing behind, neither ``path`` nor its temporary file:

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     try:
    ...         with atomic_path(Path(tmp, "result.csv")) as part:
    ...             _ = part.write_text("ipc\\n1.5\\n")
    ...             raise RuntimeError("the job fails half-way")
    ...     except RuntimeError:
    ...         pass
    ...     with atomic_path(Path(tmp, "done.csv")) as part:
    ...         _ = part.write_text("ipc\\n1.5\\n")
    ...     sorted(p.name for p in Path(tmp).iterdir())
    ['done.csv']
    """
    path = Path(path)
    try:
        if path.is_dir():
            raise InputError(path, "is a directory", expected="the path of a file to write")
        path.parent.mkdir(parents=True, exist_ok=True)
        # the temporary name stays short whatever the target's (255 bytes is the usual limit)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:64]}.",
                                   suffix=(suffix or path.suffix or ".tmp")[:16], dir=path.parent)
    except OSError as exc:
        raise _unwritable(path, exc) from None
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        try:
            yield tmp_path
        except OSError as exc:  # the writer's own error on the temporary file (a full disk)
            if _out_of_space(exc) and exc.filename in (None, tmp, str(tmp_path)):
                raise _unwritable(path, exc) from None
            raise
        try:
            with open(tmp_path, "rb+") as fh:
                os.fsync(fh.fileno())
            # mkstemp creates 0600; give the output the mode a plain open() would
            # (0666 & ~umask), so colleagues on a shared or cluster file system can read it
            os.chmod(tmp_path, 0o666 & ~_umask())
            os.replace(tmp_path, path)
        except OSError as exc:
            raise _unwritable(path, exc) from None
    finally:
        with contextlib.suppress(OSError):
            if tmp_path.exists():
                tmp_path.unlink()


#: the errors of a writer that ran out of room (or may not write at all)
_NO_ROOM = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS}


def _out_of_space(exc: OSError) -> bool:
    """``exc`` says the disk is full, the quota spent, the file too large or the file system
    read-only (pyarrow says it in its message only)."""
    return exc.errno in _NO_ROOM or any(
        os.strerror(e) in str(exc) for e in _NO_ROOM)


def _unwritable(path: Path, exc: OSError) -> InputError:
    """The InputError of an output that cannot be written, naming it and why."""
    return InputError(path, f"cannot be written: {exc.strerror or exc}",
                      expected="a writable file path (its folder writable, its name at most "
                               "255 bytes, space on the disk)")


def write_parquet(
    df: pd.DataFrame, path: str | Path, metadata: dict[str, Any] | None = None
) -> None:
    """Write ``df`` atomically as Parquet; ``metadata`` goes into the schema as JSON.

    The metadata (under the schema key ``perfcast``, keys sorted) travels with the table, so a
    result says how it was made; :func:`parquet_metadata` reads it back.

    Parameters
    ----------
    df : pandas.DataFrame
        the table (its index is not written).
    path : str or Path
        the file to write (its folder is made when missing).
    metadata : dict or None, default=None
        JSON-serialisable facts about the table (values JSON cannot hold are written as text).

    Raises
    ------
    InputError
        naming ``path`` when it cannot be written (see :func:`atomic_path`).

    Examples
    --------
    >>> import tempfile, pandas as pd
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp, "t.parquet")
    ...     write_parquet(pd.DataFrame({"ipc": [1.5, 2.0]}), path, {"seed": 1})
    ...     read_parquet(path)["ipc"].tolist(), parquet_metadata(path)
    ([1.5, 2.0], {'seed': 1})
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(df, preserve_index=False)
    if metadata:
        meta = dict(table.schema.metadata or {})
        meta[b"perfcast"] = json.dumps(metadata, sort_keys=True, default=str).encode()
        table = table.replace_schema_metadata(meta)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


def read_parquet(path: str | Path, columns: list[str] | None = None) -> pd.DataFrame:
    """Read a Parquet file; a missing or corrupt file raises InputError naming it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    if path.is_dir():  # pyarrow would read it as a data set of whatever files it holds
        raise InputError(path, "is a directory", expected="a Parquet file")
    try:
        names = pq.read_schema(path).names
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:  # (pyarrow reads them, or not, depending on its version)
            raise InputError(path, f"duplicate column(s) {twice}", expected="each column once")
        return pq.read_table(path, columns=columns).to_pandas()
    except FileNotFoundError as exc:
        raise InputError(path, "file not found") from exc
    except (pa.ArrowInvalid, OSError) as exc:
        why = " ".join(str(exc).split())  # one line: pyarrow's messages span several
        raise InputError(path, f"not a readable Parquet file: {why[:300]}") from exc


def parquet_metadata(path: str | Path) -> dict[str, Any]:
    """The ``perfcast`` metadata written by :func:`write_parquet` (empty if none)."""
    import pyarrow.parquet as pq

    meta = pq.read_schema(path).metadata or {}
    raw = meta.get(b"perfcast")
    return json.loads(raw) if raw else {}


def require_columns(df: pd.DataFrame, columns: list[str], path: str | Path) -> None:
    """Every one of ``columns`` is a column of ``df``.

    Parameters
    ----------
    df : pandas.DataFrame
        the table read.
    columns : list of str
        the columns it must have.
    path : str or Path
        the file it was read from, named in the error.

    Raises
    ------
    InputError
        naming the file and the missing columns.

    Examples
    --------
    >>> import pandas as pd
    >>> require_columns(pd.DataFrame({"a": [1]}), ["a", "b"], "t.parquet")
    Traceback (most recent call last):
    perfcast.errors.InputError: t.parquet: missing column(s) ['b'] (expected columns ['a', 'b'])
    """
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(path, f"missing column(s) {missing}", expected=f"columns {columns}")


def require_numeric(df: pd.DataFrame, columns: list[str], path: str | Path) -> None:
    """Each of ``columns`` holds numbers (a Parquet column of strings or objects is refused).

    Booleans are refused too: a flag read where a measurement was expected is a wrong file.

    Parameters
    ----------
    df : pandas.DataFrame
        the table read (it has ``columns``: :func:`require_columns`).
    columns : list of str
        the columns that must be numeric.
    path : str or Path
        the file it was read from, named in the error.

    Raises
    ------
    InputError
        naming the file, the column, its type and its first value that is not a number.
    """
    import pandas as pd

    for c in columns:
        col = df[c]
        if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
            continue
        bad = pd.to_numeric(col, errors="coerce").isna() & col.notna()
        first = col[bad].iloc[0] if bad.any() else (col.iloc[0] if len(col) else None)
        raise InputError(path, f"column {c!r} is of type {col.dtype} (its first value "
                         f"{str(first)[:40]!r})", expected=f"numbers in {c}")


def write_json(obj: Any, path: str | Path) -> None:
    """Write JSON atomically, keys sorted, so equal results give equal bytes.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     write_json({"b": 1, "a": [0.5]}, Path(tmp, "r.json"))
    ...     print(Path(tmp, "r.json").read_text(), end="")
    {
      "a": [
        0.5
      ],
      "b": 1
    }
    """
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=_json_default) + "\n")


def write_text(text: str, path: str | Path) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def write_csv(df: pd.DataFrame, path: str | Path) -> None:
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False, float_format="%.10g")


def _json_default(obj: Any) -> Any:
    import numpy as np

    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")
