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
from perfcast.warmup.cli_settings import command_settings
from perfcast.warmup.truncation import Truncation, mser_truncation, stationarity_test
from perfcast.warmup.watch import EVIDENCE, MIN_STEP, PHASES, UCB_Z, Watcher, assess, watch

DOCS = Path(__file__).resolve().parents[2] / "docs" / "methods" / "warmup.md"

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
    begin = last["stable"]["begin"]
    assert 147 <= begin <= 150 + 0.1 * last["n"] and last["phase"] == "stable"
    assert last["stable"]["end"] == last["used"]["end"] == last["n"]
    assert last["lower"] <= 1.0 <= last["upper"]
    assert (last["upper"] - last["lower"]) / last["mean"] <= 0.005
    # the CI is of the last 1 / EVIDENCE of the stable readings, which reach its sample size
    assert last["n"] - last["used"]["begin"] >= last["required_readings"]
    assert last["used"]["begin"] == last["n"] - int((last["n"] - begin) / EVIDENCE)
    assert last["waiting_for"] is None
    assert all(set(d) >= {"n", "phase", "stable", "used", "mean", "lower", "upper", "q",
                          "waiting_for"} for d in lines)
    ns = [d["n"] for d in lines]
    assert ns == sorted(ns) and ns[0] == 30


def test_the_stop_point_agrees_with_an_offline_analysis():
    # a 1 % target: the stop comes after about 20 checkpoints, near reading 1,000
    settings = command_settings("watch", {"target_relative_width": 0.01})
    x = readings(5, 50_000)
    ups = list(watch(x, settings))
    stop = ups[-1]
    assert stop.stop and 900 <= stop.n <= 1100
    # offline, the same first n readings give the same decision and the same readings, at the
    # stop and at every checkpoint before it (the watch keeps no state an analysis lacks)
    for u in ups:
        again = assess(x[:u.n], settings)
        assert (again.stop, again.stable, again.used) == (u.stop, u.stable, u.used), u.n
    assert not any(u.stop for u in ups[:-1])
    # the checkpoints overshoot by at most a step of MIN_STEP, or reach the stop the previous
    # analysis predicted
    before = ups[-2]
    predicted = before.stable[0] + before.evidence_readings
    assert stop.n == predicted or stop.n <= math.ceil(before.n * (1 + MIN_STEP)) + 1


def step_warmup(seed: int, n: int, length: int, height_sd: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = 1.0 + 0.05 * rng.normal(size=n)
    x[:length] += height_sd * 0.05
    return x


@pytest.mark.parametrize("seed", range(5))
def test_a_step_warmup_of_200_readings_is_not_stopped_inside(seed):
    # the plateau needs ~390 readings at 1 % (sd 5 %): a level seen for 190 readings is not
    # enough evidence, so the stop comes after the warm-up, on the plateau's readings only
    settings = command_settings("watch", {"target_relative_width": 0.01})
    x = step_warmup(seed, 3000, 200, 2.0)
    ups = list(watch(x, settings))
    stop = ups[-1]
    assert stop.stop and stop.n > 200
    assert all(not u.stop for u in ups[:-1])
    assert 195 <= stop.stable_begin <= 260  # (MSER may drop a few more)
    # the plateau's mean, within one CI width (a 95 % CI misses 1 in 20; inside the warm-up the
    # mean would be 10 widths off)
    assert abs(stop.ci.mean - 1.0) <= stop.ci.upper - stop.ci.lower
    inside = assess(x[:190], settings)
    assert inside.phase == "stable" and not inside.stop and inside.waiting_for == "sample_size"


def test_the_protection_reaches_evidence_times_the_required_sample_and_min_readings_more():
    # with the defaults (10 %) the plateau (sd 5 %) needs 50 readings: the first EVIDENCE x 50
    # (at the variance's upper bound) are the evidence, so a warm-up at a constant level of 60
    # readings is seen and waited for ...
    settings = command_settings("watch")
    stop = list(watch(step_warmup(1, 3000, 60, 2.0), settings))[-1]
    assert stop.stop and stop.n > 60 and stop.stable_begin >= 55
    # ... but one of 200 is indistinguishable from a plateau until it ends, and a session
    # that may not take twice the plateau's readings cannot wait for it (documented)
    x = step_warmup(1, 3000, 200, 2.0)
    stop = list(watch(x, settings))[-1]
    assert stop.stop and stop.n < 200
    # a user who expects such warm-ups says so with --min-readings
    longer = command_settings("watch", {"min_readings": 400})
    stop = list(watch(x, longer))[-1]
    assert stop.stop and stop.n >= 400 and stop.stable_begin >= 195
    assert stop.ci.lower <= 1.0 <= stop.ci.upper


def test_a_dominant_segment_that_has_ended_is_no_stop_live():
    rng = np.random.default_rng(3)
    x = 1.0 + 0.05 * rng.normal(size=400)
    x[300:] += 0.2  # live: a warm-up of 300 readings that has just ended
    up = assess(x, command_settings("watch", {"target_relative_width": 0.5}))
    assert up.phase == "cooldown" and up.stable == (0, 300)
    assert not up.stop and up.waiting_for == "stable_phase"


@pytest.mark.study
def test_an_exponential_warmup_leaves_no_bias_in_the_stopped_ci():
    # 40 sessions, +3 sd decaying to 0.05 sd after 250 readings; the plateau needs ~250
    settings = command_settings("watch", {"target_relative_width": 2 * 1.96 * 0.1 / 250**0.5})
    covered = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        t = np.arange(1000)
        x = 1.0 + 0.1 * rng.normal(size=1000) + 0.3 * np.exp(-t * np.log(60) / 250)
        stop = list(watch(x, settings))[-1]
        assert stop.stop and stop.n > 250
        covered += stop.ci.lower <= 1.0 <= stop.ci.upper
    assert covered >= 35  # (37 measured; 95 % nominal)


def test_mser_truncation_and_the_stationarity_test():
    wiggle = np.tile([0.1, -0.1], 250)
    assert mser_truncation(np.r_[np.full(50, 3.0), np.zeros(450)] + wiggle).readings == 50
    # the transient fills more than half: MSER's minimum is at its bound, not settled
    cut = mser_truncation(np.r_[np.linspace(3.0, 0.0, 350), np.zeros(150)] + wiggle)
    assert not cut.settled and cut.readings == 250
    assert mser_truncation(np.ones(40)).readings == 0  # too few batches: nothing dropped
    rng = np.random.default_rng(8)
    y = rng.normal(size=2000)
    assert stationarity_test(y, 1).passed and stationarity_test(y, 1).dropped == 0
    decay = y + 1.0 * np.exp(-np.arange(2000) / 100)
    hw = stationarity_test(decay, 1)
    assert hw.passed and hw.dropped >= 200
    assert not stationarity_test(np.linspace(0, 10, 2000) + y, 1).passed  # a trend


def test_every_phase_and_what_a_session_waits_for_are_documented():
    text = DOCS.read_text()
    for name in PHASES + ("min_readings", "stable_phase", "warmup_end", "sample_size"):
        assert f"`{name}`" in text, name


def test_checkpoints_are_geometric_so_the_cost_per_reading_is_amortised():
    settings = command_settings("watch", {"target_relative_width": 1e-6})  # never reached
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
    assert stop.used[1] - stop.used[0] >= blocks * stop.ci.q


def test_the_evidence_is_taken_at_an_upper_bound_of_the_required_sample_size():
    # i.i.d. readings (sd 5 %, 1 % target: about 384 readings needed). At 680 readings the used
    # part's CI is within the target and reaches its required sample size, and the segment
    # holds EVIDENCE times it; the stop still waits until the segment holds EVIDENCE times the
    # size at the variance's upper bound (1 + UCB_Z sqrt(2 / (h - 1)): 5 % more at h = 680)
    settings = command_settings("watch", {"target_relative_width": 0.01})
    x = 1.0 + 0.05 * np.random.default_rng(3).normal(size=1200)
    up = assess(x[:680], settings)
    assert up.stable == (0, 680) and up.used == (680 - int(680 / EVIDENCE), 680)
    assert up.ci.relative_width <= 0.01 and up.ci.enough
    assert 680 >= EVIDENCE * up.ci.required_readings
    assert up.evidence_readings == math.ceil(
        EVIDENCE * up.ci.required_readings * (1 + UCB_Z * math.sqrt(2 / 679)))
    assert not up.stop and up.waiting_for == "sample_size"
    later = assess(x[:720], settings)
    assert later.stop and 720 >= later.evidence_readings


def test_the_ci_of_the_used_readings_takes_the_whole_segments_variance():
    from perfcast.warmup.ci import mean_ci
    from perfcast.warmup.watch import stable_ci

    settings = command_settings("watch", {"target_relative_width": 0.01})
    rng = np.random.default_rng(4)
    x = np.r_[1.5 + 0.05 * rng.normal(size=100), 1.0 + 0.05 * rng.normal(size=900)]
    used, whole = stable_ci(x, (100, 1000), (500, 1000), settings)
    alone = mean_ci(x[100:1000], ac_limit=settings.limit, confidence=settings.confidence,
                    residual_correction=True, target_relative_width=0.01,
                    min_samples=settings.samples_min)
    assert whole.variance == alone.variance and whole.required_readings == alone.required_readings
    q = whole.q
    h = 500 // q
    assert used.n == 500 and used.blocks == h and used.variance == whole.variance
    assert used.mean == pytest.approx(x[1000 - h * q:1000].mean())  # the newest whole blocks
    assert used.width == pytest.approx(2 * whole.t * math.sqrt(whole.variance / h))
    assert used.lower <= 1.0 <= used.upper  # the warm-up (+10 sd) is out of both


@pytest.mark.parametrize("value", [0.1, 5.0, 1 / 3, 123.456])
def test_a_constant_series_is_stable_whatever_its_rounding(value):
    """A constant's computed variance is rounding, about (eps value)^2, not 0: 0.1 gave a
    bridge statistic of 17.2 and 50 of 100 readings dropped ("the warm-up has not visibly
    ended") where 5 gave none. The floor is relative: every constant is stationary, nothing is
    truncated, and ``watch`` stops at the evidence it needs."""
    from perfcast.warmup.stable import stable_throughput
    from perfcast.warmup.truncation import bridge_statistic

    x = np.full(3000, value)
    assert bridge_statistic(x, 1) == 0.0 and bridge_statistic(x[:100], 1) == 0.0
    assert mser_truncation(x) == mser_truncation(x[:100]) == Truncation(0, True)
    r = stable_throughput(x[:100], command_settings("stable"))
    assert r.settled and r.truncated == 0 and r.stable == (0, 100) and r.note is None
    ups = list(watch(iter(x), command_settings("watch")))
    assert all(u.phase == "stable" and u.truncated == 0 and u.stationarity == 0.0 for u in ups)
    assert ups[-1].stop and ups[-1].n <= 110
    # readings that do vary, however little, keep their statistic
    y = value * (1 + 1e-9 * np.random.default_rng(0).normal(size=1000))
    assert bridge_statistic(y, 1) > 0.0


def test_a_cycle_with_little_noise_is_stationary():
    """``1 + 0.5 sin(2 pi t / 7)`` plus noise of sd 0.01: the cycle's partial sums swing far
    beyond the noise's bridge, so the stationarity test failed on 30 of 30 seeds of 500
    readings (half of them dropped) and ``watch`` stayed in ``warmup`` for about 4,900 of 10,000.
    MSER and the test now judge the readings without their cycle."""
    from perfcast.warmup.stable import stable_throughput

    t = np.arange(10_000)
    settled = 0
    for seed in range(10):
        noise = 1 + 0.01 * np.random.default_rng(seed).normal(size=500)
        r = stable_throughput(noise + 0.5 * np.sin(2 * np.pi * t[:500] / 7),
                              command_settings("stable"))
        alone = stable_throughput(noise, command_settings("stable"))
        # the cycle changes nothing: truncation and test see the noise alone
        assert (r.stable, r.truncated, r.settled) == (alone.stable, alone.truncated,
                                                      alone.settled)
        assert r.mean.q == 7 and abs(r.mean.mean - 1) < 0.01
        settled += r.settled
    assert settled >= 8  # (9 of these 10: the noise alone fails the test in about 1 of 20)
    x = 1 + 0.5 * np.sin(2 * np.pi * t / 7) + 0.01 * np.random.default_rng(0).normal(size=10_000)
    last = list(watch(iter(x), command_settings("watch")))[-1]
    assert last.stop and last.n < 1000 and last.ci.lower <= 1.0 <= last.ci.upper


def test_the_mean_is_of_exactly_the_readings_reported():
    """AR(1) readings (phi 0.95): q is 36 or so, and the readings that do not fill a block
    were the newest, left out of the mean while ``used``/``n`` named them (``stable``: mean
    19.336 of readings "429..1000" whose mean is 18.996). The blocks now end at the newest
    reading; the oldest leftover (< q) is out, and the range, ``n``, ``n_used`` and the mean
    agree: ``stable``, ``ci`` and every line of ``watch``."""
    from perfcast.warmup.ci import mean_ci
    from perfcast.warmup.stable import stable_throughput

    rng = np.random.default_rng(0)
    e = rng.normal(size=1000)
    x = np.empty(1000)
    x[0] = e[0]
    for i in range(1, 1000):
        x[i] = 0.95 * x[i - 1] + e[i]
    x += 20
    r = stable_throughput(x, command_settings("stable"))
    a, b = r.used
    assert r.mean.q > 1 and b == 1000 and r.mean.n == r.mean.n_used == b - a
    assert (b - a) % r.mean.q == 0 and 0 <= a - (b - int((b - r.stable[0]) / EVIDENCE)) < r.mean.q
    assert r.mean.mean == pytest.approx(x[a:b].mean(), rel=1e-12, abs=0)
    assert r.median.n == b - a and r.median.median == np.median(x[a:b])
    ci = mean_ci(x, ac_limit=0.2, confidence=0.95, target_relative_width=0.1)
    assert ci.n == 1000 and ci.n_used % ci.q == 0 and 1000 - ci.n_used < ci.q
    assert ci.mean == pytest.approx(x[1000 - ci.n_used:].mean(), rel=1e-12, abs=0)
    rates = stable_throughput(x, command_settings("stable", {"rates": True}))
    h = rates.harmonic
    assert h.mean == pytest.approx(1 / np.mean(1 / x[1000 - h.n:]), rel=1e-12, abs=0)
    assert rates.to_dict()["harmonic_mean"]["used"] == {"begin": 1000 - h.n, "end": 1000,
                                                        "readings": h.n}
    for up in watch(iter(x), command_settings("watch", {"target_relative_width": 0.01})):
        if up.ci is not None:
            u0, u1 = up.used
            assert up.ci.n == up.ci.n_used == u1 - u0 and (u1 - u0) % up.ci.q == 0
            assert up.ci.mean == pytest.approx(x[u0:u1].mean(), rel=1e-12, abs=0), up.n
