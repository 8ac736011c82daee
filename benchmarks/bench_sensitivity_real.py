"""The fast profiling method held against real programs it was not tuned on.

Three real programs of different kinds, each measured on a dense CPU x memory grid (CPU quota
0.5-2.0 cores in steps of 0.25 x memory 32-128 MiB in steps of 16: 7 x 7 cells, ``REPEATS``
runs a cell, default 2, their mean; 10 unrestricted runs, their median) with perfcast's cgroup
backend, and profiled by the workflow's campaign with the default configuration's settings
(epsilon 0.3, binary sampling, one run a point, ten unrestricted runs, the default dimensions:
CPU quota, memory, disk read and write bandwidth; the ceiling checked and the failure boundary
bisected):

- ``xz``: ``xz -6 -T1`` compressing a 2.5 MB text (CPU-bound, one thread);
- ``sort``: an external ``sort --parallel=2 -S 32M`` of a 24 MB file (spills temporary files
  under memory pressure);
- ``pydict``: a Python interpreter building a 500,000-entry dict (memory-hungry: killed under
  the lower memory limits).

The dense grid holds the disk unrestricted, so the profile is read at its top disk levels. Per
program the table gives the mean absolute error of S over the 49 cells, the runs each took, and
the noise floor (the mean ``|S - 1|`` of the profile's unrestricted runs against their median:
the error run-to-run noise alone gives one run's S), and the dense grid's own noise (each run's
S against its cell's mean). Inputs are small so that it fits a shared
machine; its timings are noisy. Root is needed (cgroups); without it the benchmark says so and
skips.

    .venv/bin/python benchmarks/bench_sensitivity_real.py [REPEATS] [PROGRAM ...]

Writes benchmarks/out/sensitivity_real.json (``sensitivity_real_PROGRAM.json`` when programs
are named, so that several can run side by side on a host with the cores for it) and prints a
Markdown table.
"""

from __future__ import annotations

import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _util import save  # noqa: E402

from perfcast.sensitivity.backends import CgroupBackend  # noqa: E402
from perfcast.sensitivity.profile import profile  # noqa: E402
from perfcast.sensitivity.settings import profile_settings  # noqa: E402
from perfcast.settings import validate  # noqa: E402

GRID = {"cpu_quota": {"lower": 0.5, "upper": 2.0, "step": 0.25},
        "memory_mb": {"lower": 32, "upper": 128, "step": 16}}
PROGRAMS = {
    "xz": {"command": "xz -6 -T1 -c text.txt > /dev/null",
           "description": "xz -6 -T1 compressing 2.5 MB of text"},
    "sort": {"command": "sort --parallel=2 -S 32M -T spill -o /dev/null lines.txt",
             "description": "external sort of 24 MB, 32 MiB buffer, temporary files in spill/"},
    "pydict": {"command": "{python} -c 'd = dict((str(i), i * i) for i in range(500000))'",
               "description": "a Python interpreter building a 500,000-entry dict"},
}


def make_inputs(where: Path, seed: int = 7) -> None:
    """The programs' inputs: 2.5 MB of words for xz, 24 MB of keyed lines for sort."""
    r = random.Random(seed)
    words = ["".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(3, 9)))
             for _ in range(5000)]
    with open(where / "text.txt", "w") as f:
        n = 0
        while n < 2_500_000:
            line = " ".join(r.choice(words) for _ in range(12)) + "\n"
            n += f.write(line)
    with open(where / "lines.txt", "w") as f:
        n = 0
        while n < 24_000_000:
            n += f.write(f"{r.randrange(10**12):012d} {r.choice(words)}\n")
    (where / "spill").mkdir()


def section(default: dict, where: Path, dense: bool, repeats: int, tag: str = "") -> dict:
    """The sensitivity section: the default configuration's, with the three programs (run in
    ``where``); ``dense``: every CPU x memory level, ``repeats`` runs a cell, no disk limit."""
    s = {k: v for k, v in default.items() if k not in ("programs", "replay")}
    s["programs"] = {n: {**p, "cwd": str(where)} for n, p in PROGRAMS.items()}
    s["cgroup"] = {**s["cgroup"], "target_path": str(where), "prefix": "pcreal" + tag}
    if dense:
        s["dimensions"] = dict(GRID)
        s["repeats"] = repeats  # the unrestricted runs: the default's 10, as the profile's
        s["sampling"] = "brute"
    return validate(s, "sensitivity")


def main(argv: list[str]) -> int:
    if os.geteuid() != 0:
        print("sensitivity real programs: needs root (cgroup limits); skipped")
        save("sensitivity_real", {"skipped": "needs root"})
        return 0
    import yaml

    # REPEATS; under ``python -m benchmarks NAME`` argv holds the name filter instead
    repeats = int(argv[0]) if argv and argv[0].isdigit() else 2
    chosen = [a for a in argv if a in PROGRAMS] or list(PROGRAMS)
    tag = "" if chosen == list(PROGRAMS) else "_" + "_".join(chosen)
    root = Path(__file__).resolve().parents[1]
    default = validate(yaml.safe_load((root / "config" / "config.yaml").read_text()),
                       "config")["sensitivity"]
    where = Path(tempfile.mkdtemp(prefix="perfcast-real-"))
    rows, result = [], {"repeats_dense": repeats, "load_before": os.getloadavg(), "programs": {}}
    try:
        make_inputs(where)
        dense_section = section(default, where, True, repeats, tag)
        fast_section = section(default, where, False, repeats, tag)
        for name in chosen:
            t0 = time.perf_counter()
            st = profile_settings(dense_section, name, {}, seed=0)
            be = CgroupBackend(st)
            be.probe()
            dense = profile(be, epsilon=st.epsilon, sampling="brute", spare_cores=0,
                            program=name, ranges=tuple(
                                r.__class__(r.dim, True, len(r.dim) - 1, None)
                                for r in be.model.ceilings({}, 0)))
            t1 = time.perf_counter()
            fs = profile_settings(fast_section, name, {}, seed=0)
            fb = CgroupBackend(fs)
            fast = profile(fb, epsilon=fs.epsilon, sampling=fs.sampling,
                           spare_cores=fs.spare_cores, program=name,
                           verify_ceiling=fs.verify_ceiling, bisect_failed=fs.bisect_failures)
            t2 = time.perf_counter()
            # the fast grid where the dense one was measured: disk at its top level
            sl = tuple(slice(None) if d.name in GRID else len(d) - 1 for d in fast.model.dims)
            predicted = fast.grid[sl]
            truth = dense.grid
            err = np.abs(predicted - truth)
            s = fast.summary()
            # the dense grid's own noise: each run's S against its cell's mean, averaged
            dev = [abs(dense.baseline.performance / t - dense.baseline.performance
                       / m.outcome.performance)
                   for m in dense.measurements if m.outcome.ok for t in m.outcome.runs]
            row = {
                "program": name, "mae": float(err.mean()), "max_abs_error": float(err.max()),
                "runs_fast": s["steps"]["runs_total"] - 1 + fast.baseline.repeats,
                "runs_dense": len(dense.measurements) * repeats + dense.baseline.repeats,
                "dense_baseline_s_spread": [dense.spread["s_low"], dense.spread["s_high"]],
                "noise_floor": s["baseline"]["noise_floor"],
                "dense_run_noise": float(np.mean(dev)) if dev else float("nan"),
                "load_average": os.getloadavg()[0],
                "baseline_s_spread": [s["baseline"]["s_low"], s["baseline"]["s_high"]],
                "ceilings": {n: d["ceiling"] for n, d in s["dimensions"].items()},
                "ceiling_check": s["ceiling_check"], "warnings": s["warnings"],
                "failed_cells_dense": int((truth == 0).sum()),
                "wall_s_dense": round(t1 - t0, 1), "wall_s_fast": round(t2 - t1, 1),
            }
            result["programs"][name] = {**row, "truth": truth.tolist(),
                                        "predicted": predicted.tolist()}
            rows.append(row)
            print(f"{name}: mae {row['mae']:.3f} ({row['runs_fast']} runs vs "
                  f"{row['runs_dense']}), noise floor {row['noise_floor']:.3f}", flush=True)
    finally:
        shutil.rmtree(where, ignore_errors=True)
    result["load_after"] = os.getloadavg()
    save("sensitivity_real" + tag, result)
    print("\n| program | mean abs. error | max abs. error | runs (fast) | runs (dense) "
          "| noise floor | dense run noise | ceilings | warnings |\n"
          "|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['program']} | {r['mae']:.3f} | {r['max_abs_error']:.3f} | "
              f"{r['runs_fast']} | {r['runs_dense']} | {r['noise_floor']:.3f} | "
              f"{r['dense_run_noise']:.3f} | {r['ceilings']} | {len(r['warnings'])} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
