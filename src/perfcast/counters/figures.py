"""Figures of the counters stage (for the Snakemake report)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from perfcast.plotting import PALETTE, grid_shape, new_figure, save_figure


def ipc_over_time(runs: dict[str, dict[str, pd.DataFrame]], generations: tuple[str, str],
                  path: Path, note: str = "") -> None:
    """Small multiples: IPC over time of each benchmark on both generations.

    Parameters
    ----------
    runs : dict of str to dict of str to pandas.DataFrame
        ``runs[benchmark][generation]``, a table with ``time`` and ``ipc``; a generation
        without a run (predict-only benchmarks) is left out of that panel.
    generations : (str, str)
        ``(old, new)``: colours and legend order.
    path : Path
        the figure to write (PNG or SVG).
    note : str, default=''
        added to the title.
    """
    benches = sorted(runs)
    rows, cols = grid_shape(len(benches))
    fig, axes = new_figure(rows, cols, figsize=(3.2 * cols, 2.3 * rows), squeeze=False,
                           sharey=True)
    for ax, bench in zip(axes.flat, benches, strict=False):
        for k, gen in enumerate(generations):
            df = runs[bench].get(gen)
            if df is not None:
                ax.plot(df["time"], df["ipc"], lw=0.8, color=PALETTE[k],
                        label=f"{gen} ({('old', 'new')[k]} generation)")
        ax.set_title(bench)
        ax.set_xlabel("time [s]")
    for ax in axes[:, 0]:
        ax.set_ylabel("IPC")
    for ax in list(axes.flat)[len(benches):]:
        ax.set_visible(False)
    # one legend for every panel, outside them: inside, it covered a line of the first panel
    # (from every panel: a predict-only benchmark's panel has the old generation only)
    legend = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            legend.setdefault(label, handle)
    fig.legend(legend.values(), legend.keys(), loc="outside lower center", ncols=len(legend))
    fig.suptitle("IPC per interval, old vs new generation" + (f" ({note})" if note else ""))
    save_figure(fig, path)
