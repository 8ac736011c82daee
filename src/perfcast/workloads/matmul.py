"""Dense matrix products on a pool of worker processes: a workload with two knobs to sweep.

``python -m perfcast.workloads.matmul --size N --workers W --units U`` computes U products of
N x N matrices (each 2 N^3 floating-point operations) on W forked worker processes, printing one
``heartbeat <unit> <worker>`` line per finished product (Application Heartbeats style, the
per-unit progress the sweep stage parses). BLAS runs single-threaded (set before numpy loads):
parallelism comes from the workers alone (processes, so it does not hinge on whether a BLAS
build runs concurrent calls from threads of one process in parallel).
The expected shape is known: CPU time ~ a + b U N^3, wall time ~ a + b U N^3 / min(W, cores).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import numpy as np  # noqa: E402


def run(size: int, workers: int, units: int, seed: int = 0) -> float:
    """Compute ``units`` products, unit i on worker i mod ``workers``; return the seconds.

    Each worker is a forked process and prints ``heartbeat <unit> <worker>`` on stdout per
    finished product (one ``write``, shorter than ``PIPE_BUF``, so lines never interleave).

    Parameters
    ----------
    size : int
        the matrix dimension N (each product 2 N^3 floating-point operations).
    workers : int
        the worker processes W.
    units : int
        the products U.
    seed : int, default=0
        seeds the random matrices.

    Returns
    -------
    float
        the wall-clock seconds from the first fork to the last worker's exit.

    Raises
    ------
    RuntimeError
        when a worker fails.
    """
    rng = np.random.default_rng(seed)
    a = rng.random((size, size))
    b = rng.random((size, size))
    start = time.perf_counter()
    pids = []
    for wid in range(workers):
        pid = os.fork()
        if pid == 0:  # worker: its units, one heartbeat line each (atomic: < PIPE_BUF)
            code = 0
            try:
                c = np.empty((size, size))
                for unit in range(wid, units, workers):
                    np.matmul(a, b, out=c)
                    os.write(1, f"heartbeat {unit} {wid}\n".encode())
            except BaseException:
                code = 1
            os._exit(code)
        pids.append(pid)
    failed = 0
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        failed += os.waitstatus_to_exitcode(status) != 0
    if failed:
        raise RuntimeError(f"{failed} worker(s) failed")
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, required=True, help="matrix dimension N")
    p.add_argument("--workers", type=int, default=1, help="worker processes W")
    p.add_argument("--units", type=int, default=8, help="number of products U")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.size < 1 or args.workers < 1 or args.units < 0:
        p.error("size and workers must be >= 1, units >= 0")
    seconds = run(args.size, args.workers, args.units, args.seed)
    gflops = 2 * args.size**3 * args.units / seconds / 1e9 if seconds > 0 else 0.0
    print(f"done size={args.size} workers={args.workers} units={args.units} "
          f"seconds={seconds:.6f} gflops={gflops:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
