"""The cycle test (:func:`perfcast.warmup.season.season`): false detections, power beside a step,
sawtooth periods, and what it finds on real series.

On generated series (seed 11):

* series without a cycle: normal, lognormal, t(3), AR(1) with phi 0.5 and 0.9, and random
  walks of 100, 200, 500, 1,000, 2,000 and 5,000 readings, 150 each: the share called cyclic
  (goal: at most 2 % in every cell);
* a sine of period 20 and amplitude 0.5 in normal noise of sd 1 (600 readings, random phase,
  200 series), alone and beside a step of 40 sd at reading 300: the share whose period is found
  within 0.5 readings;
* sawtooths ``t mod P`` in normal noise of sd 0.1, 0.5 and 2 (600 readings): the period found;
* sines of amplitude 1.5 in normal noise of sd 1 (600 readings, 100 series), periods drawn
  from 4 to 100 readings: the share found, by period band (differencing weakens a long cycle:
  its differences have 2 sin(pi / P) of its amplitude);
* the change points with the cycle taken out (the detector's default) and without
  (``cycles=False``): a step of 1 noise sd at reading 300 under a sine or a sawtooth of
  amplitude 2 sd (periods drawn from 8 to 60 readings, random phase; 600 readings, 200 series
  each), the share where a change point lies within 5 readings of it and the share with one
  elsewhere; the same cycles without a step (false alarms); and a sine whose amplitude grows
  from 1 to 3 sd over the series (taken out only when both halves show the same cycle).

On real series, when their folders are given (``TCPD_DIR``: the Turing change-point dataset;
``JMH_DIR``: the JMH steady-state dataset, first fork of each benchmark; see bench_tcpd.py and
bench_jmh.py): how many are called cyclic, and with which periods.

``python benchmarks/bench_season.py`` prints the figures and writes benchmarks/out/season.json.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _util import ar1, save  # noqa: E402

from perfcast.warmup.edm_robust import edm_robust  # noqa: E402
from perfcast.warmup.season import deseasonalised, season  # noqa: E402

LENGTHS = (100, 200, 500, 1000, 2000, 5000)


def false_detections(rng: np.random.Generator, per_cell: int = 150) -> dict[str, float]:
    kinds = {
        "normal": lambda n: rng.normal(size=n),
        "lognormal": lambda n: np.exp(rng.normal(size=n)),
        "t3": lambda n: rng.standard_t(3, size=n),
        "ar0.5": lambda n: ar1(rng, n, 0.5),
        "ar0.9": lambda n: ar1(rng, n, 0.9),
        "walk": lambda n: np.cumsum(rng.normal(size=n)),
    }
    return {f"{kind} n={n}": float(np.mean([season(make(n)) is not None
                                             for _ in range(per_cell)]))
            for kind, make in kinds.items() for n in LENGTHS}


def power_beside_a_step(rng: np.random.Generator, series: int = 200) -> dict[str, float]:
    t = np.arange(600)
    out = {}
    for label, step in (("sine alone", 0.0), ("sine beside a 40 sd step", 40.0)):
        hits = 0
        for _ in range(series):
            x = (rng.normal(size=600) + 0.5 * np.sin(2 * np.pi * t / 20 + rng.uniform(0, 6))
                 + step * (t >= 300))
            s = season(x)
            hits += s is not None and abs(s.period - 20) < 0.5
        out[label] = hits / series
    return out


def sine_periods(rng: np.random.Generator, series: int = 100) -> dict[str, float]:
    """Sines of amplitude 1.5 in normal noise of sd 1 (600 readings), periods drawn from 4 to
    100 readings: the share whose period is found within 2 %, by period band."""
    t = np.arange(600)
    bands = {"4-35": [0, 0], "35-70": [0, 0], "70-100": [0, 0]}
    for _ in range(series):
        period = rng.uniform(4, 100)
        s = season(1.5 * np.sin(2 * np.pi * t / period + rng.uniform(0, 6))
                   + rng.normal(size=600))
        band = "4-35" if period < 35 else "35-70" if period < 70 else "70-100"
        bands[band][0] += s is not None and abs(s.period - period) / period <= 0.02
        bands[band][1] += 1
    return {f"periods {k}": found / n for k, (found, n) in bands.items() if n}


def _shares(step: float, located: int, other: int, series: int) -> dict[str, float]:
    """A cell of :func:`steps_under_a_cycle`: with a step, where its change points lie; without,
    the false alarms."""
    if step:
        return {"step located": located / series, "change point elsewhere": other / series}
    return {"false alarm": other / series}


def steps_under_a_cycle(rng: np.random.Generator, series: int = 200) -> dict[str, dict]:
    """Change points (alpha 0.01, ``min_effect`` 0) with the cycle taken out and without."""
    t = np.arange(600)
    shapes = {
        "sine": lambda p, ph: 2 * np.sin(2 * np.pi * t / p + ph),
        "sawtooth": lambda p, ph: 4 * (((t / p + ph) % 1) - 0.5),
        "growing sine": lambda p, ph: (1 + 2 * t / 600) * np.sin(2 * np.pi * t / p + ph),
    }
    out = {}
    for shape, cycle in shapes.items():
        for step in (1.0, 0.0):
            counts = {"taken out": [0, 0], "kept (cycles=False)": [0, 0]}
            removed = 0
            for _ in range(series):
                x = (cycle(rng.uniform(8, 60), rng.uniform(0, 6)) + rng.normal(size=600)
                     + step * (t >= 300))
                removed += deseasonalised(x)[1] is not None
                for label, on in (("taken out", True), ("kept (cycles=False)", False)):
                    cps = edm_robust(x, cycles=on)
                    counts[label][0] += any(abs(c - 300) <= 5 for c in cps)
                    counts[label][1] += any(abs(c - 300) > 5 for c in cps) if step else bool(cps)
            out[f"{shape}, step {step:g} sd"] = {"cycle taken out": removed / series} | {
                label: _shares(step, located, other, series)
                for label, (located, other) in counts.items()}
    return out


def sawtooth_periods(rng: np.random.Generator) -> dict[str, float | None]:
    t = np.arange(600)
    out = {}
    for period in (7, 12.5, 20, 25, 30):
        for sd in (0.1, 0.5, 2.0):
            s = season((t % period) + rng.normal(0, sd, 600))
            out[f"P={period} sd={sd}"] = None if s is None else round(s.period, 2)
    return out


def real_series() -> dict[str, dict]:
    out: dict[str, dict] = {}
    if os.environ.get("TCPD_DIR"):
        import bench_tcpd

        found = {name: round(s.period, 1) for name, x, _ in bench_tcpd.load(
            Path(os.environ["TCPD_DIR"])) if (s := season(x)) is not None}
        out["tcpd"] = {"cyclic": found, "count": len(found)}
    if os.environ.get("JMH_DIR"):
        import bench_jmh

        forks = list(bench_jmh.load(Path(os.environ["JMH_DIR"]), 1))
        periods = [s.period for _, _, x, _ in forks if (s := season(x)) is not None]
        out["jmh_first_forks"] = {
            "forks": len(forks), "cyclic": len(periods),
            "period_median": float(np.median(periods)) if periods else None,
            "period_range": [float(min(periods)), float(max(periods))] if periods else None}
    return out


def main() -> None:
    rng = np.random.default_rng(11)
    result = {"false_detections": false_detections(rng),
              "power_beside_a_step": power_beside_a_step(rng),
              "sawtooth_periods": sawtooth_periods(rng), "sine_periods": sine_periods(rng),
              "steps_under_a_cycle": steps_under_a_cycle(rng), "real": real_series()}
    worst = max(result["false_detections"].items(), key=lambda kv: kv[1])
    print(f"false detections: worst cell {worst[0]} {worst[1]:.1%}, mean "
          f"{np.mean(list(result['false_detections'].values())):.2%}")
    for label, share in result["power_beside_a_step"].items():
        print(f"{label}: period found in {share:.1%}")
    print("sawtooths:", result["sawtooth_periods"])
    print("sines of amplitude 1.5 sd, found:", result["sine_periods"])
    for key, figures in result["steps_under_a_cycle"].items():
        print(f"{key}: {figures}")
    for name, figures in result["real"].items():
        print(name, figures)
    save("season", result)


if __name__ == "__main__":
    main()
