"""Integrated series: random walks left whole, and what strongly dependent stationary series keep.

The robust detector segments the increments of a series its variance ratio calls integrated
(:func:`perfcast.warmup.edm_robust.integrated`) instead of its readings. This measures the two
sides of that choice on generated series (seed 11):

* driftless random walks of 200 and 1,000 readings (300 each): the share with any change point
  (a walk has no level to change; the level test alone, calibrated for stationary readings,
  splits its wander);
* AR(1) series with phi 0.9 and 0.95, 200 and 1,000 readings (200 each): false alarms without
  change; a step of 2 sd of the readings half-way located within 20 readings; a step of 6
  innovation sd half-way, any change point;
* the share of each kind of series that the test calls integrated (300 each, seed 5), the
  present test beside the earlier one, ``V_2 / V_1 - 1 >= 0.975`` (the AR(1) coefficient of
  the readings' differences);
* periodic series with little noise (seed 3): 600 readings of a sawtooth ``0.01 (t mod P)``
  from a random phase, normal noise of sd 0, 0.002 or 0.01, and a step of 0.05 at reading
  200 (50 series per cell): the share called integrated, the share whose step is located
  within 5 readings, and the share with a change point elsewhere.

Every cell's figures come from the same series for each detector variant. ``python
benchmarks/bench_integrated.py`` prints them and writes benchmarks/out/integrated.json.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _util import ar1, save  # noqa: E402

from perfcast.warmup.edm_robust import (  # noqa: E402
    RHO_MAX,
    _difference_rho,
    edm_robust,
    integrated,
)

SEED = 11
WALKS = 300
AR_SERIES = 200
NEAR = 20


def measure() -> dict:
    rng = np.random.default_rng(SEED)
    out: dict[str, dict] = {"random_walk": {}, "ar1": {}}
    for n in (200, 1000):
        split = sum(bool(edm_robust(np.cumsum(rng.normal(size=n)))) for _ in range(WALKS))
        out["random_walk"][str(n)] = {"series": WALKS, "split": split / WALKS}
    for phi in (0.9, 0.95):
        for n in (200, 1000):
            found = false = six = 0
            for _ in range(AR_SERIES):
                x = ar1(rng, n, phi)
                step = x.copy()
                step[n // 2:] += 2 / np.sqrt(1 - phi ** 2)
                found += any(abs(c - n // 2) <= NEAR for c in edm_robust(step))
                false += bool(edm_robust(x))
                big = x.copy()
                big[n // 2:] += 6.0
                six += bool(edm_robust(big))
            out["ar1"][f"phi={phi},n={n}"] = {
                "series": AR_SERIES, "false_alarms": false / AR_SERIES,
                "step_2sd_located": found / AR_SERIES, "step_6_innovation_sd_any": six / AR_SERIES}
    return out


def flagged(series: int = 300) -> dict:
    """Share of random walks and AR(1) series called integrated, by the variance-ratio test and
    by the earlier lag-2 one."""
    rng = np.random.default_rng(5)
    out = {}
    for n in (200, 1000):
        kinds = {"random walk": [np.cumsum(rng.normal(size=n)) for _ in range(series)],
                 "AR(1) phi=0.95": [ar1(rng, n, 0.95) for _ in range(series)],
                 "AR(1) phi=0.9": [ar1(rng, n, 0.9) for _ in range(series)]}
        for kind, xs in kinds.items():
            out[f"{kind}, n={n}"] = {
                "variance_ratio": float(np.mean([integrated(x) for x in xs])),
                "lag_2": float(np.mean([_difference_rho(x) >= RHO_MAX for x in xs]))}
    return out


def periodic(series: int = 50) -> dict:
    """Sawtooth series with a step: called integrated, step found, other change points."""
    rng = np.random.default_rng(3)
    out = {}
    for period in (5, 7, 12, 20, 30):
        for sd in (0.0, 0.002, 0.01):
            called = found = other = 0
            for _ in range(series):
                t = np.arange(600) + rng.integers(period)
                x = 0.01 * (t % period) + 0.05 * (np.arange(600) >= 200) \
                    + rng.normal(0, sd, 600)
                called += integrated(x)
                cuts = edm_robust(x)
                found += any(abs(c - 200) <= 5 for c in cuts)
                other += any(abs(c - 200) > 5 for c in cuts)
            out[f"P={period},sd={sd}"] = {"series": series, "integrated": called / series,
                                          "step_located": found / series,
                                          "other_change_points": other / series}
    return out


def main() -> None:
    res = measure()
    res["flagged"] = flagged()
    res["periodic"] = periodic()
    print("driftless random walks with a change point: " + ", ".join(
        f"n={n} {v['split']:.1%}" for n, v in res["random_walk"].items()))
    print(f"{'AR(1)':>16} {'false alarms':>13} {'2-sd step found':>16} {'6-sd step, any':>15}")
    for cell, v in res["ar1"].items():
        print(f"{cell:>16} {v['false_alarms']:>13.1%} {v['step_2sd_located']:>16.1%} "
              f"{v['step_6_innovation_sd_any']:>15.1%}")
    print(f"{'called integrated':>26} {'variance ratio':>15} {'lag-2 test':>11}")
    for cell, v in res["flagged"].items():
        print(f"{cell:>26} {v['variance_ratio']:>15.0%} {v['lag_2']:>11.0%}")
    print(f"{'sawtooth with a step':>20} {'integrated':>11} {'step found':>11} {'other cuts':>11}")
    for cell, v in res["periodic"].items():
        print(f"{cell:>20} {v['integrated']:>11.0%} {v['step_located']:>11.0%} "
              f"{v['other_change_points']:>11.0%}")
    save("integrated", res)


if __name__ == "__main__":
    main()
