"""Search of the performance model normal form: the scaling law of an effect, not a polynomial.

Run time rarely scales like a polynomial: an FFT is p log p, a reduction log p, a strong-scaling
run has negative exponents, a stencil s^1.5. The performance model normal form (PMNF) of
Calotoiu et al. (SC 2013) writes an effect of one parameter p as

    f(p) = c0 + sum_k c_k * p^(i_k) * log2(p)^(j_k)

with i from a set of fractions and j in {0, 1, 2}. This module searches it:

* **One parameter.** Every hypothesis c0 + c1 t (one term t = p^i log2(p)^j, (i, j) != (0, 0))
  and, up to ``max_terms``, every sum of two such terms, over the configured terms: by default
  the 42 of Extra-P's basic modeler (i from 1/4 to 3, j from 0 to 2, logarithms with the
  common powers only) and their mirror images with negative i for strong scaling. A wider set
  (every i with every j) finds laws that fit the training levels better and extrapolate worse
  (x^(5/3) log2(x)^2 instead of x^2 on Extra-P's ``one_parameter_1``). A term must be finite
  at every measured value: logarithms and fractional or negative powers need p > 0
  (logarithms p >= 1, as Extra-P requires).
* **Several parameters** (Ritter et al., IPDPS 2020 describe Extra-P's heuristic): each
  parameter's single-parameter search runs on its longest *lines* (configurations where only
  that parameter varies; lines of equal length are averaged at their common values, which
  keeps the shape of both sums and products); its best hypotheses (``TOP_PER_PARAMETER``)
  are combined additively (f + g), multiplicatively (f * g) and in the mixed forms
  (f + f * g, g + f * g, f + g + f * g); each parameter alone is a candidate too. The
  combination is searched, not assumed. A parameter at 2 values (1 and 2 workers) has no law
  of its own to cross-validate; it enters the combinations as p or 1/p (``TWO_LEVEL_TERMS``),
  which the combinations' cross-validation over all configurations chooses between.
* **Fitting**: ordinary least squares of the configuration values (repetitions aggregated by
  ``aggregate``: mean, as Extra-P's default, or median) on the terms. A coefficient may take
  either sign (a strong-scaling term is a positive coefficient on a negative exponent, a
  decreasing log law a negative one), as in Extra-P; but terms of the same parameter(s) summed
  in one hypothesis must share the sign: two terms that cancel fit the noise and turn over just
  outside the data (0.57 p^1.5 - 0.004 p^2 log2 p fits p log p data with 5 % noise and is
  negative at twice the largest p), so such a sum is not scored; nor is a hypothesis whose
  terms are collinear on the data (a smaller one written twice).
* **Selection** by cross-validated symmetric mean absolute percentage error over
  configurations, SMAPE = mean 200 |f - y| / (|f| + |y|) %, with folds from
  :func:`perfcast.sweep.selection.make_folds` (leave-one-configuration-out up to ``cv_folds``
  configurations), averaged (weight ``FORWARD_WEIGHT``) with a *forward* validation: per
  regressor, the hypothesis fitted on the configurations below that regressor's largest value
  predicts the configurations at it (:func:`forward_folds`). A scaling law is used to
  extrapolate to larger configurations; leave-one-out mostly interpolates, and with noisy
  levels it ranks laws that bend away just beyond the data (p^(2/3) log2(p)^2 for p log p data
  at 10 % noise) as high as the true one, while the forward fold sees the bend. It also sees a
  law whose regime changes within the data (Extra-P's segmented inputs) and favours the
  recent regime. The forward folds need more configurations than the hypothesis has
  coefficients; without them the score is leave-one-out alone (:func:`with_forward`; ARPE's
  candidates are scored the same way, :func:`perfcast.sweep.selection.forward_smapes`). A
  hypothesis with more terms replaces a simpler one only when it lowers the CV SMAPE by more
  than ``REL_GAIN`` of it (a second term of the same parameter:
  ``REL_GAIN_SECOND_TERM``) and by more than ``ABS_GAIN`` points, and only while the simpler
  one's error exceeds ``NOISE_FACTOR`` times what the scatter of the repetitions explains
  (:func:`noise_floor`), so noise-free data give the exact law rather than the law plus a term
  with a zero coefficient, and noisy data no sum that fits the noise. These margins were set
  by measuring held-out errors (``benchmarks/bench_extrap.py``).

References: A. Calotoiu, T. Hoefler, M. Poke, F. Wolf, "Using automated performance modeling
to find scalability bugs in complex codes", SC 2013; M. Ritter, A. Calotoiu, S. Rinke,
T. Reimann, T. Hoefler, F. Wolf, "Learning Cost-Effective Sampling Strategies for Empirical
Performance Modeling", IPDPS 2020; Extra-P, https://github.com/extra-p/extrap (its default
exponent sets and SMAPE-based leave-one-out selection).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from perfcast.errors import InputError

#: a law with more terms must lower a smaller law's CV SMAPE by more than this fraction ...
REL_GAIN = 0.05
#: ... except a second term of the same parameter, which must halve it (among thousands of
#: two-term sums one always fits the noise a little better) ...
REL_GAIN_SECOND_TERM = 0.5
#: ... and by more than this many percentage points
ABS_GAIN = 0.05
#: ... and only while the simpler one's CV SMAPE exceeds this many times the noise floor
NOISE_FACTOR = 2.0
#: a law that rises by a negative exponent must lower the best other law's CV SMAPE by more
#: than this many times the noise floor (:func:`choose`): 1, the scatter the repetitions alone
#: give a correct law (measured against 0.5, 2 and 4 in docs/methods/sweep.md)
RISE_MARGIN = 1.0
#: weight of the forward (extrapolating) validation in a hypothesis' CV SMAPE, the rest being
#: leave-one-configuration-out: equal weights, the one value measured
FORWARD_WEIGHT = 0.5
#: best single-parameter hypotheses per parameter combined into multi-parameter candidates
TOP_PER_PARAMETER = 3
#: CV SMAPEs (percentage points) this close are equal: exact fits score 1e-14 or so, and which
#: of two exact fits rounds lower depends on the BLAS, not on the data
TIE_SMAPE = 1e-9
#: among hypotheses of one size whose scores tie, the one assuming the least interaction wins:
#: on a sparse cross design (one line per parameter) an additive law and one with a product
#: term fit the lines equally well, and the data say nothing of the interaction
KIND_ORDER = {"constant": 0, "single": 1, "additive": 2, "multiplicative": 3, "mixed": 4}
#: hypotheses kept, best first, as the competitors of the chosen law beyond the data
#: (:func:`perfcast.sweep.selection.model_spread`)
RANKED = 10
#: a parameter is searched on lines of at least this many distinct values
MIN_LINE_VALUES = 3
#: a parameter with 2 values (1 and 2 workers) enters the combinations with these terms,
#: chosen by the combinations' cross-validation over all configurations: proportional to it,
#: or work divided by it
TWO_LEVEL_TERMS = ((Fraction(1), 0), (Fraction(-1), 0))
#: sums of two terms of one parameter are searched from this many distinct values on (each
#: leave-one-out fit of 3 coefficients then keeps a residual degree of freedom)
MIN_VALUES_TWO_TERMS = 5


def parse_exponent(text: str | float | int) -> Fraction:
    """``"1/4"``, ``"-2/3"``, ``"1.5"`` or a number as an exact fraction.

    Raises
    ------
    InputError
        a value that is not a number or a fraction p/q.
    """
    try:
        return Fraction(str(text).strip()).limit_denominator(1000)
    except (ValueError, ZeroDivisionError) as exc:
        raise InputError(None, f"exponent {text!r} is not a number",
                         expected="a fraction such as 1/4, -2/3 or 1.5") from exc


@dataclass(frozen=True, order=True)
class Factor:
    """p^i * log2(p)^j of one regressor (column ``var``)."""

    var: int
    i: Fraction
    j: int

    def values(self, X: np.ndarray) -> np.ndarray:
        return self.of(np.asarray(X, dtype=float)[:, self.var])

    def of(self, x: np.ndarray) -> np.ndarray:
        """p^i * log2(p)^j at the values ``x`` of this factor's regressor."""
        x = np.asarray(x, dtype=float)
        with np.errstate(all="ignore"):
            out = np.power(x, float(self.i)) if self.i != 0 else np.ones_like(x)
            if self.j:
                out = out * np.log2(x) ** self.j
        return out

    def name(self, names: Sequence[str]) -> str:
        p = names[self.var]
        parts = []
        if self.i == 1:
            parts.append(p)
        elif self.i != 0:
            parts.append(f"{p}^{self.i}" if self.i.denominator == 1 and self.i > 0
                         else f"{p}^({self.i})")
        if self.j == 1:
            parts.append(f"log2({p})")
        elif self.j:
            parts.append(f"log2({p})^{self.j}")
        return " * ".join(parts)

    def admissible(self, x: np.ndarray) -> bool:
        """Finite at every value of ``x`` (logs need x >= 1, fractional or negative powers
        x > 0)."""
        x = np.asarray(x, dtype=float)
        if self.j and (x < 1).any():
            return False
        if (self.i.denominator != 1 or self.i < 0) and (x <= 0).any():
            return False
        return bool(np.isfinite(self.of(x)).all())


Term = tuple[Factor, ...]  # a product of factors of distinct regressors


def term_values(term: Term, X: np.ndarray) -> np.ndarray:
    out = np.ones(np.asarray(X).shape[0])
    for f in term:
        out = out * f.values(X)
    return out


def term_name(term: Term, names: Sequence[str]) -> str:
    return " * ".join(f.name(names) for f in term) if term else "1"


def product(a: Term, b: Term) -> Term:
    return tuple(sorted(a + b))


@dataclass
class Hypothesis:
    """c0 + sum_k c_k * terms[k], scored by cross-validation."""

    terms: tuple[Term, ...]
    kind: str  # constant | single | additive | multiplicative | mixed
    cv_smape: float = float("nan")
    coef: np.ndarray = field(default_factory=lambda: np.empty(0))

    @property
    def n_terms(self) -> int:
        return len(self.terms)

    def design(self, X: np.ndarray) -> np.ndarray:
        X = np.atleast_2d(np.asarray(X, dtype=float))
        return np.column_stack([np.ones(X.shape[0])] + [term_values(t, X) for t in self.terms])

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.design(X) @ self.coef

    def formula(self, names: Sequence[str], y: str = "", digits: int = 4) -> str:
        """``y = 3 + 0.5 * p * log2(p)``: the model as one readable line.

        Parameters
        ----------
        names : sequence of str
            The regressors' names.
        y : str, default=""
            The effect's name (``y = `` before the formula when given).
        digits : int, default=4
            Significant digits of the coefficients.
        """
        parts = [f"{self.coef[0]:.{digits}g}"] if len(self.coef) else ["?"]
        for c, t in zip(self.coef[1:], self.terms, strict=True):
            sign = "-" if c < 0 else "+"
            parts.append(f"{sign} {abs(c):.{digits}g} * {term_name(t, names)}")
        return (f"{y} = " if y else "") + " ".join(parts)

    def key(self) -> tuple[Term, ...]:
        return tuple(sorted(self.terms))

    def rises_by_a_negative_exponent(self, xmax: Mapping[int, float]) -> bool:
        """Whether a term of one factor with a negative exponent rises at the largest value
        measured, ``xmax[var]`` (its slope there is positive): saturating, ``- c p^(-a)``
        (``c > 0``); a hump ``+ c p^(-a) log2(p)^j`` whose maximum, at ``p = e^(j / a)``, lies
        beyond it; or ``- c p^(-a) log2(p)^j`` past that point, where it turns to rise.

        Such a law grows over the data as a non-negative power or logarithm does, and bends
        down beyond it: among noisy measurements one of them often fits the levels as well as
        the growth law they come from (:func:`choose` asks it for more).

        >>> f = Factor(0, Fraction(-1, 4), 2)  # p^(-1/4) log2(p)^2 peaks at p = e^8, 2981
        >>> h = Hypothesis(((f,),), "single", coef=np.array([1.0, 2.0]))
        >>> h.rises_by_a_negative_exponent({0: 64}), h.rises_by_a_negative_exponent({0: 4096})
        (True, False)
        >>> sat = Hypothesis(((Factor(0, Fraction(-1), 0),),), "single",
        ...                  coef=np.array([10.0, -8.0]))  # 10 - 8 / p
        >>> sat.rises_by_a_negative_exponent({0: 64})
        True
        """
        for c, t in zip(self.coef[1:], self.terms, strict=True):
            if len(t) != 1 or t[0].i >= 0 or t[0].var not in xmax:
                continue
            f = t[0]
            # d/dp p^(-a) log2(p)^j has the sign of j - a ln(p): rising below p = e^(j / a)
            if (c > 0) == (xmax[f.var] < math.exp(f.j / float(-f.i))):
                return True
        return False


def smape(pred: np.ndarray, y: np.ndarray) -> np.ndarray:
    """200 |f - y| / (|f| + |y|) per value, in percent (0 where both are 0)."""
    pred, y = np.asarray(pred, dtype=float), np.asarray(y, dtype=float)
    den = np.abs(pred) + np.abs(y)
    with np.errstate(all="ignore"):
        out = np.where(den > 0, 200 * np.abs(pred - y) / np.where(den > 0, den, 1), 0.0)
    return np.where(np.isfinite(pred), out, 200.0)


def _lstsq_batch(D: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least-squares coefficients of y on each design D[h] (h, n, k), columns scaled to unit
    maximum for conditioning; minimum-norm where a design is rank-deficient."""
    scale = np.max(np.abs(D), axis=1, keepdims=True)
    scale = np.where(scale > 0, scale, 1.0)
    pinv = np.linalg.pinv(D / scale, rcond=1e-12)
    return (pinv @ y)[..., :] / scale[:, 0, :]


def cv_scores(hyps: Sequence[Hypothesis], X: np.ndarray, y: np.ndarray,
              folds: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """CV SMAPE of each hypothesis on configuration values (X, y) over ``folds``; also sets
    every hypothesis' full-data coefficients. Hypotheses of equal size are solved as one
    batch.

    Parameters
    ----------
    hyps : sequence of Hypothesis
        The hypotheses scored.
    X : numpy.ndarray
        (n, d) regressor values of the configurations.
    y : numpy.ndarray
        (n,) the effect aggregated per configuration.
    folds : sequence of tuple of numpy.ndarray
        (training rows, held-out rows) of each fold.

    Returns
    -------
    numpy.ndarray
        One CV SMAPE per hypothesis (NaN where a fold cannot be fitted).
    """
    out = np.full(len(hyps), np.nan)
    by_size: dict[int, list[int]] = {}
    for h, hyp in enumerate(hyps):
        by_size.setdefault(hyp.n_terms, []).append(h)
    for _, idx in sorted(by_size.items()):
        D = np.stack([hyps[h].design(X) for h in idx])  # (H, n, k)
        coef = _lstsq_batch(D, y)
        for h, c in zip(idx, coef, strict=True):
            hyps[h].coef = c
        if not folds:
            continue
        # terms of one parameter that cancel (opposite signs) fit noise and turn over
        # outside the data: such a sum is not a law
        unscored = np.array([_cancels(hyps[h]) for h in idx])
        # a hypothesis whose terms are collinear on the data is a smaller one written twice
        scaled = D / np.where(np.abs(D).max(axis=1, keepdims=True) > 0,
                              np.abs(D).max(axis=1, keepdims=True), 1)
        unscored |= np.linalg.matrix_rank(scaled, tol=1e-9) < D.shape[2]
        pred = np.empty((len(idx), len(y)))
        for train, test in folds:
            c = _lstsq_batch(D[:, train, :], y[train])
            pred[:, test] = np.einsum("hnk,hk->hn", D[:, test, :], c)
        scores = smape(pred, y[None, :]).mean(axis=1)
        errs = []
        for train, test in forward_folds(X, D.shape[2] + 1):
            c = _lstsq_batch(D[:, train, :], y[train])
            errs.append(smape(np.einsum("hnk,hk->hn", D[:, test, :], c),
                              y[None, test]).mean(axis=1))
        scores = with_forward(scores, errs)
        scores = np.where(unscored, np.nan, scores)
        out[idx] = scores
        for h, s in zip(idx, scores, strict=True):
            hyps[h].cv_smape = float(s)
    return out


def forward_folds(X: np.ndarray, min_train: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per regressor that varies: (the rows below its largest value, the rows at it), where
    the former hold at least ``min_train`` distinct configurations (more than the hypothesis'
    coefficients, so the fit keeps a residual degree of freedom).

    Examples
    --------
    >>> X = np.array([[1.0, 1], [2, 1], [4, 1], [1, 2], [2, 2], [4, 2]])
    >>> [(a.tolist(), b.tolist()) for a, b in forward_folds(X, 3)]
    [([0, 1, 3, 4], [2, 5]), ([0, 1, 2], [3, 4, 5])]
    """
    out = []
    for v in range(X.shape[1]):
        test = X[:, v] == X[:, v].max()
        if len({tuple(r) for r in X[~test]}) >= min_train and test.any():
            out.append((np.flatnonzero(~test), np.flatnonzero(test)))
    return out


def with_forward(loo: np.ndarray | float, forward: Sequence[np.ndarray | float]):
    """The selection score: leave-one-out SMAPE and the mean forward SMAPE weighted
    ``1 - FORWARD_WEIGHT`` and ``FORWARD_WEIGHT``; leave-one-out alone without forward folds.

    Examples
    --------
    >>> float(with_forward(2.0, [4.0, 8.0])), float(with_forward(2.0, []))
    (4.0, 2.0)
    """
    if not len(forward):
        return loo
    return (1 - FORWARD_WEIGHT) * loo + FORWARD_WEIGHT * np.mean(forward, axis=0)


def _cancels(h: Hypothesis) -> bool:
    """Two or more terms in exactly the same regressors whose coefficients differ in sign."""
    by_vars: dict[tuple[int, ...], list[float]] = {}
    for t, c in zip(h.terms, h.coef[1:], strict=True):
        by_vars.setdefault(tuple(sorted({f.var for f in t})), []).append(float(c))
    return any(min(cs) < 0 < max(cs) for cs in by_vars.values() if len(cs) > 1)


def first_lowest(scores: Sequence[float], tie: float) -> int | None:
    """The index of the first finite score within ``tie`` of the lowest (None: none finite):
    among candidates listed simplest first that fit equally well, the simplest. Exact fits
    differ by rounding only, and which rounds lower depends on the BLAS, not on the data.

    >>> first_lowest([3e-29, 1e-29, 5.0], 1e-18)
    0
    >>> first_lowest([3.0, 1.0, float("nan")], 1e-18)
    1
    """
    finite = [v for v in scores if np.isfinite(v)]
    if not finite:
        return None
    low = min(finite)
    tie = tie if np.isfinite(tie) else 0.0
    return next(i for i, v in enumerate(scores) if np.isfinite(v) and v - low <= tie)


def choose(hyps: Sequence[Hypothesis], floor: float = 0.0,
           gain: Callable[[Hypothesis, Hypothesis], float] | None = None,
           xmax: Mapping[int, float] | None = None,
           plausible: Callable[[Hypothesis], bool] | None = None) -> Hypothesis | None:
    """The simplest hypothesis that no larger one beats by more than ``gain(smaller, larger)``
    (default ``REL_GAIN``) and ``ABS_GAIN`` of CV SMAPE, a larger one being considered only
    while the simpler one's CV SMAPE exceeds ``NOISE_FACTOR`` times ``floor``
    (:func:`noise_floor`: what the scatter of the repetitions alone explains); None without a
    scored hypothesis. Of one size, the lowest CV SMAPE; scores within ``TIE_SMAPE`` tie, and
    the kind first in ``KIND_ORDER`` wins (additive before a product term;
    :func:`first_lowest`). Of one size too, a law that rises over the data by a negative
    exponent (:meth:`Hypothesis.rises_by_a_negative_exponent`) is taken over the best law
    without one only when its CV SMAPE is lower by more than ``RISE_MARGIN`` times
    ``floor``: what the repetitions' scatter can give a law that fits the noisy levels as
    well as the growth law they come from (without repetitions, ``floor`` 0, the lower score
    wins as before).

    Parameters
    ----------
    hyps : sequence of Hypothesis
        Scored hypotheses (:func:`cv_scores`).
    floor : float, default=0.0
        The noise floor of the CV SMAPE (0 without repetitions).
    gain : callable, optional, default=None
        ``gain(smaller, larger)``: the relative CV SMAPE gain a larger hypothesis must bring;
        None: ``REL_GAIN``.
    xmax : mapping, optional, default=None
        The largest value measured of each regressor (by column); None: no law is taken for
        one that rises by a negative exponent.
    plausible : callable, optional, default=None
        ``plausible(h)``: whether a hypothesis may be chosen at all (of a positive effect,
        one that neither reaches 0 nor turns over where the data do not,
        :func:`perfcast.sweep.plausibility.implausible_values`); of each size the best
        plausible one competes. None: every hypothesis may.

    Returns
    -------
    Hypothesis or None
        The chosen hypothesis.
    """
    scored = [h for h in hyps if np.isfinite(h.cv_smape)]
    if not scored:
        return None
    best: Hypothesis | None = None
    for k in sorted({h.n_terms for h in scored}):
        size = sorted((h for h in scored if h.n_terms == k),
                      key=lambda h: KIND_ORDER.get(h.kind, len(KIND_ORDER)))
        top = _first_lowest_of(size, plausible)
        if top is None:
            continue
        if xmax is not None and floor > 0 and top.rises_by_a_negative_exponent(xmax):
            plain = [h for h in size if not h.rises_by_a_negative_exponent(xmax)]
            other = _first_lowest_of(plain, plausible)
            if other is not None and not other.cv_smape - top.cv_smape > RISE_MARGIN * floor:
                top = other
        rel = REL_GAIN if gain is None or best is None else gain(best, top)
        if best is None or (best.cv_smape > NOISE_FACTOR * floor
                            and top.cv_smape < best.cv_smape * (1 - rel)
                            and best.cv_smape - top.cv_smape > ABS_GAIN):
            best = top
    return best


def _first_lowest_of(hyps: Sequence[Hypothesis],
                     ok: Callable[[Hypothesis], bool] | None) -> Hypothesis | None:
    """The hypothesis :func:`first_lowest` picks among those ``ok`` accepts (asked lowest
    score first, so that few are checked); None when it accepts none."""
    left = list(hyps)
    while left:
        i = first_lowest([h.cv_smape for h in left], TIE_SMAPE)
        if i is None:
            return None
        if ok is None or ok(left[i]):
            return left[i]
        left.pop(i)
    return None


def _second_term_gain(smaller: Hypothesis, larger: Hypothesis) -> float:
    """``REL_GAIN_SECOND_TERM`` from one term of a parameter to two, else ``REL_GAIN``."""
    return REL_GAIN_SECOND_TERM if smaller.n_terms >= 1 else REL_GAIN


def residual_noise_floor(hyps: Sequence[Hypothesis], X: np.ndarray, y: np.ndarray,
                         max_terms: int = 1) -> float:
    """The noise floor of a design without repetitions (:func:`noise_floor` has nothing to
    measure then): the same expected relative error of a configuration's value, with the
    scatter ``s`` estimated from the residuals of the simplest adequate law, the hypothesis
    of 1 to ``max_terms`` terms of lowest CV SMAPE, relative to its fitted values, with
    ``n - k`` degrees of freedom for its ``k`` coefficients.

    Parameters
    ----------
    hyps : sequence of Hypothesis
        Scored hypotheses (:func:`cv_scores`: their full-data coefficients set).
    X : numpy.ndarray
        (n, d) regressor values of the configurations.
    y : numpy.ndarray
        (n,) the effect at the configurations (one run each).
    max_terms : int, default=1
        The most terms of a law counted as simple: 1 for one parameter, one per parameter
        for several.

    Returns
    -------
    float
        100 sqrt(2 / pi) s, in percent; 0 when no such law keeps a residual degree of
        freedom.

    Notes
    -----
    With one run per configuration the scatter of the runs cannot be told from a law's lack
    of fit, and a floor of 0 lets every extra term that lowers the CV score a little win: a
    second term fitting the noise, a polynomial that turns just beyond the data. The simplest
    law's residuals hold the noise and its lack of fit, an upper estimate of the noise: it
    asks a larger model for a gain beyond what the simplest one leaves unexplained, which is
    the lack-of-fit test's question (Draper and Smith, Applied Regression Analysis, 3rd ed.,
    1998, section 2.1) without replicates to split the two.

    Examples
    --------
    >>> p = np.array([[2.0], [4], [8], [16], [32]])
    >>> h = Hypothesis(((Factor(0, Fraction(1), 0),),), "single", cv_smape=1.0)
    >>> h.coef = np.array([1.0, 1.0])
    >>> residual_noise_floor([h], p, 1 + p[:, 0])
    0.0
    """
    simple = [h for h in hyps if 1 <= h.n_terms <= max_terms and np.isfinite(h.cv_smape)
              and len(h.coef) == h.n_terms + 1]
    if not simple:
        return 0.0
    h = simple[first_lowest([h.cv_smape for h in simple], TIE_SMAPE)]
    y = np.asarray(y, dtype=float)
    fitted = h.predict(np.asarray(X, dtype=float).reshape(len(y), -1))
    dof = len(y) - len(h.coef)
    ok = np.abs(fitted) > 0
    if dof < 1 or not ok.all():
        return 0.0
    s = math.sqrt(float(np.sum(((y - fitted) / np.abs(fitted)) ** 2)) / dof)
    return float(100 * math.sqrt(2 / math.pi) * s)


def noise_floor(y: np.ndarray | None, groups: Sequence[Any] | None,
                stats: pd.DataFrame | None = None) -> float:
    """The CV SMAPE that the scatter of repetitions alone gives a correct law: the mean over
    configurations of the expected absolute relative error of a configuration's mean,
    100 sqrt(2 / pi) s / (sqrt(n) |mean|) (a normal error; s the sample standard deviation of
    its n runs). 0 without repetitions.

    Parameters
    ----------
    y : numpy.ndarray or None
        The runs' values (unused with ``stats``).
    groups : sequence or None
        One configuration label per run (unused with ``stats``).
    stats : pandas.DataFrame, optional, default=None
        Each configuration's ``mean``, ``std`` and ``count`` of its runs, already computed
        (of compressed runs: :func:`perfcast.sweep.repetitions.configuration_stats`).

    Returns
    -------
    float
        The noise floor, in percent.
    """
    if stats is None:
        frame = pd.DataFrame({"g": [str(v) for v in groups], "y": np.asarray(y, dtype=float)})
        stats = frame.groupby("g")["y"].agg(["mean", "std", "count"])
    stats = stats[(stats["count"] > 1) & (stats["mean"] != 0)]
    if stats.empty:
        return 0.0
    rel = stats["std"] / (np.sqrt(stats["count"]) * stats["mean"].abs())
    return float(100 * np.sqrt(2 / np.pi) * rel.mean())


@dataclass(frozen=True)
class Space:
    """The terms searched: pairs (i, j) for p^i log2(p)^j (never (0, 0))."""

    pairs: tuple[tuple[Fraction, int], ...]
    max_terms: int

    @classmethod
    def from_settings(cls, settings: Any) -> Space:
        pairs = []
        for text in settings.terms:
            i, sep, j = str(text).partition(":")
            pair = (parse_exponent(i), int(j) if sep and j.strip().isdigit() else -1)
            if pair[1] < 0 or pair == (0, 0):
                raise InputError(None, f"normal-form term {text!r}",
                                 expected="'i:j' for p^i log2(p)^j, j in 0-3, not 0:0")
            pairs.append(pair)
        return cls(pairs=tuple(dict.fromkeys(pairs)), max_terms=int(settings.max_terms))

    def factors(self, x: np.ndarray, var: int = 0) -> list[Factor]:
        """Every admissible p^i log2(p)^j of the regressor whose values are ``x``."""
        return [f for f in (Factor(var, i, j) for i, j in self.pairs) if f.admissible(x)]


def single_parameter_hypotheses(x: np.ndarray, space: Space, var: int = 0) -> list[Hypothesis]:
    """The constant, every one-term hypothesis and (``max_terms`` 2, at least
    ``MIN_VALUES_TWO_TERMS`` values) every two-term one whose terms both grow or both decay
    with p and are not proportional over ``x``. A decaying term beside a growing one makes a
    law with a minimum; measured on Extra-P's inputs and noisy synthetic laws, such sums fit
    the noise of the smallest levels (0.33 p^(2/3) log2(p)^2 + 8.95 log2(p) / p for p log p
    with 5 % noise) far more often than they find a real optimum, so they are not searched.

    Parameters
    ----------
    x : numpy.ndarray
        The parameter's values at the configurations.
    space : Space
        The exponent sets and ``max_terms``.
    var : int, default=0
        The parameter's column in the hypotheses' terms.

    Returns
    -------
    list of Hypothesis
        Unscored hypotheses, the constant first.
    """
    factors = space.factors(x, var)
    hyps = [Hypothesis((), "constant")]
    hyps += [Hypothesis(((f,),), "single") for f in factors]
    if space.max_terms >= 2 and len(np.unique(x)) >= MIN_VALUES_TWO_TERMS and len(factors) > 1:
        proportional = _proportional_pairs(np.array([f.of(x) for f in factors]))
        for (i, a), (j, b) in itertools.combinations(enumerate(factors), 2):
            if _direction(a) == _direction(b) and not proportional[i, j]:
                hyps.append(Hypothesis(((a,), (b,)), "single"))
    return hyps


def _direction(f: Factor) -> int:
    """+1 for a term that grows with p (i > 0, or a pure logarithm), -1 for one that decays."""
    return 1 if f.i > 0 or (f.i == 0 and f.j > 0) else -1


def _proportional_pairs(values: np.ndarray) -> np.ndarray:
    """``(F, F)`` booleans, F >= 2: whether term b = k a + m over the data, for the terms whose
    values are the rows of ``values`` (two such terms fit the same model): a constant term, or
    ``|corr(a, b)| > 1 - 1e-12``. One correlation matrix for every pair."""
    constant = values.std(axis=1) == 0
    with np.errstate(all="ignore"):  # a constant row's correlations are NaN: set below
        r = np.corrcoef(values)
    out = np.abs(r) > 1 - 1e-12
    out[constant, :] = True
    out[:, constant] = True
    return out


def _lines(Xc: np.ndarray, yc: np.ndarray, var: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The values of regressor ``var`` and the effect along its longest lines (configurations
    where only ``var`` varies), averaged over lines of equal length at their common values;
    also the number of lines used."""
    others = [j for j in range(Xc.shape[1]) if j != var]
    frame = pd.DataFrame({"x": Xc[:, var], "y": yc})
    frame["line"] = [tuple(r) for r in Xc[:, others]] if others else [()] * len(yc)
    counts = frame.groupby("line")["x"].nunique()
    longest = counts[counts == counts.max()].index
    sub = frame[frame["line"].isin(longest)]
    common = set.intersection(*(set(g["x"]) for _, g in sub.groupby("line")))
    sub = sub[sub["x"].isin(common)]
    avg = sub.groupby("x")["y"].mean().sort_index()
    return avg.index.to_numpy(dtype=float), avg.to_numpy(dtype=float), len(longest)


@dataclass
class Search:
    """The outcome of :func:`search`: the hypotheses listed (each once), the chosen one, how
    many were scored, and notes."""

    names: list[str]
    listed: list[Hypothesis]
    best: Hypothesis | None
    n_searched: int
    notes: list[str]
    per_parameter: dict[str, str]
    #: the noise floor the choice used (estimated from residuals without repetitions)
    floor: float = 0.0
    #: the scored hypotheses of lowest CV SMAPE (``RANKED`` of them), best first: the laws
    #: the data tell least from the chosen one
    ranked: list[Hypothesis] = field(default_factory=list)


def search(Xc: np.ndarray, yc: np.ndarray, names: Sequence[str], space: Space,
           make_folds: Callable[[Sequence[Any]], list[tuple[np.ndarray, np.ndarray]]],
           floor: float | None = 0.0,
           plausible: Callable[[Hypothesis, float], bool] | None = None) -> Search:
    """The normal-form model of configuration values ``yc`` at configurations ``Xc`` (one row
    per configuration, repetitions already aggregated).

    Parameters
    ----------
    Xc : numpy.ndarray
        (n, d) regressor values of the configurations.
    yc : numpy.ndarray
        (n,) the effect aggregated per configuration.
    names : sequence of str
        The d regressor names.
    space : Space
        The exponent sets (:class:`Space`).
    make_folds : callable
        Configuration labels -> CV folds
        (:func:`perfcast.sweep.selection.make_folds` with the stage's ``cv_folds``).
    floor : float or None, default=0.0
        the noise floor of the CV SMAPE (:func:`noise_floor`); None for a design without
        repetitions: estimated from the residuals of the simplest adequate law
        (:func:`residual_noise_floor`), and a note says so.
    plausible : callable, optional, default=None
        ``plausible(h, floor)``: whether a hypothesis over all the regressors may be chosen,
        given the noise floor (:func:`choose`); None: every one may.

    Returns
    -------
    Search
        per number of terms and combination kind the best hypothesis (listed), the chosen
        one (:func:`choose`) and notes.

    Examples
    --------
    >>> import numpy as np
    >>> from perfcast.sweep.selection import make_folds
    >>> p = 2.0 ** np.arange(1, 7)
    >>> space = Space(((Fraction(0), 1), (Fraction(1), 0), (Fraction(1), 1)), 1)
    >>> s = search(p.reshape(-1, 1), 3 + 0.5 * p * np.log2(p), ["p"], space,
    ...            lambda g: make_folds(g, 10))
    >>> s.best.formula(["p"], "t")
    't = 3 + 0.5 * p * log2(p)'
    """
    Xc = np.asarray(Xc, dtype=float).reshape(len(yc), -1)
    yc = np.asarray(yc, dtype=float)
    d = Xc.shape[1]
    notes: list[str] = []
    folds = make_folds([tuple(r) for r in Xc])
    if d == 1:
        hyps = single_parameter_hypotheses(Xc[:, 0], space)
        cv_scores(hyps, Xc, yc, folds)
        used = _estimated_floor(floor, hyps, Xc, yc, 1, notes)
        best = choose(hyps, used, _second_term_gain, {0: float(Xc[:, 0].max())},
                      None if plausible is None else lambda h: plausible(h, used))
        return Search(list(names), _listed(hyps, best), best, len(hyps), notes,
                      {names[0]: best.formula(names) if best else ""}, used, _ranked(hyps))
    per_param: dict[int, list[Hypothesis]] = {}
    described: dict[str, str] = {}
    for v in range(d):
        xv, yv, n_lines = _lines(Xc, yc, v)
        if len(xv) == 2:
            two = [Factor(v, i, j) for i, j in TWO_LEVEL_TERMS]
            two = [f for f in two if f.admissible(xv)]
            if two:
                per_param[v] = [Hypothesis(((f,),), "single") for f in two]
                described[names[v]] = (f"2 values: {' or '.join(f.name(names) for f in two)}, "
                                       "chosen in the combinations")
                notes.append(f"normal form: {names[v]!r} takes 2 values with the others fixed: "
                             "no law of its own can be cross-validated; "
                             f"{described[names[v]]}")
                continue
        if len(xv) < MIN_LINE_VALUES:
            notes.append(f"normal form: {names[v]!r} varies over at most {len(xv)} values with "
                         f"the others fixed (a line needs {MIN_LINE_VALUES}); not modelled")
            continue
        hyps = single_parameter_hypotheses(xv, space)
        cv_scores(hyps, xv.reshape(-1, 1), yv, make_folds([(x,) for x in xv]))
        line_floor = floor if floor is not None else \
            residual_noise_floor(hyps, xv.reshape(-1, 1), yv)
        best = choose(hyps, line_floor, _second_term_gain, {0: float(xv.max())})
        if best is None or best.n_terms == 0:
            described[names[v]] = "constant"
            continue
        others = sorted((h for h in hyps if h.n_terms >= 1 and h is not best
                         and np.isfinite(h.cv_smape) and h.n_terms <= best.n_terms),
                        key=lambda h: h.cv_smape)[:TOP_PER_PARAMETER - 1]
        per_param[v] = [_relabel(h, v) for h in [best, *others]]
        described[names[v]] = (f"{per_param[v][0].formula(names)} on {len(xv)} values "
                               f"({n_lines} line(s))")
    cands = [Hypothesis((), "constant")]
    for hs in per_param.values():
        cands += [Hypothesis(h.terms, "single") for h in hs]
    vs = sorted(per_param)
    for combo in itertools.product(*(per_param[v] for v in vs)):
        cands += _combinations([h.terms for h in combo])
    unique: dict[tuple[Term, ...], Hypothesis] = {}
    for h in cands:
        unique.setdefault(h.key(), h)
    cands = list(unique.values())
    cands = [h for h in cands if all(np.isfinite(term_values(t, Xc)).all() for t in h.terms)]
    cv_scores(cands, Xc, yc, folds)
    used = _estimated_floor(floor, cands, Xc, yc, max(len(per_param), 1), notes)
    best = choose(cands, used, xmax={v: float(Xc[:, v].max()) for v in range(d)},
                  plausible=None if plausible is None else lambda h: plausible(h, used))
    return Search(list(names), _listed(cands, best), best, len(cands), notes, described, used,
                  _ranked(cands))


def _ranked(hyps: Sequence[Hypothesis]) -> list[Hypothesis]:
    """The ``RANKED`` scored hypotheses of lowest CV SMAPE, best first."""
    return sorted((h for h in hyps if np.isfinite(h.cv_smape)),
                  key=lambda h: h.cv_smape)[:RANKED]


def _estimated_floor(floor: float | None, hyps: Sequence[Hypothesis], X: np.ndarray,
                     y: np.ndarray, max_terms: int, notes: list[str]) -> float:
    """``floor``, or without repetitions (None) the residual estimate
    (:func:`residual_noise_floor`), with a note saying so."""
    if floor is not None:
        return floor
    est = residual_noise_floor(hyps, X, y, max_terms)
    notes.append(f"normal form: one run per configuration: the noise floor, {est:.3g} % of "
                 "a configuration's value, is estimated from the residuals of the simplest "
                 f"law (up to {max_terms} term(s)), not from repetitions")
    return est


def _relabel(h: Hypothesis, var: int) -> Hypothesis:
    """A single-parameter hypothesis (searched on column 0) as one over regressor ``var``."""
    terms = tuple(tuple(Factor(var, f.i, f.j) for f in t) for t in h.terms)
    return Hypothesis(terms, "single", cv_smape=h.cv_smape, coef=h.coef)


def _combinations(parts: Sequence[tuple[Term, ...]]) -> list[Hypothesis]:
    """Additive, multiplicative and mixed hypotheses of per-parameter term sets."""
    add = tuple(t for p in parts for t in p)
    mult = tuple(product_all(ts) for ts in itertools.product(*parts))
    out = [Hypothesis(add, "additive"), Hypothesis(mult, "multiplicative")]
    if len(parts) == 2:
        out += [Hypothesis(parts[0] + mult, "mixed"), Hypothesis(parts[1] + mult, "mixed"),
                Hypothesis(add + mult, "mixed")]
    else:
        for a, b in itertools.combinations(range(len(parts)), 2):
            pair = tuple(product(x, y) for x in parts[a] for y in parts[b])
            rest = tuple(t for k, p in enumerate(parts) if k not in (a, b) for t in p)
            out.append(Hypothesis(pair + rest, "mixed"))
    return out


def product_all(terms: Sequence[Term]) -> Term:
    out: Term = ()
    for t in terms:
        out = product(out, t)
    return out


def _listed(hyps: Sequence[Hypothesis], best: Hypothesis | None) -> list[Hypothesis]:
    """What the outputs list: the best hypothesis of each (kind, number of terms), and the
    chosen one, each once, in order of size."""
    groups: dict[tuple[str, int], Hypothesis] = {}
    for h in hyps:
        if not np.isfinite(h.cv_smape):
            continue
        k = (h.kind, h.n_terms)
        if k not in groups or h.cv_smape < groups[k].cv_smape:
            groups[k] = h
    out = sorted(groups.values(), key=lambda h: (h.n_terms, h.cv_smape))
    if best is not None and all(h is not best for h in out):
        out.append(best)
    return out


def aggregate(df: pd.DataFrame, y: str, x: Sequence[str], groups: Sequence[Any],
              how: str) -> pd.DataFrame:
    """One row per configuration: the regressors' means and the effect's ``how`` (mean or
    median) over its repetitions, sorted by the regressors.

    Parameters
    ----------
    df : pandas.DataFrame
        The runs.
    y : str
        The effect's column.
    x : sequence of str
        The regressors' columns.
    groups : sequence
        One configuration label per row.
    how : str
        ``mean`` or ``median`` (``sweep.fit.normal_form.aggregate``).

    Returns
    -------
    pandas.DataFrame
        Columns ``x`` and ``y``, one row per configuration.
    """
    frame = df[[*x, y]].copy()
    frame["_g"] = [str(g) for g in groups]
    agg = frame.groupby("_g", sort=True).agg({**{c: "mean" for c in x}, y: how})
    agg["n_runs"] = frame.groupby("_g", sort=True).size()
    return agg.sort_values(list(x)).reset_index(drop=True)
