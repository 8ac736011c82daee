"""Work amounts for successive rounds (Pilot's planner; docs/methods/warmup.md).

1. **Calibrate**: start at ``work_min``; while a round is shorter than the lower bound, double
   the work (capped at ``work_max``). The first round that passes sets ``a`` and its duration
   ``s``.
2. **Ramp** (a first estimate quickly): round ``i`` after it should last ``s + i k`` seconds, so
   that ``n`` rounds take ``t = n s + k n (n - 1) / 2``, i.e. ``k = (2t - 2sn) / (n^2 - n)``
   (``t`` = ``first_estimate_s``; ``n`` = ``first_estimate_rounds``). When
   ``s n >= t`` the largest ``n`` with ``k > 0`` is used; fewer than 3 skips the ramp.
3. **Dyadic midpoints** of ``(a, b)``: 1/2, 1/4, 3/4, 1/8, 3/8, 5/8, 7/8, 1/16, ... of the way
   from ``a`` to ``b = work_max``, so every prefix of the sequence spreads the work amounts.
   ``a`` is raised to the work ``alpha`` stands for (WPS) once that is known.

The planner is a pure function of the rounds so far, so a resumed session continues exactly
where a killed one stopped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


def dyadic_fraction(j: int) -> float:
    """``j``-th fraction (0-based) of the breadth-first dyadic sequence 1/2, 1/4, 3/4, 1/8..."""
    if j < 0:
        raise ValueError("j must be >= 0")
    level = (j + 1).bit_length()  # 1 for j=0, 2 for j=1..2, 3 for j=3..6
    i = j + 1 - (1 << (level - 1))
    return (2 * i + 1) / (1 << level)


def ramp_increment(s: float, t: float, n: int) -> tuple[float, int]:
    """``(k, n)`` of the ramp: ``k = (2t - 2sn) / (n^2 - n)``; ``n`` shrinks until ``k > 0``.

    Round ``i`` of the ramp lasts ``s + i k`` seconds, so its ``n`` rounds take
    ``n s + k n (n - 1) / 2 = t`` (the module docstring; Pilot, Li et al., MASCOTS 2016).

    Parameters
    ----------
    s : float
        the duration of the calibration round (seconds).
    t : float
        the time the ramp's rounds should take together (``first_estimate_s``).
    n : int
        the ramp's rounds wanted (``first_estimate_rounds``); fewer when ``s n >= t``.

    Returns
    -------
    tuple of (float, int)
        the increment ``k`` (seconds per round) and the rounds ``n``; ``(0.0, 0)`` (no ramp)
        when fewer than 3 rounds fit or ``s <= 0``.

    Examples
    --------
    >>> ramp_increment(2.0, 10.0, 8)  # n = 4 fit: 4 * 2 + k * 6 = 10
    (0.3333333333333333, 4)
    >>> ramp_increment(4.0, 10.0, 8)  # two rounds fit: no ramp
    (0.0, 0)
    """
    if s <= 0:
        return 0.0, 0
    n = min(n, math.ceil(t / s) - 1)
    if n < 3:
        return 0.0, 0
    return (2 * t - 2 * s * n) / (n * n - n), n


@dataclass(frozen=True)
class PlannerSettings:
    """What the planner needs (built by :attr:`perfcast.warmup.settings.SessionSettings.planner`
    from a workload's ``work_min``/``work_max``, ``round_lower_bound_s`` and the session's
    ``first_estimate_s``/``first_estimate_rounds``; ``1 <= work_min <= work_max``)."""

    work_min: int
    work_max: int
    lower_bound_s: float
    first_estimate_s: float
    first_estimate_rounds: int


@dataclass(frozen=True)
class PlannedRound:
    """The next round: its work amount and the planner's stage that chose it."""

    work: int
    stage: str  # calibrate | ramp | dyadic


def next_round(
    history: Sequence[tuple[float, float]],
    settings: PlannerSettings,
    alpha_work: float = 0.0,
) -> PlannedRound | None:
    """Work amount of the next round given ``(work, duration_s)`` of the rounds so far.

    Parameters
    ----------
    history : Sequence[tuple[float, float]]
        ``(work, duration_s)`` of every round so far, in order.
    settings : PlannerSettings
        The planner's settings.
    alpha_work : float, default=0.0
        The work the WPS intercept stands for (``alpha * v``; 0 while unknown): the
        dyadic rounds stay above it.

    Returns
    -------
    PlannedRound or None
        None when no further round can help: ``work_max`` is still shorter than the lower
        bound, or every work amount of the dyadic sequence has been run.

    References
    ----------
    Y. Li, Y. Gupta, E. L. Miller, D. D. E. Long, "Pilot: A Framework that Understands How to
    Do Performance Benchmarks the Right Way", Proc. 24th IEEE Int. Symp. on Modeling, Analysis,
    and Simulation of Computer and Telecommunication Systems (MASCOTS 2016), 2016,
    doi:10.1109/MASCOTS.2016.31.
    """
    a0, b = settings.work_min, settings.work_max
    passed = [i for i, (_, d) in enumerate(history) if d >= settings.lower_bound_s]
    if not passed:
        if not history:
            return PlannedRound(a0, "calibrate")
        last_work = int(history[-1][0])
        if last_work >= b:
            return None
        return PlannedRound(min(2 * last_work, b), "calibrate")
    c = passed[0]
    a, s = int(history[c][0]), float(history[c][1])
    since = len(history) - c  # rounds from the calibration round on (it is the ramp's round 0)
    k, n_ramp = ramp_increment(s, settings.first_estimate_s, settings.first_estimate_rounds)
    done = {int(w) for w, _ in history}
    if k > 0 and since < n_ramp:
        w = round(a * (1 + since * k / s))
        if w < b and w not in done:
            return PlannedRound(max(a, w), "ramp")
        n_ramp = since  # the ramp reached work_max: on to the dyadic rounds
    lo = min(max(a, math.ceil(alpha_work)), b)
    j = since - max(n_ramp, 1)
    for jj in range(j, j + 64 * max(1, b - lo).bit_length()):
        w = int(round(lo + dyadic_fraction(jj) * (b - lo)))
        if w not in done and lo <= w <= b:
            return PlannedRound(w, "dyadic")
    return None
