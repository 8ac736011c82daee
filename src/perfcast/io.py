"""Atomic output: a rule's file appears whole or not at all.

Every writer goes to a temporary file in the target's directory and is renamed into place
(``os.replace`` is atomic on POSIX), so an interrupted job never leaves a partial output that a
later run could take as done.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfcast.errors import InputError

if TYPE_CHECKING:
    import pandas as pd


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
