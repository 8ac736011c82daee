"""Scoring the method against a dense ground truth: the paper's own measurements, replayed.

For every program with a dense grid and every epsilon, the whole campaign (ceiling from the
peaks, binary search, product, sequential PCHIP) runs on the :class:`ReplayBackend`; the
interpolated grid is scored against the measured one (average absolute error, the paper's
metric, over the profiled box below the ceiling; the whole grid is reported too). Latin
hypercube sampling at the same per-dimension counts is averaged over ``lhs_repeats`` seeds.
The comparison table sets each result beside the paper's Table 4 / Table 5 / Fig. 10-12 and says
where it does not reach them, and why.

Reference: L. Wang, D. Qian, Z. Luan, G. Wei, R. Wang, H. Yang, "Speeding up profiling program's
runtime characteristics for workload consolidation", PLoS ONE 12(4): e0175861, 2017; its
published numbers are in :mod:`perfcast.sensitivity.published`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from perfcast.sensitivity import published
from perfcast.sensitivity.profile import ProfileResult, profile
from perfcast.sensitivity.replay import GridLayout, MeasuredGrid, ReplayBackend, read_measurements
from perfcast.sensitivity.settings import EvaluationSettings

log = logging.getLogger(__name__)
AXES = ("cpu_cores", "mem_gb", "net_code", "io_mbps")


def _seed(seed: int, program: str, epsilon: float, rep: int) -> np.random.SeedSequence:
    return np.random.SeedSequence([seed, *program.encode(), int(round(epsilon * 1000)), rep])


@dataclass(frozen=True)
class ProgramEval:
    """Binary and LHS campaigns of one program at one epsilon."""

    grid: MeasuredGrid
    binary: ProfileResult
    lhs: list[ProfileResult]

    def rows(self) -> list[dict]:
        """Two rows, ``binary`` and ``lhs`` (mean, range and worst case over the seeds): steps,
        errors inside the profiled box and over the whole grid, chosen levels."""
        truth = self.grid.truth()
        out = []
        b = self.binary.score(truth)
        common = {"program": self.grid.program, "metric": self.grid.metric,
                  "higher_is_better": self.grid.higher_is_better,
                  "epsilon": self.binary.epsilon, "grid_points": int(truth.size),
                  "ceiling_points": int(self.binary.region_mask().sum()),
                  "dimensions": ",".join(self.grid.model.names)}
        out.append({**common, "sampling": "binary", **self.binary.steps,
                    "mae": b["mae"], "mae_min": b["mae"], "mae_max": b["mae"],
                    "mae_full_grid": b["mae_full_grid"], "max_abs_error": b["max_abs_error"],
                    "worst_point": json.dumps(b["worst_point"], sort_keys=True),
                    "worst_truth": b["worst_truth"], "worst_predicted": b["worst_predicted"],
                    "chosen": json.dumps(self._chosen(self.binary), sort_keys=True),
                    "bisected": json.dumps(self.binary.splits, sort_keys=True)})
        scores = [r.score(truth) for r in self.lhs]
        maes = np.array([s["mae"] for s in scores])
        w = int(np.argmax(maes))
        out.append({**common, "sampling": "lhs", "probes_1d": 0,
                    "product_points": self.lhs[0].product_points,
                    "runs_total": self.lhs[0].product_points + 1,
                    "mae": float(maes.mean()), "mae_min": float(maes.min()),
                    "mae_max": float(maes.max()),
                    "mae_full_grid": float(np.mean([s["mae_full_grid"] for s in scores])),
                    "max_abs_error": float(max(s["max_abs_error"] for s in scores)),
                    "worst_point": json.dumps(scores[w]["worst_point"], sort_keys=True),
                    "worst_truth": scores[w]["worst_truth"],
                    "worst_predicted": scores[w]["worst_predicted"],
                    "chosen": json.dumps(self._chosen(self.lhs[w]), sort_keys=True),
                    "bisected": "{}"})
        return out

    @staticmethod
    def _chosen(r: ProfileResult) -> dict[str, list[float]]:
        return {d.name: [d.levels[i] for i in c] for d, c in zip(r.model.dims, r.chosen,
                                                                  strict=True)}

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


def evaluate_program(grid: MeasuredGrid, epsilon: float, *, peaks: Mapping | None = None,
                     lhs_repeats: int, seed: int) -> ProgramEval:
    """Replay binary search and Latin hypercube sampling on one measured grid.

    Parameters
    ----------
    grid : the program's measured grid (the dense truth).
    epsilon : binary recursive search bisects a segment while ``|S(high) - S(low)| > epsilon``.
    peaks : peak usage per axis standing in for the monitored unrestricted run (the resource
        ceiling); None or a missing axis: the whole axis.
    lhs_repeats : Latin hypercube campaigns at binary search's per-dimension counts, one seed
        each (at least one is run).
    seed : the seeds of the Latin hypercube campaigns derive from it, the program and epsilon.

    Returns
    -------
    ProgramEval
        the binary campaign and the Latin hypercube ones.
    """
    b = profile(ReplayBackend(grid, peaks), epsilon=epsilon, program=grid.program)
    counts = [len(c) for c in b.chosen]
    lhs = [profile(ReplayBackend(grid, peaks), epsilon=epsilon, sampling="lhs", counts=counts,
                   seed=_seed(seed, grid.program, epsilon, k), program=grid.program)
           for k in range(max(1, lhs_repeats))]
    return ProgramEval(grid, b, lhs)


def load_grids(data: str | Path, programs: Sequence[str] | None = None,
               layouts: Mapping[str, Mapping] | None = None) -> dict[str, MeasuredGrid]:
    """Every program's measured grid.

    Parameters
    ----------
    data : the measurement table (:func:`~perfcast.sensitivity.replay.read_measurements`).
    programs : the programs wanted (None or empty: every program of the table).
    layouts : program -> grid layout (:class:`~perfcast.sensitivity.replay.GridLayout`
        keys) overriding :data:`perfcast.sensitivity.published.ARCP_LAYOUTS`.

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
    lay = {**published.ARCP_LAYOUTS, **(layouts or {})}
    return {p: MeasuredGrid.from_frame(df, p, GridLayout.from_config(lay.get(p))) for p in names}


def resolve_peaks(ceiling: str, overrides: Mapping[str, Mapping] | None = None
                  ) -> dict[str, dict[str, float]]:
    """Peak usage per program for the resource ceiling.

    Parameters
    ----------
    ceiling : ``table4``: the peaks implied by the "Ceiling" column of Wang et al. (2017),
        Table 4 (:data:`perfcast.sensitivity.published.TABLE4_PEAKS`); ``none``: no peaks (every
        axis profiled up to its top level).
    overrides : program -> {axis: peak}, replacing a program's peaks.

    Returns
    -------
    dict
        program -> {axis column: peak}.

    Raises
    ------
    ValueError
        ``ceiling`` is neither ``table4`` nor ``none``.
    """
    if ceiling not in ("table4", "none"):
        raise ValueError(f"ceiling must be 'table4' or 'none', got {ceiling!r}")
    base = dict(published.TABLE4_PEAKS) if ceiling == "table4" else {}
    base.update({k: dict(v) for k, v in (overrides or {}).items()})
    return base


def evaluate_paper(data: str | Path, settings: EvaluationSettings
                   ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The method replayed on every program of ``data`` and every epsilon.

    Parameters
    ----------
    data : the measurement table (the paper's ``arcp_measurements.csv``).
    settings : programs (empty: all), epsilons, grid layouts, ceiling and peaks, Latin
        hypercube repeats and seed.

    Returns
    -------
    results : pandas.DataFrame
        one row per program x epsilon x sampling (``binary``, ``lhs``): steps and errors.
    cells : pandas.DataFrame
        every cell's truth and binary-search prediction, per program and epsilon.
    """
    grids = load_grids(data, settings.programs, settings.layouts)
    pk = resolve_peaks(settings.ceiling, settings.peaks)
    rows, cells = [], []
    for name, grid in grids.items():
        for eps in settings.epsilons:
            ev = evaluate_program(grid, float(eps), peaks=pk.get(name),
                                  lhs_repeats=settings.lhs_repeats, seed=settings.seed)
            rows += ev.rows()
            cells.append(ev.cells())
    res = pd.DataFrame(rows).sort_values(["program", "epsilon", "sampling"], kind="stable")
    res.insert(1, "ceiling", settings.ceiling)
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
    if np.isfinite(paper_mae) and b["mae"] > paper_mae + 1e-12:
        wp = json.loads(b["worst_point"])
        where = ", ".join(f"{k}={v:g}" for k, v in wp.items())
        reasons.append(f"error {b['mae']:.4f} > {paper_mae:.4f}: largest at {where} "
                       f"(true {b['worst_truth']:.3f}, interpolated {b['worst_predicted']:.3f})")
    return "; ".join(reasons)


def comparison_table(results: pd.DataFrame) -> pd.DataFrame:
    """Program x epsilon: our steps and errors beside the paper's, with a verdict and reason.

    Parameters
    ----------
    results : :func:`evaluate_paper`'s results.

    Returns
    -------
    pandas.DataFrame
        per program and epsilon, binary search's steps and errors, the Latin hypercube's error,
        Table 4's steps and Table 5's (or Fig. 10's) error, whether they are met, and why not.
    """
    rows = []
    for (prog, eps), g in results.groupby(["program", "epsilon"], sort=True):
        b = g[g["sampling"] == "binary"].iloc[0]
        lhs = g[g["sampling"] == "lhs"].iloc[0]
        p_steps = float(published.TABLE4_STEPS.get(prog, np.nan))
        p_mae, src = _paper_mae(prog)
        steps_ok = bool(not np.isfinite(p_steps) or b["product_points"] <= p_steps)
        err_ok = bool(not np.isfinite(p_mae) or b["mae"] <= p_mae + 1e-12)
        if not np.isfinite(p_steps) and not np.isfinite(p_mae):
            verdict = "no paper figure"
        else:
            verdict = "meets" if steps_ok and err_ok else "misses"
        rows.append({
            "program": prog, "epsilon": eps,
            "probes_1d": int(b["probes_1d"]), "product_points": int(b["product_points"]),
            "runs_total": int(b["runs_total"]), "grid_points": int(b["grid_points"]),
            "paper_steps": p_steps, "paper_ceiling_steps":
                float(published.TABLE4_CEILING_STEPS.get(prog, np.nan)),
            "mae_binary": float(b["mae"]), "mae_lhs": float(lhs["mae"]),
            "mae_lhs_range": f"{lhs['mae_min']:.4f}-{lhs['mae_max']:.4f}",
            "mae_binary_full_grid": float(b["mae_full_grid"]),
            "paper_mae": p_mae, "paper_mae_source": src,
            "steps_ok": steps_ok, "error_ok": err_ok, "verdict": verdict,
            "why": _why(b, p_steps, p_mae),
            "data_note": published.DATA_NOTES.get(prog, ""),
        })
    return pd.DataFrame(rows)


def epsilon_summary(results: pd.DataFrame) -> pd.DataFrame:
    """Per epsilon: total steps and mean errors beside Fig. 10, 11 and 12.

    Parameters
    ----------
    results : :func:`evaluate_paper`'s results.

    Returns
    -------
    pandas.DataFrame
        one row per epsilon.
    """
    rows = []
    t5 = set(published.TABLE5_MAE)
    for eps, g in results.groupby("epsilon", sort=True):
        b, lhs = g[g["sampling"] == "binary"], g[g["sampling"] == "lhs"]
        rows.append({
            "epsilon": eps, "programs": int(b.shape[0]),
            "product_points_total": int(b["product_points"].sum()),
            "probes_1d_total": int(b["probes_1d"].sum()),
            "paper_fig12_steps": published.FIG12_STEPS.get(round(eps, 3), np.nan),
            "paper_table4_steps_total": int(sum(published.TABLE4_STEPS.get(p, 0)
                                                for p in b["program"])),
            "mae_binary_mean": float(b["mae"].mean()),
            "mae_lhs_mean": float(lhs["mae"].mean()),
            "mae_binary_mean_table5": float(b[b["program"].isin(t5)]["mae"].mean()),
            "mae_lhs_mean_table5": float(lhs[lhs["program"].isin(t5)]["mae"].mean()),
            "paper_fig11_mae": published.FIG11_MAE.get(round(eps, 3), np.nan),
            "paper_table5_mean": published.TABLE5_MEAN,
            "paper_fig10_binary": published.FIG10_MAE["binary"],
            "paper_fig10_lhs": published.FIG10_MAE["lhs"],
        })
    return pd.DataFrame(rows)


def _cell(v: object) -> str:
    if isinstance(v, bool | np.bool_):
        return "yes" if v else "no"
    if isinstance(v, float | np.floating):
        return "" if not np.isfinite(v) else f"{v:.4g}"
    return str(v).replace("|", "/")


def _md(df: pd.DataFrame) -> list[str]:
    out = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * len(df.columns)]
    out += ["| " + " | ".join(_cell(v) for v in row) + " |"
            for row in df.itertuples(index=False)]
    return out + [""]


def comparison_markdown(table: pd.DataFrame, summary: pd.DataFrame,
                        headline_epsilon: float = 0.3) -> str:
    """The comparison as Markdown: per epsilon against Fig. 10-12, then per program.

    Parameters
    ----------
    table : :func:`comparison_table`'s table.
    summary : :func:`epsilon_summary`'s table.
    headline_epsilon : the epsilon of the per-program section set beside Table 4 (0.3
        reproduces its PARSEC counts).
    """
    lines = [
        "# Resource sensitivity: the method replayed on the paper's measurements",
        "",
        "Wang et al. 2017 (PLoS ONE 12(4): e0175861), data `arcp_measurements.csv`. Steps = runs "
        "measured (the Cartesian product of the levels binary search chose; the 1-D probes are "
        "part of it); error = average absolute error of the interpolated sensitivity against the "
        "dense measured grid inside the profiled box (cells up to the resource ceiling).",
        "",
        "## Per epsilon (all programs; paper: Fig. 10, 11, 12)",
        "",
    ]
    cols = ["epsilon", "product_points_total", "probes_1d_total", "paper_fig12_steps",
            "paper_table4_steps_total", "mae_binary_mean", "mae_lhs_mean",
            "mae_binary_mean_table5", "paper_fig11_mae"]
    lines += _md(summary[cols])
    fig10 = published.FIG10_MAE
    lines += [f"Paper, Fig. 10 (binary vs Latin hypercube at equal counts): "
              f"{fig10['binary']} vs {fig10['lhs']}; Table 5 mean {published.TABLE5_MEAN}. "
              "Fig. 12's totals do not add up to Table 4's own total.", ""]
    t = table[np.isclose(table["epsilon"], headline_epsilon)]
    lines += [f"## Per program at epsilon {headline_epsilon:g} (paper: Table 4, Table 5)", "",
              "Table 4 states no epsilon; at 0.3 binary search needs exactly its PARSEC counts.",
              ""]
    cols = ["program", "probes_1d", "product_points", "paper_steps", "mae_binary", "mae_lhs",
            "paper_mae", "paper_mae_source", "verdict", "why", "data_note"]
    lines += _md(t[cols])
    lines += ["## Every program and epsilon", ""]
    cols = ["program", "epsilon", "probes_1d", "product_points", "grid_points", "paper_steps",
            "mae_binary", "mae_lhs", "mae_lhs_range", "mae_binary_full_grid", "paper_mae",
            "verdict"]
    lines += _md(table[cols])
    return "\n".join(lines)
