"""What ``perfcast fit`` models: its input read and checked once, whatever its kind.

An input is one of

- an ARPE results directory (``results/<values>/<iteration>/APRE_timed.txt``, with the
  parameter names; :func:`perfcast.sweep.arpe.import_arpe`): Y defaults to ``wall_s``, X to
  the numeric parameters, and a categorical parameter must be fixed by ``--level``;
- an Extra-P text (``.txt``) or JSON (``.json``) input file, one region and metric of it
  (:mod:`perfcast.sweep.extrap_text`, :mod:`perfcast.sweep.extrap_json`): Y defaults to the
  measured ``value``, X to the file's parameters;
- a CSV or Parquet table with a header row (:func:`perfcast.sweep.table.load_table`): Y and
  X are named, the columns used must hold numbers, and a run table's rows whose status is not
  ok are left out (noted).

:func:`read_fit_input` returns the rows with Y and X; :func:`pooled_categories` notes a
table's text columns that vary within configurations (pooled as repetitions).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from perfcast.errors import InputError


@dataclass
class FitInput:
    """The rows ``perfcast fit`` models, with its effect and regressors."""

    data: pd.DataFrame
    y: str
    x: list[str]
    #: a CSV/Parquet table (whose other columns :func:`pooled_categories` checks)
    is_table: bool = False
    #: notes on rows left out while reading (a run table's runs that are not ok)
    notes: list[str] = field(default_factory=list)


def read_fit_input(path: str | Path, *, y: str | None, x: Sequence[str] | None,
                   parameters: Sequence[str] | None = None, levels: Sequence[str] = (),
                   region: str | None = None, metric: str | None = None,
                   derived: Mapping[str, str] | None = None,
                   groups: str | None = None) -> FitInput:
    """``perfcast fit``'s input (see the module docstring), its rows kept by ``levels``.

    Parameters
    ----------
    path : str or Path
        The input: an ARPE results directory, an Extra-P ``.txt``/``.json`` file, or a
        ``.csv``/``.parquet`` table.
    y : str or None
        The effect's column (``--y``; required for a table).
    x : sequence of str or None
        The regressors (``--x``; required for a table).
    parameters : sequence of str, optional, default=None
        An ARPE directory's parameter names, in ARPE's order (``--parameters``).
    levels : sequence of str, default=()
        ``NAME=VALUE`` items (``--level``): the rows where each column has its value.
    region, metric : str, optional, default=None
        The Extra-P region and metric (default: the file's only one).
    derived : mapping of str to str, optional, default=None
        Regressors computed from columns (``--derived``): the columns they read must exist.
    groups : str, optional, default=None
        A table's column naming each row's configuration (``--groups``).

    Returns
    -------
    FitInput
        The rows, Y, X and the notes of rows left out.

    Raises
    ------
    InputError
        a directory without ``parameters``, an ARPE categorical parameter at several values
        without ``--level``, a table without ``--y``/``--x``, a missing column, a cell that
        is not a number (file, row and column named), a malformed ``--level`` or one that no
        row matches.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = Path(d, "t.csv").write_text("p,t,host\\n2,1.5,a\\n4,2.5,b\\n4,2.7,a\\n")
    ...     got = read_fit_input(Path(d, "t.csv"), y="t", x=["p"], levels=["host=a"])
    >>> got.data[["p", "t"]].values.tolist(), got.is_table
    ([[2.0, 1.5], [4.0, 2.7]], True)
    """
    from perfcast.sweep.expressions import expression_names

    derived = dict(derived or {})
    if Path(path).is_dir():
        from perfcast.sweep.analysis import categorical_parameters
        from perfcast.sweep.arpe import import_arpe

        if not parameters:
            raise InputError(path, "is a directory",
                             expected="a table, an Extra-P .txt file, or an ARPE results "
                                      "directory with --parameters NAME [NAME ...]")
        df = select_levels(import_arpe(path, list(parameters), "fit"), levels, path)
        categorical = categorical_parameters(df, list(parameters))
        several = [c for c in categorical if df[c].nunique() > 1]
        if several:
            raise InputError(path, f"categorical parameter(s) {several} take several "
                                   f"values {sorted(df[several[0]].unique())}",
                             expected=f"one model per level: --level {several[0]}=VALUE")
        return FitInput(df, y or "wall_s",
                        list(x or [p for p in parameters if p not in categorical]))
    if str(path).lower().endswith((".txt", ".json")):
        from perfcast.checks import input_file
        from perfcast.sweep import extrap_text as et
        from perfcast.sweep.extrap_json import read_extrap_json

        read = read_extrap_json if str(path).lower().endswith(".json") \
            else et.read_extrap_text
        df = et.select_series(read(input_file(path)), path, region, metric)
        y, x = y or "value", list(x or et.extrap_parameters(df))
        missing = [c for c in (y, *x) if c not in df.columns and c not in derived]
        if missing:
            raise InputError(path, f"no column(s) {missing} for --y/--x",
                             expected=f"some of {list(df.columns)}")
        return FitInput(df, y, x)
    from perfcast.sweep.table import load_table

    if not y or not x:
        raise InputError(path, "--y and --x are required for a table",
                         expected="--y COLUMN --x COLUMN [COLUMN ...]")
    needed = {y, *x} - set(derived)
    for name, expr in derived.items():
        needed |= expression_names(expr, where=f"--derived {name}") - set(derived)
    if groups:
        needed.add(groups)
    df, status = load_table(path, sorted(needed - ({groups} if groups else set())))
    return FitInput(select_levels(df, levels, path), y, list(x), is_table=True,
                    notes=[status] if status else [])


def pooled_categories(df: pd.DataFrame, used: set[str | None], x: Sequence[str]) -> list[str]:
    """A note per column of text (not a number) that is neither fitted nor fixed by ``--level``
    and takes several values within one configuration of ``x``, but fewer values than half the
    rows (a run id or a time stamp differs on every row: pooling over it is what repetitions
    are). Such a column is a categorical parameter (an input file, a host, a compiler): the
    fit pools its values as repetitions of each configuration, a law of none of them.

    Parameters
    ----------
    df : pandas.DataFrame
        The table's rows (derived columns added).
    used : set of str
        The columns the fit uses (Y, X, the derived ones, the groups column).
    x : sequence of str
        The regressors.

    Returns
    -------
    list of str
        The notes.

    Examples
    --------
    >>> df = pd.DataFrame({"input": ["a", "b"] * 4, "p": [1, 1, 2, 2, 4, 4, 8, 8],
    ...                    "run": list("abcdefgh"), "t": range(8)})
    >>> pooled_categories(df, {"t", "p"}, ["p"])  # doctest: +ELLIPSIS
    ["column 'input' (text, 2 values: 'a', 'b') varies within the configurations of ['p'] ...]
    """
    notes = []
    for c in df.columns:
        if c in used or pd.to_numeric(df[c].dropna(), errors="coerce").notna().all():
            continue  # a number: another effect, or a parameter the user left out on purpose
        values = df[c].dropna().astype(str)
        k = values.nunique()
        if 2 <= k <= len(df) // 2 and df.groupby(list(x), dropna=False)[c].nunique().max() > 1:
            shown = ", ".join(repr(v) for v in sorted(values.unique())[:4])
            notes.append(f"column {c!r} (text, {k} values: {shown}{', ...' if k > 4 else ''}) "
                         f"varies within the configurations of {list(x)} and is neither a "
                         "regressor nor fixed: its rows are pooled as repetitions, so the law "
                         f"is of their mix; --level {c}=VALUE models one value")
    return notes


def select_levels(df: pd.DataFrame, levels: Sequence[str], path: str | Path) -> pd.DataFrame:
    """The rows where each ``--level NAME=VALUE`` holds (compared as text).

    Parameters
    ----------
    df : pandas.DataFrame
        The rows.
    levels : sequence of str
        The ``NAME=VALUE`` items.
    path : str or Path
        The input, named in errors.

    Returns
    -------
    pandas.DataFrame
        The rows kept, re-indexed from 0.

    Raises
    ------
    InputError
        a malformed ``--level``, an unknown column, or a value no row has (the values named).

    Examples
    --------
    >>> df = pd.DataFrame({"host": ["a", "b", "a"], "t": [1, 2, 3]})
    >>> select_levels(df, ["host=a"], "t.csv")["t"].tolist()
    [1, 3]
    """
    for item in levels:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise InputError(None, f"--level {item!r}", expected="NAME=VALUE")
        name = name.strip()
        if name not in df.columns:
            raise InputError(path, f"no column {name!r} for --level",
                             expected=f"one of {list(df.columns)}")
        keep = df[name].astype(str) == value.strip()
        if not keep.any():
            raise InputError(path, f"--level {item!r}: no row has {name} = {value.strip()!r}",
                             expected=f"one of {sorted(df[name].astype(str).unique())}")
        df = df[keep].reset_index(drop=True)
    return df
