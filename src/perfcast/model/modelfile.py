"""The model file (``results/model/model.parquet``): the chosen model written as data, never as
code, and read back by refitting it.

A model file is a Parquet table of the rows the model was fitted on, with the chosen family,
hyper-parameters, features and calibration as metadata; the model is refitted from them when it
is loaded. A pickled model (joblib) would run whatever code a crafted file carries when it is
loaded, before any check could refuse it.

The metadata is data only: every key is checked against what :func:`save_model` writes (its
type, length and range: :func:`check_metadata`), and the estimators are built by perfcast's own
constructors from the checked hyper-parameters of :data:`PARAMS` alone. No value of a file
reaches ``set_params`` or a constructor argument that names a path, a cache (a ``Pipeline``'s
``memory``), a callable (``metric``, ``weights``, ``func``) or a number of jobs.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from perfcast.checks import MAX_MAGNITUDE, input_file, require_values
from perfcast.errors import InputError
from perfcast.io import parquet_metadata, read_parquet, require_columns, write_parquet
from perfcast.model.settings import MAX_RIDGE_ALPHA, KnnSettings

#: the ``format`` a model file's metadata names (:func:`save_model`)
MODEL_FORMAT = "perfcast-ipc-ratio-model"
#: its version: a file of another version is refused, naming the one expected
MODEL_FORMAT_VERSION = 1
#: the keys of a model file's metadata (:func:`save_model` writes each; ``versions`` and
#: ``simulated`` may be absent); another is refused: a file that has one was not written by this
#: version
META_KEYS = ("format", "format_version", "family", "features", "target", "params", "log1p",
             "calibration", "versions", "simulated")
#: the keys of its calibration (:meth:`perfcast.model.conformal.Calibration.as_dict`)
CALIBRATION_KEYS = ("cycles", "runtime", "coverage")
#: the largest magnitude of a calibration score ``log(predicted / measured)``: a factor of
#: MAX_MAGNITUDE (1e150), the largest a reading may have. A larger one is no measurement's, and
#: the interval's bounds ``total * exp(+-q)`` would overflow or vanish
MAX_LOG_ERROR = math.log(MAX_MAGNITUDE)
#: the hyper-parameters :func:`save_model` writes for each family (``params``), and no other:
#: the searched pipelines' own names (``GridSearchCV.best_params_``), the constant's ratio
PARAMS = {"constant": ("ratio",), "ridge": ("ridge__regressor__alpha",),
          "knn": ("knn__n_neighbors", "knn__weights")}
#: the KNN's weightings (scikit-learn's names; a callable is never taken from a file)
KNN_WEIGHTS = ("uniform", "distance")
#: at most this many features, each name at most MAX_NAME characters; as many library versions
MAX_FEATURES, MAX_NAME, MAX_VERSIONS = 1000, 200, 50


def save_model(sel: Any, data: pd.DataFrame, features: list[str], settings: KnnSettings, *,
               calibration: dict, versions: dict, path: str | Path,
               simulated: bool = False) -> None:
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
    simulated : bool, default=False
        the model is fitted on simulated counters: said in its metadata (``simulated``).

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
            "versions": versions, "simulated": bool(simulated)}
    refit = _refit(rows, meta, path)
    x = rows[features].to_numpy()
    if not np.allclose(refit.predict(x), sel.model.predict(x), rtol=1e-12, atol=0):
        raise RuntimeError("the model refitted from its saved rows and parameters does not "
                           "predict as the fitted one: save_model needs the new model's state")
    write_parquet(rows, path, metadata=meta)


def _refit(rows: pd.DataFrame, meta: dict, path: str | Path) -> Any:
    """The model of family ``meta["family"]`` with ``meta``'s parameters, fitted on ``rows``
    (:mod:`perfcast.model.families`).

    The parameters are checked first (:func:`check_params`), and the estimator is built by
    :func:`~perfcast.model.families.ridge_pipeline` or :func:`~perfcast.model.knn.make_pipeline`
    from them alone: no value of the file reaches ``set_params``.

    Raises
    ------
    InputError
        naming the file and the parameter that is unknown, missing, of the wrong type or out of
        its range (:func:`check_params`).
    """
    from perfcast.model.families import ConstantRatio, ridge_pipeline
    from perfcast.model.knn import make_pipeline

    family, params = meta["family"], meta["params"]
    check_params(family, params, path, rows=len(rows))
    if family == "constant":
        return ConstantRatio(float(params["ratio"]))
    if family == "knn":
        pipe = make_pipeline(meta["log1p"], params["knn__n_neighbors"], params["knn__weights"])
    else:
        pipe = ridge_pipeline(float(params["ridge__regressor__alpha"]))
    return pipe.fit(rows[meta["features"]].to_numpy(dtype=float),
                    rows[meta["target"]].to_numpy(dtype=float))


def check_params(family: str, params: Any, path: str | Path, rows: int | None = None) -> None:
    """``params`` are exactly the hyper-parameters :func:`save_model` writes for ``family``
    (:data:`PARAMS`), each of its type and in its range: ``ratio`` a number in [1/MAX_MAGNITUDE,
    MAX_MAGNITUDE] (1e150); ``ridge__regressor__alpha`` a number in (0, MAX_RIDGE_ALPHA]
    (``model.ridge_alphas``' range); ``knn__n_neighbors`` an integer (not a boolean) from 1 to
    the number of ``rows``; ``knn__weights`` ``uniform`` or ``distance``.

    Parameters
    ----------
    family : str
        the model's family (one of :data:`PARAMS`).
    params : object
        the metadata's ``params``.
    path : str or Path
        the model file (in the error).
    rows : int or None, default=None
        the model's training rows (the largest number of neighbours; None: not checked).

    Raises
    ------
    InputError
        naming the file and the key (``params.knn__n_neighbors``) and its value: an unknown key
        (a ``Pipeline``'s ``memory``, a ``metric``, ``n_jobs``: nothing but the keys of
        :data:`PARAMS` is taken), a missing one, a wrong type or a value out of range.

    Examples
    --------
    >>> check_params("knn", {"knn__n_neighbors": 5, "knn__weights": "distance"}, "m.parquet")
    >>> check_params("knn", {"knn__n_neighbors": 5, "knn__weights": "uniform",
    ...                      "memory": "/tmp/cache"}, "m.parquet")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    perfcast.errors.InputError: m.parquet: model metadata params has an unknown key 'memory' ...
    >>> check_params("ridge", {"ridge__regressor__alpha": -1.0}, "m.parquet")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    perfcast.errors.InputError: m.parquet: params.ridge__regressor__alpha -1.0 ...
    """
    allowed = PARAMS[family]
    if not isinstance(params, dict):
        raise InputError(path, f"model metadata params {_short(params)}",
                         expected=f"an object of the keys {list(allowed)}")
    for key in params:
        if key not in allowed:
            raise InputError(path, f"model metadata params has an unknown key {_short(key)}",
                             expected=f"only the keys {list(allowed)} of a {family} model")
    for key in allowed:
        if key not in params:
            raise InputError(path, f"model metadata params lacks the key {key!r}",
                             expected=f"the keys {list(allowed)} of a {family} model")
    for key in allowed:
        value = params[key]
        if key == "ratio":
            ok = (_is_number(value) and math.isfinite(value)
                  and 1 / MAX_MAGNITUDE <= value <= MAX_MAGNITUDE)
            expected = f"a finite number from {1 / MAX_MAGNITUDE:.4g} to {MAX_MAGNITUDE:.4g}"
        elif key == "ridge__regressor__alpha":
            ok = _is_number(value) and math.isfinite(value) and 0 < value <= MAX_RIDGE_ALPHA
            expected = f"a finite number above 0 and at most {MAX_RIDGE_ALPHA:.4g}"
        elif key == "knn__n_neighbors":
            top = rows if rows is not None else math.inf
            ok = type(value) is int and 1 <= value <= top
            expected = ("an integer from 1" + (f" to the {rows} rows of the model"
                                               if rows is not None else ""))
        else:
            ok = isinstance(value, str) and value in KNN_WEIGHTS
            expected = f"one of {list(KNN_WEIGHTS)}"
        if not ok:
            raise InputError(path, f"params.{key} {_short(value)}", expected=expected)


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
        metadata or rows that do not make a model (a metadata key unknown, missing or of the
        wrong type, a calibration that does not make finite prediction intervals, a non-finite
        value, too few rows for its number of neighbours; :func:`check_metadata`).

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
    if not isinstance(meta, dict) or meta.get("format") != MODEL_FORMAT:
        raise InputError(path, "not a perfcast model file", expected=expected)
    check_metadata(meta, path)
    features, target = meta["features"], meta["target"]
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
    return {"model": _refit(rows, meta, path), "family": meta["family"], "features": features,
            "calibration": meta["calibration"], "versions": meta.get("versions", {})}


def check_metadata(meta: dict, path: str | Path) -> None:
    """A model file's metadata has the keys :func:`save_model` writes, each of its type, length
    and range: a known ``family`` and ``format_version``; ``features`` a list of 1 to
    :data:`MAX_FEATURES` distinct names (strings of 1 to :data:`MAX_NAME` printable
    characters); ``target`` the trainset's target; ``log1p`` a boolean; ``params`` exactly the
    family's hyper-parameters in range (:func:`check_params`); ``versions`` names and version
    strings; and a calibration that makes finite prediction intervals
    (:func:`check_calibration`).

    A damaged file must end in an error naming it and the key, not in a TypeError of a
    constructor or an overflow of the interval's bounds when ``perfcast predict`` uses it.

    Raises
    ------
    InputError
        naming the file and the first key that is unknown, missing, of the wrong type or out of
        its range.
    """
    unknown = [k for k in meta if k not in META_KEYS]
    if unknown:
        raise InputError(path, f"model metadata has an unknown key {_short(unknown[0])}",
                         expected=f"the keys {list(META_KEYS)}")
    from perfcast.model.families import FAMILIES

    if meta.get("family") not in FAMILIES:
        raise InputError(path, f"model family {_short(meta.get('family'))}",
                         expected=f"one of {list(FAMILIES)}")
    version = meta.get("format_version")
    if type(version) is not int or version != MODEL_FORMAT_VERSION:
        raise InputError(path, f"model format version {_short(version)}",
                         expected=f"version {MODEL_FORMAT_VERSION}: retrain with this version")
    if "calibration" not in meta:
        raise InputError(path, "has no interval calibration (written by an older perfcast)",
                         expected="a model retrained by this version (rule model_train)")
    from perfcast.model.trainset import TARGET

    features, target = meta.get("features"), meta.get("target")
    if not isinstance(features, list) or not 1 <= len(features) <= MAX_FEATURES:
        raise InputError(path, f"model metadata features {_short(features)}",
                         expected=f"a list of 1 to {MAX_FEATURES} counter names")
    for i, name in enumerate(features):
        if not _is_name(name) or name == TARGET:
            raise InputError(path, f"model metadata features[{i}] {_short(name)}",
                             expected=f"a counter name (a string of 1 to {MAX_NAME} printable "
                                      f"characters, not {TARGET!r})")
    if len(set(features)) != len(features):
        twice = next(f for f in features if features.count(f) > 1)
        raise InputError(path, f"model metadata features name {twice!r} twice",
                         expected="each counter once")
    if target != TARGET:
        raise InputError(path, f"model metadata target {_short(target)}",
                         expected=repr(TARGET))
    if not isinstance(meta.get("simulated", False), bool):
        raise InputError(path, f"model metadata simulated {_short(meta.get('simulated'))}",
                         expected="true or false")
    if not isinstance(meta.get("log1p"), bool):
        raise InputError(path, f"model metadata log1p {_short(meta.get('log1p'))}",
                         expected="true or false")
    check_params(meta["family"], meta.get("params"), path)
    versions = meta.get("versions", {})
    if (not isinstance(versions, dict) or len(versions) > MAX_VERSIONS
            or not all(_is_name(k) and _is_name(v) for k, v in versions.items())):
        raise InputError(path, f"model metadata versions {_short(versions)}",
                         expected=f"an object of at most {MAX_VERSIONS} library names and "
                                  "version strings")
    check_calibration(meta["calibration"], path)


def check_calibration(cal: Any, path: str | Path) -> None:
    """The ``calibration`` of a model file (:meth:`perfcast.model.conformal.Calibration.as_dict`)
    makes finite prediction intervals: exactly the keys ``cycles``, ``runtime`` and
    ``coverage``; at least one benchmark's cycles log error, each a finite number of magnitude
    at most :data:`MAX_LOG_ERROR`; a runtime log error of the same benchmarks, each such a
    number or NaN (trained without a clock); a coverage strictly between 0 and 1.

    Raises
    ------
    InputError
        naming the file and the key (``calibration.cycles['mcf']``) and its value.

    Examples
    --------
    >>> check_calibration({"cycles": {"mcf": 0.02}, "runtime": {"mcf": float("nan")},
    ...                    "coverage": 0.9}, "model.parquet")
    >>> check_calibration({"cycles": {"mcf": 1e308}, "runtime": {"mcf": float("nan")},
    ...                    "coverage": 0.9}, "model.parquet")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    perfcast.errors.InputError: model.parquet: calibration.cycles['mcf'] 1e+308 ...
    """
    if not isinstance(cal, dict):
        raise InputError(path, f"calibration {_short(cal)}",
                         expected=f"an object of the keys {list(CALIBRATION_KEYS)}")
    for key in cal:
        if key not in CALIBRATION_KEYS:
            raise InputError(path, f"calibration has an unknown key {_short(key)}",
                             expected=f"the keys {list(CALIBRATION_KEYS)}")
    for key in CALIBRATION_KEYS:
        if key not in cal:
            raise InputError(path, f"calibration lacks the key {key!r}",
                             expected=f"the keys {list(CALIBRATION_KEYS)}")
    coverage = cal["coverage"]
    if not (_is_number(coverage) and 0 < coverage < 1):
        raise InputError(path, f"calibration.coverage {_short(coverage)}",
                         expected="a number strictly between 0 and 1")
    benchmarks = None
    for kind in ("cycles", "runtime"):
        scores = cal[kind]
        if not isinstance(scores, dict):
            raise InputError(path, f"calibration.{kind} {_short(scores)}",
                             expected="an object of benchmark names and log errors")
        if not scores:
            raise InputError(path, f"calibration.{kind} holds no benchmark",
                             expected="the log error of at least one training benchmark")
        if benchmarks is not None and sorted(scores) != benchmarks:
            raise InputError(path, f"calibration.{kind} names the benchmarks "
                             f"{_short(sorted(scores))}, calibration.cycles {benchmarks}",
                             expected="the same training benchmarks in both")
        benchmarks = sorted(scores)
        for bench, value in scores.items():
            nan_ok = kind == "runtime" and _is_number(value) and math.isnan(value)
            if not nan_ok and not (_is_number(value) and math.isfinite(value)
                                   and abs(value) <= MAX_LOG_ERROR):
                raise InputError(path, f"calibration.{kind}[{_short(bench)}] {_short(value)}",
                                 expected=f"a finite log error of magnitude at most "
                                          f"{MAX_LOG_ERROR:.4g}"
                                          + (" (or NaN: no clock)" if kind == "runtime" else ""))


def _is_name(value: Any) -> bool:
    """A string of 1 to :data:`MAX_NAME` printable characters (a name, never a line break or a
    control character that would garble an error message)."""
    return isinstance(value, str) and 0 < len(value) <= MAX_NAME and value.isprintable()


def _is_number(value: Any) -> bool:
    """An int or a float of JSON, not a boolean (JSON's true is not a number)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _short(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters: a damaged file may hold anything."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."
