"""``perfcast fit`` on a large run table, as ratios to the fit of the same data aggregated.

A CSV table of 10^6 runs (``--rows``): cpu_s of two parameters, flop at 10 log-spaced values
and th at 10 values (100 configurations, 10^4 repetitions each, Gaussian noise). Each fit is
``perfcast fit TABLE --y cpu_s --x flop th`` in a fresh interpreter (its wall time from the
call of the command to its JSON, and its peak RSS); the reference is the same command on the
table of the 100 configuration means, in the same run. Targets: the 10^6-run fit under 20 s
and 500 MB peak RSS (the runs are compressed to their configurations' sufficient statistics
before any fit: :mod:`perfcast.sweep.repetitions`).

    .venv/bin/python benchmarks/bench_sweep_fit.py [--rows N]

Writes benchmarks/out/sweep_fit.json and prints a table.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _util import run_child, save  # noqa: E402

FIT = """
import contextlib, io, json, time
from perfcast.cli import main
out = io.StringIO()
t = time.perf_counter()
with contextlib.redirect_stdout(out):
    rc = main(["fit", {table!r}, "--y", "cpu_s", "--x", "flop", "th"])
wall = time.perf_counter() - t
res = json.loads(out.getvalue())
RESULT = {{"rc": rc, "fit_s": wall, "best": res["best"], "n": res["n"],
          "configurations": res["n_configurations"]}}
"""


def write_tables(folder: Path, rows: int) -> tuple[Path, Path]:
    """The run table and the table of its configuration means."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    flop, th = np.meshgrid(2.0 ** np.arange(1, 11), np.arange(1.0, 11), indexing="ij")
    flop, th = np.resize(flop.ravel(), rows), np.resize(th.ravel(), rows)
    runs = pd.DataFrame({"flop": flop.astype(int), "th": th.astype(int),
                         "cpu_s": np.round(0.01 + 2e-4 * flop * th
                                           + rng.normal(0, 0.002, rows), 6)})
    full, means = folder / "runs.csv", folder / "means.csv"
    runs.to_csv(full, index=False)
    runs.groupby(["flop", "th"], as_index=False)["cpu_s"].mean().to_csv(means, index=False)
    return full, means


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    args = ap.parse_args()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        full, means = write_tables(Path(tmp), args.rows)
        size_mb = full.stat().st_size / 2**20
        ref = run_child(FIT.format(table=str(means)))
        big = run_child(FIT.format(table=str(full)))
    result = {
        "rows": args.rows, "table_mb": size_mb, "runs": big, "means": ref,
        "ratios": {"fit_runs_over_fit_means": big["fit_s"] / ref["fit_s"],
                   "rss_runs_over_rss_means": big["peak_rss_mb"] / ref["peak_rss_mb"]},
        "targets": {"fit_under_20_s": big["fit_s"] < 20,
                    "peak_rss_under_500_mb": big["peak_rss_mb"] < 500},
        "bench_wall_s": time.perf_counter() - t0,
    }
    save("sweep_fit", result)
    rows = [
        (f"perfcast fit, {big['n']} runs ({size_mb:.0f} MB CSV)", f"{big['fit_s']:.2f} s",
         f"{result['ratios']['fit_runs_over_fit_means']:.1f}x the {ref['n']} means "
         f"({ref['fit_s']:.2f} s); best {big['best']}"),
        ("peak RSS", f"{big['peak_rss_mb']:.0f} MB",
         f"{result['ratios']['rss_runs_over_rss_means']:.2f}x the means' "
         f"({ref['peak_rss_mb']:.0f} MB)"),
        ("targets: < 20 s, < 500 MB",
         "met" if all(result["targets"].values()) else "MISSED", str(result["targets"])),
    ]
    width = max(len(r[0]) for r in rows)
    for name, value, ratio in rows:
        print(f"{name:<{width}}  {value:>10}  {ratio}")


if __name__ == "__main__":
    main()
