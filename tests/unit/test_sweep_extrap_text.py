"""Extra-P's text input format: every way of writing parameters and points, regions and
metrics, comments, and clear errors naming the line."""

from __future__ import annotations

import pytest

from perfcast.errors import InputError
from perfcast.sweep.extrap_text import extrap_parameters, read_extrap_text, select_series

ONE = """# a comment
PARAMETER p

POINTS 2 4
POINTS ( 8 )

REGION main
METRIC time
DATA 1.0 1.2 0.8
DATA 2.0
DATA\t4.0\t4.2
METRIC bytes
DATA 10
DATA 20
DATA 40
"""

TWO = """PARAMETER p s
POINTS ( 2 10 ) ( 4 10 )
POINTS ( 2 20 )( 4 20 )
REGION compute
DATA 1 2
DATA 3
DATA 5
DATA 7
REGION io
DATA 0.5
DATA 0.6
DATA 0.7
DATA 0.8
"""


def write(tmp_path, text, name="in.txt"):
    f = tmp_path / name
    f.write_text(text)
    return f


def test_one_parameter_bare_and_parenthesised_points_regions_and_metrics(tmp_path):
    df = read_extrap_text(write(tmp_path, ONE))
    assert extrap_parameters(df) == ["p"]
    time = select_series(df, "in.txt", None, "time")
    assert time[["p", "repetition", "value"]].values.tolist() == [
        [2, 0, 1.0], [2, 1, 1.2], [2, 2, 0.8], [4, 0, 2.0], [8, 0, 4.0], [8, 1, 4.2]]
    assert select_series(df, "in.txt", "main", "bytes")["value"].tolist() == [10, 20, 40]
    assert time["point"].tolist()[:1] == ["p~2"]


def test_two_parameters_on_one_line_and_several_points_per_line(tmp_path):
    df = read_extrap_text(write(tmp_path, TWO))
    assert extrap_parameters(df) == ["p", "s"]
    comp = select_series(df, "in.txt", "compute", None)
    assert comp[["p", "s", "value"]].values.tolist() == [
        [2, 10, 1], [2, 10, 2], [2, 20, 5], [4, 10, 3], [4, 20, 7]]
    io = select_series(df, "in.txt", "io", None)
    assert io[["p", "s", "value"]].values.tolist() == [
        [2, 10, 0.5], [2, 20, 0.7], [4, 10, 0.6], [4, 20, 0.8]]


FEW = "PARAMETER p\nPOINTS 2 4 8 16 32\nREGION main\nMETRIC time\n"


@pytest.mark.parametrize("text, line, words", [
    # 3 DATA lines for 5 POINTS: p = 16 and 32 were left out, unnoticed
    (FEW + "DATA 3 3.1\nDATA 5 5.1\nDATA 9 9.1\n", 7,
     ["'main' metric 'time' ends after 3 DATA line(s) for 5 POINTS", "(p=16), (p=32)"]),
    # an empty DATA line: p = 4 had no runs, the later lines kept their points
    (FEW + "DATA 3 3.1\nDATA\nDATA 5 5.1\nDATA 9 9.1\nDATA 17 17.1\n", 6,
     ["DATA line of point (p=4) of region 'main' metric 'time' holds no value"]),
    (FEW + "DATA 3\nDATA 5\nDATA 9\nDATA 17\nDATA 33\nMETRIC bytes\nDATA 1\n", 11,
     ["'main' metric 'bytes' ends after 1 DATA line(s)", "(p=4), (p=8), (p=16) and 1 more"]),
    ("PARAMETER p s\nPOINTS ( 2 10 ) ( 4 10 )\nREGION a\nDATA 1\nREGION b\nDATA 1\nDATA 2\n",
     4, ["region 'a' metric '' ends after 1 DATA line(s) for 2 POINTS", "(p=4, s=10)"]),
])
def test_a_series_missing_a_point_or_an_empty_data_line_is_refused(tmp_path, text, line,
                                                                   words):
    """Extra-P refuses a call path and metric that is not measured at every point; the old
    reader left such points out of the table."""
    f = write(tmp_path, text)
    with pytest.raises(InputError) as err:
        read_extrap_text(f)
    assert err.value.row == line and str(err.value).startswith(f"{f}, line {line}: ")
    for w in words:
        assert w in str(err.value)


def test_a_region_and_metric_line_between_series_is_not_a_series(tmp_path):
    text = ("PARAMETER p\nPOINTS 2 4\nMETRIC time\nREGION a\nDATA 1\nDATA 2\n"
            "REGION b\nMETRIC bytes\nDATA 3\nDATA 4\n")
    df = read_extrap_text(write(tmp_path, text))
    assert df[["region", "metric", "value"]].values.tolist() == [
        ["a", "time", 1], ["a", "time", 2], ["b", "bytes", 3], ["b", "bytes", 4]]


def test_several_regions_need_a_choice(tmp_path):
    df = read_extrap_text(write(tmp_path, TWO))
    with pytest.raises(InputError, match=r"2 regions \['compute', 'io'\].*--region"):
        select_series(df, "in.txt", None, None)
    with pytest.raises(InputError, match="no region 'x' \\(--region\\)"):
        select_series(df, "in.txt", "x", None)


@pytest.mark.parametrize("text, line, match", [
    ("PARAMETER p\nPOINTS 1 2\nDATA 1\nDATA 2\nDATA 3\n", 5, "only 2 POINTS"),
    ("PARAMETER p\nPOINTS 1 2\nDATA 1 x\n", 3, "non-number"),
    ("PARAMETER p q\nPOINTS ( 1 2 ) ( 3 )\n", 2, "1 coordinate"),
    ("PARAMETER p q\nPOINTS 1 2\n", 2, "without parentheses"),
    ("POINTS 1 2\n", 1, "before any PARAMETER"),
    ("PARAMETER p\nPOINTS 1\nCALLPATH main\n", 3, "unknown field 'CALLPATH'"),
    ("PARAMETER p\nPOINTS 1\nDATA nan\n", 3, "finite"),
    ("PARAMETER p p\n", 1, "named twice"),
])
def test_bad_input_names_the_line(tmp_path, text, line, match):
    f = write(tmp_path, text)
    with pytest.raises(InputError, match=match) as err:
        read_extrap_text(f)
    assert err.value.row == line and str(f) in str(err.value)


def test_no_data_is_refused(tmp_path):
    with pytest.raises(InputError, match="no DATA values"):
        read_extrap_text(write(tmp_path, "PARAMETER p\nPOINTS 1 2\n"))


def _repetition_parameter(tmp_path):
    """A parameter named ``repetition`` (values 1..5) beside p; value = p * repetition, two
    repetitions each: the old reader overwrote the parameter with the repetition index (0, 1)
    and perfcast fit answered value = 3 p."""
    ps, ns = (2, 4, 8, 16, 32), (1, 2, 3, 4, 5)
    lines = ["PARAMETER p repetition",
             "POINTS " + " ".join(f"( {p} {n} )" for n in ns for p in ps),
             "REGION main", "METRIC time"]
    lines += [f"DATA {p * n} {p * n}" for n in ns for p in ps]
    return write(tmp_path, "\n".join(lines) + "\n")


@pytest.mark.parametrize("name", ["value", "point", "repetition", "region", "metric"])
def test_a_parameter_named_like_a_column_of_the_reader_is_refused(tmp_path, name):
    f = write(tmp_path, f"# law\nPARAMETER p\nPARAMETER {name}\nPOINTS ( 1 2 )\nDATA 1\n")
    with pytest.raises(InputError, match=f"parameter name '{name}' is reserved") as err:
        read_extrap_text(f)
    assert err.value.row == 3 and str(f) in str(err.value)
    assert "region, metric, repetition, value, point" in str(err.value)


def test_fit_refuses_a_parameter_the_reader_would_overwrite(tmp_path, capsys):
    from perfcast.cli import main

    f = _repetition_parameter(tmp_path)
    assert main(["fit", str(f), "--predict", "p=64"]) == 2
    err = capsys.readouterr().err
    assert f"{f}, line 1: parameter name 'repetition' is reserved" in err


def test_fit_refuses_a_file_with_fewer_data_lines_than_points(tmp_path, capsys):
    """3 DATA lines for 5 POINTS: perfcast fit modelled 3 configurations without a note."""
    from perfcast.cli import main

    f = write(tmp_path, FEW + "DATA 3 3.1\nDATA 5 5.1\nDATA 9 9.1\n")
    assert main(["fit", str(f)]) == 2
    assert f"{f}, line 7: region 'main' metric 'time' ends after 3" in capsys.readouterr().err
