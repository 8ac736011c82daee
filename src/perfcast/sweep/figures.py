"""Figures of a campaign's models: measured vs fitted per regressor, residuals, CV errors."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

from perfcast.plotting import PALETTE, new_figure, save_figure
from perfcast.sweep.selection import SpecResult


def plot_fits(results: Sequence[SpecResult], data: pd.DataFrame, path: str | Path,
              alpha: float = 0.05, title: str = "") -> None:
    """One row per effect, one panel per regressor: the measured runs, the polynomial of the
    order CV chose with its (1 - alpha) confidence band, and the best model's fitted values."""
    rows = max(len(results), 1)
    cols = max([len(r.x) for r in results] or [1])
    fig, axes = new_figure(rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False)
    for i, res in enumerate(results):
        sub = data[[res.y, *res.x]].apply(pd.to_numeric, errors="coerce").dropna()
        for j in range(cols):
            ax = axes[i][j]
            if j >= len(res.x):
                ax.axis("off")
                continue
            col = res.x[j]
            ax.scatter(sub[col], sub[res.y], s=14, color=PALETTE[0], alpha=0.7, label="measured")
            poly = [c for c in res.candidates if c.kind == "polynomial" and c.x == [col]
                    and c.chosen]
            if poly:
                c = poly[0]
                grid = np.linspace(sub[col].min(), sub[col].max(), 200)
                pred = c.fit.predict(grid.reshape(-1, 1), alpha=alpha)
                how = (f"CV; training error: {c.extra.get('order_by_training_error')}"
                       if np.isfinite(c.cv_mse) else "2 values: no CV possible")
                ax.plot(grid, pred["mean"], color=PALETTE[1], label=f"order {c.order} ({how})")
                ax.fill_between(grid, pred["mean_ci_lower"], pred["mean_ci_upper"],
                                color=PALETTE[1], alpha=0.2, linewidth=0)
            if res.best is not None and not (poly and res.best is poly[0]):
                ax.scatter(sub[col], res.best.fit.fitted, marker="x", s=18, color=PALETTE[2],
                           label=f"best: {res.best.model}")
            ax.set_xlabel(col)
            ax.set_ylabel(res.y)
            ax.set_title(res.name if len(res.name) < 40 else res.name[:37] + "...")
            ax.legend(fontsize=7)
    if not results:
        axes[0][0].text(0.5, 0.5, "no model fitted", ha="center", va="center")
    if title:
        fig.suptitle(title)
    save_figure(fig, path)


def plot_residuals(results: Sequence[SpecResult], path: str | Path, title: str = "") -> None:
    """Per effect: the best model's residuals against its fitted values, and every chosen
    candidate's cross-validated RMSE next to its training RMSE."""
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
