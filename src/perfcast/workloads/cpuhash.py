"""cpuhash: a CPU-bound workload, SHA-256 over a fixed amount of data on several threads.

``python -m perfcast.workloads.cpuhash --mb 256 --threads 2`` hashes ``--mb`` MiB in 1 MiB
blocks, split evenly over ``--threads`` threads, and prints ``throughput_mb_s=<MiB/s>`` (higher is
better) and ``wall_s=<seconds>`` for the hashing itself. hashlib releases the GIL for buffers
above 2 KiB, so the threads run in parallel: the work needs ``--threads`` cores, its memory is a
few MiB and it does no I/O. Under a CPU quota q < threads the throughput falls to about q/threads
of the unrestricted one; with fewer cores than threads, to cores/threads.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import threading
import time


def hash_blocks(block: bytes, count: int) -> bytes:
    """Chain ``count`` SHA-256 hashes of ``block`` (each folds in the previous digest)."""
    digest = b""
    for _ in range(count):
        h = hashlib.sha256(block)
        h.update(digest)
        digest = h.digest()
    return digest


def run(mb: int, threads: int) -> float:
    """Hash ``mb`` MiB on ``threads`` threads; return the wall seconds it took."""
    block = bytes(range(256)) * 4096  # 1 MiB, deterministic
    shares = [mb // threads + (1 if i < mb % threads else 0) for i in range(threads)]
    workers = [threading.Thread(target=hash_blocks, args=(block, n)) for n in shares]
    start = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=256, help="MiB to hash in total")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)
    if args.mb < 1 or args.threads < 1:
        ap.error("--mb and --threads must be >= 1")
    wall = run(args.mb, args.threads)
    print(f"wall_s={wall:.6f}")
    print(f"throughput_mb_s={args.mb / wall:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
