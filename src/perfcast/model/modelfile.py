"""The model file (``results/model/model.parquet``): the chosen model written as data, never as
code, and read back by refitting it.

A model file is a Parquet table of the rows the model was fitted on, with the chosen family,
hyper-parameters, features and calibration as metadata; the model is refitted from them when it
is loaded. A pickled model (joblib) would run whatever code a crafted file carries when it is
loaded, before any check could refuse it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from perfcast.checks import input_file, require_values
from perfcast.errors import InputError
from perfcast.io import parquet_metadata, read_parquet, require_columns, write_parquet
from perfcast.model.settings import KnnSettings

#: the ``format`` a model file's metadata names (:func:`save_model`)
MODEL_FORMAT = "perfcast-ipc-ratio-model"
#: its version: a file of another version is refused, naming the one expected
MODEL_FORMAT_VERSION = 1


def save_model(sel: Any, data: pd.DataFrame, features: list[str], settings: KnnSettings, *,
               calibration: dict, versions: dict, path: str | Path) -> None:
    """Write the chosen model as data, never as code: the rows it was fitted on (``features``
    and the target) as a Parquet table, with its family, hyper-parameters, ``log1p`` choice,
    features, calibration and library versions as metadata. :func:`load_model` refits the same
    model from them (a k-nearest-neighbour regressor stores its training rows anyway; refitting
    a scaler, a neighbour index or a ridge regression on a few thousand rows takes milliseconds;
    the constant ratio is its one parameter).

    Parameters
    ----------
    sel : perfcast.model.families.Selection
        the families fitted on the training set and the chosen one.
    data : pandas.DataFrame
        the rows the chosen family was fitted on (the thinned training set).
    features : list of str
        the feature columns, in the model's order.
    settings : KnnSettings
        the ``model`` section (``log1p``).
    calibration, versions : dict
        the prediction-interval calibration and the library versions.
    path : str or Path
        the model file.

    Raises
    ------
    RuntimeError
        the refitted model does not predict what the fitted one does on its own rows (the model
        is no longer rebuilt by its family and hyper-parameters alone): nothing is written.
    """
    from perfcast.model.trainset import TARGET

    fitted = sel.fitted[sel.chosen]
    if sel.chosen == "constant":
        params = {"ratio": float(fitted.params["ratio"])}
    else:  # the searched pipelines' own parameter names (set_params on load)
        params = {k: v.item() if isinstance(v, np.generic) else v
                  for k, v in fitted.search.best_params_.items()}
    rows = data[[*features, TARGET]].astype(float).reset_index(drop=True)
    meta = {"format": MODEL_FORMAT, "format_version": MODEL_FORMAT_VERSION,
            "family": sel.chosen, "features": list(features), "target": TARGET,
            "params": params, "log1p": bool(settings.log1p), "calibration": calibration,
            "versions": versions}
    refit = _refit(rows, meta, path)
    x = rows[features].to_numpy()
    if not np.allclose(refit.predict(x), sel.model.predict(x), rtol=1e-12, atol=0):
        raise RuntimeError("the model refitted from its saved rows and parameters does not "
                           "predict as the fitted one: save_model needs the new model's state")
    write_parquet(rows, path, metadata=meta)


def _refit(rows: pd.DataFrame, meta: dict, path: str | Path) -> Any:
    """The model of family ``meta["family"]`` with ``meta``'s parameters, fitted on ``rows``
    (:mod:`perfcast.model.families`); a parameter the model does not take is an InputError
    naming it."""
    from perfcast.model.families import ConstantRatio, ridge_pipeline
    from perfcast.model.knn import make_pipeline

    family, params = meta["family"], meta["params"]
    try:
        if family == "constant":
            ratio = float(params["ratio"])
            if not (math.isfinite(ratio) and ratio > 0):
                raise ValueError(f"ratio {ratio!r} is not finite and positive")
            return ConstantRatio(ratio)
        pipe = make_pipeline(meta["log1p"]) if family == "knn" else ridge_pipeline()
        pipe.set_params(**params)
        return pipe.fit(rows[meta["features"]].to_numpy(dtype=float),
                        rows[meta["target"]].to_numpy(dtype=float))
    except (ValueError, TypeError, KeyError) as exc:
        why = " ".join(str(exc).split())  # one line (scikit-learn's messages span several)
        raise InputError(path, f"its parameters {params} do not fit a {family} model: "
                         f"{why[:300]}", expected="a model file written by perfcast's train "
                         "rule") from None


def load_model(path: str | Path) -> dict:
    """A model written by :func:`save_model` (rule ``model_train``), refitted from its rows:
    ``{"model", "features", "calibration", "versions"}``.

    The file is read as data only (Parquet and JSON metadata); nothing in it is executed, so a
    model file from anywhere can be given to ``perfcast predict --model``. A pickled model
    (``joblib``, written by older versions) is refused unread.

    Raises
    ------
    InputError
        naming the file: unreadable, not a perfcast model, of another format version, or with
        metadata or rows that do not make a model (a non-finite value, too few rows for its
        number of neighbours).

    Examples
    --------
    A Parquet table that is not a perfcast model is refused, naming the file:

    >>> import tempfile
    >>> from pathlib import Path
    >>> from perfcast.io import write_parquet
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp, "model.parquet")
    ...     write_parquet(pd.DataFrame({"x_pki": [1.0]}), path)
    ...     try:
    ...         load_model(path)
    ...     except InputError as err:
    ...         print(str(err).startswith(f"{path}: not a perfcast model file"))
    True
    """
    expected = "a model file written by perfcast's train rule (Parquet)"
    try:
        meta = parquet_metadata(input_file(path))
    except (InputError, FileNotFoundError):
        raise
    except Exception as exc:  # pyarrow's many kinds of a corrupt or non-Parquet file
        raise InputError(path, f"not a perfcast model file ({type(exc).__name__})",
                         expected=expected + "; a pickled model is never loaded: retrain "
                         "with this version") from None
    if meta.get("format") != MODEL_FORMAT:
        raise InputError(path, "not a perfcast model file", expected=expected)
    from perfcast.model.families import FAMILIES

    if meta.get("family") not in FAMILIES:
        raise InputError(path, f"model family {meta.get('family')!r}",
                         expected=f"one of {list(FAMILIES)}")
    if meta.get("format_version") != MODEL_FORMAT_VERSION:
        raise InputError(path, f"model format version {meta.get('format_version')!r}",
                         expected=f"version {MODEL_FORMAT_VERSION}: retrain with this version")
    features, target = meta.get("features"), meta.get("target")
    if (not isinstance(features, list) or not features
            or not all(isinstance(f, str) for f in features) or not isinstance(target, str)
            or not isinstance(meta.get("params"), dict) or not isinstance(meta.get("log1p"), bool)
            or not all(isinstance(v, str | int | float | bool | None)
                       for v in meta["params"].values())
            or not isinstance(meta.get("calibration"), dict)):
        raise InputError(path, "model metadata lacks or mistypes features, target, params, "
                         "log1p or calibration", expected=expected)
    rows = read_parquet(path)
    require_columns(rows, [*features, target], path)
    for col in (*features, target):
        try:
            values = rows[col].to_numpy(dtype=float)
        except (TypeError, ValueError):
            raise InputError(path, f"column {col!r} is not numeric", expected=expected) from None
        require_values(values, path, f"model row {col}", label="row")
    if rows.empty:
        raise InputError(path, "no training rows", expected=expected)
    k = meta["params"].get("knn__n_neighbors")
    if isinstance(k, int) and not 0 < k <= len(rows):
        raise InputError(path, f"{k} neighbours of {len(rows)} rows",
                         expected="at most as many neighbours as rows")
    return {"model": _refit(rows, meta, path), "family": meta["family"], "features": features,
            "calibration": meta["calibration"], "versions": meta.get("versions", {})}
