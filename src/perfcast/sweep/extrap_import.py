"""An Extra-P input file as a sweep run table (``sweep.imports.<name>.format: extrap``).

Extra-P (Calotoiu et al., SC 2013; Ritter et al., IPDPS 2020; https://github.com/extra-p/extrap)
reads measurements from a text format (``PARAMETER``, ``POINTS``, ``REGION``, ``METRIC`` and
``DATA`` lines: :mod:`perfcast.sweep.extrap_text`) or from JSON
(:mod:`perfcast.sweep.extrap_json`). One region and metric of such a file becomes the run table
a perfcast campaign writes (:func:`perfcast.sweep.table.runs_frame`): one row per configuration
and repetition (``iteration`` = repetition + 1), status ``ok``, the measurement in column
``value``; the campaign's models then fit it like any other.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from perfcast.checks import input_file
from perfcast.errors import InputError
from perfcast.sweep.extrap_json import read_extrap_json
from perfcast.sweep.extrap_text import extrap_parameters, read_extrap_text, select_series
from perfcast.sweep.table import runs_frame


def import_extrap(path: str | Path, parameters: Sequence[str], campaign: str, *,
                  region: str | None, metric: str | None) -> pd.DataFrame:
    """The run table of one region and metric of an Extra-P input file.

    Parameters
    ----------
    path : str or Path
        The file: Extra-P's text format, or its JSON (by the ``.json`` suffix).
    parameters : sequence of str
        The parameter names the file must declare, in its order (the config's list: a
        mismatch is an error, not a silent renaming).
    campaign : str
        The import's name, written in the table.
    region, metric : str or None
        The series modelled; None: the file's only one.

    Returns
    -------
    pandas.DataFrame
        As :func:`perfcast.sweep.table.runs_frame` builds it: ``point``, the parameters,
        ``iteration``, ``status`` ``ok``, ``value`` and ``source`` (``region/metric``).

    Raises
    ------
    InputError
        an unreadable file (the line named), parameters other than the file's, or a region or
        metric the file does not have, or several and none chosen (the choices named).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as d:
    ...     f = Path(d, "fft.txt")
    ...     _ = f.write_text("PARAMETER p\\nPOINTS ( 2 ) ( 4 )\\nREGION fft\\nMETRIC time\\n"
    ...                      "DATA 4.0 4.2\\nDATA 7.0 7.1\\n")
    ...     df = import_extrap(f, ["p"], "fft", region=None, metric=None)
    >>> df[["point", "p", "iteration", "status", "value"]].values.tolist()
    [['p~2', 2.0, 1, 'ok', 4.0], ['p~2', 2.0, 2, 'ok', 4.2], ['p~4', 4.0, 1, 'ok', 7.0], \
['p~4', 4.0, 2, 'ok', 7.1]]
    """
    path = input_file(path)
    read = read_extrap_json if path.suffix.lower() == ".json" else read_extrap_text
    table = read(path)
    declared = extrap_parameters(table)
    if list(parameters) != declared:
        raise InputError(path, f"declares the parameters {declared}, the import names "
                               f"{list(parameters)}",
                         expected="the file's parameter names, in its order")
    series = select_series(table, path, region, metric)
    source = f"{series['region'].iloc[0]}/{series['metric'].iloc[0]}"
    records = [{"campaign": campaign, "point": row["point"],
                "iteration": int(row["repetition"]) + 1,
                "parameters": {p: float(row[p]) for p in declared}, "status": "ok",
                "custom": {"value": float(row["value"])}, "source": source}
               for _, row in series.iterrows()]
    return runs_frame(records, declared)
