"""Two changes in a short series: how often each detector finds both.

Series of 200 i.i.d. normal readings (sd 1) whose level rises by 1.5 sd at reading n/3 and
falls by 1 sd at 2n/3 (so the last third sits 0.5 sd above the first): a change is found when
a change point lies within ``TOLERANCE`` readings of it. Beside it, the share of series
*without* change (same length) that get any change point (false alarms; goal <= 2 %).

Detectors: the robust one (:func:`perfcast.warmup.edm_robust.edm_robust`, alpha 0.01,
``min_effect`` 0: statistical changes only) and, where ruptures is installed (a
benchmark-only extra: ``pip install -e '.[bench]'``), binary segmentation and PELT with a
change-of-mean cost and the penalty ``3 log n`` times the noise variance (estimated from
successive differences, robust to the changes: ``(1.4826 MAD(diff))^2 / 2``), MBIC's leading
term.

``python benchmarks/bench_two_changes.py [--series N]`` (default 500) prints a table and
writes benchmarks/out/two_changes.json.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _util import save  # noqa: E402

from perfcast.warmup.edm_robust import edm_robust  # noqa: E402

N = 200
TOLERANCE = 10


def series(rng: np.random.Generator, changes: bool) -> np.ndarray:
    x = rng.normal(size=N)
    if changes:
        x[N // 3:] += 1.5
        x[2 * N // 3:] -= 1.0
    return x


def detectors() -> dict:
    out = {"robust (alpha 0.01, min_effect 0)":
           lambda x: edm_robust(x, alpha=0.01, min_effect=0.0)}
    try:
        import ruptures
    except ImportError:
        print("ruptures is not installed (pip install -e '.[bench]'): binary segmentation and "
              "PELT are not measured")
        return out

    def run(algo):
        def fn(x: np.ndarray) -> list[int]:
            d = np.diff(x)
            sigma2 = (1.4826 * np.median(np.abs(d - np.median(d)))) ** 2 / 2
            pen = 3.0 * np.log(x.shape[0]) * sigma2
            bkps = algo(model="l2", min_size=2, jump=1).fit(x.reshape(-1, 1)).predict(pen=pen)
            return [int(b) for b in bkps if b < x.shape[0]]
        return fn

    out["binary segmentation (ruptures, l2, 3 log n sigma^2)"] = run(ruptures.Binseg)
    out["PELT (ruptures, l2, 3 log n sigma^2)"] = run(ruptures.Pelt)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=int, default=500)
    args = ap.parse_args()
    rows = []
    for name, fn in detectors().items():
        t = time.process_time()
        rng = np.random.default_rng(200)
        both = extra = 0
        for _ in range(args.series):
            cps = fn(series(rng, True))
            hit = [any(abs(c - true) <= TOLERANCE for c in cps) for true in (N // 3, 2 * N // 3)]
            both += all(hit)
            extra += len(cps) > 2
        rng = np.random.default_rng(201)
        alarms = sum(bool(fn(series(rng, False))) for _ in range(args.series))
        rows.append({"detector": name, "series": args.series, "both_found": both / args.series,
                     "more_than_two": extra / args.series,
                     "false_alarms_without_change": alarms / args.series,
                     "cpu_s": time.process_time() - t})
        r = rows[-1]
        print(f"{name:>52}: both found {r['both_found']:6.1%}, more than two "
              f"{r['more_than_two']:5.1%}; false alarms without change "
              f"{r['false_alarms_without_change']:5.1%}", flush=True)
    save("two_changes", {"n": N, "tolerance": TOLERANCE, "rows": rows})


if __name__ == "__main__":
    main()
