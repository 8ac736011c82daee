"""Generated crafted model files: a model file's metadata is data, checked key by key.

A model file (``results/model/model.parquet``) may come from anywhere (``perfcast predict
--model``). Whatever its metadata holds (extra or wrong hyper-parameters, among them every
constructor argument of the pipelines: ``memory``, ``n_jobs``, ``metric``, ``func``...; values
of any JSON type; another family), loading it either gives a model or raises one InputError
naming the file and the key, never another exception, and writes no file anywhere.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import event, example, given
from hypothesis import strategies as st

from perfcast.errors import InputError
from perfcast.io import write_parquet
from perfcast.model.families import FAMILIES, ridge_pipeline
from perfcast.model.knn import make_pipeline
from perfcast.model.modelfile import META_KEYS, MODEL_FORMAT, MODEL_FORMAT_VERSION, load_model

#: the hyper-parameters save_model writes for each family
GOOD_PARAMS = {"constant": {"ratio": 1.25}, "ridge": {"ridge__regressor__alpha": 1.0},
               "knn": {"knn__n_neighbors": 3, "knn__weights": "distance"}}
#: every constructor argument the pipelines take (their get_params), and save_model's names
PIPELINE_PARAMS = sorted(set(make_pipeline(True).get_params(deep=True))
                         | set(ridge_pipeline().get_params(deep=True))
                         | {k for p in GOOD_PARAMS.values() for k in p})
#: any JSON value (the metadata is JSON)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12)
    | st.sampled_from(["uniform", "distance", "/tmp/cache", "builtins.eval", "ipc_ratio",
                       "x_pki", "knn", "ridge", "constant"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=3),
    max_leaves=6)
#: a change of the metadata: (key, value) for a top-level key, ("params", name, value) for a
#: hyper-parameter, ("drop", key) for a missing one
CHANGE = st.one_of(
    st.tuples(st.just("set"), st.sampled_from([*META_KEYS, "extra"]), JSON),
    st.tuples(st.just("param"), st.sampled_from(PIPELINE_PARAMS) | st.text(max_size=8), JSON),
    st.tuples(st.just("drop"), st.sampled_from([*META_KEYS, "params.*"]), st.none()),
    st.tuples(st.just("family"), st.sampled_from([*FAMILIES, "forest", ""]), st.none()),
)


def _meta(family: str) -> dict:
    return {"format": MODEL_FORMAT, "format_version": MODEL_FORMAT_VERSION, "family": family,
            "features": ["x_pki"], "target": "ipc_ratio", "params": dict(GOOD_PARAMS[family]),
            "log1p": True, "calibration": {"cycles": {"a": 0.01, "b": -0.02},
                                           "runtime": {"a": 0.01, "b": -0.02},
                                           "coverage": 0.9},
            "versions": {"scikit-learn": "1.5.0"}}


def _apply(meta: dict, change: tuple) -> None:
    kind, key, value = change
    if kind == "set":
        meta[key] = value
    elif kind == "param":
        if isinstance(meta.get("params"), dict):
            meta["params"][key] = value
    elif kind == "drop":
        if key == "params.*":
            if isinstance(meta.get("params"), dict):
                meta["params"].clear()
        else:
            meta.pop(key, None)
    else:
        meta["family"] = key


def _files(*roots: Path) -> set[str]:
    return {str(p) for root in roots for p in root.rglob("*")}


@example(family="knn", changes=[("param", "memory", "/tmp/cache")])
@example(family="knn", changes=[("param", "knn__n_neighbors", True)])
@example(family="ridge", changes=[("param", "ridge__regressor__alpha", float("nan"))])
@example(family="constant", changes=[("family", "knn", None)])
@example(family="knn", changes=[])
@given(family=st.sampled_from(FAMILIES), changes=st.lists(CHANGE, max_size=4))
def test_a_crafted_model_file_loads_or_is_refused_naming_a_key(tmp_path_factory, family,
                                                               changes):
    root = tmp_path_factory.mktemp("model")
    meta = _meta(family)
    for change in changes:
        _apply(meta, change)
    for change in changes:  # a path the file names is under root: anything written shows
        if change[0] == "param" and change[2] == "/tmp/cache":
            meta["params"][change[1]] = str(root / "cache")
    rows = pd.DataFrame({"x_pki": [float(i) for i in range(12)],
                         "ipc_ratio": [1.0 + 0.05 * i for i in range(12)]})
    path = root / "model.parquet"
    write_parquet(rows, path, metadata=meta)
    cwd = Path(os.getcwd())
    before, here = _files(root), set(os.listdir(cwd))
    try:
        loaded = load_model(path)
    except InputError as err:
        text = str(err)
        assert text.startswith(f"{path}: ") and "\n" not in text, text
        named = [k for k in (*META_KEYS, "model family", "model format version", "column",
                             "perfcast model") if k in text]
        assert named, text  # the key (or the column or format it names) is in the message
        event(f"refused: {named[0]}")
    else:
        assert loaded["family"] in FAMILIES
        assert np.isfinite(loaded["model"].predict(np.array([[2.5]]))).all()
        event(f"loaded: {loaded['family']}")
    assert _files(root) == before and set(os.listdir(cwd)) == here  # nothing written
