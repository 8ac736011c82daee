"""`perfcast watch`: live analysis of a running benchmark's readings through a real pipe."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from perfcast.cli import main
from perfcast.warmup.ci import mean_ci
from perfcast.warmup.segments import detect_phases
from perfcast.warmup.settings import command_settings
from perfcast.warmup.watch import MIN_STEP, Watcher, watch

PERFCAST = Path(sys.executable).with_name("perfcast")

#: a benchmark: 150 slow warm-up readings, then a stable phase; flushed line by line
PRODUCER = """
import sys
import numpy as np
rng = np.random.default_rng(int(sys.argv[1]))
for i in range(int(sys.argv[2])):
    x = rng.normal(1.0, 0.05) + (0.8 if i < 150 else 0.0)
    print(f"{x:.6f}", flush=True)
"""


def readings(seed: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.array([rng.normal(1.0, 0.05) + (0.8 if i < 150 else 0.0) for i in range(n)])


def test_watch_stops_a_running_benchmark_through_a_pipe(tmp_path):
    total = 200_000
    producer = subprocess.Popen([sys.executable, "-c", PRODUCER, "3", str(total)],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        out = subprocess.run([str(PERFCAST), "watch", "-", "--target", "0.005"],
                             stdin=producer.stdout, capture_output=True, text=True, timeout=120)
    finally:
        producer.stdout.close()
        producer.wait(timeout=60)
    assert out.returncode == 0, out.stderr
    lines = [json.loads(s) for s in out.stdout.splitlines()]
    assert [d["stop"] for d in lines] == [False] * (len(lines) - 1) + [True]
    last = lines[-1]
    assert last["n"] < total  # it said stop while the benchmark was still running ...
    assert producer.returncode != 0  # ... which then died of the closed pipe
    assert abs(last["stable_begin"] - 150) <= 3 and last["phase"] == "stable"
    assert last["lower"] <= 1.0 <= last["upper"]
    assert (last["upper"] - last["lower"]) / last["mean"] <= 0.005
    assert last["n"] - last["stable_begin"] >= last["required_readings"]
    assert all(set(d) >= {"n", "phase", "stable_begin", "mean", "lower", "upper", "q"}
               for d in lines)
    ns = [d["n"] for d in lines]
    assert ns == sorted(ns) and ns[0] == 30


def test_the_stop_point_agrees_with_an_offline_analysis():
    settings = command_settings("watch", {"target_relative_width": 0.005})
    x = readings(5, 50_000)
    ups = list(watch(x, settings))
    stop = ups[-1]
    assert stop.stop
    # offline, the same first n readings give the same stable segment and a CI that stops
    ph = detect_phases(x[:stop.n], settings.edm)
    assert ph.stable == (stop.stable_begin, stop.stable_end)
    a, b = ph.stable
    ci = mean_ci(x[a:b], ac_limit=settings.limit, target_relative_width=0.005,
                 min_samples=settings.samples_min)
    assert ci.enough and ci.relative_width <= 0.005
    # ... and the earliest offline stop point is not far before it (the checkpoints overshoot
    # by at most a step of MIN_STEP or one predicted by the required sample size)
    first = next(n for n in range(30, stop.n + 1)
                 if _offline_stop(x[:n], settings))
    assert first <= stop.n <= math.ceil(first * (1 + MIN_STEP)) + 1


def _offline_stop(x: np.ndarray, settings) -> bool:
    ph = detect_phases(x, settings.edm)
    if ph.stable is None:
        return False
    a, b = ph.stable
    try:
        ci = mean_ci(x[a:b], ac_limit=settings.limit, target_relative_width=0.005,
                     min_samples=settings.samples_min, min_readings=min(30, b - a))
    except ValueError:
        return False
    return ci.enough and ci.relative_width <= 0.005


def test_checkpoints_are_geometric_so_the_cost_per_reading_is_amortised():
    settings = command_settings("watch", {"target_relative_width": 1e-9})  # never reached
    w = Watcher(settings)
    n = 100_000
    rng = np.random.default_rng(2)
    for v in rng.normal(10, 1, size=n):
        w.add(v)
    # each checkpoint is at least (1 + MIN_STEP) times the previous one: O(log n) analyses,
    # each O(m log m) on m <= n readings, so O(n log n) in all
    assert w.analyses <= math.log(n / 30) / math.log(1 + MIN_STEP) + 2
    assert w.analyses <= math.log(n / 30) / math.log(settings.growth) + 2  # target far away


def test_watch_end_of_input_and_bad_lines(tmp_path, capsys):
    f = tmp_path / "r.txt"
    f.write_text("".join(f"{v}\n" for v in readings(1, 100)))
    assert main(["watch", str(f), "--target", "0.001"]) == 1
    lines = [json.loads(s) for s in capsys.readouterr().out.splitlines()]
    assert lines[-1]["end_of_input"] is True and lines[-1]["stop"] is False
    assert lines[-1]["n"] == 100
    f.write_text("1.0\n2.0\nfast\n")
    assert main(["watch", str(f)]) == 2
    err = capsys.readouterr().err
    assert "line 3" in err and "'fast'" in err and len(err.strip().splitlines()) == 1
    for bad, what in (("1_000", "is not a number"), ("nan", "not a finite number"),
                      ("-2", "negative reading"), ("inf", "not a finite number")):
        f.write_text(f"1.0\n# a comment\n\n{bad}\n")
        assert main(["watch", str(f)]) == 2
        err = capsys.readouterr().err
        assert "line 4: " in err and what in err, err
    f.write_text("")
    assert main(["watch", str(f)]) == 2
    assert "no readings" in capsys.readouterr().err
    assert main(["watch", str(f), "--min-readings", "5"]) == 2
    assert "min_readings" in capsys.readouterr().err


@pytest.mark.parametrize("preset,blocks", [("quick", 30), ("strict", 200)])
def test_watch_uses_the_presets_minimum_number_of_blocks(preset, blocks):
    settings = command_settings("watch", {"preset": preset, "target_relative_width": 0.5})
    stop = list(watch(readings(7, 5000), settings))[-1]
    assert stop.stop and stop.ci.min_samples == blocks
    assert stop.ci.required_readings == stop.ci.q * blocks  # the minimum decides at 50 % width
