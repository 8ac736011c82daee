"""Alignment speed and memory, as ratios measured in one run.

* exact alignment of two 10^6-interval traces (target: < 2 s, < 500 MB), against a reference
  in the same run: numpy's sort of the 2*10^6 values (an O(n log n) yardstick).
* DTW (tslearn, full matrix) vs exact at 10^4 points: time and memory ratios.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _util import run_child, save  # noqa: E402

SETUP = """
import time, numpy as np
rng = np.random.default_rng(0)
def series(n_old, speedup=1.4):
    a = np.cumsum(rng.lognormal(0, 0.2, n_old))
    b = np.cumsum(rng.lognormal(0, 0.2, int(n_old / speedup)))
    return a * 1e12 / a[-1], b * 1e12 / b[-1]
"""

EXACT = SETUP + """
from perfcast.model.align import exact_path
a, b = series(1_000_000)
exact_path(a[:100], b[:100])  # JIT (cached on disk after the first run)
t = time.perf_counter(); i, j, c = exact_path(a, b); t_exact = time.perf_counter() - t
t = time.perf_counter(); np.sort(np.concatenate([a, b])); t_ref = time.perf_counter() - t
RESULT = {"n_old": len(a), "n_new": len(b), "exact_s": t_exact, "sort_ref_s": t_ref,
          "exact_over_sort": t_exact / t_ref, "pairs": len(i)}
"""

DTW = SETUP + """
from perfcast.model.align import dtw_path
a, b = series(10_000)
dtw_path(a[:50], b[:50])
t = time.perf_counter(); i, j, c = dtw_path(a, b); t_dtw = time.perf_counter() - t
RESULT = {"n_old": len(a), "n_new": len(b), "dtw_s": t_dtw, "cost": c}
"""

EXACT_10K = SETUP + """
from perfcast.model.align import exact_path
a, b = series(10_000)
exact_path(a[:50], b[:50])
t = time.perf_counter(); i, j, c = exact_path(a, b); t_exact = time.perf_counter() - t
RESULT = {"exact_s": t_exact, "cost": c}
"""


def main() -> dict:
    big = run_child(EXACT)
    dtw = run_child(DTW)
    ex = run_child(EXACT_10K)
    result = {
        "exact_1e6": big,
        "dtw_1e4": dtw,
        "exact_1e4": ex,
        "dtw_over_exact_time_1e4": dtw["dtw_s"] / ex["exact_s"],
        "dtw_over_exact_peak_rss_1e4": dtw["peak_rss_mb"] / ex["peak_rss_mb"],
        "same_cost_1e4": abs(dtw["cost"] - ex["cost"]) <= 1e-9 * dtw["cost"],
    }
    print(f"exact 1e6 x {big['n_new']}: {big['exact_s']:.3f} s "
          f"({big['exact_over_sort']:.1f}x a numpy sort of both), peak RSS "
          f"{big['peak_rss_mb']:.0f} MB  [targets: < 2 s, < 500 MB]")
    print(f"at 1e4 points: DTW {dtw['dtw_s']:.2f} s / {dtw['peak_rss_mb']:.0f} MB vs exact "
          f"{ex['exact_s'] * 1000:.1f} ms / {ex['peak_rss_mb']:.0f} MB -> DTW is "
          f"{result['dtw_over_exact_time_1e4']:.0f}x slower, "
          f"{result['dtw_over_exact_peak_rss_1e4']:.1f}x the memory; same cost: "
          f"{result['same_cost_1e4']}")
    save("align", result)
    return result


if __name__ == "__main__":
    main()
