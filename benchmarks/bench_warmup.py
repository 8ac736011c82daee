"""Change-point detection speed and accuracy, robust mode against Pilot's EDM_percent.

* time of both modes on the same series (a 3-sigma warm-up of 40 readings, a cool-down of 2%)
  at sizes where Pilot's O(n^2 log n) finishes (10^3 .. 10^4), the robust mode alone at 10^5
  and 10^6 (targets: < 5 s and < 60 s), each also as a ratio to a numpy sort of the same data
  measured in the same run (an O(n log n) yardstick);
* false alarms on i.i.d. noise (target: none in >= 95% of series) and the location of a step at
  index 40 (target: within 2 samples), both modes.

* calibration under dependence: the share of AR(1) series without change (phi 0, 0.5, 0.9;
  n 60, 200, 1000, 10^4) given a change point at alpha 0.01, no effect filter (target: at most
  5 %); power: a tenfold change of spread at mid-series located within 15 readings, a 1-sd
  shift within 10, a change of level and spread reported once within 10 (n = 600; targets:
  at least 90 %).

* ``perfcast watch``: 10^6 readings streamed through a pipe with a target never reached
  (target: < 10 s), and where it stops on a series with a 150-reading warm-up, against the
  earliest point at which an offline analysis of the same readings would stop.

``python benchmarks/bench_warmup.py [--quick]`` (``--quick`` skips Pilot at 10^4) prints a table
and writes benchmarks/out/warmup.json.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _util import ar1, run_child, save  # noqa: E402

from perfcast.warmup.edm_pilot import edm_percent  # noqa: E402
from perfcast.warmup.edm_robust import edm_robust  # noqa: E402


def series(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    x[:40] += 3.0
    x[n - n // 50:] += 2.0
    return x


def timed(fn, x) -> tuple[float, list[int]]:
    t = time.perf_counter()
    out = fn(x)
    return time.perf_counter() - t, out


def sort_time(x: np.ndarray) -> float:
    t = time.perf_counter()
    np.sort(x)
    return time.perf_counter() - t


BIG = """
import time, numpy as np
from perfcast.warmup.edm_robust import edm_robust
rng = np.random.default_rng(0)
x = rng.normal(size=1_000_000); x[:40] += 3; x[-20_000:] += 2
edm_robust(x[:1000])
t = time.perf_counter(); cps = edm_robust(x); t_rob = time.perf_counter() - t
t = time.perf_counter(); np.sort(x); t_sort = time.perf_counter() - t
RESULT = {"n": len(x), "robust_s": t_rob, "sort_s": t_sort, "change_points": cps}
"""


def calibration(series: int = 500) -> dict:
    """False-alarm rates under AR(1) dependence and the power for level/spread changes."""
    rng = np.random.default_rng(11)
    rates = {}
    for phi in (0.0, 0.5, 0.9):
        for n in (60, 200, 1_000, 10_000):
            count = series if n < 10_000 else series // 4
            hits = sum(bool(edm_robust(ar1(rng, n, phi), alpha=0.01)) for _ in range(count))
            rates[f"phi={phi},n={n}"] = {"phi": phi, "n": n, "series": count,
                                         "with_change_point": hits / count}
    power = {}
    cases = {
        "spread_x10_within_15": (lambda x: np.r_[x[:300], x[300:] * 10], 15, False),
        "mean_1sd_within_10": (lambda x: np.r_[x[:300], x[300:] + 1], 10, False),
        "level_and_spread_once_within_10": (lambda x: np.r_[x[:300], x[300:] * 5 + 3], 10, True),
    }
    for name, (make, tol, once) in cases.items():
        ok = 0
        for _ in range(series):
            cps = edm_robust(100 + make(rng.normal(size=600)))
            near = min((abs(c - 300) for c in cps), default=10**9) <= tol
            ok += near and (len(cps) == 1 or not once)
        power[name] = ok / series
    return {"false_alarms": rates, "power": power, "series": series}


def watch_bench() -> dict:
    """Wall time of ``perfcast watch`` on 10^6 piped readings; stop point against offline."""
    import subprocess
    import tempfile

    from perfcast.warmup.cli_settings import command_settings
    from perfcast.warmup.watch import assess, watch

    exe = Path(sys.executable).with_name("perfcast")
    rng = np.random.default_rng(12)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as fh:
        np.savetxt(fh, 1.0 + 0.05 * rng.normal(size=1_000_000), fmt="%.6f")
        path = fh.name
    import resource

    with open(path) as stdin:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        proc = subprocess.run([str(exe), "watch", "-", "--target", "1e-6"], stdin=stdin,
                              capture_output=True, text=True)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    Path(path).unlink()
    lines = proc.stdout.splitlines()
    streamed = {"readings": 1_000_000, "wall_s": wall, "cpu_s": cpu, "analyses": len(lines),
                "exit_status": proc.returncode, "load_average_1min": os.getloadavg()[0]}

    settings = command_settings("watch", {"target_relative_width": 0.005})
    stops = []
    for seed in range(5):
        r = np.random.default_rng(seed)
        x = 1.0 + 0.05 * r.normal(size=20_000)
        x[:150] += 0.8
        live = list(watch(x, settings))[-1]
        first = next((n for n in range(30, live.n + 1) if assess(x[:n], settings).stop), None)
        stops.append({"seed": seed, "watch_stop": live.n, "offline_first_stop": first,
                      "watch_stable_begin": live.stable_begin,
                      "overshoot": None if first is None else live.n / first - 1})
    return {"streamed": streamed, "stop_points": stops}


def main(quick: bool = False) -> dict:
    edm_percent(series(100))  # JIT (cached on disk after the first run)
    rows = []
    for n in (1_000, 3_000, 10_000, 100_000):
        x = series(n)
        t_rob, c_rob = timed(edm_robust, x)
        row = {"n": n, "robust_s": t_rob, "robust_cps": c_rob, "sort_s": sort_time(x)}
        if n <= 3_000 or (n == 10_000 and not quick):
            t_pil, c_pil = timed(edm_percent, x)
            row.update(pilot_s=t_pil, pilot_cps=c_pil, pilot_over_robust=t_pil / t_rob)
        rows.append(row)
    big = run_child(BIG)
    rows.append({"n": big["n"], "robust_s": big["robust_s"], "robust_cps": big["change_points"],
                 "sort_s": big["sort_s"], "peak_rss_mb": big["peak_rss_mb"]})

    rng = np.random.default_rng(1)
    alarms = {}
    for n, count in ((100, 300), (1_000, 200), (10_000, 50)):
        xs = [rng.normal(size=n) for _ in range(count)]
        alarms[n] = {"series": count,
                     "robust_clean": float(np.mean([not edm_robust(x) for x in xs]))}
        if n <= 1_000:
            alarms[n]["pilot_clean"] = float(np.mean([not edm_percent(x) for x in xs]))
    errs_r, errs_p = [], []
    for _ in range(100):
        x = rng.normal(size=1_000)
        x[:40] += 3.0
        errs_r.append(min((abs(c - 40) for c in edm_robust(x)), default=10**6))
        errs_p.append(min((abs(c - 40) for c in edm_percent(x)), default=10**6))
    step = {"series": 100, "n": 1000, "shift_sd": 3.0,
            "robust_within_2": float(np.mean(np.array(errs_r) <= 2)),
            "pilot_within_2": float(np.mean(np.array(errs_p) <= 2)),
            "robust_median_error": float(np.median(errs_r)),
            "pilot_median_error": float(np.median(errs_p))}

    print(f"{'n':>9} {'robust s':>9} {'/sort':>7} {'pilot s':>9} {'pilot/robust':>13}")
    for r in rows:
        pil = f"{r['pilot_s']:9.3f} {r['pilot_over_robust']:13.0f}" if "pilot_s" in r else \
            f"{'-':>9} {'-':>13}"
        print(f"{r['n']:>9} {r['robust_s']:9.3f} {r['robust_s'] / r['sort_s']:7.0f} {pil}")
    print("targets: robust 1e6 < 5 s; peak RSS at 1e6: "
          f"{rows[-1]['peak_rss_mb']:.0f} MB")
    for n, a in alarms.items():
        pil = f", pilot {a['pilot_clean']:.1%}" if "pilot_clean" in a else ""
        print(f"i.i.d. noise n={n}: no change point in robust {a['robust_clean']:.1%}{pil} of "
              f"{a['series']} series  [target >= 95%]")
    print(f"step at 40 (n=1000, 3 sd): within 2 samples robust {step['robust_within_2']:.0%}, "
          f"pilot {step['pilot_within_2']:.0%} (median error {step['robust_median_error']:.0f} "
          f"vs {step['pilot_median_error']:.0f})")
    cal = calibration(200 if quick else 500)
    print("\nshare of AR(1) series without change given a change point (alpha 0.01, "
          "min_effect 0) [target <= 5 %]")
    print(f"{'phi':>5} " + " ".join(f"{'n=' + str(n):>9}" for n in (60, 200, 1000, 10000)))
    for phi in (0.0, 0.5, 0.9):
        cells = [cal["false_alarms"][f"phi={phi},n={n}"]["with_change_point"]
                 for n in (60, 200, 1_000, 10_000)]
        print(f"{phi:>5} " + " ".join(f"{c:>9.1%}" for c in cells))
    for name, share in cal["power"].items():
        print(f"{name}: {share:.0%} of {cal['series']} series (n=600) [target >= 90 %]")
    wb = watch_bench()
    st = wb["streamed"]
    print(f"\nperfcast watch: {st['readings']} piped readings in {st['wall_s']:.2f} s "
          f"({st['cpu_s']:.2f} s CPU; load average {st['load_average_1min']:.1f}), "
          f"{st['analyses']} analyses [target < 10 s]")
    for r in wb["stop_points"]:
        print(f"  warm-up 150, target 0.5 %: watch stops at n={r['watch_stop']} (stable from "
              f"{r['watch_stable_begin']}), offline first at n={r['offline_first_stop']}")
    result = {"timings": rows, "iid_no_change_point": {str(k): v for k, v in alarms.items()},
              "step_at_40": step, "calibration": cal, "watch": wb}
    save("warmup", result)
    return result


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
