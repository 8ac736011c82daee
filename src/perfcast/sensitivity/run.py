"""File-level steps of the sensitivity stage, one per rule (the scripts only adapt to these)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from perfcast.errors import InputError
from perfcast.io import read_parquet, write_csv, write_json, write_parquet, write_text
from perfcast.sensitivity import evaluation, plots
from perfcast.sensitivity.backends import CgroupBackend, CgroupSettings
from perfcast.sensitivity.profile import Measurement, ProfileResult, profile
from perfcast.sensitivity.programs import ProgramSpec
from perfcast.sensitivity.replay import GridLayout, MeasuredGrid, ReplayBackend, read_measurements
from perfcast.sensitivity.resources import ResourceModel

log = logging.getLogger(__name__)


def make_backend(name: str, program: Mapping[str, Any], *, backend: str,
                 dimensions: Mapping[str, Mapping] | None = None,
                 cgroup: Mapping | None = None, network: Mapping | None = None,
                 timeout_s: float | None = None, monitor_interval_s: float | None = None,
                 repeats: int | None = None, baseline_repeats: int | None = None,
                 replay: Mapping | None = None):
    """A cgroup backend over the configured dimensions, or a replay backend over a data set."""
    if backend == "cgroup":
        model = ResourceModel.from_config(dimensions or {})
        settings = CgroupSettings.from_config(cgroup, network=network, timeout_s=timeout_s,
                                              monitor_interval_s=monitor_interval_s,
                                              repeats=repeats,
                                              baseline_repeats=baseline_repeats)
        return CgroupBackend(ProgramSpec.from_dict(name, program), model, settings)
    if backend == "replay":
        replay = dict(replay or {})
        if not replay.get("data"):
            raise InputError(None, "backend replay needs sensitivity.replay.data (a measured "
                             "grid such as the paper's arcp_measurements.csv)")
        data_name = program.get("replay_program", name)
        layouts = {**evaluation.paper.ARCP_LAYOUTS, **(replay.get("layouts") or {})}
        grid = MeasuredGrid.from_frame(read_measurements(replay["data"]), data_name,
                                       GridLayout.from_config(layouts.get(data_name)))
        peaks = evaluation.resolve_peaks(replay.get("ceiling", "table4"),
                                         replay.get("peaks")).get(data_name)
        return ReplayBackend(grid, peaks)
    raise InputError(None, f"unknown sensitivity backend {backend!r}",
                     expected="cgroup or replay")


def _seed(seed: int, name: str) -> np.random.SeedSequence:
    return np.random.SeedSequence([seed, *name.encode()])


def profile_program(out_grid: str | Path, out_runs: str | Path, out_summary: str | Path, *,
                    name: str, program: Mapping[str, Any], backend: str, epsilon: float,
                    sampling: str = "binary", compare: Sequence[str] = (), seed: int = 0,
                    spare_cores: float = 1.0, **backend_kw: Any) -> dict:
    """Profile one program; write its interpolated grid, every run, and a JSON summary.

    ``compare``: ``lhs`` (same counts) and/or ``brute`` (every level up to the ceiling) on the
    same backend, sharing the unrestricted run and every measured point; with ``brute`` the
    other campaigns are scored against it (the dense truth of this machine).
    """
    be = make_backend(name, program, backend=backend, **backend_kw)
    base = be.unrestricted()
    cache: dict[tuple[int, ...], Measurement] = {}
    main = profile(be, epsilon=epsilon, sampling=sampling, seed=_seed(seed, name),
                   spare_cores=spare_cores, program=name, baseline=base, cache=cache)
    others: dict[str, ProfileResult] = {}
    if "lhs" in compare and sampling != "lhs":
        others["lhs"] = profile(be, epsilon=epsilon, sampling="lhs",
                                counts=[len(c) for c in main.chosen], seed=_seed(seed, name),
                                spare_cores=spare_cores, program=name, baseline=base,
                                cache=cache)
    if "brute" in compare and sampling != "brute":
        others["brute"] = profile(be, epsilon=epsilon, sampling="brute", program=name,
                                  spare_cores=spare_cores, baseline=base, cache=cache)
    grid = main.grid_frame()
    summary = main.summary()
    if isinstance(be, CgroupBackend):
        summary["metric"] = asdict(be.program.metric)
        summary["command"] = be.command
    else:
        summary["metric"] = {"name": be.grid.metric, "higher_is_better": be.higher_is_better}
    summary["compare"] = {}
    truth = None
    if "brute" in others:
        truth = np.where(others["brute"].region_mask(), others["brute"].grid, np.nan)
        grid["brute_truth"] = others["brute"].grid_frame()["sensitivity"].where(
            grid["in_ceiling"])
    elif backend == "replay":
        truth = be.grid.truth()
        grid["brute_truth"] = truth[tuple(np.array(list(main.model.indices())).T)]
    if truth is not None:
        summary["score"] = main.score(truth)
    for k, r in others.items():
        entry: dict[str, Any] = {"steps": r.steps,
                                 "chosen": {d.name: [d.levels[i] for i in c]
                                            for d, c in zip(r.model.dims, r.chosen, strict=True)}}
        if truth is not None and k != "brute":
            entry["score"] = r.score(truth)
        summary["compare"][k] = entry
    runs = _all_runs(main, others, cache)
    write_parquet(grid, out_grid, metadata={"program": name, "backend": backend})
    write_parquet(runs, out_runs, metadata={"program": name, "backend": backend})
    write_json(summary, out_summary)
    return summary


def _all_runs(main: ProfileResult, others: Mapping[str, ProfileResult],
              cache: Mapping[tuple[int, ...], Measurement]) -> pd.DataFrame:
    """Every distinct run in execution order, labelled with the campaign that caused it."""
    owner: dict[tuple[int, ...], str] = {}
    for label, r in [(main.sampling, main), *others.items()]:
        for m in r.measurements:
            owner.setdefault(m.idx, label)
    frame = main.runs_frame()
    rows = [frame.iloc[0].to_dict()]  # the unrestricted run
    for m in sorted(cache.values(), key=lambda m: m.order):
        row = main._run_row(m.phase, m.order, m.idx, m.outcome, m.sensitivity)
        row["campaign"] = owner.get(m.idx, main.sampling)
        rows.append(row)
    rows[0]["campaign"] = "all"
    return pd.DataFrame(rows)


def summarize(summaries: Sequence[str | Path], out: str | Path) -> pd.DataFrame:
    """One row per profiled program (steps, ceilings, errors against brute force if any)."""
    rows = []
    for p in sorted(summaries, key=str):
        s = json.loads(Path(p).read_text())
        dims = s["dimensions"]
        row = {
            "program": s["program"], "backend": s["backend"], "sampling": s["sampling"],
            "epsilon": s["epsilon"],
            "effective": ",".join(n for n, d in dims.items() if d["effective"]),
            "ceilings": json.dumps({n: d["ceiling"] for n, d in dims.items()}),
            "chosen": json.dumps({n: d["chosen"] for n, d in dims.items()}),
            **s["steps"], "failed_runs": s["failed_runs"],
            "failure_reasons": "; ".join(s["failure_reasons"]),
            "mae": s.get("score", {}).get("mae", np.nan),
        }
        for k, c in s.get("compare", {}).items():
            row[f"{k}_product_points"] = c["steps"]["product_points"]
            if k != "brute":  # brute force is the truth the others are scored against
                row[f"{k}_mae"] = c.get("score", {}).get("mae", np.nan)
        rows.append(row)
    df = pd.DataFrame(rows)
    write_parquet(df, out)
    return df


def plot_program(grid: str | Path, summary: str | Path, out: str | Path) -> None:
    plots.plot_profile(read_parquet(grid), json.loads(Path(summary).read_text()), out)


def replay_evaluation(data: str | Path, out_results: str | Path, out_table: str | Path,
                      out_summary: str | Path, out_cells: str | Path,
                      out_markdown: str | Path | None = None, *,
                      epsilons: Sequence[float], programs: Sequence[str] | None = None,
                      layouts: Mapping | None = None, ceiling: str = "table4",
                      peaks: Mapping | None = None, lhs_repeats: int = 20, seed: int = 0) -> None:
    """The paper's data replayed for every program and epsilon, beside the paper's figures."""
    res, cells = evaluation.evaluate_paper(data, epsilons=epsilons, programs=programs,
                                           layouts=layouts, ceiling=ceiling, peaks=peaks,
                                           lhs_repeats=lhs_repeats, seed=seed)
    meta = {"data": str(data), "ceiling": ceiling, "lhs_repeats": lhs_repeats, "seed": seed}
    write_parquet(res, out_results, metadata=meta)
    write_parquet(cells, out_cells, metadata=meta)
    table, summary = evaluation.comparison_table(res), evaluation.epsilon_summary(res)
    write_csv(table, out_table)
    write_csv(summary, out_summary)
    if out_markdown is not None:
        write_text(evaluation.comparison_markdown(table, summary), out_markdown)


def replay_figures(results: str | Path, table: str | Path, summary: str | Path,
                   cells: str | Path, out_error: str | Path, out_lhs: str | Path,
                   out_steps: str | Path, out_surfaces: str | Path, *, epsilon: float,
                   surfaces: Sequence[str]) -> None:
    res = read_parquet(results)
    plots.plot_error_vs_epsilon(pd.read_csv(summary), out_error)
    plots.plot_binary_vs_lhs(res, epsilon, out_lhs)
    plots.plot_steps(pd.read_csv(table), epsilon, out_steps)
    plots.plot_replay_surfaces(read_parquet(cells), surfaces, epsilon, out_surfaces)
