"""Read Extra-P's JSON input formats into the table of runs :mod:`perfcast.sweep.extrap_text`
gives for its text format, to model measurements users already have.

Extra-P (A. Calotoiu et al., "Using automated performance modeling to find scalability bugs in
complex codes", SC 2013; https://github.com/extra-p/extrap, ``docs/file-formats.md``) reads two
JSON layouts (``*.json``):

* the current one: ``{"parameters": [names], "measurements": {callpath: {metric: [{"point":
  [one coordinate per parameter], "values": [repetitions]}, ...]}}}``;
* the older one, by ids: ``parameters``, ``callpaths``, ``metrics`` (each ``[{"id", "name"}]``),
  ``coordinates`` (``[{"id", "parameter_value_pairs": [{"parameter_id", "parameter_value"}]}]``)
  and ``measurements`` (``[{"callpath_id", "coordinate_id", "metric_id", "value"}]``, one
  repetition each).

A point with no value (``"values": []``) is refused, and so is, in the older layout, a call path
and metric with no measurement at one of the declared coordinates (Extra-P fails on both): the
point would otherwise be left out of the table unnoticed.

The result has one row per measured value: the parameters, ``region`` (the call path),
``metric``, ``repetition`` (0-based, in file order per point), ``value`` and ``point``; a
parameter named like one of these columns is refused, as in the text format.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from perfcast.checks import input_file, read_text
from perfcast.errors import InputError
from perfcast.sweep.extrap_text import check_parameter_names, describe_point, measurement_frame


def read_extrap_json(path: str | Path) -> pd.DataFrame:
    """The measurements of an Extra-P JSON input file (either layout, see module docstring)
    as a run table.

    Parameters
    ----------
    path : str or Path
        The JSON file.

    Returns
    -------
    pandas.DataFrame
        One row per value: the parameters (floats), ``region``, ``metric``, ``repetition``,
        ``value``, ``point``; sorted by region, metric, parameters, repetition.

    Raises
    ------
    InputError
        not JSON, neither layout, a parameter named like one of the reader's columns, a point
        of the wrong dimension, an unknown id, a value that is not a finite number, a point
        with no value, a declared coordinate a series does not measure, or no values (the
        file and the key named).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     f = Path(d, "t.json")
    ...     _ = f.write_text(json.dumps({"parameters": ["p"], "measurements": {"main": {
    ...         "time": [{"point": [2], "values": [1, 1.2]}, {"point": [4], "values": [2]}]}}}))
    ...     df = read_extrap_json(f)
    >>> df[["p", "region", "metric", "value"]].values.tolist()
    [[2.0, 'main', 'time', 1.0], [2.0, 'main', 'time', 1.2], [4.0, 'main', 'time', 2.0]]
    """
    path = input_file(path)
    try:
        doc = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise InputError(path, f"not JSON ({exc.msg})", row=exc.lineno) from None
    if not isinstance(doc, dict) or "parameters" not in doc or "measurements" not in doc:
        raise InputError(path, "no 'parameters' and 'measurements' keys",
                         expected="Extra-P's JSON input: an object with both")
    if isinstance(doc["measurements"], dict):
        params, series = _current(doc, path)
    else:
        params, series = _by_ids(doc, path)
    rows: list[dict[str, Any]] = []
    counts: dict[tuple, int] = {}
    for (region, metric, point, where), values in series:
        base = dict(zip(params, point, strict=True))
        label = "_".join(f"{p}~{v:g}" for p, v in base.items())
        for v in values:
            value = _number(v, path, where)
            key = (region, metric, point)
            rep = counts.get(key, 0)
            counts[key] = rep + 1
            rows.append({**base, "region": region, "metric": metric, "repetition": rep,
                         "value": value, "point": label})
    if not rows:
        raise InputError(path, "no measured values", expected="at least one value")
    return measurement_frame(rows, params)


def _number(v: Any, path: Path, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not np.isfinite(v):
        raise InputError(path, f"{where} holds {v!r}", expected="a finite number")
    return float(v)


def _names(items: Any, path: Path, key: str) -> list[str]:
    if not isinstance(items, list) or not items or not all(isinstance(n, str) for n in items):
        raise InputError(path, f"{key!r} is {items!r}", expected="a list of names")
    twice = sorted({n for n in items if items.count(n) > 1})
    if twice:
        raise InputError(path, f"parameter {twice[0]!r} named twice")
    return list(items)


def _point(coords: Any, params: list[str], path: Path, where: str) -> tuple[float, ...]:
    if not isinstance(coords, list) or len(coords) != len(params):
        raise InputError(path, f"{where} is {coords!r}",
                         expected=f"{len(params)} coordinate(s), one per parameter {params}")
    return tuple(_number(c, path, where) for c in coords)


def _current(doc: Mapping[str, Any], path: Path):
    """(parameters, [((region, metric, point, where), values)]) of the current layout."""
    params = _names(doc["parameters"], path, "parameters")
    for i, name in enumerate(params):
        check_parameter_names([name], path, key=f"parameters[{i}]")
    series = []
    for region, metrics in doc["measurements"].items():
        if not isinstance(metrics, dict):
            raise InputError(path, f"measurements[{region!r}] is not an object",
                             expected="metric -> list of {point, values}")
        for metric, entries in metrics.items():
            at = f"measurements[{region!r}][{metric!r}]"
            if not isinstance(entries, list):
                raise InputError(path, f"{at} is not a list", expected="[{point, values}]")
            for i, e in enumerate(entries):
                if not isinstance(e, dict) or not isinstance(e.get("values"), list):
                    raise InputError(path, f"{at}[{i}] is {e!r}",
                                     expected="an object with 'point' and 'values' lists")
                point = _point(e.get("point"), params, path, f"{at}[{i}].point")
                if not e["values"]:
                    raise InputError(path, f"{at}[{i}].values is empty: point "
                                           f"{describe_point(params, point)} has no value",
                                     expected="the point's repetitions, one number or more")
                series.append(((region, metric, point, f"{at}[{i}].values"), e["values"]))
    return params, series


def _table(doc: Mapping[str, Any], key: str, path: Path) -> dict[Any, Any]:
    """id -> entry of one of the older layout's lists."""
    items = doc.get(key)
    if not isinstance(items, list) or not all(isinstance(e, dict) and "id" in e
                                              for e in items):
        raise InputError(path, f"{key!r} is not a list of objects with an 'id'",
                         expected="Extra-P's JSON input by ids")
    return {e["id"]: e for e in items}


def _by_ids(doc: Mapping[str, Any], path: Path):
    """(parameters, [((region, metric, point, where), [value])]) of the older layout."""
    par = _table(doc, "parameters", path)
    ids = sorted(par, key=lambda k: (str(type(k)), k))
    params = _names([par[k].get("name") for k in ids], path, "parameters")
    for k, name in zip(ids, params, strict=True):
        check_parameter_names([name], path, key=f"parameters id {k!r} name")
    callpaths, metrics = _table(doc, "callpaths", path), _table(doc, "metrics", path)
    coords = {}
    for cid, c in _table(doc, "coordinates", path).items():
        pairs = {p.get("parameter_id"): p.get("parameter_value")
                 for p in c.get("parameter_value_pairs") or [] if isinstance(p, dict)}
        where = f"coordinates id {cid!r}"
        if set(pairs) != set(ids):
            raise InputError(path, f"{where} gives parameter ids {sorted(pairs, key=str)}",
                             expected=f"one value for each of {ids}")
        coords[cid] = _point([pairs[k] for k in ids], params, path, where)
    series = []
    measured: dict[tuple[Any, Any], set[Any]] = {}  # (callpath, metric) -> coordinate ids
    for i, m in enumerate(doc["measurements"]):
        where = f"measurements[{i}]"
        if not isinstance(m, dict):
            raise InputError(path, f"{where} is {m!r}", expected="an object")
        for key, table in (("callpath_id", callpaths), ("metric_id", metrics),
                           ("coordinate_id", coords)):
            if m.get(key) not in table:
                raise InputError(path, f"{where}.{key} {m.get(key)!r} is unknown",
                                 expected=f"one of {sorted(table, key=str)}")
        series.append(((str(callpaths[m["callpath_id"]].get("name")),
                        str(metrics[m["metric_id"]].get("name")), coords[m["coordinate_id"]],
                        f"{where}.value"), [m.get("value")]))
        measured.setdefault((m["callpath_id"], m["metric_id"]), set()).add(m["coordinate_id"])
    for (cp, mt), have in measured.items():
        missing = [cid for cid in coords if cid not in have]
        if missing:
            cid = missing[0]
            raise InputError(path, f"callpath {callpaths[cp].get('name')!r} metric "
                                   f"{metrics[mt].get('name')!r} has no measurement at "
                                   f"coordinates id {cid!r} {describe_point(params, coords[cid])} "
                                   f"({len(missing)} of {len(coords)} coordinates unmeasured)",
                             expected="a measurement at every coordinate, as Extra-P requires")
    return params, series
