"""Extra-P's JSON input formats (the current one and the older one by ids): the same table as
the text format for the same measurements, ``perfcast fit FILE.json`` recovering a known law,
and clear errors naming the key."""

from __future__ import annotations

import json

import numpy as np
import pytest

from perfcast.errors import InputError
from perfcast.sweep.extrap_json import read_extrap_json
from perfcast.sweep.extrap_text import read_extrap_text

#: two parameters, two regions, repetitions of different counts: (p, s) -> values
COMPUTE = {(2, 10): [1.0, 2.0], (4, 10): [3.0], (2, 20): [5.0], (4, 20): [7.0, 7.5, 8.0]}
TEXT = """PARAMETER p s
POINTS ( 2 10 ) ( 4 10 ) ( 2 20 ) ( 4 20 )
REGION compute
METRIC time
DATA 1 2
DATA 3
DATA 5
DATA 7 7.5 8
REGION io
METRIC time
DATA 0.5
DATA 0.6
DATA 0.7
DATA 0.8
"""
IO = {(2, 10): [0.5], (4, 10): [0.6], (2, 20): [0.7], (4, 20): [0.8]}


def current_layout():
    """The measurements of TEXT in Extra-P's current JSON layout."""
    return {"parameters": ["p", "s"], "measurements": {
        region: {"time": [{"point": list(pt), "values": v} for pt, v in data.items()]}
        for region, data in (("compute", COMPUTE), ("io", IO))}}


def id_layout():
    """The measurements of TEXT in Extra-P's older JSON layout (ids; one value per entry)."""
    pts = list(COMPUTE)
    doc = {"parameters": [{"id": 1, "name": "p"}, {"id": 2, "name": "s"}],
           "callpaths": [{"id": 1, "name": "compute"}, {"id": 2, "name": "io"}],
           "metrics": [{"id": 1, "name": "time"}],
           "coordinates": [{"id": k + 1, "parameter_value_pairs": [
               {"parameter_id": 2, "parameter_value": pt[1]},
               {"parameter_id": 1, "parameter_value": pt[0]}]} for k, pt in enumerate(pts)],
           "measurements": []}
    for cp, data in ((1, COMPUTE), (2, IO)):
        for pt, values in data.items():
            for v in values:
                doc["measurements"].append({"id": len(doc["measurements"]) + 1,
                                            "callpath_id": cp, "metric_id": 1,
                                            "coordinate_id": pts.index(pt) + 1, "value": v})
    return doc


def write(tmp_path, doc, name="in.json"):
    f = tmp_path / name
    f.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return f


@pytest.mark.parametrize("layout", [current_layout, id_layout])
def test_both_json_layouts_read_as_the_text_format_of_the_same_measurements(tmp_path, layout):
    txt = tmp_path / "in.txt"
    txt.write_text(TEXT)
    want = read_extrap_text(txt)
    got = read_extrap_json(write(tmp_path, layout()))
    assert got.columns.tolist() == want.columns.tolist()
    assert got.to_dict(orient="records") == want.to_dict(orient="records")
    sub = got[(got["region"] == "compute") & (got["p"] == 4) & (got["s"] == 20)]
    assert sub["value"].tolist() == [7.0, 7.5, 8.0] and sub["repetition"].tolist() == [0, 1, 2]


def test_fit_of_a_json_input_recovers_a_known_law(tmp_path, capsys):
    """t = 3 + 0.5 p log2 p, noise-free at p = 2..64: perfcast fit FILE.json finds the law
    and predicts p = 128 exactly."""
    from perfcast.cli import main

    ps = [2, 4, 8, 16, 32, 64]
    doc = {"parameters": ["p"], "measurements": {"main": {"time": [
        {"point": [p], "values": [3 + 0.5 * p * np.log2(p)] * 3} for p in ps]}}}
    assert main(["fit", str(write(tmp_path, doc)), "--predict", "p=128"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["x"] == ["p"] and out["y"] == "value"
    assert out["predictions"][0]["mean"] == pytest.approx(3 + 0.5 * 128 * 7, rel=1e-6)
    assert "log2(p)" in out["formula"]


@pytest.mark.parametrize("doc, words", [
    ("{not json", ["not JSON", "line 1"]),
    ({"parameters": ["p"]}, ["no 'parameters' and 'measurements'"]),
    ({"parameters": ["p", "p"], "measurements": {"r": {"m": []}}}, ["'p' named twice"]),
    ({"parameters": ["p"], "measurements": {"r": {"m": [{"point": [1, 2], "values": [1]}]}}},
     ["measurements['r']['m'][0].point", "1 coordinate(s)"]),
    ({"parameters": ["p"], "measurements": {"r": {"m": [{"point": [1], "values": ["x"]}]}}},
     ["measurements['r']['m'][0].values holds 'x'", "a finite number"]),
    ({"parameters": ["p"], "measurements": {"r": {"m": []}}}, ["no measured values"]),
    # a point with no value: its configuration was left out of the table, unnoticed
    ({"parameters": ["p"], "measurements": {"m": {"t": [
        {"point": [2], "values": [3]}, {"point": [4], "values": []},
        {"point": [8], "values": [9]}]}}},
     ["measurements['m']['t'][1].values is empty: point (p=4) has no value"]),
    ({"parameters": [{"id": 1, "name": "p"}], "callpaths": [{"id": 1, "name": "r"}],
      "metrics": [{"id": 1, "name": "m"}],
      "coordinates": [{"id": 1, "parameter_value_pairs": [
          {"parameter_id": 1, "parameter_value": 2}]}],
      "measurements": [{"callpath_id": 1, "metric_id": 1, "coordinate_id": 7, "value": 1}]},
     ["measurements[0].coordinate_id 7 is unknown", "one of [1]"]),
])
def test_bad_json_inputs_are_refused_naming_the_file_and_key(tmp_path, doc, words):
    f = write(tmp_path, doc)
    with pytest.raises(InputError) as exc:
        read_extrap_json(f)
    text = str(exc.value)
    assert text.startswith(str(f))
    for w in words:
        assert w in text


@pytest.mark.parametrize("name", ["value", "point", "repetition", "region", "metric"])
def test_a_parameter_named_like_a_column_of_the_reader_is_refused_in_both_layouts(tmp_path,
                                                                                  name):
    """The table's own column would overwrite the parameter's values (a parameter
    ``repetition`` became the repetition index): refused, naming the key."""
    cur = current_layout()
    cur["parameters"] = ["p", name]
    with pytest.raises(InputError) as exc:
        read_extrap_json(write(tmp_path, cur, "cur.json"))
    assert f"parameters[1]: parameter name '{name}' is reserved" in str(exc.value)
    old = id_layout()
    old["parameters"][1]["name"] = name
    with pytest.raises(InputError) as exc:
        read_extrap_json(write(tmp_path, old, "old.json"))
    assert f"parameters id 2 name: parameter name '{name}' is reserved" in str(exc.value)
    assert "region, metric, repetition, value, point" in str(exc.value)


def test_a_declared_coordinate_a_series_does_not_measure_is_refused(tmp_path):
    """The older layout declares its coordinates, as the text format its POINTS: a call path
    and metric without a value at one of them (Extra-P's own input_11.JSON, refused by
    Extra-P) was read as if the coordinate did not exist."""
    doc = id_layout()
    doc["measurements"] = [m for m in doc["measurements"]
                           if not (m["callpath_id"] == 2 and m["coordinate_id"] == 3)]
    with pytest.raises(InputError) as exc:
        read_extrap_json(write(tmp_path, doc))
    assert ("callpath 'io' metric 'time' has no measurement at coordinates id 3 (p=2, s=20) "
            "(1 of 4 coordinates unmeasured)") in str(exc.value)
