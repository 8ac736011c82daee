"""Figures and tables of the warm-up stage.

:func:`phase_figure` is Pilot's warm-up figure (its Fig. 2) for a measured round: throughput over
time (units completed per time bin), with the setup, warm-up, stable and cool-down phases shaded,
the change points marked and the session's stable throughput with its CI.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from perfcast.plotting import PALETTE, new_figure, save_figure

PHASE_COLOURS = {"setup": "#BBBBBB", "warmup": PALETTE[4], "stable": PALETTE[2],
                 "cooldown": PALETTE[3], "unstable": "#DDDDDD"}


def pick_round(rounds: pd.DataFrame) -> int | None:
    """The round the warm-up figure draws, as its caption says: the longest round (most
    readings) with a stable phase, the earliest of equally long ones; the longest round when
    none has a stable phase; None without rounds."""
    if rounds.empty:
        return None
    r = rounds[rounds["has_stable"].astype(bool)] if rounds["has_stable"].any() else rounds
    return int(r.sort_values(["readings", "round"], ascending=[False, True])["round"].iloc[0])


def binned_throughput(times: np.ndarray, start: float, end: float,
                      bins: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """Units completed per second in ``bins`` equal time bins of ``[start, end]`` (like
    Fig. 2 of Pilot; Li et al., MASCOTS 2016): bin edges and rates.

    A bin's rate is its count of completions divided by its width; a completion outside
    ``[start, end]`` is not counted.

    Parameters
    ----------
    times : numpy.ndarray
        when each unit completed (seconds since the round started).
    start, end : float
        the span binned (seconds).
    bins : int, default=60
        the number of equal bins.

    Returns
    -------
    tuple of numpy.ndarray
        the ``bins + 1`` edges and the ``bins`` rates (units/s).

    Examples
    --------
    >>> edges, rate = binned_throughput(np.array([0.1, 0.2, 0.3, 1.5]), 0.0, 2.0, bins=2)
    >>> edges.tolist(), rate.tolist()
    ([0.0, 1.0, 2.0], [3.0, 1.0])
    """
    edges = np.linspace(start, end, bins + 1)
    counts, _ = np.histogram(times, bins=edges)
    return edges, counts / np.diff(edges)


def draw_phases(ax, readings: pd.DataFrame, round_row: pd.Series | None,
                summary: dict[str, Any] | None, title: str) -> None:
    """Draw one round's warm-up figure on ``ax``: its binned throughput
    (:func:`binned_throughput`), its phases shaded, its change points dotted, the round's and
    the session's stable throughput (with its CI) as horizontal lines.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        the axes to draw on.
    readings : pandas.DataFrame
        the round's readings (``time_s``, ``phase``), in time order.
    round_row : pandas.Series or None
        the round's row of the rounds table (``setup_s``, ``duration_s``, ``change_points``,
        ``stable_mean_s``); None: phases only.
    summary : dict or None
        the session's summary; its ``throughput`` (``value``, ``lower``, ``upper``) is drawn
        when present.
    title : str
        the panel's title.
    """
    t = readings["time_s"].to_numpy(dtype=float)
    phase = readings["phase"].to_numpy()
    setup = float(round_row["setup_s"]) if round_row is not None and \
        pd.notna(round_row.get("setup_s")) else 0.0
    end = float(t[-1]) if t.size else 1.0
    if round_row is not None and pd.notna(round_row.get("duration_s")):
        end = max(end, float(round_row["duration_s"]))
    if setup > 0:
        ax.axvspan(0, setup, color=PHASE_COLOURS["setup"], alpha=0.35, lw=0, label="setup")
    start = np.concatenate([[setup], t[:-1]])
    for name in ("warmup", "stable", "cooldown", "unstable"):
        sel = np.flatnonzero(phase == name)
        if sel.size:
            ax.axvspan(start[sel[0]], t[sel[-1]], color=PHASE_COLOURS[name], alpha=0.18, lw=0,
                       label=name)
    edges, rate = binned_throughput(t, 0.0, float(t[-1]) if t.size else end)
    ax.stairs(rate, edges, color=PALETTE[0], lw=1.2,
              label=f"throughput ({1000 * (edges[1] - edges[0]):.0f} ms bins)")
    if round_row is not None:
        for c in round_row["change_points"]:
            ax.axvline(t[int(c) - 1] if int(c) > 0 else setup, color="k", lw=0.6, ls=":",
                       alpha=0.7)
    if round_row is not None and pd.notna(round_row.get("stable_mean_s")) and \
            round_row["stable_mean_s"] > 0:
        ax.axhline(1 / float(round_row["stable_mean_s"]), color=PALETTE[0], lw=1, ls="--",
                   label="this round's stable throughput")
    tpd = (summary or {}).get("throughput")
    if tpd:
        ax.axhline(tpd["value"], color=PALETTE[1], lw=1.2, label="stable throughput, all rounds")
        if tpd.get("upper") is not None:
            ax.axhspan(tpd["lower"], tpd["upper"], color=PALETTE[1], alpha=0.15, lw=0)
    ax.set_xlim(0, end)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("time since the round started (s)")
    ax.set_ylabel("throughput (units/s)")
    ax.set_title(title)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=3, fontsize=8)


def phase_figure(rounds: pd.DataFrame, readings: pd.DataFrame, summary: dict[str, Any],
                 out: str | Path, name: str | None = None) -> int | None:
    """Fig. 2-like figure (Pilot; Li et al., MASCOTS 2016) of one workload's round chosen by
    :func:`pick_round`, drawn by :func:`draw_phases`.

    Parameters
    ----------
    rounds : pandas.DataFrame
        the workload's rounds table (one row per round).
    readings : pandas.DataFrame
        the workload's readings (``round``, ``time_s``, ``phase``).
    summary : dict
        the session's summary (its ``throughput`` and ``workload``).
    out : str or Path
        the figure file (format from its suffix), written atomically.
    name : str or None, default=None
        the workload's name in the title (None: the summary's ``workload``).

    Returns
    -------
    int or None
        the round drawn (None: no rounds; the figure says so).
    """
    fig, ax = new_figure(figsize=(8, 4.6))
    r = pick_round(rounds)
    name = name or summary.get("workload", "")
    if r is None:
        ax.text(0.5, 0.5, "no rounds", ha="center", va="center", transform=ax.transAxes)
    else:
        row = rounds[rounds["round"] == r].iloc[0]
        which = ("the longest with a stable phase" if bool(row["has_stable"])
                 else "the longest; no round has a stable phase")
        draw_phases(ax, readings[readings["round"] == r], row, summary,
                    f"{name}: round {r} ({which}; work {int(row['work'])})")
    save_figure(fig, out)
    return r


def paper_figure(workloads: list[tuple[str, pd.DataFrame, pd.DataFrame, dict]],
                 out: str | Path) -> None:
    """One panel per workload (``(name, rounds, readings, summary)``)."""
    fig, axes = new_figure(len(workloads) or 1, 1, figsize=(8, 3.6 * max(1, len(workloads))),
                           squeeze=False)
    for ax, (name, rounds, readings, summary) in zip(axes[:, 0], workloads, strict=False):
        r = pick_round(rounds)
        if r is None:
            continue
        row = rounds[rounds["round"] == r].iloc[0]
        draw_phases(ax, readings[readings["round"] == r], row, summary,
                    f"{name}: round {r} (work {int(row['work'])})")
    save_figure(fig, out)


def throughput_table(summaries: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """Stable throughput with CI per workload (unit readings and WPS side by side)."""
    rows = []
    for name in sorted(summaries):
        s = summaries[name]
        tp = s.get("throughput") or {}
        wps = s.get("wps") or {}
        rows.append({
            "workload": name,
            "throughput": tp.get("value"), "ci_lower": tp.get("lower"),
            "ci_upper": tp.get("upper"), "ci_relative_width": tp.get("relative_width"),
            "ci_upper_unbounded": tp.get("upper_unbounded") if tp else None,
            "confidence": tp.get("confidence"),
            "wps_v": wps.get("v"), "wps_v_lower": wps.get("v_lower"),
            "wps_v_upper": wps.get("v_upper"),
            "wps_v_upper_unbounded": (wps.get("v_upper_unbounded") if wps else None),
            "wps_alpha_s": wps.get("alpha"),
            "rounds": s.get("rounds"), "rounds_used": s.get("rounds_used"),
            "stable_readings": s.get("stable_readings"),
            "warmup_readings_median": (s.get("warmup") or {}).get("readings_median"),
            "cooldown_readings_median": (s.get("cooldown") or {}).get("readings_median"),
            "setup_s_median": (s.get("setup_s") or {}).get("median"),
            "stop_reason": s.get("stop_reason"),
        })
    return pd.DataFrame(rows)


def counters_table(summaries: list[dict[str, Any]]) -> pd.DataFrame:
    """Stable IPC with CI and phase lengths per counter trace."""
    rows = []
    for s in sorted(summaries, key=lambda d: (d["generation"], d["benchmark"])):
        ipc = s.get("stable_ipc") or {}
        rows.append({
            "generation": s["generation"], "benchmark": s["benchmark"],
            "intervals": s["intervals"],
            **{f"{p}_intervals": s[p]["intervals"] for p in ("setup", "warmup", "stable",
                                                             "cooldown")},
            "phase_rule": s["phase_rule"],
            "stable_ipc": ipc.get("mean"), "ci_lower": ipc.get("lower"),
            "ci_upper": ipc.get("upper"), "stable_ipc_aggregate": s.get("stable_ipc_aggregate"),
        })
    return pd.DataFrame(rows)
