"""The model stage's rules on small hand-made tables whose right answers are known: what train,
predict and align write, and what they refuse (naming the file, the row or key, and the value).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from perfcast.errors import InputError
from perfcast.io import write_parquet
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
          new_runs: dict[str, pd.DataFrame] | None = None) -> Path:
    """A constant-ratio model of three benchmarks (1.2, 1.25, 1.3 times the old IPC)."""
    ratios = ratios or {"a": 1.2, "b": 1.25, "c": 1.3}
    old, new, rows = [], [], []
    for b, r in ratios.items():
        old.append(str(tmp / f"{b}.old.parquet"))
        new.append(str(tmp / f"{b}.new.parquet"))
        write_parquet(run(1.0), old[-1])
        write_parquet((new_runs or {}).get(b, run(r)), new[-1])
        rows.append(pd.DataFrame({"benchmark": b, "old_interval": [0, 1, 2],
                                  "new_interval": [0, 1, 2], "ipc_ratio": r, "x_pki": 2.0}))
    write_parquet(pd.concat(rows, ignore_index=True), tmp / "train.parquet")
    settings = TrainSettings(from_section(KnnSettings, {"families": ["constant"]}, "model"),
                             tuple(ratios), None)
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
