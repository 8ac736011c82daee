"""Figures: sensitivity curves and surfaces of a profile, and the replay evaluation.

Curves follow one effective dimension with the others at their ceiling, the interpolated line
with the measured points marked (failed cells as red crosses with no line through them, the
brute-force truth as grey squares when it was measured); a surface shows the first two
effective dimensions (the paper's Fig. 3) as the interpolated surface with the measured points
on it, with no surface over failed cells.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from perfcast.plotting import PALETTE, new_figure, save_figure
from perfcast.sensitivity import published


def _line(grid: pd.DataFrame, along: str, fixed: Mapping[str, float]) -> pd.DataFrame:
    sel = np.ones(len(grid), dtype=bool)
    for k, v in fixed.items():
        sel &= np.isclose(grid[k].to_numpy(dtype=float), v)
    return grid[sel].sort_values(along)


def _surface_axes(fig, axes, k: int):
    axes[k].remove()
    n = len(axes)
    return fig.add_subplot(1, n, k + 1, projection="3d")


def plot_profile(grid: pd.DataFrame, summary: Mapping, out: str | Path,
                 truth_column: str | None = "brute_truth") -> None:
    """Curves along each effective dimension and the surface of the first two.

    Parameters
    ----------
    grid : pandas.DataFrame
        The profile's grid (:meth:`~perfcast.sensitivity.profile.ProfileResult.grid_frame`).
    summary : Mapping
        The profile's summary; a program not profiled (``status`` ``not_run``) gets a figure
        saying why.
    out : str or Path
        The figure written (PNG).
    truth_column : str or None, default="brute_truth"
        The column of ``grid`` drawn as the brute-force truth where it is measured (None or
        absent: none).
    """
    if summary.get("status") == "not_run":
        _plot_not_run(summary, out)
        return
    dims = summary["dimensions"]
    eff = [n for n, d in dims.items() if d["effective"]]
    anchor = {n: d["ceiling"] for n, d in dims.items()}
    n_curves = max(1, min(len(eff), 3))
    ncols = n_curves + (1 if len(eff) >= 2 else 0)
    fig, axes = new_figure(1, ncols, figsize=(max(5.5, 4.2 * ncols), 3.9), squeeze=False)
    axes = list(axes[0])
    title = (f"{summary['program']}: resource sensitivity\n({summary['backend']}, "
             f"{summary['sampling']}, epsilon {summary['epsilon']:g}; "
             f"{summary['steps']['product_points']} runs for {len(grid)} grid cells)")
    if summary.get("status") == "shipped":  # replayed: said on the figure, not only the summary
        title += ("\nREPLAYED from the grid shipped with perfcast (measured "
                  f"{summary['shipped']['measured'][:10]}): live profiling skipped, "
                  "it needs root")
    fig.suptitle(title, fontsize=10)
    if not eff:
        axes[0].text(0.5, 0.5, "no effective dimension:\nthe program used less than every "
                     "lower bound", ha="center", va="center", transform=axes[0].transAxes)
        axes[0].set_axis_off()
    for k, name in enumerate(eff[:3]):
        ax = axes[k]
        fixed = {n: v for n, v in anchor.items() if n != name}
        line = _line(grid, name, fixed)
        x = line[name].to_numpy(dtype=float)
        failed = line["failed"].to_numpy(dtype=bool)
        # a failed cell has no performance: no curve through it (it would draw a ramp of
        # sensitivities no run had), a cross instead
        ax.plot(x, np.where(failed, np.nan, line["sensitivity"].to_numpy(dtype=float)),
                color=PALETTE[0], label="interpolated (PCHIP)")
        meas = line[line["measured"] & ~line["failed"]]
        ax.plot(meas[name], meas["sensitivity"], "o", color=PALETTE[0], label="measured")
        bad = line[line["measured"] & line["failed"]]
        if len(bad):
            ax.plot(bad[name], np.zeros(len(bad)), "x", color=PALETTE[1], ms=8,
                    label="failed run (killed, timed out)")
        between = line[~line["measured"] & line["failed"]]
        if len(between):
            ax.plot(between[name], np.zeros(len(between)), "x", color=PALETTE[1], ms=5,
                    alpha=0.5, label="failed (between failed runs)")
        if truth_column and truth_column in line and line[truth_column].notna().any():
            ax.plot(x, line[truth_column], "s", mfc="none", color="0.45", ms=6,
                    label="brute force (all levels)")
        ax.axvline(dims[name]["ceiling"], ls="--", color="0.6", lw=1)
        unit = dims[name].get("unit", "")
        ax.set_xlabel(f"{name} [{unit}]" if unit else name)
        ax.set_ylabel("sensitivity S")
        others = ", ".join(f"{n}={v:g}" for n, v in fixed.items())
        ax.set_title(f"along {name}" + (f"\n({others})" if others else ""), fontsize=9)
        ax.legend(fontsize=7, loc="lower right")
    if len(eff) >= 2:
        ax3 = _surface_axes(fig, axes, ncols - 1)
        a, b = eff[0], eff[1]
        fixed = {n: v for n, v in anchor.items() if n not in (a, b)}
        sel = np.ones(len(grid), dtype=bool)
        for k2, v in fixed.items():
            sel &= np.isclose(grid[k2].to_numpy(dtype=float), v)
        sub = grid[sel]
        z = sub["sensitivity"].where(~sub["failed"].astype(bool))  # failed: no surface
        piv = sub.assign(z=z).pivot_table(index=b, columns=a, values="z", aggfunc="first",
                                          dropna=False)
        xa, yb = np.meshgrid(piv.columns.to_numpy(float), piv.index.to_numpy(float))
        ax3.plot_surface(xa, yb, piv.to_numpy(float), cmap="viridis", alpha=0.75,
                         linewidth=0.2, edgecolor="0.3")
        m = sub[sub["measured"]]
        ax3.scatter(m[a], m[b], m["sensitivity"],
                    c=[PALETTE[1] if f else "k" for f in m["failed"]], s=18, depthshade=False)
        unit_a, unit_b = dims[a].get("unit", ""), dims[b].get("unit", "")
        ax3.set_xlabel(f"{a} [{unit_a}]" if unit_a else a, fontsize=8)
        ax3.set_ylabel(f"{b} [{unit_b}]" if unit_b else b, fontsize=8)
        ax3.set_zlabel("S", fontsize=8)
        ax3.set_title("surface (dots: measured, red: failed;\nno surface over failed cells)",
                      fontsize=9)
    save_figure(fig, out)


def _plot_not_run(summary: Mapping, out: str | Path) -> None:
    """A figure that says why a program was not profiled (it stands in the report)."""
    import textwrap

    fig, ax = new_figure(1, 1, figsize=(7, 2.6))
    ax.set_axis_off()
    text = "\n".join(textwrap.wrap(summary["reason"], 90))
    ax.text(0.5, 0.62, f"{summary['program']}: not profiled on this host",
            ha="center", va="center", fontsize=12, weight="bold", transform=ax.transAxes)
    ax.text(0.5, 0.3, f"{text}\n(requires {summary['requires']})", ha="center", va="center",
            fontsize=8.5, color=PALETTE[1], transform=ax.transAxes)
    save_figure(fig, out)


def plot_error_vs_epsilon(summary: pd.DataFrame, out: str | Path) -> None:
    """Mean error and total steps by epsilon, ours beside the paper's Fig. 11 and 12.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`~perfcast.sensitivity.evaluation.epsilon_summary`'s table.
    out : str or Path
        The figure written (PNG).
    """
    fig, (a1, a2) = new_figure(1, 2, figsize=(9, 3.6))
    e = summary["epsilon"]
    a1.plot(e, summary["mae_binary_mean"], "o-", label="binary search (all programs)")
    a1.plot(e, summary["mae_binary_mean_table5"], "o--", label="binary search (Table 5 five)")
    a1.plot(e, summary["mae_lhs_mean"], "s-", label="Latin hypercube (all programs)")
    if "mae_adaptive_mean" in summary:
        a1.plot(e, summary["mae_adaptive_mean"], "D-", label="adaptive, same runs (all)")
    a1.plot(e, summary["paper_fig11_mae"], "k^:", label="paper, Fig. 11")
    a1.set_xlabel("epsilon")
    a1.set_ylabel("average absolute error")
    a1.set_title("whole-grid error against the dense truth")
    a1.legend(fontsize=7)
    a2.plot(e, summary["product_points_total"], "o-", label="product points (runs)")
    a2.plot(e, summary["probes_1d_total"], "o--", label="1-D probes")
    a2.plot(e, summary["paper_fig12_steps"], "k^:", label="paper, Fig. 12")
    a2.set_xlabel("epsilon")
    a2.set_ylabel("steps, all programs")
    a2.set_title("profiling steps")
    a2.legend(fontsize=7)
    save_figure(fig, out)


def plot_binary_vs_lhs(results: pd.DataFrame, epsilon: float, out: str | Path) -> None:
    """Per program: binary search vs Latin hypercube vs adaptive whole-grid error at equal
    counts (paper Fig. 10), under the headline ceiling.

    Parameters
    ----------
    results : pandas.DataFrame
        :func:`~perfcast.sensitivity.evaluation.evaluate_paper`'s results.
    epsilon : float
        The epsilon drawn (``sensitivity.replay.figure_epsilon``).
    out : str or Path
        The figure written (PNG).
    """
    r = results[np.isclose(results["epsilon"], epsilon) & results["headline"]]
    b = r[r["sampling"] == "binary"].set_index("program")
    lh = r[r["sampling"] == "lhs"].set_index("program")
    ad = r[r["sampling"] == "adaptive"].set_index("program")
    progs = list(b.index)
    x = np.arange(len(progs))
    fig, ax = new_figure(1, 1, figsize=(max(6, 0.6 * len(progs) + 2), 3.8))
    ax.bar(x - 0.27, b.loc[progs, "mae_grid"], 0.27, label="binary search")
    ax.bar(x, lh.loc[progs, "mae_grid"], 0.27, label="Latin hypercube (mean of seeds)")
    lo = (lh.loc[progs, "mae_grid"] - lh.loc[progs, "mae_grid_min"]).clip(lower=0).to_numpy()
    hi = (lh.loc[progs, "mae_grid_max"] - lh.loc[progs, "mae_grid"]).clip(lower=0).to_numpy()
    ax.errorbar(x, lh.loc[progs, "mae_grid"].to_numpy(), yerr=[lo, hi], fmt="none",
                ecolor="0.3", lw=1)
    ax.bar(x + 0.27, ad.loc[progs, "mae_grid"], 0.27, label="adaptive (ours)")
    ax.axhline(published.FIG10_MAE["binary"], color=PALETTE[0], ls=":",
               label="paper binary (Fig. 10)")
    ax.axhline(published.FIG10_MAE["lhs"], color=PALETTE[1], ls=":", label="paper LHS (Fig. 10)")
    ax.set_xticks(x, progs, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("average absolute error, whole grid")
    ax.set_title(f"sampling at equal counts, epsilon {epsilon:g}")
    ax.legend(fontsize=7)
    save_figure(fig, out)


def plot_error_vs_runs(curves: pd.DataFrame, programs: Sequence[str], ceiling: str,
                       out: str | Path) -> None:
    """Whole-grid error against runs, one panel per program: the adaptive refinement (line),
    binary search and Latin hypercube at each epsilon, brute force, and the paper's Table 4 /
    Table 5 point (star), under ``ceiling`` (dashed grey: the adaptive line without one).

    Parameters
    ----------
    curves : pandas.DataFrame
        :func:`~perfcast.sensitivity.evaluation.error_vs_runs`'s table.
    programs : sequence of str
        The programs drawn, one panel each (``sensitivity.replay.surfaces``).
    ceiling : str
        The headline ceiling (``table4`` or ``none``).
    out : str or Path
        The figure written (PNG).
    """
    progs = [p for p in programs if p in set(curves["program"])] or ["(none)"]
    fig, axes = new_figure(1, len(progs), figsize=(3.6 * len(progs), 3.4), squeeze=False)
    for ax, prog in zip(axes[0], progs, strict=True):
        c = curves[curves["program"] == prog]
        here = c[c["ceiling"] == ceiling]
        ad = here[here["sampling"] == "adaptive"]
        ax.plot(ad["runs"], ad["mae_grid"], "-", color=PALETTE[2], label="adaptive (ours)")
        if ceiling != "none":
            free = c[(c["ceiling"] == "none") & (c["sampling"] == "adaptive")]
            ax.plot(free["runs"], free["mae_grid"], "--", color="0.6", lw=1,
                    label="adaptive, no ceiling")
        for name, mark, color in (("binary", "o", PALETTE[0]), ("lhs", "s", PALETTE[1]),
                                  ("brute", "P", "0.3")):
            m = here[here["sampling"] == name].groupby("runs", as_index=False)["mae_grid"].mean()
            label = {"lhs": "Latin hypercube (mean)", "brute": "brute force"}.get(name, name)
            ax.scatter(m["runs"], m["mae_grid"], marker=mark, color=color, s=24, zorder=3,
                       label=label)
        pap = c[c["sampling"] == "paper"].drop_duplicates("runs")
        ax.scatter(pap["runs"], pap["mae_grid"], marker="*", color="black", s=90, zorder=4,
                   label="paper (Table 4 / 5)")
        ax.set_xscale("log")
        ax.set_xlabel("runs")
        ax.set_ylabel("average absolute error, whole grid")
        ax.set_title(f"{prog} (ceiling: {ceiling})", fontsize=9)
        ax.legend(fontsize=6)
    save_figure(fig, out)


def plot_steps(table: pd.DataFrame, epsilon: float, out: str | Path) -> None:
    """Per program: our runs beside the paper's Table 4 (log scale, as the paper's Fig. 8).

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`~perfcast.sensitivity.evaluation.comparison_table`'s table.
    epsilon : float
        The epsilon drawn (``sensitivity.replay.figure_epsilon``).
    out : str or Path
        The figure written (PNG).
    """
    t = table[np.isclose(table["epsilon"], epsilon)].set_index("program")
    progs = list(t.index)
    x = np.arange(len(progs))
    fig, ax = new_figure(1, 1, figsize=(max(6, 0.6 * len(progs) + 2), 3.8))
    ax.bar(x - 0.3, t["grid_points"], 0.2, label="brute force (dense grid)", color="0.7")
    ax.bar(x - 0.1, t["paper_ceiling_steps"], 0.2, label="paper: ceiling (Table 4)",
           color=PALETTE[4])
    ax.bar(x + 0.1, t["paper_steps"], 0.2, label="paper: ceiling + prediction", color=PALETTE[1])
    ax.bar(x + 0.3, t["product_points"], 0.2, label="ours: ceiling + binary", color=PALETTE[0])
    ax.set_yscale("log")
    ax.set_xticks(x, progs, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("steps (runs)")
    ax.set_title(f"profiling steps per program, epsilon {epsilon:g}")
    ax.legend(fontsize=7)
    save_figure(fig, out)


def plot_replay_surfaces(cells: pd.DataFrame, programs: Sequence[str], epsilon: float,
                         out: str | Path) -> None:
    """Measured (wireframe) vs interpolated (surface) sensitivity, CPU x memory.

    Parameters
    ----------
    cells : pandas.DataFrame
        :func:`~perfcast.sensitivity.evaluation.evaluate_paper`'s cells.
    programs : sequence of str
        The programs drawn, one panel each where ``cells`` holds them
        (``sensitivity.replay.surfaces``).
    epsilon : float
        The epsilon drawn (``sensitivity.replay.figure_epsilon``).
    out : str or Path
        The figure written (PNG).
    """
    progs = [p for p in programs if p in set(cells["program"])]
    n = max(1, len(progs))
    fig, axes = new_figure(1, n, figsize=(4.0 * n, 3.8), squeeze=False)
    axes = list(axes[0])
    for k, prog in enumerate(progs):
        ax = _surface_axes(fig, axes, k)
        c = cells[(cells["program"] == prog) & np.isclose(cells["epsilon"], epsilon)]
        if c["net_code"].notna().any():  # Data Caching: the most bandwidth (smallest code)
            c = c[c["net_code"] == c["net_code"].min()]
        piv_p = c.pivot_table(index="mem_gb", columns="cpu_cores", values="predicted")
        piv_t = c.pivot_table(index="mem_gb", columns="cpu_cores", values="truth")
        xx, yy = np.meshgrid(piv_p.columns.to_numpy(float), piv_p.index.to_numpy(float))
        ax.plot_surface(xx, yy, piv_p.to_numpy(float), cmap="viridis", alpha=0.7, lw=0)
        ax.plot_wireframe(xx, yy, piv_t.to_numpy(float), color="0.25", lw=0.5)
        m = c[c["measured"]]
        ax.scatter(m["cpu_cores"], m["mem_gb"], m["predicted"], color=PALETTE[1], s=14,
                   depthshade=False)
        ax.set_xlabel("cores", fontsize=8)
        ax.set_ylabel("memory [GiB]", fontsize=8)
        ax.set_zlabel("S", fontsize=8)
        ax.set_title(f"{prog}\n(wire: measured, surface: interpolated,\ndots: runs)", fontsize=8)
    save_figure(fig, out)
