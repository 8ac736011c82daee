"""WPS on alternating work amounts: Pilot's regression on block means against a regression on
the rounds themselves with a batch-means (sandwich) variance of the slope.

Each series: ``t = 0.5 + w / 1000`` plus AR(1) noise of sd 0.05 (``phi`` 0, 0.5, 0.9), 40 or
200 rounds, the work amounts in the workflow planner's dyadic order over 100 .. 3,200 or
alternating 100, 200. The share of series whose CI of the slope ``1 / v`` covers 1/1000, the
median width, and the series that give no interval. The raw-round regression: OLS of ``t`` on
``w``; ``V = (X'X)^-1 S (X'X)^-1`` with ``S = h / (h - 1) sum_j U_j U_j'`` and ``U_j`` the
sums of the scores ``x_i e_i`` over block ``j`` of ``q`` rounds, ``q`` the larger of the
residuals' and the slope score's subsession sizes; ``t(h - 1)``.

``python benchmarks/bench_wps_order.py [--series N]`` (default 200) prints the table of
docs/methods/warmup.md ("Work amounts that alternate").
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _util import ar1  # noqa: E402

from perfcast.warmup.ci import NotEnoughDataError, t_quantile  # noqa: E402
from perfcast.warmup.planner import dyadic_fraction  # noqa: E402
from perfcast.warmup.subsession import subsession_size  # noqa: E402
from perfcast.warmup.wps import wps_regression  # noqa: E402

SLOPE = 1 / 1000


def raw_rounds(w: np.ndarray, t: np.ndarray, limit: float = 0.2,
               cl: float = 0.95) -> tuple[float, float] | None:
    """The slope's CI from the rounds themselves (the module docstring), or None."""
    n = w.shape[0]
    x = np.column_stack([np.ones(n), w])
    inv = np.linalg.inv(x.T @ x)
    beta = inv @ x.T @ t
    e = t - x @ beta
    score = x * e[:, None]
    q1, _ = subsession_size(e, limit)
    q2, _ = subsession_size(score[:, 1] - score[:, 1].mean(), limit)
    if q1 is None or q2 is None:
        return None
    q = max(q1, q2)
    h = n // q
    sums = np.add.reduceat(score[: h * q], np.arange(0, h * q, q), axis=0)
    v = inv @ (sums.T @ sums * (h / (h - 1))) @ inv
    d = t_quantile(cl, h - 1) * math.sqrt(v[1, 1])
    return beta[1] - d, beta[1] + d


def cell(order: str, n: int, phi: float, series: int) -> dict:
    rng = np.random.default_rng(1)
    out = {m: {"covered": 0, "intervals": 0, "widths": [], "failed": 0}
           for m in ("block_means", "raw_rounds")}
    for _ in range(series):
        w = (np.array([100 + 3100 * dyadic_fraction(j) for j in range(n)]) if order == "dyadic"
             else np.where(np.arange(n) % 2 == 0, 100.0, 200.0))
        t = 0.5 + w / 1000 + 0.05 * math.sqrt(1 - phi ** 2) * ar1(rng, n, phi)
        try:
            r = wps_regression(w, t, lower_bound_s=0, ac_limit=0.2, confidence=0.95,
                               max_prediction_error=10)
            ci = (1 / r.v_upper if math.isfinite(r.v_upper) else 0.0, 1 / r.v_lower)
        except NotEnoughDataError:
            ci = None
        for name, c in (("block_means", ci), ("raw_rounds", raw_rounds(w, t))):
            k = out[name]
            if c is None:
                k["failed"] += 1
                continue
            k["intervals"] += 1
            k["covered"] += c[0] <= SLOPE <= c[1]
            k["widths"].append(c[1] - c[0])
    return out


def main() -> None:
    import logging

    logging.disable(logging.WARNING)  # (an unbounded CI's warning, once per series)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=int, default=200)
    args = ap.parse_args()
    print(f"{'order':>11} {'n':>4} {'phi':>4} {'method':>12} {'coverage':>9} "
          f"{'median width':>13} {'no CI':>6}")
    for order in ("dyadic", "alternating"):
        for n in (40, 200):
            for phi in (0.0, 0.5, 0.9):
                for name, k in cell(order, n, phi, args.series).items():
                    cov = k["covered"] / max(k["intervals"], 1)
                    width = float(np.median(k["widths"])) if k["widths"] else math.nan
                    print(f"{order:>11} {n:>4} {phi:>4} {name:>12} {cov:>9.1%} {width:>13.2e} "
                          f"{k['failed']:>6}", flush=True)


if __name__ == "__main__":
    main()
