"""Run a command with the CPU saturated: the check that no test depends on the host's load.

    python tests/load.py [--workers N] -- COMMAND [ARG ...]

starts N busy-loop processes (default: twice the CPUs this process may run on), runs COMMAND,
stops the loops and exits with COMMAND's status. ``make test-loaded`` runs the whole suite this
way; the suite must pass as it does on an idle host, with no test skipping itself because the
host is busy. The loops are plain Python (no stress-ng needed) and run at the same priority as
the tests, as another user's jobs on a shared CI machine would.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import time


def _spin() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    x = 0
    while True:  # pure CPU: no I/O, no memory traffic to speak of
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2 * len(os.sched_getaffinity(0)),
                    help="busy-loop processes (default: twice the usable CPUs)")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARG ...]")
    args = ap.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command or args.workers < 1:
        ap.error("give --workers >= 1 and a command after --")
    ctx = mp.get_context("spawn")
    loops = [ctx.Process(target=_spin, daemon=True) for _ in range(args.workers)]
    for p in loops:
        p.start()
    t0 = time.monotonic()
    print(f"tests/load.py: {args.workers} busy loops on {os.cpu_count()} CPUs; running "
          f"{' '.join(command)}", file=sys.stderr, flush=True)
    try:
        return subprocess.call(command)
    finally:
        for p in loops:
            p.terminate()
        for p in loops:
            p.join(timeout=10)
        print(f"tests/load.py: {time.monotonic() - t0:.0f} s under load", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
