"""kvstore: a key-value lookup service that genuinely warms up and cools down.

``python -m perfcast.workloads.kvstore UNITS`` serves ``UNITS`` requests (the work amount) with
``--threads`` worker threads and prints one unit reading per completed request: the time in
seconds since the previous request completed (across all workers), i.e. the reciprocal of the
service's instantaneous throughput. The sum of the readings is the time the work took.

Nothing is simulated; the phases come from real effects on the machine it runs on:

* **setup**: interpreter start, imports, and building the value corpus before any request
  (no work is consumed);
* **warm-up**: values are built lazily. A request looks up ``--lookups`` random keys; a key seen
  for the first time is materialised (a slice of the corpus compressed and decompressed with
  zlib into a fresh buffer: cold memory, cold CPU caches) and cached, later lookups only hash
  the cached value (SHA-256). The miss rate decays as ``exp(-lookups * r / keys)`` with the
  request count ``r``, so early requests are several times slower than later ones;
* **cool-down**: requests are split unevenly between the worker threads (``--imbalance``), as
  static partitioning often does; once the lighter workers finish, fewer threads serve the
  rest and the throughput drops (when the host has the cores to run the workers in parallel).
  With ``--latency-ms L``, each request also waits on a backend (a sleep of uniform(0.5, 1.5) L,
  as a network round trip would): the workers overlap those waits whatever the host's load, so
  one worker alone serves the rest at about half the rate of two even on a busy host. (The
  jitter keeps the workers from falling into lockstep, which would make the gaps between
  completions alternate.)

zlib and hashlib release the GIL on large buffers, so the workers do run in parallel.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import threading
import time
import zlib

import numpy as np


def shares(units: int, threads: int, imbalance: float) -> list[int]:
    """Requests per worker: weights ``1 + imbalance * (threads - 1 - i) / (threads - 1)``.

    Worker ``i`` gets ``floor(units * w_i / sum(w))`` requests; the first also gets what the
    rounding leaves, so the shares add up to ``units``. Worker 0 has the most: once the lighter
    workers finish, fewer serve the rest (the cool-down of the module docstring).

    Parameters
    ----------
    units : int
        the requests to share.
    threads : int
        the workers (>= 1).
    imbalance : float
        the first worker's weight is ``1 + imbalance``, the last's 1 (0: equal shares).

    Examples
    --------
    >>> shares(10, 2, 0.5), shares(10, 3, 0.0)
    ([6, 4], [4, 3, 3])
    """
    if threads == 1:
        return [units]
    w = np.array([1 + imbalance * (threads - 1 - i) / (threads - 1) for i in range(threads)])
    s = np.floor(units * w / w.sum()).astype(int)
    s[0] += units - int(s.sum())
    return [int(v) for v in s]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m perfcast.workloads.kvstore",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("units", type=int, help="requests to serve (the work amount)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--keys", type=int, default=512, help="distinct keys (cache size)")
    ap.add_argument("--lookups", type=int, default=8, help="keys looked up per request")
    ap.add_argument("--value-kib", type=int, default=16, help="size of a value")
    ap.add_argument("--imbalance", type=float, default=0.3,
                    help="extra share of work of the first worker over the last")
    ap.add_argument("--latency-ms", type=float, default=0.0,
                    help="backend wait per request, in milliseconds (a sleep)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.units < 1 or args.threads < 1 or args.keys < 1 or args.lookups < 1:
        ap.error("units, threads, keys and lookups must be positive")
    if not 0 <= args.latency_ms < 1e4:
        ap.error("--latency-ms must be in [0, 10000)")
    latency = args.latency_ms / 1000.0

    # setup: the corpus values are cut from (compressible bytes, 64 symbols)
    block = args.value_kib * 1024
    rng = np.random.default_rng(args.seed)
    corpus = rng.integers(0, 64, size=4 * 1024 * 1024 + block, dtype=np.uint8).tobytes()
    step = (len(corpus) - block) // args.keys
    cache: dict[int, bytes] = {}
    out_lock = threading.Lock()
    last = [0.0]

    def value(key: int) -> bytes:
        v = cache.get(key)
        if v is None:  # lazy initialisation: materialise the value on first use
            raw = corpus[key * step: key * step + block]
            v = zlib.decompress(zlib.compress(raw, 1))
            cache[key] = v
        return v

    def worker(i: int, n: int) -> None:
        rng = np.random.default_rng([args.seed, i])
        keys = rng.integers(0, args.keys, size=(n, args.lookups))
        waits = rng.uniform(0.5, 1.5, size=n) * latency
        for row, wait in zip(keys, waits, strict=True):
            for k in row:
                hashlib.sha256(value(int(k))).digest()
            if wait:
                time.sleep(wait)
            with out_lock:
                now = time.perf_counter()
                os.write(1, f"{now - last[0]:.9f}\n".encode())
                last[0] = now

    workers = [threading.Thread(target=worker, args=(i, n))
               for i, n in enumerate(shares(args.units, args.threads, args.imbalance)) if n > 0]
    last[0] = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return 0


if __name__ == "__main__":
    sys.exit(main())
