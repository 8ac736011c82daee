"""File-level steps of the sensitivity stage, one per rule (the scripts only adapt to these)."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from perfcast.errors import HostCapabilityError, InputError
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
            raise InputError(None, "backend replay needs a measured grid (the paper's table, "
                             "see sensitivity.replay.source)")
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
    if isinstance(be, CgroupBackend):
        try:
            be.probe()
        except HostCapabilityError as exc:
            if be.settings.if_unavailable == "fail":
                raise
            return _not_profiled(be, str(exc), out_grid, out_runs, out_summary)
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
    summary = {**main.summary(), "status": "profiled"}
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


def _not_profiled(be: CgroupBackend, reason: str, out_grid: str | Path, out_runs: str | Path,
                  out_summary: str | Path) -> dict:
    """Outputs of a program this host cannot restrict: empty tables and a summary saying why.

    The rest of the workflow goes on; the summary table, the figure and the report show the
    program as not profiled, with the reason (typically: not root, or a controller missing).
    """
    name = be.program.name
    dims = [d.name for d in be.model.dims]
    # the probe's group name carries a pid: keep the summary the same from run to run
    reason = re.sub(rf"{re.escape(be.settings.prefix)}-\d+-\d+", f"{be.settings.prefix}-RUN",
                    reason)
    log.warning("%s: not profiled: %s", name, reason)
    controllers = sorted({c for d in be.model.dims
                          for c in be.limits({d.name: d.levels[0]
                                              for d in be.model.dims})[0].controllers("v1")})
    summary = {
        "program": name, "backend": "cgroup", "status": "not_run", "reason": reason,
        "requires": "root (or a delegated cgroup v2 subtree) and the cgroup controllers "
                    + ", ".join(controllers),
        "command": be.command, "metric": asdict(be.program.metric),
        "dimensions": {d.name: {"kind": d.kind, "unit": d.unit, "levels": list(d.levels)}
                       for d in be.model.dims},
    }
    meta = {"program": name, "backend": "cgroup", "status": "not_run", "reason": reason}
    grid = pd.DataFrame({c: pd.Series(dtype=float) for c in [*dims, "sensitivity"]}
                        | {c: pd.Series(dtype=bool) for c in ("measured", "in_ceiling", "failed")})
    runs = pd.DataFrame({"order": pd.Series(dtype="int64"), "phase": pd.Series(dtype=str)}
                        | {c: pd.Series(dtype=float) for c in [*dims, "performance",
                                                                "sensitivity"]}
                        | {"ok": pd.Series(dtype=bool), "reason": pd.Series(dtype=str)})
    write_parquet(grid, out_grid, metadata=meta)
    write_parquet(runs, out_runs, metadata=meta)
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


def summarize(summaries: Sequence[str | Path], out: str | Path,
              out_csv: str | Path | None = None) -> pd.DataFrame:
    """One row per program: steps, ceilings, errors against brute force if any, or, for a
    program this host could not restrict, ``status`` ``not_run`` and the reason."""
    rows = []
    for p in sorted(summaries, key=str):
        s = json.loads(Path(p).read_text())
        if s.get("status") == "not_run":
            rows.append({"program": s["program"], "backend": s["backend"],
                         "status": "not_run", "reason": s["reason"]})
            continue
        dims = s["dimensions"]
        row = {
            "program": s["program"], "backend": s["backend"], "status": "profiled",
            "reason": "", "sampling": s["sampling"],
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
    if out_csv is not None:
        write_csv(df, out_csv)
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
