"""The paper's resource-sensitivity measurements: download, verify, convert to one table.

The replay evaluation scores the sampling and interpolation method on the measurements that
Wang et al. published with

    Wang L., Qian D., Luan Z., Wei G., Wang R., Yang H.
    "Speeding up profiling program's runtime characteristics for workload consolidation."
    PLoS ONE 12(4): e0175861, 2017. https://doi.org/10.1371/journal.pone.0175861

Their Data Availability Statement points to the authors' repository
https://github.com/yishaou/ARCPTool, file ``raw data.zip`` (used here at commit
1d0118a3efabf9bf9df01b67f5d8b946c83f70be; its address and checksum are the defaults of
``sensitivity.replay.source``): eight Excel workbooks, one grid or list of measurements each.
The repository states no licence, so perfcast does not redistribute the data: :func:`fetch`
downloads the zip (or copies a local copy of it) and checks its sha256, and :func:`convert`
turns the workbooks into one tidy table, one measured cell a row::

    program, cpu_cores, mem_gb, net_code, io_mbps, metric, value

An empty cell means the dimension was not varied for that program. Rows follow the workbooks
(in :data:`WORKBOOKS` order) and, inside one, the sheet's rows top to bottom and cells left to
right.
"""

from __future__ import annotations

import csv
import hashlib
import http.client
import io
import logging
import re
import shutil
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import pandas as pd

from perfcast.errors import InputError
from perfcast.io import atomic_path

log = logging.getLogger(__name__)

COLUMNS = ("program", "cpu_cores", "mem_gb", "net_code", "io_mbps", "metric", "value")
#: Config keys that replace the download (a local copy of the zip; an already converted table).
OFFLINE_KEYS = ("sensitivity.replay.source.zip", "sensitivity.replay.source.table")

Number = int | float
Row = tuple[str, Number | None, Number | None, Number | None, Number | None, str, float]
Cells = dict[tuple[int, int], Any]


class DownloadError(OSError):
    """The measurements could not be downloaded (no network, server error, timeout)."""


# ---------------------------------------------------------------------------------- fetch


def sha256_of(path: str | Path) -> str:
    """Hex sha256 of a file."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetch(
    url: str,
    sha256: str,
    dest: str | Path,
    *,
    local_zip: str | Path | None = None,
    timeout_s: float = 60.0,
) -> Path:
    """Put the zip at ``dest``: copied from ``local_zip`` if given, else downloaded from ``url``.

    The file is checked against ``sha256`` before it is moved into place, so ``dest`` exists
    only when it holds exactly the expected bytes.

    Parameters
    ----------
    url : str
        Where the zip is downloaded from (``sensitivity.replay.source.url``).
    sha256 : str
        The checksum it must have (``sensitivity.replay.source.sha256``).
    dest : str or Path
        Where it is put.
    local_zip : str or Path or None, default=None
        A local copy used instead of downloading (``sensitivity.replay.source.zip``).
    timeout_s : float, default=60.0
        The download's network time-out, seconds.

    Returns
    -------
    pathlib.Path
        ``dest``.

    Raises
    ------
    InputError
        a checksum mismatch, or an unreadable local copy.
    DownloadError
        a network failure, saying how to work offline.
    """
    dest = Path(dest)
    expected = sha256.strip().lower()
    source = str(local_zip) if local_zip else url
    with atomic_path(dest) as tmp:
        if local_zip:
            log.info("copying %s", local_zip)
            try:
                shutil.copyfile(local_zip, tmp)
            except OSError as exc:
                raise InputError(local_zip, f"cannot read the local copy of the zip: {exc}",
                                 expected=f"a copy of {url} (sha256 {expected})") from exc
        else:
            log.info("downloading %s", url)
            _download(url, tmp, expected, timeout_s)
        actual = sha256_of(tmp)
        if actual != expected:
            raise InputError(source, f"checksum mismatch: the file has sha256 {actual}",
                             expected=f"sha256 {expected}")
    log.info("%s: sha256 %s verified (%d bytes)", dest, actual, dest.stat().st_size)
    return dest


def _download(url: str, out: Path, sha256: str, timeout_s: float) -> None:
    """Stream ``url`` into ``out``; any network failure becomes a DownloadError."""
    request = urllib.request.Request(url, headers={"User-Agent": "perfcast"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as resp, open(out, "wb") as fh:
            shutil.copyfileobj(resp, fh, 1 << 20)
    except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
        if isinstance(exc, urllib.error.HTTPError):
            reason: object = f"HTTP {exc.code} {exc.reason}"
        else:
            reason = getattr(exc, "reason", None) or exc
        raise DownloadError(
            f"could not download {url}: {reason}. The file expected there has sha256 {sha256}. "
            f"Without network, fetch it elsewhere and set {OFFLINE_KEYS[0]} to its path, or set "
            f"{OFFLINE_KEYS[1]} to an already converted measurement table"
        ) from exc


# -------------------------------------------------------------------------------- convert


@dataclass(frozen=True)
class Workbook:
    """One workbook of the zip: its file name and how its first sheet is laid out."""

    name: str
    layout: Callable[[Cells, Workbook, str], Iterator[Row]]
    metric: str
    header: str = ""  # _by_program: the header row's label and the column it fills
    column: str = ""

    @property
    def program(self) -> str:
        return self.name.removesuffix(".xlsx")


def _grid(cells: Cells, wb: Workbook, where: str) -> Iterator[Row]:
    """Memory (rows, first label ``mem<N>``) x CPU cores (columns, first label ``cpu<N>``)."""
    r0, c0 = _anchor(cells, "cpu", where)
    cpus = _levels(cells, [(r0, c) for c in _run(cells, r0, c0, step=(0, 1))], "cpu", where,
                   by_row=False)
    rows = list(_run(cells, r0 + 1, c0 - 1, step=(1, 0)))
    if not rows:
        raise _cell_error(where, r0 + 1, c0 - 1, "no memory label below-left of the CPU labels",
                          "'mem<N>' then the memory levels in GB")
    mems = _levels(cells, [(r, c0 - 1) for r in rows], "mem", where, by_row=True)
    _only_inside(cells, {(r0, c) for c in cpus} | {(r, c0 - 1) for r in mems},
                 (min(mems), max(mems), min(cpus), max(cpus)), where)
    for r, mem in mems.items():
        for c, cpu in cpus.items():
            if (r, c) in cells:
                yield _row(wb.program, wb.metric, _value(cells, r, c, where),
                           cpu_cores=cpu, mem_gb=mem)


def _by_program(cells: Cells, wb: Workbook, where: str) -> Iterator[Row]:
    """One program a row (names in column A) x one level a column (labels in the header row)."""
    r0, c0 = _anchor(cells, wb.header, where)
    first = c0 if _label(cells[(r0, c0)], wb.header) is not None else c0 + 1
    levels = _levels(cells, [(r0, c) for c in _run(cells, r0, first, step=(0, 1))], wb.header,
                     where, by_row=False)
    names: dict[int, str] = {}
    for r in _run(cells, r0 + 1, 1, step=(1, 0)):
        if not isinstance(cells[(r, 1)], str):
            raise _cell_error(where, r, 1, f"holds {cells[(r, 1)]!r}", "a program name")
        names[r] = cells[(r, 1)].strip()
    if not names:
        raise _cell_error(where, r0 + 1, 1, "no program name", "program names in column A")
    _only_inside(cells, {(r0, c0)} | {(r0, c) for c in levels} | {(r, 1) for r in names},
                 (min(names), max(names), min(levels), max(levels)), where)
    for r, name in names.items():
        for c, level in levels.items():
            if (r, c) in cells:
                yield _row(name, wb.metric, _value(cells, r, c, where), **{wb.column: level})


_CODE = re.compile(r"(\d)(\d(?:\.\d)?)(\d)")


def _coded_pairs(cells: Cells, wb: Workbook, where: str) -> Iterator[Row]:
    """Blocks of (label, value) column pairs; a label is cpu, mem, net run together (232 = 2
    cores, 3 GB, net code 2; 23.52 = 2 cores, 3.5 GB, net code 2). The pairs start in columns
    A, D, G, ...; a row's labels share cpu and net, a column's labels share mem."""
    r0, c0 = _anchor(cells, "cpu-mem-net", where)
    by_row: dict[int, tuple[int, int, str]] = {}  # row -> cpu, net, the label that set them
    by_col: dict[int, tuple[float, str]] = {}  # column -> mem, the label that set it
    values: list[tuple[int, int]] = []
    for (r, c), v in sorted(cells.items()):
        if (r, c) == (r0, c0):
            continue
        if (c - 1) % 3 == 1:
            values.append((r, c))
            continue
        if (c - 1) % 3 != 0:
            raise _cell_error(where, r, c, f"holds {v!r} between two label/value pairs",
                              "an empty column after every pair")
        m = _CODE.fullmatch(_text(v))
        if not m:
            raise _cell_error(where, r, c, f"holds {v!r}",
                              "a cpu-mem-net label such as 232 or 23.52")
        cpu, mem, net = int(m[1]), float(m[2]), int(m[3])
        label = f"{v!r} in {_col(c)}{r}"
        row_cpu, row_net, first = by_row.setdefault(r, (cpu, net, label))
        if (row_cpu, row_net) != (cpu, net):
            raise _cell_error(where, r, c, f"label {v!r} (cpu {cpu}, net {net}) disagrees with "
                              f"label {first} (cpu {row_cpu}, net {row_net})",
                              "the same cpu and net code along a row")
        col_mem, first = by_col.setdefault(c, (mem, label))
        if col_mem != mem:
            raise _cell_error(where, r, c, f"label {v!r} (memory {mem}) disagrees with label "
                              f"{first} (memory {col_mem})", "the same memory along a column")
    for r, c in values:
        if r not in by_row or c - 1 not in by_col:
            raise _cell_error(where, r, c, "a value without a label in its row or column",
                              "a cpu-mem-net label in the same row and in the column to its left")
        cpu, net, _ = by_row[r]
        yield _row(wb.program, wb.metric, _value(cells, r, c, where),
                   cpu_cores=cpu, mem_gb=by_col[c - 1][0], net_code=net)


#: The workbooks of ``raw data.zip`` in output order, each with its layout and metric (the
#: workbooks carry no units; see the paper for what each program reports).
WORKBOOKS: tuple[Workbook, ...] = (
    Workbook("Data Serving.xlsx", _grid, "throughput"),
    Workbook("mg.c.4.xlsx", _grid, "runtime_s"),
    Workbook("mg.c.8.xlsx", _grid, "runtime_s"),
    Workbook("ft.c.4.xlsx", _grid, "runtime_s"),
    Workbook("ft.c.8.xlsx", _grid, "runtime_s"),
    Workbook("fileio.xlsx", _by_program, "achieved_mbps", header="bandwidth", column="io_mbps"),
    Workbook("parsec.xlsx", _by_program, "runtime_s", header="cpu", column="cpu_cores"),
    Workbook("Data Caching.xlsx", _coded_pairs, "latency"),
)


def read_zip(zip_path: str | Path) -> list[Row]:
    """Every measured cell of the eight workbooks in ``zip_path``, in output order.

    Raises
    ------
    InputError
        not a readable zip, a workbook missing, or a sheet not laid out as expected (naming
        the workbook, sheet and cell).
    """
    names = [wb.name for wb in WORKBOOKS]
    try:
        with zipfile.ZipFile(zip_path) as zf:
            members = {PurePosixPath(n).name: n for n in zf.namelist()
                       if not n.startswith("__MACOSX/") and not n.endswith("/")}
            rows: list[Row] = []
            for wb in WORKBOOKS:
                if wb.name not in members:
                    raise InputError(zip_path, f"no workbook {wb.name!r} in the archive",
                                     expected=f"the workbooks {names}")
                rows += _read_workbook(zf.read(members[wb.name]), wb,
                                       f"{zip_path} ({members[wb.name]})")
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError) as exc:
        raise InputError(zip_path, f"not a readable zip archive: {exc}",
                         expected="the paper's raw data.zip") from exc
    except FileNotFoundError as exc:
        raise InputError(zip_path, "file not found") from exc
    return rows


def table(rows: list[Row]) -> pd.DataFrame:
    """The rows as a data frame, axes and values as floats (empty = NaN)."""
    df = pd.DataFrame(rows, columns=list(COLUMNS))
    for col in COLUMNS[1:5] + ("value",):
        df[col] = pd.to_numeric(df[col], errors="raise").astype(float)
    return df


def convert(zip_path: str | Path, out_csv: str | Path) -> pd.DataFrame:
    """Convert the workbooks of ``zip_path`` into the tidy table ``out_csv`` (written atomically).

    Numbers are written as read: integers as integers, other numbers in their shortest exact
    form, measured values always with a decimal point.

    Returns
    -------
    pandas.DataFrame
        the table (:data:`COLUMNS`; axes and values as floats).

    Raises
    ------
    InputError
        as :func:`read_zip`, or a cell measured twice.
    """
    rows = read_zip(zip_path)
    df = table(rows)
    dup = df.duplicated(list(COLUMNS[:6]))
    if dup.any():
        first = df[dup].iloc[0]
        raise InputError(zip_path, f"cell measured twice: {dict(first[list(COLUMNS[:5])])}",
                         expected="one value per program and resource levels")
    with atomic_path(out_csv) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(COLUMNS)
        for row in rows:
            writer.writerow(["" if v is None else repr(v) if isinstance(v, float) else v
                             for v in row])
    log.info("%s: %d measurements of %d programs", out_csv, len(df), df["program"].nunique())
    return df


# ----------------------------------------------------------------------------- sheet cells


def _read_workbook(data: bytes, wb: Workbook, where: str) -> list[Row]:
    """The rows of one workbook (its first sheet), or InputError naming what is wrong."""
    import openpyxl

    try:
        book = openpyxl.load_workbook(io.BytesIO(data), data_only=True)
    except Exception as exc:  # openpyxl raises many kinds for a damaged file
        raise InputError(where, f"not a readable Excel workbook: {type(exc).__name__}: {exc}",
                         expected="an .xlsx workbook") from exc
    sheet = book.worksheets[0]
    cells: Cells = {}
    for line in sheet.iter_rows():
        for cell in line:
            v = cell.value
            if v is not None and not (isinstance(v, str) and not v.strip()):
                cells[(cell.row, cell.column)] = v
    rows = list(wb.layout(cells, wb, f"{where}, sheet {sheet.title!r}"))
    if not rows:
        raise InputError(where, f"sheet {sheet.title!r} holds no measurement",
                         expected="at least one measured cell")
    return rows


def _anchor(cells: Cells, prefix: str, where: str) -> tuple[int, int]:
    """The one cell whose text is ``prefix`` (optionally followed by a number)."""
    hits = [rc for rc, v in cells.items()
            if isinstance(v, str) and (v.strip() == prefix or _label(v, prefix) is not None)]
    if len(hits) != 1:
        raise InputError(where, f"{len(hits)} cells labelled {prefix!r}",
                         expected=f"exactly one cell {prefix!r} or {prefix + '<N>'!r}")
    return hits[0]


def _label(v: Any, prefix: str) -> Number | None:
    """The number of a header cell: ``v`` itself, or the number in ``'<prefix><N>'``."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return v
    m = re.fullmatch(rf"{re.escape(prefix)}\s*(\d+(?:\.\d+)?)", str(v).strip())
    if not m:
        return None
    return float(m[1]) if "." in m[1] else int(m[1])


def _levels(cells: Cells, coords: list[tuple[int, int]], prefix: str, where: str, *,
            by_row: bool) -> dict[int, Number]:
    """Row (``by_row``) or column index -> level of a run of header cells, strictly increasing."""
    out: dict[int, Number] = {}
    last: Number | None = None
    for r, c in coords:
        level = _label(cells[(r, c)], prefix)
        if level is None or (last is not None and level <= last):
            raise _cell_error(where, r, c, f"holds {cells[(r, c)]!r}",
                              f"a level ({prefix!r}<N> or a number) above the previous one")
        out[r if by_row else c] = last = level
    return out


def _run(cells: Cells, r: int, c: int, *, step: tuple[int, int]) -> Iterator[int]:
    """Row (step (1, 0)) or column (step (0, 1)) indices of consecutive filled cells."""
    while (r, c) in cells:
        yield r if step[0] else c
        r, c = r + step[0], c + step[1]


def _only_inside(cells: Cells, headers: set[tuple[int, int]],
                 box: tuple[int, int, int, int], where: str) -> None:
    """Fail on a filled cell that is neither a header nor inside the measured box."""
    r1, r2, c1, c2 = box
    for (r, c), v in sorted(cells.items()):
        if (r, c) not in headers and not (r1 <= r <= r2 and c1 <= c <= c2):
            raise _cell_error(where, r, c, f"holds {v!r} outside the labelled table",
                              f"filled cells only in rows {r1}-{r2}, columns "
                              f"{_col(c1)}-{_col(c2)} and their labels")


def _row(program: str, metric: str, value: float, **dims: Number) -> Row:
    """One output row; the dimensions not given are empty."""
    return (program, dims.get("cpu_cores"), dims.get("mem_gb"), dims.get("net_code"),
            dims.get("io_mbps"), metric, value)


def _value(cells: Cells, r: int, c: int, where: str) -> float:
    v = cells[(r, c)]
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise _cell_error(where, r, c, f"holds {v!r}", "a measured number or an empty cell")
    return float(v)


def _text(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return repr(v) if isinstance(v, float) else str(v).strip()


def _col(c: int) -> str:
    from openpyxl.utils import get_column_letter

    return get_column_letter(c)


def _cell_error(where: str, r: int, c: int, message: str, expected: str) -> InputError:
    return InputError(where, f"cell {_col(c)}{r} (row {r}): {message}", expected=expected)
