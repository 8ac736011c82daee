"""The normal-form search: every exponent/log combination recovered exactly from noise-free
data, sums of two terms, multi-parameter sums and products, repetitions aggregated, CV SMAPE."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from perfcast.errors import InputError
from perfcast.settings import from_section
from perfcast.sweep import normalform as nf
from perfcast.sweep.selection import make_folds
from perfcast.sweep.settings import SweepSettings

DEFAULTS = from_section(SweepSettings, {}, "sweep").fit.normal_form
SPACE = nf.Space.from_settings(DEFAULTS)
ONE_TERM = nf.Space(SPACE.pairs, 1)
P = 2.0 ** np.arange(1, 8)  # 2 ... 128


def folds(groups):
    return make_folds(groups, 10)


def test_default_space_is_extraps_terms_and_their_negative_mirror():
    assert len(SPACE.pairs) == 82
    assert (Fraction(-11, 4), 0) in SPACE.pairs and (Fraction(-1, 2), 1) in SPACE.pairs
    assert (Fraction(0), 2) in SPACE.pairs and (Fraction(5, 3), 2) not in SPACE.pairs
    assert {j for _, j in SPACE.pairs} == {0, 1, 2}
    assert nf.parse_exponent(" -2/3") == Fraction(-2, 3)
    with pytest.raises(InputError, match="not a number"):
        nf.parse_exponent("x")
    bad = type("S", (), {"terms": ("0:0",), "max_terms": 1})
    with pytest.raises(InputError, match="not 0:0"):
        nf.Space.from_settings(bad)


def test_a_wider_space_is_a_setting():
    wide = from_section(SweepSettings, {"fit": {"normal_form": {
        "terms": [f"{i}:{j}" for i in ("1/2", "5/3", "-1") for j in (0, 1, 2)]}}}, "sweep")
    space = nf.Space.from_settings(wide.fit.normal_form)
    assert (Fraction(5, 3), 2) in space.pairs and len(space.pairs) == 9


@pytest.mark.parametrize("i, j", SPACE.pairs)
def test_each_exponent_and_log_combination_is_recovered_exactly(i, j):
    truth = nf.Factor(0, i, j)
    y = 5 + 3 * truth.of(P)
    s = nf.search(P.reshape(-1, 1), y, ["p"], ONE_TERM, folds)
    assert s.best is not None and s.best.terms == ((truth,),)
    assert np.allclose(s.best.coef, [5, 3], rtol=1e-6)
    assert s.best.cv_smape < 1e-6


@pytest.mark.parametrize("a, b", [((1, 0), (0, 1)), ((2, 0), (1, 1)),
                                  ((Fraction(-1, 2), 0), (-1, 0))])
def test_sums_of_two_terms_are_recovered_and_one_term_kept_when_it_suffices(a, b):
    fa, fb = nf.Factor(0, Fraction(a[0]), a[1]), nf.Factor(0, Fraction(b[0]), b[1])
    y = 1 + 2 * fa.of(P) + 0.5 * fb.of(P)
    s = nf.search(P.reshape(-1, 1), y, ["p"], SPACE, folds)
    assert sorted(s.best.terms) == sorted([(fa,), (fb,)])
    one = nf.search(P.reshape(-1, 1), 1 + 2 * fa.of(P), ["p"], SPACE, folds)
    assert one.best.terms == ((fa,),)  # the sum with a zero coefficient is not chosen


def test_sums_of_a_growing_and_a_decaying_term_and_cancelling_sums_are_not_laws():
    hyps = nf.single_parameter_hypotheses(P, SPACE)
    pairs = [h for h in hyps if h.n_terms == 2]
    assert pairs and all(nf._direction(a) == nf._direction(b) for (a,), (b,) in
                         (h.terms for h in pairs))
    f1, f2 = nf.Factor(0, Fraction(3, 2), 0), nf.Factor(0, Fraction(2), 1)
    h = nf.Hypothesis(((f1,), (f2,)), "single")
    nf.cv_scores([h], P.reshape(-1, 1), 1 + 0.6 * f1.of(P) - 0.004 * f2.of(P), folds(P))
    assert np.isnan(h.cv_smape)  # opposite signs: the terms cancel, not scored


def test_formula_is_one_readable_line():
    s = nf.search(P.reshape(-1, 1), 3 + 0.5 * P * np.log2(P), ["p"], ONE_TERM, folds)
    assert s.best.formula(["p"], "t") == "t = 3 + 0.5 * p * log2(p)"
    h = nf.Hypothesis(((nf.Factor(0, Fraction(-1, 2), 2),),), "single", coef=np.array([1, -2]))
    assert h.formula(["n"]) == "1 - 2 * n^(-1/2) * log2(n)^2"


def test_log_and_negative_powers_need_positive_values():
    x = np.array([0.0, 1, 2, 3])
    pairs = [(Fraction(i), j) for i in (-1, 0, Fraction(1, 2), 2) for j in (0, 1)
             if (i, j) != (0, 0)]
    space = nf.Space(tuple(pairs), 1)
    names = {(f.i, f.j) for f in space.factors(x)}
    assert names == {(Fraction(2), 0)}  # p^2 only: 0^-1, 0^0.5 * .., log2(0) are not finite
    assert (Fraction(0), 1) in {(f.i, f.j) for f in space.factors(np.array([1.0, 2, 4]))}


def test_values_no_term_admits_leave_the_constant_and_one_term_the_one_term():
    """Sums of two terms are searched over pairs of admissible terms: none (p <= 0 everywhere a
    log or root needs p > 0) or one leaves no pair, and no error."""
    space = nf.Space(((Fraction(1, 2), 0), (Fraction(0), 1)), 2)
    x = np.array([-3.0, -2.0, -1.0, 0.0, 1.0])
    assert [h.kind for h in nf.single_parameter_hypotheses(x, space)] == ["constant"]
    space = nf.Space(((Fraction(1), 0), (Fraction(0), 1)), 2)
    hyps = nf.single_parameter_hypotheses(x, space)
    assert [h.terms for h in hyps] == [(), ((nf.Factor(0, Fraction(1), 0),),)]


def grid2(f):
    p, s = np.meshgrid([2.0, 4, 8, 16, 32], [10.0, 20, 30, 40, 50], indexing="ij")
    X = np.column_stack([p.ravel(), s.ravel()])
    return X, f(X[:, 0], X[:, 1])


@pytest.mark.parametrize("law, kind", [
    (lambda p, s: 2 + 0.884 * s * np.log2(p), "multiplicative"),
    (lambda p, s: 1 + 3 * np.sqrt(p) + 0.1 * s ** 2, "additive"),
    (lambda p, s: 1 + 3 * p + 0.5 * p * s, "mixed"),
])
def test_two_parameters_sum_or_product_is_searched(law, kind):
    X, y = grid2(law)
    s = nf.search(X, y, ["p", "s"], SPACE, folds)
    assert s.best is not None and s.best.kind == kind
    assert s.best.cv_smape < 1e-6
    probe = np.array([[64.0, 70.0], [128.0, 100.0]])
    assert np.allclose(s.best.predict(probe), law(probe[:, 0], probe[:, 1]), rtol=1e-6)


def test_sparse_cross_design_uses_each_parameter_line():
    """Extra-P's sparse design: one line per parameter through a common corner."""
    pts = [(32, n) for n in (5000, 6000, 7000, 8000, 9000)] + \
          [(p, 5000) for p in (64, 128, 256, 512)]
    X = np.array(pts, dtype=float)
    law = lambda p, n: 10 + 50 * np.log2(p) + 0.1 * n  # noqa: E731
    s = nf.search(X, law(X[:, 0], X[:, 1]), ["p", "n"], SPACE, folds)
    assert s.best.kind == "additive"
    assert np.isclose(s.best.predict(np.array([[1024.0, 12000.0]]))[0], law(1024, 12000))


def test_a_parameter_with_too_few_values_is_noted():
    X = np.array([(p, n) for p in (2.0, 4, 8, 16) for n in (1.0, 2)])
    s = nf.search(X, 1 + X[:, 0] ** 2, ["p", "n"], SPACE, folds)
    assert any("'n' takes 2 values with the others fixed" in n for n in s.notes)
    assert s.best.terms == ((nf.Factor(0, Fraction(2), 0),),)  # n or 1/n adds nothing
    X1 = X[X[:, 1] == 1]
    one = nf.search(X1, 1 + X1[:, 0] ** 2, ["p", "n"], SPACE, folds)
    assert any("'n' varies over at most 1 values" in n for n in one.notes)


def test_cv_smape_prefers_the_law_that_extrapolates():
    """10 % noise: the chosen law predicts the held-out doubling within the noise."""
    rng = np.random.default_rng(3)
    p = np.repeat(2.0 ** np.arange(1, 7), 5)
    y = (3 + 0.5 * p * np.log2(p)) * (1 + rng.normal(0, 0.1, p.size))
    agg = nf.aggregate(pd.DataFrame({"p": p, "y": y}), "y", ["p"], p, "mean")
    s = nf.search(agg[["p"]].to_numpy(), agg["y"].to_numpy(), ["p"], SPACE, folds)
    truth = 3 + 0.5 * 128 * 7
    assert abs(s.best.predict(np.array([[128.0]]))[0] / truth - 1) < 0.1


def test_aggregate_mean_or_median_per_configuration():
    df = pd.DataFrame({"p": [1.0, 1, 1, 2, 2, 2], "y": [1.0, 2, 9, 4, 4, 4]})
    mean = nf.aggregate(df, "y", ["p"], df["p"], "mean")
    median = nf.aggregate(df, "y", ["p"], df["p"], "median")
    assert mean["y"].tolist() == [4.0, 4.0] and median["y"].tolist() == [2.0, 4.0]
    assert mean["n_runs"].tolist() == [3, 3]


def test_smape_bounds():
    assert nf.smape(np.array([1.0, 0, -1]), np.array([1.0, 0, 1])).tolist() == [0, 0, 200]
    assert nf.smape(np.array([np.nan]), np.array([1.0]))[0] == 200


def test_selection_score_is_leave_one_out_and_forward_validation_in_equal_parts():
    """A line through five scattered levels, scored by hand: each leave-one-out fit predicts
    its level, the forward fit (levels below 16) predicts 16; the score is their mean."""
    p = np.array([1.0, 2, 4, 8, 16])
    y = np.array([3.0, 4.5, 9.0, 16.5, 36.0])
    hyp = nf.Hypothesis(((nf.Factor(0, Fraction(1), 0),),), "single")

    def smape(f, t):
        return 200 * abs(f - t) / (abs(f) + abs(t))

    loo = np.mean([smape(np.polyval(np.polyfit(np.delete(p, i), np.delete(y, i), 1), p[i]),
                         y[i]) for i in range(5)])
    fwd = smape(np.polyval(np.polyfit(p[:4], y[:4], 1), 16.0), 36.0)
    score = nf.cv_scores([hyp], p.reshape(-1, 1), y, make_folds([(v,) for v in p], 10))[0]
    assert score == pytest.approx(0.5 * loo + 0.5 * fwd, rel=1e-9)
    assert abs(fwd - loo) > 1  # the halves differ: a score of either alone fails above


def test_equal_scores_of_one_size_go_to_the_kind_with_the_least_interaction():
    """Two exact fits differ in their CV SMAPE by rounding only (which of them rounds lower
    changed with a numpy release): the additive law wins over the one with a product term; a
    product term that is better by more than rounding still wins."""
    p, n = nf.Factor(0, Fraction(0), 1), nf.Factor(1, Fraction(1), 0)
    pn = nf.product((p,), (n,))

    def pair(additive: float, mixed: float) -> list[nf.Hypothesis]:
        return [nf.Hypothesis((), "constant", cv_smape=13.0),
                nf.Hypothesis(((p,), (n,)), "additive", cv_smape=additive),
                nf.Hypothesis(((n,), pn), "mixed", cv_smape=mixed)]

    assert nf.choose(pair(7.5e-14, 4.5e-14)).kind == "additive"
    assert nf.choose(pair(4.5e-14, 7.5e-14)).kind == "additive"
    assert nf.choose(pair(0.5, 0.1)).kind == "mixed"
    assert nf.choose(pair(0.1, 0.5)).kind == "additive"


@pytest.mark.parametrize("i, j, c, xmax, rises", [
    (Fraction(-1, 2), 0, -15.0, 64, True),    # 20 - 15 / sqrt(p): saturating
    (Fraction(-1), 0, 500.0, 64, False),      # 1 + 500 / p: falling (strong scaling)
    (Fraction(-1, 4), 2, 1.6, 64, True),      # peaks at e^8 = 2981, beyond the data: rising
    (Fraction(-1, 4), 2, 1.6, 4096, False),   # ... past its peak at the largest value
    (Fraction(-1, 2), 1, 80.0, 64, False),    # 80 p^(-1/2) log2 p peaks at e^2: falling
    (Fraction(-3, 4), 1, -28.0, 64, True),    # minus a hump past its peak at e^(4/3): rising
    (Fraction(1, 2), 0, 2.0, 64, False),      # a non-negative exponent: not concerned
])
def test_a_law_rising_by_a_negative_exponent_is_told_by_its_slope_at_the_largest_value(
        i, j, c, xmax, rises):
    """d/dp p^(-a) log2(p)^j has the sign of j - a ln p: the term rises below p = e^(j/a).
    Known answers on each side of that point, for either sign of the coefficient."""
    h = nf.Hypothesis(((nf.Factor(0, i, j),),), "single", coef=np.array([1.0, c]))
    assert h.rises_by_a_negative_exponent({0: xmax}) is rises
    x = np.linspace(xmax / 1.01, xmax, 3)
    slope = np.diff(h.predict(x.reshape(-1, 1)))[-1]
    assert bool(slope > 0) == rises or i >= 0


def test_within_the_noise_a_growth_law_is_preferred_to_one_that_turns_beyond_the_data():
    """log2 p at 5 % noise, 5 repetitions of 6 levels (seed 14): p^(-1/3) log2(p)^2, which
    rises to a maximum at p = e^6 beyond the data, scores lower by less than the noise floor;
    the growth law is taken and extrapolates within the noise (+0.5 % at p = 256; the other
    law -15 %). Without repetitions (floor 0) the lower score wins, and a saturating law measured
    precisely enough (1 % noise) or without noise is still found."""
    rng = np.random.default_rng(14)
    p = np.repeat(2.0 ** np.arange(1, 7), 5)
    y = (10 + 4 * np.log2(p)) * (1 + rng.normal(0, 0.05, p.size))
    agg = nf.aggregate(pd.DataFrame({"p": p, "y": y}), "y", ["p"], p, "mean")
    X, Y = agg[["p"]].to_numpy(), agg["y"].to_numpy()
    floor = nf.noise_floor(y, p)
    best = nf.search(X, Y, ["p"], SPACE, folds, floor).best
    assert best.formula(["p"]).endswith("* log2(p)") and best.n_terms == 1
    truth = 10 + 4 * 8
    assert abs(best.predict(np.array([[256.0]]))[0] / truth - 1) < 0.03
    hyps = nf.single_parameter_hypotheses(X[:, 0], SPACE)
    nf.cv_scores(hyps, X, Y, folds([tuple(r) for r in X]))
    turning = nf.choose(hyps, floor, nf._second_term_gain)  # no xmax: no preference
    assert turning.terms == ((nf.Factor(0, Fraction(-1, 3), 2),),)
    assert turning.rises_by_a_negative_exponent({0: 64.0})
    assert best.cv_smape - turning.cv_smape < floor  # within the noise
    assert abs(turning.predict(np.array([[256.0]]))[0] / truth - 1) > 0.1
    # a floor of 0: the lower score wins, whatever it does beyond the data
    assert nf.choose(hyps, 0.0, nf._second_term_gain, {0: 64.0}).rises_by_a_negative_exponent(
        {0: 64.0})
    for noise in (0.0, 0.01):
        y = (20 - 15 * p ** -0.5) * (1 + rng.normal(0, noise, p.size))
        agg = nf.aggregate(pd.DataFrame({"p": p, "y": y}), "y", ["p"], p, "mean")
        sat = nf.search(agg[["p"]].to_numpy(), agg["y"].to_numpy(), ["p"], SPACE, folds,
                        nf.noise_floor(y, p)).best
        assert sat.terms == ((nf.Factor(0, Fraction(-1, 2), 0),),), sat.formula(["p"])
        assert sat.coef == pytest.approx([20, -15], rel=0.02)
