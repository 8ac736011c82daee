"""Figures of a campaign's models: data and the best model as smooth curves with prediction
bands, residuals, CV errors.

``log_spaced`` is re-exported here (:mod:`perfcast.sweep.analysis` defines it with the model
curves' grid).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.ticker import (
    FixedFormatter,
    FixedLocator,
    FuncFormatter,
    LogLocator,
    MaxNLocator,
    NullFormatter,
)

from perfcast.plotting import PALETTE, new_figure, save_figure
from perfcast.sweep.analysis import dense_grid, log_spaced
from perfcast.sweep.ols import DesignFit
from perfcast.sweep.selection import FAMILY, Candidate, SpecResult, selection_criterion

__all__ = ["band_label", "criterion_text", "declutter_ticks", "draw_band", "fits_figure",
           "log_spaced", "model_curves", "model_figure", "plot_fits", "plot_model",
           "plot_residuals", "residuals_figure", "wrap_formula"]

#: how each score the best model is chosen by (:func:`perfcast.sweep.selection.selection_criterion`)
#: reads in a title
CRITERION_TEXT = {"cv_smape": "lowest CV SMAPE over configurations",
                  "cv_mse": "lowest CV MSE over configurations",
                  "training_mse": "lowest training MSE (too few configurations for CV)"}
#: the most characters of a formula's line in a title, and the most lines drawn (the JSON
#: output holds the whole formula)
FORMULA_WIDTH = 58
FORMULA_LINES = 3
#: the most curves (levels of the other regressors) a panel draws: one colour each
MAX_LINES = len(PALETTE) - 1
#: the most runs of one configuration drawn: beyond, that many of its order statistics, evenly
#: spaced from its smallest to its largest run (10^4 repetitions look the same, and draw in
#: a fraction of the time)
MAX_RUNS_DRAWN = 100
#: a band wider than this many times the runs' scatter within a configuration is explained
#: in its label (the residual variance then holds the model's lack of fit)
WIDE_BAND = 2.0


def criterion_text(res: SpecResult) -> str:
    """What the best model of ``res`` was chosen by, in words (:data:`CRITERION_TEXT` of
    :func:`perfcast.sweep.selection.selection_criterion`); "no model" without one.

    Examples
    --------
    >>> criterion_text(SpecResult("t", "t", ["p"], [], None, 0, 0, []))
    'no model'
    """
    key = selection_criterion(res)
    return "no model" if key is None else CRITERION_TEXT[key]


def wrap_formula(text: str, width: int = FORMULA_WIDTH, lines: int = FORMULA_LINES) -> str:
    """A formula on lines of at most ``width`` characters, broken before a ``+`` or ``-``
    between terms (a longer term at spaces); beyond ``lines`` lines the rest is counted, not
    drawn.

    Parameters
    ----------
    text : str
        The formula (:meth:`perfcast.sweep.selection.Candidate.formula`).
    width : int, default=FORMULA_WIDTH
        The longest line.
    lines : int, default=FORMULA_LINES
        The most lines.

    Returns
    -------
    str
        The lines joined by newlines.

    Examples
    --------
    >>> print(wrap_formula("t = 3 + 0.5 * p * log2(p) - 2 * p^2", width=16, lines=4))
    t = 3
    + 0.5 * p *
    log2(p)
    - 2 * p^2
    >>> print(wrap_formula("t = 1 + 2 * p + 3 * q + 4 * r", width=14, lines=2))
    t = 1 + 2 * p
    ... 2 more terms
    """
    terms = re.split(r" (?=[+-] )", text)

    def greedy(parts: Sequence[str]) -> list[str]:
        out: list[str] = []
        for term in parts:
            if out and len(out[-1]) + 1 + len(term) <= width:
                out[-1] += " " + term
            else:
                out += textwrap.wrap(term, width, break_on_hyphens=False) or [term]
        return out

    full = greedy(terms)
    if len(full) <= lines:
        return "\n".join(full)
    k = max([k for k in range(1, len(terms)) if len(greedy(terms[:k])) <= lines - 1],
            default=0)
    rest = len(terms) - k
    return "\n".join([*greedy(terms[:k]), f"... {rest} more term{'s' if rest != 1 else ''}"])


def band_label(cand: Candidate, data: pd.DataFrame, y: str, alpha: float) -> str:
    """The legend entry of ``cand``'s band: which interval it is (statsmodels'
    ``obs_ci``, the prediction interval of one new run; of a configuration's median where
    the normal form was fitted on medians), and, where its residual standard deviation is
    more than :data:`WIDE_BAND` times the runs' scatter within a configuration, both
    numbers: the band then holds the model's lack of fit, not only the noise.

    Parameters
    ----------
    cand : Candidate
        The model drawn.
    data : pandas.DataFrame
        The runs drawn (``y`` and the model's regressors).
    y : str
        The effect.
    alpha : float
        The band's level is 1 - ``alpha``.

    Returns
    -------
    str
        The label.
    """
    median = isinstance(cand.fit, DesignFit) and cand.extra.get("aggregate") == "median"
    what = "a configuration's median" if median else "one run"
    text = f"{1 - alpha:.0%} prediction interval of {what}"
    s_model = float(np.sqrt(cand.fit.metrics()["mse_resid"]))
    groups = data.groupby(list(cand.x))[y]
    dev = (data[y] - groups.transform("mean")).to_numpy(dtype=float)
    dof = len(data) - groups.ngroups
    s_runs = float(np.sqrt(np.sum(dev ** 2) / dof)) if dof > 0 else float("nan")
    if np.isfinite(s_model) and np.isfinite(s_runs) and s_model > WIDE_BAND * s_runs:
        text += (f"\n(residual SD {s_model:.3g} = {s_model / s_runs:.0f}x the runs' SD "
                 f"{s_runs:.3g} within a configuration: lack of fit)") if s_runs > 0 else \
            f"\n(residual SD {s_model:.3g}; the runs of a configuration agree: lack of fit)"
    return text


def drawn_runs(data: pd.DataFrame, y: str, keys: Sequence[str],
               limit: int = MAX_RUNS_DRAWN) -> np.ndarray:
    """Which runs to draw: every run of a configuration (``keys``' values) of at most
    ``limit`` runs, else ``limit`` of its order statistics evenly spaced from its smallest
    to its largest run.

    Parameters
    ----------
    data : pandas.DataFrame
        The runs.
    y : str
        The effect.
    keys : sequence of str
        The columns whose values make a configuration.
    limit : int, default=MAX_RUNS_DRAWN
        The most runs drawn per configuration.

    Returns
    -------
    numpy.ndarray
        A boolean mask over the rows of ``data``.

    Examples
    --------
    >>> df = pd.DataFrame({"p": [1] * 9 + [2], "t": np.arange(10.0)})
    >>> df["t"][drawn_runs(df, "t", ["p"], limit=3)].tolist()
    [0.0, 4.0, 8.0, 9.0]
    """
    by = data.groupby(list(keys))[y]
    n = by.transform("size").to_numpy(dtype=float)
    rank = by.rank(method="first").to_numpy(dtype=float) - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        step = (n - 1) / (limit - 1)
        pick = np.round(np.round(rank / step) * step)
    return (n <= limit) | (rank == pick)


def _level_text(line: pd.Series, others: Sequence[str]) -> str:
    return ", ".join(f"{o}={line[o]:g}" for o in others)


def _log_ticks(axis, levels: np.ndarray) -> None:
    """A log axis ticked at the measured levels, written plainly, minor ticks unlabelled."""
    axis.set_major_locator(FixedLocator(np.unique(levels)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def _labels(axis) -> list:
    """The major tick labels drawn (visible, with text)."""
    return [t for t in axis.get_majorticklabels() if t.get_visible() and t.get_text()]


def _overlap(boxes: Sequence) -> bool:
    return any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])


def declutter_ticks(fig) -> None:
    """Thin every axis's labelled major ticks (every second, third, ... kept) until no two
    labels' boxes overlap once drawn; minor tick labels of log axes are dropped. An axis
    whose labels are names (a fixed formatter: the candidates of a bar chart) is left as
    it is, since thinning its ticks would shift the names.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure, whole (drawn here, so after its layout is final).

    Examples
    --------
    >>> fig, ax = new_figure(1, 1, figsize=(1.5, 1.5))
    >>> _ = ax.set_xticks(np.arange(0, 20_000_001, 1_000_000))
    >>> declutter_ticks(fig)
    >>> renderer = fig.canvas.get_renderer()
    >>> _overlap([t.get_window_extent(renderer) for t in _labels(ax.xaxis)])
    False
    """
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() == "log":
                axis.set_minor_formatter(NullFormatter())
    for _ in range(3):  # the layout moves once ticks change: settle it
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        changed = False
        for ax in fig.axes:
            for axis in (ax.xaxis, ax.yaxis):
                if isinstance(axis.get_major_formatter(), FixedFormatter):
                    continue
                locs = [float(v) for v in axis.get_majorticklocs()]
                lo, hi = sorted(axis.get_view_interval())
                locs = [v for v in locs if lo <= v <= hi]
                step = 1
                while len(locs[::step]) > 1 and _overlap(
                        [t.get_window_extent(renderer) for t in _labels(axis)]):
                    step += 1
                    axis.set_major_locator(FixedLocator(locs[::step]))
                    fig.canvas.draw()
                    changed = True
        if not changed:
            return


def draw_band(ax, x: np.ndarray, mean: np.ndarray, lower: np.ndarray, upper: np.ndarray, *,
              color: str, positive: bool, label: str | None = None,
              band_label: str | None = None) -> None:
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
    band_label : str, optional, default=None
        The band's legend entry (which interval it is: :func:`band_label`).

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
        ax.fill_between(x, low, upper, color=color, alpha=0.15, linewidth=0, label=band_label)


def model_curves(ax, cand: Candidate, data: pd.DataFrame, y: str, col: str, alpha: float,
                 extra: pd.DataFrame | None = None, max_lines: int = MAX_LINES) -> None:
    """The measured runs of ``y`` over regressor ``col`` and ``cand`` as smooth curves with
    their (1 - alpha) prediction band, one curve per combination (level) of the other
    regressors' values: every level up to ``max_lines``, else ``max_lines`` of them spread
    over the range and a legend entry naming the levels not drawn. A band never goes below
    zero when every measured value is positive and its legend entry says which interval it
    is (:func:`band_label`); the x axis is logarithmic when the levels are log-spaced (and
    the y axis too when the effect is positive and spans more than a factor 10), ticked at
    the measured levels. Each predicted point is drawn in its level's colour and labelled
    with its level. A configuration of more than :data:`MAX_RUNS_DRAWN` runs is drawn as
    that many of its order statistics (:func:`drawn_runs`), which the legend says.

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
    max_lines : int, default=MAX_LINES
        The most curves drawn (levels of the other regressors).
    """
    others = [c for c in cand.x if c != col]
    levels = (data[others].drop_duplicates().sort_values(others).reset_index(drop=True)
              if others else pd.DataFrame(index=[0]))
    shown = np.arange(len(levels))
    if len(levels) > max_lines:
        shown = np.unique(np.linspace(0, len(levels) - 1, max_lines).round().astype(int))
    left_out = [_level_text(levels.iloc[k], others) for k in range(len(levels))
                if k not in set(shown)]
    xs = data[col].to_numpy(dtype=float)
    hi = xs.max() if extra is None or extra.empty else max(xs.max(), extra[col].max())
    logx = log_spaced(xs)
    grid = dense_grid(xs, hi)
    positive = bool((data[y] > 0).all())
    band = band_label(cand, data, y, alpha)
    drawn = drawn_runs(data, y, cand.x)
    colors = {}
    for n, k in enumerate(shown):
        line = levels.iloc[k]
        color = PALETTE[(n + 1) % len(PALETTE)]
        label = _level_text(line, others)
        colors[label] = color
        sel = np.ones(len(data), bool)
        for o in others:
            sel &= (data[o] == line[o]).to_numpy()
        ax.scatter(data.loc[sel & drawn, col], data.loc[sel & drawn, y], s=14, color=color,
                   alpha=0.7)
        X = np.column_stack([grid if c == col else np.full(len(grid), line[c])
                             for c in cand.x])
        pred = cand.fit.predict(X, alpha=alpha)
        draw_band(ax, grid, pred["mean"].to_numpy(), pred["obs_ci_lower"].to_numpy(),
                  pred["obs_ci_upper"].to_numpy(), color=color, positive=positive,
                  label=label or None, band_label=band if n == 0 else None)
    if left_out:
        ax.plot([], [], " ", label="not drawn: " + "; ".join(left_out))
    if not drawn.all():
        most = int(data.groupby(list(cand.x))[y].size().max())
        ax.plot([], [], " ", label=f"runs: {MAX_RUNS_DRAWN} order statistics of each "
                                   f"configuration's (up to {most}) drawn")
    if extra is not None and not extra.empty:
        pred = cand.fit.predict(extra[cand.x].to_numpy(dtype=float), alpha=alpha)
        low = np.clip(pred["obs_ci_lower"], 0, None) if positive else pred["obs_ci_lower"]
        err = np.nan_to_num(np.vstack([pred["mean"] - low, pred["obs_ci_upper"] - pred["mean"]]))
        named = set()
        for k in range(len(extra)):
            level = _level_text(extra.iloc[k], others)
            name = f"predicted, {level}" if level else "predicted"
            ax.errorbar([extra[col].iloc[k]], [pred["mean"].iloc[k]], yerr=err[:, [k]],
                        fmt="D", color=colors.get(level, "dimgray"), mec="black", capsize=3,
                        label=None if name in named else name)
            named.add(name)
            if level:
                ax.annotate(level, (extra[col].iloc[k], pred["mean"].iloc[k]),
                            xytext=(5, 5), textcoords="offset points", fontsize=7)
    if logx:
        ax.set_xscale("log")
        _log_ticks(ax.xaxis, xs if extra is None or extra.empty
                   else np.concatenate([xs, extra[col].to_numpy(dtype=float)]))
        ys = data[y].to_numpy(dtype=float)
        if positive and ys.max() / ys.min() > 10:
            ax.set_yscale("log")
            ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(col)
    ax.set_ylabel(y)


def _legend(ax) -> None:
    if ax.get_legend_handles_labels()[1]:
        ax.legend(fontsize=7)


def fits_figure(results: Sequence[SpecResult], data: pd.DataFrame, *, alpha: float,
                title: str = ""):
    """The figure :func:`plot_fits` saves: one row per effect, one panel per regressor,
    each titled with the effect, the model's family, what it was chosen by
    (:func:`criterion_text`) and its formula wrapped (:func:`wrap_formula`).

    Parameters
    ----------
    results : sequence of SpecResult
        The campaign's effects (:func:`perfcast.sweep.analysis.analyse`).
    data : pandas.DataFrame
        The ok runs, derived columns added.
    alpha : float
        Bands at level 1 - ``alpha`` (``sweep.fit.alpha``).
    title : str, default=""
        The figure's title.

    Returns
    -------
    matplotlib.figure.Figure
        The figure, its ticks decluttered (:func:`declutter_ticks`).
    """
    rows = max(len(results), 1)
    cols = max([len(r.x) for r in results] or [1])
    fig, axes = new_figure(rows, cols, figsize=(4.6 * cols, 3.8 * rows), squeeze=False)
    for i, res in enumerate(results):
        sub = data[[res.y, *res.x]].apply(pd.to_numeric, errors="coerce")
        sub = sub[np.isfinite(sub.to_numpy(dtype=float)).all(axis=1)]
        for j in range(cols):
            ax = axes[i][j]
            if j >= len(res.x) or res.best is None or res.x[j] not in res.best.x:
                ax.axis("off")
                continue
            model_curves(ax, res.best, sub, res.y, res.x[j], alpha)
            ax.set_title(f"{res.name}: {FAMILY[res.best.kind]}\nbest by {criterion_text(res)}"
                         f"\n{wrap_formula(res.best.formula(res.y))}", fontsize=8)
            _legend(ax)
    if not results:
        axes[0][0].text(0.5, 0.5, "no model fitted", ha="center", va="center")
    if title:
        fig.suptitle(title)
    declutter_ticks(fig)
    return fig


def plot_fits(results: Sequence[SpecResult], data: pd.DataFrame, path: str | Path, *,
              alpha: float, title: str = "") -> None:
    """One row per effect, one panel per regressor: the measured runs and the best model as
    smooth curves with (1 - alpha) prediction bands (:func:`model_curves`), titled with the
    model's formula, family and selection criterion (:func:`fits_figure`).

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
    save_figure(fits_figure(results, data, alpha=alpha, title=title), path)


def model_figure(res: SpecResult, data: pd.DataFrame, alpha: float,
                 extra: pd.DataFrame | None = None):
    """The figure :func:`plot_model` saves: a panel per regressor of the best model, titled
    with its family, what it was chosen by and its formula wrapped.

    Parameters
    ----------
    res : SpecResult
        The effect (:func:`perfcast.sweep.selection.fit_effect`).
    data : pandas.DataFrame
        The rows it was fitted on.
    alpha : float
        Bands at level 1 - ``alpha``.
    extra : pandas.DataFrame, optional, default=None
        The ``--predict`` points.

    Returns
    -------
    matplotlib.figure.Figure
        The figure, its ticks decluttered (:func:`declutter_ticks`).
    """
    cols = len(res.best.x) if res.best is not None else 1
    fig, axes = new_figure(1, cols, figsize=(5.2 * cols, 4.4), squeeze=False)
    if res.best is None:
        axes[0][0].text(0.5, 0.5, "no model fitted", ha="center", va="center")
    else:
        for j, col in enumerate(res.best.x):
            model_curves(axes[0][j], res.best, data, res.y, col, alpha, extra=extra)
            _legend(axes[0][j])
        fig.suptitle(f"{FAMILY[res.best.kind]}, best by {criterion_text(res)}\n"
                     f"{wrap_formula(res.best.formula(res.y))}", fontsize=9)
    declutter_ticks(fig)
    return fig


def plot_model(res: SpecResult, data: pd.DataFrame, path: str | Path, alpha: float,
               extra: pd.DataFrame | None = None) -> None:
    """``perfcast fit --plot``: the best model of one effect over each of its regressors,
    with the data, prediction bands and the ``extra`` predicted points
    (:func:`model_figure`).

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
    save_figure(model_figure(res, data, alpha, extra=extra), path)


def residuals_figure(results: Sequence[SpecResult], title: str = ""):
    """The figure :func:`plot_residuals` saves: per effect, the best model's residuals
    against its fitted values, and the score each chosen candidate was compared on (CV
    SMAPE where the best was chosen by it, else CV and training RMSE), the panel titled with
    the best model and its criterion (:func:`criterion_text`).

    Parameters
    ----------
    results : sequence of SpecResult
        The campaign's effects.
    title : str, default=""
        The figure's title.

    Returns
    -------
    matplotlib.figure.Figure
        The figure, its ticks decluttered (:func:`declutter_ticks`).
    """
    rows = max(len(results), 1)
    fig, axes = new_figure(rows, 2, figsize=(10, 3.4 * rows), squeeze=False)
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
        pos = np.arange(len(chosen))
        if selection_criterion(res) == "cv_smape":
            smape = [c.cv_smape if np.isfinite(c.cv_smape) else 0.0 for c in chosen]
            bx.barh(pos, smape, height=0.6, color=PALETTE[1], label="CV SMAPE")
            missing = [not np.isfinite(c.cv_smape) for c in chosen]
            bx.set_xlabel("CV SMAPE over configurations (%)")
        else:
            cv = [np.sqrt(c.cv_mse) if np.isfinite(c.cv_mse) else 0.0 for c in chosen]
            train = [np.sqrt(c.fit.metrics()["mse"]) for c in chosen]
            bx.barh(pos - 0.2, cv, height=0.4, color=PALETTE[1], label="cross-validated RMSE")
            bx.barh(pos + 0.2, train, height=0.4, color=PALETTE[5], label="training RMSE")
            missing = [not np.isfinite(c.cv_mse) for c in chosen]
            bx.set_xlabel(res.y)
        for k, gap in enumerate(missing):  # two configurations: nothing to cross-validate
            if gap:
                bx.text(0, k, " no CV", va="center", fontsize=6)
        bx.set_yticks(pos, [f"{m} (best)" if c is res.best else m
                            for m, c in zip(labels, chosen, strict=True)], fontsize=7)
        bx.invert_yaxis()
        bx.xaxis.set_major_locator(MaxNLocator(5))
        bx.legend(fontsize=7)
        bx.set_title(f"candidates: best by {criterion_text(res)}", fontsize=9)
    if not results:
        axes[0][0].text(0.5, 0.5, "no model fitted", ha="center", va="center")
    if title:
        fig.suptitle(title)
    declutter_ticks(fig)
    return fig


def plot_residuals(results: Sequence[SpecResult], path: str | Path, title: str = "") -> None:
    """Per effect: the best model's residuals against its fitted values, and every chosen
    candidate's score on the selection criterion (:func:`residuals_figure`).

    Parameters
    ----------
    results : sequence of SpecResult
        The campaign's effects.
    path : str or Path
        The figure (PNG).
    title : str, default=""
        The figure's title.
    """
    save_figure(residuals_figure(results, title), path)
