"""The test for a cycle in the readings (perfcast.warmup.season): known periods and amplitudes,
whole and fractional, sine and sawtooth, found beside steps and trends; series without a cycle
called cyclic at most 2 % of the time (generated here, seeds fixed)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import lfilter

from perfcast.warmup.season import season


@pytest.mark.parametrize("period", [5.0, 12.0, 12.5, 30.7, 100.0])
def test_a_sine_gives_its_period_and_amplitude(period):
    rng = np.random.default_rng(int(period * 10))
    t = np.arange(1000) + rng.uniform(0, period)
    x = 1.5 * np.sin(2 * np.pi * t / period) + rng.normal(size=1000)
    s = season(x)
    assert s is not None and s.strength > 1
    assert s.period == pytest.approx(period, rel=0.01)
    assert s.amplitude == pytest.approx(1.5, rel=0.15)


def test_a_cycle_is_found_beside_a_step_and_a_trend():
    """The differences turn a step into one spike and a trend into a constant: neither hides
    nor imitates the cycle."""
    rng = np.random.default_rng(3)
    t = np.arange(600)
    saw = 0.01 * (t % 30) + 0.05 * (t >= 200) + 0.0005 * t + rng.normal(0, 0.002, 600)
    s = season(saw)
    assert s is not None and s.period == pytest.approx(30, rel=0.01)
    steps = rng.normal(size=600) + 3.0 * (t >= 200) - 2.0 * (t >= 400) + 0.01 * t
    assert season(steps) is None


def test_a_cycle_beside_a_large_step_is_found():
    """A step of 40 noise sd is one large difference, whose power added to the cycle's ordinate
    could cancel it (a cycle of half the noise's sd was found in none of 200 such series before
    steps were set aside); a sawtooth's falls, one per cycle, are its swing and are kept."""
    rng = np.random.default_rng(5)
    t = np.arange(600)
    found = [season(rng.normal(size=600) + 0.5 * np.sin(2 * np.pi * t / 20 + rng.uniform(0, 6))
                    + 40.0 * (t >= 300)) for _ in range(50)]
    assert np.mean([s is not None and s.period == pytest.approx(20, rel=0.02)
                    for s in found]) >= 0.9
    saw = (t % 25) + rng.normal(0, 0.1, 600)  # falls of 24 every 25 readings
    assert season(saw).period == pytest.approx(25, rel=0.01)


@pytest.mark.parametrize("period", [20, 25])
@pytest.mark.parametrize("sd", [0.0, 0.01, 0.1])
def test_a_sawtooth_gives_its_own_period_not_a_harmonic(period, sd):
    """A sawtooth's harmonics are all as strong, and with little noise its largest ordinate
    may be any of them: the tenth for period 20 (a single search of six subharmonics gave 10),
    the seventh for period 25 (25/7 = 3.57, no subharmonic up to the sixth of it): the search
    goes up to the twelfth and is repeated below each subharmonic found."""
    t = np.arange(600)
    for seed in range(10):
        saw = ((t + seed) % period) + np.random.default_rng(seed).normal(0, sd, 600)
        assert season(saw).period == pytest.approx(period, rel=0.01), seed


def _ar1(rng: np.random.Generator, n: int, phi: float) -> np.ndarray:
    return lfilter([1], [1, -phi], rng.normal(size=n + 300))[300:]


@pytest.mark.study
def test_season_false_detections():
    """Series without a cycle: white (normal, lognormal, t(3)), AR(1) with phi 0.5 and 0.9, and
    random walks, 100 to 3,000 readings, 100 of each: called cyclic in at most 2 % of each kind
    and length (the calibration of FACTOR)."""
    rng = np.random.default_rng(2026)
    kinds = {
        "normal": lambda n: rng.normal(size=n),
        "lognormal": lambda n: np.exp(rng.normal(size=n)),
        "t3": lambda n: rng.standard_t(3, size=n),
        "ar0.5": lambda n: _ar1(rng, n, 0.5),
        "ar0.9": lambda n: _ar1(rng, n, 0.9),
        "walk": lambda n: np.cumsum(rng.normal(size=n)),
    }
    rates = {}
    for kind, make in kinds.items():
        for n in (100, 300, 1000, 3000):
            rates[kind, n] = np.mean([season(make(n)) is not None for _ in range(100)])
    assert max(rates.values()) <= 0.02, rates


def test_short_constant_and_non_finite_series_have_no_season():
    assert season(np.arange(90.0)) is None  # fewer than MIN_READINGS
    assert season(np.full(500, 3.0)) is None
    assert season(np.r_[np.zeros(100), np.full(100, np.inf)]) is None
