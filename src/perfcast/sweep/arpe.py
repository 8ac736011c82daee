"""Import a campaign run by the original ARPE scripts (``martinamaggio/arpe``), to model old data.

ARPE's generated ``execute.bash`` leaves ``results/<values joined by '-'>/<iteration>/``; in each,
``after.bash`` writes ``APRE_timed.txt``: one line ``REAL USER SYS v1 v2 ...`` (the three
``time -p`` numbers, then the parameter values space-separated), and ``pidstat`` output in
``APRE_cpu.txt``. A run whose after-phase never ran may hold only ``timed`` (``time -p`` output
through ``awk '{print $2 $4 $6}'``: three lines of numbers). Parameter *names* are not stored, so
the config gives them, in ARPE's order. ARPE records no exit status: a run with timings is ``ok``.
A value that is not a number (x264's campaign sweeps the input file) is a categorical level,
kept as text; the models are then fitted per level (:mod:`perfcast.sweep.analysis`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from perfcast.checks import read_text, require_values
from perfcast.errors import InputError
from perfcast.sweep.space import point_id
from perfcast.sweep.table import runs_frame

TIMED = "APRE_timed.txt"
RAW_TIMED = "timed"
PIDSTAT = "APRE_cpu.txt"


def _number(token: str, path: Path, what: str) -> float:
    try:
        v = float(token.replace(",", ".") if token.count(",") == 1 and "." not in token
                  else token)
    except ValueError as exc:
        raise InputError(path, f"{what} {token!r} is not a number", row=1) from exc
    return v


def _value(token: str, path: Path) -> int | float | str:
    """A parameter value: an integer, a float, or (not a number) a categorical level such as
    x264's input file name, kept as text."""
    try:
        v = _number(token, path, "parameter value")
    except InputError:
        return token
    return int(v) if re.fullmatch(r"[+-]?\d+", token) else v


def _same(a: int | float | str, b: int | float | str) -> bool:
    """Whether a value of ``APRE_timed.txt`` and one of the directory name are the same: numbers
    compared as numbers (``2.50``, ``2.5`` and ``2,5`` are one value; ARPE writes the value as
    given in its config, once in the file and once in the directory name, not necessarily alike),
    levels as text.

    >>> _same(2.5, 2.5), _same(10, 10.0), _same("a.y4m", "a.y4m"), _same(2.5, "2.5x")
    (True, True, True, False)
    """
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return a == b or (math.isnan(a) and math.isnan(b))


def parse_time_p(text: str, path: Path) -> tuple[float, float, float]:
    """real, user, sys from ``time -p`` output (``real 1.00`` lines, or bare numbers)."""
    found: dict[str, float] = {}
    numbers = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in ("real", "user", "sys"):
            found[parts[0]] = _number(parts[1], path, parts[0])
        elif len(parts) == 1:
            numbers.append(_number(parts[0], path, "time"))
    if len(found) == 3:
        return found["real"], found["user"], found["sys"]
    if len(numbers) == 3:
        return numbers[0], numbers[1], numbers[2]
    raise InputError(path, "not `time -p` output", expected="real/user/sys lines")


def parse_pidstat(text: str) -> float | None:
    """Cores busy (%CPU / 100) from pidstat's ``Average:`` line(s), summed over processes."""
    header = None
    total, found = 0.0, False
    for line in text.splitlines():
        tokens = line.split()
        if "%CPU" in tokens and not line.startswith("Average"):
            header = tokens
        elif header and tokens and tokens[0] == "Average:" and "%CPU" not in tokens:
            k = len(header) - header.index("%CPU")
            try:
                total += float(tokens[-k])
                found = True
            except (ValueError, IndexError):
                continue
    return total / 100 if found else None


def read_iteration(run_dir: Path, parameters: Sequence[str]) -> dict[str, Any]:
    """One ARPE run directory -> a run record (the shape :mod:`perfcast.sweep.runner` writes)."""
    config_dir = run_dir.parent
    timed = run_dir / TIMED
    record: dict[str, Any] = {"iteration": int(run_dir.name), "status": "ok",
                              "returncode": None, "signal": None, "timed_out": False}
    values: list[int | float] | None = None
    if timed.exists():
        tokens = read_text(timed).split()
        if len(tokens) < 3:
            raise InputError(timed, f"{len(tokens)} fields", row=1,
                             expected="REAL USER SYS and the parameter values")
        real, user, sys_ = (_number(t, timed, w) for t, w in
                            zip(tokens[:3], ("real", "user", "sys"), strict=True))
        if len(tokens) > 3:
            if len(tokens) - 3 != len(parameters):
                raise InputError(timed, f"{len(tokens) - 3} parameter values {tokens[3:]}",
                                 row=1, expected=f"{len(parameters)} for {list(parameters)}")
            values = [_value(t, timed) for t in tokens[3:]]
    elif (run_dir / RAW_TIMED).exists():
        timed = run_dir / RAW_TIMED
        real, user, sys_ = parse_time_p(read_text(timed), timed)
    else:
        real = user = sys_ = math.nan
        record["status"] = "missing"
    if record["status"] == "ok":  # time -p gives finite seconds >= 0
        require_values([real, user, sys_], timed, "time (s)", low=0, low_inclusive=True,
                       labels=["real", "user", "sys"], label="field")
    from_name = config_dir.name.split("-")
    if values is None:
        if len(from_name) != len(parameters):
            raise InputError(config_dir, f"directory name gives {len(from_name)} values",
                             expected=f"{len(parameters)} values joined by '-' for "
                                      f"{list(parameters)}")
        values = [_value(t, config_dir) for t in from_name]
    elif len(from_name) == len(parameters) and not all(
            _same(v, _value(t, config_dir)) for v, t in zip(values, from_name, strict=True)):
        raise InputError(timed, f"values {values} disagree with directory {config_dir.name!r}",
                         row=1, expected="the values the directory name gives, as numbers")
    point = dict(zip(parameters, values, strict=True))
    record.update(parameters=point, point=point_id(point), wall_s=real, user_s=user,
                  sys_s=sys_, cpu_s=user + sys_,
                  cpu_util=(user + sys_) / real if real > 0 else math.nan,
                  max_rss_kb=math.nan, source=str(run_dir))
    if (run_dir / PIDSTAT).exists():
        record["custom"] = {"pidstat_cpu_util": parse_pidstat(read_text(run_dir / PIDSTAT))}
    return record


def arpe_files(path: str | Path) -> list[Path]:
    """Every file of an ARPE results tree (``<values>/<iteration>/*``), sorted."""
    root = Path(path)
    return sorted(p for p in root.glob("*/*/*") if p.is_file() and p.parent.name.isdigit())


def import_arpe(path: str | Path, parameters: Sequence[str], campaign: str) -> pd.DataFrame:
    """The run table of an ARPE ``results`` directory (see the module docstring).

    Parameters
    ----------
    path : str or Path
        The directory ARPE's ``execute.bash`` wrote (https://github.com/martinamaggio/arpe).
    parameters : sequence of str
        The parameter names, in ARPE's order (ARPE stores only values).
    campaign : str
        The campaign name written in the table.

    Returns
    -------
    DataFrame
        as :func:`perfcast.sweep.table.runs_frame` builds it from perfcast's own runs.

    Raises
    ------
    InputError
        not a directory, no runs in it, or a run whose values or timings cannot be read
        (file and line named).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as d:
    ...     for threads, real in ((1, 2.0), (2, 1.1)):
    ...         run = Path(d, f"{threads}", "1")
    ...         run.mkdir(parents=True)
    ...         _ = (run / "APRE_timed.txt").write_text(f"{real} 2.0 0.1 {threads}\\n")
    ...     df = import_arpe(d, ["threads"], "old")
    >>> df[["threads", "wall_s", "status"]].values.tolist()
    [[1, 2.0, 'ok'], [2, 1.1, 'ok']]
    """
    root = Path(path)
    if not root.is_dir():
        raise InputError(root, "not a directory", expected="ARPE's results/ directory")
    run_dirs = sorted(d for d in root.glob("*/*") if d.is_dir() and d.name.isdigit())
    if not run_dirs:
        raise InputError(root, "no ARPE runs found",
                         expected="<values>/<iteration>/APRE_timed.txt under it")
    records = []
    for d in run_dirs:
        rec = read_iteration(d, parameters)
        rec["campaign"] = campaign
        rec["source"] = str(d.relative_to(root))
        records.append(rec)
    return runs_frame(records, list(parameters))
