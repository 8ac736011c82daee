"""Subsession analysis speed: ``perfcast ci``'s search for the subsession size ``q``.

A series that still holds its warm-up (10 % of the readings at +3 sd) needs a large ``q``
(82,049 at 10^6 readings), where trying ``q = 1, 2, ...`` one at a time costs ``O(n q)``. The
search from one prefix sum costs ``O(n log q)``; this prints its time and the whole
:func:`perfcast.warmup.ci.mean_ci`'s at 10^4 .. 10^6 readings, each also as a ratio to a numpy
sort and a numpy sum of the same array measured in the same run (target: 10^6 readings in
< 2 s of compute).

``python benchmarks/bench_subsession.py`` prints a table and writes
benchmarks/out/subsession.json.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _util import save  # noqa: E402

from perfcast.warmup.ci import mean_ci  # noqa: E402
from perfcast.warmup.subsession import subsession_size  # noqa: E402


def best_of(fn, repeat: int = 3) -> float:
    """Shortest of ``repeat`` process-CPU times of ``fn()`` (least disturbed by other load)."""
    times = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times)


def main() -> dict:
    rng = np.random.default_rng(3)
    rows = []
    for n in (10_000, 100_000, 1_000_000):
        x = 1.0 + 0.05 * rng.normal(size=n)
        x[: n // 10] += 0.15
        q, r = subsession_size(x, 0.2)
        rows.append({
            "n": n, "q": q, "r": r,
            "search_s": best_of(lambda x=x: subsession_size(x, 0.2)),
            "mean_ci_s": best_of(lambda x=x: mean_ci(x, ac_limit=0.2, confidence=0.95,
                                                     target_relative_width=0.1)),
            "sort_s": best_of(lambda x=x: np.sort(x)),
            "sum_s": best_of(lambda x=x: np.sum(x)),
        })
    print(f"{'n':>9} {'q':>7} {'search s':>9} {'mean_ci s':>10} {'/sort':>7} {'/sum':>7}")
    for r in rows:
        print(f"{r['n']:>9} {r['q']:>7} {r['search_s']:9.3f} {r['mean_ci_s']:10.3f} "
              f"{r['mean_ci_s'] / r['sort_s']:7.0f} {r['mean_ci_s'] / r['sum_s']:7.0f}")
    print("target: mean_ci on 10^6 readings < 2 s of CPU")
    result = {"rows": rows}
    save("subsession", result)
    return result


if __name__ == "__main__":
    main()
