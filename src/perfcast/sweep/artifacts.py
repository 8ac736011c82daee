"""Our paper artifacts of the sweep stage: the model table (as ARPE's Table 2) and a figure.

ARPE: https://github.com/martinamaggio/arpe (its paper's Table 2 lists each model's MSE and R^2).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from perfcast.plotting import PALETTE, new_figure, save_figure
from perfcast.sweep.table import ok_rows

TABLE_COLUMNS = ["campaign", "effect", "model", "kind", "order", "form", "n", "n_terms", "mse",
                 "r2", "adj_r2", "cv_rmse", "cv_smape", "order_by_training_error", "best"]


def model_table(models: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Every chosen candidate of every campaign's effects (a polynomial at its CV order), with
    training MSE, R^2, adjusted R^2 and CV RMSE; ``best`` marks the lowest CV error.

    Parameters
    ----------
    models : mapping of str to pandas.DataFrame
        Each campaign's models table (:func:`perfcast.sweep.selection.models_frame`).

    Returns
    -------
    pandas.DataFrame
        The :data:`TABLE_COLUMNS` the tables have, one row per chosen candidate, campaigns
        sorted.

    Examples
    --------
    >>> import pandas as pd
    >>> m = pd.DataFrame({"effect": "t", "model": ["poly[n]^1", "poly[n]^2"], "n": 8,
    ...                   "mse": [0.0025, 0.002], "chosen": [True, False], "best": [True, False]})
    >>> print(markdown(model_table({"demo": m})), end="")
    | campaign | effect | model | n | mse | order_by_training_error | best |
    |---|---|---|---|---|---|---|
    | demo | t | poly[n]^1 | 8 | 0.0025 |  | **yes** |
    """
    rows = []
    for campaign, df in sorted(models.items()):
        if df.empty:
            continue
        sub = df[df["chosen"]].copy()
        sub.insert(0, "campaign", campaign)
        rows.append(sub)
    if not rows:
        return pd.DataFrame(columns=TABLE_COLUMNS)
    tab = pd.concat(rows, ignore_index=True)
    if "order_by_training_error" not in tab.columns:
        tab["order_by_training_error"] = np.nan
    return tab[[c for c in TABLE_COLUMNS if c in tab.columns]].reset_index(drop=True)


def _fmt(v: object) -> str:
    if isinstance(v, bool | np.bool_):
        return "**yes**" if v else ""
    if isinstance(v, float | np.floating):
        return "" if not np.isfinite(v) else f"{v:.4g}"
    return "" if v is None else str(v)


def markdown(tab: pd.DataFrame) -> str:
    """A GitHub Markdown table of ``tab`` (4 significant digits)."""
    head = "| " + " | ".join(tab.columns) + " |"
    sep = "|" + "|".join("---" for _ in tab.columns) + "|"
    body = ["| " + " | ".join(_fmt(v) for v in row) + " |"
            for row in tab.itertuples(index=False)]
    return "\n".join([head, sep, *body]) + "\n"


def predictions_figure(
        frames: Mapping[str, tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, list[str]]]):
    """Per campaign (first effect, first four campaigns): the measured runs (dots) and the
    best model as a smooth curve with its prediction band over the dense grid of the first
    parameter (the predictions table's ``curve`` rows,
    :func:`perfcast.sweep.analysis.curve_points`; the measured configurations when a regressor
    depends on measurements), never below zero when every run is positive, and the config's
    new points (stars with intervals); one colour per value of the other parameters, a log x
    axis when the first parameter's levels are log-spaced. The drawing is
    :func:`perfcast.sweep.figures.draw_band`, as in each campaign's ``fits.png``.

    Parameters
    ----------
    frames : mapping of str to tuple
        Campaign -> (models, predictions, runs, parameter names).

    Returns
    -------
    matplotlib.figure.Figure
        The figure (saved by :func:`plot_predictions`).
    """
    from perfcast.sweep.figures import draw_band, log_spaced

    names = sorted(frames)[:4] or ["(none)"]
    fig, axes = new_figure(1, len(names), figsize=(4.6 * len(names), 3.6), squeeze=False)
    for ax, name in zip(axes[0], names, strict=True):
        if name not in frames or frames[name][1].empty:
            ax.text(0.5, 0.5, "no model", ha="center", va="center")
            ax.set_title(name)
            continue
        models, preds, runs, parameters = frames[name]
        effect = preds["effect"].iloc[0]
        y = models.loc[models["effect"] == effect, "y"].iloc[0]
        mine = preds[preds["effect"] == effect]
        p = mine[mine["source"] == "curve"]
        if p.empty:
            p = mine[mine["source"] == "measured"]
        params = [c for c in parameters if c in p.columns]
        if not params:
            continue
        xcol, others = params[0], params[1:]
        ok = ok_rows(runs)
        positive = bool((ok[y] > 0).all())
        groups = p.groupby(others, sort=True) if others else [((), p)]
        for k, (key, g) in enumerate(groups):
            color = PALETTE[k % len(PALETTE)]
            key = key if isinstance(key, tuple) else (key,)
            label = ", ".join(f"{o}={v}" for o, v in zip(others, key, strict=True)) or y
            g = g.sort_values(xcol)
            draw_band(ax, g[xcol].to_numpy(dtype=float), g["mean"].to_numpy(dtype=float),
                      g["obs_ci_lower"].to_numpy(dtype=float),
                      g["obs_ci_upper"].to_numpy(dtype=float), color=color,
                      positive=positive, label=label)
            m = ok
            for o, v in zip(others, key, strict=True):
                m = m[m[o] == v]
            ax.scatter(m[xcol], m[y], s=12, color=color)
            new = mine[mine["source"] == "predict"]
            for o, v in zip(others, key, strict=True):
                new = new[new[o] == v]
            if len(new):
                low = new["obs_ci_lower"].clip(lower=0) if positive else new["obs_ci_lower"]
                err = np.vstack([new["mean"] - low, new["obs_ci_upper"] - new["mean"]])
                ax.errorbar(new[xcol].to_numpy(dtype=float), new["mean"].to_numpy(dtype=float),
                            fmt="*", markersize=10, color=color, yerr=err, capsize=3)
        if log_spaced(mine.loc[mine["source"] == "measured", xcol].to_numpy(dtype=float)):
            ax.set_xscale("log")
        ax.set_xlabel(xcol)
        ax.set_ylabel(y)
        ax.set_title(f"{name}: {preds['model'].iloc[0]}"[:60], fontsize=8)
        ax.legend(fontsize=7)
    return fig


def plot_predictions(
        frames: Mapping[str, tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, list[str]]],
        path: str | Path) -> None:
    """The paper figure (:func:`predictions_figure`) saved to ``path`` (PNG)."""
    save_figure(predictions_figure(frames), path)
