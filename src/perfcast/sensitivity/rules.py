"""The sensitivity stage's rules, one function each (the scripts only rebuild the settings).

Resource-sensitivity profiling after L. Wang, D. Qian, Z. Luan, G. Wei, R. Wang, H. Yang,
"Speeding up profiling program's runtime characteristics for workload consolidation", PLoS ONE
12(4): e0175861, 2017 (docs/methods/sensitivity.md):

- :func:`profile_program` (rule ``sensitivity_profile``): one program's campaign;
- :func:`summarize` (``sensitivity_summary``) and :func:`plot_program` (``sensitivity_figure``);
- :func:`replay_evaluation` (``sensitivity_replay_eval``) and :func:`replay_figures`
  (``sensitivity_replay_figures``): the method replayed on the paper's published measurements.
"""

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
from perfcast.sensitivity.backends import CgroupBackend
from perfcast.sensitivity.profile import Measurement, ProfileResult, profile
from perfcast.sensitivity.replay import ReplayBackend
from perfcast.sensitivity.settings import EvaluationSettings, FigureSettings, ProfileSettings

log = logging.getLogger(__name__)


def make_backend(settings: ProfileSettings, data: str | Path | None = None
                 ) -> CgroupBackend | ReplayBackend:
    """The backend of ``settings.backend`` for ``settings.program``.

    Parameters
    ----------
    settings : the profile's settings.
    data : backend ``replay`` only: the measurement table the runs are answered from
        (``sensitivity.replay.source``); its rows for ``settings.program.replay_program`` form
        the grid, cut at the ceiling of ``settings.replay``.

    Returns
    -------
    CgroupBackend or ReplayBackend

    Raises
    ------
    InputError
        backend ``replay`` without ``data``, a program the table does not hold, or a resource
        model the cgroup backend cannot apply (see :class:`CgroupBackend`).
    """
    if settings.backend == "cgroup":
        return CgroupBackend(settings)
    if not data or settings.replay is None:
        raise InputError(None, "backend replay needs a measured grid (the paper's table, "
                         "see sensitivity.replay.source)")
    name, grids = settings.program.replay_program, settings.replay
    grid = evaluation.load_grids(data, [name], grids.layouts)[name]
    peaks = evaluation.resolve_peaks(grids.ceiling, grids.peaks).get(name)
    return ReplayBackend(grid, peaks)


def _seed(seed: int, name: str) -> np.random.SeedSequence:
    return np.random.SeedSequence([seed, *name.encode()])


def profile_program(settings: ProfileSettings, out_grid: str | Path, out_runs: str | Path,
                    out_summary: str | Path, *, data: str | Path | None = None) -> dict:
    """Profile one program; write its interpolated grid, every run, and a JSON summary.

    The campaign of Wang et al. (2017): the unrestricted run and its peak usage (the resource
    ceiling), ``settings.sampling`` (binary recursive search at ``settings.epsilon``, Latin
    hypercube, or brute force), the Cartesian product of the chosen levels measured, sequential
    1-D PCHIP for the rest. ``settings.compare``: ``lhs`` (same counts) and/or ``brute`` (every
    level up to the ceiling) on the same backend, sharing the unrestricted run and every measured
    point; with ``brute`` the other campaigns are scored against it (the dense truth of this
    machine), with backend ``replay`` against the measured grid.

    Parameters
    ----------
    settings : the profile's settings (:meth:`SensitivitySettings.profile`).
    out_grid, out_runs, out_summary : the grid (Parquet), every distinct run (Parquet) and the
        summary (JSON) written.
    data : backend ``replay``: the measurement table.

    Returns
    -------
    dict
        the summary written. ``status`` is ``profiled``, or ``not_run`` (with ``reason`` and
        ``requires``, and empty tables) where this host cannot restrict a run and
        ``settings.cgroup.if_unavailable`` is ``report``.

    Raises
    ------
    HostCapabilityError
        this host cannot restrict a run and ``if_unavailable`` is ``fail`` (nothing written).
    ProfileError
        the unrestricted run failed.
    """
    name, backend = settings.program.name, settings.backend
    be = make_backend(settings, data)
    if isinstance(be, CgroupBackend):
        try:
            be.probe()
        except HostCapabilityError as exc:
            if settings.cgroup.if_unavailable == "fail":
                raise
            return _not_profiled(be, str(exc), out_grid, out_runs, out_summary)
    epsilon, sampling, compare = settings.epsilon, settings.sampling, settings.compare
    seed, spare_cores = settings.seed, settings.spare_cores
    base = be.unrestricted()
    cache: dict[tuple[int, ...], Measurement] = {}
    main = profile(be, epsilon=epsilon, sampling=sampling, seed=_seed(seed, name),
                   spare_cores=spare_cores, program=name, baseline=base, cache=cache,
                   budget=settings.budget)
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
    name, prefix = be.program.name, be.settings.cgroup.prefix
    dims = [d.name for d in be.model.dims]
    # the probe's group name carries a pid: keep the summary the same from run to run
    reason = re.sub(rf"{re.escape(prefix)}-\d+-\d+", f"{prefix}-RUN", reason)
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
    """One row per profiled program, from the summaries :func:`profile_program` wrote.

    Parameters
    ----------
    summaries : the programs' JSON summaries.
    out : the table (Parquet).
    out_csv : the same table as CSV (None: not written).

    Returns
    -------
    pandas.DataFrame
        per program: steps, ceilings, chosen levels, failed runs, the error against the truth
        (brute force or the replayed grid) if any, and the compared campaigns' steps and
        errors; for a program this host could not restrict, ``status`` ``not_run`` and the
        reason.
    """
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
    """The figure of one profile (:func:`perfcast.sensitivity.plots.plot_profile`) from its grid
    (Parquet) and summary (JSON) into ``out`` (PNG)."""
    plots.plot_profile(read_parquet(grid), json.loads(Path(summary).read_text()), out)


def replay_evaluation(data: str | Path, out_results: str | Path, out_table: str | Path,
                      out_summary: str | Path, out_cells: str | Path,
                      out_markdown: str | Path | None, *, settings: EvaluationSettings) -> None:
    """The paper's measurements replayed for every program and epsilon, beside its figures.

    For each program of ``data`` (``settings.programs``, or all) and each of
    ``settings.epsilons``, binary search, ``settings.lhs_repeats`` Latin hypercube campaigns
    and the adaptive sampler at the same counts, brute force and the adaptive sampler at
    Table 4's count run on the :class:`~perfcast.sensitivity.replay.ReplayBackend` under the
    configured ceiling and without one
    (:func:`perfcast.sensitivity.evaluation.evaluate_paper`), and are compared with Table 4,
    Table 5 and Figs. 10-12 of Wang et al. (2017) (:mod:`perfcast.sensitivity.published`).

    Parameters
    ----------
    data : the measurement table (``arcp_measurements.csv``).
    out_results : one row per program x epsilon x sampling (Parquet).
    out_table : the comparison table, program x epsilon (CSV).
    out_summary : per epsilon, beside Figs. 10-12 (CSV).
    out_cells : every cell's truth and prediction (Parquet).
    out_markdown : the comparison as Markdown (None: not written).
    settings : the evaluation's settings.
    """
    res, cells = evaluation.evaluate_paper(data, settings)
    meta = {"data": str(data), "ceiling": settings.ceiling,
            "lhs_repeats": settings.lhs_repeats, "seed": settings.seed}
    write_parquet(res, out_results, metadata=meta)
    write_parquet(cells, out_cells, metadata=meta)
    table, summary = evaluation.comparison_table(res), evaluation.epsilon_summary(res)
    write_csv(table, out_table)
    write_csv(summary, out_summary)
    if out_markdown is not None:
        write_text(evaluation.comparison_markdown(table, summary), out_markdown)


def replay_figures(results: str | Path, table: str | Path, summary: str | Path,
                   cells: str | Path, out_error: str | Path, out_lhs: str | Path,
                   out_steps: str | Path, out_surfaces: str | Path,
                   out_runs: str | Path | None = None, *, settings: FigureSettings) -> None:
    """The replay evaluation's figures: error vs epsilon (beside Fig. 11), binary search vs
    Latin hypercube and adaptive (Fig. 10), steps per program (Table 4) at
    ``settings.figure_epsilon``, the measured vs interpolated surfaces of ``settings.surfaces``
    and their whole-grid error against runs for every sampling beside the paper's point.

    Parameters
    ----------
    results, table, summary, cells : the outputs of :func:`replay_evaluation`.
    out_error, out_lhs, out_steps, out_surfaces, out_runs : the figures written (PNG;
        ``out_runs`` None: not drawn).
    settings : the figures' settings.
    """
    res = read_parquet(results)
    plots.plot_error_vs_epsilon(pd.read_csv(summary), out_error)
    plots.plot_binary_vs_lhs(res, settings.figure_epsilon, out_lhs)
    plots.plot_steps(pd.read_csv(table), settings.figure_epsilon, out_steps)
    plots.plot_replay_surfaces(read_parquet(cells), settings.surfaces, settings.figure_epsilon,
                               out_surfaces)
    if out_runs is not None:
        headline = str(res.loc[res["headline"], "ceiling"].iloc[0])
        plots.plot_error_vs_runs(evaluation.error_vs_runs(res), settings.surfaces, headline,
                                 out_runs)
