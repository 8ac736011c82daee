"""Resource-sensitivity profiling, as ratios measured in one run.

(a) Runs saved: on the paper's measurements (Wang et al. 2017; docs/methods/sensitivity.md),
    the runs binary search needs (product points) against brute force over each program's dense
    grid, per epsilon; and the paper's own brute-force grid (7 x 24 x 21 x 13 x 17 = 779,688)
    for scale.
(b) Interpolation: sequential PCHIP filling the paper's whole 5-D grid (779,688 cells) from a
    3 x 5 x 4 x 4 x 3 product of measured levels (absolute time); and, on a 7 x 13 x 17 x 21 grid,
    the vectorised fill (lines sharing a known-mask interpolated together) against a reference
    that builds one PchipInterpolator per line.
(c) Replay evaluation of the whole paper data set (14 programs x 4 epsilons x 2 ceilings,
    binary + 20 LHS seeds + adaptive, brute force): wall time.
(e) Ahead of the paper: at the paper's own Table 4 run counts, the whole-grid error of the
    adaptive sampler (with the table4 ceiling and without one) beside binary search's at each
    epsilon and Table 5's.
(d) The cgroup backend's cost per run (root only): ``true`` run plainly vs in a fresh cgroup with
    CPU quota, cpuset, memory and disk-read limits (create, apply, join, remove).

    .venv/bin/python benchmarks/bench_sensitivity.py

Writes benchmarks/out/sensitivity.json and prints a table.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from scipy.interpolate import PchipInterpolator

sys.path.insert(0, str(Path(__file__).parent))
from _util import save  # noqa: E402

from perfcast.process import run_measured  # noqa: E402
from perfcast.sensitivity import published  # noqa: E402
from perfcast.sensitivity.cgroups import Limits, fresh_cgroup  # noqa: E402
from perfcast.sensitivity.devices import block_device  # noqa: E402
from perfcast.sensitivity.evaluation import epsilon_summary, evaluate_paper  # noqa: E402
from perfcast.sensitivity.interpolation import sequential_pchip  # noqa: E402
from perfcast.sensitivity.settings import EvaluationSettings  # noqa: E402
from perfcast.settings import build, schema_default, validate  # noqa: E402

#: where test groups go: the schema's sensitivity.cgroup.version and .parent
PLACE = {"version": schema_default("sensitivity", "cgroup.version"),
         "parent": schema_default("sensitivity", "cgroup.parent")}

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "arcp" / "arcp_measurements.csv"


def naive_sequential_pchip(values: np.ndarray, coords: list[np.ndarray]) -> np.ndarray:
    """Reference: one PchipInterpolator per 1-D line (ARCPTool's loop structure)."""
    out = values.copy()
    for a, x in enumerate(coords):
        v = np.moveaxis(out, a, -1)
        flat = v.reshape(-1, v.shape[-1])
        for row in flat:
            k = np.isfinite(row)
            if not k.any() or k.all():
                continue
            if k.sum() == 1:
                row[:] = row[k][0]
                continue
            xk = x[k]
            inside = (x >= xk[0]) & (x <= xk[-1])
            row[inside & ~k] = PchipInterpolator(xk, row[k])(x[inside & ~k])
            row[x < xk[0]] = row[k][0]
            row[x > xk[-1]] = row[k][-1]
        out = np.moveaxis(flat.reshape(v.shape), -1, a)
    return out


def product_values(shape: tuple[int, ...], chosen: list[list[int]]) -> tuple[np.ndarray, list]:
    coords = [np.linspace(0.0, 1.0, n) for n in shape]
    mesh = np.meshgrid(*[c[idx] for c, idx in zip(coords, chosen, strict=True)], indexing="ij")
    vals = np.full(shape, np.nan)
    vals[np.ix_(*chosen)] = np.prod([np.sqrt(m + 0.1) for m in mesh], axis=0)
    return vals, coords


def timed(fn, repeat: int = 3) -> float:
    best = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best.append(time.perf_counter() - t)
    return min(best)


def main() -> int:
    result: dict = {}
    rows: list[tuple[str, str, str]] = []

    # (a) + (c)
    if DATA.exists():
        t = time.perf_counter()
        # the schema's replay settings (every epsilon, every program), 20 LHS seeds, its seed
        replay = validate({"replay": {"lhs_repeats": 20}}, "sensitivity")["replay"]
        settings = build(EvaluationSettings, {**replay, "seed": schema_default("config", "seed")})
        res, _ = evaluate_paper(DATA, settings)
        eval_s = time.perf_counter() - t
        b = res[(res["sampling"] == "binary") & res["headline"]]
        per_eps = {}
        for eps, g in b.groupby("epsilon"):
            dense, runs = int(g["grid_points"].sum()), int(g["product_points"].sum())
            per_eps[f"{eps:g}"] = {"dense_grid_runs": dense, "binary_runs": runs,
                                   "ratio": dense / runs}
            rows.append((f"(a) runs, eps {eps:g}", f"{runs} vs dense {dense}",
                         f"{dense / runs:.1f}x fewer"))
        s = epsilon_summary(res)
        result["runs_saved"] = per_eps
        result["paper_brute_force_steps"] = published.BRUTE_FORCE_STEPS
        result["mae_by_epsilon"] = dict(zip([f"{e:g}" for e in s["epsilon"]],
                                            s["mae_binary_mean"].round(5).tolist(), strict=True))
        result["replay_evaluation_s"] = eval_s
        rows.append(("(c) replay evaluation, 14 programs x 4 eps x 2 ceilings",
                     f"{eval_s:.2f} s", ""))
        ahead = {}
        for prog, paper_mae in published.TABLE5_MAE.items():
            ad = res[(res["program"] == prog) & (res["sampling"] == "adaptive_paper")]
            by = {c: ad[ad["ceiling"] == c].iloc[0] for c in ad["ceiling"]}
            bin_ = b[b["program"] == prog].sort_values("epsilon")
            ahead[prog] = {
                "paper_runs": published.TABLE4_STEPS[prog], "paper_mae": paper_mae,
                **{f"adaptive_{c}": {"runs": int(r["product_points"]),
                                     "mae_grid": float(r["mae_grid"])} for c, r in by.items()},
                "binary": {f"{r.epsilon:g}": {"runs": int(r.product_points),
                                              "mae_grid": float(r.mae_grid)}
                           for r in bin_.itertuples()}}
            cells = " ".join(f"{c} {int(r['product_points'])}/{r['mae_grid']:.4f}"
                             for c, r in sorted(by.items()))
            binary = " ".join(f"{int(r.product_points)}/{r.mae_grid:.4f}"
                              for r in bin_.itertuples())
            rows.append((f"(e) {prog}: paper {published.TABLE4_STEPS[prog]}/{paper_mae}",
                         f"adaptive {cells}", f"binary eps 0.2-0.5: {binary}"))
        result["ahead_of_paper"] = ahead
    else:
        rows.append(("(a)/(c) paper data", f"not found at {DATA}", "skipped"))

    # (b)
    shape5 = (7, 24, 21, 13, 17)
    chosen5 = [[0, 3, 6], [0, 5, 11, 17, 23], [0, 7, 14, 20], [0, 4, 8, 12], [0, 8, 16]]
    v5, c5 = product_values(shape5, chosen5)
    t5 = timed(lambda: sequential_pchip(v5, c5), repeat=2)
    result["pchip_5d_paper_grid_s"] = t5
    rows.append(("(b) sequential PCHIP, 779,688-cell 5-D grid", f"{t5:.3f} s",
                 f"{np.prod(shape5) / t5 / 1e6:.2f} M cells/s"))
    shape4 = (7, 13, 17, 21)
    chosen4 = [[0, 3, 6], [0, 4, 8, 12], [0, 8, 16], [0, 10, 20]]
    v4, c4 = product_values(shape4, chosen4)
    fast = sequential_pchip(v4, c4)
    slow = naive_sequential_pchip(v4, c4)
    assert np.allclose(fast, slow), "vectorised and per-line fills differ"
    tf = timed(lambda: sequential_pchip(v4, c4))
    tn = timed(lambda: naive_sequential_pchip(v4, c4), repeat=1)
    result["pchip_4d"] = {"vectorised_s": tf, "per_line_s": tn, "speedup": tn / tf}
    rows.append(("(b) 7x13x17x21 fill: per-line / vectorised", f"{tn:.3f} s / {tf:.4f} s",
                 f"{tn / tf:.0f}x"))

    # (d)
    if os.geteuid() == 0:
        dev = block_device(REPO)
        lim = Limits(cpus=tuple(sorted(os.sched_getaffinity(0)))[:1], cpu_quota_cores=1.0,
                     memory_bytes=256 << 20, read_bps=100_000_000, device=dev)

        def plain() -> None:
            run_measured(["true"])

        def grouped() -> None:
            with fresh_cgroup(lim, prefix="pcbench", **PLACE) as cg:
                run_measured(["true"], preexec_fn=cg.attach_self)

        tp = statistics.median(timed(plain, 1) for _ in range(15))
        tg = statistics.median(timed(grouped, 1) for _ in range(15))
        result["cgroup_run"] = {"plain_s": tp, "cgroup_s": tg, "ratio": tg / tp,
                                "overhead_ms": (tg - tp) * 1000}
        rows.append(("(d) `true`: fresh cgroup (4 limits) / plain",
                     f"{tg * 1000:.1f} ms / {tp * 1000:.1f} ms",
                     f"{tg / tp:.2f}x (+{(tg - tp) * 1000:.1f} ms per run)"))
    else:
        rows.append(("(d) cgroup run", "needs root", "skipped"))

    w = max(len(r[0]) for r in rows)
    for a, b_, c in rows:
        print(f"{a:<{w}}  {b_:<28} {c}")
    save("sensitivity", result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
