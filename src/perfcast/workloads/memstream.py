"""memstream: a memory-bound workload, the STREAM triad over an in-memory working set.

``python -m perfcast.workloads.memstream --mb 48 --passes 40`` allocates three float64 arrays of
``--mb`` MiB together, touches every page, then runs ``--passes`` of the triad
``a = b + s * c`` (in place, no temporaries) and prints ``bandwidth_gb_s=<GB/s>`` and
``wall_s=<seconds>`` of the passes. The bandwidth counts 24 bytes per element and pass, as STREAM
does (numpy's two in-place passes move more, so it understates what the core gets); the working
set is far larger than the caches, so the run is bound by memory bandwidth.

The working set must be resident: under a memory limit below it (plus the interpreter's ~30
MiB) the kernel's OOM killer ends the run, which profiling records as a failed run with
sensitivity 0 - the behaviour of the NPB programs in the paper's data, whose low-memory runs
failed. It is single-threaded (BLAS thread pools are switched off before numpy loads).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # no idle BLAS threads: the workload is single-threaded

import numpy as np  # noqa: E402


def run(mb: int, passes: int) -> tuple[float, int]:
    """Allocate ``mb`` MiB over three arrays and run the triad; (seconds, elements)."""
    n = max(1, (mb * 1024 * 1024) // (3 * 8))
    a = np.empty(n)
    b = np.full(n, 1.0)
    c = np.full(n, 2.0)
    a.fill(0.0)  # first touch: every page resident before timing
    start = time.perf_counter()
    for _ in range(passes):
        np.multiply(c, 3.0, out=a)
        np.add(a, b, out=a)
    wall = time.perf_counter() - start
    if not np.isclose(a[n // 2], 7.0):  # b + 3 c
        raise RuntimeError("triad produced a wrong value")
    return wall, n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=48, help="working set in MiB (three arrays)")
    ap.add_argument("--passes", type=int, default=40)
    args = ap.parse_args(argv)
    if args.mb < 1 or args.passes < 1:
        ap.error("--mb and --passes must be >= 1")
    wall, n = run(args.mb, args.passes)
    print(f"wall_s={wall:.6f}")
    print(f"bandwidth_gb_s={24 * n * args.passes / wall / 1e9:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
