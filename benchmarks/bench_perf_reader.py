"""Peak memory of reading a large perf ``-I -x,`` file, as a ratio to the file's size.

A synthetic file of a long run (10 events, 1 ms intervals, ``--intervals`` of them; 360 000 give
181 MB) is written, then one group run is read as post-processing reads it
(:func:`perfcast.counters.postprocess.read_group`) in a fresh interpreter; the same is done for
an empty run (the interpreter and imports alone) so the reader's own memory is the difference.
Target: the reader streams, its peak well under 1 GB for a file of about 200 MB.

``python benchmarks/bench_perf_reader.py [--intervals N] [--dir D]`` prints a table and writes
benchmarks/out/perf_reader.json.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _util import run_child, save  # noqa: E402

EVENTS = ["instructions", "cycles"] + [f"ev{k}" for k in range(8)]


def write_run(path: Path, intervals: int) -> None:
    with open(path, "w") as fh:
        fh.write("# started on Mon Nov 24 07:00:00 2026\n\n")
        for i in range(1, intervals + 1):
            for k, e in enumerate(EVENTS):
                v = 100_000_000 + (i * 7919 + k * 104729) % 1_000_003
                fh.write(f"{i * 0.001:16.9f},{v},,{e},1000000,100.00,,\n")


READ = """
import time
from perfcast.counters.postprocess import read_group
from perfcast.counters.settings import BaseEvents, ReadSettings
t = time.perf_counter()
wide = read_group({path!r}, BaseEvents("instructions", "cycles"), {events!r},
                  ReadSettings(separator="auto", select=()))
RESULT = {{"rows": len(wide), "seconds": time.perf_counter() - t}}
"""


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--intervals", type=int, default=360_000, help="intervals (360000: 181 MB)")
    ap.add_argument("--dir", default=None, help="where the file is written (a temporary dir)")
    args, _ = ap.parse_known_args(argv)
    with tempfile.TemporaryDirectory(dir=args.dir) as d:
        big, small = Path(d) / "big.csv", Path(d) / "small.csv"
        write_run(big, args.intervals)
        write_run(small, 10)
        t = time.perf_counter()
        base = run_child(READ.format(path=str(small), events=tuple(EVENTS[2:])))
        res = run_child(READ.format(path=str(big), events=tuple(EVENTS[2:])))
        size_mb = big.stat().st_size / 2**20
    own = res["peak_rss_mb"] - base["peak_rss_mb"]
    result = {"file_mb": size_mb, "intervals": res["rows"], "peak_rss_mb": res["peak_rss_mb"],
              "imports_rss_mb": base["peak_rss_mb"], "reader_mb": own,
              "reader_over_file": own / size_mb, "read_s": res["seconds"],
              "total_s": time.perf_counter() - t}
    print(f"{'file MB':>8} {'peak RSS MB':>12} {'imports MB':>11} {'reader MB':>10} "
          f"{'reader/file':>12} {'read s':>7}")
    print(f"{size_mb:8.0f} {res['peak_rss_mb']:12.0f} {base['peak_rss_mb']:11.0f} {own:10.0f} "
          f"{own / size_mb:12.2f} {res['seconds']:7.1f}")
    save("perf_reader", result)
    return result


if __name__ == "__main__":
    main()
