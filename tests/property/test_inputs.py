"""Generated malformed and extreme inputs to every reader and sub-command.

Each run of a sub-command must end in one of two ways: exit 0 with output whose every number is
finite (JSON ``NaN``/``Infinity`` refused; ``null`` is the outputs' documented "not defined"), or
exit 2 with one line on stderr naming the file it read. Any other exception (a traceback) fails
the test with the generated input. The sub-commands run in this process (``perfcast.cli.main``),
on real files in a fresh directory per example.
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import event, example, given
from hypothesis import strategies as st

from perfcast.cli import main
from perfcast.io import read_parquet, write_parquet
from perfcast.model.rules import train_files
from perfcast.model.settings import KnnSettings, TrainSettings
from perfcast.model.tables import COUNTER_COLUMNS
from perfcast.settings import from_section

# ------------------------------------------------------------------------------- strategies

#: numbers a file may hold: ordinary, tiny, huge, zero, negative, non-finite
EXTREME = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1e-320, 1e-300, 1e150, 1.7e308, -1.7e308, 1e308]),
    st.floats(min_value=1e-3, max_value=1e4),
    st.integers(min_value=-(10**20), max_value=10**20).map(float),
)

#: a cell of a text table: a number as text, or something that is not one
CELL = st.one_of(
    EXTREME.map(repr), EXTREME.map(str),
    st.sampled_from(["", " ", "nan", "NaN", "inf", "-inf", "Infinity", "1e400", "-1e400",
                     "1,5", "0x10", "<not counted>", "<not supported>", "abc", '"', "\t",
                     "1\n", "\x00", "é", "1 2"]),
    st.text(max_size=8),
)

#: raw bytes of a damaged file: binary, text, truncated text
RAW = st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode))


# ------------------------------------------------------------------------------- the property


@pytest.fixture
def workdir() -> Iterator[Path]:
    """A directory for the test's examples (see :func:`fresh`)."""
    d = Path(tempfile.mkdtemp(prefix="perfcast-prop-"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


def fresh(workdir: Path) -> Path:
    """A new directory for one example (hypothesis runs many in one test call)."""
    return Path(tempfile.mkdtemp(dir=workdir))


def _no_constant(name: str) -> float:
    raise AssertionError(f"non-finite number {name} in the output")


def _finite_everywhere(obj: object) -> None:
    if isinstance(obj, dict):
        for v in obj.values():
            _finite_everywhere(v)
    elif isinstance(obj, list):
        for v in obj:
            _finite_everywhere(v)
    elif isinstance(obj, float):
        assert math.isfinite(obj), obj


def run_cli(capsys, argv: list[object], names: list[Path]) -> tuple[int, str]:
    """Run ``perfcast argv``: exit 0 with finite JSON (returned), or 2 with one line naming one
    of ``names``."""
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    event(f"{argv[0]} exit {code}")  # --hypothesis-show-statistics: how often each way ends
    if code == 0:
        if out.strip():
            _finite_everywhere(json.loads(out, parse_constant=_no_constant))
        return code, out
    assert code == 2, (code, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"perfcast {argv[0]}: error: "), err
    assert any(str(n) in lines[0] for n in names), (names, err)
    return code, out


def _write_lines(path: Path, cells: list[list[str]]) -> None:
    path.write_text("\n".join(",".join(r) for r in cells) + "\n")


# ---------------------------------------------------------------- warm-up readers and commands


@given(lines=st.lists(CELL, min_size=0, max_size=60))
def test_ci_and_edm_on_generated_readings(capsys, workdir, lines):
    workdir = fresh(workdir)
    f = workdir / "readings.txt"
    f.write_text("\n".join(lines))
    for command in ("ci", "edm"):
        run_cli(capsys, [command, f], [f])


@given(values=st.lists(EXTREME, min_size=30, max_size=80))
def test_ci_on_generated_numbers(capsys, workdir, values):
    workdir = fresh(workdir)
    f = workdir / "readings.txt"
    f.write_text("\n".join(repr(v) for v in values))
    code, out = run_cli(capsys, ["ci", f], [f])
    if code == 0:  # a result passes its invariants: the mean lies in its interval
        r = json.loads(out)
        assert r["lower"] is None or r["lower"] <= r["mean"] <= r["upper"]


@example(rows=[(str(w), repr(0.5 + 0.1 * w + 0.001 * (w % 3))) for w in range(1, 12)])
@given(rows=st.lists(st.tuples(CELL, CELL), min_size=0, max_size=40))
def test_wps_on_generated_rounds(capsys, workdir, rows):
    workdir = fresh(workdir)
    f = workdir / "rounds.csv"
    _write_lines(f, [["work", "duration_s"], *[list(r) for r in rows]])
    run_cli(capsys, ["wps", f], [f])


@given(raw=RAW)
def test_warmup_commands_on_damaged_bytes(capsys, workdir, raw):
    workdir = fresh(workdir)
    f = workdir / "damaged.txt"
    f.write_bytes(raw)
    for command in ("ci", "edm", "wps"):
        run_cli(capsys, [command, f], [f])


# ------------------------------------------------------------------------- sweep: fit, import


@given(rows=st.lists(st.tuples(CELL, CELL), min_size=0, max_size=30))
def test_fit_on_generated_tables(capsys, workdir, rows):
    workdir = fresh(workdir)
    f = workdir / "table.csv"
    _write_lines(f, [["x", "y"], *[list(r) for r in rows]])
    run_cli(capsys, ["fit", f, "--y", "y", "--x", "x"], [f])


@given(x=st.lists(EXTREME, min_size=3, max_size=30), data=st.data())
def test_fit_on_generated_numbers(capsys, workdir, x, data):
    workdir = fresh(workdir)
    y = data.draw(st.lists(EXTREME, min_size=len(x), max_size=len(x)))
    f = workdir / "table.csv"
    pd.DataFrame({"x": x, "y": y}).to_csv(f, index=False)
    run_cli(capsys, ["fit", f, "--y", "y", "--x", "x"], [f])


@example(timed=b"1.5 0.5 0.1 1 2\n")  # a valid run: imported
@given(timed=st.one_of(RAW, st.lists(CELL, min_size=0, max_size=7).map(
    lambda c: " ".join(c).encode())))
def test_sweep_import_on_generated_timings(capsys, workdir, timed):
    workdir = fresh(workdir)
    run = workdir / "arpe" / "1-2" / "1"
    run.mkdir(parents=True)
    (run / "APRE_timed.txt").write_bytes(timed)
    out = workdir / "t.csv"
    code, _ = run_cli(capsys, ["sweep-import", workdir / "arpe", "--parameters", "a", "b",
                               "-o", out], [run / "APRE_timed.txt", run, workdir / "arpe"])
    if code == 0:
        t = pd.read_csv(out)
        ok = t[t["status"] == "ok"]
        assert np.isfinite(ok["wall_s"]).all() and (ok["wall_s"] >= 0).all()


# ------------------------------------------------------------------------ sensitivity replay


@example(values=["10", "5", "3.4", "2.5"], cores=["1", "2", "3", "4"])  # valid: evaluated
@given(values=st.lists(CELL, min_size=0, max_size=8), cores=st.lists(CELL, min_size=0,
                                                                      max_size=8))
def test_sensitivity_eval_on_generated_tables(capsys, workdir, values, cores):
    workdir = fresh(workdir)
    f = workdir / "grid.csv"
    rows = [["p", c, "runtime_s", v] for c, v in zip(cores, values, strict=False)]
    _write_lines(f, [["program", "cpu_cores", "metric", "value"], *rows])
    run_cli(capsys, ["sensitivity-eval", "--data", f, "--program", "p", "--epsilon", "0.3"],
            [f])


@given(raw=RAW)
def test_sensitivity_eval_on_damaged_bytes(capsys, workdir, raw):
    workdir = fresh(workdir)
    f = workdir / "grid.csv"
    f.write_bytes(raw)
    run_cli(capsys, ["sensitivity-eval", "--data", f, "--program", "p", "--epsilon", "0.3"],
            [f])


# ------------------------------------------------------ counters: postprocess, align, predict

GOOD_PERF = [
    ["     0.100000000", "200000000", "", "instructions", "100000000", "100.00", "", ""],
    ["     0.100000000", "250000000", "", "cycles", "100000000", "100.00", "", ""],
    ["     0.100000000", "2600000", "", "l1d", "100000000", "100.00", "", ""],
    ["     0.200000000", "210000000", "", "instructions", "100000000", "100.00", "", ""],
    ["     0.200000000", "240000000", "", "cycles", "100000000", "100.00", "", ""],
    ["     0.200000000", "2500000", "", "l1d", "100000000", "100.00", "", ""],
]


@example(edits=[], cut=0)  # the intact file: post-processed
@given(edits=st.lists(st.tuples(st.integers(0, len(GOOD_PERF) - 1), st.integers(0, 7), CELL),
                      max_size=6), cut=st.integers(0, len(GOOD_PERF)))
def test_postprocess_on_damaged_perf_csv(capsys, workdir, edits, cut):
    workdir = fresh(workdir)
    rows = [list(r) for r in GOOD_PERF]
    for i, j, v in edits:
        rows[i][j] = v
    f = workdir / "group0.csv"
    _write_lines(f, rows[:cut] if cut else rows)
    out = workdir / "run.parquet"
    code, _ = run_cli(capsys, ["postprocess", f, "--events", "l1d", "-o", out], [f])
    assert code == 0 or edits or cut
    if code == 0:
        t = read_parquet(out)
        assert np.isfinite(t[["instructions", "cycles"]].to_numpy(dtype=float)).all()


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    """A model trained on a synthetic training set (ratio a known function of one counter)."""
    d = tmp_path_factory.mktemp("model")
    rng = np.random.default_rng(0)
    parts, old, new = [], [], []
    for b in ("a", "b", "c"):
        f1, f2 = rng.uniform(0, 10, 50), rng.uniform(0, 10, 50)
        ratio = 1 + 0.05 * f1
        parts.append(pd.DataFrame({"benchmark": b, "old_interval": np.arange(50),
                                   "new_interval": np.arange(50), "ipc_ratio": ratio,
                                   "f1_pki": f1, "f2_pki": f2}))
        instr = np.full(50, 1e8)
        run = {"interval": np.arange(50), "time": np.arange(1, 51) / 10,
               "duration_s": np.full(50, 0.1), "instructions": instr, "cycles": instr,
               "ipc": np.ones(50), "instructions_cumulative_sum": np.cumsum(instr),
               "f1_pki": f1, "f2_pki": f2}
        old.append(d / f"{b}.old.parquet")
        new.append(d / f"{b}.new.parquet")
        write_parquet(pd.DataFrame(run), old[-1])
        write_parquet(pd.DataFrame(run | {"cycles": instr / ratio, "ipc": ratio}), new[-1])
    write_parquet(pd.concat(parts, ignore_index=True), d / "train.parquet")
    settings = TrainSettings(
        from_section(KnnSettings, {"n_neighbors": [3], "cv_folds": 2}, "model"),
        benchmarks=("a", "b", "c"), clock_new_ghz=None)
    train_files(settings, str(d / "train.parquet"), [str(p) for p in old],
                [str(p) for p in new], str(d / "model.parquet"), str(d / "model.json"))
    return d / "model.parquet"


#: a run's columns as a real run has them (so the valid path is exercised too)
PLAUSIBLE = {"duration_s": st.floats(0.01, 1.0), "instructions": st.floats(1e6, 1e10),
             "cycles": st.floats(1e6, 1e10), "f1_pki": st.floats(0, 10),
             "f2_pki": st.floats(0, 10)}


def _table(data, n: int) -> pd.DataFrame:
    """A counter table of ``n`` intervals: each column plausible or extreme."""
    cols = {c: data.draw(st.lists(st.one_of(PLAUSIBLE[c], EXTREME) if data.draw(st.booleans())
                                  else PLAUSIBLE[c], min_size=n, max_size=n))
            for c in PLAUSIBLE}
    t = pd.DataFrame({"interval": np.arange(n), **cols})
    t["time"] = np.arange(1, n + 1) * 0.1
    with np.errstate(all="ignore"):
        t["ipc"] = t["instructions"] / t["cycles"]
        t["instructions_cumulative_sum"] = t["instructions"].cumsum()
    return t[[*COUNTER_COLUMNS, "f1_pki", "f2_pki"]]


@given(data=st.data(), n=st.integers(1, 12), clock=EXTREME)
def test_predict_on_generated_counter_tables(capsys, workdir, model, data, n, clock):
    workdir = fresh(workdir)
    f = workdir / "bench.parquet"
    write_parquet(_table(data, n), f)
    out = workdir / "pred.parquet"
    code, _ = run_cli(capsys, ["predict", f, "--model", model, f"--clock-ghz={clock!r}",
                               "-o", out], [f, "--clock-ghz"])
    if code == 0:
        p = read_parquet(out)
        for c in ("cycles_new_pred", "runtime_new_pred_s", "ipc_new_pred"):
            assert np.isfinite(p[c]).all() and (p[c] > 0).all()


@given(data=st.data(), n=st.integers(1, 10), m=st.integers(1, 10),
       method=st.sampled_from(["exact", "dtw"]))
def test_align_on_generated_counter_tables(capsys, workdir, data, n, m, method):
    workdir = fresh(workdir)
    old, new = workdir / "old.parquet", workdir / "new.parquet"
    write_parquet(_table(data, n), old)
    write_parquet(_table(data, m), new)
    out = workdir / "pairs.parquet"
    code, _ = run_cli(capsys, ["align", old, new, "--method", method, "-o", out], [old, new])
    if code == 0:
        p = read_parquet(out)
        assert np.isfinite(p["ipc_ratio"]).all() and (p["ipc_ratio"] > 0).all()


@given(raw=RAW)
def test_align_and_predict_on_damaged_files(capsys, workdir, model, raw):
    workdir = fresh(workdir)
    f = workdir / "bench.parquet"
    f.write_bytes(raw)
    run_cli(capsys, ["align", f, f, "-o", workdir / "p.parquet"], [f])
    run_cli(capsys, ["predict", f, "--model", model, "-o", workdir / "q.parquet"], [f])
    run_cli(capsys, ["predict", model.parent / "train.parquet", "--model", f, "-o",
                     workdir / "q.parquet"], [f, model.parent / "train.parquet"])


# ------------------------------------------------------------------------------ the config


def _section_keys() -> list[tuple[str, str]]:
    """(section, key) of every top-level key of every section schema."""
    import yaml

    from perfcast.settings import SCHEMA_DIR

    out = []
    for section in ("align", "model", "predict", "warmup", "sensitivity", "sweep", "paper"):
        schema = yaml.safe_load((SCHEMA_DIR / f"{section}.schema.yaml").read_text())
        out += [(section, k) for k in sorted(schema.get("properties", {}))]
    return out


VALUE = st.recursive(
    st.one_of(st.none(), st.booleans(), EXTREME, st.integers(-(10**6), 10**6),
              st.sampled_from(["", "mcf", "mcf\n", "1\n", " ", "a b", "$(x)", "x;y"])),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.sampled_from(["a", "enabled", "x", "1"]), inner,
                                            max_size=3)),
    max_leaves=6)


@given(key=st.sampled_from(_section_keys()), value=VALUE)
def test_config_values_are_valid_or_refused_naming_the_key(key, value):
    from perfcast.errors import InputError
    from perfcast.settings import validate

    section, name = key
    try:
        cfg = validate({section: {name: value}}, "config", where="my.yaml")
    except InputError as exc:  # one line naming the file and the key
        assert str(exc).startswith(f"my.yaml: config: {section}") and "\n" not in str(exc), exc
        return
    _finite_everywhere(cfg)  # what is accepted holds finite numbers only
