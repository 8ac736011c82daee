"""Work-per-second (WPS) linear regression: stable speed from whole-round durations.

For workloads that give no unit readings, Pilot models a round of work ``w`` as
``t = alpha + w / v``: ``alpha`` collects setup, warm-up and cool-down (their time minus the
stable time their work would have taken), ``v`` is the stable speed. Here:

1. rounds shorter than ``lower_bound_s`` are dropped (dominated by non-stable phases);
2. OLS of ``t`` on ``w``; the residuals, in round order, go through subsession analysis: ``q``
   adjacent rounds are merged into their *means* (a mean keeps the model ``t = alpha + w/v``
   with the same ``alpha``; Pilot regresses block *sums*, whose intercept is ``q * alpha``, but
   takes the variance of the block means);
3. OLS on the ``h`` block means gives ``alpha`` and the slope ``b = 1 / v`` with
   ``SE(b) = sqrt(SSR / (h - 2) / Sxx)``; the CI of ``b`` is ``b +- t(h - 2) SE(b)`` (Pilot
   uses a fixed 2 SE) and maps to ``v`` in ``[1 / (b + d), 1 / (b - d)]`` (unbounded above when
   ``b - d <= 0``: :attr:`WpsResult.v_upper_unbounded`, and a warning);
4. rounds whose work is below the work ``alpha`` stands for (``alpha * v``) are dropped and the
   fit repeated until none is (Pilot's rule for work amounts shorter than ``alpha``), unless
   fewer than 3 rounds would remain;
5. the prediction error: the residual standard error of the rounds used about the fitted
   line, ``sqrt(sum (t_i - alpha - w_i / v)^2 / (n - 2))``, relative to their mean duration. The
   method description takes a high prediction error (or a very wide CI) as the sign that the
   model does not hold (durations not linear in the work, non-stable phases that vary from
   round to round); above ``max_prediction_error`` the result carries a warning.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field

import numpy as np

from perfcast.warmup.ci import NotEnoughDataError, t_quantile
from perfcast.warmup.subsession import block_means, lag1_autocorrelation, subsession_size

MIN_ROUNDS = 3
#: at most this many fits while rounds below ``alpha * v`` are dropped
MAX_FITS = 20
#: a slope that is not positive is blamed on the block means when they keep less than this
#: fraction of ``1 / q``, the share of the work's variation a random order keeps
#: (:func:`work_kept`)
KEPT_LOST = 0.5
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OlsFit:
    """``y = a + b x`` by ordinary least squares, with standard errors (``h - 2`` df)."""

    a: float
    b: float
    se_a: float
    se_b: float
    ssr: float
    r2: float
    h: int


def ols(x: np.ndarray, y: np.ndarray) -> OlsFit:
    """Simple linear regression; needs 3+ points and varying ``x``."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    h = x.shape[0]
    if h < 3:
        raise NotEnoughDataError(f"{h} points; a regression with a CI needs at least 3")
    xm, ym = x.mean(), y.mean()
    sxx = float(np.sum((x - xm) ** 2))
    if sxx <= 0:
        raise NotEnoughDataError("all work amounts are equal; the slope is undefined")
    b = float(np.sum((x - xm) * (y - ym)) / sxx)
    a = float(ym - b * xm)
    resid = y - (a + b * x)
    ssr = float(np.dot(resid, resid))
    s2 = ssr / (h - 2)
    syy = float(np.sum((y - ym) ** 2))
    return OlsFit(a=a, b=b, se_a=math.sqrt(s2 * (1 / h + xm * xm / sxx)),
                  se_b=math.sqrt(s2 / sxx), ssr=ssr, r2=1 - ssr / syy if syy > 0 else 1.0, h=h)


@dataclass(frozen=True)
class WpsResult:
    """Outcome of the WPS method; ``rounds_*`` are positions in the input."""

    alpha: float
    alpha_lower: float
    alpha_upper: float
    v: float
    v_lower: float
    v_upper: float
    confidence: float
    q: int
    blocks: int
    t: float
    r2: float
    residual_autocorrelation: float
    naive_v: float  # total work / total time of the rounds used (what ignoring alpha gives)
    residual_se: float  # s of a round's duration about the fitted line (seconds)
    prediction_error: float  # residual_se / mean duration of the rounds used
    max_prediction_error: float
    rounds_used: list[int] = field(default_factory=list)
    rounds_short: list[int] = field(default_factory=list)
    rounds_below_alpha: list[int] = field(default_factory=list)
    #: the newest ``len(rounds_used) % q`` rounds used: an incomplete block, so not in the
    #: block means that ``alpha``, ``v`` and their CIs come from (the residual diagnostics
    #: and ``naive_v`` take them in)
    rounds_outside_blocks: list[int] = field(default_factory=list)

    @property
    def v_width(self) -> float:
        return self.v_upper - self.v_lower

    @property
    def relative_width(self) -> float:
        return self.v_width / self.v if self.v > 0 else math.inf

    @property
    def v_upper_unbounded(self) -> bool:
        """The slope's CI reaches 0 (``b - d <= 0``): no speed is too high for these rounds,
        so ``v_upper`` (and the CI's width) is infinite, written as null in JSON."""
        return math.isinf(self.v_upper)

    @property
    def warning(self) -> str | None:
        """Why the fit should not be trusted, or None."""
        reasons = []
        if self.prediction_error > self.max_prediction_error:
            reasons.append(
                f"prediction error {self.prediction_error:.1%} of the mean round duration "
                f"is above {self.max_prediction_error:.1%}: t = alpha + w / v does not fit "
                "these rounds (durations not linear in the work, or non-stable phases that "
                "vary from round to round)")
        if self.v_upper_unbounded:
            reasons.append(
                f"the speed's {self.confidence:.0%} CI has no upper bound (v_upper null): the "
                f"CI of the slope 1 / v reaches 0 with {self.blocks} block means; more rounds, "
                "or work amounts further apart, narrow it")
        return "; ".join(reasons) or None

    @property
    def alpha_work(self) -> float:
        """Work the non-stable phases are worth at the stable speed (0 if alpha <= 0)."""
        return max(0.0, self.alpha * self.v)

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d.update(v_width=self.v_width, relative_width=self.relative_width,
                 v_upper_unbounded=self.v_upper_unbounded,
                 alpha_work=self.alpha_work, rounds_used_count=len(self.rounds_used),
                 warning=self.warning)
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                for k, v in d.items()}


def work_kept(w: np.ndarray, q: int) -> float:
    """The share of the work amounts' variation that their block means of ``q`` keep:
    ``q sum_j (bw_j - mean bw)^2 / sum_i (w_i - mean w)^2`` over the ``h`` block means ``bw``
    (the rounds of whole blocks only).

    1 when the work is constant within blocks (runs of ``q`` equal amounts), about ``1 / q``
    for amounts in a random order, 0 when every block holds the same mix (amounts that
    alternate, or repeat with a period dividing ``q``). The regression on block means sees
    only this share: the rest, the differences within blocks, is averaged away.

    Examples
    --------
    >>> import numpy as np
    >>> w = np.array([100.0, 200.0] * 20)  # alternating
    >>> work_kept(w, 1), work_kept(w, 2), round(work_kept(w, 3), 3)
    (1.0, 0.0, 0.111)
    """
    w = np.asarray(w, dtype=float)
    h = w.shape[0] // q
    total = float(np.sum((w[: h * q] - w[: h * q].mean()) ** 2))
    b = block_means(w, q)
    return q * float(np.sum((b - b.mean()) ** 2)) / total if total > 0 else 0.0


def _blocks_lost_the_work(q: int, kept: float) -> str:
    """Why the regression on block means of ``q`` rounds has no slope to fit: the block means
    of the work hardly vary (:func:`work_kept`), and what to do."""
    return (f"the block means of the work amounts do not vary at the subsession size q = {q} "
            f"(they keep {kept:.1%} of the work amounts' variation, where a random order "
            f"keeps about {1 / q:.1%}): work amounts that alternate or repeat with a short "
            "period put nearly the same mix in every block, and with durations autocorrelated "
            "over q rounds the slope is left only in differences within blocks, which the "
            "block means average away; vary the work "
            "amounts over stretches longer than q rounds (runs of equal amounts in a random "
            "order, or the workflow planner's order), or take more rounds")


def _fit(w: np.ndarray, t: np.ndarray, ac_limit: float, confidence: float
         ) -> tuple[OlsFit, int, float, float]:
    """The regression on block means of ``q`` rounds (steps 2-3 of the module docstring):
    the fit, ``q``, the block residuals' lag-1 autocorrelation and :func:`work_kept`."""
    first = ols(w, t)
    resid = t - (first.a + first.b * w)
    q, r = subsession_size(resid, ac_limit)
    if q is None:
        raise NotEnoughDataError(
            f"round durations stay autocorrelated (|lag-1 autocorrelation| {abs(r):.3f} > "
            f"{ac_limit}, lag-1 {r:.3f}) for every subsession size; more rounds are needed")
    kept = work_kept(w, q)
    bw, bt = block_means(w, q), block_means(t, q)
    if float(np.sum((bw - bw.mean()) ** 2)) <= 0:
        raise NotEnoughDataError(_blocks_lost_the_work(q, kept))
    fit = ols(bw, bt)
    return fit, q, lag1_autocorrelation(block_means(resid, q)), kept


def wps_regression(
    work: np.ndarray,
    duration: np.ndarray,
    *,
    lower_bound_s: float,
    ac_limit: float,
    confidence: float,
    max_prediction_error: float,
) -> WpsResult:
    """Fit ``duration = alpha + work / v`` as the module docstring describes.

    Parameters
    ----------
    work, duration : numpy.ndarray
        Work amount and wall time (seconds) of each round, in round order.
    lower_bound_s : float
        Rounds shorter than this are not used (Pilot: 20 s strict, 3 s quick).
    ac_limit : float
        Largest ``|lag-1 autocorrelation|`` of the subsession means of the residuals.
    confidence : float
        Confidence level of the interval of ``v``.
    max_prediction_error : float
        Warn (:attr:`WpsResult.warning`, and the log) above this prediction
        error.

    Returns
    -------
    WpsResult
        ``alpha``, ``v`` with its interval, ``q``, and which rounds were used or dropped.

    Raises
    ------
    NotEnoughDataError
        fewer than 3 usable rounds, no varying work, durations that do not grow with the
        work, residuals that stay autocorrelated, or block means of the work that do not vary
        (:func:`work_kept`: alternating or periodic work amounts with autocorrelated
        durations; a slope that is not positive is blamed on them where they keep less than
        half of what a random order keeps).
    ValueError
        ``work`` and ``duration`` of different lengths.

    References
    ----------
    Y. Li, Y. Gupta, E. L. Miller, D. D. E. Long, "Pilot: A Framework that Understands How to
    Do Performance Benchmarks the Right Way", Proc. 24th IEEE Int. Symp. on Modeling, Analysis,
    and Simulation of Computer and Telecommunication Systems (MASCOTS 2016), 2016,
    doi:10.1109/MASCOTS.2016.31.

    Examples
    --------
    Rounds of a program that starts in 0.5 s and then does 1,000 units of work per second:

    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> work = rng.integers(100, 3200, size=40).astype(float)
    >>> duration = 0.5 + work / 1000 + 0.01 * rng.standard_normal(work.size)
    >>> r = wps_regression(work, duration, lower_bound_s=0.0, ac_limit=0.2, confidence=0.95,
    ...                    max_prediction_error=0.1)
    >>> round(r.alpha, 2), round(r.v, -1), r.v_lower < 1000 < r.v_upper, r.warning
    (0.49, 1000.0, True, None)
    """
    w_all = np.asarray(work, dtype=float)
    t_all = np.asarray(duration, dtype=float)
    if w_all.shape != t_all.shape:
        raise ValueError("work and duration must have the same length")
    short = [i for i in range(len(t_all)) if t_all[i] < lower_bound_s]
    used = [i for i in range(len(t_all)) if t_all[i] >= lower_bound_s]
    below: list[int] = []
    for _ in range(MAX_FITS):
        if len(used) < MIN_ROUNDS:
            raise NotEnoughDataError(
                f"{len(used)} usable rounds (of {len(t_all)}; {len(short)} shorter than "
                f"{lower_bound_s} s, {len(below)} below alpha); WPS needs {MIN_ROUNDS}")
        w, t = w_all[used], t_all[used]
        fit, q, r, kept = _fit(w, t, ac_limit, confidence)
        if fit.b <= 0:
            if kept < KEPT_LOST / q:
                raise NotEnoughDataError(_blocks_lost_the_work(q, kept))
            raise NotEnoughDataError("duration does not grow with the work amount; "
                                     "no positive speed fits")
        alpha_work = max(0.0, fit.a / fit.b)
        drop = [i for i in used if w_all[i] < alpha_work]
        if not drop or len(used) - len(drop) < MIN_ROUNDS:
            break  # (an alpha above nearly every round is noise, not a reason to drop them)
        below.extend(drop)
        used = [i for i in used if i not in drop]
    tq = t_quantile(confidence, fit.h - 2)
    d_b = tq * fit.se_b
    d_a = tq * fit.se_a
    v = 1.0 / fit.b
    v_lower = 1.0 / (fit.b + d_b)
    v_upper = 1.0 / (fit.b - d_b) if fit.b - d_b > 0 else math.inf
    resid = t - (fit.a + fit.b * w)
    residual_se = math.sqrt(float(np.dot(resid, resid)) / (len(used) - 2))
    result = WpsResult(
        alpha=fit.a, alpha_lower=fit.a - d_a, alpha_upper=fit.a + d_a, v=v, v_lower=v_lower,
        v_upper=v_upper, confidence=confidence, q=q, blocks=fit.h, t=tq, r2=fit.r2,
        residual_autocorrelation=r, naive_v=float(w.sum() / t.sum()),
        residual_se=residual_se, prediction_error=residual_se / float(t.mean()),
        max_prediction_error=max_prediction_error, rounds_used=used,
        rounds_short=short, rounds_below_alpha=sorted(below),
        rounds_outside_blocks=used[fit.h * q:],
    )
    if result.warning:
        log.warning("WPS: %s", result.warning)
    return result
