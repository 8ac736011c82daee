"""Sweep stage costs and measurement accuracy, as ratios measured in one run.

(a) Measurement overhead: one run of ``true`` through the sweep runner (shim + run_measured),
    against ``run_measured("true")`` alone; and the shim's start-up outside the measured wall.
(b) Max-RSS accuracy: ``ru_maxrss`` of ``true`` spawned from a 300 MB parent, by
    ``run_measured`` directly (reports the parent's image) and through the shim (the program's
    own few MB), against the truth: the same run through the shim from a small parent.
(c) Model fitting: every candidate (polynomials up to order 4 per parameter, the four forms)
    with cross-validation over configurations, for a campaign of 3 parameters x 8 values x 3
    iterations (1536 runs); reference: one statsmodels OLS fit of the quadratic form.

    .venv/bin/python benchmarks/bench_sweep.py

Writes benchmarks/out/sweep.json and prints a table.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _util import run_child, save  # noqa: E402

OVERHEAD = """
import time, statistics
from perfcast.process import run_measured
from perfcast.sweep.campaign import Sensors
from perfcast.sweep.job_settings import RunSettings
from perfcast.sweep.runner import run_point
p = RunSettings(campaign="b", point="x~1", iteration=1, parameters={"x": 1}, command="true",
                before="", after="", env={}, timeout_s=30, fail_fast=False,
                sensors=Sensors(perf_events=(), rapl=False, custom={}, heartbeat=None),
                stop_marker="STOPPED.json", failed_record="failed.json")
direct, runner, inner = [], [], []
for _ in range(15):
    t = time.perf_counter(); run_measured("true"); direct.append(time.perf_counter() - t)
    t = time.perf_counter(); r = run_point(p); runner.append(time.perf_counter() - t)
    inner.append(r["wall_s"])
RESULT = {"direct_s": statistics.median(direct), "runner_s": statistics.median(runner),
          "measured_wall_s": statistics.median(inner)}
"""

RSS = """
import numpy as np
from perfcast.process import run_measured
from perfcast.sweep.campaign import Sensors
from perfcast.sweep.job_settings import RunSettings
from perfcast.sweep.runner import run_point
p = RunSettings(campaign="b", point="x~1", iteration=1, parameters={"x": 1}, command="true",
                before="", after="", env={}, timeout_s=30, fail_fast=False,
                sensors=Sensors(perf_events=(), rapl=False, custom={}, heartbeat=None),
                stop_marker="STOPPED.json", failed_record="failed.json")
small_parent = run_point(p)["max_rss_kb"]
ballast = np.ones(40_000_000); ballast[::512] = 2
RESULT = {"true_from_small_parent_kb": small_parent,
          "run_measured_from_300mb_parent_kb": run_measured("true").max_rss_kb,
          "shim_from_300mb_parent_kb": run_point(p)["max_rss_kb"]}
"""

FIT = """
import time, itertools, numpy as np, pandas as pd
import statsmodels.api as sm
from perfcast.settings import from_section
from perfcast.sweep import selection, design as dz
from perfcast.sweep.settings import SweepSettings
rng = np.random.default_rng(0)
vals = [np.arange(1.0, 9.0)] * 3
rows = [(a, b, c) for a, b, c in itertools.product(*vals) for _ in range(3)]
df = pd.DataFrame(rows, columns=["a", "b", "c"])
df["y"] = 1 + df.a * df.b + 0.3 * df.c**2 + rng.normal(0, 0.5, len(df))
df["point"] = df.a.astype(str) + "_" + df.b.astype(str) + "_" + df.c.astype(str)
t = time.perf_counter()
# ARPE's candidates alone, the schema's orders, folds and forms
fit = from_section(SweepSettings, {"fit": {"normal_form": {"enabled": False}}}, "sweep").fit
res = selection.fit_effect(df, "y", "y", ["a", "b", "c"], fit=fit, groups=df["point"])
t_fit = time.perf_counter() - t
X = dz.design(df[["a", "b", "c"]].to_numpy(), dz.form_terms("quadratic", 3))
t = time.perf_counter(); sm.OLS(df["y"].to_numpy(), X).fit(); t_ref = time.perf_counter() - t
RESULT = {"runs": len(df), "configurations": 512, "candidates": len(res.candidates),
          "best": res.best.model, "fit_all_s": t_fit, "one_ols_s": t_ref}
"""


def main() -> None:
    t0 = time.perf_counter()
    ov = run_child(OVERHEAD)
    rss = run_child(RSS)
    fit = run_child(FIT)
    result = {
        "overhead": ov, "rss": rss, "fit": fit,
        "ratios": {
            "runner_over_run_measured": ov["runner_s"] / ov["direct_s"],
            "run_measured_rss_over_true_rss":
                rss["run_measured_from_300mb_parent_kb"] / rss["true_from_small_parent_kb"],
            "shim_rss_over_true_rss":
                rss["shim_from_300mb_parent_kb"] / rss["true_from_small_parent_kb"],
            "fit_all_over_one_ols": fit["fit_all_s"] / fit["one_ols_s"],
        },
        "bench_wall_s": time.perf_counter() - t0,
    }
    save("sweep", result)
    rows = [
        ("run of `true`: runner (shim)", f"{ov['runner_s'] * 1e3:.1f} ms",
         f"{result['ratios']['runner_over_run_measured']:.2f}x run_measured "
         f"({ov['direct_s'] * 1e3:.1f} ms); measured wall {ov['measured_wall_s'] * 1e3:.1f} ms"),
        ("max RSS of `true`, 300 MB parent, run_measured",
         f"{rss['run_measured_from_300mb_parent_kb'] / 1024:.0f} MB",
         f"{result['ratios']['run_measured_rss_over_true_rss']:.0f}x the true "
         f"{rss['true_from_small_parent_kb'] / 1024:.1f} MB"),
        ("max RSS of `true`, 300 MB parent, shim",
         f"{rss['shim_from_300mb_parent_kb'] / 1024:.1f} MB",
         f"{result['ratios']['shim_rss_over_true_rss']:.2f}x the true value"),
        (f"fit {fit['candidates']} candidates + CV, {fit['runs']} runs",
         f"{fit['fit_all_s']:.2f} s",
         f"{result['ratios']['fit_all_over_one_ols']:.0f}x one OLS ({fit['one_ols_s'] * 1e3:.1f}"
         f" ms); best {fit['best']}"),
    ]
    width = max(len(r[0]) for r in rows)
    for name, value, ratio in rows:
        print(f"{name:<{width}}  {value:>10}  {ratio}")


if __name__ == "__main__":
    main()
