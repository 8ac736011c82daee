"""The replay evaluation's comparison with the paper, rendered as Markdown.

The tables come from :mod:`perfcast.sensitivity.evaluation` (scoring); this module only lays
them out: per epsilon beside Figs. 10-12, per program at the epsilon Table 4 is compared at
(:data:`perfcast.sensitivity.published.TABLE4_EPSILON`), without a ceiling beside it, every
program and epsilon, and where each ceiling comes from.

Reference: L. Wang, D. Qian, Z. Luan, G. Wei, R. Wang, H. Yang, "Speeding up profiling program's
runtime characteristics for workload consolidation", PLoS ONE 12(4): e0175861, 2017.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfcast.sensitivity import published


def _cell(v: object) -> str:
    """One table cell: booleans as yes/no, floats to 4 significant digits (non-finite: empty),
    ``|`` (the column separator) as ``/``."""
    if isinstance(v, bool | np.bool_):
        return "yes" if v else "no"
    if isinstance(v, float | np.floating):
        return "" if not np.isfinite(v) else f"{v:.4g}"
    return str(v).replace("|", "/")


def _md(df: pd.DataFrame) -> list[str]:
    """``df`` as the lines of a Markdown table, then an empty line."""
    out = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * len(df.columns)]
    out += ["| " + " | ".join(_cell(v) for v in row) + " |"
            for row in df.itertuples(index=False)]
    return out + [""]


def comparison_markdown(table: pd.DataFrame, summary: pd.DataFrame) -> str:
    """The comparison as Markdown: per epsilon against Figs. 10-12, then per program at
    :data:`~perfcast.sensitivity.published.TABLE4_EPSILON` beside Table 4 and Table 5.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`~perfcast.sensitivity.evaluation.comparison_table`'s table.
    summary : pandas.DataFrame
        :func:`~perfcast.sensitivity.evaluation.epsilon_summary`'s table.

    Returns
    -------
    str
        The Markdown document (sections: per epsilon, per program, without a ceiling, every
        program and epsilon, where the ceiling comes from).

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({
    ...     "program": ["mg.c.8"], "epsilon": [0.3], "ceiling": ["table4"], "probes_1d": [6],
    ...     "product_points": [12], "grid_points": [91], "ceiling_points": [35],
    ...     "failed_cells": [14],
    ...     "paper_steps": [12.0], "mae_binary": [0.01234], "mae_binary_box": [0.01],
    ...     "mae_lhs": [0.05], "mae_lhs_range": ["0.0400-0.0600"], "mae_adaptive": [0.02],
    ...     "adaptive_paper_runs": [12], "mae_adaptive_paper": [0.02], "brute_runs": [35],
    ...     "mae_brute": [0.0], "paper_mae": [0.0206], "paper_mae_source": ["Table 5"],
    ...     "verdict": ["meets"], "adaptive_verdict": ["meets"], "why": [""],
    ...     "data_note": [""], "product_points_no_ceiling": [20],
    ...     "mae_binary_no_ceiling": [0.011], "mae_adaptive_paper_no_ceiling": [0.03],
    ...     "ceiling_source": ["table4: peaks"]})
    >>> summary = pd.DataFrame({
    ...     "epsilon": [0.3], "product_points_total": [12], "probes_1d_total": [6],
    ...     "paper_fig12_steps": [float("nan")], "paper_table4_steps_total": [12],
    ...     "mae_binary_mean": [0.01234], "mae_binary_box_mean": [0.01], "mae_lhs_mean": [0.05],
    ...     "mae_adaptive_mean": [0.02], "mae_binary_mean_table5": [0.01234],
    ...     "mae_adaptive_mean_table5": [0.02], "paper_fig11_mae": [0.02]})
    >>> text = comparison_markdown(table, summary)
    >>> text.splitlines()[0]
    "# Resource sensitivity: the method replayed on the paper's measurements"
    >>> row = next(line for line in text.splitlines() if line.startswith("| mg.c.8 | 6 |"))
    >>> row.split(" | ")[:7]  # program, probes, steps, Table 4's steps, errors (4 digits)
    ['| mg.c.8', '6', '12', '12', '0.01234', '0.01', '0.05']
    """
    ceiling = str(table["ceiling"].iloc[0]) if len(table) else ""
    lines = [
        "# Resource sensitivity: the method replayed on the paper's measurements",
        "",
        "Wang et al. 2017 (PLoS ONE 12(4): e0175861), data `arcp_measurements.csv`. Steps = runs "
        "measured (the Cartesian product of the levels chosen; binary search's 1-D probes are "
        "part of it). Error = average absolute error of the interpolated sensitivity against "
        "the measured value over the **whole measured grid** (every cell the program was "
        "measured at, failed runs as 0), the paper's metric; the verdicts use it. `*_box` is "
        "the error inside the profiled box only (cells up to the resource ceiling), which "
        "flatters a narrow ceiling.",
        "",
        f"Ceiling: `{ceiling}`; the `*_no_ceiling` columns replay the same campaign with "
        "`ceiling: none` (every axis up to its top level). Where each program's ceiling comes "
        "from is in the last section. `adaptive`: our budgeted joint refinement at binary "
        "search's run count; `adaptive_paper`: the same at the paper's Table 4 count.",
        "",
        "## Per epsilon (all programs; paper: Fig. 10, 11, 12)",
        "",
    ]
    cols = ["epsilon", "product_points_total", "probes_1d_total", "paper_fig12_steps",
            "paper_table4_steps_total", "mae_binary_mean", "mae_binary_box_mean",
            "mae_lhs_mean", "mae_adaptive_mean", "mae_binary_mean_table5",
            "mae_adaptive_mean_table5", "paper_fig11_mae"]
    lines += _md(summary[cols])
    fig10 = published.FIG10_MAE
    lines += [f"Paper, Fig. 10 (binary vs Latin hypercube at equal counts): "
              f"{fig10['binary']} vs {fig10['lhs']}; Table 5 mean {published.TABLE5_MEAN}. "
              "Fig. 12's totals do not add up to Table 4's own total.", ""]
    epsilon = published.TABLE4_EPSILON
    t = table[np.isclose(table["epsilon"], epsilon)]
    lines += [f"## Per program at epsilon {epsilon:g} (paper: Table 4, Table 5)", "",
              f"Table 4 states no epsilon; at {epsilon:g} binary search needs exactly its PARSEC "
              "counts.", ""]
    cols = ["program", "probes_1d", "product_points", "paper_steps", "mae_binary",
            "mae_binary_box", "mae_lhs", "mae_adaptive", "adaptive_paper_runs",
            "mae_adaptive_paper", "brute_runs", "mae_brute", "paper_mae", "paper_mae_source",
            "verdict", "adaptive_verdict", "why", "data_note"]
    lines += _md(t[cols])
    lines += ["## Without a ceiling, beside it", ""]
    cols = ["program", "product_points", "mae_binary", "product_points_no_ceiling",
            "mae_binary_no_ceiling", "mae_adaptive_paper", "mae_adaptive_paper_no_ceiling",
            "paper_mae"]
    lines += _md(t[cols])
    lines += ["## Every program and epsilon", ""]
    cols = ["program", "epsilon", "probes_1d", "product_points", "grid_points", "paper_steps",
            "mae_binary", "mae_binary_box", "mae_lhs", "mae_lhs_range", "mae_adaptive",
            "paper_mae", "verdict"]
    lines += _md(table[cols])
    lines += ["## Where the ceiling comes from", ""]
    lines += ["`failed_cells`: grid cells without a measurement, counted as failed runs "
              "(sensitivity 0).", ""]
    lines += _md(t[["program", "ceiling_points", "grid_points", "failed_cells",
                    "ceiling_source"]])
    return "\n".join(lines)
