"""Resource-sensitivity profiles on a noisy machine: do two profiles of one program agree?

A real program (``perfcast.workloads.cpuhash``, two hashing threads) is profiled for real under
cgroup CPU-quota limits (0.5 to 2 cores), ``PAIRS`` times two profiles in a row, with
``repeats`` runs per point of 1 (no repeats) and more, in two ways: ``brute`` (every level
measured: the two profiles differ by measurement noise alone) and ``binary`` (the method at the
default epsilon: noise, plus the levels it then chooses, plus interpolation). For each pair the
largest ``|S_A - S_B|`` over every grid cell is compared with epsilon; the table gives how often
the two profiles agree within epsilon on every point, per sampling, repeats and epsilon, and the
runs each profile took. Root is needed (cgroups); without it the benchmark says so and skips.

    .venv/bin/python benchmarks/bench_sensitivity_noise.py [PAIRS] [REPEATS[/BASELINE] ...]

(REPEATS runs per point; BASELINE unrestricted runs, default the schema's baseline_repeats;
NOISE_BINARY_ONLY=1 in the environment skips the brute-force profiles.)

Writes benchmarks/out/sensitivity_noise.json and prints a table.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _util import save  # noqa: E402

from perfcast.sensitivity.backends import CgroupBackend  # noqa: E402
from perfcast.sensitivity.profile import profile  # noqa: E402
from perfcast.sensitivity.settings import ProfileSettings, profile_settings  # noqa: E402
from perfcast.settings import validate  # noqa: E402

EPSILONS = (0.05, 0.1, 0.3)


def backend(repeats: int, baseline: int | None = None) -> tuple[CgroupBackend, ProfileSettings]:
    """The workload's cgroup backend at ``repeats`` runs per point and ``baseline``
    unrestricted runs (the schema's defaults otherwise), and its profile's settings."""
    section = {
        "dimensions": {"cpu_quota": {"lower": 0.5, "upper": 2.0, "step": 0.5}},
        "programs": {"cpuhash": {
            "command": "{python} -m perfcast.workloads.cpuhash --mb 512 --threads 2",
            "metric": {"name": "throughput_mb_s", "source": "stdout",
                       "pattern": r"throughput_mb_s=([0-9.]+)", "higher_is_better": True}}},
        "repeats": repeats, "cgroup": {"prefix": "pcnoise"}, "timeout_s": 120,
    }
    if baseline is not None:
        section["baseline_repeats"] = baseline
    settings = profile_settings(validate(section, "sensitivity"), "cpuhash", {}, seed=0)
    return CgroupBackend(settings), settings


def main(argv: list[str]) -> int:
    if os.geteuid() != 0:
        print("sensitivity noise: needs root (cgroup limits); skipped")
        save("sensitivity_noise", {"skipped": "needs root"})
        return 0
    pairs = int(argv[0]) if argv else 10
    specs = [(int(a.partition("/")[0]), int(a.partition("/")[2]) if "/" in a else None)
             for a in argv[1:]] or [(1, None), (3, None), (5, None)]
    result: dict = {"pairs": pairs, "epsilons": list(EPSILONS), "by_repeats": {}}
    rows = []
    samplings = ("binary",) if os.environ.get("NOISE_BINARY_ONLY") else ("brute", "binary")
    for sampling, (r, base) in [(s, spec) for s in samplings for spec in specs]:
        be, settings = backend(r, base)
        diffs, runs = [], []
        t = time.perf_counter()
        for _ in range(pairs):
            a, b = (profile(be, epsilon=settings.epsilon, sampling=sampling,
                            spare_cores=settings.spare_cores, program="cpuhash")
                    for _ in range(2))
            diffs.append(float(np.max(np.abs(a.grid - b.grid))))
            runs += [sum(m.outcome.repeats for m in p.measurements) + p.baseline.repeats
                     for p in (a, b)]
        wall = time.perf_counter() - t
        d = np.array(diffs)
        agree = {f"{e:g}": float(np.mean(d <= e)) for e in EPSILONS}
        label = f"{sampling} x{r}" + (f" base {base}" if base else "")
        result["by_repeats"][label] = {
            "max_abs_diff": diffs, "agree_within": agree,
            "runs_per_profile": float(np.mean(runs)), "wall_s": wall}
        rows.append((label, float(np.median(d)), float(d.max()), agree,
                     float(np.mean(runs)), wall))
    result["default_epsilon"] = settings.epsilon
    print(f"{pairs} pairs of profiles, cpuhash under cpu_quota 0.5..2 (binary search: eps "
          f"{settings.epsilon:g}); share of pairs whose two profiles agree within epsilon on every "
          "point")
    print("sampling x repeats (base)  median max|dS|  worst  "
          + "  ".join(f"eps {e:g}" for e in EPSILONS) + "  runs/profile  wall")
    for r, med, worst, agree, nruns, wall in rows:
        print(f"{r:>25}  {med:>14.3f}  {worst:>5.3f}  "
              + "  ".join(f"{agree[f'{e:g}']:>7.0%}" for e in EPSILONS)
              + f"  {nruns:>12.1f}  {wall:.0f} s")
    save("sensitivity_noise", result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
