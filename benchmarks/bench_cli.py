"""Start-up time of the command line, as ratios to an empty interpreter measured in the same run.

* ``perfcast --version``, ``perfcast --help`` and ``perfcast <cmd> --help`` for every
  sub-command (the console script of this interpreter's environment, else ``python -m
  perfcast``), each the median wall time of N fresh processes, against ``python -c pass``
  (target: each < 0.3 s; parsing imports no numpy, pandas, scipy or numba, which
  tests/unit/test_cli_startup.py holds; the help texts read their defaults from the schemas).

``python benchmarks/bench_cli.py [--runs N]`` (default 15) prints a table and writes
benchmarks/out/cli.json.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _util import save  # noqa: E402


def perfcast_command() -> list[str]:
    script = Path(sys.executable).parent / "perfcast"
    return [str(script)] if script.exists() else [sys.executable, "-m", "perfcast"]


def median_wall(cmd: list[str], runs: int) -> tuple[float, list[float]]:
    subprocess.run(cmd, capture_output=True, check=True)  # warm the page cache and .pyc files
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times), times


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15, help="processes timed per command (15)")
    # run by ``python -m benchmarks`` (runpy) the argv is that of the suite: ignore what is not ours
    args, _ = ap.parse_known_args(argv)

    cli = perfcast_command()
    cases = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "perfcast --version": [*cli, "--version"],
        "perfcast --help": [*cli, "--help"],
    }
    from perfcast.cli import build_parser

    action = next(a for a in build_parser()._actions if a.dest == "command")
    cases.update({f"perfcast {name} --help": [*cli, name, "--help"]
                  for name in sorted(action.choices)})
    rows = {}
    for name, cmd in cases.items():
        med, times = median_wall(cmd, args.runs)
        rows[name] = {"median_s": med, "min_s": min(times), "max_s": max(times)}
    base = rows["python -c pass"]["median_s"]
    for row in rows.values():
        row["over_python"] = row["median_s"] / base

    print(f"{'command':<34} {'median s':>9} {'min s':>7} {'max s':>7} {'x python':>9}")
    for name, row in rows.items():
        print(f"{name:<34} {row['median_s']:>9.3f} {row['min_s']:>7.3f} {row['max_s']:>7.3f} "
              f"{row['over_python']:>9.1f}")
    slowest = max((n for n in rows if n != "python -c pass"), key=lambda n: rows[n]["median_s"])
    slowest_s = rows[slowest]["median_s"]
    print(f"slowest: {slowest} {slowest_s:.3f} s  [target: < 0.3 s each] "
          f"({'met' if slowest_s < 0.3 else 'NOT met'})")
    result = {"runs": args.runs, "command": cli, "python": sys.version.split()[0],
              "commands": rows, "target_s": 0.3, "slowest": slowest,
              "target_met": slowest_s < 0.3}
    save("cli", result)
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
