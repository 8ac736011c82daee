"""Figures of a campaign's models: data and the best model as smooth curves with prediction
bands, residuals, CV errors.

``log_spaced`` is re-exported here (:mod:`perfcast.sweep.analysis` defines it with the model
curves' grid).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

from perfcast.plotting import PALETTE, new_figure, save_figure
from perfcast.sweep.analysis import dense_grid, log_spaced
from perfcast.sweep.selection import FAMILY, Candidate, SpecResult

__all__ = ["draw_band", "log_spaced", "model_curves", "plot_fits", "plot_model",
           "plot_residuals"]


def draw_band(ax, x: np.ndarray, mean: np.ndarray, lower: np.ndarray, upper: np.ndarray, *,
              color: str, positive: bool, label: str | None = None) -> None:
    """A model's curve and its prediction band over ``x`` (a dense grid, so the curve is
    smooth: :func:`perfcast.sweep.analysis.dense_grid`); the band is clipped at zero for a
    ``positive`` quantity (a time or an energy is never negative, whatever a Gaussian interval
    says). Shared by the campaign figures and the paper figure.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw.
    x, mean, lower, upper : numpy.ndarray
        The grid, the model's prediction and the prediction interval's bounds.
    color : str
        The curve's colour (the band is the same, translucent).
    positive : bool
        Whether every measured value is positive (clip the band at zero).
    label : str, optional, default=None
        The curve's legend entry.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> fig, ax = new_figure(1, 1)
    >>> x = np.linspace(1, 4, 50)
    >>> draw_band(ax, x, x, x - 2, x + 2, color=PALETTE[0], positive=True)
    >>> band = ax.collections[0].get_paths()[0].vertices
    >>> len(ax.get_lines()[0].get_xdata()), float(band[:, 1].min())
    (50, 0.0)
    """
    low = np.asarray(lower, dtype=float)
    if positive:
        low = np.clip(low, 0, None)
    ax.plot(x, mean, color=color, label=label)
    if np.isfinite(low).any():
        ax.fill_between(x, low, upper, color=color, alpha=0.15, linewidth=0)


def model_curves(ax, cand: Candidate, data: pd.DataFrame, y: str, col: str, alpha: float,
                 extra: pd.DataFrame | None = None, max_lines: int = 4) -> None:
    """The measured runs of ``y`` over regressor ``col`` and ``cand`` as smooth curves with
    their (1 - alpha) prediction band, one curve per combination of the other regressors'
    values (the first ``max_lines``). A band never goes below zero when every measured value
    is positive; the x axis is logarithmic when the levels are log-spaced (and the y axis too
    when the effect is positive and spans more than a factor 10).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw.
    cand : Candidate
        The model drawn.
    data : pandas.DataFrame
        The runs (``y`` and the model's regressors).
    y, col : str
        The effect, and the regressor on the x axis.
    alpha : float
        Bands at level 1 - ``alpha`` (``sweep.fit.alpha``).
    extra : pandas.DataFrame, optional, default=None
        Predicted points drawn with their intervals.
    max_lines : int, default=4
        The most curves drawn (combinations of the other regressors).
    """
    others = [c for c in cand.x if c != col]
    lines = (data[others].drop_duplicates().sort_values(others).head(max_lines)
             if others else pd.DataFrame(index=[0]))
    xs = data[col].to_numpy(dtype=float)
    hi = xs.max() if extra is None or extra.empty else max(xs.max(), extra[col].max())
    logx = log_spaced(xs)
    grid = dense_grid(xs, hi)
    positive = bool((data[y] > 0).all())
    for k, (_, line) in enumerate(lines.iterrows()):
        color = PALETTE[(k + 1) % len(PALETTE)]
        sel = np.ones(len(data), bool)
        label = ", ".join(f"{o}={line[o]:g}" for o in others)
        for o in others:
            sel &= (data[o] == line[o]).to_numpy()
        ax.scatter(data.loc[sel, col], data.loc[sel, y], s=14, color=color, alpha=0.7)
        X = np.column_stack([grid if c == col else np.full(len(grid), line[c])
                             for c in cand.x])
        pred = cand.fit.predict(X, alpha=alpha)
        draw_band(ax, grid, pred["mean"].to_numpy(), pred["obs_ci_lower"].to_numpy(),
                  pred["obs_ci_upper"].to_numpy(), color=color, positive=positive,
                  label=label or None)
    if extra is not None and not extra.empty:
        pred = cand.fit.predict(extra[cand.x].to_numpy(dtype=float), alpha=alpha)
        low = np.clip(pred["obs_ci_lower"], 0, None) if positive else pred["obs_ci_lower"]
        err = np.vstack([pred["mean"] - low, pred["obs_ci_upper"] - pred["mean"]])
        ax.errorbar(extra[col], pred["mean"], yerr=np.nan_to_num(err), fmt="D",
                    color="black", capsize=3, label="predicted")
    if logx:
        ax.set_xscale("log")
        ys = data[y].to_numpy(dtype=float)
        if positive and ys.max() / ys.min() > 10:
            ax.set_yscale("log")
    ax.set_xlabel(col)
    ax.set_ylabel(y)


def plot_fits(results: Sequence[SpecResult], data: pd.DataFrame, path: str | Path, *,
              alpha: float, title: str = "") -> None:
    """One row per effect, one panel per regressor: the measured runs and the best model as
    smooth curves with (1 - alpha) prediction bands (:func:`model_curves`), titled with the
    model's formula and family.

    Parameters
    ----------
    results : sequence of SpecResult
        The campaign's effects (:func:`perfcast.sweep.analysis.analyse`).
    data : pandas.DataFrame
        The ok runs, derived columns added.
    path : str or Path
        The figure (PNG).
    alpha : float
        Bands at level 1 - ``alpha`` (``sweep.fit.alpha``).
    title : str, default=""
        The figure's title.
    """
    rows = max(len(results), 1)
    cols = max([len(r.x) for r in results] or [1])
    fig, axes = new_figure(rows, cols, figsize=(4.6 * cols, 3.4 * rows), squeeze=False)
    for i, res in enumerate(results):
        sub = data[[res.y, *res.x]].apply(pd.to_numeric, errors="coerce")
        sub = sub[np.isfinite(sub.to_numpy(dtype=float)).all(axis=1)]
        for j in range(cols):
            ax = axes[i][j]
            if j >= len(res.x) or res.best is None or res.x[j] not in res.best.x:
                ax.axis("off")
                continue
            model_curves(ax, res.best, sub, res.y, res.x[j], alpha)
            formula = res.best.formula(res.y)
            ax.set_title(f"{res.name}: {FAMILY[res.best.kind]}\n{formula[:70]}", fontsize=8)
            if ax.get_legend_handles_labels()[1]:
                ax.legend(fontsize=7)
    if not results:
        axes[0][0].text(0.5, 0.5, "no model fitted", ha="center", va="center")
    if title:
        fig.suptitle(title)
    save_figure(fig, path)


def plot_model(res: SpecResult, data: pd.DataFrame, path: str | Path, alpha: float,
               extra: pd.DataFrame | None = None) -> None:
    """``perfcast fit --plot``: the best model of one effect over each of its regressors,
    with the data, prediction bands and the ``extra`` predicted points.

    Parameters
    ----------
    res : SpecResult
        The effect (:func:`perfcast.sweep.selection.fit_effect`).
    data : pandas.DataFrame
        The rows it was fitted on.
    path : str or Path
        The figure (PNG).
    alpha : float
        Bands at level 1 - ``alpha``.
    extra : pandas.DataFrame, optional, default=None
        The ``--predict`` points.
    """
    cols = len(res.best.x) if res.best is not None else 1
    fig, axes = new_figure(1, cols, figsize=(5.2 * cols, 4), squeeze=False)
    if res.best is None:
        axes[0][0].text(0.5, 0.5, "no model fitted", ha="center", va="center")
    else:
        for j, col in enumerate(res.best.x):
            model_curves(axes[0][j], res.best, data, res.y, col, alpha, extra=extra)
            if axes[0][j].get_legend_handles_labels()[1]:
                axes[0][j].legend(fontsize=7)
        fig.suptitle(f"{FAMILY[res.best.kind]}: {res.best.formula(res.y)}",
                     fontsize=9)
    save_figure(fig, path)


def plot_residuals(results: Sequence[SpecResult], path: str | Path, title: str = "") -> None:
    """Per effect: the best model's residuals against its fitted values, and every chosen
    candidate's cross-validated RMSE next to its training RMSE.

    Parameters
    ----------
    results : sequence of SpecResult
        The campaign's effects.
    path : str or Path
        The figure (PNG).
    title : str, default=""
        The figure's title.
    """
    rows = max(len(results), 1)
    fig, axes = new_figure(rows, 2, figsize=(10, 3.2 * rows), squeeze=False)
    for i, res in enumerate(results):
        ax, bx = axes[i]
        if res.best is not None:
            ax.scatter(res.best.fit.fitted, res.best.fit.residuals, s=14, color=PALETTE[0])
            ax.axhline(0, color="black", linewidth=0.8)
            ax.set_title(f"{res.name}: residuals of {res.best.model}")
        ax.set_xlabel(f"fitted {res.y}")
        ax.xaxis.set_major_locator(MaxNLocator(5))
        ax.set_ylabel("residual")
        chosen = [c for c in res.candidates if c.chosen]
        labels = [c.model for c in chosen]
        cv = [np.sqrt(c.cv_mse) if np.isfinite(c.cv_mse) else 0.0 for c in chosen]
        train = [np.sqrt(c.fit.metrics()["mse"]) for c in chosen]
        pos = np.arange(len(chosen))
        bx.barh(pos - 0.2, cv, height=0.4, color=PALETTE[1], label="cross-validated RMSE")
        bx.barh(pos + 0.2, train, height=0.4, color=PALETTE[5], label="training RMSE")
        for k, c in enumerate(chosen):  # two configurations: nothing to cross-validate
            if not np.isfinite(c.cv_mse):
                bx.text(0, k - 0.2, " no CV", va="center", fontsize=6)
        bx.set_yticks(pos, labels, fontsize=7)
        bx.invert_yaxis()
        bx.set_xlabel(res.y)
        bx.legend(fontsize=7)
        bx.set_title("candidates (best: lowest CV RMSE)")
    if not results:
        axes[0][0].text(0.5, 0.5, "no model fitted", ha="center", va="center")
    if title:
        fig.suptitle(title)
    save_figure(fig, path)
