"""``perfcast watch``'s stop rule on generated warm-ups, and its coverage under optional stopping.

Three measurements of :func:`perfcast.warmup.watch.watch` with its defaults (the target width
is the one setting chosen per cell, see below), each series fed reading by reading as a pipe
would:

* ``warmup``: step and exponential warm-ups lasting 5, 15 and 25 % of n = 1,000 and 10,000
  readings, +1 and +3 sd (an exponential warm-up starts that high and decays to 0.05 sd at the
  end of its stated length), on a plateau of mean 1 and sd 0.1. The target width is set per n
  so that the plateau alone needs n / 4 readings (``2 t sd / sqrt(n / 4)``: 2.5 % at 1,000,
  0.8 % at 10,000): the warm-ups then last 0.2 - 1 times the required sample size, and a stop
  fits in the n readings. Measured: the share of series stopped after the warm-up ended (a
  series not stopped within n counts as a failure; goal >= 95 %), the share whose final CI
  covers the plateau among those stopped (goal: 95 % within 5 points), the median stop.
* ``nowarmup``: the same plateaus without warm-up: readings at the stop against the required
  sample size of an offline analysis of the whole series (``perfcast ci``'s
  ``required_readings``; goal <= 2x).
* ``coverage``: sessions run until ``watch`` says stop (optional stopping) on i.i.d. normal,
  AR(1) with phi 0.5, and lognormal (sigma 0.5) readings, each without and with a step warm-up
  (+2 sd for the first 50 readings); the share whose final CI covers the true steady-state
  mean (goal: 95 % within 3 points). The target is set so that i.i.d. readings need 200.
* ``offline``: the exponential warm-ups of ``warmup``, analysed whole: the share whose
  ``perfcast stable`` mean and median CIs cover the plateau, beside ``perfcast edm``'s stable
  segment fed to ``perfcast ci`` (both with their defaults; goal 95 % within 5 points).

* ``defaults``: every setting at its default on a plateau that needs 50 readings, step
  warm-ups of 50, 100, 200 readings: where the protection ends.

``python benchmarks/bench_watch.py [--series N] [--sessions N] [--part P ...] [--cells C]
[--evidence E] [--ucb-z Z]``

(P: warmup, nowarmup, coverage, offline, defaults; by default 200 series per cell, 1,000
sessions per case, all parts; C: all cells of ``warmup`` or the hardest, step, 25 %, +3 sd
at each n; E and Z: the stop rule's ``EVIDENCE`` and ``UCB_Z`` instead of its own, to
measure the trade-off between protection and cost) prints tables and writes
benchmarks/out/watch_<part>.json.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _util import save  # noqa: E402

from perfcast.warmup import watch as watch_module  # noqa: E402
from perfcast.warmup.ci import mean_ci  # noqa: E402
from perfcast.warmup.cli_settings import command_settings  # noqa: E402
from perfcast.warmup.watch import watch  # noqa: E402

SD = 0.1
Z = 1.96
#: ``--cells hardest``: the warmup part runs only the cells step, 25 %, +3 sd (at each n)
HARDEST_ONLY = False
#: mean and sd of exp(N(0, 0.5^2))
LOGNORMAL_MEAN = float(np.exp(0.125))
LOGNORMAL_SD = float(np.sqrt((np.exp(0.25) - 1) * np.exp(0.25)))


def target_for(required: float, cv: float) -> float:
    """The relative CI width whose required sample size is ``required`` i.i.d. readings of
    coefficient of variation ``cv``: ``2 z cv / sqrt(required)``."""
    return float(2 * Z * cv / np.sqrt(required))


def warmup_series(rng: np.random.Generator, n: int, shape: str, frac: float,
                  height: float) -> tuple[np.ndarray, int]:
    """A plateau of mean 1, sd ``SD``, after a warm-up of ``frac * n`` readings."""
    w = int(frac * n)
    x = 1.0 + SD * rng.normal(size=n)
    if shape == "step":
        x[:w] += height * SD
    elif shape == "exp":  # height sd at the start, 0.05 sd after w readings
        x += height * SD * np.exp(-np.arange(n) * np.log(height / 0.05) / w)
    return x, w


def run(x: np.ndarray, settings) -> object:
    """The last update of a session fed the readings ``x`` one at a time."""
    last = None
    for last in watch(iter(x.tolist()), settings):  # noqa: B007
        pass
    return last


def part_warmup(series: int) -> dict:
    rows = []
    for n in (1_000, 10_000):
        settings = command_settings("watch",
                                    {"target_relative_width": target_for(n / 4, SD)})
        for shape in ("step", "exp"):
            for frac in (0.05, 0.15, 0.25):
                for height in (1.0, 3.0):
                    if HARDEST_ONLY and (shape, frac, height) != ("step", 0.25, 3.0):
                        continue
                    rng = np.random.default_rng([n, int(frac * 100), int(height), len(shape)])
                    after = stopped = covered = 0
                    stops = []
                    t = time.process_time()
                    for _ in range(series):
                        x, w = warmup_series(rng, n, shape, frac, height)
                        up = run(x, settings)
                        if up.stop:
                            stopped += 1
                            after += up.n > w
                            covered += up.ci.lower <= 1.0 <= up.ci.upper
                            stops.append(up.n)
                    rows.append({
                        "n": n, "shape": shape, "warmup_fraction": frac, "height_sd": height,
                        "series": series, "stopped": stopped / series,
                        "stopped_after_warmup": after / series,
                        "coverage": covered / stopped if stopped else None,
                        "median_stop": float(np.median(stops)) if stops else None,
                        "cpu_s": time.process_time() - t})
                    r = rows[-1]
                    print(f"n={n:>6} {shape:>4} {frac:4.0%} +{height:.0f} sd: stopped after "
                          f"the warm-up {r['stopped_after_warmup']:6.1%}, coverage "
                          f"{r['coverage'] or 0:6.1%}, median stop {r['median_stop']}",
                          flush=True)
    return {"rows": rows}


def part_nowarmup(series: int) -> dict:
    rows = []
    for n in (1_000, 10_000):
        target = target_for(n / 4, SD)
        settings = command_settings("watch", {"target_relative_width": target})
        rng = np.random.default_rng([n, 7])
        ratios = []
        for _ in range(series):
            x = 1.0 + SD * rng.normal(size=n)
            up = run(x, settings)
            offline = mean_ci(x, ac_limit=settings.limit, confidence=settings.confidence,
                              target_relative_width=target,
                              min_samples=settings.samples_min).required_readings
            ratios.append(up.n / offline if up.stop else np.inf)
        r = np.array(ratios)
        rows.append({"n": n, "series": series, "target": target,
                     "median_ratio": float(np.median(r)),
                     "p95_ratio": float(np.quantile(r, 0.95)), "max_ratio": float(r.max()),
                     "share_within_2x": float(np.mean(r <= 2.0))})
        print(f"n={n:>6} no warm-up: stop / offline required readings: median "
              f"{rows[-1]['median_ratio']:.2f}, 95th pct {rows[-1]['p95_ratio']:.2f}, max "
              f"{rows[-1]['max_ratio']:.2f}; within 2x {rows[-1]['share_within_2x']:.1%}",
              flush=True)
    return {"rows": rows}


def stream(rng: np.random.Generator, kind: str, warmup: bool, chunk: int = 1000):
    """Readings of an endless session, generated as they are read (``kind``: iid, ar1 or
    lognormal; ``warmup``: +2 sd for the first 50)."""
    state = 0.0
    i = 0
    while True:
        e = rng.normal(size=chunk)
        for v in e:
            if kind == "iid":
                y = 1.0 + SD * v
            elif kind == "ar1":  # stationary AR(1), phi 0.5, marginal sd SD
                state = 0.5 * state + np.sqrt(1 - 0.25) * v
                y = 1.0 + SD * state
            else:  # lognormal, sigma 0.5
                y = float(np.exp(0.5 * v))
            if warmup and i < 50:
                y += 2 * (SD if kind != "lognormal" else LOGNORMAL_SD)
            i += 1
            yield float(y)


def part_coverage(sessions: int) -> dict:
    rows = []
    for kind in ("iid", "ar1", "lognormal"):
        truth = LOGNORMAL_MEAN if kind == "lognormal" else 1.0
        cv = LOGNORMAL_SD / LOGNORMAL_MEAN if kind == "lognormal" else SD
        settings = command_settings("watch", {"target_relative_width": target_for(200, cv)})
        for warm in (False, True):
            rng = np.random.default_rng([len(kind), int(warm), 3])
            covered = 0
            stops = []
            for _ in range(sessions):
                up = None
                for up in watch(stream(rng, kind, warm), settings):  # noqa: B007
                    pass
                covered += up.ci.lower <= truth <= up.ci.upper
                stops.append(up.n)
            rows.append({"kind": kind, "warmup": warm, "sessions": sessions,
                         "coverage": covered / sessions,
                         "median_stop": float(np.median(stops))})
            print(f"{kind:>9} {'with' if warm else 'without'} warm-up: coverage "
                  f"{covered / sessions:.1%} of {sessions} sessions, median stop "
                  f"{np.median(stops):.0f}", flush=True)
    return {"rows": rows}


def part_offline(series: int) -> dict:
    """Offline, exponential warm-ups: coverage of the plateau by ``perfcast stable``'s mean and
    median CIs (of the stable segment's last ``1 / EVIDENCE``, the mean's variance from the
    whole segment), beside ``perfcast edm``'s stable segment fed to ``perfcast ci``, and beside
    the mean of the whole of ``perfcast stable``'s segment (what ``stable`` reported before),
    with the ratio of the mean widths of those two mean CIs."""
    from perfcast.warmup.segments import detect_phases
    from perfcast.warmup.stable import stable_throughput

    stable = command_settings("stable")
    edm = command_settings("edm")
    rows = []
    for n in (1_000, 10_000):
        for frac in (0.05, 0.15, 0.25):
            for height in (1.0, 3.0):
                rng = np.random.default_rng([n, int(frac * 100), int(height), 9])
                mean = median = plain = whole = 0
                widths = [[], []]
                for _ in range(series):
                    x, _w = warmup_series(rng, n, "exp", frac, height)
                    r = stable_throughput(x, stable)
                    mean += r.mean.lower <= 1.0 <= r.mean.upper
                    median += r.median.lower <= 1.0 <= r.median.upper
                    s0, s1 = r.stable
                    seg = mean_ci(x[s0:s1], ac_limit=stable.limit, confidence=stable.confidence,
                                  target_relative_width=stable.target_relative_width,
                                  min_samples=stable.samples_min, residual_correction=True)
                    whole += seg.lower <= 1.0 <= seg.upper
                    widths[0].append(seg.width)
                    widths[1].append(r.mean.width)
                    a, b = detect_phases(x, edm).stable
                    ci = mean_ci(x[a:b], ac_limit=stable.limit, confidence=stable.confidence,
                                 target_relative_width=stable.target_relative_width)
                    plain += ci.lower <= 1.0 <= ci.upper
                rows.append({"n": n, "warmup_fraction": frac, "height_sd": height,
                             "series": series, "stable_mean": mean / series,
                             "stable_median": median / series, "edm_then_ci": plain / series,
                             "whole_segment_mean": whole / series,
                             "width_ratio_stable_to_whole": float(np.mean(widths[1])
                                                                  / np.mean(widths[0]))})
                print(f"n={n:>6} exp {frac:4.0%} +{height:.0f} sd: perfcast stable mean "
                      f"{mean / series:6.1%}, median {median / series:6.1%}; edm then ci "
                      f"{plain / series:6.1%}; whole segment's mean {whole / series:6.1%} "
                      f"(stable's width x{rows[-1]['width_ratio_stable_to_whole']:.2f})",
                      flush=True)
    return {"rows": rows}


def part_defaults(series: int) -> dict:
    """Every setting at its default (10 % target) on a plateau of sd 5 %, which then needs 50
    readings: step warm-ups (+2 sd) of 50, 100 and 200 readings of 1,000 - the limit of any
    rule that stops a series without warm-up within twice its required sample size."""
    settings = command_settings("watch")
    rows = []
    for w in (50, 100, 200):
        rng = np.random.default_rng([w, 5])
        after = 0
        stops = []
        for _ in range(series):
            x = 1.0 + 0.05 * rng.normal(size=1_000)
            x[:w] += 0.1
            up = run(x, settings)
            after += up.stop and up.n > w
            stops.append(up.n)
        rows.append({"warmup": w, "series": series, "stopped_after_warmup": after / series,
                     "median_stop": float(np.median(stops))})
        print(f"defaults, step warm-up of {w} readings (+2 sd): stopped after it "
              f"{after / series:.1%}, median stop {np.median(stops):.0f}", flush=True)
    return {"rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=int, default=200)
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--part", choices=("warmup", "nowarmup", "coverage", "offline", "defaults"),
                    action="append")
    ap.add_argument("--cells", choices=("all", "hardest"), default="all",
                    help="warmup: every cell, or the hardest (step, 25 %%, +3 sd) at each n")
    ap.add_argument("--evidence", type=float, default=None,
                    help="measure the stop rule with this EVIDENCE factor instead of its own "
                         "(the trade-off of protection against cost)")
    ap.add_argument("--ucb-z", type=float, default=None,
                    help="... and this UCB_Z (standard errors of the variance added)")
    args = ap.parse_args()
    if args.evidence is not None:
        watch_module.EVIDENCE = args.evidence
    if args.ucb_z is not None:
        watch_module.UCB_Z = args.ucb_z
    global HARDEST_ONLY
    HARDEST_ONLY = args.cells == "hardest"
    for part in args.part or ("warmup", "nowarmup", "coverage", "offline", "defaults"):
        t = time.process_time()
        if part == "warmup":
            res = part_warmup(args.series)
        elif part == "nowarmup":
            res = part_nowarmup(args.series)
        elif part == "offline":
            res = part_offline(args.series)
        elif part == "defaults":
            res = part_defaults(args.series)
        else:
            res = part_coverage(args.sessions)
        res["cpu_s"] = time.process_time() - t
        save(f"watch_{part}", res)


if __name__ == "__main__":
    main()
