"""Phases of counter traces (the counters stage's per-interval Parquet)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from perfcast.errors import InputError
from perfcast.io import read_parquet
from perfcast.warmup.counters import CounterPhaseSettings, counter_phases, run_counter_phases


def counters_trace(seed=0, n=600, setup=3, warm=40, cool=25, phases=False):
    """A counters-like trace: the columns the counters stage writes, 100 ms intervals."""
    rng = np.random.default_rng(seed)
    dur = np.full(n, 0.1)
    dur[-1] = 0.04  # the last interval is partial
    ipc = np.full(n, 2.0)
    ipc[setup:setup + warm] = np.linspace(0.8, 1.9, warm)  # cold caches
    if phases:  # program phases of 100 intervals in the middle half of the run
        mid = np.arange(n // 4, 3 * n // 4)
        ipc[mid] = np.where(((mid - n // 4) // 100) % 2, 2.6, 1.6)
    ipc[n - cool:] = 1.2  # threads finishing
    ipc = ipc * (1 + rng.normal(0, 0.01, size=n))
    cycles = 2.5e9 * dur
    inst = ipc * cycles
    inst[:setup] = 1e5  # loading: (almost) no instructions retired
    ipc[:setup] = inst[:setup] / cycles[:setup]
    return pd.DataFrame({
        "interval": np.arange(n), "time": np.cumsum(dur), "duration_s": dur,
        "instructions": inst, "cycles": cycles, "ipc": inst / cycles,
        "instructions_cumulative_sum": np.cumsum(inst),
        "l1d_cache_refill_pki": rng.uniform(1, 2, size=n),
    })


def test_phases_of_a_trace():
    df = counters_trace()
    phases, s = counter_phases(df)
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


def test_program_phases_are_stable_with_the_edges_fallback():
    df = counters_trace(phases=True, n=900)
    phases, s = counter_phases(df)
    assert s["phase_rule"] == "edges" and len(s["change_points"]) >= 6
    # the program's own phases (150 intervals each) stay in the stable phase; warm-up and
    # cool-down are found at the ends only
    assert 25 <= s["warmup"]["intervals"] <= 45 and abs(s["cooldown"]["intervals"] - 25) <= 2
    assert s["stable"]["intervals"] == 900 - 3 - s["warmup"]["intervals"] - \
        s["cooldown"]["intervals"]
    _, none = counter_phases(df, CounterPhaseSettings(fallback="none"))
    assert none["phase_rule"] == "none" and none["stable"]["intervals"] == 0
    assert none["stable_ipc"] is None and none["stable_ipc_reason"] == "no stable phase"
    assert none["unstable"]["intervals"] == 900 - 3 and none["phase_rule"] == "none"


def test_bad_traces_are_refused_clearly():
    df = counters_trace()
    with pytest.raises(InputError, match="missing column"):
        counter_phases(df.drop(columns=["cycles"]), path="x.parquet")
    bad = df.copy()
    bad.loc[5, "duration_s"] = -0.1
    with pytest.raises(InputError, match="duration_s"):
        counter_phases(bad)
    with pytest.raises(InputError, match="no intervals"):
        counter_phases(df.iloc[:0])


def test_rule_function_writes_parquet_and_summary(tmp_path):
    src = tmp_path / "counters" / "gen-a" / "mcf.parquet"
    src.parent.mkdir(parents=True)
    counters_trace().to_parquet(src)
    s = run_counter_phases(src, tmp_path / "p.parquet", tmp_path / "s.json", {}, "gen-a", "mcf")
    assert s["generation"] == "gen-a" and s["benchmark"] == "mcf"
    assert read_parquet(tmp_path / "p.parquet")["phase"].isin(
        ["setup", "warmup", "stable", "cooldown"]).all()
