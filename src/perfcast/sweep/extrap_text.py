"""Read Extra-P's text input format into a table of runs, to model measurements users already have.

Extra-P (https://github.com/extra-p/extrap, ``extrap/fileio/file_reader/text_file_reader.py``
and its documentation of the text input) reads a line-oriented file:

* ``PARAMETER p`` (repeatable) or ``PARAMETER p s``: the parameter names, in coordinate order;
* ``POINTS ( 2 10 ) ( 4 10 )`` (repeatable, any number of points per line; with one parameter
  also bare numbers ``POINTS 2 4 8``): the configurations, in order;
* ``REGION name`` and ``METRIC name``: the call path and the metric of the ``DATA`` lines that
  follow (each resets the point counter);
* ``DATA v1 v2 ...``: the repetitions measured at the next point; every series (the DATA
  lines after a REGION or METRIC line) has one DATA line, with one value or more, for each
  point, as Extra-P requires: a series that ends early or an empty DATA line is refused rather
  than its points left out;
* blank lines and lines starting with ``#`` are ignored.

The result has one row per measured value: the parameters, ``region``, ``metric``,
``repetition`` (0-based), ``value`` and ``point`` (a configuration label for the CV folds).
A parameter may therefore not take one of those five names (:data:`COLUMNS`): its column would
be overwritten by the reader's own, and the model fitted on the wrong numbers.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from perfcast.checks import input_file, read_text
from perfcast.errors import InputError

FIELDS = ("PARAMETER", "POINTS", "REGION", "METRIC", "DATA")
#: the columns the readers add beside the parameters; no parameter may take one of these names
COLUMNS = ("region", "metric", "repetition", "value", "point")


def check_parameter_names(names: list[str], path: Path, *, row: int | None = None,
                          key: str | None = None) -> None:
    """Refuse a parameter named like one of the columns the readers add (:data:`COLUMNS`).

    Such a parameter's values would be overwritten in the table by the reader's own column (a
    parameter ``repetition`` by the repetition index), so the fit would silently run on other
    numbers than the file's.

    Parameters
    ----------
    names : list of str
        The parameter names, in file order.
    path : Path
        The file, for messages.
    row : int, optional, default=None
        The text format's PARAMETER line.
    key : str, optional, default=None
        The JSON key of the names.

    Raises
    ------
    InputError
        a name in :data:`COLUMNS` (the file, the line or key, and the reserved names named).

    Examples
    --------
    >>> check_parameter_names(["p", "value"], Path("in.txt"), row=1)
    Traceback (most recent call last):
    ...
    perfcast.errors.InputError: in.txt, line 1: parameter name 'value' is reserved for a \
column the reader adds (expected a name other than region, metric, repetition, value, point)
    """
    clash = [n for n in names if n in COLUMNS]
    if clash:
        at = f"{key}: " if key else ""
        raise InputError(path, f"{at}parameter name {clash[0]!r} is reserved for a column the "
                               "reader adds", row=row,
                         expected=f"a name other than {', '.join(COLUMNS)}")


def _numbers(tokens: list[str], path: Path, line: int, what: str) -> list[float]:
    try:
        values = [float(t) for t in tokens]
    except ValueError as exc:
        raise InputError(path, f"{what} {' '.join(tokens)!r} holds a non-number", row=line,
                         expected="numbers separated by spaces") from exc
    bad = [v for v in values if not np.isfinite(v)]
    if bad:
        raise InputError(path, f"{what} holds {bad[0]!r}", row=line, expected="finite numbers")
    return values


def _points(text: str, n_params: int, path: Path, line: int) -> list[tuple[float, ...]]:
    if "(" in text or ")" in text:
        groups = re.findall(r"\(([^()]*)\)", text)
        if re.sub(r"\([^()]*\)", "", text).strip() or not groups:
            raise InputError(path, f"POINTS {text!r}", row=line,
                             expected="coordinates in parentheses, e.g. ( 2 10 ) ( 4 10 )")
        pts = [tuple(_numbers(g.split(), path, line, "POINTS")) for g in groups]
    elif n_params == 1:
        pts = [(v,) for v in _numbers(text.split(), path, line, "POINTS")]
    else:
        raise InputError(path, f"POINTS {text!r} without parentheses", row=line,
                         expected=f"( v1 ... v{n_params} ) per point for {n_params} parameters")
    for pt in pts:
        if len(pt) != n_params:
            raise InputError(path, f"point {pt} has {len(pt)} coordinate(s)", row=line,
                             expected=f"{n_params}, one per PARAMETER")
    return pts


def describe_point(params: list[str], point: tuple[float, ...]) -> str:
    """A point for messages, its coordinates named.

    >>> describe_point(["p", "s"], (2.0, 10.0))
    '(p=2, s=10)'
    """
    return "(" + ", ".join(f"{p}={v:g}" for p, v in zip(params, point, strict=True)) + ")"


def _check_complete(k: int, points: list[tuple[float, ...]], params: list[str], region: str,
                    metric: str, path: Path, line: int) -> None:
    """Refuse a series (the DATA lines after a REGION or METRIC) that ends before the last
    point: the points without a DATA line would otherwise be left out of the table unnoticed.
    Extra-P refuses such a file too (its check that every call path and metric has one
    measurement per coordinate). ``k`` = 0 is a REGION or METRIC line with no DATA of its
    own (followed by the other one), not a series."""
    if 0 < k < len(points):
        missing = [describe_point(params, pt) for pt in points[k:]]
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        raise InputError(path, f"region {region!r} metric {metric!r} ends after {k} DATA "
                               f"line(s) for {len(points)} POINTS: no data for point(s) "
                               f"{', '.join(missing[:3])}{more}", row=line,
                         expected="one DATA line per point, in POINTS order")


def read_extrap_text(path: str | Path) -> pd.DataFrame:
    """The measurements of an Extra-P text input file as a run table (see module docstring).

    Parameters
    ----------
    path : str or Path
        the text file.

    Returns
    -------
    DataFrame
        one row per value: the parameters (floats), ``region``, ``metric``, ``repetition``,
        ``value``, ``point``; sorted by region, metric, parameters, repetition.

    Raises
    ------
    InputError
        an unknown field, POINTS before PARAMETER, a parameter named like one of the reader's
        columns (:data:`COLUMNS`), a point of the wrong dimension, a non-number, more or
        fewer DATA lines than points in a series, an empty DATA line, or no data (file and
        line named).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as d:
    ...     f = Path(d, "t.txt")
    ...     _ = f.write_text("PARAMETER p\\nPOINTS ( 2 ) ( 4 )\\nREGION main\\n"
    ...                      "DATA 1 1.2\\nDATA 2\\n")
    ...     df = read_extrap_text(f)
    >>> df[["p", "value"]].values.tolist(), extrap_parameters(df)
    ([[2.0, 1.0], [2.0, 1.2], [4.0, 2.0]], ['p'])
    """
    path = input_file(path)
    params: list[str] = []
    points: list[tuple[float, ...]] = []
    region, metric = "", ""
    k, last = 0, 0  # DATA lines of the current series, and the line of its last one
    rows: list[dict] = []
    for n, raw in enumerate(read_text(path).splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        field, _, rest = line.replace("\t", " ").partition(" ")
        rest = rest.strip()
        if field not in FIELDS:
            raise InputError(path, f"unknown field {field!r}", row=n,
                             expected=f"a line starting with one of {list(FIELDS)}")
        if field == "PARAMETER":
            names = rest.split()
            if not names or points:
                raise InputError(path, "PARAMETER without a name or after POINTS", row=n,
                                 expected="PARAMETER name(s) before the POINTS")
            dup = [p for p in names if p in params or names.count(p) > 1]
            if dup:
                raise InputError(path, f"parameter {dup[0]!r} named twice", row=n)
            check_parameter_names(names, path, row=n)
            params += names
        elif field == "POINTS":
            if not params:
                raise InputError(path, "POINTS before any PARAMETER", row=n)
            points += _points(rest, len(params), path, n)
        elif field in ("REGION", "METRIC"):
            _check_complete(k, points, params, region, metric, path, last)
            if field == "REGION":
                region = rest
            else:
                metric = rest
            k = 0
        else:
            values = _numbers(rest.split(), path, n, "DATA")
            if k >= len(points):
                raise InputError(path, f"DATA line {k + 1} of region {region!r} metric "
                                       f"{metric!r} but only {len(points)} POINTS", row=n,
                                 expected="one DATA line per point, in POINTS order")
            if not values:
                raise InputError(path, f"DATA line of point {describe_point(params, points[k])} of "
                                       f"region {region!r} metric {metric!r} holds no value",
                                 row=n, expected="the point's repetitions, one number or more")
            base = dict(zip(params, points[k], strict=True))
            label = "_".join(f"{p}~{v:g}" for p, v in base.items())
            rows += [{**base, "region": region, "metric": metric, "repetition": r,
                      "value": v, "point": label} for r, v in enumerate(values)]
            k, last = k + 1, n
    _check_complete(k, points, params, region, metric, path, last)
    if not rows:
        raise InputError(path, "no DATA values", expected="PARAMETER, POINTS and DATA lines")
    return measurement_frame(rows, params)


def measurement_frame(rows: list[dict], params: list[str]) -> pd.DataFrame:
    """The rows of an Extra-P input (text or JSON: :mod:`perfcast.sweep.extrap_json`) as one
    table, sorted by region, metric, the parameters and repetition (stable).

    Examples
    --------
    >>> rows = [{"p": 4.0, "region": "r", "metric": "t", "repetition": 0, "value": 2.0},
    ...         {"p": 2.0, "region": "r", "metric": "t", "repetition": 0, "value": 1.0}]
    >>> measurement_frame(rows, ["p"])["p"].tolist()
    [2.0, 4.0]
    """
    return pd.DataFrame(rows).sort_values(["region", "metric", *params, "repetition"],
                                          kind="mergesort").reset_index(drop=True)


def extrap_parameters(df: pd.DataFrame) -> list[str]:
    """The parameter columns of a table :func:`read_extrap_text` (or
    :func:`perfcast.sweep.extrap_json.read_extrap_json`) returned, in file order."""
    return [c for c in df.columns if c not in COLUMNS]


def select_series(df: pd.DataFrame, path: str | Path, region: str | None,
                  metric: str | None) -> pd.DataFrame:
    """The rows of one region and metric; either may be omitted when the file has one.

    Parameters
    ----------
    df : pandas.DataFrame
        The file's rows (:func:`read_extrap_text`).
    path : str or Path
        The file, for messages.
    region, metric : str, optional
        The region (call path) and metric to keep; None: the file's only one.

    Returns
    -------
    pandas.DataFrame
        The rows of that series.

    Raises
    ------
    InputError
        an unknown region or metric, or several and none chosen (the choices named).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"p": [2.0, 2.0], "region": ["main", "io"], "metric": "time",
    ...                    "value": [1.0, 5.0]})
    >>> select_series(df, "in.txt", "io", None)["value"].tolist()
    [5.0]
    """
    out = df
    for col, want, flag in (("region", region, "--region"), ("metric", metric, "--metric")):
        have = sorted(out[col].unique())
        if want is None:
            if len(have) > 1:
                raise InputError(path, f"{len(have)} {col}s {have}",
                                 expected=f"one chosen with {flag}")
            continue
        if want not in have:
            raise InputError(path, f"no {col} {want!r} ({flag})", expected=f"one of {have}")
        out = out[out[col] == want]
    return out.reset_index(drop=True)
