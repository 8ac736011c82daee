"""``perfcast stable``: the stable segment's mean, median and harmonic mean with their CIs, and
``perfcast ci``'s warning on readings that are not one stable phase."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from perfcast.cli import main
from perfcast.warmup.ci import mean_ci
from perfcast.warmup.cli_settings import command_settings
from perfcast.warmup.stable import median_ci, stable_throughput
from perfcast.warmup.watch import EVIDENCE, stable_ci


def test_median_ci_ranks_are_the_binomial_ones():
    ci = median_ci(np.arange(1.0, 101.0), 0.95)
    assert (ci.lower_rank, ci.upper_rank) == (40, 61)
    assert (ci.median, ci.lower, ci.upper) == (50.5, 40.0, 61.0)
    # P(X_(40) <= median <= X_(61)) = P(40 <= Binomial(100, 1/2) <= 60) >= 0.95
    assert stats.binom.cdf(60, 100, 0.5) - stats.binom.cdf(39, 100, 0.5) >= 0.95
    # correlated readings (q = 4): as wide as 25 independent ones, ranks scaled by 4
    wide = median_ci(np.arange(1.0, 101.0), 0.95, q=4)
    assert wide.effective == 25 and wide.lower_rank == 30 and wide.upper_rank == 71


def test_median_ci_is_distribution_free():
    rng = np.random.default_rng(5)
    covered = {"lognormal": 0, "cauchy": 0}
    for _ in range(500):
        ci = median_ci(rng.lognormal(0, 1.5, 101), 0.95)
        covered["lognormal"] += ci.lower <= 1.0 <= ci.upper  # true median e^0 = 1
        ci = median_ci(rng.standard_t(1, 101), 0.95)
        covered["cauchy"] += ci.lower <= 0.0 <= ci.upper
    for share in covered.values():
        assert 0.93 <= share / 500 <= 0.985


def test_stable_throughput_of_a_series_with_a_warmup():
    rng = np.random.default_rng(0)
    x = 1.0 + 0.05 * rng.normal(size=2000)
    x[:300] += 0.3
    x[50] = 40.0  # a preemption spike in the warm-up, another in the stable phase
    x[1500] = 40.0
    r = stable_throughput(x, command_settings("stable"))
    assert r.change_points == (300,) and r.detector_stable == (300, 2000)
    a, b = r.stable
    assert 300 <= a <= 400 and b == 2000 and r.truncated == a - 300 and r.settled
    # the estimates are of the segment's last 1 / EVIDENCE, the variance of all of it
    u0, u1 = r.used
    assert u1 == b and u0 == b - int((b - a) / EVIDENCE)
    y = x[u0:u1]
    assert r.mean.mean == pytest.approx(y.mean()) and r.mean.n == u1 - u0
    whole = mean_ci(x[a:b], ac_limit=0.2, confidence=0.95, target_relative_width=0.1,
                    residual_correction=True)
    assert r.mean.q == whole.q and r.mean.variance == pytest.approx(whole.variance)
    h = (u1 - u0) // whole.q
    assert r.mean.upper - r.mean.mean == pytest.approx(whole.t * np.sqrt(whole.variance / h))
    assert r.median.median == pytest.approx(np.median(y)) and r.median.n == u1 - u0
    assert r.median.lower <= 1.0 <= r.median.upper  # the spike does not move it
    assert r.median.upper - r.median.lower < 0.2 * (r.mean.upper - r.mean.lower)
    assert r.harmonic is None


@pytest.mark.study
def test_a_smooth_warmup_leaves_no_bias_in_the_stable_ci():
    """Exponential warm-ups (+3 sd decaying to 0.05 sd over a quarter of 1,000 readings): what
    MSER and the stationarity test cannot see of the decay biases the mean of the whole stable
    segment; the mean of its last part, with the whole segment's variance, covers the plateau
    at about the nominal 95 % (docs/methods/warmup.md's table: 86.0 % and 94.0 % on 200)."""
    settings = command_settings("stable")
    last = whole = 0
    for seed in range(100):
        rng = np.random.default_rng([seed, 1000])
        t = np.arange(1000)
        x = 1.0 + 0.05 * rng.normal(size=1000) + 0.15 * np.exp(-t * np.log(60) / 250)
        r = stable_throughput(x, settings)
        last += r.mean.lower <= 1.0 <= r.mean.upper
        a, b = r.stable
        ci = mean_ci(x[a:b], ac_limit=settings.limit, confidence=settings.confidence,
                     target_relative_width=0.1, min_samples=settings.samples_min,
                     residual_correction=True)
        whole += ci.lower <= 1.0 <= ci.upper
    assert last >= 90 and whole <= last - 5  # (92 and 82 measured)


def test_rates_get_the_harmonic_mean():
    rng = np.random.default_rng(1)
    rates = 1000.0 / (1.0 + 0.05 * rng.normal(size=500))
    settings = command_settings("stable", {"rates": True})
    r = stable_throughput(rates, settings)
    y = rates[r.used[0]:r.used[1]]
    assert r.harmonic.mean == pytest.approx(1 / np.mean(1 / y)) and r.harmonic.n == len(y)
    assert r.harmonic.lower <= r.harmonic.mean <= r.harmonic.upper
    assert r.harmonic.mean < r.mean.mean  # harmonic <= arithmetic


def test_cli_stable_and_the_warning_of_ci(tmp_path, capsys):
    rng = np.random.default_rng(2)
    x = 1.0 + 0.05 * rng.normal(size=1000)
    x[:200] += 0.3
    f = tmp_path / "r.txt"
    f.write_text("".join(f"{v}\n" for v in x))
    assert main(["stable", str(f)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["detector_stable"] == {"begin": 200, "end": 1000, "readings": 800}
    assert out["stable"]["end"] == 1000 and out["stable"]["begin"] >= 200
    assert out["used"]["end"] == 1000 and out["mean"]["n"] == out["used"]["readings"]
    assert out["used"]["readings"] == int(out["stable"]["readings"] / EVIDENCE)
    assert set(out["median"]) >= {"median", "lower", "upper", "effective_readings"}
    assert out["settings"]["min_effect"] == 0.05
    assert main(["ci", str(f)]) == 0
    cap = capsys.readouterr()
    assert "mixes phases" in cap.err and f"perfcast stable {f}" in cap.err
    assert "mixes phases" in json.loads(cap.out)["warning"]
    f.write_text("".join(f"{v}\n" for v in 1.0 + 0.05 * rng.normal(size=500)))
    assert main(["ci", str(f)]) == 0
    cap = capsys.readouterr()
    assert cap.err == "" and "warning" not in json.loads(cap.out)
    # two halves: no segment holds more than half; the last one is the stable phase (the
    # fallback "final", the default), or none with Pilot's rule (--fallback none) ...
    f.write_text("".join(f"{v}\n" for v in np.r_[np.ones(100), 2 * np.ones(100)]
                         + 0.01 * rng.normal(size=200)))
    assert main(["stable", str(f)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["rule"] == "final" and out["detector_stable"]["begin"] == 100
    assert out["settings"]["fallback"] == "final" and abs(out["mean"]["mean"] - 2) < 0.01
    assert main(["stable", str(f), "--fallback", "none"]) == 1
    cap = capsys.readouterr()
    assert json.loads(cap.out)["stable"] is None and "no stable phase" in cap.err
    # ... and none either when the last segment holds less than a sixth of the readings
    f.write_text("".join(f"{v}\n" for v in np.r_[np.ones(95), 2 * np.ones(95), np.ones(30)]
                         + 0.01 * rng.normal(size=220)))
    assert main(["stable", str(f)]) == 1
    cap = capsys.readouterr()
    assert json.loads(cap.out)["stable"] is None
    assert "the last segment holds less than 0.167 of them: no stable phase" in cap.err
    f.write_text("1\n2\n0\n")
    assert main(["stable", str(f), "--rates"]) == 2
    assert "--rates" in capsys.readouterr().err


@pytest.mark.parametrize("n", [1, 2, 3, 6, 29])
def test_stable_refuses_fewer_than_30_readings_as_ci_does(tmp_path, capsys, n):
    """Fewer than 30 readings support no interval (the documented minimum): ``stable`` refuses
    them with ``ci``'s one-line error, where it gave a traceback (1 reading), a mean CI from 3
    readings (6), a zero-width median "CI" of 1 reading (3) or a note of "up to 0 (last |r|
    nan)" (2)."""
    f = tmp_path / "in.txt"
    f.write_text("".join(f"{1 + 0.01 * i}\n" for i in range(n)))
    for command in ("stable", "ci"):
        assert main([command, str(f)]) == 2
        cap = capsys.readouterr()
        assert cap.out == "" and cap.err.count("\n") == 1
        assert cap.err == (f"perfcast {command}: error: {f}: {n} readings; a confidence "
                           "interval needs at least 30\n")


def test_a_stable_segment_of_fewer_than_30_readings_gets_no_interval():
    """60 readings whose last segment (12 readings, a fifth) is the stable phase by the
    fallback "final": no mean CI and no median interval from 12 readings (the old code gave a
    mean CI of 6 readings in 2 blocks, and the median's ranks 1 and 6), a note saying why; the
    live rule's CI of the same segment is None likewise."""
    rng = np.random.default_rng(3)
    x = np.r_[np.ones(25), 2 * np.ones(23), 3 * np.ones(12)] + 0.01 * rng.normal(size=60)
    r = stable_throughput(x, command_settings("stable"),
                          command_settings("phases", {"fallback": "final"}))
    assert r.rule == "final" and r.detector_stable == (48, 60)
    a, b = r.stable
    assert r.mean is None and r.harmonic is None
    assert r.median.median == pytest.approx(np.median(x[r.used[0]:r.used[1]]))
    assert r.median.lower is None and r.median.upper is None
    assert r.note == (f"no confidence interval from the stable readings {a}..59: {b - a} "
                      "readings; a confidence interval needs at least 30")
    assert stable_ci(x, (48, 60), (54, 60), command_settings("watch")) is None
