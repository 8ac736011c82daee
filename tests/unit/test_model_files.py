"""The model stage's rules on small hand-made tables whose right answers are known: what train,
predict and align write, and what they refuse (naming the file, the row or key, and the value).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from perfcast.errors import InputError
from perfcast.io import parquet_metadata, write_parquet
from perfcast.model.rules import train_files
from perfcast.model.settings import KnnSettings, TrainSettings
from perfcast.settings import from_section


def run(ipc: float, n: int = 3, *, cycles_factor: float = 1.0) -> pd.DataFrame:
    """``n`` intervals of 1e9 instructions at IPC ``ipc`` (cycles times ``cycles_factor``)."""
    return pd.DataFrame({"interval": range(n), "time": [0.1 * (k + 1) for k in range(n)],
                         "duration_s": 0.1, "instructions": 1e9,
                         "cycles": 1e9 / ipc * cycles_factor, "ipc": ipc / cycles_factor,
                         "instructions_cumulative_sum": [1e9 * (k + 1) for k in range(n)],
                         "x_pki": 2.0})


def train(tmp: Path, ratios: dict[str, float] | None = None,
          new_runs: dict[str, pd.DataFrame] | None = None, model: dict | None = None,
          trainset_meta: dict | None = None) -> Path:
    """A constant-ratio model of three benchmarks (1.2, 1.25, 1.3 times the old IPC); ``model``:
    the model section instead; ``trainset_meta``: the training set's metadata."""
    ratios = ratios or {"a": 1.2, "b": 1.25, "c": 1.3}
    old, new, rows = [], [], []
    for b, r in ratios.items():
        old.append(str(tmp / f"{b}.old.parquet"))
        new.append(str(tmp / f"{b}.new.parquet"))
        write_parquet(run(1.0), old[-1])
        write_parquet((new_runs or {}).get(b, run(r)), new[-1])
        rows.append(pd.DataFrame({"benchmark": b, "old_interval": [0, 1, 2],
                                  "new_interval": [0, 1, 2], "ipc_ratio": r, "x_pki": 2.0}))
    write_parquet(pd.concat(rows, ignore_index=True), tmp / "train.parquet", trainset_meta)
    settings = TrainSettings(from_section(KnnSettings, model or {"families": ["constant"]},
                                          "model"), tuple(ratios), None)
    train_files(settings, str(tmp / "train.parquet"), old, new, str(tmp / "model.parquet"),
                str(tmp / "model.json"))
    return tmp / "model.parquet"


def test_train_refuses_a_calibration_score_predict_would_refuse(tmp_path):
    """A benchmark whose new run measured 1e160 times the cycles its IPC says (a log error of
    -368, beyond the 345 a model file may hold) is refused by train, naming its table, rather
    than written into a model file that every prediction then refuses."""
    far = run(1.3, cycles_factor=1e160)
    with pytest.raises(InputError, match=r"c\.old\.parquet: benchmark c: its total cycles "
                                         r"predicted without it is exp\(-368\.") as err:
        train(tmp_path, new_runs={"c": far})
    assert "magnitude at most 345.4" in str(err.value)
    assert not (tmp_path / "model.parquet").exists()


@pytest.mark.parametrize("simulated", [True, False])
def test_train_says_the_model_of_simulated_counters_is_simulated(tmp_path, simulated):
    """The model file and its card say what the training set says: simulated or not."""
    model = train(tmp_path, trainset_meta={"simulated": simulated})
    assert parquet_metadata(model)["simulated"] is simulated
    assert json.loads((tmp_path / "model.json").read_text())["simulated"] is simulated


def test_the_toy_model_predicts_its_known_answer(tmp_path):
    """Ten intervals of 1e9 instructions at IPC 1, ratio 1.25: 8e9 cycles, 4 s at 2 GHz."""
    from perfcast.model.rules import predict_files
    from perfcast.model.settings import PredictRunSettings, PredictSettings

    model = train(tmp_path)
    write_parquet(run(1.0, 10), tmp_path / "old.parquet")
    settings = PredictRunSettings(from_section(PredictSettings, {}, "predict"), "old", 2.0)
    info = predict_files(settings, str(model), str(tmp_path / "old.parquet"),
                         str(tmp_path / "p.parquet"), str(tmp_path / "p.json"))
    assert info["intervals"] == 10
    assert info["predicted_new_total_cycles"] == pytest.approx(8e9)
    assert info["predicted_new_runtime_s"] == pytest.approx(4.0)
    assert json.loads((tmp_path / "p.json").read_text())["predicted_new_runtime_s"] == \
        pytest.approx(4.0)


def test_a_shrinking_cumulative_count_is_named_in_plain_numbers(tmp_path):
    """The refusal prints the two counts as numbers (1000000000.0), not numpy's reprs
    (np.float64(1000000000.0))."""
    from perfcast.model.checks import check_alignable

    t = run(1.0, 4)
    t.loc[2, "instructions_cumulative_sum"] = 1e9
    with pytest.raises(InputError) as err:
        check_alignable(t, "old.parquet")
    assert str(err.value) == ("old.parquet: cumulative instructions 1000000000.0 in interval 2 "
                              "do not exceed the previous interval's 2000000000.0 (expected "
                              "strictly growing cumulative instructions)")


def _predict(tmp: Path, table: pd.DataFrame, clock: float | None = 2.0) -> dict:
    from perfcast.model.rules import predict_files
    from perfcast.model.settings import PredictRunSettings, PredictSettings

    model = tmp / "model.parquet" if (tmp / "model.parquet").exists() else train(tmp)
    write_parquet(table, tmp / "old.parquet")
    settings = PredictRunSettings(from_section(PredictSettings, {}, "predict"), "old", clock)
    return predict_files(settings, str(model), str(tmp / "old.parquet"),
                         str(tmp / "p.parquet"), str(tmp / "p.json"))


def test_predict_refuses_two_runs_concatenated_as_align_does(tmp_path):
    """One run's ten intervals written twice predicted 20 intervals and 8 s at 2 GHz, twice the
    4 s of the run, where align refuses the same table: both refuse it now, naming the file, the
    repeated interval and its rows."""
    twice = pd.concat([run(1.0, 10)] * 2, ignore_index=True)
    with pytest.raises(InputError, match=r"old\.parquet: interval 0 appears in rows 1 and 11 "
                                         r"of 20 \(expected each interval once"):
        _predict(tmp_path, twice)
    assert not (tmp_path / "p.parquet").exists() and not (tmp_path / "p.json").exists()


def test_predict_refuses_a_shrinking_cumulative_count(tmp_path):
    t = run(1.0, 10)
    t.loc[5, "instructions_cumulative_sum"] = 1e9
    with pytest.raises(InputError, match=r"old\.parquet: cumulative instructions 1000000000\.0 "
                                         r"in interval 5 do not exceed"):
        _predict(tmp_path, t)


def test_align_refuses_repeated_intervals_even_with_growing_counts(tmp_path):
    """Interval labels repeated over a growing cumulative count: the pairs would name one old
    interval for two (the training set joins on the label)."""
    from perfcast.model.checks import check_alignable

    t = run(1.0, 4).assign(interval=[0, 1, 1, 2])
    with pytest.raises(InputError, match=r"t\.parquet: interval 1 appears in rows 2 and 3 of 4"):
        check_alignable(t, "t.parquet")


def test_a_missing_interval_label_is_named_by_its_row():
    from perfcast.model.checks import check_alignable

    t = run(1.0, 4).assign(interval=[0.0, 1.0, float("nan"), 3.0])
    with pytest.raises(InputError, match=r"t\.parquet: interval label nan in row 3"):
        check_alignable(t, "t.parquet")


def test_an_ipc_column_that_disagrees_with_its_counts_is_refused(tmp_path):
    """IPC 3.0 in an interval of 1e9 instructions and 1e9 cycles: predict used it and gave a
    third of the cycles; align and predict now refuse it, naming the file, the interval and
    both values."""
    t = run(1.0, 10)
    t.loc[3, "ipc"] = 3.0
    with pytest.raises(InputError, match=r"old\.parquet: IPC 3\.0 in interval 3 \(row 4\) is "
                                         r"not instructions / cycles = 1\.0"):
        _predict(tmp_path, t)


def test_an_ipc_column_rounded_to_four_digits_is_accepted(tmp_path):
    t = run(1.0, 10).assign(cycles=1e9 / 1.23456, ipc=1.235)
    info = _predict(tmp_path, t, clock=None)
    assert info["predicted_new_total_cycles"] == pytest.approx(1e10 / 1.235 / 1.25)


# ------------------------------------------------ a model file's metadata is data, checked by key

#: the hyper-parameters save_model writes for each family (a valid model file's ``params``)
GOOD_PARAMS = {"constant": {"ratio": 1.25}, "ridge": {"ridge__regressor__alpha": 1.0},
               "knn": {"knn__n_neighbors": 3, "knn__weights": "distance"}}


def _model_meta(family: str) -> dict:
    """The metadata save_model writes for a ``family`` model of one feature ``x_pki``."""
    from perfcast.model.modelfile import MODEL_FORMAT, MODEL_FORMAT_VERSION

    return {"format": MODEL_FORMAT, "format_version": MODEL_FORMAT_VERSION, "family": family,
            "features": ["x_pki"], "target": "ipc_ratio", "params": dict(GOOD_PARAMS[family]),
            "log1p": True, "calibration": {"cycles": {"a": 0.01, "b": -0.02},
                                           "runtime": {"a": 0.01, "b": -0.02},
                                           "coverage": 0.9},
            "versions": {"scikit-learn": "1.5.0"}}


def _write_model(tmp: Path, meta: dict) -> Path:
    """A model file of twelve rows (the ratio grows with ``x_pki``) with ``meta``."""
    rows = pd.DataFrame({"x_pki": [float(i) for i in range(12)],
                         "ipc_ratio": [1.0 + 0.05 * i for i in range(12)]})
    path = tmp / "crafted" / "model.parquet"
    write_parquet(rows, path, metadata=meta)
    return path


def _pipeline_params(family: str) -> list[str]:
    """Every constructor argument scikit-learn's estimators of ``family``'s pipeline take (its
    ``get_params(deep=True)``), but the hyper-parameters save_model writes."""
    from perfcast.model.families import ridge_pipeline
    from perfcast.model.knn import make_pipeline

    pipe = make_pipeline(True) if family == "knn" else ridge_pipeline()
    return sorted(k for k in pipe.get_params(deep=True) if k not in GOOD_PARAMS[family])


#: values a crafted file could give an argument that names a path, a cache, a callable or a
#: number of jobs (JSON holds no callable: a string names one, or write_parquet's text of one)
HOSTILE_VALUES = ["{tmp}/cache", "builtins.eval", "os.system", -1, 8, True, None]


@pytest.mark.parametrize("family", ["constant", "ridge", "knn"])
def test_a_model_file_of_each_family_with_its_own_params_loads(tmp_path, family):
    from perfcast.model.modelfile import load_model

    loaded = load_model(_write_model(tmp_path, _model_meta(family)))
    assert loaded["family"] == family and loaded["features"] == ["x_pki"]
    assert np.isfinite(loaded["model"].predict(np.array([[2.5]]))).all()


@pytest.mark.parametrize("simulated", [True, False])
def test_a_model_file_says_whether_its_counters_were_simulated(tmp_path, simulated):
    """``simulated`` travels in the model's metadata (train_files writes it from the training
    set's) and a file with it loads as one without."""
    from perfcast.model.modelfile import load_model

    meta = {**_model_meta("knn"), "simulated": simulated}
    path = _write_model(tmp_path, meta)
    assert parquet_metadata(path)["simulated"] is simulated
    assert load_model(path)["family"] == "knn"


@pytest.mark.parametrize("family, key", [(f, k) for f in ("ridge", "knn")
                                         for k in _pipeline_params(f)]
                         + [("constant", k) for k in ("memory", "n_jobs", "func")])
def test_no_constructor_argument_of_the_pipeline_is_taken_from_a_model_file(tmp_path, family,
                                                                           key):
    """A model file that sets any argument of the pipeline but the hyper-parameters save_model
    writes (``memory``: a joblib cache in a folder the file names, whose planted pickle the
    next predict would load; ``knn__metric``, ``knn__weights`` as a callable's name,
    ``ridge__func``, ``log1p__func``, ``knn__n_jobs``, ``verbose``...) is refused naming the
    key, with nothing written; ``set_params`` took them all."""
    from perfcast.model.modelfile import load_model

    before = set(tmp_path.rglob("*"))
    for value in HOSTILE_VALUES:
        meta = _model_meta(family)
        meta["params"][key] = value.format(tmp=tmp_path) if isinstance(value, str) else value
        path = _write_model(tmp_path, meta)
        written = set(tmp_path.rglob("*"))
        with pytest.raises(InputError, match=rf"{re.escape(str(path))}: model metadata params "
                                             rf"has an unknown key '{re.escape(key)}'"):
            load_model(path)
        assert set(tmp_path.rglob("*")) == written  # no cache, no file of any name
    assert not (tmp_path / "cache").exists() and before <= written


def _damaged_params():
    """(family, params, the key the refusal names) of a wrong type or out of range."""
    cases = []
    for k in (0, -3, True, 2.0, "3", 13, 10**30, None, [3]):
        cases.append(("knn", {"knn__n_neighbors": k, "knn__weights": "uniform"},
                      "params.knn__n_neighbors"))
    for w in ("Uniform", "builtins.eval", 1, None, ["uniform"], {"f": "g"}):
        cases.append(("knn", {"knn__n_neighbors": 3, "knn__weights": w}, "params.knn__weights"))
    for a in (0.0, -1.0, float("nan"), float("inf"), 1e300, True, "1.0", None, [1.0]):
        cases.append(("ridge", {"ridge__regressor__alpha": a}, "params.ridge__regressor__alpha"))
    for r in (0.0, -1.25, float("nan"), float("inf"), 1e300, 1e-300, False, "1.25", None):
        cases.append(("constant", {"ratio": r}, "params.ratio"))
    cases += [("knn", {"knn__n_neighbors": 3}, "params lacks the key 'knn__weights'"),
              ("ridge", {}, "params lacks the key 'ridge__regressor__alpha'"),
              ("constant", {"ridge__regressor__alpha": 1.0}, "params has an unknown key"),
              ("ridge", ["ridge__regressor__alpha", 1.0], "model metadata params"),
              ("knn", "knn__n_neighbors=3", "model metadata params")]
    return cases


@pytest.mark.parametrize("family, params, needle", _damaged_params())
def test_a_hyper_parameter_of_the_wrong_type_or_range_is_refused_naming_it(tmp_path, family,
                                                                          params, needle):
    """n_neighbors 0, 13 of 12 rows or True (a bool is no count), a negative, NaN or 1e300
    alpha, a ratio of 0 or 1e300 are refused naming the key and the value, not passed to a
    constructor whose error (or silence) names neither."""
    from perfcast.model.modelfile import load_model

    meta = _model_meta(family)
    meta["params"] = params
    path = _write_model(tmp_path, meta)
    with pytest.raises(InputError, match=rf"{re.escape(str(path))}: .*{re.escape(needle)}"):
        load_model(path)


@pytest.mark.parametrize("key, value, needle", [
    ("features", "x_pki", "model metadata features 'x_pki'"),
    ("features", [], "model metadata features []"),
    ("features", ["x_pki"] * 1001, "model metadata features ['x_pki'"),
    ("features", [1.0], "model metadata features[0] 1.0"),
    ("features", [""], "model metadata features[0] ''"),
    ("features", ["x\npki"], "model metadata features[0] 'x\\npki'"),
    ("features", ["x" * 201], "model metadata features[0] 'xxx"),
    ("features", ["ipc_ratio"], "model metadata features[0] 'ipc_ratio'"),
    ("features", ["x_pki", "x_pki"], "model metadata features name 'x_pki' twice"),
    ("target", "../../etc/passwd", "model metadata target '../../etc/passwd'"),
    ("target", ["ipc_ratio"], "model metadata target ['ipc_ratio']"),
    ("family", ["knn"], "model family ['knn']"),
    ("family", "Pipeline", "model family 'Pipeline'"),
    ("log1p", "yes", "model metadata log1p 'yes'"),
    ("log1p", 1, "model metadata log1p 1"),
    ("format_version", True, "model format version True"),
    ("versions", {"numpy": 2}, "model metadata versions {'numpy': 2}"),
    ("versions", {"v": "\x1b[2J"}, "model metadata versions"),
    ("versions", ["1.5"], "model metadata versions ['1.5']"),
    ("simulated", "yes", "model metadata simulated 'yes'"),
    ("simulated", 1, "model metadata simulated 1"),
])
def test_the_other_metadata_keys_are_checked_as_data(tmp_path, key, value, needle):
    """features, target, family, log1p, format_version and versions of the wrong type, length
    or content are refused naming the key, before any column is read or estimator built."""
    from perfcast.model.modelfile import load_model

    meta = _model_meta("knn")
    meta[key] = value
    path = _write_model(tmp_path, meta)
    with pytest.raises(InputError) as err:
        load_model(path)
    assert str(err.value).startswith(f"{path}: {needle}"), str(err.value)


def test_predict_with_a_model_file_naming_a_cache_writes_nothing(tmp_path, capsys):
    """The review's attack end to end: a model file whose params set the pipeline's memory to
    a folder; perfcast predict refuses it naming the key, and creates no cache folder."""
    from perfcast.cli import main

    meta = _model_meta("knn")
    meta["params"]["memory"] = str(tmp_path / "cache")
    path = _write_model(tmp_path, meta)
    write_parquet(run(1.0, 10), tmp_path / "old.parquet")
    capsys.readouterr()
    code = main(["predict", str(tmp_path / "old.parquet"), "--model", str(path), "-o",
                 str(tmp_path / "p.parquet")])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "Traceback" not in err
    assert f"{path}: model metadata params has an unknown key 'memory'" in err
    assert not (tmp_path / "cache").exists() and not (tmp_path / "p.parquet").exists()


def test_the_config_takes_no_ridge_penalty_a_model_file_could_not_hold():
    """model.ridge_alphas has the schema maximum MAX_RIDGE_ALPHA that a model file's alpha is
    checked against: a larger one is refused with the config, not after training."""
    from perfcast.model.settings import MAX_RIDGE_ALPHA

    from_section(KnnSettings, {"ridge_alphas": [MAX_RIDGE_ALPHA]}, "model")
    with pytest.raises(InputError,
                       match=r"ridge_alphas\.0: 10000000000000\.0 is greater than the maximum"):
        from_section(KnnSettings, {"ridge_alphas": [1e13]}, "model")


#: the KNN a candidate, with a k of 50 where the training folds hold 3 or 6 rows
TOO_MANY_NEIGHBOURS = {"families": ["constant", "knn"], "n_neighbors": [1, 50], "cv_folds": 2}


def test_train_refuses_more_neighbours_than_a_training_fold_has(tmp_path):
    """Three benchmarks of three rows in two folds: the smallest training fold has 3 rows, so
    k = 50 was silently clipped to 3 (the card named a grid the search never fitted); it is
    refused naming the key, the value, the limit and the training rows, and nothing is
    written."""
    with pytest.raises(InputError) as err:
        train(tmp_path, model=TOO_MANY_NEIGHBOURS)
    assert str(err.value) == (
        f"{tmp_path / 'train.parquet'}: model.n_neighbors 50 exceeds the 3 rows of the smallest "
        "training fold of the KNN's search (9 training rows, 3 benchmarks, model.cv_folds 2) "
        "(expected model.n_neighbors of at most 3 (or more training rows, fewer "
        "model.cv_folds, or knn not among the families))")
    assert not (tmp_path / "model.parquet").exists()
    train(tmp_path, model=TOO_MANY_NEIGHBOURS | {"n_neighbors": [1, 3]})  # 3 fits


def test_evaluate_refuses_more_neighbours_than_its_inner_folds_have(tmp_path):
    """The evaluation's searches run without the held-out benchmark: two benchmarks of three
    rows, a training fold of 3: k = 50 is refused naming the evaluation's folds."""
    from perfcast.model.rules import evaluate_files
    from perfcast.model.settings import EvaluateSettings

    train(tmp_path)
    settings = EvaluateSettings(from_section(KnnSettings, TOO_MANY_NEIGHBOURS, "model"),
                                ("a", "b", "c"), clock_new_ghz=None, simulated=False,
                                stable_not_run=None)
    out = [str(tmp_path / f"evaluation.{k}") for k in ("parquet", "csv", "md", "png")]
    with pytest.raises(InputError, match=r"train\.parquet: model\.n_neighbors 50 exceeds the 3 "
                                         r"rows of the smallest training fold of the "
                                         r"leave-one-benchmark-out evaluation's searches"):
        evaluate_files(settings, str(tmp_path / "train.parquet"),
                       [str(tmp_path / f"{b}.old.parquet") for b in "abc"],
                       [str(tmp_path / f"{b}.new.parquet") for b in "abc"], *out, phases=None)
    assert not any(Path(p).exists() for p in out)


def test_the_config_refuses_a_neighbour_count_beyond_the_schema_maximum():
    with pytest.raises(InputError, match=r"n_neighbors\.0: 100000 is greater than the maximum "
                                         r"of 10000"):
        from_section(KnnSettings, {"n_neighbors": [100000]}, "model")
