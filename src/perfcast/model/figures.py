"""Figures of the alignment, training-set and model rules (for the Snakemake report)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from perfcast.plotting import PALETTE, new_figure, save_figure


def simulated_note(simulated: bool) -> str:
    """What a figure made from simulated counters says in its title (nothing otherwise)."""
    return "SIMULATED data" if simulated else ""


def _titled(fig, note: str) -> None:
    if note:
        fig.suptitle(note, color="#a40000", fontweight="bold")


def alignment(old: pd.DataFrame, new: pd.DataFrame, pairs: pd.DataFrame, gens: tuple[str, str],
              bench: str, path: Path, note: str = "") -> None:
    """Cumulative instructions over time for both runs, with the row mapping drawn between them
    (left), and the warping path (right).

    Parameters
    ----------
    old, new : pandas.DataFrame
        the two runs' counter tables (``interval``, ``time``,
        ``instructions_cumulative_sum``).
    pairs : pandas.DataFrame
        the mapped pairs (:func:`perfcast.model.align.align_runs`).
    gens : (str, str)
        the generations' names ``(old, new)``, for the legend and axis labels.
    bench : str
        the benchmark, for the title.
    path : Path
        the figure to write.
    note : str, default=""
        Said above the panels (:func:`simulated_note`).
    """
    fig, (ax, ax2) = new_figure(1, 2, figsize=(10, 3.6))
    _titled(fig, note)
    t_old = old.set_index("interval")["time"]
    t_new = new.set_index("interval")["time"]
    step = max(1, len(pairs) // 150)
    sub = pairs.iloc[::step]
    xs = np.stack([t_old.loc[sub["old_interval"]].to_numpy(),
                   t_new.loc[sub["new_interval"]].to_numpy()])
    ys = np.stack([sub["old_instructions_cumulative_sum"].to_numpy(),
                   sub["new_instructions_cumulative_sum"].to_numpy()])
    ax.plot(xs, ys, color=PALETTE[4], lw=0.4, alpha=0.6)
    ax.plot(old["time"], old["instructions_cumulative_sum"], color=PALETTE[0], label=gens[0])
    ax.plot(new["time"], new["instructions_cumulative_sum"], color=PALETTE[1], label=gens[1])
    ax.set_xlabel("time [s]")
    ax.set_ylabel("cumulative instructions")
    ax.set_title(f"{bench}: mapping on cumulative instructions")
    ax.legend()
    ax2.plot(pairs["old_interval"], pairs["new_interval"], color=PALETTE[2], lw=1)
    ax2.set_xlabel(f"{gens[0]} interval")
    ax2.set_ylabel(f"{gens[1]} interval")
    ax2.set_title("warping path")
    save_figure(fig, path)


def ratio_distribution(train: pd.DataFrame, path: Path, note: str = "") -> None:
    """IPC-ratio distribution per benchmark (violins with the median marked); ``note`` above
    it (:func:`simulated_note`).

    Parameters
    ----------
    train : pandas.DataFrame
        the training set (``benchmark``, ``ipc_ratio``).
    path : Path
        the figure to write.
    note : str, default=''
        said above the figure.
    """
    benches = sorted(train["benchmark"].unique())
    data = [train.loc[train["benchmark"] == b, "ipc_ratio"].to_numpy() for b in benches]
    fig, ax = new_figure(figsize=(max(6, 0.7 * len(benches) + 2), 3.8))
    _titled(fig, note)
    parts = ax.violinplot(data, showmedians=True, showextrema=False)
    for body in parts["bodies"]:
        body.set_facecolor(PALETTE[0])
        body.set_alpha(0.45)
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax.set_xticks(range(1, len(benches) + 1), benches, rotation=40, ha="right")
    ax.set_ylabel("IPC ratio new / old")
    ax.set_title("IPC ratio per aligned interval")
    save_figure(fig, path)


def predicted_vs_measured(ev: pd.DataFrame, path: Path, note: str = "") -> None:
    """Leave-one-benchmark-out: predicted vs measured new-gen cycles, the error per benchmark,
    and each candidate family's median error beside the chosen model's.

    ``ev`` is the evaluation table (:func:`perfcast.model.evaluation.evaluate_lobo`), one block of
    rows per ``training_rows`` label; each label is a colour, the constant-ratio baseline grey.
    The chosen model is the one the nested selection picked for each held-out benchmark (its
    family named in the legend, several when the choice differs between benchmarks); the third
    panel shows the median |error| of every candidate (``{family}_cycles_error_pct``, each
    fitted without the held-out benchmark) beside the chosen model's and the baseline's, so the
    figure says what the selection gained or lost. ``note`` is said above the panels
    (:func:`simulated_note`).

    Parameters
    ----------
    ev : pandas.DataFrame
        the evaluation table.
    path : Path
        the figure to write.
    note : str, default=''
        said above the panels.
    """
    fig, (ax, ax2, ax3) = new_figure(1, 3, figsize=(15, 4.4),
                                     gridspec_kw={"width_ratios": [1.1, 1.3, 0.9]})
    _titled(fig, note)
    labels = sorted(ev["training_rows"].unique())
    n = len(labels)
    width = 0.8 / (n + 1)
    for k, label in enumerate(labels):
        g = ev[ev["training_rows"] == label].sort_values("benchmark")
        chosen = "chosen: " + ", ".join(sorted(g["family"].unique()))
        if "cycles_lower" in g:  # the prediction interval of each held-out benchmark
            pc = g["predicted_cycles"].to_numpy() / 1e9
            err = [pc - g["cycles_lower"].to_numpy() / 1e9, g["cycles_upper"].to_numpy() / 1e9 - pc]
            cov = int(100 * g["interval_coverage"].min())
            ax.errorbar(g["measured_cycles"] / 1e9 * (1 + 0.004 * k), pc, yerr=err, fmt="none",
                        ecolor=PALETTE[k], alpha=0.45, lw=1.6, capsize=2,
                        label=f"{cov} % prediction interval ({label})", zorder=2)
        ax.scatter(g["measured_cycles"] / 1e9, g["predicted_cycles"] / 1e9, s=28, color=PALETTE[k],
                   label=f"{chosen} ({label} intervals)", zorder=3)
        ax2.bar(np.arange(len(g)) + k * width, g["cycles_error_pct"], width, color=PALETTE[k],
                label=f"{chosen} ({label})")
    base = ev[ev["training_rows"] == labels[0]].sort_values("benchmark")
    ax.scatter(base["measured_cycles"] / 1e9, base["measured_cycles"] / 1e9 * (
        1 + base["baseline_cycles_error_pct"] / 100), s=18, marker="x", color="grey",
        label="constant ratio baseline", zorder=2)
    lim = [ev["measured_cycles"].min() / 1e9 * 0.85, ev["measured_cycles"].max() / 1e9 * 1.15]
    from matplotlib.ticker import FuncFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):  # plain numbers (1, 2, 5) rather than 2 x 10^0
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if f"{v:g}"[0] in "25"
                                               else ""))
    ax.set_xlim(lim)
    ax.set_ylim(lim)
    ax.plot(lim, lim, color="black", lw=0.8)
    ax.set_xlabel("measured new-gen cycles [10^9]")
    ax.set_ylabel("predicted new-gen cycles [10^9]")
    ax.set_title("Leave-one-benchmark-out prediction")
    ax.legend(fontsize=7)
    x = np.arange(len(base))
    ax2.bar(x + n * width, base["baseline_cycles_error_pct"], width, color="lightgrey",
            label="constant ratio baseline")
    ax2.axhline(0, color="black", lw=0.8)
    ax2.set_xticks(x + 0.3, base["benchmark"], rotation=40, ha="right")
    ax2.set_ylabel("error of total cycles [%]")
    ax2.set_title("Error per held-out benchmark")
    ax2.legend(fontsize=7)
    _candidate_errors(ax3, ev, labels)
    save_figure(fig, path)


def _candidate_errors(ax, ev: pd.DataFrame, labels: list[str]) -> None:
    """Median |error| of total cycles per candidate family, the chosen model and the baseline,
    one bar group per ``training_rows`` label (the chosen model's bar hatched)."""
    names = [c.removesuffix("_cycles_error_pct") for c in ev.columns
             if c.endswith("_cycles_error_pct") and c not in (
                 "cycles_error_pct", "baseline_cycles_error_pct")
             and ev[c].notna().any()]
    bars = [*names, "chosen", "baseline"]
    width = 0.8 / len(labels)
    for k, label in enumerate(labels):
        g = ev[ev["training_rows"] == label]
        med = [g[f"{b}_cycles_error_pct" if b in names else
                 ("cycles_error_pct" if b == "chosen" else "baseline_cycles_error_pct")]
               .abs().median() for b in bars]
        pos = np.arange(len(bars)) + k * width
        drawn = ax.bar(pos, med, width, color=PALETTE[k], label=label)
        drawn[len(names)].set_hatch("//")
        for xpos, m in zip(pos, med, strict=True):
            ax.annotate(f"{m:.2f}", (xpos, m), ha="center", va="bottom", fontsize=7)
    ax.set_xticks(np.arange(len(bars)) + 0.4 - width / 2, bars, rotation=30, ha="right")
    ax.set_ylabel("median |error| of total cycles [%]")
    ax.set_title("Candidates, each held out in turn")
    ax.legend(fontsize=7, title="training rows")


def predicted_ipc_over_time(pred: pd.DataFrame, info: dict, path: Path, note: str = "") -> None:
    """One old-only benchmark: its measured old-generation IPC and the predicted
    new-generation IPC per interval, with the prediction interval as a band.

    The interval is the split-conformal one of the run's total cycles
    (``predicted_new_total_cycles_lower`` / ``_upper`` of the prediction's summary, relative
    half-width ``q = ln(upper / predicted)`` in log space); IPC is instructions / cycles, so the
    band is ``IPC e^-q`` to ``IPC e^q``: the total's uncertainty drawn on every interval, not a
    per-interval interval (single intervals scatter more).

    Parameters
    ----------
    pred : pandas.DataFrame
        the per-interval prediction (:func:`perfcast.model.knn.predict_run`: ``time``,
        ``ipc_old``, ``ipc_new_pred``).
    info : dict
        the prediction's summary (``benchmark``, the total cycles and their bounds,
        ``interval_coverage``, ``predicted_mean_ipc_new``).
    path : Path
        the figure to write.
    note : str, default=""
        Added to the title (the default config: "SIMULATED data").
    """
    value = info["predicted_new_total_cycles"]
    q = float(np.log(info["predicted_new_total_cycles_upper"] / value))
    fig, ax = new_figure(figsize=(9, 3.8))
    t = pred["time"].to_numpy()
    ax.plot(t, pred["ipc_old"], color="grey", lw=0.9, label="old generation, measured")
    ax.fill_between(t, pred["ipc_new_pred"] * np.exp(-q), pred["ipc_new_pred"] * np.exp(q),
                    color=PALETTE[0], alpha=0.25, lw=0,
                    label=f"{100 * info['interval_coverage']:.0f} % prediction interval "
                          "(of the run's total)")
    ax.plot(t, pred["ipc_new_pred"], color=PALETTE[0], lw=1.1,
            label="new generation, predicted")
    ax.set_ylim(bottom=0)
    ax.set_xlabel("old-generation time [s]")
    ax.set_ylabel("IPC")
    mean = info["predicted_mean_ipc_new"]
    ax.set_title(f"{info['benchmark']}: predicted new-generation IPC (mean {mean:.3f})"
                 + (f" ({note})" if note else ""))
    # below the axes: a legend inside would cover the lines
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=3, fontsize=8)
    save_figure(fig, path)
