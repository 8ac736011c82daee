"""Phases of counter traces (the counters stage's per-interval Parquet; ``counters_trace`` is a
fixture of ``tests/conftest.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from perfcast.errors import InputError
from perfcast.io import read_parquet
from perfcast.warmup.counter_phases import counter_phases
from perfcast.warmup.rules import run_counter_phases
from perfcast.warmup.settings import TraceSettings, warmup_settings

#: warmup.counters with the schema's defaults
SETTINGS = warmup_settings({}).counters


def test_phases_of_a_trace(counters_trace):
    df = counters_trace()
    phases, s = counter_phases(df, SETTINGS)
    assert list(phases.columns) == ["interval", "phase"] and len(phases) == len(df)
    lab = phases["phase"].to_numpy()
    assert (lab[:3] == "setup").all() and lab[3] != "setup"
    assert s["setup"]["intervals"] == 3
    assert 25 <= s["warmup"]["intervals"] <= 45  # the slow start of the ramp
    assert abs(s["cooldown"]["intervals"] - 25) <= 2
    assert s["stable"]["intervals"] + s["warmup"]["intervals"] + s["cooldown"]["intervals"] + 3 \
        == 600
    order = {"setup": 0, "warmup": 1, "stable": 2, "cooldown": 3}
    assert (np.diff([order[p] for p in lab]) >= 0).all()  # phases come in order
    ipc = s["stable_ipc"]
    assert ipc["lower"] <= 2.0 <= ipc["upper"] and ipc["relative_width"] < 0.01
    assert s["stable_ipc_aggregate"] == pytest.approx(2.0, rel=0.01)
    assert s["phase_rule"] == "dominant"


def test_program_phases_are_stable_with_the_edges_fallback(counters_trace):
    df = counters_trace(phases=True, n=900)
    phases, s = counter_phases(df, SETTINGS)
    assert s["phase_rule"] == "edges" and len(s["change_points"]) >= 6
    # the program's own phases (150 intervals each) stay in the stable phase; warm-up and
    # cool-down are found at the ends only
    assert 25 <= s["warmup"]["intervals"] <= 45 and abs(s["cooldown"]["intervals"] - 25) <= 2
    assert s["stable"]["intervals"] == 900 - 3 - s["warmup"]["intervals"] - \
        s["cooldown"]["intervals"]
    _, none = counter_phases(df, warmup_settings({"counters": {"fallback": "none"}}).counters)
    assert none["phase_rule"] == "none" and none["stable"]["intervals"] == 0
    assert none["stable_ipc"] is None and none["stable_ipc_reason"] == "no stable phase"
    assert none["unstable"]["intervals"] == 900 - 3 and none["phase_rule"] == "none"


def test_bad_traces_are_refused_clearly(counters_trace):
    df = counters_trace()
    with pytest.raises(InputError, match="missing column"):
        counter_phases(df.drop(columns=["cycles"]), SETTINGS, path="x.parquet")
    bad = df.copy()
    bad.loc[5, "duration_s"] = -0.1
    with pytest.raises(InputError, match="duration_s"):
        counter_phases(bad, SETTINGS)
    with pytest.raises(InputError, match="no intervals"):
        counter_phases(df.iloc[:0], SETTINGS)


def test_a_cycle_of_the_instruction_rate_is_reported(counters_trace):
    """A rate that repeats every 20 intervals (2 % swing in the stable part) is reported under
    ``season``; the trace without it has none (its warm-up ramp and cool-down step are no
    cycle)."""
    df = counters_trace()
    assert counter_phases(df, SETTINGS)[1]["season"] is None
    t = np.arange(len(df))
    swing = 1 + 0.02 * np.sin(2 * np.pi * t / 20)
    df["instructions"] = df["instructions"] * swing
    df["ipc"] = df["instructions"] / df["cycles"]
    cycle = counter_phases(df, SETTINGS)[1]["season"]
    assert cycle["period"] == pytest.approx(20, rel=0.01)
    rate = 2.0 * 2.5e9  # instructions per second of the stable part
    assert cycle["amplitude"] == pytest.approx(0.02 * rate, rel=0.15)


def test_rule_function_writes_parquet_and_summary(tmp_path, counters_trace):
    src = tmp_path / "counters" / "gen-a" / "mcf.parquet"
    src.parent.mkdir(parents=True)
    counters_trace().to_parquet(src)
    job = TraceSettings(SETTINGS, generation="gen-a", benchmark="mcf")
    s = run_counter_phases(job, counters=src, phases=tmp_path / "p.parquet",
                           summary=tmp_path / "s.json")
    assert s["generation"] == "gen-a" and s["benchmark"] == "mcf"
    assert read_parquet(tmp_path / "p.parquet")["phase"].isin(
        ["setup", "warmup", "stable", "cooldown"]).all()
