"""Change points: Pilot's EDM_percent reproduced exactly, and the robust default's guarantees."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest

from perfcast.errors import InputError
from perfcast.warmup.changepoint import change_points
from perfcast.warmup.cli_settings import command_settings
from perfcast.warmup.edm_pilot import edm_percent
from perfcast.warmup.edm_robust import _refine, critical_value, edm_robust, rank_scan
from perfcast.warmup.segments import detect_phases, dominant_segment, segments
from perfcast.warmup.settings import warmup_settings

#: ``perfcast edm``'s defaults without the effect-size filter (robust)
EDM = command_settings("edm", {"min_effect": 0.0})


def slice_medians(z):
    """``median(a, b)``: the median of ``z[a:b]``, each slice's computed once."""
    return functools.cache(lambda a, b: float(np.median(z[a:b])))


def edm_percent_reference(z, min_size=30, percent=0.25, degree=1, median=None):
    """The published EDM_percent recursion, literally: medians of slices, no trees
    (``median``: :func:`slice_medians` of ``z``, shared by calls on the same series)."""
    n = len(z)
    median = median or slice_medians(z)
    prev, number, f = [0] * (n + 1), [0] * (n + 1), [0.0] * (n + 1)
    g = {0: lambda k: 0.0, 1: lambda k: 1.0, 2: lambda k: 2.0 * k + 1.0}[degree]
    for s in range(2 * min_size, n + 1):
        for t in range(min_size, s - min_size + 1):
            p = prev[t]
            d = median(p, t) - median(t, s)
            tmp = f[t] + (t - p) * (s - t) / ((s - p) ** 2) * (d * d)
            if tmp > f[s]:
                number[s], f[s], prev[s] = number[t] + 1, tmp, t
        if prev[s] and f[s] - f[prev[s]] < percent * g(number[prev[s]]) * f[prev[s]]:
            number[s], f[s], prev[s] = number[prev[s]], f[prev[s]], prev[prev[s]]
    out, at = [], n
    while at:
        if prev[at]:
            out.append(prev[at])
        at = prev[at]
    return sorted(out)


# ------------------------------------------------------------------------------ pilot mode
def test_pilot_known_answers_from_pilots_own_tests():
    # pilot-bench lib/test/unit_test_statistics.cc: TestChangeInMean1 and FindDominantSegment
    assert edm_percent(np.array([1.1] * 30 + [5.1] * 30 + [1.1] * 30)) == [30, 60]
    x = np.array([1.1] * 30 + [5.1] * 130 + [1.1] * 30)
    cps = edm_percent(x)
    assert dominant_segment(len(x), cps) == (30, 131)  # the quirk Pilot's test pins down
    assert dominant_segment(90, [30, 60]) is None


@pytest.mark.parametrize("seed", range(6))
def test_pilot_matches_reference_recursion(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(60, 140))
    kind = seed % 3
    if kind == 0:
        z = rng.normal(size=n)
    elif kind == 1:  # few distinct values: exact ties in medians and statistics
        z = rng.integers(0, 3, size=n).astype(float)
    else:
        z = rng.exponential(size=n)
        z[: n // 4] += 2.0
    min_size = int(rng.integers(5, 25))
    median = slice_medians(z)
    for degree in (0, 1, 2):
        assert edm_percent(z, min_size=min_size, percent=0.25, degree=degree) == \
            edm_percent_reference(z, min_size, 0.25, degree, median)


def test_pilot_first_change_point_is_never_penalised():
    rng = np.random.default_rng(7)
    hits = sum(bool(edm_percent(rng.normal(size=120))) for _ in range(20))
    assert hits >= 16  # i.i.d. noise almost always gets one (a known weakness)
    # with degree 0 (no penalty at all) it is the same recursion with G = 0
    z = rng.normal(size=90)
    assert edm_percent(z, degree=0) == edm_percent_reference(z, 30, 0.25, 0)


def test_pilot_short_series_have_no_change_point():
    assert edm_percent(np.arange(59.0)) == []
    assert len(edm_percent(np.r_[np.zeros(30), np.ones(30)])) == 1


# ------------------------------------------------------------------------------ robust mode
@pytest.mark.parametrize("n,series", [(100, 150), (1000, 120),
                                      pytest.param(10_000, 40, marks=pytest.mark.study)])
@pytest.mark.parametrize("dist", ["normal", "exponential", "cauchy", "five-values"])
def test_robust_no_change_point_on_iid_noise(n, series, dist):
    rng = np.random.default_rng([n, len(dist)])
    draw = {
        "normal": lambda: rng.normal(size=n),
        "exponential": lambda: rng.exponential(size=n),
        "cauchy": lambda: rng.standard_cauchy(size=n),
        "five-values": lambda: rng.integers(0, 5, size=n).astype(float),
    }[dist]
    clean = sum(not edm_robust(draw()) for _ in range(series))
    assert clean / series >= 0.95


@pytest.mark.parametrize("n", [200, 1000, pytest.param(10_000, marks=pytest.mark.study)])
def test_robust_locates_a_step_at_40_within_2_samples(n):
    rng = np.random.default_rng(n)
    errors = []
    for _ in range(40):
        x = rng.normal(size=n)
        x[:40] += 3.0  # a warm-up of 40 readings, 3 standard deviations slower
        cps = edm_robust(x)
        errors.append(min((abs(c - 40) for c in cps), default=10**9))
    errors = np.array(errors)
    assert np.mean(errors <= 2) >= 0.95
    assert np.median(errors) == 0


def test_robust_is_unbiased_where_pilot_is_not():
    rng = np.random.default_rng(11)
    rob, pil = [], []
    for _ in range(15):
        x = rng.normal(size=300)
        x[:40] += 2.0
        rob.append(min(edm_robust(x), key=lambda c: abs(c - 40), default=0))
        pil.append(min(edm_percent(x), key=lambda c: abs(c - 40), default=0))
    assert abs(np.mean(rob) - 40) < 1.5
    assert np.mean(np.abs(np.array(rob) - 40)) < np.mean(np.abs(np.array(pil) - 40))


def test_robust_finds_several_changes_and_scales():
    rng = np.random.default_rng(3)
    x = rng.normal(size=100_000)
    x[:40] += 3
    x[60_000:] += 0.5
    x[-1000:] -= 2
    cps = edm_robust(x)
    assert len(cps) == 3
    assert abs(cps[0] - 40) <= 2 and abs(cps[2] - 99_000) <= 2
    assert abs(cps[1] - 60_000) <= 30  # a half-sigma shift is located less sharply


def test_robust_handles_heavy_tails_and_outliers():
    rng = np.random.default_rng(5)
    x = rng.standard_cauchy(2000) * 0.1 + 10
    x[:100] += 3
    cps = edm_robust(x)
    assert len(cps) == 1 and abs(cps[0] - 100) <= 2


def test_robust_ignores_short_range_autocorrelation():
    from scipy.signal import lfilter

    rng = np.random.default_rng(9)
    false = sum(bool(edm_robust(lfilter([1], [1, -0.5], rng.normal(size=2000))))
                for _ in range(40))
    assert false <= 4


def _ar1(rng, n, phi):
    from scipy.signal import lfilter

    return lfilter([1], [1, -phi], rng.normal(size=n + 300))[300:]  # burn-in: stationary


@pytest.mark.parametrize("phi", [0.5, 0.9])
@pytest.mark.parametrize("n,series", [(60, 150), (200, 150), (1000, 100),
                                      pytest.param(10_000, 20, marks=pytest.mark.study)])
def test_robust_is_calibrated_under_ar1_dependence(phi, n, series):
    """No change, AR(1) readings, alpha 0.01, no effect filter: a change point in at most 5 %
    of series (the detector this replaced: 5 of 40 at phi 0.5, n 60; 7 of 40 at 0.9, 1000)."""
    rng = np.random.default_rng([int(phi * 10), n])
    false = sum(bool(edm_robust(_ar1(rng, n, phi), alpha=0.01)) for _ in range(series))
    assert false <= 0.05 * series


def test_dependence_factor_is_the_long_run_variance_of_ar1():
    from perfcast.warmup.edm_robust import dependence_factor, normal_scores

    rng = np.random.default_rng(8)
    for phi in (0.0, 0.5, 0.9):
        s = normal_scores(_ar1(rng, 100_000, phi))
        # (1 + phi) / (1 - phi) for the normal scores of a Gaussian AR(1): 1, 3, 19
        assert dependence_factor(s, 50_000) == pytest.approx((1 + phi) / (1 - phi), rel=0.12)


def test_two_changes_in_a_short_series_are_found_together():
    """+1.5 sd at n/3, -1 sd at 2n/3 of 200 i.i.d. readings: both found (within 10 readings)
    in at least 60 % of series, and no change point in at least 98 % of series without change
    (with the dependence factor around the first split alone, the second change passed for
    dependence: both found in 53 of these 100 series)."""
    rng = np.random.default_rng(24)
    both = 0
    for _ in range(100):
        x = rng.normal(size=200)
        x[66:] += 1.5
        x[133:] -= 1.0
        cps = edm_robust(x, alpha=0.01)
        both += all(any(abs(c - t) <= 10 for c in cps) for t in (66, 133))
    assert both >= 60
    false = sum(bool(edm_robust(rng.normal(size=200), alpha=0.01)) for _ in range(100))
    assert false <= 2


def test_dependence_factor_does_not_take_a_second_change_for_dependence():
    from perfcast.warmup.edm_robust import dependence_factor, normal_scores

    rng = np.random.default_rng(5)
    x = rng.normal(size=2000)
    x[700:] += 1.5
    x[1400:] -= 1.0
    s = normal_scores(x)
    # around the first change alone the second one passes for dependence (residuals of two
    # pieces: lag-1 autocorrelation 0.18, a factor of 1.8); with four pieces it is i.i.d.
    assert dependence_factor(s, 700) == pytest.approx(1.0, abs=0.15)
    ar = normal_scores(_ar1(rng, 2000, 0.9))
    assert dependence_factor(ar, 1000) > 8  # a real dependence is still seen (19)


def test_a_linear_trend_is_not_taken_for_dependence():
    """The dependence factor is estimated around each piece's least-squares line: a trend is a
    level that moves, not dependence. Around piece means alone, a trend over i.i.d. readings
    read as a factor of 2.7-3.2 and over AR(1) readings (phi 0.8, factor 9) as 14-17, raising
    the threshold until it swallowed the changes of trending series."""
    from perfcast.warmup.edm_robust import dependence_factor

    t = np.arange(2000)
    for seed in range(5):
        rng = np.random.default_rng(seed)
        e = rng.normal(size=2000)
        ar = _ar1(rng, 2000, 0.8)
        assert dependence_factor(e + 0.005 * t, 1000) == pytest.approx(
            dependence_factor(e, 1000), abs=0.05)
        assert dependence_factor(e + 0.005 * t, 1000) < 1.1
        # (1 + 0.8) / (1 - 0.8) = 9, with or without the trend
        assert dependence_factor(ar + 0.01 * t, 1000) == pytest.approx(
            dependence_factor(ar, 1000), rel=0.15)
        assert 6 < dependence_factor(ar + 0.01 * t, 1000) < 12


def test_a_change_of_drift_is_found_in_the_increments():
    """A random walk whose drift turns from 0 to +1 sd per reading half-way (400 readings): the
    level analysis alone found the turn (within 10 readings) in 0 of these 100 series, the
    increments' analysis of an integrated series in 94."""
    from perfcast.warmup.edm_robust import _changes, integrated

    rng = np.random.default_rng(40)
    found = level_only = 0
    for _ in range(100):
        inc = rng.normal(size=400)
        inc[200:] += 1.0
        x = np.cumsum(inc)
        assert integrated(x)
        found += any(abs(c - 200) <= 10 for c in edm_robust(x))
        level_only += any(abs(c - 200) <= 10 for c in _changes(x, 10, 0.01, True))
    assert found >= 85 and level_only <= 5


@pytest.mark.study
def test_a_driftless_random_walk_is_not_split():
    """A random walk has no level to change: the level analysis, calibrated for stationary
    readings, splits a fifth or more of these walks of 1,000 readings; the increments'
    analysis that replaces it on integrated series splits at most a tenth (the walks not
    recognised as integrated, and alpha), and on 200 readings no more than it."""
    from perfcast.warmup.edm_robust import _changes

    rng = np.random.default_rng(11)
    counts = {}
    for n in (200, 1000):
        walks = [np.cumsum(rng.normal(size=n)) for _ in range(150)]
        counts[n] = (sum(bool(edm_robust(w)) for w in walks),
                     sum(bool(_changes(w, 10, 0.01, True)) for w in walks))
    assert counts[200][0] <= counts[200][1], counts
    assert counts[1000][0] <= 15 and counts[1000][1] >= 30, counts


def test_a_periodic_series_is_not_integrated_and_its_step_is_found():
    """A sawtooth comes back to its level every period: it is no random walk, although its
    variance ratio at lag 20 (period 12: 1.5) says drift, since the trimmed lag-1 mean square
    keeps only the climb. Taken for integrated, its step of five climbs' height at reading 200
    was looked for in the increments and missed; the level analysis finds it."""
    from perfcast.warmup.edm_robust import integrated, variance_ratio

    rng = np.random.default_rng(5)
    t = np.arange(600)
    for period in (5, 7, 12):
        for sd in (0.0, 0.002):
            x = 0.01 * (t % period) + np.where(t >= 200, 0.05, 0.0) + rng.normal(0, sd, 600)
            assert not integrated(x), (period, sd)
            cuts = edm_robust(x)
            assert len(cuts) == 1 and abs(cuts[0] - 200) <= 2, (period, sd, cuts)
    assert variance_ratio(0.01 * (t % 12), 20) > 1  # what took it for a drift
    # a walk and a drift still never come back
    e = rng.normal(size=1000)
    assert integrated(np.cumsum(e)) and integrated(np.cumsum(e + 0.3))


def test_variance_ratio_known_answers():
    """Lo & MacKinlay's ratio: 1 for a random walk, 1/q for i.i.d. readings, (1 - phi^q) /
    (q (1 - phi)) for an AR(1) (0.44 for phi 0.9 and 0.64 for 0.95 at lag 20), above 1 for a
    drift; a few level steps do not move it (the trimmed mean squares)."""
    from perfcast.warmup.edm_robust import variance_ratio

    rng = np.random.default_rng(42)
    e = rng.normal(size=200_000)
    assert variance_ratio(np.cumsum(e[:100_000]), 20) == pytest.approx(1.0, abs=0.03)
    assert variance_ratio(e[:100_000], 20) == pytest.approx(1 / 20, rel=0.05)
    for phi in (0.9, 0.95):
        want = (1 - phi ** 20) / (20 * (1 - phi))
        assert variance_ratio(_ar1(rng, 100_000, phi), 20) == pytest.approx(want, rel=0.05)
    assert variance_ratio(np.cumsum(e[:1000] + 0.5), 20) > 1.5
    steps = np.r_[np.zeros(100), np.full(100, 5.0), np.full(100, 9.0)] + 0.1 * e[:300]
    assert variance_ratio(steps, 20) < 0.2
    assert variance_ratio(np.ones(50), 5) == 0.0


def test_stationary_series_are_not_integrated():
    """The increments are analysed only where the level wanders or drifts: never on i.i.d.
    (normal or lognormal) or AR(1) readings with phi 0.5, nor on a level step."""
    from perfcast.warmup.edm_robust import integrated

    rng = np.random.default_rng(41)
    for _ in range(50):
        step = rng.normal(size=500)
        step[250:] += 5.0
        for x in (rng.normal(size=500), rng.lognormal(size=500), _ar1(rng, 500, 0.5), step):
            assert not integrated(x)
    assert integrated(np.cumsum(rng.normal(size=500) + 0.2))


def test_spread_scores_are_distribution_free_and_symmetric():
    from perfcast.warmup.edm_robust import spread_scores

    rng = np.random.default_rng(1)
    a = np.sort(spread_scores(rng.normal(size=201)))
    b = np.sort(spread_scores(rng.exponential(size=201) ** 3))
    assert a == pytest.approx(b)  # the same set of values whatever the readings
    assert a.mean() == pytest.approx(0, abs=1e-3)  # nearly centred: not skewed like a^2
    # the median reading gets the lowest score, the two extremes share the highest
    x = np.arange(11.0)
    s = spread_scores(x)
    assert s.argmin() == 5 and s[0] == s[10] == s.max()


def test_robust_sees_a_tenfold_change_of_spread():
    rng = np.random.default_rng(21)
    hits = 0
    for _ in range(40):
        x = 100 + rng.normal(size=600)
        x[300:] = 100 + (x[300:] - 100) * 10  # same mean, 10x the standard deviation
        hits += min((abs(c - 300) for c in edm_robust(x)), default=10**9) <= 15
    assert hits / 40 >= 0.9


def test_robust_keeps_the_power_for_a_one_sd_shift():
    rng = np.random.default_rng(22)
    hits = 0
    for _ in range(40):
        x = rng.normal(size=600)
        x[300:] += 1.0
        hits += min((abs(c - 300) for c in edm_robust(x)), default=10**9) <= 10
    assert hits / 40 >= 0.9


def test_robust_reports_a_change_of_level_and_spread_once():
    rng = np.random.default_rng(23)
    once = 0
    for _ in range(40):
        x = rng.normal(size=600)
        x[300:] = x[300:] * 5 + 3
        cps = edm_robust(x)
        once += len(cps) == 1 and abs(cps[0] - 300) <= 10
    assert once / 40 >= 0.9


def test_min_effect_counts_changes_of_spread():
    rng = np.random.default_rng(24)
    x = 10 + rng.normal(size=2000) * 0.1
    x[1000:] = 10 + (x[1000:] - 10) * 10  # spread 0.1 -> 1: 9 % of the median
    assert edm_robust(x, min_effect=0.05) == pytest.approx([1000], abs=15)
    assert edm_robust(x, min_effect=0.2) == []


def test_min_effect_drops_small_but_significant_shifts():
    rng = np.random.default_rng(2)
    x = 100 + rng.normal(size=20_000) * 0.5
    x[10_000:] += 1.0  # 1 % shift: real, detected, but below a 5 % effect
    x[:200] += 30
    assert len(edm_robust(x)) == 2
    assert edm_robust(x, min_effect=0.05) == pytest.approx([200], abs=2)


def test_critical_value_grows_slowly_with_n_and_rank_scan_is_exact():
    cv = [critical_value(m, 10, 0.01) for m in (100, 10_000, 1_000_000)]
    assert cv[0] < cv[1] < cv[2] < 4.5
    assert critical_value(19, 10, 0.01) == np.inf
    # the standardised statistic at the true split of a clean step is the largest possible
    x = np.r_[np.zeros(50), np.ones(50)]
    k, z = rank_scan(x)
    assert k == 50 and z > 9
    assert rank_scan(np.ones(100)) == (-1, 0.0)


def test_a_step_is_placed_at_its_first_reading_after_the_change():
    # a clean step (12 sd) at reading 71 of 365, like a nightly benchmark's: the change point
    # is 71, the first reading of the new level, never 70
    for seed in range(30):
        rng = np.random.default_rng(seed)
        x = 24_700 + 300 * rng.normal(size=365)
        x[71:] += 3_600
        assert 71 in edm_robust(x), seed
    # ... also with a small step (3 sd) ten readings before it, inside the segment the big
    # step is re-located in (the spread scores then peak one reading early)
    rng = np.random.default_rng(1)
    x = 23_700 + 150 * rng.normal(size=365)
    x[61:] += 700
    x[71:] += 3_600
    cps = edm_robust(x)
    assert 71 in cps and 70 not in cps
    assert _refine(np.r_[np.zeros(50), np.ones(50)], 47, 10) == 50


def test_settings_dispatch_and_segments():
    x = np.r_[np.full(40, 5.0), np.full(100, 1.0)] + np.random.default_rng(0).normal(
        size=140) * 0.01
    pilot = command_settings("edm", {"mode": "pilot"})
    assert change_points(x, pilot) == edm_percent(x)
    assert change_points(x, EDM) == edm_robust(x)
    assert pilot.segment_min == 30 and EDM.segment_min == 10
    assert pilot.to_dict() == {"mode": "pilot", "min_size": 30, "alpha": 0.01,
                               "min_effect": 0.05, "cycles": True}
    # the schemas refuse an unknown mode; the detector's dispatch does too
    with pytest.raises(InputError, match="edm.mode"):
        command_settings("edm", {"mode": "magic"})
    with pytest.raises(InputError, match="edm.mode"):
        warmup_settings({"edm": {"mode": "magic"}})
    with pytest.raises(ValueError, match="magic"):
        change_points(x, dataclasses.replace(EDM, mode="magic"))
    assert segments(10, [3, 7]) == [(0, 3), (3, 7), (7, 10)]


def test_phases_rule():
    rng = np.random.default_rng(4)
    x = rng.normal(size=400) * 0.05 + 1
    x[:50] += 2
    x[-30:] += 1
    ph = detect_phases(x, EDM)
    assert ph.rule == "dominant" and ph.has_stable
    assert abs(ph.warmup_len - 50) <= 2 and abs(ph.cooldown_len - 30) <= 2
    labels = ph.labels()
    assert set(labels[:45]) == {"warmup"} and set(labels[-25:]) == {"cooldown"}
    # fewer than 30 readings: not split, all stable (Pilot's rule)
    short = detect_phases(x[:29], EDM)
    assert short.rule == "short" and short.stable == (0, 29)
    # no segment with more than half: no stable phase, labelled unstable
    y = np.r_[np.zeros(100), np.ones(100) * 5, np.zeros(100) * 2 + 9] + rng.normal(size=300) * .1
    none = detect_phases(y, EDM)
    assert none.rule == "none" and not none.has_stable and set(none.labels()) == {"unstable"}
    # fallback "edges": three long program phases are all stable ...
    edges = detect_phases(y, EDM, fallback="edges", edge_fraction=0.2)
    assert edges.rule == "edges" and edges.stable == (0, 300)
    # ... and a warm-up and cool-down near the ends are still cut off
    z = np.r_[np.full(30, 20.0), y, np.full(20, 15.0)] + rng.normal(size=350) * .1
    edges = detect_phases(z, EDM, fallback="edges", edge_fraction=0.2)
    assert edges.stable == pytest.approx((30, 330), abs=2)
    with pytest.raises(ValueError, match="edge_fraction"):
        detect_phases(z, EDM, fallback="edges")


def test_a_step_under_a_cycle_is_found_with_the_cycle_taken_out():
    """A step of 1 noise sd under a sine of 2 sd (periods of 8 to 60 readings): with the cycle
    taken out (the default) it is located within 5 readings in most series; judged against the
    cycle's swing (``cycles=False``) in few (benchmarks/bench_season.py: 75 % against 25 % of
    200 series). The same cycles without a step give no change point."""
    rng = np.random.default_rng(21)
    t = np.arange(600)
    on = off = false = 0
    for _ in range(30):
        cycle = 2 * np.sin(2 * np.pi * t / rng.uniform(8, 60) + rng.uniform(0, 6))
        x = cycle + rng.normal(size=600) + 1.0 * (t >= 300)
        on += any(abs(c - 300) <= 5 for c in edm_robust(x))
        off += any(abs(c - 300) <= 5 for c in edm_robust(x, cycles=False))
        false += bool(edm_robust(cycle + rng.normal(size=600)))
    assert on >= 18 and off <= 12 and false <= 2, (on, off, false)


def test_a_cycle_that_differs_between_the_halves_is_not_taken_out():
    """A cycle that starts half-way, taken out of the whole series, would put a cycle of its
    own into the first half: it is left in, and the change points are those found with the
    cycle kept. A series without a cycle is returned as it is."""
    from perfcast.warmup.season import component, deseasonalised, season

    rng = np.random.default_rng(4)
    t = np.arange(800)
    x = 2.0 * np.sin(2 * np.pi * t / 16) * (t >= 400) + rng.normal(size=800)
    cycle = season(x)
    assert cycle is not None and cycle.period == pytest.approx(16, rel=0.01)
    assert component(x, cycle) is None
    y, found = deseasonalised(x)
    assert found is None and (y == x).all()
    assert edm_robust(x) == edm_robust(x, cycles=False)
    plain = rng.normal(size=500)
    y, found = deseasonalised(plain)
    assert found is None and (y == plain).all()
    # the same cycle throughout is taken out, leaving the noise
    same = 2.0 * np.sin(2 * np.pi * t / 16) + rng.normal(size=800)
    y, found = deseasonalised(same)
    assert found is not None and np.std(y) == pytest.approx(1.0, abs=0.1)


@pytest.mark.parametrize("period", [2, 3, 4, 7])
@pytest.mark.parametrize("sd", [0.0, 0.001, 0.05])
def test_a_short_exact_cycle_with_little_noise_is_taken_out(period, sd):
    """A cycle of a few readings, the same throughout, with noise from none to a tenth of its
    amplitude, is the same cycle in both halves: it is taken out and leaves the noise. Two
    things made the halves' test reject it: its frequency refined to the periodogram's
    maximum, which a real cycle's mirror image at -f moves off the cycle's (300 noise-free
    readings of a cycle of 3: 3e-6 off, a residual cycle the test saw), and, for a cycle of 2
    readings, a frequency just below the Nyquist frequency, where the sine is a nearly zero
    alternation that the fit gives any coefficient. Before, a cycle of 2 or 3 readings with
    noise of 0 or 0.1 % of its amplitude was kept in, and the output said it differed between
    the halves."""
    from perfcast.warmup.season import _refined, component, season

    t = np.arange(300)
    rng = np.random.default_rng(period)
    x = 10 + 0.5 * np.cos(2 * np.pi * t / period + 0.3) + sd * rng.normal(size=300)
    cycle = season(x)
    assert cycle is not None and cycle.period == pytest.approx(period, rel=0.01)
    part = component(x, cycle)
    assert part is not None
    assert np.std(x - part) == pytest.approx(sd, abs=max(0.1 * sd, 1e-6))
    if sd == 0 and period > 2:  # the least-squares frequency of a noise-free cycle is exact
        d = np.diff(x)
        assert _refined(d, 1 / period + 1e-5, 1) == pytest.approx(1 / period, abs=1e-9)
