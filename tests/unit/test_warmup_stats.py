"""Subsession analysis, CI of the arithmetic and harmonic mean, sample size, WPS, planner."""

from __future__ import annotations

import functools
import json
import math

import numpy as np
import pytest
from scipy import stats
from scipy.signal import lfilter

from perfcast.errors import InputError
from perfcast.warmup.ci import NotEnoughDataError, mean_ci, required_sample_size, t_quantile
from perfcast.warmup.cli_settings import command_settings
from perfcast.warmup.planner import (
    PlannerSettings,
    dyadic_fraction,
    next_round,
    ramp_increment,
)
from perfcast.warmup.settings import resolve_limit, warmup_settings
from perfcast.warmup.subsession import (
    PRESETS,
    block_means,
    lag1_autocorrelation,
    subsession_size,
)
from perfcast.warmup.wps import ols, wps_regression


@functools.cache
def defaults(command: str):
    """``perfcast COMMAND``'s settings, every one its schema's default (validated once)."""
    return command_settings(command)


def ci_of(x, **given):
    """:func:`mean_ci` with ``perfcast ci``'s settings (its schema's defaults) for what a test
    does not give."""
    s = defaults("ci")
    return mean_ci(x, **{"ac_limit": s.limit, "confidence": s.confidence,
                         "target_relative_width": s.target_relative_width, **given})


def wps_of(work, duration, **given):
    """:func:`wps_regression` with ``perfcast wps``'s settings (its schema's defaults) for what a
    test does not give."""
    s = defaults("wps")
    return wps_regression(work, duration, **{
        "lower_bound_s": s.lower_bound_s, "ac_limit": s.limit, "confidence": s.confidence,
        "max_prediction_error": s.max_prediction_error, **given})


def ar1(rng, n, rho, mean=10.0):
    return mean + lfilter([1], [1, -rho], rng.normal(size=n))


# ------------------------------------------------------------------------ subsession analysis
def test_block_means_and_lag1_known_values():
    assert block_means(np.arange(10.0), 3).tolist() == [1.0, 4.0, 7.0]  # tail of 1 left out
    assert lag1_autocorrelation(np.array([1.0, -1.0] * 50)) == pytest.approx(-0.99)
    assert lag1_autocorrelation(np.ones(10)) == 0.0
    x = np.array([1.0, 3.0, 2.0, 5.0, 4.0])
    d = x - x.mean()
    assert lag1_autocorrelation(x) == pytest.approx(np.dot(d[:-1], d[1:]) / np.dot(d, d))


def test_presets_and_subsession_size():
    assert PRESETS == {"quick": 0.8, "normal": 0.2, "strict": 0.1}
    assert resolve_limit(None, "normal") == 0.2 and resolve_limit(None, "strict") == 0.1
    assert resolve_limit(0.33, "quick") == 0.33
    assert warmup_settings({}).ci.limit == 0.2  # the schema's preset: normal
    assert warmup_settings({"ci": {"preset": "quick", "ac_limit": 0.5}}).ci.limit == 0.5
    with pytest.raises(InputError, match="ci.preset"):
        warmup_settings({"ci": {"preset": "sloppy"}})
    rng = np.random.default_rng(0)
    assert subsession_size(rng.normal(size=2000), 0.2)[0] == 1
    x = ar1(rng, 4000, 0.9)
    q_strict, r = subsession_size(x, 0.1)
    q_quick, _ = subsession_size(x, 0.8)
    assert q_strict > q_quick >= 1 and abs(r) <= 0.1
    # the q returned is the first that qualifies
    assert all(abs(lag1_autocorrelation(block_means(x, q))) > 0.1 for q in range(1, q_strict))
    # a random walk: no block size up to n // 3 decorrelates it
    walk = np.cumsum(np.random.default_rng(9).normal(size=60))
    q, r = subsession_size(walk, 0.1)
    assert q is None and r == pytest.approx(lag1_autocorrelation(block_means(walk, 20)))


def _first_q_one_by_one(x, limit, q_max=None):
    """Pilot's search, q = 1, 2, ... one at a time (quadratic): the reference."""
    r = float("nan")
    top = len(x) // 3 if q_max is None else min(q_max, len(x) // 3)
    for q in range(1, top + 1):
        r = lag1_autocorrelation(block_means(x, q))
        if abs(r) <= limit:
            return q, r
    return None, r


def test_batched_subsession_search_finds_the_same_q_as_trying_them_one_by_one():
    rng = np.random.default_rng(4)
    for case in range(120):
        n = int(rng.integers(3, 2500))
        x = ar1(rng, n, float(rng.choice([-0.5, 0.0, 0.5, 0.9, 0.99])))
        if case % 4 == 0:  # a warm-up: q grows to a sizeable fraction of n
            x[: n // 8] += float(rng.uniform(1, 20))
        limit = float(rng.choice([0.1, 0.2, 0.8]))
        q_max = None if case % 3 else int(rng.integers(1, 60))
        q, r = subsession_size(x, limit, q_max)
        q_ref, r_ref = _first_q_one_by_one(x, limit, q_max)
        assert q == q_ref, (case, n, limit, q_max)
        assert r == pytest.approx(r_ref, abs=1e-9, nan_ok=True)
    assert subsession_size(np.arange(2.0), 0.2) == (None, pytest.approx(float("nan"),
                                                                         nan_ok=True))


# --------------------------------------------------------------------------------------- CI
def test_ci_of_independent_readings_is_the_t_interval():
    rng = np.random.default_rng(1)
    x = rng.normal(5, 2, size=200)
    ci = ci_of(x, ac_limit=0.2)
    assert ci.q == 1 and ci.blocks == 200
    lo, hi = stats.t.interval(0.95, 199, loc=x.mean(), scale=stats.sem(x))
    assert (ci.lower, ci.upper) == pytest.approx((lo, hi))
    assert ci.width == pytest.approx(hi - lo)
    assert ci.variance == pytest.approx(x.var(ddof=1))


def test_residual_correction_restores_coverage_under_ar1():
    # AR(1) phi 0.5: the first q that passes the 0.2 limit leaves the subsession means
    # correlated, and their variance underestimates that of the mean; corrected by the AR(1)
    # factor of their remaining lag-1 autocorrelation, the coverage is nominal again
    rng = np.random.default_rng(12)
    plain = corrected = 0
    for _ in range(400):
        x = ar1(rng, 600, 0.5, mean=0.0) + 10.0
        a = ci_of(x, ac_limit=0.2)
        b = ci_of(x, ac_limit=0.2, residual_correction=True)
        assert b.q == a.q and b.mean == a.mean
        if a.autocorrelation > 0:
            factor = (1 + a.autocorrelation) / (1 - a.autocorrelation)
            assert b.variance == pytest.approx(a.variance * factor)
            assert b.width > a.width
        else:
            assert b.width == a.width
        plain += a.lower <= 10.0 <= a.upper
        corrected += b.lower <= 10.0 <= b.upper
    assert plain / 400 < 0.925 and 0.93 <= corrected / 400 <= 0.97


def test_ci_covers_the_mean_of_correlated_readings():
    rng = np.random.default_rng(2)
    covered = naive = 0
    for _ in range(300):
        x = ar1(rng, 600, 0.6)
        ci = ci_of(x)
        covered += ci.lower <= 10 <= ci.upper
        lo, hi = stats.t.interval(0.95, 599, loc=x.mean(), scale=stats.sem(x))
        naive += lo <= 10 <= hi
    assert covered / 300 >= 0.9  # subsession analysis restores (nearly) nominal coverage
    assert naive / 300 < 0.8  # ignoring the correlation does not


def test_harmonic_mean_ci_maps_the_reciprocal_interval():
    rng = np.random.default_rng(3)
    rates = 1.0 / rng.uniform(0.5, 1.5, size=300)
    h = ci_of(rates, harmonic=True)
    a = ci_of(1.0 / rates)
    assert h.mean == pytest.approx(stats.hmean(rates))
    assert (h.lower, h.upper) == pytest.approx((1 / a.upper, 1 / a.lower))
    assert h.lower < h.mean < h.upper
    covered = sum(
        (c := ci_of(1.0 / rng.uniform(0.5, 1.5, size=200), harmonic=True)).lower <= 1.0
        <= c.upper for _ in range(300))
    assert covered / 300 >= 0.92  # the harmonic mean of 1/U(0.5, 1.5) rates is 1
    with pytest.raises(ValueError):
        ci_of(np.r_[rates, 0.0], harmonic=True)


def test_required_sample_size_formula():
    # q * max(ceil(var * (t / e)^2), min_samples), e = half the target width
    assert required_sample_size(4.0, 2, 2.0, 1.0) == 2 * math.ceil(4 * (2 / 0.5) ** 2)
    assert required_sample_size(1e-6, 3, 2.0, 1.0) == 3 * 30
    rng = np.random.default_rng(4)
    x = rng.normal(100, 20, size=100)
    ci = ci_of(x, target_relative_width=0.01)
    need = ci.required_readings
    y = rng.normal(100, 20, size=need)
    assert ci_of(y).relative_width <= 0.0105  # that many readings do reach the target
    assert ci_of(x, target_relative_width=0.5).required_readings == 30


def test_a_target_near_0_or_a_level_near_1_is_an_error_not_an_overflow():
    """``(t / e) ** 2`` raised OverflowError at a target of 1e-160 and ``int(inf)`` at a level
    of 1 - 1e-16 (an infinite t): now a ValueError saying why; the settings bound both."""
    with pytest.raises(ValueError, match="more readings than a number can count"):
        required_sample_size(1.0, 1, 2.0, 1e-160)
    with pytest.raises(ValueError, match="too close to 1"):
        t_quantile(0.9999999999999999, 10)
    assert math.isfinite(t_quantile(0.9999, 2))  # the largest level the settings allow


@pytest.mark.parametrize("argv,flag", [
    (["ci", "--target", "1e-160"], "--target 1e-160"),
    (["ci", "--target", "1e-100"], "--target 1e-100"),
    (["ci", "--cl", "0.9999999999999999"], "--cl 0.9999999999999999"),
    (["stable", "--target", "1e-7"], "--target 1e-07"),
    (["watch", "--target", "1e-160"], "--target 1e-160"),
    (["wps", "--cl", "0.9999999999999999"], "--cl 0.9999999999999999"),
])
def test_the_target_and_the_level_are_bounded_and_the_error_names_the_flag(
        tmp_path, capsys, argv, flag):
    """A target below 1e-6 of the mean, or a level above 0.9999, is refused in one line naming
    the flag (was an OverflowError traceback, or 1.6e199 required readings at 1e-100, or
    ``v_lower`` null)."""
    from perfcast.cli import main

    f = tmp_path / "in.txt"
    if argv[0] == "wps":
        f.write_text("work,duration_s\n" + "".join(f"{w},{1 + w / 1000}\n"
                                                   for w in range(100, 500, 10)))
    else:
        f.write_text("".join(f"{1 + 0.01 * (i % 7)}\n" for i in range(40)))
    assert main([*argv[:1], str(f), *argv[1:]]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.count("\n") == 1
    assert f"error: command line: {flag} is " in cap.err
    assert ("minimum of 1e-06" if "target" in flag else "maximum of 0.9999") in cap.err


def test_required_sample_size_uses_pilots_preset_minimums():
    from perfcast.warmup.settings import warmup_settings

    rng = np.random.default_rng(6)
    x = rng.normal(100, 1, size=120)  # tiny variance: the minimum number of blocks decides
    normal = ci_of(x, target_relative_width=0.5, min_samples=50)
    strict = ci_of(x, target_relative_width=0.5, min_samples=200)
    assert normal.required_readings == normal.q * 50 and normal.enough
    assert strict.required_readings == strict.q * 200 and not strict.enough
    assert strict.to_dict()["enough"] is False
    # the workflow's presets: Pilot's quick 30, normal 50, strict 200; an explicit value wins
    assert warmup_settings({}).ci.samples_min == 50
    assert warmup_settings({"ci": {"preset": "strict"}}).ci.samples_min == 200
    assert warmup_settings({"ci": {"preset": "quick"}}).ci.samples_min == 30
    assert warmup_settings({"ci": {"preset": "strict", "min_samples": 7}}).ci.samples_min == 7


def test_ci_refuses_too_few_or_too_correlated_readings():
    with pytest.raises(NotEnoughDataError, match="at least 30"):
        ci_of(np.ones(29))
    with pytest.raises(NotEnoughDataError, match="autocorrelation"):
        # (a random walk no q of which passes 0.1; the blocks end at the newest reading, so
        # the search runs on the readings from the last, this walk's first)
        ci_of(np.cumsum(np.random.default_rng(9).normal(size=60))[::-1], ac_limit=0.1)
    assert t_quantile(0.95, 10) == pytest.approx(stats.t.ppf(0.975, 10))


# -------------------------------------------------------------------------------------- WPS
def test_wps_recovers_alpha_and_v_and_matches_ols_reference():
    import statsmodels.api as sm

    rng = np.random.default_rng(5)
    w = rng.uniform(1000, 10000, size=40).round()
    t = 2.0 + w / 500.0 + rng.normal(0, 0.3, size=40)
    res = wps_of(w, t)
    assert res.q == 1 and res.blocks == 40 and res.rounds_used == list(range(40))
    fit = sm.OLS(t, sm.add_constant(w)).fit()
    (a_lo, a_hi), (b_lo, b_hi) = fit.conf_int(0.05)
    assert res.alpha == pytest.approx(fit.params[0])
    assert (res.alpha_lower, res.alpha_upper) == pytest.approx((a_lo, a_hi))
    assert res.v == pytest.approx(1 / fit.params[1])
    assert (res.v_lower, res.v_upper) == pytest.approx((1 / b_hi, 1 / b_lo))
    assert res.v_lower <= 500 <= res.v_upper and res.alpha_lower <= 2 <= res.alpha_upper
    assert res.naive_v < res.v  # ignoring alpha underestimates the stable speed


def test_wps_drops_short_rounds_and_rounds_below_alpha():
    rng = np.random.default_rng(6)
    w = np.r_[[10, 20, 40], rng.uniform(2000, 9000, size=30).round()]
    t = 5.0 + w / 1000.0 + rng.normal(0, 0.05, size=w.size)
    t[:3] = [0.1, 0.2, 0.3]  # crashed or trivially short rounds
    res = wps_of(w, t, lower_bound_s=1.0)
    assert res.rounds_short == [0, 1, 2]
    assert res.v == pytest.approx(1000, rel=0.1)
    # alpha (5 s) is worth 5000 units: rounds with less work than that are dropped
    below = [i for i in range(3, w.size) if w[i] < res.alpha * res.v]
    assert res.rounds_below_alpha == sorted(set(below) | set(res.rounds_below_alpha))
    assert res.rounds_below_alpha and all(w[i] < 5500 for i in res.rounds_below_alpha)
    assert set(res.rounds_used).isdisjoint(res.rounds_below_alpha)


def test_wps_merges_correlated_rounds_into_block_means():
    rng = np.random.default_rng(7)
    n = 120
    w = rng.uniform(2000, 8000, size=n).round()
    drift = lfilter([1], [1, -0.9], rng.normal(0, 0.2, size=n))  # slowly drifting durations
    t = 1.0 + w / 2000 + drift
    res = wps_of(w, t)
    assert res.q > 1 and res.blocks == n // res.q
    # the fit is OLS on block means: intercept stays alpha (not q * alpha as with block sums)
    bw, bt = block_means(w, res.q), block_means(t, res.q)
    assert res.alpha == pytest.approx(ols(bw, bt).a)


def test_wps_prediction_error_is_the_residual_se_over_the_mean_duration():
    import statsmodels.api as sm

    rng = np.random.default_rng(15)
    w = rng.uniform(1000, 10000, size=40).round()
    t = 2.0 + w / 500.0 + rng.normal(0, 0.3, size=40)
    res = wps_of(w, t)
    fit = sm.OLS(t, sm.add_constant(w)).fit()
    assert res.residual_se == pytest.approx(np.sqrt(fit.scale))  # statsmodels' s^2 = SSR/(n-2)
    assert res.prediction_error == pytest.approx(np.sqrt(fit.scale) / t.mean())
    assert res.prediction_error < 0.05 and res.warning is None  # a line fits: no warning
    # durations that are not linear in the work (a quadratic term): high error, a warning
    t2 = 2.0 + w / 500.0 + (w / 2500.0) ** 2 * rng.choice([0.2, 3.0], size=40)
    bad = wps_of(w, t2)
    assert bad.prediction_error > 0.1
    assert bad.warning and f"{bad.prediction_error:.1%}" in bad.warning
    assert bad.to_dict()["warning"] == bad.warning
    assert wps_of(w, t2, max_prediction_error=0.9).warning is None


def test_a_wps_speed_ci_without_upper_bound_is_flagged_not_just_null():
    """Six rounds whose durations scatter more than the work explains (merged into 3 block
    means): the slope's CI reaches 0, so no speed is too high, and v_upper is infinite. JSON
    has no infinity, so it is written as null; the flag and the warning say why (an empty cell
    alone reads as a lost number). A fit with a bounded CI has the flag false and no
    warning."""
    from perfcast.warmup.figures import throughput_table

    w = np.array([1000.0, 2000, 3000, 4000, 5000, 6000])
    t = np.array([6.6, 1.1, 4.3, 2.9, 3.6, 4.6])
    res = wps_of(w, t, max_prediction_error=10.0)
    assert (res.q, res.blocks) == (2, 3)
    assert res.v > 0 and math.isinf(res.v_upper) and res.v_upper_unbounded
    d = res.to_dict()
    assert d["v_upper"] is None and d["v_width"] is None and d["v_upper_unbounded"] is True
    assert "no upper bound" in d["warning"] and "3 block means" in d["warning"]
    table = throughput_table({"scatter": {"wps": d}, "none": {}})
    assert table.set_index("workload")["wps_v_upper_unbounded"].to_dict() == {
        "none": None, "scatter": True}
    rng = np.random.default_rng(15)
    w = rng.uniform(1000, 10000, size=40).round()
    fine = wps_of(w, 2.0 + w / 500.0 + rng.normal(0, 0.3, size=40))
    assert not fine.v_upper_unbounded and fine.to_dict()["v_upper_unbounded"] is False
    assert fine.warning is None


def test_wps_refuses_what_it_cannot_fit():
    with pytest.raises(NotEnoughDataError, match="WPS needs 3"):
        wps_of([1, 2], [1.0, 2.0])
    with pytest.raises(NotEnoughDataError, match="equal"):
        wps_of([5, 5, 5, 5], [1.0, 1.1, 0.9, 1.0])
    with pytest.raises(NotEnoughDataError, match="grow"):
        wps_of([1, 2, 3, 4, 5, 6], [6.0, 5, 4, 3, 2, 1])


# ---------------------------------------------------------------------------------- planner
def test_dyadic_sequence_is_pilots_fig3():
    # Rd.1 = 1/2, Rd.2 = 1/4 (a..Rd.1), Rd.3 = 3/4, Rd.4..7 = 1/8..7/8, Rd.8 = 1/16
    assert [dyadic_fraction(j) for j in range(8)] == [1 / 2, 1 / 4, 3 / 4, 1 / 8, 3 / 8, 5 / 8,
                                                      7 / 8, 1 / 16]
    assert len({dyadic_fraction(j) for j in range(1023)}) == 1023


def test_ramp_increment_gives_the_requested_time():
    k, n = ramp_increment(1.0, 60.0, 50)
    assert n == 50 and sum(1.0 + i * k for i in range(n)) == pytest.approx(60.0)
    k, n = ramp_increment(2.0, 60.0, 50)  # 50 rounds of 2 s cannot fit in 60 s
    assert 3 <= n < 30 and k > 0 and sum(2.0 + i * k for i in range(n)) == pytest.approx(60.0)
    assert ramp_increment(30.0, 60.0, 50) == (0.0, 0)


def _simulate(settings, speed=1000.0, alpha_s=0.5, rounds=30, alpha_work=0.0):
    hist = []
    for _ in range(rounds):
        p = next_round([h[:2] for h in hist], settings, alpha_work)
        if p is None:
            break
        hist.append((p.work, alpha_s + p.work / speed, p.stage))
    return hist


def test_planner_calibrates_ramps_then_bisects():
    s = PlannerSettings(work_min=10, work_max=100_000, lower_bound_s=3.0, first_estimate_s=60,
                        first_estimate_rounds=10)
    hist = _simulate(s)
    works = [h[0] for h in hist]
    stages = [h[2] for h in hist]
    # doubling from 10 until a round lasts 3 s (0.5 + w / 1000 >= 3 -> w >= 2500)
    assert works[:9] == [10, 20, 40, 80, 160, 320, 640, 1280, 2560]
    first = 8
    assert all(st == "calibrate" for st in stages[:first])
    ramp = [h for h in hist if h[2] == "ramp"]
    k, n = ramp_increment(hist[first][1], 60, 10)
    assert len(ramp) == n - 1
    assert [h[0] for h in ramp] == [round(2560 * (1 + i * k / hist[first][1]))
                                    for i in range(1, n)]
    dy = [h[0] for h in hist if h[2] == "dyadic"]
    assert dy[:3] == [round(2560 + f * (100_000 - 2560)) for f in (0.5, 0.25, 0.75)]
    assert len(set(works)) == len(works)  # no work amount is run twice


def test_planner_respects_alpha_and_is_deterministic():
    s = PlannerSettings(work_min=1000, work_max=9000, lower_bound_s=0.1, first_estimate_s=1,
                        first_estimate_rounds=3)
    a = _simulate(s, rounds=12, alpha_work=5000)
    assert a == _simulate(s, rounds=12, alpha_work=5000)  # resume = replay
    assert all(h[0] >= 5000 for h in a if h[2] == "dyadic")
    # work_max too small to ever pass the lower bound: the planner gives up
    tiny = PlannerSettings(work_min=1, work_max=8, lower_bound_s=100, first_estimate_s=60,
                           first_estimate_rounds=50)
    hist = _simulate(tiny, rounds=20)
    assert [h[0] for h in hist] == [1, 2, 4, 8] and next_round(
        [h[:2] for h in hist], tiny) is None


@pytest.mark.parametrize("seed,q", [(2, 32), (7, 13)])
def test_wps_names_block_means_of_work_that_do_not_vary(tmp_path, capsys, seed, q):
    """Work amounts alternating 100, 200 with AR(1) durations (phi 0.9): the residuals need
    q = 32 (seed 2; every block holds 16 of each, so the block means of the work are equal)
    or q = 13 (seed 7; they differ by 100 / 13). The old errors blamed the data ("all work
    amounts are equal", "duration does not grow with the work amount"); the error now names
    the block means at q and what to do."""
    import random

    from perfcast.cli import main
    from perfcast.warmup.wps import work_kept

    random.seed(seed)
    rows, e = ["work,duration_s"], 0.0
    for i in range(200):
        w = 100 if i % 2 == 0 else 200
        e = 0.9 * e + random.gauss(0, 0.01)
        rows.append(f"{w},{1 + w / 1000 + e:.6f}")
    f = tmp_path / "alt.csv"
    f.write_text("\n".join(rows) + "\n")
    assert main(["wps", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "all work amounts are equal" not in err
    assert "does not grow" not in err
    assert f"the block means of the work amounts do not vary at the subsession size q = {q}" \
        in err and "alternate or repeat with a short period" in err
    assert "vary the work amounts over stretches longer than q rounds" in err
    w = np.array([100.0, 200.0] * 100)
    assert work_kept(w, 32) == 0.0 and work_kept(w, 13) < 0.5 / 13 < work_kept(w, 1)
    # a slope that is truly not positive, with work that does vary in the block means, keeps
    # the plain message
    rng = np.random.default_rng(3)
    w = rng.uniform(100, 3000, size=60)
    with pytest.raises(NotEnoughDataError, match="duration does not grow"):
        wps_regression(w, 5 - w / 1000 + 0.01 * rng.normal(size=60), lower_bound_s=0,
                       ac_limit=0.2, confidence=0.95, max_prediction_error=0.1)


def test_a_mean_of_0_has_no_required_sample_size(tmp_path, capsys):
    """Centred readings whose mean is exactly 0: a width relative to the mean cannot be met,
    where the required sample size fell back to n (120) and ``enough`` was true. Now
    ``required_readings`` null, ``target_undefined`` true, ``enough`` false and a warning;
    ``watch`` (which took n too) never stops on them, and ``stable`` notes it."""
    from perfcast.cli import main

    rng = np.random.default_rng(5)
    v = rng.integers(-5, 6, size=60).astype(float)
    x = np.r_[v, -v]
    rng.shuffle(x)
    ci = ci_of(x)
    assert ci.mean == 0.0 and ci.required_readings is None and ci.target_undefined
    assert ci.enough is False and ci.lower < 0 < ci.upper
    d = ci.to_dict()
    assert d["required_readings"] is None and d["target_undefined"] is True and not d["enough"]
    f = tmp_path / "c.txt"
    f.write_text("".join(f"{int(a)}\n" for a in x))
    assert main(["ci", "--allow-negative", str(f)]) == 0
    cap = capsys.readouterr()
    out = json.loads(cap.out)
    assert out["required_readings"] is None and out["enough"] is False
    assert out["target_undefined"] is True and "cannot be met" in out["warning"]
    assert "perfcast ci: warning:" in cap.err and "the mean the required sample size" in cap.err
    assert main(["watch", "--allow-negative", str(f)]) == 1
    cap = capsys.readouterr()
    last = json.loads(cap.out.splitlines()[-1])
    assert last["stop"] is False and last["required_readings"] is None
    assert last["target_undefined"] is True and "cannot be met" in cap.err
    assert main(["stable", "--allow-negative", str(f)]) == 0
    cap = capsys.readouterr()
    out = json.loads(cap.out)
    assert out["mean"]["required_readings"] is None and "cannot be met" in out["note"]
    # a mean that is not 0 keeps its required sample size
    assert ci_of(x + 10).required_readings is not None and not ci_of(x + 10).target_undefined


def test_wps_names_the_rounds_outside_its_blocks():
    """The newest len(rounds_used) % q rounds form no whole block: the speed does not come
    from them, and the result says which they are."""
    rng = np.random.default_rng(1)
    work = rng.integers(100, 3200, size=41).astype(float)
    e = np.zeros(41)
    for i in range(1, 41):
        e[i] = 0.6 * e[i - 1] + 0.01 * rng.standard_normal()
    res = wps_regression(work, 0.5 + work / 1000 + e, lower_bound_s=0.0, ac_limit=0.2,
                         confidence=0.95, max_prediction_error=0.1)
    assert res.q > 1 and len(res.rounds_used) % res.q
    assert res.rounds_outside_blocks == res.rounds_used[res.blocks * res.q:]
    assert len(res.rounds_outside_blocks) == len(res.rounds_used) % res.q
    assert res.to_dict()["rounds_outside_blocks"] == res.rounds_outside_blocks
