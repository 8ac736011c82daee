"""Stable phases of real JMH forks against their published steady-state labels.

Traini, Cortellessa, Di Pompeo & Tucci measured 586 JMH microbenchmarks of 30 Java systems,
10 forks of 3,000 iterations each, and labelled every fork (replication package:
<https://github.com/SEALABQualityGroup/steady-state>, ``data/timeseries/all/*.json`` the
iterations' times, ``data/classification/*.json`` the labels). Their label, after Barrett et
al.'s: PELT change points (``changepoint``'s mean-and-variance cost, penalty from CROPS),
then, walking back from the last segment, the steady state starts at the last change point
before which a segment's mean differs from the last segment's by at least 5 % (bootstrap CI
of the ratio, 95 %); a fork whose steady state would start after iteration 2,499 has none.

This runs what ``perfcast edm`` reports with its defaults (robust change points, ``min_effect``
0.05; where no segment holds more than half of the iterations, the last segment if it holds a
sixth of them: the ``final`` fallback, the labels' own 500 of 3,000) on every fork taken
(default: the first fork of each benchmark), and beside it Pilot's rule alone
(``--fallback none``), and compares:

* how often it says "no stable phase", on forks labelled steady and on forks labelled
  without a steady state;
* on forks labelled steady where it finds a stable phase, how often its start lies within 50
  iterations of the label's;
* the median number of change points per fork.

``JMH_DIR=/path/to/steady-state python benchmarks/bench_jmh.py [--forks N]`` (a local copy of
the replication package; its data are not shipped here, so nothing is downloaded) prints a
table and writes benchmarks/out/jmh.json.

References
----------
L. Traini, V. Cortellessa, D. Di Pompeo, M. Tucci, "Towards effective assessment of steady
state performance in Java software: are we there yet?", Empirical Software Engineering 28,
article 13, 2023.

E. Barrett, C. F. Bolz-Tereick, R. Killick, S. Mount, L. Tratt, "Virtual machine warmup blows
hot and cold", Proc. ACM Program. Lang. 1 (OOPSLA), article 52, 2017, doi:10.1145/3133876.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _util import save  # noqa: E402

from perfcast.warmup.cli_settings import command_settings  # noqa: E402
from perfcast.warmup.segments import detect_phases  # noqa: E402

#: a label's start within this many iterations of ours counts as agreeing
WITHIN = 50
def load(root: Path, forks: int):
    """(benchmark, fork, iterations, label start or -1) of the first ``forks`` forks of every
    benchmark, sorted by name."""
    series = root / "data" / "timeseries" / "all"
    labels = root / "data" / "classification"
    for path in sorted(series.glob("*.json")):
        label = json.loads((labels / path.name).read_text())
        for k, fork in enumerate(json.loads(path.read_text())[:forks]):
            yield path.stem, k, np.asarray(fork, dtype=float), int(label["steady_state_starts"][k])


def score(rows: list[dict], key: str) -> dict:
    """The counts of the module docstring for the stable phases under ``key``."""
    steady = [r for r in rows if r["label"] >= 0]
    unsteady = [r for r in rows if r["label"] < 0]
    found = [r for r in steady if r[key] is not None]
    return {
        "forks": len(rows),
        "labelled_steady": len(steady),
        "none_on_steady": sum(r[key] is None for r in steady),
        "labelled_unsteady": len(unsteady),
        "none_on_unsteady": sum(r[key] is None for r in unsteady),
        "start_within": sum(abs(r[key][0] - r["label"]) <= WITHIN for r in found),
        "found_on_steady": len(found),
        "median_change_points": float(np.median([r["change_points"] for r in rows])),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--forks", type=int, default=1, help="forks per benchmark (at most 10)")
    args = ap.parse_args()
    root = os.environ.get("JMH_DIR")
    if not root or not (Path(root) / "data" / "classification").is_dir():
        print("set JMH_DIR to a local copy of https://github.com/SEALABQualityGroup/steady-state "
              "(data/timeseries/all and data/classification); nothing to score")
        return
    edm, phases = command_settings("edm"), command_settings("phases")
    rows = []
    t = time.process_time()
    for bench, k, x, label in load(Path(root), args.forks):
        ph = detect_phases(x, edm, fallback=phases.fallback, final_share=phases.final_share)
        pilot = ph.stable if ph.rule != "final" else None  # the same change points
        rows.append({"benchmark": bench, "fork": k, "label": label,
                     "default": None if ph.stable is None else list(ph.stable),
                     "pilot": None if pilot is None else list(pilot),
                     "change_points": len(ph.change_points)})
    cpu = time.process_time() - t
    summary = {}
    for key in ("default", "pilot"):
        s = summary[key] = score(rows, key)
        print(f"{key}: {s['forks']} forks; labelled steady {s['labelled_steady']}, 'no stable "
              f"phase' on {s['none_on_steady']}; labelled without steady state "
              f"{s['labelled_unsteady']}, 'no stable phase' on {s['none_on_unsteady']}; start "
              f"within {WITHIN} iterations of the label on {s['start_within']} of "
              f"{s['found_on_steady']}")
    print(f"median change points per fork {summary['default']['median_change_points']:.0f}; "
          f"{cpu:.0f} s CPU")
    save("jmh", {"summary": summary, "cpu_s": cpu, "forks": rows})


if __name__ == "__main__":
    main()
