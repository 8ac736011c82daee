"""Scoring the method against a dense ground truth: the paper's own measurements, replayed.

For every program with a dense grid and every epsilon, the whole campaign (ceiling from the
peaks, binary search, product, sequential PCHIP) runs on the :class:`ReplayBackend`; the
interpolated grid is scored against the measured one by the paper's metric, the average
absolute error, over the *whole measured grid* (every cell the program was measured at; the
paper averages over its experiment points). That is the headline error and what the verdicts
use. The error inside the profiled box (cells up to the resource ceiling) is reported beside it:
it flatters a narrow ceiling, since the cells above it are never compared with anything.
Beside binary search: Latin hypercube sampling at the same per-dimension counts (averaged over
``lhs_repeats`` seeds), our budgeted adaptive sampler
(:func:`~perfcast.sensitivity.sampling.adaptive_product`) at the same run count and at the
paper's own Table 4 count, and brute force (every level up to the ceiling). Every program is
evaluated under the configured ceiling and, beside it, without one (``ceiling: none``), so the
table shows what the ceiling itself costs. The comparison table sets each result beside the
paper's Table 4 / Table 5 / Fig. 10-12 and says where it does not reach them, and why.

Reference: L. Wang, D. Qian, Z. Luan, G. Wei, R. Wang, H. Yang, "Speeding up profiling program's
runtime characteristics for workload consolidation", PLoS ONE 12(4): e0175861, 2017; its
published numbers are in :mod:`perfcast.sensitivity.published`.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from perfcast.sensitivity import published
from perfcast.sensitivity.interpolation import sequential_pchip
from perfcast.sensitivity.profile import ProfileResult, profile
from perfcast.sensitivity.replay import AS_MEASURED, MeasuredGrid, ReplayBackend, read_measurements
from perfcast.sensitivity.settings import EvaluationSettings, GridLayout

log = logging.getLogger(__name__)
AXES = ("cpu_cores", "mem_gb", "net_code", "io_mbps")
#: samplings evaluated per epsilon; ``brute`` and ``adaptive_paper`` (at Table 4's count) do
#: not depend on epsilon and have a NaN epsilon
SAMPLINGS = ("binary", "lhs", "adaptive", "brute", "adaptive_paper")


def _seed(seed: int, program: str, epsilon: float, rep: int) -> np.random.SeedSequence:
    return np.random.SeedSequence([seed, *program.encode(), int(round(epsilon * 1000)), rep])


def _campaign(grid: MeasuredGrid, peaks: Mapping | None, sampling: str, epsilon: float,
              **kw) -> ProfileResult:
    """One campaign on the replayed ``grid``, with the method's spare core
    (:data:`~perfcast.sensitivity.published.ARCP_SPARE_CORES`)."""
    return profile(ReplayBackend(grid, peaks), epsilon=epsilon, sampling=sampling,
                   spare_cores=published.ARCP_SPARE_CORES, program=grid.program, **kw)


def _chosen(r: ProfileResult) -> dict[str, list[float]]:
    return {d.name: [d.levels[i] for i in c] for d, c in zip(r.model.dims, r.chosen,
                                                              strict=True)}


def curve(result: ProfileResult, truth: np.ndarray) -> list[list[float]]:
    """Error against runs of an adaptive campaign: ``[runs, whole-grid error, in-box error]``
    after each refinement step of ``result.trace`` (each step's product filled by sequential
    PCHIP, as the campaign itself would be had it stopped there).

    Parameters
    ----------
    result : ProfileResult
        An adaptive campaign (its ``trace`` holds the chosen levels after every step).
    truth : numpy.ndarray
        The measured sensitivity of every cell (NaN: not measured, left out of the errors).

    Returns
    -------
    list of list of float
        One ``[runs, whole-grid error, in-box error]`` per step.
    """
    region = result.region_mask()
    ok = np.isfinite(truth)
    coords = [d.coords for d in result.model.dims]
    out = []
    for chosen in result.trace:
        values = np.full(result.model.shape, np.nan)
        ix = np.ix_(*chosen)
        values[ix] = np.where(ok[ix], truth[ix], 0.0)
        err = np.abs(sequential_pchip(values, coords) - truth)
        out.append([int(np.prod([len(c) for c in chosen])), float(err[ok].mean()),
                    float(err[ok & region].mean())])
    return out


def _row(common: dict, sampling: str, r: ProfileResult, truth: np.ndarray, **extra) -> dict:
    s = r.score(truth)
    return {**common, "sampling": sampling, **r.steps,
            "mae_grid": s["mae_full_grid"], "mae_grid_min": s["mae_full_grid"],
            "mae_grid_max": s["mae_full_grid"], "mae_box": s["mae"],
            "max_abs_error": s["max_abs_error"],
            "worst_point": json.dumps(s["worst_point"], sort_keys=True),
            "worst_truth": s["worst_truth"], "worst_predicted": s["worst_predicted"],
            "chosen": json.dumps(_chosen(r), sort_keys=True),
            "bisected": json.dumps(r.splits, sort_keys=True), "budget": -1, "curve": "[]",
            **extra}


@dataclass(frozen=True)
class ProgramEval:
    """Binary, Latin hypercube and adaptive campaigns of one program at one epsilon."""

    grid: MeasuredGrid
    binary: ProfileResult
    lhs: list[ProfileResult]
    adaptive: ProfileResult

    def common(self) -> dict:
        """The columns every row of this program and epsilon shares."""
        truth = self.grid.truth()
        return {"program": self.grid.program, "metric": self.grid.metric,
                "higher_is_better": self.grid.higher_is_better,
                "epsilon": self.binary.epsilon, "grid_points": int(truth.size),
                "ceiling_points": int(self.binary.region_mask().sum()),
                "failed_cells": len(self.grid.failed_points()),
                "dimensions": ",".join(self.grid.model.names)}

    def rows(self) -> list[dict]:
        """Three rows, ``binary``, ``lhs`` (mean, range and worst case over the seeds) and
        ``adaptive`` (at binary search's run count): steps, the error over the whole measured
        grid (``mae_grid``, the headline) and inside the profiled box (``mae_box``), the whole
        grid's worst cell, the chosen levels."""
        truth = self.grid.truth()
        common = self.common()
        out = [_row(common, "binary", self.binary, truth)]
        scores = [r.score(truth) for r in self.lhs]
        grid_err = np.array([s["mae_full_grid"] for s in scores])
        w = int(np.argmax(grid_err))
        lhs = _row(common, "lhs", self.lhs[w], truth, probes_1d=0,
                   runs_total=self.lhs[0].product_points + 1, bisected="{}")
        lhs.update({"mae_grid": float(grid_err.mean()), "mae_grid_min": float(grid_err.min()),
                    "mae_grid_max": float(grid_err.max()),
                    "mae_box": float(np.mean([s["mae"] for s in scores])),
                    "max_abs_error": float(max(s["max_abs_error"] for s in scores))})
        out.append(lhs)
        out.append(_row(common, "adaptive", self.adaptive, truth,
                        budget=self.binary.product_points))
        return out

    def cells(self) -> pd.DataFrame:
        """Truth, prediction and measured flag of every cell (binary sampling)."""
        g = self.binary.grid_frame()
        truth = self.grid.truth()
        idx = np.array(list(self.grid.model.indices())).reshape(-1, len(self.grid.model.dims))
        g["truth"] = truth[tuple(idx.T)]
        g = g.rename(columns={"sensitivity": "predicted"})
        for a in AXES:
            if a not in g.columns:
                g[a] = np.nan
        g.insert(0, "epsilon", self.binary.epsilon)
        g.insert(0, "program", self.grid.program)
        return g[["program", "epsilon", *AXES, "truth", "predicted", "measured", "in_ceiling"]]


def evaluate_program(grid: MeasuredGrid, epsilon: float, *, peaks: Mapping | None,
                     lhs_repeats: int, seed: int) -> ProgramEval:
    """Replay binary search, Latin hypercube and adaptive sampling on one measured grid.

    Every campaign adds the method's one spare core to a CPU ceiling
    (:data:`~perfcast.sensitivity.published.ARCP_SPARE_CORES`).

    Parameters
    ----------
    grid : MeasuredGrid
        The program's measured grid (the dense truth).
    epsilon : float
        Binary recursive search bisects a segment while ``|S(high) - S(low)| > epsilon``.
    peaks : Mapping or None
        Peak usage per axis standing in for the monitored unrestricted run (the resource
        ceiling); None or a missing axis: the whole axis.
    lhs_repeats : int
        Latin hypercube campaigns at binary search's per-dimension counts, one seed each (at
        least one is run).
    seed : int
        The seeds of the Latin hypercube campaigns derive from it, the program and epsilon.

    Returns
    -------
    ProgramEval
        the binary campaign, the Latin hypercube ones and the adaptive one at binary search's
        run count (budget only: its own epsilon is 0).

    Examples
    --------
    A runtime that halves with each doubling of cores, on 1 to 8 cores:

    >>> import pandas as pd
    >>> from perfcast.sensitivity.replay import AS_MEASURED
    >>> table = pd.DataFrame({"program": "p", "cpu_cores": [1.0, 2, 4, 8], "metric": "runtime_s",
    ...                       "value": [8.0, 4.0, 2.0, 1.0]})
    >>> grid = MeasuredGrid.from_frame(table, "p", AS_MEASURED)
    >>> ev = evaluate_program(grid, 0.1, peaks=None, lhs_repeats=2, seed=1)
    >>> [(r["sampling"], r["product_points"]) for r in ev.rows()]
    [('binary', 4), ('lhs', 4), ('adaptive', 4)]
    """
    b = _campaign(grid, peaks, "binary", epsilon)
    counts = [len(c) for c in b.chosen]
    lhs = [_campaign(grid, peaks, "lhs", epsilon, counts=counts,
                     seed=_seed(seed, grid.program, epsilon, k))
           for k in range(max(1, lhs_repeats))]
    ad = _campaign(grid, peaks, "adaptive", 0.0, budget=b.product_points)
    return ProgramEval(grid, b, lhs, ad)


def evaluate_fixed(grid: MeasuredGrid, *, peaks: Mapping | None,
                   budget: int | None) -> list[dict]:
    """The rows of one program that do not depend on epsilon: ``brute`` (every level up to
    the ceiling) and ``adaptive_paper`` (the adaptive sampler at the paper's Table 4 run count,
    where Table 4 lists the program, or at ``budget`` when given), whose ``curve`` holds the
    error against runs of the unbudgeted adaptive refinement up to the whole profiled box
    (:func:`curve`).

    Parameters
    ----------
    grid : MeasuredGrid
        The program's measured grid (the dense truth).
    peaks : Mapping or None
        Peak usage per axis (the resource ceiling); None or a missing axis: the whole axis.
    budget : int or None
        The adaptive sampler's run count (None: Table 4's for the program, else unbudgeted).

    Returns
    -------
    list of dict
        The ``brute`` row and the ``adaptive_paper`` row (NaN epsilon).
    """
    truth = grid.truth()
    brute = _campaign(grid, peaks, "brute", 0.0)
    common = {"program": grid.program, "metric": grid.metric,
              "higher_is_better": grid.higher_is_better, "epsilon": float("nan"),
              "grid_points": int(truth.size), "ceiling_points": int(brute.region_mask().sum()),
              "failed_cells": len(grid.failed_points()),
              "dimensions": ",".join(grid.model.names)}
    rows = [_row(common, "brute", brute, truth)]
    full = _campaign(grid, peaks, "adaptive", 0.0, budget=None)
    budget = budget if budget is not None else published.TABLE4_STEPS.get(grid.program)
    ad = full if budget is None else _campaign(grid, peaks, "adaptive", 0.0, budget=budget)
    rows.append(_row(common, "adaptive_paper", ad, truth, budget=-1 if budget is None
                     else int(budget), curve=json.dumps(curve(full, truth))))
    return rows


def evaluate_campaign(settings: EvaluationSettings, *, data: str | Path, program: str,
                      epsilon: float, sampling: str, budget: int | None) -> dict:
    """One program's campaign at one epsilon, replayed on its measured grid and scored: what
    ``perfcast sensitivity-eval`` prints.

    The same campaigns as :func:`evaluate_paper` (:func:`evaluate_program`, and
    :func:`evaluate_fixed` for the adaptive sampler at a given budget), under
    ``settings.ceiling`` with ``settings.peaks``.

    Parameters
    ----------
    settings : EvaluationSettings
        Ceiling, peaks, grid layouts, Latin hypercube repeats and seed.
    data : str or Path
        The measurement table.
    program : str
        The program, as named in the table.
    epsilon : float
        Binary search's threshold (``lhs`` and ``adaptive`` use its counts).
    sampling : str
        ``binary``, ``lhs`` (averaged over ``settings.lhs_repeats`` seeds) or ``adaptive``.
    budget : int or None
        ``adaptive``: the most grid points measured (None: binary search's count).

    Returns
    -------
    dict
        Steps, whole-grid and in-box average absolute error, worst error, chosen levels, where
        the ceiling comes from, the cells without a measurement (``failed_cells``,
        ``failed_points``: counted as failed runs, :meth:`MeasuredGrid.failed_points`), and
        the paper's Table 4 steps and Table 5 error for the program (None where it gives
        none).

    Raises
    ------
    InputError
        an unreadable table, or a program it does not hold.

    Examples
    --------
    >>> import tempfile
    >>> from perfcast.settings import build, validate
    >>> replay = validate({"replay": {"ceiling": "none"}}, "sensitivity")["replay"]
    >>> settings = build(EvaluationSettings, {**replay, "seed": 1})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     table = Path(tmp, "t.csv")
    ...     _ = table.write_text("program,cpu_cores,metric,value\\n"
    ...                          + "".join(f"p,{c},runtime_s,{8 / c}\\n" for c in (1, 2, 4, 8)))
    ...     out = evaluate_campaign(settings, data=table, program="p", epsilon=0.1,
    ...                             sampling="binary", budget=None)
    >>> out["steps"]
    {'probes_1d': 4, 'product_points': 4, 'runs_total': 5}
    >>> out["average_absolute_error"], out["chosen"]
    (0.0, {'cpu_cores': [1, 2, 4, 8]})
    """
    grid = load_grids(data, [program], settings.layouts)[program]
    peaks = resolve_peaks(settings.ceiling, settings.peaks).get(program)
    ev = evaluate_program(grid, epsilon, peaks=peaks,
                          lhs_repeats=settings.lhs_repeats if sampling == "lhs" else 1,
                          seed=settings.seed)
    row = next(r for r in ev.rows() if r["sampling"] == sampling)
    failed = grid.failed_points()
    if sampling == "adaptive" and budget is not None:
        row = next(r for r in evaluate_fixed(grid, peaks=peaks, budget=budget)
                   if r["sampling"] == "adaptive_paper")
    out = {
        "program": program, "epsilon": epsilon, "sampling": sampling,
        "ceiling": settings.ceiling, "metric": grid.metric,
        "ceiling_source": ceiling_source(program, settings.ceiling, peaks),
        "higher_is_better": grid.higher_is_better,
        "steps": {"probes_1d": int(row["probes_1d"]),
                  "product_points": int(row["product_points"]),
                  "runs_total": int(row["runs_total"])},
        "average_absolute_error": row["mae_grid"],
        "average_absolute_error_in_box": row["mae_box"],
        "max_abs_error": row["max_abs_error"],
        "grid_points": row["grid_points"], "ceiling_points": row["ceiling_points"],
        "failed_cells": len(failed), "failed_points": failed,
        "chosen": json.loads(row["chosen"]),
        "paper": {"steps_table4": published.TABLE4_STEPS.get(program),
                  "mae_table5": published.TABLE5_MAE.get(program)},
    }
    if sampling == "lhs":
        out["lhs_repeats"] = settings.lhs_repeats
        out["average_absolute_error_range"] = [_finite(row["mae_grid_min"]),
                                               _finite(row["mae_grid_max"])]
    if sampling == "adaptive":
        out["budget"] = int(row["budget"])
    return out


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def load_grids(data: str | Path, programs: Sequence[str],
               layouts: Mapping[str, GridLayout]) -> dict[str, MeasuredGrid]:
    """Every program's measured grid.

    Parameters
    ----------
    data : str or Path
        The measurement table (:func:`~perfcast.sensitivity.replay.read_measurements`).
    programs : sequence of str
        The programs wanted (empty: every program of the table).
    layouts : Mapping[str, GridLayout]
        Program -> grid layout (``sensitivity.replay.layouts``), overriding
        :data:`perfcast.sensitivity.published.ARCP_LAYOUTS`; a program in neither is taken as
        measured (:data:`~perfcast.sensitivity.replay.AS_MEASURED`).

    Returns
    -------
    dict
        program -> :class:`~perfcast.sensitivity.replay.MeasuredGrid`, by name.

    Raises
    ------
    InputError
        an unreadable table, or a program it does not hold.
    """
    df = read_measurements(data)
    names = sorted(programs) if programs else sorted(df["program"].unique())
    lay = {**published.ARCP_LAYOUTS, **layouts}
    return {p: MeasuredGrid.from_frame(df, p, lay.get(p, AS_MEASURED)) for p in names}


def resolve_peaks(ceiling: str, overrides: Mapping[str, Mapping] | None
                  ) -> dict[str, dict[str, float]]:
    """Peak usage per program for the resource ceiling.

    Parameters
    ----------
    ceiling : str
        ``table4``: the peaks implied by the "Ceiling" column of Wang et al. (2017), Table 4
        (:data:`perfcast.sensitivity.published.TABLE4_PEAKS`); ``none``: no peaks (every axis
        profiled up to its top level).
    overrides : Mapping or None
        Program -> {axis: peak}, replacing a program's peaks (``sensitivity.replay.peaks``).

    Returns
    -------
    dict
        program -> {axis column: peak}.

    Raises
    ------
    ValueError
        ``ceiling`` is neither ``table4`` nor ``none``.

    Examples
    --------
    >>> resolve_peaks("table4", {"p": {"cpu_cores": 2}})["mg.c.8"]
    {'cpu_cores': 8, 'mem_gb': 4.0}
    >>> resolve_peaks("none", {"p": {"cpu_cores": 2}})
    {'p': {'cpu_cores': 2}}
    """
    if ceiling not in ("table4", "none"):
        raise ValueError(f"ceiling must be 'table4' or 'none', got {ceiling!r}")
    base = dict(published.TABLE4_PEAKS) if ceiling == "table4" else {}
    base.update({k: dict(v) for k, v in (overrides or {}).items()})
    return base


def ceilings_evaluated(ceiling: str) -> list[str]:
    """The configured ceiling first (the headline), then ``none`` beside it."""
    return [ceiling] if ceiling == "none" else [ceiling, "none"]


def ceiling_source(program: str, ceiling: str, peaks: Mapping | None) -> str:
    """Where a program's resource ceiling comes from, in words (for the table).

    Parameters
    ----------
    program : str
        The program.
    ceiling : str
        The ceiling evaluated (``table4`` or ``none``).
    peaks : Mapping or None
        The program's peaks under it (:func:`resolve_peaks`).

    Returns
    -------
    str
    """
    if not peaks:
        return "none: every axis up to its top level" if ceiling == "none" else (
            f"{ceiling}: no peak for this program, every axis up to its top level")
    where = ", ".join(f"{k} {v:g}" for k, v in sorted(peaks.items()))
    if ceiling == "table4" and dict(peaks) == published.TABLE4_PEAKS.get(program):
        return (f"table4: peaks {where} back-computed from Table 4's own 'Ceiling' step count "
                "(not measured; so meeting Table 4's steps is partly circular)")
    return f"{ceiling}: peaks {where} from the config (sensitivity.replay.peaks)"


def evaluate_paper(data: str | Path, settings: EvaluationSettings
                   ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The method replayed on every program of ``data`` and every epsilon, under the configured
    ceiling and without one.

    Parameters
    ----------
    data : str or Path
        The measurement table (the paper's ``arcp_measurements.csv``).
    settings : EvaluationSettings
        Programs (empty: all), epsilons, grid layouts, ceiling and peaks, Latin hypercube
        repeats and seed.

    Returns
    -------
    results : pandas.DataFrame
        one row per program x ceiling (:func:`ceilings_evaluated`) x epsilon x sampling
        (``binary``, ``lhs``, ``adaptive``), plus per program and ceiling the rows that do not
        depend on epsilon (``brute``, ``adaptive_paper``; NaN epsilon): steps, errors,
        ``ceiling_source``.
    cells : pandas.DataFrame
        every cell's truth and binary-search prediction, per program and epsilon, under the
        configured ceiling.

    Examples
    --------
    See :func:`perfcast.sensitivity.rules.replay_evaluation`, which writes these tables.
    """
    grids = load_grids(data, settings.programs, settings.layouts)
    rows, cells = [], []
    for ceiling in ceilings_evaluated(settings.ceiling):
        pk = resolve_peaks(ceiling, settings.peaks if ceiling == settings.ceiling else None)
        for name, grid in grids.items():
            src = ceiling_source(name, ceiling, pk.get(name))
            new = []
            for eps in settings.epsilons:
                ev = evaluate_program(grid, float(eps), peaks=pk.get(name),
                                      lhs_repeats=settings.lhs_repeats, seed=settings.seed)
                new += ev.rows()
                if ceiling == settings.ceiling:
                    cells.append(ev.cells())
            new += evaluate_fixed(grid, peaks=pk.get(name), budget=None)
            rows += [{**r, "ceiling": ceiling, "headline": ceiling == settings.ceiling,
                      "ceiling_source": src} for r in new]
    res = pd.DataFrame(rows)
    res["sampling"] = pd.Categorical(res["sampling"], categories=list(SAMPLINGS), ordered=True)
    res = res.sort_values(["ceiling", "program", "epsilon", "sampling"], kind="stable",
                          na_position="last")
    res["sampling"] = res["sampling"].astype(str)
    res = res[["program", "ceiling", *[c for c in res.columns if c not in
                                       ("program", "ceiling")]]]
    allc = pd.concat(cells, ignore_index=True).sort_values(
        ["program", "epsilon", *AXES], kind="stable", na_position="first")
    return res.reset_index(drop=True), allc.reset_index(drop=True)


def _paper_mae(program: str) -> tuple[float, str]:
    if program in published.TABLE5_MAE:
        return published.TABLE5_MAE[program], "Table 5"
    if program in published.FIG10_ZERO:
        return 0.0, "Fig. 10 (text: zero)"
    return float("nan"), ""


def _why(b: pd.Series, paper_steps: float, paper_mae: float) -> str:
    reasons = []
    if np.isfinite(paper_steps) and b["product_points"] > paper_steps:
        chosen = json.loads(b["chosen"])
        bis = json.loads(b["bisected"])
        near = [(d, lo, hi, ds) for d, segs in bis.items() for lo, hi, ds in segs]
        txt = (f"{b['product_points']} > {int(paper_steps)} steps: binary search kept "
               + " x ".join(f"{len(v)} {k}" for k, v in chosen.items()))
        if near:
            d, lo, hi, ds = min(near, key=lambda t: t[3])
            txt += (f"; its closest call bisected {d} {lo:g}-{hi:g}, where S changes by "
                    f"{ds:.3f} > epsilon {b['epsilon']:g}")
        reasons.append(txt)
    if np.isfinite(paper_mae) and b["mae_grid"] > paper_mae + 1e-12:
        wp = json.loads(b["worst_point"])
        where = ", ".join(f"{k}={v:g}" for k, v in wp.items())
        box = (f" (in the profiled box {b['mae_box']:.4f}: the cells above the ceiling are "
               "held at the ceiling's value)" if b["mae_box"] < b["mae_grid"] - 1e-12 else "")
        reasons.append(f"whole-grid error {b['mae_grid']:.4f} > {paper_mae:.4f}{box}; largest "
                       f"at {where} (true {b['worst_truth']:.3f}, interpolated "
                       f"{b['worst_predicted']:.3f})")
    return "; ".join(reasons)


def _verdict(steps: float, mae: float, paper_steps: float, paper_mae: float) -> str:
    if not np.isfinite(paper_steps) and not np.isfinite(paper_mae):
        return "no paper figure"
    steps_ok = not np.isfinite(paper_steps) or steps <= paper_steps
    err_ok = not np.isfinite(paper_mae) or mae <= paper_mae + 1e-12
    return "meets" if steps_ok and err_ok else "misses"


def _one(g: pd.DataFrame, sampling: str) -> pd.Series | None:
    sub = g[g["sampling"] == sampling]
    return sub.iloc[0] if len(sub) else None


def comparison_table(results: pd.DataFrame) -> pd.DataFrame:
    """Program x epsilon: our steps and errors beside the paper's, with verdicts and reasons.

    The errors are over the whole measured grid (``mae_*``; binary search's in-box error is
    ``mae_binary_box``), under the headline ceiling; binary search's and the adaptive sampler's
    steps and error without a ceiling stand beside them (``*_no_ceiling``).

    Parameters
    ----------
    results : pandas.DataFrame
        :func:`evaluate_paper`'s results.

    Returns
    -------
    pandas.DataFrame
        per program and epsilon, binary search's steps and errors, the Latin hypercube's and the
        adaptive sampler's at the same count, the adaptive sampler at Table 4's count and brute
        force, Table 4's steps and Table 5's (or Fig. 10's) error, whether binary search
        (``verdict``) and the adaptive sampler at Table 4's count (``adaptive_verdict``) meet
        them, why not, and where the ceiling comes from.
    """
    head = results[results["headline"]]
    other = results[~results["headline"]]
    rows = []
    for (prog, eps), g in head.groupby(["program", "epsilon"], sort=True):
        b, lhs, ad = _one(g, "binary"), _one(g, "lhs"), _one(g, "adaptive")
        fixed = head[(head["program"] == prog) & head["epsilon"].isna()]
        brute, adp = _one(fixed, "brute"), _one(fixed, "adaptive_paper")
        o = other[other["program"] == prog]
        ob = _one(o[np.isclose(o["epsilon"], eps)], "binary") if len(o) else None
        oadp = _one(o[o["epsilon"].isna()], "adaptive_paper") if len(o) else None
        p_steps = float(published.TABLE4_STEPS.get(prog, np.nan))
        p_mae, src = _paper_mae(prog)
        verdict = _verdict(b["product_points"], b["mae_grid"], p_steps, p_mae)
        nan = float("nan")
        rows.append({
            "program": prog, "epsilon": eps, "ceiling": b["ceiling"],
            "probes_1d": int(b["probes_1d"]), "product_points": int(b["product_points"]),
            "runs_total": int(b["runs_total"]), "grid_points": int(b["grid_points"]),
            "ceiling_points": int(b["ceiling_points"]), "failed_cells": int(b["failed_cells"]),
            "paper_steps": p_steps, "paper_ceiling_steps":
                float(published.TABLE4_CEILING_STEPS.get(prog, np.nan)),
            "mae_binary": float(b["mae_grid"]), "mae_binary_box": float(b["mae_box"]),
            "mae_lhs": float(lhs["mae_grid"]),
            "mae_lhs_range": f"{lhs['mae_grid_min']:.4f}-{lhs['mae_grid_max']:.4f}",
            "mae_adaptive": float(ad["mae_grid"]),
            "adaptive_paper_runs": int(adp["product_points"]),
            "mae_adaptive_paper": float(adp["mae_grid"]),
            "brute_runs": int(brute["product_points"]), "mae_brute": float(brute["mae_grid"]),
            "product_points_no_ceiling": nan if ob is None else int(ob["product_points"]),
            "mae_binary_no_ceiling": nan if ob is None else float(ob["mae_grid"]),
            "mae_adaptive_paper_no_ceiling": nan if oadp is None else float(oadp["mae_grid"]),
            "paper_mae": p_mae, "paper_mae_source": src,
            "steps_ok": bool(not np.isfinite(p_steps) or b["product_points"] <= p_steps),
            "error_ok": bool(not np.isfinite(p_mae) or b["mae_grid"] <= p_mae + 1e-12),
            "verdict": verdict,
            "adaptive_verdict": _verdict(adp["product_points"], adp["mae_grid"], p_steps,
                                         p_mae),
            "why": _why(b, p_steps, p_mae),
            "ceiling_source": b["ceiling_source"],
            "data_note": published.DATA_NOTES.get(prog, ""),
        })
    return pd.DataFrame(rows)


def epsilon_summary(results: pd.DataFrame) -> pd.DataFrame:
    """Per epsilon: total steps and mean whole-grid errors beside Fig. 10, 11 and 12 (headline
    ceiling).

    Parameters
    ----------
    results : pandas.DataFrame
        :func:`evaluate_paper`'s results.

    Returns
    -------
    pandas.DataFrame
        one row per epsilon.
    """
    rows = []
    t5 = set(published.TABLE5_MAE)
    head = results[results["headline"]]
    for eps, g in head.groupby("epsilon", sort=True):
        b, lhs = g[g["sampling"] == "binary"], g[g["sampling"] == "lhs"]
        ad = g[g["sampling"] == "adaptive"]
        rows.append({
            "epsilon": eps, "programs": int(b.shape[0]),
            "product_points_total": int(b["product_points"].sum()),
            "probes_1d_total": int(b["probes_1d"].sum()),
            "paper_fig12_steps": published.FIG12_STEPS.get(round(eps, 3), np.nan),
            "paper_table4_steps_total": int(sum(published.TABLE4_STEPS.get(p, 0)
                                                for p in b["program"])),
            "mae_binary_mean": float(b["mae_grid"].mean()),
            "mae_binary_box_mean": float(b["mae_box"].mean()),
            "mae_lhs_mean": float(lhs["mae_grid"].mean()),
            "mae_adaptive_mean": float(ad["mae_grid"].mean()),
            "mae_binary_mean_table5": float(b[b["program"].isin(t5)]["mae_grid"].mean()),
            "mae_lhs_mean_table5": float(lhs[lhs["program"].isin(t5)]["mae_grid"].mean()),
            "mae_adaptive_mean_table5": float(ad[ad["program"].isin(t5)]["mae_grid"].mean()),
            "paper_fig11_mae": published.FIG11_MAE.get(round(eps, 3), np.nan),
            "paper_table5_mean": published.TABLE5_MEAN,
            "paper_fig10_binary": published.FIG10_MAE["binary"],
            "paper_fig10_lhs": published.FIG10_MAE["lhs"],
        })
    return pd.DataFrame(rows)


def error_vs_runs(results: pd.DataFrame) -> pd.DataFrame:
    """Whole-grid error against runs, per program, ceiling and sampling: binary search and
    Latin hypercube at each epsilon, every step of the adaptive refinement, brute force, and
    the paper's Table 4 / Table 5 point (the figure's data).

    Parameters
    ----------
    results : pandas.DataFrame
        :func:`evaluate_paper`'s results.

    Returns
    -------
    pandas.DataFrame
        ``program, ceiling, sampling, runs, mae_grid, mae_box``, sorted.
    """
    rows = []
    for r in results.itertuples(index=False):
        if r.sampling in ("binary", "lhs", "brute"):
            rows.append((r.program, r.ceiling, r.sampling, int(r.product_points),
                         float(r.mae_grid), float(r.mae_box)))
        elif r.sampling == "adaptive_paper":
            for runs, eg, eb in json.loads(r.curve):
                rows.append((r.program, r.ceiling, "adaptive", int(runs), eg, eb))
    for prog, ceiling in results[["program", "ceiling"]].drop_duplicates().itertuples(
            index=False):
        p_mae, _ = _paper_mae(prog)
        if prog in published.TABLE4_STEPS and np.isfinite(p_mae):
            rows.append((prog, ceiling, "paper", published.TABLE4_STEPS[prog], p_mae,
                         float("nan")))
    out = pd.DataFrame(rows, columns=["program", "ceiling", "sampling", "runs", "mae_grid",
                                      "mae_box"]).drop_duplicates()
    return out.sort_values(["program", "ceiling", "sampling", "runs", "mae_grid"],
                           kind="stable").reset_index(drop=True)
